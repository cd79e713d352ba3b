/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The fixed-complexity sphere decoders on the GPU, mirroring lib/core/sphere/fsd.cc step
 * by step (same ordering rule, the QR through the Cholesky factor of the ordered Gram
 * matrix in float64, the same SIC, list extension and LLR rules), so that the GPU gives
 * the CPU's decisions. One thread per subcarrier prepares; the search takes a group of
 * lanes per received vector where N, Q and the constellation allow (2-4 users of square
 * QPSK/16-QAM/64-QAM), else one thread per vector searches its whole tree. */

#include "core/mmse/numerics.h"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include <cuda_runtime.h>
#include <cuComplex.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace mimodet {
namespace cuda {

namespace {

constexpr int kMax = kSphereMaxStreams;

struct cdbl {
    double x, y;
};
__device__ __forceinline__ cdbl operator+(cdbl a, cdbl b) { return { a.x + b.x, a.y + b.y }; }
__device__ __forceinline__ cdbl operator-(cdbl a, cdbl b) { return { a.x - b.x, a.y - b.y }; }
__device__ __forceinline__ cdbl mul(cdbl a, cdbl b)
{
    return { a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x };
}
__device__ __forceinline__ cdbl conj(cdbl a) { return { a.x, -a.y }; }
__device__ __forceinline__ double norm2(cdbl a) { return a.x * a.x + a.y * a.y; }

/*! row[idx] for a run-time idx. By bit masks: a chain of `if (k == idx)` selects is turned
 * into an indexed array, which puts the whole matrix in local memory. */
template <int N>
__device__ __forceinline__ cdbl element(const cdbl (&row)[N], int idx)
{
    long long x = 0, y = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) {
        const long long m = -static_cast<long long>(k == idx);
        x |= __double_as_longlong(row[k].x) & m;
        y |= __double_as_longlong(row[k].y) & m;
    }
    return { __longlong_as_double(x), __longlong_as_double(y) };
}

/*! In place, the upper R with G = R^H R from G's upper triangle (the lower one is left
 * as it was); returns the smallest pivot (<= 0: not positive definite, R not usable;
 * later pivots are then 1). N is compile-time so that the matrix stays in registers. */
template <int N>
__device__ double cholesky_upper(cdbl (&a)[N][N])
{
    double smallest = 1e300;
    bool ok = true;
#pragma unroll
    for (int c = 0; c < N; ++c) {
#pragma unroll
        for (int i = 0; i < c; ++i) {
            cdbl v = a[i][c];
#pragma unroll
            for (int k = 0; k < i; ++k)
                v = v - mul(conj(a[k][i]), a[k][c]);
            a[i][c] = { v.x / a[i][i].x, v.y / a[i][i].x };
        }
        double d = a[c][c].x;
#pragma unroll
        for (int k = 0; k < c; ++k)
            d -= norm2(a[k][c]);
        if (ok)
            smallest = fmin(smallest, d);
        ok = ok && d > 0.0;
        a[c][c] = { ok ? sqrt(d) : 1.0, 0.0 };
    }
    return smallest;
}

//! In place, the inverse of a Hermitian positive definite matrix (Gauss-Jordan without
//! pivoting, each eliminated column's slot taking the inverse's column).
template <int N>
__device__ void invert_hpd(cdbl (&a)[N][N])
{
#pragma unroll
    for (int p = 0; p < N; ++p) {
        const double ip = 1.0 / a[p][p].x; // real: the pivots of an HPD matrix
        a[p][p] = { 1.0, 0.0 };
#pragma unroll
        for (int j = 0; j < N; ++j)
            a[p][j] = { a[p][j].x * ip, a[p][j].y * ip };
#pragma unroll
        for (int i = 0; i < N; ++i) {
            if (i == p)
                continue;
            const cdbl f = a[i][p];
            a[i][p] = { 0.0, 0.0 };
#pragma unroll
            for (int j = 0; j < N; ++j)
                a[i][j] = a[i][j] - mul(f, a[p][j]);
        }
    }
}

/* One thread per subcarrier, mirroring fsd.cc's prepare_fsd_channel: the ordering from
 * P = (G + eps I)^-1 over the usable users, each pick removed from P by its Schur
 * complement; then the Cholesky factor of the ordered Gram matrix and Q^H. One matrix
 * in registers at a time (G becomes P in place; G_p is formed again from H): with G, P
 * and G_p together the thread held 130-210 registers or put matrices in local memory. */
template <int N>
__device__ void prepare_one(const SpherePrepareArgs& a,
                            int sc,
                            const float2* h, // [B][N] of subcarrier sc
                            float2* rout,    // [N][N] of sc, elements `stride` apart
                            float2* qh,      // [N][B] of sc, elements `stride` apart
                            size_t stride)
{
    const int B = a.num_antennas;
    bool finite = true;
    cdbl m[N][N]; // G, then P, then G_p and R
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j < N; ++j)
            m[i][j] = { 0.0, 0.0 };
    for (int b = 0; b < B; ++b) {
        cdbl row[N];
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const float2 v = h[b * N + i];
            finite = finite && isfinite(v.x) && isfinite(v.y);
            row[i] = { v.x, v.y };
        }
#pragma unroll
        for (int i = 0; i < N; ++i)
#pragma unroll
            for (int j = i; j < N; ++j)
                m[i][j] = m[i][j] + mul(conj(row[i]), row[j]);
    }
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j < i; ++j)
            m[i][j] = conj(m[j][i]);
    double strongest = 0.0, total = 0.0;
#pragma unroll
    for (int u = 0; u < N; ++u) {
        strongest = fmax(strongest, m[u][u].x);
        total += m[u][u].x;
    }
    std::uint8_t* order = a.order + static_cast<size_t>(sc) * N;
    if (!finite || !(strongest > 0.0)) {
        a.status[sc] = kStatusBad;
        a.unusable[sc] = 0;
        a.floor[sc] = 0.0f;
#pragma unroll
        for (int c = 0; c < N; ++c)
            order[c] = static_cast<std::uint8_t>(c);
        for (int i = 0; i < N * N; ++i) // not read, but every output written
            rout[i * stride] = make_float2(0.0f, 0.0f);
        for (int i = 0; i < N * B; ++i)
            qh[i * stride] = make_float2(0.0f, 0.0f);
        if (a.counts)
            atomicAdd(a.counts + kChannelCountBad, 1ull);
        return;
    }
    const double mean = total / N;
    a.floor[sc] = static_cast<float>(mmse::kLoading * mean); // (the CPU's noise_floor)
    const double eps = mmse::kLoading * mean;
    unsigned usable = 0;
#pragma unroll
    for (int u = 0; u < N; ++u)
        if (!(m[u][u].x < mmse::kMinUserGain * strongest))
            usable |= 1u << u;
    // P over the usable users; the others' rows and columns of the identity.
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j < N; ++j) {
            const bool both = (usable >> i & 1u) && (usable >> j & 1u);
            if (!both)
                m[i][j] = { i == j ? 1.0 : 0.0, 0.0 };
            else if (i == j)
                m[i][j].x += eps;
        }
    invert_hpd<N>(m);
    int column_user[N];
    unsigned left = usable, placed = 0;
#pragma unroll
    for (int t = 0; t < N; ++t) {
        int pick = -1;
        if (left) { // the top T levels take the largest noise amplification
            double best = 0.0;
#pragma unroll
            for (int i = 0; i < N; ++i) {
                if (!(left >> i & 1u))
                    continue;
                const double d = m[i][i].x;
                if (pick < 0 || (t < a.full_levels ? d > best : d < best)) {
                    pick = i;
                    best = d;
                }
            }
            // The remaining users' P: the Schur complement that removes the pick.
            cdbl col[N];
#pragma unroll
            for (int i = 0; i < N; ++i)
                col[i] = element<N>(m[i], pick);
            const double inv_pkk = 1.0 / element<N>(col, pick).x;
            left &= ~(1u << pick);
#pragma unroll
            for (int i = 0; i < N; ++i)
#pragma unroll
                for (int j = 0; j < N; ++j)
                    if ((left >> i & 1u) && (left >> j & 1u)) {
                        const cdbl v = mul(col[i], conj(col[j]));
                        m[i][j] = { m[i][j].x - v.x * inv_pkk, m[i][j].y - v.y * inv_pkk };
                    }
        } else { // unusable users at the bottom, in their order
#pragma unroll
            for (int i = N - 1; i >= 0; --i)
                if (!(usable >> i & 1u) && !(placed >> i & 1u))
                    pick = i;
        }
        placed |= 1u << pick;
        column_user[N - 1 - t] = pick;
    }
    // The upper triangle of G_p, G of the columns' users, from H (indexed memory, not
    // indexed registers); loaded and formed again if a pivot is too small.
    auto form_gp = [&](double loading) {
#pragma unroll
        for (int i = 0; i < N; ++i)
#pragma unroll
            for (int j = i; j < N; ++j)
                m[i][j] = { i == j ? loading : 0.0, 0.0 };
        for (int b = 0; b < B; ++b) {
            cdbl row[N];
#pragma unroll
            for (int i = 0; i < N; ++i) {
                const float2 v = h[b * N + column_user[i]];
                row[i] = { v.x, v.y };
            }
#pragma unroll
            for (int i = 0; i < N; ++i)
#pragma unroll
                for (int j = i; j < N; ++j)
                    m[i][j] = m[i][j] + mul(conj(row[i]), row[j]);
        }
    };
    form_gp(0.0);
    bool regularized = false;
    if (cholesky_upper<N>(m) < mmse::kMinPivotRatio * strongest) {
        form_gp(mmse::kLoading * mean);
        cholesky_upper<N>(m);
        regularized = true;
    }
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j < N; ++j)
            rout[(i * N + j) * stride] =
                j < i ? make_float2(0.0f, 0.0f)
                      : make_float2(static_cast<float>(m[i][j].x),
                                    static_cast<float>(i == j ? 1.0 / m[i][i].x : m[i][j].y));
    int dead_count = 0;
#pragma unroll
    for (int c = 0; c < N; ++c) {
        const bool d = !(usable >> column_user[c] & 1u);
        dead_count += d ? 1 : 0;
        order[c] = static_cast<std::uint8_t>(column_user[c] | (d ? kSphereUnusable : 0));
    }
    // Q^H = R^-H H_p^H, column b by forward substitution.
    double inv_diag[N];
#pragma unroll
    for (int c = 0; c < N; ++c)
        inv_diag[c] = 1.0 / m[c][c].x;
    for (int b = 0; b < B; ++b) {
        cdbl x[N];
#pragma unroll
        for (int c = 0; c < N; ++c) {
            const float2 v = h[b * N + column_user[c]];
            cdbl acc = { v.x, -v.y };
#pragma unroll
            for (int k = 0; k < c; ++k)
                acc = acc - mul(conj(m[k][c]), x[k]);
            x[c] = { acc.x * inv_diag[c], acc.y * inv_diag[c] };
            qh[(c * B + b) * stride] =
                make_float2(static_cast<float>(x[c].x), static_cast<float>(x[c].y));
        }
    }
    a.status[sc] = regularized ? kStatusRegularized : kStatusOk;
    a.unusable[sc] = static_cast<std::uint8_t>(dead_count);
    if (a.counts) {
        if (regularized)
            atomicAdd(a.counts + kChannelCountRegularized, 1ull);
        if (dead_count)
            atomicAdd(a.counts + kChannelCountUnusableUsers,
                      static_cast<unsigned long long>(dead_count));
    }
}

constexpr int kPrepareThreads = 32;

//! Shared memory of the staged prepare kernel; more than kMaxStagedBytes: read directly.
constexpr size_t staged_bytes(int antennas, int users)
{
    return static_cast<size_t>(kPrepareThreads) * (antennas * users + 1) * sizeof(float2);
}
constexpr size_t kMaxStagedBytes = 48 * 1024;

/* One thread per subcarrier. R and Q^H are stored element-major ([e][N_sc]), so that the
 * threads of a warp, consecutive subcarriers, write and read each element in one run. A
 * thread's H is contiguous, so a warp's direct reads stride by whole matrices; staged, the
 * block moves them through shared memory in coalesced runs instead. */
template <int N, bool Staged>
__global__ void __launch_bounds__(kPrepareThreads) prepare_sphere_kernel(SpherePrepareArgs a)
{
    const int B = a.num_antennas, hn = B * N;
    const int first = blockIdx.x * kPrepareThreads;
    const int count = min(kPrepareThreads, a.num_subcarriers - first);
    const int sc = first + static_cast<int>(threadIdx.x);
    const size_t stride =
        a.state_stride ? a.state_stride : static_cast<size_t>(a.num_subcarriers);
    const float2* h = a.h + static_cast<size_t>(sc) * hn;
    if constexpr (Staged) {
        // Each thread's H padded by one element, so that a warp's accesses to its
        // threads' element e fall in different banks.
        extern __shared__ float2 tile[];
        const int hs = hn + 1;
        const size_t base = static_cast<size_t>(first);
#pragma unroll 4
        for (int i = threadIdx.x; i < count * hn; i += kPrepareThreads)
            tile[i / hn * hs + i % hn] = a.h[base * hn + i];
        __syncthreads();
        h = tile + threadIdx.x * hs;
    }
    if (sc < a.num_subcarriers)
        prepare_one<N>(a, sc, h, a.r + sc, a.qh + sc, stride);
}

__device__ __forceinline__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

__device__ __forceinline__ int slice(const SpherePoints& pts, float2 z)
{
    int best = 0;
    float best_d = INFINITY;
    for (int i = 0; i < pts.count; ++i) {
        const float dx = z.x - pts.p[i].x, dy = z.y - pts.p[i].y;
        const float d = dx * dx + dy * dy;
        if (d < best_d)
            best_d = d, best = i;
    }
    return best;
}

//! fsd.cc's complete_by_sic: levels from `from` down by SIC, every level's distance.
__device__ float complete_by_sic(const float2* r, // element e at r[e * stride]
                                 size_t stride,
                                 int n,
                                 const SpherePoints& pts,
                                 const float2* rotated,
                                 int from,
                                 unsigned char* point)
{
    float distance = 0.0f;
    for (int t = 0; t < n; ++t) {
        const int c = n - 1 - t;
        float2 rest = rotated[c];
        for (int j = c + 1; j < n; ++j) {
            const float2 v = cmul(r[(c * n + j) * stride], pts.p[point[j]]);
            rest.x -= v.x;
            rest.y -= v.y;
        }
        const float rcc = r[(c * n + c) * stride].x;
        if (t >= from)
            point[c] = static_cast<unsigned char>(
                slice(pts, make_float2(rest.x / rcc, rest.y / rcc)));
        const float ex = rest.x - rcc * pts.p[point[c]].x,
                    ey = rest.y - rcc * pts.p[point[c]].y;
        distance += ex * ex + ey * ey;
    }
    return distance;
}

// The clip of a subcarrier's LLRs: at most mmse::kLoadedLlrClip where the channel had to
// be loaded (the CPU's rule, lib/core/sphere/cpu_sphere_detector.cc).
__device__ __forceinline__ float loaded_clip(const SphereDetectArgs& a, size_t sc)
{
    return (a.status[sc] & kStatusRegularized) ? fminf(a.llr_clip, mmse::kLoadedLlrClip)
                                               : a.llr_clip;
}

struct Path {
    unsigned char point[kMax];
    float distance;
    int index; // in the FSD list: ties break as the CPU's sort does
};

__device__ __forceinline__ bool before(const Path& a, const Path& b)
{
    return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
}

// The state index of subcarrier sc of symbol sym (its frame's channel), and its N0.
__device__ __forceinline__ size_t state_index(const SphereDetectArgs& a,
                                              size_t sym,
                                              size_t sc)
{
    return a.frame_of_symbol
               ? sc + static_cast<size_t>(a.frame_of_symbol[sym]) * a.num_subcarriers
               : sc;
}
__device__ __forceinline__ float noise_of(const SphereDetectArgs& a, size_t sym)
{
    return a.frame_of_symbol ? a.frame_n0[a.frame_of_symbol[sym]] : a.n0;
}

__global__ void detect_sphere_kernel(SphereDetectArgs a)
{
    const size_t k = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t nsc = static_cast<size_t>(a.num_subcarriers);
    const size_t rs = a.state_stride ? a.state_stride : nsc; // of r and qh
    if (k >= a.num_symbols * nsc)
        return;
    const int B = a.num_antennas, n = a.num_users, Q = a.points.bits;
    const size_t sym = k / nsc, sc = state_index(a, sym, k % nsc); // (state: sc)
    const float2* y = a.y + k * B;
    float* llr = a.llr + k * n * Q;
    float2* x_hat = a.x_hat ? a.x_hat + k * n : nullptr;
    bool finite = true;
    for (int b = 0; b < B; ++b)
        finite = finite && isfinite(y[b].x) && isfinite(y[b].y);
    if (!finite)
        atomicAdd(a.bad_sample_count, 1ull);
    const std::uint8_t* order = a.order + sc * n;
    if (!finite || a.status[sc] & kStatusBad) {
        for (int i = 0; i < n * Q; ++i)
            llr[i] = 0.0f;
        if (x_hat)
            for (int u = 0; u < n; ++u)
                x_hat[u] = make_float2(0.0f, 0.0f);
        return;
    }
    const float2* r = a.r + sc;
    const float2* qh = a.qh + sc;
    float2 rotated[kMax];
    for (int c = 0; c < n; ++c) {
        float2 acc = make_float2(0.0f, 0.0f);
        for (int b = 0; b < B; ++b) {
            const float2 v = cmul(qh[(c * B + b) * rs], y[b]);
            acc.x += v.x;
            acc.y += v.y;
        }
        rotated[c] = acc;
    }
    const int M = a.points.count, T = min(a.full_levels, n);
    int combos = 1;
    for (int t = 0; t < T; ++t)
        combos *= M;
    const bool soft = a.list_paths > 0;
    const int keep = min(a.list_paths, combos);
    // Per column and bit the smallest distance with the bit 0 and 1 (soft), the N_iter
    // best paths (soft), the best path and the widest distance.
    float dmin[kMax * 8][2];
    if (soft)
        for (int i = 0; i < n * Q; ++i)
            dmin[i][0] = dmin[i][1] = INFINITY;
    Path best_list[kSphereMaxListPaths];
    int kept = 0;
    Path best;
    best.distance = INFINITY;
    best.index = 0;
    float widest = 0.0f;
    auto account = [&](const unsigned char* point, float d) {
        widest = fmaxf(widest, d);
        for (int c = 0; c < n; ++c) {
            const int shift = Q - 1;
            for (int bit = 0; bit < Q; ++bit) {
                const int v = (point[c] >> (shift - bit)) & 1;
                float& slot = dmin[c * Q + bit][v];
                slot = fminf(slot, d);
            }
        }
    };
    for (int combo = 0; combo < combos; ++combo) {
        Path p;
        int digits = combo;
        for (int t = 0; t < T; ++t) {
            p.point[n - 1 - t] = static_cast<unsigned char>(digits % M);
            digits /= M;
        }
        p.distance = complete_by_sic(r, rs, n, a.points, rotated, T, p.point);
        p.index = combo;
        if (before(p, best))
            best = p;
        if (soft) {
            account(p.point, p.distance);
            // keep the `keep` best in order
            if (kept < keep || before(p, best_list[kept - 1])) {
                int i = kept < keep ? kept++ : kept - 1;
                while (i > 0 && before(p, best_list[i - 1])) {
                    best_list[i] = best_list[i - 1];
                    --i;
                }
                best_list[i] = p;
            }
        }
    }
    if (soft && T < n)
        for (int j = 0; j < kept; ++j)
            for (int t = T; t < n; ++t) {
                const int c = n - 1 - t;
                for (int bit = 0; bit < Q; ++bit) {
                    unsigned char point[kMax];
                    for (int i = 0; i < n; ++i)
                        point[i] = best_list[j].point[i];
                    point[c] = static_cast<unsigned char>(point[c] ^ (1u << (Q - 1 - bit)));
                    const float d =
                        complete_by_sic(r, rs, n, a.points, rotated, t + 1, point);
                    account(point, d);
                }
            }
    const float inv_n0 = 1.0f / fmaxf(noise_of(a, k / nsc), a.floor[sc]);
    const float clip = loaded_clip(a, sc);
    for (int c = 0; c < n; ++c) {
        const int u = order[c] & ~kSphereUnusable;
        const bool dead = order[c] & kSphereUnusable;
        for (int bit = 0; bit < Q; ++bit) {
            float v;
            if (dead) {
                v = 0.0f;
            } else if (soft) {
                float d0 = dmin[c * Q + bit][0], d1 = dmin[c * Q + bit][1];
                if (!isfinite(d0))
                    d0 = widest;
                if (!isfinite(d1))
                    d1 = widest;
                v = (d0 - d1) * inv_n0;
            } else {
                v = ((best.point[c] >> (Q - 1 - bit)) & 1) ? 1.0f : -1.0f;
            }
            llr[u * Q + bit] = finish_llr(v, a.llr_sign, clip);
        }
        if (x_hat)
            x_hat[u] = dead ? make_float2(0.0f, 0.0f) : a.points.p[best.point[c]];
    }
}


/* The grouped kernel (roger2012 section 4.3): G lanes of a warp per received vector, lane
 * l searching the first-level branches l, l + G, ..., the SFSD's bit-flipped branches
 * spread over the lanes too, the group's results merged by shuffles. N users, Q bits per
 * symbol and G are compile-time, so that R, the rotated y and the per-bit minima stay in
 * registers; square QAM is sliced per axis instead of against every point. */
// Blocks of 4 warps: with 8, the FSD search took 6% longer on an H100.
constexpr int kGroupThreads = 128;

template <int G>
__device__ __forceinline__ unsigned group_mask()
{
    if constexpr (G == 32) {
        return 0xffffffffu;
    } else {
        const unsigned first = (threadIdx.x & 31u) & ~static_cast<unsigned>(G - 1);
        return ((1u << G) - 1u) << first;
    }
}

constexpr int next_pow2(int v)
{
    int p = 1;
    while (p < v)
        p *= 2;
    return p;
}

constexpr int log2_of(int v) { return v <= 1 ? 0 : 1 + log2_of(v / 2); }

//! (d, i) before (od, oi) in the CPU's order: shorter, then the lower branch index.
__device__ __forceinline__ void keep_first(float& d, int& i, float od, int oi)
{
    if (od < d || (od == d && oi < i)) {
        d = od;
        i = oi;
    }
}

//! 1.5 * 2^23: a float in [0, 2^22) plus it is rounded to an integer in the low mantissa.
constexpr float kRound = 12582912.0f;
//! What the grouped kernel's completion keeps of a sliced column.
enum : int { kLabels, kCells, kDistanceOnly };

template <int N, int Q, int G, int P, bool Soft, bool OneTop>
__global__ void __launch_bounds__(kGroupThreads) detect_sphere_grouped_kernel(SphereDetectArgs a)
{
    constexpr int M = 1 << Q, L = 1 << (Q / 2), NQ = N * Q;
    static_assert(G <= 32 && (G & (G - 1)) == 0, "a group is a power of two lanes of a warp");
    __shared__ float2 s_pts[M];
    __shared__ std::uint8_t s_grid[M];
    for (int i = threadIdx.x; i < M; i += blockDim.x) {
        s_pts[i] = a.points.p[i];
        s_grid[i] = a.points.grid[i];
    }
    /* With one lane per vector, a thread's LLRs are NQ contiguous floats and a warp's
     * 32 vectors contiguous: they go through shared memory (rows padded by one against
     * bank conflicts) and out in whole lines; written directly, every store touched 32
     * sectors for 4 bytes each. */
    constexpr bool Staged = G == 1 && !Soft;
    __shared__ float s_llr[Staged ? kGroupThreads * (NQ + 1) : 1];
    __syncthreads();
    const unsigned mask = group_mask<G>();
    const int lane = static_cast<int>(threadIdx.x) & (G - 1);
    const size_t nsc = static_cast<size_t>(a.num_subcarriers), total = a.num_symbols * nsc;
    const size_t rs = a.state_stride ? a.state_stride : nsc; // of r and qh
    const size_t k_own = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
    const int warp_lane = static_cast<int>(threadIdx.x) & 31;
    // Staged, a warp's lanes past the end stay for the copy-out, working on the last vector.
    if (Staged ? k_own - warp_lane >= total : k_own >= total)
        return; // the whole group (or warp): kGroupThreads is a multiple of G
    const bool active = k_own < total;
    const size_t k = active ? k_own : total - 1;
    const int B = a.num_antennas;
    const size_t sc = state_index(a, k / nsc, k % nsc); // of the state; y and LLRs: k
    const float2* y = a.y + k * B;
    float* llr = Staged ? s_llr + threadIdx.x * (NQ + 1) : a.llr + k * NQ;
    float2* x_hat = a.x_hat && active ? a.x_hat + k * N : nullptr;
    /* Staged, an erased vector runs the search on whatever its values are (clamped to the
     * grid, so every index stays in range) and writes zeros instead of its results: its
     * channel's order may never have been written. Its y is checked in the rotation,
     * read once. */
    bool finite = true, erased = false;
    auto count_erasure = [&]() {
        if (!finite && lane == 0 && active)
            atomicAdd(a.bad_sample_count, 1ull);
        erased = !finite || a.status[sc] & kStatusBad;
    };
    if constexpr (!Staged) {
        for (int b = lane; b < B; b += G)
            finite = finite && isfinite(y[b].x) && isfinite(y[b].y);
        finite = __all_sync(mask, finite);
        count_erasure();
    }
    /* The outputs: with one lane per vector, every column and bit at compile time (the
     * detection order in registers); with several, each lane its share at run time. */
    const std::uint8_t* order = a.order + sc * N;
    std::uint8_t order_r[G == 1 ? N : 1];
    if constexpr (G == 1)
#pragma unroll
        for (int c = 0; c < N; ++c)
            order_r[c] = order[c];
    const float sign = a.llr_sign, clip = loaded_clip(a, sc);
    // Column c's user's LLR of bit b; 0 for a user without a channel.
    auto put = [&](int c, int b, float value) {
        std::uint8_t o;
        if constexpr (G == 1)
            o = order_r[c];
        else
            o = order[c];
        if (Staged && erased)
            return;
        llr[(o & ~kSphereUnusable) * Q + b] =
            (o & kSphereUnusable) ? 0.0f : finish_llr(value, sign, clip);
    };
    // x_hat of the best path, column c's point label given by label(c).
    auto write_point = [&](auto&& label) {
        if (!x_hat)
            return;
        if (Staged && erased) {
#pragma unroll
            for (int u = 0; u < N; ++u)
                x_hat[u] = make_float2(0.0f, 0.0f);
            return;
        }
        auto one = [&](int c, std::uint8_t o) {
            x_hat[o & ~kSphereUnusable] =
                (o & kSphereUnusable) ? make_float2(0.0f, 0.0f) : s_pts[label(c)];
        };
        if constexpr (G == 1) {
#pragma unroll
            for (int c = 0; c < N; ++c)
                one(c, order_r[c]);
        } else {
            for (int c = lane; c < N; c += G)
                one(c, order[c]);
        }
    };
    if (!Staged && erased) {
        for (int i = lane; i < NQ; i += G)
            llr[i] = 0.0f;
        if (x_hat)
            for (int u = lane; u < N; u += G)
                x_hat[u] = make_float2(0.0f, 0.0f);
        return;
    }
    // R above the diagonal, R_cc, and per column the scale that turns the rest of a level
    // into grid units (the prepare kernel leaves 1 / R_cc in the diagonal's imaginary part).
    const float2* r = a.r + sc; // element e of R at r[e * rs]
    const float step = a.points.step, half_per_step = 0.5f / step, two_step = 2.0f * step;
    constexpr float half_span = 0.5f * (L - 1);
    const float origin = -half_span * two_step;
    float2 R[N][N];
#pragma unroll
    for (int c = 0; c < N; ++c)
#pragma unroll
        for (int j = c; j < N; ++j)
            R[c][j] = r[(c * N + j) * rs];
    float rcc[N], to_grid[N];
#pragma unroll
    for (int c = 0; c < N; ++c) {
        rcc[c] = R[c][c].x;
        to_grid[c] = R[c][c].y * half_per_step;
    }
    // Q^H y: one lane all of it, or lane c rotates y onto column c and shares it.
    float2 rot[N];
    if constexpr (G == 1) {
        // y read once; with an even number of antennas, two of them per 16-byte load.
        const float2* q = a.qh + sc; // element c B + b of Q^H at q[(c B + b) rs]
#pragma unroll
        for (int c = 0; c < N; ++c)
            rot[c] = make_float2(0.0f, 0.0f);
        auto add = [&](float2& acc, float2 u, float2 v) {
            const float2 w = cmul(u, v);
            acc.x += w.x;
            acc.y += w.y;
        };
        if (B % 2 == 0 && (reinterpret_cast<std::uintptr_t>(a.y) & 15u) == 0) {
            for (int b = 0; b < B; b += 2) {
                const float4 yv = *reinterpret_cast<const float4*>(y + b);
                finite = finite && isfinite(yv.x) && isfinite(yv.y) && isfinite(yv.z) &&
                         isfinite(yv.w);
#pragma unroll
                for (int c = 0; c < N; ++c) {
                    add(rot[c], q[(c * B + b) * rs], make_float2(yv.x, yv.y));
                    add(rot[c], q[(c * B + b + 1) * rs], make_float2(yv.z, yv.w));
                }
            }
        } else {
            for (int b = 0; b < B; ++b) {
                const float2 yv = y[b];
                finite = finite && isfinite(yv.x) && isfinite(yv.y);
#pragma unroll
                for (int c = 0; c < N; ++c)
                    add(rot[c], q[(c * B + b) * rs], yv);
            }
        }
        if constexpr (Staged)
            count_erasure();
    } else {
        static_assert(G == 1 || G >= N, "a lane per column");
        float2 acc = make_float2(0.0f, 0.0f);
        if (lane < N) {
            const float2* q = a.qh + sc + lane * B * rs;
            for (int b = 0; b < B; ++b) {
                const float2 v = cmul(q[b * rs], y[b]);
                acc.x += v.x;
                acc.y += v.y;
            }
        }
#pragma unroll
        for (int c = 0; c < N; ++c)
            rot[c] = make_float2(__shfl_sync(mask, acc.x, c, G), __shfl_sync(mask, acc.y, c, G));
    }
    // One fully expanded level (the default for 2-4 users) known at compile time.
    const int T = OneTop ? 1 : min(a.full_levels, N);
    // Column c's point nearest rest / R_cc, sliced per axis by float rounding: x and the
    // grid cell i L + q.
    auto slice = [&](int c, float2 rest, float2& x) -> unsigned {
        const float zi =
            fminf(fmaxf(fmaf(rest.x, to_grid[c], half_span), 0.0f), L - 1.0f);
        const float zq =
            fminf(fmaxf(fmaf(rest.y, to_grid[c], half_span), 0.0f), L - 1.0f);
        const float ri = zi + kRound, rq = zq + kRound;
        x = make_float2(fmaf(ri - kRound, two_step, origin),
                        fmaf(rq - kRound, two_step, origin));
        return static_cast<unsigned>(__float_as_int(ri) - __float_as_int(kRound)) * L +
               static_cast<unsigned>(__float_as_int(rq) - __float_as_int(kRound));
    };
    /* fsd.cc's complete_by_sic on a path packed 8 bits per column: the columns of the top
     * `from` levels (point labels) as they are, the others sliced per axis by float
     * arithmetic; the sliced columns get point labels (as_labels), grid cells i L + q
     * (as_cells) or nothing (distance_only: the path is not kept). */
    auto complete = [&](int from, unsigned& packed, auto labels) -> float {
        float2 x[N];
        float distance = 0.0f;
#pragma unroll
        for (int c = N - 1; c >= 0; --c) {
            float2 rest = rot[c];
#pragma unroll
            for (int j = c + 1; j < N; ++j) {
                rest.x -= R[c][j].x * x[j].x - R[c][j].y * x[j].y;
                rest.y -= R[c][j].x * x[j].y + R[c][j].y * x[j].x;
            }
            if (N - 1 - c < from) {
                x[c] = s_pts[(packed >> (8 * c)) & 0xffu];
            } else {
                const unsigned cell = slice(c, rest, x[c]);
                if constexpr (decltype(labels)::value != kDistanceOnly) {
                    const unsigned v = decltype(labels)::value == kLabels ? s_grid[cell] : cell;
                    packed = (packed & ~(0xffu << (8 * c))) | (v << (8 * c));
                }
            }
            const float ex = rest.x - rcc[c] * x[c].x, ey = rest.y - rcc[c] * x[c].y;
            distance += ex * ex + ey * ey;
        }
        return distance;
    };
    using as_labels = std::integral_constant<int, kLabels>;
    using as_cells = std::integral_constant<int, kCells>;
    using distance_only = std::integral_constant<int, kDistanceOnly>;
    // Branch idx's labels of the fully expanded levels (column N-1 the lowest digit).
    auto top_labels = [&](int idx) {
        unsigned packed = 0;
#pragma unroll
        for (int c = N - 1; c >= 0; --c)
            if (N - 1 - c < T) {
                packed |= static_cast<unsigned>(idx & (M - 1)) << (8 * c);
                idx >>= Q;
            }
        return packed;
    };
    auto bit_of = [](unsigned packed, int q) { // bit q = c Q + b of a packed path
        return (packed >> (8 * (q / Q) + Q - 1 - q % Q)) & 1u;
    };

    if constexpr (!Soft) {
        // Distances only in the search; the best branch's path is formed once after it.
        const int combos = 1 << (Q * T);
        float best_d = INFINITY;
        int best_i = -1;
        for (int idx = lane; idx < combos; idx += G) {
            unsigned p = top_labels(idx);
            const float d = complete(T, p, distance_only());
            if (best_i < 0 || d < best_d) {
                best_d = d;
                best_i = idx;
            }
        }
#pragma unroll
        for (int m = G / 2; m >= 1; m /= 2)
            keep_first(best_d, best_i, __shfl_xor_sync(mask, best_d, m, G),
                       __shfl_xor_sync(mask, best_i, m, G));
        unsigned best_p = top_labels(best_i);
        complete(T, best_p, as_cells());
        auto label = [&](int c) { // the top levels' point labels, the others' grid cells
            const unsigned v = (best_p >> (8 * c)) & 0xffu;
            return N - 1 - c < T ? v : static_cast<unsigned>(s_grid[v]);
        };
        auto put_bits = [&](int c) {
            const unsigned l = label(c);
#pragma unroll
            for (int b = 0; b < Q; ++b)
                put(c, b, (l >> (Q - 1 - b)) & 1u ? 1.0f : -1.0f);
        };
        if constexpr (G == 1) {
#pragma unroll
            for (int c = 0; c < N; ++c)
                put_bits(c);
        } else {
            for (int c = lane; c < N; c += G)
                put_bits(c);
        }
        write_point(label);
        if constexpr (Staged) {
            if (erased)
#pragma unroll
                for (int i = 0; i < NQ; ++i)
                    llr[i] = 0.0f;
            __syncwarp();
            const size_t first = k_own - warp_lane;
            const int count = static_cast<int>(min(static_cast<size_t>(32), total - first)) * NQ;
            const float* from = s_llr + (threadIdx.x - warp_lane) * (NQ + 1);
            float* to = a.llr + first * NQ;
            for (int e = warp_lane; e < count; e += 32)
                to[e] = from[e / NQ * (NQ + 1) + e % NQ];
        }
    } else {
        // One fully expanded level: branch lane + s G for s < P (grouped_supported).
        float pd[P];
        unsigned pp[P];
#pragma unroll
        for (int s = 0; s < P; ++s) {
            pp[s] = top_labels(lane + s * G);
            pd[s] = complete(1, pp[s], as_labels());
        }
        // The N_iter best branches, one merge each; path j kept by lane j % G in mine[j / G].
        constexpr int K = (kSphereMaxListPaths + G - 1) / G;
        const int keep = min(a.list_paths, M);
        unsigned taken[(P + 31) / 32] = {}, mine[K] = {}, best_p = 0;
        float best_d = 0.0f;
        for (int j = 0; j < keep; ++j) {
            float cd = INFINITY;
            int cs = -1;
            unsigned cp = 0;
#pragma unroll
            for (int s = 0; s < P; ++s)
                if (!(taken[s / 32] >> (s % 32) & 1u) && (cs < 0 || pd[s] < cd)) {
                    cd = pd[s];
                    cs = s;
                    cp = pp[s];
                }
            int ci = cs < 0 ? 0x7fffffff : lane + cs * G;
#pragma unroll
            for (int m = G / 2; m >= 1; m /= 2)
                keep_first(cd, ci, __shfl_xor_sync(mask, cd, m, G),
                           __shfl_xor_sync(mask, ci, m, G));
            const int owner = ci & (G - 1);
            const unsigned p = __shfl_sync(mask, cp, owner, G);
            if (lane == owner) {
#pragma unroll
                for (int s = 0; s < P; ++s)
                    if (s == ci / G)
                        taken[s / 32] |= 1u << (s % 32);
            }
            if (lane == j % G) {
#pragma unroll
                for (int i = 0; i < K; ++i)
                    if (i == j / G)
                        mine[i] = p;
            }
            if (j == 0) {
                best_d = cd;
                best_p = p;
            }
        }
        /* Per bit, the smallest distance of a path that differs there from the best
         * branch (`counter`), and of one that agrees (`same`: the best branch's own
         * distance unless a completed branch below it agrees, which is rare). Together
         * they are fsd.cc's minima over the whole list. */
        float counter[NQ], same[NQ];
#pragma unroll
        for (int q = 0; q < NQ; ++q) {
            counter[q] = INFINITY;
            same[q] = best_d;
        }
        float widest = 0.0f;
        bool below_best = false;
        auto account = [&](unsigned p, float d) {
            widest = fmaxf(widest, d);
            const unsigned differ = p ^ best_p;
#pragma unroll
            for (int q = 0; q < NQ; ++q)
                if (bit_of(differ, q))
                    counter[q] = fminf(counter[q], d);
            if (d < best_d) {
                below_best = true;
#pragma unroll
                for (int q = 0; q < NQ; ++q)
                    same[q] = fminf(same[q], bit_of(differ, q) ? INFINITY : d);
            }
        };
#pragma unroll
        for (int s = 0; s < P; ++s)
            account(pp[s], pd[s]);
        /* The list extension by kept path: lane j % G completes path j's (N-1) Q branches
         * with one bit flipped. A branch flipped at column c shares the path above c: the
         * distance there and those columns' interference on the columns below are formed
         * once per path, and only the columns below c are sliced again. Above c its bits
         * differ from the best path's where the kept path's do, so those counters take
         * the least flipped distance once per path rather than once per branch. */
#pragma unroll
        for (int i = 0; i < K; ++i) {
            if (lane + i * G >= keep)
                continue;
            const unsigned path = mine[i];
            float2 x[N];
#pragma unroll
            for (int c = 0; c < N; ++c)
                x[c] = s_pts[(path >> (8 * c)) & 0xffu];
            // base[c][cc], cc <= c: rot[cc] less the interference of the columns above c.
            float2 base[N][N];
#pragma unroll
            for (int cc = 0; cc < N - 1; ++cc) {
                float2 acc = rot[cc];
#pragma unroll
                for (int jj = N - 1; jj > cc; --jj) {
                    acc.x -= R[cc][jj].x * x[jj].x - R[cc][jj].y * x[jj].y;
                    acc.y -= R[cc][jj].x * x[jj].y + R[cc][jj].y * x[jj].x;
                    base[jj - 1][cc] = acc;
                }
            }
            float above[N], least[N], run = 0.0f;
#pragma unroll
            for (int c = N - 1; c >= 0; --c) {
                above[c] = run;
                least[c] = INFINITY;
                const float2 rest = c == N - 1 ? rot[c] : base[c][c];
                const float ex = rest.x - rcc[c] * x[c].x, ey = rest.y - rcc[c] * x[c].y;
                run += ex * ex + ey * ey;
            }
#pragma unroll
            for (int c = N - 2; c >= 0; --c) {
#pragma unroll
                for (int b = 0; b < Q; ++b) {
                    const unsigned flip = 1u << (Q - 1 - b);
                    unsigned p = path ^ (flip << (8 * c));
                    float2 xs[N];
                    xs[c] = s_pts[((path >> (8 * c)) & 0xffu) ^ flip];
                    const float ex = base[c][c].x - rcc[c] * xs[c].x,
                                ey = base[c][c].y - rcc[c] * xs[c].y;
                    float d = above[c] + (ex * ex + ey * ey);
#pragma unroll
                    for (int cc = c - 1; cc >= 0; --cc) {
                        float2 rest = base[c][cc];
#pragma unroll
                        for (int jj = c; jj > cc; --jj) {
                            rest.x -= R[cc][jj].x * xs[jj].x - R[cc][jj].y * xs[jj].y;
                            rest.y -= R[cc][jj].x * xs[jj].y + R[cc][jj].y * xs[jj].x;
                        }
                        const unsigned v = s_grid[slice(cc, rest, xs[cc])];
                        p = (p & ~(0xffu << (8 * cc))) | (v << (8 * cc));
                        const float fx = rest.x - rcc[cc] * xs[cc].x,
                                    fy = rest.y - rcc[cc] * xs[cc].y;
                        d += fx * fx + fy * fy;
                    }
                    widest = fmaxf(widest, d);
                    least[c] = fminf(least[c], d);
                    const unsigned differ = p ^ best_p;
#pragma unroll
                    for (int q = 0; q < (c + 1) * Q; ++q)
                        if (bit_of(differ, q))
                            counter[q] = fminf(counter[q], d);
                    if (d < best_d) {
                        below_best = true;
#pragma unroll
                        for (int q = 0; q < NQ; ++q)
                            if (!bit_of(differ, q))
                                same[q] = fminf(same[q], d);
                    }
                }
            }
            // The columns above each flipped one: where this path differs from the best.
            const unsigned differ = path ^ best_p;
            float m = INFINITY;
#pragma unroll
            for (int cc = 1; cc < N; ++cc) {
                m = fminf(m, least[cc - 1]);
#pragma unroll
                for (int q = cc * Q; q < (cc + 1) * Q; ++q)
                    if (bit_of(differ, q))
                        counter[q] = fminf(counter[q], m);
            }
        }
        // Reduce-scatter of the minima over the group: lane l ends with bits [l S, l S + S).
        constexpr int VP = next_pow2(NQ) > G ? next_pow2(NQ) : G, S = VP / G;
        float v[VP];
#pragma unroll
        for (int q = 0; q < VP; ++q)
            v[q] = q < NQ ? counter[q] : INFINITY;
        auto reduce_scatter = [&](float(&x)[VP]) {
#pragma unroll
            for (int s = 0; s < log2_of(G); ++s) {
                const int m = G >> (s + 1), half = VP >> (s + 1);
                const bool upper = lane & m;
#pragma unroll
                for (int i = 0; i < half; ++i) {
                    const float send = upper ? x[i] : x[i + half];
                    const float kept = upper ? x[i + half] : x[i];
                    x[i] = fminf(kept, __shfl_xor_sync(mask, send, m, G));
                }
            }
        };
        reduce_scatter(v);
        float w[VP];
#pragma unroll
        for (int q = 0; q < VP; ++q)
            w[q] = q < NQ ? same[q] : INFINITY;
        if (__any_sync(mask, below_best)) // else every lane's `same` is best_d throughout
            reduce_scatter(w);
#pragma unroll
        for (int m = G / 2; m >= 1; m /= 2)
            widest = fmaxf(widest, __shfl_xor_sync(mask, widest, m, G));
        const float inv_n0 = 1.0f / fmaxf(noise_of(a, k / nsc), a.floor[sc]);
#pragma unroll
        for (int i = 0; i < S; ++i) {
            const int q = lane * S + i;
            if (q < NQ) {
                const float d_same = w[i], d_counter = isfinite(v[i]) ? v[i] : widest;
                const bool one = (best_p >> (8 * (q / Q) + Q - 1 - q % Q)) & 1u;
                put(q / Q, q % Q, ((one ? d_counter : d_same) - (one ? d_same : d_counter)) * inv_n0);
            }
        }
        write_point([&](int c) { return (best_p >> (8 * c)) & 0xffu; });
    }
}

/* Lanes per vector. The hard FSD: one, every branch in one thread, nothing repeated per
 * lane nor merged (the grouped variants of 2 and 4 lanes executed 1.5 and 2 times the
 * instructions on an H100). The SFSD: 4 lanes (8 for 64-QAM, 8 branches each) keep the
 * list merges short and the registers of a lane's branches few. */
template <int Q, bool Soft>
constexpr int group_size()
{
    return Soft ? (Q == 6 ? 8 : 4) : 1;
}

//! Whether the grouped kernel takes these arguments.
bool grouped_supported(const SphereDetectArgs& a)
{
    const int N = a.num_users, Q = a.points.bits;
    if (N < 2 || N > 4 || (Q != 2 && Q != 4 && Q != 6) || a.points.levels != (1 << (Q / 2)))
        return false;
    // the SFSD: one fully expanded level, the default for 2-4 users
    return a.list_paths == 0 || std::min(a.full_levels, N) == 1;
}

template <int N, int Q, bool Soft>
void launch_grouped_kernel(const SphereDetectArgs& a, cudaStream_t stream)
{
    constexpr int G = group_size<Q, Soft>(), P = Soft ? (1 << Q) / G : 1;
    const size_t threads = a.num_symbols * static_cast<size_t>(a.num_subcarriers) * G;
    const unsigned blocks = static_cast<unsigned>((threads + kGroupThreads - 1) / kGroupThreads);
    // The SFSD has one fully expanded level always (grouped_supported).
    if (Soft || std::min(a.full_levels, N) == 1)
        detect_sphere_grouped_kernel<N, Q, G, P, Soft, true><<<blocks, kGroupThreads, 0, stream>>>(a);
    else if constexpr (!Soft)
        detect_sphere_grouped_kernel<N, Q, G, P, Soft, false><<<blocks, kGroupThreads, 0, stream>>>(a);
}

template <int N, int Q>
bool launch_grouped_for(const SphereDetectArgs& a, cudaStream_t stream)
{
    if (!grouped_supported(a))
        return false;
    if (a.list_paths > 0)
        launch_grouped_kernel<N, Q, true>(a, stream);
    else
        launch_grouped_kernel<N, Q, false>(a, stream);
    return true;
}

template <int N>
bool launch_grouped_users(const SphereDetectArgs& a, cudaStream_t stream)
{
    switch (a.points.bits) {
    case 2:
        return launch_grouped_for<N, 2>(a, stream);
    case 4:
        return launch_grouped_for<N, 4>(a, stream);
    case 6:
        return launch_grouped_for<N, 6>(a, stream);
    }
    return false;
}

bool launch_grouped(const SphereDetectArgs& a, cudaStream_t stream)
{
    switch (a.num_users) {
    case 2:
        return launch_grouped_users<2>(a, stream);
    case 3:
        return launch_grouped_users<3>(a, stream);
    case 4:
        return launch_grouped_users<4>(a, stream);
    }
    return false;
}

} // namespace

void launch_prepare_sphere(const SpherePrepareArgs& args, cudaStream_t stream)
{
    // Few threads per block: a slot of LTE is 72-1200 subcarriers, one thread each, and
    // spread over many SMs they finish sooner.
    const int blocks = (args.num_subcarriers + kPrepareThreads - 1) / kPrepareThreads;
    const size_t bytes = staged_bytes(args.num_antennas, args.num_users);
    const bool staged = bytes <= kMaxStagedBytes;
    switch (args.num_users) {
#define MIMODET_PREPARE_CASE(n)                                                              \
    case n:                                                                                 \
        if (staged)                                                                         \
            prepare_sphere_kernel<n, true><<<blocks, kPrepareThreads, bytes, stream>>>(args); \
        else                                                                                \
            prepare_sphere_kernel<n, false><<<blocks, kPrepareThreads, 0, stream>>>(args);  \
        break;
        MIMODET_PREPARE_CASE(1)
        MIMODET_PREPARE_CASE(2)
        MIMODET_PREPARE_CASE(3)
        MIMODET_PREPARE_CASE(4)
        MIMODET_PREPARE_CASE(5)
        MIMODET_PREPARE_CASE(6)
        MIMODET_PREPARE_CASE(7)
        MIMODET_PREPARE_CASE(8)
#undef MIMODET_PREPARE_CASE
    default:
        throw std::invalid_argument("launch_prepare_sphere: 1 to 8 users");
    }
    MIMODET_CUDA_CHECK(cudaGetLastError());
}

void find_sphere_grid(SpherePoints& pts)
{
    pts.levels = 0;
    pts.step = 0.0f;
    int levels = 1;
    while (levels * levels < pts.count)
        ++levels;
    if (levels < 2 || levels * levels != pts.count)
        return;
    float widest = 0.0f;
    for (int i = 0; i < pts.count; ++i)
        widest = std::max({ widest, std::fabs(pts.p[i].x), std::fabs(pts.p[i].y) });
    const float step = widest / static_cast<float>(levels - 1);
    if (!(step > 0.0f))
        return;
    bool taken[256] = {};
    auto cell = [&](float coordinate, int* index) {
        const float f = 0.5f * (coordinate / step + static_cast<float>(levels - 1));
        *index = static_cast<int>(std::lround(f));
        return std::fabs(f - static_cast<float>(*index)) < 1e-3f && *index >= 0 &&
               *index < levels;
    };
    std::uint8_t grid[256];
    for (int p = 0; p < pts.count; ++p) {
        int i = 0, q = 0;
        if (!cell(pts.p[p].x, &i) || !cell(pts.p[p].y, &q) || taken[i * levels + q])
            return;
        taken[i * levels + q] = true;
        grid[i * levels + q] = static_cast<std::uint8_t>(p);
    }
    std::copy(grid, grid + pts.count, pts.grid);
    pts.levels = levels;
    pts.step = step;
}

void launch_detect_sphere(const SphereDetectArgs& args, cudaStream_t stream)
{
    const size_t total = args.num_symbols * static_cast<size_t>(args.num_subcarriers);
    if (total == 0)
        return;
    if (!launch_grouped(args, stream)) {
        const int threads = 64;
        const unsigned blocks = static_cast<unsigned>((total + threads - 1) / threads);
        detect_sphere_kernel<<<blocks, threads, 0, stream>>>(args);
    }
    MIMODET_CUDA_CHECK(cudaGetLastError());
}

} // namespace cuda
} // namespace mimodet
