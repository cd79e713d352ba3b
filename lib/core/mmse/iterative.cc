/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "iterative.h"
#include "numerics.h"
#include <algorithm>

namespace mimodet {
namespace mmse {

bool iterative_coefficients(const MatrixC& gram,
                            const Eigen::VectorXf& gram_diag,
                            float n0,
                            Eigen::Map<MatrixC> a,
                            float* rho,
                            float* inv_lambda,
                            std::uint64_t& unusable_users)
{
    const auto u = static_cast<std::size_t>(gram.rows());
    const float max_gain = gram_diag.maxCoeff();
    a = gram.selfadjointView<Eigen::Lower>();
    a.diagonal().array() += n0;
    for (std::size_t k = 0; k < u; ++k) {
        const float g_uu = gram_diag(static_cast<Eigen::Index>(k));
        if (g_uu > kMinUserGain * max_gain) {
            // li2015 II-C: rho ~ G_uu / N0, lambda = rho / (1 + rho) with Es = 1.
            rho[k] = n0 > 0.0f ? std::min(g_uu / n0, kMaxSinr) : kMaxSinr;
            inv_lambda[k] = (1.0f + rho[k]) / rho[k];
        } else {
            rho[k] = 0.0f; // an erasure: every LLR of the user is exactly 0
            inv_lambda[k] = 0.0f;
            ++unusable_users;
        }
    }
    return a.allFinite();
}

} // namespace mmse
} // namespace mimodet
