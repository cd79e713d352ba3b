/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "core/apsm/cpu_apsm_detector.h"
#include "core/cpu_threads.h"
#include "core/llr_output.h"
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mimodet {

void ApsmConfig::validate() const
{
    if (num_antennas == 0 || num_users == 0)
        throw std::invalid_argument("APSM: num_antennas and num_users must be at least 1, got " +
                                    std::to_string(num_antennas) + " and " +
                                    std::to_string(num_users));
    if (!(llr_clip >= 0.0f) || !std::isfinite(llr_clip))
        throw std::invalid_argument("APSM: llr_clip must be >= 0 (0 = no clipping)");
    if (device < 0)
        throw std::invalid_argument("APSM: device must be >= 0, got " + std::to_string(device));
    if (num_threads < 0 || num_threads > kMaxCpuThreads)
        throw std::invalid_argument("APSM: num_threads must be from 0 to " +
                                    std::to_string(kMaxCpuThreads) + " (0 = all cores), got " +
                                    std::to_string(num_threads));
    params.validate();
}

namespace apsm {

namespace {
bool finite(cf32 v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }
} // namespace

std::size_t count_erased(const cf32* r, std::size_t antennas, std::size_t count)
{
    std::size_t n = 0;
    for (std::size_t t = 0; t < count; ++t)
        n += !std::all_of(r + t * antennas, r + (t + 1) * antennas, finite);
    return n;
}

std::size_t erase_overflows(const cf32* r, std::size_t antennas, cf32* z, std::size_t users,
                            std::size_t count)
{
    std::size_t n = 0;
    for (std::size_t t = 0; t < count; ++t) {
        cf32* zt = z + t * users;
        if (std::all_of(zt, zt + users, finite))
            continue;
        std::fill(zt, zt + users, cf32(0.0f, 0.0f));
        n += std::all_of(r + t * antennas, r + (t + 1) * antennas, finite);
    }
    return n;
}

void soft_output(const Constellation& constellation,
                 const ApsmConfig& config,
                 const double* noise_variance,
                 const cf32* r,
                 const cf32* z,
                 std::size_t count,
                 float* llr)
{
    const std::size_t M = config.num_antennas, K = config.num_users;
    const std::size_t Q = constellation.bits_per_symbol();
    const float sign = config.llr_sign == LlrSign::positive_means_one ? 1.0f : -1.0f;
    const float clip = config.llr_clip > 0.0f ? config.llr_clip : INFINITY;
    std::vector<float> rho(K);
    for (std::size_t k = 0; k < K; ++k)
        rho[k] = static_cast<float>(1.0 / std::max(noise_variance[k], 1e-6));
    for (std::size_t t = 0; t < count; ++t) {
        float* out = llr + t * K * Q;
        if (!std::all_of(r + t * M, r + (t + 1) * M, finite) ||
            !std::all_of(z + t * K, z + (t + 1) * K, finite)) {
            std::fill(out, out + K * Q, 0.0f);
            continue;
        }
        for (std::size_t k = 0; k < K; ++k) {
            constellation.demap_maxlog(z[t * K + k], rho[k], out + k * Q);
            for (std::size_t p = 0; p < Q; ++p)
                out[k * Q + p] = finish_llr(out[k * Q + p], sign, clip);
        }
    }
}

SoftApsmDetector::SoftApsmDetector(const ApsmConfig& config)
    : ApsmDetector(config),
      d_rx((config.validate(), config.num_antennas), config.num_users, config.params),
      d_constellation(config.modulation),
      d_noise(config.num_users, 0.0)
{
}

void SoftApsmDetector::train(const cf32* r, const cf32* symbols, std::size_t count)
{
    const std::size_t most = max_training_symbols();
    if (most && count > most)
        throw std::invalid_argument(name() + ": at most " + std::to_string(most) +
                                    " training symbols, not " + std::to_string(count));
    TrainingProblem problem = d_rx.prepare_training(r, symbols, count); // throws first
    const TrainingResult result = solve(problem);
    ApsmReceiver next = d_rx;
    next.install(std::move(problem), result);
    prepare(next);
    d_rx = std::move(next);
    installed();
    for (std::size_t k = 0; k < d_config.num_users; ++k)
        d_noise[k] = d_rx.filter(k).noise_variance;
    ++d_stats.trainings;
    d_stats.linear_fallbacks = d_rx.linear_fallbacks();
}

void SoftApsmDetector::detect(const cf32* r, std::size_t count, cf32* symbols, float* llr)
{
    const std::size_t K = d_config.num_users, Q = d_constellation.bits_per_symbol();
    d_stats.vectors += count;
    if (!d_rx.trained()) {
        d_stats.untrained_vectors += count;
        if (symbols)
            std::fill(symbols, symbols + count * K, cf32(0.0f, 0.0f));
        if (llr)
            std::fill(llr, llr + count * K * Q, 0.0f);
        return;
    }
    cf32* z = symbols;
    if (!z) {
        d_z.resize(count * K);
        z = d_z.data();
    }
    d_stats.erased_vectors += equalize(r, count, z);
    if (llr) // before erase_overflows(): an overflowed z must give LLR 0, not z = 0's
        soft_output(d_constellation, d_config, d_noise.data(), r, z, count, llr);
    d_stats.erased_vectors += erase_overflows(r, d_config.num_antennas, z, K, count);
}

std::size_t CpuApsmDetector::equalize(const cf32* r, std::size_t count, cf32* z)
{
    const std::size_t erased_before = d_rx.erased_vectors();
    if (d_config.cpu_precision == ApsmPrecision::float32)
        d_rx.detect_float32(r, count, z, d_config.num_threads);
    else
        d_rx.detect(r, count, z, d_config.num_threads);
    return d_rx.erased_vectors() - erased_before;
}

} // namespace apsm
} // namespace mimodet
