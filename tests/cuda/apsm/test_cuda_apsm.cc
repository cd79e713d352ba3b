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
#include <gtest/gtest.h>
#include <cmath>
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

void check(std::size_t antennas, std::size_t users, Modulation mod)
{
    const std::string what = std::to_string(antennas) + "x" + std::to_string(users) + " " +
                             to_string(mod);
    apsm::NomaScenario s;
    s.antennas = antennas;
    s.users = users;
    s.training_symbols = 300;
    s.data_symbols = 700;
    s.modulation = mod;
    s.snr_db = 25.0;
    s.seed = 5;
    apsm::NomaTransmission tr = simulate_noma(s);
    tr.data_rx[3 * antennas + 1] = cf32(std::numeric_limits<float>::quiet_NaN(), 0.0f); // vector 3
    apsm::ApsmReceiver cpu(antennas, users);
    cpu.train(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
    std::vector<cf32> want(s.data_symbols * users), got(want.size(), cf32(-7.0f, -7.0f));
    cpu.detect(tr.data_rx.data(), s.data_symbols, want.data());
    cuda::CudaApsmDetector gpu(cpu);
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
    check(16, 6, Modulation::qpsk); // section 5's setup
    check(4, 3, Modulation::qam16); // padded sample (8 of 8) and users (3 of 4)
    check(5, 1, Modulation::qam64); // 10 of 16 dimensions used
}

TEST(CudaApsm, RefusesWhatItCannotHold)
{
    SKIP_WITHOUT_GPU();
    apsm::ApsmReceiver untrained(4, 2);
    EXPECT_THROW(cuda::CudaApsmDetector{ untrained }, std::invalid_argument);
}
