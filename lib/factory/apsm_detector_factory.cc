/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The APSM receiver's composition root: the CPU (core) or GPU (cuda) implementation.

#include "core/apsm/cpu_apsm_detector.h"
#include <mimodet/apsm.h>
#ifdef MIMODET_HAVE_CUDA
#include "cuda/apsm/cuda_apsm_receiver.h"
#endif
#include <stdexcept>

namespace mimodet {

namespace {

std::unique_ptr<ApsmDetector> try_gpu(const ApsmConfig& config, std::string& why_not)
{
    if (!gpu_available(&why_not))
        return nullptr;
#ifdef MIMODET_HAVE_CUDA
    try {
        return std::make_unique<cuda::CudaApsmReceiver>(config);
    } catch (const std::exception& e) {
        why_not = e.what();
    }
#endif
    return nullptr;
}

} // namespace

std::unique_ptr<ApsmDetector> make_apsm_detector(const ApsmConfig& config,
                                                 std::string* fallback_reason)
{
    config.validate();
    std::string why_not;
    switch (config.backend) {
    case Backend::cpu:
        return std::make_unique<apsm::CpuApsmDetector>(config);
    case Backend::cuda:
        if (auto gpu = try_gpu(config, why_not))
            return gpu;
        throw std::runtime_error("APSM: backend 'cuda' requested but unusable: " + why_not);
    case Backend::automatic:
        if (auto gpu = try_gpu(config, why_not))
            return gpu;
        if (fallback_reason)
            *fallback_reason = why_not;
        return std::make_unique<apsm::CpuApsmDetector>(config);
    }
    throw std::logic_error("make_apsm_detector: unknown backend");
}

} // namespace mimodet
