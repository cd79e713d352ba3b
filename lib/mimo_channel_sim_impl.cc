/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mimo_channel_sim_impl.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cmath>

namespace gr {
namespace mimodet {

namespace core = ::mimodet;

mimo_channel_sim::sptr mimo_channel_sim::make(int num_antennas,
                                              int num_users,
                                              int num_subcarriers,
                                              int symbols_per_frame,
                                              const std::string& modulation,
                                              double snr_db,
                                              const std::string& channel_model,
                                              double correlation,
                                              std::uint64_t seed,
                                              std::uint64_t max_frames,
                                              bool external_bits)
{
    auto positive = [](int v, const char* what) {
        if (v <= 0)
            throw std::invalid_argument(std::string("mimo_channel_sim: ") + what +
                                        " must be > 0, got " + std::to_string(v));
        return static_cast<std::size_t>(v);
    };
    core::ChannelSimConfig c;
    c.num_antennas = positive(num_antennas, "num_antennas");
    c.num_users = positive(num_users, "num_users");
    c.num_subcarriers = positive(num_subcarriers, "num_subcarriers");
    c.symbols_per_frame = positive(symbols_per_frame, "symbols_per_frame");
    c.modulation = core::parse_modulation(modulation);
    c.snr_db = snr_db;
    c.channel = core::parse_channel_model(channel_model);
    c.correlation = correlation;
    c.seed = seed;
    c.validate();
    return gnuradio::make_block_sptr<mimo_channel_sim_impl>(c, max_frames, external_bits);
}

mimo_channel_sim_impl::mimo_channel_sim_impl(const core::ChannelSimConfig& config,
                                             std::uint64_t max_frames,
                                             bool external_bits)
    : gr::sync_block(
          "mimo_channel_sim",
          external_bits
              ? gr::io_signature::make(1, 1, sizeof(std::uint8_t) * config.dims().llr_items())
              : gr::io_signature::make(0, 0, 0),
          gr::io_signature::make2(2,
                                  2,
                                  sizeof(gr_complex) * config.dims().rx_items(),
                                  sizeof(std::uint8_t) * config.dims().llr_items())),
      d_sim(config),
      d_max_frames(max_frames),
      d_external_bits(external_bits),
      d_pending_snr_db(config.snr_db)
{
    // Tags on the bits (an encoder's) must not reach the detector's items.
    if (external_bits)
        set_tag_propagation_policy(TPP_DONT);
    // Whole frames only, so every frame starts with its channel tag in the same call.
    set_output_multiple(static_cast<int>(config.symbols_per_frame));
}

double mimo_channel_sim_impl::snr_db() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_pending_snr_db;
}

void mimo_channel_sim_impl::set_snr_db(double snr_db)
{
    if (!std::isfinite(snr_db))
        throw std::invalid_argument("mimo_channel_sim: snr_db must be finite");
    std::lock_guard<std::mutex> lock(d_mutex);
    d_pending_snr_db = snr_db;
}

std::uint64_t mimo_channel_sim_impl::frames() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_frames;
}

int mimo_channel_sim_impl::work(int noutput_items,
                                gr_vector_const_void_star& input_items,
                                gr_vector_void_star& output_items)
{
    auto* y_out = static_cast<gr_complex*>(output_items[0]);
    auto* bits_out = static_cast<std::uint8_t*>(output_items[1]);
    const core::Dims dims = d_sim.config().dims();
    const int nsym = static_cast<int>(d_sim.config().symbols_per_frame);

    int produced = 0;
    while (produced + nsym <= noutput_items) {
        std::unique_lock<std::mutex> lock(d_mutex);
        if (d_max_frames && d_frames >= d_max_frames)
            break;
        d_sim.set_snr_db(d_pending_snr_db);
        lock.unlock();

        const std::uint8_t* given = nullptr;
        if (d_external_bits) {
            given = static_cast<const std::uint8_t*>(input_items[0]) +
                    produced * dims.llr_items();
            const std::size_t n = nsym * dims.llr_items();
            if (!d_warned_bits && std::any_of(given, given + n, [](std::uint8_t b) {
                    return b > 1;
                })) {
                d_logger->warn("input bytes other than 0 and 1 (packed bytes?) are sent "
                               "as bit 1; give one bit per byte (logged once)");
                d_warned_bits = true;
            }
        }
        d_sim.next_frame(d_frame, given);
        std::copy(d_frame.y.begin(), d_frame.y.end(), y_out + produced * dims.rx_items());
        std::copy(d_frame.bits.begin(),
                  d_frame.bits.end(),
                  bits_out + produced * dims.llr_items());

        const uint64_t offset = nitems_written(0) + produced;
        const pmt::pmt_t src = alias_pmt();
        add_item_tag(0,
                     offset,
                     pmt::string_to_symbol(core::kChannelTagKey),
                     pmt::init_c32vector(d_frame.h.size(), d_frame.h.data()),
                     src);
        add_item_tag(0,
                     offset,
                     pmt::string_to_symbol(core::kNoiseVarTagKey),
                     pmt::from_double(d_frame.n0),
                     src);
        lock.lock();
        add_item_tag(0,
                     offset,
                     pmt::string_to_symbol(core::kFrameTagKey),
                     pmt::from_uint64(d_frames),
                     src);
        ++d_frames;
        lock.unlock();
        produced += nsym;
    }
    if (produced == 0 && d_max_frames && frames() >= d_max_frames)
        return WORK_DONE;
    return produced;
}

} // namespace mimodet
} // namespace gr
