/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The APSM receiver (lib/core/apsm/apsm.h): its training against a direct float64
// statement of mehlhose2022 eqs. 8-9 (every f_n(r_j) evaluated in full, the least-squares
// start by QR), its detection against a least-squares linear receiver trained on the same
// symbols, its scale invariance and its handling of bad input.

#include "core/apsm/apsm.h"
#include "core/apsm/noma_scenario.h"
#include <gtest/gtest.h>
#include <Eigen/Dense>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <vector>

using namespace mimodet;
using namespace mimodet::apsm;

namespace {

using cd = std::complex<double>;
using MatrixC = Eigen::Matrix<cd, Eigen::Dynamic, Eigen::Dynamic>;

//! Eqs. 8-9 as written: f_n evaluated in full at every sample of the window, each step.
struct Reference {
    std::vector<double> x;     // [D][2M]
    std::vector<double> c;     // [2M]
    std::vector<double> gamma; // [D]
};

Reference reference_training(const NomaTransmission& tr,
                             std::size_t M,
                             std::size_t K,
                             std::size_t user,
                             const ApsmParams& p)
{
    const std::size_t T = tr.training_rx.size() / M, L = 2 * M, D = 2 * T;
    double power = 0.0;
    for (const cf32 v : tr.training_rx)
        power += std::norm(cd(v));
    const double scale = std::sqrt(power / T);
    Reference ref;
    ref.x.resize(D * L);
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t m = 0; m < M; ++m) {
            const cd v = cd(tr.training_rx[t * M + m]) / scale;
            ref.x[2 * t * L + m] = v.real();
            ref.x[2 * t * L + M + m] = v.imag();
            ref.x[(2 * t + 1) * L + m] = v.imag();
            ref.x[(2 * t + 1) * L + M + m] = -v.real();
        }
    ref.c.assign(L, 0.0);
    ref.gamma.assign(D, 0.0);
    if (p.least_squares_start) { // g = u^T r fitted by QR, c = [Re u; -Im u] / w_L
        MatrixC R(T, M), b(T, 1);
        for (std::size_t t = 0; t < T; ++t) {
            for (std::size_t m = 0; m < M; ++m)
                R(t, m) = cd(tr.training_rx[t * M + m]) / scale;
            b(t, 0) = cd(tr.training_tx[t * K + user]);
        }
        const MatrixC u = R.householderQr().solve(b);
        for (std::size_t m = 0; m < M; ++m) {
            ref.c[m] = u(m, 0).real() / p.weight_linear;
            ref.c[M + m] = -u(m, 0).imag() / p.weight_linear;
        }
    }
    auto kg = [&](std::size_t i, const double* y) {
        double d2 = 0.0;
        for (std::size_t l = 0; l < L; ++l)
            d2 += (ref.x[i * L + l] - y[l]) * (ref.x[i * L + l] - y[l]);
        return std::exp(-d2 / (2.0 * p.kernel_variance));
    };
    auto f = [&](const double* y) {
        double v = 0.0;
        for (std::size_t l = 0; l < L; ++l)
            v += p.weight_linear * ref.c[l] * y[l];
        for (std::size_t i = 0; i < D; ++i)
            v += p.weight_gaussian * ref.gamma[i] * kg(i, y);
        return v;
    };
    for (std::size_t n = 0; n < D; ++n) {
        const std::size_t first = n + 1 >= p.window ? n + 1 - p.window : 0;
        std::vector<double> beta;
        for (std::size_t j = first; j <= n; ++j) {
            const double* xj = &ref.x[j * L];
            double kjj = p.weight_gaussian;
            for (std::size_t l = 0; l < L; ++l)
                kjj += p.weight_linear * xj[l] * xj[l];
            const cf32 s = tr.training_tx[(j / 2) * K + user];
            const double b = j % 2 == 0 ? s.real() : s.imag();
            const double inner = f(xj); // <f_n, kappa(r_j, .)> by the reproducing property
            double bj = 0.0;
            if (inner - b < -p.tolerance)
                bj = (b - inner - p.tolerance) / kjj;
            else if (inner - b > p.tolerance)
                bj = (b - inner + p.tolerance) / kjj;
            beta.push_back(bj);
        }
        const double q = 1.0 / static_cast<double>(beta.size());
        for (std::size_t j = first; j <= n; ++j) {
            const double s = q * beta[j - first];
            ref.gamma[j] += s;
            for (std::size_t l = 0; l < L; ++l)
                ref.c[l] += s * ref.x[j * L + l];
        }
    }
    return ref;
}

//! Nearest constellation point per symbol.
std::vector<std::uint8_t> decide(const std::vector<cf32>& z, const Constellation& c)
{
    std::vector<std::uint8_t> out(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) {
        float best = std::numeric_limits<float>::infinity();
        for (std::size_t p = 0; p < c.size(); ++p) {
            const float d = std::norm(z[i] - c.points()[p]);
            if (d < best) {
                best = d;
                out[i] = static_cast<std::uint8_t>(p);
            }
        }
    }
    return out;
}

std::size_t errors(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        n += a[i] != b[i];
    return n;
}

//! The least-squares linear receiver of the training symbols: U = R^+ B by QR.
std::vector<cf32> least_squares_detect(const NomaTransmission& tr, std::size_t M, std::size_t K)
{
    const std::size_t T = tr.training_rx.size() / M, N = tr.data_rx.size() / M;
    MatrixC R(T, M), B(T, K), Y(N, M);
    for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t m = 0; m < M; ++m)
            R(t, m) = cd(tr.training_rx[t * M + m]);
        for (std::size_t k = 0; k < K; ++k)
            B(t, k) = cd(tr.training_tx[t * K + k]);
    }
    for (std::size_t t = 0; t < N; ++t)
        for (std::size_t m = 0; m < M; ++m)
            Y(t, m) = cd(tr.data_rx[t * M + m]);
    const MatrixC Z = Y * R.householderQr().solve(B);
    std::vector<cf32> out(N * K);
    for (std::size_t t = 0; t < N; ++t)
        for (std::size_t k = 0; k < K; ++k)
            out[t * K + k] = cf32(Z(t, k));
    return out;
}

std::vector<cf32> apsm_detect(ApsmReceiver& rx, const NomaTransmission& tr, double gain = 1.0)
{
    const std::size_t M = rx.antennas(), K = rx.users();
    auto scaled = [gain](std::vector<cf32> v) {
        for (auto& s : v)
            s *= static_cast<float>(gain);
        return v;
    };
    rx.train(scaled(tr.training_rx).data(), tr.training_tx.data(), tr.training_rx.size() / M);
    const std::vector<cf32> y = scaled(tr.data_rx);
    std::vector<cf32> out(y.size() / M * K);
    rx.detect(y.data(), y.size() / M, out.data());
    return out;
}

} // namespace

TEST(Apsm, TrainingMatchesEqs8And9)
{
    for (const bool ls : { false, true }) {
        NomaScenario s;
        s.antennas = 4;
        s.users = 3;
        s.training_symbols = 60;
        s.data_symbols = 0;
        s.snr_db = 15.0;
        s.seed = 7;
        const NomaTransmission tr = simulate_noma(s);
        ApsmParams p;
        p.window = 8;
        p.least_squares_start = ls;
        // The loop itself (apsm::project), before install() decides any fallback.
        const ApsmReceiver rx(s.antennas, s.users, p);
        const TrainingProblem problem =
            rx.prepare_training(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
        ASSERT_EQ(problem.samples(), 2 * s.training_symbols);
        const TrainingResult res = project(p, problem);
        const std::size_t D = problem.samples(), L = problem.length();
        for (std::size_t k = 0; k < s.users; ++k) {
            const Reference ref = reference_training(tr, s.antennas, s.users, k, p);
            std::size_t moved = 0;
            for (std::size_t i = 0; i < ref.gamma.size(); ++i) {
                EXPECT_NEAR(res.coefficient[k * D + i], ref.gamma[i], 1e-9)
                    << "user " << k << " gamma " << i;
                moved += ref.gamma[i] != 0.0;
            }
            for (std::size_t l = 0; l < ref.c.size(); ++l)
                EXPECT_NEAR(res.linear[k * L + l], ref.c[l], 1e-9) << "user " << k << " c " << l;
            EXPECT_GT(moved, 10u) << "the projections did something";
        }
    }
}

TEST(Apsm, ScaleOfTheInputChangesNoDecision)
{
    NomaScenario s;
    s.antennas = 8;
    s.users = 4;
    s.training_symbols = 200;
    s.data_symbols = 400;
    s.snr_db = 12.0;
    s.seed = 3;
    const NomaTransmission tr = simulate_noma(s);
    const Constellation c(s.modulation);
    ApsmReceiver rx(s.antennas, s.users);
    const auto base = decide(apsm_detect(rx, tr), c);
    for (const double gain : { 1e-3, 1e3 }) {
        ApsmReceiver other(s.antennas, s.users);
        EXPECT_EQ(errors(decide(apsm_detect(other, tr, gain), c), base), 0u) << "gain " << gain;
    }
}

TEST(Apsm, RefusesBadTrainingAndErasesBadVectors)
{
    NomaScenario s;
    s.antennas = 4;
    s.users = 2;
    s.training_symbols = 20;
    s.data_symbols = 3;
    NomaTransmission tr = simulate_noma(s);
    ApsmReceiver rx(4, 2);
    EXPECT_THROW(rx.train(tr.training_rx.data(), tr.training_tx.data(), 3), std::invalid_argument);
    std::vector<cf32> zero(tr.training_rx.size());
    EXPECT_THROW(rx.train(zero.data(), tr.training_tx.data(), 20), std::invalid_argument);
    auto bad = tr.training_rx;
    bad[17] = cf32(std::numeric_limits<float>::quiet_NaN(), 0.0f);
    EXPECT_THROW(rx.train(bad.data(), tr.training_tx.data(), 20), std::invalid_argument);
    std::vector<cf32> out(6);
    EXPECT_THROW(rx.detect(tr.data_rx.data(), 3, out.data()), std::logic_error);
    rx.train(tr.training_rx.data(), tr.training_tx.data(), 20);
    tr.data_rx[5] = cf32(std::numeric_limits<float>::infinity(), 0.0f); // vector 1
    rx.detect(tr.data_rx.data(), 3, out.data());
    EXPECT_EQ(rx.erased_vectors(), 1u);
    EXPECT_EQ(out[2], cf32(0.0f, 0.0f));
    EXPECT_EQ(out[3], cf32(0.0f, 0.0f));
    EXPECT_TRUE(std::isfinite(out[0].real()) && std::isfinite(out[5].imag()));
    ApsmParams p;
    p.window = 0;
    EXPECT_THROW(ApsmReceiver(4, 2, p), std::invalid_argument);
}


TEST(Apsm, SeparatesBetterThanTheLinearReceiverWithFewAntennas)
{
    // 6 users 5 degrees apart on 4 antennas: more users than a linear filter can null.
    std::size_t apsm_errors = 0, ls_errors = 0;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        NomaScenario s;
        s.antennas = 4;
        s.users = 6;
        s.data_symbols = 1000;
        s.separation_deg = 5.0;
        s.snr_db = 30.0;
        s.seed = seed;
        const NomaTransmission tr = simulate_noma(s);
        const Constellation c(s.modulation);
        ApsmReceiver rx(s.antennas, s.users);
        apsm_errors += errors(decide(apsm_detect(rx, tr), c), tr.data_points);
        ls_errors += errors(decide(least_squares_detect(tr, s.antennas, s.users), c), tr.data_points);
    }
    std::printf("symbol errors of 18000: APSM %zu, least squares %zu\n", apsm_errors, ls_errors);
    EXPECT_LT(apsm_errors, 0.95 * ls_errors);
}

TEST(Apsm, ClearlyBelowLeastSquaresWhereTrainingCoversTheUsersSymbols)
{
    // Too few antennas to null the other users, but few enough joint symbol combinations
    // (2^6, 4^3, 16^2) that 685 training symbols show the Gaussian part each of them:
    // there APSM's errors are a small fraction of the best linear filter's
    // (docs/apsm.md).
    struct Case {
        std::size_t antennas, users;
        Modulation mod;
        double snr_db, at_most; // APSM's errors at most this fraction of least squares'
    };
    // Measured over these 6 transmissions: 26 of 5936, 879 of 7696, 4172 of 9597; one
    // channel of the six may leave points of the joint constellation too close for any
    // receiver (2x3 QPSK, seed 1) or the Gaussian part not paying (1x2 16-QAM, seed 1).
    for (const Case& k : { Case{ 3, 6, Modulation::bpsk, 20.0, 0.05 },
                           Case{ 2, 3, Modulation::qpsk, 30.0, 0.2 },
                           Case{ 1, 2, Modulation::qam16, 30.0, 0.6 } }) {
        std::size_t a = 0, l = 0;
        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
            NomaScenario s;
            s.antennas = k.antennas;
            s.users = k.users;
            s.modulation = k.mod;
            s.data_symbols = 1000;
            s.snr_db = k.snr_db;
            s.seed = seed;
            const NomaTransmission tr = simulate_noma(s);
            const Constellation c(k.mod);
            ApsmReceiver rx(s.antennas, s.users);
            a += errors(decide(apsm_detect(rx, tr), c), tr.data_points);
            l += errors(decide(least_squares_detect(tr, s.antennas, s.users), c),
                        tr.data_points);
        }
        std::printf("%zux%zu %s: symbol errors APSM %zu, least squares %zu\n",
                    k.antennas,
                    k.users,
                    to_string(k.mod).c_str(),
                    a,
                    l);
        EXPECT_GT(l, 100u) << "least squares should fail here";
        EXPECT_LE(static_cast<double>(a), k.at_most * static_cast<double>(l))
            << k.antennas << "x" << k.users << " " << to_string(k.mod);
    }
}

TEST(Apsm, NeverClearlyWorseThanLeastSquares)
{
    // Where the Gaussian part does not pay (often with QAM at these sizes) the fallback must
    // catch it: on every modulation and antenna count, APSM's symbol errors are at most the
    // least-squares receiver's on the same data plus noise.
    for (const Modulation mod : { Modulation::qpsk, Modulation::qam16, Modulation::qam64 })
        for (const std::size_t M : { 4u, 8u, 12u })
            for (const ArrayShape array : { ArrayShape::circular, ArrayShape::linear }) {
                NomaScenario s;
                s.antennas = M;
                s.users = 6;
                s.data_symbols = 1500;
                s.array = array;
                s.modulation = mod;
                s.snr_db = 25.0;
                s.seed = 11;
                const NomaTransmission tr = simulate_noma(s);
                const Constellation c(mod);
                ApsmReceiver rx(M, s.users);
                const std::size_t a = errors(decide(apsm_detect(rx, tr), c), tr.data_points);
                const std::size_t l = errors(
                    decide(least_squares_detect(tr, M, s.users), c), tr.data_points);
                EXPECT_LE(a, l + l / 50 + 10)
                    << to_string(mod) << ", " << M << " antennas, "
                    << (array == ArrayShape::circular ? "circular" : "linear")
                    << ": APSM " << a << ", least squares " << l << " symbol errors";
            }
}

TEST(Apsm, DictionaryMaximumEndsTraining)
{
    // With max_dictionary = Dt the loop is the loop on the first Dt samples alone (the same
    // start, scale and arithmetic), the dictionary keeps those Dt, and detection uses them.
    NomaScenario s;
    s.antennas = 6;
    s.users = 3;
    s.training_symbols = 150;
    s.data_symbols = 300;
    s.snr_db = 20.0;
    s.seed = 4;
    const NomaTransmission tr = simulate_noma(s);
    ApsmParams limited;
    limited.max_dictionary = 120;
    const ApsmReceiver rx(s.antennas, s.users, limited);
    const TrainingProblem full =
        rx.prepare_training(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
    const TrainingResult got = project(limited, full);
    TrainingProblem cut = full;
    const std::size_t D = full.samples(), Dt = 120, L = full.length(), K = s.users;
    cut.count = Dt / 2;
    cut.dictionary.resize(Dt * L);
    cut.targets.clear();
    for (std::size_t k = 0; k < K; ++k)
        cut.targets.insert(cut.targets.end(), full.targets.begin() + k * D,
                           full.targets.begin() + k * D + Dt);
    const TrainingResult want = project(ApsmParams{}, cut);
    for (std::size_t k = 0; k < K; ++k) {
        for (std::size_t i = 0; i < D; ++i)
            EXPECT_EQ(got.coefficient[k * D + i], i < Dt ? want.coefficient[k * Dt + i] : 0.0)
                << "user " << k << " gamma " << i;
        EXPECT_EQ(got.error_apriori[k], want.error_apriori[k]) << "user " << k;
    }
    EXPECT_EQ(got.linear, want.linear);

    ApsmReceiver trained(s.antennas, s.users, limited);
    trained.train(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
    EXPECT_EQ(trained.dictionary_size(), Dt);
    for (std::size_t k = 0; k < K; ++k)
        EXPECT_EQ(trained.filter(k).coefficient.size(), Dt);
    std::vector<cf32> z64(s.data_symbols * K), z32(z64.size());
    trained.detect(tr.data_rx.data(), s.data_symbols, z64.data());
    trained.detect_float32(tr.data_rx.data(), s.data_symbols, z32.data());
    for (std::size_t i = 0; i < z64.size(); ++i)
        EXPECT_LT(std::abs(z32[i] - z64[i]), 1e-3f * std::max(1.0f, std::abs(z64[i])));

    ApsmParams bad;
    bad.max_dictionary = bad.window - 1;
    EXPECT_THROW(ApsmReceiver(4, 2, bad), std::invalid_argument);
}

/* Scattered paths (NomaScenario::scatter_paths): each channel element keeps the user's
 * power on average; a large Rician factor gives back the line-of-sight channel of the same
 * seed (the paths are drawn after the line of sight's phases); the paths make the users'
 * signatures less collinear (the smallest singular value of H, section 5's 16x6 circular
 * array 5 degrees apart, where line of sight leaves it near 0.005); bad values throw. */
TEST(NomaScenario, ScatteredPathsKeepPowerAndLineOfSight)
{
    NomaScenario s;
    s.training_symbols = 1;
    s.data_symbols = 1;
    s.powers = { 1.0, 2.0, 0.5, 1.0, 1.0, 4.0 };
    const std::size_t M = s.antennas, K = s.users;
    auto smallest_singular = [&](const NomaTransmission& tr) {
        MatrixC h(M, K);
        for (std::size_t m = 0; m < M; ++m)
            for (std::size_t k = 0; k < K; ++k)
                h(m, k) = cd(tr.channel[m * K + k]);
        const double p = Eigen::JacobiSVD<MatrixC>(h).singularValues()(K - 1);
        return p;
    };
    const NomaTransmission los = simulate_noma(s);
    s.scatter_paths = 8;
    s.rician_k_db = 80.0;
    const NomaTransmission near_los = simulate_noma(s);
    for (std::size_t i = 0; i < M * K; ++i)
        EXPECT_LT(std::abs(near_los.channel[i] - los.channel[i]), 1e-3f) << i;

    s.rician_k_db = 0.0;
    std::vector<double> power(K, 0.0);
    double los_sv = 0.0, scattered_sv = 0.0;
    const int seeds = 200;
    for (int seed = 1; seed <= seeds; ++seed) {
        s.seed = static_cast<std::uint64_t>(seed);
        s.scatter_paths = 8;
        const NomaTransmission tr = simulate_noma(s);
        for (std::size_t m = 0; m < M; ++m)
            for (std::size_t k = 0; k < K; ++k)
                power[k] += std::norm(tr.channel[m * K + k]) / (M * seeds);
        scattered_sv += smallest_singular(tr) / seeds;
        s.scatter_paths = 0;
        los_sv += smallest_singular(simulate_noma(s)) / seeds;
    }
    for (std::size_t k = 0; k < K; ++k)
        EXPECT_NEAR(power[k], s.powers[k], 0.1 * s.powers[k]) << "user " << k;
    EXPECT_LT(los_sv, 0.01);
    EXPECT_GT(scattered_sv, 10.0 * los_sv);

    s.scatter_paths = 4;
    s.angular_spread_deg = -1.0;
    EXPECT_THROW(simulate_noma(s), std::invalid_argument);
    s.angular_spread_deg = 20.0;
    s.rician_k_db = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THROW(simulate_noma(s), std::invalid_argument);
    s.rician_k_db = 101.0;
    EXPECT_THROW(simulate_noma(s), std::invalid_argument);
    s.rician_k_db = -100.0; // the bound itself: scattered paths alone, finite
    const NomaTransmission scattered = simulate_noma(s);
    for (const cf32& h : scattered.channel)
        ASSERT_TRUE(std::isfinite(h.real()) && std::isfinite(h.imag()));
}
