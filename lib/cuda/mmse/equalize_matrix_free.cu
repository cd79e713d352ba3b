/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The matrix-free CG/CR kernel and its launch (launch_equalize_matrix_free, kernels.h): a
 * warp per subcarrier iterates from H alone, applying A v = H^H (H v) + N0 v, for calls
 * of so few symbols per channel that forming A would cost more (broumas2023's
 * single-symbol systems); the iterations are those of cg_cr.cuh (li2015 Algorithm 1,
 * broumas2023 Figure 4), the gains li2015's approximate ones (channel_state.cuh). */

#include "cg_cr.cuh"
#include "channel_state.cuh"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include "demap.cuh"
#include "device_helpers.cuh"
#include "launch_helpers.h"
#include <type_traits>
#include <algorithm>
#include <cstddef>
#include <stdexcept>

namespace mimodet {
namespace cuda {

namespace {

/* CG/CR from H alone (launch_equalize_matrix_free): a warp per subcarrier stages H in
 * shared memory once and runs every symbol of the call on it, applying
 * A v = H^H (H v) + N0 v in each iteration. The per-user gains come from the column norms
 * of H by the prepare kernel's rules. Lanes: 32/UP groups of UP lanes (lane = group * UP
 * + user) split the antennas of each H^H product; in H v, lane b takes antennas b,
 * b + 32, ... */
constexpr int kMatrixFreeWarps = 4;
//! Per-block shared memory of the matrix-free kernel: the default limit, no opt-in.
constexpr std::size_t kMatrixFreeSmemLimit = 48 * 1024;

//! One warp's shared memory: H [B][UP + 1], a vector over the antennas [B] (y, then
//! H v) and one over the users [UP].
__host__ __device__ constexpr std::size_t matrix_free_warp_items(int up, int antennas)
{
    return static_cast<std::size_t>(antennas) * (up + 1) + antennas + up;
}

/*! max_{j != u} |G_uj|^2 / (G_jj + N0') for this lane's user u (lane = group * UP + u),
 * from H in shared memory (hs, [B][UP + 1]): the pairwise bound's share (channel_state.cuh,
 * approximate_gains) on a loaded channel. Every lane of the warp calls it. Not inlined:
 * the kernel's common path keeps its registers (inlined, a 32x32 CR call of 128
 * subcarriers took 7% longer on an H100). */
template <int UP>
__device__ __noinline__ float
strongest_partner(const float2* hs, int B, int U, float own_gain, float n0_eff)
{
    constexpr int kGroups = 32 / UP;
    const int lane = threadIdx.x % 32, group = lane / UP, user = lane % UP;
    float captured = 0.0f;
    for (int j = 0; j < U; ++j) {
        float2 g_uj = make_float2(0.0f, 0.0f);
        if (user < U)
            for (int b = group; b < B; b += kGroups)
                g_uj = cfmac(hs[b * (UP + 1) + user], hs[b * (UP + 1) + j], g_uj);
#pragma unroll
        for (int off = UP; off < 32; off <<= 1)
            g_uj = cadd(g_uj, shfl_xor(g_uj, off));
        const float g_jj = __shfl_sync(0xffffffffu, own_gain, j); // lane j: user j
        if (j != user)
            captured = fmaxf(captured, cnorm(g_uj) / (g_jj + n0_eff));
    }
    return captured;
}

template <int UP>
__global__ void __launch_bounds__(32 * kMatrixFreeWarps)
    equalize_matrix_free_kernel(EqualizeArgs p)
{
    extern __shared__ float4 matrix_free_smem[]; // float4: 16-byte alignment
    const int B = p.num_antennas, U = p.num_users, Q = p.demap.bits;
    const int nsc = p.num_subcarriers;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int group = lane / UP, user = lane % UP;
    constexpr int kGroups = 32 / UP;
    const int sc = blockIdx.x * (blockDim.x / 32) + warp;
    if (sc >= nsc)
        return; // uniform per warp; no block-wide barrier follows
    float2* hs = reinterpret_cast<float2*>(matrix_free_smem) +
                 warp * matrix_free_warp_items(UP, B); // [B][UP + 1]
    float2* bs = hs + B * (UP + 1);                    // [B]
    float2* us = bs + B;                               // [UP]
    const float2* h = p.h + static_cast<std::size_t>(sc) * B * U;
    for (int idx = lane; idx < B * UP; idx += 32) {
        const int b = idx / UP, u = idx % UP;
        const bool valid = u < U;
        copy_async8(hs + b * (UP + 1) + u, valid ? h + b * U + u : h, valid);
    }
    copy_async_commit();
    copy_async_wait<0>();
    __syncwarp();

    const bool active = user < U;
    // Sums over the antennas for this lane's user: each group takes every kGroups-th
    // antenna, then butterflies give every group the total.
    auto over_antennas = [&](auto term, auto zero) {
        auto acc = zero;
        if (active)
            for (int b = group; b < B; b += kGroups)
                acc = term(b, acc);
#pragma unroll
        for (int off = UP; off < 32; off <<= 1) {
            if constexpr (std::is_same_v<decltype(acc), float2>)
                acc = cadd(acc, shfl_xor(acc, off));
            else
                acc += __shfl_xor_sync(0xffffffffu, acc, off);
        }
        return acc;
    };
    auto h_at = [&](int b, int u) { return hs[b * (UP + 1) + u]; };
    const float own_gain =
        over_antennas([&](int b, float acc) { return acc + cnorm(h_at(b, user)); }, 0.0f);
    const float max_gain = warp_max(own_gain), gain_sum = warp_sum(own_gain);
    const bool bad_channel = !(max_gain > 0.0f) || !isfinite(gain_sum);
    // N0 = 0 or tiny: load, as the prepare kernel does (channel_state.cuh); the pairwise
    // bound then needs this user's row of G, formed only for such channels.
    const float load = iterative_load(p.n0, gain_sum / kGroups, U); // each group summed
    const float n0_eff = p.n0 + load;
    const float captured = load > 0.0f && !bad_channel // uniform per warp
                               ? strongest_partner<UP>(hs, B, U, own_gain, n0_eff)
                               : 0.0f;
    float rho = 0.0f, inv_lambda = 0.0f;
    const bool unusable = approximate_gains(
        own_gain, max_gain, active, n0_eff, load > 0.0f, captured, rho, inv_lambda);
    // The channel's status into the statistics, by the prepare kernel's rules
    // (finish_channel_iterative), where the engine asks: once per channel.
    const unsigned unusable_mask = __ballot_sync(0xffffffffu, unusable && group == 0);
    if (p.channel_counts && lane == 0) {
        if (bad_channel)
            atomicAdd(p.channel_counts + kChannelCountBad, 1ull);
        else if (load > 0.0f)
            atomicAdd(p.channel_counts + kChannelCountRegularized, 1ull);
        if (!bad_channel && unusable_mask)
            atomicAdd(p.channel_counts + kChannelCountUnusableUsers,
                      static_cast<unsigned long long>(__popc(unusable_mask)));
    }

    // A v for this lane's user; v spread over the lanes of every group alike.
    auto apply = [&](float2 v) {
        __syncwarp(); // earlier reads of us and bs are done
        if (group == 0)
            us[user] = v;
        __syncwarp();
        for (int b = lane; b < B; b += 32) {
            float2 t = make_float2(0.0f, 0.0f);
            for (int u = 0; u < U; ++u)
                t = cfma(h_at(b, u), us[u], t);
            bs[b] = t;
        }
        __syncwarp();
        const float2 hh = over_antennas(
            [&](int b, float2 acc) { return cfmac(h_at(b, user), bs[b], acc); },
            make_float2(0.0f, 0.0f));
        return active ? cadd(hh, cscale(v, n0_eff)) : make_float2(0.0f, 0.0f);
    };

    for (std::size_t s = 0; s < p.num_symbols; ++s) {
        const std::size_t item = s * nsc + sc;
        const float2* y = p.y + item * B;
        float* llr = p.llr + item * U * static_cast<std::size_t>(Q);
        __syncwarp(); // the previous symbol's reads of bs are done
        bool finite = true;
        for (int b = lane; b < B; b += 32) {
            const float2 v = y[b];
            finite = finite && cfinite(v);
            bs[b] = v;
        }
        // NaN/Inf in y (counted), or no usable channel: this (symbol, subcarrier) is
        // erased.
        const bool y_finite = __all_sync(0xffffffffu, finite);
        if (!y_finite || bad_channel) {
            erase_item(p, item, lane, !y_finite);
            continue;
        }
        __syncwarp();
        const float2 y_mf = over_antennas(
            [&](int b, float2 acc) { return cfmac(h_at(b, user), bs[b], acc); },
            make_float2(0.0f, 0.0f));
        const float2 x = iterate<UP>(p.mode, p.iterations, y_mf, apply);
        if (group == 0 && active) {
            write_llrs(
                p, x, inv_lambda, rho, llr_clip_of(p, load > 0.0f), llr + user * Q);
            if (p.x_hat)
                p.x_hat[item * U + user] = x;
        }
    }
}

} // namespace

template <int UP>
void launch_matrix_free_for(const EqualizeArgs& args, cudaStream_t stream)
{
    const std::size_t per_warp =
        sizeof(float2) * matrix_free_warp_items(UP, args.num_antennas);
    const int warps = static_cast<int>(std::max<std::size_t>(
        1, std::min<std::size_t>(kMatrixFreeWarps, kMatrixFreeSmemLimit / per_warp)));
    const unsigned blocks =
        static_cast<unsigned>((args.num_subcarriers + warps - 1) / warps);
    equalize_matrix_free_kernel<UP>
        <<<blocks, 32 * warps, warps * per_warp, stream>>>(args);
}

bool matrix_free_supported(int num_antennas, int num_users)
{
    return sizeof(float2) *
               matrix_free_warp_items(round_up_users(num_users), num_antennas) <=
           kMatrixFreeSmemLimit;
}

/* Forming A costs B U^2 complex products per subcarrier; applying H and H^H costs 2 B U
 * per product with A, of which CR makes iterations + 1 per symbol (CG makes iterations;
 * counted as iterations + 1 too, which errs towards forming A). */
bool matrix_free_pays(int num_users, int iterations, std::size_t symbols)
{
    // symbols * per_symbol < U, without overflow for any count of symbols.
    const std::size_t per_symbol = 2 * (static_cast<std::size_t>(iterations) + 1);
    return symbols < (static_cast<std::size_t>(num_users) + per_symbol - 1) / per_symbol;
}

void launch_equalize_matrix_free(const EqualizeArgs& args, cudaStream_t stream)
{
    if (args.mode != KernelMode::cg && args.mode != KernelMode::cr)
        throw std::logic_error("launch_equalize_matrix_free: cg or cr only");
    if (!matrix_free_supported(args.num_antennas, args.num_users))
        throw std::logic_error("launch_equalize_matrix_free: H does not fit a warp");
    if (args.num_symbols == 0 || args.num_subcarriers == 0)
        return;
    with_user_tile(args.num_users, [&](auto up) {
        launch_matrix_free_for<decltype(up)::value>(args, stream);
    });
    MIMODET_CUDA_CHECK_LAUNCH("equalize_matrix_free_kernel");
}

} // namespace cuda
} // namespace mimodet
