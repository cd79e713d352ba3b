/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// PULPO's atomic operations on the GPU (lib/cuda/pulpo) against the CPU's, the same
// shapes and null/in-place rules. Skipped without a GPU.

#include "core/pulpo/atomic_ops.h"
#include "cuda/pulpo/atomic_ops.h"
#include "gpu_skip.h"
#include <cuda/cuda_detector.h>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using namespace mimodet;

namespace {

std::vector<cf32> random_values(std::size_t n, std::mt19937& rng)
{
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<cf32> v(n);
    for (auto& x : v)
        x = cf32(g(rng), g(rng));
    return v;
}

struct OnDevice {
    cuda::Buffer<cf32> buf;
    explicit OnDevice(const std::vector<cf32>& v) : buf(v.size(), false)
    {
        cuda::copy_to_device(buf.get(), v.data(), buf.bytes());
    }
    std::vector<cf32> back() const
    {
        std::vector<cf32> v(buf.size());
        cuda::copy_to_host(v.data(), buf.get(), buf.bytes());
        return v;
    }
};

void expect_near(const std::vector<cf32>& got, const std::vector<cf32>& want, float tol)
{
    ASSERT_EQ(got.size(), want.size());
    float w = 0.0f;
    for (std::size_t i = 0; i < got.size(); ++i)
        w = std::max(w, std::abs(got[i] - want[i]) / std::max(1.0f, std::abs(want[i])));
    EXPECT_LT(w, tol);
}

} // namespace

TEST(CudaPulpoAtomicOps, MatchTheCpu)
{
    SKIP_WITHOUT_GPU();
    std::mt19937 rng(12);
    for (pulpo::Shape s : { pulpo::Shape{ 1024, 128, 16, 4 }, pulpo::Shape{ 3, 4, 7, 1 },
                            pulpo::Shape{ 5, 32, 32, 9 } }) {
        SCOPED_TRACE(std::to_string(s.batch) + " x " + std::to_string(s.m) + "x" +
                     std::to_string(s.n) + " k=" + std::to_string(s.k));
        const auto a = random_values(s.batch * s.m * s.n, rng);
        const auto xn = random_values(s.batch * s.n * s.k, rng);
        const auto xm = random_values(s.batch * s.m * s.k, rng);
        const auto ym = random_values(s.batch * s.m * s.k, rng);
        const auto yn = random_values(s.batch * s.n * s.k, rng);
        std::vector<cf32> z(ym.size()), z0(ym.size()), hz(yn.size());
        pulpo::mvp(s, a.data(), xn.data(), ym.data(), z.data());
        pulpo::mvp(s, a.data(), xn.data(), nullptr, z0.data());
        pulpo::hermitian_step(s, a.data(), xm.data(), yn.data(), 0.25f, hz.data());
        OnDevice da(a), dxn(xn), dxm(xm), dym(ym), dyn(yn), dz(z), dz0(z0);
        cuda::pulpo::mvp(s, da.buf.get(), dxn.buf.get(), dym.buf.get(), dz.buf.get());
        cuda::pulpo::mvp(s, da.buf.get(), dxn.buf.get(), nullptr, dz0.buf.get());
        // (H) in place on y
        cuda::pulpo::hermitian_step(s, da.buf.get(), dxm.buf.get(), dyn.buf.get(), 0.25f,
                                    dyn.buf.get());
        const float tol = 1e-5f * static_cast<float>(std::max(s.m, s.n));
        expect_near(dz.back(), z, tol);
        expect_near(dz0.back(), z0, tol);
        expect_near(dyn.back(), hz, tol);
        std::vector<cf32> p(z.size());
        pulpo::prox_box(z.data(), z.size(), 0.8f, 0.7f, 0.5f, p.data());
        cuda::pulpo::prox_box(dz.buf.get(), z.size(), 0.8f, 0.7f, 0.5f, dz.buf.get());
        expect_near(dz.back(), p, tol);
    }
}
