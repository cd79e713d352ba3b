/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "atomic_ops.h"
#include <algorithm>
#include <vector>

namespace mimodet {
namespace pulpo {

void mvp(const Shape& s, const cf32* a, const cf32* x, const cf32* y, cf32* z)
{
    const long long batch = static_cast<long long>(s.batch);
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < batch; ++b) {
        const cf32* ab = a + b * s.m * s.n;
        const cf32* xb = x + b * s.n * s.k;
        for (std::size_t i = 0; i < s.m; ++i)
            for (std::size_t c = 0; c < s.k; ++c) {
                cf32 acc = y ? y[(b * s.m + i) * s.k + c] : cf32();
                for (std::size_t j = 0; j < s.n; ++j)
                    acc += ab[i * s.n + j] * xb[j * s.k + c];
                z[(b * s.m + i) * s.k + c] = acc;
            }
    }
}

void hermitian_step(const Shape& s, const cf32* a, const cf32* x, const cf32* y, float tau, cf32* z)
{
    const long long batch = static_cast<long long>(s.batch);
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < batch; ++b) {
        const cf32* ab = a + b * s.m * s.n;
        const cf32* xb = x + b * s.m * s.k;
        std::vector<cf32> acc(s.n * s.k);
        for (std::size_t i = 0; i < s.m; ++i) // row by row: A as stored
            for (std::size_t j = 0; j < s.n; ++j) {
                const cf32 aij = std::conj(ab[i * s.n + j]);
                for (std::size_t c = 0; c < s.k; ++c)
                    acc[j * s.k + c] += aij * xb[i * s.k + c];
            }
        for (std::size_t j = 0; j < s.n; ++j)
            for (std::size_t c = 0; c < s.k; ++c) {
                const std::size_t o = (b * s.n + j) * s.k + c;
                z[o] = (y ? y[o] : cf32()) - tau * acc[j * s.k + c];
            }
    }
}

void prox_box(const cf32* x, std::size_t count, float rho, float a_re, float a_im, cf32* z)
{
    for (std::size_t i = 0; i < count; ++i)
        z[i] = cf32(std::clamp(rho * x[i].real(), -a_re, a_re),
                    std::clamp(rho * x[i].imag(), -a_im, a_im));
}

} // namespace pulpo
} // namespace mimodet
