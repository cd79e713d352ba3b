/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_OFDM_UPLINK_DETECTOR_H
#define INCLUDED_MIMODET_OFDM_UPLINK_DETECTOR_H

#include <gnuradio/block.h>
#include <gnuradio/mimodet/api.h>
#include <cstdint>
#include <string>

namespace gr {
namespace mimodet {

/*!
 * \brief The OFDM uplink receive chain and the MMSE detector in one block: B antenna
 * streams in, LLRs out, on a GPU when one is usable.
 * \ingroup mimodet
 *
 * \details
 * What ofdm_uplink_receiver followed by mmse_detector do, in one block, so that on a GPU
 * the samples cross to the device once and only the LLRs come back (the GPU receive
 * chain, docs/receive-chain.md); on the CPU, the same two steps of the core. Inputs: B
 * time-aligned complex antenna streams. Output: per frame found, N_data LLR items of
 * [N_sc][U][Q] float32 (docs/data-contract.md), the first tagged with mimo_frame,
 * mimo_frame_start, mimo_cfo, mimo_n0 and, once an rx_time tag was seen, mimo_time.
 * Optional display outputs after it (equalized_output, quality_output: off by default,
 * no cost when off) as mmse_detector's.
 * rx_time gaps as in ofdm_uplink_receiver (samp_rate > 0).
 *
 * Erasures, as ofdm_uplink_receiver followed by mmse_detector count them: a frame with
 * NaN/Inf samples in a data symbol has no finite N0 (its mimo_n0 tag says so); its LLR
 * items are 0, counted in erased_items() and logged, one line per frame. NaN/Inf in the
 * pilot symbol make the channel estimate unusable: those subcarriers' LLRs are 0, counted
 * in bad_channel_subcarriers() (and bad_sample_vectors(), unusable_user_channels() for
 * the detector's other erasures), logged once.
 */
class MIMODET_API ofdm_uplink_detector : virtual public gr::block
{
public:
    typedef std::shared_ptr<ofdm_uplink_detector> sptr;

    /*!
     * \param num_antennas B, the number of inputs
     * \param num_users U
     * \param fft_size FFT length
     * \param cp_length cyclic prefix, samples
     * \param num_subcarriers N_sc used subcarriers around DC (even, < fft_size)
     * \param num_data_symbols N_data OFDM data symbols per frame
     * \param modulation "bpsk", "qpsk", "16qam", "64qam" or "256qam"
     * \param mode "chol", "cg", "cr" or "zf"
     * \param iterations CG/CR iterations
     * \param backend "auto" (a GPU when usable, else the CPU with one warning), "cpu" or
     *        "cuda" (an error when no GPU is usable)
     * \param samp_rate the inputs' sample rate, for rx_time gaps (0: ignore rx_time)
     * \param llr_positive_means_one LLR sign (docs/data-contract.md)
     * \param llr_clip |LLR| limit, 0 for none (at most 50 on a loaded subcarrier)
     * \param device CUDA device of the GPU backend
     * \param precision storage format of each frame's H and y: "fp32", "fp16", "bf16",
     *        "fp8_e4m3" or "fp8_e5m2" (emulated on either backend; docs/precision.md)
     * \param sample_type input items: "fc32" (gr_complex) or "sc16" (two int16, I and Q,
     *        as UHD's sc16 source gives them; they cross to the GPU in half the bytes)
     * \param sc16_scale sc16: the float value of one integer step (1/32768: UHD's full
     *        scale is +-1.0)
     * \param llr_type output items: "float" (float32 LLRs), "int8" (signed bytes,
     *        round(LLR * llr_int8_scale) saturated to +-127) or "fp16" (IEEE binary16
     *        codes as 16-bit items, saturated to +-65504); docs/precision.md
     * \param llr_int8_scale int8: steps per unit of LLR (8: steps of 1/8, |LLR| up to
     *        15.875)
     * \param equalized_output output 1: per LLR item, the bias-free equalised symbols
     *        [N_sc][U] complex (docs/signal-quality.md); 0 where erased. Not for the
     *        sphere decoders.
     * \param quality_output two more outputs, per LLR item, [U] float each: the
     *        post-equalizer SINR in dB that the frame's LLRs assume and the symbol's RMS
     *        EVM in percent (NaN where none); and a message per frame on port
     *        "quality": {frame, symbols, sinr_db, evm_percent}
     * \param num_threads the CPU backend's detection threads, 0 = all cores (at most
     *        1024); no effect on the GPU
     */
    static sptr make(int num_antennas,
                     int num_users,
                     int fft_size,
                     int cp_length,
                     int num_subcarriers,
                     int num_data_symbols,
                     const std::string& modulation = "16qam",
                     const std::string& mode = "chol",
                     int iterations = 3,
                     const std::string& backend = "auto",
                     double samp_rate = 0.0,
                     bool llr_positive_means_one = true,
                     float llr_clip = 0.0f,
                     int device = 0,
                     const std::string& precision = "fp32",
                     const std::string& sample_type = "fc32",
                     double sc16_scale = 1.0 / 32768.0,
                     const std::string& llr_type = "float",
                     double llr_int8_scale = 8.0,
                     bool equalized_output = false,
                     bool quality_output = false,
                     int num_threads = 0);

    //! "cuda-chol", "cpu-cg", ...: where the chain runs.
    virtual std::string implementation() const = 0;
    //! The storage precision of H and y given at make().
    virtual std::string precision() const = 0;
    //! "fc32" or "sc16": the input items given at make().
    virtual std::string sample_type() const = 0;
    //! "float", "int8" or "fp16": the output items given at make().
    virtual std::string llr_type() const = 0;
    virtual std::uint64_t frames() const = 0;       //!< frames detected so far
    virtual std::uint64_t gaps() const = 0;         //!< rx_time gaps seen
    virtual std::uint64_t lost_samples() const = 0; //!< samples the gaps lost
    virtual double last_cfo() const = 0;            //!< of the last frame, spacings
    virtual double last_n0() const = 0;             //!< of the last frame

    //! LLR items output as 0 because their frame's N0 was not finite (NaN/Inf samples
    //! in the frame): N_data per such frame.
    virtual std::uint64_t erased_items() const = 0;
    //! Subcarriers erased because a frame's channel estimate was not finite or A
    //! unusable (per frame).
    virtual std::uint64_t bad_channel_subcarriers() const = 0;
    //! (symbol, subcarrier) pairs erased because y had NaN/Inf.
    virtual std::uint64_t bad_sample_vectors() const = 0;
    //! Subcarriers whose singular/ill-conditioned A got diagonal loading.
    virtual std::uint64_t regularized_subcarriers() const = 0;
    //! (subcarrier, user) pairs erased because the user's channel column is zero.
    virtual std::uint64_t unusable_user_channels() const = 0;
};

} // namespace mimodet
} // namespace gr

#endif
