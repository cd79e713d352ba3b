/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_OFDM_UPLINK_RECEIVER_IMPL_H
#define INCLUDED_MIMODET_OFDM_UPLINK_RECEIVER_IMPL_H

#include "receive_chain_common.h"
#include <gnuradio/mimodet/ofdm_uplink_receiver.h>
#include <mimodet/ofdm.h>
#include <atomic>
#include <cstdint>

namespace gr {
namespace mimodet {

class ofdm_uplink_receiver_impl : public ofdm_uplink_receiver
{
private:
    const ::mimodet::OfdmConfig d_config;
    ::mimodet::OfdmReceiver d_receiver;
    // Samples the last search needed and did not have (a frame cut by their end):
    // forecast() asks for them, so that at the end of the stream the scheduler ends the
    // block instead of calling it again on the same samples.
    std::size_t d_need = 0;
    ::mimodet::OfdmReception d_reception;
    rx_time_gaps d_gaps;

    std::atomic<std::uint64_t> d_frames{ 0 };
    std::atomic<double> d_last_cfo{ 0.0 }, d_last_n0{ 0.0 };

public:
    ofdm_uplink_receiver_impl(const ::mimodet::OfdmConfig& config, double samp_rate);

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

    std::uint64_t frames() const override { return d_frames; }
    std::uint64_t gaps() const override { return d_gaps.gaps(); }
    std::uint64_t lost_samples() const override { return d_gaps.lost_samples(); }
    double last_cfo() const override { return d_last_cfo; }
    double last_n0() const override { return d_last_n0; }
};

} // namespace mimodet
} // namespace gr

#endif
