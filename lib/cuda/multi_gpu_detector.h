/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Internal to the library and its tools, like cuda_detector.h: no CUDA header here. */

#ifndef INCLUDED_MIMODET_MULTI_GPU_DETECTOR_H
#define INCLUDED_MIMODET_MULTI_GPU_DETECTOR_H

#include "cuda_detector.h"
#include <memory>
#include <string>
#include <vector>

namespace mimodet {
namespace cuda {

//! The subcarriers [first, first + count) of a frame that one engine handles.
struct SubcarrierSlice {
    int device = 0;
    std::size_t first = 0;
    std::size_t count = 0;
};

/*! Contiguous, near-equal slices of num_subcarriers in order, one per listed device (the
 * first N_sc mod P slices one subcarrier larger). With fewer subcarriers than devices,
 * the devices at the end of the list get none and are left out.
 */
std::vector<SubcarrierSlice> split_subcarriers(std::size_t num_subcarriers,
                                               const std::vector<int>& devices);

/*! Soft-output MMSE detection of each frame on several GPUs at once: the N_sc subcarriers
 * are split into contiguous slices (split_subcarriers), each handled by its own
 * CudaDetector on its device, all driven concurrently, one host thread per slice (the
 * caller's thread for the first). Subcarriers are independent given the channel, so the
 * LLRs are those of one CudaDetector (to float rounding: the prepare kernel's split of a
 * subcarrier's antennas between warps depends on the frame size), and a frame's latency
 * shrinks with its work.
 * A device may be listed more than once (several engines on one GPU). Not thread-safe:
 * one call at a time, like every Detector.
 */
class MultiGpuDetector : public Detector
{
public:
    //! options.device and options.host_layout are set per slice; streams and
    //! chunk_bytes apply to every engine. Throws, naming the device, when an engine
    //! cannot be built (e.g. a device that does not exist).
    MultiGpuDetector(const DetectorConfig& config,
                     const std::vector<int>& devices,
                     const EngineOptions& options = {});
    ~MultiGpuDetector() override;

    void set_channel(const cf32* h, float n0) override;
    void detect(const cf32* y,
                std::size_t n_symbols,
                float* llr,
                cf32* x_hat = nullptr) override;
    bool equalizer_gains(float* unbias, float* sinr) const override;
    bool has_channel() const override;
    //! The slices' counters summed; channels and symbols count calls, not slices.
    DetectorStats stats() const override;
    //! e.g. "cuda-chol x2 GPUs (0,1)"
    std::string name() const override;

    const std::vector<SubcarrierSlice>& slices() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d_impl;
};

} // namespace cuda
} // namespace mimodet

#endif
