/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_MMSE_CHOLESKY_H
#define INCLUDED_MIMODET_CORE_MMSE_CHOLESKY_H

#include "linear_algebra.h"
#include <cstdint>

namespace mimodet {
namespace mmse {

//! What the equalizer inverts: A = G + N0 I (MMSE, mode chol) or A = G (zero forcing).
enum class DirectKind { mmse, zero_forcing };

/*! The per-channel coefficients of exact MMSE (li2015 II-B) or zero forcing on one
 * subcarrier: A = G + load I (load = N0, or 0 for ZF) factorised by Cholesky, with
 * diagonal loading (kLoading of the mean gain) when A is singular or ill-conditioned, or
 * when the declared N0 is below that level (N0 = 0 or tiny; cg/cr's rule) (`regularized`:
 * rho is then the loaded filter's exact SINR, residual interference included);
 * W = A^-1 H^H (U x B, row-major) by two triangular solves, no explicit inverse; per user
 * 1/lambda and the post-equalization SINR rho:
 *  - MMSE: lambda_u = diag(A^-1 G)_u = 1 - load [A^-1]_uu, rho_u = lambda_u / (1 - lambda_u);
 *  - ZF: lambda = 1, rho_u = 1 / (N0 |w_u|^2).
 * h: B x U; gram: G's lower triangle (U x U), modified; gram_diag: diag G. Users whose
 * gain is below kMinUserGain of the strongest are erased (rho = 1/lambda = 0) and counted.
 * Returns false when no usable W exists (the subcarrier is then erased).
 */
bool cholesky_coefficients(const Eigen::Map<const MatrixCRow>& h,
                           MatrixC& gram,
                           const Eigen::VectorXf& gram_diag,
                           float n0,
                           DirectKind kind,
                           Eigen::Map<MatrixCRow> w,
                           float* rho,
                           float* inv_lambda,
                           bool& regularized,
                           std::uint64_t& unusable_users);

} // namespace mmse
} // namespace mimodet

#endif
