/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The composition root of the uplink detectors: chooses the CPU chain (core) or the GPU
// chain (cuda) as make_detector does for the detectors.

#include "core/ofdm/cpu_uplink_detector.h"
#include <mimodet/uplink_detector.h>
#ifdef MIMODET_HAVE_CUDA
#include "cuda/ofdm/cuda_uplink_detector.h"
#endif
#include <stdexcept>

namespace mimodet {

namespace {

//! The GPU chain, or nullptr with the reason when it cannot run here.
std::unique_ptr<UplinkDetector>
try_gpu(const OfdmConfig& ofdm, const DetectorConfig& detector, std::string& why_not)
{
    if (!gpu_available(&why_not))
        return nullptr;
#ifdef MIMODET_HAVE_CUDA
    try {
        return cuda::make_cuda_uplink_detector(ofdm, detector);
    } catch (const std::exception& e) {
        why_not = e.what();
    }
#endif
    return nullptr;
}

} // namespace

std::unique_ptr<UplinkDetector> make_uplink_detector(const OfdmConfig& ofdm,
                                                     const DetectorConfig& detector,
                                                     std::string* fallback_reason)
{
    const DetectorConfig sized = sized_for(ofdm, detector);
    std::string why_not;
    switch (sized.backend) {
    case Backend::cpu:
        return make_cpu_uplink_detector(ofdm, sized);
    case Backend::cuda:
        if (auto gpu = try_gpu(ofdm, sized, why_not))
            return gpu;
        throw std::runtime_error("backend 'cuda' requested but unusable: " + why_not);
    case Backend::automatic:
        if (auto gpu = try_gpu(ofdm, sized, why_not))
            return gpu;
        if (fallback_reason)
            *fallback_reason = why_not;
        return make_cpu_uplink_detector(ofdm, sized);
    }
    throw std::logic_error("make_uplink_detector: unknown backend");
}

} // namespace mimodet
