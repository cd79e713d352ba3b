/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cpu_detector.h"
#include <mimodet/detector.h>

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
}

bool gpu_available(std::string* why_not)
{
    // This build carries no GPU kernels; the CUDA engine plugs in here.
    if (why_not)
        *why_not = "this build of gr-mimodet has no CUDA detector backend";
    return false;
}

std::unique_ptr<Detector> make_detector(const DetectorConfig& config,
                                        std::string* fallback_reason)
{
    config.validate();
    std::string why_not;
    switch (config.backend) {
    case Backend::cpu:
        return std::make_unique<CpuDetector>(config);
    case Backend::cuda:
        if (!gpu_available(&why_not))
            throw std::runtime_error("backend 'cuda' requested but unusable: " + why_not);
        break;
    case Backend::automatic:
        if (!gpu_available(&why_not)) {
            if (fallback_reason)
                *fallback_reason = why_not;
            return std::make_unique<CpuDetector>(config);
        }
        break;
    }
    throw std::logic_error("make_detector: no implementation for backend " +
                           to_string(config.backend));
}

} // namespace mimodet
