/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// APSM detection on the GPU (lib/cuda/apsm/apsm_detector.h) against the CPU receiver that
// trained it: equalised symbols within float32 tolerance, the same hard decisions wherever
// the CPU's symbol is not within that tolerance of a decision boundary, bad vectors erased.

#include "core/apsm/apsm.h"
#include "core/apsm/noma_scenario.h"
#include "gpu_skip.h"
#include <cuda/apsm/apsm_detector.h>
#include <cuda/cuda_detector.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace mimodet;

namespace {

//! Nearest point, and the gap between the nearest and the second nearest squared distance.
std::size_t nearest(cf32 z, const Constellation& c, float* gap)
{
    float best = std::numeric_limits<float>::infinity(), second = best;
    std::size_t index = 0;
    for (std::size_t p = 0; p < c.size(); ++p) {
        const float d = std::norm(z - c.points()[p]);
        if (d < best) {
            second = best;
            best = d;
            index = p;
        } else if (d < second) {
            second = d;
        }
    }
    *gap = second - best;
    return index;
}

//! Whether this GPU has TF32 tensor cores (compute capability 8.0 or later).
bool has_tf32()
{
    int major = 0;
    return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess &&
           major >= 8;
}

//! The arithmetics this GPU runs: fp32 always, tf32x3 where it has the tensor cores.
std::vector<cuda::ApsmArithmetic> arithmetics()
{
    std::vector<cuda::ApsmArithmetic> a{ cuda::ApsmArithmetic::fp32 };
    if (has_tf32())
        a.push_back(cuda::ApsmArithmetic::tf32x3);
    return a;
}

void check(std::size_t antennas, std::size_t users, Modulation mod, cuda::ApsmArithmetic arithmetic)
{
    const std::string what = std::to_string(antennas) + "x" + std::to_string(users) + " " +
                             to_string(mod) + " " + cuda::to_string(arithmetic);
    apsm::NomaScenario s;
    s.antennas = antennas;
    s.users = users;
    s.training_symbols = 300;
    s.data_symbols = 700;
    s.modulation = mod;
    s.snr_db = 25.0;
    s.seed = 5;
    apsm::NomaTransmission tr = simulate_noma(s);
    // the last antenna of vector 3 (there may be one only)
    tr.data_rx[3 * antennas + antennas - 1] =
        cf32(std::numeric_limits<float>::quiet_NaN(), 0.0f);
    apsm::ApsmReceiver cpu(antennas, users);
    cpu.train(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
    std::vector<cf32> want(s.data_symbols * users), got(want.size(), cf32(-7.0f, -7.0f));
    cpu.detect(tr.data_rx.data(), s.data_symbols, want.data());
    cuda::CudaApsmDetector gpu(cpu, 0, arithmetic);
    ASSERT_EQ(gpu.arithmetic(), arithmetic);
    gpu.detect(tr.data_rx.data(), s.data_symbols, got.data());
    EXPECT_EQ(gpu.erased_vectors(), 1u) << what;
    EXPECT_EQ(cpu.erased_vectors(), 1u) << what;
    const Constellation c(mod);
    constexpr float kTolerance = 2e-3f; // float32 sums over ~600 kernel terms
    std::size_t differ = 0, checked = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got[i].real()) && std::isfinite(got[i].imag())) << what << " " << i;
        EXPECT_NEAR(got[i].real(), want[i].real(), kTolerance) << what << " symbol " << i;
        EXPECT_NEAR(got[i].imag(), want[i].imag(), kTolerance) << what << " symbol " << i;
        float gap = 0.0f, unused = 0.0f;
        const std::size_t a = nearest(want[i], c, &gap), b = nearest(got[i], c, &unused);
        if (gap > 4.0f * kTolerance) {
            ++checked;
            differ += a != b;
        }
    }
    EXPECT_EQ(differ, 0u) << what;
    EXPECT_GT(checked, want.size() * 9 / 10) << what;
    for (std::size_t k = 0; k < users; ++k)
        EXPECT_EQ(got[3 * users + k], cf32(0.0f, 0.0f)) << what << ": erased vector";
}

} // namespace

TEST(CudaApsm, DetectionMatchesTheCpu)
{
    SKIP_WITHOUT_GPU();
    for (const cuda::ApsmArithmetic a : arithmetics()) {
        check(16, 6, Modulation::qpsk, a); // section 5's setup
        check(4, 3, Modulation::qam16, a); // padded sample (8 of 8) and users (3 of 4)
        check(5, 1, Modulation::qam64, a); // 10 of 16 dimensions used
        check(6, 2, Modulation::qpsk, a);  // 12 of 16 dimensions, users 2 of 2
        check(20, 9, Modulation::qpsk, a); // 40 of 64 dimensions, users 9 of 16 (2 tensor tiles)
        check(32, 16, Modulation::qpsk, a); // the most: 64 of 64 dimensions, 16 of 16 users
        // fewer antennas than users, where the Gaussian part pays most (docs/apsm.md)
        check(1, 2, Modulation::qam16, a);
        check(2, 3, Modulation::qpsk, a);
        check(3, 6, Modulation::bpsk, a);
    }
}

/* automatic takes the tensor cores where there are TF32 tensor cores; tf32x3 is refused
 * on a GPU without them. */
TEST(CudaApsm, AutomaticArithmeticFollowsTheGpu)
{
    SKIP_WITHOUT_GPU();
    apsm::NomaScenario s;
    s.antennas = 4;
    s.users = 2;
    s.training_symbols = 100;
    s.data_symbols = 10;
    const apsm::NomaTransmission tr = simulate_noma(s);
    apsm::ApsmReceiver cpu(s.antennas, s.users);
    cpu.train(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
    const cuda::CudaApsmDetector automatic(cpu);
    EXPECT_EQ(automatic.arithmetic(),
              has_tf32() ? cuda::ApsmArithmetic::tf32x3 : cuda::ApsmArithmetic::fp32);
    if (!has_tf32()) {
        EXPECT_THROW(cuda::CudaApsmDetector(cpu, 0, cuda::ApsmArithmetic::tf32x3),
                     std::invalid_argument);
    }
}

void check_splits(const apsm::ApsmReceiver& cpu,
                  const apsm::NomaTransmission& tr,
                  const apsm::NomaScenario& s,
                  cuda::ApsmArithmetic arithmetic);

/* The dictionary is split over blocks as far as one wave of blocks holds them, so calls of
 * different sizes split it differently. On an H100 with section 5's 1370 entries (22
 * tiles), fp32: 700 vectors, 11 splits of 2 tiles; 33 vectors and 1, 22 splits of 1; 9100
 * vectors, none (where the erased vector is). tf32x3 (64 vectors a block, 2 blocks an SM
 * when its registers allow): 22 splits of 1 for 700, 33 and 1 vectors, none for 9100. The
 * last block of a sample tile adds the splits in a fixed order and leaves its ticket at
 * zero. Every output element is written (the device output starts as NaN), a repeated call
 * gives the same bits, and all calls agree within float32 rounding. */
TEST(CudaApsm, SplitsWriteEveryOutputAndRepeatExactly)
{
    SKIP_WITHOUT_GPU();
    apsm::NomaScenario s;
    s.antennas = 16;
    s.users = 6;
    s.training_symbols = 685;
    s.data_symbols = 700;
    s.seed = 9;
    const apsm::NomaTransmission tr = simulate_noma(s);
    apsm::ApsmReceiver cpu(s.antennas, s.users);
    cpu.train(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
    for (const cuda::ApsmArithmetic arithmetic : arithmetics())
        check_splits(cpu, tr, s, arithmetic);
}

void check_splits(const apsm::ApsmReceiver& cpu,
                  const apsm::NomaTransmission& tr,
                  const apsm::NomaScenario& s,
                  cuda::ApsmArithmetic arithmetic)
{
    SCOPED_TRACE(cuda::to_string(arithmetic));
    cuda::CudaApsmDetector gpu(cpu, 0, arithmetic);
    const std::size_t N = s.data_symbols, M = s.antennas, K = s.users, copies = 13;
    std::vector<cf32> r;
    for (std::size_t c = 0; c < copies; ++c)
        r.insert(r.end(), tr.data_rx.begin(), tr.data_rx.end());
    const std::size_t bad = 7 * N + 3; // a vector of the 9100 only
    r[bad * M + 2] = cf32(std::numeric_limits<float>::infinity(), 0.0f);
    cuda::Buffer<cf32> d_r(r.size(), false), d_out(copies * N * K, false);
    cuda::copy_to_device(d_r.get(), r.data(), d_r.bytes());
    auto run = [&](std::size_t first, std::size_t count) {
        EXPECT_EQ(cudaMemset(d_out.get(), 0xff, d_out.bytes()), cudaSuccess); // NaN
        gpu.detect_device(d_r.get() + first * M, count, d_out.get());
        std::vector<cf32> z(count * K);
        cuda::copy_to_host(z.data(), d_out.get(), z.size() * sizeof(cf32));
        return z;
    };
    const std::vector<cf32> all = run(0, N), again = run(0, N), one = run(5, 1),
                            some = run(100, 33), many = run(0, copies * N);
    ASSERT_EQ(std::memcmp(all.data(), again.data(), all.size() * sizeof(cf32)), 0);
    for (const std::vector<cf32>* z : { &all, &one, &some, &many })
        for (const cf32& v : *z)
            ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
    constexpr float kTolerance = 1e-3f; // the same sums in another grouping
    auto near = [&](const std::vector<cf32>& got, std::size_t first, const char* what) {
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (&got == &many && i / K == bad) {
                EXPECT_EQ(got[i], cf32(0.0f, 0.0f)) << "erased vector";
                continue;
            }
            const cf32 want = all[(first * K + i) % all.size()];
            EXPECT_NEAR(got[i].real(), want.real(), kTolerance) << what << " " << i;
            EXPECT_NEAR(got[i].imag(), want.imag(), kTolerance) << what << " " << i;
        }
    };
    near(one, 5, "one vector");
    near(some, 100, "33 vectors");
    near(many, 0, "13 copies");
    EXPECT_EQ(gpu.erased_vectors(), 1u);
}

TEST(CudaApsm, RefusesWhatItCannotHold)
{
    SKIP_WITHOUT_GPU();
    apsm::ApsmReceiver untrained(4, 2);
    EXPECT_THROW(cuda::CudaApsmDetector{ untrained }, std::invalid_argument);
}
