/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gtest/gtest.h>
#include <mimodet/layout.h>
#include <vector>

using namespace mimodet;

TEST(Layout, ViewsAgreeWithTheIndexHelpersAndCoverEachElementOnce)
{
    const Dims d{ 5, 3, 7, 4 };
    const std::size_t nsym = 2;
    std::vector<int> y(nsym * d.rx_items()), h(d.channel_items()),
        l(nsym * d.llr_items());
    auto yv = rx_view(y.data(), d, nsym);
    auto hv = channel_view(h.data(), d);
    auto lv = llr_view(l.data(), d, nsym);
    EXPECT_EQ(yv.size(), y.size());
    EXPECT_EQ(hv.size(), h.size());
    EXPECT_EQ(lv.size(), l.size());
    for (std::size_t s = 0; s < nsym; ++s)
        for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc) {
            for (std::size_t b = 0; b < d.num_antennas; ++b) {
                EXPECT_EQ(&yv(s, sc, b), &y[s * d.rx_items() + d.rx_index(sc, b)]);
                ++yv(s, sc, b);
            }
            for (std::size_t u = 0; u < d.num_users; ++u)
                for (std::size_t q = 0; q < d.bits_per_symbol; ++q) {
                    EXPECT_EQ(&lv(s, sc, u, q),
                              &l[s * d.llr_items() + d.llr_index(sc, u, q)]);
                    ++lv(s, sc, u, q);
                }
        }
    for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc)
        for (std::size_t b = 0; b < d.num_antennas; ++b)
            for (std::size_t u = 0; u < d.num_users; ++u) {
                EXPECT_EQ(&hv(sc, b, u), &h[d.channel_index(sc, b, u)]);
                ++hv(sc, b, u);
            }
    for (int v : y)
        EXPECT_EQ(v, 1);
    for (int v : h)
        EXPECT_EQ(v, 1);
    for (int v : l)
        EXPECT_EQ(v, 1);
}

TEST(Layout, ValidateNamesTheOffendingSize)
{
    try {
        Dims{ 4, 8, 16, 4 }.validate("blk");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "blk: num_users (U=8) must not exceed num_antennas (B=4)");
    }
    EXPECT_THROW((Dims{ 4, 2, 0, 4 }.validate("blk")), std::invalid_argument);
}

TEST(Layout, HardDecisionFollowsTheSignConvention)
{
    EXPECT_EQ(hard_bit(1.5f), 1);
    EXPECT_EQ(hard_bit(-1.5f), 0);
    EXPECT_EQ(hard_bit(0.0f), 0);
    EXPECT_EQ(hard_bit(1.5f, LlrSign::positive_means_zero), 0);
    EXPECT_EQ(hard_bit(-1.5f, LlrSign::positive_means_zero), 1);
}
