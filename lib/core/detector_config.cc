/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The detector configuration: its checks and the names of the modes and backends.

#include <mimodet/detector.h>
#include <stdexcept>
#include <string>

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

} // namespace mimodet
