/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_APSM_RECEIVER_IMPL_H
#define INCLUDED_MIMODET_APSM_RECEIVER_IMPL_H

#include <gnuradio/mimodet/apsm_receiver.h>
#include <mimodet/apsm.h>
#include <pmt/pmt.h>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace mimodet {

class apsm_receiver_impl : public apsm_receiver
{
public:
    apsm_receiver_impl(const ::mimodet::ApsmConfig& config,
                       const std::vector<gr_complex>& training_symbols,
                       int training_period,
                       const std::string& training_tag,
                       int training_offset);

    void set_training_symbols(const std::vector<gr_complex>& symbols) override;
    std::vector<gr_complex> training_symbols() const override;
    void retrain() override;
    std::uint64_t trainings() const override;
    std::uint64_t training_failures() const override;
    std::uint64_t erased_vectors() const override;
    std::uint64_t untrained_vectors() const override;
    std::uint64_t linear_fallbacks() const override;
    std::vector<double> noise_variance() const override;
    std::string backend_name() const override;

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    void handle_train_message(const pmt::pmt_t& msg);
    //! Begins collecting a section with these symbols ([T][K]) at absolute item `offset`.
    void start_section(std::vector<gr_complex> symbols, std::uint64_t offset);
    //! Trains on the collected section; false (logged, counted) when the engine refuses.
    bool train_collected(std::uint64_t last_item);
    //! Refuses a section longer than the engine takes (the GPU's shared memory).
    void check_engine_limit(std::size_t training_vectors) const;
    //! The training symbols a tag's value gives (its c32vector, or the current symbols).
    std::vector<gr_complex> symbols_of_tag(const gr::tag_t& tag) const;
    //! The first item >= from (absolute) where a periodic section starts, or UINT64_MAX.
    std::uint64_t next_periodic_start(std::uint64_t from) const;
    void detect(const gr_complex* in, int from, int to, gr_complex* sym, float* llr);

    const ::mimodet::ApsmConfig d_config;
    const std::size_t d_M, d_K, d_bits;
    const int d_period;
    const std::uint64_t d_offset; // the first periodic section's item
    const pmt::pmt_t d_tag_key; // PMT_NIL: no training tag
    std::unique_ptr<::mimodet::ApsmDetector> d_engine;
    mutable std::mutex d_mutex; // guards everything below against setters and messages

    std::vector<gr_complex> d_symbols; // the current training symbols, [T][K]
    bool d_pending_start = false;      // retrain() / message: the next item starts one

    // The section being collected.
    bool d_collecting = false;
    std::vector<gr_complex> d_section_symbols; // [T][K]
    std::vector<gr_complex> d_section_rx;      // [T][M]
    std::size_t d_collected = 0;
    std::uint64_t d_section_start = 0;

    // "apsm_trained" tags to put on the item they belong to (absolute offset).
    std::map<std::uint64_t, pmt::pmt_t> d_trained_tags;
    std::uint64_t d_training_failures = 0;
    bool d_warned_erasures = false;
};

} // namespace mimodet
} // namespace gr

#endif
