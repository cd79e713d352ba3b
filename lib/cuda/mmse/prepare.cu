/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The prepare kernel and its launch: per subcarrier, G = H^H H and the channel state of
 * channel_state.cuh (cg/cr: A = G + N0 I and li2015's approximate gains; chol/zf: A^-1 by
 * Gauss-Jordan on the whole block, the per-user gains and the status). */

#include "channel_state.cuh"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include "device_helpers.cuh"
#include "launch_helpers.h"
#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

namespace mimodet {
namespace cuda {

namespace {

/* Per-channel preparation: a block of up to four (six for U > 16) warps per subcarrier,
 * each warp taking every warps-th chunk of 32 antennas. Partial Gram matrices are
 * register-tiled over the lanes and summed in a fixed order. cg/cr keep A = G + N0 I;
 * chol/zf invert A = G + load I on the whole block by Gauss-Jordan elimination
 * (finish_channel_block, as the fused kernel). */

//! Antennas of H staged in shared memory at a time.
constexpr int kPrepareChunk = 32;

//! Most warps per subcarrier; U > 16 takes six, as many as fit in 64 KiB of shared memory
//! (the opt-in limit of sm_75): li2015's 256x32 has 128 subcarriers, a block per SM,
//! whose warps are all the SM has to hide the latencies of the Gram sums and the
//! inversion.
__host__ __device__ constexpr int max_prepare_warps(int up) { return up >= 32 ? 6 : 4; }


template <int UP>
union PrepareWarpSmem {
    float2 h[kPrepareChunk][UP + 1]; //!< a chunk of H
    float2 g[UP][UP + 1]; //!< then the warp's partial G; the first warp's: scratch after
};

template <int UP>
struct PrepareBlockSmem {
    float2 g[UP][UP + 1]; //!< G = H^H H, the warps' parts summed; then A or A^-1
    float scalars[2];     //!< chol/zf: the gains, from the first warp to the block
};

template <int UP>
std::size_t prepare_shared_bytes(int warps)
{
    return sizeof(PrepareBlockSmem<UP>) + sizeof(PrepareWarpSmem<UP>) * warps;
}

/*! Stages rows [0, rows) of a rows x U row-major matrix into dst[kPrepareChunk][UP + 1],
 * zero-filling the users past U and the rows past `rows`. Loads are issued a batch at a
 * time before any store so that their latencies overlap. */
template <int UP>
__device__ __forceinline__ void stage_h_chunk(
    float2 (*dst)[UP + 1], const float2* __restrict__ src, int rows, int U, int lane)
{
    constexpr int kPerLane = kPrepareChunk * UP / 32;
    constexpr int kBatch = kPerLane < 16 ? kPerLane : 16;
#pragma unroll
    for (int t0 = 0; t0 < kPerLane; t0 += kBatch) {
        float2 v[kBatch];
#pragma unroll
        for (int t = 0; t < kBatch; ++t) {
            const int idx = lane + 32 * (t0 + t), r = idx / UP, c = idx % UP;
            v[t] = (r < rows && c < U) ? __ldg(src + r * U + c) : make_float2(0.0f, 0.0f);
        }
#pragma unroll
        for (int t = 0; t < kBatch; ++t) {
            const int idx = lane + 32 * (t0 + t);
            dst[idx / UP][idx % UP] = v[t];
        }
    }
}

template <int UP, bool kIterative>
__global__ void __launch_bounds__(32 * max_prepare_warps(UP), UP >= 32 ? 1 : 4)
    prepare_kernel(PrepareArgs p)
{
    extern __shared__ float4 prepare_smem[]; // float4: 16-byte alignment
    PrepareBlockSmem<UP>& blk = *reinterpret_cast<PrepareBlockSmem<UP>*>(prepare_smem);
    PrepareWarpSmem<UP>* warp_smem = reinterpret_cast<PrepareWarpSmem<UP>*>(
        reinterpret_cast<char*>(prepare_smem) + sizeof(PrepareBlockSmem<UP>));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    PrepareWarpSmem<UP>& sm = warp_smem[warp];
    const int sc = blockIdx.x;
    const int B = p.num_antennas, U = p.num_users;
    const int chunks = (B + kPrepareChunk - 1) / kPrepareChunk;
    const float2* h = p.h + static_cast<std::size_t>(sc) * B * U;

    // Partial G = H^H H over this warp's chunks: lane (rg, cg) accumulates rows rg*TR..
    // and columns cg*TC.., reading TR + TC values of H per TR*TC products. A non-finite
    // entry of H makes its user's G_uu non-finite, caught when the channel is finished.
    {
        constexpr int TR = UP / 8, TC = UP / 4;
        const int rg = lane / 4, cg = lane % 4;
        float2 acc[TR][TC];
#pragma unroll
        for (int r = 0; r < TR; ++r)
#pragma unroll
            for (int c = 0; c < TC; ++c)
                acc[r][c] = make_float2(0.0f, 0.0f);
        for (int chunk = warp; chunk < chunks; chunk += warps) {
            const int b0 = chunk * kPrepareChunk, rows = min(kPrepareChunk, B - b0);
            __syncwarp();
            stage_h_chunk<UP>(sm.h, h + b0 * U, rows, U, lane);
            __syncwarp();
            for (int b = 0; b < rows; ++b) {
                float2 hi[TR], hj[TC];
#pragma unroll
                for (int r = 0; r < TR; ++r)
                    hi[r] = sm.h[b][rg * TR + r];
#pragma unroll
                for (int c = 0; c < TC; ++c)
                    hj[c] = sm.h[b][cg * TC + c];
#pragma unroll
                for (int r = 0; r < TR; ++r)
#pragma unroll
                    for (int c = 0; c < TC; ++c)
                        acc[r][c] = cfmac(hi[r], hj[c], acc[r][c]);
            }
        }
        __syncwarp(); // the partial G takes the place of the last chunk
#pragma unroll
        for (int r = 0; r < TR; ++r)
#pragma unroll
            for (int c = 0; c < TC; ++c)
                sm.g[rg * TR + r][cg * TC + c] = acc[r][c];
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < UP * UP; idx += blockDim.x) {
        const int i = idx / UP, j = idx % UP;
        float2 sum = warp_smem[0].g[i][j];
        for (int w = 1; w < warps; ++w) // a fixed order: deterministic
            sum = cadd(sum, warp_smem[w].g[i][j]);
        blk.g[i][j] = sum;
    }
    __syncthreads();
    if constexpr (kIterative) {
        if (warp == 0)
            finish_channel_iterative<UP>(p, sc, blk.g, lane);
    } else {
        // chol/zf: A^-1 by Gauss-Jordan on the whole block, in blk.g, with the first
        // warp's partial G (summed now) as the pivot scratch. One warp's Cholesky and two
        // triangular solves per column instead were slower: long dependent chains while
        // the other warps waited.
        finish_channel_block<UP>(
            p, sc, blk.g, &warp_smem[0].g[0][0], blk.scalars, threadIdx.x, blockDim.x);
    }
}

} // namespace

/*! Warps per subcarrier. The kernel is latency-bound: a block's time grows with the
 * chunks each warp takes (plus about one chunk's worth for the factorization), and a
 * partial wave of blocks costs a whole block time. So the choice minimizes waves x (1 +
 * chunks per warp), with the blocks per SM from the occupancy calculator; ties go to
 * more warps. (It picked the fastest of 1, 2 and 4 warps where it was checked, with the
 * one-warp Cholesky that chol/zf had then; not rechecked since.) */
template <int UP>
int choose_prepare_warps(const PrepareArgs& args)
{
    const bool iterative = args.mode == KernelMode::cg || args.mode == KernelMode::cr;
    const void* kernel = iterative
                             ? reinterpret_cast<const void*>(prepare_kernel<UP, true>)
                             : reinterpret_cast<const void*>(prepare_kernel<UP, false>);
    const int chunks = (args.num_antennas + kPrepareChunk - 1) / kPrepareChunk;
    int best = 1;
    long long best_cost = std::numeric_limits<long long>::max();
    for (int warps = std::min(chunks, max_prepare_warps(UP)); warps >= 1; --warps) {
        const long long slots =
            resident_blocks(kernel, 32 * warps, prepare_shared_bytes<UP>(warps));
        if (slots < 1)
            continue;
        const long long cost =
            waves(args.num_subcarriers, slots) * (1 + (chunks + warps - 1) / warps);
        if (cost < best_cost) {
            best = warps;
            best_cost = cost;
        }
    }
    return best;
}

template <int UP>
void launch_prepare_for(const PrepareArgs& args, cudaStream_t stream)
{
    const int warps = choose_prepare_warps<UP>(args);
    const std::size_t smem = prepare_shared_bytes<UP>(warps);
    const unsigned blocks = static_cast<unsigned>(args.num_subcarriers);
    if (args.mode == KernelMode::cg || args.mode == KernelMode::cr)
        prepare_kernel<UP, true><<<blocks, 32 * warps, smem, stream>>>(args);
    else
        prepare_kernel<UP, false><<<blocks, 32 * warps, smem, stream>>>(args);
}

void launch_prepare(const PrepareArgs& args, cudaStream_t stream)
{
    if (args.num_subcarriers == 0)
        return;
    if (args.num_users <= 8)
        launch_prepare_for<8>(args, stream);
    else if (args.num_users <= 16)
        launch_prepare_for<16>(args, stream);
    else
        launch_prepare_for<32>(args, stream);
    MIMODET_CUDA_CHECK_LAUNCH("prepare_kernel");
}

void configure_prepare_kernels(int optin)
{
    // Only the prepare kernel for U > 16 needs more than the default 48 KiB.
    const std::size_t need = prepare_shared_bytes<32>(max_prepare_warps(32));
    if (need > static_cast<std::size_t>(optin))
        throw std::runtime_error("the prepare kernel for U > 16 needs " +
                                 std::to_string(need) +
                                 " bytes of shared memory per block; this GPU allows " +
                                 std::to_string(optin));
    for (const void* kernel : { reinterpret_cast<const void*>(prepare_kernel<32, false>),
                                reinterpret_cast<const void*>(prepare_kernel<32, true>) })
        MIMODET_CUDA_CHECK(cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(need)));
}

} // namespace cuda
} // namespace mimodet
