/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Independent float64 references for the tests: explicit inverses (LU, not Cholesky),
 * exhaustive demapping over all constellation points, and the TS 38.211 mapping formulas
 * written out per modulation. Slow on purpose; never used by the library. */

#ifndef INCLUDED_MIMODET_TESTS_REFERENCE_H
#define INCLUDED_MIMODET_TESTS_REFERENCE_H

#include <Eigen/Dense>
#include <mimodet/constellation.h>
#include <mimodet/layout.h>
#include <cmath>
#include <limits>
#include <vector>

namespace mimodet {
namespace ref {

using MatrixD = Eigen::Matrix<cf64, Eigen::Dynamic, Eigen::Dynamic>;
using VectorD = Eigen::Matrix<cf64, Eigen::Dynamic, 1>;

//! TS 38.211 5.1.2-5.1.6 written out term by term; bits b[0..Q-1].
inline cf64 standard_point(Modulation m, const int* b)
{
    auto s = [&](int i) { return 1.0 - 2.0 * b[i]; };
    switch (m) {
    case Modulation::bpsk:
        return cf64(s(0), s(0)) / std::sqrt(2.0);
    case Modulation::qpsk:
        return cf64(s(0), s(1)) / std::sqrt(2.0);
    case Modulation::qam16:
        return cf64(s(0) * (2 - s(2)), s(1) * (2 - s(3))) / std::sqrt(10.0);
    case Modulation::qam64:
        return cf64(s(0) * (4 - s(2) * (2 - s(4))), s(1) * (4 - s(3) * (2 - s(5)))) /
               std::sqrt(42.0);
    case Modulation::qam256:
        return cf64(s(0) * (8 - s(2) * (4 - s(4) * (2 - s(6)))),
                    s(1) * (8 - s(3) * (4 - s(5) * (2 - s(7))))) /
               std::sqrt(170.0);
    }
    return {};
}

//! All points in index order (b(0) = MSB of the index).
inline std::vector<cf64> standard_points(Modulation m)
{
    const std::size_t q = bits_per_symbol(m);
    std::vector<cf64> pts(std::size_t{ 1 } << q);
    for (std::size_t i = 0; i < pts.size(); ++i) {
        int b[8] = {};
        for (std::size_t p = 0; p < q; ++p)
            b[p] = static_cast<int>((i >> (q - 1 - p)) & 1u);
        pts[i] = standard_point(m, b);
    }
    return pts;
}

//! Exhaustive max-log LLRs, positive means 1.
inline void demap_bruteforce(
    const std::vector<cf64>& pts, std::size_t q, cf64 z, double rho, double* llr)
{
    for (std::size_t p = 0; p < q; ++p) {
        double m0 = std::numeric_limits<double>::infinity(), m1 = m0;
        for (std::size_t i = 0; i < pts.size(); ++i) {
            const double d = std::norm(z - pts[i]);
            if ((i >> (q - 1 - p)) & 1u)
                m1 = std::min(m1, d);
            else
                m0 = std::min(m0, d);
        }
        llr[p] = rho * (m0 - m1);
    }
}

struct SubcarrierSolution {
    VectorD x_hat; //!< A^-1 H^H y (or G^-1 H^H y for ZF)
    std::vector<double> lambda, rho;
};

enum class RefMode { mmse_exact, mmse_approx_sinr, zf };

/*! li2015 II-B with an explicit LU inverse in float64. mmse_approx_sinr keeps the exact
 * x_hat but uses li2015 II-C's rho = G_uu/N0, lambda = rho/(1+rho). */
inline SubcarrierSolution
solve(const MatrixD& h, const VectorD& y, double n0, RefMode mode)
{
    const long u = h.cols();
    const MatrixD g = h.adjoint() * h;
    MatrixD a = g;
    if (mode != RefMode::zf)
        a += n0 * MatrixD::Identity(u, u);
    const MatrixD a_inv = a.fullPivLu().inverse();
    SubcarrierSolution s;
    s.x_hat = a_inv * (h.adjoint() * y);
    const MatrixD ag = a_inv * g;
    for (long k = 0; k < u; ++k) {
        double lambda = 0, rho = 0;
        if (mode == RefMode::mmse_exact) {
            lambda = ag(k, k).real();
            rho = lambda / (1.0 - lambda);
        } else if (mode == RefMode::mmse_approx_sinr) {
            rho = g(k, k).real() / n0;
            lambda = rho / (1.0 + rho);
        } else {
            lambda = 1.0;
            rho = 1.0 / (n0 * a_inv(k, k).real());
        }
        s.lambda.push_back(lambda);
        s.rho.push_back(rho);
    }
    return s;
}

//! li2015 Algorithm 1 (CG, x0 = 0) in float64, written independently of the library.
inline VectorD cg(const MatrixD& a, const VectorD& b, unsigned iterations)
{
    VectorD x = VectorD::Zero(b.size()), r = b, t = r;
    for (unsigned i = 0; i < iterations; ++i) {
        const VectorD s = a * t;
        const double alpha = r.squaredNorm() / t.dot(s).real();
        x += alpha * t;
        const VectorD r_next = r - alpha * s;
        const double beta = r_next.squaredNorm() / r.squaredNorm();
        t = r_next + beta * t;
        r = r_next;
    }
    return x;
}

//! broumas2023 Figure 4 (Conjugate Residual, x0 = 0) in float64.
inline VectorD cr(const MatrixD& a, const VectorD& b, unsigned iterations)
{
    VectorD x = VectorD::Zero(b.size()), r = b, p = r;
    VectorD m = a * r, e = a * p;
    for (unsigned j = 0; j < iterations; ++j) {
        const double alpha = r.dot(m).real() / e.squaredNorm();
        x += alpha * p;
        const VectorD r_next = r - alpha * e;
        const VectorD m_next = a * r_next;
        const double beta = r_next.dot(m_next).real() / r.dot(m).real();
        p = r_next + beta * p;
        e = m_next + beta * e;
        r = r_next;
        m = m_next;
    }
    return x;
}

//! Reference LLRs of one OFDM symbol in the detector's layout.
inline std::vector<double> llrs(const Dims& d,
                                Modulation m,
                                const cf32* h_all,
                                const cf32* y_all,
                                double n0,
                                RefMode mode,
                                std::vector<cf64>* x_hat_out = nullptr)
{
    const auto pts = standard_points(m);
    std::vector<double> out(d.llr_items());
    if (x_hat_out)
        x_hat_out->assign(d.symbol_items(), cf64());
    for (std::size_t sc = 0; sc < d.num_subcarriers; ++sc) {
        MatrixD h(d.num_antennas, d.num_users);
        VectorD y(d.num_antennas);
        for (std::size_t b = 0; b < d.num_antennas; ++b) {
            y(b) = cf64(y_all[d.rx_index(sc, b)]);
            for (std::size_t u = 0; u < d.num_users; ++u)
                h(b, u) = cf64(h_all[d.channel_index(sc, b, u)]);
        }
        const auto s = solve(h, y, n0, mode);
        for (std::size_t u = 0; u < d.num_users; ++u) {
            demap_bruteforce(pts,
                             d.bits_per_symbol,
                             s.x_hat(u) / s.lambda[u],
                             s.rho[u],
                             out.data() + d.llr_index(sc, u, 0));
            if (x_hat_out)
                (*x_hat_out)[d.symbol_index(sc, u)] = s.x_hat(u);
        }
    }
    return out;
}

} // namespace ref
} // namespace mimodet

#endif
