/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The receive chain and a detector in one: antenna samples in, every frame's LLRs out, on
 * the CPU (OfdmReceiver and the CPU detector) or on a GPU (the GPU chain, whose samples
 * cross to the device once). */

#ifndef INCLUDED_MIMODET_UPLINK_DETECTOR_H
#define INCLUDED_MIMODET_UPLINK_DETECTOR_H

#include <mimodet/detector.h>
#include <mimodet/ofdm.h>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace mimodet {

//! A frame found and detected.
struct DetectedFrame {
    std::size_t start = 0; //!< sample where the preamble's CP begins
    double cfo = 0.0;      //!< subcarrier spacings (removed)
    float n0 = 0.0f;       //!< estimated from the unused subcarriers
    /*! NaN/Inf samples in a data symbol's FFT window (or in the preamble's CFO window)
     * make N0 not finite: the frame is erased, all its LLRs 0, and the detector does not
     * see it (stats() does not count it), as ofdm_uplink_receiver followed by
     * mmse_detector erase the items of a NaN 'mimo_n0'. */
    bool erased() const { return !std::isfinite(n0); }
};

class UplinkDetector
{
public:
    virtual ~UplinkDetector() = default;

    /*! Finds the frames in `samples` samples of each antenna, one after another as
     * OfdmReceiver::receive from the end of each frame found would, detects up to
     * `max_frames` of them and writes their LLRs at llr + frame * N_data * N_sc * U * Q
     * (the LLR items of docs/data-contract.md, N_data per frame). `next` receives the
     * sample a later call, on samples that continue these, should start from: before it
     * there is no frame that was not returned. */
    virtual std::vector<DetectedFrame> process(const std::vector<const cf32*>& antennas,
                                               std::size_t samples,
                                               float* llr,
                                               std::size_t max_frames,
                                               std::size_t& next) = 0;
    //! "cpu-chol", "cuda-cg", ...
    virtual std::string name() const = 0;
    /*! The detector's counters since construction (DetectorStats): subcarriers, sample
     * vectors and users erased inside detected frames (NaN/Inf in a frame's pilot symbol
     * makes its channel estimate, hence its subcarriers, unusable). Erased frames
     * (DetectedFrame::erased) never reach the detector and are not in them. On the GPU
     * this waits for the work of the last process() call. */
    virtual DetectorStats stats() const = 0;
    const OfdmConfig& ofdm() const { return d_ofdm; }
    //! The detector's configuration, with its sizes those of the frame layout.
    const DetectorConfig& detector() const { return d_detector; }

protected:
    UplinkDetector(const OfdmConfig& ofdm, const DetectorConfig& detector);
    OfdmConfig d_ofdm;
    DetectorConfig d_detector;
};

/*! The frame layout from `ofdm`; mode, iterations, LLR options, backend and devices from
 * `detector` (its sizes are replaced by the layout's). Backends as make_detector: cpu;
 * cuda (the GPU chain on the first listed device; throws naming the reason when no GPU
 * is usable); automatic (the GPU when usable, else the CPU with *fallback_reason set). */
std::unique_ptr<UplinkDetector>
make_uplink_detector(const OfdmConfig& ofdm,
                     const DetectorConfig& detector,
                     std::string* fallback_reason = nullptr);

} // namespace mimodet

#endif
