/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_DETECTOR_BLOCK_H
#define INCLUDED_MIMODET_DETECTOR_BLOCK_H

#include "core/worker_team.h"
#include "erasure_warning.h"
#include "pinned_buffers.h"
#include <gnuradio/io_signature.h>
#include <gnuradio/sync_block.h>
#include <mimodet/detector.h>
#include <mimodet/layout.h>
#include <mimodet/precision.h>
#include <mimodet/signal_quality.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace mimodet {

namespace core = ::mimodet;

//! A detector block's streams: one item [N_sc][B] complex in, [N_sc][U][bits] LLRs out.
inline gr::io_signature::sptr items_in(const core::DetectorConfig& c)
{
    return gr::io_signature::make(1, 1, sizeof(gr_complex) * c.dims().rx_items());
}
//! How a detector block writes its LLR items (its llr_type and llr_int8_scale).
struct llr_items {
    core::LlrFormat format = core::LlrFormat::float32;
    float int8_scale = 8.0f; //!< int8: steps per unit of LLR
};
/*! A detector block's optional outputs (docs/signal-quality.md), off by default: when
 * off they cost nothing, and the GPU keeps its pipeline of one work() call. */
struct extra_outputs {
    bool equalized = false; //!< [N_sc][U] complex: the bias-free equalised symbols
    bool quality = false;   //!< [U] float SINR (dB) and [U] float EVM (%) per item, and
                            //!< a "quality" message per frame
    //! Whether the block has the "quality" message port: a block whose detectors have
    //! no linear estimate (fsd_detector) leaves it out rather than never publish on it.
    bool quality_port = true;
    bool any() const { return equalized || quality; }
};
//! The name of the message port of extra_outputs::quality.
inline const char* quality_port() { return "quality"; }

/*! Output 0: the LLR items; then, when on, the equalised symbols, then SINR and EVM.
 * Every output that is on must be connected. */
inline gr::io_signature::sptr llrs_out(const core::DetectorConfig& c,
                                       const llr_items& llr = {},
                                       const extra_outputs& extra = {})
{
    const core::Dims d = c.dims();
    std::vector<int> sizes{ static_cast<int>(core::llr_bytes(llr.format) * d.llr_items()) };
    if (extra.equalized)
        sizes.push_back(static_cast<int>(sizeof(gr_complex) * d.symbol_items()));
    if (extra.quality) {
        sizes.push_back(static_cast<int>(sizeof(float) * d.num_users)); // SINR
        sizes.push_back(static_cast<int>(sizeof(float) * d.num_users)); // EVM
    }
    const int n = static_cast<int>(sizes.size());
    return gr::io_signature::makev(n, n, sizes);
}

/*! A block's llr_type ("float", "int8", "fp16") and llr_int8_scale, checked, with the
 * block's name in each error. */
inline llr_items parse_llr_items(const std::string& block,
                                 const std::string& llr_type,
                                 double llr_int8_scale)
{
    llr_items r;
    try {
        r.format = core::parse_llr_format(llr_type);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(block + ": " + e.what());
    }
    if (!(static_cast<float>(llr_int8_scale) > 0.0f) ||
        !std::isfinite(static_cast<float>(llr_int8_scale)))
        throw std::invalid_argument(block + ": llr_int8_scale must be > 0 and finite, got " +
                                    std::to_string(llr_int8_scale));
    r.int8_scale = static_cast<float>(llr_int8_scale);
    return r;
}

//! The name a block's llr_type() getter gives.
inline std::string llr_type_name(core::LlrFormat f)
{
    return f == core::LlrFormat::float32 ? "float" : core::to_string(f);
}

//! parse_precision with the block's name in the error.
inline core::Precision parse_block_precision(const std::string& block,
                                             const std::string& precision)
{
    try {
        return core::parse_precision(precision);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(block + ": " + e.what());
    }
}

/*! The parameters every detector block's make() takes, checked, with the block's name in
 * each error; the block then sets and checks its mode and calls validate(). Streams and
 * devices are checked for every backend: a flowgraph may switch from cpu to auto later. */
inline core::DetectorConfig block_config(const std::string& block,
                                         int num_antennas,
                                         int num_users,
                                         int num_subcarriers,
                                         const std::string& modulation,
                                         const std::string& backend,
                                         bool llr_positive_means_one,
                                         float llr_clip,
                                         int num_threads,
                                         const std::vector<int>& devices,
                                         int streams)
{
    auto positive = [&](int v, const char* what) {
        if (v <= 0)
            throw std::invalid_argument(block + ": " + what + " must be > 0, got " +
                                        std::to_string(v));
        return static_cast<std::size_t>(v);
    };
    core::DetectorConfig c;
    c.num_antennas = positive(num_antennas, "num_antennas");
    c.num_users = positive(num_users, "num_users");
    c.num_subcarriers = positive(num_subcarriers, "num_subcarriers");
    c.modulation = core::parse_modulation(modulation);
    c.backend = core::parse_backend(backend);
    c.llr_sign = llr_positive_means_one ? core::LlrSign::positive_means_one
                                        : core::LlrSign::positive_means_zero;
    c.llr_clip = llr_clip;
    c.num_threads = num_threads;
    if (streams < 1)
        throw std::invalid_argument(block + ": streams must be >= 1, got " +
                                    std::to_string(streams));
    for (int device : devices)
        if (device < 0)
            throw std::invalid_argument(block +
                                        ": devices must be CUDA device ordinals >= 0, got " +
                                        std::to_string(device));
    c.devices = devices;
    c.streams = streams;
    return c;
}

/*! What every detector block does around its mimodet::Detector (mmse_detector,
 * fsd_detector): items [N_sc][B] in, [N_sc][U][bits] LLRs out, the channel and N0 from
 * the 'mimo_h' / 'mimo_n0' tags (read in place, applied at the item they sit on), the
 * erasure rules and counters of docs/data-contract.md, thread-safe getters, and on a GPU
 * the page-locked buffers, the batches sized for the GPU and the pipeline of one call
 * (docs/performance.md). Api is the block's public class (a gr::sync_block); the final
 * class initialises gr::sync_block itself (a virtual base) and adds its own setters. */
template <class Api>
class detector_block : public Api
{
protected:
    detector_block(const core::DetectorConfig& config,
                   const llr_items& llr,
                   const extra_outputs& extra = {});

    core::DetectorConfig d_config;
    const llr_items d_llr; // the output items' format, fixed at make()
    const extra_outputs d_extra; // fixed at make()
    std::unique_ptr<core::Detector> d_detector;
    mutable std::mutex d_mutex; // guards d_detector/d_config against setters from GUI threads

    //! Replaces the detector by one for `config`, the channel in force re-applied and the
    //! counters kept; a refused configuration throws and changes nothing. Caller holds
    //! d_mutex.
    void rebuild_detector(const core::DetectorConfig& config);

    //! The storage precision by name, for a block's precision() getter.
    std::string precision_name() const
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        return core::to_string(d_config.precision);
    }
    //! A block's set_precision(): refused with the block's name before anything changes.
    void change_precision(const std::string& block, const std::string& precision)
    {
        const core::Precision p = parse_block_precision(block, precision);
        std::lock_guard<std::mutex> lock(d_mutex);
        if (p == d_config.precision)
            return;
        auto config = d_config;
        config.precision = p;
        rebuild_detector(config);
    }

public:
    std::string implementation() const override;
    std::string llr_type() const override { return llr_type_name(d_llr.format); }
    std::uint64_t channel_updates() const override;
    std::uint64_t bad_channel_subcarriers() const override;
    std::uint64_t bad_sample_vectors() const override;
    std::uint64_t regularized_subcarriers() const override;
    std::uint64_t unusable_user_channels() const override;
    std::uint64_t erased_items() const override;

    bool stop() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    // The channel in force, the tag's own vector (not copied): a rebuild re-applies it.
    pmt::pmt_t d_h = pmt::PMT_NIL;
    // GPU: a page-locked copy of the next channel, made while the GPU still works on the
    // batch in flight; set_channel then uploads it by DMA.
    std::vector<core::cf32> d_h_staged;
    pmt::pmt_t d_h_staged_from = pmt::PMT_NIL; // the tag value d_h_staged holds
    std::unique_ptr<core::WorkerTeam> d_copy_team; // GPU only: copies the channel
    // GPU: items at the front of the input whose detection was submitted in an earlier
    // call and is not produced yet (their LLRs land in the output buffer's next slots).
    int d_in_flight = 0;
    double d_n0 = -1.0; // < 0: no N0 tag seen yet
    bool d_have_h = false;
    bool d_seen_channel_tag = false; // any 'mimo_h' tag, valid or not
    bool d_channel_valid = false; // false after a malformed channel tag, until a good one
    std::uint64_t d_erased_items = 0;
    bool d_warned_bad_inputs = false;

    core::DetectorStats d_past_stats; // counters of detectors replaced by setters
    pinned_buffers d_pins; // GPU: the stream buffers and d_h_staged, read/written by DMA
    bool d_on_gpu = false; // the detector runs on a GPU (set with it)

    core::DetectorStats stats() const; // cumulative; caller holds d_mutex
    /*! Takes the channel and N0 of the tags at one item. Returns true when a valid new
     * channel starts there; with `defer` it is left for the caller to hand on (a frame of
     * submit_frames), else it is set in the detector here. */
    bool apply_tags(const std::vector<gr::tag_t>& tags_at_offset, bool defer = false);
    const core::cf32* channel_data(const pmt::pmt_t& h) const;
    void stage_channel(const std::vector<gr::tag_t>& tags);
    void warn_once_about_bad_inputs();
    /*! Whether work() hands its channels to submit_frames: the sphere decoders, whose
     * channel comes every few symbols (LTE: 7), without extra outputs. The linear
     * detectors keep set_channel per channel, which takes the copy of their large H
     * (16 MiB at the 128x16 target) staged in page-locked memory while the GPU works. */
    bool batches_frames() const
    {
        return !d_extra.any() && (d_config.mode == core::DetectorMode::fsd ||
                                  d_config.mode == core::DetectorMode::sfsd);
    }

    // extra_outputs: the channel's gains (fetched once per channel, when first needed),
    // the quality of the frame so far, and scratch for what is not an output.
    std::unique_ptr<core::SignalQuality> d_quality;
    std::vector<float> d_unbias, d_sinr, d_llr_scratch;
    std::vector<core::cf32> d_x_scratch;
    bool d_gains_stale = true;
    //! detect() with x_hat for items [from, to): LLRs, bias-free symbols, quality.
    void detect_with_extras(const core::cf32* in,
                            int from,
                            int to,
                            gr_vector_void_star& output_items);
    //! Zero symbols and NaN quality for items [from, to) without a channel.
    void erase_extras(int from, int to, gr_vector_void_star& output_items);
    //! Publishes the quality of the frame so far, if any, and starts the next one.
    void publish_quality();
};

namespace detector_block_detail {
// GPU: input bytes per batch (one call's submitted items), and a cap on items per batch.
constexpr std::size_t kGpuBatchBytes = std::size_t(64) << 20;
constexpr std::size_t kGpuMaxBatchItems = 1024;
constexpr std::size_t kStagingThreads = 4; // copy the channel to page-locked memory
} // namespace detector_block_detail

template <class Api>
detector_block<Api>::detector_block(const core::DetectorConfig& config,
                                    const llr_items& llr,
                                    const extra_outputs& extra)
    : d_config(config), d_llr(llr), d_extra(extra)
{
    rebuild_detector(config);
    this->set_tag_propagation_policy(gr::block::TPP_ALL_TO_ALL);
    if (extra.quality_port)
        this->message_port_register_out(pmt::mp(quality_port()));
    if (extra.any()) {
        const core::Dims d = config.dims();
        d_quality = std::make_unique<core::SignalQuality>(d, config.modulation);
        d_unbias.resize(d.symbol_items());
        d_sinr.resize(d.symbol_items());
    }
    if (d_on_gpu) {
        // GNU Radio gives a stream of large vectors buffers of two or three items, so
        // work() would see one or two symbols per call and the GPU would idle between
        // calls. A block cannot size its input buffer; GNU Radio makes it at least
        // 2 (history + 1) items, so a history of 2 batches asks for room for the batch
        // in flight and the next one (the history items themselves are never read).
        const std::size_t item = config.dims().rx_items() * sizeof(gr_complex);
        const std::size_t batch =
            std::clamp<std::size_t>(detector_block_detail::kGpuBatchBytes / item, 8, detector_block_detail::kGpuMaxBatchItems);
        this->set_history(static_cast<unsigned>(2 * batch + 1));
        // GNU Radio hands a block at most half of its output buffer per call.
        this->set_min_output_buffer(static_cast<long>(4 * batch));
        d_h_staged.resize(config.dims().channel_items());
        d_copy_team = std::make_unique<::mimodet::WorkerTeam>(detector_block_detail::kStagingThreads);
    }
}
template <class Api>
bool detector_block<Api>::stop()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_detector->complete(); // nothing may still be written into GNU Radio's buffers
    d_pins.release();       // before GNU Radio frees them
    publish_quality();      // the last frame's
    // Items in flight were never consumed: a restart on the same buffers detects them
    // again, and a new flowgraph must not take its first items for them.
    d_in_flight = 0;
    d_h_staged_from = pmt::PMT_NIL;
    return true;
}

template <class Api>
void detector_block<Api>::rebuild_detector(const core::DetectorConfig& config)
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
            this->d_logger->warn("backend=auto: no usable GPU ({:s}); running on the CPU",
                           fallback_reason);
        });
    if (d_channel_valid)
        detector->set_channel(channel_data(d_h), static_cast<float>(d_n0));
    if (d_detector) {
        d_detector->complete(); // its batch in flight lands before it goes
        publish_quality(); // a frame's quality is one detector's
        d_past_stats +=
            d_detector->stats(); // the counters stay cumulative across rebuilds
        if (d_channel_valid)
            --d_past_stats.channels; // re-applying the channel is not a new one
    }
    d_detector = std::move(detector);
    d_config = config;
    d_gains_stale = true; // (a mode change changes them)
    d_on_gpu = d_detector->name().rfind("cuda", 0) == 0; // decided once, not per work()
}
template <class Api>
core::DetectorStats detector_block<Api>::stats() const
{
    auto s = d_past_stats;
    s += d_detector->stats();
    return s;
}
template <class Api>
std::string detector_block<Api>::implementation() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_detector->name();
}

template <class Api>
std::uint64_t detector_block<Api>::channel_updates() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().channels;
}
template <class Api>
std::uint64_t detector_block<Api>::bad_channel_subcarriers() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().bad_channel_subcarriers;
}
template <class Api>
std::uint64_t detector_block<Api>::bad_sample_vectors() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().bad_sample_vectors;
}
template <class Api>
std::uint64_t detector_block<Api>::regularized_subcarriers() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().regularized_subcarriers;
}
template <class Api>
std::uint64_t detector_block<Api>::unusable_user_channels() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return stats().unusable_user_channels;
}
template <class Api>
std::uint64_t detector_block<Api>::erased_items() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_erased_items;
}
template <class Api>
bool detector_block<Api>::apply_tags(const std::vector<gr::tag_t>& tags, bool defer)
{
    bool changed = false;
    for (const auto& tag : tags) {
        const std::string key = pmt::symbol_to_string(tag.key);
        if (key == core::kChannelTagKey) {
            d_seen_channel_tag = true;
            const std::size_t expected = d_config.dims().channel_items();
            if (!pmt::is_c32vector(tag.value) || pmt::length(tag.value) != expected) {
                this->d_logger->error(
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
            d_h = tag.value;
            d_have_h = true;
            changed = true;
        } else if (key == core::kNoiseVarTagKey) {
            double n0 = 0.0;
            if (pmt::is_real(tag.value) || pmt::is_integer(tag.value)) {
                n0 = pmt::to_double(tag.value);
            } else if (pmt::is_uint64(tag.value)) {
                n0 = static_cast<double>(pmt::to_uint64(tag.value));
            } else {
                this->d_logger->error("'{:s}' tag at item {:d} is not a real number; ignored",
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
        this->d_logger->error(
            "'{:s}' without a valid '{:s}' (got {:g}); LLRs are 0 until one arrives",
            core::kChannelTagKey,
            core::kNoiseVarTagKey,
            d_n0);
    const bool starts = changed && d_channel_valid;
    if (starts && !defer) {
        // The copy staged while the GPU worked, if it is this channel's: uploaded by DMA.
        const bool staged = !d_h_staged.empty() && pmt::eq(d_h, d_h_staged_from);
        if (d_extra.quality)
            publish_quality(); // the frame of the channel in force ends here
        d_detector->set_channel(staged ? d_h_staged.data() : channel_data(d_h),
                                static_cast<float>(d_n0));
        d_gains_stale = true;
    }
    d_h_staged_from = pmt::PMT_NIL;
    return starts;
}

template <class Api>
void detector_block<Api>::detect_with_extras(const core::cf32* in,
                                             int from,
                                             int to,
                                             gr_vector_void_star& output_items)
{
    const core::Dims dims = d_config.dims();
    const std::size_t n = static_cast<std::size_t>(to - from);
    const std::size_t at = static_cast<std::size_t>(from);
    core::cf32* x;
    if (d_extra.equalized) {
        x = static_cast<core::cf32*>(output_items[1]) + at * dims.symbol_items();
    } else {
        d_x_scratch.resize(n * dims.symbol_items());
        x = d_x_scratch.data();
    }
    float* llr;
    if (d_llr.format == core::LlrFormat::float32) {
        llr = static_cast<float*>(output_items[0]) + at * dims.llr_items();
    } else {
        d_llr_scratch.resize(n * dims.llr_items());
        llr = d_llr_scratch.data();
    }
    d_detector->detect(in + at * dims.rx_items(), n, llr, x);
    if (d_llr.format == core::LlrFormat::int8)
        core::precision::llrs_to_int8(
            llr,
            n * dims.llr_items(),
            d_llr.int8_scale,
            static_cast<std::int8_t*>(output_items[0]) + at * dims.llr_items());
    else if (d_llr.format == core::LlrFormat::fp16)
        core::precision::llrs_to_fp16(
            llr, n * dims.llr_items(), static_cast<std::uint16_t*>(output_items[0]) + at * dims.llr_items());
    if (d_gains_stale) {
        // Without a linear estimate (none of the blocks that offer these outputs) the
        // symbols pass as they are and the quality reads NaN.
        if (!d_detector->equalizer_gains(d_unbias.data(), d_sinr.data())) {
            std::fill(d_unbias.begin(), d_unbias.end(), 1.0f);
            std::fill(d_sinr.begin(), d_sinr.end(), 0.0f);
        }
        d_quality->set_sinr(d_sinr.data());
        d_gains_stale = false;
    }
    core::remove_bias(x, n, d_unbias.data(), dims);
    if (d_extra.quality) {
        const std::size_t port = d_extra.equalized ? 2 : 1;
        d_quality->add(x,
                       n,
                       static_cast<float*>(output_items[port]) + at * dims.num_users,
                       static_cast<float*>(output_items[port + 1]) + at * dims.num_users);
    }
}

template <class Api>
void detector_block<Api>::erase_extras(int from, int to, gr_vector_void_star& output_items)
{
    const core::Dims dims = d_config.dims();
    const std::size_t n = static_cast<std::size_t>(to - from);
    const std::size_t at = static_cast<std::size_t>(from);
    if (d_extra.equalized)
        std::fill_n(static_cast<core::cf32*>(output_items[1]) + at * dims.symbol_items(),
                    n * dims.symbol_items(),
                    core::cf32());
    if (d_extra.quality) {
        const std::size_t port = d_extra.equalized ? 2 : 1;
        for (std::size_t k = port; k < port + 2; ++k)
            std::fill_n(static_cast<float*>(output_items[k]) + at * dims.num_users,
                        n * dims.num_users,
                        std::numeric_limits<float>::quiet_NaN());
    }
}

template <class Api>
void detector_block<Api>::publish_quality()
{
    if (!d_extra.quality || d_quality->symbols() == 0)
        return;
    const auto totals = d_quality->totals();
    std::vector<float> sinr, evm;
    for (const auto& t : totals) {
        sinr.push_back(static_cast<float>(t.sinr_db));
        evm.push_back(static_cast<float>(t.evm_percent));
    }
    pmt::pmt_t dict = pmt::make_dict();
    dict = pmt::dict_add(dict, pmt::mp("channel"), pmt::from_uint64(stats().channels));
    dict = pmt::dict_add(dict, pmt::mp("symbols"), pmt::from_uint64(d_quality->symbols()));
    dict = pmt::dict_add(dict, pmt::mp("sinr_db"), pmt::init_f32vector(sinr.size(), sinr));
    dict = pmt::dict_add(dict, pmt::mp("evm_percent"), pmt::init_f32vector(evm.size(), evm));
    this->message_port_pub(pmt::mp(quality_port()), dict);
    d_quality->reset();
}

template <class Api>
const core::cf32* detector_block<Api>::channel_data(const pmt::pmt_t& h) const
{
    std::size_t n = 0;
    return pmt::c32vector_elements(h, n); // the vector itself: pmt's other form copies
}
template <class Api>
void detector_block<Api>::stage_channel(const std::vector<gr::tag_t>& tags)
{
    if (!d_copy_team)
        return;
    const std::size_t expected = d_config.dims().channel_items();
    for (const auto& tag : tags)
        if (pmt::symbol_to_string(tag.key) == core::kChannelTagKey &&
            pmt::is_c32vector(tag.value) && pmt::length(tag.value) == expected) {
            if (pmt::eq(tag.value, d_h_staged_from))
                return; // staged already
            d_pins.pin(d_h_staged.data(), expected * sizeof(core::cf32), this->d_logger);
            // In slices on several threads, so that the copy hides behind the batch in
            // flight (16 MiB at the 128x16 target, 27 MiB for an NR slot).
            const core::cf32* from = channel_data(tag.value);
            d_copy_team->run_slices(expected, [&](std::size_t begin, std::size_t end) {
                std::copy(from + begin, from + end, d_h_staged.data() + begin);
            });
            d_h_staged_from = tag.value;
            return;
        }
}
template <class Api>
void detector_block<Api>::warn_once_about_bad_inputs()
{
    if (!d_warned_bad_inputs)
        d_warned_bad_inputs = warn_about_erasures(this->d_logger, stats());
}
template <class Api>
int detector_block<Api>::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star& output_items)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    const core::Dims dims = d_config.dims();
    // The first item not consumed yet (the history before it is never read).
    const auto* in = static_cast<const core::cf32*>(input_items[0]) +
                     static_cast<std::size_t>(this->history() - 1) * dims.rx_items();
    // LLR items of llr_bytes(format) per LLR: float, int8 or binary16 codes.
    auto* out = static_cast<char*>(output_items[0]);
    const std::size_t out_item = core::llr_bytes(d_llr.format) * dims.llr_items();
    const uint64_t first = this->nitems_read(0);
    if (d_on_gpu)
        d_pins.pin_stream_buffers(*this, this->d_logger);

    /* On the GPU, work() is pipelined by one call: items [0, d_in_flight) were submitted
     * by the last call, their LLRs already on their way into this call's output slots.
     * This call stages the next channel while they finish, waits for them, submits its
     * own items and returns the finished ones, leaving its last batch in flight while
     * GNU Radio moves on. Each item's LLRs go to its own output slot, so what is left in
     * flight is where the next call expects it. */
    int done = std::min(d_in_flight, noutput_items);

    // Group the channel and N0 tags of the new items by the item they apply to.
    std::vector<gr::tag_t> tags;
    this->get_tags_in_range(tags, 0, first + done, first + noutput_items);
    std::map<uint64_t, std::vector<gr::tag_t>> by_offset;
    for (auto& t : tags) {
        const std::string key = pmt::symbol_to_string(t.key);
        if (key == core::kChannelTagKey || key == core::kNoiseVarTagKey)
            by_offset[t.offset].push_back(t);
    }
    if (d_in_flight > 0) {
        if (!by_offset.empty() && !batches_frames())  // (a batch reads the tags' H)
            stage_channel(by_offset.begin()->second); // while the GPU finishes
        d_detector->complete();
        if (d_in_flight >= noutput_items) { // no room for more: return finished items
            d_in_flight -= noutput_items;
            return noutput_items;
        }
    }
    warn_once_about_bad_inputs(); // here nothing is in flight: stats() does not wait

    int in_flight_from = -1; // first item of the batch left in flight, if any
    /* batches_frames(): the items of a channel are a frame, and the frames that follow
     * one another go to the detector as one submit_frames batch: the GPU sphere
     * decoders then need no round trip per channel (LTE: one every 7 symbols). `frames`
     * holds the batch being built, from item frames_from; `held` keeps the channels'
     * vectors alive while they are in it (a later tag replaces d_h). */
    const bool batch = batches_frames();
    std::vector<core::ChannelFrame> frames;
    std::vector<pmt::pmt_t> held;
    int frames_from = done;
    bool channel_starts = false; // the next frame's channel is new (a tag at its start)
    auto submit_batch = [&](std::size_t first, std::size_t count, int from) {
        if (d_detector->submit_frames(frames.data() + first,
                                      count,
                                      in + static_cast<std::size_t>(from) *
                                               dims.rx_items(),
                                      out + static_cast<std::size_t>(from) * out_item,
                                      d_llr.format,
                                      d_llr.int8_scale))
            in_flight_from = from; // (a later submit or set_channel completes it)
        else
            in_flight_from = -1;
    };
    auto flush = [&]() {
        if (frames.empty())
            return;
        // Nothing finished to return yet: half the frames now, so that this call
        // returns something and the other half stays in flight (one frame: split).
        if (d_on_gpu && frames_from == 0 && in_flight_from < 0) {
            if (frames.size() == 1 && frames[0].n_symbols >= 2) {
                core::ChannelFrame rest = frames[0];
                rest.n_symbols = frames[0].n_symbols / 2;
                rest.continues = true;
                frames[0].n_symbols -= rest.n_symbols;
                frames.push_back(rest);
            }
            if (frames.size() >= 2) {
                const std::size_t half = frames.size() / 2;
                std::size_t items = 0;
                for (std::size_t f = 0; f < half; ++f)
                    items += frames[f].n_symbols;
                submit_batch(0, half, frames_from);
                submit_batch(
                    half, frames.size() - half, frames_from + static_cast<int>(items));
                frames.clear();
                return;
            }
        }
        submit_batch(0, frames.size(), frames_from);
        frames.clear();
    };
    auto submit = [&](int from, int to) {
        if (d_extra.any()) { // x_hat too: synchronous, on the CPU and the GPU
            detect_with_extras(in, from, to, output_items);
            in_flight_from = -1;
            return;
        }
        const std::size_t n = static_cast<std::size_t>(to - from);
        if (d_detector->submit_llrs(in + static_cast<std::size_t>(from) * dims.rx_items(),
                                    n,
                                    out + static_cast<std::size_t>(from) * out_item,
                                    d_llr.format,
                                    d_llr.int8_scale))
            in_flight_from = from; // (a later submit or set_channel completes it)
        else
            in_flight_from = -1;
    };
    auto process_until = [&](int end) {
        if (end <= done)
            return;
        if (batch && d_channel_valid) {
            if (frames.empty())
                frames_from = done;
            held.push_back(d_h);
            core::ChannelFrame frame;
            frame.h = channel_data(d_h);
            frame.n0 = static_cast<float>(d_n0);
            frame.n_symbols = static_cast<std::size_t>(end - done);
            frame.continues = !channel_starts;
            frames.push_back(frame);
            channel_starts = false;
            done = end;
            return;
        }
        flush(); // (the batch's items come before these)
        if (d_channel_valid) {
            // Nothing finished to return yet: half now, so that this call returns
            // something and the other half stays in flight.
            if (d_on_gpu && done == 0 && end >= 2)
                submit(0, end / 2), submit(end / 2, end);
            else
                submit(done, end);
        } else {
            // LLR 0 is all-zero bits in every format
            std::memset(out + static_cast<std::size_t>(done) * out_item,
                        0,
                        static_cast<std::size_t>(end - done) * out_item);
            erase_extras(done, end, output_items);
            d_erased_items += static_cast<std::uint64_t>(end - done);
        }
        done = end;
    };

    for (auto& [offset, group] : by_offset) {
        const int at = static_cast<int>(offset - first);
        if (at > done && !d_seen_channel_tag)
            break; // items before the first channel: refused below
        process_until(at);
        if (batch) {
            channel_starts = apply_tags(group, true) || channel_starts;
            continue;
        }
        stage_channel(group); // while the GPU works on the batch just submitted
        apply_tags(group);    // a set_channel completes that batch (still held)
    }
    if (!d_seen_channel_tag) {
        this->d_logger->error(
            "no '{:s}' tag before item {:d}: the detector needs the channel "
            "[N_sc][B][U] and N0 ('{:s}') as stream tags on the first item they "
            "apply to (see docs/data-contract.md); stopping",
            core::kChannelTagKey,
            first,
            core::kNoiseVarTagKey);
        return gr::block::WORK_DONE;
    }
    process_until(noutput_items);
    flush();
    if (in_flight_from <= 0) { // all finished (CPU, unpinned buffers), or no progress
        d_detector->complete();
        d_in_flight = 0;
        return noutput_items;
    }
    d_in_flight = noutput_items - in_flight_from;
    return in_flight_from;
}

} // namespace mimodet
} // namespace gr

#endif
