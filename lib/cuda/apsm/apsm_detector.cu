/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cuda/apsm/apsm_detector.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_detector.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimodet {
namespace cuda {

namespace {

constexpr int kThreads = 256; // 16 x 16: a sample group (ty) by an entry group (tx)
constexpr int kSamples = 64;  // real samples per block: both of 32 received vectors
constexpr int kVectors = kSamples / 2;
constexpr int kEntries = 64;  // dictionary entries per shared-memory tile
constexpr int kGroup = 16;    // threads sharing a sample group (a half warp)
constexpr std::size_t kMaxApsmUsers = 16; // users padded to at most 16 accumulators

struct ApsmArgs {
    const float2* r; // [count][M]
    std::size_t count;
    int antennas, users, tiles, tiles_per_split;
    int dp;                  // entries padded to whole tiles
    const float* dictionary; // [LP][DP], dimension-major: Re part at 0.., Im part at LP/2..
    const float* norm2;      // [DP]
    const float* gamma;      // [KP][DP], times w_G; 0 for linear-only users and padding
    const float* linear;     // [KP][LP], times w_L, laid out as the dictionary
    float inv_scale, inv_two_var;
    float* partial;    // [splits][count][K][2] when the dictionary is split over blocks
    unsigned* tickets; // [sample tiles], zero between launches
    float* out;        // [count][K][2]
    unsigned long long* erased;
};

/* With the dictionary split over gridDim.y blocks: whether this block is the last of its
 * sample tile to finish (its ticket), after its partial sums are visible to that block. */
__device__ bool last_of_tile(unsigned* tickets, bool* s_last)
{
    __threadfence(); // the partial sums are visible before the ticket is taken
    __syncthreads();
    if (threadIdx.x == 0)
        *s_last = atomicAdd(tickets + blockIdx.x, 1u) == gridDim.y - 1;
    __syncthreads();
    return *s_last;
}

/* The last block of a sample tile adds the splits' partial sums in split order (results
 * do not depend on which block ended first) and leaves the ticket at zero. */
__device__ void add_splits(const float* partial,
                           std::size_t stride,
                           std::size_t v0,
                           int vectors,
                           int users,
                           const int* s_ok,
                           float* out,
                           unsigned* tickets)
{
    __threadfence();
    const std::size_t begin = v0 * users * 2, n = static_cast<std::size_t>(vectors) * users * 2;
    for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) {
        float sum = 0.0f;
        for (unsigned y = 0; y < gridDim.y; ++y)
            sum += __ldcg(partial + y * stride + begin + i);
        out[begin + i] = s_ok[i / (users * 2)] ? sum : 0.0f;
    }
    if (threadIdx.x == 0)
        tickets[blockIdx.x] = 0; // ready for the next launch
}

/* mehlhose2022 section 3.3.3's balanced ordering, as a matrix product: a block holds 64
 * real samples (both of 32 received vectors: r_1 = [Re; Im] and r_2 = [Im; -Re]) in shared
 * memory for the whole walk and stages 64 dictionary entries a tile; a thread computes the
 * 4 x 4 dot products of 4 samples and 4 entries, two float4 loads for 16 multiply-adds a
 * dimension, then their kernel values and all users' sums for its 4 samples. The 16
 * threads of a sample group (a half warp) add their sums by shuffles at the end. The
 * squared distance is ||d||^2 + ||x||^2 - 2 d.x. LP: a real sample's length 2M padded to
 * a power of two (zero in the sample, the dictionary and the linear part); KP: users
 * padded. With the dictionary split over gridDim.y blocks, each writes its partial sums
 * and the last of a sample tile to finish (a ticket) adds them in split order, so results
 * do not depend on which block ends first, and no memset or atomic add is needed. */
template <int LP, int KP>
__global__ void __launch_bounds__(kThreads, 2) apsm_detect_kernel(ApsmArgs a)
{
    constexpr int H = LP / 2;
    __shared__ __align__(16) float s_x[LP][kSamples];
    __shared__ __align__(16) float s_d[LP][kEntries];
    __shared__ __align__(16) float s_g[KP][kEntries];
    __shared__ __align__(16) float s_nd[kEntries];
    __shared__ float s_nx[kSamples];
    __shared__ int s_ok[kVectors];
    __shared__ bool s_last;
    const int tid = threadIdx.x, tx = tid % kGroup, ty = tid / kGroup;
    const std::size_t v0 = static_cast<std::size_t>(blockIdx.x) * kVectors;
    const int vectors = static_cast<int>(min(static_cast<std::size_t>(kVectors), a.count - v0));

    if (tid < kVectors)
        s_ok[tid] = 1;
    __syncthreads();
    for (int i = tid; i < kVectors * H; i += kThreads) {
        const int vl = i / H, m = i % H;
        float re = 0.0f, im = 0.0f;
        if (vl < vectors && m < a.antennas) {
            const float2 z = a.r[(v0 + vl) * a.antennas + m];
            if (isfinite(z.x) && isfinite(z.y)) { // else read as zero, the vector erased
                re = z.x * a.inv_scale;
                im = z.y * a.inv_scale;
            } else {
                s_ok[vl] = 0;
            }
        }
        s_x[m][2 * vl] = re;
        s_x[H + m][2 * vl] = im;
        s_x[m][2 * vl + 1] = im;
        s_x[H + m][2 * vl + 1] = -re;
    }
    __syncthreads();
    if (tid < kSamples) {
        float n = 0.0f;
#pragma unroll
        for (int l = 0; l < LP; ++l)
            n = fmaf(s_x[l][tid], s_x[l][tid], n);
        s_nx[tid] = n;
    }
    __syncthreads();
    float nx[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
        nx[i] = s_nx[ty * 4 + i];

    float acc[4][KP];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int k = 0; k < KP; ++k)
            acc[i][k] = 0.0f;
    const int first = blockIdx.y * a.tiles_per_split,
              last = min(a.tiles, first + a.tiles_per_split);
    for (int tile = first; tile < last; ++tile) {
        const int base = tile * kEntries;
        __syncthreads(); // the previous tile is used up
        for (int i = tid; i < LP * kEntries / 4; i += kThreads) {
            const int l = i / (kEntries / 4), e4 = i % (kEntries / 4);
            reinterpret_cast<float4*>(s_d[l])[e4] =
                reinterpret_cast<const float4*>(a.dictionary + static_cast<std::size_t>(l) * a.dp + base)[e4];
        }
        for (int i = tid; i < KP * kEntries / 4; i += kThreads) {
            const int k = i / (kEntries / 4), e4 = i % (kEntries / 4);
            reinterpret_cast<float4*>(s_g[k])[e4] =
                reinterpret_cast<const float4*>(a.gamma + static_cast<std::size_t>(k) * a.dp + base)[e4];
        }
        if (tid < kEntries / 4)
            reinterpret_cast<float4*>(s_nd)[tid] = reinterpret_cast<const float4*>(a.norm2 + base)[tid];
        __syncthreads();
        float dot[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                dot[i][j] = 0.0f;
#pragma unroll
        for (int l = 0; l < LP; ++l) {
            const float4 xv = reinterpret_cast<const float4*>(s_x[l])[ty];
            const float4 dv = reinterpret_cast<const float4*>(s_d[l])[tx];
            const float xs[4] = { xv.x, xv.y, xv.z, xv.w }, ds[4] = { dv.x, dv.y, dv.z, dv.w };
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    dot[i][j] = fmaf(xs[i], ds[j], dot[i][j]);
        }
        const float4 ndv = reinterpret_cast<const float4*>(s_nd)[tx];
        const float nd[4] = { ndv.x, ndv.y, ndv.z, ndv.w };
        float kv[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                kv[i][j] = __expf(-fmaxf(nd[j] + nx[i] - 2.0f * dot[i][j], 0.0f) * a.inv_two_var);
#pragma unroll
        for (int k = 0; k < KP; ++k) {
            const float4 gv = reinterpret_cast<const float4*>(s_g[k])[tx];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                acc[i][k] = fmaf(gv.x, kv[i][0],
                                 fmaf(gv.y, kv[i][1], fmaf(gv.z, kv[i][2], fmaf(gv.w, kv[i][3], acc[i][k]))));
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int k = 0; k < KP; ++k)
#pragma unroll
            for (int o = kGroup / 2; o > 0; o /= 2)
                acc[i][k] += __shfl_xor_sync(0xffffffffu, acc[i][k], o);

    // Lane tx of the group writes the (sample, user) sums numbered tx, tx + 16, ...
    const bool split = gridDim.y > 1;
    const std::size_t stride = a.count * a.users * 2;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int k = 0; k < KP; ++k) {
            const int s = ty * 4 + i, vl = s / 2;
            if ((i * KP + k) % kGroup != tx || k >= a.users || vl >= vectors)
                continue;
            float value = acc[i][k];
            if (blockIdx.y == 0)
#pragma unroll
                for (int l = 0; l < LP; ++l)
                    value = fmaf(a.linear[k * LP + l], s_x[l][s], value);
            const std::size_t idx = ((v0 + vl) * a.users + k) * 2 + (s & 1);
            if (split)
                a.partial[blockIdx.y * stride + idx] = value;
            else
                a.out[idx] = s_ok[vl] ? value : 0.0f;
        }
    if (split && !last_of_tile(a.tickets, &s_last))
        return;
    if (split)
        add_splits(a.partial, stride, v0, vectors, a.users, s_ok, a.out, a.tickets);
    if (tid < vectors && !s_ok[tid]) // counted once per vector
        atomicAdd(a.erased, 1ull);
}

/* ---- The same products on the tensor cores (sm_80 and later) ---- */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define MIMODET_APSM_TF32 1
#else
#define MIMODET_APSM_TF32 0
#endif

constexpr int kTcWarps = kThreads / 32;   // a warp takes 16 real samples: 8 received vectors
constexpr int kTcVectors = kTcWarps * 8;  // 64 received vectors a block
constexpr int kTcChunks = kEntries / 8;   // a tile of 64 entries is 8 chunks of an mma's 8

struct ApsmTcArgs {
    const float2* r; // [count][M]
    std::size_t count;
    int antennas, users, tiles, tiles_per_split;
    // Operands in the mma fragments' lane order, each float as {big, big, small, small} of
    // two elements (a float4 a lane); see tensor_fragments() for the layouts.
    const float4* dictionary; // [DP / 8][LP / 8][32]
    const float4* gamma;      // [DP / 8][NT][32], times w_G
    const float4* linear;     // [NT][LP / 8][32], times w_L
    const float* norm2;       // [DP]
    float inv_scale, inv_two_var;
    float* partial;
    unsigned* tickets;
    float* out;
    unsigned long long* erased;
};

//! x rounded to TF32 (10 mantissa bits, to nearest, ties away from zero), as a bit pattern.
[[maybe_unused]] __device__ __forceinline__ unsigned tf32_bits(float x)
{
#if MIMODET_APSM_TF32
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
#else
    return __float_as_uint(x);
#endif
}

//! x = big + small, both TF32: their products but small * small keep float32's precision.
[[maybe_unused]] __device__ __forceinline__ void split_tf32(float x, unsigned& big, unsigned& small)
{
    big = tf32_bits(x);
    small = tf32_bits(x - __uint_as_float(big));
}

//! d += A B on a 16 x 8 x 8 tile (PTX mma.m16n8k8 .tf32 fragments).
[[maybe_unused]] __device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], float b0, float b1)
{
#if MIMODET_APSM_TF32
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(__float_as_uint(b0)),
          "r"(__float_as_uint(b1)));
#endif
}

//! d += (A_big + A_small)(B_big + B_small) without the small * small term (3xTF32); the
//! small terms first. b = {B_big fragment, B_small fragment}.
[[maybe_unused]] __device__ __forceinline__ void
mma_3xtf32(float (&d)[4], const unsigned (&big)[4], const unsigned (&small)[4], float4 b)
{
    mma_tf32(d, small, b.x, b.y);
    mma_tf32(d, big, b.z, b.w);
    mma_tf32(d, big, b.x, b.y);
}

[[maybe_unused]] __device__ __forceinline__ void copy16_async(void* shared, const void* global)
{
#if MIMODET_APSM_TF32
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(global));
#endif
}

[[maybe_unused]] __device__ __forceinline__ void async_commit()
{
#if MIMODET_APSM_TF32
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N>
[[maybe_unused]] __device__ __forceinline__ void async_wait()
{
#if MIMODET_APSM_TF32
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

/* Section 3.3.3's balanced ordering on the tensor cores. A warp keeps 16 real samples (8
 * received vectors) as TF32 A fragments in registers for the whole walk; the block stages
 * 64-entry dictionary tiles (fragments, coefficients, norms) in shared memory, the next
 * one by cp.async while the current one is used. Per chunk of 8 entries a warp forms the
 * 16 x 8 dot products (LP / 8 mma steps of three products), turns them into kernel values
 * in the accumulator registers, and feeds those as the A operand of the users' sums: a
 * lane holds entries 2t and 2t + 1 of the chunk, which become k = t and t + 4 of the next
 * product (the coefficient fragments are laid out to match), so no value leaves its
 * register. The linear part is one more product of the same A fragments. */
template <int LP, int NT>
__global__ void __launch_bounds__(kThreads, 2) apsm_detect_tf32_kernel(ApsmTcArgs a)
{
#if MIMODET_APSM_TF32
    constexpr int Q = LP / 8, H = LP / 2;
    constexpr int DF = kTcChunks * Q * 32, GF = kTcChunks * NT * 32, NF = kEntries / 4;
    constexpr int TF = DF + GF + NF; // float4 a staged tile
    extern __shared__ float4 s_tiles[]; // [2][TF]: dictionary, coefficients, norms
    __shared__ int s_ok[kTcVectors];
    __shared__ bool s_last;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const std::size_t v0 = static_cast<std::size_t>(blockIdx.x) * kTcVectors;
    const int vectors = static_cast<int>(min(static_cast<std::size_t>(kTcVectors), a.count - v0));
    const int first = blockIdx.y * a.tiles_per_split,
              last = min(a.tiles, first + a.tiles_per_split);

    auto stage = [&](int tile, int buffer) {
        float4* dst = s_tiles + buffer * TF;
        const float4* d = a.dictionary + static_cast<std::size_t>(tile) * DF;
        for (int i = tid; i < DF; i += kThreads)
            copy16_async(dst + i, d + i);
        const float4* gm = a.gamma + static_cast<std::size_t>(tile) * GF;
        for (int i = tid; i < GF; i += kThreads)
            copy16_async(dst + DF + i, gm + i);
        if (tid < NF)
            copy16_async(dst + DF + GF + tid,
                         reinterpret_cast<const float4*>(a.norm2) + static_cast<std::size_t>(tile) * NF + tid);
        async_commit();
    };
    if (first < last)
        stage(first, 0); // under way while the samples are loaded

    if (tid < kTcVectors)
        s_ok[tid] = 1;
    __syncthreads();
    // A fragment element h + 2c of step q: row g + 8h of the warp's 16 samples (sample s of
    // the block is vector s / 2: r_1 = [Re; Im] for even s, r_2 = [Im; -Re] for odd s),
    // dimension 8q + t + 4c. A non-finite sample is read as zero and its vector erased
    // (s_ok: its outputs are written as zeros).
    unsigned ab[Q][4], as[Q][4];
    float nx[2] = { 0.0f, 0.0f };
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int s = warp * 16 + g + 8 * h, vl = s / 2;
        const bool odd = s & 1;
#pragma unroll
        for (int q = 0; q < Q; ++q)
#pragma unroll
            for (int c = 0; c < 2; ++c) {
                const int l = 8 * q + t + 4 * c, m = l < H ? l : l - H;
                float v = 0.0f;
                if (vl < vectors && m < a.antennas) {
                    const float2 z = a.r[(v0 + vl) * a.antennas + m];
                    if (isfinite(z.x) && isfinite(z.y)) {
                        const float re = z.x * a.inv_scale, im = z.y * a.inv_scale;
                        v = l < H ? (odd ? im : re) : (odd ? -re : im);
                    } else {
                        s_ok[vl] = 0;
                    }
                }
                nx[h] = fmaf(v, v, nx[h]);
                split_tf32(v, ab[q][h + 2 * c], as[q][h + 2 * c]);
            }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) { // the 4 lanes of a row hold its dimensions between them
        nx[h] += __shfl_xor_sync(0xffffffffu, nx[h], 1);
        nx[h] += __shfl_xor_sync(0xffffffffu, nx[h], 2);
    }

    // acc[nt]: rows g, g + 8 by users 8 nt + 2t, 8 nt + 2t + 1 (C fragment order).
    float acc[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
            acc[nt][e] = 0.0f;
    if (blockIdx.y == 0) // the linear part, once per sample
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int q = 0; q < Q; ++q)
                mma_3xtf32(acc[nt], ab[q], as[q], __ldg(a.linear + (nt * Q + q) * 32 + lane));

    for (int tile = first; tile < last; ++tile) {
        const int buffer = (tile - first) & 1;
        if (tile + 1 < last) {
            stage(tile + 1, buffer ^ 1);
            async_wait<1>();
        } else {
            async_wait<0>();
        }
        __syncthreads(); // this tile has landed for every thread's copies
        const float4* sd = s_tiles + buffer * TF;
        const float4* sg = sd + DF;
        const float2* snd = reinterpret_cast<const float2*>(sd + DF + GF);
#pragma unroll 2
        for (int ch = 0; ch < kTcChunks; ++ch) {
            float dot[4] = { 0.0f, 0.0f, 0.0f, 0.0f }; // (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)
#pragma unroll
            for (int q = 0; q < Q; ++q)
                mma_3xtf32(dot, ab[q], as[q], sd[(ch * Q + q) * 32 + lane]);
            const float2 nd = snd[ch * 4 + t]; // entries 2t, 2t + 1 of the chunk
            const float k0 = __expf(-fmaxf(nd.x + nx[0] - 2.0f * dot[0], 0.0f) * a.inv_two_var);
            const float k1 = __expf(-fmaxf(nd.y + nx[0] - 2.0f * dot[1], 0.0f) * a.inv_two_var);
            const float k2 = __expf(-fmaxf(nd.x + nx[1] - 2.0f * dot[2], 0.0f) * a.inv_two_var);
            const float k3 = __expf(-fmaxf(nd.y + nx[1] - 2.0f * dot[3], 0.0f) * a.inv_two_var);
            unsigned kb[4], ks[4]; // A fragment: (g, k t), (g+8, k t), (g, k t+4), (g+8, k t+4)
            split_tf32(k0, kb[0], ks[0]);
            split_tf32(k2, kb[1], ks[1]);
            split_tf32(k1, kb[2], ks[2]);
            split_tf32(k3, kb[3], ks[3]);
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
                mma_3xtf32(acc[nt], kb, ks, sg[(ch * NT + nt) * 32 + lane]);
        }
        __syncthreads(); // the buffer is used up before it is staged again
    }
    __syncthreads(); // s_ok is complete

    const bool split = gridDim.y > 1;
    const std::size_t stride = a.count * a.users * 2;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int s = warp * 16 + g + 8 * (e / 2), vl = s / 2, u = nt * 8 + 2 * t + (e & 1);
            if (u >= a.users || vl >= vectors)
                continue;
            const std::size_t idx = ((v0 + vl) * a.users + u) * 2 + (s & 1);
            if (split)
                a.partial[blockIdx.y * stride + idx] = acc[nt][e];
            else
                a.out[idx] = s_ok[vl] ? acc[nt][e] : 0.0f;
        }
    if (split && !last_of_tile(a.tickets, &s_last))
        return;
    if (split)
        add_splits(a.partial, stride, v0, vectors, a.users, s_ok, a.out, a.tickets);
    if (tid < vectors && !s_ok[tid]) // counted once per vector
        atomicAdd(a.erased, 1ull);
#else
    __trap(); // built without TF32 tensor cores: never launched (TcPtxVersion)
#endif
}

//! The tensor-core kernel's dynamic shared memory: two staged tiles.
constexpr std::size_t tc_shared_bytes(std::size_t lp, std::size_t nt)
{
    return 2 * (kTcChunks * (lp / 8) * 32 + kTcChunks * nt * 32 + kEntries / 4) * sizeof(float4);
}

/* Calls f<LP, KP>() for the instantiation of the detector's sizes. */
template <template <int, int> class F, typename... Args>
auto dispatch(std::size_t lp, std::size_t kp, Args&&... args)
{
#define MIMODET_APSM_KP(LP)                                                                      \
    switch (kp) {                                                                                \
    case 1: return F<LP, 1>::run(args...);                                                       \
    case 2: return F<LP, 2>::run(args...);                                                       \
    case 4: return F<LP, 4>::run(args...);                                                       \
    case 8: return F<LP, 8>::run(args...);                                                       \
    default: return F<LP, 16>::run(args...);                                                     \
    }
    switch (lp) {
    case 8: MIMODET_APSM_KP(8)
    case 16: MIMODET_APSM_KP(16)
    case 32: MIMODET_APSM_KP(32)
    default: MIMODET_APSM_KP(64)
    }
#undef MIMODET_APSM_KP
}

template <int LP, int KP>
struct Launch {
    static int run(const ApsmArgs& a, dim3 grid, cudaStream_t s)
    {
        apsm_detect_kernel<LP, KP><<<grid, kThreads, 0, s>>>(a);
        return 0;
    }
};

template <int LP, int NT>
struct LaunchTc {
    static int run(const ApsmTcArgs& a, dim3 grid, cudaStream_t s)
    {
        apsm_detect_tf32_kernel<LP, NT><<<grid, kThreads, tc_shared_bytes(LP, NT), s>>>(a);
        return 0;
    }
};

/* Allows the tensor-core kernel its shared memory (over 48 KiB for LP 64) and returns its
 * resident blocks per SM. */
template <int LP, int NT>
struct PrepareTc {
    static int run()
    {
        const int bytes = static_cast<int>(tc_shared_bytes(LP, NT));
        MIMODET_CUDA_CHECK(cudaFuncSetAttribute(
            apsm_detect_tf32_kernel<LP, NT>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        int n = 0;
        MIMODET_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &n, apsm_detect_tf32_kernel<LP, NT>, kThreads, bytes));
        return std::max(n, 1);
    }
};

/* The PTX architecture the tensor-core kernel was compiled for on this GPU: below 80 (a
 * build without an sm_80+ image, run through the JIT) its body is empty. */
template <int LP, int NT>
struct TcPtxVersion {
    static int run()
    {
        cudaFuncAttributes attr{};
        MIMODET_CUDA_CHECK(cudaFuncGetAttributes(&attr, apsm_detect_tf32_kernel<LP, NT>));
        return attr.ptxVersion;
    }
};

/* Calls f<LP, NT>() for the tensor-core kernel: NT tiles of 8 users. */
template <template <int, int> class F, typename... Args>
auto dispatch_tc(std::size_t lp, std::size_t nt, Args&&... args)
{
#define MIMODET_APSM_NT(LP)                                                                      \
    if (nt == 1)                                                                                 \
        return F<LP, 1>::run(args...);                                                           \
    return F<LP, 2>::run(args...);
    switch (lp) {
    case 8: MIMODET_APSM_NT(8)
    case 16: MIMODET_APSM_NT(16)
    case 32: MIMODET_APSM_NT(32)
    default: MIMODET_APSM_NT(64)
    }
#undef MIMODET_APSM_NT
}

//! cvt.rna.tf32.f32 on the host: 10 mantissa bits, to nearest, ties away from zero.
float tf32_round(float x)
{
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    if ((b & 0x7f800000u) != 0x7f800000u) {
        b = (b + 0x1000u) & 0xffffe000u;
        std::memcpy(&x, &b, sizeof b);
    }
    return x;
}

/* Two elements of an operand as a lane's float4 {big0, big1, small0, small1}. */
void put_split(float* dst, float x0, float x1)
{
    dst[0] = tf32_round(x0);
    dst[1] = tf32_round(x1);
    dst[2] = tf32_round(x0 - dst[0]);
    dst[3] = tf32_round(x1 - dst[1]);
}

template <int LP, int KP>
struct Occupancy {
    static int run()
    {
        int n = 0;
        MIMODET_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &n, apsm_detect_kernel<LP, KP>, kThreads, 0));
        return std::max(n, 1);
    }
};

std::size_t padded(std::size_t n, std::size_t least)
{
    std::size_t p = least;
    while (p < n)
        p *= 2;
    return p;
}

} // namespace

const char* to_string(ApsmArithmetic a)
{
    switch (a) {
    case ApsmArithmetic::automatic: return "automatic";
    case ApsmArithmetic::fp32: return "fp32";
    case ApsmArithmetic::tf32x3: return "tf32x3";
    }
    return "?";
}

struct CudaApsmDetector::Impl {
    int device = 0, slots = 1; // slots: blocks resident on the whole GPU at once
    ApsmArithmetic arithmetic = ApsmArithmetic::fp32;
    std::size_t M = 0, K = 0, LP = 0, KP = 0, NT = 0, D = 0, DP = 0;
    float inv_scale = 1.0f, inv_two_var = 1.0f;
    std::unique_ptr<Buffer<float>> dictionary, norm2, gamma, linear;
    std::unique_ptr<Buffer<unsigned long long>> erased;
    std::unique_ptr<Buffer<float>> partial;   // split sums, grown as needed
    std::unique_ptr<Buffer<unsigned>> tickets; // a counter per sample tile, grown as needed
    std::unique_ptr<Buffer<cf32>> r, out;      // staging of host calls, grown as needed
};

/* The tensor-core kernel's operands in its lanes' order (lane = 4 g + t; PTX mma.m16n8k8
 * .tf32: A (row g or g + 8, k t or t + 4), B (k t or t + 4, column g)), each as
 * put_split's float4 of the lane's two B elements. Chunk c holds entries 8c .. 8c + 7.
 *   dictionary [c][q][lane]: entry 8c + g, dimensions 8q + t and 8q + t + 4;
 *   gamma [c][nt][lane]: user 8 nt + g, entries 8c + 2t and 8c + 2t + 1 (the kernel values'
 *     C fragment order, which the kernel passes on as k = t and t + 4);
 *   linear [nt][q][lane]: user 8 nt + g, dimensions 8q + t and 8q + t + 4.
 * The inputs are the fp32 kernel's layouts: dimension-major dictionary [LP][DP], gamma
 * [KP][DP], linear [KP][LP]; they are replaced. */
static void tensor_fragments(std::size_t LP,
                             std::size_t KP,
                             std::size_t NT,
                             std::size_t DP,
                             std::vector<float>& dict,
                             std::vector<float>& gamma,
                             std::vector<float>& linear)
{
    const std::size_t Q = LP / 8, C = DP / 8;
    auto user = [&](const std::vector<float>& v, std::size_t u, std::size_t i, std::size_t n) {
        return u < KP ? v[u * n + i] : 0.0f;
    };
    std::vector<float> d(C * Q * 32 * 4), gm(C * NT * 32 * 4), lin(NT * Q * 32 * 4);
    for (std::size_t lane = 0; lane < 32; ++lane) {
        const std::size_t g = lane / 4, t = lane % 4;
        for (std::size_t c = 0; c < C; ++c) {
            for (std::size_t q = 0; q < Q; ++q) {
                const std::size_t e = 8 * c + g, l = 8 * q + t;
                put_split(&d[((c * Q + q) * 32 + lane) * 4], dict[l * DP + e], dict[(l + 4) * DP + e]);
            }
            for (std::size_t nt = 0; nt < NT; ++nt) {
                const std::size_t u = 8 * nt + g, e = 8 * c + 2 * t;
                put_split(&gm[((c * NT + nt) * 32 + lane) * 4], user(gamma, u, e, DP),
                          user(gamma, u, e + 1, DP));
            }
        }
        for (std::size_t nt = 0; nt < NT; ++nt)
            for (std::size_t q = 0; q < Q; ++q) {
                const std::size_t u = 8 * nt + g, l = 8 * q + t;
                put_split(&lin[((nt * Q + q) * 32 + lane) * 4], user(linear, u, l, LP),
                          user(linear, u, l + 4, LP));
            }
    }
    dict.swap(d);
    gamma.swap(gm);
    linear.swap(lin);
}

CudaApsmDetector::CudaApsmDetector(const apsm::ApsmReceiver& rx,
                                   int device,
                                   ApsmArithmetic arithmetic)
    : d_impl(std::make_unique<Impl>())
{
    Impl& m = *d_impl;
    if (!rx.trained())
        throw std::invalid_argument("CudaApsmDetector: the receiver is not trained");
    m.M = rx.antennas();
    m.K = rx.users();
    if (m.M > kMaxAntennas)
        throw std::invalid_argument("CudaApsmDetector: at most " + std::to_string(kMaxAntennas) +
                                    " antennas, not " + std::to_string(m.M));
    if (m.K > kMaxApsmUsers)
        throw std::invalid_argument("CudaApsmDetector: at most " + std::to_string(kMaxApsmUsers) +
                                    " users, not " + std::to_string(m.K));
    m.device = device;
    MIMODET_CUDA_CHECK(cudaSetDevice(device));
    int sms = 1;
    MIMODET_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    int major = 0;
    MIMODET_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    m.LP = padded(2 * m.M, 8);
    m.KP = padded(m.K, 1);
    m.NT = m.KP > 8 ? 2 : 1;
    // The GPU has TF32 tensor cores, and this build has the kernel for them.
    const bool tf32 = major >= 8 && dispatch_tc<TcPtxVersion>(m.LP, m.NT) >= 80;
    if (arithmetic == ApsmArithmetic::tf32x3 && !tf32)
        throw std::invalid_argument("CudaApsmDetector: tf32x3 needs TF32 tensor cores "
                                    "(compute capability 8.0 or later) and a build for them "
                                    "(MIMODET_CUDA_ARCHITECTURES with 80 or later)");
    m.arithmetic = arithmetic == ApsmArithmetic::fp32 || !tf32 ? ApsmArithmetic::fp32
                                                               : ApsmArithmetic::tf32x3;
    const bool tensor = m.arithmetic == ApsmArithmetic::tf32x3;
    m.slots = sms * (tensor ? dispatch_tc<PrepareTc>(m.LP, m.NT) : dispatch<Occupancy>(m.LP, m.KP));
    m.D = rx.dictionary_size();
    m.DP = (m.D + kEntries - 1) / kEntries * kEntries; // whole tiles; padding has gamma 0
    const std::size_t H = m.LP / 2, L = 2 * m.M;
    const apsm::ApsmParams& p = rx.params();
    m.inv_scale = static_cast<float>(1.0 / rx.input_scale());
    m.inv_two_var = static_cast<float>(1.0 / (2.0 * p.kernel_variance));
    auto place = [&](std::size_t l) { return l < m.M ? l : H + (l - m.M); }; // Im part at LP/2
    std::vector<float> dict(m.LP * m.DP, 0.0f), norm2(m.DP, 0.0f), gamma(m.KP * m.DP, 0.0f),
        linear(m.KP * m.LP, 0.0f);
    const std::vector<double>& src = rx.dictionary();
    for (std::size_t i = 0; i < m.D; ++i)
        for (std::size_t l = 0; l < L; ++l) {
            const float v = static_cast<float>(src[i * L + l]);
            dict[place(l) * m.DP + i] = v;
            norm2[i] += v * v;
        }
    for (std::size_t k = 0; k < m.K; ++k) {
        const apsm::ApsmFilter& f = rx.filter(k);
        if (!f.linear_only)
            for (std::size_t i = 0; i < m.D; ++i)
                gamma[k * m.DP + i] = static_cast<float>(p.weight_gaussian * f.coefficient[i]);
        for (std::size_t l = 0; l < L; ++l)
            linear[k * m.LP + place(l)] = static_cast<float>(p.weight_linear * f.linear[l]);
    }
    auto upload = [](const std::vector<float>& v) {
        auto b = std::make_unique<Buffer<float>>(std::max<std::size_t>(v.size(), 1), false);
        copy_to_device(b->get(), v.data(), v.size() * sizeof(float));
        return b;
    };
    if (tensor)
        tensor_fragments(m.LP, m.KP, m.NT, m.DP, dict, gamma, linear);
    m.dictionary = upload(dict);
    m.norm2 = upload(norm2);
    m.gamma = upload(gamma);
    m.linear = upload(linear);
    m.erased = std::make_unique<Buffer<unsigned long long>>(1, false);
    MIMODET_CUDA_CHECK(cudaMemset(m.erased->get(), 0, sizeof(unsigned long long)));
}

CudaApsmDetector::~CudaApsmDetector() = default;

std::size_t CudaApsmDetector::antennas() const { return d_impl->M; }
std::size_t CudaApsmDetector::users() const { return d_impl->K; }
ApsmArithmetic CudaApsmDetector::arithmetic() const { return d_impl->arithmetic; }

void CudaApsmDetector::detect_device(const cf32* d_r, std::size_t count, cf32* d_out, void* stream)
{
    Impl& m = *d_impl;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.device));
    if (count == 0)
        return;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    ApsmArgs a{};
    a.r = reinterpret_cast<const float2*>(d_r);
    a.count = count;
    a.antennas = static_cast<int>(m.M);
    a.users = static_cast<int>(m.K);
    a.tiles = static_cast<int>(m.DP / kEntries);
    a.dp = static_cast<int>(m.DP);
    a.dictionary = m.dictionary->get();
    a.norm2 = m.norm2->get();
    a.gamma = m.gamma->get();
    a.linear = m.linear->get();
    a.inv_scale = m.inv_scale;
    a.inv_two_var = m.inv_two_var;
    a.out = reinterpret_cast<float*>(d_out);
    a.erased = m.erased->get();
    // The dictionary is split over blocks only as far as one wave of resident blocks holds
    // them all: section 5's 3840 vectors are 120 sample tiles (60 on the tensor cores), a
    // few per SM.
    const bool tensor = m.arithmetic == ApsmArithmetic::tf32x3;
    const std::size_t per_block = tensor ? kTcVectors : kVectors;
    const std::size_t sample_tiles = (count + per_block - 1) / per_block;
    const std::size_t tiles = static_cast<std::size_t>(a.tiles),
                      slots = static_cast<std::size_t>(m.slots);
    std::size_t splits = 1;
    if (tiles > 1 && sample_tiles < slots)
        splits = std::max<std::size_t>(1, std::min(tiles, slots / sample_tiles));
    const std::size_t per_split = tiles == 0 ? 0 : (tiles + splits - 1) / splits;
    if (per_split > 0)
        splits = (tiles + per_split - 1) / per_split;
    a.tiles_per_split = static_cast<int>(per_split);
    if (splits > 1) {
        const std::size_t need = splits * count * m.K * 2;
        if (!m.partial || m.partial->size() < need)
            m.partial = std::make_unique<Buffer<float>>(need, false);
        if (!m.tickets || m.tickets->size() < sample_tiles) {
            m.tickets = std::make_unique<Buffer<unsigned>>(sample_tiles, false);
            MIMODET_CUDA_CHECK(cudaMemsetAsync(m.tickets->get(), 0, m.tickets->bytes(), s));
        }
        a.partial = m.partial->get();
        a.tickets = m.tickets->get();
    }
    const dim3 grid(static_cast<unsigned>(sample_tiles), static_cast<unsigned>(splits));
    if (tensor) {
        ApsmTcArgs b{};
        b.r = a.r;
        b.count = a.count;
        b.antennas = a.antennas;
        b.users = a.users;
        b.tiles = a.tiles;
        b.tiles_per_split = a.tiles_per_split;
        b.dictionary = reinterpret_cast<const float4*>(a.dictionary);
        b.gamma = reinterpret_cast<const float4*>(a.gamma);
        b.linear = reinterpret_cast<const float4*>(a.linear);
        b.norm2 = a.norm2;
        b.inv_scale = a.inv_scale;
        b.inv_two_var = a.inv_two_var;
        b.partial = a.partial;
        b.tickets = a.tickets;
        b.out = a.out;
        b.erased = a.erased;
        dispatch_tc<LaunchTc>(m.LP, m.NT, b, grid, s);
    } else {
        dispatch<Launch>(m.LP, m.KP, a, grid, s);
    }
    MIMODET_CUDA_CHECK(cudaGetLastError());
}

void CudaApsmDetector::detect(const cf32* r, std::size_t count, cf32* out)
{
    Impl& m = *d_impl;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.device));
    if (!m.r || m.r->size() < count * m.M) {
        m.r = std::make_unique<Buffer<cf32>>(std::max<std::size_t>(count * m.M, 1), false);
        m.out = std::make_unique<Buffer<cf32>>(std::max<std::size_t>(count * m.K, 1), false);
    }
    copy_to_device(m.r->get(), r, count * m.M * sizeof(cf32));
    detect_device(m.r->get(), count, m.out->get(), nullptr);
    copy_to_host(out, m.out->get(), count * m.K * sizeof(cf32));
}

std::size_t CudaApsmDetector::erased_vectors() const
{
    MIMODET_CUDA_CHECK(cudaSetDevice(d_impl->device));
    unsigned long long n = 0;
    copy_to_host(&n, d_impl->erased->get(), sizeof(n));
    return static_cast<std::size_t>(n);
}

} // namespace cuda
} // namespace mimodet
