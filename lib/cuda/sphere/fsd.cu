/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The fixed-complexity sphere decoders on the GPU, mirroring lib/core/sphere/fsd.cc step
 * by step (same ordering rule, the QR through the Cholesky factor of the ordered Gram
 * matrix in float64, the same SIC, list extension and LLR rules), so that the GPU gives
 * the CPU's decisions. First version: one thread per subcarrier prepares, one thread per
 * (symbol, subcarrier) vector searches its whole tree. */

#include "core/mmse/numerics.h"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include <cuda_runtime.h>
#include <cuComplex.h>

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

//! Upper R with G = R^H R; the smallest pivot (<= 0: not positive definite).
__device__ double cholesky_upper(const cdbl (*g)[kMax], int n, cdbl (*r)[kMax])
{
    double smallest = 1e300;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            r[i][j] = { 0.0, 0.0 };
    for (int c = 0; c < n; ++c) {
        for (int i = 0; i < c; ++i) {
            cdbl v = g[i][c];
            for (int k = 0; k < i; ++k)
                v = v - mul(conj(r[k][i]), r[k][c]);
            r[i][c] = { v.x / r[i][i].x, v.y / r[i][i].x };
        }
        double d = g[c][c].x;
        for (int k = 0; k < c; ++k)
            d -= norm2(r[k][c]);
        smallest = fmin(smallest, d);
        if (!(d > 0.0))
            return smallest;
        r[c][c] = { sqrt(d), 0.0 };
    }
    return smallest;
}

//! Diagonal of the inverse of a Hermitian positive definite k x k matrix (Gauss-Jordan).
__device__ void inverse_diagonal(cdbl (*a)[kMax], int k, double* diag)
{
    cdbl inv[kMax][kMax];
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j)
            inv[i][j] = { i == j ? 1.0 : 0.0, 0.0 };
    for (int p = 0; p < k; ++p) {
        const cdbl piv = a[p][p];
        const double den = norm2(piv);
        const cdbl ip = { piv.x / den, -piv.y / den }; // 1 / piv
        for (int j = 0; j < k; ++j) {
            a[p][j] = mul(a[p][j], ip);
            inv[p][j] = mul(inv[p][j], ip);
        }
        for (int i = 0; i < k; ++i) {
            if (i == p)
                continue;
            const cdbl f = a[i][p];
            for (int j = 0; j < k; ++j) {
                a[i][j] = a[i][j] - mul(f, a[p][j]);
                inv[i][j] = inv[i][j] - mul(f, inv[p][j]);
            }
        }
    }
    for (int i = 0; i < k; ++i)
        diag[i] = inv[i][i].x;
}

__global__ void prepare_sphere_kernel(SpherePrepareArgs a)
{
    const int sc = blockIdx.x * blockDim.x + threadIdx.x;
    if (sc >= a.num_subcarriers)
        return;
    const int B = a.num_antennas, n = a.num_users;
    const float2* h = a.h + static_cast<size_t>(sc) * B * n;
    double energy[kMax];
    bool finite = true;
    cdbl g[kMax][kMax];
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            g[i][j] = { 0.0, 0.0 };
    for (int b = 0; b < B; ++b)
        for (int i = 0; i < n; ++i) {
            const float2 vi = h[b * n + i];
            finite = finite && isfinite(vi.x) && isfinite(vi.y);
            const cdbl ci = { vi.x, vi.y };
            for (int j = 0; j < n; ++j) {
                const float2 vj = h[b * n + j];
                g[i][j] = g[i][j] + mul(conj(ci), cdbl{ vj.x, vj.y });
            }
        }
    double strongest = 0.0, total = 0.0;
    for (int u = 0; u < n; ++u) {
        energy[u] = g[u][u].x;
        strongest = fmax(strongest, energy[u]);
        total += energy[u];
    }
    std::uint8_t* order = a.order + static_cast<size_t>(sc) * n;
    if (!finite || !(strongest > 0.0)) {
        a.status[sc] = kStatusBad;
        a.unusable[sc] = 0;
        a.floor[sc] = 0.0f;
        for (int c = 0; c < n; ++c)
            order[c] = static_cast<std::uint8_t>(c);
        if (a.counts)
            atomicAdd(a.counts + kChannelCountBad, 1ull);
        return;
    }
    const double mean = total / n;
    a.floor[sc] = static_cast<float>(mean / mmse::kMaxSinr);
    const double eps = mmse::kLoading * mean;
    int remaining[kMax], dead[kMax], nrem = 0, ndead = 0, column_user[kMax];
    bool unusable[kMax];
    for (int u = 0; u < n; ++u) {
        unusable[u] = energy[u] < mmse::kMinUserGain * strongest;
        if (unusable[u])
            dead[ndead++] = u;
        else
            remaining[nrem++] = u;
    }
    // The ordering of fsd.cc: the top T levels take the largest noise amplification.
    int t = 0;
    while (nrem > 0) {
        cdbl sub[kMax][kMax];
        for (int i = 0; i < nrem; ++i)
            for (int j = 0; j < nrem; ++j) {
                sub[i][j] = g[remaining[i]][remaining[j]];
                if (i == j)
                    sub[i][j].x += eps;
            }
        double diag[kMax];
        inverse_diagonal(sub, nrem, diag);
        int pick = 0;
        for (int i = 1; i < nrem; ++i)
            if (t < a.full_levels ? diag[i] > diag[pick] : diag[i] < diag[pick])
                pick = i;
        column_user[n - 1 - t] = remaining[pick];
        for (int i = pick; i + 1 < nrem; ++i)
            remaining[i] = remaining[i + 1];
        --nrem;
        ++t;
    }
    for (int k = 0; k < ndead; ++k)
        column_user[n - 1 - t++] = dead[k];
    cdbl gp[kMax][kMax], r[kMax][kMax];
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            gp[i][j] = g[column_user[i]][column_user[j]];
    bool regularized = false;
    if (cholesky_upper(gp, n, r) < mmse::kMinPivotRatio * strongest) {
        for (int i = 0; i < n; ++i)
            gp[i][i].x += mmse::kLoading * mean;
        cholesky_upper(gp, n, r);
        regularized = true;
    }
    float2* rout = a.r + static_cast<size_t>(sc) * n * n;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            rout[i * n + j] = make_float2(static_cast<float>(r[i][j].x),
                                          static_cast<float>(r[i][j].y));
    int dead_count = 0;
    for (int c = 0; c < n; ++c) {
        const bool d = unusable[column_user[c]];
        dead_count += d ? 1 : 0;
        order[c] = static_cast<std::uint8_t>(column_user[c] | (d ? kSphereUnusable : 0));
    }
    // Q^H = R^-H H_p^H, column b by forward substitution.
    float2* qh = a.qh + static_cast<size_t>(sc) * n * B;
    for (int b = 0; b < B; ++b) {
        cdbl x[kMax];
        for (int c = 0; c < n; ++c) {
            const float2 v = h[b * n + column_user[c]];
            cdbl acc = { v.x, -v.y };
            for (int k = 0; k < c; ++k)
                acc = acc - mul(conj(r[k][c]), x[k]);
            x[c] = { acc.x / r[c][c].x, acc.y / r[c][c].x };
            qh[c * B + b] = make_float2(static_cast<float>(x[c].x), static_cast<float>(x[c].y));
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
__device__ float complete_by_sic(const float2* r,
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
            const float2 v = cmul(r[c * n + j], pts.p[point[j]]);
            rest.x -= v.x;
            rest.y -= v.y;
        }
        const float rcc = r[c * n + c].x;
        if (t >= from)
            point[c] = static_cast<unsigned char>(
                slice(pts, make_float2(rest.x / rcc, rest.y / rcc)));
        const float ex = rest.x - rcc * pts.p[point[c]].x,
                    ey = rest.y - rcc * pts.p[point[c]].y;
        distance += ex * ex + ey * ey;
    }
    return distance;
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

__global__ void detect_sphere_kernel(SphereDetectArgs a)
{
    const size_t k = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t nsc = static_cast<size_t>(a.num_subcarriers);
    if (k >= a.num_symbols * nsc)
        return;
    const int B = a.num_antennas, n = a.num_users, Q = a.points.bits;
    const size_t sym = k / nsc, sc = k % nsc;
    const float2* y = a.y + (sym * nsc + sc) * B;
    float* llr = a.llr + (sym * nsc + sc) * n * Q;
    float2* x_hat = a.x_hat ? a.x_hat + (sym * nsc + sc) * n : nullptr;
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
    const float2* r = a.r + sc * n * n;
    const float2* qh = a.qh + sc * n * B;
    float2 rotated[kMax];
    for (int c = 0; c < n; ++c) {
        float2 acc = make_float2(0.0f, 0.0f);
        for (int b = 0; b < B; ++b) {
            const float2 v = cmul(qh[c * B + b], y[b]);
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
        p.distance = complete_by_sic(r, n, a.points, rotated, T, p.point);
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
                    const float d = complete_by_sic(r, n, a.points, rotated, t + 1, point);
                    account(point, d);
                }
            }
    const float inv_n0 = 1.0f / fmaxf(a.n0, a.floor[sc]);
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
            llr[u * Q + bit] = fminf(fmaxf(a.llr_sign * v, -a.llr_clip), a.llr_clip);
        }
        if (x_hat)
            x_hat[u] = dead ? make_float2(0.0f, 0.0f) : a.points.p[best.point[c]];
    }
}

} // namespace

void launch_prepare_sphere(const SpherePrepareArgs& args, cudaStream_t stream)
{
    const int threads = 64;
    const int blocks = (args.num_subcarriers + threads - 1) / threads;
    prepare_sphere_kernel<<<blocks, threads, 0, stream>>>(args);
    MIMODET_CUDA_CHECK(cudaGetLastError());
}

void launch_detect_sphere(const SphereDetectArgs& args, cudaStream_t stream)
{
    const size_t total = args.num_symbols * static_cast<size_t>(args.num_subcarriers);
    if (total == 0)
        return;
    const int threads = 64;
    const unsigned blocks = static_cast<unsigned>((total + threads - 1) / threads);
    detect_sphere_kernel<<<blocks, threads, 0, stream>>>(args);
    MIMODET_CUDA_CHECK(cudaGetLastError());
}

} // namespace cuda
} // namespace mimodet
