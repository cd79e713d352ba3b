/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_BOX_FISTA_H
#define INCLUDED_MIMODET_CORE_BOX_FISTA_H

// FISTA's momentum schedule, without Eigen, so that the CPU and the GPU BOX (whose host
// code nvcc compiles) take the same table.

#include <cmath>
#include <vector>

namespace mimodet {
namespace box {

//! The momentum of FISTA step k (0-based): (t_k - 1) / t_{k+1}, t_0 = 1,
//! t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2 (Beck & Teboulle 2009), in float64, then float.
inline std::vector<float> fista_momentum(unsigned iterations)
{
    std::vector<float> m(iterations);
    double t = 1.0;
    for (unsigned k = 0; k < iterations; ++k) {
        const double next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * t * t));
        m[k] = static_cast<float>((t - 1.0) / next);
        t = next;
    }
    return m;
}

} // namespace box
} // namespace mimodet

#endif
