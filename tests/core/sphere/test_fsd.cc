/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The fixed-complexity sphere decoder (lib/core/sphere/fsd.h) against float64 references:
// its QR and ordering against Eigen in double, its tree against exhaustive ML and exact
// max-log over every one of the M^U vectors.

#include "core/sphere/fsd.h"
#include <gtest/gtest.h>
#include <Eigen/Dense>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

using namespace mimodet;
using namespace mimodet::sphere;

namespace {

using cd = std::complex<double>;
using MatrixD = Eigen::Matrix<cd, Eigen::Dynamic, Eigen::Dynamic>;

struct Trial {
    std::vector<cf32> h, y;          // [B][U], [B]
    std::vector<std::uint8_t> sent;  // [U] point indices
};

//! i.i.d. CN(0,1) channel, uniform symbols, AWGN of variance n0 per complex sample.
Trial make_trial(std::mt19937& rng,
                 std::size_t B,
                 std::size_t U,
                 const Constellation& c,
                 double n0)
{
    std::normal_distribution<float> g(0.0f, std::sqrt(0.5f));
    std::uniform_int_distribution<int> pick(0, static_cast<int>(c.size()) - 1);
    Trial t;
    t.h.resize(B * U);
    for (auto& v : t.h)
        v = cf32(g(rng), g(rng));
    t.sent.resize(U);
    for (auto& s : t.sent)
        s = static_cast<std::uint8_t>(pick(rng));
    t.y.resize(B);
    const float sigma = static_cast<float>(std::sqrt(n0));
    for (std::size_t b = 0; b < B; ++b) {
        cf32 acc(sigma * g(rng), sigma * g(rng));
        for (std::size_t u = 0; u < U; ++u)
            acc += t.h[b * U + u] * c.points()[t.sent[u]];
        t.y[b] = acc;
    }
    return t;
}

//! N0 of the project's SNR, U Es / N0 with Es = 1 (docs/data-contract.md).
double n0_at(double snr_db, std::size_t U) { return double(U) / std::pow(10.0, snr_db / 10.0); }

std::size_t bit_errors(const Constellation& c,
                       const std::uint8_t* got,
                       const std::uint8_t* sent,
                       std::size_t U)
{
    std::size_t e = 0;
    for (std::size_t u = 0; u < U; ++u)
        for (std::size_t p = 0; p < c.bits_per_symbol(); ++p)
            e += c.bit_of(got[u], p) != c.bit_of(sent[u], p);
    return e;
}

//! The FSD's hard decisions in user order.
void fsd_decide(const FsdChannel& ch,
                const Constellation& c,
                const cf32* y,
                std::size_t T,
                std::uint8_t* points)
{
    std::vector<FsdPath> list;
    const std::size_t best = fsd_candidates(ch, c, y, T, 0, list);
    for (std::size_t col = 0; col < ch.users; ++col)
        points[ch.user_of_column[col]] = list[best].point[col];
}

} // namespace

TEST(Fsd, SortedQrReproducesTheOrderedChannelAndTheOrderFollowsTheRule)
{
    std::mt19937 rng(7);
    const Constellation c(Modulation::qpsk);
    for (auto [B, U, T] : { std::tuple<std::size_t, std::size_t, std::size_t>{ 4, 4, 1 },
                            { 8, 6, 2 },
                            { 8, 8, 1 },
                            { 5, 3, 0 } }) {
        SCOPED_TRACE(std::to_string(B) + "x" + std::to_string(U) + " T=" + std::to_string(T));
        const Trial t = make_trial(rng, B, U, c, 0.1);
        FsdChannel ch;
        prepare_fsd_channel(t.h.data(), B, U, T, ch);
        ASSERT_TRUE(ch.usable);
        EXPECT_FALSE(ch.regularized);
        // Q R = H with its columns in detection order; R upper triangular, real diagonal.
        MatrixD q(B, U), r(U, U), hp(B, U);
        for (std::size_t i = 0; i < U; ++i)
            for (std::size_t j = 0; j < U; ++j)
                r(i, j) = cd(ch.r[i * U + j].real(), ch.r[i * U + j].imag());
        for (std::size_t col = 0; col < U; ++col)
            for (std::size_t b = 0; b < B; ++b) {
                q(b, col) = std::conj(cd(ch.qh[col * B + b].real(), ch.qh[col * B + b].imag()));
                const cf32 v = t.h[b * U + ch.user_of_column[col]];
                hp(b, col) = cd(v.real(), v.imag());
            }
        EXPECT_LT((q * r - hp).norm() / hp.norm(), 1e-5);
        EXPECT_LT((q.adjoint() * q - MatrixD::Identity(U, U)).norm(), 1e-5);
        for (std::size_t i = 0; i < U; ++i) {
            EXPECT_GT(r(i, i).real(), 0.0);
            EXPECT_NEAR(r(i, i).imag(), 0.0, 1e-6);
            for (std::size_t j = 0; j < i; ++j)
                EXPECT_EQ(r(i, j), cd(0.0, 0.0));
        }
        // Every user once; each level took the stream the rule names among those left:
        // the largest noise amplification on the T fully expanded levels, else the
        // smallest.
        std::vector<int> left(U);
        for (std::size_t u = 0; u < U; ++u)
            left[u] = static_cast<int>(u);
        for (std::size_t level = 0; level < U; ++level) {
            MatrixD hs(B, left.size());
            for (std::size_t i = 0; i < left.size(); ++i)
                for (std::size_t b = 0; b < B; ++b) {
                    const cf32 v = t.h[b * U + left[i]];
                    hs(b, i) = cd(v.real(), v.imag());
                }
            const MatrixD inv = (hs.adjoint() * hs).inverse();
            std::size_t want = 0;
            for (std::size_t i = 1; i < left.size(); ++i)
                if (level < T ? inv(i, i).real() > inv(want, want).real()
                              : inv(i, i).real() < inv(want, want).real())
                    want = i;
            EXPECT_EQ(ch.user_of_column[U - 1 - level], left[want]) << "level " << level;
            left.erase(left.begin() + static_cast<long>(want));
        }
    }
}

TEST(Fsd, ExpandingEveryLevelIsExhaustiveMlAndItsLlrsAreExactMaxLog)
{
    // With T = U the list holds every vector: the best path is the ML solution and the
    // LLRs are eq. 9 exactly (up to float32).
    std::mt19937 rng(11);
    for (auto [m, U] : { std::pair<Modulation, std::size_t>{ Modulation::qpsk, 4 },
                         { Modulation::qam16, 3 } }) {
        const Constellation c(m);
        const std::size_t B = U + 1, Q = c.bits_per_symbol();
        for (int k = 0; k < 40; ++k) {
            const double n0 = n0_at(k % 2 ? 12.0 : 20.0, U);
            const Trial t = make_trial(rng, B, U, c, n0);
            FsdChannel ch;
            prepare_fsd_channel(t.h.data(), B, U, U, ch);
            std::vector<FsdPath> list;
            const std::size_t best = fsd_candidates(ch, c, t.y.data(), U, 0, list);
            std::vector<std::uint8_t> got(U), ml(U);
            for (std::size_t col = 0; col < U; ++col)
                got[ch.user_of_column[col]] = list[best].point[col];
            ml_exhaustive(t.h.data(), t.y.data(), B, U, c, ml.data());
            EXPECT_EQ(got, ml) << "trial " << k;
            std::vector<float> llr(U * Q), want(U * Q);
            fsd_llrs(ch, c, list, static_cast<float>(n0), llr.data());
            maxlog_exhaustive(t.h.data(), t.y.data(), B, U, c, n0, want.data());
            for (std::size_t i = 0; i < U * Q; ++i)
                EXPECT_NEAR(llr[i], want[i], 2e-3 * std::abs(want[i]) + 2e-3)
                    << "trial " << k << " bit " << i;
        }
    }
}

TEST(Fsd, HardFsdOnFourByFour16QamIsWithinHalfADecibelOfMl)
{
    // roger2012 / the issue: 4x4 16-QAM i.i.d. Rayleigh, T = 1. The FSD at SNR s must do
    // at least as well as exhaustive ML at s - 0.5 dB, on the same channels and symbols.
    const Constellation c(Modulation::qam16);
    constexpr std::size_t B = 4, U = 4, kTrials = 1500;
    const double snr = 22.0;
    std::size_t fsd_errors = 0, ml_errors = 0, bits = 0;
    std::mt19937 rng(2012), rng_ml(2012);
    for (std::size_t k = 0; k < kTrials; ++k) {
        const Trial t = make_trial(rng, B, U, c, n0_at(snr, U));
        const Trial w = make_trial(rng_ml, B, U, c, n0_at(snr - 0.5, U));
        FsdChannel ch;
        prepare_fsd_channel(t.h.data(), B, U, 1, ch);
        std::uint8_t got[U], ml[U];
        fsd_decide(ch, c, t.y.data(), 1, got);
        ml_exhaustive(w.h.data(), w.y.data(), B, U, c, ml);
        fsd_errors += bit_errors(c, got, t.sent.data(), U);
        ml_errors += bit_errors(c, ml, w.sent.data(), U);
        bits += U * c.bits_per_symbol();
    }
    std::printf("4x4 16-QAM: FSD BER %.2e at %.1f dB, ML BER %.2e at %.1f dB (%zu bits)\n",
                double(fsd_errors) / double(bits), snr, double(ml_errors) / double(bits),
                snr - 0.5, bits);
    EXPECT_GT(ml_errors, 30u); // enough errors to compare
    EXPECT_LE(fsd_errors, ml_errors);
}

TEST(Sfsd, LlrSignsAgreeWithExactMaxLogOnFourByFour16Qam)
{
    // N_iter = 4 (the paper's 16-QAM value), T = 1: signs agree with exact max-log on at
    // least 99% of the bits; the magnitude error is printed.
    const Constellation c(Modulation::qam16);
    constexpr std::size_t B = 4, U = 4, Q = 4, kTrials = 300;
    std::mt19937 rng(5);
    std::size_t agree = 0, total = 0;
    double rel_error = 0.0;
    for (std::size_t k = 0; k < kTrials; ++k) {
        const double n0 = n0_at(k % 2 ? 16.0 : 22.0, U);
        const Trial t = make_trial(rng, B, U, c, n0);
        FsdChannel ch;
        prepare_fsd_channel(t.h.data(), B, U, 1, ch);
        std::vector<FsdPath> list;
        fsd_candidates(ch, c, t.y.data(), 1, 4, list);
        EXPECT_EQ(list.size(), 16u + 4u * 3u * Q);
        float llr[U * Q], want[U * Q];
        fsd_llrs(ch, c, list, static_cast<float>(n0), llr);
        maxlog_exhaustive(t.h.data(), t.y.data(), B, U, c, n0, want);
        for (std::size_t i = 0; i < U * Q; ++i) {
            ASSERT_TRUE(std::isfinite(llr[i]));
            agree += (llr[i] > 0) == (want[i] > 0);
            rel_error += std::abs(llr[i] - want[i]) / std::max(1e-6, double(std::abs(want[i])));
            ++total;
        }
    }
    std::printf("SFSD 4x4 16-QAM N_iter 4: signs agree on %.3f%% of %zu bits, mean relative "
                "|LLR| error %.3f\n",
                100.0 * double(agree) / double(total), total, rel_error / double(total));
    EXPECT_GE(double(agree) / double(total), 0.99);
}

TEST(Fsd, LlrsStayFiniteAndBoundedWithoutCounterHypothesesOrNoise)
{
    // The hard FSD's list (no extension) lacks counter-hypotheses for most bits below the
    // top level: those LLRs take the list's widest margin, with the best path's sign;
    // N0 = 0 is raised to the noise floor.
    const Constellation c(Modulation::qam16);
    constexpr std::size_t B = 4, U = 4, Q = 4;
    std::mt19937 rng(3);
    for (int k = 0; k < 50; ++k) {
        const Trial t = make_trial(rng, B, U, c, k % 2 ? 0.0 : 0.01);
        FsdChannel ch;
        prepare_fsd_channel(t.h.data(), B, U, 1, ch);
        std::vector<FsdPath> list;
        const std::size_t best = fsd_candidates(ch, c, t.y.data(), 1, 0, list);
        float widest = 0.0f;
        for (const auto& p : list)
            widest = std::max(widest, p.distance - list[best].distance);
        float llr[U * Q];
        fsd_llrs(ch, c, list, 0.0f, llr);
        for (std::size_t col = 0; col < U; ++col)
            for (std::size_t p = 0; p < Q; ++p) {
                const float v = llr[ch.user_of_column[col] * Q + p];
                ASSERT_TRUE(std::isfinite(v));
                EXPECT_LE(std::abs(v), widest / ch.noise_floor * 1.0001f);
                if (v != 0.0f) {
                    EXPECT_EQ(v > 0, c.bit_of(list[best].point[col], p) == 1);
                }
            }
    }
}

TEST(Fsd, BadChannelsAreErasedOrLoadedNeverSpread)
{
    const Constellation c(Modulation::qpsk);
    constexpr std::size_t B = 4, U = 4, Q = 2;
    std::mt19937 rng(9);
    Trial t = make_trial(rng, B, U, c, 0.05);
    FsdChannel ch;
    auto nan_h = t.h;
    nan_h[5] = cf32(NAN, 0.0f);
    prepare_fsd_channel(nan_h.data(), B, U, 1, ch);
    EXPECT_FALSE(ch.usable);
    const std::vector<cf32> zero(B * U, cf32(0.0f, 0.0f));
    prepare_fsd_channel(zero.data(), B, U, 1, ch);
    EXPECT_FALSE(ch.usable);

    // A user without a channel: erased alone, the QR loaded, the others detected.
    auto dead = t.h;
    for (std::size_t b = 0; b < B; ++b)
        dead[b * U + 2] = cf32(0.0f, 0.0f);
    prepare_fsd_channel(dead.data(), B, U, 1, ch);
    ASSERT_TRUE(ch.usable);
    EXPECT_TRUE(ch.regularized);
    EXPECT_EQ(ch.unusable_user[2], 1);
    EXPECT_EQ(ch.user_of_column[0], 2); // at the bottom of the tree
    std::vector<FsdPath> list;
    fsd_candidates(ch, c, t.y.data(), 1, 2, list);
    float llr[U * Q];
    fsd_llrs(ch, c, list, 0.05f, llr);
    for (std::size_t i = 0; i < U * Q; ++i) {
        ASSERT_TRUE(std::isfinite(llr[i]));
        if (i / Q == 2) {
            EXPECT_EQ(llr[i], 0.0f);
        }
    }

    // Two users with the same channel (rank-deficient): loaded, finite.
    auto twin = t.h;
    for (std::size_t b = 0; b < B; ++b)
        twin[b * U + 1] = twin[b * U + 0];
    prepare_fsd_channel(twin.data(), B, U, 1, ch);
    ASSERT_TRUE(ch.usable);
    EXPECT_TRUE(ch.regularized);
    fsd_candidates(ch, c, t.y.data(), 1, 2, list);
    fsd_llrs(ch, c, list, 0.05f, llr);
    for (float v : llr)
        EXPECT_TRUE(std::isfinite(v));

    EXPECT_THROW(prepare_fsd_channel(t.h.data(), 3, 4, 1, ch), std::invalid_argument);
    EXPECT_THROW(prepare_fsd_channel(t.h.data(), 16, 9, 1, ch), std::invalid_argument);
}
