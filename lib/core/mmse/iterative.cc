/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "iterative.h"
#include "numerics.h"
#include <algorithm>
#include <cmath>

namespace mimodet {
namespace mmse {

bool iterative_coefficients(const MatrixC& gram,
                            const Eigen::VectorXf& gram_diag,
                            float n0,
                            Eigen::Map<MatrixC> a,
                            float* rho,
                            float* inv_lambda,
                            bool& regularized,
                            std::uint64_t& unusable_users)
{
    const auto u = static_cast<std::size_t>(gram.rows());
    const float max_gain = gram_diag.maxCoeff();
    const float load = iterative_loading(n0, gram_diag.mean());
    regularized = load > 0.0f && std::isfinite(load); // (G overflowed: bad, as on the GPU)
    const float n0_eff = n0 + load;
    a = gram.selfadjointView<Eigen::Lower>();
    a.diagonal().array() += n0_eff;
    for (std::size_t k = 0; k < u; ++k) {
        const auto row = static_cast<Eigen::Index>(k);
        const float g_uu = gram_diag(row);
        if (!(g_uu > kMinUserGain * max_gain)) {
            rho[k] = 0.0f; // an erasure: every LLR of the user is exactly 0
            inv_lambda[k] = 0.0f;
            ++unusable_users;
            continue;
        }
        if (regularized) {
            // li2015's G_uu / N0 trusts N0 and ignores interference; CG/CR never see
            // A^-1, so bound its SINR by the user's strongest partner (the Schur
            // complement of a 2x2 block of A >= that of A): honest for colliding pairs.
            float captured = 0.0f;
            for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(u); ++j)
                if (j != row)
                    captured = std::max(captured, std::norm(a(row, j)) / a(j, j).real());
            const float r = (g_uu - captured) / n0_eff;
            rho[k] = std::min(std::max(r, 1.0f / kMaxSinr), kMaxSinr);
        } else {
            // li2015 II-C: rho ~ G_uu / N0, lambda = rho / (1 + rho) with Es = 1.
            rho[k] = n0 > 0.0f ? std::min(g_uu / n0, kMaxSinr) : kMaxSinr;
        }
        inv_lambda[k] = (1.0f + rho[k]) / rho[k];
    }
    return a.allFinite();
}

} // namespace mmse
} // namespace mimodet
