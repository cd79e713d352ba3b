/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Device helpers of the MMSE kernels (internal to lib/cuda/mmse): sums and maxima over a
 * warp or a group of lanes by butterflies, and asynchronous global -> shared copies
 * (cp.async, sm_80 and later; plain loads and stores before). */

#ifndef INCLUDED_MIMODET_MMSE_DEVICE_HELPERS_CUH
#define INCLUDED_MIMODET_MMSE_DEVICE_HELPERS_CUH

#include <cuda_runtime.h>
#include <cstdint>

namespace mimodet {
namespace cuda {

/*! N0 of subcarrier sc: its frame's where the arguments (PrepareArgs/EqualizeArgs) hold
 * one per frame, read where it is used (a copy held through the kernel costs registers).
 * frame_skipped: that frame's N0 is NaN, so nothing of it is written or counted. */
template <typename Args>
__device__ __forceinline__ float channel_n0(const Args& p, int sc)
{
    return p.frame_n0 ? p.frame_n0[sc / p.frame_subcarriers] : p.n0;
}
template <typename Args>
__device__ __forceinline__ bool frame_skipped(const Args& p, int sc)
{
    return p.frame_n0 && isnan(p.frame_n0[sc / p.frame_subcarriers]);
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

template <int UP>
__device__ __forceinline__ float group_sum(float v)
{
#pragma unroll
    for (int off = UP / 2; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

/* One cp.async of `bytes` (8 or 16) with the cache operator `cache` (ca, or cg: to shared
 * memory only, bypassing L1, 16 bytes only) and the L2 prefetch qualifier `prefetch` (""
 * or ".L2::<n>B"); n source bytes are read, the rest zero-filled. */
#define MIMODET_CP_ASYNC(cache, prefetch, bytes, to, src, n)                        \
    asm volatile("cp.async." cache ".shared.global" prefetch " [%0], [%1], " #bytes \
                 ", %2;\n" ::"r"(to),                                               \
                 "l"(src),                                                          \
                 "r"(n))

/*! Asynchronous global -> shared copy of kBytes (8, or 16 with dst and src 16-byte
 * aligned; cp.async, sm_80 and later), zero-filling the destination when !valid; older
 * GPUs load and store synchronously, which the same barriers make visible. kL2Prefetch
 * (0, 128 or 256): the L2 fetches that many bytes around the source (.L2::<n>B), so that
 * the copies of the next chunk of the same rows find them there. */
template <int kBytes, int kL2Prefetch>
__device__ __forceinline__ void copy_async(float2* dst, const float2* src, bool valid)
{
    static_assert(kBytes == 8 || kBytes == 16, "cp.async: 8 or 16 bytes");
    static_assert(kL2Prefetch == 0 || kL2Prefetch == 128 || kL2Prefetch == 256,
                  "cp.async L2 prefetch: 0, 128 or 256 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    const int n = valid ? kBytes : 0;
    // (inline asm takes literal strings: one statement per size and prefetch)
#define MIMODET_CP_ASYNC_OF_SIZE(prefetch)                    \
    do {                                                      \
        if constexpr (kBytes == 16)                           \
            MIMODET_CP_ASYNC("cg", prefetch, 16, to, src, n); \
        else                                                  \
            MIMODET_CP_ASYNC("ca", prefetch, 8, to, src, n);  \
    } while (0)
    if constexpr (kL2Prefetch == 256)
        MIMODET_CP_ASYNC_OF_SIZE(".L2::256B");
    else if constexpr (kL2Prefetch == 128)
        MIMODET_CP_ASYNC_OF_SIZE(".L2::128B");
    else
        MIMODET_CP_ASYNC_OF_SIZE("");
#undef MIMODET_CP_ASYNC_OF_SIZE
#else
    if constexpr (kBytes == 16)
        *reinterpret_cast<float4*>(dst) =
            valid ? __ldg(reinterpret_cast<const float4*>(src)) : make_float4(0, 0, 0, 0);
    else
        *dst = valid ? __ldg(src) : make_float2(0.0f, 0.0f);
#endif
}
template <int kL2Prefetch = 0>
__device__ __forceinline__ void copy_async8(float2* dst, const float2* src, bool valid)
{
    copy_async<8, kL2Prefetch>(dst, src, valid);
}
template <int kL2Prefetch = 0>
__device__ __forceinline__ void copy_async16(float2* dst, const float2* src, bool valid)
{
    copy_async<16, kL2Prefetch>(dst, src, valid);
}
__device__ __forceinline__ bool aligned16(const void* ptr)
{
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
}
__device__ __forceinline__ void copy_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
//! Waits until at most `pending` committed groups of this thread are still in flight.
template <int pending>
__device__ __forceinline__ void copy_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
#endif
}

} // namespace cuda
} // namespace mimodet

#endif
