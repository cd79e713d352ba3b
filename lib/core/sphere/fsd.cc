/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "core/sphere/fsd.h"
#include "core/mmse/numerics.h"
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace mimodet {
namespace sphere {

namespace {

using cd = std::complex<double>;
using MatrixD = Eigen::Matrix<cd, Eigen::Dynamic, Eigen::Dynamic>;

/*! Upper-triangular R with G = R^H R (Cholesky, column by column) and real positive
 * diagonal; returns the smallest pivot R_cc^2 (<= 0 when G is not positive definite; R is
 * then not usable). */
double cholesky_upper(const MatrixD& g, MatrixD& r)
{
    const Eigen::Index n = g.rows();
    r = MatrixD::Zero(n, n);
    double smallest = std::numeric_limits<double>::infinity();
    for (Eigen::Index c = 0; c < n; ++c) {
        for (Eigen::Index i = 0; i < c; ++i) {
            cd v = g(i, c);
            for (Eigen::Index k = 0; k < i; ++k)
                v -= std::conj(r(k, i)) * r(k, c);
            r(i, c) = v / r(i, i);
        }
        double d = g(c, c).real();
        for (Eigen::Index k = 0; k < c; ++k)
            d -= std::norm(r(k, c));
        smallest = std::min(smallest, d);
        if (!(d > 0.0))
            return smallest;
        r(c, c) = std::sqrt(d);
    }
    return smallest;
}

//! The nearest constellation point to z (every point: M <= 256).
std::uint8_t slice(const std::vector<cf32>& points, cf32 z)
{
    std::size_t best = 0;
    float best_d = std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < points.size(); ++i) {
        const float d = std::norm(z - points[i]);
        if (d < best_d)
            best_d = d, best = i;
    }
    return static_cast<std::uint8_t>(best);
}

/*! Fills p from tree level `from` down (columns n-1-from .. 0) by SIC, the levels above
 * taken as they are, and sets its distance: the sum over every level. */
void complete_by_sic(const FsdChannel& ch,
                     const std::vector<cf32>& points,
                     const cf32* rotated,
                     std::size_t from,
                     FsdPath& p)
{
    const std::size_t n = ch.users;
    float distance = 0.0f;
    for (std::size_t t = 0; t < n; ++t) {
        const std::size_t c = n - 1 - t;
        cf32 rest = rotated[c];
        for (std::size_t j = c + 1; j < n; ++j)
            rest -= ch.r[c * n + j] * points[p.point[j]];
        const float rcc = ch.r[c * n + c].real(); // real and positive
        if (t >= from)
            p.point[c] = slice(points, rest / rcc);
        distance += std::norm(rest - rcc * points[p.point[c]]);
    }
    p.distance = distance;
}

} // namespace

void prepare_fsd_channel(const cf32* h,
                         std::size_t antennas,
                         std::size_t users,
                         std::size_t full_levels,
                         FsdChannel& out)
{
    if (users == 0 || users > kMaxStreams || antennas < users)
        throw std::invalid_argument("prepare_fsd_channel: need 1 <= U <= " +
                                    std::to_string(kMaxStreams) + " and B >= U, got U = " +
                                    std::to_string(users) +
                                    ", B = " + std::to_string(antennas));
    const std::size_t n = users, B = antennas;
    out.users = n;
    out.antennas = B;
    out.user_of_column.assign(n, 0);
    out.r.assign(n * n, cf32(0.0f, 0.0f));
    out.qh.assign(n * B, cf32(0.0f, 0.0f));
    out.unusable_user.assign(n, 0);
    out.usable = false;
    out.regularized = false;
    out.noise_floor = 0.0f;

    MatrixD hd(B, n);
    std::vector<double> energy(n, 0.0);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t u = 0; u < n; ++u) {
            const cf32 v = h[b * n + u];
            if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
                return; // erased
            hd(b, u) = cd(v.real(), v.imag());
            energy[u] += std::norm(hd(b, u));
        }
    const double strongest = *std::max_element(energy.begin(), energy.end());
    if (!(strongest > 0.0))
        return;
    const double mean = std::accumulate(energy.begin(), energy.end(), 0.0) / double(n);
    // The loading's noise level (cg/cr's rule): told N0 = 0 or less than this, the LLRs
    // would trust differences that the channel's own conditioning blurs.
    out.noise_floor = static_cast<float>(mmse::kLoading * mean);
    out.usable = true;

    // Ordering from the top level down, on G + eps I so that a singular G still orders
    // (eps is the MMSE family's loading). Unusable users go to the bottom: a full
    // expansion is wasted on a stream without a channel, and their LLRs are 0 anyway.
    const double eps = mmse::kLoading * mean;
    std::vector<std::size_t> remaining, dead;
    for (std::size_t u = 0; u < n; ++u) {
        if (energy[u] < mmse::kMinUserGain * strongest) {
            out.unusable_user[u] = 1;
            dead.push_back(u);
        } else {
            remaining.push_back(u);
        }
    }
    /* P = (G + eps I)^-1 over the usable users once; each pick leaves the others' P as
     * the Schur complement P - p_k p_k^H / P_kk, the inverse of G without that user. */
    const Eigen::Index k0 = static_cast<Eigen::Index>(remaining.size());
    MatrixD p;
    {
        MatrixD hs(B, k0);
        for (Eigen::Index i = 0; i < k0; ++i)
            hs.col(i) = hd.col(static_cast<Eigen::Index>(remaining[i]));
        MatrixD g = hs.adjoint() * hs;
        g.diagonal().array() += eps;
        p = g.ldlt().solve(MatrixD::Identity(k0, k0));
    }
    std::size_t t = 0;
    while (!remaining.empty()) {
        const Eigen::Index k = static_cast<Eigen::Index>(remaining.size());
        Eigen::Index pick = 0;
        for (Eigen::Index i = 1; i < k; ++i) {
            const double a = p(i, i).real(), best = p(pick, pick).real();
            if (t < full_levels ? a > best : a < best)
                pick = i;
        }
        out.user_of_column[n - 1 - t] = static_cast<int>(remaining[pick]);
        MatrixD next(k - 1, k - 1);
        const double pkk = p(pick, pick).real();
        for (Eigen::Index i = 0, a = 0; i < k; ++i) {
            if (i == pick)
                continue;
            for (Eigen::Index j = 0, b = 0; j < k; ++j) {
                if (j == pick)
                    continue;
                next(a, b++) = p(i, j) - p(i, pick) * std::conj(p(j, pick)) / pkk;
            }
            ++a;
        }
        p = next;
        remaining.erase(remaining.begin() + pick);
        ++t;
    }
    for (std::size_t u : dead)
        out.user_of_column[n - 1 - t++] = static_cast<int>(u);

    /* The QR of the ordered H through its Gram matrix, so that the GPU's prepare kernel
     * (lib/cuda/sphere/) computes the same numbers: R from the Cholesky factorisation
     * G_p = H_p^H H_p = R^H R, and Q^H = R^-H H_p^H. When a pivot (nearly) vanishes,
     * G_p + delta I instead: R and the top rows of Q of the QR of [H_p; sqrt(delta) I]. */
    MatrixD hp(B, n);
    for (std::size_t c = 0; c < n; ++c)
        hp.col(static_cast<Eigen::Index>(c)) = hd.col(out.user_of_column[c]);
    const MatrixD gp = hp.adjoint() * hp;
    MatrixD r;
    if (cholesky_upper(gp, r) < mmse::kMinPivotRatio * strongest) {
        MatrixD loaded = gp;
        loaded.diagonal().array() += mmse::kLoading * mean;
        cholesky_upper(loaded, r);
        out.regularized = true;
    }
    // Q^H = R^-H H_p^H, column b of it by forward substitution with the lower R^H.
    MatrixD qh(n, B);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t c = 0; c < n; ++c) {
            cd v = std::conj(hp(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(c)));
            for (std::size_t k = 0; k < c; ++k)
                v -= std::conj(r(k, c)) * qh(k, b);
            qh(c, b) = v / r(c, c).real();
        }
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            out.r[i * n + j] = cf32(static_cast<float>(r(i, j).real()),
                                    static_cast<float>(r(i, j).imag()));
    for (std::size_t c = 0; c < n; ++c)
        for (std::size_t b = 0; b < B; ++b)
            out.qh[c * B + b] = cf32(static_cast<float>(qh(c, b).real()),
                                     static_cast<float>(qh(c, b).imag()));
}

std::size_t fsd_candidates(const FsdChannel& ch,
                           const Constellation& constellation,
                           const cf32* y,
                           std::size_t full_levels,
                           std::size_t list_paths,
                           std::vector<FsdPath>& list)
{
    const std::size_t n = ch.users, B = ch.antennas;
    const auto& points = constellation.points();
    const std::size_t M = points.size(), Q = constellation.bits_per_symbol();
    cf32 rotated[kMaxStreams];
    for (std::size_t c = 0; c < n; ++c) {
        cf32 acc(0.0f, 0.0f);
        for (std::size_t b = 0; b < B; ++b)
            acc += ch.qh[c * B + b] * y[b];
        rotated[c] = acc;
    }
    const std::size_t T = std::min(full_levels, n);
    std::size_t combos = 1;
    for (std::size_t t = 0; t < T; ++t)
        combos *= M;
    list.clear();
    list.reserve(combos + list_paths * (n - T) * Q);
    // Full expansion of the top T levels (digit t of the combination at level t), SIC
    // below.
    for (std::size_t combo = 0; combo < combos; ++combo) {
        FsdPath p{};
        std::size_t digits = combo;
        for (std::size_t t = 0; t < T; ++t) {
            p.point[n - 1 - t] = static_cast<std::uint8_t>(digits % M);
            digits /= M;
        }
        complete_by_sic(ch, points, rotated, T, p);
        list.push_back(p);
    }
    const std::size_t fsd_size = list.size();
    auto by_distance = [&](std::size_t a, std::size_t b) {
        return list[a].distance < list[b].distance ||
               (list[a].distance == list[b].distance && a < b);
    };
    if (list_paths > 0 && T < n) {
        // The SFSD list extension: the N_iter best FSD paths, and at each level below the
        // full expansion one branch per bit of the path's symbol with that bit flipped,
        // completed by SIC.
        std::vector<std::size_t> order(fsd_size);
        std::iota(order.begin(), order.end(), 0);
        const std::size_t keep = std::min(list_paths, fsd_size);
        std::partial_sort(order.begin(), order.begin() + keep, order.end(), by_distance);
        for (std::size_t k = 0; k < keep; ++k) {
            const FsdPath base = list[order[k]];
            for (std::size_t t = T; t < n; ++t) {
                const std::size_t c = n - 1 - t;
                for (std::size_t bit = 0; bit < Q; ++bit) {
                    FsdPath p = base;
                    p.point[c] = static_cast<std::uint8_t>(base.point[c] ^ (1u << (Q - 1 - bit)));
                    complete_by_sic(ch, points, rotated, t + 1, p);
                    list.push_back(p);
                }
            }
        }
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < fsd_size; ++i)
        if (by_distance(i, best))
            best = i;
    return best;
}

void fsd_llrs(const FsdChannel& ch,
              const Constellation& constellation,
              const std::vector<FsdPath>& list,
              float n0,
              float* llr)
{
    const std::size_t n = ch.users, Q = constellation.bits_per_symbol();
    const float inv_n0 = 1.0f / std::max(n0, ch.noise_floor);
    float widest = 0.0f;
    for (const auto& p : list)
        widest = std::max(widest, p.distance);
    for (std::size_t c = 0; c < n; ++c) {
        const std::size_t u = static_cast<std::size_t>(ch.user_of_column[c]);
        for (std::size_t bit = 0; bit < Q; ++bit) {
            float d[2] = { std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::infinity() };
            for (const auto& p : list) {
                const int v = constellation.bit_of(p.point[c], bit);
                d[v] = std::min(d[v], p.distance);
            }
            for (float& x : d)
                if (!std::isfinite(x)) // no counter-hypothesis in the list
                    x = widest;
            llr[u * Q + bit] = ch.unusable_user[u] ? 0.0f : (d[0] - d[1]) * inv_n0;
        }
    }
}

void fsd_hard_llrs(const FsdChannel& ch,
                   const Constellation& constellation,
                   const FsdPath& best,
                   float magnitude,
                   float* llr)
{
    const std::size_t Q = constellation.bits_per_symbol();
    for (std::size_t c = 0; c < ch.users; ++c) {
        const std::size_t u = static_cast<std::size_t>(ch.user_of_column[c]);
        for (std::size_t bit = 0; bit < Q; ++bit)
            llr[u * Q + bit] = ch.unusable_user[u]
                                   ? 0.0f
                                   : (constellation.bit_of(best.point[c], bit) ? magnitude
                                                                                : -magnitude);
    }
}

namespace {

/*! Calls visit(digits, metric) for every s in Omega^U with metric ||y - H s||^2 in float64,
 * updating the residual one column per step (an odometer over the users' point indices). */
template <typename Visit>
void for_every_vector(const cf32* h,
                      const cf32* y,
                      std::size_t B,
                      std::size_t U,
                      const Constellation& constellation,
                      Visit&& visit)
{
    const auto& points = constellation.points();
    const std::size_t M = points.size();
    std::vector<cd> residual(B);
    std::vector<std::size_t> digit(U, 0);
    for (std::size_t b = 0; b < B; ++b) {
        cd r(y[b].real(), y[b].imag());
        for (std::size_t u = 0; u < U; ++u)
            r -= cd(h[b * U + u].real(), h[b * U + u].imag()) *
                 cd(points[0].real(), points[0].imag());
        residual[b] = r;
    }
    while (true) {
        double metric = 0.0;
        for (const cd& r : residual)
            metric += std::norm(r);
        visit(digit, metric);
        std::size_t u = 0;
        for (; u < U; ++u) {
            const std::size_t old = digit[u];
            digit[u] = (old + 1) % M;
            const cd step = cd(points[digit[u]].real(), points[digit[u]].imag()) -
                            cd(points[old].real(), points[old].imag());
            for (std::size_t b = 0; b < B; ++b)
                residual[b] -= cd(h[b * U + u].real(), h[b * U + u].imag()) * step;
            if (digit[u] != 0)
                break; // no carry
        }
        if (u == U)
            return; // every vector seen
    }
}

} // namespace

void ml_exhaustive(const cf32* h,
                   const cf32* y,
                   std::size_t antennas,
                   std::size_t users,
                   const Constellation& constellation,
                   std::uint8_t* points)
{
    double best = std::numeric_limits<double>::infinity();
    for_every_vector(h, y, antennas, users, constellation, [&](const auto& digit, double m) {
        if (m < best) {
            best = m;
            for (std::size_t u = 0; u < users; ++u)
                points[u] = static_cast<std::uint8_t>(digit[u]);
        }
    });
}

void maxlog_exhaustive(const cf32* h,
                       const cf32* y,
                       std::size_t antennas,
                       std::size_t users,
                       const Constellation& constellation,
                       double n0,
                       float* llr)
{
    const std::size_t Q = constellation.bits_per_symbol();
    std::vector<double> d(users * Q * 2, std::numeric_limits<double>::infinity());
    for_every_vector(h, y, antennas, users, constellation, [&](const auto& digit, double m) {
        for (std::size_t u = 0; u < users; ++u)
            for (std::size_t bit = 0; bit < Q; ++bit) {
                double& slot =
                    d[(u * Q + bit) * 2 + static_cast<std::size_t>(
                                              constellation.bit_of(digit[u], bit))];
                slot = std::min(slot, m);
            }
    });
    for (std::size_t i = 0; i < users * Q; ++i)
        llr[i] = static_cast<float>((d[2 * i] - d[2 * i + 1]) / n0);
}

} // namespace sphere
} // namespace mimodet
