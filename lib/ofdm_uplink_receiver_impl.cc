/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "ofdm_uplink_receiver_impl.h"
#include <gnuradio/io_signature.h>
#include <mimodet/layout.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace gr {
namespace mimodet {

namespace {

::mimodet::OfdmConfig config_of(int num_antennas,
                                int num_users,
                                int fft_size,
                                int cp_length,
                                int num_subcarriers,
                                int num_data_symbols)
{
    for (int v : { num_antennas, num_users, fft_size, num_subcarriers, num_data_symbols })
        if (v <= 0)
            throw std::invalid_argument("ofdm_uplink_receiver: num_antennas, num_users, "
                                        "fft_size, num_subcarriers and "
                                        "num_data_symbols must be > 0");
    if (cp_length < 0)
        throw std::invalid_argument("ofdm_uplink_receiver: cp_length must be >= 0");
    ::mimodet::OfdmConfig c;
    c.num_antennas = static_cast<std::size_t>(num_antennas);
    c.num_users = static_cast<std::size_t>(num_users);
    c.fft_size = static_cast<std::size_t>(fft_size);
    c.cp_length = static_cast<std::size_t>(cp_length);
    c.num_subcarriers = static_cast<std::size_t>(num_subcarriers);
    c.num_data_symbols = static_cast<std::size_t>(num_data_symbols);
    c.validate(); // names the offending value
    return c;
}

//! rx_time as UHD writes it: (uint64 full seconds, double fractional seconds).
bool rx_time_seconds(const pmt::pmt_t& value, double& seconds)
{
    if (!pmt::is_tuple(value) || pmt::length(value) != 2)
        return false;
    const pmt::pmt_t full = pmt::tuple_ref(value, 0), frac = pmt::tuple_ref(value, 1);
    if (!(pmt::is_uint64(full) || pmt::is_integer(full)) || !pmt::is_real(frac))
        return false;
    seconds = static_cast<double>(pmt::is_uint64(full) ? pmt::to_uint64(full)
                                                       : pmt::to_long(full)) +
              pmt::to_double(frac);
    return true;
}

} // namespace

ofdm_uplink_receiver::sptr ofdm_uplink_receiver::make(int num_antennas,
                                                      int num_users,
                                                      int fft_size,
                                                      int cp_length,
                                                      int num_subcarriers,
                                                      int num_data_symbols,
                                                      double samp_rate)
{
    if (!(samp_rate >= 0.0) || !std::isfinite(samp_rate))
        throw std::invalid_argument(
            "ofdm_uplink_receiver: samp_rate must be >= 0 (0: ignore "
            "rx_time), got " +
            std::to_string(samp_rate));
    return gnuradio::make_block_sptr<ofdm_uplink_receiver_impl>(
        config_of(num_antennas,
                  num_users,
                  fft_size,
                  cp_length,
                  num_subcarriers,
                  num_data_symbols),
        samp_rate);
}

ofdm_uplink_receiver_impl::ofdm_uplink_receiver_impl(const ::mimodet::OfdmConfig& config,
                                                     double samp_rate)
    : gr::block(
          "ofdm_uplink_receiver",
          gr::io_signature::make(static_cast<int>(config.num_antennas),
                                 static_cast<int>(config.num_antennas),
                                 sizeof(gr_complex)),
          gr::io_signature::make(
              1, 1, sizeof(gr_complex) * config.num_subcarriers * config.num_antennas)),
      d_config(config),
      d_receiver(config),
      d_samp_rate(samp_rate)
{
    // A frame's items go out together, tagged by this block; input tags (rx_time, ...)
    // describe samples, not these items.
    set_output_multiple(static_cast<int>(config.num_data_symbols));
    // N_data items per frame of samples at most: GNU Radio sizes the upstream buffers
    // from this rate and the output multiple (twice a frame's samples), without which a
    // frame longer than the default buffer (8191 samples) could never be searched.
    set_relative_rate(config.num_data_symbols, config.frame_samples());
    set_tag_propagation_policy(TPP_DONT);
}

void ofdm_uplink_receiver_impl::forecast(int, gr_vector_int& ninput_items_required)
{
    // A whole frame is the least a search can use; the scheduler may give more.
    std::fill(ninput_items_required.begin(),
              ninput_items_required.end(),
              static_cast<int>(d_config.frame_samples()));
}

std::uint64_t ofdm_uplink_receiver_impl::samples_before_gap(std::uint64_t from,
                                                            std::uint64_t n)
{
    if (d_samp_rate <= 0.0)
        return n;
    std::vector<gr::tag_t> tags;
    get_tags_in_range(tags, 0, from, from + n, pmt::intern(::mimodet::kRxTimeTagKey));
    std::sort(tags.begin(), tags.end(), gr::tag_t::offset_compare);
    for (const auto& tag : tags) {
        double seconds = 0.0;
        if (!rx_time_seconds(tag.value, seconds)) {
            d_logger->warn("rx_time tag at sample {:d} is not (uint64, double); ignored",
                           tag.offset);
            continue;
        }
        if (d_time && tag.offset > d_time->offset) {
            const double expected =
                d_time->seconds + double(tag.offset - d_time->offset) / d_samp_rate;
            const auto missing =
                static_cast<long long>(std::llround((seconds - expected) * d_samp_rate));
            if (missing > 0 && tag.offset > from) {
                // Stop before the gap; the tag is read again as the next call's first.
                if (d_last_gap_at != tag.offset) {
                    d_last_gap_at = tag.offset;
                    ++d_gaps;
                    d_lost += static_cast<std::uint64_t>(missing);
                    d_logger->warn("{:d} samples lost before sample {:d} (rx_time); no "
                                   "frame is assembled across the gap",
                                   missing,
                                   tag.offset);
                }
                return tag.offset - from;
            }
        }
        d_time = TimeRef{ tag.offset, seconds }; // the first, a gap's end, or a re-tag
    }
    return n;
}

int ofdm_uplink_receiver_impl::general_work(int noutput_items,
                                            gr_vector_int& ninput_items,
                                            gr_vector_const_void_star& input_items,
                                            gr_vector_void_star& output_items)
{
    const std::size_t B = d_config.num_antennas, nd = d_config.num_data_symbols;
    const std::size_t frame = d_config.frame_samples();
    const std::uint64_t first = nitems_read(0);
    const std::size_t available = static_cast<std::size_t>(
        *std::min_element(ninput_items.begin(), ninput_items.end()));
    const std::size_t usable = samples_before_gap(first, available);
    const bool gap_ahead = usable < available;
    const ::mimodet::Dims dims = d_config.dims();
    auto* out = static_cast<gr_complex*>(output_items[0]);

    std::size_t consumed = 0, produced = 0;
    std::vector<const ::mimodet::cf32*> at(B);
    while (usable - consumed >= frame && produced + nd <= std::size_t(noutput_items)) {
        for (std::size_t b = 0; b < B; ++b)
            at[b] = static_cast<const gr_complex*>(input_items[b]) + consumed;
        if (!d_receiver.receive(at, usable - consumed, d_reception)) {
            // No frame starts where this search could see a whole one: keep the samples
            // a later, longer search needs (a frame whose preamble starts at the first
            // position not searched), or drop all of them before a gap.
            consumed = gap_ahead ? usable : usable - frame + 1;
            break;
        }
        const ::mimodet::OfdmReception& r = d_reception;
        std::copy(r.y.begin(), r.y.end(), out + produced * dims.rx_items());
        const std::uint64_t item = nitems_written(0) + produced;
        const std::uint64_t start = first + consumed + r.frame_start;
        add_item_tag(0,
                     item,
                     pmt::intern(::mimodet::kChannelTagKey),
                     pmt::init_c32vector(r.h.size(), r.h.data()));
        add_item_tag(
            0, item, pmt::intern(::mimodet::kNoiseVarTagKey), pmt::from_double(r.n0));
        add_item_tag(0,
                     item,
                     pmt::intern(::mimodet::kFrameTagKey),
                     pmt::from_uint64(d_frames.load()));
        add_item_tag(
            0, item, pmt::intern(::mimodet::kFrameStartTagKey), pmt::from_uint64(start));
        add_item_tag(
            0, item, pmt::intern(::mimodet::kCfoTagKey), pmt::from_double(r.cfo));
        if (d_time)
            add_item_tag(
                0,
                item,
                pmt::intern(::mimodet::kFrameTimeTagKey),
                pmt::from_double(d_time->seconds +
                                 (double(start) - double(d_time->offset)) / d_samp_rate));
        ++d_frames;
        d_last_cfo = r.cfo;
        d_last_n0 = r.n0;
        produced += nd;
        consumed += r.frame_start + frame;
    }
    // Before a gap, what is left cannot become a frame any more.
    if (gap_ahead && usable - consumed < frame)
        consumed = usable;
    consume_each(static_cast<int>(consumed));
    return static_cast<int>(produced);
}

} // namespace mimodet
} // namespace gr
