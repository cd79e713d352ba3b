/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* GPU detector against the CPU implementation on fresh random inputs. Skipped (not
 * failed) on machines without a usable GPU, e.g. CI; run for real by
 * scripts/gpu-test-and-bench.
 */

#include "core/mmse/numerics.h"
#include "gpu_skip.h"
#include "reference.h"
#include <cuda/cuda_detector.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mimodet/ber_sim.h>
#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <mimodet/precision.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace mimodet;

namespace {

struct Case {
    std::size_t b, u, nsc, nsym;
    Modulation mod;
    DetectorMode mode;
    unsigned iterations;
    double snr_db;
    double correlation;
};

std::string describe(const Case& c)
{
    return std::to_string(c.b) + "x" + std::to_string(c.u) + " " + to_string(c.mod) +
           " " + to_string(c.mode) + "@" + std::to_string(c.iterations) +
           " nsc=" + std::to_string(c.nsc) + " nsym=" + std::to_string(c.nsym) +
           " r=" + std::to_string(c.correlation);
}

struct Outputs {
    std::vector<float> llr;
    std::vector<cf32> x_hat;
    DetectorStats stats;
};

ChannelSimConfig sim_of(const Case& c, std::uint64_t seed = 1)
{
    ChannelSimConfig s;
    s.num_antennas = c.b;
    s.num_users = c.u;
    s.num_subcarriers = c.nsc;
    s.symbols_per_frame = c.nsym;
    s.modulation = c.mod;
    s.snr_db = c.snr_db;
    s.seed = seed;
    if (c.correlation > 0) {
        s.channel = ChannelModel::kronecker;
        s.correlation = c.correlation;
    }
    return s;
}

DetectorConfig config_of(const Case& c, Backend backend)
{
    return detector_config_for(sim_of(c), c.mode, c.iterations, backend);
}

Frame frame_of(const Case& c, std::uint64_t seed)
{
    ChannelSimulator sim(sim_of(c, seed));
    Frame f;
    sim.next_frame(f);
    return f;
}

Outputs run(Detector& det, const Frame& f, std::size_t nsym)
{
    const Dims d = det.config().dims();
    Outputs r;
    // Poisoned outputs: an element the kernel does not write stays NaN and fails the
    // checks.
    r.llr.assign(nsym * d.llr_items(), std::numeric_limits<float>::quiet_NaN());
    r.x_hat.assign(nsym * d.symbol_items(), cf32(NAN, NAN));
    det.set_channel(f.h.data(), f.n0);
    det.detect(f.y.data(), nsym, r.llr.data(), r.x_hat.data());
    r.stats = det.stats();
    return r;
}

/*! A frame's channel and symbols on the device, with room for the outputs of `like`'s
 * size, for tests of the device API (detect_device). */
struct DeviceFrame {
    cuda::Buffer<cf32> h, y, x_hat;
    cuda::Buffer<float> llr;

    DeviceFrame(const Frame& f, const Outputs& like)
        : h(f.h.size(), false),
          y(f.y.size(), false),
          x_hat(like.x_hat.size(), false),
          llr(like.llr.size(), false)
    {
        cuda::copy_to_device(h.get(), f.h.data(), h.bytes());
        cuda::copy_to_device(y.get(), f.y.data(), y.bytes());
    }

    //! detect_device on nsym symbols into poisoned (NaN) outputs, then the outputs.
    Outputs detect(cuda::CudaDetector& gpu, std::size_t nsym)
    {
        Outputs g;
        g.llr.assign(llr.size(), NAN);
        g.x_hat.assign(x_hat.size(), cf32(NAN, NAN));
        cuda::copy_to_device(llr.get(), g.llr.data(), llr.bytes());
        cuda::copy_to_device(x_hat.get(), g.x_hat.data(), x_hat.bytes());
        gpu.detect_device(y.get(), nsym, llr.get(), x_hat.get());
        gpu.synchronize();
        cuda::copy_to_host(g.llr.data(), llr.get(), llr.bytes());
        cuda::copy_to_host(g.x_hat.data(), x_hat.get(), x_hat.bytes());
        return g;
    }
};

void expect_close(const Outputs& gpu,
                  const Outputs& cpu,
                  const std::string& what,
                  double rel_tol = 2e-3)
{
    ASSERT_EQ(gpu.llr.size(), cpu.llr.size());
    std::size_t confident = 0, disagree = 0;
    double worst = 0, num = 0, den = 0;
    for (std::size_t i = 0; i < gpu.llr.size(); ++i) {
        ASSERT_TRUE(std::isfinite(gpu.llr[i])) << what << ": LLR " << i << " not written";
        const double g = gpu.llr[i], c = cpu.llr[i];
        worst = std::max(worst, std::abs(g - c) / std::max(1.0, std::abs(c)));
        if (std::abs(c) > 1e-2 * std::max(1.0, std::abs(c))) {
            ++confident;
            disagree += (g > 0) != (c > 0);
        }
    }
    for (std::size_t i = 0; i < gpu.x_hat.size(); ++i) {
        ASSERT_TRUE(std::isfinite(gpu.x_hat[i].real()))
            << what << ": x_hat " << i << " not written";
        num += std::norm(cf64(gpu.x_hat[i]) - cf64(cpu.x_hat[i]));
        den += std::norm(cf64(cpu.x_hat[i]));
    }
    EXPECT_LT(worst, rel_tol) << what;
    EXPECT_LT(std::sqrt(num / std::max(den, 1e-30)), 1e-4) << what;
    EXPECT_LE(disagree, confident / 100000) << what << ": hard decisions differ";
}

//! The same LLRs up to float rounding (another summation order): every one written,
//! relative differences below 1e-3 and the confident hard decisions equal.
void expect_llrs_close(const std::vector<float>& got,
                       const std::vector<float>& want,
                       const std::string& what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    double worst = 0;
    std::size_t disagree = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got[i])) << what << ": LLR " << i << " not written";
        worst = std::max(worst,
                         std::abs(double(got[i]) - want[i]) /
                             std::max(1.0, std::abs(double(want[i]))));
        disagree += std::abs(want[i]) > 1e-2f && (got[i] > 0) != (want[i] > 0);
    }
    EXPECT_LT(worst, 1e-3) << what;
    EXPECT_EQ(disagree, 0u) << what;
}

//! A frame whose users 0 and 1 have the same channel on subcarrier 0 (a singular G).
Frame frame_with_twin_users(const Case& c, std::uint64_t seed)
{
    Frame f = frame_of(c, seed);
    const Dims d = config_of(c, Backend::cpu).dims();
    for (std::size_t b = 0; b < d.num_antennas; ++b)
        f.h[d.channel_index(0, b, 1)] = f.h[d.channel_index(0, b, 0)];
    return f;
}

//! Relative distance of x_hat to the float64 ZF solution (for ill-conditioned systems,
//! where float32 CPU and GPU each land about cond(G) * eps away from it and not from each
//! other).
double zf_error(const Outputs& o, const Frame& f, const Case& c)
{
    const Dims d{ c.b, c.u, c.nsc, bits_per_symbol(c.mod) };
    double num = 0, den = 0;
    for (std::size_t s = 0; s < c.nsym; ++s) {
        std::vector<cf64> x;
        ref::llrs(d,
                  c.mod,
                  f.h.data(),
                  f.y.data() + s * d.rx_items(),
                  f.n0,
                  ref::RefMode::zf,
                  &x);
        for (std::size_t i = 0; i < x.size(); ++i) {
            num += std::norm(cf64(o.x_hat[s * d.symbol_items() + i]) - x[i]);
            den += std::norm(x[i]);
        }
    }
    return std::sqrt(num / den);
}

} // namespace

TEST(CudaDetector, MatchesCpuForEveryModeModulationAndSize)
{
    SKIP_WITHOUT_GPU();
    const Modulation mods[] = { Modulation::bpsk,
                                Modulation::qpsk,
                                Modulation::qam16,
                                Modulation::qam64,
                                Modulation::qam256 };
    std::vector<Case> cases;
    for (auto mode :
         { DetectorMode::chol, DetectorMode::cg, DetectorMode::cr, DetectorMode::zf })
        for (auto mod : mods) {
            cases.push_back(
                { 128, 16, 64, 8, mod, mode, 3, 10.0, 0.0 }); // li2015 Table I
            cases.push_back({ 256, 32, 16, 4, mod, mode, 4, 10.0, 0.0 }); // li2015 256x32
            cases.push_back(
                { 32, 32, 96, 1, mod, mode, 3, 20.0, 0.0 }); // broumas2023 32x32
            cases.push_back({ 64, 16, 48, 14, mod, mode, 3, 10.0, 0.5 }); // NR slot shape
            cases.push_back(
                { 20, 6, 12, 3, mod, mode, 2, 15.0, 0.0 }); // B, U not powers of 2
            cases.push_back({ 4, 1, 8, 2, mod, mode, 1, 5.0, 0.0 }); // a single user
        }
    std::uint64_t seed = 100;
    for (const auto& c : cases) {
        const Frame f = frame_of(c, ++seed);
        auto cpu = make_detector(config_of(c, Backend::cpu));
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const Outputs g = run(gpu, f, c.nsym), r = run(*cpu, f, c.nsym);
        if (c.mode == DetectorMode::zf && c.u == c.b) {
            // Square ZF: G is ill-conditioned (cond(G) ~ 1e4..1e6 for 32x32 Rayleigh), so
            // float32 CPU and GPU each land ~cond * eps from the float64 solution and
            // differ from each other by as much. Judge both against float64: the GPU
            // applies an explicit A^-1 where the CPU solves (seen: up to 7x the CPU's
            // error on an H200 with an earlier kernel, 10.3x on an H100 with this one,
            // both below 2e-2), so allow 20x and a 5% ceiling.
            for (float l : g.llr)
                ASSERT_TRUE(std::isfinite(l)) << describe(c);
            const double gpu_err = zf_error(g, f, c), cpu_err = zf_error(r, f, c);
            EXPECT_LT(gpu_err, 20 * cpu_err + 1e-5) << describe(c);
            EXPECT_LT(gpu_err, 0.05) << describe(c);
            continue;
        }
        expect_close(g, r, describe(c));
    }
}

TEST(CudaDetector, BadInputsAreErasedExactlyLikeTheCpu)
{
    SKIP_WITHOUT_GPU();
    for (auto mode :
         { DetectorMode::chol, DetectorMode::cg, DetectorMode::cr, DetectorMode::zf }) {
        const Case c{ 16, 4, 12, 3, Modulation::qam16, mode, 3, 15.0, 0.0 };
        Frame f = frame_of(c, 7);
        const Dims d = config_of(c, Backend::cpu).dims();
        f.h[d.channel_index(2, 5, 1)] = cf32(NAN, 0.0f); // bad subcarrier 2
        f.y[1 * d.rx_items() + d.rx_index(4, 3)] = cf32(0.0f, INFINITY); // bad (1, 4)
        for (std::size_t b = 0; b < d.num_antennas; ++b)
            f.h[d.channel_index(6, b, 3)] = cf32(0.0f, 0.0f); // user 3 dead on sc 6
        for (std::size_t b = 0; b < d.num_antennas; ++b)
            for (std::size_t u = 0; u < d.num_users; ++u)
                f.h[d.channel_index(8, b, u)] = cf32(0.0f, 0.0f); // no channel on sc 8
        auto cpu = make_detector(config_of(c, Backend::cpu));
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const Outputs g = run(gpu, f, c.nsym), r = run(*cpu, f, c.nsym);
        const std::string what = describe(c);
        for (std::size_t i = 0; i < g.llr.size(); ++i)
            ASSERT_EQ(g.llr[i] == 0.0f, r.llr[i] == 0.0f)
                << what << " erasure pattern at " << i;
        expect_close(g, r, what);
        EXPECT_EQ(g.stats.bad_channel_subcarriers, r.stats.bad_channel_subcarriers)
            << what;
        EXPECT_EQ(g.stats.bad_sample_vectors, r.stats.bad_sample_vectors) << what;
        EXPECT_EQ(g.stats.unusable_user_channels, r.stats.unusable_user_channels) << what;
    }
}

/*! Channels given through the device API (set_channel_device) count in stats() like host
 * ones: subcarriers without a usable channel, regularized ones, users without a usable
 * channel and erased symbol vectors, whether the first detect_device call prepares the
 * channel in the fused kernel or in the prepare kernel (fuse_prepare off); once however
 * often stats() is read, and a channel's status once however many calls use it. */
TEST(CudaDetector, DeviceApiChannelsCountInTheStatisticsLikeHostOnes)
{
    SKIP_WITHOUT_GPU();
    for (auto mode : { DetectorMode::chol, DetectorMode::cg })
        for (bool fuse : { true, false }) {
            const Case c{ 16, 4, 12, 3, Modulation::qam16, mode, 3, 15.0, 0.0 };
            const std::string what = describe(c) + (fuse ? " fused" : " prepared");
            Frame f = frame_with_twin_users(c, 21); // subcarrier 0: users 0 and 1 alike
            if (mode == DetectorMode::chol)
                f.n0 = 0.0f; // below the loading rule: every subcarrier regularized
            const Dims d = config_of(c, Backend::cpu).dims();
            f.h[d.channel_index(2, 5, 1)] = cf32(NAN, 0.0f); // bad subcarrier 2
            f.y[1 * d.rx_items() + d.rx_index(4, 3)] = cf32(0.0f, INFINITY); // bad (1, 4)
            for (std::size_t b = 0; b < d.num_antennas; ++b)
                f.h[d.channel_index(6, b, 3)] = cf32(0.0f, 0.0f); // user 3 dead on sc 6
            cuda::EngineOptions opt;
            opt.fuse_prepare = fuse;
            cuda::CudaDetector host_api(config_of(c, Backend::cuda), opt);
            const Outputs host = run(host_api, f, c.nsym);
            const DetectorStats& want = host.stats;
            ASSERT_GE(want.bad_channel_subcarriers, 1u) << what;
            ASSERT_GE(want.unusable_user_channels, 1u) << what;
            ASSERT_GE(want.bad_sample_vectors, 1u) << what;
            if (mode == DetectorMode::chol) {
                ASSERT_GE(want.regularized_subcarriers, 1u) << what;
            }

            cuda::CudaDetector gpu(config_of(c, Backend::cuda), opt);
            DeviceFrame dev(f, host);
            gpu.set_channel_device(dev.h.get(), f.n0);
            dev.detect(gpu, c.nsym);
            const DetectorStats got = gpu.stats(), again = gpu.stats();
            for (const DetectorStats* s : { &got, &again }) {
                EXPECT_EQ(s->bad_channel_subcarriers, want.bad_channel_subcarriers)
                    << what;
                EXPECT_EQ(s->regularized_subcarriers, want.regularized_subcarriers)
                    << what;
                EXPECT_EQ(s->unusable_user_channels, want.unusable_user_channels) << what;
                EXPECT_EQ(s->bad_sample_vectors, want.bad_sample_vectors) << what;
            }
            dev.detect(gpu, c.nsym); // the same channel: its status is not counted again
            const DetectorStats twice = gpu.stats();
            EXPECT_EQ(twice.bad_channel_subcarriers, want.bad_channel_subcarriers)
                << what;
            EXPECT_EQ(twice.regularized_subcarriers, want.regularized_subcarriers)
                << what;
            EXPECT_EQ(twice.unusable_user_channels, want.unusable_user_channels) << what;
            EXPECT_EQ(twice.bad_sample_vectors, 2 * want.bad_sample_vectors) << what;
        }
}

/*! The device API's matrix-free path (cg/cr: a first call of too few symbols per user to
 * form A) counts the channel's status in stats() as the host API does, and the call that
 * forms A later on the same channel does not count it again. With the declared N0 and
 * with N0 = 0 (every usable subcarrier loaded). */
TEST(CudaDetector, MatrixFreeCallsCountTheirChannelInTheStatisticsOnce)
{
    SKIP_WITHOUT_GPU();
    for (auto mode : { DetectorMode::cg, DetectorMode::cr })
        for (bool zero_n0 : { false, true }) {
            const Case c{ 32, 16, 12, 3, Modulation::qam16, mode, 3, 15.0, 0.0 };
            const std::string what = describe(c) + (zero_n0 ? " N0 0" : " N0 declared");
            Frame f = frame_with_twin_users(c, 23);
            if (zero_n0)
                f.n0 = 0.0f;
            const Dims d = config_of(c, Backend::cpu).dims();
            f.h[d.channel_index(2, 5, 1)] = cf32(NAN, 0.0f); // bad subcarrier 2
            f.y[d.rx_index(4, 3)] = cf32(0.0f, INFINITY);    // bad (0, 4)
            for (std::size_t b = 0; b < d.num_antennas; ++b)
                f.h[d.channel_index(6, b, 3)] = cf32(0.0f, 0.0f); // user 3 dead on sc 6
            auto cpu = make_detector(config_of(c, Backend::cpu));
            const Outputs r = run(*cpu, f, c.nsym);
            const DetectorStats& want = r.stats;
            ASSERT_GE(want.bad_channel_subcarriers, 1u) << what;
            ASSERT_GE(want.unusable_user_channels, 1u) << what;
            ASSERT_EQ(want.bad_sample_vectors, 1u) << what;
            if (zero_n0) {
                ASSERT_GE(want.regularized_subcarriers, 1u) << what;
            }

            cuda::CudaDetector gpu(config_of(c, Backend::cuda));
            DeviceFrame dev(f, r);
            gpu.set_channel_device(dev.h.get(), f.n0);
            dev.detect(gpu, 1);
            ASSERT_FALSE(gpu.matrix_formed()) << what << ": not the matrix-free path";
            dev.detect(gpu, c.nsym); // forms A on the same channel
            EXPECT_TRUE(gpu.matrix_formed()) << what;
            for (int call = 0; call < 2; ++call) {
                const DetectorStats s = gpu.stats();
                EXPECT_EQ(s.bad_channel_subcarriers, want.bad_channel_subcarriers)
                    << what;
                EXPECT_EQ(s.regularized_subcarriers, want.regularized_subcarriers)
                    << what;
                EXPECT_EQ(s.unusable_user_channels, want.unusable_user_channels) << what;
                EXPECT_EQ(s.bad_sample_vectors, 2 * want.bad_sample_vectors) << what;
            }
        }
}

TEST(CudaDetector, SingularChannelIsRegularizedLikeTheCpu)
{
    SKIP_WITHOUT_GPU();
    const Case c{ 8, 4, 6, 2, Modulation::qpsk, DetectorMode::chol, 3, 10.0, 0.0 };
    Frame f = frame_with_twin_users(c, 3);
    f.n0 = 0.0f;
    auto cpu = make_detector(config_of(c, Backend::cpu));
    cuda::CudaDetector gpu(config_of(c, Backend::cuda));
    const Outputs g = run(gpu, f, c.nsym), r = run(*cpu, f, c.nsym);
    for (float l : g.llr)
        ASSERT_TRUE(std::isfinite(l));
    EXPECT_EQ(g.stats.regularized_subcarriers, r.stats.regularized_subcarriers);
    EXPECT_GE(g.stats.regularized_subcarriers, 1u);
}

TEST(CudaDetector, RegularizedZfKeepsThePostZfNoiseOfTheCpu)
{
    // Two users with the same channel on subcarrier 0: G is singular, A gets diagonal
    // loading, and the post-ZF noise gain |w_u|^2 of those users must come out as the
    // CPU's (from W = A^-1 H^H) and not from a formula that cancels in float, which made
    // their LLRs maximally confident.
    SKIP_WITHOUT_GPU();
    const Case c{ 32, 8, 6, 4, Modulation::qpsk, DetectorMode::zf, 3, 10.0, 0.0 };
    Frame f = frame_with_twin_users(c, 13);
    const Dims d = config_of(c, Backend::cpu).dims();
    auto cpu = make_detector(config_of(c, Backend::cpu));
    cuda::CudaDetector gpu(config_of(c, Backend::cuda));
    const Outputs g = run(gpu, f, c.nsym), r = run(*cpu, f, c.nsym);
    EXPECT_EQ(g.stats.regularized_subcarriers, r.stats.regularized_subcarriers);
    EXPECT_GE(g.stats.regularized_subcarriers, 1u);
    const std::size_t q = d.bits_per_symbol;
    for (std::size_t u : { 0u, 1u }) {
        double gpu_sum = 0, cpu_sum = 0;
        for (std::size_t s = 0; s < c.nsym; ++s)
            for (std::size_t j = 0; j < q; ++j) {
                const std::size_t i = s * d.llr_items() + u * q + j; // subcarrier 0
                ASSERT_TRUE(std::isfinite(g.llr[i]));
                gpu_sum += std::abs(g.llr[i]);
                cpu_sum += std::abs(r.llr[i]);
            }
        EXPECT_GT(cpu_sum, 0.0) << "user " << u;
        EXPECT_NEAR(gpu_sum / cpu_sum, 1.0, 0.2) << "user " << u;
    }
}

/*! Users 0 and 1 nearly collide on every subcarrier (column 1 = column 0 + delta e), y
 * redrawn through the new H with the frame's own noise (as the CPU test
 * Detector.LoadedChannelsGiveLlrsThatTrackReliability). */
Frame frame_with_colliding_users(const Case& c, float delta, std::uint64_t seed)
{
    Frame f = frame_of(c, seed);
    const Dims d = config_of(c, Backend::cpu).dims();
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::normal_distribution<float> g(0.0f, std::sqrt(0.5f));
    std::vector<cf32> change(c.nsc * c.b);
    for (std::size_t sc = 0; sc < c.nsc; ++sc)
        for (std::size_t b = 0; b < c.b; ++b) {
            cf32& h1 = f.h[d.channel_index(sc, b, 1)];
            const cf32 now = f.h[d.channel_index(sc, b, 0)] + delta * cf32(g(rng), g(rng));
            change[sc * c.b + b] = now - h1;
            h1 = now;
        }
    for (std::size_t t = 0; t < c.nsym; ++t)
        for (std::size_t sc = 0; sc < c.nsc; ++sc)
            for (std::size_t b = 0; b < c.b; ++b)
                f.y[(t * c.nsc + sc) * c.b + b] +=
                    change[sc * c.b + b] * f.x[(t * c.nsc + sc) * c.u + 1];
    return f;
}

TEST(CudaDetector, LoadedChannelsGiveLlrsThatTrackReliabilityLikeTheCpu)
{
    // Issue 25: under loading, the SINR behind the LLRs counts the interference the
    // loaded filter leaves between the colliding users, on the GPU as on the CPU:
    // per-user LLR magnitudes of those users within 20% of the CPU's (float rounding on
    // a near-singular system moves single LLRs), no wrong sign above |LLR| 3 beyond 2%,
    // and |LLR| below the loaded clip, 50, as in the CPU test. Host API (prepare kernel) and device
    // API (fused kernel; cg/cr also the matrix-free kernel, on a first single symbol).
    SKIP_WITHOUT_GPU();
    // chol, zf and box told N0 = 0 on channels 1e-3 apart: loaded on every subcarrier,
    // also those just inside the pivot rule. Not strict (the CPU test says why): the
    // wrong-sign rate is not checked, the rest is.
    struct Loaded {
        DetectorMode mode;
        float n0; // < 0: the frame's
        float delta;
        std::size_t size = 16;
        bool strict = true;
    };
    for (const Loaded l : { Loaded{ DetectorMode::zf, -1.0f, 1e-4f },
                            Loaded{ DetectorMode::chol, 0.0f, 1e-4f },
                            Loaded{ DetectorMode::chol, 0.0f, 1e-3f, 16, false },
                            Loaded{ DetectorMode::zf, 0.0f, 1e-4f },
                            Loaded{ DetectorMode::zf, 1e-7f, 1e-3f, 4, false },
                            Loaded{ DetectorMode::box, 0.0f, 1e-3f },
                            Loaded{ DetectorMode::box, 0.0f, 1e-3f, 4 },
                            Loaded{ DetectorMode::cg, 0.0f, 1e-4f },
                            Loaded{ DetectorMode::cr, 1e-7f, 1e-3f } }) {
        const Case c{ l.size, l.size, 64, 14, Modulation::qam16, l.mode, 3, 30.0, 0.0 };
        Frame f = frame_with_colliding_users(c, l.delta, 5);
        if (l.n0 >= 0.0f)
            f.n0 = l.n0;
        const std::string what = to_string(l.mode) + " " + std::to_string(l.size) + "x" +
                                 std::to_string(l.size) + " N0 " + std::to_string(f.n0) +
                                 " delta " + std::to_string(l.delta);
        const Dims d = config_of(c, Backend::cpu).dims();
        auto cpu = make_detector(config_of(c, Backend::cpu));
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const Outputs g = run(gpu, f, c.nsym), r = run(*cpu, f, c.nsym);
        EXPECT_EQ(g.stats.regularized_subcarriers, r.stats.regularized_subcarriers) << what;
        EXPECT_EQ(g.stats.regularized_subcarriers, c.nsc) << what;
        cuda::CudaDetector fused_gpu(config_of(c, Backend::cuda));
        DeviceFrame dev(f, g);
        fused_gpu.set_channel_device(dev.h.get(), f.n0);
        const Outputs fused = dev.detect(fused_gpu, c.nsym);
        struct Path {
            const Outputs* out;
            std::size_t symbols;
            const char* name;
        };
        std::vector<Path> paths = { { &g, c.nsym, " (host API)" },
                                    { &fused, c.nsym, " (device API)" } };
        Outputs matrix_free;
        if (l.mode == DetectorMode::cg || l.mode == DetectorMode::cr) {
            cuda::CudaDetector mf_gpu(config_of(c, Backend::cuda));
            mf_gpu.set_channel_device(dev.h.get(), f.n0);
            matrix_free = dev.detect(mf_gpu, 1); // too few symbols to form A
            EXPECT_FALSE(mf_gpu.matrix_formed()) << what;
            paths.push_back({ &matrix_free, 1, " (matrix-free)" });
        }
        const std::size_t q = d.bits_per_symbol;
        for (const Path& path : paths) {
            const Outputs* o = path.out;
            const std::string which = what + path.name;
            std::size_t above = 0, wrong = 0;
            float largest = 0.0f;
            double total[2] = { 0, 0 }, cpu_total[2] = { 0, 0 };
            for (std::size_t sc = 0; sc < c.nsc; ++sc)
                for (std::size_t u = 0; u < 2; ++u) {
                    double sum = 0, cpu_sum = 0;
                    for (std::size_t t = 0; t < path.symbols; ++t)
                        for (std::size_t j = 0; j < q; ++j) {
                            const std::size_t i = t * d.llr_items() + d.llr_index(sc, u, j);
                            const float l = o->llr[i];
                            ASSERT_TRUE(std::isfinite(l)) << which;
                            sum += std::abs(l);
                            cpu_sum += std::abs(r.llr[i]);
                            largest = std::max(largest, std::abs(l));
                            if (std::abs(l) > 3.0f) {
                                ++above;
                                wrong += (l > 0.0f) != (f.bits[((t * c.nsc + sc) * c.u + u) * q +
                                                                j] != 0)
                                             ? 1
                                             : 0;
                            }
                        }
                    ASSERT_GT(cpu_sum, 0.0) << which;
                    total[u] += sum;
                    cpu_total[u] += cpu_sum;
                    if (path.symbols > 1) { // (one symbol's 4 LLRs: too few to compare)
                        EXPECT_NEAR(sum / cpu_sum, 1.0, 0.2)
                            << which << ": subcarrier " << sc << ", user " << u;
                    }
                }
            for (std::size_t u = 0; u < 2; ++u) {
                EXPECT_NEAR(total[u] / cpu_total[u], 1.0, 0.1) << which << ", user " << u;
            }
            std::cout << which << ": " << above << " LLRs above 3, " << wrong
                      << " wrong; largest " << largest << "\n";
            if (l.strict) {
                EXPECT_LE(wrong, 0.02 * above + 1) << which;
            }
            EXPECT_LT(largest, mmse::kLoadedLlrClip) << which; // (not reaching the clip)
        }
    }
}

TEST(CudaDetector, LoadedChannelsClipEveryLlrAtTheStatedBoundLikeTheCpu)
{
    // Issue 25: on a subcarrier it had to load, no MMSE-family kernel writes |LLR| above
    // mmse::kLoadedLlrClip (Detector.LoadedChannelsClipEveryLlrAtTheStatedBound): told
    // N0 = 0, the users that do not collide reach the bound; a smaller configured clip
    // still holds; told the real N0, chol is not loaded and not clipped. Host API (tiled
    // kernel after the prepare kernel; box's kernel; 2 symbols: the direct kernel),
    // device API (fused kernel) and for cg/cr the matrix-free kernel (a first single
    // symbol).
    SKIP_WITHOUT_GPU();
    for (const DetectorMode mode : { DetectorMode::chol,
                                     DetectorMode::zf,
                                     DetectorMode::box,
                                     DetectorMode::cg,
                                     DetectorMode::cr }) {
        // (16 users: a first single symbol leaves A unformed, the matrix-free kernel's case)
        Case c{ 16, 16, 64, 14, Modulation::qam16, mode, 3, 30.0, 0.0 };
        Frame f = frame_with_colliding_users(c, 1e-3f, 5);
        f.n0 = 0.0f;
        const std::string what = to_string(mode) + " 16x16 N0 0";
        auto largest = [&](const Outputs& o, std::size_t symbols) {
            float m = 0.0f;
            const std::size_t items = symbols * config_of(c, Backend::cpu).dims().llr_items();
            for (std::size_t i = 0; i < items; ++i) {
                EXPECT_TRUE(std::isfinite(o.llr[i])) << what;
                m = std::max(m, std::abs(o.llr[i]));
            }
            return m;
        };
        auto cpu = make_detector(config_of(c, Backend::cpu));
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const Outputs g = run(gpu, f, c.nsym), r = run(*cpu, f, c.nsym);
        EXPECT_EQ(g.stats.regularized_subcarriers, c.nsc) << what;
        EXPECT_EQ(largest(r, c.nsym), mmse::kLoadedLlrClip) << what << " (CPU)";
        EXPECT_EQ(largest(g, c.nsym), mmse::kLoadedLlrClip) << what << " (host API)";
        cuda::CudaDetector direct_gpu(config_of(c, Backend::cuda));
        EXPECT_EQ(largest(run(direct_gpu, f, 2), 2), mmse::kLoadedLlrClip)
            << what << " (2 symbols)";
        DeviceFrame dev(f, g);
        cuda::CudaDetector fused_gpu(config_of(c, Backend::cuda));
        fused_gpu.set_channel_device(dev.h.get(), f.n0);
        EXPECT_EQ(largest(dev.detect(fused_gpu, c.nsym), c.nsym), mmse::kLoadedLlrClip)
            << what << " (device API)";
        if (mode == DetectorMode::cg || mode == DetectorMode::cr) {
            cuda::CudaDetector mf_gpu(config_of(c, Backend::cuda));
            mf_gpu.set_channel_device(dev.h.get(), f.n0);
            EXPECT_EQ(largest(dev.detect(mf_gpu, 1), 1), mmse::kLoadedLlrClip)
                << what << " (matrix-free)";
            EXPECT_FALSE(mf_gpu.matrix_formed()) << what;
        }
        DetectorConfig clipped = config_of(c, Backend::cuda);
        clipped.llr_clip = 20.0f;
        cuda::CudaDetector clipped_gpu(clipped);
        EXPECT_EQ(largest(run(clipped_gpu, f, c.nsym), c.nsym), 20.0f) << what << " (clip 20)";
        if (mode == DetectorMode::chol) {
            Frame real = frame_with_colliding_users(c, 1e-3f, 5);
            cuda::CudaDetector real_gpu(config_of(c, Backend::cuda));
            const Outputs o = run(real_gpu, real, c.nsym);
            EXPECT_EQ(o.stats.regularized_subcarriers, 0u) << "chol, the real N0";
            EXPECT_GT(largest(o, c.nsym), mmse::kLoadedLlrClip) << "chol, the real N0";
            cuda::CudaDetector real_direct(config_of(c, Backend::cuda));
            EXPECT_GT(largest(run(real_direct, real, 2), 2), mmse::kLoadedLlrClip)
                << "chol, the real N0, 2 symbols";
        }
    }
}

//! The channel of `subcarriers` times `gain`, and the signal part of y on them with it
//! (the noise as it was): the declared N0 falls below their loading level, kLoading
//! mean(diag G), so the MMSE family loads these subcarriers and no other.
void amplify_subcarriers(Frame& f,
                         const Case& c,
                         const std::vector<std::size_t>& subcarriers,
                         float gain)
{
    const Dims d = config_of(c, Backend::cpu).dims();
    for (std::size_t sc : subcarriers) {
        for (std::size_t t = 0; t < c.nsym; ++t)
            for (std::size_t b = 0; b < c.b; ++b) {
                cf32 signal(0.0f, 0.0f);
                for (std::size_t u = 0; u < c.u; ++u)
                    signal +=
                        f.h[d.channel_index(sc, b, u)] * f.x[(t * c.nsc + sc) * c.u + u];
                f.y[t * d.rx_items() + d.rx_index(sc, b)] += (gain - 1.0f) * signal;
            }
        for (std::size_t b = 0; b < c.b; ++b)
            for (std::size_t u = 0; u < c.u; ++u)
                f.h[d.channel_index(sc, b, u)] *= gain;
    }
}

/*! LLRs of a batch whose loaded subcarriers lie among unloaded ones, each clipped by its
 * own subcarrier's status: |LLR| at most mmse::kLoadedLlrClip on the loaded ones (and
 * there the CPU's signs where the CPU is sure), above it somewhere on the others and
 * there the CPU's LLRs within `tolerance` (relative, at least 1 absolute). */
void expect_clipped_where_loaded(const Outputs& gpu,
                                 const Outputs& cpu,
                                 const Dims& d,
                                 std::size_t symbols,
                                 const std::vector<std::size_t>& loaded,
                                 double tolerance,
                                 bool reaches_clip,
                                 const std::string& what)
{
    float largest[2][2] = { { 0.0f, 0.0f },
                            { 0.0f, 0.0f } }; // [gpu, cpu][unloaded, loaded]
    double worst = 0.0;
    std::size_t wrong_signs = 0;
    for (std::size_t t = 0; t < symbols; ++t)
        for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc) {
            const bool is_loaded =
                std::find(loaded.begin(), loaded.end(), sc) != loaded.end();
            for (std::size_t u = 0; u < d.num_users; ++u)
                for (std::size_t j = 0; j < d.bits_per_symbol; ++j) {
                    const std::size_t i = t * d.llr_items() + d.llr_index(sc, u, j);
                    const float g = gpu.llr[i], c = cpu.llr[i];
                    ASSERT_TRUE(std::isfinite(g))
                        << what << ": LLR " << i << " not written";
                    largest[0][is_loaded] = std::max(largest[0][is_loaded], std::abs(g));
                    largest[1][is_loaded] = std::max(largest[1][is_loaded], std::abs(c));
                    if (is_loaded)
                        wrong_signs += std::abs(c) > 1.0f && (g > 0) != (c > 0);
                    else
                        worst = std::max(worst,
                                         std::abs(double(g) - c) /
                                             std::max(1.0, std::abs(double(c))));
                }
        }
    for (int k = 0; k < 2; ++k) {
        const char* who = k == 0 ? " (GPU)" : " (CPU)";
        EXPECT_LE(largest[k][1], mmse::kLoadedLlrClip) << what << who << ": loaded";
        if (reaches_clip) {
            EXPECT_EQ(largest[k][1], mmse::kLoadedLlrClip) << what << who << ": loaded";
        }
        EXPECT_GT(largest[k][0], mmse::kLoadedLlrClip) << what << who << ": unloaded";
    }
    EXPECT_LT(worst, tolerance) << what << ": unloaded subcarriers";
    EXPECT_EQ(wrong_signs, 0u) << what << ": loaded subcarriers";
}

TEST(CudaDetector, LoadedAndUnloadedSubcarriersOfOneBatchAreEachClippedByTheirOwnStatus)
{
    // The other loading tests load every subcarrier of a batch. Here a few scattered
    // ones (the first, the last, inside tiles) are loaded among unloaded ones: every
    // kernel must read each subcarrier's own status, clip only the loaded ones at
    // mmse::kLoadedLlrClip and leave the others' LLRs as the CPU's. MMSE family: the
    // channel of those subcarriers 60 dB stronger, so that the frame's N0 is below their
    // loading level only; host API (prepare and tiled kernels; 2 symbols: the direct
    // kernel) and device API (fused kernel). sfsd: users 0 and 1 alike on those
    // subcarriers (its loading follows the pivots, not N0).
    SKIP_WITHOUT_GPU();
    const std::vector<std::size_t> loaded = { 0, 9, 33, 63 };
    for (const DetectorMode mode : { DetectorMode::chol,
                                     DetectorMode::zf,
                                     DetectorMode::box,
                                     DetectorMode::cg,
                                     DetectorMode::cr }) {
        const Case c{ 8, 4, 64, 14, Modulation::qpsk, mode, 3, 30.0, 0.0 };
        Frame f = frame_of(c, 11);
        amplify_subcarriers(f, c, loaded, 1000.0f);
        const std::string what = describe(c) + " 4 of 64 loaded";
        const Dims d = config_of(c, Backend::cpu).dims();
        auto cpu = make_detector(config_of(c, Backend::cpu));
        const Outputs r = run(*cpu, f, c.nsym);
        ASSERT_EQ(r.stats.regularized_subcarriers, loaded.size()) << what << " (CPU)";
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const Outputs g = run(gpu, f, c.nsym);
        EXPECT_EQ(g.stats.regularized_subcarriers, loaded.size()) << what;
        expect_clipped_where_loaded(
            g, r, d, c.nsym, loaded, 2e-3, true, what + " (host API)");
        cuda::CudaDetector direct_gpu(config_of(c, Backend::cuda));
        expect_clipped_where_loaded(
            run(direct_gpu, f, 2), r, d, 2, loaded, 2e-3, true, what + " (2 symbols)");
        DeviceFrame dev(f, g);
        cuda::CudaDetector fused_gpu(config_of(c, Backend::cuda));
        fused_gpu.set_channel_device(dev.h.get(), f.n0);
        expect_clipped_where_loaded(dev.detect(fused_gpu, c.nsym),
                                    r,
                                    d,
                                    c.nsym,
                                    loaded,
                                    2e-3,
                                    true,
                                    what + " (device API)");
        EXPECT_EQ(fused_gpu.stats().regularized_subcarriers, loaded.size())
            << what << " (device API)";
    }
    for (const DetectorMode mode : { DetectorMode::cg, DetectorMode::cr }) {
        // the matrix-free kernel: device API, a first single symbol, 16 users
        const Case c{ 32, 16, 64, 4, Modulation::qpsk, mode, 3, 30.0, 0.0 };
        Frame f = frame_of(c, 13);
        amplify_subcarriers(f, c, loaded, 1000.0f);
        const std::string what = describe(c) + " 4 of 64 loaded (matrix-free)";
        const Dims d = config_of(c, Backend::cpu).dims();
        auto cpu = make_detector(config_of(c, Backend::cpu));
        const Outputs r = run(*cpu, f, c.nsym);
        ASSERT_EQ(r.stats.regularized_subcarriers, loaded.size()) << what << " (CPU)";
        DeviceFrame dev(f, r);
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        gpu.set_channel_device(dev.h.get(), f.n0);
        expect_clipped_where_loaded(
            dev.detect(gpu, 1), r, d, 1, loaded, 2e-3, true, what);
        EXPECT_FALSE(gpu.matrix_formed()) << what;
        EXPECT_EQ(gpu.stats().regularized_subcarriers, loaded.size()) << what;
    }
    {
        const Case c{ 4, 4, 64, 6, Modulation::qpsk, DetectorMode::sfsd, 1, 30.0, 0.0 };
        Frame f = frame_of(c, 12);
        const Dims d = config_of(c, Backend::cpu).dims();
        for (std::size_t sc : loaded)
            for (std::size_t b = 0; b < c.b; ++b)
                f.h[d.channel_index(sc, b, 1)] = f.h[d.channel_index(sc, b, 0)];
        const std::string what = describe(c) + " 4 of 64 loaded";
        auto cpu = make_detector(config_of(c, Backend::cpu));
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const Outputs r = run(*cpu, f, c.nsym), g = run(gpu, f, c.nsym);
        ASSERT_EQ(r.stats.regularized_subcarriers, loaded.size()) << what << " (CPU)";
        EXPECT_EQ(g.stats.regularized_subcarriers, loaded.size()) << what;
        expect_clipped_where_loaded(g, r, d, c.nsym, loaded, 1e-2, false, what);
    }
}

//! Subcarriers enough for a compact grid on GPU 0 (4 or more blocks per SM, every
//! tile size), plus a partial wave.
std::size_t compact_grid_subcarriers()
{
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess)
        throw std::runtime_error("cudaDeviceGetAttribute(MultiProcessorCount) failed");
    return 4 * static_cast<std::size_t>(sms) + 17;
}

/*! The first device-API call on f's channel (the fused kernel prepares it) against the
 * host API (the prepare kernel, G summed in another order, its own block's inversion),
 * which must regularize at least one subcarrier: finite LLRs, the same erasures, and
 * per-user LLR magnitudes
 * within 20% on subcarrier 0 (float rounding on a near-singular system moves individual
 * LLRs; the gains must not), equal elsewhere to rounding. */
void expect_fused_like_prepared(const Case& c, const Frame& f, const std::string& what)
{
    const Dims d = config_of(c, Backend::cpu).dims();
    cuda::CudaDetector host_gpu(config_of(c, Backend::cuda));
    const Outputs prepared = run(host_gpu, f, c.nsym);
    ASSERT_GE(host_gpu.stats().regularized_subcarriers, 1u) << what;

    cuda::CudaDetector gpu(config_of(c, Backend::cuda));
    DeviceFrame dev(f, prepared);
    gpu.set_channel_device(dev.h.get(), f.n0);
    const Outputs fused = dev.detect(gpu, c.nsym);
    EXPECT_TRUE(gpu.matrix_formed()) << what;
    const std::size_t q = d.bits_per_symbol;
    for (std::size_t sc = 0; sc < c.nsc; ++sc)
        for (std::size_t u = 0; u < c.u; ++u) {
            double fused_sum = 0, prepared_sum = 0;
            for (std::size_t s = 0; s < c.nsym; ++s)
                for (std::size_t j = 0; j < q; ++j) {
                    const std::size_t i = s * d.llr_items() + d.llr_index(sc, u, j);
                    ASSERT_TRUE(std::isfinite(fused.llr[i])) << what << ": LLR " << i;
                    ASSERT_EQ(fused.llr[i] == 0.0f, prepared.llr[i] == 0.0f)
                        << what << ": erasure at " << i;
                    fused_sum += std::abs(fused.llr[i]);
                    prepared_sum += std::abs(prepared.llr[i]);
                }
            if (prepared_sum == 0.0)
                continue;
            EXPECT_NEAR(fused_sum / prepared_sum, 1.0, sc == 0 ? 0.2 : 1e-3)
                << what << ": subcarrier " << sc << ", user " << u;
        }
}

TEST(CudaDetector, FusedKernelRegularizesASingularChannelLikeThePrepareKernel)
{
    // Twin users on subcarrier 0 make G singular: the first device-API call inverts A in
    // the fused equalize kernel (Gauss-Jordan, retried under diagonal loading; the block
    // of one warp for 8 users, of several for 32) and must give what the host API gives.
    SKIP_WITHOUT_GPU();
    for (auto mode : { DetectorMode::chol, DetectorMode::zf })
        for (std::size_t users : { 8, 32 }) {
            const Case c{ 4 * users, users, 6, 4, Modulation::qpsk, mode, 3, 10.0, 0.0 };
            Frame f = frame_with_twin_users(c, 17);
            if (mode == DetectorMode::chol)
                f.n0 = 0.0f; // chol loads from the start (below the loading rule); zf,
            // told the frame's N0, meets the singular G and retries under loading
            expect_fused_like_prepared(
                c, f, to_string(mode) + ", " + std::to_string(users) + " users");
        }
}

TEST(CudaDetector, FusedInversionByOneWarpIsScaleFreeAndRegularizesLikeThePrepareKernel)
{
    // On a compact grid the fused chol/zf blocks of up to 16 users leave the inversion
    // to one warp (invert_warp: shuffles, A scaled by a power of two so that its pivots
    // are at most 1), in blocks of one warp (16 users with up to 16 symbols, 8, 4) and of
    // four (16 users, 64 symbols): a singular G (twin users) is regularized as the
    // prepare kernel does, and a frame scaled by alpha (H and y; N0 by alpha^2) gives the
    // CPU's LLRs for that frame, from alpha = 1e-5 to 1.37 * 2^20.
    SKIP_WITHOUT_GPU();
    const std::size_t nsc = compact_grid_subcarriers();
    // (users, symbols)
    const std::pair<std::size_t, std::size_t> shapes[] = {
        { 16, 14 }, { 8, 14 }, { 4, 14 }, { 16, 64 }
    };
    for (auto mode : { DetectorMode::chol, DetectorMode::zf })
        for (const auto& [users, nsym] : shapes) {
            const std::size_t b = 4 * users;
            const Case c{ b, users, nsc, nsym, Modulation::qam16, mode, 3, 15.0, 0.0 };
            const std::string what = describe(c);
            Frame twins = frame_with_twin_users(c, 23);
            if (mode == DetectorMode::chol)
                twins.n0 = 0.0f;
            expect_fused_like_prepared(c, twins, what + ", twin users");
            for (double alpha : { 1e-5, 1.37 * 1048576.0 }) {
                Frame f = frame_of(c, 29);
                for (auto* v : { &f.h, &f.y })
                    for (cf32& x : *v)
                        x *= static_cast<float>(alpha);
                f.n0 = static_cast<float>(f.n0 * alpha * alpha);
                auto cpu = make_detector(config_of(c, Backend::cpu));
                const Outputs r = run(*cpu, f, c.nsym);
                cuda::CudaDetector gpu(config_of(c, Backend::cuda));
                DeviceFrame dev(f, r);
                gpu.set_channel_device(dev.h.get(), f.n0);
                const Outputs fused = dev.detect(gpu, c.nsym);
                EXPECT_TRUE(gpu.matrix_formed()) << what;
                expect_close(fused, r, what + ", alpha " + std::to_string(alpha));
            }
        }
}

TEST(CudaDetector, PipelinedChunksStreamsAndPinnedBuffersGiveTheSameLlrs)
{
    SKIP_WITHOUT_GPU();
    const Case c{ 64, 8, 32, 37, Modulation::qam64, DetectorMode::cr, 3, 12.0, 0.0 };
    const Frame f = frame_of(c, 11);
    const Dims d = config_of(c, Backend::cpu).dims();
    cuda::CudaDetector reference(config_of(c, Backend::cuda));
    const Outputs one = run(reference, f, c.nsym);
    // A chunk is a launch with fewer symbols, which may take another tile shape and so
    // another summation order (and the last, 1-symbol chunk the direct kernel): the LLRs
    // agree to float rounding, not bit for bit. The same call is repeatable exactly.
    auto expect_same_to_rounding = [&](const float* got, const std::string& what) {
        std::size_t disagree = 0;
        double worst = 0;
        for (std::size_t i = 0; i < one.llr.size(); ++i) {
            ASSERT_TRUE(std::isfinite(got[i])) << what << ": LLR " << i << " not written";
            worst = std::max(worst,
                             std::abs(double(got[i]) - one.llr[i]) /
                                 std::max(1.0, std::abs(double(one.llr[i]))));
            disagree += std::abs(one.llr[i]) > 1e-2f && (got[i] > 0) != (one.llr[i] > 0);
        }
        EXPECT_LT(worst, 1e-4) << what;
        EXPECT_EQ(disagree, 0u) << what << ": hard decisions differ";
    };
    EXPECT_EQ(run(reference, f, c.nsym).llr, one.llr) << "the same call again";
    for (int streams : { 1, 2, 4 }) {
        cuda::EngineOptions opt;
        opt.streams = streams;
        opt.chunk_bytes =
            3 * d.rx_items() * sizeof(cf32); // 3 symbols per chunk: 13 chunks
        cuda::CudaDetector gpu(config_of(c, Backend::cuda), opt);
        const Outputs r = run(gpu, f, c.nsym);
        expect_same_to_rounding(r.llr.data(), std::to_string(streams) + " streams");
        // The same through pinned caller buffers (DMA without staging).
        cuda::Buffer<cf32> y(f.y.size(), true);
        cuda::Buffer<float> llr(one.llr.size(), true);
        std::copy(f.y.begin(), f.y.end(), y.get());
        std::fill(
            llr.get(), llr.get() + llr.size(), std::numeric_limits<float>::quiet_NaN());
        gpu.detect(y.get(), c.nsym, llr.get());
        EXPECT_TRUE(std::equal(r.llr.begin(), r.llr.end(), llr.get()))
            << streams << " streams, pinned: not the LLRs of the same chunks unpinned";
    }
}

TEST(CudaDetector, DeviceInterfaceMatchesHostInterface)
{
    SKIP_WITHOUT_GPU();
    for (auto mode : { DetectorMode::chol, DetectorMode::cr }) {
        const Case c{ 128, 16, 40, 9, Modulation::qam16, mode, 3, 8.0, 0.0 };
        const Frame f = frame_of(c, 5);
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const Outputs host = run(gpu, f, c.nsym);
        cuda::Buffer<cf32> dh(f.h.size(), false), dy(f.y.size(), false);
        cuda::Buffer<float> dllr(host.llr.size(), false);
        cuda::copy_to_device(dh.get(), f.h.data(), dh.bytes());
        cuda::copy_to_device(dy.get(), f.y.data(), dy.bytes());
        gpu.set_channel(f.h.data(), f.n0 * 4.0f); // a different channel state in between
        gpu.set_channel_device(dh.get(), f.n0);
        gpu.detect_device(dy.get(), c.nsym, dllr.get());
        gpu.synchronize();
        std::vector<float> llr(host.llr.size());
        cuda::copy_to_host(llr.data(), dllr.get(), dllr.bytes());
        // The device call prepares the channel itself (cr: inside its equalize kernel,
        // with another summation order for G than the prepare kernel's): equal to float
        // rounding.
        expect_llrs_close(llr, host.llr, to_string(mode));
    }
}

namespace {

//! The bad inputs of the device-API tests, in frame f of nsym symbols: a NaN in H on
//! subcarrier 2, user 3 dead on subcarrier 6, (no_user_on_8) no user on subcarrier 8,
//! and an infinite y on subcarrier 9 in the last symbol.
void damage(Frame& f, const Dims& d, std::size_t nsym, bool no_user_on_8)
{
    f.h[d.channel_index(2, 5, 1)] = cf32(NAN, 0.0f);
    for (std::size_t b = 0; b < d.num_antennas; ++b) {
        f.h[d.channel_index(6, b, 3)] = cf32(0.0f, 0.0f);
        if (no_user_on_8)
            for (std::size_t u = 0; u < d.num_users; ++u)
                f.h[d.channel_index(8, b, u)] = cf32(0.0f, 0.0f);
    }
    f.y[(nsym - 1) * d.rx_items() + d.rx_index(9, 4)] = cf32(INFINITY, 0.0f);
}

} // namespace

/*! detect_frames_device (the receive chain's window of frames in one launch): each
 * frame as its own detector gives it (bit for bit where both take the same fused
 * kernel: chol and zf; to float rounding for cg and cr, whose own detector may iterate
 * from H alone), a NaN N0 skips its slot and slots past `frames` are not touched
 * (poisoned outputs stay NaN), the statistics count the frames detected, and the gains
 * sit at each slot's subcarriers. */
TEST(CudaDetector, FramesOfAWindowInOneLaunchMatchEachOnItsOwn)
{
    SKIP_WITHOUT_GPU();
    constexpr std::size_t kSlots = 4, kFrames = 3;
    for (auto mode :
         { DetectorMode::chol, DetectorMode::zf, DetectorMode::cg, DetectorMode::cr }) {
        const Case c{ 16, 8, 24, 14, Modulation::qam16, mode, 3, 12.0, 0.0 };
        const std::string what = describe(c);
        const Dims d = config_of(c, Backend::cuda).dims();
        const std::size_t nsc = c.nsc, q = 4, row = kSlots * nsc;
        std::vector<Frame> f;
        for (std::uint64_t seed = 1; seed <= kFrames; ++seed)
            f.push_back(frame_of(c, seed));
        damage(f[2], d, c.nsym, true);
        const float n0[kFrames] = { f[0].n0,
                                    std::numeric_limits<float>::quiet_NaN(),
                                    f[2].n0 * 3.0f };
        // Each picked frame on its own detector (the reference).
        std::vector<Outputs> want(kFrames);
        std::vector<DetectorStats> want_stats(kFrames);
        std::vector<std::vector<std::uint8_t>> want_status(kFrames);
        for (std::size_t j : { std::size_t{ 0 }, std::size_t{ 2 } }) {
            cuda::CudaDetector own(config_of(c, Backend::cuda));
            Outputs like;
            like.llr.resize(c.nsym * d.llr_items());
            like.x_hat.resize(c.nsym * d.symbol_items());
            DeviceFrame df(f[j], like);
            own.set_channel_device(df.h.get(), n0[j]);
            want[j] = df.detect(own, c.nsym);
            want_stats[j] = own.stats();
            cuda::CudaDetector::DeviceGains g;
            ASSERT_TRUE(own.device_gains(g)) << what;
            want_status[j].resize(nsc);
            cuda::copy_to_host(want_status[j].data(), g.status, nsc);
        }
        // The window: H slot after slot, y in rows of all slots.
        DetectorConfig wc = config_of(c, Backend::cuda);
        wc.num_subcarriers = row;
        cuda::CudaDetector window(wc);
        std::vector<cf32> h(kSlots * d.channel_items(), cf32(0.0f, 0.0f)),
            y(c.nsym * row * c.b, cf32(1.0f, 0.0f));
        for (std::size_t j = 0; j < kFrames; ++j) {
            std::copy(f[j].h.begin(), f[j].h.end(), h.begin() + j * d.channel_items());
            for (std::size_t n = 0; n < c.nsym; ++n)
                std::copy(f[j].y.begin() + n * nsc * c.b,
                          f[j].y.begin() + (n + 1) * nsc * c.b,
                          y.begin() + (n * row + j * nsc) * c.b);
        }
        cuda::Buffer<cf32> dh(h.size(), false), dy(y.size(), false),
            dx(c.nsym * row * c.u, false);
        cuda::Buffer<float> dllr(c.nsym * row * c.u * q, false);
        cuda::copy_to_device(dh.get(), h.data(), dh.bytes());
        cuda::copy_to_device(dy.get(), y.data(), dy.bytes());
        std::vector<float> llr(dllr.size(), NAN);
        std::vector<cf32> x(dx.size(), cf32(NAN, NAN));
        cuda::copy_to_device(dllr.get(), llr.data(), dllr.bytes());
        cuda::copy_to_device(dx.get(), x.data(), dx.bytes());
        window.detect_frames_device(
            dh.get(), n0, nsc, kFrames, dy.get(), c.nsym, dllr.get(), dx.get());
        window.synchronize();
        cuda::copy_to_host(llr.data(), dllr.get(), dllr.bytes());
        cuda::copy_to_host(x.data(), dx.get(), dx.bytes());
        const bool exact = mode == DetectorMode::chol || mode == DetectorMode::zf;
        for (std::size_t j = 0; j < kSlots; ++j) {
            std::vector<float> got;
            std::vector<cf32> got_x;
            for (std::size_t n = 0; n < c.nsym; ++n) {
                got.insert(got.end(),
                           llr.begin() + (n * row + j * nsc) * c.u * q,
                           llr.begin() + (n * row + (j + 1) * nsc) * c.u * q);
                got_x.insert(got_x.end(),
                             x.begin() + (n * row + j * nsc) * c.u,
                             x.begin() + (n * row + (j + 1) * nsc) * c.u);
            }
            const std::string slot = what + " slot " + std::to_string(j);
            if (j == 1 || j == 3) { // skipped, or past the frames: untouched
                EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](float v) {
                    return std::isnan(v);
                })) << slot;
                EXPECT_TRUE(std::all_of(got_x.begin(), got_x.end(), [](cf32 v) {
                    return std::isnan(v.real());
                })) << slot;
                continue;
            }
            if (exact) {
                EXPECT_EQ(0, std::memcmp(got.data(), want[j].llr.data(), got.size() * 4))
                    << slot;
                EXPECT_EQ(
                    0, std::memcmp(got_x.data(), want[j].x_hat.data(), got_x.size() * 8))
                    << slot;
            }
            expect_llrs_close(got, want[j].llr, slot);
        }
        const DetectorStats st = window.stats();
        EXPECT_EQ(st.channels, 2u) << what;
        EXPECT_EQ(st.symbols, 2 * c.nsym) << what;
        EXPECT_EQ(st.bad_channel_subcarriers,
                  want_stats[0].bad_channel_subcarriers +
                      want_stats[2].bad_channel_subcarriers)
            << what;
        EXPECT_GT(want_stats[2].bad_channel_subcarriers, 0u) << what;
        EXPECT_EQ(st.bad_sample_vectors,
                  want_stats[0].bad_sample_vectors + want_stats[2].bad_sample_vectors)
            << what;
        EXPECT_EQ(st.unusable_user_channels,
                  want_stats[0].unusable_user_channels +
                      want_stats[2].unusable_user_channels)
            << what;
        cuda::CudaDetector::DeviceGains g;
        ASSERT_TRUE(window.device_gains(g)) << what;
        // The detected slots' status only: the others were never written.
        for (std::size_t j : { std::size_t{ 0 }, std::size_t{ 2 } }) {
            std::vector<std::uint8_t> status(nsc);
            cuda::copy_to_host(status.data(), g.status + j * nsc, nsc);
            EXPECT_EQ(status, want_status[j]) << what << " status of slot " << j;
        }
        // Misuse: a detect call on the frames' channels, bad N0, too many frames or
        // symbols.
        EXPECT_THROW(window.detect_device(dy.get(), c.nsym, dllr.get()),
                     std::logic_error);
        const float bad[kFrames] = { 1.0f, -1.0f, 1.0f };
        EXPECT_THROW(window.detect_frames_device(
                         dh.get(), bad, nsc, kFrames, dy.get(), c.nsym, dllr.get()),
                     std::invalid_argument);
        EXPECT_THROW(window.detect_frames_device(
                         dh.get(), n0, nsc, kSlots + 1, dy.get(), c.nsym, dllr.get()),
                     std::invalid_argument);
        EXPECT_THROW(window.detect_frames_device(
                         dh.get(), n0, nsc, kFrames, dy.get(), 65, dllr.get()),
                     std::invalid_argument);
    }
}

TEST(CudaDetector, FewSymbolsPerChannelIterateFromHAloneLikeTheCpu)
{
    // cg/cr through the device API: 1 symbol x 2 (3 + 1) products < U = 32 does not pay
    // for forming A, so detect_device() runs the matrix-free kernel. Same LLRs as the CPU
    // (which forms A), erasures included; enough symbols on the channel then form A.
    SKIP_WITHOUT_GPU();
    for (auto mode : { DetectorMode::cg, DetectorMode::cr })
        for (auto mod : { Modulation::qpsk, Modulation::qam64 }) {
            const Case c{ 32, 32, 96, 1, mod, mode, 3, 20.0, 0.0 };
            Frame f = frame_of(c, 77);
            damage(f, config_of(c, Backend::cpu).dims(), c.nsym, false);
            auto cpu = make_detector(config_of(c, Backend::cpu));
            const Outputs r = run(*cpu, f, c.nsym);

            cuda::CudaDetector gpu(config_of(c, Backend::cuda));
            DeviceFrame dev(f, r);
            const std::string what = describe(c);
            gpu.set_channel_device(dev.h.get(), f.n0);
            EXPECT_FALSE(gpu.matrix_formed()) << what;
            const Outputs g = dev.detect(gpu, 1);
            EXPECT_FALSE(gpu.matrix_formed()) << what;
            expect_close(g, r, what + " from H alone");
            for (std::size_t i = 0; i < g.llr.size(); ++i)
                ASSERT_EQ(g.llr[i] == 0.0f, r.llr[i] == 0.0f) << what << ": LLR " << i;
            // 4 symbols on the channel: 4 x 8 >= 32, A pays now and is formed.
            Outputs formed;
            for (int call = 0; call < 3; ++call)
                formed = dev.detect(gpu, 1);
            EXPECT_TRUE(gpu.matrix_formed()) << what;
            expect_close(formed, r, what + " with A");
        }
}

namespace {

//! Through the device API, the first detect call on the channel of frame c (bad
//! subcarrier 2, user 3 dead on subcarrier 6, no user on 8, a bad y on 9) and a second
//! call on the channel it prepared, against the CPU.
void expect_first_call_prepares_the_channel(const Case& c)
{
    Frame f = frame_of(c, 91);
    damage(f, config_of(c, Backend::cpu).dims(), c.nsym, true);
    auto cpu = make_detector(config_of(c, Backend::cpu));
    const Outputs r = run(*cpu, f, c.nsym);
    cuda::CudaDetector gpu(config_of(c, Backend::cuda));
    DeviceFrame dev(f, r);
    const std::string what = describe(c);
    gpu.set_channel_device(dev.h.get(), f.n0);
    EXPECT_FALSE(gpu.matrix_formed()) << what;
    const Outputs fused = dev.detect(gpu, c.nsym);
    EXPECT_TRUE(gpu.matrix_formed()) << what;
    const Outputs prepared = dev.detect(gpu, c.nsym);
    for (const Outputs* g : { &fused, &prepared }) {
        const std::string which = what + (g == &fused ? " fused" : " prepared");
        for (std::size_t i = 0; i < g->llr.size(); ++i)
            ASSERT_EQ(g->llr[i] == 0.0f, r.llr[i] == 0.0f) << which << ": LLR " << i;
        expect_close(*g, r, which);
    }
}

} // namespace

TEST(CudaDetector, FirstDeviceCallPreparesTheChannel)
{
    // Through the device API the first detect call on a channel prepares it: calls of
    // 1..64 symbols inside the equalize kernel (fused, every mode), else
    // with the prepare kernel; later calls use what it left. Against the CPU for every
    // mode, with bad subcarriers, a dead user, a bad y and U not a power of two, for the
    // first call and the second (prepared channel).
    SKIP_WITHOUT_GPU();
    for (auto mode :
         { DetectorMode::chol, DetectorMode::cg, DetectorMode::cr, DetectorMode::zf })
        for (const Case& c :
             { Case{ 128, 16, 64, 14, Modulation::qam16, mode, 3, 12.0, 0.0 },
               Case{ 64, 32, 40, 33, Modulation::qam64, mode, 3, 18.0, 0.0 },
               Case{ 20, 6, 24, 5, Modulation::qpsk, mode, 2, 10.0, 0.0 },
               Case{ 256, 8, 16, 64, Modulation::qam256, mode, 3, 25.0, 0.0 } })
            expect_first_call_prepares_the_channel(c);
    // Calls of 2 symbols (li2015's 256x32 N2), chol/zf (cg/cr iterate from H alone
    // there: FewSymbolsPerChannelIterateFromHAloneLikeTheCpu).
    for (auto mode : { DetectorMode::chol, DetectorMode::zf })
        expect_first_call_prepares_the_channel(
            Case{ 256, 32, 16, 2, Modulation::qam16, mode, 4, 15.0, 0.0 });
}

TEST(CudaDetector, FirstDeviceCallPreparesTheChannelOnACompactGrid)
{
    // Grids of 4 or more blocks per SM take the compact kernels, whose chol/zf tiles of
    // 16 symbols or fewer stage 16 antennas at a time (the NR slot's shapes; for 32
    // users the prepared calls' 8-symbol tiles), cg/cr 32: whole and partial chunks of
    // antennas, odd U and B (8-byte copies), every mode. Fused chol/zf blocks of one
    // warp invert A by shuffles (invert_warp): 16 users (13 and 16), 8 (6 and 8) and 4.
    // Tiles of 32 symbols or more stage 16 antennas at a time, double-buffered (33x6
    // with 32 symbols; the 1024 x 64 target's 128x16 with 64; 250x16 ending on a
    // partial chunk of 10 antennas; 70x13, 13 users in tiles of 16, H copied 8 bytes at
    // a time).
    SKIP_WITHOUT_GPU();
    const std::size_t nsc = compact_grid_subcarriers();
    for (auto mode :
         { DetectorMode::chol, DetectorMode::cg, DetectorMode::cr, DetectorMode::zf })
        for (const Case& c :
             { Case{ 64, 16, nsc, 14, Modulation::qam16, mode, 3, 12.0, 0.0 },
               Case{ 61, 13, nsc, 9, Modulation::qam64, mode, 3, 18.0, 0.0 },
               Case{ 64, 32, nsc, 8, Modulation::qam16, mode, 3, 15.0, 0.0 },
               Case{ 40, 8, 2 * nsc, 4, Modulation::qpsk, mode, 2, 8.0, 0.0 },
               Case{ 33, 6, nsc, 32, Modulation::qam64, mode, 3, 18.0, 0.0 },
               Case{ 24, 4, nsc, 20, Modulation::qam16, mode, 3, 12.0, 0.0 },
               Case{ 128, 16, nsc, 64, Modulation::qam16, mode, 3, 12.0, 0.0 },
               Case{ 250, 16, nsc, 40, Modulation::qam16, mode, 3, 10.0, 0.0 },
               Case{ 70, 13, nsc, 36, Modulation::qam64, mode, 3, 18.0, 0.0 } })
            expect_first_call_prepares_the_channel(c);
}

TEST(CudaDetector, SteadyStateAllocatesNoDeviceMemory)
{
    // Every buffer is acquired at construction: frames through the host and the device
    // interfaces, every path of the kernels (prepare, fused, matrix-free, tiled, direct)
    // and new channels allocate no device or pinned memory. (Counted by the library's
    // allocation functions, through which all of its allocations go: the device-wide
    // cudaMemGetInfo also sees the other tests that ctest runs at the same time.)
    SKIP_WITHOUT_GPU();
    for (auto mode : { DetectorMode::chol, DetectorMode::cr }) {
        const Case c{ 32, 32, 64, 40, Modulation::qam16, mode, 3, 12.0, 0.0 };
        const Frame f = frame_of(c, 61);
        cuda::EngineOptions opt;
        opt.chunk_bytes = 16 * c.b * c.nsc * sizeof(cf32); // several chunks per call
        cuda::CudaDetector gpu(config_of(c, Backend::cuda), opt);
        cuda::Buffer<cf32> dh(f.h.size(), false), dy(f.y.size(), false);
        cuda::Buffer<float> dllr(c.nsym * gpu.config().dims().llr_items(), false);
        cuda::copy_to_device(dh.get(), f.h.data(), dh.bytes());
        cuda::copy_to_device(dy.get(), f.y.data(), dy.bytes());
        std::vector<float> llr(dllr.size());
        auto frames = [&]() {
            gpu.set_channel(f.h.data(), f.n0);
            gpu.detect(f.y.data(), c.nsym, llr.data());
            for (std::size_t n :
                 { std::size_t{ 1 }, std::size_t{ 2 }, std::size_t{ 14 }, c.nsym }) {
                gpu.set_channel_device(dh.get(), f.n0);
                gpu.detect_device(dy.get(), n, dllr.get());
                gpu.detect_device(dy.get(), n, dllr.get());
            }
            gpu.synchronize();
        };
        frames(); // every path once
        const std::uint64_t allocations = cuda::allocation_count();
        for (int i = 0; i < 5; ++i)
            frames();
        EXPECT_EQ(cuda::allocation_count(), allocations) << to_string(mode);
    }
}

TEST(CudaDetector, FactoryPicksTheGpuForAutoAndCuda)
{
    SKIP_WITHOUT_GPU();
    DetectorConfig c;
    c.backend = Backend::automatic;
    EXPECT_EQ(make_detector(c)->name(), "cuda-chol");
    c.backend = Backend::cuda;
    c.mode = DetectorMode::cr;
    EXPECT_EQ(make_detector(c)->name(), "cuda-cr");
    c.num_antennas = 300; // beyond the kernels' limit: auto falls back, cuda refuses
    c.num_users = 8;
    EXPECT_THROW(make_detector(c), std::runtime_error);
    // ... and leaves no CUDA error behind for this thread's next launch check
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    c.devices = { 1000 }; // no such GPU: refused after the CUDA runtime was asked
    c.num_antennas = 64;
    EXPECT_THROW(make_detector(c), std::runtime_error);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    c.devices.clear();
    c.num_antennas = 300;
    c.backend = Backend::automatic;
    std::string reason;
    EXPECT_EQ(make_detector(c, &reason)->name(), "cpu-cr");
    EXPECT_NE(reason.find("B=256"), std::string::npos) << reason;
}

TEST(CudaDetector, HugeFiniteSamplesAndTinyN0NeverGiveInfOrNanLlrsLikeTheCpu)
{
    // The GPU mirror of Detector.HugeFiniteSamplesAndTinyN0NeverGiveInfOrNanLlrs: every
    // mode with a kernel, LLRs finite, the subcarriers without a huge sample as the CPU's.
    SKIP_WITHOUT_GPU();
    const std::size_t sym_a = 0, sc_a = 3, sym_b = 1, sc_b = 5;
    for (const std::string& name : detector_mode_names()) {
        const Case c{ 4, 4, 24, 3, Modulation::qpsk, parse_detector_mode(name), 3, 15.0, 0.0 };
        std::unique_ptr<Detector> gpu;
        try {
            gpu = make_detector(config_of(c, Backend::cuda));
        } catch (const std::runtime_error& e) {
            if (std::string(e.what()).find("no GPU kernel") == std::string::npos)
                throw;
            continue; // no kernel for this mode (ml): the CPU runs it
        }
        auto cpu = make_detector(config_of(c, Backend::cpu));
        for (float n0 : { 0.1f, 1e-30f, 0.0f }) {
            Frame f = frame_of(c, 3);
            f.n0 = n0;
            const Dims d = gpu->config().dims();
            f.y[sym_a * d.rx_items() + d.rx_index(sc_a, 1)] =
                cf32(std::numeric_limits<float>::max(), 0.0f);
            f.y[sym_b * d.rx_items() + d.rx_index(sc_b, 0)] = cf32(1e18f, -1e18f);
            const Outputs g = run(*gpu, f, c.nsym), h = run(*cpu, f, c.nsym);
            const std::string what = name + " N0 " + std::to_string(n0);
            for (std::size_t sym = 0; sym < c.nsym; ++sym)
                for (std::size_t sc = 0; sc < c.nsc; ++sc)
                    for (std::size_t i = 0; i < d.num_users * d.bits_per_symbol; ++i) {
                        const std::size_t k = sym * d.llr_items() + d.llr_index(sc, 0, 0) + i;
                        ASSERT_TRUE(std::isfinite(g.llr[k])) << what << " at " << k;
                        // (with N0 near 0 the LLRs scale by 1/N0: rounding differences
                        // near a decision boundary are then not comparable)
                        if (n0 == 0.1f && !(sym == sym_a && sc == sc_a) &&
                            !(sym == sym_b && sc == sc_b)) {
                            ASSERT_LE(std::abs(g.llr[k] - h.llr[k]),
                                      2e-3 * std::max(1.0f, std::abs(h.llr[k])))
                                << what << " at " << k;
                        }
                    }
        }
    }
}

TEST(CudaDetector, SeveralDetectorsAliveAtOnce)
{
    // A detector built later (smaller shared memory) must not break an earlier one.
    SKIP_WITHOUT_GPU();
    const Case big{ 128, 16, 24, 20, Modulation::qam16, DetectorMode::cg, 3, 10.0, 0.0 };
    const Case small{
        128, 16, 24, 20, Modulation::qam16, DetectorMode::chol, 3, 10.0, 0.0
    };
    const Frame f = frame_of(big, 21);
    cuda::CudaDetector first(config_of(big, Backend::cuda));
    cuda::CudaDetector second(config_of(small, Backend::cuda));
    auto cpu = make_detector(config_of(big, Backend::cpu));
    expect_close(
        run(first, f, big.nsym), run(*cpu, f, big.nsym), "cg after a chol detector");
    auto cpu2 = make_detector(config_of(small, Backend::cpu));
    expect_close(run(second, f, small.nsym), run(*cpu2, f, small.nsym), "chol");
}

TEST(CudaDetector, SignClipAndBadSamplesOnBadSubcarriersMatchTheCpu)
{
    SKIP_WITHOUT_GPU();
    Case c{ 16, 4, 10, 3, Modulation::qam64, DetectorMode::chol, 3, 25.0, 0.0 };
    Frame f = frame_of(c, 33);
    const Dims d = config_of(c, Backend::cpu).dims();
    f.h[d.channel_index(3, 0, 0)] = cf32(NAN, 0.0f); // subcarrier 3 erased...
    f.y[2 * d.rx_items() + d.rx_index(3, 1)] =
        cf32(INFINITY, 0.0f); // ...and its y bad too
    auto cfg_gpu = config_of(c, Backend::cuda), cfg_cpu = config_of(c, Backend::cpu);
    for (auto* cfg : { &cfg_gpu, &cfg_cpu }) {
        cfg->llr_sign = LlrSign::positive_means_zero;
        cfg->llr_clip = 4.0f;
    }
    cuda::CudaDetector gpu(cfg_gpu);
    auto cpu = make_detector(cfg_cpu);
    const Outputs g = run(gpu, f, c.nsym), r = run(*cpu, f, c.nsym);
    expect_close(g, r, "sign and clip");
    float largest = 0;
    for (float l : g.llr)
        largest = std::max(largest, std::abs(l));
    EXPECT_EQ(largest, 4.0f);
    EXPECT_EQ(g.stats.bad_sample_vectors, r.stats.bad_sample_vectors);
    EXPECT_EQ(g.stats.bad_sample_vectors, 1u);
}

TEST(CudaDetector, DeviceChannelThenHostDetectAreOrdered)
{
    // set_channel_device on one stream, then detect() on the engine's other streams: the
    // equalize launches must wait for the prepare kernel.
    SKIP_WITHOUT_GPU();
    const Case c{ 256, 32, 64, 40, Modulation::qam16, DetectorMode::chol, 3, 10.0, 0.0 };
    const Frame f = frame_of(c, 41);
    const Dims d = config_of(c, Backend::cpu).dims();
    cuda::EngineOptions opt;
    opt.streams = 3;
    opt.chunk_bytes = 2 * d.rx_items() * sizeof(cf32);
    cuda::CudaDetector gpu(config_of(c, Backend::cuda), opt);
    const Outputs host = run(gpu, f, c.nsym);
    Frame other = frame_of(c, 42);
    gpu.set_channel(other.h.data(), other.n0); // a different channel in force before
    cuda::Buffer<cf32> dh(f.h.size(), false);
    cuda::copy_to_device(dh.get(), f.h.data(), dh.bytes());
    gpu.set_channel_device(dh.get(), f.n0);
    std::vector<float> llr(host.llr.size(), NAN);
    gpu.detect(f.y.data(), c.nsym, llr.data());
    // The first chunk prepares the channel (chol: the prepare kernel on its stream), the
    // others wait for it; the chunks' tile shapes differ from the one-call run: equal to
    // float rounding.
    expect_llrs_close(llr, host.llr, "device channel, host detect");
}

TEST(CudaDetector, SetChannelReturnsOnceHIsReadAndCountsItsStatusLater)
{
    // set_channel() queues the channel's preparation and returns once H is read: the
    // caller may overwrite its H at once (pageable, staged; or pinned, read by DMA), a
    // second channel set before any detect call is the one used, and the statistics
    // count the channel's bad subcarriers whether read before detect() or after it.
    SKIP_WITHOUT_GPU();
    const Case c{ 64, 8, 96, 6, Modulation::qam16, DetectorMode::chol, 3, 15.0, 0.0 };
    Frame f = frame_of(c, 43);
    const Dims d = config_of(c, Backend::cpu).dims();
    f.h[d.channel_index(5, 3, 2)] = cf32(NAN, 0.0f); // bad subcarrier 5
    const Frame other = frame_of(c, 44);
    auto cpu = make_detector(config_of(c, Backend::cpu));
    const Outputs want = run(*cpu, f, c.nsym);
    ASSERT_EQ(want.stats.bad_channel_subcarriers, 1u);
    cuda::Buffer<cf32> pinned_h(f.h.size(), true);
    std::vector<cf32> pageable_h(f.h.size());
    for (bool pinned : { false, true })
        for (bool stats_first : { false, true }) {
            const std::string what = std::string(pinned ? "pinned" : "pageable") +
                                     " H, stats read " +
                                     (stats_first ? "before" : "after") + " detect";
            cf32* h = pinned ? pinned_h.get() : pageable_h.data();
            cuda::CudaDetector gpu(config_of(c, Backend::cuda));
            std::copy(other.h.begin(), other.h.end(), h);
            gpu.set_channel(h, other.n0);
            std::copy(f.h.begin(), f.h.end(), h);
            gpu.set_channel(h, f.n0);
            std::fill(h, h + f.h.size(), cf32(NAN, NAN)); // the caller reuses its buffer
            DetectorStats s;
            if (stats_first)
                s = gpu.stats();
            Outputs g;
            g.llr.assign(want.llr.size(), NAN); // poisoned
            g.x_hat.assign(want.x_hat.size(), cf32(NAN, NAN));
            gpu.detect(f.y.data(), c.nsym, g.llr.data(), g.x_hat.data());
            if (!stats_first)
                s = gpu.stats();
            expect_close(g, want, what);
            EXPECT_EQ(s.channels, 2u) << what;
            EXPECT_EQ(s.bad_channel_subcarriers, 1u) << what;
            EXPECT_EQ(s.unusable_user_channels, want.stats.unusable_user_channels)
                << what;
        }
}

TEST(CudaDetector, CallerMemoryRegisteredAgainAtTheSameAddressIsNotReplayedStale)
{
    // GNU Radio frees a flowgraph's buffers and the next flowgraph's mmap often gets the
    // same addresses; the block page-locks them again (pin_host_memory). Graphs captured
    // with copies from and to the old registration must not be replayed (they faulted
    // the GPU): every (un)registration changes the graphs' keys.
    SKIP_WITHOUT_GPU();
    const Case c{ 32, 4, 16, 12, Modulation::qam16, DetectorMode::chol, 3, 15.0, 0.0 };
    const Dims d = config_of(c, Backend::cpu).dims();
    cuda::EngineOptions opt;
    opt.streams = 2;
    opt.chunk_bytes = 4 * d.rx_items() * sizeof(cf32);
    cuda::CudaDetector gpu(config_of(c, Backend::cuda), opt);
    const Frame f = frame_of(c, 91);
    std::vector<float> want(c.nsym * d.llr_items());
    gpu.set_channel(f.h.data(), f.n0);
    gpu.detect(f.y.data(), c.nsym, want.data()); // staged: the reference
    const std::size_t y_bytes = f.y.size() * sizeof(cf32);
    const std::size_t llr_bytes = want.size() * sizeof(float);
    for (int round = 0; round < 3; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        std::vector<cf32> y(f.y);
        std::vector<float> llr(want.size(), NAN);
        std::string why;
        ASSERT_TRUE(pin_host_memory(y.data(), y_bytes, &why)) << why;
        ASSERT_TRUE(pin_host_memory(llr.data(), llr_bytes, &why)) << why;
        for (int call = 0; call < 3; ++call) { // first sight, capture, replay
            std::fill(llr.begin(), llr.end(), NAN);
            gpu.detect(y.data(), c.nsym, llr.data());
            ASSERT_EQ(std::memcmp(llr.data(), want.data(), llr_bytes), 0)
                << "call " << call << ": not the staged LLRs";
        }
        unpin_host_memory(y.data());
        unpin_host_memory(llr.data());
    }
}

TEST(CudaDetector, SphereDecodersOnLoadedChannelsGiveHonestBoundedLlrsLikeTheCpu)
{
    // Issue 25: on a channel it had to load, sfsd floors N0 at the loading's level and
    // clips its LLRs at mmse::kLoadedLlrClip, on the GPU as on the CPU. The grouped kernel
    // (4x4) and the thread-per-vector kernel (8x8); the frame's N0 and N0 = 0. Near-ties
    // between the colliding users may break differently in float, so the GPU is held to
    // the CPU test's claims (Detector.SphereDecodersOnLoadedChannelsGiveHonestBoundedLlrs)
    // rather than to the CPU's LLRs.
    SKIP_WITHOUT_GPU();
    struct Loaded {
        std::size_t size;
        float n0; // < 0: the frame's
        float delta;
    };
    for (const Loaded l : { Loaded{ 4, -1.0f, 1e-4f }, Loaded{ 4, 0.0f, 1e-4f },
                            Loaded{ 8, -1.0f, 1e-3f }, Loaded{ 8, 0.0f, 1e-3f } }) {
        const Case c{ l.size, l.size, 64, 14, Modulation::qam16, DetectorMode::sfsd, 1, 30.0,
                      0.0 };
        Frame f = frame_with_colliding_users(c, l.delta, 5);
        if (l.n0 >= 0.0f)
            f.n0 = l.n0;
        const std::string what = describe(c) + " N0 " + std::to_string(f.n0);
        const Dims d = config_of(c, Backend::cpu).dims();
        auto cpu = make_detector(config_of(c, Backend::cpu));
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const Outputs g = run(gpu, f, c.nsym), r = run(*cpu, f, c.nsym);
        EXPECT_EQ(g.stats.regularized_subcarriers, r.stats.regularized_subcarriers) << what;
        EXPECT_EQ(g.stats.regularized_subcarriers, c.nsc) << what;
        const std::size_t q = d.bits_per_symbol;
        const float levels[] = { 1.0f, 8.0f };
        for (const Outputs* o : { &g, &r }) {
            const char* who = o == &g ? " (GPU)" : " (CPU)";
            std::size_t above[2] = { 0, 0 }, wrong[2] = { 0, 0 }, all_wrong = 0, all = 0;
            float largest = 0.0f;
            for (std::size_t t = 0; t < c.nsym; ++t)
                for (std::size_t sc = 0; sc < c.nsc; ++sc)
                    for (std::size_t u = 0; u < 2; ++u)
                        for (std::size_t j = 0; j < q; ++j) {
                            const float v = o->llr[t * d.llr_items() + d.llr_index(sc, u, j)];
                            const bool bit = f.bits[((t * c.nsc + sc) * c.u + u) * q + j] != 0;
                            ASSERT_TRUE(std::isfinite(v)) << what << who;
                            largest = std::max(largest, std::abs(v));
                            ++all;
                            all_wrong += (v > 0.0f) != bit ? 1 : 0;
                            for (int k = 0; k < 2; ++k)
                                if (std::abs(v) > levels[k]) {
                                    ++above[k];
                                    wrong[k] += (v > 0.0f) != bit ? 1 : 0;
                                }
                        }
            const double rate = double(all_wrong) / all,
                         rate1 = above[0] ? double(wrong[0]) / above[0] : 0.0,
                         rate8 = above[1] ? double(wrong[1]) / above[1] : 0.0;
            std::cout << what << who << ": wrong signs " << rate << ", above |LLR| 1 " << rate1
                      << ", above 8 " << rate8 << "; largest " << largest << "\n";
            EXPECT_GT(rate, 0.2) << what << who << ": the users are not hard to tell apart";
            EXPECT_LE(largest, mmse::kLoadedLlrClip) << what << who;
            EXPECT_LT(rate8, rate) << what << who;
            if (l.n0 < 0.0f) {
                EXPECT_LE(rate1, 0.01) << what << who;
            }
        }
    }
}

TEST(CudaDetector, SphereDecodersMatchTheCpu)
{
    // fsd and sfsd (lib/cuda/sphere/fsd.cu) against CpuSphereDetector on the same frames:
    // every output written (poisoned), the same hard decisions and points, LLRs within
    // float rounding, the same counters; also through the device API. The grouped kernel
    // takes 2-4 users of QPSK/16-QAM/64-QAM (every roger2012 table configuration is 4x4);
    // 8 users, BPSK, two fully expanded levels of 16-QAM and long lists take the
    // thread-per-vector kernel.
    SKIP_WITHOUT_GPU();
    struct SphereCase {
        Case c;
        std::size_t full_levels, list_paths; // 0: the defaults
    };
    const SphereCase cases[] = {
        { { 4, 4, 32, 6, Modulation::qpsk, DetectorMode::fsd, 1, 12.0, 0.0 }, 0, 0 },
        { { 4, 4, 32, 6, Modulation::qam16, DetectorMode::fsd, 1, 18.0, 0.0 }, 0, 0 },
        { { 4, 4, 16, 4, Modulation::qam64, DetectorMode::fsd, 1, 24.0, 0.0 }, 0, 0 },
        { { 4, 4, 32, 6, Modulation::qpsk, DetectorMode::sfsd, 1, 10.0, 0.0 }, 0, 0 },
        { { 4, 4, 32, 6, Modulation::qam16, DetectorMode::sfsd, 1, 18.0, 0.0 }, 0, 0 },
        { { 4, 4, 16, 4, Modulation::qam64, DetectorMode::sfsd, 1, 24.0, 0.0 }, 0, 0 },
        { { 4, 4, 16, 4, Modulation::qam64, DetectorMode::sfsd, 1, 24.0, 0.0 }, 0, 16 },
        { { 4, 4, 16, 4, Modulation::qpsk, DetectorMode::sfsd, 1, 8.0, 0.0 }, 4, 0 },
        { { 4, 2, 32, 6, Modulation::qam64, DetectorMode::sfsd, 1, 22.0, 0.0 }, 0, 0 },
        { { 2, 2, 32, 6, Modulation::qam16, DetectorMode::sfsd, 1, 18.0, 0.0 }, 0, 1 },
        { { 6, 3, 32, 6, Modulation::qam16, DetectorMode::sfsd, 1, 15.0, 0.5 }, 0, 0 },
        { { 4, 4, 16, 4, Modulation::qam16, DetectorMode::fsd, 1, 18.0, 0.0 }, 2, 0 },
        { { 4, 4, 16, 4, Modulation::qam16, DetectorMode::sfsd, 1, 18.0, 0.0 }, 2, 0 },
        { { 4, 4, 16, 4, Modulation::qpsk, DetectorMode::sfsd, 1, 10.0, 0.0 }, 2, 16 },
        { { 4, 4, 16, 4, Modulation::bpsk, DetectorMode::sfsd, 1, 8.0, 0.0 }, 0, 0 },
        { { 8, 8, 16, 4, Modulation::qpsk, DetectorMode::sfsd, 1, 12.0, 0.0 }, 0, 0 },
    };
    for (const SphereCase& sc : cases) {
        const Case& c = sc.c;
        const std::string what = describe(c) + " T=" + std::to_string(sc.full_levels) +
                                 " list=" + std::to_string(sc.list_paths);
        SCOPED_TRACE(what);
        auto config = [&](Backend backend) {
            DetectorConfig cfg = config_of(c, backend);
            cfg.full_levels = sc.full_levels;
            cfg.list_paths = sc.list_paths;
            return cfg;
        };
        Frame f = frame_of(c, 31);
        const Dims d = config(Backend::cpu).dims();
        auto cpu = make_detector(config(Backend::cpu));
        cuda::CudaDetector gpu(config(Backend::cuda));
        const Outputs want = run(*cpu, f, c.nsym), got = run(gpu, f, c.nsym);
        expect_close(got, want, what);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < want.llr.size(); ++i)
            differ += (got.llr[i] > 0) != (want.llr[i] > 0);
        EXPECT_EQ(differ, 0u) << what;
        EXPECT_EQ(got.stats.bad_channel_subcarriers, want.stats.bad_channel_subcarriers);
        EXPECT_EQ(got.stats.regularized_subcarriers, want.stats.regularized_subcarriers);

        // Bad inputs: a subcarrier's NaN, a user without a channel, one non-finite vector.
        f.h[d.channel_index(1, 0, 0)] = cf32(NAN, 0.0f);
        for (std::size_t b = 0; b < c.b; ++b)
            f.h[d.channel_index(2, b, c.u - 1)] = cf32(0.0f, 0.0f);
        f.y[1 * d.rx_items() + d.rx_index(3, 0)] = cf32(INFINITY, 0.0f);
        const Outputs bad_want = run(*cpu, f, c.nsym), bad_got = run(gpu, f, c.nsym);
        expect_close(bad_got, bad_want, what + " bad inputs");
        for (std::size_t i = 0; i < bad_want.llr.size(); ++i)
            if (bad_want.llr[i] == 0.0f) {
                EXPECT_EQ(bad_got.llr[i], 0.0f) << i;
            }
        const DetectorStats gs = bad_got.stats, cs = bad_want.stats;
        EXPECT_EQ(gs.bad_channel_subcarriers, cs.bad_channel_subcarriers);
        EXPECT_EQ(gs.unusable_user_channels, cs.unusable_user_channels);
        EXPECT_EQ(gs.bad_sample_vectors, cs.bad_sample_vectors);
        EXPECT_EQ(gs.regularized_subcarriers, cs.regularized_subcarriers);

        // The device API prepares on the first call and counts on the device.
        cuda::CudaDetector dev(config(Backend::cuda));
        DeviceFrame df(f, bad_want);
        dev.set_channel_device(df.h.get(), f.n0);
        const Outputs dg = df.detect(dev, c.nsym);
        expect_llrs_close(dg.llr, bad_want.llr, what + " device API");
        EXPECT_EQ(dev.stats().unusable_user_channels, 1u); // user U-1 on subcarrier 2
    }
}

TEST(CudaDetector, SphereDecodersOverlapTheChannelWithItsSymbolsBySubcarrierRange)
{
    // detect_with_channel from page-locked buffers (ranges of subcarriers, each with its
    // own H upload, preparation, search and download) against set_channel + detect: the
    // same kernels per subcarrier, so the same LLRs bit for bit, every one written, the
    // same counters, and the channel in force for a later detect(). 5000 subcarriers of 7
    // symbols are 3 ranges (2048, 2048, 904); with 1-symbol chunks, 7 ranges of 714 over
    // 3 streams. The bad inputs fall in the second and last ranges. 8x8 takes the
    // thread-per-vector kernel, the others the grouped one. Ranges are taken where the
    // LLRs outweigh H and y (16- and 64-QAM here).
    SKIP_WITHOUT_GPU();
    struct RangeCase {
        Case c;
        bool one_symbol_chunks;
    };
    const RangeCase cases[] = {
        { { 4, 4, 5000, 7, Modulation::qam16, DetectorMode::fsd, 1, 18.0, 0.0 }, false },
        { { 4, 4, 5000, 7, Modulation::qam64, DetectorMode::sfsd, 1, 24.0, 0.0 }, false },
        { { 4, 4, 5000, 7, Modulation::qam16, DetectorMode::sfsd, 1, 18.0, 0.0 }, true },
        { { 4, 2, 5000, 7, Modulation::qam64, DetectorMode::fsd, 1, 22.0, 0.3 }, true },
        { { 8, 8, 3000, 7, Modulation::qam64, DetectorMode::sfsd, 1, 24.0, 0.0 }, false },
        // upload-bound (QPSK: LLRs lighter than H and y): set_channel + detect inside
        { { 4, 4, 5000, 7, Modulation::qpsk, DetectorMode::fsd, 1, 10.0, 0.0 }, false },
    };
    for (const RangeCase& rc : cases) {
        const Case& c = rc.c;
        const std::string what =
            describe(c) + (rc.one_symbol_chunks ? " 1-symbol chunks" : "");
        SCOPED_TRACE(what);
        Frame f = frame_of(c, 41);
        const Dims d = config_of(c, Backend::cpu).dims();
        f.h[d.channel_index(2100, 1, 0)] = cf32(NAN, 0.0f);
        for (std::size_t b = 0; b < c.b; ++b)
            f.h[d.channel_index(c.nsc - 3, b, c.u - 1)] = cf32(0.0f, 0.0f);
        f.y[3 * d.rx_items() + d.rx_index(2500, 0)] = cf32(INFINITY, 0.0f);
        cuda::EngineOptions opt;
        if (rc.one_symbol_chunks)
            opt.chunk_bytes = d.rx_items() * sizeof(cf32);
        cuda::CudaDetector reference(config_of(c, Backend::cuda), opt);
        const Outputs want = run(reference, f, c.nsym);

        cuda::Buffer<cf32> h(f.h.size(), true), y(f.y.size(), true);
        cuda::Buffer<float> llr(want.llr.size(), true);
        std::copy(f.h.begin(), f.h.end(), h.get());
        std::copy(f.y.begin(), f.y.end(), y.get());
        cuda::CudaDetector gpu(config_of(c, Backend::cuda), opt);
        for (int call = 0; call < 2; ++call) { // the second reuses every buffer
            std::fill(llr.get(),
                      llr.get() + llr.size(),
                      std::numeric_limits<float>::quiet_NaN());
            gpu.detect_with_channel(h.get(), f.n0, y.get(), c.nsym, llr.get());
            EXPECT_TRUE(std::equal(want.llr.begin(),
                                   want.llr.end(),
                                   llr.get(),
                                   [](float a, float b) { return a == b; }))
                << "call " << call << ": not set_channel + detect's LLRs";
        }
        const DetectorStats gs = gpu.stats(), ws = want.stats;
        EXPECT_EQ(gs.channels, 2u);
        EXPECT_EQ(gs.symbols, 2 * c.nsym);
        EXPECT_EQ(gs.bad_channel_subcarriers, 2 * ws.bad_channel_subcarriers);
        EXPECT_EQ(gs.unusable_user_channels, 2 * ws.unusable_user_channels);
        EXPECT_EQ(gs.bad_sample_vectors, 2 * ws.bad_sample_vectors);
        EXPECT_EQ(gs.regularized_subcarriers, 2 * ws.regularized_subcarriers);
        EXPECT_GE(ws.bad_channel_subcarriers, 1u);
        EXPECT_EQ(ws.unusable_user_channels, 1u);
        EXPECT_EQ(ws.bad_sample_vectors, 1u);

        // The channel stays in force: detect() alone gives the same LLRs again.
        std::vector<float> again(want.llr.size(),
                                 std::numeric_limits<float>::quiet_NaN());
        gpu.detect(f.y.data(), c.nsym, again.data());
        EXPECT_EQ(again, want.llr) << "detect() after detect_with_channel";
        // Pageable buffers take set_channel + detect.
        std::vector<float> pageable(want.llr.size(),
                                    std::numeric_limits<float>::quiet_NaN());
        gpu.detect_with_channel(f.h.data(), f.n0, f.y.data(), c.nsym, pageable.data());
        EXPECT_EQ(pageable, want.llr) << "pageable buffers";
    }
}

TEST(CudaDetector, SphereDecodersDetectABatchOfFramesLikeFrameByFrame)
{
    // submit_frames from page-locked buffers (every frame's channel prepared side by
    // side, the symbols searched with a symbol -> frame map, in pieces over the streams)
    // against set_channel + detect per frame on the GPU: the same kernels per
    // subcarrier, so the same LLRs bit for bit, every one written, the same counters, and
    // the last frame's channel in force afterwards. Frames of 1 to 7 symbols, one that
    // continues the channel before it (not a new channel), bad inputs in three frames.
    // 8x8 takes the thread-per-vector kernel, the others the grouped one.
    SKIP_WITHOUT_GPU();
    const Case cases[] = {
        { 4, 4, 1200, 7, Modulation::qam16, DetectorMode::fsd, 1, 18.0, 0.0 },
        { 4, 4, 1200, 7, Modulation::qam64, DetectorMode::sfsd, 1, 24.0, 0.0 },
        { 4, 2, 600, 7, Modulation::qpsk, DetectorMode::fsd, 1, 10.0, 0.3 },
        { 8, 8, 300, 7, Modulation::qam16, DetectorMode::sfsd, 1, 20.0, 0.0 },
    };
    const std::size_t lengths[] = { 7, 7, 3, 4, 7, 1, 7, 7, 5, 7, 2 };
    const std::size_t frames_count = std::size(lengths);
    for (const Case& c : cases) {
        SCOPED_TRACE(describe(c));
        const Dims d = config_of(c, Backend::cpu).dims();
        std::vector<Frame> frames;
        std::vector<ChannelFrame> batch;
        std::size_t total = 0;
        for (std::size_t f = 0; f < frames_count; ++f) {
            Frame fr = frame_of(c, 300 + f);
            ChannelFrame cf;
            cf.n_symbols = lengths[f];
            cf.continues = f == 4; // the channel of frame 3, given again
            if (cf.continues) {
                fr.h = frames[3].h;
                fr.n0 = frames[3].n0;
            }
            frames.push_back(fr);
            total += lengths[f];
            batch.push_back(cf);
        }
        frames[1].h[d.channel_index(c.nsc / 2, 1, 0)] = cf32(NAN, 0.0f);
        for (std::size_t b = 0; b < c.b; ++b)
            frames[6].h[d.channel_index(c.nsc - 3, b, c.u - 1)] = cf32(0.0f, 0.0f);
        frames[8].y[2 * d.rx_items() + d.rx_index(c.nsc / 3, 0)] = cf32(INFINITY, 0.0f);
        cuda::Buffer<cf32> y(total * d.rx_items(), true);
        cuda::Buffer<float> llr(total * d.llr_items(), true);
        std::vector<float> want(total * d.llr_items(),
                                std::numeric_limits<float>::quiet_NaN());
        cuda::CudaDetector reference(config_of(c, Backend::cuda));
        for (std::size_t f = 0, t = 0; f < frames_count; ++f) {
            batch[f].h = frames[f].h.data();
            batch[f].n0 = frames[f].n0;
            std::copy_n(frames[f].y.begin(),
                        lengths[f] * d.rx_items(),
                        y.get() + t * d.rx_items());
            if (!batch[f].continues)
                reference.set_channel(frames[f].h.data(), frames[f].n0);
            reference.detect(
                y.get() + t * d.rx_items(), lengths[f], want.data() + t * d.llr_items());
            t += lengths[f];
        }
        const DetectorStats ws = reference.stats();
        EXPECT_EQ(ws.channels, frames_count - 1);
        EXPECT_GE(ws.bad_channel_subcarriers, 1u);
        EXPECT_EQ(ws.unusable_user_channels, 1u);
        EXPECT_EQ(ws.bad_sample_vectors, 1u);

        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        // A batch of the first 3 frames first: the second call grows every buffer.
        for (const std::size_t n : { std::size_t(3), frames_count }) {
            std::fill(llr.get(),
                      llr.get() + llr.size(),
                      std::numeric_limits<float>::quiet_NaN());
            std::size_t symbols = 0;
            for (std::size_t f = 0; f < n; ++f)
                symbols += lengths[f];
            EXPECT_TRUE(gpu.submit_frames(
                batch.data(), n, y.get(), llr.get(), LlrFormat::float32))
                << n << " frames: queued";
            gpu.complete();
            EXPECT_TRUE(std::equal(want.begin(),
                                   want.begin() + symbols * d.llr_items(),
                                   llr.get(),
                                   [](float a, float b) { return a == b; }))
                << n << " frames: not frame by frame's LLRs";
        }
        const DetectorStats gs = gpu.stats();
        EXPECT_EQ(gs.channels, 3u + ws.channels);
        EXPECT_EQ(gs.symbols, 17u + total);
        { // one batch alone counts exactly what frame by frame counted; 3 threads
          // gather the channels, in slices that end inside frames (4x4: 2 a piece)
            DetectorConfig three = config_of(c, Backend::cuda);
            three.num_threads = 3;
            cuda::CudaDetector once(three);
            std::fill(llr.get(),
                      llr.get() + llr.size(),
                      std::numeric_limits<float>::quiet_NaN());
            once.submit_frames(
                batch.data(), frames_count, y.get(), llr.get(), LlrFormat::float32);
            once.complete();
            const DetectorStats os = once.stats();
            EXPECT_TRUE(std::equal(want.begin(),
                                   want.end(),
                                   llr.get(),
                                   [](float a, float b) { return a == b; }))
                << "3 gathering threads: not frame by frame's LLRs";
            EXPECT_EQ(os.channels, ws.channels);
            EXPECT_EQ(os.symbols, ws.symbols);
            EXPECT_EQ(os.bad_channel_subcarriers, ws.bad_channel_subcarriers);
            EXPECT_EQ(os.unusable_user_channels, ws.unusable_user_channels);
            EXPECT_EQ(os.bad_sample_vectors, ws.bad_sample_vectors);
            EXPECT_EQ(os.regularized_subcarriers, ws.regularized_subcarriers);
        }

        // The last frame's channel stays in force: detect() alone gives its LLRs again.
        const std::size_t last = total - lengths[frames_count - 1];
        std::vector<float> again(lengths[frames_count - 1] * d.llr_items(),
                                 std::numeric_limits<float>::quiet_NaN());
        gpu.detect(
            y.get() + last * d.rx_items(), lengths[frames_count - 1], again.data());
        EXPECT_TRUE(
            std::equal(again.begin(), again.end(), want.begin() + last * d.llr_items()))
            << "detect() after submit_frames";
        // Pageable buffers take the calls per frame.
        std::vector<cf32> y_pageable(y.get(), y.get() + y.size());
        std::vector<float> pageable(want.size(), std::numeric_limits<float>::quiet_NaN());
        gpu.submit_frames(batch.data(),
                          frames_count,
                          y_pageable.data(),
                          pageable.data(),
                          LlrFormat::float32);
        gpu.complete();
        EXPECT_EQ(pageable, want) << "pageable buffers";

        // int8 and fp16 LLRs, rounded on the device: precision's rounding of the float32
        // LLRs above, bit for bit, every one written (poisons: -128 and a NaN code,
        // which neither rounding produces).
        const std::size_t n_llr = want.size();
        std::vector<std::int8_t> want_int8(n_llr);
        std::vector<std::uint16_t> want_fp16(n_llr);
        precision::llrs_to_int8(want.data(), n_llr, 4.0f, want_int8.data());
        precision::llrs_to_fp16(want.data(), n_llr, want_fp16.data());
        cuda::Buffer<std::int8_t> llr_int8(n_llr, true);
        cuda::Buffer<std::uint16_t> llr_fp16(n_llr, true);
        std::fill(llr_int8.get(), llr_int8.get() + n_llr, std::int8_t(-128));
        std::fill(llr_fp16.get(), llr_fp16.get() + n_llr, std::uint16_t(0x7fff));
        EXPECT_TRUE(gpu.submit_frames(
            batch.data(), frames_count, y.get(), llr_int8.get(), LlrFormat::int8, 4.0f));
        EXPECT_TRUE(gpu.submit_frames(
            batch.data(), frames_count, y.get(), llr_fp16.get(), LlrFormat::fp16));
        gpu.complete();
        EXPECT_TRUE(std::equal(want_int8.begin(), want_int8.end(), llr_int8.get()))
            << "int8 LLRs";
        EXPECT_TRUE(std::equal(want_fp16.begin(), want_fp16.end(), llr_fp16.get()))
            << "fp16 LLRs";
        EXPECT_THROW(gpu.submit_frames(batch.data(),
                                       frames_count,
                                       y.get(),
                                       llr_int8.get(),
                                       LlrFormat::int8,
                                       0.0f),
                     std::invalid_argument)
            << "int8 scale 0";
    }
}

TEST(CudaDetector, ExhaustiveMlHasNoKernelAndAutoRunsItOnTheCpu)
{
    SKIP_WITHOUT_GPU();
    DetectorConfig c;
    c.num_antennas = 4;
    c.num_users = 4;
    c.num_subcarriers = 8;
    c.modulation = Modulation::qpsk;
    c.mode = DetectorMode::ml;
    c.backend = Backend::cuda;
    try {
        make_detector(c);
        ADD_FAILURE() << "ml accepted by backend cuda";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("no GPU kernel for detector ml"),
                  std::string::npos)
            << e.what();
    }
    c.backend = Backend::automatic;
    std::string why;
    auto d = make_detector(c, &why);
    EXPECT_EQ(d->name(), "cpu-ml");
    EXPECT_NE(why.find("no GPU kernel"), std::string::npos) << why;
}

TEST(CudaDetector, SubmittedBatchesMatchDetectAndWaitForEachOther)
{
    // submit() on page-locked buffers only queues: complete(), a second submit(),
    // set_channel(), detect() and stats() each wait for it, and the LLRs and erasure
    // counts are detect()'s bit for bit. Unpinned buffers are detected at once.
    SKIP_WITHOUT_GPU();
    const Case c{ 32, 4, 16, 24, Modulation::qam16, DetectorMode::chol, 3, 15.0, 0.0 };
    const Dims d = config_of(c, Backend::cpu).dims();
    cuda::EngineOptions opt;
    opt.streams = 3;
    opt.chunk_bytes = 2 * d.rx_items() * sizeof(cf32); // 12 chunks over 3 slots
    cuda::CudaDetector ref(config_of(c, Backend::cuda), opt), gpu(config_of(c, Backend::cuda), opt);
    Frame f = frame_of(c, 92), g = frame_of(c, 93);
    f.y[5 * d.rx_items() + 3] = cf32(NAN, 0.0f); // an erasure, counted after complete()
    const std::size_t half = c.nsym / 2;
    std::vector<float> want(c.nsym * d.llr_items()), want_g(want.size());
    ref.set_channel(f.h.data(), f.n0);
    ref.detect(f.y.data(), c.nsym, want.data());
    ref.set_channel(g.h.data(), g.n0);
    ref.detect(g.y.data(), c.nsym, want_g.data());

    std::vector<cf32> y(f.y);
    std::vector<float> llr(want.size(), NAN);
    std::string why;
    ASSERT_TRUE(pin_host_memory(y.data(), y.size() * sizeof(cf32), &why)) << why;
    ASSERT_TRUE(pin_host_memory(llr.data(), llr.size() * sizeof(float), &why)) << why;
    gpu.set_channel(f.h.data(), f.n0);
    EXPECT_TRUE(gpu.submit(y.data(), half, llr.data()));
    EXPECT_TRUE(gpu.submit(y.data() + half * d.rx_items(),
                           c.nsym - half,
                           llr.data() + half * d.llr_items())); // completes the first
    gpu.complete();
    gpu.complete(); // nothing in flight: nothing happens
    EXPECT_EQ(std::memcmp(llr.data(), want.data(), want.size() * sizeof(float)), 0);
    EXPECT_EQ(gpu.stats().bad_sample_vectors, 1u);
    EXPECT_EQ(gpu.stats().symbols, c.nsym);

    // stats() and the next channel's set_channel wait for the batch in flight.
    gpu.set_channel(g.h.data(), g.n0);
    std::copy(g.y.begin(), g.y.end(), y.begin());
    std::fill(llr.begin(), llr.end(), NAN);
    EXPECT_TRUE(gpu.submit(y.data(), c.nsym, llr.data()));
    const DetectorStats s = gpu.stats();
    EXPECT_EQ(s.symbols, 2 * c.nsym);
    EXPECT_EQ(std::memcmp(llr.data(), want_g.data(), want.size() * sizeof(float)), 0);
    std::fill(llr.begin(), llr.end(), NAN);
    EXPECT_TRUE(gpu.submit(y.data(), c.nsym, llr.data()));
    gpu.set_channel(f.h.data(), f.n0);
    EXPECT_EQ(std::memcmp(llr.data(), want_g.data(), want.size() * sizeof(float)), 0);
    unpin_host_memory(y.data());
    unpin_host_memory(llr.data());

    std::vector<float> staged(want.size(), NAN); // unpinned: detected at once
    EXPECT_FALSE(gpu.submit(f.y.data(), c.nsym, staged.data()));
    EXPECT_EQ(std::memcmp(staged.data(), want.data(), want.size() * sizeof(float)), 0);
}

TEST(CudaDetector, RecurringChunksReplayAsGraphsWithTheSameOutputs)
{
    // Frames through two engines alike but for EngineOptions::graphs: the same kernels on
    // the same chunks, so the same outputs and statistics bit for bit, for staged and
    // pinned buffers, with x_hat and without, across channels (other noise variances, a
    // bad sample) and through the device API; and once a chunk has recurred, every chunk
    // of a call is a graph replay.
    SKIP_WITHOUT_GPU();
    for (auto mode : { DetectorMode::chol, DetectorMode::cg }) {
        const Case c{ 64, 8, 32, 37, Modulation::qam16, mode, 3, 12.0, 0.0 };
        const Dims d = config_of(c, Backend::cpu).dims();
        cuda::EngineOptions opt;
        opt.streams = 2;
        opt.chunk_bytes = 8 * d.rx_items() * sizeof(cf32); // 5 chunks, the last of 5
        constexpr std::uint64_t kChunks = 5;
        cuda::EngineOptions plain = opt;
        plain.graphs = false;
        cuda::CudaDetector with(config_of(c, Backend::cuda), opt);
        cuda::CudaDetector without(config_of(c, Backend::cuda), plain);
        cuda::Buffer<cf32> y(c.nsym * d.rx_items(), true);
        cuda::Buffer<float> llr(c.nsym * d.llr_items(), true);
        cuda::Buffer<cf32> x_hat(c.nsym * d.symbol_items(), true);
        auto same_bytes = [](const auto& a, const auto& b) {
            return a.size() == b.size() &&
                   std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
        };
        for (int k = 0; k < 4; ++k) {
            Frame f = frame_of(c, 70 + static_cast<std::uint64_t>(k));
            f.n0 *= 1.0f + 0.5f * k;
            if (k == 2)
                f.y[3 * d.rx_items() + d.rx_index(4, 1)] = cf32(NAN, 0.0f);
            for (bool pinned : { false, true })
                for (bool with_x : { false, true }) {
                    const std::string what =
                        to_string(mode) + " frame " + std::to_string(k) +
                        (pinned ? " pinned" : " staged") + (with_x ? " with x_hat" : "");
                    auto outputs_of = [&](cuda::CudaDetector& gpu) {
                        Outputs o;
                        o.llr.assign(llr.size(), NAN); // poisoned
                        o.x_hat.assign(x_hat.size(), cf32(NAN, NAN));
                        gpu.set_channel(f.h.data(), f.n0);
                        if (pinned) {
                            std::copy(f.y.begin(), f.y.end(), y.get());
                            std::copy(o.llr.begin(), o.llr.end(), llr.get());
                            std::copy(o.x_hat.begin(), o.x_hat.end(), x_hat.get());
                            gpu.detect(y.get(),
                                       c.nsym,
                                       llr.get(),
                                       with_x ? x_hat.get() : nullptr);
                            std::copy(llr.get(), llr.get() + llr.size(), o.llr.begin());
                            std::copy(
                                x_hat.get(), x_hat.get() + x_hat.size(), o.x_hat.begin());
                        } else {
                            gpu.detect(f.y.data(),
                                       c.nsym,
                                       o.llr.data(),
                                       with_x ? o.x_hat.data() : nullptr);
                        }
                        o.stats = gpu.stats();
                        return o;
                    };
                    const std::uint64_t replays = with.graph_replays();
                    const Outputs a = outputs_of(with), b = outputs_of(without);
                    for (float v : a.llr) {
                        ASSERT_TRUE(std::isfinite(v)) << what << ": an LLR not written";
                    }
                    if (with_x) {
                        for (cf32 v : a.x_hat) {
                            ASSERT_TRUE(std::isfinite(v.real())) << what << ": x_hat";
                        }
                    }
                    EXPECT_TRUE(same_bytes(a.llr, b.llr)) << what;
                    EXPECT_TRUE(same_bytes(a.x_hat, b.x_hat)) << what;
                    EXPECT_EQ(a.stats.bad_sample_vectors, b.stats.bad_sample_vectors)
                        << what;
                    EXPECT_EQ(a.stats.symbols, b.stats.symbols) << what;
                    // frame 0 sees each chunk first; from frame 1 on (captured there)
                    // each is a graph launch
                    if (k >= 1) {
                        EXPECT_EQ(with.graph_replays() - replays, kChunks) << what;
                    }
                }
        }
        EXPECT_EQ(with.stats().bad_sample_vectors, 4u) << "frame 2, four times";
        EXPECT_EQ(without.graph_replays(), 0u);

        // The device API: the first call on a channel prepares it, the next ones are the
        // same formed launch (its first sight, then the capture, then replays).
        const Frame f = frame_of(c, 80);
        const Outputs like = run(without, f, c.nsym);
        DeviceFrame dev(f, like);
        auto device_outputs = [&](cuda::CudaDetector& gpu) {
            gpu.set_channel_device(dev.h.get(), f.n0);
            Outputs last;
            for (int call = 0; call < 4; ++call)
                last = dev.detect(gpu, c.nsym);
            return last;
        };
        const std::uint64_t before = with.graph_replays();
        const Outputs a = device_outputs(with), b = device_outputs(without);
        for (float v : a.llr)
            ASSERT_TRUE(std::isfinite(v)) << to_string(mode) << ", device API: an LLR";
        for (cf32 v : a.x_hat)
            ASSERT_TRUE(std::isfinite(v.real()))
                << to_string(mode) << ", device API: x_hat";
        EXPECT_EQ(with.graph_replays() - before, 2u) << to_string(mode) << ", device API";
        EXPECT_TRUE(same_bytes(a.llr, b.llr)) << to_string(mode) << ", device API";
        EXPECT_TRUE(same_bytes(a.x_hat, b.x_hat)) << to_string(mode) << ", device API";
    }
}

/*! The equalizer gains (bias removal and SINR, signal_quality.h) of the GPU are the CPU's,
 * for every linear mode and BOX, with erased subcarriers and a dead user at 0 on both; a
 * channel with an N0 that is not finite erases them all; the sphere decoders have none. */
TEST(CudaDetector, EqualizerGainsMatchTheCpu)
{
    SKIP_WITHOUT_GPU();
    for (auto mode : { DetectorMode::chol, DetectorMode::cg, DetectorMode::cr,
                       DetectorMode::zf, DetectorMode::box }) {
        const Case c{ 16, 4, 12, 3, Modulation::qam16, mode, 3, 15.0, 0.0 };
        Frame f = frame_of(c, 9);
        const Dims d = config_of(c, Backend::cpu).dims();
        f.h[d.channel_index(2, 5, 1)] = cf32(NAN, 0.0f); // bad subcarrier 2
        for (std::size_t b = 0; b < d.num_antennas; ++b)
            f.h[d.channel_index(6, b, 3)] = cf32(0.0f, 0.0f); // user 3 dead on sc 6
        auto cpu = make_detector(config_of(c, Backend::cpu));
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        const std::string what = describe(c);
        std::vector<float> gu(d.symbol_items(), NAN), gs(d.symbol_items(), NAN),
            cu(d.symbol_items(), NAN), cs(d.symbol_items(), NAN);
        EXPECT_FALSE(gpu.equalizer_gains(gu.data(), gs.data())) << what; // no channel
        cpu->set_channel(f.h.data(), f.n0);
        gpu.set_channel(f.h.data(), f.n0);
        ASSERT_TRUE(cpu->equalizer_gains(cu.data(), cs.data())) << what;
        ASSERT_TRUE(gpu.equalizer_gains(gu.data(), gs.data())) << what;
        for (std::size_t i = 0; i < d.symbol_items(); ++i) {
            EXPECT_NEAR(gu[i], cu[i], 1e-4f * (1.0f + cu[i])) << what << " unbias " << i;
            EXPECT_NEAR(gs[i], cs[i], 2e-4f * (1.0f + cs[i])) << what << " sinr " << i;
        }
        for (std::size_t u = 0; u < d.num_users; ++u)
            EXPECT_EQ(gs[d.symbol_index(2, u)], 0.0f) << what;
        EXPECT_EQ(gs[d.symbol_index(6, 3)], 0.0f) << what;
        EXPECT_EQ(gu[d.symbol_index(6, 3)], 0.0f) << what;
        gpu.set_channel(f.h.data(), NAN);
        ASSERT_TRUE(gpu.equalizer_gains(gu.data(), gs.data())) << what;
        for (std::size_t i = 0; i < d.symbol_items(); ++i)
            EXPECT_TRUE(gu[i] == 0.0f && gs[i] == 0.0f) << what;
    }
    const Case s{ 4, 4, 12, 3, Modulation::qpsk, DetectorMode::fsd, 3, 15.0, 0.0 };
    cuda::CudaDetector sphere(config_of(s, Backend::cuda));
    const Frame f = frame_of(s, 3);
    sphere.set_channel(f.h.data(), f.n0);
    std::vector<float> a(48), b(48);
    EXPECT_FALSE(sphere.equalizer_gains(a.data(), b.data()));
}
