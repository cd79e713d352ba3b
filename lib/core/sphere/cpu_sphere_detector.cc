/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cpu_sphere_detector.h"
#include "core/llr_output.h"
#include "core/mmse/linear_algebra.h"
#include "core/mmse/numerics.h"
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mimodet {


CpuSphereDetector::CpuSphereDetector(const DetectorConfig& config)
    : Detector(config),
      d_dims(config.dims()),
      d_constellation(config.modulation),
      d_threads(config.num_threads > 0 ? config.num_threads : omp_get_max_threads()),
      d_full_levels(config.effective_full_levels()),
      d_list_paths(config.mode == DetectorMode::sfsd ? config.effective_list_paths() : 0)
{
    config.validate();
    if (!config.sphere())
        throw std::invalid_argument("CpuSphereDetector: mode " + to_string(config.mode) +
                                    " is not a sphere decoder (fsd, sfsd, ml)");
    d_channels.resize(d_dims.num_subcarriers);
}

void CpuSphereDetector::set_channel(const cf32* h, float n0)
{
    ++d_channel_count;
    d_has_channel = true;
    const std::size_t nsc = d_dims.num_subcarriers, B = d_dims.num_antennas,
                      U = d_dims.num_users;
    d_n0_valid = std::isfinite(n0) && n0 >= 0.0f;
    d_n0 = n0;
    if (!d_n0_valid) {
        // Without a usable N0 no LLR can be weighted: every subcarrier is an erasure.
        ++d_invalid_n0;
        d_bad_channel += nsc;
        return;
    }
    if (d_config.mode == DetectorMode::ml)
        d_h.assign(h, h + d_dims.channel_items());
    std::uint64_t bad = 0, regularized = 0, unusable = 0;
#pragma omp parallel for num_threads(d_threads) schedule(static) \
    reduction(+ : bad, regularized, unusable)
    for (std::size_t sc = 0; sc < nsc; ++sc) {
        sphere::FsdChannel& ch = d_channels[sc];
        sphere::prepare_fsd_channel(h + d_dims.channel_index(sc, 0, 0), B, U, d_full_levels, ch);
        bad += ch.usable ? 0 : 1;
        regularized += ch.usable && ch.regularized ? 1 : 0;
        if (ch.usable)
            unusable += static_cast<std::uint64_t>(
                std::count(ch.unusable_user.begin(), ch.unusable_user.end(), 1));
    }
    d_bad_channel += bad;
    d_regularized += regularized;
    d_unusable_users += unusable;
}

void CpuSphereDetector::detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat)
{
    if (!d_has_channel)
        throw std::logic_error(name() + ": detect() called before set_channel()");
    const std::size_t nsc = d_dims.num_subcarriers, B = d_dims.num_antennas,
                      U = d_dims.num_users, Q = d_dims.bits_per_symbol;
    const float sign = d_config.llr_sign == LlrSign::positive_means_one ? 1.0f : -1.0f;
    const float clip = d_config.llr_clip > 0.0f ? d_config.llr_clip
                                                : std::numeric_limits<float>::infinity();
    const DetectorMode mode = d_config.mode;
    const auto& points = d_constellation.points();
    std::uint64_t bad_samples = 0;
    const long long pairs = static_cast<long long>(n_symbols * nsc);
#pragma omp parallel num_threads(d_threads) reduction(+ : bad_samples)
    {
        std::vector<sphere::FsdPath> list;
#pragma omp for schedule(static)
        for (long long k = 0; k < pairs; ++k) {
            const std::size_t sym = static_cast<std::size_t>(k) / nsc,
                              sc = static_cast<std::size_t>(k) % nsc;
            const cf32* y_k = y + sym * d_dims.rx_items() + d_dims.rx_index(sc, 0);
            float* llr_k = llr + sym * d_dims.llr_items() + d_dims.llr_index(sc, 0, 0);
            cf32* x_k = x_hat ? x_hat + sym * d_dims.symbol_items() + d_dims.symbol_index(sc, 0)
                              : nullptr;
            const sphere::FsdChannel& ch = d_channels[sc];
            const bool finite = mmse::all_finite(y_k, B);
            bad_samples += finite ? 0 : 1;
            if (!d_n0_valid || !ch.usable || !finite) {
                std::fill(llr_k, llr_k + U * Q, 0.0f);
                if (x_k)
                    std::fill(x_k, x_k + U, cf32());
                continue;
            }
            if (mode == DetectorMode::ml) {
                sphere::maxlog_exhaustive(d_h.data() + d_dims.channel_index(sc, 0, 0),
                                          y_k, B, U, d_constellation,
                                          std::max(double(d_n0), double(ch.noise_floor)),
                                          llr_k);
                for (std::size_t u = 0; u < U; ++u)
                    if (ch.unusable_user[u])
                        std::fill(llr_k + u * Q, llr_k + (u + 1) * Q, 0.0f);
                if (x_k)
                    std::fill(x_k, x_k + U, cf32());
            } else {
                const std::size_t best = sphere::fsd_candidates(
                    ch, d_constellation, y_k, d_full_levels, d_list_paths, list);
                if (mode == DetectorMode::fsd)
                    sphere::fsd_hard_llrs(ch, d_constellation, list[best], 1.0f, llr_k);
                else
                    sphere::fsd_llrs(ch, d_constellation, list, d_n0, llr_k);
                if (x_k)
                    for (std::size_t c = 0; c < U; ++c)
                        x_k[ch.user_of_column[c]] = ch.unusable_user[ch.user_of_column[c]]
                                                        ? cf32()
                                                        : points[list[best].point[c]];
            }
            const float clip_k = ch.regularized ? std::min(clip, mmse::kLoadedLlrClip) : clip;
            for (std::size_t i = 0; i < U * Q; ++i)
                llr_k[i] = finish_llr(llr_k[i], sign, clip_k);
        }
    }
    d_bad_samples += bad_samples;
    d_symbols += n_symbols;
}

DetectorStats CpuSphereDetector::stats() const
{
    DetectorStats s;
    s.channels = d_channel_count;
    s.symbols = d_symbols;
    s.bad_channel_subcarriers = d_bad_channel;
    s.bad_sample_vectors = d_bad_samples.load();
    s.regularized_subcarriers = d_regularized;
    s.unusable_user_channels = d_unusable_users;
    s.invalid_noise_variance = d_invalid_n0;
    return s;
}

} // namespace mimodet
