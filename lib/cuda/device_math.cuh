/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Complex arithmetic and max-log demapping on the device (internal to lib/cuda). */

#ifndef INCLUDED_MIMODET_DEVICE_MATH_CUH
#define INCLUDED_MIMODET_DEVICE_MATH_CUH

#include <cuda_runtime.h>
#include <type_traits>

namespace mimodet {
namespace cuda {

__device__ __forceinline__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
//! conj(a) * b
__device__ __forceinline__ float2 cmulc(float2 a, float2 b)
{
    return make_float2(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}
__device__ __forceinline__ float2 conj2(float2 a) { return make_float2(a.x, -a.y); }
__device__ __forceinline__ float2 cadd(float2 a, float2 b)
{
    return make_float2(a.x + b.x, a.y + b.y);
}
__device__ __forceinline__ float2 csub(float2 a, float2 b)
{
    return make_float2(a.x - b.x, a.y - b.y);
}
__device__ __forceinline__ float2 cscale(float2 a, float s)
{
    return make_float2(a.x * s, a.y * s);
}
//! acc + a * b as four fused multiply-adds (cadd(acc, cmul(a, b)) takes six
//! instructions).
__device__ __forceinline__ float2 cfma(float2 a, float2 b, float2 acc)
{
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.x = fmaf(-a.y, b.y, acc.x);
    acc.y = fmaf(a.x, b.y, acc.y);
    acc.y = fmaf(a.y, b.x, acc.y);
    return acc;
}
//! acc + conj(a) * b as four fused multiply-adds.
__device__ __forceinline__ float2 cfmac(float2 a, float2 b, float2 acc)
{
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.x = fmaf(a.y, b.y, acc.x);
    acc.y = fmaf(a.x, b.y, acc.y);
    acc.y = fmaf(-a.y, b.x, acc.y);
    return acc;
}
//! acc - a * b as four fused multiply-adds (csub(acc, cmul(a, b)) takes six).
__device__ __forceinline__ float2 cfms(float2 a, float2 b, float2 acc)
{
    acc.x = fmaf(-a.x, b.x, acc.x);
    acc.x = fmaf(a.y, b.y, acc.x);
    acc.y = fmaf(-a.x, b.y, acc.y);
    acc.y = fmaf(-a.y, b.x, acc.y);
    return acc;
}
__device__ __forceinline__ float cnorm(float2 a) { return a.x * a.x + a.y * a.y; }
__device__ __forceinline__ bool cfinite(float2 a)
{
    return isfinite(a.x) && isfinite(a.y);
}
//! The device's lib/core/llr_output.h: an LLR signed and clipped, NaN or Inf erased to 0.
__device__ __forceinline__ float finish_llr(float v, float sign, float clip)
{
    const float s = sign * v;
    return isfinite(s) ? fminf(fmaxf(s, -clip), clip) : 0.0f;
}
__device__ __forceinline__ float2 shfl_xor(float2 v, int mask)
{
    return make_float2(__shfl_xor_sync(0xffffffffu, v.x, mask),
                       __shfl_xor_sync(0xffffffffu, v.y, mask));
}
__device__ __forceinline__ float2 shfl(float2 v, int lane)
{
    return make_float2(__shfl_sync(0xffffffffu, v.x, lane),
                       __shfl_sync(0xffffffffu, v.y, lane));
}

/*! Gray PAM levels of one axis (TS 38.211 5.1) as a kernel parameter: level[l] is the
 * amplitude of the axis bit pattern l (first axis bit = MSB of l). BPSK is special-cased.
 */
struct DemapTable {
    int bits;          //!< Q
    int bits_per_axis; //!< Q/2 (QAM)
    int levels;        //!< 2^(Q/2)
    int bpsk;          //!< 1 for BPSK
    float level[16];
};

//! Max-log LLRs of one axis of a Gray PAM with 2^kBits levels into out[0], out[2], ...
template <int kBits>
__device__ __forceinline__ void
demap_axis(const DemapTable& t, float v, float rho, float* out)
{
    float min0[kBits], min1[kBits];
#pragma unroll
    for (int j = 0; j < kBits; ++j)
        min0[j] = min1[j] = INFINITY;
#pragma unroll
    for (int l = 0; l < (1 << kBits); ++l) {
        const float d = v - t.level[l];
        const float d2 = d * d;
#pragma unroll
        for (int j = 0; j < kBits; ++j) {
            if ((l >> (kBits - 1 - j)) & 1)
                min1[j] = fminf(min1[j], d2);
            else
                min0[j] = fminf(min0[j], d2);
        }
    }
#pragma unroll
    for (int j = 0; j < kBits; ++j)
        out[2 * j] = rho * (min0[j] - min1[j]);
}

//! Max-log LLRs (positive means 1) of z with SINR rho into out[0..Q-1]; exact, per axis;
//! kBitsPerAxis bits on each axis, 0 for BPSK.
template <int kBitsPerAxis>
__device__ __forceinline__ void
demap_maxlog_of(const DemapTable& t, float2 z, float rho, float* out)
{
    if constexpr (kBitsPerAxis == 0) {
        out[0] = -4.0f * rho * 0.70710678118654752f * (z.x + z.y);
    } else {
        demap_axis<kBitsPerAxis>(t, z.x, rho, out);
        demap_axis<kBitsPerAxis>(t, z.y, rho, out + 1);
    }
}

/*! Calls f(std::integral_constant<int, bits per axis>{}) for the table's modulation (0:
 * BPSK). The order is uniform across a launch: a caller that demaps several values puts
 * its loop inside f, so that the code of each order is one run of instructions rather
 * than a switch per value (whose copies of every order's code, inlined per value, made
 * the tiled kernel's instruction fetch stall). */
template <typename F>
__device__ __forceinline__ void with_bits_per_axis(const DemapTable& t, F&& f)
{
    switch (t.bits_per_axis) {
    case 1:
        return f(std::integral_constant<int, 1>{});
    case 2:
        return f(std::integral_constant<int, 2>{});
    case 3:
        return f(std::integral_constant<int, 3>{});
    case 4:
        return f(std::integral_constant<int, 4>{});
    default:
        return f(std::integral_constant<int, 0>{});
    }
}

//! demap_maxlog_of for the table's modulation.
__device__ __forceinline__ void
demap_maxlog(const DemapTable& t, float2 z, float rho, float* out)
{
    with_bits_per_axis(t, [&](auto bits_per_axis) {
        demap_maxlog_of<decltype(bits_per_axis)::value>(t, z, rho, out);
    });
}

} // namespace cuda
} // namespace mimodet

#endif
