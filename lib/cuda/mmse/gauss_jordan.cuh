/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The two Gauss-Jordan inversions of A = G + load I for chol/zf (internal to
 * lib/cuda/mmse), without pivoting (A is Hermitian positive definite, and the pivots are
 * those of its Cholesky factorization): invert_warp, one warp with the entries in
 * registers and the pivot row and column passed by shuffles, and invert_in_place, a whole
 * block with them published in shared memory. channel_state.cuh drives them with the
 * CPU's pivot rule and diagonal loading. tests/emulation/test_gauss_jordan.py emulates
 * both lane by lane. */

#ifndef INCLUDED_MIMODET_MMSE_GAUSS_JORDAN_CUH
#define INCLUDED_MIMODET_MMSE_GAUSS_JORDAN_CUH

#include "cuda/device_math.cuh"
#include <type_traits>
#include <cstddef>

namespace mimodet {
namespace cuda {

/*! (G + load I)^-1 by one warp, for blocks of one warp: the Gauss-Jordan elimination of
 * invert_in_place (below) with the entries in registers and the pivot row and column
 * passed by shuffles, with no shared memory and no barrier. Lane (h, j) = (lane / UP,
 * lane % UP) holds R = 32 / UP rows of column j, so lane (h, k) holds exactly the rows of
 * column k that lane (h, j) needs. With one pass per rotation, in pass q of the steps
 * (steps k = q R .. q R + R - 1) entry e holds row h + R ((e + q) % E): the pivot rows
 * are always in entry 0 and the test of which entry lies on row k is e == 0 && h == k %
 * R. The passes stay a loop, rotating the entries by one after each (E passes bring them
 * back): unrolled, the 16 steps for 16 users took about 28 KiB of code that each warp ran
 * once, and the NR slot kernel stalled on instruction fetch. kPassesPerRotation = 2 (E
 * even) makes one iteration of two passes, pass q + t finding its pivot rows in entry t,
 * and then rotates by two entries: half the register moves for twice the code. (Blocks of
 * several warps on grids of a block or so per SM keep invert_in_place: there no other
 * block fills in while the others wait at a barrier for one warp. On compact grids the
 * SM's other blocks do, and one warp is faster: the fused kernel.)
 *
 * Unlike invert_in_place it inverts s A, s = 2^-e (exact) with max_diag (the largest
 * diagonal entry of A) < 2^e, so that every pivot d, a Schur complement, is at most
 * about 1, and then scales the result by s. That lets row and column k take the same
 * update v - c r_j as every other entry, without a select per entry: column k's lanes
 * hold c = M_ik themselves and get r_k = 1 + 1/d (M_ik - M_ik (1 + 1/d) = -M_ik / d), and
 * row k takes c = d - 1 (M_kj - (d - 1) M_kj / d = M_kj / d; at j = k, d - (d - 1)(1 +
 * 1/d) = 1 / d). With 1/d >= ~1 the rounding of 1 + 1/d and of d - 1 costs at most a
 * few units in the last place of the results (unscaled, a pivot of 1e4 would lose four
 * digits of 1/d in 1 + 1/d). The selects were on the critical path of the NR slot's
 * one-warp blocks, which all invert at once. Same pivots up to rounding and the same
 * failure as invert_in_place; m holds G on entry and A^-1 on success, G still on
 * failure. With a `store` (not nullptr), entry (i, j) of A^-1's U x U part also goes to
 * store(i, j, value) from the registers, and *all_finite tells whether every one of
 * them is finite (uniform). Every lane must call it. tests/emulation/test_gauss_jordan.py
 * emulates it lane by lane against numpy's inverse, at several scales of A and with one
 * and two passes per rotation. */
template <int UP, int kPassesPerRotation = 1, typename Store = std::nullptr_t>
__device__ __forceinline__ bool invert_warp(float2 (*m)[UP + 1],
                                            int U,
                                            float load,
                                            float max_diag,
                                            float min_pivot,
                                            int lane,
                                            Store store = nullptr,
                                            bool* all_finite = nullptr)
{
    static_assert(UP <= 16 && 32 % UP == 0, "invert_warp: up to 16 users");
    static_assert(kPassesPerRotation == 1 || kPassesPerRotation == 2,
                  "invert_warp: 1 or 2 passes per rotation");
    constexpr bool kStore = !std::is_same_v<Store, std::nullptr_t>;
    constexpr int R = 32 / UP;          // lanes per column
    constexpr int E = (UP + R - 1) / R; // entries per lane
    constexpr int QU = E % kPassesPerRotation == 0 ? kPassesPerRotation : 1;
    const int h = lane / UP, j = lane % UP;
    int exponent = 0;
    frexpf(max_diag, &exponent); // max_diag < 2^exponent
    const float s = ldexpf(1.0f, -exponent);
    min_pivot *= s;
    float2 v[E];
#pragma unroll
    for (int e = 0; e < E; ++e) {
        const int i = h + R * e; // UP = 4: lanes past row 3 hold no entry
        v[e] = (i < U && j < U) ? m[i][j] : make_float2(i == j ? 1.0f : 0.0f, 0.0f);
        if (i == j && i < U)
            v[e].x += load;
        if (i < U && j < U)
            v[e] = cscale(v[e], s);
    }
#pragma unroll 1
    for (int q = 0; q < E; q += QU) {
#pragma unroll
        for (int t = 0; t < QU; ++t) { // pass q + t: its pivot rows in entry t
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int k = (q + t) * R + r;
                if (k >= U) // uniform; the rotations below still run
                    break;
                // Every shuffle reads the registers before any lane updates them (the
                // warp runs each one together).
                const float2 row_kj = shfl(v[t], r * UP + j);
                const float d = __shfl_sync(0xffffffffu, v[t].x, r * UP + k); // real
                if (!(d >= min_pivot) || !isfinite(d))
                    return false; // every lane read the same pivot
                const float inv = 1.0f / d;
                // v <- v - c_i r_j with r_j = M_kj / d (1 + 1 / d at j = k) and c_i =
                // M_ik (d - 1 at i = k): see above.
                const float2 rj =
                    j == k ? make_float2(1.0f + inv, 0.0f) : cscale(row_kj, inv);
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    const float2 m_ik = shfl(v[e], h * UP + k);
                    const bool on_row_k = e == t && h == r;
                    v[e] = cfms(on_row_k ? make_float2(d - 1.0f, 0.0f) : m_ik, rj, v[e]);
                }
            }
        }
        float2 first[QU];
#pragma unroll
        for (int t = 0; t < QU; ++t)
            first[t] = v[t];
#pragma unroll
        for (int e = 0; e + QU < E; ++e)
            v[e] = v[e + QU];
#pragma unroll
        for (int t = 0; t < QU; ++t)
            v[E - QU + t] = first[t];
    }
    // A^-1 = s (s A)^-1 into m (zeros past U) and to store, checked for non-finite
    // entries.
    bool finite = true;
#pragma unroll
    for (int e = 0; e < E; ++e) {
        const int i = h + R * e;
        const bool inside = i < U && j < U;
        const float2 x = inside ? cscale(v[e], s) : make_float2(0.0f, 0.0f);
        if (i < UP)
            m[i][j] = x;
        if constexpr (kStore)
            if (inside) {
                finite = finite && cfinite(x);
                store(i, j, x);
            }
    }
    if constexpr (kStore)
        *all_finite = __all_sync(0xffffffffu, finite);
    __syncwarp();
    return true;
}

//! Shared scratch of invert_in_place: two pivot rows and columns, [2][row, column][UP].
__host__ __device__ constexpr int invert_scratch_items(int up) { return 4 * up; }

/*! (G + load I)^-1 (the whole block) by Gauss-Jordan elimination without pivoting, the
 * matrix being Hermitian positive definite: m holds G in its U x U part on entry (the
 * identity is taken past it) and the inverse (zeros past U) on success; on failure m
 * still holds G, for a retry under another load. `published` (invert_scratch_items) is
 * scratch. Step k turns column k into e_k and builds column k of the inverse in its
 * place, every entry updated at once: a dependent chain of one multiply-add per step
 * instead of the chains of about UP^2 / 2 of a Cholesky factorization and its two
 * triangular solves per column, whose registers cost the fused kernel its occupancy.
 * Each thread keeps its entries in registers (column tid % UP, rows tid / UP + (threads
 * / UP) e) and the step's pivot row and column are published in shared memory,
 * alternating between two buffers, so that a step takes one barrier and two
 * shared-memory reads per entry. The pivots are those of the Cholesky factorization (the
 * same Schur complements), so a pivot below min_pivot or not finite fails the same way;
 * the result is uniform across the block. Every thread of the block must call it;
 * threads: a multiple of UP, at least 32. kThreads: the block's threads when the caller
 * knows them at compile time (0 otherwise), so that the rows of each entry and the tests
 * on them fold into constants. */
template <int UP, int kThreads = 0>
__device__ __forceinline__ bool invert_in_place(float2 (*m)[UP + 1],
                                                float2* published,
                                                int U,
                                                float load,
                                                float min_pivot,
                                                int tid,
                                                int block_threads)
{
    static_assert(kThreads == 0 || (kThreads % UP == 0 && kThreads >= 32),
                  "invert_in_place: threads a multiple of UP, at least 32");
    constexpr int kPerThread =
        (UP * UP + (kThreads ? kThreads : 32) - 1) / (kThreads ? kThreads : 32);
    const int threads = kThreads ? kThreads : block_threads;
    const int j = tid % UP, row_step = threads / UP;
    if (kThreads)
        __builtin_assume(tid < kThreads);
    float2 v[kPerThread];
    auto row_of = [&](int e) { return tid / UP + row_step * e; };
    auto publish = [&](int k, int e, float2 value) {
        float2* const buf = published + (k % 2) * 2 * UP;
        if (row_of(e) == k)
            buf[j] = value;
        if (j == k)
            buf[UP + row_of(e)] = value;
    };
#pragma unroll
    for (int e = 0; e < kPerThread; ++e)
        if (row_of(e) < UP) {
            const int i = row_of(e);
            v[e] = (i < U && j < U) ? m[i][j] : make_float2(i == j ? 1.0f : 0.0f, 0.0f);
            if (i == j && i < U)
                v[e].x += load;
            publish(0, e, v[e]);
        }
    __syncthreads();
    for (int k = 0; k < U; ++k) {
        const float2* const row_k = published + (k % 2) * 2 * UP;
        const float2* const col_k = row_k + UP;
        const float d = row_k[k].x; // real: M is Hermitian
        if (!(d >= min_pivot) || !isfinite(d))
            return false; // every thread read the same pivot
        const float inv = 1.0f / d;
        // v <- v - c_i r_j with r_j = M_kj / d (1 / d at j = k), c_i = M_ik (-1 at i = k)
        // and v taken as 0 in row and column k: row k becomes M_kj / d, column k
        // -M_ik / d, and M_kk 1 / d.
        const float2 r = j == k ? make_float2(inv, 0.0f) : cscale(row_k[j], inv);
#pragma unroll
        for (int e = 0; e < kPerThread; ++e) {
            const int i = row_of(e);
            if (i >= UP)
                break;
            const float2 c = i == k ? make_float2(-1.0f, 0.0f) : col_k[i];
            const float2 base = (i == k || j == k) ? make_float2(0.0f, 0.0f) : v[e];
            v[e] = cfms(c, r, base);
            publish(k + 1, e, v[e]);
        }
        __syncthreads(); // step k + 1 reads what step k published, and reuses step k -
                         // 1's buffer
    }
    // M^-1 into m, zeros past U.
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
        const int i = row_of(e);
        if (i < UP)
            m[i][j] = (i < U && j < U) ? v[e] : make_float2(0.0f, 0.0f);
    }
    __syncthreads();
    return true;
}

} // namespace cuda
} // namespace mimodet

#endif
