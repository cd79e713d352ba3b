/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The APSM receiver behind include/mimodet/apsm.h on the CPU (lib/core/apsm/
// cpu_apsm_detector.h): the noise variance against the error actually seen on data, LLRs
// against the demapper and the symbols, erasures, untrained use, the backends' choice.

#include "core/apsm/cpu_apsm_detector.h"
#include "core/apsm/noma_scenario.h"
#include <mimodet/apsm.h>
#include <gtest/gtest.h>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

using namespace mimodet;

namespace {

apsm::NomaTransmission transmission(Modulation mod, std::size_t antennas, std::uint64_t seed)
{
    apsm::NomaScenario s;
    s.antennas = antennas;
    s.users = 6;
    s.training_symbols = 300;
    s.data_symbols = 1000;
    s.modulation = mod;
    s.snr_db = 20.0;
    s.seed = seed;
    return simulate_noma(s);
}

ApsmConfig config(Modulation mod, std::size_t antennas)
{
    ApsmConfig c;
    c.num_antennas = antennas;
    c.num_users = 6;
    c.modulation = mod;
    return c;
}

} // namespace

TEST(CpuApsmDetector, NoiseVarianceMatchesTheErrorOnData)
{
    // The a-priori errors of training predict the error on unseen data; the training MSE of
    // a kernel filter that holds every training sample would not.
    for (const std::size_t M : { 4u, 8u, 16u }) {
        const auto tr = transmission(Modulation::qpsk, M, 11);
        auto det = make_apsm_detector(config(Modulation::qpsk, M));
        det->train(tr.training_rx.data(), tr.training_tx.data(), 300);
        std::vector<cf32> z(1000 * 6);
        det->detect(tr.data_rx.data(), 1000, z.data(), nullptr);
        for (std::size_t k = 0; k < 6; ++k) {
            double err = 0.0;
            for (std::size_t t = 0; t < 1000; ++t)
                err += std::norm(std::complex<double>(z[t * 6 + k] - tr.data_tx[t * 6 + k]));
            err /= 1000.0;
            const double est = det->noise_variance(k);
            if (k == 0)
                std::printf("%zu antennas, user 0: noise variance %.4g, error on data %.4g\n", M, est, err);
            EXPECT_GT(est, 0.7 * err) << M << " antennas, user " << k;
            EXPECT_LT(est, 1.5 * err) << M << " antennas, user " << k;
        }
    }
}

TEST(CpuApsmDetector, LlrsAreTheDemappersWithTheNoiseVariance)
{
    const auto tr = transmission(Modulation::qam16, 8, 3);
    ApsmConfig c = config(Modulation::qam16, 8);
    c.llr_sign = LlrSign::positive_means_zero;
    c.llr_clip = 2.0f;
    auto det = make_apsm_detector(c);
    EXPECT_EQ(det->name(), "cpu-apsm");
    det->train(tr.training_rx.data(), tr.training_tx.data(), 300);
    const std::size_t N = 200, K = 6, Q = 4;
    std::vector<cf32> z(N * K);
    std::vector<float> llr(N * K * Q);
    det->detect(tr.data_rx.data(), N, z.data(), llr.data());
    const Constellation qam(Modulation::qam16);
    std::vector<float> want(Q);
    std::size_t clipped = 0;
    for (std::size_t t = 0; t < N; ++t)
        for (std::size_t k = 0; k < K; ++k) {
            qam.demap_maxlog_bruteforce(
                z[t * K + k], static_cast<float>(1.0 / det->noise_variance(k)), want.data());
            for (std::size_t p = 0; p < Q; ++p) {
                const float w = std::clamp(-want[p], -2.0f, 2.0f);
                clipped += std::abs(w) == 2.0f;
                EXPECT_NEAR(llr[(t * K + k) * Q + p], w, 1e-3f * std::max(1.0f, std::abs(w)));
            }
        }
    EXPECT_GT(clipped, 0u); // the clip was exercised
}

TEST(CpuApsmDetector, UntrainedAndBadVectorsAreErasures)
{
    const auto tr = transmission(Modulation::qpsk, 4, 5);
    auto det = make_apsm_detector(config(Modulation::qpsk, 4));
    EXPECT_FALSE(det->trained());
    EXPECT_EQ(det->noise_variance(0), 0.0);
    std::vector<cf32> z(10 * 6, cf32(5.0f, 5.0f));
    std::vector<float> llr(10 * 6 * 2, 5.0f);
    det->detect(tr.data_rx.data(), 10, z.data(), llr.data());
    for (cf32 v : z)
        EXPECT_EQ(v, cf32(0.0f, 0.0f));
    for (float v : llr)
        EXPECT_EQ(v, 0.0f);
    EXPECT_EQ(det->stats().untrained_vectors, 10u);

    det->train(tr.training_rx.data(), tr.training_tx.data(), 300);
    std::vector<cf32> y(tr.data_rx.begin(), tr.data_rx.begin() + 10 * 4);
    y[2 * 4 + 3] = cf32(0.0f, std::numeric_limits<float>::infinity());
    det->detect(y.data(), 10, z.data(), llr.data());
    for (std::size_t t = 0; t < 10; ++t)
        for (std::size_t i = 0; i < 6 * 2; ++i) {
            if (t == 2)
                EXPECT_EQ(llr[t * 12 + i], 0.0f);
            else
                EXPECT_NE(llr[t * 12 + i], 0.0f);
        }
    EXPECT_EQ(det->stats().erased_vectors, 1u);
    EXPECT_EQ(det->stats().vectors, 20u);
    EXPECT_EQ(det->stats().trainings, 1u);

    // A refused training keeps the previous one.
    const double before = det->noise_variance(0);
    std::vector<cf32> zero(300 * 4, cf32(0.0f, 0.0f));
    EXPECT_THROW(det->train(zero.data(), tr.training_tx.data(), 300), std::invalid_argument);
    EXPECT_TRUE(det->trained());
    EXPECT_EQ(det->noise_variance(0), before);
    EXPECT_EQ(det->stats().trainings, 1u);
}

// Finite samples near float's range overflowed the filters' float output to Inf (found by
// fuzz_apsm_training): such a vector is erased, as a NaN sample's is, in both precisions.
TEST(CpuApsmDetector, SamplesNearFloatsRangeAreErasedNotInfinite)
{
    const auto tr = transmission(Modulation::qam16, 4, 9);
    for (const ApsmPrecision precision : { ApsmPrecision::float64, ApsmPrecision::float32 }) {
        ApsmConfig c = config(Modulation::qam16, 4);
        c.cpu_precision = precision;
        auto det = make_apsm_detector(c);
        det->train(tr.training_rx.data(), tr.training_tx.data(), 300);
        std::vector<cf32> y(tr.data_rx.begin(), tr.data_rx.begin() + 6 * 4);
        const float huge = std::numeric_limits<float>::max();
        for (std::size_t m = 0; m < 4; ++m)
            y[3 * 4 + m] = cf32(huge, m % 2 ? -huge : huge);
        std::vector<cf32> z(6 * 6);
        std::vector<float> llr(6 * 6 * 4);
        det->detect(y.data(), 6, z.data(), llr.data());
        for (std::size_t t = 0; t < 6; ++t)
            for (std::size_t k = 0; k < 6; ++k) {
                const cf32 v = z[t * 6 + k];
                ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
                if (t == 3) {
                    EXPECT_EQ(v, cf32(0.0f, 0.0f));
                }
                for (std::size_t b = 0; b < 4; ++b) {
                    const float l = llr[(t * 6 + k) * 4 + b];
                    ASSERT_TRUE(std::isfinite(l));
                    if (t == 3) {
                        EXPECT_EQ(l, 0.0f);
                    }
                }
            }
        EXPECT_EQ(det->stats().erased_vectors, 1u);
    }
}

TEST(CpuApsmDetector, BackendsAndBadConfigurations)
{
    ApsmConfig c = config(Modulation::qpsk, 4);
    c.backend = Backend::automatic;
    std::string why;
    auto det = make_apsm_detector(c, &why);
    ASSERT_TRUE(det);
    if (!gpu_available()) {
        EXPECT_EQ(det->name(), "cpu-apsm");
        EXPECT_FALSE(why.empty());
        c.backend = Backend::cuda;
        EXPECT_THROW(make_apsm_detector(c), std::runtime_error);
    }
    c = config(Modulation::qpsk, 0);
    EXPECT_THROW(make_apsm_detector(c), std::invalid_argument);
    c = config(Modulation::qpsk, 4);
    c.params.window = 0;
    EXPECT_THROW(make_apsm_detector(c), std::invalid_argument);
    c = config(Modulation::qpsk, 4);
    c.params.kernel_variance = -1.0;
    EXPECT_THROW(make_apsm_detector(c), std::invalid_argument);
    c = config(Modulation::qpsk, 4);
    c.llr_clip = -1.0f;
    EXPECT_THROW(make_apsm_detector(c), std::invalid_argument);
    // More threads than libgomp can create aborted the process: a clear error instead.
    c = config(Modulation::qpsk, 4);
    c.backend = Backend::cpu;
    c.num_threads = 2147483647;
    EXPECT_THROW(make_apsm_detector(c), std::invalid_argument);
}

TEST(CpuApsmDetector, Float32DetectionMatchesFloat64)
{
    // The float32 path computes as the GPU does; against float64 on the same training:
    // symbols within float tolerance, the same decisions, the same erasures.
    for (const Modulation mod : { Modulation::qpsk, Modulation::qam16 }) {
        auto tr = transmission(mod, 8, 9);
        tr.data_rx[5 * 8 + 2] = cf32(NAN, 0.0f);
        ApsmConfig c = config(mod, 8);
        auto f64 = make_apsm_detector(c);
        c.cpu_precision = ApsmPrecision::float32;
        auto f32 = make_apsm_detector(c);
        EXPECT_EQ(f32->name(), "cpu-apsm-float32");
        f64->train(tr.training_rx.data(), tr.training_tx.data(), 300);
        f32->train(tr.training_rx.data(), tr.training_tx.data(), 300);
        const std::size_t N = 1000, K = 6, Q = bits_per_symbol(mod);
        std::vector<cf32> z64(N * K), z32(N * K);
        std::vector<float> l64(N * K * Q), l32(N * K * Q);
        f64->detect(tr.data_rx.data(), N, z64.data(), l64.data());
        f32->detect(tr.data_rx.data(), N, z32.data(), l32.data());
        std::size_t flips = 0;
        for (std::size_t i = 0; i < N * K; ++i)
            EXPECT_LT(std::abs(z32[i] - z64[i]), 1e-3f * std::max(1.0f, std::abs(z64[i]))) << i;
        for (std::size_t i = 0; i < l64.size(); ++i)
            flips += (l32[i] > 0) != (l64[i] > 0) && std::abs(l64[i]) > 1e-2f;
        EXPECT_EQ(flips, 0u) << to_string(mod);
        EXPECT_EQ(f32->stats().erased_vectors, 1u);
        EXPECT_EQ(z32[5 * K], cf32(0.0f, 0.0f));
    }
}
