/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// APSM training on the GPU (lib/cuda/apsm/apsm_trainer.h) against apsm::project, the CPU
// loop, on the same problem: every coefficient, the linear part and the error sums equal to
// rounding (both float64). Then the whole GPU receiver (cuda_apsm_receiver.h) against the
// CPU one: the same decisions, noise variances and LLRs within float32 tolerance.

#include "core/apsm/apsm.h"
#include "core/apsm/noma_scenario.h"
#include "gpu_skip.h"
#include <cuda/apsm/apsm_trainer.h>
#include <mimodet/apsm.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

using namespace mimodet;

namespace {

apsm::NomaTransmission transmission(std::size_t M, std::size_t K, Modulation mod, std::size_t T)
{
    apsm::NomaScenario s;
    s.antennas = M;
    s.users = K;
    s.training_symbols = T;
    s.data_symbols = 800;
    s.modulation = mod;
    s.snr_db = 22.0;
    s.seed = 9;
    return simulate_noma(s);
}

double max_abs(const std::vector<double>& v)
{
    double m = 0.0;
    for (double x : v)
        m = std::max(m, std::abs(x));
    return m;
}

void expect_close(const std::vector<double>& got,
                  const std::vector<double>& want,
                  double rel,
                  const std::string& what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    const double scale = std::max(max_abs(want), 1e-300);
    for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], rel * scale) << what << " [" << i << "]";
}

} // namespace

TEST(CudaApsmTrainer, MatchesTheCpuLoop)
{
    SKIP_WITHOUT_GPU();
    struct Case {
        std::size_t M, K, T, W;
        Modulation mod;
        bool ls;
        std::size_t max_dictionary = 0;
    };
    for (const Case c : { Case{ 16, 6, 685, 20, Modulation::qpsk, true },
                          Case{ 4, 6, 300, 20, Modulation::qpsk, true },
                          Case{ 8, 3, 200, 7, Modulation::qam16, false },
                          Case{ 5, 1, 150, 32, Modulation::qam64, true },
                          Case{ 4, 2, 1200, 20, Modulation::qpsk, true },
                          Case{ 1, 2, 685, 20, Modulation::qam16, true },
                          Case{ 3, 6, 685, 20, Modulation::bpsk, true },
                          Case{ 16, 6, 685, 20, Modulation::qpsk, true, 600 } }) {
        const std::string what = std::to_string(c.M) + "x" + std::to_string(c.K) + " T" +
                                 std::to_string(c.T) + " W" + std::to_string(c.W) + " max " +
                                 std::to_string(c.max_dictionary);
        const auto tr = transmission(c.M, c.K, c.mod, c.T);
        ApsmParams p;
        p.window = c.W;
        p.least_squares_start = c.ls;
        p.max_dictionary = c.max_dictionary;
        const apsm::ApsmReceiver rx(c.M, c.K, p);
        const apsm::TrainingProblem problem =
            rx.prepare_training(tr.training_rx.data(), tr.training_tx.data(), c.T);
        const apsm::TrainingResult want = apsm::project(p, problem);
        cuda::CudaApsmTrainer gpu;
        const apsm::TrainingResult got = gpu.project(p, problem);
        EXPECT_GT(gpu.last_gpu_ms(), 0.0);
        expect_close(got.coefficient, want.coefficient, 1e-9, what + " gamma");
        expect_close(got.linear, want.linear, 1e-9, what + " c");
        expect_close(got.error_full, want.error_full, 1e-9, what + " full error");
        expect_close(got.error_linear, want.error_linear, 1e-9, what + " linear error");
        expect_close(got.error_start, want.error_start, 1e-9, what + " start error");
        expect_close(got.error_apriori, want.error_apriori, 1e-9, what + " a-priori error");
        EXPECT_GT(max_abs(want.coefficient), 0.0) << what; // the loop did something
    }
}

TEST(CudaApsmTrainer, RefusesWhatDoesNotFit)
{
    SKIP_WITHOUT_GPU();
    const auto tr = transmission(4, 2, Modulation::qpsk, 20);
    const apsm::ApsmReceiver rx(4, 2);
    const apsm::TrainingProblem problem =
        rx.prepare_training(tr.training_rx.data(), tr.training_tx.data(), 20);
    cuda::CudaApsmTrainer gpu;
    ApsmParams p;
    p.window = cuda::CudaApsmTrainer::kMaxWindow + 1;
    EXPECT_THROW(gpu.project(p, problem), std::invalid_argument);
    // The device's limit on training symbols (shared memory per block), and beyond it.
    const std::size_t most = gpu.max_training_symbols();
    std::printf("this GPU trains on at most %zu symbols\n", most);
    EXPECT_GE(most, 685u);
    EXPECT_LE(most, cuda::CudaApsmTrainer::kMaxTrainingSymbols);
    const auto big = transmission(4, 2, Modulation::qpsk, most + 1);
    const apsm::TrainingProblem too_long =
        rx.prepare_training(big.training_rx.data(), big.training_tx.data(), most + 1);
    EXPECT_THROW(gpu.project(ApsmParams{}, too_long), std::invalid_argument);
}

TEST(CudaApsmReceiver, MatchesTheCpuReceiver)
{
    SKIP_WITHOUT_GPU();
    for (const Modulation mod : { Modulation::qpsk, Modulation::qam16 }) {
        const std::size_t M = 8, K = 6, T = 400, N = 800, Q = bits_per_symbol(mod);
        const auto tr = transmission(M, K, mod, T);
        ApsmConfig c;
        c.num_antennas = M;
        c.num_users = K;
        c.modulation = mod;
        auto cpu = make_apsm_detector(c);
        c.backend = Backend::cuda;
        auto gpu = make_apsm_detector(c);
        ASSERT_EQ(gpu->name(), "cuda-apsm");
        cpu->train(tr.training_rx.data(), tr.training_tx.data(), T);
        gpu->train(tr.training_rx.data(), tr.training_tx.data(), T);
        for (std::size_t k = 0; k < K; ++k)
            EXPECT_NEAR(gpu->noise_variance(k), cpu->noise_variance(k),
                        1e-9 * cpu->noise_variance(k));
        EXPECT_EQ(gpu->stats().linear_fallbacks, cpu->stats().linear_fallbacks);
        std::vector<cf32> zc(N * K), zg(N * K);
        std::vector<float> lc(N * K * Q), lg(N * K * Q);
        cpu->detect(tr.data_rx.data(), N, zc.data(), lc.data());
        gpu->detect(tr.data_rx.data(), N, zg.data(), lg.data());
        std::size_t sign_flips = 0;
        for (std::size_t i = 0; i < N * K; ++i)
            EXPECT_LT(std::abs(zg[i] - zc[i]), 1e-3f * std::max(1.0f, std::abs(zc[i]))) << i;
        for (std::size_t i = 0; i < lc.size(); ++i) {
            // float32 symbols: an LLR moves by rho times a few 1e-4 at most
            EXPECT_NEAR(lg[i], lc[i], 2e-3f * std::max(1.0f, std::abs(lc[i])) + 1e-2f) << i;
            sign_flips += (lg[i] > 0) != (lc[i] > 0) && std::abs(lc[i]) > 1e-2f;
        }
        EXPECT_EQ(sign_flips, 0u);
    }
}

// Samples near float's range: the GPU backend erases the vector as the CPU does (the
// erasure is in the code both share, SoftApsmDetector::detect).
TEST(CudaApsmReceiver, SamplesNearFloatsRangeAreErasedNotInfinite)
{
    SKIP_WITHOUT_GPU();
    const std::size_t M = 4, K = 6, T = 300, N = 6, Q = 4;
    const auto tr = transmission(M, K, Modulation::qam16, T);
    ApsmConfig c;
    c.num_antennas = M;
    c.num_users = K;
    c.modulation = Modulation::qam16;
    c.backend = Backend::cuda;
    auto gpu = make_apsm_detector(c);
    ASSERT_EQ(gpu->name(), "cuda-apsm");
    gpu->train(tr.training_rx.data(), tr.training_tx.data(), T);
    std::vector<cf32> y(tr.data_rx.begin(), tr.data_rx.begin() + N * M);
    const float huge = std::numeric_limits<float>::max();
    for (std::size_t m = 0; m < M; ++m)
        y[3 * M + m] = cf32(huge, m % 2 ? -huge : huge);
    std::vector<cf32> z(N * K);
    std::vector<float> llr(N * K * Q);
    gpu->detect(y.data(), N, z.data(), llr.data());
    for (std::size_t i = 0; i < N * K; ++i) {
        ASSERT_TRUE(std::isfinite(z[i].real()) && std::isfinite(z[i].imag())) << i;
        if (i / K == 3) {
            EXPECT_EQ(z[i], cf32(0.0f, 0.0f)) << i;
        }
    }
    for (std::size_t i = 0; i < llr.size(); ++i) {
        ASSERT_TRUE(std::isfinite(llr[i])) << i;
        if (i / (K * Q) == 3) {
            EXPECT_EQ(llr[i], 0.0f) << i;
        }
    }
    EXPECT_EQ(gpu->stats().erased_vectors, 1u);
}
