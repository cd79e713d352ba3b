/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* GPU memory as a whole (docs/reliability.md): a card that is full, and the core API's
 * soak (frames for MIMODET_SOAK_SECONDS, default 20; resident and GPU memory flat after
 * the warm-up). These tests measure or fill the whole card, so ctest runs them alone
 * (RUN_SERIAL). */

#include "gpu_skip.h"
#include "soak.h"
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mimodet/detector.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace mimodet;

TEST(CudaMemory, OutOfMemoryIsAClearErrorAndAutoFallsBackToTheCpu)
{
    // A card filled by someone else (here one big allocation, as several detectors or
    // another process would): cuda names the sizes, auto runs on the CPU.
    SKIP_WITHOUT_GPU();
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    std::size_t free_bytes = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
    const std::size_t headroom = std::size_t(96) << 20;
    if (free_bytes < 4 * headroom)
        GTEST_SKIP() << "the card is already nearly full";
    struct Hog { // freed however the test ends: the next test needs the card
        void* p = nullptr;
        ~Hog() { cudaFree(p); }
    } hog;
    for (std::size_t ask = free_bytes - headroom; ask > headroom; ask -= std::size_t(64) << 20)
        if (cudaMalloc(&hog.p, ask) == cudaSuccess)
            break;
    cudaGetLastError();
    ASSERT_NE(hog.p, nullptr) << "could not fill the card";

    DetectorConfig c;
    c.num_antennas = 16;
    c.num_users = 8;
    c.num_subcarriers = 200000; // H alone is 195 MiB on the GPU
    c.modulation = Modulation::qpsk;
    c.mode = DetectorMode::chol;
    c.backend = Backend::cuda;
    try {
        make_detector(c);
        ADD_FAILURE() << "a detector was built in the 96 MiB left";
    } catch (const std::runtime_error& e) { // cuda::OutOfMemory, with the factory's words
        const std::string what = e.what();
        for (const char* part : { "16x8", "200000 subcarriers", "out of GPU memory on device 0",
                                  "asked for 195.3 MiB", "free of", "backend=auto" })
            EXPECT_NE(what.find(part), std::string::npos) << part << " not in: " << what;
        std::cout << "    error: " << what << "\n";
    }
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);

    c.backend = Backend::automatic;
    std::string why;
    auto cpu = make_detector(c, &why);
    EXPECT_EQ(cpu->name(), "cpu-chol");
    EXPECT_NE(why.find("out of GPU memory"), std::string::npos) << why;
    std::mt19937 rng(5);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<cf32> h(c.dims().channel_items()), y(c.dims().rx_items());
    for (auto& v : h)
        v = { g(rng), g(rng) };
    for (auto& v : y)
        v = { g(rng), g(rng) };
    std::vector<float> llr(c.dims().llr_items());
    cpu->set_channel(h.data(), 0.1f);
    cpu->detect(y.data(), 1, llr.data());
    EXPECT_TRUE(std::all_of(llr.begin(), llr.end(), [](float v) { return std::isfinite(v); }));

    ASSERT_EQ(cudaFree(hog.p), cudaSuccess);
    hog.p = nullptr;
    c.backend = Backend::cuda; // the memory is back: nothing of the failure stays
    EXPECT_EQ(make_detector(c)->name(), "cuda-chol");
}

TEST(CudaMemory, SoakOfTheCoreApiKeepsHostAndGpuMemoryFlat)
{
    SKIP_WITHOUT_GPU();
    const double seconds =
        static_cast<double>(mimodet_test::env_count("MIMODET_SOAK_SECONDS", 20));
    const DetectorMode modes[] = { DetectorMode::chol, DetectorMode::cg, DetectorMode::zf,
                                   DetectorMode::sfsd, DetectorMode::box };
    DetectorConfig c;
    c.num_antennas = 4;
    c.num_users = 4;
    c.num_subcarriers = 48;
    c.modulation = Modulation::qam16;
    c.backend = Backend::cuda;
    std::uint64_t made = 0;
    auto make = [&] {
        c.mode = modes[made++ % (sizeof modes / sizeof modes[0])];
        return make_detector(c);
    };
    auto gpu_in_use = [] {
        std::size_t free_bytes = 0, total = 0;
        cudaMemGetInfo(&free_bytes, &total);
        return static_cast<std::uint64_t>(total - free_bytes);
    };
    // Frames for the time asked (a short run measures the rate first), at least three
    // warm-ups long; the warm-up runs each of the five modes once.
    const std::uint64_t rebuild_every = 10000, warm_up = 5 * rebuild_every;
    const auto probe = mimodet_test::soak(make, c.dims(), 2000, 1000, 1000);
    const auto frames = static_cast<std::uint64_t>(std::max(
        3.0 * warm_up, seconds * probe.frames / std::max(probe.seconds, 1e-3)));
    const auto r = mimodet_test::soak(make, c.dims(), frames, rebuild_every, warm_up, gpu_in_use);
    mimodet_test::print(r, "cuda 4x4 16qam, 48 subcarriers");
    ASSERT_GE(r.samples.size(), 2u);
    EXPECT_EQ(r.non_finite_llrs, 0u);
    EXPECT_EQ(r.bad_sample_vectors, r.nan_sample_frames);
    // Bounds: a few allocator pages. The detector alive at a sample differs in size from
    // mode to mode; a leak of one allocation per rebuild (at least 10 after the warm-up)
    // is far above them.
    if (!mimodet_test::address_sanitizer()) {
        EXPECT_LT(r.growth(false), std::uint64_t(4) << 20) << "resident memory grew";
    }
    EXPECT_LT(r.growth(true), std::uint64_t(16) << 20) << "GPU memory grew";
}
