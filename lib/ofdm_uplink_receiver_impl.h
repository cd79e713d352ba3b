/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_OFDM_UPLINK_RECEIVER_IMPL_H
#define INCLUDED_MIMODET_OFDM_UPLINK_RECEIVER_IMPL_H

#include <gnuradio/mimodet/ofdm_uplink_receiver.h>
#include <mimodet/ofdm.h>
#include <atomic>
#include <cstdint>
#include <optional>

namespace gr {
namespace mimodet {

class ofdm_uplink_receiver_impl : public ofdm_uplink_receiver
{
private:
    const ::mimodet::OfdmConfig d_config;
    ::mimodet::OfdmReceiver d_receiver;
    ::mimodet::OfdmReception d_reception;
    const double d_samp_rate;

    //! The last rx_time seen: its item in input 0 and its time (seconds).
    struct TimeRef {
        std::uint64_t offset;
        double seconds;
    };
    std::optional<TimeRef> d_time;
    std::uint64_t d_last_gap_at = UINT64_MAX; //!< a gap is counted once

    std::atomic<std::uint64_t> d_frames{ 0 }, d_gaps{ 0 }, d_lost{ 0 };
    std::atomic<double> d_last_cfo{ 0.0 }, d_last_n0{ 0.0 };

    //! Reads input 0's rx_time tags in [from, from + n): updates the time reference and
    //! returns how many samples from `from` are free of a gap.
    std::uint64_t samples_before_gap(std::uint64_t from, std::uint64_t n);

public:
    ofdm_uplink_receiver_impl(const ::mimodet::OfdmConfig& config, double samp_rate);

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

    std::uint64_t frames() const override { return d_frames; }
    std::uint64_t gaps() const override { return d_gaps; }
    std::uint64_t lost_samples() const override { return d_lost; }
    double last_cfo() const override { return d_last_cfo; }
    double last_n0() const override { return d_last_n0; }
};

} // namespace mimodet
} // namespace gr

#endif
