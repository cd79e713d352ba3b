/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The kernels' LLR output (internal to lib/cuda/mmse): the max-log demapper of
 * cuda/device_math.cuh on x / lambda with the per-user SINR rho, signed, clipped and
 * stored as vectors where aligned; and the erasure of a (symbol, subcarrier) item (zero
 * LLRs and x_hat, as on the CPU). */

#ifndef INCLUDED_MIMODET_MMSE_DEMAP_CUH
#define INCLUDED_MIMODET_MMSE_DEMAP_CUH

#include "core/mmse/numerics.h"
#include "cuda/kernels.h"
#include <cstddef>
#include <cstdint>

namespace mimodet {
namespace cuda {

//! The clip of a subcarrier's LLRs: the configured one, and at most
//! mmse::kLoadedLlrClip where its channel had to be loaded (as on the CPU).
__device__ __forceinline__ float llr_clip_of(const EqualizeArgs& p, bool loaded)
{
    return loaded ? fminf(p.llr_clip, mmse::kLoadedLlrClip) : p.llr_clip;
}

//! Writes the signed max-log LLRs of one (symbol, subcarrier, user), clipped at clip
//! (llr_clip_of), for kBitsPerAxis bits per axis (0: BPSK): one vector store for
//! 16-QAM and 256-QAM, two-float stores for QPSK and 64-QAM, when aligned.
template <int kBitsPerAxis>
__device__ __forceinline__ void write_llrs_of(
    const EqualizeArgs& p, float2 x, float inv_lambda, float rho, float clip, float* dst)
{
    constexpr int Q = kBitsPerAxis == 0 ? 1 : 2 * kBitsPerAxis;
    float out[Q];
    demap_maxlog_of<kBitsPerAxis>(p.demap, cscale(x, inv_lambda), rho, out);
#pragma unroll
    for (int j = 0; j < Q; ++j)
        out[j] = finish_llr(out[j], p.llr_sign, clip);
    const auto address = reinterpret_cast<std::uintptr_t>(dst);
    if (Q % 4 == 0 && address % 16 == 0) {
#pragma unroll
        for (int j = 0; j < Q; j += 4)
            reinterpret_cast<float4*>(dst)[j / 4] =
                make_float4(out[j], out[j + 1], out[j + 2], out[j + 3]);
    } else if (Q % 2 == 0 && address % 8 == 0) {
#pragma unroll
        for (int j = 0; j < Q; j += 2)
            reinterpret_cast<float2*>(dst)[j / 2] = make_float2(out[j], out[j + 1]);
    } else {
#pragma unroll
        for (int j = 0; j < Q; ++j)
            dst[j] = out[j];
    }
}

//! write_llrs_of for the launch's modulation.
__device__ __forceinline__ void write_llrs(
    const EqualizeArgs& p, float2 x, float inv_lambda, float rho, float clip, float* dst)
{
    with_bits_per_axis(p.demap, [&](auto bits_per_axis) {
        write_llrs_of<decltype(bits_per_axis)::value>(p, x, inv_lambda, rho, clip, dst);
    });
}

//! Zeros the LLRs and x_hat of one (symbol, subcarrier) item, the lanes of a warp
//! striding, and counts it when its y was not finite: an erasure, as on the CPU.
__device__ __forceinline__ void
erase_item(const EqualizeArgs& p, std::size_t item, int lane, bool bad_y)
{
    if (bad_y && lane == 0)
        atomicAdd(p.bad_sample_count, 1ull);
    const int U = p.num_users, Q = p.demap.bits;
    float* llr = p.llr + item * U * static_cast<std::size_t>(Q);
    for (int i = lane; i < U * Q; i += 32)
        llr[i] = 0.0f;
    if (p.x_hat)
        for (int u = lane; u < U; u += 32)
            p.x_hat[item * U + u] = make_float2(0.0f, 0.0f);
}

} // namespace cuda
} // namespace mimodet

#endif
