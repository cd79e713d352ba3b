/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cuda_check.h"
#include "kernels.h"
#include <type_traits>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace mimodet {
namespace cuda {

namespace {

// The same numerical rules as the CPU detector (lib/core/cpu_detector.cc).
constexpr float kMaxSinr = 1e7f;
constexpr float kLoading = 1e-5f;
constexpr float kMinPivotRatio = 1e-6f;
constexpr float kMinUserGain = 1e-6f;

//! Warps per block of the direct equalize kernel.
constexpr int kMaxWarpsPerBlock = 8;

//! Blocks of `kernel` that fit on the whole current GPU at once.
long long resident_blocks(const void* kernel, int threads, std::size_t smem)
{
    int device = 0, sms = 0, per_sm = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    MIMODET_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    return static_cast<long long>(per_sm) * sms;
}

//! Rounds of `blocks` blocks when `slots` fit at once (a partial round costs a whole
//! one).
long long waves(long long blocks, long long slots)
{
    return slots > 0 ? (blocks + slots - 1) / slots
                     : std::numeric_limits<long long>::max();
}

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

/*! cg/cr per-user gains from G_uu (li2015 II-C: rho ~ G_uu / N0, lambda = rho / (1 +
 * rho)); a user far weaker than the strongest (max_gain) is erased (rho = 1/lambda = 0).
 * Returns true when the lane holds a user and that user is erased. */
__device__ __forceinline__ bool approximate_gains(float own_gain,
                                                  float max_gain,
                                                  bool user_lane,
                                                  float n0,
                                                  float& rho,
                                                  float& inv_lambda)
{
    const bool usable = user_lane && own_gain > kMinUserGain * max_gain;
    const float r = n0 > 0.0f ? fminf(own_gain / n0, kMaxSinr) : kMaxSinr;
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
 * largest. Returns whether the channel is usable (not erased), on every lane. */
template <int UP>
__device__ __forceinline__ bool publish_inverse(const PrepareArgs& p,
                                                int sc,
                                                const float2 (*g)[UP + 1],
                                                float load,
                                                bool regularized,
                                                float own_gain,
                                                float max_gain,
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
    // before squaring, as the CPU's W = A^-1 H^H does. A rare path: H is read again, from
    // L2.
    float zf_noise_gain = inv_diag;
    if (p.mode == KernelMode::zf && load > 0.0f && user_lane) {
        const int B = p.num_antennas;
        const float2* h = p.h + static_cast<std::size_t>(sc) * B * U;
        float q = 0.0f;
        for (int b = 0; b < B; ++b) {
            float2 t = make_float2(0.0f, 0.0f);
            for (int j = 0; j < U; ++j)
                t = cfma(__ldg(h + b * U + j), conj2(g[lane][j]), t);
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
        if (usable && zf) {
            const float noise = p.n0 * zf_noise_gain;
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

//! The diagonal loading of attempt 0 (chol: N0; zf: none) or 1 (plus a small multiple
//! of the mean gain, when the first failed), as on the CPU.
__device__ __forceinline__ float
channel_load(const PrepareArgs& p, int attempt, float gain_sum)
{
    return (p.mode == KernelMode::chol ? p.n0 : 0.0f) +
           (attempt ? kLoading * gain_sum / p.num_users : 0.0f);
}

/*! cg/cr channel state of subcarrier sc by one warp, from G = H^H H (g, full Hermitian,
 * in shared memory): A = G + N0 I into p.a and into g, li2015's approximate per-user
 * gains, the status and the unusable count. A subcarrier without a usable channel gets
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
    __syncwarp(); // every lane has read its G_uu
    if (user_lane)
        g[lane][lane].x += p.n0;
    __syncwarp();
    write_channel_matrix<UP>(p, sc, g, lane);
    float r = 0.0f, il = 0.0f;
    const bool unusable = approximate_gains(own_gain, max_gain, user_lane, p.n0, r, il);
    if (user_lane) {
        p.rho[static_cast<std::size_t>(sc) * U + lane] = r;
        p.inv_lambda[static_cast<std::size_t>(sc) * U + lane] = il;
    }
    const unsigned unusable_mask = __ballot_sync(0xffffffffu, unusable);
    if (lane == 0) {
        p.status[sc] = kStatusOk;
        p.unusable[sc] = static_cast<std::uint8_t>(__popc(unusable_mask));
        count_channel(p, false, __popc(unusable_mask));
    }
    return true;
}

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

/*! chol/zf channel state of subcarrier sc by the whole block (the prepare kernel, the
 * fused kernel): A^-1 of A = G + load I by invert_in_place with the CPU's pivot rule and
 * one retry under diagonal loading, then publish_inverse (A^-1, the per-user gains, the
 * status; a subcarrier without a usable channel gets kStatusBad and zero gains). a holds
 * G on entry and A^-1 on success (a failed attempt leaves G there for the retry under
 * loading); work is the inversion's
 * scratch (invert_scratch_items); scalars (2 floats) pass the gains from warp 0 to the
 * block; kThreads as for invert_in_place. Every thread of the block must call it.
 * Returns whether the channel is usable, on the first warp's lanes. */
template <int UP, int kThreads = 0>
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
        load = channel_load(p, attempt, gain_sum);
        regularized = attempt == 1;
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
    return publish_inverse<UP>(p, sc, a, load, regularized, own_gain, max_gain, tid);
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
template <int UP, bool kSmallTile>
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
        load = channel_load(p, attempt, gain_sum);
        regularized = attempt == 1;
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
        return publish_inverse<UP>(
            p, sc, a, load, regularized, own_gain, max_gain, lane, true, all_finite);
    else
        return publish_inverse<UP>(p, sc, a, load, regularized, own_gain, max_gain, lane);
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

/* ------------------------------------------------------------------------------------ */
/* Per-symbol equalization and demapping. */
/* ------------------------------------------------------------------------------------ */

template <int UP>
__device__ __forceinline__ float group_sum(float v)
{
#pragma unroll
    for (int off = UP / 2; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

/*! The CG (li2015 Algorithm 1) or CR (broumas2023 Figure 4) iterations for one symbol on
 * a group of UP lanes (lane = first + user): y_mf is this lane's entry of H^H y and
 * apply_a(v) returns this lane's entry of A v, v given by each lane's entry. Every lane
 * of the group must call it (apply_a may shuffle or synchronize). Returns this lane's
 * entry of x. */
template <int UP, typename ApplyA>
__device__ __forceinline__ float2
iterate(KernelMode mode, int iterations, float2 y_mf, const ApplyA& apply_a)
{
    auto step = [](float num, float den) {
        return (num > 0.0f && den > 0.0f) ? num / den : 0.0f;
    };
    float2 r = y_mf, pv = y_mf, x = make_float2(0.0f, 0.0f);
    if (mode == KernelMode::cg) {
        float rr = group_sum<UP>(cnorm(r));
        for (int it = 0; it < iterations; ++it) {
            const float2 sv = apply_a(pv);
            const float alpha = step(rr, group_sum<UP>(cmulc(pv, sv).x));
            x = cadd(x, cscale(pv, alpha));
            r = csub(r, cscale(sv, alpha));
            const float rr_next = group_sum<UP>(cnorm(r));
            const float beta = alpha > 0.0f ? step(rr_next, rr) : 0.0f;
            pv = cadd(r, cscale(pv, beta));
            rr = rr_next;
        }
    } else {
        float2 m = apply_a(r), e = m;
        float rm = group_sum<UP>(cmulc(r, m).x);
        for (int it = 0; it < iterations; ++it) {
            const float alpha = step(rm, group_sum<UP>(cnorm(e)));
            x = cadd(x, cscale(pv, alpha));
            r = csub(r, cscale(e, alpha));
            m = apply_a(r);
            const float rm_next = group_sum<UP>(cmulc(r, m).x);
            const float beta = alpha > 0.0f ? step(rm_next, rm) : 0.0f;
            pv = cadd(r, cscale(pv, beta));
            e = cadd(m, cscale(e, beta));
            rm = rm_next;
        }
    }
    return x;
}

/*! (M v) for this lane's user of a Hermitian U x U matrix M whose column `user` is
 * a_column(j) = M_{j,user} (0 on an inactive lane), v spread over the group's lanes
 * (lane = first + user): (M v)_u = sum_j conj(M_ju) v_j. kColumnInRegisters: compile-time
 * indices (a_column reads registers); otherwise a rolled loop keeps registers down. */
template <int UP, bool kColumnInRegisters, typename AColumn>
__device__ __forceinline__ float2
hermitian_times(const AColumn& a_column, float2 v, int U, int first)
{
    float2 out = make_float2(0.0f, 0.0f);
    if constexpr (kColumnInRegisters) {
#pragma unroll
        for (int j = 0; j < UP; ++j)
            if (j < U)
                out = cfmac(a_column(j), shfl(v, first + j), out);
    } else {
        for (int j = 0; j < U; ++j)
            out = cfmac(a_column(j), shfl(v, first + j), out);
    }
    return out;
}

//! Writes the clipped, signed max-log LLRs of one (symbol, subcarrier, user) for
//! kBitsPerAxis bits per axis (0: BPSK): one vector store for 16-QAM and 256-QAM,
//! two-float stores for QPSK and 64-QAM, when aligned.
template <int kBitsPerAxis>
__device__ __forceinline__ void
write_llrs_of(const EqualizeArgs& p, float2 x, float inv_lambda, float rho, float* dst)
{
    constexpr int Q = kBitsPerAxis == 0 ? 1 : 2 * kBitsPerAxis;
    float out[Q];
    demap_maxlog_of<kBitsPerAxis>(p.demap, cscale(x, inv_lambda), rho, out);
#pragma unroll
    for (int j = 0; j < Q; ++j)
        out[j] = fminf(fmaxf(p.llr_sign * out[j], -p.llr_clip), p.llr_clip);
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
__device__ __forceinline__ void
write_llrs(const EqualizeArgs& p, float2 x, float inv_lambda, float rho, float* dst)
{
    with_bits_per_axis(p.demap, [&](auto bits_per_axis) {
        write_llrs_of<decltype(bits_per_axis)::value>(p, x, inv_lambda, rho, dst);
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
    if (!y_finite || (p.status[sc] & kStatusBad)) {
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
        write_llrs(
            p, x, p.inv_lambda[sc * U + user], p.rho[sc * U + user], llr + user * Q);
        if (x_hat)
            x_hat[user] = x;
    }
}

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
    float rho = 0.0f, inv_lambda = 0.0f;
    approximate_gains(own_gain, max_gain, active, p.n0, rho, inv_lambda);

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
        return active ? cadd(hh, cscale(v, p.n0)) : make_float2(0.0f, 0.0f);
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
            write_llrs(p, x, inv_lambda, rho, llr + user * Q);
            if (p.x_hat)
                p.x_hat[item * U + user] = x;
        }
    }
}

/* The tiled kernel: a block per (subcarrier, tile of S symbols) computes the U x S
 * matched filter H^H Y like a small GEMM. H and the received vectors are staged in chunks
 * of 32 antennas, double-buffered with asynchronous copies so that the next chunk is in
 * flight while this one is used; thread (pair, group) accumulates users 2 pair and
 * 2 pair + 1 for symbols group + G t, t < 4 (G = S / 4), so each shared-memory load feeds
 * two or four complex multiply-adds instead of one. When subcarriers and symbols are
 * few, KS "k-groups" of threads take every KS-th chunk each and their sums are added in
 * a fixed order. H^H Y then goes through shared memory: chol/zf multiply it by A^-1 with
 * the same register tiling (U^2 S products against U B S for H^H Y; the k-groups share
 * the symbols), cg/cr iterate with A times the shared vectors tiled the same way, and
 * all demap from the registers. H is finite on a usable subcarrier, so a symbol's
 * products are finite exactly when its y is: NaN/Inf in y is found from the results
 * instead of testing every sample. */
constexpr int kTileSymbolsPerThread = 4;
constexpr int kMaxTileSymbols = 64;
constexpr int kMaxKGroups = 4;
//! Shared memory the tiled kernel may use (the opt-in limit of sm_75).
constexpr std::size_t kTileSmemLimit = 64 * 1024;

//! Smallest tile for UP users: a whole warp per k-group, (UP/2) * (S/4) >= 32.
__host__ __device__ constexpr int min_tile_symbols(int up)
{
    return 256 / up > 8 ? 256 / up : 8;
}

/*! Antennas per staged chunk: 32, or 16 on compact grids for chol/zf's small tiles (16
 * symbols or fewer) and for every large tile (32 symbols or more). Large tiles: two
 * buffers of 16 in about the shared memory of one of 32, so that the next chunk's copies
 * overlap the products and as many blocks fit (8 per SM for the 1024 x 64 target, held
 * there by the registers). MIMODET_LARGE_TILE_CHUNK sets it for experiments. Small
 * tiles: a block is a warp or two and its shared memory, not its registers, limits the
 * blocks per SM: the NR slot 64x16 (3276 one-warp blocks) fits 24 per SM (the register
 * limit; 20 with two buffers) with chunks of 16 and one buffer, instead of 17 with 32
 * (A after the buffers). cg/cr keep 32: 16 made them no faster, some slower. Chunks of
 * 8, double-buffered in about the same shared memory (the scratch spanning both
 * buffers), were slower still, for a reason not found. MIMODET_SMALL_TILE_CHUNK, for
 * experiments, sets that chunk. */
#ifndef MIMODET_LARGE_TILE_CHUNK
#define MIMODET_LARGE_TILE_CHUNK 16
#endif
__host__ __device__ constexpr int tile_chunk(int symbols, bool compact, bool iterative)
{
#ifdef MIMODET_SMALL_TILE_CHUNK
    if (compact && !iterative && symbols <= 16)
        return MIMODET_SMALL_TILE_CHUNK;
#endif
    if (compact && symbols >= 32)
        return MIMODET_LARGE_TILE_CHUNK;
    return compact && !iterative && symbols <= 16 ? 16 : 32;
}

/* Row strides (in complex values) of the staged chunks. H: 4 more than a row (16 bytes,
 * so the pair loads stay aligned; modulo 16 values, 4 or 12), so that the tensor-core
 * fragments, lane (g, t) reading row t at column g, hit distinct banks in each
 * half-warp. y for UP >= 8: 4 more than a row, even so that pairs of antennas are
 * copied 16 bytes at a time; the H^H Y loop reads 2, 4 or 8 rows at once, at most
 * two-way conflicting. UP = 4: one more, its warps read 16 rows at once. */
__host__ __device__ constexpr int tile_h_stride(int up) { return up + 4; }
__host__ __device__ constexpr int tile_y_stride(int up, int chunk)
{
    return up >= 8 ? chunk + 4 : chunk + 1;
}

/*! Whether A [UP][UP + 1] lives in k-group 0's staging (formed there after the antenna
 * loop) rather than after the staging buffers: fused chol/zf, whose inversion reads and
 * writes it there. (Fused cg/cr keep it after the buffers: in staging it let more blocks
 * share an SM, left less L1 for their spills and was slower.) */
__host__ __device__ constexpr bool tile_a_in_staging(bool fused, bool iterative)
{
    return fused && !iterative;
}

/*! After the antenna loop the start of k-group 0's staging holds zs, H^H Y [S][UP + 1],
 * then (tile_a_in_staging) A and the inversion's scratch; the other k-groups' parts of
 * H^H Y (and, fused, of G [UP][UP + 1]) go at the start of their own buffers. */
__host__ __device__ constexpr int
tile_scratch_items(int up, int symbols, bool fused, bool iterative)
{
    return symbols * (up + 1) + (fused ? up * (up + 1) : 0) +
           (tile_a_in_staging(fused, iterative) ? invert_scratch_items(up) : 0);
}

//! One staging buffer: the chunk of H [chunk][UP + 4] and the received chunk
//! [S][tile_y_stride]; each k-group has two when it takes several chunks, one
//! otherwise, and together they hold at least the scratch above.
__host__ __device__ constexpr int
tile_buffer_items(int up, int symbols, int chunk, bool fused, bool iterative, int buffers)
{
    const int staging = chunk * tile_h_stride(up) + symbols * tile_y_stride(up, chunk);
    const int scratch =
        (tile_scratch_items(up, symbols, fused, iterative) + buffers - 1) / buffers;
    return staging > scratch ? staging : scratch;
}

/* The fused kernel's Gram matrix on the FP64 tensor cores (sm_80, sm_90: DMMA,
 * mma.m8n8k4 in double) for UP >= 8: the float inputs are exact in double and the sums
 * are kept in double, and the tensor cores work beside the CUDA cores that form H^H Y.
 * (H^H Y there too was slower for the 1024 x 64 target: the FP64 tensor rate of an H100
 * is that of its FP32 CUDA cores, and the conversions cost issue slots.) Other GPUs
 * (sm_75, and sm_86/89 whose FP64 units are few) use the CUDA cores. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)
#define MIMODET_TILE_DMMA 1
#else
#define MIMODET_TILE_DMMA 0
#endif

//! d += a b on an 8x8x4 double tile: lane (g = lane / 4, t = lane % 4) holds a = A[g][t],
//! b = B[t][g] and d = {D[g][2t], D[g][2t + 1]} (PTX mma.m8n8k4 .f64 fragments).
__device__ __forceinline__ void dmma_8x8x4(double (&d)[2], double a, double b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, "
                 "{%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
#endif
}

//! One complex tile step: acc += conj(A) B over 4 antennas (conj(a) b = ar br + ai bi +
//! i (ar bi - ai br)); re and im are the tile's two double fragments.
[[maybe_unused]] __device__ __forceinline__ void
cdmma_conj(double (&re)[2], double (&im)[2], float2 a, float2 b)
{
    dmma_8x8x4(re, a.x, b.x);
    dmma_8x8x4(re, a.y, b.y);
    dmma_8x8x4(im, a.x, b.y);
    dmma_8x8x4(im, -a.y, b.x);
}

struct TileShape {
    int symbols;    //!< S: a power of two, at most kMaxTileSymbols
    int kgroups;    //!< KS: 1, 2 or 4
    int buffers;    //!< staging buffers per k-group: 2 (double-buffered) or 1 (one chunk)
    int threads;    //!< (UP / 2) * (S / 4) * KS
    int chunk;      //!< antennas per staged chunk (tile_chunk)
    bool fused;     //!< the channel prepared in the kernel (G formed with H^H Y)
    bool iterative; //!< cg/cr
};

//! Double buffering only pays when a k-group takes more than one chunk.
int staging_buffers(int chunks, int kgroups) { return chunks > kgroups ? 2 : 1; }

//! The staging buffers, then (unless tile_a_in_staging) A^-1 or A [UP][UP + 1].
std::size_t tiled_shared_bytes(int up, const TileShape& t)
{
    const bool a_in_staging = tile_a_in_staging(t.fused, t.iterative);
    return sizeof(float2) *
           (static_cast<std::size_t>(t.kgroups) * t.buffers *
                tile_buffer_items(
                    up, t.symbols, t.chunk, t.fused, t.iterative, t.buffers) +
            (a_in_staging ? 0 : static_cast<std::size_t>(up) * (up + 1)));
}

/*! S covers the call's symbols (at most kMaxTileSymbols; fused: at least UP) and gives at
 * least a whole warp per k-group ((UP/2) * (S/4) >= 32); one staging buffer when two do
 * not fit kTileSmemLimit; KS splits the antennas (not on compact grids, whose blocks are
 * enough to hide the loop) while the blocks are small and the antennas and shared memory
 * allow it. */
TileShape tile_shape(int up,
                     std::size_t num_symbols,
                     int num_antennas,
                     bool iterative,
                     bool fused = false,
                     bool compact = false)
{
    TileShape t{};
    t.symbols = fused ? std::max(min_tile_symbols(up), up) : min_tile_symbols(up);
    while (t.symbols < kMaxTileSymbols &&
           static_cast<std::size_t>(t.symbols) < num_symbols)
        t.symbols *= 2;
    t.chunk = tile_chunk(t.symbols, compact, iterative);
    t.fused = fused;
    t.iterative = iterative;
    const int base = (up / 2) * (t.symbols / kTileSymbolsPerThread);
    const int chunks = (num_antennas + t.chunk - 1) / t.chunk;
    t.kgroups = 1;
    t.buffers = staging_buffers(chunks, t.kgroups);
    if (tiled_shared_bytes(up, t) > kTileSmemLimit)
        t.buffers = 1; // which fits for every UP <= 32 and S <= 64
    for (;;) {
        TileShape wider = t;
        wider.kgroups *= 2;
        wider.buffers = staging_buffers(chunks, wider.kgroups);
        if (compact || wider.kgroups > kMaxKGroups || wider.kgroups > chunks ||
            base * t.kgroups >= 128 || tiled_shared_bytes(up, wider) > kTileSmemLimit)
            break;
        t = wider;
    }
    t.threads = base * t.kgroups;
    return t;
}

/*! Registers per thread of a compact grid's tiled kernel (a compact grid,
 * kCompactBlocksPerSm blocks per SM or more, trades a few spills for occupancy; other
 * grids let the compiler take up to 255, which is best when the grid is about a block per
 * SM and each block's latency counts, as li2015's 128 subcarriers). An SM sub-partition
 * holds floor(16384 / (32 * registers)) warps: 80 registers give 24 warps per SM, 72 give
 * 28, 64 give 32. What pays:
 * - 32 or more symbols: 64 (more resident blocks for the 1024 x 64 target than 80 give).
 * - Fewer, chol/zf: 72, so that the NR slot's 3276 one-warp blocks fit in one wave of
 *   132 SMs x 28 instead of 1.03 waves of 24 (64 were slower).
 * - Fewer, cg/cr: 80. Their shared memory (A after the staging) holds them to 17 blocks
 *   per SM anyway, so fewer registers only spill more.
 * MIMODET_SMALL_TILE_REGISTERS, for experiments, sets one bound for every small tile. */
__host__ __device__ constexpr int tile_compact_registers(int symbols, bool iterative)
{
#ifdef MIMODET_SMALL_TILE_REGISTERS
    if (symbols < 32)
        return MIMODET_SMALL_TILE_REGISTERS;
#endif
    return symbols >= 32 ? 64 : iterative ? 80 : 72;
}

//! Threads of a block of the tiled kernel on a compact grid (one k-group there).
__host__ __device__ constexpr int tile_compact_threads(int up, int symbols)
{
    return (up / 2) * (symbols / kTileSymbolsPerThread);
}

//! Warps per SM that `registers` per thread allow: each of an SM's 4 sub-partitions
//! holds floor(16384 / (32 * registers)) of them.
__host__ __device__ constexpr int warps_for_registers(int registers)
{
    return 4 * (16384 / (32 * registers));
}

/* GPUs that hold fewer blocks per SM (16 on sm_75 and sm_86/87, 24 on sm_89) than the
 * bound of one-warp blocks below asks for would ignore it (ptxas: minnctapersm out of
 * range): there the bound stays that of 256 threads, 3 blocks for small tiles (80
 * registers) and 4 for large ones (64), as before; not measured on those GPUs. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 800 && __CUDA_ARCH__ != 900
#define MIMODET_TILE_BOUNDS_OF_256_THREADS 1
#else
#define MIMODET_TILE_BOUNDS_OF_256_THREADS 0
#endif

//! The tiled kernel's __launch_bounds__: its most threads per block and the blocks per SM
//! that set its register bound (tile_compact_registers on compact grids; ptxas spreads
//! those blocks' warps over the sub-partitions, so 25 one-warp blocks would bound it to
//! 72 registers, not 80).
__host__ __device__ constexpr int tile_max_threads(int up, int symbols, bool compact)
{
    return compact && !MIMODET_TILE_BOUNDS_OF_256_THREADS
               ? tile_compact_threads(up, symbols)
               : 256;
}
__host__ __device__ constexpr int
tile_min_blocks(int up, int symbols, bool compact, bool iterative)
{
    if (!compact)
        return 1;
    if (MIMODET_TILE_BOUNDS_OF_256_THREADS)
        return symbols >= 32 ? 4 : 3;
    return warps_for_registers(tile_compact_registers(symbols, iterative)) /
           (tile_compact_threads(up, symbols) / 32);
}

/* kFused: the call's symbols are one tile per subcarrier and the channel is not prepared
 * yet; the block prepares it on the way, in one launch and one pass over H instead of
 * two. G = H^H H comes out of the same loop as H^H Y, from the chunk of H already
 * staged: on the FP64 tensor cores beside the CUDA cores' H^H Y (kTensorGram), or on
 * the CUDA cores (thread (pair, group) accumulating G_uj for its users u and the columns
 * j = group + G t < UP; S >= UP so that they are covered). Then cg/cr: one warp makes A
 * and the gains (finish_channel_iterative); chol/zf: the block inverts A by
 * Gauss-Jordan (finish_channel_block; finish_channel_warp, one warp, for up to 16 users
 * on compact grids), and the rest follows as usual. */
template <int UP, int S, bool kIterative, bool kFused, bool kCompact>
__global__ void __launch_bounds__(tile_max_threads(UP, S, kCompact),
                                  tile_min_blocks(UP, S, kCompact, kIterative))
    equalize_tiled_kernel(EqualizeArgs p, PrepareArgs prep, int kgroups, int buffers)
{
    static_assert(!kFused || S >= UP,
                  "the fused tile covers G's columns with its groups");
    static_assert((UP / 2) * (S / kTileSymbolsPerThread) % UP == 0,
                  "invert_in_place: the block's threads are a multiple of UP");
    extern __shared__ float4 tile_smem[]; // float4: 16-byte alignment for pair loads
    float2* const smem = reinterpret_cast<float2*>(tile_smem);
    __shared__ int bad_symbol[S];
    __shared__ float channel_scalars[2]; // kFused chol/zf: the gains, to the whole block
    __shared__ int channel_usable; // kFused: from the first warp, to the whole block

    constexpr int P = UP / 2;
    const int B = p.num_antennas, U = p.num_users, Q = p.demap.bits;
    const int nsc = p.num_subcarriers;
    constexpr int G = S / kTileSymbolsPerThread;
    constexpr int base = P * G; // threads per k-group
    const int tid = threadIdx.x, threads = blockDim.x;
    const int kg = tid / base, local = tid % base;
    const int pair = local % P, grp = local / P;
    const int sc = blockIdx.x;
    const std::size_t s0 = static_cast<std::size_t>(blockIdx.y) * S;
    const int count =
        static_cast<int>(min(static_cast<std::size_t>(S), p.num_symbols - s0));
    constexpr bool iterative = kIterative;
    constexpr int C = tile_chunk(S, kCompact, kIterative); // antennas per staged chunk
    /* The L2 fetches 256 bytes around each staged copy of a large tile (32+ symbols), 128
     * around those of a small one, so that the next chunk of the same rows of y (and of
     * H) is there when its copies come; 256 bytes did not help the small tiles, 128
     * helped them and helped the large ones less. */
    constexpr int kL2Prefetch = S >= 32 ? 256 : 128;
    // (the scratch may span both buffers of a k-group: a run-time size)
    const int buffer_items = tile_buffer_items(UP, S, C, kFused, kIterative, buffers);
    float2* const kg_smem = smem + kg * buffers * buffer_items; // this k-group's buffers
    // A^-1 or A [UP][UP + 1]: after the buffers, or (tile_a_in_staging, formed after the
    // antenna loop) in k-group 0's staging after zs (tile_scratch_items).
    constexpr bool kAInStaging = tile_a_in_staging(kFused, kIterative);
    float2* const a_s =
        kAInStaging ? smem + S * (UP + 1) : smem + kgroups * buffers * buffer_items;
    auto y_at = [&](int s) { return p.y + ((s0 + s) * nsc + sc) * B; };
    auto llr_at = [&](int s) {
        return p.llr + ((s0 + s) * nsc + sc) * U * static_cast<std::size_t>(Q);
    };
    auto erase = [&](int s, int u) {
        float* dst = llr_at(s) + u * Q;
        for (int j = 0; j < Q; ++j)
            dst[j] = 0.0f;
        if (p.x_hat)
            p.x_hat[((s0 + s) * nsc + sc) * U + u] = make_float2(0.0f, 0.0f);
    };

    // No usable channel: every LLR of the tile is 0.
    auto erase_tile = [&]() {
        const int warp = tid / 32, lane = tid % 32, warps = threads / 32;
        for (int s = warp; s < count; s += warps) {
            bool finite = true; // non-finite y is still counted, as on the CPU
            for (int b = lane; b < B; b += 32)
                finite = finite && cfinite(y_at(s)[b]);
            erase_item(p, (s0 + s) * nsc + sc, lane, !__all_sync(0xffffffffu, finite));
        }
    };
    if (!kFused && (p.status[sc] & kStatusBad)) {
        erase_tile();
        return; // uniform per block
    }

    if (!kFused) { // zeros past U: the chol/zf product reads every pair's columns
        const float2* a = p.a + static_cast<std::size_t>(sc) * U * U;
        for (int idx = tid; idx < UP * UP; idx += threads) {
            const int i = idx / UP, j = idx % UP;
            a_s[i * (UP + 1) + j] =
                (i < U && j < U) ? __ldg(a + i * U + j) : make_float2(0.0f, 0.0f);
        }
    }
    const float2* mat = p.h + static_cast<std::size_t>(sc) * B * U;
    const int chunks = (B + C - 1) / C;
    const int rounds = (chunks + kgroups - 1) / kgroups;
    constexpr int HS = tile_h_stride(UP), YS = tile_y_stride(UP, C);
    /* The copies of a chunk. Pairs of values (16 bytes) where every address allows it:
     * even U (H) or even B and an even y stride (y), and 16-byte aligned arrays. Thread
     * (pair, grp) then copies users 2 pair, 2 pair + 1 of H rows grp + G k, and the 16
     * pairs of antennas of a y row are spread over 16 threads, so that each copy costs an
     * address step instead of a division and a 64-bit product. Otherwise 8 bytes at a
     * time. */
    const bool h_pairs = U % 2 == 0 && aligned16(p.h);
    const bool y_pairs = YS % 2 == 0 && B % 2 == 0 && aligned16(p.y);
    constexpr int kHRowsPerThread = C / G;
    constexpr int kYRowStep = base / (C / 2), kYRowsPerThread = S / kYRowStep;
    static_assert(C % G == 0 && base % (C / 2) == 0 && S % kYRowStep == 0,
                  "the y pairs of a chunk spread evenly over the k-group");
    const int y_col = 2 * (local % (C / 2)), y_row = local / (C / 2);
    // Queues the copies of this k-group's chunk of round r into buffer r % buffers (past
    // the last chunk, or past B, U or the call's symbols: zeros).
    auto stage = [&](int r) {
        const int chunk = r * kgroups + kg, b0 = chunk * C;
        const int rows = chunk < chunks ? min(C, B - b0) : 0;
        float2* ms = kg_smem + (r % buffers) * buffer_items;
        float2* ys = ms + C * HS;
        if (h_pairs) {
            const bool user_ok = 2 * pair < U;
            const float2* src = mat + (b0 + grp) * U + 2 * pair;
#pragma unroll
            for (int k = 0; k < kHRowsPerThread; ++k) {
                const bool valid = user_ok && grp + G * k < rows;
                copy_async16<kL2Prefetch>(
                    ms + (grp + G * k) * HS + 2 * pair, valid ? src : mat, valid);
                src += G * U;
            }
        } else {
            for (int idx = local; idx < C * UP; idx += base) {
                const int row = idx / UP, u = idx % UP;
                const bool valid = row < rows && u < U;
                copy_async8<kL2Prefetch>(
                    ms + row * HS + u, valid ? mat + (b0 + row) * U + u : mat, valid);
            }
        }
        if (y_pairs) {
            // (found here, once a round, rather than kept in registers through the loop)
            const std::size_t y_row_step = static_cast<std::size_t>(kYRowStep) * nsc * B;
            const bool col_ok = y_col < rows;
            const float2* src = y_at(y_row) + y_col + b0;
#pragma unroll
            for (int k = 0; k < kYRowsPerThread; ++k) {
                const int s = y_row + kYRowStep * k;
                const bool valid = col_ok && s < count;
                copy_async16<kL2Prefetch>(ys + s * YS + y_col, valid ? src : p.y, valid);
                src += y_row_step;
            }
        } else {
            for (int idx = local; idx < S * C; idx += base) {
                const int s = idx / C, b = idx % C;
                const bool valid = s < count && b < rows;
                copy_async8<kL2Prefetch>(
                    ys + s * YS + b, valid ? y_at(s) + b0 + b : mat, valid);
            }
        }
        copy_async_commit();
    };

    // This k-group's part of H^H Y (and, kFused, of G = H^H H). H^H Y on the CUDA cores:
    // thread (pair, grp) accumulates users 2 pair, 2 pair + 1 for symbols grp + G t.
    float2 acc[kTileSymbolsPerThread][2];
#pragma unroll
    for (int t = 0; t < kTileSymbolsPerThread; ++t)
        acc[t][0] = acc[t][1] = make_float2(0.0f, 0.0f);
        // G: on the FP64 tensor cores where they are (kTensorGram), in 8x8 tiles of user
        // blocks (bi <= bj, the upper triangle; warp w of the k-group takes tiles w, w +
        // NW,
        // ...), so that it runs beside H^H Y instead of taking CUDA-core issue slots, and
        // summed in double. Otherwise on the CUDA cores: G_{2 pair + k, grp + G t} for
        // the kGramT values of t that reach G's columns.
#if MIMODET_TILE_DMMA
    constexpr bool kTensorGram = kFused && UP >= 8;
#else
    constexpr bool kTensorGram = false;
#endif
    constexpr int NW = base / 32;                           // warps per k-group
    constexpr int UB = UP / 8;                              // blocks of 8 users
    constexpr int GT = kTensorGram ? UB * (UB + 1) / 2 : 0; // Gram tiles
    constexpr int GTW = (GT + NW - 1) / NW;                 // Gram tiles per warp
    const int lane = tid % 32, warp_in_kg = local / 32;
    const int g8 = lane / 4, t4 = lane % 4; // the fragments' (groupID, threadID_in_group)
    double gre[GTW > 0 ? GTW : 1][2], gim[GTW > 0 ? GTW : 1][2];
#pragma unroll
    for (int i = 0; i < GTW; ++i)
        gre[i][0] = gre[i][1] = gim[i][0] = gim[i][1] = 0.0;
    // Gram tile j: user blocks (bi, bj), bi <= bj, row by row.
    auto gram_tile = [](int j, int& bi, int& bj) {
        bi = 0;
        while (j >= UB - bi) {
            j -= UB - bi;
            ++bi;
        }
        bj = bi + j;
    };
    // This warp's Gram tiles, found once: their rows and columns in a chunk of H.
    int gram_row[GTW > 0 ? GTW : 1], gram_col[GTW > 0 ? GTW : 1]; // first user of each
    bool gram_own[GTW > 0 ? GTW : 1];
#pragma unroll
    for (int i = 0; i < GTW; ++i) {
        const int j = warp_in_kg + NW * i;
        int bi = 0, bj = 0;
        gram_tile(j < GT ? j : 0, bi, bj);
        gram_own[i] = j < GT;
        gram_row[i] = bi * 8;
        gram_col[i] = bj * 8;
    }
    constexpr int kGramT = kFused && !kTensorGram ? (UP + G - 1) / G : 0;
    float2 gacc[kGramT > 0 ? kGramT : 1][2];
#pragma unroll
    for (int t = 0; t < kGramT; ++t)
        gacc[t][0] = gacc[t][1] = make_float2(0.0f, 0.0f);
    // Two buffers: round r + 1 is in flight while round r is used. One buffer: it is
    // refilled only once round r is done with it.
    const bool prefetch = buffers == 2;
    stage(0);
    for (int r = 0; r < rounds; ++r) {
        if (prefetch) {
            if (r + 1 < rounds)
                stage(r + 1);
            else
                copy_async_commit(); // an empty group keeps the wait below uniform
            copy_async_wait<1>();    // round r's copies have landed (this thread's)
        } else {
            copy_async_wait<0>();
        }
        __syncthreads(); // ... and everyone's
        const int chunk = r * kgroups + kg;
        const int rows = chunk < chunks ? min(C, B - chunk * C) : 0;
        const float2* ms = kg_smem + (r % buffers) * buffer_items;
        const float2* ys = ms + C * HS;
        // Steps of 4 antennas (past `rows` the chunk holds zeros): the step's FP64
        // tensor-core Gram products are issued first, and the products of H^H Y run while
        // they are in flight.
        const float2* yrow = ys + grp * YS;
        const float2* wrow = ms + 2 * pair;
        for (int k0 = 0; k0 < rows; k0 += 4) {
            if constexpr (kTensorGram) {
                // A = H^H: A[user g][antenna t] = conj(H[t][g]); B = H: B[antenna t][user
                // g] = H[t][g].
#pragma unroll
                for (int i = 0; i < GTW; ++i)
                    if (gram_own[i])
                        cdmma_conj(gre[i],
                                   gim[i],
                                   ms[(k0 + t4) * HS + gram_row[i] + g8],
                                   ms[(k0 + t4) * HS + gram_col[i] + g8]);
            }
#pragma unroll
            for (int b = k0; b < k0 + 4; ++b) {
                const float4 w = *reinterpret_cast<const float4*>(wrow + b * HS);
                const float2 w0 = make_float2(w.x, w.y), w1 = make_float2(w.z, w.w);
#pragma unroll
                for (int t = 0; t < kTileSymbolsPerThread; ++t) {
                    const float2 yv = yrow[(G * t) * YS + b];
                    acc[t][0] = cfmac(w0, yv, acc[t][0]);
                    acc[t][1] = cfmac(w1, yv, acc[t][1]);
                }
#pragma unroll
                for (int t = 0; t < kGramT; ++t) {
                    if (grp + G * t < UP) {
                        const float2 hv = ms[b * HS + grp + G * t];
                        gacc[t][0] = cfmac(w0, hv, gacc[t][0]);
                        gacc[t][1] = cfmac(w1, hv, gacc[t][1]);
                    }
                }
            }
        }
        __syncthreads(); // every read of this buffer is done before it is refilled
        if (!prefetch && r + 1 < rounds)
            stage(r + 1);
    }

    // The k-group sums: k-group 0 writes its part of H^H Y straight into zs [S][UP + 1]
    // (and kFused, G into a_s), the others into their consumed buffers (the same layout,
    // tile_scratch_items); then they are added in k-group order (deterministic).
    // (tile_buffer_items: the sums and the scratch fit a k-group's buffers)
    float2* const zs = smem; // [S][UP + 1]
    // fused chol/zf: the inversion's scratch, after A
    float2* const invert_work = smem + S * (UP + 1) + UP * (UP + 1);
    {
        float2* const z_part = kg == 0 ? zs : kg_smem;
        float2* const g_part = kg == 0 ? a_s : kg_smem + S * (UP + 1);
#pragma unroll
        for (int t = 0; t < kTileSymbolsPerThread; ++t) {
            z_part[(grp + G * t) * (UP + 1) + 2 * pair] = acc[t][0];
            z_part[(grp + G * t) * (UP + 1) + 2 * pair + 1] = acc[t][1];
        }
#pragma unroll
        for (int t = 0; t < kGramT; ++t) {
            if (grp + G * t < UP) {
                g_part[(2 * pair) * (UP + 1) + grp + G * t] = gacc[t][0];
                g_part[(2 * pair + 1) * (UP + 1) + grp + G * t] = gacc[t][1];
            }
        }
#pragma unroll
        for (int i = 0; i < GTW; ++i) {
            if (!gram_own[i])
                continue;
#pragma unroll
            for (int c = 0; c < 2; ++c) { // D[g][2t + c]
                const int row = gram_row[i] + g8, col = gram_col[i] + 2 * t4 + c;
                const float2 v = make_float2(static_cast<float>(gre[i][c]),
                                             static_cast<float>(gim[i][c]));
                g_part[row * (UP + 1) + col] = v;
                if (gram_row[i] != gram_col[i]) // the lower block, G being Hermitian
                    g_part[col * (UP + 1) + row] = conj2(v);
            }
        }
    }
    __syncthreads();
    if (kgroups > 1) {
        for (int idx = tid; idx < S * UP; idx += threads) {
            const int at = (idx / UP) * (UP + 1) + idx % UP;
            float2 sum = zs[at];
            for (int k = 1; k < kgroups; ++k)
                sum = cadd(sum, smem[k * buffers * buffer_items + at]);
            zs[at] = sum;
        }
        if constexpr (kFused)
            for (int idx = tid; idx < UP * UP; idx += threads) {
                const int at = (idx / UP) * (UP + 1) + idx % UP;
                float2 sum = a_s[at];
                for (int k = 1; k < kgroups; ++k)
                    sum = cadd(sum, smem[k * buffers * buffer_items + S * (UP + 1) + at]);
                a_s[at] = sum;
            }
        __syncthreads();
    }
    // H is finite on a usable subcarrier, so a symbol's H^H y is finite exactly when its
    // y is: NaN/Inf in y is found from the results instead of testing every sample.
    for (int s = tid; s < S; s += threads) {
        bool finite = true;
        for (int u = 0; u < UP; ++u)
            finite = finite && cfinite(zs[s * (UP + 1) + u]);
        bad_symbol[s] = finite ? 0 : 1;
    }

    if constexpr (kFused) { // one warp (cg/cr; chol/zf of up to 16 users on compact
        // grids) or the block (other chol/zf) finishes G in a_s (whether the channel is
        // usable passes through shared memory rather than a read-back of the status byte
        // just written)
        bool usable = false;
        auto* const a_rows = reinterpret_cast<float2(*)[UP + 1]>(a_s);
        /* A compact grid's blocks (several per SM: its other blocks keep the SM busy)
         * leave the inversion to their first warp, even blocks of 128 threads (the
         * target's): faster than the block's invert_in_place there. A grid of a block or
         * so per SM keeps the block's (li2015: see invert_warp). */
        constexpr bool kWarpInverts = kCompact && UP <= 16;
        if constexpr (kIterative) {
            if (tid < 32)
                usable = finish_channel_iterative<UP>(prep, sc, a_rows, tid);
        } else if constexpr (kWarpInverts) {
            if (tid < 32)
                usable = finish_channel_warp<UP, (S < 32)>(prep, sc, a_rows, tid);
        } else {
            // (a block of 128 threads or more is one k-group: tile_shape)
            usable = finish_channel_block < UP,
            kCompact || base >= 128
                ? base
                : 0 > (prep, sc, a_rows, invert_work, channel_scalars, tid, threads);
        }
        if (tid == 0)
            channel_usable = usable;
        __syncthreads();
        if (!channel_usable) {
            erase_tile();
            return; // uniform per block
        }
    }
    __syncthreads();

    // x: chol/zf (A^-1 z) and cg, tiled like H^H Y: thread (pair, grp) takes users 2 pair
    // and 2 pair + 1 of the symbols grp + G t with t % KS == kg (each k-group its share
    // of the symbols; KS divides 4), then demaps from the registers.
    auto mine = [&](int t) { return t % kgroups == kg; };
    constexpr int T = kTileSymbolsPerThread;
    float2 x[T][2];
#pragma unroll
    for (int t = 0; t < T; ++t)
        x[t][0] = x[t][1] = make_float2(0.0f, 0.0f);
    // out[i] += M v_t (t = t0 + i) for this thread's users, M Hermitian in a_s
    // ((M v)_u = sum_j conj(M_ju) v_j), v_t the row of symbol grp + G t in zs.
    // With one k-group every symbol is the thread's: no mine() test, whose branch
    // instructions (uniform over a warp, but not known to the compiler) outnumbered the
    // products in the NR cg profile. Testing it once per symbol instead for several
    // k-groups was slower at the NR slot (chol, cr), so several k-groups keep the
    // per-row test.
    auto times_rows = [&](auto& out, int t0) {
        constexpr int N = std::extent_v<std::remove_reference_t<decltype(out)>>;
        if (kgroups == 1) {
            for (int j = 0; j < U; ++j) {
                const float2 a0 = a_s[j * (UP + 1) + 2 * pair];
                const float2 a1 = a_s[j * (UP + 1) + 2 * pair + 1];
#pragma unroll
                for (int i = 0; i < N; ++i) {
                    const float2 v = zs[(grp + G * (t0 + i)) * (UP + 1) + j];
                    out[i][0] = cfmac(a0, v, out[i][0]);
                    out[i][1] = cfmac(a1, v, out[i][1]);
                }
            }
            return;
        }
        for (int j = 0; j < U; ++j) {
            const float2 a0 = a_s[j * (UP + 1) + 2 * pair];
            const float2 a1 = a_s[j * (UP + 1) + 2 * pair + 1];
#pragma unroll
            for (int i = 0; i < N; ++i) {
                if (!mine(t0 + i))
                    continue;
                const float2 v = zs[(grp + G * (t0 + i)) * (UP + 1) + j];
                out[i][0] = cfmac(a0, v, out[i][0]);
                out[i][1] = cfmac(a1, v, out[i][1]);
            }
        }
    };
    // cg/cr: a sum over a symbol's users adds the thread's two, then the P lanes of the
    // symbol (one warp) by shuffles; mine(t) is uniform over a k-group, so every lane of
    // the warp takes part. step() as in iterate().
    auto symbol_sum = [](float v) {
#pragma unroll
        for (int off = 1; off < P; off <<= 1)
            v += __shfl_xor_sync(0xffffffffu, v, off);
        return v;
    };
    auto step = [](float num, float den) {
        return (num > 0.0f && den > 0.0f) ? num / den : 0.0f;
    };
    if (!iterative) {
        times_rows(x, 0); // x = A^-1 y_MF
    } else if (p.mode == KernelMode::cg) {
        /* li2015's CG (the iterations of iterate()) for all the thread's symbols at once:
         * A p as the product above, p kept in zs (where it starts, as y_MF), r and x in
         * registers. */
        float2 r[T][2];
        float rr[T];
#pragma unroll
        for (int t = 0; t < T; ++t) {
            if (!mine(t))
                continue;
            const float2* pt = zs + (grp + G * t) * (UP + 1) + 2 * pair;
            r[t][0] = pt[0];
            r[t][1] = pt[1];
            rr[t] = symbol_sum(cnorm(r[t][0]) + cnorm(r[t][1]));
        }
        for (int it = 0; it < p.iterations; ++it) {
            float2 w[T][2]; // A p, then the next p
#pragma unroll
            for (int t = 0; t < T; ++t)
                w[t][0] = w[t][1] = make_float2(0.0f, 0.0f);
            times_rows(w, 0);
#pragma unroll
            for (int t = 0; t < T; ++t) {
                if (!mine(t))
                    continue;
                const float2* pt = zs + (grp + G * t) * (UP + 1) + 2 * pair;
                const float2 p0 = pt[0], p1 = pt[1];
                const float alpha =
                    step(rr[t], symbol_sum(cmulc(p0, w[t][0]).x + cmulc(p1, w[t][1]).x));
                x[t][0] = cadd(x[t][0], cscale(p0, alpha));
                x[t][1] = cadd(x[t][1], cscale(p1, alpha));
                r[t][0] = csub(r[t][0], cscale(w[t][0], alpha));
                r[t][1] = csub(r[t][1], cscale(w[t][1], alpha));
                const float rr_next = symbol_sum(cnorm(r[t][0]) + cnorm(r[t][1]));
                const float beta = alpha > 0.0f ? step(rr_next, rr[t]) : 0.0f;
                w[t][0] = cadd(r[t][0], cscale(p0, beta));
                w[t][1] = cadd(r[t][1], cscale(p1, beta));
                rr[t] = rr_next;
            }
            __syncwarp(); // the symbol's lanes have read p
#pragma unroll
            for (int t = 0; t < T; ++t) {
                if (!mine(t))
                    continue;
                float2* pt = zs + (grp + G * t) * (UP + 1) + 2 * pair;
                pt[0] = w[t][0];
                pt[1] = w[t][1];
            }
            __syncwarp(); // ... and the new p is there for the next product
        }
    } else { // cr
        /* broumas2023's CR (the iterations of iterate()) the same way: r is the vector
         * that A multiplies, so r is kept in zs (where it starts, as y_MF) and p, e, m
         * and x in registers, for two of the thread's symbols at a time (they would not
         * fit the compact bound for four). */
#pragma unroll
        for (int h = 0; h < T; h += 2) {
            float2 p_[2][2], e[2][2], m[2][2];
            float rm[2], alpha[2];
#pragma unroll
            for (int i = 0; i < 2; ++i)
                m[i][0] = m[i][1] = make_float2(0.0f, 0.0f);
            times_rows(m, h);
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                if (!mine(h + i))
                    continue;
                const float2* rt = zs + (grp + G * (h + i)) * (UP + 1) + 2 * pair;
                p_[i][0] = rt[0];
                p_[i][1] = rt[1];
                e[i][0] = m[i][0];
                e[i][1] = m[i][1];
                rm[i] = symbol_sum(cmulc(rt[0], m[i][0]).x + cmulc(rt[1], m[i][1]).x);
            }
            for (int it = 0; it < p.iterations; ++it) {
                __syncwarp(); // the symbol's lanes have read r
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    if (!mine(h + i))
                        continue;
                    float2* rt = zs + (grp + G * (h + i)) * (UP + 1) + 2 * pair;
                    alpha[i] = step(rm[i], symbol_sum(cnorm(e[i][0]) + cnorm(e[i][1])));
                    x[h + i][0] = cadd(x[h + i][0], cscale(p_[i][0], alpha[i]));
                    x[h + i][1] = cadd(x[h + i][1], cscale(p_[i][1], alpha[i]));
                    rt[0] = csub(rt[0], cscale(e[i][0], alpha[i]));
                    rt[1] = csub(rt[1], cscale(e[i][1], alpha[i]));
                }
                __syncwarp(); // ... and the new r is there for the product
#pragma unroll
                for (int i = 0; i < 2; ++i)
                    m[i][0] = m[i][1] = make_float2(0.0f, 0.0f);
                times_rows(m, h);
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    if (!mine(h + i))
                        continue;
                    const float2* rt = zs + (grp + G * (h + i)) * (UP + 1) + 2 * pair;
                    const float2 r0 = rt[0], r1 = rt[1];
                    const float rm_next =
                        symbol_sum(cmulc(r0, m[i][0]).x + cmulc(r1, m[i][1]).x);
                    const float beta = alpha[i] > 0.0f ? step(rm_next, rm[i]) : 0.0f;
                    p_[i][0] = cadd(r0, cscale(p_[i][0], beta));
                    p_[i][1] = cadd(r1, cscale(p_[i][1], beta));
                    e[i][0] = cadd(m[i][0], cscale(e[i][0], beta));
                    e[i][1] = cadd(m[i][1], cscale(e[i][1], beta));
                    rm[i] = rm_next;
                }
            }
        }
    }
    /* Demapping: x goes through zs (whose products have all been read) and thread tid
     * takes user tid % UP of the symbols tid / UP, tid / UP + threads / UP, ... (threads
     * is a multiple of UP), in a loop rather than unrolled over the thread's own items:
     * one run of demapping code per modulation instead of a copy per item, which made
     * the NR slot kernels stall on instruction fetch, and each warp's stores cover whole
     * rows of LLRs. */
    __syncthreads(); // every read of zs is done
#pragma unroll
    for (int t = 0; t < T; ++t) {
        if (!mine(t))
            continue;
#pragma unroll
        for (int k = 0; k < 2; ++k)
            zs[(grp + G * t) * (UP + 1) + 2 * pair + k] = x[t][k];
    }
    __syncthreads();
    const int user = tid % UP;
    if (user >= U)
        return;
    // written by this kernel (fused) or an earlier one: plain loads
    const float user_rho = p.rho[sc * U + user];
    const float user_inv_lambda = p.inv_lambda[sc * U + user];
    const int symbol_step = threads / UP;
    with_bits_per_axis(p.demap, [&](auto bits_per_axis) {
        constexpr int kBitsPerAxis = decltype(bits_per_axis)::value;
        constexpr int kQ = kBitsPerAxis == 0 ? 1 : 2 * kBitsPerAxis;
        const std::size_t llr_step = static_cast<std::size_t>(symbol_step) * nsc * U * kQ;
        float* dst = llr_at(tid / UP) + user * kQ;
        for (int s = tid / UP; s < count; s += symbol_step, dst += llr_step) {
            if (bad_symbol[s]) {
                if (user == 0)
                    atomicAdd(p.bad_sample_count, 1ull);
                erase(s, user);
                continue;
            }
            const float2 xv = zs[s * (UP + 1) + user];
            write_llrs_of<kBitsPerAxis>(p, xv, user_inv_lambda, user_rho, dst);
            if (p.x_hat)
                p.x_hat[((s0 + s) * nsc + sc) * U + user] = xv;
        }
    });
}

/*! Calls f with the tiled kernel for UP users and S = `symbols` (tile sizes are template
 * parameters: immediate shared-memory offsets in the inner loop; instantiated only where
 * they are valid for UP, and fused only where S >= UP). */
template <int UP, bool kIterative, bool kFused, bool kCompact, typename F>
void with_tiled_kernel_of(int symbols, F&& f)
{
    constexpr int smallest =
        kFused && UP > min_tile_symbols(UP) ? UP : min_tile_symbols(UP);
    switch (symbols) {
    case 8:
        if constexpr (smallest <= 8)
            return f(equalize_tiled_kernel<UP, 8, kIterative, kFused, kCompact>);
        break;
    case 16:
        if constexpr (smallest <= 16)
            return f(equalize_tiled_kernel<UP, 16, kIterative, kFused, kCompact>);
        break;
    case 32:
        if constexpr (smallest <= 32)
            return f(equalize_tiled_kernel<UP, 32, kIterative, kFused, kCompact>);
        break;
    case 64:
        return f(equalize_tiled_kernel<UP, 64, kIterative, kFused, kCompact>);
    }
    throw std::logic_error("launch_equalize: no tile of " + std::to_string(symbols) +
                           " symbols for " + std::to_string(UP) + " users");
}
template <int UP, bool kIterative, bool kFused, typename F>
void with_tiled_kernel(int symbols, bool compact, F&& f)
{
    if (compact)
        with_tiled_kernel_of<UP, kIterative, kFused, true>(symbols, f);
    else
        with_tiled_kernel_of<UP, kIterative, kFused, false>(symbols, f);
}

//! Blocks per SM from which a grid takes the compact instantiation (tile_min_blocks).
constexpr int kCompactBlocksPerSm = 4;

template <int UP, bool kIterative, bool kFused = false>
void launch_tiled(const EqualizeArgs& args,
                  const TileShape& given,
                  dim3 grid,
                  cudaStream_t stream,
                  const PrepareArgs& prep = {})
{
    int device = 0, sms = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const bool compact = static_cast<long long>(grid.x) * grid.y >=
                         static_cast<long long>(kCompactBlocksPerSm) * sms;
    // k-groups shorten a block's antenna loop, which pays when there are few blocks to
    // hide it; a compact grid has enough, and one k-group spares the split's sums and
    // the k-group tests (small grids, such as li2015's 128 blocks, were slower with one
    // k-group). Compact grids of small tiles also stage smaller chunks (tile_chunk).
    // Same S, so the grid stays.
    const TileShape shape =
        compact
            ? tile_shape(UP, given.symbols, args.num_antennas, kIterative, kFused, true)
            : given;
    with_tiled_kernel<UP, kIterative, kFused>(shape.symbols, compact, [&](auto kernel) {
        // Double buffering doubles the shared memory of a block: it pays only when it
        // does not add a wave of blocks, and on compact grids only when it costs no
        // resident blocks either (the NR slot's one-buffer blocks, 24 per SM instead of
        // 20, were faster although both took two waves).
        TileShape chosen = shape;
        if (shape.buffers == 2) {
            TileShape single = shape;
            single.buffers = 1;
            const long long blocks = static_cast<long long>(grid.x) * grid.y;
            auto resident_with = [&](const TileShape& t) {
                return resident_blocks(reinterpret_cast<const void*>(kernel),
                                       t.threads,
                                       tiled_shared_bytes(UP, t));
            };
            const long long resident_single = resident_with(single),
                            resident_double = resident_with(shape);
            if (waves(blocks, resident_single) < waves(blocks, resident_double) ||
                (compact && resident_single > resident_double))
                chosen = single;
        }
        // the compact kernels, and those of 128 threads or more, count on one k-group
        if ((compact || shape.threads / shape.kgroups >= 128) && chosen.kgroups != 1)
            throw std::logic_error(
                "launch_tiled: several k-groups for a one-k-group kernel");
        kernel<<<grid, chosen.threads, tiled_shared_bytes(UP, chosen), stream>>>(
            args, prep, chosen.kgroups, chosen.buffers);
    });
}

//! Raises the dynamic shared memory limit of every tiled instantiation for UP users.
template <int UP>
void set_tiled_smem_limit(int bytes)
{
    auto set = [&](auto kernel) {
        MIMODET_CUDA_CHECK(
            cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 bytes));
    };
    for (int symbols = min_tile_symbols(UP); symbols <= kMaxTileSymbols; symbols *= 2)
        for (bool compact : { false, true }) {
            with_tiled_kernel<UP, false, false>(symbols, compact, set);
            with_tiled_kernel<UP, true, false>(symbols, compact, set);
            if (symbols >= UP)
                with_tiled_kernel<UP, true, true>(symbols, compact, set);
            if (symbols >= UP)
                with_tiled_kernel<UP, false, true>(symbols, compact, set);
        }
}

int round_up_users(int u) { return u <= 4 ? 4 : u <= 8 ? 8 : u <= 16 ? 16 : 32; }

//! Calls f(std::integral_constant<int, UP>{}), UP = `users` rounded up to 4, 8, 16 or 32:
//! the one switch from a run-time user count to the kernels' template parameter.
template <typename F>
void with_user_tile(int users, F&& f)
{
    switch (round_up_users(users)) {
    case 4:
        return f(std::integral_constant<int, 4>{});
    case 8:
        return f(std::integral_constant<int, 8>{});
    case 16:
        return f(std::integral_constant<int, 16>{});
    default:
        return f(std::integral_constant<int, 32>{});
    }
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
        equalize_direct_kernel<UP>
            <<<static_cast<unsigned>(blocks), 32 * kMaxWarpsPerBlock, smem, stream>>>(
                args);
        return;
    }
    // A block per subcarrier and tile of symbols; grid.y is limited to 65535, so long
    // calls are cut into slices.
    const bool iterative = args.mode == KernelMode::cg || args.mode == KernelMode::cr;
    const TileShape shape =
        tile_shape(UP, args.num_symbols, args.num_antennas, iterative);
    const std::size_t max_slice = static_cast<std::size_t>(shape.symbols) * 65535;
    const std::size_t nsc = static_cast<std::size_t>(args.num_subcarriers);
    for (std::size_t first = 0; first < args.num_symbols; first += max_slice) {
        EqualizeArgs slice = args;
        slice.num_symbols = std::min(max_slice, args.num_symbols - first);
        slice.y = args.y + first * nsc * args.num_antennas;
        slice.llr = args.llr + first * nsc * args.num_users * args.demap.bits;
        if (args.x_hat)
            slice.x_hat = args.x_hat + first * nsc * args.num_users;
        const std::size_t tiles = (slice.num_symbols + shape.symbols - 1) / shape.symbols;
        const dim3 grid(args.num_subcarriers, static_cast<unsigned>(tiles));
        if (iterative)
            launch_tiled<UP, true>(slice, shape, grid, stream);
        else
            launch_tiled<UP, false>(slice, shape, grid, stream);
    }
}

} // namespace

void configure_kernels()
{
    int device = 0, optin = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
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
    // The tiled equalize kernel sizes its tiles to stay within kTileSmemLimit.
    const int tile_limit = static_cast<int>(
        std::min<std::size_t>(kTileSmemLimit, static_cast<std::size_t>(optin)));
    set_tiled_smem_limit<4>(tile_limit);
    set_tiled_smem_limit<8>(tile_limit);
    set_tiled_smem_limit<16>(tile_limit);
    set_tiled_smem_limit<32>(tile_limit);
}

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

template <int UP>
void launch_fused_for(const EqualizeArgs& args,
                      const PrepareArgs& prep,
                      cudaStream_t stream)
{
    const bool iterative = args.mode == KernelMode::cg || args.mode == KernelMode::cr;
    const TileShape shape =
        tile_shape(UP, args.num_symbols, args.num_antennas, iterative, true);
    const dim3 grid(args.num_subcarriers, 1);
    if (iterative)
        launch_tiled<UP, true, true>(args, shape, grid, stream, prep);
    else
        launch_tiled<UP, false, true>(args, shape, grid, stream, prep);
}

/* chol/zf: A^-1 by Gauss-Jordan on the whole block (finish_channel_block;
 * finish_channel_warp, one warp, for up to 16 users on compact grids). With the Cholesky
 * factorization and the two solves per column instead (its registers, 103 against 66
 * per thread for 16 users) the fused kernel was slower than the prepare kernel and the
 * equalize kernel apart. With Gauss-Jordan, fusing pays for 17..32 users and for calls
 * of 1 or 2 symbols too (which otherwise take the direct kernel after the prepare
 * kernel): one launch and one pass over H. */
bool fused_supported(std::size_t num_symbols)
{
    return num_symbols >= 1 && num_symbols <= static_cast<std::size_t>(kMaxTileSymbols);
}

void launch_equalize_fused(const EqualizeArgs& args,
                           const PrepareArgs& prep,
                           cudaStream_t stream)
{
    if (!fused_supported(args.num_symbols))
        throw std::logic_error("launch_equalize_fused: 1 to 64 symbols (got " +
                               std::to_string(args.num_symbols) + ")");
    if (args.num_subcarriers == 0)
        return;
    with_user_tile(args.num_users, [&](auto up) {
        launch_fused_for<decltype(up)::value>(args, prep, stream);
    });
    MIMODET_CUDA_CHECK_LAUNCH("equalize_tiled_kernel (fused)");
}

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

void launch_equalize(const EqualizeArgs& args, cudaStream_t stream)
{
    if (args.num_symbols == 0 || args.num_subcarriers == 0)
        return;
    with_user_tile(args.num_users, [&](auto up) {
        launch_equalize_for<decltype(up)::value>(args, stream);
    });
    MIMODET_CUDA_CHECK_LAUNCH("equalize_kernel");
}

} // namespace cuda
} // namespace mimodet
