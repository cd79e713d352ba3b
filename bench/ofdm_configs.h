/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* ofdm_configs.h: the receive chain's benchmark layouts and their checks, shared by
 * mimodet_rx_bench (the chain alone) and mimodet_flowgraph_bench (the block in GNU Radio),
 * so that both time the same frames and refuse a custom layout in the same words. */

#ifndef INCLUDED_MIMODET_BENCH_OFDM_CONFIGS_H
#define INCLUDED_MIMODET_BENCH_OFDM_CONFIGS_H

#include <mimodet/ofdm.h>
#include <cstddef>
#include <string>

namespace mimodet {
namespace bench {

//! LTE 20 MHz numerology: 2048-point FFT at 30.72 MS/s, 1200 subcarriers, 16 antennas.
inline OfdmConfig lte20(std::size_t users)
{
    OfdmConfig o;
    o.fft_size = 2048;
    o.cp_length = 144;
    o.num_subcarriers = 1200;
    o.num_data_symbols = 14;
    o.num_users = users;
    o.num_antennas = 16;
    o.modulation = Modulation::qam16;
    return o;
}

//! What is wrong with a custom frame layout, named by its options ("" when nothing).
inline std::string layout_problem(const OfdmConfig& o)
{
    const auto n = [](std::size_t v) { return std::to_string(v); };
    if (o.fft_size < 8)
        return "--fft: expected at least 8, got " + n(o.fft_size);
    if (o.num_subcarriers % 2 || o.num_subcarriers >= o.fft_size)
        return "--subcarriers: expected an even number below --fft " + n(o.fft_size) +
               ", got " + n(o.num_subcarriers);
    if (o.cp_length >= o.fft_size)
        return "--cp: expected less than --fft " + n(o.fft_size) + ", got " +
               n(o.cp_length);
    const UplinkChannelConfig channel; // the simulated stream's multipath (make_capture)
    const std::size_t spread = (channel.num_taps - 1) * channel.tap_spacing;
    if (o.cp_length < spread)
        return "--cp: expected at least the simulated channel's delay spread, " +
               n(spread) + " samples, got " + n(o.cp_length);
    if (o.num_users > o.num_subcarriers / 2)
        return "--users " + n(o.num_users) +
               ": at most --subcarriers / 2 = " + n(o.num_subcarriers / 2) +
               " (each user's pilot comb needs two subcarriers)";
    if (o.num_users > o.num_antennas)
        return "--users " + n(o.num_users) + " exceeds --antennas " + n(o.num_antennas) +
               " (the detector needs users <= antennas)";
    return "";
}

} // namespace bench
} // namespace mimodet

#endif
