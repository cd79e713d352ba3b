/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The direct equalize kernel and its launch: a warp per (subcarrier, symbol), for calls
 * of one or two symbols per subcarrier on a prepared channel; chol/zf multiply H^H y by
 * A^-1, cg/cr run the iterations of cg_cr.cuh with A, and the LLRs follow (demap.cuh). */

#include "cg_cr.cuh"
#include "cuda/kernels.h"
#include "demap.cuh"
#include "launch_helpers.h"
#include <cstddef>
#include <stdexcept>

namespace mimodet {
namespace cuda {

namespace {

//! Warps per block of the direct equalize kernel.
constexpr int kMaxWarpsPerBlock = 8;

/*! A warp per (subcarrier, symbol), for calls of one or two symbols per subcarrier: the
 * matrices are read straight from global memory (staging them would serve one symbol).
 * UP = users rounded up to a power of two; the 32 lanes form 32/UP groups of UP lanes
 * (lane = group * UP + user) that split the antennas of H^H y between them, so every lane
 * works even when U < 32. */
template <int UP>
__global__ void __launch_bounds__(32 * kMaxWarpsPerBlock)
    equalize_direct_kernel(EqualizeArgs p)
{
    extern __shared__ float2 smem[];
    const int B = p.num_antennas, U = p.num_users, Q = p.demap.bits;
    const int nsc = p.num_subcarriers;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    const int group = lane / UP, user = lane % UP;
    constexpr int kGroups = 32 / UP;

    const std::size_t pair = static_cast<std::size_t>(blockIdx.x) * warps + warp;
    if (pair >= p.num_symbols * nsc)
        return;
    const int sc = static_cast<int>(pair % nsc); // neighbouring warps: neighbouring y
    const std::size_t s = pair / nsc;
    const float2* h = p.h + static_cast<std::size_t>(sc) * B * U;
    const float2* a = p.a + static_cast<std::size_t>(sc) * U * U;
    float2* ybuf = smem + warp * B;
    float* llr = p.llr + ((s * nsc + sc) * U) * static_cast<std::size_t>(Q);
    float2* x_hat = p.x_hat ? p.x_hat + (s * nsc + sc) * U : nullptr;

    const float2* ys = p.y + (s * nsc + sc) * B;
    bool finite = true;
    for (int b = lane; b < B; b += 32) {
        const float2 v = ys[b];
        finite = finite && cfinite(v);
        ybuf[b] = v;
    }
    // NaN/Inf in y (counted), or no usable channel: this (symbol, subcarrier) is erased.
    const bool y_finite = __all_sync(0xffffffffu, finite);
    const std::uint8_t status = p.status[sc];
    if (!y_finite || (status & kStatusBad)) {
        erase_item(p, s * nsc + sc, lane, !y_finite);
        return;
    }
    __syncwarp();
    const bool active = user < U;
    // y_MF = H^H y: each lane group takes every kGroups-th antenna, then the groups are
    // summed with butterflies.
    float2 acc = make_float2(0.0f, 0.0f);
    if (active)
        for (int b = group; b < B; b += kGroups)
            acc = cfmac(h[b * U + user], ybuf[b], acc);
#pragma unroll
    for (int off = UP; off < 32; off <<= 1)
        acc = cadd(acc, shfl_xor(acc, off));
    // The lane's column of A^-1 (chol/zf: x = A^-1 y_MF) or of A (cg/cr: the iterations,
    // run by every group on its own copy: no divergence, no sync) goes to registers once:
    // re-reading it per product left it to the caches, which do not hold 8 warps' A each.
    float2 a_column[UP];
#pragma unroll
    for (int j = 0; j < UP; ++j)
        a_column[j] =
            (active && j < U) ? __ldg(a + j * U + user) : make_float2(0.0f, 0.0f);
    auto apply = [&](float2 v) {
        return hermitian_times<UP, true>(
            [&](int j) { return a_column[j]; }, v, U, lane - user);
    };
    const bool iterative = p.mode == KernelMode::cg || p.mode == KernelMode::cr;
    const float2 x =
        iterative ? iterate<UP>(p.mode, p.iterations, acc, apply) : apply(acc);
    if (group == 0 && active) {
        write_llrs(p,
                   x,
                   p.inv_lambda[sc * U + user],
                   p.rho[sc * U + user],
                   llr_clip_of(p, status & kStatusRegularized),
                   llr + user * Q);
        if (x_hat)
            x_hat[user] = x;
    }
}

template <int UP>
void launch_direct_for(const EqualizeArgs& args, cudaStream_t stream)
{
    const std::size_t pairs = args.num_symbols * args.num_subcarriers;
    const std::size_t blocks = (pairs + kMaxWarpsPerBlock - 1) / kMaxWarpsPerBlock;
    if (blocks > 0x7fffffffu)
        throw std::invalid_argument("launch_equalize: too many symbols in one call");
    const std::size_t smem = sizeof(float2) * kMaxWarpsPerBlock * args.num_antennas;
    equalize_direct_kernel<UP>
        <<<static_cast<unsigned>(blocks), 32 * kMaxWarpsPerBlock, smem, stream>>>(args);
}

} // namespace

void launch_equalize_direct(const EqualizeArgs& args, cudaStream_t stream)
{
    with_user_tile(args.num_users, [&](auto up) {
        launch_direct_for<decltype(up)::value>(args, stream);
    });
}

} // namespace cuda
} // namespace mimodet
