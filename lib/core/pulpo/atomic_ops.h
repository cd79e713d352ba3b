/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_PULPO_ATOMIC_OPS_H
#define INCLUDED_MIMODET_CORE_PULPO_ATOMIC_OPS_H

/* PULPO's three atomic operations (castaneda et al., section II-B), batched over
 * independent problems (subcarriers), on the CPU; lib/cuda/pulpo/atomic_ops.h has the same
 * on the GPU. Layouts, row-major per problem:
 *   a  [batch][m][n]   (the detectors' H per subcarrier: m = B, n = U)
 *   x, y, z            [batch][rows][k]: k right-hand sides (symbols) per problem
 * The three operations:
 *   (M) z = A x + y            x: n x k, y and z: m x k
 *   (H) z = y - tau A^H x      x: m x k, y and z: n x k (A read as stored: no transposed copy)
 *   (P) z = prox(rho x)        elementwise; here the box projection, clip(rho x) per real and
 *                              imaginary part (BOX, C2PO); other proxes are new functions.
 * y may be null (zero); z may be y (in place), never x. Iterative algorithms are a few
 * calls each: docs/adding-a-detector.md. */

#include <mimodet/layout.h>
#include <cstddef>

namespace mimodet {
namespace pulpo {

struct Shape {
    std::size_t batch, m, n, k;
};

//! (M) z = A x + y.
void mvp(const Shape& s, const cf32* a, const cf32* x, const cf32* y, cf32* z);
//! (H) z = y - tau A^H x.
void hermitian_step(const Shape& s, const cf32* a, const cf32* x, const cf32* y, float tau, cf32* z);
//! (P) z = clip(rho x) to [-a_re, a_re] x [-a_im, a_im] (a_re, a_im >= 0), over `count`
//! values; z may be x; NaN stays NaN.
void prox_box(const cf32* x, std::size_t count, float rho, float a_re, float a_im, cf32* z);

} // namespace pulpo
} // namespace mimodet

#endif
