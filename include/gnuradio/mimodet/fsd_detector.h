/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_FSD_DETECTOR_H
#define INCLUDED_MIMODET_FSD_DETECTOR_H

#include <gnuradio/mimodet/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace mimodet {

/*!
 * \brief Fixed-complexity sphere decoder (roger2012) for up to 8 users: hard FSD or soft
 * SFSD, on the CPU or a GPU.
 * \ingroup mimodet
 *
 * The items, tags and counters of mmse_detector: in, [N_sc][B] complex per OFDM symbol
 * with the channel [N_sc][B][U] and N0 in the 'mimo_h' / 'mimo_n0' tags on the first
 * item they apply to; out, [N_sc][U][bits] float LLRs (positive means 1 unless
 * llr_positive_means_one is false). output "soft": max-log LLRs of the SFSD's candidate
 * list (a bit without a counter-hypothesis in the list gets the list's widest margin);
 * "hard": the FSD's decisions as LLRs of magnitude 1 (docs/data-contract.md).
 */
class MIMODET_API fsd_detector : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<fsd_detector> sptr;

    /*!
     * \param num_antennas B, receive antennas (>= U)
     * \param num_users U, users (streams), 1..8
     * \param num_subcarriers N_sc per OFDM symbol
     * \param modulation "bpsk", "qpsk", "16qam", "64qam" or "256qam"
     * \param output "soft" (SFSD) or "hard" (FSD)
     * \param list_paths SFSD N_iter, 1..16; 0 = 2, 4, 6 for QPSK, 16-QAM, 64-QAM
     * \param full_levels T fully expanded tree levels; 0 = roger2012 eq. 7 (1 for U <= 4)
     * \param backend "auto" (GPU if usable, else CPU with one warning), "cpu" or "cuda"
     * \param llr_positive_means_one LLR sign convention (true: log P(1)/P(0))
     * \param llr_clip |LLR| limit, 0 = none (at most 50 on a loaded subcarrier)
     * \param num_threads CPU threads, 0 = all cores; on the GPU, the host threads that
     *        copy a work() call's channels into page-locked memory (0: up to 4)
     * \param devices CUDA device ordinals (see mmse_detector)
     * \param streams CUDA streams per GPU (>= 1)
     * \param precision storage format of H and y: "fp32", "fp16", "bf16", "fp8_e4m3"
     *        or "fp8_e5m2" (see mmse_detector; docs/precision.md)
     * \param llr_type output items: "float" (float32 LLRs), "int8" (signed bytes,
     *        round(LLR * llr_int8_scale) saturated to +-127) or "fp16" (IEEE binary16
     *        codes as 16-bit items, saturated to +-65504); docs/precision.md. On one GPU
     *        the LLRs are rounded there and only the narrow items come back (on the
     *        CPU and across several GPUs they are rounded on the host).
     * \param llr_int8_scale int8: steps per unit of LLR (8: steps of 1/8, |LLR| up to
     *        15.875)
     */
    static sptr make(int num_antennas,
                     int num_users,
                     int num_subcarriers,
                     const std::string& modulation = "16qam",
                     const std::string& output = "soft",
                     int list_paths = 0,
                     int full_levels = 0,
                     const std::string& backend = "auto",
                     bool llr_positive_means_one = true,
                     float llr_clip = 0.0f,
                     int num_threads = 0,
                     const std::vector<int>& devices = std::vector<int>{ 0 },
                     int streams = 3,
                     const std::string& precision = "fp32",
                     const std::string& llr_type = "float",
                     double llr_int8_scale = 8.0);

    //! The storage precision in force; set_precision rebuilds the detector between
    //! work() calls (the channel in force is kept).
    virtual std::string precision() const = 0;
    virtual void set_precision(const std::string& precision) = 0;
    //! "soft" or "hard".
    virtual std::string output() const = 0;
    //! Switches between soft and hard output between work() calls; the channel is kept.
    virtual void set_output(const std::string& output) = 0;
    //! N_iter in force (the modulation's default when made with 0).
    virtual int list_paths() const = 0;
    virtual void set_list_paths(int list_paths) = 0;
    //! T in force.
    virtual int full_levels() const = 0;
    //! "float", "int8" or "fp16": the output items given at make().
    virtual std::string llr_type() const = 0;
    //! The implementation in use, e.g. "cpu-sfsd" or "cuda-fsd".
    virtual std::string implementation() const = 0;
    virtual std::uint64_t channel_updates() const = 0;
    //! Subcarriers erased because H was not finite or all zero (per channel update).
    virtual std::uint64_t bad_channel_subcarriers() const = 0;
    //! (symbol, subcarrier) pairs erased because y had NaN/Inf.
    virtual std::uint64_t bad_sample_vectors() const = 0;
    //! Subcarriers whose rank-deficient channel was factored with diagonal loading.
    virtual std::uint64_t regularized_subcarriers() const = 0;
    //! (subcarrier, user) pairs erased because the user's channel column is zero.
    virtual std::uint64_t unusable_user_channels() const = 0;
    //! Items output as all-zero LLRs because no valid channel was in force.
    virtual std::uint64_t erased_items() const = 0;
};

} // namespace mimodet
} // namespace gr

#endif
