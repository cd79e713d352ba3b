/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_OFDM_UPLINK_DETECTOR_IMPL_H
#define INCLUDED_MIMODET_OFDM_UPLINK_DETECTOR_IMPL_H

#include "pinned_buffers.h"
#include "receive_chain_common.h"
#include <gnuradio/mimodet/ofdm_uplink_detector.h>
#include <mimodet/signal_quality.h>
#include <mimodet/uplink_detector.h>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace mimodet {

class ofdm_uplink_detector_impl : public ofdm_uplink_detector
{
private:
    std::unique_ptr<::mimodet::UplinkDetector> d_chain;
    const ::mimodet::OfdmConfig d_config;
    rx_time_gaps d_gaps;
    ::mimodet::UplinkInput d_input;   // format and scale; pointers set per call
    ::mimodet::UplinkOutput d_output; // format and scale; buffer set per call
    std::atomic<std::uint64_t> d_frames{ 0 };
    std::atomic<double> d_last_cfo{ 0.0 }, d_last_n0{ 0.0 };
    std::atomic<std::uint64_t> d_erased_items{ 0 };
    mutable std::mutex d_mutex; // d_chain: work() against the counters' getters
    pinned_buffers d_pins;      // GPU: the stream buffers, read and written by DMA
    bool d_on_gpu;              // the chain runs on a GPU
    std::size_t d_batch_frames = 1; // GPU: frames GNU Radio's buffers are sized for
    // Samples (after the history) the last search needed and did not have: a frame cut by
    // the end of them. forecast() asks for these, so that at the end of the stream the
    // scheduler ends the block instead of calling it again on the same samples.
    std::size_t d_need = 0;
    bool d_warned_bad_inputs = false;
    // The detector's counters are read for the warning at most once a second (and at
    // stop): on the GPU a read waits for the chain's last frames and copies back every
    // frame detector's counters, too slow to do on each work() call.
    std::chrono::steady_clock::time_point d_next_check{};

    // Display outputs (docs/signal-quality.md), fixed at make(): scratch for what is
    // not an output, and the quality of each frame.
    const bool d_equalized, d_quality_on;
    std::unique_ptr<::mimodet::SignalQuality> d_quality;
    std::vector<gr_complex> d_symbols;
    std::vector<float> d_sinr;

    ::mimodet::DetectorStats stats() const;
    void warn_once_about_bad_inputs(); // caller holds d_mutex
    //! Frame f of this call's quality outputs and message (quality_output).
    void publish_quality(std::size_t f, gr_vector_void_star& output_items);

public:
    //! Sample and LLR formats as the chain's process() takes them.
    ofdm_uplink_detector_impl(std::unique_ptr<::mimodet::UplinkDetector> chain,
                              double samp_rate,
                              ::mimodet::SampleFormat sample_format,
                              float sc16_scale,
                              ::mimodet::LlrFormat llr_format,
                              float llr_int8_scale,
                              bool equalized_output,
                              bool quality_output);

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    bool stop() override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

    std::string implementation() const override { return d_chain->name(); }
    std::string precision() const override
    {
        return ::mimodet::to_string(d_chain->detector().precision);
    }
    std::string sample_type() const override
    {
        return d_input.format == ::mimodet::SampleFormat::sc16 ? "sc16" : "fc32";
    }
    std::string llr_type() const override
    {
        return d_output.format == ::mimodet::LlrFormat::float32
                   ? "float"
                   : ::mimodet::to_string(d_output.format);
    }
    std::uint64_t frames() const override { return d_frames; }
    std::uint64_t gaps() const override { return d_gaps.gaps(); }
    std::uint64_t lost_samples() const override { return d_gaps.lost_samples(); }
    double last_cfo() const override { return d_last_cfo; }
    double last_n0() const override { return d_last_n0; }
    std::uint64_t erased_items() const override { return d_erased_items; }
    std::uint64_t bad_channel_subcarriers() const override
    {
        return stats().bad_channel_subcarriers;
    }
    std::uint64_t bad_sample_vectors() const override { return stats().bad_sample_vectors; }
    std::uint64_t regularized_subcarriers() const override
    {
        return stats().regularized_subcarriers;
    }
    std::uint64_t unusable_user_channels() const override
    {
        return stats().unusable_user_channels;
    }
};

} // namespace mimodet
} // namespace gr

#endif
