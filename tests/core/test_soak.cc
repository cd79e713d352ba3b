/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The core API's soak on the CPU (docs/reliability.md): 1e6 frames by default
 * (MIMODET_SOAK_FRAMES sets another count), resident memory flat after the warm-up. */

#include "soak.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <mimodet/detector.h>

using namespace mimodet;

TEST(Soak, CoreApiKeepsResidentMemoryFlatOverAMillionFrames)
{
    const std::uint64_t frames = mimodet_test::env_count("MIMODET_SOAK_FRAMES", 1000000);
    std::uint64_t made = 0;
    const DetectorMode modes[] = { DetectorMode::chol, DetectorMode::cg, DetectorMode::zf,
                                   DetectorMode::sfsd, DetectorMode::box };
    DetectorConfig c;
    c.num_antennas = 2;
    c.num_users = 2;
    c.num_subcarriers = 2;
    c.modulation = Modulation::qpsk;
    c.backend = Backend::cpu;
    c.num_threads = 1; // small frames: one thread, no OpenMP team per call
    auto make = [&] {
        c.mode = modes[made++ % (sizeof modes / sizeof modes[0])];
        return make_detector(c);
    };
    // warm-up: each of the five modes once
    const auto r = mimodet_test::soak(make, c.dims(), frames, 50000, std::min<std::uint64_t>(250000, frames / 2));
    mimodet_test::print(r, "cpu 2x2 qpsk, 2 subcarriers");
    ASSERT_GE(r.samples.size(), 2u);
    EXPECT_EQ(r.non_finite_llrs, 0u);
    EXPECT_EQ(r.bad_sample_vectors, r.nan_sample_frames);
    // The detectors reach their steady state in the warm-up; what stays is allocator
    // noise, well under a byte a frame. (AddressSanitizer keeps freed memory in a
    // quarantine of 256 MB: resident memory grows there by design.)
    if (!mimodet_test::address_sanitizer()) {
        EXPECT_LT(r.growth(false), std::uint64_t(4) << 20)
            << "resident memory grew over the soak";
    }
}
