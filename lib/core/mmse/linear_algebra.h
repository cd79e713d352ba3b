/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_MMSE_LINEAR_ALGEBRA_H
#define INCLUDED_MIMODET_CORE_MMSE_LINEAR_ALGEBRA_H

// Eigen types and small helpers shared by the CPU MMSE detectors (lib/core/mmse).

#include <mimodet/layout.h>
#include <Eigen/Dense>
#include <cmath>
#include <cstddef>

namespace mimodet {
namespace mmse {

using MatrixC = Eigen::Matrix<cf32, Eigen::Dynamic, Eigen::Dynamic>;
using MatrixCRow = Eigen::Matrix<cf32, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
//! B x n received vectors of one subcarrier, one column per symbol (stride: one symbol).
using ReceivedColumns = Eigen::Map<const MatrixC, 0, Eigen::OuterStride<>>;

inline bool all_finite(const cf32* v, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(v[i].real()) || !std::isfinite(v[i].imag()))
            return false;
    return true;
}

} // namespace mmse
} // namespace mimodet

#endif
