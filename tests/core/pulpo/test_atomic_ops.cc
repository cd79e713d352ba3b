/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// PULPO's atomic operations on the CPU (lib/core/pulpo) against float64 products, and BOX
// composed from them against the BOX iteration of lib/core/box.

#include "core/box/box.h"
#include "core/pulpo/atomic_ops.h"
#include "reference.h"
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

//! Problem b's rows x cols block of a [batch][rows][cols] array, in float64.
ref::MatrixD block(const std::vector<cf32>& v, std::size_t b, std::size_t rows, std::size_t cols)
{
    ref::MatrixD m(rows, cols);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            m(r, c) = cf64(v[(b * rows + r) * cols + c]);
    return m;
}

double worst(const std::vector<cf32>& got, const ref::MatrixD& want, std::size_t b)
{
    double w = 0.0;
    for (long r = 0; r < want.rows(); ++r)
        for (long c = 0; c < want.cols(); ++c)
            w = std::max(w, std::abs(cf64(got[(b * want.rows() + r) * want.cols() + c]) - want(r, c)));
    return w;
}

} // namespace

TEST(PulpoAtomicOps, EachOperationIsItsFormulaInFloat64)
{
    std::mt19937 rng(9);
    for (pulpo::Shape s : { pulpo::Shape{ 3, 12, 5, 4 }, pulpo::Shape{ 2, 4, 7, 1 },
                            pulpo::Shape{ 1, 32, 32, 3 } }) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + " k=" + std::to_string(s.k));
        const auto a = random_values(s.batch * s.m * s.n, rng);
        const auto xn = random_values(s.batch * s.n * s.k, rng);
        const auto xm = random_values(s.batch * s.m * s.k, rng);
        const auto ym = random_values(s.batch * s.m * s.k, rng);
        const auto yn = random_values(s.batch * s.n * s.k, rng);
        std::vector<cf32> z(s.batch * s.m * s.k), h(s.batch * s.n * s.k), z0(z.size());
        pulpo::mvp(s, a.data(), xn.data(), ym.data(), z.data());
        pulpo::mvp(s, a.data(), xn.data(), nullptr, z0.data());
        const float tau = 0.37f;
        pulpo::hermitian_step(s, a.data(), xm.data(), yn.data(), tau, h.data());
        std::vector<cf32> in_place = yn;
        pulpo::hermitian_step(s, a.data(), xm.data(), in_place.data(), tau, in_place.data());
        for (std::size_t b = 0; b < s.batch; ++b) {
            const ref::MatrixD A = block(a, b, s.m, s.n);
            EXPECT_LT(worst(z, A * block(xn, b, s.n, s.k) + block(ym, b, s.m, s.k), b), 1e-4);
            EXPECT_LT(worst(z0, A * block(xn, b, s.n, s.k), b), 1e-4);
            const ref::MatrixD want =
                block(yn, b, s.n, s.k) - double(tau) * A.adjoint() * block(xm, b, s.m, s.k);
            EXPECT_LT(worst(h, want, b), 1e-4);
            EXPECT_LT(worst(in_place, want, b), 1e-4);
        }
    }
    std::vector<cf32> v{ { 2.0f, -0.1f }, { -0.3f, 5.0f } }, out(2);
    pulpo::prox_box(v.data(), 2, 0.5f, 0.7f, 0.6f, out.data());
    EXPECT_EQ(out[0], cf32(0.7f, -0.05f));
    EXPECT_EQ(out[1], cf32(-0.15f, 0.6f));
}

// BOX as PULPO runs it, three calls a step: r = H x - y (M), z = x - tau H^H r (H),
// x = prox(z) (P); the same iterates as lib/core/box's Gram form, which a detector uses.
TEST(PulpoAtomicOps, BoxIsThreeCallsAStep)
{
    std::mt19937 rng(10);
    const pulpo::Shape s{ 4, 16, 16, 6 }; // 4 subcarriers of 16x16, 6 symbols each
    const box::BoxBounds bounds = box::box_bounds(Constellation(Modulation::qpsk));
    auto h = random_values(s.batch * s.m * s.n, rng);
    for (auto& v : h)
        v *= std::sqrt(0.5f);
    const auto y = random_values(s.batch * s.m * s.k, rng);
    std::vector<cf32> minus_y(y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
        minus_y[i] = -y[i];
    const unsigned iterations = 20;
    std::vector<cf32> x(s.batch * s.n * s.k), r(s.batch * s.m * s.k);
    std::vector<float> tau(s.batch);
    for (std::size_t b = 0; b < s.batch; ++b) {
        const ref::MatrixD H = block(h, b, s.m, s.n);
        tau[b] = box::default_step(ref::MatrixD(H.adjoint() * H).cast<cf32>());
    }
    for (unsigned it = 0; it < iterations; ++it)
        for (std::size_t b = 0; b < s.batch; ++b) { // per problem: its own step
            const pulpo::Shape one{ 1, s.m, s.n, s.k };
            const cf32* hb = h.data() + b * s.m * s.n;
            cf32* xb = x.data() + b * s.n * s.k;
            cf32* rb = r.data() + b * s.m * s.k;
            pulpo::mvp(one, hb, xb, minus_y.data() + b * s.m * s.k, rb);
            pulpo::hermitian_step(one, hb, rb, xb, tau[b], xb);
            pulpo::prox_box(xb, s.n * s.k, 1.0f, bounds.re, bounds.im, xb);
        }
    for (std::size_t b = 0; b < s.batch; ++b) {
        const ref::MatrixD H = block(h, b, s.m, s.n);
        const box::MatrixC g = ref::MatrixD(H.adjoint() * H).cast<cf32>();
        const box::MatrixC y_mf = ref::MatrixD(H.adjoint() * block(y, b, s.m, s.k)).cast<cf32>();
        box::MatrixC want = box::MatrixC::Zero(s.n, s.k);
        box::BoxScratch scratch;
        box::box_iterate(g, y_mf, tau[b], bounds, {}, iterations, want, scratch);
        for (std::size_t j = 0; j < s.n; ++j)
            for (std::size_t c = 0; c < s.k; ++c)
                EXPECT_LT(std::abs(x[(b * s.n + j) * s.k + c] - want(j, c)), 1e-4f);
    }
}
