/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_MMSE_DETECTOR_IMPL_H
#define INCLUDED_MIMODET_MMSE_DETECTOR_IMPL_H

#include "core/worker_team.h"
#include "pinned_buffers.h"
#include <gnuradio/mimodet/mmse_detector.h>
#include <pmt/pmt.h>
#include <mimodet/detector.h>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace mimodet {

class mmse_detector_impl : public mmse_detector
{
private:
    ::mimodet::DetectorConfig d_config;
    std::unique_ptr<::mimodet::Detector> d_detector;
    mutable std::mutex
        d_mutex; // guards d_detector/d_config against setters from GUI threads

    // The channel in force, the tag's own vector (not copied): a mode change re-applies
    // it.
    pmt::pmt_t d_h = pmt::PMT_NIL;
    // GPU: a page-locked copy of the next call's first channel, made while the GPU still
    // works on the batch in flight; set_channel then uploads it by DMA.
    std::vector<::mimodet::cf32> d_h_staged;
    pmt::pmt_t d_h_staged_from = pmt::PMT_NIL; // the tag value d_h_staged holds
    std::unique_ptr<::mimodet::WorkerTeam> d_copy_team; // GPU only: copies the channel
    // GPU: items at the front of the input whose detection was submitted in an earlier
    // call and is not produced yet (their LLRs land in the output buffer's next slots).
    int d_in_flight = 0;
    double d_n0 = -1.0; // < 0: no N0 tag seen yet
    bool d_have_h = false;
    bool d_seen_channel_tag = false; // any 'mimo_h' tag, valid or not
    bool d_channel_valid =
        false; // false after a malformed channel tag, until the next good one
    std::uint64_t d_erased_items = 0;
    bool d_warned_bad_inputs = false;

    ::mimodet::DetectorStats d_past_stats; // counters of detectors replaced by setters
    pinned_buffers d_pins; // GPU: the stream buffers and d_h, read and written by DMA
    bool d_on_gpu = false; // the detector runs on a GPU (set with it)

    void rebuild_detector(const ::mimodet::DetectorConfig& config);
    ::mimodet::DetectorStats stats() const; // cumulative; caller holds d_mutex
    void apply_tags(const std::vector<gr::tag_t>& tags_at_offset);
    const ::mimodet::cf32* channel_data(const pmt::pmt_t& h) const;
    void stage_channel(const std::vector<gr::tag_t>& tags);
    void complete_in_flight();
    void warn_once_about_bad_inputs();

public:
    mmse_detector_impl(const ::mimodet::DetectorConfig& config);

    std::string mode() const override;
    void set_mode(const std::string& mode) override;
    int iterations() const override;
    void set_iterations(int iterations) override;
    std::string implementation() const override;
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
};

} // namespace mimodet
} // namespace gr

#endif
