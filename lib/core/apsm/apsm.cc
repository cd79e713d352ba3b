/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "core/apsm/apsm.h"
#include <Eigen/Dense>
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mimodet {

void ApsmParams::validate() const
{
    if (window == 0)
        throw std::invalid_argument("APSM: the window W must be at least 1");
    if (!(weight_linear >= 0.0) || !(weight_gaussian >= 0.0) ||
        !(weight_linear + weight_gaussian > 0.0) || !std::isfinite(weight_linear) ||
        !std::isfinite(weight_gaussian))
        throw std::invalid_argument("APSM: the kernel weights w_L, w_G must be >= 0, not both 0");
    if (!(kernel_variance > 0.0) || !std::isfinite(kernel_variance))
        throw std::invalid_argument("APSM: the Gaussian kernel variance must be > 0");
    if (!(tolerance >= 0.0) || !std::isfinite(tolerance))
        throw std::invalid_argument("APSM: the tolerance eps must be >= 0");
    if (max_dictionary != 0 && max_dictionary < window)
        throw std::invalid_argument("APSM: the dictionary maximum (" +
                                    std::to_string(max_dictionary) +
                                    ") must be 0 (no limit) or at least the window W (" +
                                    std::to_string(window) + ")");
}


namespace apsm {

namespace {

bool finite(cf32 v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }

double dot(const double* a, const double* b, std::size_t n)
{
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        s += a[i] * b[i];
    return s;
}

double gaussian(const double* a, const double* b, std::size_t n, double variance)
{
    double d2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double d = a[i] - b[i];
        d2 += d * d;
    }
    return std::exp(-d2 / (2.0 * variance));
}

} // namespace


void real_samples(const cf32* r, std::size_t antennas, double scale, double* x1, double* x2)
{
    for (std::size_t m = 0; m < antennas; ++m) {
        const double re = r[m].real() / scale, im = r[m].imag() / scale;
        x1[m] = re;
        x1[antennas + m] = im;
        x2[m] = im;
        x2[antennas + m] = -re;
    }
}

ApsmReceiver::ApsmReceiver(std::size_t antennas, std::size_t users, const ApsmParams& params)
    : d_antennas(antennas), d_users(users), d_params(params), d_filters(users)
{
    if (antennas == 0 || users == 0)
        throw std::invalid_argument("APSM: antennas and users must be at least 1");
    params.validate();
}

std::size_t ApsmReceiver::linear_fallbacks() const
{
    return static_cast<std::size_t>(std::count_if(
        d_filters.begin(), d_filters.end(), [](const ApsmFilter& f) { return f.linear_only; }));
}

TrainingProblem ApsmReceiver::prepare_training(const cf32* r,
                                               const cf32* symbols,
                                               std::size_t count) const
{
    const std::size_t M = d_antennas, K = d_users, L = 2 * M;
    if (count < M)
        throw std::invalid_argument("APSM training: " + std::to_string(count) +
                                    " vectors; the least-squares start needs at least M = " +
                                    std::to_string(M));
    double power = 0.0;
    for (std::size_t t = 0; t < count; ++t) {
        for (std::size_t m = 0; m < M; ++m) {
            if (!finite(r[t * M + m]))
                throw std::invalid_argument("APSM training: vector " + std::to_string(t) +
                                            " has a non-finite sample");
            power += std::norm(std::complex<double>(r[t * M + m]));
        }
        for (std::size_t k = 0; k < K; ++k)
            if (!finite(symbols[t * K + k]))
                throw std::invalid_argument("APSM training: symbol " + std::to_string(t) +
                                            " of user " + std::to_string(k) +
                                            " is not finite");
    }
    power /= static_cast<double>(count);
    if (!(power > 0.0) || !std::isfinite(power))
        throw std::invalid_argument("APSM training: the training input is all zero");

    TrainingProblem p;
    p.antennas = M;
    p.users = K;
    p.count = count;
    p.scale = std::sqrt(power);
    // The samples n = 2t + l - 1 of section 2.4 and their targets, per user.
    const std::size_t D = 2 * count;
    p.dictionary.assign(D * L, 0.0);
    for (std::size_t t = 0; t < count; ++t)
        real_samples(r + t * M, M, p.scale, &p.dictionary[2 * t * L], &p.dictionary[(2 * t + 1) * L]);
    p.targets.resize(K * D);
    for (std::size_t k = 0; k < K; ++k)
        for (std::size_t t = 0; t < count; ++t) {
            p.targets[k * D + 2 * t] = symbols[t * K + k].real();
            p.targets[k * D + 2 * t + 1] = symbols[t * K + k].imag();
        }

    // f_0: the least-squares linear filter u (g = u^T r), c = [Re u; -Im u] / w_L.
    p.linear.assign(K * L, 0.0);
    const double wl = d_params.weight_linear;
    if (d_params.least_squares_start && wl > 0.0) {
        using MatrixC = Eigen::Matrix<std::complex<double>, Eigen::Dynamic, Eigen::Dynamic>;
        MatrixC R(count, M), B(count, K);
        for (std::size_t t = 0; t < count; ++t) {
            for (std::size_t m = 0; m < M; ++m)
                R(t, m) = std::complex<double>(r[t * M + m]) / p.scale;
            for (std::size_t k = 0; k < K; ++k)
                B(t, k) = std::complex<double>(symbols[t * K + k]);
        }
        // By a pivoted QR of R, not the normal equations: collinear antennas (a rank-deficient
        // R) still get a filter, and the condition number is not squared.
        const MatrixC U = R.colPivHouseholderQr().solve(B);
        for (std::size_t k = 0; k < K; ++k)
            for (std::size_t m = 0; m < M; ++m) {
                p.linear[k * L + m] = U(m, k).real() / wl;
                p.linear[k * L + M + m] = -U(m, k).imag() / wl;
            }
    }
    return p;
}

TrainingResult project(const ApsmParams& params, const TrainingProblem& p)
{
    const std::size_t K = p.users, L = p.length(), D = p.samples();
    const double* dict = p.dictionary.data();
    const double wl = params.weight_linear, wg = params.weight_gaussian;
    const double eps = params.tolerance, var = params.kernel_variance;
    TrainingResult res;
    res.linear = p.linear;
    res.coefficient.assign(K * D, 0.0);
    res.error_full.assign(K, 0.0);
    res.error_linear.assign(K, 0.0);
    res.error_start.assign(K, 0.0);
    res.error_apriori.assign(K, 0.0);

    /* Eq. 8 for every user at once, step n = 0 .. D-1. f_n at the window's samples is kept
     * per user (f_values), updated by each step's projections through the kernel values
     * among the window's samples (ring buffer `near`); a sample entering the window is
     * evaluated in full, against every earlier sample (kernel row `row`, shared by the
     * users). */
    const std::size_t W = params.window, Dt = trained_samples(params, D);
    std::vector<double> near(W * W), row(D), f_values(K * W), beta(W);
    auto slot = [W](std::size_t n) { return n % W; };
    for (std::size_t n = 0; n < Dt; ++n) {
        const double* xn = dict + n * L;
        for (std::size_t i = 0; i < n; ++i)
            row[i] = wg > 0.0 ? gaussian(dict + i * L, xn, L, var) : 0.0;
        const std::size_t first = n + 1 >= W ? n + 1 - W : 0; // J_n = first .. n
        for (std::size_t j = first; j <= n; ++j) {
            const double k_jn = wl * dot(dict + j * L, xn, L) + wg * (j == n ? 1.0 : row[j]);
            near[slot(j) * W + slot(n)] = k_jn;
            near[slot(n) * W + slot(j)] = k_jn;
        }
        const double q = 1.0 / static_cast<double>(n - first + 1); // uniform weights q_j
        for (std::size_t k = 0; k < K; ++k) {
            double* c = &res.linear[k * L];
            double* gamma = &res.coefficient[k * D];
            const double* b = &p.targets[k * D];
            double fn = wl * dot(c, xn, L);
            for (std::size_t i = 0; i < n; ++i)
                fn += wg * gamma[i] * row[i];
            if (n >= apriori_first(Dt))
                res.error_apriori[k] += (fn - b[n]) * (fn - b[n]);
            double* fv = &f_values[k * W];
            fv[slot(n)] = fn;
            // eq. 9 for every j of the window, all from f_n
            for (std::size_t j = first; j <= n; ++j) {
                const double e = fv[slot(j)] - b[j];
                const double kjj = near[slot(j) * W + slot(j)]; // 0 only for x = 0, w_G = 0
                beta[slot(j)] = !(kjj > 0.0) ? 0.0
                                : e < -eps   ? (-e - eps) / kjj
                                : e > eps    ? (-e + eps) / kjj
                                             : 0.0;
            }
            for (std::size_t j = first; j <= n; ++j) {
                const double step = q * beta[slot(j)];
                if (step == 0.0)
                    continue;
                gamma[j] += step;
                const double* xj = dict + j * L;
                for (std::size_t l = 0; l < L; ++l)
                    c[l] += step * xj[l];
                for (std::size_t i = first; i <= n; ++i)
                    fv[slot(i)] += step * near[slot(j) * W + slot(i)];
            }
        }
    }
    // Training error of each user's full filter, of its linear part alone and of f_0.
    for (std::size_t j = 0; j < D; ++j) {
        const double* xj = dict + j * L;
        for (std::size_t i = 0; i < D; ++i)
            row[i] = wg > 0.0 ? gaussian(dict + i * L, xj, L, var) : 0.0;
        for (std::size_t k = 0; k < K; ++k) {
            const double lin = wl * dot(&res.linear[k * L], xj, L);
            const double* gamma = &res.coefficient[k * D];
            double g = 0.0;
            for (std::size_t i = 0; i < D; ++i)
                g += gamma[i] * row[i];
            const double b = p.targets[k * D + j];
            const double start = wl * dot(&p.linear[k * L], xj, L);
            res.error_full[k] += (lin + wg * g - b) * (lin + wg * g - b);
            res.error_linear[k] += (lin - b) * (lin - b);
            res.error_start[k] += (start - b) * (start - b);
        }
    }
    return res;
}

void ApsmReceiver::install(TrainingProblem&& p, const TrainingResult& res)
{
    const std::size_t K = d_users, L = 2 * d_antennas, D = p.samples();
    const std::size_t Dt = trained_samples(d_params, D); // the dictionary kept
    if (p.antennas != d_antennas || p.users != K || res.coefficient.size() != K * D ||
        res.linear.size() != K * L || res.error_full.size() != K ||
        res.error_linear.size() != K || res.error_start.size() != K ||
        res.error_apriori.size() != K)
        throw std::logic_error("APSM: a training result of other dimensions");
    const double count = static_cast<double>(p.count);
    for (std::size_t k = 0; k < K; ++k) {
        ApsmFilter& f = d_filters[k];
        f.linear.assign(res.linear.begin() + k * L, res.linear.begin() + (k + 1) * L);
        f.coefficient.assign(res.coefficient.begin() + k * D,
                             res.coefficient.begin() + k * D + Dt);
        // Two real samples per symbol: a complex error variance is twice the mean real one.
        const double apriori =
            2.0 * res.error_apriori[k] / static_cast<double>(Dt - apriori_first(Dt));
        const bool ls_start = d_params.least_squares_start && d_params.weight_linear > 0.0;
        const double fallback_mse = (ls_start ? res.error_start[k] : res.error_linear[k]) / count;
        // The Gaussian part pays when it predicts unseen samples better than the fallback
        // fits the seen ones; its training error alone would flatter it (every training
        // sample is in its dictionary).
        f.linear_only = d_params.weight_gaussian > 0.0 && !(apriori < fallback_mse);
        if (f.linear_only && ls_start)
            f.linear.assign(p.linear.begin() + k * L, p.linear.begin() + (k + 1) * L);
        f.training_mse = f.linear_only ? fallback_mse : res.error_full[k] / count;
        f.noise_variance = f.linear_only ? f.training_mse : std::max(apriori, f.training_mse);
    }
    d_scale = p.scale;
    d_dictionary = std::move(p.dictionary);
    d_dictionary.resize(Dt * L);
    d_dictionary_f.assign(d_dictionary.begin(), d_dictionary.end());
    d_gamma_f.assign(K * Dt, 0.0f);
    d_linear_f.assign(K * L, 0.0f);
    for (std::size_t k = 0; k < K; ++k) {
        const ApsmFilter& f = d_filters[k];
        if (!f.linear_only)
            for (std::size_t i = 0; i < Dt; ++i)
                d_gamma_f[k * Dt + i] = static_cast<float>(d_params.weight_gaussian * f.coefficient[i]);
        for (std::size_t l = 0; l < L; ++l)
            d_linear_f[k * L + l] = static_cast<float>(d_params.weight_linear * f.linear[l]);
    }
    d_erased = 0;
}

void ApsmReceiver::train(const cf32* r, const cf32* symbols, std::size_t count)
{
    TrainingProblem p = prepare_training(r, symbols, count);
    const TrainingResult res = project(d_params, p);
    install(std::move(p), res);
}

void ApsmReceiver::detect(const cf32* r, std::size_t count, cf32* out, int threads)
{
    if (!trained())
        throw std::logic_error("APSM: detect() before train()");
    const std::size_t M = d_antennas, K = d_users, L = 2 * M, D = dictionary_size();
    const double wl = d_params.weight_linear, wg = d_params.weight_gaussian;
    const long long n = static_cast<long long>(count);
    std::size_t erased = 0;
    // Vectors are independent: split over threads, each with its own scratch.
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads()) \
    reduction(+ : erased)
    {
        std::vector<double> x1(L), x2(L), k1(D), k2(D);
#pragma omp for schedule(static)
        for (long long ti = 0; ti < n; ++ti) {
            const std::size_t t = static_cast<std::size_t>(ti);
            const cf32* rt = r + t * M;
            if (!std::all_of(rt, rt + M, finite)) {
                std::fill(out + t * K, out + (t + 1) * K, cf32(0.0f, 0.0f));
                ++erased;
                continue;
            }
            real_samples(rt, M, d_scale, x1.data(), x2.data());
            if (wg > 0.0)
                for (std::size_t i = 0; i < D; ++i) {
                    k1[i] = gaussian(&d_dictionary[i * L], x1.data(), L, d_params.kernel_variance);
                    k2[i] = gaussian(&d_dictionary[i * L], x2.data(), L, d_params.kernel_variance);
                }
            for (std::size_t k = 0; k < K; ++k) {
                const ApsmFilter& f = d_filters[k];
                double re = wl * dot(f.linear.data(), x1.data(), L);
                double im = wl * dot(f.linear.data(), x2.data(), L);
                if (wg > 0.0 && !f.linear_only) {
                    double g1 = 0.0, g2 = 0.0;
                    for (std::size_t i = 0; i < D; ++i) {
                        g1 += f.coefficient[i] * k1[i];
                        g2 += f.coefficient[i] * k2[i];
                    }
                    re += wg * g1;
                    im += wg * g2;
                }
                out[t * K + k] = cf32(static_cast<float>(re), static_cast<float>(im));
            }
        }
    }
    d_erased += erased;
}

void ApsmReceiver::detect_float32(const cf32* r, std::size_t count, cf32* out, int threads)
{
    if (!trained())
        throw std::logic_error("APSM: detect() before train()");
    const std::size_t M = d_antennas, K = d_users, L = 2 * M, D = dictionary_size();
    const float inv_scale = static_cast<float>(1.0 / d_scale);
    const float inv_two_var = static_cast<float>(1.0 / (2.0 * d_params.kernel_variance));
    const bool gaussian_part = d_params.weight_gaussian > 0.0;
    const long long n = static_cast<long long>(count);
    std::size_t erased = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads()) \
    reduction(+ : erased)
    {
        std::vector<float> x1(L), x2(L), k1(D), k2(D);
#pragma omp for schedule(static)
        for (long long ti = 0; ti < n; ++ti) {
            const std::size_t t = static_cast<std::size_t>(ti);
            const cf32* rt = r + t * M;
            if (!std::all_of(rt, rt + M, finite)) {
                std::fill(out + t * K, out + (t + 1) * K, cf32(0.0f, 0.0f));
                ++erased;
                continue;
            }
            for (std::size_t m = 0; m < M; ++m) { // real_samples() in float
                const float re = rt[m].real() * inv_scale, im = rt[m].imag() * inv_scale;
                x1[m] = re;
                x1[M + m] = im;
                x2[m] = im;
                x2[M + m] = -re;
            }
            if (gaussian_part)
                for (std::size_t i = 0; i < D; ++i) {
                    const float* d = &d_dictionary_f[i * L];
                    float s1 = 0.0f, s2 = 0.0f;
                    for (std::size_t l = 0; l < L; ++l) {
                        s1 += (d[l] - x1[l]) * (d[l] - x1[l]);
                        s2 += (d[l] - x2[l]) * (d[l] - x2[l]);
                    }
                    k1[i] = std::exp(-s1 * inv_two_var);
                    k2[i] = std::exp(-s2 * inv_two_var);
                }
            for (std::size_t k = 0; k < K; ++k) {
                const float* c = &d_linear_f[k * L];
                float re = 0.0f, im = 0.0f;
                for (std::size_t l = 0; l < L; ++l) {
                    re += c[l] * x1[l];
                    im += c[l] * x2[l];
                }
                if (gaussian_part && !d_filters[k].linear_only) {
                    const float* g = &d_gamma_f[k * D];
                    for (std::size_t i = 0; i < D; ++i) {
                        re += g[i] * k1[i];
                        im += g[i] * k2[i];
                    }
                }
                out[t * K + k] = cf32(re, im);
            }
        }
    }
    d_erased += erased;
}

} // namespace apsm
} // namespace mimodet
