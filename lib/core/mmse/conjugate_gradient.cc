/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// li2015 Algorithm 1 on the CPU; its GPU twin is in lib/cuda (the iterative kernels).

#include "iterative.h"

namespace mimodet {
namespace mmse {

void conjugate_gradient(const Eigen::Map<const MatrixC>& a,
                        const MatrixC& y_mf,
                        unsigned iterations,
                        MatrixC& x,
                        IterativeScratch& t)
{
    const Eigen::Index cols = y_mf.cols();
    x.setZero(y_mf.rows(), cols);
    t.r = y_mf;
    t.p = t.r;
    // li2015 Algorithm 1, lines 7-14, one column per symbol.
    t.rr = t.r.colwise().squaredNorm();
    for (unsigned i = 0; i < iterations; ++i) {
        t.s.noalias() = a * t.p;
        t.alpha = (t.p.conjugate().cwiseProduct(t.s)).colwise().sum().real();
        for (Eigen::Index k = 0; k < cols; ++k)
            t.alpha(k) = iterative_step(t.rr(k), t.alpha(k)); // rr / (t^H A t)
        x += t.p * t.alpha.asDiagonal();
        t.r -= t.s * t.alpha.asDiagonal();
        t.rr_next = t.r.colwise().squaredNorm();
        t.beta.resize(cols);
        for (Eigen::Index k = 0; k < cols; ++k)
            t.beta(k) = t.alpha(k) > 0.0f ? iterative_step(t.rr_next(k), t.rr(k)) : 0.0f;
        t.p = t.r + t.p * t.beta.asDiagonal();
        t.rr = t.rr_next;
    }
}

} // namespace mmse
} // namespace mimodet
