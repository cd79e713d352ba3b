/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The sphere decoders behind mimodet::Detector (lib/core/sphere/cpu_sphere_detector.cc):
// the tensor layouts, the modes' outputs against the per-vector functions they call, the
// erasure rules of docs/data-contract.md and the configuration checks.

#include "core/sphere/fsd.h"
#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <gtest/gtest.h>
#include <cmath>
#include <string>
#include <vector>

using namespace mimodet;

namespace {

struct SphereCase {
    DetectorConfig det;
    Frame frame;
};

SphereCase make(DetectorMode mode, Modulation m, std::size_t b, std::size_t u, double snr_db)
{
    ChannelSimConfig sim;
    sim.num_antennas = b;
    sim.num_users = u;
    sim.num_subcarriers = 6;
    sim.symbols_per_frame = 3;
    sim.modulation = m;
    sim.snr_db = snr_db;
    sim.seed = 21;
    SphereCase s;
    ChannelSimulator(sim).next_frame(s.frame);
    s.det.num_antennas = b;
    s.det.num_users = u;
    s.det.num_subcarriers = sim.num_subcarriers;
    s.det.modulation = m;
    s.det.mode = mode;
    s.det.backend = Backend::cpu;
    return s;
}

std::vector<float> run(const SphereCase& s, DetectorStats* stats = nullptr)
{
    auto d = make_detector(s.det);
    const std::size_t n = s.frame.y.size() / s.det.dims().rx_items();
    std::vector<float> llr(n * s.det.dims().llr_items(), NAN);
    d->set_channel(s.frame.h.data(), s.frame.n0);
    d->detect(s.frame.y.data(), n, llr.data());
    if (stats)
        *stats = d->stats();
    return llr;
}

} // namespace

TEST(CpuSphereDetector, EachModeWritesTheLlrsOfItsSearchInTheProjectsLayout)
{
    for (DetectorMode mode : { DetectorMode::fsd, DetectorMode::sfsd, DetectorMode::ml }) {
        SCOPED_TRACE(to_string(mode));
        const SphereCase s = make(mode, Modulation::qam16, 5, 3, 18.0);
        std::string why;
        auto d = make_detector(s.det, &why);
        EXPECT_EQ(d->name(), "cpu-" + to_string(mode));
        const std::vector<float> llr = run(s);
        const Dims dims = s.det.dims();
        const Constellation c(s.det.modulation);
        const std::size_t B = dims.num_antennas, U = dims.num_users, Q = dims.bits_per_symbol;
        const std::size_t T = s.det.effective_full_levels(),
                          paths = s.det.effective_list_paths();
        EXPECT_EQ(T, 1u);
        EXPECT_EQ(paths, 4u);
        for (std::size_t sym = 0; sym < 3; ++sym)
            for (std::size_t sc = 0; sc < dims.num_subcarriers; ++sc) {
                const cf32* y = s.frame.y.data() + sym * dims.rx_items() + dims.rx_index(sc, 0);
                const cf32* h = s.frame.h.data() + dims.channel_index(sc, 0, 0);
                sphere::FsdChannel ch;
                sphere::prepare_fsd_channel(h, B, U, T, ch);
                std::vector<sphere::FsdPath> list;
                const std::size_t best = sphere::fsd_candidates(
                    ch, c, y, T, mode == DetectorMode::sfsd ? paths : 0, list);
                std::vector<float> want(U * Q);
                if (mode == DetectorMode::fsd)
                    sphere::fsd_hard_llrs(ch, c, list[best], 1.0f, want.data());
                else if (mode == DetectorMode::sfsd)
                    sphere::fsd_llrs(ch, c, list, s.frame.n0, want.data());
                else
                    sphere::maxlog_exhaustive(h, y, B, U, c, s.frame.n0, want.data());
                const float* got = llr.data() + sym * dims.llr_items() + dims.llr_index(sc, 0, 0);
                for (std::size_t i = 0; i < U * Q; ++i)
                    ASSERT_EQ(got[i], want[i]) << "symbol " << sym << " subcarrier " << sc;
            }
        // The sign convention and clipping of the MMSE detectors.
        SphereCase flipped = s;
        flipped.det.llr_sign = LlrSign::positive_means_zero;
        flipped.det.llr_clip = 2.0f;
        const std::vector<float> f = run(flipped);
        for (std::size_t i = 0; i < llr.size(); ++i)
            ASSERT_EQ(f[i], std::clamp(-llr[i], -2.0f, 2.0f));
    }
}

TEST(CpuSphereDetector, BadInputsAreErasedAndCountedLikeTheMmseFamily)
{
    for (DetectorMode mode : { DetectorMode::fsd, DetectorMode::sfsd, DetectorMode::ml }) {
        SCOPED_TRACE(to_string(mode));
        SphereCase s = make(mode, Modulation::qpsk, 4, 4, 15.0);
        const Dims d = s.det.dims();
        const std::size_t per_sc = d.num_users * d.bits_per_symbol;
        s.frame.h[d.channel_index(1, 2, 3)] = cf32(NAN, 0.0f);     // subcarrier 1
        for (std::size_t b = 0; b < d.num_antennas; ++b)           // user 2 on subcarrier 4
            s.frame.h[d.channel_index(4, b, 2)] = cf32(0.0f, 0.0f);
        s.frame.y[2 * d.rx_items() + d.rx_index(3, 1)] = cf32(0.0f, INFINITY); // one vector
        DetectorStats st;
        const std::vector<float> llr = run(s, &st);
        EXPECT_EQ(st.bad_channel_subcarriers, 1u);
        EXPECT_EQ(st.unusable_user_channels, 1u);
        EXPECT_EQ(st.bad_sample_vectors, 1u);
        EXPECT_GE(st.regularized_subcarriers, 1u); // the dead user's QR is loaded
        for (std::size_t sym = 0; sym < 3; ++sym)
            for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc)
                for (std::size_t i = 0; i < per_sc; ++i) {
                    const float v = llr[sym * d.llr_items() + d.llr_index(sc, 0, 0) + i];
                    ASSERT_TRUE(std::isfinite(v));
                    const bool erased = sc == 1 || (sc == 4 && i / d.bits_per_symbol == 2) ||
                                        (sym == 2 && sc == 3);
                    if (erased)
                        EXPECT_EQ(v, 0.0f) << sym << " " << sc << " " << i;
                    else
                        EXPECT_NE(v, 0.0f) << sym << " " << sc << " " << i;
                }
        s.frame.n0 = -1.0f;
        const std::vector<float> none = run(s, &st);
        EXPECT_EQ(st.invalid_noise_variance, 1u);
        for (float v : none)
            ASSERT_EQ(v, 0.0f);
    }
}

TEST(CpuSphereDetector, ConfigurationsBeyondTheSearchAreRefusedByName)
{
    DetectorConfig c;
    c.mode = DetectorMode::sfsd;
    c.num_subcarriers = 4;
    c.num_antennas = 16;
    c.num_users = 9;
    auto refused = [&](const std::string& what) {
        try {
            make_detector(c);
            ADD_FAILURE() << "accepted: " << what;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    refused("needs at most 8 users and at least as many antennas");
    c.num_users = 4;
    c.num_antennas = 3;
    refused("must not exceed num_antennas"); // every mode's rule
    c.num_antennas = 4;
    c.modulation = Modulation::qam64;
    c.full_levels = 3;
    refused("full_levels 3 of mode sfsd");
    c.full_levels = 5;
    c.modulation = Modulation::qpsk;
    refused("full_levels 5 of mode sfsd");
    c.full_levels = 0;
    c.mode = DetectorMode::ml;
    c.num_users = 8;
    c.num_antennas = 8;
    c.modulation = Modulation::qam16;
    refused("mode ml searches M^U vectors");
    c.num_users = 4;
    EXPECT_NO_THROW(make_detector(c));
    EXPECT_EQ(default_full_levels(1), 1u);
    EXPECT_EQ(default_full_levels(4), 1u);
    EXPECT_EQ(default_full_levels(8), 2u);
}
