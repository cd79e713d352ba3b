/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mmse_detector_impl.h"
#include "erasure_warning.h"
#include <gnuradio/io_signature.h>
#include <mimodet/layout.h>
#include <algorithm>
#include <map>

namespace gr {
namespace mimodet {

namespace core = ::mimodet;

mmse_detector::sptr mmse_detector::make(int num_antennas,
                                        int num_users,
                                        int num_subcarriers,
                                        const std::string& modulation,
                                        const std::string& mode,
                                        int iterations,
                                        const std::string& backend,
                                        bool llr_positive_means_one,
                                        float llr_clip,
                                        int num_threads,
                                        const std::vector<int>& devices,
                                        int streams)
{
    auto positive = [](int v, const char* what) {
        if (v <= 0)
            throw std::invalid_argument(std::string("mmse_detector: ") + what +
                                        " must be > 0, got " + std::to_string(v));
        return static_cast<std::size_t>(v);
    };
    core::DetectorConfig c;
    c.num_antennas = positive(num_antennas, "num_antennas");
    c.num_users = positive(num_users, "num_users");
    c.num_subcarriers = positive(num_subcarriers, "num_subcarriers");
    c.modulation = core::parse_modulation(modulation);
    c.mode = core::parse_detector_mode(mode);
    if (iterations < 1) // checked for every mode: set_mode() may switch to cg or cr later
        throw std::invalid_argument("mmse_detector: iterations must be >= 1, got " +
                                    std::to_string(iterations));
    c.iterations = static_cast<unsigned>(iterations);
    c.backend = core::parse_backend(backend);
    c.llr_sign = llr_positive_means_one ? core::LlrSign::positive_means_one
                                        : core::LlrSign::positive_means_zero;
    c.llr_clip = llr_clip;
    c.num_threads = num_threads;
    // Checked for every backend: a GRC flowgraph may switch from cpu to auto later.
    if (streams < 1)
        throw std::invalid_argument("mmse_detector: streams must be >= 1, got " +
                                    std::to_string(streams));
    for (int device : devices)
        if (device < 0)
            throw std::invalid_argument(
                "mmse_detector: devices must be CUDA device ordinals >= 0, got " +
                std::to_string(device));
    c.devices = devices;
    c.streams = streams;
    c.validate();
    return gnuradio::make_block_sptr<mmse_detector_impl>(c);
}

mmse_detector_impl::mmse_detector_impl(const core::DetectorConfig& config)
    : gr::sync_block(
          "mmse_detector",
          gr::io_signature::make(1, 1, sizeof(gr_complex) * config.dims().rx_items()),
          gr::io_signature::make(1, 1, sizeof(float) * config.dims().llr_items())),
      d_config(config)
{
    rebuild_detector(config);
    set_tag_propagation_policy(TPP_ALL_TO_ALL);
    d_h.reserve(config.dims().channel_items()); // one allocation: it may be page-locked
}

bool mmse_detector_impl::stop()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_pins.release(); // before GNU Radio frees its buffers
    return true;
}


void mmse_detector_impl::rebuild_detector(const core::DetectorConfig& config)
{
    // Build the new detector before touching any state, so a refused configuration leaves
    // the block exactly as it was.
    std::string fallback_reason;
    auto detector = core::make_detector(config, &fallback_reason);
    // One warning per process, not per block or mode change: a sweep builds many
    // detectors.
    static std::once_flag warned;
    if (!fallback_reason.empty() && config.backend == core::Backend::automatic)
        std::call_once(warned, [&] {
            d_logger->warn("backend=auto: no usable GPU ({:s}); running on the CPU",
                           fallback_reason);
        });
    if (d_channel_valid)
        detector->set_channel(d_h.data(), static_cast<float>(d_n0));
    if (d_detector) {
        d_past_stats +=
            d_detector->stats(); // the counters stay cumulative across rebuilds
        if (d_channel_valid)
            --d_past_stats.channels; // re-applying the channel is not a new one
    }
    d_detector = std::move(detector);
    d_config = config;
    d_on_gpu = d_detector->name().rfind("cuda", 0) == 0; // decided once, not per work()
}

core::DetectorStats mmse_detector_impl::stats() const
{
    auto s = d_past_stats;
    s += d_detector->stats();
    return s;
}

std::string mmse_detector_impl::mode() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return core::to_string(d_config.mode);
}

void mmse_detector_impl::set_mode(const std::string& mode)
{
    const auto parsed = core::parse_detector_mode(mode); // throws before touching state
    std::lock_guard<std::mutex> lock(d_mutex);
    if (parsed == d_config.mode)
        return;
    auto config = d_config;
    config.mode = parsed;
    rebuild_detector(config);
}

int mmse_detector_impl::iterations() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return static_cast<int>(d_config.iterations);
}

void mmse_detector_impl::set_iterations(int iterations)
{
    if (iterations < 1)
        throw std::invalid_argument("mmse_detector: iterations must be >= 1");
    std::lock_guard<std::mutex> lock(d_mutex);
    if (static_cast<unsigned>(iterations) == d_config.iterations)
        return;
    auto config = d_config;
    config.iterations = static_cast<unsigned>(iterations);
    rebuild_detector(config);
}

std::string mmse_detector_impl::implementation() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_detector->name();
}

std::uint64_t mmse_detector_impl::channel_updates() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().channels;
}
std::uint64_t mmse_detector_impl::bad_channel_subcarriers() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().bad_channel_subcarriers;
}
std::uint64_t mmse_detector_impl::bad_sample_vectors() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().bad_sample_vectors;
}
std::uint64_t mmse_detector_impl::regularized_subcarriers() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().regularized_subcarriers;
}
std::uint64_t mmse_detector_impl::unusable_user_channels() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().unusable_user_channels;
}
std::uint64_t mmse_detector_impl::erased_items() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_erased_items;
}

void mmse_detector_impl::apply_tags(const std::vector<gr::tag_t>& tags)
{
    bool changed = false;
    for (const auto& tag : tags) {
        const std::string key = pmt::symbol_to_string(tag.key);
        if (key == core::kChannelTagKey) {
            d_seen_channel_tag = true;
            const std::size_t expected = d_config.dims().channel_items();
            if (!pmt::is_c32vector(tag.value) || pmt::length(tag.value) != expected) {
                d_logger->error(
                    "'{:s}' tag at item {:d} is not a c32vector of {:d} "
                    "(N_sc*B*U) entries (got {:s} of length {:d}); LLRs are 0 "
                    "until the next valid channel",
                    core::kChannelTagKey,
                    tag.offset,
                    expected,
                    pmt::is_c32vector(tag.value) ? "c32vector" : "another type",
                    pmt::is_uniform_vector(tag.value) ? pmt::length(tag.value) : 0);
                d_have_h = false;
                continue;
            }
            const auto& values = pmt::c32vector_elements(tag.value);
            d_h.assign(values.begin(), values.end());
            if (d_on_gpu) // set_channel then uploads it by DMA
                d_pins.pin(d_h.data(), d_h.size() * sizeof(d_h[0]), d_logger);
            d_have_h = true;
            changed = true;
        } else if (key == core::kNoiseVarTagKey) {
            double n0 = 0.0;
            if (pmt::is_real(tag.value) || pmt::is_integer(tag.value)) {
                n0 = pmt::to_double(tag.value);
            } else if (pmt::is_uint64(tag.value)) {
                n0 = static_cast<double>(pmt::to_uint64(tag.value));
            } else {
                d_logger->error("'{:s}' tag at item {:d} is not a real number; ignored",
                                core::kNoiseVarTagKey,
                                tag.offset);
                continue;
            }
            d_n0 = n0;
            changed = true;
        }
    }
    d_channel_valid = d_have_h && d_n0 >= 0.0;
    if (d_have_h && !(d_n0 >= 0.0))
        d_logger->error(
            "'{:s}' without a valid '{:s}' (got {:g}); LLRs are 0 until one arrives",
            core::kChannelTagKey,
            core::kNoiseVarTagKey,
            d_n0);
    if (changed && d_channel_valid)
        d_detector->set_channel(d_h.data(), static_cast<float>(d_n0));
}

void mmse_detector_impl::warn_once_about_bad_inputs()
{
    if (!d_warned_bad_inputs)
        d_warned_bad_inputs = warn_about_erasures(d_logger, stats());
}

int mmse_detector_impl::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star& output_items)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    const auto* in = static_cast<const core::cf32*>(input_items[0]);
    auto* out = static_cast<float*>(output_items[0]);
    const core::Dims dims = d_config.dims();
    const uint64_t first = nitems_read(0);
    if (d_on_gpu)
        d_pins.pin_stream_buffers(*this, d_logger);

    // Group the channel and N0 tags of this call by the item they apply to.
    std::vector<gr::tag_t> tags;
    get_tags_in_range(tags, 0, first, first + noutput_items);
    std::map<uint64_t, std::vector<gr::tag_t>> by_offset;
    for (auto& t : tags) {
        const std::string key = pmt::symbol_to_string(t.key);
        if (key == core::kChannelTagKey || key == core::kNoiseVarTagKey)
            by_offset[t.offset].push_back(t);
    }

    int done = 0;
    auto process_until = [&](int end) {
        if (end <= done)
            return;
        const std::size_t n = static_cast<std::size_t>(end - done);
        float* llr = out + static_cast<std::size_t>(done) * dims.llr_items();
        if (d_channel_valid) {
            d_detector->detect(
                in + static_cast<std::size_t>(done) * dims.rx_items(), n, llr);
        } else {
            std::fill(llr, llr + n * dims.llr_items(), 0.0f);
            d_erased_items += n;
        }
        done = end;
    };

    for (auto& [offset, group] : by_offset) {
        const int at = static_cast<int>(offset - first);
        if (at > 0 && !d_seen_channel_tag)
            break; // items before the first channel: refused below
        process_until(at);
        apply_tags(group);
    }
    if (!d_seen_channel_tag) {
        d_logger->error(
            "no '{:s}' tag before item {:d}: the detector needs the channel "
            "[N_sc][B][U] and N0 ('{:s}') as stream tags on the first item they "
            "apply to (see docs/data-contract.md); stopping",
            core::kChannelTagKey,
            first,
            core::kNoiseVarTagKey);
        return WORK_DONE;
    }
    process_until(noutput_items);
    warn_once_about_bad_inputs();
    return noutput_items;
}

} // namespace mimodet
} // namespace gr
