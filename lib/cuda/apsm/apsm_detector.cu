/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cuda/apsm/apsm_detector.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_detector.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimodet {
namespace cuda {

namespace {

constexpr int kThreads = 256; // 16 x 16: a sample group (ty) by an entry group (tx)
constexpr int kSamples = 64;  // real samples per block: both of 32 received vectors
constexpr int kVectors = kSamples / 2;
constexpr int kEntries = 64;  // dictionary entries per shared-memory tile
constexpr int kGroup = 16;    // threads sharing a sample group (a half warp)
constexpr std::size_t kMaxApsmUsers = 16; // users padded to at most 16 accumulators

struct ApsmArgs {
    const float2* r; // [count][M]
    std::size_t count;
    int antennas, users, tiles, tiles_per_split;
    int dp;                  // entries padded to whole tiles
    const float* dictionary; // [LP][DP], dimension-major: Re part at 0.., Im part at LP/2..
    const float* norm2;      // [DP]
    const float* gamma;      // [KP][DP], times w_G; 0 for linear-only users and padding
    const float* linear;     // [KP][LP], times w_L, laid out as the dictionary
    float inv_scale, inv_two_var;
    float* partial;    // [splits][count][K][2] when the dictionary is split over blocks
    unsigned* tickets; // [sample tiles], zero between launches
    float* out;        // [count][K][2]
    unsigned long long* erased;
};

/* mehlhose2022 section 3.3.3's balanced ordering, as a matrix product: a block holds 64
 * real samples (both of 32 received vectors: r_1 = [Re; Im] and r_2 = [Im; -Re]) in shared
 * memory for the whole walk and stages 64 dictionary entries a tile; a thread computes the
 * 4 x 4 dot products of 4 samples and 4 entries, two float4 loads for 16 multiply-adds a
 * dimension, then their kernel values and all users' sums for its 4 samples. The 16
 * threads of a sample group (a half warp) add their sums by shuffles at the end. The
 * squared distance is ||d||^2 + ||x||^2 - 2 d.x. LP: a real sample's length 2M padded to
 * a power of two (zero in the sample, the dictionary and the linear part); KP: users
 * padded. With the dictionary split over gridDim.y blocks, each writes its partial sums
 * and the last of a sample tile to finish (a ticket) adds them in split order, so results
 * do not depend on which block ends first, and no memset or atomic add is needed. */
template <int LP, int KP>
__global__ void __launch_bounds__(kThreads, 2) apsm_detect_kernel(ApsmArgs a)
{
    constexpr int H = LP / 2;
    __shared__ __align__(16) float s_x[LP][kSamples];
    __shared__ __align__(16) float s_d[LP][kEntries];
    __shared__ __align__(16) float s_g[KP][kEntries];
    __shared__ __align__(16) float s_nd[kEntries];
    __shared__ float s_nx[kSamples];
    __shared__ int s_ok[kVectors];
    __shared__ bool s_last;
    const int tid = threadIdx.x, tx = tid % kGroup, ty = tid / kGroup;
    const std::size_t v0 = static_cast<std::size_t>(blockIdx.x) * kVectors;
    const int vectors = static_cast<int>(min(static_cast<std::size_t>(kVectors), a.count - v0));

    if (tid < kVectors)
        s_ok[tid] = 1;
    __syncthreads();
    for (int i = tid; i < kVectors * H; i += kThreads) {
        const int vl = i / H, m = i % H;
        float re = 0.0f, im = 0.0f;
        if (vl < vectors && m < a.antennas) {
            const float2 z = a.r[(v0 + vl) * a.antennas + m];
            if (isfinite(z.x) && isfinite(z.y)) { // a bad vector is erased, its samples zero
                re = z.x * a.inv_scale;
                im = z.y * a.inv_scale;
            } else {
                s_ok[vl] = 0;
            }
        }
        s_x[m][2 * vl] = re;
        s_x[H + m][2 * vl] = im;
        s_x[m][2 * vl + 1] = im;
        s_x[H + m][2 * vl + 1] = -re;
    }
    __syncthreads();
    if (tid < kSamples) {
        float n = 0.0f;
#pragma unroll
        for (int l = 0; l < LP; ++l)
            n = fmaf(s_x[l][tid], s_x[l][tid], n);
        s_nx[tid] = n;
    }
    __syncthreads();
    float nx[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
        nx[i] = s_nx[ty * 4 + i];

    float acc[4][KP];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int k = 0; k < KP; ++k)
            acc[i][k] = 0.0f;
    const int first = blockIdx.y * a.tiles_per_split,
              last = min(a.tiles, first + a.tiles_per_split);
    for (int tile = first; tile < last; ++tile) {
        const int base = tile * kEntries;
        __syncthreads(); // the previous tile is used up
        for (int i = tid; i < LP * kEntries / 4; i += kThreads) {
            const int l = i / (kEntries / 4), e4 = i % (kEntries / 4);
            reinterpret_cast<float4*>(s_d[l])[e4] =
                reinterpret_cast<const float4*>(a.dictionary + static_cast<std::size_t>(l) * a.dp + base)[e4];
        }
        for (int i = tid; i < KP * kEntries / 4; i += kThreads) {
            const int k = i / (kEntries / 4), e4 = i % (kEntries / 4);
            reinterpret_cast<float4*>(s_g[k])[e4] =
                reinterpret_cast<const float4*>(a.gamma + static_cast<std::size_t>(k) * a.dp + base)[e4];
        }
        if (tid < kEntries / 4)
            reinterpret_cast<float4*>(s_nd)[tid] = reinterpret_cast<const float4*>(a.norm2 + base)[tid];
        __syncthreads();
        float dot[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                dot[i][j] = 0.0f;
#pragma unroll
        for (int l = 0; l < LP; ++l) {
            const float4 xv = reinterpret_cast<const float4*>(s_x[l])[ty];
            const float4 dv = reinterpret_cast<const float4*>(s_d[l])[tx];
            const float xs[4] = { xv.x, xv.y, xv.z, xv.w }, ds[4] = { dv.x, dv.y, dv.z, dv.w };
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    dot[i][j] = fmaf(xs[i], ds[j], dot[i][j]);
        }
        const float4 ndv = reinterpret_cast<const float4*>(s_nd)[tx];
        const float nd[4] = { ndv.x, ndv.y, ndv.z, ndv.w };
        float kv[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                kv[i][j] = __expf(-fmaxf(nd[j] + nx[i] - 2.0f * dot[i][j], 0.0f) * a.inv_two_var);
#pragma unroll
        for (int k = 0; k < KP; ++k) {
            const float4 gv = reinterpret_cast<const float4*>(s_g[k])[tx];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                acc[i][k] = fmaf(gv.x, kv[i][0],
                                 fmaf(gv.y, kv[i][1], fmaf(gv.z, kv[i][2], fmaf(gv.w, kv[i][3], acc[i][k]))));
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int k = 0; k < KP; ++k)
#pragma unroll
            for (int o = kGroup / 2; o > 0; o /= 2)
                acc[i][k] += __shfl_xor_sync(0xffffffffu, acc[i][k], o);

    // Lane tx of the group writes the (sample, user) sums numbered tx, tx + 16, ...
    const bool split = gridDim.y > 1;
    const std::size_t stride = a.count * a.users * 2;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int k = 0; k < KP; ++k) {
            const int s = ty * 4 + i, vl = s / 2;
            if ((i * KP + k) % kGroup != tx || k >= a.users || vl >= vectors)
                continue;
            float value = acc[i][k];
            if (blockIdx.y == 0)
#pragma unroll
                for (int l = 0; l < LP; ++l)
                    value = fmaf(a.linear[k * LP + l], s_x[l][s], value);
            const std::size_t idx = ((v0 + vl) * a.users + k) * 2 + (s & 1);
            if (split)
                a.partial[blockIdx.y * stride + idx] = value;
            else
                a.out[idx] = s_ok[vl] ? value : 0.0f;
        }
    if (split) {
        __threadfence(); // the partial sums are visible before the ticket is taken
        __syncthreads();
        if (tid == 0)
            s_last = atomicAdd(a.tickets + blockIdx.x, 1u) == gridDim.y - 1;
        __syncthreads();
        if (!s_last)
            return;
        __threadfence();
        const std::size_t begin = v0 * a.users * 2, n = static_cast<std::size_t>(vectors) * a.users * 2;
        for (std::size_t i = tid; i < n; i += kThreads) {
            float sum = 0.0f;
            for (unsigned y = 0; y < gridDim.y; ++y)
                sum += __ldcg(a.partial + y * stride + begin + i);
            a.out[begin + i] = s_ok[i / (a.users * 2)] ? sum : 0.0f;
        }
        if (tid == 0)
            a.tickets[blockIdx.x] = 0; // ready for the next launch
    }
    if (tid < vectors && !s_ok[tid]) // counted once per vector
        atomicAdd(a.erased, 1ull);
}

/* Calls f<LP, KP>() for the instantiation of the detector's sizes. */
template <template <int, int> class F, typename... Args>
auto dispatch(std::size_t lp, std::size_t kp, Args&&... args)
{
#define MIMODET_APSM_KP(LP)                                                                      \
    switch (kp) {                                                                                \
    case 1: return F<LP, 1>::run(args...);                                                       \
    case 2: return F<LP, 2>::run(args...);                                                       \
    case 4: return F<LP, 4>::run(args...);                                                       \
    case 8: return F<LP, 8>::run(args...);                                                       \
    default: return F<LP, 16>::run(args...);                                                     \
    }
    switch (lp) {
    case 8: MIMODET_APSM_KP(8)
    case 16: MIMODET_APSM_KP(16)
    case 32: MIMODET_APSM_KP(32)
    default: MIMODET_APSM_KP(64)
    }
#undef MIMODET_APSM_KP
}

template <int LP, int KP>
struct Launch {
    static int run(const ApsmArgs& a, dim3 grid, cudaStream_t s)
    {
        apsm_detect_kernel<LP, KP><<<grid, kThreads, 0, s>>>(a);
        return 0;
    }
};

template <int LP, int KP>
struct Occupancy {
    static int run()
    {
        int n = 0;
        MIMODET_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &n, apsm_detect_kernel<LP, KP>, kThreads, 0));
        return std::max(n, 1);
    }
};

std::size_t padded(std::size_t n, std::size_t least)
{
    std::size_t p = least;
    while (p < n)
        p *= 2;
    return p;
}

} // namespace

struct CudaApsmDetector::Impl {
    int device = 0, slots = 1; // slots: blocks resident on the whole GPU at once
    std::size_t M = 0, K = 0, LP = 0, KP = 0, D = 0, DP = 0;
    float inv_scale = 1.0f, inv_two_var = 1.0f;
    std::unique_ptr<Buffer<float>> dictionary, norm2, gamma, linear;
    std::unique_ptr<Buffer<unsigned long long>> erased;
    std::unique_ptr<Buffer<float>> partial;   // split sums, grown as needed
    std::unique_ptr<Buffer<unsigned>> tickets; // a counter per sample tile, grown as needed
    std::unique_ptr<Buffer<cf32>> r, out;      // staging of host calls, grown as needed
};

CudaApsmDetector::CudaApsmDetector(const apsm::ApsmReceiver& rx, int device)
    : d_impl(std::make_unique<Impl>())
{
    Impl& m = *d_impl;
    if (!rx.trained())
        throw std::invalid_argument("CudaApsmDetector: the receiver is not trained");
    m.M = rx.antennas();
    m.K = rx.users();
    if (m.M > kMaxAntennas)
        throw std::invalid_argument("CudaApsmDetector: at most " + std::to_string(kMaxAntennas) +
                                    " antennas, not " + std::to_string(m.M));
    if (m.K > kMaxApsmUsers)
        throw std::invalid_argument("CudaApsmDetector: at most " + std::to_string(kMaxApsmUsers) +
                                    " users, not " + std::to_string(m.K));
    m.device = device;
    MIMODET_CUDA_CHECK(cudaSetDevice(device));
    int sms = 1;
    MIMODET_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    m.LP = padded(2 * m.M, 8);
    m.KP = padded(m.K, 1);
    m.slots = sms * dispatch<Occupancy>(m.LP, m.KP);
    m.D = rx.dictionary_size();
    m.DP = (m.D + kEntries - 1) / kEntries * kEntries; // whole tiles; padding has gamma 0
    const std::size_t H = m.LP / 2, L = 2 * m.M;
    const apsm::ApsmParams& p = rx.params();
    m.inv_scale = static_cast<float>(1.0 / rx.input_scale());
    m.inv_two_var = static_cast<float>(1.0 / (2.0 * p.kernel_variance));
    auto place = [&](std::size_t l) { return l < m.M ? l : H + (l - m.M); }; // Im part at LP/2
    std::vector<float> dict(m.LP * m.DP, 0.0f), norm2(m.DP, 0.0f), gamma(m.KP * m.DP, 0.0f),
        linear(m.KP * m.LP, 0.0f);
    const std::vector<double>& src = rx.dictionary();
    for (std::size_t i = 0; i < m.D; ++i)
        for (std::size_t l = 0; l < L; ++l) {
            const float v = static_cast<float>(src[i * L + l]);
            dict[place(l) * m.DP + i] = v;
            norm2[i] += v * v;
        }
    for (std::size_t k = 0; k < m.K; ++k) {
        const apsm::ApsmFilter& f = rx.filter(k);
        if (!f.linear_only)
            for (std::size_t i = 0; i < m.D; ++i)
                gamma[k * m.DP + i] = static_cast<float>(p.weight_gaussian * f.coefficient[i]);
        for (std::size_t l = 0; l < L; ++l)
            linear[k * m.LP + place(l)] = static_cast<float>(p.weight_linear * f.linear[l]);
    }
    auto upload = [](const std::vector<float>& v) {
        auto b = std::make_unique<Buffer<float>>(std::max<std::size_t>(v.size(), 1), false);
        copy_to_device(b->get(), v.data(), v.size() * sizeof(float));
        return b;
    };
    m.dictionary = upload(dict);
    m.norm2 = upload(norm2);
    m.gamma = upload(gamma);
    m.linear = upload(linear);
    m.erased = std::make_unique<Buffer<unsigned long long>>(1, false);
    MIMODET_CUDA_CHECK(cudaMemset(m.erased->get(), 0, sizeof(unsigned long long)));
}

CudaApsmDetector::~CudaApsmDetector() = default;

std::size_t CudaApsmDetector::antennas() const { return d_impl->M; }
std::size_t CudaApsmDetector::users() const { return d_impl->K; }

void CudaApsmDetector::detect_device(const cf32* d_r, std::size_t count, cf32* d_out, void* stream)
{
    Impl& m = *d_impl;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.device));
    if (count == 0)
        return;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    ApsmArgs a{};
    a.r = reinterpret_cast<const float2*>(d_r);
    a.count = count;
    a.antennas = static_cast<int>(m.M);
    a.users = static_cast<int>(m.K);
    a.tiles = static_cast<int>(m.DP / kEntries);
    a.dp = static_cast<int>(m.DP);
    a.dictionary = m.dictionary->get();
    a.norm2 = m.norm2->get();
    a.gamma = m.gamma->get();
    a.linear = m.linear->get();
    a.inv_scale = m.inv_scale;
    a.inv_two_var = m.inv_two_var;
    a.out = reinterpret_cast<float*>(d_out);
    a.erased = m.erased->get();
    // The dictionary is split over blocks only as far as one wave of resident blocks holds
    // them all: section 5's 3840 vectors are 120 sample tiles, a few per SM.
    const std::size_t sample_tiles = (count + kVectors - 1) / kVectors;
    const std::size_t tiles = static_cast<std::size_t>(a.tiles),
                      slots = static_cast<std::size_t>(m.slots);
    std::size_t splits = 1;
    if (tiles > 1 && sample_tiles < slots)
        splits = std::max<std::size_t>(1, std::min(tiles, slots / sample_tiles));
    const std::size_t per_split = tiles == 0 ? 0 : (tiles + splits - 1) / splits;
    if (per_split > 0)
        splits = (tiles + per_split - 1) / per_split;
    a.tiles_per_split = static_cast<int>(per_split);
    if (splits > 1) {
        const std::size_t need = splits * count * m.K * 2;
        if (!m.partial || m.partial->size() < need)
            m.partial = std::make_unique<Buffer<float>>(need, false);
        if (!m.tickets || m.tickets->size() < sample_tiles) {
            m.tickets = std::make_unique<Buffer<unsigned>>(sample_tiles, false);
            MIMODET_CUDA_CHECK(cudaMemsetAsync(m.tickets->get(), 0, m.tickets->bytes(), s));
        }
        a.partial = m.partial->get();
        a.tickets = m.tickets->get();
    }
    const dim3 grid(static_cast<unsigned>(sample_tiles), static_cast<unsigned>(splits));
    dispatch<Launch>(m.LP, m.KP, a, grid, s);
    MIMODET_CUDA_CHECK(cudaGetLastError());
}

void CudaApsmDetector::detect(const cf32* r, std::size_t count, cf32* out)
{
    Impl& m = *d_impl;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.device));
    if (!m.r || m.r->size() < count * m.M) {
        m.r = std::make_unique<Buffer<cf32>>(std::max<std::size_t>(count * m.M, 1), false);
        m.out = std::make_unique<Buffer<cf32>>(std::max<std::size_t>(count * m.K, 1), false);
    }
    copy_to_device(m.r->get(), r, count * m.M * sizeof(cf32));
    detect_device(m.r->get(), count, m.out->get(), nullptr);
    copy_to_host(out, m.out->get(), count * m.K * sizeof(cf32));
}

std::size_t CudaApsmDetector::erased_vectors() const
{
    MIMODET_CUDA_CHECK(cudaSetDevice(d_impl->device));
    unsigned long long n = 0;
    copy_to_host(&n, d_impl->erased->get(), sizeof(n));
    return static_cast<std::size_t>(n);
}

} // namespace cuda
} // namespace mimodet
