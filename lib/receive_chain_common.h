/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_RECEIVE_CHAIN_COMMON_H
#define INCLUDED_MIMODET_RECEIVE_CHAIN_COMMON_H

/* What the receive-chain blocks (ofdm_uplink_receiver, ofdm_uplink_detector) share. */

#include <gnuradio/logger.h>
#include <gnuradio/tags.h>
#include <mimodet/ofdm.h>
#include <pmt/pmt.h>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gr {
namespace mimodet {

//! The frame layout from a block's parameters; std::invalid_argument naming `block` and
//! the offending value otherwise.
::mimodet::OfdmConfig ofdm_config_of(const std::string& block,
                                     int num_antennas,
                                     int num_users,
                                     int fft_size,
                                     int cp_length,
                                     int num_subcarriers,
                                     int num_data_symbols);


/*! Lost samples in a received stream, from its rx_time tags (UHD tags the first sample
 * and the first sample after an overflow with their device time): the receive-chain
 * blocks search no frame across a gap. Also the time of any sample since the last tag. */
class rx_time_gaps
{
public:
    //! samp_rate 0: rx_time is not used.
    explicit rx_time_gaps(double samp_rate) : d_rate(samp_rate) {}
    bool enabled() const { return d_rate > 0.0; }

    /*! `tags`: the stream's rx_time tags in [from, from + n). Returns how many samples
     * from `from` come before the first gap (n when none). A gap is counted and logged
     * once, when first seen; at the next call's `from` its tag becomes the time
     * reference. */
    std::uint64_t samples_before_gap(std::vector<gr::tag_t> tags,
                                     std::uint64_t from,
                                     std::uint64_t n,
                                     const gr::logger_ptr& logger);
    //! The time of `sample` by the reference in force; false before the first rx_time
    //! (or when it is not a finite double).
    bool time_of(std::uint64_t sample, double& seconds) const;

    std::uint64_t gaps() const { return d_gaps; }
    std::uint64_t lost_samples() const { return d_lost; }

private:
    const double d_rate;
    //! sample -> its time, from the rx_time tags; a frame is timed by the last one at
    //! or before its start (a time set anew must not time the frames before it).
    std::map<std::uint64_t, double> d_references;
    std::uint64_t d_last_gap_at = UINT64_MAX;
    std::uint64_t d_warned_through = UINT64_MAX; //!< bad tags warned about, up to here
    std::atomic<std::uint64_t> d_gaps{ 0 }, d_lost{ 0 };
};

/*! The tags of a received frame's first item (docs/data-contract.md): mimo_frame,
 * mimo_frame_start, mimo_cfo, mimo_n0 and, when `times` knows the time of `start`,
 * mimo_time, as (key, value) pairs. */
std::vector<std::pair<pmt::pmt_t, pmt::pmt_t>> frame_tags(std::uint64_t index,
                                                          std::uint64_t start,
                                                          double cfo,
                                                          double n0,
                                                          const rx_time_gaps& times);

} // namespace mimodet
} // namespace gr

#endif
