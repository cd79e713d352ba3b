/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The receive chain on the GPU, from antenna samples in host memory to LLRs: the samples
 * cross to the device once, every tensor after them (metric, FFT grid, channel estimate,
 * detector input) stays there, and only the LLRs and a few numbers per frame come back.
 * Internal to the library and its tools (no CUDA header here). */

#ifndef INCLUDED_MIMODET_CUDA_OFDM_CHAIN_H
#define INCLUDED_MIMODET_CUDA_OFDM_CHAIN_H

#include <mimodet/detector.h>
#include <mimodet/ofdm.h>
#include <mimodet/uplink_detector.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mimodet {
namespace cuda {

//! Host sample formats (mimodet/uplink_detector.h): cf32, or sc16 I/Q pairs.
using mimodet::SampleFormat;

struct ChainOptions {
    int device = 0;
    //! Samples each pipelined window brings, in frames (a window also re-reads one frame
    //! and two symbols of the previous one, copied on the device, so that a frame across
    //! the boundary is whole in one window).
    std::size_t frames_per_window = 8;
    //! sc16 input: the float value of one integer step (UHD's full scale: 1/32768).
    float sc16_scale = 1.0f / 32768.0f;
    //! ChainOutputs::llr_int8: int8 steps per unit of LLR (precision::llrs_to_int8).
    float llr_int8_scale = 8.0f;
};

//! One frame the chain found, as OfdmReception says it (start in the caller's samples).
struct ChainFrame {
    std::size_t start = 0; //!< sample where the preamble's CP begins
    double cfo = 0.0;      //!< subcarrier spacings (removed)
    float n0 = 0.0f;       //!< from the unused subcarriers of the data symbols
};

//! Where process() writes; host memory. Pinned LLR memory lets their download overlap
//! the next windows' work.
struct ChainOutputs {
    std::size_t max_frames = 0; //!< frames the buffers below hold
    float* llr = nullptr;       //!< [max_frames][N_data][N_sc][U][Q]
    //! Instead of llr: the LLRs as int8 (ChainOptions::llr_int8_scale), a quarter of the
    //! bytes to download; the same layout.
    std::int8_t* llr_int8 = nullptr;
    //! Instead of llr: the LLRs as binary16 codes (precision::llrs_to_fp16), half the bytes.
    std::uint16_t* llr_fp16 = nullptr;
    cf32* h = nullptr;          //!< optional [max_frames][N_sc][B][U] channel estimates
    cf32* y = nullptr;          //!< optional [max_frames][N_data][N_sc][B] detector input
    //! Optional, for displays: [max_frames][N_data][N_sc][U] the detector's x_hat (not
    //! bias-free; 0 for an erased frame).
    cf32* x_hat = nullptr;
    //! Optional, both or neither: [max_frames][N_sc][U] each frame's
    //! CudaDetector::equalizer_gains (unbias 1 and sinr 0 where the detector has none to
    //! give; both 0 for an erased frame). They cost a device copy per frame and one
    //! download per call.
    float* unbias = nullptr;
    float* sinr = nullptr;
};

//! Where the last process() call spent its time. The detections overlap the next
//! window's chain on other streams, so only the chain's GPU time is told apart.
struct ChainTimes {
    double chain_ms = 0;     //!< GPU time from the samples to the detectors' inputs
    std::size_t windows = 0; //!< windows processed
    //! Host time spent waiting for each window's frame positions; the rest of the call it
    //! was issuing work.
    double host_wait_ms = 0;
};

/*! The GPU receive chain for B antennas and a CudaDetector after it. Per window of
 * samples, on the device: sc16/cf32 -> float; the Schmidl & Cox metric at every position
 * (products summed over antennas, prefix sums in float64); the frames found one after
 * another with OfdmReceiver's rule (first crossing of kPreambleDetectMetric, peak within
 * a symbol, the next search one frame later); fine timing by cross-correlation with the
 * known preamble at every lag within +-CP; the CFO from the ISI-free window; CFO removal
 * and CP removal into one batched cuFFT of every antenna and symbol of every frame; least
 * squares on the pilot combs with linear interpolation; N0 from the unused bins; the
 * detector's [N_data][N_sc][B] input; then the detector (device API) per frame.
 * Windows are pipelined: the upload of the next window, the chain of the current one and
 * the LLR download of the previous one run on three streams, and the frames of a window
 * are detected at once, one detector and stream each. The only sync per window
 * is the host's wait for the frames' positions and N0 (the detector takes N0 on the
 * host), which the GPU writes straight into mapped pinned memory.
 */
class CudaOfdmChain
{
public:
    //! The detector's sizes come from `ofdm` (B, U, N_sc, modulation); mode, iterations
    //! and the LLR options from `detector`.
    CudaOfdmChain(const OfdmConfig& ofdm,
                  const DetectorConfig& detector,
                  const ChainOptions& options = {});
    ~CudaOfdmChain();
    CudaOfdmChain(const CudaOfdmChain&) = delete;
    CudaOfdmChain& operator=(const CudaOfdmChain&) = delete;

    /*! antennas[b] points at `samples` samples of antenna b (cf32, or sc16 as two int16
     * per sample). Finds the frames in them one after another, as repeated
     * OfdmReceiver::receive calls from the end of each frame found would, detects each
     * and writes its LLRs (and h, y when asked) at its index. Stops after
     * outputs.max_frames frames. Returns the frames, in order. `next` (optional) receives
     * the sample a later call on samples that continue these should start from (see
     * UplinkDetector::process). */
    std::vector<ChainFrame> process(const std::vector<const void*>& antennas,
                                    SampleFormat format,
                                    std::size_t samples,
                                    const ChainOutputs& outputs,
                                    std::size_t* next = nullptr);

    //! ChainOptions::sc16_scale and llr_int8_scale for the calls after this one (both
    //! finite and > 0).
    void set_scales(float sc16_scale, float llr_int8_scale);
    const OfdmConfig& config() const;
    ChainTimes last_times() const;
    /*! The counters of the frames' detectors since construction, summed (what
     * CudaDetector::stats() counts: channel subcarriers, sample vectors and users erased
     * inside detected frames). A frame whose N0 is not finite gets LLRs 0 without a
     * detector (process() returns it with that N0) and is not in them. */
    DetectorStats detector_stats() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d_impl;
};

} // namespace cuda
} // namespace mimodet

#endif
