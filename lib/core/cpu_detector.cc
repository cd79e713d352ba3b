/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cpu_detector.h"
#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <limits>

namespace mimodet {

namespace {

using MatrixC = Eigen::Matrix<cf32, Eigen::Dynamic, Eigen::Dynamic>;
using MatrixCRow = Eigen::Matrix<cf32, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VectorC = Eigen::Matrix<cf32, Eigen::Dynamic, 1>;

//! Largest post-equalization SINR we report; keeps LLRs finite when N0 -> 0.
constexpr float kMaxSinr = 1e7f;
//! Relative diagonal loading for a singular or ill-conditioned A (fraction of mean diag
//! G).
constexpr float kLoading = 1e-5f;
//! A Cholesky pivot below this fraction of the largest diagonal entry counts as singular.
constexpr float kMinPivotRatio = 1e-6f;

bool all_finite(const cf32* v, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(v[i].real()) || !std::isfinite(v[i].imag()))
            return false;
    return true;
}

//! Cholesky that refuses near-singular pivots (Eigen's LLT accepts tiny positive ones).
bool robust_llt(const MatrixC& a, Eigen::LLT<MatrixC>& llt)
{
    llt.compute(a);
    if (llt.info() != Eigen::Success)
        return false;
    const float max_diag = a.diagonal().real().maxCoeff();
    const auto l_diag = llt.matrixLLT().diagonal().real();
    if (!(max_diag > 0.0f) || !l_diag.allFinite())
        return false;
    return l_diag.minCoeff() * l_diag.minCoeff() >= kMinPivotRatio * max_diag;
}

//! li2015 II-C: rho ~ G_uu / N0, lambda = rho / (1 + rho) with Es = 1.
inline void approximate_sinr(float g_uu, float n0, float& rho, float& inv_lambda)
{
    rho = n0 > 0.0f ? std::min(g_uu / n0, kMaxSinr) : kMaxSinr;
    inv_lambda = (1.0f + rho) / rho;
}

} // namespace

CpuDetector::CpuDetector(const DetectorConfig& config)
    : Detector(config), d_dims(config.dims()), d_constellation(config.modulation)
{
    d_config.validate();
    d_threads = config.num_threads > 0 ? config.num_threads : omp_get_max_threads();
    const std::size_t nsc = d_dims.num_subcarriers, b = d_dims.num_antennas,
                      u = d_dims.num_users;
    d_bad.assign(nsc, 1);
    d_inv_lambda.assign(nsc * u, 0.0f);
    d_rho.assign(nsc * u, 0.0f);
    if (config.mode == DetectorMode::chol || config.mode == DetectorMode::zf) {
        d_equalizer.assign(nsc * u * b, cf32());
    } else {
        d_channel.assign(nsc * b * u, cf32());
        d_gram.assign(nsc * u * u, cf32());
    }
}

DetectorStats CpuDetector::stats() const
{
    DetectorStats s;
    s.channels = d_channels;
    s.symbols = d_symbols;
    s.bad_channel_subcarriers = d_bad_channel;
    s.bad_sample_vectors = d_bad_samples.load();
    s.regularized_subcarriers = d_regularized;
    s.invalid_noise_variance = d_invalid_n0;
    return s;
}

void CpuDetector::prepare_subcarrier(std::size_t sc, const cf32* h_all, bool& regularized)
{
    const std::size_t b = d_dims.num_antennas, u = d_dims.num_users;
    const cf32* h_sc = h_all + d_dims.channel_index(sc, 0, 0);
    regularized = false;
    d_bad[sc] = 1;
    if (!all_finite(h_sc, b * u))
        return;

    Eigen::Map<const MatrixCRow> h(h_sc, b, u);
    const MatrixC gram = h.adjoint() * h;
    float* rho = d_rho.data() + sc * u;
    float* inv_lambda = d_inv_lambda.data() + sc * u;
    const DetectorMode mode = d_config.mode;

    if (mode == DetectorMode::cg || mode == DetectorMode::cr) {
        std::copy(h_sc, h_sc + b * u, d_channel.data() + d_dims.channel_index(sc, 0, 0));
        Eigen::Map<MatrixC> a(d_gram.data() + sc * u * u, u, u);
        a = gram;
        a.diagonal().array() += d_n0;
        for (std::size_t k = 0; k < u; ++k)
            approximate_sinr(gram(k, k).real(), d_n0, rho[k], inv_lambda[k]);
        d_bad[sc] = a.allFinite() ? 0 : 1;
        return;
    }

    // chol and zf: factorise A once, keep W = A^-1 H^H and the exact per-user SINR.
    MatrixC a = gram;
    if (mode == DetectorMode::chol)
        a.diagonal().array() += d_n0;
    Eigen::LLT<MatrixC> llt;
    if (!robust_llt(a, llt)) {
        const float mean_diag = gram.diagonal().real().sum() / static_cast<float>(u);
        if (!(mean_diag > 0.0f))
            return; // H = 0: nothing to detect
        a.diagonal().array() += kLoading * mean_diag;
        regularized = true;
        if (!robust_llt(a, llt))
            return;
    }
    const MatrixC a_inv = llt.solve(MatrixC::Identity(u, u));
    Eigen::Map<MatrixCRow> w(d_equalizer.data() + sc * u * b, u, b);
    w = a_inv * h.adjoint();
    for (std::size_t k = 0; k < u; ++k) {
        if (mode == DetectorMode::zf) {
            const float noise = d_n0 * a_inv(k, k).real();
            rho[k] = noise > 0.0f ? std::min(1.0f / noise, kMaxSinr) : kMaxSinr;
            inv_lambda[k] = 1.0f;
            continue;
        }
        // lambda_u = diag(A^-1 G)_u is real; rho = lambda / (1 - lambda) with Es = 1.
        const float lambda = (a_inv.row(k) * gram.col(k)).value().real();
        if (!(lambda > 0.0f) || !std::isfinite(lambda))
            return;
        const float one_minus = 1.0f - lambda;
        rho[k] = one_minus > lambda / kMaxSinr ? lambda / one_minus : kMaxSinr;
        inv_lambda[k] = 1.0f / lambda;
    }
    d_bad[sc] = (w.allFinite()) ? 0 : 1;
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
    std::uint64_t regularized = 0;
#pragma omp parallel for num_threads(d_threads) schedule(static) reduction(+ : regularized)
    for (std::size_t sc = 0; sc < nsc; ++sc) {
        bool reg = false;
        prepare_subcarrier(sc, h, reg);
        regularized += reg ? 1 : 0;
    }
    d_regularized += regularized;
    d_bad_channel +=
        static_cast<std::uint64_t>(std::count(d_bad.begin(), d_bad.end(), 1));
}

void CpuDetector::detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat)
{
    if (!d_has_channel)
        throw std::logic_error(name() + ": detect() called before set_channel()");
    const std::size_t nsc = d_dims.num_subcarriers, b = d_dims.num_antennas,
                      u = d_dims.num_users, q = d_dims.bits_per_symbol;
    const std::size_t total = n_symbols * nsc;
    const DetectorMode mode = d_config.mode;
    const unsigned iterations = d_config.iterations;
    std::uint64_t bad_samples = 0;
    // LLR sign convention and optional clipping, applied while the LLRs are still in
    // cache.
    const float sign = d_config.llr_sign == LlrSign::positive_means_one ? 1.0f : -1.0f;
    const float clip = d_config.llr_clip > 0.0f ? d_config.llr_clip
                                                : std::numeric_limits<float>::infinity();
    const bool post_process = sign < 0.0f || d_config.llr_clip > 0.0f;

#pragma omp parallel num_threads(d_threads) reduction(+ : bad_samples)
    {
        VectorC x(u), y_mf(u), r(u), p(u), s(u), m(u), e(u);
#pragma omp for schedule(static)
        for (std::size_t t = 0; t < total; ++t) {
            const std::size_t sym = t / nsc, sc = t % nsc;
            const cf32* y_sc = y + sym * d_dims.rx_items() + d_dims.rx_index(sc, 0);
            float* llr_sc = llr + sym * d_dims.llr_items() + d_dims.llr_index(sc, 0, 0);
            cf32* x_out =
                x_hat ? x_hat + sym * d_dims.symbol_items() + d_dims.symbol_index(sc, 0)
                      : nullptr;
            const bool bad_y = !all_finite(y_sc, b);
            if (d_bad[sc] || bad_y) {
                bad_samples += bad_y ? 1 : 0;
                std::fill(llr_sc, llr_sc + u * q, 0.0f);
                if (x_out)
                    std::fill(x_out, x_out + u, cf32());
                continue;
            }
            Eigen::Map<const VectorC> yv(y_sc, b);
            if (mode == DetectorMode::chol || mode == DetectorMode::zf) {
                Eigen::Map<const MatrixCRow> w(d_equalizer.data() + sc * u * b, u, b);
                x.noalias() = w * yv;
            } else {
                Eigen::Map<const MatrixCRow> h(
                    d_channel.data() + d_dims.channel_index(sc, 0, 0), b, u);
                Eigen::Map<const MatrixC> a(d_gram.data() + sc * u * u, u, u);
                y_mf.noalias() = h.adjoint() * yv;
                x.setZero();
                r = y_mf;
                p = r;
                if (mode == DetectorMode::cg) {
                    // li2015 Algorithm 1, lines 7-14.
                    float rr = r.squaredNorm();
                    for (unsigned i = 0; i < iterations && rr > 0.0f; ++i) {
                        s.noalias() = a * p;
                        const float ts = p.dot(s).real(); // t^H A t > 0 for A > 0
                        if (!(ts > 0.0f))
                            break;
                        const float alpha = rr / ts;
                        x += alpha * p;
                        r -= alpha * s;
                        const float rr_next = r.squaredNorm();
                        p = r + (rr_next / rr) * p;
                        rr = rr_next;
                    }
                } else {
                    // broumas2023 Figure 4: one matrix-vector product per iteration.
                    m.noalias() = a * r;
                    e = m;
                    float rm = r.dot(m).real(); // (r, Ar) is real for Hermitian A
                    for (unsigned i = 0; i < iterations && rm > 0.0f; ++i) {
                        const float ee = e.squaredNorm();
                        if (!(ee > 0.0f))
                            break;
                        const float alpha = rm / ee;
                        x += alpha * p;
                        r -= alpha * e;
                        m.noalias() = a * r;
                        const float rm_next = r.dot(m).real();
                        const float beta = rm_next / rm;
                        p = r + beta * p;
                        e = m + beta * e;
                        rm = rm_next;
                    }
                }
            }
            const float* rho = d_rho.data() + sc * u;
            const float* inv_lambda = d_inv_lambda.data() + sc * u;
            for (std::size_t k = 0; k < u; ++k)
                d_constellation.demap_maxlog(
                    x[k] * inv_lambda[k], rho[k], llr_sc + k * q);
            if (post_process)
                for (std::size_t i = 0; i < u * q; ++i)
                    llr_sc[i] = std::clamp(sign * llr_sc[i], -clip, clip);
            if (x_out)
                std::copy(x.data(), x.data() + u, x_out);
        }
    }
    d_bad_samples += bad_samples;
    d_symbols += n_symbols;
}

} // namespace mimodet
