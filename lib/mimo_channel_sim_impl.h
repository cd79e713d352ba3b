/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_MIMO_CHANNEL_SIM_IMPL_H
#define INCLUDED_MIMODET_MIMO_CHANNEL_SIM_IMPL_H

#include <gnuradio/mimodet/mimo_channel_sim.h>
#include <mimodet/channel_sim.h>
#include <mutex>

namespace gr {
namespace mimodet {

class mimo_channel_sim_impl : public mimo_channel_sim
{
private:
    ::mimodet::ChannelSimulator d_sim;
    ::mimodet::Frame d_frame;
    std::uint64_t d_max_frames;
    std::uint64_t d_frames = 0;
    const bool d_external_bits; // input 0: the bits to send
    bool d_warned_bits = false;
    double d_pending_snr_db;
    mutable std::mutex d_mutex;

public:
    mimo_channel_sim_impl(const ::mimodet::ChannelSimConfig& config,
                          std::uint64_t max_frames,
                          bool external_bits);

    double snr_db() const override;
    void set_snr_db(double snr_db) override;
    std::uint64_t frames() const override;

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;
};

} // namespace mimodet
} // namespace gr

#endif
