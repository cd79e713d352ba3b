/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_BOX_DETECTOR_H
#define INCLUDED_MIMODET_BOX_DETECTOR_H

#include <gnuradio/mimodet/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace mimodet {

/*!
 * \brief BOX equalizer (box-constrained least squares by projected gradient, castaneda
 * PULPO): near-ML detection where linear MMSE fails, e.g. as many users as antennas.
 * \ingroup mimodet
 *
 * The items, tags and counters of mmse_detector: in, [N_sc][B] complex per OFDM symbol
 * with the channel [N_sc][B][U] and N0 in the 'mimo_h' / 'mimo_n0' tags on the first
 * item they apply to; out, [N_sc][U][bits] float max-log LLRs (positive means 1 unless
 * llr_positive_means_one is false) of the BOX estimate, weighted by exact MMSE's
 * post-equalization SINR (cautious: BOX's error is smaller wherever it beats MMSE).
 * Each symbol: x <- clip(v - tau (G v - H^H y)) `iterations` times, v = x or x plus
 * FISTA's momentum, clip to the constellation's bounding box (docs/box.md).
 */
class MIMODET_API box_detector : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<box_detector> sptr;

    /*!
     * \param num_antennas B, receive antennas
     * \param num_users U, users, 1..B (1..32 on the GPU)
     * \param num_subcarriers N_sc per OFDM symbol
     * \param modulation "bpsk", "qpsk", "16qam", "64qam" or "256qam"
     * \param iterations projected-gradient steps, 1..10000 (20 with momentum reach what
     *        100 plain ones do at 16x16)
     * \param start "lmmse" (the unbiased MMSE estimate), "mf" (matched filter) or "zero"
     * \param accelerated FISTA momentum (true) or PULPO's plain iteration (false)
     * \param step tau; 0 = 1 / (Gershgorin bound on the largest eigenvalue of H^H H),
     *        per subcarrier
     * \param backend "auto" (GPU if usable, else CPU with one warning), "cpu" or "cuda"
     * \param llr_positive_means_one LLR sign convention (true: log P(1)/P(0))
     * \param llr_clip |LLR| limit, 0 = none (at most 50 on a loaded subcarrier)
     * \param num_threads CPU threads, 0 = all cores
     * \param devices CUDA device ordinals (see mmse_detector)
     * \param streams CUDA streams per GPU (>= 1)
     * \param precision storage format of H and y (see mmse_detector; docs/precision.md)
     * \param llr_type output items: "float" (float32 LLRs), "int8" (signed bytes,
     *        round(LLR * llr_int8_scale) saturated to +-127) or "fp16" (IEEE binary16
     *        codes as 16-bit items, saturated to +-65504); docs/precision.md. On one GPU
     *        the LLRs are rounded there and only the narrow items come back (on the
     *        CPU and across several GPUs they are rounded on the host).
     * \param llr_int8_scale int8: steps per unit of LLR (8: steps of 1/8, |LLR| up to
     *        15.875)
     * \param equalized_output add output 1: per item the bias-free equalised symbols
     *        [N_sc][U] complex64 (BOX's estimates, inside the constellation's box, 0
     *        where erased), for a constellation display (docs/signal-quality.md)
     * \param quality_output add two outputs (after the symbols, if on): per item and
     *        user the SINR the LLRs assume (LMMSE's, dB, [U] float32) and the EVM
     *        of that item's estimates (RMS %, decision-directed, [U] float32); and on
     *        message port "quality" per frame (the items of one channel) a dict
     *        {channel, symbols, sinr_db, evm_percent}. Both off: no cost, and on a GPU
     *        the batches stay pipelined; on: each work() call waits for its items.
     */
    static sptr make(int num_antennas,
                     int num_users,
                     int num_subcarriers,
                     const std::string& modulation = "qpsk",
                     int iterations = 20,
                     const std::string& start = "lmmse",
                     bool accelerated = true,
                     float step = 0.0f,
                     const std::string& backend = "auto",
                     bool llr_positive_means_one = true,
                     float llr_clip = 0.0f,
                     int num_threads = 0,
                     const std::vector<int>& devices = std::vector<int>{ 0 },
                     int streams = 3,
                     const std::string& precision = "fp32",
                     const std::string& llr_type = "float",
                     double llr_int8_scale = 8.0,
                     bool equalized_output = false,
                     bool quality_output = false);

    virtual int iterations() const = 0;
    //! Takes effect from the next work() call; the channel is kept.
    virtual void set_iterations(int iterations) = 0;
    virtual std::string start() const = 0;
    virtual void set_start(const std::string& start) = 0;
    virtual bool accelerated() const = 0;
    virtual void set_accelerated(bool accelerated) = 0;
    //! tau in force when set, 0 when taken from each subcarrier's channel.
    virtual float step() const = 0;
    virtual void set_step(float step) = 0;
    //! "fp32", "fp16", "bf16", "fp8_e4m3" or "fp8_e5m2" (see mmse_detector).
    virtual std::string precision() const = 0;
    virtual void set_precision(const std::string& precision) = 0;
    //! "float", "int8" or "fp16": the output items given at make().
    virtual std::string llr_type() const = 0;
    //! The implementation in use, "cpu-box" or "cuda-box".
    virtual std::string implementation() const = 0;
    virtual std::uint64_t channel_updates() const = 0;
    //! Subcarriers erased because H was not finite, all zero or unusable.
    virtual std::uint64_t bad_channel_subcarriers() const = 0;
    //! (symbol, subcarrier) pairs erased because y had NaN/Inf.
    virtual std::uint64_t bad_sample_vectors() const = 0;
    //! Subcarriers whose singular MMSE matrix got diagonal loading.
    virtual std::uint64_t regularized_subcarriers() const = 0;
    //! (subcarrier, user) pairs erased because the user's channel column is zero.
    virtual std::uint64_t unusable_user_channels() const = 0;
    //! Items output as all-zero LLRs because no valid channel was in force.
    virtual std::uint64_t erased_items() const = 0;
};

} // namespace mimodet
} // namespace gr

#endif
