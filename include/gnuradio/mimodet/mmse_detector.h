/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_MMSE_DETECTOR_H
#define INCLUDED_MIMODET_MMSE_DETECTOR_H

#include <gnuradio/mimodet/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace mimodet {

/*!
 * \brief Soft-output massive-MIMO MMSE detector (exact Cholesky, CG, CR) and ZF baseline.
 * \ingroup mimodet
 *
 * \details
 * Input: one item = one OFDM symbol, [N_sc][B] complex64 (subcarrier-major, antennas
 * contiguous). Output: one item = [N_sc][U][bits] float32 max-log LLRs (bit 0 = b(0) of
 * TS 38.211), positive meaning bit 1 unless llr_positive_means_one is false.
 *
 * The channel [N_sc][B][U] (tag "mimo_h", c32vector) and noise variance N0 (tag
 * "mimo_n0", double) arrive as stream tags on the first item they apply to and stay in
 * force until the next ones. Items before the first complete channel are an error: the
 * block logs it and stops the flowgraph. A channel tag of the wrong length is logged and
 * the items up to the next valid channel get LLR 0. NaN/Inf in y or H zero only the
 * affected subcarriers.
 *
 * On the GPU the block stays synchronous: work() returns once the LLRs of its items are
 * in the output buffer. With several GPUs in \p devices each frame's subcarriers are
 * split into contiguous slices, one per listed GPU, detected at the same time.
 */
class MIMODET_API mmse_detector : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<mmse_detector> sptr;

    /*!
     * \param num_antennas B, receive antennas
     * \param num_users U, users (layers), U <= B
     * \param num_subcarriers N_sc per OFDM symbol
     * \param modulation "bpsk", "qpsk", "16qam", "64qam" or "256qam"
     * \param mode "chol" (exact MMSE), "cg", "cr" or "zf"
     * \param iterations CG/CR iterations (>= 1 in every mode)
     * \param backend "auto" (GPU if usable, else CPU with one warning), "cpu" or "cuda"
     * \param llr_positive_means_one LLR sign convention (true: log P(1)/P(0))
     * \param llr_clip |LLR| limit, 0 = none (at most 50 on a loaded subcarrier)
     * \param num_threads CPU threads, 0 = all cores
     * \param devices CUDA device ordinals, each >= 0 (empty = {0}); with several,
     *        each frame's subcarriers are split between them; an ordinal may repeat
     *        (several engines on one GPU); backend "auto" with a missing GPU runs on
     *        the CPU
     * \param streams CUDA streams per GPU, overlapping copies and kernels (>= 1)
     * \param precision storage format of H and y: "fp32", "fp16", "bf16", "fp8_e4m3"
     *        or "fp8_e5m2" (rounded per channel and per OFDM symbol after a power-of-two
     *        scale; arithmetic stays float32; docs/precision.md)
     * \param llr_type output items: "float" (float32 LLRs), "int8" (signed bytes,
     *        round(LLR * llr_int8_scale) saturated to +-127) or "fp16" (IEEE binary16
     *        codes as 16-bit items, saturated to +-65504); docs/precision.md. On one GPU
     *        the LLRs are rounded there and only the narrow items come back (on the
     *        CPU and across several GPUs they are rounded on the host).
     * \param llr_int8_scale int8: steps per unit of LLR (8: steps of 1/8, |LLR| up to
     *        15.875)
     * \param equalized_output add output 1: per item the bias-free equalised symbols
     *        [N_sc][U] complex64 (x_hat / lambda: the estimates the demapper reads, 0 where
     *        erased), for a constellation display (docs/signal-quality.md)
     * \param quality_output add two outputs (after the symbols, if on): per item and
     *        user the post-equalizer SINR the LLRs assume (dB, [U] float32) and the EVM
     *        of that item's estimates (RMS %, decision-directed, [U] float32); and on
     *        message port "quality" per frame (the items of one channel) a dict
     *        {channel, symbols, sinr_db, evm_percent}. Both off: no cost, and on a GPU
     *        the batches stay pipelined; on: each work() call waits for its items.
     */
    static sptr make(int num_antennas,
                     int num_users,
                     int num_subcarriers,
                     const std::string& modulation = "16qam",
                     const std::string& mode = "chol",
                     int iterations = 3,
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

    virtual std::string mode() const = 0;
    //! Switches mode (chol, cg, cr, zf) between work() calls; the channel in force is
    //! kept.
    virtual void set_mode(const std::string& mode) = 0;
    virtual int iterations() const = 0;
    virtual void set_iterations(int iterations) = 0;
    //! Storage format of H and y: "fp32", "fp16", "bf16", "fp8_e4m3" or "fp8_e5m2"
    //! (emulated: docs/precision.md).
    virtual std::string precision() const = 0;
    //! Takes effect from the next work() call; the channel is kept.
    virtual void set_precision(const std::string& precision) = 0;
    //! "float", "int8" or "fp16": the output items given at make().
    virtual std::string llr_type() const = 0;
    //! The implementation in use, e.g. "cpu-chol".
    virtual std::string implementation() const = 0;

    virtual std::uint64_t channel_updates() const = 0;
    //! Subcarriers erased because H was not finite or A unusable (per channel update).
    virtual std::uint64_t bad_channel_subcarriers() const = 0;
    //! (symbol, subcarrier) pairs erased because y had NaN/Inf.
    virtual std::uint64_t bad_sample_vectors() const = 0;
    //! Subcarriers whose singular/ill-conditioned A got diagonal loading.
    virtual std::uint64_t regularized_subcarriers() const = 0;
    //! (subcarrier, user) pairs erased because the user's channel column is zero.
    virtual std::uint64_t unusable_user_channels() const = 0;
    //! Items output as all-zero LLRs because no valid channel was in force.
    virtual std::uint64_t erased_items() const = 0;
};

} // namespace mimodet
} // namespace gr

#endif
