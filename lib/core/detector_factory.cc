/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cpu_detector.h"
#include <mimodet/detector.h>
#ifdef MIMODET_HAVE_CUDA
#include "../cuda/cuda_detector.h"
#include "../cuda/multi_gpu_detector.h"
#endif

namespace mimodet {

DetectorMode parse_detector_mode(const std::string& name)
{
    if (name == "chol" || name == "cholesky" || name == "mmse")
        return DetectorMode::chol;
    if (name == "cg")
        return DetectorMode::cg;
    if (name == "cr")
        return DetectorMode::cr;
    if (name == "zf")
        return DetectorMode::zf;
    throw std::invalid_argument("unknown detector mode '" + name +
                                "' (expected chol, cg, cr or zf)");
}

std::string to_string(DetectorMode m)
{
    switch (m) {
    case DetectorMode::chol:
        return "chol";
    case DetectorMode::cg:
        return "cg";
    case DetectorMode::cr:
        return "cr";
    case DetectorMode::zf:
        return "zf";
    }
    return "?";
}

Backend parse_backend(const std::string& name)
{
    if (name == "auto")
        return Backend::automatic;
    if (name == "cpu")
        return Backend::cpu;
    if (name == "cuda" || name == "gpu")
        return Backend::cuda;
    throw std::invalid_argument("unknown backend '" + name +
                                "' (expected auto, cpu or cuda)");
}

std::string to_string(Backend b)
{
    switch (b) {
    case Backend::automatic:
        return "auto";
    case Backend::cpu:
        return "cpu";
    case Backend::cuda:
        return "cuda";
    }
    return "?";
}

void DetectorConfig::validate() const
{
    dims().validate("detector");
    const bool iterative = mode == DetectorMode::cg || mode == DetectorMode::cr;
    if (iterative && iterations == 0)
        throw std::invalid_argument("detector: iterations must be >= 1 for mode " +
                                    to_string(mode));
    if (!(llr_clip >= 0.0f))
        throw std::invalid_argument("detector: llr_clip must be >= 0 (0 = no clipping)");
    if (num_threads < 0)
        throw std::invalid_argument("detector: num_threads must be >= 0 (0 = all cores)");
    if (streams < 1)
        throw std::invalid_argument("detector: streams must be >= 1, got " +
                                    std::to_string(streams));
    for (int device : devices)
        if (device < 0)
            throw std::invalid_argument("detector: device ordinals must be >= 0, got " +
                                        std::to_string(device) + " in devices");
}

bool gpu_available(std::string* why_not)
{
#ifdef MIMODET_HAVE_CUDA
    return cuda::device_count(why_not) > 0;
#else
    if (why_not)
        *why_not = "this build of gr-mimodet has no CUDA backend (no CUDA toolkit at "
                   "build time)";
    return false;
#endif
}

namespace {

//! The GPU detector, or nullptr with the reason when this configuration cannot use one.
std::unique_ptr<Detector> try_gpu_detector(const DetectorConfig& config,
                                           std::string& why_not)
{
    if (!gpu_available(&why_not))
        return nullptr;
#ifdef MIMODET_HAVE_CUDA
    try {
        cuda::EngineOptions options;
        options.streams = config.streams;
        if (config.devices.size() <= 1) { // one engine, no worker threads
            options.device = config.devices.empty() ? 0 : config.devices.front();
            return std::make_unique<cuda::CudaDetector>(config, options);
        }
        return std::make_unique<cuda::MultiGpuDetector>(config, config.devices, options);
    } catch (const std::exception& e) {
        why_not = e.what();
    }
#endif
    return nullptr;
}

} // namespace

std::unique_ptr<Detector> make_detector(const DetectorConfig& config,
                                        std::string* fallback_reason)
{
    config.validate();
    std::string why_not;
    switch (config.backend) {
    case Backend::cpu:
        return std::make_unique<CpuDetector>(config);
    case Backend::cuda:
        if (auto gpu = try_gpu_detector(config, why_not))
            return gpu;
        throw std::runtime_error("backend 'cuda' requested but unusable: " + why_not);
    case Backend::automatic:
        if (auto gpu = try_gpu_detector(config, why_not))
            return gpu;
        if (fallback_reason)
            *fallback_reason = why_not;
        return std::make_unique<CpuDetector>(config);
    }
    throw std::logic_error("make_detector: unknown backend");
}

} // namespace mimodet
