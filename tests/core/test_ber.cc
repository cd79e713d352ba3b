/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <Eigen/Dense>
#include <gtest/gtest.h>
#include <mimodet/ber_sim.h>
#include <cmath>
#include <random>

using namespace mimodet;

namespace {

double q_function(double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); }

//! Gray 16-QAM bit error probability at symbol SNR gamma in AWGN.
double ber_16qam(double gamma)
{
    const double x = std::sqrt(gamma / 5.0);
    return 0.25 * (3.0 * q_function(x) + 2.0 * q_function(3.0 * x) - q_function(5.0 * x));
}

/*! Semi-analytic expectation for MMSE on i.i.d. Rayleigh: average over independent
 * channel draws (own RNG, float64) of the Gray 16-QAM BER at each user's unbiased
 * post-MMSE SINR 1/[(I + G/N0)^-1]_uu - 1, treating the residual interference as Gaussian
 * (accurate for B >> U). Shares no code with the simulator or detector. */
double expected_mmse_ber(int b, int u, double snr_db, int draws)
{
    using MatrixD = Eigen::Matrix<std::complex<double>, Eigen::Dynamic, Eigen::Dynamic>;
    std::mt19937_64 rng(2024);
    std::normal_distribution<double> n(0.0, std::sqrt(0.5));
    const double n0 = u / std::pow(10.0, snr_db / 10.0);
    double sum = 0;
    for (int k = 0; k < draws; ++k) {
        MatrixD h(b, u);
        for (int i = 0; i < b; ++i)
            for (int j = 0; j < u; ++j)
                h(i, j) = { n(rng), n(rng) };
        const MatrixD m = (MatrixD::Identity(u, u) + h.adjoint() * h / n0).inverse();
        for (int j = 0; j < u; ++j)
            sum += ber_16qam(1.0 / m(j, j).real() - 1.0);
    }
    return sum / (draws * u);
}

ChannelSimConfig sim_128x16(double snr_db)
{
    ChannelSimConfig s;
    s.num_antennas = 128;
    s.num_users = 16;
    s.num_subcarriers = 128;
    s.symbols_per_frame = 14;
    s.modulation = Modulation::qam16;
    s.snr_db = snr_db;
    s.seed = 99;
    return s;
}

DetectorConfig det_128x16(DetectorMode mode, unsigned iterations = 3)
{
    return detector_config_for(sim_128x16(0.0), mode, iterations);
}

} // namespace

TEST(Ber, Mmse128x16Qam16RayleighMatchesSemiAnalyticExpectation)
{
    for (double snr_db : { -6.0, -3.0, 0.0 }) {
        const auto point =
            simulate_ber_point(sim_128x16(snr_db), det_128x16(DetectorMode::chol), 12);
        const double expected = expected_mmse_ber(128, 16, snr_db, 400);
        ASSERT_GT(point.bit_errors, 2000u)
            << "too few errors to compare at " << snr_db << " dB";
        EXPECT_NEAR(point.ber() / expected, 1.0, 0.08)
            << "SNR " << snr_db << " dB: simulated " << point.ber() << ", expected "
            << expected;
        EXPECT_EQ(point.erasures, 0u);
    }
}

TEST(Ber, CgAndCrWithThreeIterationsStayCloseToExactMmse)
{
    // li2015 Fig. 1: 3 CG iterations are enough for 128x16.
    const auto sim = sim_128x16(-3.0);
    const double chol = simulate_ber_point(sim, det_128x16(DetectorMode::chol), 8).ber();
    for (auto mode : { DetectorMode::cg, DetectorMode::cr }) {
        const double ber = simulate_ber_point(sim, det_128x16(mode, 3), 8).ber();
        EXPECT_NEAR(ber / chol, 1.0, 0.05) << to_string(mode);
    }
}

TEST(Ber, ZeroForcingLosesToMmseWhenUsersApproachAntennas)
{
    // With B = 16 and U = 12 the noise enhancement of ZF is large; at B >> U the two
    // detectors' hard decisions are almost the same, so that case shows nothing.
    ChannelSimConfig sim;
    sim.num_antennas = 16;
    sim.num_users = 12;
    sim.num_subcarriers = 128;
    sim.modulation = Modulation::qam16;
    sim.snr_db = 10.0;
    DetectorConfig det = detector_config_for(sim);
    const double mmse = simulate_ber_point(sim, det, 10).ber();
    det.mode = DetectorMode::zf;
    const double zf = simulate_ber_point(sim, det, 10).ber();
    EXPECT_GT(zf, mmse * 1.1) << "zf " << zf << " mmse " << mmse;
}

TEST(Ber, BerFallsWithSnr)
{
    double previous = 1.0;
    for (double snr_db : { -9.0, -6.0, -3.0 }) {
        const double ber =
            simulate_ber_point(sim_128x16(snr_db), det_128x16(DetectorMode::chol), 3)
                .ber();
        EXPECT_LT(ber, previous);
        previous = ber;
    }
}
