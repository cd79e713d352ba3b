/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* BOX equalization on the GPU, mirroring lib/core/box/ (docs/box.md). The channel is
 * prepared by exact MMSE's prepare kernel (A^-1, rho, 1/lambda, status: the LMMSE start
 * and the LLRs' SINR) and box_prepare_kernel (G and the step tau). Detection: a block per
 * (subcarrier, tile of symbols) with H in shared memory; in each warp, groups of UP lanes
 * (UP = users rounded up to a power of two) take one symbol each, a lane per user. A lane
 * forms its user's matched filter from shared H, keeps its column of G (and of A^-1) in
 * registers, and reads the other users' iterate from its warp's slice of shared memory
 * (a warp barrier per iteration, no block barrier). */

#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include "cuda/mmse/demap.cuh"
#include "cuda/mmse/launch_helpers.h"
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace mimodet {
namespace cuda {

namespace {

constexpr int kPrepareThreads = 256;
constexpr int kDetectWarps = 8;
//! Symbols per block: H is staged once for them.
constexpr int kTileSymbols = 64;

//! Antenna rows of H staged per round of box_prepare_kernel (32 x 32 users: 8 KiB).
constexpr int kPrepareRows = 32;

/*! G = H^H H (full, [j][u] = G_ju) and tau = box_step or 1 / max_u sum_v |G_uv| per
 * subcarrier, as lib/core/box/box.cc's default_step. H is staged in shared memory
 * kPrepareRows antennas at a time (read from global memory once, coalesced); a thread
 * sums up to four entries of G (U^2 <= 1024 = 4 x 256 threads). */
__global__ void __launch_bounds__(kPrepareThreads) box_prepare_kernel(BoxPrepareArgs p)
{
    __shared__ float2 rows[kPrepareRows * 32];
    __shared__ float row_sum[32];
    constexpr int kSlots = 32 * 32 / kPrepareThreads;
    const int U = p.num_users, B = p.num_antennas, sc = blockIdx.x;
    const float2* h = p.h + static_cast<std::size_t>(sc) * B * U;
    float2 acc[kSlots];
#pragma unroll
    for (int k = 0; k < kSlots; ++k)
        acc[k] = make_float2(0.0f, 0.0f);
    for (int b0 = 0; b0 < B; b0 += kPrepareRows) {
        const int n = min(kPrepareRows, B - b0);
        __syncthreads(); // the previous round's reads are done
        for (int i = threadIdx.x; i < n * U; i += blockDim.x)
            rows[i] = h[static_cast<std::size_t>(b0) * U + i];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kSlots; ++k) {
            const int e = threadIdx.x + k * kPrepareThreads;
            if (e < U * U) {
                const int i = e / U, j = e % U;
                for (int b = 0; b < n; ++b)
                    acc[k] = cfmac(rows[b * U + i], rows[b * U + j], acc[k]); // conj(H_bi) H_bj
            }
        }
    }
    float2* g = p.gram + static_cast<std::size_t>(sc) * U * U;
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
        const int e = threadIdx.x + k * kPrepareThreads;
        if (e < U * U)
            g[e] = acc[k];
    }
    __syncthreads(); // G written (global writes are visible to the block after it)
    // Each row's sum in a fixed order: with atomics in shared memory the order, and so
    // the last bits of tau and every iterate, changed from run to run.
    if (threadIdx.x < U) {
        float sum = 0.0f;
        for (int j = 0; j < U; ++j)
            sum += sqrtf(cnorm(g[threadIdx.x * U + j]));
        row_sum[threadIdx.x] = sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float bound = 0.0f;
        for (int i = 0; i < U; ++i)
            bound = fmaxf(bound, row_sum[i]);
        float tau = p.box_step;
        if (!(tau > 0.0f))
            tau = bound > 0.0f && isfinite(bound) ? 1.0f / bound : 0.0f;
        p.step[sc] = tau;
    }
}

__device__ __forceinline__ float2 project(float2 z, float a_re, float a_im)
{
    return make_float2(fminf(fmaxf(z.x, -a_re), a_re), fminf(fmaxf(z.y, -a_im), a_im));
}

//! Per warp: the iterate of its lane groups, twice (one buffer written while the other
//! may still be read), in shared memory; a lane reads its group's as float4 pairs.
constexpr int kWarpVectorFloat2 = 2 * 32;

//! sum_j conj(column_j) v_j over the UP users of the lane's group, v read from `group_v`
//! (16-byte aligned), in four independent accumulators (the FMA chain of one would be
//! the iteration's latency). column_j = A_ju of a Hermitian A, so this is (A v)_user.
template <int UP, typename Column>
__device__ __forceinline__ float2 hermitian_apply(const Column& column, const float2* group_v)
{
    float2 acc[4] = { make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f),
                      make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f) };
#pragma unroll
    for (int j = 0; j < UP; j += 2) {
        const float4 v = *reinterpret_cast<const float4*>(group_v + j);
        acc[(j / 2) % 4] = cfmac(column(j), make_float2(v.x, v.y), acc[(j / 2) % 4]);
        acc[(j / 2 + 2) % 4] = cfmac(column(j + 1), make_float2(v.z, v.w), acc[(j / 2 + 2) % 4]);
    }
    return cadd(cadd(acc[0], acc[1]), cadd(acc[2], acc[3]));
}

template <int UP>
__global__ void __launch_bounds__(32 * kDetectWarps, UP >= 32 ? 1 : (UP >= 16 ? 3 : 4))
    box_detect_kernel(BoxDetectArgs p)
{
    extern __shared__ float4 smem[];
    const EqualizeArgs& e = p.eq;
    const int B = e.num_antennas, U = e.num_users, Q = e.demap.bits;
    const int nsc = e.num_subcarriers, sc = blockIdx.x;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    constexpr int kGroups = 32 / UP;
    const int group = lane / UP, user = lane % UP, first = group * UP;
    const bool active_user = user < U;
    float2* warp_v = reinterpret_cast<float2*>(smem) + warp * kWarpVectorFloat2;
    float2* sh_h = reinterpret_cast<float2*>(smem) + kDetectWarps * kWarpVectorFloat2; // [B][U]
    const float2* h = e.h + static_cast<std::size_t>(sc) * B * U;
    for (int i = threadIdx.x; i < B * U; i += blockDim.x)
        sh_h[i] = h[i];
    __syncthreads();

    const std::uint8_t status = e.status[sc];
    const bool bad_channel = (status & kStatusBad) != 0;
    const float clip = llr_clip_of(e, status & kStatusRegularized);
    const std::size_t u_index = static_cast<std::size_t>(sc) * U + user;
    const float rho = active_user ? e.rho[u_index] : 0.0f;
    const float inv_lambda = active_user ? e.inv_lambda[u_index] : 0.0f;
    const float tau = p.step[sc];
    const float2* g = p.gram + static_cast<std::size_t>(sc) * U * U;
    const float2* a_inv = e.a + static_cast<std::size_t>(sc) * U * U;
    // The lane's column of G (Hermitian: its conjugate is the user's row); zero past U,
    // where the iterate is zero too, so the products run over UP with no test.
    float2 g_column[UP];
#pragma unroll
    for (int j = 0; j < UP; ++j)
        g_column[j] = (active_user && j < U) ? __ldg(g + j * U + user) : make_float2(0.0f, 0.0f);
    const float g_uu = active_user ? __ldg(g + user * U + user).x : 0.0f;
    const bool y_pairs = B % 2 == 0 && reinterpret_cast<std::uintptr_t>(e.y) % 16 == 0;
    // Lanes past U read user 0's column of H (their products are dropped): every read
    // stays inside H, with no divergence in the loop.
    const float2* h_column = sh_h + (active_user ? user : 0);

    const std::size_t first_symbol = static_cast<std::size_t>(blockIdx.y) * kTileSymbols;
    const int count = static_cast<int>(
        min(static_cast<std::size_t>(kTileSymbols), e.num_symbols - first_symbol));
    for (int base = warp * kGroups; base < count; base += kDetectWarps * kGroups) {
        const int k = base + group;
        const bool valid = k < count; // warp-uniform loop; lanes past the tile idle along
        const std::size_t s = first_symbol + (valid ? k : 0);
        const std::size_t item = s * nsc + sc;
        const float2* y = e.y + item * B;
        // y_mf = H^H y for the lane's user; every lane of the group reads all of y (the
        // same addresses: broadcast), so each knows whether it is finite.
        float2 acc[4] = { make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f),
                          make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f) };
        bool finite = true;
        if (valid && y_pairs) {
            const float4* y2 = reinterpret_cast<const float4*>(y);
#pragma unroll 4
            for (int b = 0; b < B; b += 2) {
                const float4 v = __ldg(y2 + b / 2);
                const float2 v0 = make_float2(v.x, v.y), v1 = make_float2(v.z, v.w);
                finite = finite && cfinite(v0) && cfinite(v1);
                const int a = (b / 2) % 2;
                acc[a] = cfmac(h_column[b * U], v0, acc[a]);
                acc[a + 2] = cfmac(h_column[(b + 1) * U], v1, acc[a + 2]);
            }
        } else if (valid) {
            for (int b = 0; b < B; ++b) {
                const float2 v = __ldg(y + b);
                finite = finite && cfinite(v);
                acc[b % 4] = cfmac(h_column[b * U], v, acc[b % 4]);
            }
        }
        float2 y_mf = cadd(cadd(acc[0], acc[1]), cadd(acc[2], acc[3]));
        if (!finite || bad_channel || !active_user)
            y_mf = make_float2(0.0f, 0.0f); // keeps NaN out of the other lanes' products
        float2 x = make_float2(0.0f, 0.0f);
        if (p.start == static_cast<int>(BoxStartKind::lmmse)) {
            warp_v[lane] = y_mf;
            __syncwarp();
            x = cscale(hermitian_apply<UP>(
                           [&](int j) {
                               // a bad channel's A^-1 is never formed (its LLRs are 0)
                               return (active_user && !bad_channel && j < U)
                                          ? __ldg(a_inv + j * U + user)
                                          : make_float2(0.0f, 0.0f);
                           },
                           warp_v + first),
                       inv_lambda);
            __syncwarp(); // the buffer is written again by the first iteration
        } else if (p.start == static_cast<int>(BoxStartKind::mf)) {
            x = g_uu > 0.0f ? cscale(y_mf, 1.0f / g_uu) : make_float2(0.0f, 0.0f);
        }
        x = project(x, p.bound_re, p.bound_im);
        float2 previous = x;
        for (int it = 0; it < e.iterations; ++it) {
            const float beta = p.momentum ? __ldg(p.momentum + it) : 0.0f;
            const float2 v = make_float2(x.x + beta * (x.x - previous.x),
                                         x.y + beta * (x.y - previous.y));
            previous = x;
            float2* buffer = warp_v + (it & 1) * 32;
            buffer[lane] = active_user ? v : make_float2(0.0f, 0.0f);
            __syncwarp();
            const float2 gv =
                hermitian_apply<UP>([&](int j) { return g_column[j]; }, buffer + first);
            x = project(make_float2(v.x - tau * (gv.x - y_mf.x), v.y - tau * (gv.y - y_mf.y)),
                        p.bound_re, p.bound_im);
        }
        __syncwarp(); // the next symbol's start overwrites buffer 0
        if (!valid || !active_user)
            continue;
        float* llr = e.llr + item * U * static_cast<std::size_t>(Q) + user * Q;
        if (!finite || bad_channel) {
            if (!finite && user == 0)
                atomicAdd(e.bad_sample_count, 1ull);
            for (int i = 0; i < Q; ++i)
                llr[i] = 0.0f;
            if (e.x_hat)
                e.x_hat[item * U + user] = make_float2(0.0f, 0.0f);
            continue;
        }
        // A user without a channel (1/lambda = 0, rho = 0) demaps to 0, as on the CPU.
        const float keep = inv_lambda > 0.0f ? 1.0f : 0.0f;
        write_llrs(e, x, keep, rho, clip, llr);
        if (e.x_hat)
            e.x_hat[item * U + user] = cscale(x, keep);
    }
}

} // namespace

void launch_prepare_box(const BoxPrepareArgs& args, cudaStream_t stream)
{
    if (args.num_subcarriers == 0)
        return;
    box_prepare_kernel<<<args.num_subcarriers, kPrepareThreads, 0, stream>>>(args);
    MIMODET_CUDA_CHECK_LAUNCH("box_prepare_kernel");
}

void launch_detect_box(const BoxDetectArgs& args, cudaStream_t stream)
{
    const EqualizeArgs& e = args.eq;
    if (e.num_symbols == 0 || e.num_subcarriers == 0)
        return;
    const std::size_t tiles = (e.num_symbols + kTileSymbols - 1) / kTileSymbols;
    if (tiles > 65535)
        throw std::invalid_argument("launch_detect_box: more than " +
                                    std::to_string(65535 * kTileSymbols) +
                                    " symbols in one call");
    const dim3 grid(static_cast<unsigned>(e.num_subcarriers), static_cast<unsigned>(tiles));
    const std::size_t smem = box_detect_shared_bytes(e.num_antennas, e.num_users);
    with_user_tile(e.num_users, [&](auto up) {
        box_detect_kernel<decltype(up)::value>
            <<<grid, 32 * kDetectWarps, smem, stream>>>(args);
    });
    MIMODET_CUDA_CHECK_LAUNCH("box_detect_kernel");
}

std::size_t box_detect_shared_bytes(int num_antennas, int num_users)
{
    return sizeof(float2) * (kDetectWarps * kWarpVectorFloat2 +
                             static_cast<std::size_t>(num_antennas) * num_users);
}

void configure_box_kernels(int optin)
{
    // H of a subcarrier in shared memory, up to kMaxAntennas x kMaxUsers (64 KiB), and
    // the warps' iterates.
    const int need = static_cast<int>(sizeof(float2) * (256 * 32 + kDetectWarps * kWarpVectorFloat2));
    const int limit = need < optin ? need : optin;
    for (const void* kernel : { reinterpret_cast<const void*>(box_detect_kernel<4>),
                                reinterpret_cast<const void*>(box_detect_kernel<8>),
                                reinterpret_cast<const void*>(box_detect_kernel<16>),
                                reinterpret_cast<const void*>(box_detect_kernel<32>) })
        MIMODET_CUDA_CHECK(cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
}

} // namespace cuda
} // namespace mimodet
