/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cholesky.h"
#include "numerics.h"
#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>

namespace mimodet {
namespace mmse {

namespace {

//! Cholesky that refuses near-singular pivots (Eigen's LLT accepts tiny positive ones).
bool robust_llt(const MatrixC& a, Eigen::LLT<MatrixC>& llt)
{
    llt.compute(a); // reads the lower triangle only
    if (llt.info() != Eigen::Success)
        return false;
    const float max_diag = a.diagonal().real().maxCoeff();
    const auto l_diag = llt.matrixLLT().diagonal().real();
    if (!(max_diag > 0.0f) || !l_diag.allFinite())
        return false;
    return l_diag.minCoeff() * l_diag.minCoeff() >= kMinPivotRatio * max_diag;
}

//! rho = 0 and 1/lambda = 0 make every LLR of the user exactly 0 (an erasure).
inline void erase_user(float& rho, float& inv_lambda)
{
    rho = 0.0f;
    inv_lambda = 0.0f;
}

} // namespace

bool cholesky_coefficients(const Eigen::Map<const MatrixCRow>& h,
                           MatrixC& a,
                           const Eigen::VectorXf& gram_diag,
                           float n0,
                           DirectKind kind,
                           Eigen::Map<MatrixCRow> w,
                           float* rho,
                           float* inv_lambda,
                           bool& regularized,
                           std::uint64_t& unusable_users)
{
    const auto u = static_cast<std::size_t>(a.rows());
    const float max_gain = gram_diag.maxCoeff();
    auto user_usable = [&](std::size_t k) {
        return gram_diag(static_cast<Eigen::Index>(k)) > kMinUserGain * max_gain;
    };
    // A = G + load I. A declared N0 below the loading level (N0 = 0 or tiny) loads from
    // the start, as cg/cr do: a channel just inside the pivot rule would otherwise trust
    // that N0 and give huge LLRs with wrong signs (docs/reliability.md).
    const float loading = kLoading * gram_diag.mean();
    if (!std::isfinite(loading))
        return false; // G overflowed: erased, as on the GPU (not counted as loaded)
    float load = kind == DirectKind::mmse ? n0 : 0.0f;
    if (n0 < loading) {
        load += loading;
        regularized = true;
    }
    a.diagonal().array() += load;
    Eigen::LLT<MatrixC> llt;
    if (!robust_llt(a, llt)) {
        a.diagonal().array() += loading;
        load += loading;
        regularized = true;
        if (!robust_llt(a, llt))
            return false;
    }
    w = llt.solve(h.adjoint());
    if (!w.allFinite())
        return false;
    // 1 - lambda_k = load [A^-1]_kk (A^-1 G = I - load A^-1): without the cancellation of
    // 1 - (W H)_kk, which loses most digits at high SNR where lambda_k -> 1.
    const MatrixC inv = kind == DirectKind::mmse || regularized
                            ? MatrixC(llt.solve(MatrixC::Identity(u, u)))
                            : MatrixC();
    for (std::size_t k = 0; k < u; ++k) {
        const auto row = static_cast<Eigen::Index>(k);
        if (!user_usable(k)) {
            erase_user(rho[k], inv_lambda[k]);
            ++unusable_users;
            continue;
        }
        if (regularized) {
            // The loaded filter leaves interference between the users it could not tell
            // apart: (W H)_kj = -load [A^-1]_kj. rho counts it (the exact post-equalizer
            // SINR, Es = 1), or the LLRs of those users would be confident and wrong. The
            // noise it assumes is never below the loading's level (the sphere decoders'
            // rule): N0 = 0 would leave the interference alone.
            const float one_minus = load * inv(row, row).real();
            const float lambda = 1.0f - one_minus;
            float interference = 0.0f;
            for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(u); ++j)
                if (j != row)
                    interference += std::norm(load * inv(row, j));
            const float disturbance =
                interference + std::max(n0, loading) * w.row(row).squaredNorm();
            if (!(lambda > 0.0f) || !std::isfinite(lambda) || !std::isfinite(disturbance)) {
                erase_user(rho[k], inv_lambda[k]);
                ++unusable_users;
                continue;
            }
            const float signal = lambda * lambda;
            rho[k] = disturbance > signal / kMaxSinr ? signal / disturbance : kMaxSinr;
            inv_lambda[k] = 1.0f / lambda;
            continue;
        }
        if (kind == DirectKind::zero_forcing) {
            // Post-ZF noise of user k: N0 |w_k|^2 (= N0 [G^-1]_kk without loading).
            const float noise = n0 * w.row(row).squaredNorm();
            rho[k] = noise > 0.0f ? std::min(1.0f / noise, kMaxSinr) : kMaxSinr;
            inv_lambda[k] = 1.0f;
            continue;
        }
        // lambda_k = diag(A^-1 G)_k = (W H)_kk = 1 - load [A^-1]_kk is real; rho = lambda
        // / (1 - lambda), Es = 1.
        const float one_minus = load * inv(row, row).real();
        const float lambda = 1.0f - one_minus;
        if (!(lambda > 0.0f) || !std::isfinite(lambda)) {
            erase_user(rho[k], inv_lambda[k]);
            ++unusable_users;
            continue;
        }
        rho[k] = one_minus > lambda / kMaxSinr ? lambda / one_minus : kMaxSinr;
        inv_lambda[k] = 1.0f / lambda;
    }
    return true;
}

} // namespace mmse
} // namespace mimodet
