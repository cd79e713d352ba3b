/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_OFDM_UPLINK_DETECTOR_IMPL_H
#define INCLUDED_MIMODET_OFDM_UPLINK_DETECTOR_IMPL_H

#include "receive_chain_common.h"
#include <gnuradio/mimodet/ofdm_uplink_detector.h>
#include <mimodet/uplink_detector.h>
#include <atomic>
#include <memory>

namespace gr {
namespace mimodet {

class ofdm_uplink_detector_impl : public ofdm_uplink_detector
{
private:
    std::unique_ptr<::mimodet::UplinkDetector> d_chain;
    const ::mimodet::OfdmConfig d_config;
    rx_time_gaps d_gaps;
    std::atomic<std::uint64_t> d_frames{ 0 };
    std::atomic<double> d_last_cfo{ 0.0 }, d_last_n0{ 0.0 };

public:
    ofdm_uplink_detector_impl(std::unique_ptr<::mimodet::UplinkDetector> chain,
                              double samp_rate);

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

    std::string implementation() const override { return d_chain->name(); }
    std::uint64_t frames() const override { return d_frames; }
    std::uint64_t gaps() const override { return d_gaps.gaps(); }
    std::uint64_t lost_samples() const override { return d_gaps.lost_samples(); }
    double last_cfo() const override { return d_last_cfo; }
    double last_n0() const override { return d_last_n0; }
};

} // namespace mimodet
} // namespace gr

#endif
