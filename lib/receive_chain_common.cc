/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "receive_chain_common.h"
#include <mimodet/layout.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace gr {
namespace mimodet {

namespace {

// 2^53: gaps up to this many samples are counted exactly (a double's integers).
constexpr double kMaxGapSamples = 9007199254740992.0;

//! rx_time as UHD writes it: (uint64 full seconds, double fractional seconds), a finite
//! time (a NaN or Inf fraction would make every later frame time NaN).
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
    return std::isfinite(seconds);
}

} // namespace

::mimodet::OfdmConfig ofdm_config_of(const std::string& block,
                                     int num_antennas,
                                     int num_users,
                                     int fft_size,
                                     int cp_length,
                                     int num_subcarriers,
                                     int num_data_symbols)
{
    for (int v : { num_antennas, num_users, fft_size, num_subcarriers, num_data_symbols })
        if (v <= 0)
            throw std::invalid_argument(
                block + ": num_antennas, num_users, fft_size, "
                        "num_subcarriers and num_data_symbols must be > 0");
    if (cp_length < 0)
        throw std::invalid_argument(block + ": cp_length must be >= 0");
    ::mimodet::OfdmConfig c;
    c.num_antennas = static_cast<std::size_t>(num_antennas);
    c.num_users = static_cast<std::size_t>(num_users);
    c.fft_size = static_cast<std::size_t>(fft_size);
    c.cp_length = static_cast<std::size_t>(cp_length);
    c.num_subcarriers = static_cast<std::size_t>(num_subcarriers);
    c.num_data_symbols = static_cast<std::size_t>(num_data_symbols);
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(block + ": " + e.what());
    }
    return c;
}

std::uint64_t rx_time_gaps::samples_before_gap(std::vector<gr::tag_t> tags,
                                               std::uint64_t from,
                                               std::uint64_t n,
                                               const gr::logger_ptr& logger)
{
    if (!enabled())
        return n;
    // Samples before `from` are gone: of the references before it, the last one still
    // times them.
    auto keep = d_references.upper_bound(from);
    if (keep != d_references.begin())
        d_references.erase(d_references.begin(), std::prev(keep));
    std::sort(tags.begin(), tags.end(), gr::tag_t::offset_compare);
    // A tag is read again in the next call unless its samples were consumed: each
    // warning once.
    auto first_sight = [this](std::uint64_t offset) {
        const bool first = d_warned_through == UINT64_MAX || offset > d_warned_through;
        if (first)
            d_warned_through = offset;
        return first;
    };
    for (const auto& tag : tags) {
        double seconds = 0.0;
        if (!rx_time_seconds(tag.value, seconds)) {
            if (first_sight(tag.offset))
                logger->warn("rx_time tag at sample {:d} is not (uint64, double) of a "
                             "finite time; ignored",
                             tag.offset);
            continue;
        }
        auto before = d_references.lower_bound(tag.offset);
        if (before != d_references.begin()) {
            --before; // the reference in force just before the tag
            const double expected =
                before->second + double(tag.offset - before->first) / d_rate;
            const double jump = std::round((seconds - expected) * d_rate);
            // A jump of 2^53 samples or more (past what a gap count holds exactly; e.g. a
            // sample rate that does not fit the times) is no gap: a new time reference.
            if (!(std::fabs(jump) < kMaxGapSamples)) {
                if (first_sight(tag.offset))
                    logger->warn("rx_time tag at sample {:d} is {:g} s from the time the "
                                 "samples give; taken as a new time reference, no gap "
                                 "counted",
                                 tag.offset,
                                 seconds - expected);
                d_references[tag.offset] = seconds;
                continue;
            }
            const auto missing = static_cast<long long>(jump);
            if (missing > 0 && d_last_gap_at != tag.offset) { // counted once
                d_last_gap_at = tag.offset;
                ++d_gaps;
                d_lost += static_cast<std::uint64_t>(missing);
                logger->warn("{:d} samples lost before sample {:d} (rx_time); no "
                             "frame is assembled across the gap",
                             missing,
                             tag.offset);
            }
            // Stop before a gap; its tag is read again as the next call's first sample,
            // where it starts the new time reference.
            if (missing > 0 && tag.offset > from)
                return tag.offset - from;
        }
        d_references[tag.offset] = seconds; // the first, a gap's end, a re-tag
    }
    return n;
}

std::vector<std::pair<pmt::pmt_t, pmt::pmt_t>> frame_tags(std::uint64_t index,
                                                          std::uint64_t start,
                                                          double cfo,
                                                          double n0,
                                                          const rx_time_gaps& times)
{
    std::vector<std::pair<pmt::pmt_t, pmt::pmt_t>> tags{
        { pmt::intern(::mimodet::kFrameTagKey), pmt::from_uint64(index) },
        { pmt::intern(::mimodet::kFrameStartTagKey), pmt::from_uint64(start) },
        { pmt::intern(::mimodet::kCfoTagKey), pmt::from_double(cfo) },
        { pmt::intern(::mimodet::kNoiseVarTagKey), pmt::from_double(n0) }
    };
    double seconds = 0.0;
    if (times.time_of(start, seconds))
        tags.emplace_back(pmt::intern(::mimodet::kFrameTimeTagKey),
                          pmt::from_double(seconds));
    return tags;
}

bool rx_time_gaps::time_of(std::uint64_t sample, double& seconds) const
{
    if (d_references.empty())
        return false;
    // The last reference at or before the sample; before the first, the first one.
    auto ref = d_references.upper_bound(sample);
    if (ref != d_references.begin())
        --ref;
    seconds = ref->second + (double(sample) - double(ref->first)) / d_rate;
    return std::isfinite(seconds); // a tiny sample rate can overflow it
}

} // namespace mimodet
} // namespace gr
