/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// broumas2023 Figure 4 on the CPU; its GPU twin is in lib/cuda (the iterative kernels).

#include "iterative.h"

namespace mimodet {
namespace mmse {

void conjugate_residual(const Eigen::Map<const MatrixC>& a,
                        const MatrixC& y_mf,
                        unsigned iterations,
                        MatrixC& x,
                        IterativeScratch& t)
{
    const Eigen::Index cols = y_mf.cols();
    x.setZero(y_mf.rows(), cols);
    t.r = y_mf;
    t.p = t.r;
    // One matrix product A r per iteration.
    t.m.noalias() = a * t.r;
    t.e = t.m;
    t.rr = (t.r.conjugate().cwiseProduct(t.m)).colwise().sum().real(); // (r, Ar)
    for (unsigned i = 0; i < iterations; ++i) {
        t.alpha = t.e.colwise().squaredNorm();
        for (Eigen::Index k = 0; k < cols; ++k)
            t.alpha(k) = iterative_step(t.rr(k), t.alpha(k)); // (r, Ar) / |Ap|^2
        x += t.p * t.alpha.asDiagonal();
        t.r -= t.e * t.alpha.asDiagonal();
        t.m.noalias() = a * t.r;
        t.rr_next = (t.r.conjugate().cwiseProduct(t.m)).colwise().sum().real();
        t.beta.resize(cols);
        for (Eigen::Index k = 0; k < cols; ++k)
            t.beta(k) = t.alpha(k) > 0.0f ? iterative_step(t.rr_next(k), t.rr(k)) : 0.0f;
        t.p = t.r + t.p * t.beta.asDiagonal();
        t.e = t.m + t.e * t.beta.asDiagonal();
        t.rr = t.rr_next;
    }
}

} // namespace mmse
} // namespace mimodet
