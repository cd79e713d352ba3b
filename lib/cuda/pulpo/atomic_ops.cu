/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "atomic_ops.h"
#include "cuda/cuda_check.h"
#include "cuda/device_math.cuh"
#include <algorithm>

namespace mimodet {
namespace cuda {
namespace pulpo {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t outputs)
{
    return static_cast<unsigned>(std::min<std::size_t>((outputs + kThreads - 1) / kThreads, 65535u * 16));
}

// Output o = (b * rows + r) * k + c: neighbouring threads take neighbouring symbols c,
// then rows r, so that x and z are read and written along their rows.
__global__ void mvp_kernel(Shape s, const float2* a, const float2* x, const float2* y, float2* z)
{
    const std::size_t total = s.batch * s.m * s.k;
    for (std::size_t o = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
         o < total;
         o += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t c = o % s.k, i = (o / s.k) % s.m, b = o / (s.k * s.m);
        const float2* ai = a + (b * s.m + i) * s.n;
        const float2* xb = x + b * s.n * s.k + c;
        float2 acc = y ? y[o] : make_float2(0.0f, 0.0f);
        for (std::size_t j = 0; j < s.n; ++j)
            acc = cfma(ai[j], xb[j * s.k], acc);
        z[o] = acc;
    }
}

// (H): output (b, j, c) sums down column j of A; the threads of a warp take neighbouring
// j (after c), so each step reads a stretch of row i of A as stored.
__global__ void hermitian_kernel(
    Shape s, const float2* a, const float2* x, const float2* y, float tau, float2* z)
{
    const std::size_t total = s.batch * s.n * s.k;
    for (std::size_t o = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
         o < total;
         o += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t c = o % s.k, j = (o / s.k) % s.n, b = o / (s.k * s.n);
        const float2* aj = a + b * s.m * s.n + j;
        const float2* xb = x + b * s.m * s.k + c;
        float2 acc = make_float2(0.0f, 0.0f);
        for (std::size_t i = 0; i < s.m; ++i)
            acc = cfmac(aj[i * s.n], xb[i * s.k], acc); // conj(A_ij) x_i
        const float2 base = y ? y[o] : make_float2(0.0f, 0.0f);
        z[o] = make_float2(base.x - tau * acc.x, base.y - tau * acc.y);
    }
}

__global__ void prox_box_kernel(
    const float2* x, std::size_t count, float rho, float a_re, float a_im, float2* z)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
         i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float re = rho * x[i].x, im = rho * x[i].y;
        // NaN stays NaN, as std::clamp leaves it on the CPU (fmaxf would drop it).
        z[i] = make_float2(re != re ? re : fminf(fmaxf(re, -a_re), a_re),
                           im != im ? im : fminf(fmaxf(im, -a_im), a_im));
    }
}

const float2* f2(const cf32* p) { return reinterpret_cast<const float2*>(p); }
float2* f2(cf32* p) { return reinterpret_cast<float2*>(p); }

} // namespace

void mvp(const Shape& s, const cf32* a, const cf32* x, const cf32* y, cf32* z, void* stream)
{
    const std::size_t outputs = s.batch * s.m * s.k;
    if (outputs == 0)
        return;
    mvp_kernel<<<blocks_for(outputs), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        s, f2(a), f2(x), f2(y), f2(z));
    MIMODET_CUDA_CHECK_LAUNCH("pulpo mvp_kernel");
}

void hermitian_step(const Shape& s,
                    const cf32* a,
                    const cf32* x,
                    const cf32* y,
                    float tau,
                    cf32* z,
                    void* stream)
{
    const std::size_t outputs = s.batch * s.n * s.k;
    if (outputs == 0)
        return;
    hermitian_kernel<<<blocks_for(outputs), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        s, f2(a), f2(x), f2(y), tau, f2(z));
    MIMODET_CUDA_CHECK_LAUNCH("pulpo hermitian_kernel");
}

void prox_box(const cf32* x,
              std::size_t count,
              float rho,
              float a_re,
              float a_im,
              cf32* z,
              void* stream)
{
    if (count == 0)
        return;
    prox_box_kernel<<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        f2(x), count, rho, a_re, a_im, f2(z));
    MIMODET_CUDA_CHECK_LAUNCH("pulpo prox_box_kernel");
}

} // namespace pulpo
} // namespace cuda
} // namespace mimodet
