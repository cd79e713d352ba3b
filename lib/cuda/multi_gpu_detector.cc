/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "core/worker_team.h"
#include "multi_gpu_detector.h"
#include <algorithm>
#include <stdexcept>

namespace mimodet {
namespace cuda {

std::vector<SubcarrierSlice> split_subcarriers(std::size_t num_subcarriers,
                                               const std::vector<int>& devices)
{
    const std::size_t parts = std::min(devices.size(), num_subcarriers);
    std::vector<SubcarrierSlice> slices(parts);
    std::size_t first = 0;
    for (std::size_t k = 0; k < parts; ++k) {
        slices[k].device = devices[k];
        slices[k].first = first;
        slices[k].count = num_subcarriers / parts + (k < num_subcarriers % parts ? 1 : 0);
        first += slices[k].count;
    }
    return slices;
}

namespace {

//! Rethrows `error` with `context` in front of its message, keeping the standard
//! category (invalid_argument, logic_error, anything else as runtime_error).
[[noreturn]] void rethrow_with_context(const std::exception_ptr& error,
                                       const std::string& context)
{
    try {
        std::rethrow_exception(error);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(context + e.what());
    } catch (const std::logic_error& e) {
        throw std::logic_error(context + e.what());
    } catch (const std::exception& e) {
        throw std::runtime_error(context + e.what());
    } catch (...) {
        throw std::runtime_error(context + "unknown exception");
    }
}

DetectorConfig with_engines(DetectorConfig config,
                            const std::vector<int>& devices,
                            const EngineOptions& options)
{
    config.devices = devices;
    config.streams = options.streams;
    return config;
}

} // namespace

struct MultiGpuDetector::Impl {
    Dims dims; // of the whole frame
    std::vector<SubcarrierSlice> slices;
    std::vector<std::unique_ptr<CudaDetector>> engines;
    // Declared after the engines, so its threads stop before the engines are destroyed.
    std::unique_ptr<WorkerTeam> team;

    std::string where(std::size_t k) const
    {
        const auto& s = slices[k];
        return "multi-GPU detector, part " + std::to_string(k + 1) + " of " +
               std::to_string(slices.size()) + " (device " + std::to_string(s.device) +
               ", subcarriers " + std::to_string(s.first) + ".." +
               std::to_string(s.first + s.count - 1) + "): ";
    }

    //! Runs part k's share of a call, naming its device in any error.
    template <typename Work>
    void on_part(std::size_t k, const Work& work) const
    {
        try {
            work(*engines[k], slices[k]);
        } catch (...) {
            rethrow_with_context(std::current_exception(), where(k));
        }
    }
};

MultiGpuDetector::MultiGpuDetector(const DetectorConfig& config,
                                   const std::vector<int>& devices,
                                   const EngineOptions& options)
    : Detector(with_engines(config, devices, options)), d_impl(std::make_unique<Impl>())
{
    d_config.validate();
    if (devices.empty())
        throw std::invalid_argument("multi-GPU detector: the device list is empty");
    Impl& m = *d_impl;
    m.dims = d_config.dims();
    m.slices = split_subcarriers(m.dims.num_subcarriers, devices);
    for (std::size_t k = 0; k < m.slices.size(); ++k) {
        DetectorConfig part = d_config;
        part.num_subcarriers = m.slices[k].count;
        part.devices = { m.slices[k].device };
        // Narrow storage is emulated around this detector (make_detector): a slice's
        // own block scale would differ from the whole symbol's.
        part.precision = Precision::fp32;
        EngineOptions engine = options;
        engine.device = m.slices[k].device;
        // Each engine reads and writes its rows inside the whole frame's buffers.
        engine.host_layout.y_row_items = m.dims.rx_items();
        engine.host_layout.llr_row_items = m.dims.llr_items();
        engine.host_layout.x_hat_row_items = m.dims.symbol_items();
        try {
            m.engines.push_back(std::make_unique<CudaDetector>(part, engine));
        } catch (...) {
            rethrow_with_context(std::current_exception(), m.where(k));
        }
    }
    m.team = std::make_unique<WorkerTeam>(m.slices.size());
}

MultiGpuDetector::~MultiGpuDetector() = default;

const std::vector<SubcarrierSlice>& MultiGpuDetector::slices() const
{
    return d_impl->slices;
}

void MultiGpuDetector::set_channel(const cf32* h, float n0)
{
    Impl& m = *d_impl;
    const std::size_t per_subcarrier = m.dims.num_antennas * m.dims.num_users;
    m.team->run([&](std::size_t k) {
        m.on_part(k, [&](CudaDetector& engine, const SubcarrierSlice& s) {
            engine.set_channel(h + s.first * per_subcarrier, n0); // H slices are dense
        });
    });
}

void MultiGpuDetector::detect(const cf32* y,
                              std::size_t n_symbols,
                              float* llr,
                              cf32* x_hat)
{
    if (!has_channel())
        throw std::logic_error(name() + ": detect() called before set_channel()");
    Impl& m = *d_impl;
    const Dims& d = m.dims;
    const std::size_t llr_per_subcarrier = d.num_users * d.bits_per_symbol;
    m.team->run([&](std::size_t k) {
        m.on_part(k, [&](CudaDetector& engine, const SubcarrierSlice& s) {
            // The slice's first row; the engine steps by the frame's row strides.
            engine.detect(y + s.first * d.num_antennas,
                          n_symbols,
                          llr + s.first * llr_per_subcarrier,
                          x_hat ? x_hat + s.first * d.num_users : nullptr);
        });
    });
}

bool MultiGpuDetector::equalizer_gains(float* unbias, float* sinr) const
{
    const Impl& m = *d_impl;
    for (std::size_t k = 0; k < m.engines.size(); ++k) {
        const std::size_t at = m.slices[k].first * m.dims.num_users;
        if (!m.engines[k]->equalizer_gains(unbias + at, sinr + at))
            return false;
    }
    return true;
}

bool MultiGpuDetector::has_channel() const
{
    for (const auto& engine : d_impl->engines)
        if (!engine->has_channel())
            return false;
    return true;
}

DetectorStats MultiGpuDetector::stats() const
{
    DetectorStats sum;
    for (const auto& engine : d_impl->engines)
        sum += engine->stats();
    // Every engine sees every call: these count calls, not subcarriers.
    const DetectorStats first = d_impl->engines.front()->stats();
    sum.channels = first.channels;
    sum.symbols = first.symbols;
    sum.invalid_noise_variance = first.invalid_noise_variance;
    return sum;
}

std::string MultiGpuDetector::name() const
{
    std::string devices;
    for (const auto& s : d_impl->slices)
        devices += (devices.empty() ? "" : ",") + std::to_string(s.device);
    return "cuda-" + to_string(d_config.mode) + " x" +
           std::to_string(d_impl->slices.size()) + " GPUs (" + devices + ")";
}

} // namespace cuda
} // namespace mimodet
