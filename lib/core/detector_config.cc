/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The detector configuration: its checks and the names of the modes and backends.

#include <mimodet/detector.h>
#include "core/cpu_threads.h"
#include <algorithm>
#include <cmath>
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
                                { DetectorMode::zf, "zf" },
                                { DetectorMode::fsd, "fsd" },
                                { DetectorMode::sfsd, "sfsd" },
                                { DetectorMode::ml, "ml" },
                                { DetectorMode::box, "box" } };

//! Bounds of the sphere decoders: streams, fully expanded paths, exhaustive vectors.
constexpr std::size_t kMaxSphereUsers = 8;
constexpr double kMaxFullPaths = 65536.0;
constexpr double kMaxExhaustiveVectors = 16777216.0; // 64-QAM 4x4
constexpr std::size_t kMaxListPaths = 16;
//! BOX iterations: far beyond convergence (20 to 100 suffice), a bound on run time.
constexpr unsigned kMaxBoxIterations = 10000;

std::string mode_list()
{
    std::string list;
    for (const auto& m : kModes)
        list += (list.empty() ? "" : ", ") + std::string(m.name);
    return list;
}

} // namespace

std::size_t default_full_levels(std::size_t users)
{
    const double t = std::ceil(std::sqrt(static_cast<double>(users)) - 1.0 - 1e-9);
    return std::max<std::size_t>(1, static_cast<std::size_t>(std::max(0.0, t)));
}

std::size_t default_list_paths(Modulation m)
{
    switch (m) {
    case Modulation::bpsk:
        return 1;
    case Modulation::qpsk:
        return 2;
    case Modulation::qam16:
        return 4;
    case Modulation::qam64:
        return 6;
    case Modulation::qam256:
        return 8;
    }
    return 4;
}

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

BoxStart parse_box_start(const std::string& name)
{
    if (name == "zero")
        return BoxStart::zero;
    if (name == "mf")
        return BoxStart::mf;
    if (name == "lmmse")
        return BoxStart::lmmse;
    throw std::invalid_argument("unknown BOX start '" + name + "' (expected zero, mf or lmmse)");
}

std::string to_string(BoxStart s)
{
    switch (s) {
    case BoxStart::zero:
        return "zero";
    case BoxStart::mf:
        return "mf";
    case BoxStart::lmmse:
        return "lmmse";
    }
    return "?";
}

Precision parse_precision(const std::string& name)
{
    if (name == "fp32" || name == "float32")
        return Precision::fp32;
    if (name == "fp16" || name == "float16" || name == "half")
        return Precision::fp16;
    if (name == "bf16" || name == "bfloat16")
        return Precision::bf16;
    if (name == "fp8" || name == "fp8_e4m3" || name == "e4m3")
        return Precision::fp8_e4m3;
    if (name == "fp8_e5m2" || name == "e5m2")
        return Precision::fp8_e5m2;
    throw std::invalid_argument("unknown precision '" + name +
                                "' (expected fp32, fp16, bf16, fp8_e4m3 or fp8_e5m2)");
}

std::string to_string(Precision p)
{
    switch (p) {
    case Precision::fp32:
        return "fp32";
    case Precision::fp16:
        return "fp16";
    case Precision::bf16:
        return "bf16";
    case Precision::fp8_e4m3:
        return "fp8_e4m3";
    case Precision::fp8_e5m2:
        return "fp8_e5m2";
    }
    return "?";
}

LlrFormat parse_llr_format(const std::string& name)
{
    if (name == "float32" || name == "float" || name == "fp32")
        return LlrFormat::float32;
    if (name == "fp16" || name == "float16" || name == "half")
        return LlrFormat::fp16;
    if (name == "int8" || name == "byte")
        return LlrFormat::int8;
    throw std::invalid_argument("unknown LLR format '" + name +
                                "' (expected float32, fp16 or int8)");
}

std::string to_string(LlrFormat f)
{
    switch (f) {
    case LlrFormat::float32:
        return "float32";
    case LlrFormat::fp16:
        return "fp16";
    case LlrFormat::int8:
        return "int8";
    }
    return "?";
}

std::size_t llr_bytes(LlrFormat f)
{
    return f == LlrFormat::float32 ? 4 : f == LlrFormat::fp16 ? 2 : 1;
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
    if (mode == DetectorMode::box) {
        if (box_iterations < 1 || box_iterations > kMaxBoxIterations)
            throw std::invalid_argument("detector: box_iterations must be in 1.." +
                                        std::to_string(kMaxBoxIterations) + ", got " +
                                        std::to_string(box_iterations));
        if (!(box_step >= 0.0f) || !std::isfinite(box_step))
            throw std::invalid_argument(
                "detector: box_step must be finite and >= 0 (0 = from the channel), got " +
                std::to_string(box_step));
        if (box_start != BoxStart::zero && box_start != BoxStart::mf &&
            box_start != BoxStart::lmmse)
            throw std::invalid_argument("detector: unknown box_start (expected zero, mf "
                                        "or lmmse)");
    }
    if (sphere()) {
        const std::string m = to_string(mode);
        if (num_users > kMaxSphereUsers || num_antennas < num_users)
            throw std::invalid_argument(
                "detector: mode " + m + " needs at most " + std::to_string(kMaxSphereUsers) +
                " users and at least as many antennas, got " + std::to_string(num_users) +
                " users and " + std::to_string(num_antennas) + " antennas");
        const double points = static_cast<double>(std::size_t(1) << bits_per_symbol(modulation));
        const std::size_t levels = effective_full_levels();
        if (mode != DetectorMode::ml &&
            (levels > num_users || std::pow(points, double(levels)) > kMaxFullPaths))
            throw std::invalid_argument(
                "detector: full_levels " + std::to_string(levels) + " of mode " + m +
                " must be <= users (" + std::to_string(num_users) + ") and give at most " +
                std::to_string(static_cast<long>(kMaxFullPaths)) + " paths (M^T)");
        if (list_paths > kMaxListPaths)
            throw std::invalid_argument("detector: list_paths (N_iter) must be <= " +
                                        std::to_string(kMaxListPaths) + ", got " +
                                        std::to_string(list_paths));
        if (mode == DetectorMode::ml &&
            std::pow(points, double(num_users)) > kMaxExhaustiveVectors)
            throw std::invalid_argument(
                "detector: mode ml searches M^U vectors, at most " +
                std::to_string(static_cast<long>(kMaxExhaustiveVectors)) + "; " +
                to_string(modulation) + " with " + std::to_string(num_users) +
                " users is too many");
    }
    if (precision != Precision::fp32 && precision != Precision::fp16 &&
        precision != Precision::bf16 && precision != Precision::fp8_e4m3 &&
        precision != Precision::fp8_e5m2)
        throw std::invalid_argument("detector: unknown precision (expected fp32, fp16, bf16, "
                                    "fp8_e4m3 or fp8_e5m2)");
    if (!(llr_clip >= 0.0f))
        throw std::invalid_argument("detector: llr_clip must be >= 0 (0 = no clipping)");
    if (num_threads < 0 || num_threads > kMaxCpuThreads)
        throw std::invalid_argument("detector: num_threads must be from 0 to " +
                                    std::to_string(kMaxCpuThreads) + " (0 = all cores), got " +
                                    std::to_string(num_threads));
    if (streams < 1)
        throw std::invalid_argument("detector: streams must be >= 1, got " +
                                    std::to_string(streams));
    for (int device : devices)
        if (device < 0)
            throw std::invalid_argument("detector: device ordinals must be >= 0, got " +
                                        std::to_string(device) + " in devices");
}

} // namespace mimodet
