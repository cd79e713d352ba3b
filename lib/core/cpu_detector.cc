/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cpu_detector.h"
#include "llr_output.h"
#include "mmse/cholesky.h"
#include "mmse/iterative.h"
#include "mmse/linear_algebra.h"
#include "mmse/numerics.h"
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <limits>

namespace mimodet {

namespace {

using mmse::all_finite;
using mmse::MatrixC;
using mmse::MatrixCRow;

//! Symbols equalized together per subcarrier (columns of one matrix product); bounds the
//! per-thread scratch and keeps it in L1/L2.
constexpr std::size_t kSymbolChunk = 64;

} // namespace

CpuDetector::CpuDetector(const DetectorConfig& config)
    : Detector(config), d_dims(config.dims()), d_constellation(config.modulation)
{
    d_config.validate();
    if (config.sphere() || config.mode == DetectorMode::box) // make_detector's others
        throw std::invalid_argument("CpuDetector: mode " + to_string(config.mode) +
                                    " is not a linear detector (chol, cg, cr, zf)");
    d_threads = config.num_threads > 0 ? config.num_threads : omp_get_max_threads();
    const std::size_t nsc = d_dims.num_subcarriers, b = d_dims.num_antennas,
                      u = d_dims.num_users;
    d_bad.assign(nsc, 1);
    d_loaded.assign(nsc, 0);
    d_inv_lambda.assign(nsc * u, 0.0f);
    d_rho.assign(nsc * u, 0.0f);
    if (config.mode == DetectorMode::chol || config.mode == DetectorMode::zf) {
        d_equalizer.assign(nsc * u * b, cf32());
    } else {
        d_channel.assign(nsc * b * u, cf32());
        d_gram.assign(nsc * u * u, cf32());
    }
}

bool CpuDetector::equalizer_gains(float* unbias, float* sinr) const
{
    if (!d_has_channel)
        return false;
    const std::size_t u = d_dims.num_users;
    for (std::size_t sc = 0; sc < d_dims.num_subcarriers; ++sc)
        for (std::size_t i = sc * u; i < (sc + 1) * u; ++i) {
            unbias[i] = d_bad[sc] ? 0.0f : d_inv_lambda[i];
            sinr[i] = d_bad[sc] ? 0.0f : d_rho[i];
        }
    return true;
}

DetectorStats CpuDetector::stats() const
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

void CpuDetector::prepare_subcarrier(std::size_t sc,
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
    // G = H^H H is Hermitian: a rank-B update of its lower triangle costs half a product.
    MatrixC a = MatrixC::Zero(u, u);
    a.selfadjointView<Eigen::Lower>().rankUpdate(h.adjoint());
    const Eigen::VectorXf gram_diag = a.diagonal().real();
    if (!(gram_diag.maxCoeff() > 0.0f))
        return; // H = 0: nothing to detect on this subcarrier
    float* rho = d_rho.data() + sc * u;
    float* inv_lambda = d_inv_lambda.data() + sc * u;
    const DetectorMode mode = d_config.mode;

    if (mode == DetectorMode::cg || mode == DetectorMode::cr) {
        // CG/CR keep H and A and iterate per symbol (lib/core/mmse/iterative.h).
        std::copy(h_sc, h_sc + b * u, d_channel.data() + d_dims.channel_index(sc, 0, 0));
        const bool finite =
            mmse::iterative_coefficients(a,
                                         gram_diag,
                                         d_n0,
                                         Eigen::Map<MatrixC>(d_gram.data() + sc * u * u, u, u),
                                         rho,
                                         inv_lambda,
                                         regularized,
                                         unusable_users);
        d_bad[sc] = finite ? 0 : 1;
        return;
    }
    // chol and zf keep W = A^-1 H^H and the exact per-user SINR (lib/core/mmse/cholesky.h).
    const auto kind =
        mode == DetectorMode::zf ? mmse::DirectKind::zero_forcing : mmse::DirectKind::mmse;
    if (mmse::cholesky_coefficients(h,
                                    a,
                                    gram_diag,
                                    d_n0,
                                    kind,
                                    Eigen::Map<MatrixCRow>(d_equalizer.data() + sc * u * b, u, b),
                                    rho,
                                    inv_lambda,
                                    regularized,
                                    unusable_users))
        d_bad[sc] = 0;
}

void CpuDetector::set_channel(const cf32* h, float n0)
{
    ++d_channels;
    d_has_channel = true;
    const std::size_t nsc = d_dims.num_subcarriers;
    if (!std::isfinite(n0) || n0 < 0.0f) {
        // Without a usable N0 nothing can be weighted: every subcarrier becomes an
        // erasure.
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
    d_bad_channel +=
        static_cast<std::uint64_t>(std::count(d_bad.begin(), d_bad.end(), 1));
}

void CpuDetector::detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat)
{
    if (!d_has_channel)
        throw std::logic_error(name() + ": detect() called before set_channel()");
    const std::size_t nsc = d_dims.num_subcarriers, b = d_dims.num_antennas,
                      u = d_dims.num_users, q = d_dims.bits_per_symbol;
    const DetectorMode mode = d_config.mode;
    const unsigned iterations = d_config.iterations;
    std::uint64_t bad_samples = 0;
    // LLR sign convention and optional clipping, applied while the LLRs are still in
    // cache.
    const float sign = d_config.llr_sign == LlrSign::positive_means_one ? 1.0f : -1.0f;
    const float clip = d_config.llr_clip > 0.0f ? d_config.llr_clip
                                                : std::numeric_limits<float>::infinity();
    const Eigen::Index rx_stride = static_cast<Eigen::Index>(d_dims.rx_items());

    /* One subcarrier at a time, all symbols of a chunk at once: the received vectors of a
     * subcarrier are the columns of a B x n matrix (stride = one OFDM symbol), so the
     * equalizer and the matched filter are matrix-matrix products, and CG/CR run on all
     * columns together with a step size per column. */
#pragma omp parallel num_threads(d_threads) reduction(+ : bad_samples)
    {
        MatrixC x, y_mf;
        mmse::IterativeScratch scratch;
        std::vector<std::uint8_t> column_bad;
#pragma omp for schedule(static)
        for (std::size_t sc = 0; sc < nsc; ++sc) {
            for (std::size_t sym0 = 0; sym0 < n_symbols; sym0 += kSymbolChunk) {
                const std::size_t n = std::min(kSymbolChunk, n_symbols - sym0);
                const auto cols = static_cast<Eigen::Index>(n);
                auto llr_at = [&](std::size_t k) {
                    return llr + (sym0 + k) * d_dims.llr_items() +
                           d_dims.llr_index(sc, 0, 0);
                };
                auto x_hat_at = [&](std::size_t k) {
                    return x_hat + (sym0 + k) * d_dims.symbol_items() +
                           d_dims.symbol_index(sc, 0);
                };
                column_bad.assign(n, 0);
                const cf32* y_first =
                    y + sym0 * d_dims.rx_items() + d_dims.rx_index(sc, 0);
                for (std::size_t k = 0; k < n; ++k) {
                    column_bad[k] =
                        all_finite(y_first + k * d_dims.rx_items(), b) ? 0 : 1;
                    bad_samples += column_bad[k];
                }
                if (d_bad[sc]) {
                    for (std::size_t k = 0; k < n; ++k) {
                        std::fill(llr_at(k), llr_at(k) + u * q, 0.0f);
                        if (x_hat)
                            std::fill(x_hat_at(k), x_hat_at(k) + u, cf32());
                    }
                    continue;
                }
                Eigen::Map<const MatrixC, 0, Eigen::OuterStride<>> y_sc(
                    y_first, b, cols, Eigen::OuterStride<>(rx_stride));
                if (mode == DetectorMode::chol || mode == DetectorMode::zf) {
                    Eigen::Map<const MatrixCRow> w(d_equalizer.data() + sc * u * b, u, b);
                    x.noalias() = w * y_sc;
                } else {
                    Eigen::Map<const MatrixCRow> h(
                        d_channel.data() + d_dims.channel_index(sc, 0, 0), b, u);
                    Eigen::Map<const MatrixC> a(d_gram.data() + sc * u * u, u, u);
                    y_mf.noalias() = h.adjoint() * y_sc;
                    if (mode == DetectorMode::cg)
                        mmse::conjugate_gradient(a, y_mf, iterations, x, scratch);
                    else
                        mmse::conjugate_residual(a, y_mf, iterations, x, scratch);
                }
                const float* rho = d_rho.data() + sc * u;
                // A loaded channel's LLRs are bounded (docs/reliability.md).
                const float clip_sc =
                    d_loaded[sc] ? std::min(clip, mmse::kLoadedLlrClip) : clip;
                const float* inv_lambda = d_inv_lambda.data() + sc * u;
                for (std::size_t k = 0; k < n; ++k) {
                    float* out = llr_at(k);
                    if (column_bad[k]) {
                        std::fill(out, out + u * q, 0.0f);
                        if (x_hat)
                            std::fill(x_hat_at(k), x_hat_at(k) + u, cf32());
                        continue;
                    }
                    const auto col = static_cast<Eigen::Index>(k);
                    for (std::size_t j = 0; j < u; ++j)
                        d_constellation.demap_maxlog(
                            x(static_cast<Eigen::Index>(j), col) * inv_lambda[j],
                            rho[j],
                            out + j * q);
                    for (std::size_t i = 0; i < u * q; ++i)
                        out[i] = finish_llr(out[i], sign, clip_sc);
                    if (x_hat)
                        for (std::size_t j = 0; j < u; ++j)
                            x_hat_at(k)[j] = x(static_cast<Eigen::Index>(j), col);
                }
            }
        }
    }
    d_bad_samples += bad_samples;
    d_symbols += n_symbols;
}

} // namespace mimodet
