/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* BOX on the GPU (lib/cuda/box/box.cu) against CpuBoxDetector on the same frames: every
 * output written (poisoned with NaN), estimates and LLRs within float rounding, the same
 * decisions and counters, through host buffers and the device API. Skipped without a
 * GPU. */

#include "gpu_skip.h"
#include <cuda/cuda_detector.h>
#include <gtest/gtest.h>
#include <mimodet/ber_sim.h>
#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mimodet;

namespace {

struct BoxCase {
    std::size_t b, u, nsc, nsym;
    Modulation mod;
    double snr_db;
    BoxStart start;
    bool accelerated;
    unsigned iterations;
    float step;
};

std::string describe(const BoxCase& c)
{
    return std::to_string(c.b) + "x" + std::to_string(c.u) + " " + to_string(c.mod) + " " +
           std::to_string(c.snr_db) + " dB start=" + to_string(c.start) +
           (c.accelerated ? " fista" : " plain") + " I=" + std::to_string(c.iterations) +
           " tau=" + std::to_string(c.step) + " nsc=" + std::to_string(c.nsc) +
           " nsym=" + std::to_string(c.nsym);
}

ChannelSimConfig sim_of(const BoxCase& c)
{
    ChannelSimConfig s;
    s.num_antennas = c.b;
    s.num_users = c.u;
    s.num_subcarriers = c.nsc;
    s.symbols_per_frame = c.nsym;
    s.modulation = c.mod;
    s.snr_db = c.snr_db;
    s.seed = 41;
    return s;
}

DetectorConfig config_of(const BoxCase& c, Backend backend)
{
    DetectorConfig d = detector_config_for(sim_of(c), DetectorMode::box, 3, backend);
    d.box_start = c.start;
    d.box_accelerated = c.accelerated;
    d.box_iterations = c.iterations;
    d.box_step = c.step;
    return d;
}

struct Outputs {
    std::vector<float> llr;
    std::vector<cf32> x_hat;
    DetectorStats stats;
};

Outputs run(Detector& det, const Frame& f, std::size_t nsym)
{
    const Dims d = det.config().dims();
    Outputs r;
    r.llr.assign(nsym * d.llr_items(), NAN);
    r.x_hat.assign(nsym * d.symbol_items(), cf32(NAN, NAN));
    det.set_channel(f.h.data(), f.n0);
    det.detect(f.y.data(), nsym, r.llr.data(), r.x_hat.data());
    r.stats = det.stats();
    return r;
}

//! Estimates within 1e-3 (the box is about 1 wide), LLRs within 2e-3 relative, and
//! decisions equal except where the CPU's LLR is within rounding of zero.
void expect_close(const Outputs& gpu, const Outputs& cpu, const std::string& what)
{
    ASSERT_EQ(gpu.llr.size(), cpu.llr.size());
    double worst_x = 0.0, worst_llr = 0.0;
    std::size_t flipped = 0;
    for (std::size_t i = 0; i < gpu.x_hat.size(); ++i) {
        ASSERT_TRUE(std::isfinite(gpu.x_hat[i].real()) && std::isfinite(gpu.x_hat[i].imag()))
            << what << ": x_hat " << i << " not written";
        ASSERT_TRUE(std::isfinite(cpu.x_hat[i].real()) && std::isfinite(cpu.x_hat[i].imag()))
            << what << ": CPU x_hat " << i;
        worst_x = std::max(worst_x, double(std::abs(gpu.x_hat[i] - cpu.x_hat[i])));
    }
    for (std::size_t i = 0; i < gpu.llr.size(); ++i) {
        ASSERT_TRUE(std::isfinite(gpu.llr[i])) << what << ": LLR " << i << " not written";
        ASSERT_TRUE(std::isfinite(cpu.llr[i])) << what << ": CPU LLR " << i;
        const double g = gpu.llr[i], c = cpu.llr[i];
        worst_llr = std::max(worst_llr, std::abs(g - c) / std::max(1.0, std::abs(c)));
        if ((g > 0) != (c > 0) && std::abs(c) > 1e-2)
            ++flipped;
        if (c == 0.0) {
            EXPECT_EQ(g, 0.0) << what << ": LLR " << i << " should be an erasure";
        }
    }
    EXPECT_LT(worst_x, 1e-3) << what;
    EXPECT_LT(worst_llr, 2e-3) << what;
    EXPECT_EQ(flipped, 0u) << what;
}

} // namespace

TEST(CudaBox, MatchesTheCpuInEveryStartAndForm)
{
    SKIP_WITHOUT_GPU();
    const BoxCase cases[] = {
        { 16, 16, 32, 20, Modulation::qpsk, 16.0, BoxStart::lmmse, true, 20, 0.0f },
        { 128, 16, 16, 70, Modulation::qam256, 32.0, BoxStart::lmmse, true, 20, 0.0f },
        { 64, 6, 24, 9, Modulation::qam16, 14.0, BoxStart::mf, false, 30, 0.0f },
        { 32, 32, 8, 5, Modulation::qpsk, 18.0, BoxStart::zero, true, 40, 0.0f },
        { 8, 3, 16, 3, Modulation::bpsk, 6.0, BoxStart::lmmse, true, 10, 0.0f },
        { 24, 8, 16, 130, Modulation::qam64, 26.0, BoxStart::lmmse, true, 20, 0.01f },
        { 256, 32, 4, 2, Modulation::qam16, 20.0, BoxStart::lmmse, true, 5, 0.0f },
    };
    for (const BoxCase& c : cases) {
        const std::string what = describe(c);
        SCOPED_TRACE(what);
        Frame f;
        ChannelSimulator(sim_of(c)).next_frame(f);
        const Dims d = config_of(c, Backend::cpu).dims();
        auto cpu = make_detector(config_of(c, Backend::cpu));
        cuda::CudaDetector gpu(config_of(c, Backend::cuda));
        EXPECT_EQ(gpu.name().find("box") != std::string::npos, true) << gpu.name();
        expect_close(run(gpu, f, c.nsym), run(*cpu, f, c.nsym), what);

        // Bad inputs: a subcarrier's NaN, a user without a channel, one non-finite vector.
        f.h[d.channel_index(1, 0, 0)] = cf32(NAN, 0.0f);
        for (std::size_t b = 0; b < c.b; ++b)
            f.h[d.channel_index(2, b, c.u - 1)] = cf32(0.0f, 0.0f);
        f.y[(c.nsym - 1) * d.rx_items() + d.rx_index(3, 0)] = cf32(INFINITY, 0.0f);
        const Outputs want = run(*cpu, f, c.nsym), got = run(gpu, f, c.nsym);
        expect_close(got, want, what + " bad inputs");
        EXPECT_EQ(got.stats.bad_channel_subcarriers, want.stats.bad_channel_subcarriers);
        EXPECT_EQ(got.stats.unusable_user_channels, want.stats.unusable_user_channels);
        EXPECT_EQ(got.stats.bad_sample_vectors, want.stats.bad_sample_vectors);
        EXPECT_EQ(got.stats.regularized_subcarriers, want.stats.regularized_subcarriers);

        // The device API prepares on the first call and counts on the device.
        cuda::CudaDetector dev(config_of(c, Backend::cuda));
        cuda::Buffer<cf32> dh(f.h.size(), false), dy(f.y.size(), false),
            dx(want.x_hat.size(), false);
        cuda::Buffer<float> dl(want.llr.size(), false);
        cuda::copy_to_device(dh.get(), f.h.data(), dh.bytes());
        cuda::copy_to_device(dy.get(), f.y.data(), dy.bytes());
        Outputs dg;
        dg.llr.assign(want.llr.size(), NAN);
        dg.x_hat.assign(want.x_hat.size(), cf32(NAN, NAN));
        cuda::copy_to_device(dl.get(), dg.llr.data(), dl.bytes());
        cuda::copy_to_device(dx.get(), dg.x_hat.data(), dx.bytes());
        dev.set_channel_device(dh.get(), f.n0);
        dev.detect_device(dy.get(), c.nsym, dl.get(), dx.get());
        dev.synchronize();
        cuda::copy_to_host(dg.llr.data(), dl.get(), dl.bytes());
        cuda::copy_to_host(dg.x_hat.data(), dx.get(), dx.bytes());
        expect_close(dg, want, what + " device API");
        EXPECT_EQ(dev.stats().unusable_user_channels, 1u);
        EXPECT_EQ(dev.stats().bad_channel_subcarriers, 1u);
    }
}

// backend=auto picks the GPU for box, and make_detector's GPU detector is the engine's.
TEST(CudaBox, AutoRunsBoxOnTheGpu)
{
    SKIP_WITHOUT_GPU();
    const BoxCase c{ 16, 8, 8, 4, Modulation::qam16, 16.0, BoxStart::lmmse, true, 20, 0.0f };
    std::string why;
    auto det = make_detector(config_of(c, Backend::automatic), &why);
    EXPECT_EQ(det->name().rfind("cuda", 0), 0u) << det->name() << " " << why;
}

// The same input gives the same LLRs bit for bit, engine after engine: tau's Gershgorin
// bound is summed in a fixed order (it was an atomic sum, and tau's last bits varied).
TEST(CudaBox, SameInputGivesTheSameLlrsBitForBit)
{
    SKIP_WITHOUT_GPU();
    ChannelSimConfig sim;
    sim.num_antennas = 33;
    sim.num_users = 7;
    sim.num_subcarriers = 64;
    sim.symbols_per_frame = 9;
    sim.modulation = Modulation::qam16;
    sim.snr_db = 12.0;
    Frame f;
    ChannelSimulator(sim).next_frame(f);
    const DetectorConfig cfg = detector_config_for(sim, DetectorMode::box, 3, Backend::cuda);
    std::vector<float> first;
    for (int run = 0; run < 4; ++run) {
        cuda::CudaDetector det(cfg);
        std::vector<float> llr(sim.symbols_per_frame * cfg.dims().llr_items());
        det.set_channel(f.h.data(), f.n0);
        det.detect(f.y.data(), sim.symbols_per_frame, llr.data());
        if (run == 0)
            first = llr;
        else
            ASSERT_EQ(std::memcmp(llr.data(), first.data(), llr.size() * sizeof(float)), 0)
                << "run " << run;
    }
}
