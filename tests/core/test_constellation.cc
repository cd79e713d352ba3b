/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "reference.h"
#include <gtest/gtest.h>
#include <mimodet/constellation.h>
#include <random>

using namespace mimodet;

namespace {
const Modulation kAll[] = { Modulation::bpsk,
                            Modulation::qpsk,
                            Modulation::qam16,
                            Modulation::qam64,
                            Modulation::qam256 };
}

TEST(Constellation, MatchesTs38211FormulasForEveryPoint)
{
    for (auto m : kAll) {
        const Constellation c(m);
        const auto expected = ref::standard_points(m);
        ASSERT_EQ(c.size(), expected.size()) << to_string(m);
        for (std::size_t i = 0; i < c.size(); ++i) {
            EXPECT_NEAR(c.points()[i].real(), expected[i].real(), 1e-6)
                << to_string(m) << " " << i;
            EXPECT_NEAR(c.points()[i].imag(), expected[i].imag(), 1e-6)
                << to_string(m) << " " << i;
        }
    }
}

TEST(Constellation, SpotValuesFromTheStandard)
{
    // 16-QAM b = 0101: I = (1)(2-1) = 1, Q = (-1)(2-(-1)) = -3, over sqrt(10).
    const Constellation c16(Modulation::qam16);
    const std::uint8_t bits16[] = { 0, 1, 0, 1 };
    EXPECT_NEAR(c16.map(bits16).real(), 1.0 / std::sqrt(10.0), 1e-6);
    EXPECT_NEAR(c16.map(bits16).imag(), -3.0 / std::sqrt(10.0), 1e-6);
    // 64-QAM b = 000000 -> (3 + 3j)/sqrt(42); b = 001111 -> I=(1)(4-(-1)(2-(-1)))=7 ...
    // Q=(1)(4-(-1)(2+1))=7
    const Constellation c64(Modulation::qam64);
    const std::uint8_t zeros[] = { 0, 0, 0, 0, 0, 0 };
    EXPECT_NEAR(c64.map(zeros).real(), 3.0 / std::sqrt(42.0), 1e-6);
    const std::uint8_t corner[] = { 0, 0, 1, 1, 1, 1 };
    EXPECT_NEAR(c64.map(corner).real(), 7.0 / std::sqrt(42.0), 1e-6);
    EXPECT_NEAR(c64.map(corner).imag(), 7.0 / std::sqrt(42.0), 1e-6);
}

TEST(Constellation, UnitAverageEnergy)
{
    for (auto m : kAll) {
        const Constellation c(m);
        double e = 0;
        for (auto p : c.points())
            e += std::norm(p);
        EXPECT_NEAR(e / c.size(), 1.0, 1e-6) << to_string(m);
    }
}

TEST(Constellation, GrayNearestNeighboursDifferInOneBit)
{
    for (auto m : kAll) {
        const Constellation c(m);
        float dmin = 1e9f;
        for (std::size_t i = 0; i < c.size(); ++i)
            for (std::size_t j = i + 1; j < c.size(); ++j)
                dmin = std::min(dmin, std::abs(c.points()[i] - c.points()[j]));
        int pairs = 0;
        for (std::size_t i = 0; i < c.size(); ++i)
            for (std::size_t j = i + 1; j < c.size(); ++j)
                if (std::abs(c.points()[i] - c.points()[j]) < dmin * 1.001f) {
                    EXPECT_EQ(__builtin_popcount(static_cast<unsigned>(i ^ j)), 1)
                        << to_string(m) << " " << i << " " << j;
                    ++pairs;
                }
        EXPECT_GT(pairs, 0);
    }
}

TEST(Constellation, FastMaxLogDemapperEqualsBruteForce)
{
    std::mt19937 rng(7);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::uniform_real_distribution<float> rho_dist(0.1f, 50.0f);
    for (auto m : kAll) {
        const Constellation c(m);
        const auto pts = ref::standard_points(m);
        const std::size_t q = c.bits_per_symbol();
        for (int trial = 0; trial < 2000; ++trial) {
            // Points near the constellation and far outside it (|z| up to ~3).
            const cf32 z(n(rng) * (trial % 2 ? 1.5f : 0.5f),
                         n(rng) * (trial % 2 ? 1.5f : 0.5f));
            const float rho = rho_dist(rng);
            float fast[8], brute[8];
            double exact[8];
            c.demap_maxlog(z, rho, fast);
            c.demap_maxlog_bruteforce(z, rho, brute);
            ref::demap_bruteforce(pts, q, cf64(z), rho, exact);
            for (std::size_t p = 0; p < q; ++p) {
                const double tol = 1e-4 * std::max(1.0, std::abs(exact[p]));
                EXPECT_NEAR(fast[p], exact[p], tol) << to_string(m) << " bit " << p;
                EXPECT_NEAR(brute[p], exact[p], tol) << to_string(m) << " bit " << p;
            }
        }
    }
}

TEST(Constellation, LlrSignMeansBitOneWhenPositive)
{
    for (auto m : kAll) {
        const Constellation c(m);
        for (std::size_t i = 0; i < c.size(); ++i) {
            float llr[8];
            c.demap_maxlog(c.points()[i], 10.0f, llr);
            for (std::size_t p = 0; p < c.bits_per_symbol(); ++p)
                EXPECT_EQ(hard_bit(llr[p]), c.bit_of(i, p)) << to_string(m) << " " << i;
        }
    }
}

TEST(Constellation, ParseRejectsUnknownNames)
{
    EXPECT_EQ(parse_modulation("16QAM"), Modulation::qam16);
    EXPECT_EQ(parse_modulation("qam256"), Modulation::qam256);
    EXPECT_THROW(parse_modulation("8psk"), std::invalid_argument);
}
