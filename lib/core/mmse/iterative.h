/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_MMSE_ITERATIVE_H
#define INCLUDED_MIMODET_CORE_MMSE_ITERATIVE_H

// What the iterative MMSE solvers (conjugate_gradient.cc, conjugate_residual.cc) share:
// the per-channel coefficients, the scratch of one thread, and the step rule.

#include "linear_algebra.h"
#include "numerics.h"
#include <cstdint>

namespace mimodet {
namespace mmse {

/*! The per-channel state of CG/CR on one subcarrier: A = G + N0 I (full, column-major,
 * into `a`), and per user the approximate SINR of li2015 II-C, rho ~ G_uu / N0 and
 * lambda = rho / (1 + rho) (Es = 1), erasing users below kMinUserGain of the strongest.
 * A declared N0 below kLoading mean(diag G) (N0 = 0 or tiny) loads instead (`regularized`):
 * A = G + N0' I with N0' = N0 + kLoading mean(diag G), and rho becomes the pairwise bound
 * rho_u = (G_uu - max_{v != u} |G_uv|^2 / (G_vv + N0')) / N0', which, unlike G_uu / N0,
 * sees two users that the solver cannot tell apart (docs/mmse-detectors.md).
 * gram: G's lower triangle; gram_diag: diag G. Returns false when A is not finite. */
bool iterative_coefficients(const MatrixC& gram,
                            const Eigen::VectorXf& gram_diag,
                            float n0,
                            Eigen::Map<MatrixC> a,
                            float* rho,
                            float* inv_lambda,
                            bool& regularized,
                            std::uint64_t& unusable_users);

//! The loading of CG/CR for a declared N0 and a mean gain mean(diag G): 0, or
//! kLoading mean(diag G) when N0 is below that (the GPU kernels apply the same rule).
inline float iterative_loading(float n0, float mean_gain)
{
    return n0 < kLoading * mean_gain ? kLoading * mean_gain : 0.0f;
}

//! One thread's scratch for the iterative solvers (reused across subcarriers).
struct IterativeScratch {
    MatrixC r, p, s, m, e;
    Eigen::RowVectorXf rr, rr_next, alpha, beta;
};

//! A column that has converged (or broken down) gets step 0 from then on.
inline float iterative_step(float num, float den)
{
    return (num > 0.0f && den > 0.0f) ? num / den : 0.0f;
}

/*! li2015 Algorithm 1, lines 7-14: `iterations` Conjugate Gradient steps on A x = y_mf
 * for every column (symbol) at once, from x = 0, with a step size per column. */
void conjugate_gradient(const Eigen::Map<const MatrixC>& a,
                        const MatrixC& y_mf,
                        unsigned iterations,
                        MatrixC& x,
                        IterativeScratch& t);

/*! broumas2023 Figure 4: `iterations` Conjugate Residual steps on A x = y_mf for every
 * column at once, from x = 0, one matrix product A r per iteration. */
void conjugate_residual(const Eigen::Map<const MatrixC>& a,
                        const MatrixC& y_mf,
                        unsigned iterations,
                        MatrixC& x,
                        IterativeScratch& t);

} // namespace mmse
} // namespace mimodet

#endif
