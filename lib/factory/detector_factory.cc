/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The composition root of the detectors: the one place that knows both the CPU (core) and
// the GPU (cuda) implementations and chooses between them (docs/architecture.md).

#include "core/box/cpu_box_detector.h"
#include "core/cpu_detector.h"
#include "core/precision/quantizing_detector.h"
#include "core/sphere/cpu_sphere_detector.h"
#include <mimodet/detector.h>
#ifdef MIMODET_HAVE_CUDA
#include "cuda/cuda_detector.h"
#include "cuda/multi_gpu_detector.h"
#endif
#include <stdexcept>

namespace mimodet {

bool gpu_available(std::string* why_not)
{
#ifdef MIMODET_HAVE_CUDA
    return cuda::device_count(why_not) > 0;
#else
    if (why_not)
        *why_not = "this build of gr-mimodet has no CUDA backend (built without a CUDA "
                   "toolkit, or with ENABLE_CUDA=OFF)";
    return false;
#endif
}

bool pin_host_memory(const void* p, std::size_t bytes, std::string* why_not)
{
#ifdef MIMODET_HAVE_CUDA
    if (!gpu_available(why_not))
        return false;
    return cuda::register_host_memory(p, bytes, why_not);
#else
    (void)p;
    (void)bytes;
    return gpu_available(why_not);
#endif
}

void unpin_host_memory(const void* p)
{
#ifdef MIMODET_HAVE_CUDA
    cuda::unregister_host_memory(p);
#else
    (void)p;
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

//! The CPU implementation of the configured mode.
std::unique_ptr<Detector> cpu_detector(const DetectorConfig& config)
{
    if (config.sphere())
        return std::make_unique<CpuSphereDetector>(config);
    if (config.mode == DetectorMode::box)
        return std::make_unique<CpuBoxDetector>(config);
    return std::make_unique<CpuDetector>(config);
}

} // namespace

namespace {

//! The detector of `config`, whatever its precision (fp32: as given).
std::unique_ptr<Detector> make_float32_detector(const DetectorConfig& config,
                                                std::string* fallback_reason);

} // namespace

std::unique_ptr<Detector> make_detector(const DetectorConfig& config,
                                        std::string* fallback_reason)
{
    config.validate();
    auto detector = make_float32_detector(config, fallback_reason);
    if (config.precision == Precision::fp32)
        return detector;
#ifdef MIMODET_HAVE_CUDA
    // One GPU engine stores narrow inputs itself: float input rounded on the device,
    // encoded input read as codes (docs/precision.md).
    if (dynamic_cast<cuda::CudaDetector*>(detector.get()))
        return detector;
#endif
    // Narrow storage, emulated: the inputs rounded before the float32 detector.
    return std::make_unique<QuantizingDetector>(config, std::move(detector));
}

namespace {

std::unique_ptr<Detector> make_float32_detector(const DetectorConfig& config,
                                                std::string* fallback_reason)
{
    config.validate();
    std::string why_not;
    switch (config.backend) {
    case Backend::cpu:
        return cpu_detector(config);
    case Backend::cuda:
        if (auto gpu = try_gpu_detector(config, why_not))
            return gpu;
        throw std::runtime_error("backend 'cuda' requested but unusable: " + why_not);
    case Backend::automatic:
        if (auto gpu = try_gpu_detector(config, why_not))
            return gpu;
        if (fallback_reason)
            *fallback_reason = why_not;
        return cpu_detector(config);
    }
    throw std::logic_error("make_detector: unknown backend");
}

} // namespace

} // namespace mimodet
