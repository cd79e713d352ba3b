/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "reference.h"
#include <gtest/gtest.h>
#include <mimodet/ber_sim.h>
#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <mimodet/signal_quality.h>
#include <cmath>
#include <random>

using namespace mimodet;

namespace {

ChannelSimConfig sim_config(std::size_t b, std::size_t u, Modulation m, double snr_db,
                            std::uint64_t seed = 5)
{
    ChannelSimConfig c;
    c.num_antennas = b;
    c.num_users = u;
    c.num_subcarriers = 48;
    c.symbols_per_frame = 4;
    c.modulation = m;
    c.snr_db = snr_db;
    c.seed = seed;
    return c;
}

//! Bias-free estimates of one frame and the detector's SINR per (subcarrier, user).
struct Equalized {
    std::vector<cf32> x;     // [N_sym][N_sc][U]
    std::vector<float> sinr; // [N_sc][U]
};

Equalized equalize(Detector& det, const Frame& f, std::size_t symbols)
{
    const Dims d = det.config().dims();
    Equalized e;
    std::vector<float> llr(symbols * d.llr_items()), unbias(d.symbol_items());
    e.x.assign(symbols * d.symbol_items(), cf32());
    e.sinr.assign(d.symbol_items(), -1.0f);
    det.set_channel(f.h.data(), f.n0);
    det.detect(f.y.data(), symbols, llr.data(), e.x.data());
    EXPECT_TRUE(det.equalizer_gains(unbias.data(), e.sinr.data()));
    remove_bias(e.x.data(), symbols, unbias.data(), d);
    return e;
}

} // namespace

TEST(SignalQuality, NearestPointIsTheBruteForceOneForEveryModulation)
{
    std::mt19937 rng(3);
    std::normal_distribution<float> g(0.0f, 0.8f);
    for (Modulation m : { Modulation::bpsk, Modulation::qpsk, Modulation::qam16,
                          Modulation::qam64, Modulation::qam256 }) {
        const Dims d{ 1, 1, 1, bits_per_symbol(m) };
        SignalQuality q(d, m);
        const Constellation constellation(m);
        const auto& points = constellation.points();
        for (int i = 0; i < 2000; ++i) {
            const cf32 z(g(rng), g(rng));
            float best = 1e30f;
            for (const cf32& p : points)
                best = std::min(best, std::norm(z - p));
            EXPECT_NEAR(std::norm(z - q.nearest(z)), best, 1e-6f) << to_string(m);
        }
    }
}

// The bias-free estimate is x_hat / lambda of li2015 II-B/C and the SINR its rho, both
// against an explicit float64 inverse.
TEST(SignalQuality, BiasFreeEstimateAndSinrMatchTheFloat64Reference)
{
    for (DetectorMode mode : { DetectorMode::chol, DetectorMode::zf }) {
        const auto sim = sim_config(8, 4, Modulation::qam16, 12.0);
        ChannelSimulator channel(sim);
        Frame f;
        channel.next_frame(f);
        DetectorConfig config = detector_config_for(sim, mode, 3);
        config.backend = Backend::cpu;
        auto det = make_detector(config);
        const Equalized e = equalize(*det, f, sim.symbols_per_frame);
        const Dims d = config.dims();
        const auto ref_mode = mode == DetectorMode::zf ? ref::RefMode::zf : ref::RefMode::mmse_exact;
        for (std::size_t s = 0; s < sim.symbols_per_frame; ++s)
            for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc) {
                ref::MatrixD h(d.num_antennas, d.num_users);
                ref::VectorD y(d.num_antennas);
                for (std::size_t b = 0; b < d.num_antennas; ++b) {
                    y(b) = cf64(f.y[s * d.rx_items() + d.rx_index(sc, b)]);
                    for (std::size_t u = 0; u < d.num_users; ++u)
                        h(b, u) = cf64(f.h[d.channel_index(sc, b, u)]);
                }
                const auto r = ref::solve(h, y, f.n0, ref_mode);
                for (std::size_t u = 0; u < d.num_users; ++u) {
                    const cf64 expected = r.x_hat(u) / r.lambda[u];
                    const cf32 got = e.x[s * d.symbol_items() + d.symbol_index(sc, u)];
                    EXPECT_LT(std::abs(cf64(got) - expected), 1e-4 * (1.0 + std::abs(expected)))
                        << to_string(mode);
                    EXPECT_NEAR(e.sinr[d.symbol_index(sc, u)] / r.rho[u], 1.0, 1e-3)
                        << to_string(mode);
                }
            }
    }
}

// The SINR is what the estimates show: over many frames the error energy weighted by the
// detector's SINR averages 1 (exact MMSE and ZF), and the EVM the estimates give matches
// the SINR (EVM^2 = mean 1/SINR). Decision-directed EVM equals the one measured against
// the sent points when no decision errs (30 dB).
TEST(SignalQuality, SinrIsTheErrorVarianceTheEstimatesShow)
{
    for (DetectorMode mode : { DetectorMode::chol, DetectorMode::zf }) {
        for (double snr : { 10.0, 30.0 }) {
            const auto sim = sim_config(16, 8, Modulation::qam16, snr);
            ChannelSimulator channel(sim);
            DetectorConfig config = detector_config_for(sim, mode, 3);
            config.backend = Backend::cpu;
            auto det = make_detector(config);
            const Dims d = config.dims();
            SignalQuality quality(d, sim.modulation);
            double weighted = 0.0, inv_sinr = 0.0, sent_error = 0.0;
            std::size_t n = 0;
            Frame f;
            for (int frame = 0; frame < 20; ++frame) {
                channel.next_frame(f);
                const Equalized e = equalize(*det, f, sim.symbols_per_frame);
                quality.set_sinr(e.sinr.data());
                quality.add(e.x.data(), sim.symbols_per_frame);
                for (std::size_t i = 0; i < e.x.size(); ++i) {
                    const float r = e.sinr[i % d.symbol_items()];
                    const double err = std::norm(cf64(e.x[i]) - cf64(f.x[i]));
                    weighted += err * r;
                    inv_sinr += 1.0 / r;
                    sent_error += err;
                    ++n;
                }
            }
            const std::string what = to_string(mode) + " at " + std::to_string(snr) + " dB";
            EXPECT_NEAR(weighted / static_cast<double>(n), 1.0, 0.05) << what;
            const auto totals = quality.totals();
            ASSERT_EQ(totals.size(), d.num_users);
            double evm2 = 0.0;
            for (const auto& t : totals) {
                EXPECT_EQ(t.estimates, 20u * sim.symbols_per_frame * d.num_subcarriers) << what;
                evm2 += t.evm_percent * t.evm_percent / 1e4 / static_cast<double>(d.num_users);
            }
            const double sent_evm2 = sent_error / static_cast<double>(n);
            EXPECT_NEAR(sent_evm2 / (inv_sinr / static_cast<double>(n)), 1.0, 0.05) << what;
            // The nearest point is never farther than the sent one: the decided EVM reads
            // low where decisions err (10 dB), and agrees where almost none does (30 dB).
            EXPECT_LE(evm2, sent_evm2 * (1.0 + 1e-9)) << what;
            if (snr >= 30.0)
                EXPECT_GT(evm2 / sent_evm2, 0.99) << what;
            else
                EXPECT_LT(evm2 / sent_evm2, 0.95) << what;
        }
    }
}

TEST(SignalQuality, PerSymbolOutputsAndErasedEstimatesAreSkipped)
{
    const Dims d{ 1, 2, 2, 4 }; // B 1, U 2, N_sc 2, 16-QAM
    SignalQuality q(d, Modulation::qam16);
    const float sinr[4] = { 100.0f, 0.0f, 100.0f, 300.0f }; // (sc 0, user 1) erased
    q.set_sinr(sinr);
    const cf32 p = Constellation(Modulation::qam16).points()[5];
    const cf32 x[8] = {
        p + cf32(0.03f, 0.0f), cf32(5.0f, 5.0f), // user 1's is skipped (SINR 0)
        p + cf32(0.0f, 0.04f), cf32(),           // an erased estimate: 0
        cf32(),                cf32(),           // symbol 1: nothing counted
        cf32(),                cf32(),
    };
    float sinr_db[4], evm[4];
    q.add(x, 2, sinr_db, evm);
    EXPECT_NEAR(sinr_db[0], 20.0f, 1e-4f);                        // harmonic mean(100, 100)
    EXPECT_NEAR(sinr_db[1], 10.0f * std::log10(300.0f), 1e-4f);   // sc 0 not usable
    EXPECT_NEAR(evm[0], 100.0f * std::sqrt((0.03f * 0.03f + 0.04f * 0.04f) / 2.0f), 1e-3f);
    EXPECT_TRUE(std::isnan(evm[1]));
    EXPECT_TRUE(std::isnan(evm[2]) && std::isnan(evm[3]));
    const auto t = q.totals();
    EXPECT_EQ(t[0].estimates, 2u);
    EXPECT_EQ(t[1].estimates, 0u);
    EXPECT_TRUE(std::isnan(t[1].evm_percent));
    EXPECT_EQ(q.symbols(), 2u);
    q.reset();
    EXPECT_EQ(q.totals()[0].estimates, 0u);
    EXPECT_NEAR(q.totals()[0].sinr_db, 20.0, 1e-4); // the channel's, kept
}

// BOX: its x_hat is already the estimate (unbias 1), its SINR LMMSE's; the sphere
// decoders have no linear estimate.
TEST(SignalQuality, BoxGainsAreLmmseSinrAndSphereDecodersHaveNone)
{
    const auto sim = sim_config(8, 8, Modulation::qpsk, 15.0);
    ChannelSimulator channel(sim);
    Frame f;
    channel.next_frame(f);
    DetectorConfig chol = detector_config_for(sim, DetectorMode::chol, 3);
    chol.backend = Backend::cpu;
    DetectorConfig box = chol;
    box.mode = DetectorMode::box;
    auto a = make_detector(chol), b = make_detector(box);
    const Dims d = chol.dims();
    std::vector<float> ua(d.symbol_items()), sa(d.symbol_items()), ub(d.symbol_items()),
        sb(d.symbol_items());
    EXPECT_FALSE(b->equalizer_gains(ub.data(), sb.data())); // no channel yet
    a->set_channel(f.h.data(), f.n0);
    b->set_channel(f.h.data(), f.n0);
    ASSERT_TRUE(a->equalizer_gains(ua.data(), sa.data()));
    ASSERT_TRUE(b->equalizer_gains(ub.data(), sb.data()));
    for (std::size_t i = 0; i < d.symbol_items(); ++i) {
        EXPECT_EQ(ub[i], 1.0f);
        EXPECT_NEAR(sb[i], sa[i], 1e-4f * sa[i]);
    }
    DetectorConfig sphere = detector_config_for(sim_config(4, 4, Modulation::qpsk, 15.0),
                                                DetectorMode::fsd, 3);
    sphere.backend = Backend::cpu;
    auto s = make_detector(sphere);
    ChannelSimulator small(sim_config(4, 4, Modulation::qpsk, 15.0));
    small.next_frame(f);
    s->set_channel(f.h.data(), f.n0);
    EXPECT_FALSE(s->equalizer_gains(ua.data(), sa.data()));
}

// A subcarrier whose H is not finite, and an N0 that is not, erase the gains to 0.
TEST(SignalQuality, ErasedSubcarriersHaveNoGains)
{
    const auto sim = sim_config(4, 2, Modulation::qpsk, 15.0);
    ChannelSimulator channel(sim);
    Frame f;
    channel.next_frame(f);
    DetectorConfig config = detector_config_for(sim, DetectorMode::chol, 3);
    config.backend = Backend::cpu;
    auto det = make_detector(config);
    const Dims d = config.dims();
    f.h[d.channel_index(3, 1, 0)] = cf32(std::nanf(""), 0.0f);
    det->set_channel(f.h.data(), f.n0);
    std::vector<float> unbias(d.symbol_items()), sinr(d.symbol_items());
    ASSERT_TRUE(det->equalizer_gains(unbias.data(), sinr.data()));
    for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc)
        for (std::size_t u = 0; u < d.num_users; ++u) {
            const std::size_t i = d.symbol_index(sc, u);
            if (sc == 3)
                EXPECT_TRUE(unbias[i] == 0.0f && sinr[i] == 0.0f);
            else
                EXPECT_TRUE(unbias[i] > 1.0f && sinr[i] > 1.0f);
        }
    det->set_channel(f.h.data(), std::nanf(""));
    ASSERT_TRUE(det->equalizer_gains(unbias.data(), sinr.data()));
    for (std::size_t i = 0; i < d.symbol_items(); ++i)
        EXPECT_TRUE(unbias[i] == 0.0f && sinr[i] == 0.0f);
}
