/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The detector configuration: its checks and the names of the modes and backends.

#include <mimodet/detector.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimodet {

namespace {

/*! Every detector mode, once: parse_detector_mode, to_string, validate() and
 * detector_mode_names() (which the apps' --mode choices take through the Python
 * bindings) read this table. A new mode goes here and into each backend
 * (docs/adding-a-detector.md); a backend without it refuses it by name. */
struct ModeName {
    DetectorMode mode;
    const char* name;
};
constexpr ModeName kModes[] = { { DetectorMode::chol, "chol" },
                                { DetectorMode::cg, "cg" },
                                { DetectorMode::cr, "cr" },
                                { DetectorMode::zf, "zf" } };

std::string mode_list()
{
    std::string list;
    for (const auto& m : kModes)
        list += (list.empty() ? "" : ", ") + std::string(m.name);
    return list;
}

} // namespace

std::vector<std::string> detector_mode_names()
{
    std::vector<std::string> names;
    for (const auto& m : kModes)
        names.emplace_back(m.name);
    return names;
}

DetectorMode parse_detector_mode(const std::string& name)
{
    if (name == "cholesky" || name == "mmse") // aliases of exact MMSE
        return DetectorMode::chol;
    for (const auto& m : kModes)
        if (name == m.name)
            return m.mode;
    throw std::invalid_argument("unknown detector mode '" + name + "' (expected " +
                                mode_list() + ")");
}

std::string to_string(DetectorMode mode)
{
    for (const auto& m : kModes)
        if (mode == m.mode)
            return m.name;
    return "mode " + std::to_string(static_cast<int>(mode));
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
    bool known = false;
    for (const auto& m : kModes)
        known = known || mode == m.mode;
    if (!known)
        throw std::invalid_argument("detector: unknown " + to_string(mode) + " (expected " +
                                    mode_list() + ")");
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
