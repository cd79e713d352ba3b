/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The GPU's in-place narrow storage (lib/cuda/precision/quantize.cu) against
// lib/core/precision's, bit for bit. Skipped without a GPU.

#include "core/precision/precision.h"
#include "cuda/precision/quantize.h"
#include "gpu_skip.h"
#include <cuda/cuda_detector.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mimodet;

TEST(CudaQuantize, EqualsTheCpuBitForBit)
{
    SKIP_WITHOUT_GPU();
    std::mt19937 rng(21);
    for (Precision p : { Precision::fp16, Precision::bf16, Precision::fp8_e4m3,
                         Precision::fp8_e5m2, Precision::fp32 }) {
        for (float power : { 1e-30f, 3e-4f, 1.0f, 7e3f, 1e30f }) {
            SCOPED_TRACE(to_string(p) + " power " + std::to_string(power));
            const std::size_t block = 3000, blocks = 7;
            std::normal_distribution<float> g(0.0f, power);
            std::vector<cf32> v(block * blocks);
            for (std::size_t i = 0; i < v.size(); ++i) // blocks of different levels
                v[i] = cf32(g(rng), g(rng)) * std::ldexp(1.0f, static_cast<int>(i / block) - 3);
            v[5] = cf32(NAN, 1.0f);
            v[block + 9] = cf32(2.0f, INFINITY);
            v[2 * block + 1] = cf32(0.0f, -0.0f);
            std::vector<cf32> want(v.size());
            for (std::size_t b = 0; b < blocks; ++b)
                precision::quantize_block(p, v.data() + b * block, block, want.data() + b * block);
            cuda::Buffer<cf32> d(v.size(), false);
            cuda::copy_to_device(d.get(), v.data(), d.bytes());
            cuda::quantize_blocks(d.get(), block, blocks, p);
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
            std::vector<cf32> got(v.size());
            cuda::copy_to_host(got.data(), d.get(), d.bytes());
            std::size_t differ = 0;
            for (std::size_t i = 0; i < v.size(); ++i) // NaN == NaN bitwise
                differ += std::memcmp(&got[i], &want[i], sizeof(cf32)) != 0;
            EXPECT_EQ(differ, 0u);
        }
    }
}
