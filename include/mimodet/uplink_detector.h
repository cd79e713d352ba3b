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

//! Host sample formats: complex float, or 16-bit integer I/Q pairs (UHD's sc16).
enum class SampleFormat { cf32, sc16 };
//! "cf32" (= "fc32", "complex"), "sc16" (= "short", "int16").
SampleFormat parse_sample_format(const std::string& name);
std::string to_string(SampleFormat f);

//! The samples of one process() call.
struct UplinkInput {
    //! antennas[b]: `samples` samples of antenna b, cf32, or sc16 as two int16 (I, Q)
    //! per sample. sc16 crosses the host link to the GPU in half of cf32's bytes.
    std::vector<const void*> antennas;
    std::size_t samples = 0;
    SampleFormat format = SampleFormat::cf32;
    //! sc16: the float value of one integer step (UHD's full scale, +-1.0: 1/32768).
    float sc16_scale = 1.0f / 32768.0f;
};

//! Where one process() call writes its LLRs.
struct UplinkOutput {
    //! [max_frames][N_data][N_sc][U][Q] LLRs in `format`: float, uint16_t (binary16
    //! codes) or int8_t (docs/precision.md, "Narrow LLRs").
    void* llr = nullptr;
    std::size_t max_frames = 0;
    LlrFormat format = LlrFormat::float32;
    //! int8: steps per unit of LLR (precision::llrs_to_int8; 8: steps of 1/8, |LLR| up
    //! to 15.875).
    float int8_scale = 8.0f;
    //! Optional, for displays (docs/signal-quality.md): [max_frames][N_data][N_sc][U]
    //! the bias-free equalised symbols (detect()'s x_hat through remove_bias with
    //! Detector::equalizer_gains); 0 where a frame, subcarrier or user is erased. Not
    //! for the sphere decoders (no linear estimate).
    cf32* symbols = nullptr;
    //! Optional, for displays: [max_frames][N_sc][U] the post-equalizer SINR (linear)
    //! each frame's LLRs assume; 0 where erased or where the detector has none to give.
    float* sinr = nullptr;
};

class UplinkDetector
{
public:
    virtual ~UplinkDetector() = default;

    /*! Finds the frames in in.samples samples of each antenna, one after another as
     * OfdmReceiver::receive from the end of each frame found would, detects up to
     * out.max_frames of them and writes their LLRs at frame * N_data * N_sc * U * Q LLRs
     * from out.llr (the LLR items of docs/data-contract.md, N_data per frame). `next`
     * receives the sample a later call, on samples that continue these, should start
     * from: before it there is no frame that was not returned. sc16 samples give what
     * their float values (times sc16_scale) give as cf32; narrow LLRs are
     * precision::llrs_to_int8 / llrs_to_fp16 of the float32 LLRs. out.symbols and
     * out.sinr, when given, are written for the same frames. */
    virtual std::vector<DetectedFrame>
    process(const UplinkInput& in, const UplinkOutput& out, std::size_t& next) = 0;
    //! process() on cf32 samples with float32 LLRs.
    std::vector<DetectedFrame> process(const std::vector<const cf32*>& antennas,
                                       std::size_t samples,
                                       float* llr,
                                       std::size_t max_frames,
                                       std::size_t& next);
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
    //! Throws std::invalid_argument naming what is wrong with in and out.
    void check(const UplinkInput& in, const UplinkOutput& out) const;
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
