/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A subcarrier's channel state on the device (internal to lib/cuda/mmse), by the
 * numerical rules of the CPU detector (core/mmse/numerics.h): what the prepare
 * kernel (prepare.cu) and the fused tiled kernel (equalize_tiled.cu) leave for each
 * subcarrier (A or A^-1 in p.a, the per-user gains rho and 1/lambda, the status and the
 * count of unusable users), from G = H^H H. cg/cr: A = G + N0 I and li2015's approximate
 * gains (II-C); chol/zf: A^-1 by Gauss-Jordan (gauss_jordan.cuh) on a block or a warp,
 * with the diagonal loading of the CPU (also when N0 is tiny) and one retry under more
 * of it. */

#ifndef INCLUDED_MIMODET_MMSE_CHANNEL_STATE_CUH
#define INCLUDED_MIMODET_MMSE_CHANNEL_STATE_CUH

#include "core/mmse/numerics.h"
#include "cuda/kernels.h"
#include "cuda/precision/decode.cuh"
#include "device_helpers.cuh"
#include "gauss_jordan.cuh"
#include <cstddef>
#include <cstdint>

namespace mimodet {
namespace cuda {

// One definition of the numerical rules for the CPU detector and the kernels.
using mmse::kLoading;
using mmse::kMaxSinr;
using mmse::kMinPivotRatio;
using mmse::kMinUserGain;

/*! cg/cr loading for a declared N0 and the sum of the gains (core/mmse/iterative.h,
 * iterative_loading): kLoading mean(diag G) when N0 is below it (N0 = 0 or tiny), else 0.
 */
__device__ __forceinline__ float iterative_load(float n0, float gain_sum, int num_users)
{
    const float floor = kLoading * gain_sum / num_users;
    return n0 < floor ? floor : 0.0f;
}

/*! cg/cr per-user gains from G_uu (li2015 II-C: rho ~ G_uu / N0, lambda = rho / (1 +
 * rho)); a user far weaker than the strongest (max_gain) is erased (rho = 1/lambda = 0).
 * Under loading (n0 is then N0' = N0 + load) rho is the pairwise bound (G_uu - captured)
 * / N0', captured = max_{v != u} |G_uv|^2 / (G_vv + N0'), as on the CPU
 * (core/mmse/iterative.cc). Returns true when the lane holds a user and that user is
 * erased. */
__device__ __forceinline__ bool approximate_gains(float own_gain,
                                                  float max_gain,
                                                  bool user_lane,
                                                  float n0,
                                                  bool loaded,
                                                  float captured,
                                                  float& rho,
                                                  float& inv_lambda)
{
    const bool usable = user_lane && own_gain > kMinUserGain * max_gain;
    const float r =
        loaded ? fminf(fmaxf((own_gain - captured) / n0, 1.0f / kMaxSinr), kMaxSinr)
               : (n0 > 0.0f ? fminf(own_gain / n0, kMaxSinr) : kMaxSinr);
    rho = usable ? r : 0.0f;
    inv_lambda = usable ? (1.0f + r) / r : 0.0f;
    return user_lane && !usable;
}

//! No usable channel on subcarrier sc (one warp): zero gains and kStatusBad, so every
//! LLR of it will be 0.
__device__ __forceinline__ void
erase_channel(const PrepareArgs& p, int sc, bool regularized, int lane)
{
    const int U = p.num_users;
    if (lane < U) {
        p.rho[static_cast<std::size_t>(sc) * U + lane] = 0.0f;
        p.inv_lambda[static_cast<std::size_t>(sc) * U + lane] = 0.0f;
    }
    if (lane == 0) {
        p.status[sc] = kStatusBad | (regularized ? kStatusRegularized : 0);
        p.unusable[sc] = 0;
        if (p.counts) {
            atomicAdd(p.counts + kChannelCountBad, 1ull);
            if (regularized)
                atomicAdd(p.counts + kChannelCountRegularized, 1ull);
        }
    }
}

//! Adds a usable subcarrier's status to p.counts, where they are kept (lane 0).
__device__ __forceinline__ void
count_channel(const PrepareArgs& p, bool regularized, unsigned unusable_users)
{
    if (!p.counts)
        return;
    if (regularized)
        atomicAdd(p.counts + kChannelCountRegularized, 1ull);
    if (unusable_users)
        atomicAdd(p.counts + kChannelCountUnusableUsers,
                  static_cast<unsigned long long>(unusable_users));
}

//! The U x U part of g row-major into p.a (one warp, coalesced).
template <int UP>
__device__ __forceinline__ void
write_channel_matrix(const PrepareArgs& p, int sc, const float2 (*g)[UP + 1], int lane)
{
    const int U = p.num_users;
    float2* a_out = p.a + static_cast<std::size_t>(sc) * U * U;
    if (U == UP) // shifts instead of divisions by a run-time U
        for (int idx = lane; idx < UP * UP; idx += 32)
            a_out[idx] = g[idx / UP][idx % UP];
    else
        for (int idx = lane; idx < U * U; idx += 32)
            a_out[idx] = g[idx / U][idx % U];
}

/*! chol/zf, one warp, once g holds A^-1 of A = G + load I (zeros past U): A^-1 into
 * p.a (unless `written`: there already, all_finite telling whether it is all finite), the
 * per-user gains, the status and the unusable count; a row of A^-1 that is not finite
 * erases the subcarrier. own_gain is G_uu of this lane's user, max_gain the
 * largest, gain_sum their sum. kCodes: H is read from p.h_codes (a narrow channel),
 * not p.h. Returns whether the channel is usable (not erased), on every lane. */
template <int UP, bool kCodes = false>
__device__ __forceinline__ bool publish_inverse(const PrepareArgs& p,
                                                int sc,
                                                const float2 (*g)[UP + 1],
                                                float load,
                                                bool regularized,
                                                float own_gain,
                                                float max_gain,
                                                float gain_sum,
                                                int lane,
                                                bool written = false,
                                                bool all_finite = true)
{
    const int U = p.num_users;
    const bool user_lane = lane < U;
    const bool usable = user_lane && own_gain > kMinUserGain * max_gain;
    // [A^-1]_uu of this lane's user, and whether its row is finite (written: A^-1 is in
    // p.a already and all_finite says whether it is all finite).
    float inv_diag = 0.0f;
    bool finite = true;
    if (user_lane) {
        inv_diag = g[lane][lane].x;
        if (!written)
            for (int j = 0; j < U; ++j)
                finite = finite && cfinite(g[lane][j]);
    }
    if (written ? !all_finite : !__all_sync(0xffffffffu, finite || !user_lane)) {
        erase_channel(p, sc, regularized, lane);
        return false;
    }
    // zf: the post-ZF noise gain |w_u|^2 = [A^-1 G A^-1]_uu = ||H x||^2, x = column u of
    // A^-1 (x_j = conj([A^-1]_uj)); without loading that is [A^-1]_uu. Under loading (a
    // near-singular G) x has a component ~1/load along G's null space, which both
    // [A^-1 - load A^-2]_uu and x^H (G x) cancel to garbage in float; H x cancels it
    // before squaring, as the CPU's W = A^-1 H^H does. Only on loaded subcarriers
    // (pivots, or N0 below the loading's level): H is read again, from L2. Under loading
    // (regularized) chol needs |w_u|^2 too, by the same path (below).
    float zf_noise_gain = inv_diag;
    if (((p.mode == KernelMode::zf && load > 0.0f) || regularized) && user_lane) {
        const int B = p.num_antennas;
        const std::size_t h0 = static_cast<std::size_t>(sc) * B * U;
        float q = 0.0f;
        for (int b = 0; b < B; ++b) {
            float2 t = make_float2(0.0f, 0.0f);
            for (int j = 0; j < U; ++j) {
                float2 h_bj;
                if constexpr (kCodes)
                    h_bj = decode_complex(p.h_codes,
                                          h0 + b * U + j,
                                          p.code_bytes,
                                          p.code_precision,
                                          p.h_scale);
                else
                    h_bj = __ldg(p.h + h0 + b * U + j);
                t = cfma(h_bj, conj2(g[lane][j]), t);
            }
            q += cnorm(t);
        }
        zf_noise_gain = q;
    }
    if (!written)
        write_channel_matrix<UP>(p, sc, g, lane);

    // Per-user gains, the CPU's (W H)_uu and |w_u|^2 without W: with A = G + load I,
    // W H = A^-1 G = I - load A^-1 (chol), W W^H as above (zf).
    const bool zf = p.mode == KernelMode::zf;
    bool unusable = false;
    if (user_lane) {
        float r = 0.0f, il = 0.0f;
        const float one_minus = load * inv_diag; // 1 - lambda (chol)
        const float lam = 1.0f - one_minus;
        if (usable && regularized) {
            // As the CPU: the loaded filter leaves interference (W H)_uj = -load
            // [A^-1]_uj between the users it could not tell apart, and rho counts it (the
            // exact post-equalizer SINR), for chol and zf alike, with the noise never
            // below the loading's level.
            float interference = 0.0f;
            for (int j = 0; j < U; ++j)
                if (j != lane)
                    interference += cnorm(cscale(g[lane][j], load));
            const float noise = fmaxf(channel_n0(p, sc), kLoading * gain_sum / U);
            const float disturbance = interference + noise * zf_noise_gain;
            if (lam > 0.0f && isfinite(lam) && isfinite(disturbance)) {
                const float signal = lam * lam;
                r = disturbance > signal / kMaxSinr ? signal / disturbance : kMaxSinr;
                il = 1.0f / lam;
            } else {
                unusable = true;
            }
        } else if (usable && zf) {
            const float noise = channel_n0(p, sc) * zf_noise_gain;
            r = noise > 0.0f ? fminf(1.0f / noise, kMaxSinr) : kMaxSinr;
            il = 1.0f;
        } else if (usable && lam > 0.0f && isfinite(lam)) {
            r = one_minus > lam / kMaxSinr ? lam / one_minus : kMaxSinr;
            il = 1.0f / lam;
        } else {
            unusable = true;
        }
        p.rho[static_cast<std::size_t>(sc) * U + lane] = r;
        p.inv_lambda[static_cast<std::size_t>(sc) * U + lane] = il;
    }
    const unsigned unusable_mask = __ballot_sync(0xffffffffu, unusable);
    if (lane == 0) {
        p.status[sc] = regularized ? kStatusRegularized : kStatusOk;
        p.unusable[sc] = static_cast<std::uint8_t>(__popc(unusable_mask));
        count_channel(p, regularized, __popc(unusable_mask));
    }
    return true;
}

/*! The diagonal loading of attempt 0 (chol: N0; zf: none; plus kLoading mean(diag G)
 * when the declared N0 is below that level, cg/cr's rule) or 1 (that much more, when the
 * first failed), as on the CPU (core/mmse/cholesky.cc); regularized: whether any
 * loading beyond N0 was added. */
__device__ __forceinline__ float
channel_load(const PrepareArgs& p, int sc, int attempt, float gain_sum, bool& regularized)
{
    const float loading = kLoading * gain_sum / p.num_users;
    const float n0 = channel_n0(p, sc);
    const bool low_n0 = n0 < loading;
    regularized = low_n0 || attempt > 0;
    return (p.mode == KernelMode::chol ? n0 : 0.0f) + (low_n0 ? loading : 0.0f) +
           (attempt ? loading : 0.0f);
}

/*! cg/cr channel state of subcarrier sc by one warp, from G = H^H H (g, full Hermitian,
 * in shared memory): A = G + N0 I into p.a and into g (N0 + load when N0 is tiny:
 * iterative_load), li2015's approximate per-user gains (the pairwise bound when loaded),
 * the status and the unusable count. A subcarrier without a usable channel gets
 * kStatusBad and zero gains. Returns whether the channel is usable (not kStatusBad), on
 * every lane. */
template <int UP>
__device__ __forceinline__ bool
finish_channel_iterative(const PrepareArgs& p, int sc, float2 (*g)[UP + 1], int lane)
{
    const int U = p.num_users;
    const bool user_lane = lane < U;
    const float own_gain = user_lane ? g[lane][lane].x : 0.0f;
    const float max_gain = warp_max(own_gain), gain_sum = warp_sum(own_gain);
    if (!(max_gain > 0.0f) || !isfinite(gain_sum)) {
        erase_channel(p, sc, false, lane);
        return false;
    }
    const float n0 = channel_n0(p, sc);
    const float load = iterative_load(n0, gain_sum, U);
    const float n0_eff = n0 + load;
    __syncwarp(); // every lane has read its G_uu
    if (user_lane)
        g[lane][lane].x += n0_eff;
    __syncwarp();
    write_channel_matrix<UP>(p, sc, g, lane);
    float captured = 0.0f; // the strongest partner's share of G_uu (loaded channels)
    if (load > 0.0f && user_lane)
        for (int j = 0; j < U; ++j)
            if (j != lane)
                captured = fmaxf(captured, cnorm(g[lane][j]) / g[j][j].x);
    float r = 0.0f, il = 0.0f;
    const bool unusable = approximate_gains(
        own_gain, max_gain, user_lane, n0_eff, load > 0.0f, captured, r, il);
    if (user_lane) {
        p.rho[static_cast<std::size_t>(sc) * U + lane] = r;
        p.inv_lambda[static_cast<std::size_t>(sc) * U + lane] = il;
    }
    const unsigned unusable_mask = __ballot_sync(0xffffffffu, unusable);
    if (lane == 0) {
        p.status[sc] = load > 0.0f ? kStatusRegularized : kStatusOk;
        p.unusable[sc] = static_cast<std::uint8_t>(__popc(unusable_mask));
        count_channel(p, load > 0.0f, __popc(unusable_mask));
    }
    return true;
}

/*! chol/zf channel state of subcarrier sc by the whole block (the prepare kernel, the
 * fused kernel): A^-1 of A = G + load I by invert_in_place with the CPU's pivot rule and
 * one retry under diagonal loading, then publish_inverse (A^-1, the per-user gains, the
 * status; a subcarrier without a usable channel gets kStatusBad and zero gains). a holds
 * G on entry and A^-1 on success (a failed attempt leaves G there for the retry under
 * loading); work is the inversion's
 * scratch (invert_scratch_items); scalars (2 floats) pass the gains from warp 0 to the
 * block; kThreads as for invert_in_place. Every thread of the block must call it.
 * Returns whether the channel is usable, on the first warp's lanes. */
template <int UP, int kThreads = 0, bool kCodes = false>
__device__ __forceinline__ bool finish_channel_block(const PrepareArgs& p,
                                                     int sc,
                                                     float2 (*a)[UP + 1],
                                                     float2* work,
                                                     float* scalars,
                                                     int tid,
                                                     int threads)
{
    const int U = p.num_users;
    float own_gain = 0.0f;
    if (tid < 32) {
        own_gain = tid < U ? a[tid][tid].x : 0.0f;
        const float max_gain = warp_max(own_gain), gain_sum = warp_sum(own_gain);
        if (tid == 0) {
            scalars[0] = max_gain;
            scalars[1] = gain_sum;
        }
    }
    __syncthreads();
    const float max_gain = scalars[0], gain_sum = scalars[1];
    if (!(max_gain > 0.0f) || !isfinite(gain_sum)) { // uniform
        if (tid < 32)
            erase_channel(p, sc, false, tid);
        return false;
    }
    bool factored = false, regularized = false;
    float load = 0.0f;
    for (int attempt = 0; attempt < 2 && !factored; ++attempt) {
        load = channel_load(p, sc, attempt, gain_sum, regularized);
        factored = invert_in_place<UP, kThreads>(
            a, work, U, load, kMinPivotRatio * (max_gain + load), tid, threads);
        __syncthreads(); // a failed attempt's reads are done before the next one writes
    }
    if (tid >= 32)
        return factored;
    if (!factored) {
        erase_channel(p, sc, regularized, tid);
        return false;
    }
    return publish_inverse<UP, kCodes>(
        p, sc, a, load, regularized, own_gain, max_gain, gain_sum, tid);
}

/*! chol/zf channel state of subcarrier sc by one warp of the fused kernel, as
 * finish_channel_block with A^-1 by invert_warp: a holds G on entry and A^-1 on success
 * (a failed attempt leaves G there for the retry under loading). Every lane of the warp
 * must call it; the other warps of the block wait at the caller's barrier. Returns
 * whether the channel is usable, on every lane.
 *
 * kSmallTile (tiles of fewer than 32 symbols, which the fused kernel has only for 16
 * users: one-warp blocks bound at 72 registers, the NR slot's): two passes per rotation,
 * and A^-1 goes to p.a from the registers (checked for non-finite entries there; an
 * erased subcarrier's kStatusBad keeps every reader off what it left in p.a) instead of
 * being read back from shared memory by publish_inverse. Larger tiles keep one pass and
 * the read-back: their kernels, bound at 64 registers, spilled more and slowed down. */
template <int UP, bool kSmallTile, bool kCodes = false>
__device__ __forceinline__ bool
finish_channel_warp(const PrepareArgs& p, int sc, float2 (*a)[UP + 1], int lane)
{
    const int U = p.num_users;
    const float own_gain = lane < U ? a[lane][lane].x : 0.0f;
    const float max_gain = warp_max(own_gain), gain_sum = warp_sum(own_gain);
    if (!(max_gain > 0.0f) || !isfinite(gain_sum)) {
        erase_channel(p, sc, false, lane);
        return false;
    }
    bool factored = false, regularized = false, all_finite = false;
    float load = 0.0f;
    auto store = [&](int i, int j, float2 x) { // (kSmallTile)
        p.a[static_cast<std::size_t>(sc) * U * U + i * U + j] = x;
    };
#pragma unroll 1
    for (int attempt = 0; attempt < 2 && !factored; ++attempt) {
        load = channel_load(p, sc, attempt, gain_sum, regularized);
        if constexpr (kSmallTile)
            factored = invert_warp<UP, 2>(a,
                                          U,
                                          load,
                                          max_gain + load,
                                          kMinPivotRatio * (max_gain + load),
                                          lane,
                                          store,
                                          &all_finite);
        else
            factored = invert_warp<UP>(
                a, U, load, max_gain + load, kMinPivotRatio * (max_gain + load), lane);
    }
    if (!factored) {
        erase_channel(p, sc, regularized, lane);
        return false;
    }
    if constexpr (kSmallTile)
        return publish_inverse<UP, kCodes>(p,
                                           sc,
                                           a,
                                           load,
                                           regularized,
                                           own_gain,
                                           max_gain,
                                           gain_sum,
                                           lane,
                                           true,
                                           all_finite);
    else
        return publish_inverse<UP, kCodes>(
            p, sc, a, load, regularized, own_gain, max_gain, gain_sum, lane);
}

} // namespace cuda
} // namespace mimodet

#endif
