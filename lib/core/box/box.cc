/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "box.h"
#include <algorithm>
#include <cmath>

namespace mimodet {
namespace box {

BoxBounds box_bounds(const Constellation& c)
{
    BoxBounds b;
    for (const cf32& p : c.points()) {
        b.re = std::max(b.re, std::abs(p.real()));
        b.im = std::max(b.im, std::abs(p.imag()));
    }
    return b;
}

float default_step(const MatrixC& gram)
{
    float bound = 0.0f;
    for (Eigen::Index r = 0; r < gram.rows(); ++r)
        bound = std::max(bound, gram.row(r).cwiseAbs().sum());
    return bound > 0.0f && std::isfinite(bound) ? 1.0f / bound : 0.0f;
}

void box_iterate(const MatrixC& gram,
                 const MatrixC& y_mf,
                 float tau,
                 BoxBounds bounds,
                 const std::vector<float>& momentum,
                 unsigned iterations,
                 MatrixC& x,
                 BoxScratch& s)
{
    const bool accelerated = !momentum.empty();
    if (accelerated)
        s.previous = x;
    for (unsigned k = 0; k < iterations; ++k) {
        if (accelerated) {
            s.v = x + momentum[k] * (x - s.previous);
            s.previous = x;
        } else {
            s.v = x;
        }
        s.gradient.noalias() = gram * s.v;
        s.gradient -= y_mf;
        x = (s.v - tau * s.gradient).unaryExpr([bounds](cf32 z) { return project(z, bounds); });
    }
}

} // namespace box
} // namespace mimodet
