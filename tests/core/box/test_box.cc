/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The BOX iteration (lib/core/box/box.cc) against a float64 loop written from the formula,
// and its fixed point against the optimality conditions of box-constrained least squares.

#include "core/box/box.h"
#include "reference.h"
#include <gtest/gtest.h>
#include <cmath>
#include <random>

using namespace mimodet;
using box::MatrixC;

namespace {

using ref::MatrixD;
using ref::VectorD;

MatrixD random_channel(std::size_t b, std::size_t u, std::mt19937& rng)
{
    std::normal_distribution<double> g(0.0, std::sqrt(0.5));
    MatrixD h(b, u);
    for (std::size_t r = 0; r < b; ++r)
        for (std::size_t c = 0; c < u; ++c)
            h(r, c) = cf64(g(rng), g(rng));
    return h;
}

MatrixC to_float(const MatrixD& m) { return m.cast<cf32>(); }

double clamp(double v, double a) { return v > a ? a : (v < -a ? -a : v); }

//! x <- P(v - tau (G v - y_mf)) with FISTA's v, one complex entry at a time, float64.
VectorD reference_box(const MatrixD& g,
                      const VectorD& y_mf,
                      double tau,
                      double a_re,
                      double a_im,
                      VectorD x,
                      unsigned iterations,
                      bool accelerated)
{
    VectorD previous = x;
    double t = 1.0;
    for (unsigned k = 0; k < iterations; ++k) {
        const double t_next = (1.0 + std::sqrt(1.0 + 4.0 * t * t)) / 2.0;
        const double beta = accelerated ? (t - 1.0) / t_next : 0.0;
        t = t_next;
        VectorD v(x.size());
        for (long i = 0; i < x.size(); ++i)
            v(i) = x(i) + beta * (x(i) - previous(i));
        previous = x;
        for (long i = 0; i < x.size(); ++i) {
            cf64 grad = -y_mf(i);
            for (long j = 0; j < x.size(); ++j)
                grad += g(i, j) * v(j);
            const cf64 z = v(i) - tau * grad;
            x(i) = cf64(clamp(z.real(), a_re), clamp(z.imag(), a_im));
        }
    }
    return x;
}

} // namespace

TEST(Box, BoundsAreTheConstellationsLargestAmplitudePerAxis)
{
    const box::BoxBounds qpsk = box::box_bounds(Constellation(Modulation::qpsk));
    EXPECT_NEAR(qpsk.re, 1.0 / std::sqrt(2.0), 1e-6);
    EXPECT_NEAR(qpsk.im, 1.0 / std::sqrt(2.0), 1e-6);
    const box::BoxBounds qam16 = box::box_bounds(Constellation(Modulation::qam16));
    EXPECT_NEAR(qam16.re, 3.0 / std::sqrt(10.0), 1e-6);
    const box::BoxBounds qam256 = box::box_bounds(Constellation(Modulation::qam256));
    EXPECT_NEAR(qam256.im, 15.0 / std::sqrt(170.0), 1e-6);
    // TS 38.211 5.1.2: BPSK lies on the diagonal, (1 + j) / sqrt(2) and its negative.
    const box::BoxBounds bpsk = box::box_bounds(Constellation(Modulation::bpsk));
    EXPECT_NEAR(bpsk.re, 1.0 / std::sqrt(2.0), 1e-6);
    EXPECT_NEAR(bpsk.im, 1.0 / std::sqrt(2.0), 1e-6);
}

TEST(Box, DefaultStepIsWithinOneOverTheLargestEigenvalue)
{
    std::mt19937 rng(5);
    for (auto [b, u] : { std::pair<std::size_t, std::size_t>{ 16, 16 }, { 128, 16 }, { 8, 2 } }) {
        const MatrixD h = random_channel(b, u, rng);
        const MatrixD g = h.adjoint() * h;
        const double lambda_max =
            Eigen::SelfAdjointEigenSolver<MatrixD>(g).eigenvalues().maxCoeff();
        const double tau = box::default_step(to_float(g));
        EXPECT_LE(tau, 1.0 / lambda_max * (1.0 + 1e-5)) << b << "x" << u;
        // Gershgorin loses at most a factor U (the row sum of U entries each <= lambda_max).
        EXPECT_GE(tau, 1.0 / (lambda_max * double(u))) << b << "x" << u;
    }
    EXPECT_EQ(box::default_step(MatrixC::Zero(4, 4)), 0.0f);
}

TEST(Box, MomentumIsFistas)
{
    const std::vector<float> m = box::fista_momentum(50);
    ASSERT_EQ(m.size(), 50u);
    EXPECT_EQ(m[0], 0.0f);
    EXPECT_NEAR(m[1], 0.618034 / 2.193527, 1e-5); // (t1 - 1) / t2
    for (std::size_t k = 1; k < m.size(); ++k) {
        EXPECT_GT(m[k], m[k - 1]);
        EXPECT_LT(m[k], 1.0f);
    }
}

TEST(Box, IterationsMatchAFloat64LoopOfTheFormula)
{
    std::mt19937 rng(7);
    const Constellation c(Modulation::qam16);
    const box::BoxBounds bounds = box::box_bounds(c);
    for (bool accelerated : { false, true }) {
        SCOPED_TRACE(accelerated ? "accelerated" : "plain");
        const std::size_t b = 12, u = 8, n = 5;
        const MatrixD h = random_channel(b, u, rng);
        const MatrixD g = h.adjoint() * h;
        MatrixD y(b, n);
        std::uniform_int_distribution<std::size_t> pick(0, c.size() - 1);
        std::normal_distribution<double> noise(0.0, 0.1);
        for (std::size_t k = 0; k < n; ++k) {
            VectorD s(u);
            for (std::size_t j = 0; j < u; ++j)
                s(j) = cf64(c.points()[pick(rng)]);
            y.col(k) = h * s;
            for (std::size_t r = 0; r < b; ++r)
                y(r, k) += cf64(noise(rng), noise(rng));
        }
        const MatrixD y_mf = h.adjoint() * y;
        const double tau = 0.9 / Eigen::SelfAdjointEigenSolver<MatrixD>(g).eigenvalues().maxCoeff();
        const unsigned iterations = 25;
        MatrixC x = MatrixC::Zero(u, n);
        box::BoxScratch scratch;
        box::box_iterate(to_float(g), to_float(y_mf), float(tau), bounds,
                         accelerated ? box::fista_momentum(iterations) : std::vector<float>{},
                         iterations, x, scratch);
        for (std::size_t k = 0; k < n; ++k) {
            const VectorD expected = reference_box(g, y_mf.col(k), tau, bounds.re, bounds.im,
                                                   VectorD::Zero(u), iterations, accelerated);
            for (std::size_t j = 0; j < u; ++j) {
                EXPECT_NEAR(x(j, k).real(), expected(j).real(), 2e-4);
                EXPECT_NEAR(x(j, k).imag(), expected(j).imag(), 2e-4);
                EXPECT_LE(std::abs(x(j, k).real()), bounds.re);
                EXPECT_LE(std::abs(x(j, k).imag()), bounds.im);
            }
        }
    }
}

// The limit is the box-constrained least-squares solution: per real coordinate the
// gradient G x - y_mf vanishes inside the box and points outward on its faces (KKT),
// and no feasible point does better.
TEST(Box, ConvergesToTheConstrainedLeastSquaresOptimum)
{
    std::mt19937 rng(11);
    const box::BoxBounds bounds = box::box_bounds(Constellation(Modulation::qpsk));
    const std::size_t b = 16, u = 16; // load 1: many coordinates end on the faces
    const MatrixD h = random_channel(b, u, rng);
    const MatrixD g = h.adjoint() * h;
    VectorD y(b);
    std::normal_distribution<double> noise(0.0, 0.5);
    for (std::size_t r = 0; r < b; ++r)
        y(r) = cf64(noise(rng), noise(rng));
    y += h * VectorD::Constant(u, cf64(0.7, -0.7));
    const VectorD y_mf = h.adjoint() * y;
    MatrixC x = MatrixC::Zero(u, 1);
    box::BoxScratch scratch;
    const unsigned iterations = 4000;
    box::box_iterate(to_float(g), to_float(MatrixD(y_mf)), box::default_step(to_float(g)),
                     bounds, box::fista_momentum(iterations), iterations, x, scratch);
    const VectorD xd = x.col(0).cast<cf64>();
    const VectorD grad = g * xd - y_mf;
    const double a = bounds.re, scale = y_mf.cwiseAbs().maxCoeff();
    int on_faces = 0;
    for (std::size_t j = 0; j < u; ++j)
        for (int part = 0; part < 2; ++part) {
            const double xv = part ? xd(j).imag() : xd(j).real();
            const double gv = part ? grad(j).imag() : grad(j).real();
            if (xv >= a - 1e-5) {
                EXPECT_LE(gv, 1e-3 * scale); // pushing outward at the upper face
                ++on_faces;
            } else if (xv <= -a + 1e-5) {
                EXPECT_GE(gv, -1e-3 * scale);
                ++on_faces;
            } else {
                EXPECT_NEAR(gv, 0.0, 1e-3 * scale);
            }
        }
    EXPECT_GT(on_faces, 0);
    auto cost = [&](const VectorD& v) { return (y - h * v).squaredNorm(); };
    const double best = cost(xd);
    std::uniform_real_distribution<double> in_box(-a, a);
    for (int trial = 0; trial < 2000; ++trial) {
        VectorD v(u);
        for (std::size_t j = 0; j < u; ++j)
            v(j) = cf64(in_box(rng), in_box(rng));
        ASSERT_LE(best, cost(v) * (1.0 + 1e-6));
        // and small steps away from the optimum, kept inside the box
        VectorD w = xd + 0.01 * v;
        for (std::size_t j = 0; j < u; ++j)
            w(j) = cf64(clamp(w(j).real(), a), clamp(w(j).imag(), a));
        ASSERT_LE(best, cost(w) * (1.0 + 1e-6));
    }
}

// When the least-squares solution lies inside the box the constraint is idle and BOX is
// zero forcing.
TEST(Box, InsideTheBoxItIsZeroForcing)
{
    std::mt19937 rng(13);
    const box::BoxBounds bounds{ 10.0f, 10.0f };
    const MatrixD h = random_channel(32, 4, rng);
    const MatrixD g = h.adjoint() * h;
    VectorD s(4);
    s << cf64(0.3, -0.2), cf64(-0.5, 0.1), cf64(0.0, 0.4), cf64(0.2, 0.2);
    VectorD y = h * s;
    const VectorD y_mf = h.adjoint() * y;
    const VectorD zf = g.fullPivLu().solve(y_mf);
    MatrixC x = MatrixC::Zero(4, 1);
    box::BoxScratch scratch;
    box::box_iterate(to_float(g), to_float(MatrixD(y_mf)), box::default_step(to_float(g)),
                     bounds, box::fista_momentum(300), 300, x, scratch);
    for (int j = 0; j < 4; ++j)
        EXPECT_LT(std::abs(cf64(x(j, 0)) - zf(j)), 1e-4);
}
