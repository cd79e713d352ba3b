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
        ofdm_config_of("ofdm_uplink_receiver",
                       num_antennas,
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
      d_gaps(samp_rate)
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
              static_cast<int>(std::max(d_config.frame_samples(), d_need)));
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
    std::vector<gr::tag_t> times;
    if (d_gaps.enabled())
        get_tags_in_range(
            times, 0, first, first + available, pmt::intern(::mimodet::kRxTimeTagKey));
    const std::size_t usable =
        d_gaps.samples_before_gap(times, first, available, d_logger);
    const bool gap_ahead = usable < available;
    const ::mimodet::Dims dims = d_config.dims();
    auto* out = static_cast<gr_complex*>(output_items[0]);

    std::size_t consumed = 0, produced = 0;
    bool searched = false;
    std::vector<const ::mimodet::cf32*> at(B);
    while (usable - consumed >= frame && produced + nd <= std::size_t(noutput_items)) {
        for (std::size_t b = 0; b < B; ++b)
            at[b] = static_cast<const gr_complex*>(input_items[b]) + consumed;
        std::size_t resume = 0;
        searched = true;
        if (!d_receiver.receive(at, usable - consumed, d_reception, &resume)) {
            // None that these samples hold whole: keep from where a longer search must
            // start, or, before a gap, drop all of them (nothing crosses a gap).
            consumed = gap_ahead ? usable : consumed + resume;
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
        for (const auto& [key, value] : frame_tags(d_frames, start, r.cfo, r.n0, d_gaps))
            add_item_tag(0, item, key, value);
        ++d_frames;
        d_last_cfo = r.cfo;
        d_last_n0 = r.n0;
        produced += nd;
        consumed += r.next_start;
    }
    // Before a gap, what is left cannot become a frame any more.
    if (gap_ahead && usable - consumed < frame)
        consumed = usable;
    // The search ran and could neither find nor drop anything: it needs more samples.
    d_need = searched && consumed == 0 && produced == 0 ? available + 1 : 0;
    consume_each(static_cast<int>(consumed));
    return static_cast<int>(produced);
}

} // namespace mimodet
} // namespace gr
