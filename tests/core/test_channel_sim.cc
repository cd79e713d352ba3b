/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gtest/gtest.h>
#include <mimodet/channel_sim.h>
#include <cmath>

using namespace mimodet;

namespace {
ChannelSimConfig small_config()
{
    ChannelSimConfig c;
    c.num_antennas = 32;
    c.num_users = 4;
    c.num_subcarriers = 64;
    c.symbols_per_frame = 6;
    c.modulation = Modulation::qam16;
    c.snr_db = 5.0;
    c.seed = 42;
    return c;
}
} // namespace

TEST(ChannelSim, SameSeedSameFramesOtherSeedOtherFrames)
{
    ChannelSimulator a(small_config()), b(small_config());
    auto other = small_config();
    other.seed = 43;
    ChannelSimulator c(other);
    Frame fa, fb, fc;
    for (int i = 0; i < 3; ++i) {
        a.next_frame(fa);
        b.next_frame(fb);
        c.next_frame(fc);
        EXPECT_EQ(fa.y, fb.y);
        EXPECT_EQ(fa.h, fb.h);
        EXPECT_EQ(fa.bits, fb.bits);
        EXPECT_NE(fa.h, fc.h);
    }
}

TEST(ChannelSim, ShapesSymbolsAndNoiseFollowTheContract)
{
    const auto cfg = small_config();
    ChannelSimulator sim(cfg);
    const Dims d = cfg.dims();
    Frame f;
    double h_power = 0, noise_power = 0, bit_ones = 0;
    std::size_t h_count = 0, noise_count = 0;
    const int frames = 20;
    for (int fr = 0; fr < frames; ++fr) {
        sim.next_frame(f);
        ASSERT_EQ(f.y.size(), cfg.symbols_per_frame * d.rx_items());
        ASSERT_EQ(f.h.size(), d.channel_items());
        ASSERT_EQ(f.bits.size(), cfg.symbols_per_frame * d.llr_items());
        // li2015: SNR = U Es / N0 with Es = 1.
        EXPECT_NEAR(f.n0, cfg.num_users / std::pow(10.0, cfg.snr_db / 10.0), 1e-5);
        for (auto h : f.h)
            h_power += std::norm(h);
        h_count += f.h.size();
        for (auto b : f.bits)
            bit_ones += b;
        for (std::size_t s = 0; s < cfg.symbols_per_frame; ++s)
            for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc) {
                for (std::size_t u = 0; u < d.num_users; ++u) {
                    // x matches the mapping of the transmitted bits.
                    const cf32 x = f.x[s * d.symbol_items() + d.symbol_index(sc, u)];
                    EXPECT_EQ(x,
                              sim.constellation().map(
                                  &f.bits[s * d.llr_items() + d.llr_index(sc, u, 0)]));
                }
                for (std::size_t b = 0; b < d.num_antennas; ++b) {
                    cf32 clean(0, 0);
                    for (std::size_t u = 0; u < d.num_users; ++u)
                        clean += f.h[d.channel_index(sc, b, u)] *
                                 f.x[s * d.symbol_items() + d.symbol_index(sc, u)];
                    noise_power +=
                        std::norm(f.y[s * d.rx_items() + d.rx_index(sc, b)] - clean);
                    ++noise_count;
                }
            }
    }
    EXPECT_NEAR(h_power / h_count, 1.0, 0.02);
    EXPECT_NEAR(noise_power / noise_count / f.n0, 1.0, 0.02);
    EXPECT_NEAR(bit_ones / (frames * f.bits.size()), 0.5, 0.01);
}

TEST(ChannelSim, KroneckerHasExponentialCorrelationAcrossAntennas)
{
    auto cfg = small_config();
    cfg.channel = ChannelModel::kronecker;
    cfg.correlation = 0.7;
    ChannelSimulator sim(cfg);
    const Dims d = cfg.dims();
    Frame f;
    cf64 c01 = 0, c02 = 0;
    double p0 = 0, p5 = 0;
    std::size_t n = 0;
    for (int fr = 0; fr < 50; ++fr) {
        sim.next_frame(f);
        for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc)
            for (std::size_t u = 0; u < d.num_users; ++u) {
                const cf64 h0 = f.h[d.channel_index(sc, 10, u)];
                const cf64 h1 = f.h[d.channel_index(sc, 11, u)];
                const cf64 h2 = f.h[d.channel_index(sc, 12, u)];
                c01 += h0 * std::conj(h1);
                c02 += h0 * std::conj(h2);
                p0 += std::norm(h0);
                p5 += std::norm(f.h[d.channel_index(sc, 5, u)]);
                ++n;
            }
    }
    EXPECT_NEAR(c01.real() / n, 0.7, 0.03);
    EXPECT_NEAR(c02.real() / n, 0.49, 0.03);
    EXPECT_NEAR(p0 / n, 1.0, 0.03);
    EXPECT_NEAR(p5 / n, 1.0, 0.03);
}

TEST(ChannelSim, RejectsBadConfiguration)
{
    auto cfg = small_config();
    cfg.num_users = 40; // more users than antennas
    EXPECT_THROW(ChannelSimulator{ cfg }, std::invalid_argument);
    cfg = small_config();
    cfg.channel = ChannelModel::kronecker;
    cfg.correlation = 1.0;
    EXPECT_THROW(ChannelSimulator{ cfg }, std::invalid_argument);
    cfg = small_config();
    cfg.symbols_per_frame = 0;
    EXPECT_THROW(ChannelSimulator{ cfg }, std::invalid_argument);
    EXPECT_THROW(parse_channel_model("awgn"), std::invalid_argument);
}
