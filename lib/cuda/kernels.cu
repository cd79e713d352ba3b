/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cuda_check.h"
#include "kernels.h"
#include <algorithm>
#include <string>

namespace mimodet {
namespace cuda {

namespace {

// The same numerical rules as the CPU detector (lib/core/cpu_detector.cc).
constexpr float kMaxSinr = 1e7f;
constexpr float kLoading = 1e-5f;
constexpr float kMinPivotRatio = 1e-6f;
constexpr float kMinUserGain = 1e-6f;

constexpr int kPrepareThreads = 256;
constexpr int kMaxWarpsPerBlock = 8;
//! Symbols each warp of the equalize kernel handles, amortizing the matrix load.
constexpr int kSymbolsPerWarp = 8;

//! Row stride of a [rows][U] complex matrix in shared memory: U + 1 avoids bank conflicts
//! between rows read by different lane groups.
__host__ __device__ constexpr int padded(int u) { return u + 1; }

//! Copies a rows x cols row-major matrix from global memory into shared memory with row
//! stride `stride`, `threads` threads from `first` on. Loads are issued kBatch at a time
//! before any store, so their latencies overlap instead of adding up.
template <int kBatch = 8>
__device__ __forceinline__ void stage_matrix(float2* dst,
                                             int stride,
                                             const float2* __restrict__ src,
                                             int rows,
                                             int cols,
                                             int first,
                                             int threads)
{
    const int n = rows * cols;
    for (int base = first; base < n; base += threads * kBatch) {
        float2 v[kBatch];
#pragma unroll
        for (int t = 0; t < kBatch; ++t) {
            const int idx = base + t * threads;
            v[t] = idx < n ? __ldg(src + idx) : make_float2(0.0f, 0.0f);
        }
#pragma unroll
        for (int t = 0; t < kBatch; ++t) {
            const int idx = base + t * threads;
            if (idx < n)
                dst[(idx / cols) * stride + idx % cols] = v[t];
        }
    }
}

/* ------------------------------------------------------------------------------------ */
/* Per-channel preparation: one block per subcarrier. */
/* ------------------------------------------------------------------------------------ */

template <int UMAX>
__global__ void __launch_bounds__(kPrepareThreads) prepare_kernel(PrepareArgs p)
{
    constexpr int kChunk = 32; // antennas of H staged in shared memory at a time
    __shared__ float2 hs[kChunk][UMAX + 1];
    __shared__ float2 g[UMAX][UMAX + 1]; // Gram matrix (full Hermitian)
    // The Gram tiles' partial sums, later the Cholesky factor L and L^-1, share `work`.
    constexpr int kTile = UMAX >= 32 ? 4 : 2;
    constexpr int kTiles1 = UMAX / kTile;
    constexpr int kTiles = kTiles1 * (kTiles1 + 1) / 2;
    constexpr int kSplit =
        UMAX >= 32 ? 3 : kPrepareThreads / kTiles; // 48 KiB static limit
    constexpr int kPartial = kSplit * kTiles * kTile * kTile;
    constexpr int kWork =
        kPartial > 2 * UMAX * (UMAX + 1) ? kPartial : 2 * UMAX * (UMAX + 1);
    __shared__ float2 work[kWork];
    float2(*l)[UMAX + 1] =
        reinterpret_cast<float2(*)[UMAX + 1]>(work); // L, lower triangle
    float2(*li)[UMAX + 1] = l + UMAX;                // L^-1
    float2(*partial)[kTile * kTile] = reinterpret_cast<float2(*)[kTile * kTile]>(work);
    __shared__ int s_bad, s_regularized, s_unusable;
    __shared__ float s_max_gain, s_mean_gain;

    const int sc = blockIdx.x, tid = threadIdx.x;
    const int B = p.num_antennas, U = p.num_users;
    const float2* h = p.h + static_cast<std::size_t>(sc) * B * U;
    float* rho = p.rho + static_cast<std::size_t>(sc) * U;
    float* inv_lambda = p.inv_lambda + static_cast<std::size_t>(sc) * U;
    // No usable channel on this subcarrier: every LLR will be 0. Called by all threads.
    auto erase_subcarrier = [&] {
        for (int u = tid; u < U; u += kPrepareThreads) {
            rho[u] = 0.0f;
            inv_lambda[u] = 0.0f;
        }
        if (tid == 0) {
            p.status[sc] = kStatusBad | (s_regularized ? kStatusRegularized : 0);
            p.unusable[sc] = 0;
        }
    };
    if (tid == 0) {
        s_bad = 0;
        s_regularized = 0;
        s_unusable = 0;
    }

    // G = H^H H with register tiles: thread (tile, ks) accumulates a kTile x kTile block
    // of the lower triangle over the antennas b = ks (mod kSplit) of each staged chunk,
    // reading 2 kTile values per kTile^2 products; the kSplit partial sums are then added
    // in a fixed order (deterministic, unlike atomics).
    const bool tiler = tid < kSplit * kTiles;
    const int tile = tid % kTiles, ks = tid / kTiles;
    int ti = 0, tj = tile; // tile -> (ti, tj) with tj <= ti
    while (tj > ti) {
        tj -= ti + 1;
        ++ti;
    }
    float2 acc[kTile][kTile];
#pragma unroll
    for (int r = 0; r < kTile; ++r)
#pragma unroll
        for (int c = 0; c < kTile; ++c)
            acc[r][c] = make_float2(0.0f, 0.0f);
    for (int idx = tid; idx < kChunk * (UMAX - U); idx += kPrepareThreads)
        hs[idx / (UMAX - U)][U + idx % (UMAX - U)] =
            make_float2(0.0f, 0.0f); // padding users
    __syncthreads();
    for (int b0 = 0; b0 < B; b0 += kChunk) {
        const int rows = min(kChunk, B - b0);
        stage_matrix<4>(&hs[0][0], UMAX + 1, h + b0 * U, rows, U, tid, kPrepareThreads);
        for (int idx = rows * U + tid; idx < kChunk * U; idx += kPrepareThreads)
            hs[idx / U][idx % U] = make_float2(0.0f, 0.0f); // rows past B
        // A non-finite entry makes its column's G_uu non-finite, caught below.
        __syncthreads();
        if (tiler) {
            for (int bb = ks; bb < kChunk; bb += kSplit) {
                float2 hi[kTile], hj[kTile];
#pragma unroll
                for (int r = 0; r < kTile; ++r) {
                    hi[r] = hs[bb][ti * kTile + r];
                    hj[r] = hs[bb][tj * kTile + r];
                }
#pragma unroll
                for (int r = 0; r < kTile; ++r)
#pragma unroll
                    for (int c = 0; c < kTile; ++c)
                        acc[r][c] = cadd(acc[r][c], cmulc(hi[r], hj[c]));
            }
        }
        __syncthreads();
    }
    if (tiler)
#pragma unroll
        for (int r = 0; r < kTile; ++r)
#pragma unroll
            for (int c = 0; c < kTile; ++c)
                partial[ks * kTiles + tile][r * kTile + c] = acc[r][c];
    __syncthreads();
    for (int idx = tid; idx < kTiles * kTile * kTile; idx += kPrepareThreads) {
        const int t = idx / (kTile * kTile), rc = idx % (kTile * kTile);
        int i_t = 0, j_t = t;
        while (j_t > i_t) {
            j_t -= i_t + 1;
            ++i_t;
        }
        float2 sum = make_float2(0.0f, 0.0f);
        for (int k = 0; k < kSplit; ++k)
            sum = cadd(sum, partial[k * kTiles + t][rc]);
        const int i = i_t * kTile + rc / kTile, j = j_t * kTile + rc % kTile;
        g[i][j] = sum;
        if (i_t != j_t)
            g[j][i] = conj2(sum);
    }
    __syncthreads();
    if (tid == 0) {
        float max_gain = 0.0f, sum = 0.0f;
        for (int u = 0; u < U; ++u) {
            max_gain = fmaxf(max_gain, g[u][u].x);
            sum += g[u][u].x;
        }
        s_max_gain = max_gain;
        s_mean_gain = sum / U;
        if (!(max_gain > 0.0f) || !isfinite(sum))
            s_bad = 1;
    }
    __syncthreads();
    if (s_bad) {
        erase_subcarrier();
        return;
    }
    const float min_gain = kMinUserGain * s_max_gain;

    if (p.mode == KernelMode::cg || p.mode == KernelMode::cr) {
        float2* a = p.a + static_cast<std::size_t>(sc) * U * U;
        for (int idx = tid; idx < U * U; idx += kPrepareThreads) {
            const int i = idx / U, j = idx % U;
            float2 v = g[i][j];
            if (i == j)
                v.x += p.n0;
            a[idx] = v;
        }
        // li2015 II-C: rho ~ G_uu / N0, lambda = rho / (1 + rho).
        for (int u = tid; u < U; u += kPrepareThreads) {
            const float gain = g[u][u].x;
            if (gain > min_gain) {
                const float r = p.n0 > 0.0f ? fminf(gain / p.n0, kMaxSinr) : kMaxSinr;
                rho[u] = r;
                inv_lambda[u] = (1.0f + r) / r;
            } else {
                rho[u] = 0.0f;
                inv_lambda[u] = 0.0f;
                atomicAdd(&s_unusable, 1);
            }
        }
        __syncthreads();
        if (tid == 0) {
            p.status[sc] = kStatusOk;
            p.unusable[sc] = static_cast<std::uint8_t>(s_unusable);
        }
        return;
    }

    // chol / zf: Cholesky of A by the whole block, one column per step (2 barriers a
    // step), with one retry under diagonal loading when a pivot is not clearly positive.
    for (int attempt = 0; attempt < 2; ++attempt) {
        const float load = (p.mode == KernelMode::chol ? p.n0 : 0.0f) +
                           (attempt ? kLoading * s_mean_gain : 0.0f);
        float max_diag = 0.0f;
        for (int i = 0; i < U; ++i)
            max_diag = fmaxf(max_diag, g[i][i].x + load);
        for (int idx = tid; idx < U * U; idx += kPrepareThreads) {
            const int i = idx / U, j = idx % U;
            if (j <= i) {
                float2 v = g[i][j];
                if (i == j)
                    v.x += load;
                l[i][j] = v;
            }
        }
        __syncthreads();
        bool ok = true;
        for (int k = 0; k < U; ++k) {
            const float d = l[k][k].x; // the pivot L_kk^2, the same for every thread
            if (!(d >= kMinPivotRatio * max_diag) || !isfinite(d)) {
                ok = false;
                break;
            }
            const float inv_lkk = rsqrtf(d);
            for (int i = k + 1 + tid; i < U; i += kPrepareThreads)
                l[i][k] = cscale(l[i][k], inv_lkk);
            __syncthreads();
            const int n = U - k - 1;
            for (int idx = tid; idx < n * n; idx += kPrepareThreads) {
                const int i = k + 1 + idx / n, j = k + 1 + idx % n;
                if (j <= i)
                    l[i][j] = csub(l[i][j], cmul(l[i][k], conj2(l[j][k])));
            }
            if (tid == 0)
                l[k][k] = make_float2(sqrtf(d), 0.0f);
            __syncthreads();
        }
        if (tid == 0 && attempt == 1)
            s_regularized = 1; // counted like the CPU: whenever loading was needed
        if (ok) {
            break;
        }
        if (attempt == 1 && tid == 0)
            s_bad = 1;
        __syncthreads();
    }
    __syncthreads();
    if (s_bad) {
        erase_subcarrier();
        return;
    }

    // A^-1 = L^-H L^-1. Warp 0 inverts L column by column (lane c owns column c of L^-1),
    // then all threads form A^-1 in place of L, and W^T = (A^-1 H^H)^T as a product:
    // every matrix stays in shared memory instead of per-thread arrays.
    if (tid < 32) {
        const int c = tid;
        for (int i = 0; i < U; ++i)
            if (c < U)
                li[i][c] = make_float2(0.0f, 0.0f);
        if (c < U)
            for (int i = c; i < U; ++i) {
                float2 s = make_float2(i == c ? 1.0f : 0.0f, 0.0f);
                for (int j = c; j < i; ++j)
                    s = csub(s, cmul(l[i][j], li[j][c]));
                li[i][c] = cscale(s, 1.0f / l[i][i].x);
            }
    }
    __syncthreads();
    for (int idx = tid; idx < U * U; idx += kPrepareThreads) {
        const int u = idx / U, v = idx % U;
        float2 s = make_float2(0.0f, 0.0f);
        for (int k = max(u, v); k < U; ++k)
            s = cadd(s, cmulc(li[k][u], li[k][v]));
        l[u][v] = s; // l now holds A^-1
    }
    __syncthreads();

    // W^T = conj(H) A^-T, 32 antennas at a time from shared memory (H staged again).
    float2* wt = p.wt + static_cast<std::size_t>(sc) * B * U;
    for (int b0 = 0; b0 < B; b0 += kChunk) {
        const int rows = min(kChunk, B - b0);
        stage_matrix<4>(&hs[0][0], UMAX + 1, h + b0 * U, rows, U, tid, kPrepareThreads);
        __syncthreads();
        for (int idx = tid; idx < rows * U; idx += kPrepareThreads) {
            const int bb = idx / U, u = idx % U;
            float2 w = make_float2(0.0f, 0.0f);
            for (int j = 0; j < U; ++j)
                w = cadd(w, cmul(l[u][j], conj2(hs[bb][j])));
            wt[b0 * U + idx] = w;
            if (!cfinite(w))
                s_bad = 1;
        }
        __syncthreads();
    }
    __syncthreads();
    if (s_bad) {
        erase_subcarrier();
        return;
    }
    // lambda_u = (W H)_uu (chol) and the post-ZF noise N0 |w_u|^2 (zf): a warp per user,
    // lanes over the antennas, a fixed-order butterfly sum.
    {
        const int warp = tid / 32, lane = tid % 32;
        for (int u = warp; u < U; u += kPrepareThreads / 32) {
            float lam = 0.0f, wnorm = 0.0f;
            for (int b = lane; b < B; b += 32) {
                const float2 w = wt[b * U + u];
                lam += cmul(w, h[b * U + u]).x;
                wnorm += cnorm(w);
            }
            for (int off = 16; off > 0; off >>= 1) {
                lam += __shfl_xor_sync(0xffffffffu, lam, off);
                wnorm += __shfl_xor_sync(0xffffffffu, wnorm, off);
            }
            if (lane != 0)
                continue;
            const bool usable = g[u][u].x > min_gain;
            if (usable && p.mode == KernelMode::zf) {
                const float noise = p.n0 * wnorm;
                rho[u] = noise > 0.0f ? fminf(1.0f / noise, kMaxSinr) : kMaxSinr;
                inv_lambda[u] = 1.0f;
            } else if (usable && p.mode == KernelMode::chol && lam > 0.0f &&
                       isfinite(lam)) {
                const float one_minus = 1.0f - lam;
                rho[u] = one_minus > lam / kMaxSinr ? lam / one_minus : kMaxSinr;
                inv_lambda[u] = 1.0f / lam;
            } else {
                rho[u] = 0.0f;
                inv_lambda[u] = 0.0f;
                atomicAdd(&s_unusable, 1);
            }
        }
    }
    __syncthreads();
    if (tid == 0) {
        p.status[sc] = s_regularized ? kStatusRegularized : kStatusOk;
        p.unusable[sc] = static_cast<std::uint8_t>(s_unusable);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Per-symbol equalization and demapping: a block per (subcarrier, group of symbols), a */
/* warp per symbol. UP = users rounded up to a power of two; the 32 lanes of a warp form
 */
/* 32/UP groups of UP lanes (lane = group * UP + user) that split the antennas between */
/* them, so every lane works even when U < 32. */
/* ------------------------------------------------------------------------------------ */

template <int UP>
__device__ __forceinline__ float group_sum(float v)
{
#pragma unroll
    for (int off = UP / 2; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

/* kStaged: a block per (subcarrier, group of symbols) stages W^T (or H and A) in shared
 * memory once for all its symbols. Otherwise (few symbols per subcarrier, e.g.
 * broumas2023's one-symbol systems) each warp takes one (subcarrier, symbol) pair and
 * reads the matrices straight from global memory: staging would be used once, and a block
 * per subcarrier would leave most of the SM idle. */
template <int UP, bool kStaged>
__global__ void __launch_bounds__(32 * kMaxWarpsPerBlock)
    equalize_kernel(EqualizeArgs p, int symbols_per_block)
{
    extern __shared__ float2 smem[];
    const int B = p.num_antennas, U = p.num_users, Q = p.demap.bits;
    const int nsc = p.num_subcarriers;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    const int group = lane / UP, user = lane % UP;
    constexpr int kGroups = 32 / UP;
    const bool iterative = p.mode == KernelMode::cg || p.mode == KernelMode::cr;

    int sc;
    std::size_t sym_begin, sym_end, sym_step;
    if (kStaged) {
        sc = blockIdx.x;
        sym_begin = static_cast<std::size_t>(blockIdx.y) * symbols_per_block + warp;
        sym_end = min(p.num_symbols,
                      static_cast<std::size_t>(blockIdx.y) * symbols_per_block +
                          symbols_per_block);
        sym_step = warps;
    } else {
        const std::size_t pair = static_cast<std::size_t>(blockIdx.x) * warps + warp;
        if (pair >= p.num_symbols * nsc)
            return;
        sc = static_cast<int>(pair %
                              nsc); // neighbouring warps read neighbouring y vectors
        sym_begin = pair / nsc;
        sym_end = sym_begin + 1;
        sym_step = 1;
    }
    const int stride = kStaged ? padded(U) : U;
    const float2* src = (iterative ? p.h : p.wt) + static_cast<std::size_t>(sc) * B * U;
    const float2* asrc = p.a + static_cast<std::size_t>(sc) * U * U;
    const float2* mat = src;
    const float2* a = asrc;
    float2* ybuf;
    if (kStaged) {
        float2* mat_s = smem;             // W^T or H: [B][U + 1]
        float2* a_s = mat_s + B * stride; // A: [U][U + 1] (cg/cr)
        mat = mat_s;
        a = a_s;
        ybuf = a_s + (iterative ? U * stride : 0) + warp * B;
    } else {
        ybuf = smem + warp * B;
    }

    auto llr_at = [&](std::size_t s) {
        return p.llr + ((s * nsc + sc) * U) * static_cast<std::size_t>(Q);
    };
    if (p.status[sc] &
        kStatusBad) { // no usable channel: every LLR of the subcarrier is 0
        for (std::size_t s = sym_begin; s < sym_end; s += sym_step) {
            // Non-finite y is still counted, as on the CPU.
            const float2* ys = p.y + (s * nsc + sc) * B;
            bool finite = true;
            for (int b = lane; b < B; b += 32)
                finite = finite && cfinite(ys[b]);
            if (!__all_sync(0xffffffffu, finite) && lane == 0)
                atomicAdd(p.bad_sample_count, 1ull);
            for (int i = lane; i < U * Q; i += 32)
                llr_at(s)[i] = 0.0f;
            if (p.x_hat)
                for (int u = lane; u < U; u += 32)
                    p.x_hat[(s * nsc + sc) * U + u] = make_float2(0.0f, 0.0f);
        }
        return; // uniform per block when staged (one subcarrier per block)
    }

    if (kStaged) {
        stage_matrix(
            const_cast<float2*>(mat), stride, src, B, U, threadIdx.x, blockDim.x);
        if (iterative)
            stage_matrix(
                const_cast<float2*>(a), stride, asrc, U, U, threadIdx.x, blockDim.x);
    }
    const bool active = user < U;
    const float rho = active ? p.rho[sc * U + user] : 0.0f;
    const float inv_lambda = active ? p.inv_lambda[sc * U + user] : 0.0f;
    if (kStaged)
        __syncthreads();

    for (std::size_t s = sym_begin; s < sym_end; s += sym_step) {
        const float2* ys = p.y + (s * nsc + sc) * B;
        bool finite = true;
        for (int b = lane; b < B; b += 32) {
            const float2 v = ys[b];
            finite = finite && cfinite(v);
            ybuf[b] = v;
        }
        if (!__all_sync(0xffffffffu,
                        finite)) { // NaN/Inf in y: erase this (symbol, subcarrier)
            for (int i = lane; i < U * Q; i += 32)
                llr_at(s)[i] = 0.0f;
            if (p.x_hat)
                for (int u = lane; u < U; u += 32)
                    p.x_hat[(s * nsc + sc) * U + u] = make_float2(0.0f, 0.0f);
            if (lane == 0)
                atomicAdd(p.bad_sample_count, 1ull);
            __syncwarp();
            continue;
        }
        __syncwarp();

        // x = W y (chol/zf) or y_MF = H^H y (cg/cr); each lane group takes every
        // kGroups-th antenna, then the groups are summed with butterflies.
        float2 acc = make_float2(0.0f, 0.0f);
        if (active) {
            if (iterative) {
                for (int b = group; b < B; b += kGroups)
                    acc = cadd(acc, cmulc(mat[b * stride + user], ybuf[b]));
            } else {
                for (int b = group; b < B; b += kGroups)
                    acc = cadd(acc, cmul(mat[b * stride + user], ybuf[b]));
            }
        }
#pragma unroll
        for (int off = UP; off < 32; off <<= 1)
            acc = cadd(acc, shfl_xor(acc, off));

        float2 x = acc;
        if (iterative) {
            // Every group runs the same iterations on its copy (no divergence, no sync).
            const int base = lane - user;
            auto a_times = [&](float2 v) { // (A v)_user = sum_j conj(A[j][user]) v_j
                float2 out = make_float2(0.0f, 0.0f);
                for (int j = 0; j < U; ++j) {
                    const float2 vj = shfl(v, base + j);
                    if (active)
                        out = cadd(out, cmulc(a[j * stride + user], vj));
                }
                return out;
            };
            auto step = [](float num, float den) {
                return (num > 0.0f && den > 0.0f) ? num / den : 0.0f;
            };
            float2 r = acc, pv = acc;
            x = make_float2(0.0f, 0.0f);
            if (p.mode == KernelMode::cg) { // li2015 Algorithm 1
                float rr = group_sum<UP>(cnorm(r));
                for (int it = 0; it < p.iterations; ++it) {
                    const float2 sv = a_times(pv);
                    const float alpha = step(rr, group_sum<UP>(cmulc(pv, sv).x));
                    x = cadd(x, cscale(pv, alpha));
                    r = csub(r, cscale(sv, alpha));
                    const float rr_next = group_sum<UP>(cnorm(r));
                    const float beta = alpha > 0.0f ? step(rr_next, rr) : 0.0f;
                    pv = cadd(r, cscale(pv, beta));
                    rr = rr_next;
                }
            } else { // broumas2023 Figure 4
                float2 m = a_times(r), e = m;
                float rm = group_sum<UP>(cmulc(r, m).x);
                for (int it = 0; it < p.iterations; ++it) {
                    const float alpha = step(rm, group_sum<UP>(cnorm(e)));
                    x = cadd(x, cscale(pv, alpha));
                    r = csub(r, cscale(e, alpha));
                    m = a_times(r);
                    const float rm_next = group_sum<UP>(cmulc(r, m).x);
                    const float beta = alpha > 0.0f ? step(rm_next, rm) : 0.0f;
                    pv = cadd(r, cscale(pv, beta));
                    e = cadd(m, cscale(e, beta));
                    rm = rm_next;
                }
            }
        }

        if (group == 0 && active) {
            float out[8];
            demap_maxlog(p.demap, cscale(x, inv_lambda), rho, out);
            float* dst = llr_at(s) + user * Q;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                if (j < Q)
                    dst[j] = fminf(fmaxf(p.llr_sign * out[j], -p.llr_clip), p.llr_clip);
            if (p.x_hat)
                p.x_hat[(s * nsc + sc) * U + user] = x;
        }
        __syncwarp(); // ybuf is rewritten for the next symbol
    }
}

int round_up_users(int u) { return u <= 4 ? 4 : u <= 8 ? 8 : u <= 16 ? 16 : 32; }

template <int UP>
void set_equalize_smem_limit(std::size_t bytes)
{
    MIMODET_CUDA_CHECK(cudaFuncSetAttribute(equalize_kernel<UP, true>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
}

//! Symbols per subcarrier below which each warp takes a (subcarrier, symbol) pair.
constexpr std::size_t kDirectBelowSymbols = 3;

template <int UP>
void launch_equalize_for(const EqualizeArgs& args, cudaStream_t stream)
{
    if (args.num_symbols < kDirectBelowSymbols) {
        const std::size_t pairs = args.num_symbols * args.num_subcarriers;
        const std::size_t blocks = (pairs + kMaxWarpsPerBlock - 1) / kMaxWarpsPerBlock;
        if (blocks > 0x7fffffffu)
            throw std::invalid_argument("launch_equalize: too many symbols in one call");
        const std::size_t smem = sizeof(float2) * kMaxWarpsPerBlock * args.num_antennas;
        equalize_kernel<UP, false>
            <<<static_cast<unsigned>(blocks), 32 * kMaxWarpsPerBlock, smem, stream>>>(
                args, 1);
        return;
    }
    // A block per subcarrier and group of symbols: up to kSymbolsPerWarp symbols per warp
    // so that staging the matrix is amortized. grid.y is limited to 65535: long calls are
    // cut into slices.
    const int warps =
        static_cast<int>(std::min<std::size_t>(kMaxWarpsPerBlock, args.num_symbols));
    const std::size_t per_block = static_cast<std::size_t>(warps) * kSymbolsPerWarp;
    const std::size_t max_slice = per_block * 65535;
    const std::size_t smem =
        equalize_shared_bytes(args.num_antennas, args.num_users, args.mode, warps);
    const std::size_t nsc = static_cast<std::size_t>(args.num_subcarriers);
    for (std::size_t first = 0; first < args.num_symbols; first += max_slice) {
        EqualizeArgs slice = args;
        slice.num_symbols = std::min(max_slice, args.num_symbols - first);
        slice.y = args.y + first * nsc * args.num_antennas;
        slice.llr = args.llr + first * nsc * args.num_users * args.demap.bits;
        if (args.x_hat)
            slice.x_hat = args.x_hat + first * nsc * args.num_users;
        const std::size_t y_blocks = (slice.num_symbols + per_block - 1) / per_block;
        const dim3 grid(args.num_subcarriers, static_cast<unsigned>(y_blocks)),
            block(32 * warps);
        equalize_kernel<UP, true>
            <<<grid, block, smem, stream>>>(slice, static_cast<int>(per_block));
    }
}

} // namespace

std::size_t
equalize_shared_bytes(int num_antennas, int num_users, KernelMode mode, int warps)
{
    const bool iterative = mode == KernelMode::cg || mode == KernelMode::cr;
    const std::size_t rows = num_antennas + (iterative ? num_users : 0);
    return sizeof(float2) *
           (rows * padded(num_users) + static_cast<std::size_t>(warps) * num_antennas);
}

void configure_kernels(int num_antennas, int num_users, KernelMode mode)
{
    int device = 0, optin = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const std::size_t need =
        equalize_shared_bytes(num_antennas, num_users, mode, kMaxWarpsPerBlock);
    if (need > static_cast<std::size_t>(optin))
        throw std::runtime_error(
            "the equalize kernel needs " + std::to_string(need) +
            " bytes of shared memory for B=" + std::to_string(num_antennas) + ", U=" +
            std::to_string(num_users) + "; this GPU allows " + std::to_string(optin));
    // The limit belongs to the kernel, not to a detector: set it to the device's maximum
    // so that a detector needing less never lowers it under another's needs.
    set_equalize_smem_limit<4>(static_cast<std::size_t>(optin));
    set_equalize_smem_limit<8>(static_cast<std::size_t>(optin));
    set_equalize_smem_limit<16>(static_cast<std::size_t>(optin));
    set_equalize_smem_limit<32>(static_cast<std::size_t>(optin));
}

void launch_prepare(const PrepareArgs& args, cudaStream_t stream)
{
    if (args.num_subcarriers == 0)
        return;
    const dim3 grid(args.num_subcarriers), block(kPrepareThreads);
    if (args.num_users <= 8)
        prepare_kernel<8><<<grid, block, 0, stream>>>(args);
    else if (args.num_users <= 16)
        prepare_kernel<16><<<grid, block, 0, stream>>>(args);
    else
        prepare_kernel<32><<<grid, block, 0, stream>>>(args);
    MIMODET_CUDA_CHECK_LAUNCH("prepare_kernel");
}

void launch_equalize(const EqualizeArgs& args, cudaStream_t stream)
{
    if (args.num_symbols == 0 || args.num_subcarriers == 0)
        return;
    switch (round_up_users(args.num_users)) {
    case 4:
        launch_equalize_for<4>(args, stream);
        break;
    case 8:
        launch_equalize_for<8>(args, stream);
        break;
    case 16:
        launch_equalize_for<16>(args, stream);
        break;
    default:
        launch_equalize_for<32>(args, stream);
        break;
    }
    MIMODET_CUDA_CHECK_LAUNCH("equalize_kernel");
}

} // namespace cuda
} // namespace mimodet
