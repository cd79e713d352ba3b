/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cpu_box_detector.h"
#include "core/llr_output.h"
#include "core/mmse/cholesky.h"
#include "core/mmse/numerics.h"
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mimodet {

namespace {

using mmse::all_finite;
using mmse::MatrixC;
using mmse::MatrixCRow;

//! Symbols iterated together per subcarrier (columns of one product), as CpuDetector.
constexpr std::size_t kSymbolChunk = 64;

} // namespace

CpuBoxDetector::CpuBoxDetector(const DetectorConfig& config)
    : Detector(config),
      d_dims(config.dims()),
      d_constellation(config.modulation),
      d_bounds(box::box_bounds(d_constellation))
{
    d_config.validate();
    if (config.mode != DetectorMode::box)
        throw std::invalid_argument("CpuBoxDetector: mode " + to_string(config.mode) +
                                    " is not box");
    if (config.box_accelerated)
        d_momentum = box::fista_momentum(config.box_iterations);
    d_threads = config.num_threads > 0 ? config.num_threads : omp_get_max_threads();
    const std::size_t nsc = d_dims.num_subcarriers, b = d_dims.num_antennas,
                      u = d_dims.num_users;
    d_bad.assign(nsc, 1);
    d_loaded.assign(nsc, 0);
    d_channel.assign(nsc * b * u, cf32());
    d_gram.assign(nsc * u * u, cf32());
    d_equalizer.assign(nsc * u * b, cf32());
    d_step.assign(nsc, 0.0f);
    d_inv_lambda.assign(nsc * u, 0.0f);
    d_rho.assign(nsc * u, 0.0f);
}

bool CpuBoxDetector::equalizer_gains(float* unbias, float* sinr) const
{
    if (!d_has_channel)
        return false;
    const std::size_t u = d_dims.num_users;
    // x_hat is already BOX's estimate of the point; a user without a channel has 0.
    for (std::size_t sc = 0; sc < d_dims.num_subcarriers; ++sc)
        for (std::size_t i = sc * u; i < (sc + 1) * u; ++i) {
            unbias[i] = d_bad[sc] ? 0.0f : (d_inv_lambda[i] > 0.0f ? 1.0f : 0.0f);
            sinr[i] = d_bad[sc] ? 0.0f : d_rho[i];
        }
    return true;
}

DetectorStats CpuBoxDetector::stats() const
{
    DetectorStats s;
    s.channels = d_channels;
    s.symbols = d_symbols;
    s.bad_channel_subcarriers = d_bad_channel;
    s.bad_sample_vectors = d_bad_samples.load();
    s.regularized_subcarriers = d_regularized;
    s.unusable_user_channels = d_unusable_users;
    s.invalid_noise_variance = d_invalid_n0;
    return s;
}

void CpuBoxDetector::prepare_subcarrier(std::size_t sc,
                                        const cf32* h_all,
                                        bool& regularized,
                                        std::uint64_t& unusable_users)
{
    const std::size_t b = d_dims.num_antennas, u = d_dims.num_users;
    const cf32* h_sc = h_all + d_dims.channel_index(sc, 0, 0);
    regularized = false;
    unusable_users = 0;
    d_bad[sc] = 1;
    if (!all_finite(h_sc, b * u))
        return;
    Eigen::Map<const MatrixCRow> h(h_sc, b, u);
    MatrixC a = MatrixC::Zero(u, u);
    a.selfadjointView<Eigen::Lower>().rankUpdate(h.adjoint());
    const Eigen::VectorXf gram_diag = a.diagonal().real();
    if (!(gram_diag.maxCoeff() > 0.0f))
        return; // H = 0
    Eigen::Map<MatrixC> gram(d_gram.data() + sc * u * u, u, u);
    gram = a.selfadjointView<Eigen::Lower>(); // before cholesky_coefficients loads it
    std::copy(h_sc, h_sc + b * u, d_channel.data() + d_dims.channel_index(sc, 0, 0));
    // The LMMSE start and the LLRs' SINR: exact MMSE's coefficients, its rules for
    // singular A and users without a channel.
    if (!mmse::cholesky_coefficients(h,
                                     a,
                                     gram_diag,
                                     d_n0,
                                     mmse::DirectKind::mmse,
                                     Eigen::Map<MatrixCRow>(d_equalizer.data() + sc * u * b, u, b),
                                     d_rho.data() + sc * u,
                                     d_inv_lambda.data() + sc * u,
                                     regularized,
                                     unusable_users))
        return;
    // A step the bound cannot give (G's row sums overflowing) leaves the clipped start
    // unchanged, as on the GPU (tau = 0 there too).
    const float tau = d_config.box_step > 0.0f ? d_config.box_step : box::default_step(gram);
    d_step[sc] = tau > 0.0f && std::isfinite(tau) ? tau : 0.0f;
    d_bad[sc] = 0;
}

void CpuBoxDetector::set_channel(const cf32* h, float n0)
{
    ++d_channels;
    d_has_channel = true;
    const std::size_t nsc = d_dims.num_subcarriers;
    if (!std::isfinite(n0) || n0 < 0.0f) {
        ++d_invalid_n0;
        std::fill(d_bad.begin(), d_bad.end(), 1);
        d_bad_channel += nsc;
        return;
    }
    d_n0 = n0;
    std::uint64_t regularized = 0, unusable_users = 0;
#pragma omp parallel for num_threads(d_threads) schedule(static) \
    reduction(+ : regularized, unusable_users)
    for (std::size_t sc = 0; sc < nsc; ++sc) {
        bool reg = false;
        std::uint64_t unusable = 0;
        prepare_subcarrier(sc, h, reg, unusable);
        d_loaded[sc] = reg ? 1 : 0;
        regularized += reg ? 1 : 0;
        unusable_users += unusable;
    }
    d_regularized += regularized;
    d_unusable_users += unusable_users;
    d_bad_channel += static_cast<std::uint64_t>(std::count(d_bad.begin(), d_bad.end(), 1));
}

void CpuBoxDetector::detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat)
{
    if (!d_has_channel)
        throw std::logic_error(name() + ": detect() called before set_channel()");
    const std::size_t nsc = d_dims.num_subcarriers, b = d_dims.num_antennas,
                      u = d_dims.num_users, q = d_dims.bits_per_symbol;
    const float sign = d_config.llr_sign == LlrSign::positive_means_one ? 1.0f : -1.0f;
    const float clip = d_config.llr_clip > 0.0f ? d_config.llr_clip
                                                : std::numeric_limits<float>::infinity();
    const BoxStart start = d_config.box_start;
    const unsigned iterations = d_config.box_iterations;
    const box::BoxBounds bounds = d_bounds;
    const auto project = [bounds](cf32 z) { return box::project(z, bounds); };
    const Eigen::Index rx_stride = static_cast<Eigen::Index>(d_dims.rx_items());
    std::uint64_t bad_samples = 0;
#pragma omp parallel num_threads(d_threads) reduction(+ : bad_samples)
    {
        MatrixC x, y_mf;
        box::BoxScratch scratch;
        std::vector<std::uint8_t> column_bad;
#pragma omp for schedule(static)
        for (std::size_t sc = 0; sc < nsc; ++sc) {
            for (std::size_t sym0 = 0; sym0 < n_symbols; sym0 += kSymbolChunk) {
                const std::size_t n = std::min(kSymbolChunk, n_symbols - sym0);
                const auto cols = static_cast<Eigen::Index>(n);
                auto llr_at = [&](std::size_t k) {
                    return llr + (sym0 + k) * d_dims.llr_items() + d_dims.llr_index(sc, 0, 0);
                };
                auto x_hat_at = [&](std::size_t k) {
                    return x_hat + (sym0 + k) * d_dims.symbol_items() +
                           d_dims.symbol_index(sc, 0);
                };
                const cf32* y_first = y + sym0 * d_dims.rx_items() + d_dims.rx_index(sc, 0);
                column_bad.assign(n, 0);
                for (std::size_t k = 0; k < n; ++k) {
                    column_bad[k] = all_finite(y_first + k * d_dims.rx_items(), b) ? 0 : 1;
                    bad_samples += column_bad[k];
                }
                const float* rho = d_rho.data() + sc * u;
                // A loaded channel's LLRs are bounded (docs/reliability.md).
                const float clip_sc =
                    d_loaded[sc] ? std::min(clip, mmse::kLoadedLlrClip) : clip;
                const float* inv_lambda = d_inv_lambda.data() + sc * u;
                if (!d_bad[sc]) {
                    mmse::ReceivedColumns y_sc(y_first, b, cols, Eigen::OuterStride<>(rx_stride));
                    Eigen::Map<const MatrixCRow> h(
                        d_channel.data() + d_dims.channel_index(sc, 0, 0), b, u);
                    Eigen::Map<const MatrixC> gram(d_gram.data() + sc * u * u, u, u);
                    y_mf.noalias() = h.adjoint() * y_sc;
                    // A non-finite column would spread through nothing (columns are
                    // independent), but its NaNs must not reach the iterations' output.
                    for (std::size_t k = 0; k < n; ++k)
                        if (column_bad[k])
                            y_mf.col(static_cast<Eigen::Index>(k)).setZero();
                    switch (start) {
                    case BoxStart::zero:
                        x = MatrixC::Zero(static_cast<Eigen::Index>(u), cols);
                        break;
                    case BoxStart::mf: {
                        // A user without a channel (G_uu = 0) starts at 0, as on the GPU:
                        // 1/0 would put inf * 0 = NaN into every user's products.
                        const Eigen::VectorXf inv_g = gram.diagonal().real().unaryExpr(
                            [](float g) { return g > 0.0f ? 1.0f / g : 0.0f; });
                        x = (inv_g.asDiagonal() * y_mf).unaryExpr(project);
                        break;
                    }
                    case BoxStart::lmmse: {
                        Eigen::Map<const MatrixCRow> w(d_equalizer.data() + sc * u * b, u, b);
                        x.noalias() = w * y_sc;
                        for (std::size_t j = 0; j < u; ++j)
                            x.row(static_cast<Eigen::Index>(j)) *= inv_lambda[j];
                        x = x.unaryExpr(project);
                        for (std::size_t k = 0; k < n; ++k)
                            if (column_bad[k])
                                x.col(static_cast<Eigen::Index>(k)).setZero();
                        break;
                    }
                    }
                    box::box_iterate(
                        gram, y_mf, d_step[sc], bounds, d_momentum, iterations, x, scratch);
                }
                for (std::size_t k = 0; k < n; ++k) {
                    float* out = llr_at(k);
                    if (d_bad[sc] || column_bad[k]) {
                        std::fill(out, out + u * q, 0.0f);
                        if (x_hat)
                            std::fill(x_hat_at(k), x_hat_at(k) + u, cf32());
                        continue;
                    }
                    const auto col = static_cast<Eigen::Index>(k);
                    for (std::size_t j = 0; j < u; ++j) {
                        // rho = 0 (a user without a channel) demaps to LLR 0.
                        const cf32 xj = inv_lambda[j] > 0.0f
                                            ? x(static_cast<Eigen::Index>(j), col)
                                            : cf32();
                        d_constellation.demap_maxlog(xj, rho[j], out + j * q);
                        if (x_hat)
                            x_hat_at(k)[j] = xj;
                    }
                    for (std::size_t i = 0; i < u * q; ++i)
                        out[i] = finish_llr(out[i], sign, clip_sc);
                }
            }
        }
    }
    d_bad_samples += bad_samples;
    d_symbols += n_symbols;
}

} // namespace mimodet
