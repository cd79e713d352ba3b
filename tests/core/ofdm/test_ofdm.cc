/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The OFDM uplink simulator and the CPU receive chain, against the simulator's truth:
 * timing, CFO, channel, N0, and the detector's BER with the estimated channel against the
 * same detector fed the true one. */

#include <gtest/gtest.h>
#include <mimodet/detector.h>
#include <mimodet/ofdm.h>
#include <cmath>
#include <complex>
#include <cstdio>

using namespace mimodet;

namespace {

OfdmReception receive(const OfdmConfig& o, const UplinkFrame& f)
{
    std::vector<const cf32*> antennas;
    for (const auto& r : f.rx)
        antennas.push_back(r.data());
    OfdmReceiver rx(o);
    OfdmReception out;
    EXPECT_TRUE(rx.receive(antennas, f.rx.front().size(), out)) << "no frame found";
    return out;
}

//! Normalized squared error of an estimate against the truth, over all entries.
double nmse(const std::vector<cf32>& est, const std::vector<cf32>& truth)
{
    double num = 0, den = 0;
    for (std::size_t k = 0; k < truth.size(); ++k) {
        num += std::norm(std::complex<double>(est[k]) - std::complex<double>(truth[k]));
        den += std::norm(std::complex<double>(truth[k]));
    }
    return num / den;
}

/*! The true channel as the receiver sees it: its FFT window starts cp/2 early and, by its
 * timing estimate, (est - true) samples late, which turns bin k by e^{j 2 pi k delta /
 * N}. */
std::vector<cf32>
seen_channel(const OfdmConfig& o, const UplinkFrame& f, const OfdmReception& r)
{
    const double delta =
        double(r.frame_start) - double(f.frame_start) - double(o.cp_length / 2);
    std::vector<cf32> h = f.h;
    const std::size_t per = o.num_antennas * o.num_users;
    for (std::size_t i = 0; i < o.num_subcarriers; ++i) {
        long k = static_cast<long>(o.bin_of(i));
        if (k >= static_cast<long>(o.fft_size / 2))
            k -= static_cast<long>(o.fft_size);
        const double ph = 6.283185307179586 * double(k) * delta / double(o.fft_size);
        const cf32 turn(float(std::cos(ph)), float(std::sin(ph)));
        for (std::size_t j = 0; j < per; ++j)
            h[i * per + j] *= turn;
    }
    return h;
}

double ber(Detector& det,
           const OfdmConfig& o,
           const std::vector<cf32>& h,
           float n0,
           const std::vector<cf32>& y,
           const std::vector<std::uint8_t>& bits)
{
    det.set_channel(h.data(), n0);
    std::vector<float> llr(o.num_data_symbols * o.dims().llr_items());
    det.detect(y.data(), o.num_data_symbols, llr.data());
    std::size_t errors = 0;
    for (std::size_t k = 0; k < llr.size(); ++k)
        errors += (llr[k] > 0.0f) != (bits[k] != 0);
    return double(errors) / double(llr.size());
}

} // namespace

TEST(Ofdm, ConfigIsValidatedWithTheValueNamed)
{
    OfdmConfig o;
    o.num_subcarriers = 191;
    EXPECT_THROW(o.validate(), std::invalid_argument);
    o = OfdmConfig{};
    o.num_subcarriers = 256; // not below fft_size
    EXPECT_THROW(o.validate(), std::invalid_argument);
    o = OfdmConfig{};
    o.cp_length = 256;
    EXPECT_THROW(o.validate(), std::invalid_argument);
    o = OfdmConfig{};
    o.num_users = 97; // a comb of fewer than two pilots
    EXPECT_THROW(o.validate(), std::invalid_argument);
    UplinkChannelConfig c;
    c.num_taps = 20;
    c.tap_spacing = 3; // 57 samples of delay spread > CP 32
    EXPECT_THROW(UplinkSimulator(OfdmConfig{}, c), std::invalid_argument);
}

TEST(Ofdm, UsedSubcarriersSkipDcAndPreambleHasTwoEqualHalves)
{
    OfdmConfig o;
    EXPECT_EQ(o.bin_of(0), o.fft_size - o.num_subcarriers / 2);
    EXPECT_EQ(o.bin_of(o.num_subcarriers / 2 - 1), o.fft_size - 1);
    EXPECT_EQ(o.bin_of(o.num_subcarriers / 2), 1u);
    // One user, no noise, no channel spread: the preamble body repeats after N/2.
    o.num_users = 1;
    o.num_antennas = 1;
    UplinkChannelConfig c;
    c.num_taps = 1;
    c.snr_db = 300.0;
    UplinkSimulator sim(o, c);
    UplinkFrame f;
    sim.next_frame(f);
    const cf32* body = f.rx[0].data() + f.frame_start + o.cp_length;
    const cf32 g = f.h[0]; // the single path's gain: |H| is the same on every subcarrier
    for (std::size_t k = 0; k < o.fft_size / 2; ++k)
        EXPECT_LT(std::abs(body[k] - body[k + o.fft_size / 2]), 1e-4f * std::abs(g)) << k;
}

TEST(Ofdm, NoiselessFrameIsRecoveredExactly)
{
    OfdmConfig o;
    UplinkChannelConfig c;
    c.snr_db = 300.0;
    c.lead_samples = 137;
    c.seed = 5;
    UplinkSimulator sim(o, c);
    UplinkFrame f;
    sim.next_frame(f);
    const OfdmReception r = receive(o, f);
    // The fine timing lands on the strongest path, anywhere in the delay spread.
    EXPECT_NEAR(double(r.frame_start), double(f.frame_start), double(c.tap_spacing * 3));
    EXPECT_NEAR(r.cfo, 0.0, 1e-5);
    EXPECT_LT(r.n0, 1e-8f);
    // Without noise the only channel error is the linear interpolation between pilots.
    const auto h = seen_channel(o, f, r);
    const double err = nmse(r.h, h);
    std::printf("noiseless channel NMSE %.3g\n", err);
    EXPECT_LT(err, 1e-2);
    // y is H x exactly: the data symbols went through the same window.
    const std::size_t nsc = o.num_subcarriers, B = o.num_antennas, U = o.num_users;
    double num = 0, den = 0;
    for (std::size_t s = 0; s < o.num_data_symbols; ++s)
        for (std::size_t i = 0; i < nsc; ++i)
            for (std::size_t b = 0; b < B; ++b) {
                std::complex<double> hx = 0;
                for (std::size_t u = 0; u < U; ++u)
                    hx += std::complex<double>(h[(i * B + b) * U + u]) *
                          std::complex<double>(f.symbols[(s * nsc + i) * U + u]);
                num += std::norm(std::complex<double>(r.y[(s * nsc + i) * B + b]) - hx);
                den += std::norm(hx);
            }
    EXPECT_LT(num / den, 1e-8) << "y is not H x";
}

TEST(Ofdm, TimingCfoChannelAndNoiseAreEstimated)
{
    OfdmConfig o;
    UplinkChannelConfig c;
    c.snr_db = 25.0;
    c.cfo = 0.23;
    c.lead_samples = 211;
    c.seed = 9;
    UplinkSimulator sim(o, c);
    UplinkFrame f;
    sim.next_frame(f);
    const OfdmReception r = receive(o, f);
    // Timing: between the first path minus the window's advance and the last path.
    EXPECT_LE(double(r.frame_start),
              double(f.frame_start + (c.num_taps - 1) * c.tap_spacing));
    EXPECT_GE(double(r.frame_start) + 1.0, double(f.frame_start));
    EXPECT_NEAR(r.cfo, 0.23, 0.01);
    EXPECT_NEAR(r.n0 / f.n0, 1.0, 0.15);
    const double err = nmse(r.h, seen_channel(o, f, r));
    std::printf("channel NMSE %.3g at 25 dB\n", err);
    EXPECT_LT(err, 0.05);
}

TEST(Ofdm, DetectionWithTheEstimatedChannelLosesLittle)
{
    // 8 antennas, 4 users, 16-QAM, 4 paths of 3 dB decay, a CFO: the chain's estimated H
    // and N0 against the true ones for the same CPU MMSE detector on the same y.
    OfdmConfig o;
    UplinkChannelConfig c;
    c.snr_db = 16.0;
    c.cfo = -0.12;
    c.seed = 21;
    UplinkSimulator sim(o, c);
    DetectorConfig d;
    d.num_antennas = o.num_antennas;
    d.num_users = o.num_users;
    d.num_subcarriers = o.num_subcarriers;
    d.modulation = o.modulation;
    d.mode = DetectorMode::chol;
    d.backend = Backend::cpu;
    auto det = make_detector(d);
    double ber_est = 0, ber_true = 0;
    const int frames = 6;
    for (int k = 0; k < frames; ++k) {
        UplinkFrame f;
        sim.next_frame(f);
        const OfdmReception r = receive(o, f);
        ber_est += ber(*det, o, r.h, r.n0, r.y, f.bits) / frames;
        const std::vector<cf32> h_true = seen_channel(o, f, r);
        ber_true += ber(*det, o, h_true, f.n0, r.y, f.bits) / frames;
    }
    std::printf("BER with the estimated channel %.3g, with the true one %.3g\n",
                ber_est,
                ber_true);
    EXPECT_GT(ber_true, 0.0) << "make the SNR low enough to see errors";
    EXPECT_LT(ber_true, 0.05);
    EXPECT_LT(ber_est, 2.0 * ber_true + 2e-3) << "true-channel BER " << ber_true;
}

TEST(Ofdm, FramesBackToBackAreFoundInOrder)
{
    // receive() takes the first frame of its samples, not the strongest one, so a capture
    // is walked frame by frame.
    OfdmConfig o;
    UplinkChannelConfig c;
    c.snr_db = 20.0;
    c.cfo = 0.05;
    c.seed = 13;
    UplinkSimulator sim(o, c);
    UplinkFrame first, second;
    sim.next_frame(first);
    sim.next_frame(second);
    for (auto& v : first.rx[0])
        v *= 0.5f; // the first frame a little weaker on one antenna
    const std::size_t len = first.rx.front().size();
    std::vector<std::vector<cf32>> both(o.num_antennas);
    std::vector<const cf32*> antennas;
    for (std::size_t b = 0; b < o.num_antennas; ++b) {
        both[b] = first.rx[b];
        both[b].insert(both[b].end(), second.rx[b].begin(), second.rx[b].end());
        antennas.push_back(both[b].data());
    }
    OfdmReceiver rx(o);
    OfdmReception r;
    ASSERT_TRUE(rx.receive(antennas, 2 * len, r));
    EXPECT_NEAR(double(r.frame_start), double(first.frame_start), double(o.cp_length));
    const std::size_t next = r.frame_start + o.frame_samples();
    for (auto& p : antennas)
        p += next;
    ASSERT_TRUE(rx.receive(antennas, 2 * len - next, r));
    EXPECT_NEAR(double(r.frame_start + next),
                double(len + second.frame_start),
                double(o.cp_length));
    for (auto& p : antennas)
        p += r.frame_start + o.frame_samples();
    EXPECT_FALSE(
        rx.receive(antennas, 2 * len - next - r.frame_start - o.frame_samples(), r))
        << "only two frames are there";
}
