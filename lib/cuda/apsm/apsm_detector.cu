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

constexpr int kThreads = 128; // received vectors per block
constexpr int kTile = 64;     // dictionary entries per shared-memory tile
constexpr std::size_t kMaxApsmUsers = 16; // users padded to at most 16 accumulators

struct ApsmArgs {
    const float2* r; // [count][M]
    std::size_t count;
    int antennas, users, entries, per_split;
    const float* dictionary; // [D][LP]: Re part at 0.., Im part at LP/2.., zero padded
    const float* norm2;      // [D]
    const float* gamma;      // [KP][D], times w_G; 0 for linear-only users and padding
    const float* linear;     // [KP][LP], times w_L, laid out as the dictionary
    float inv_scale, inv_two_var;
    float* out; // [count][K][2], zeroed before
    unsigned long long* erased;
};

/* LP: a real sample's length 2M padded to a power of two (the padding is zero in the
 * sample, the dictionary and the linear part, so it adds nothing); KP: users padded. A
 * thread takes both real samples of a vector, r_1 = [Re; Im] in registers and r_2 =
 * [Im; -Re] read from the same registers, so that every dictionary element loaded serves
 * two multiply-adds. The squared distance is ||d||^2 + ||x||^2 - 2 d.x (||r_1|| = ||r_2||). */
template <int LP, int KP>
__global__ void __launch_bounds__(kThreads) apsm_detect_kernel(ApsmArgs a)
{
    __shared__ float s_d[kTile][LP];
    __shared__ float s_n[kTile];
    __shared__ float s_g[KP][kTile];
    constexpr int H = LP / 2;
    const std::size_t t = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
    const bool live = t < a.count;
    float x[LP]; // r_1
#pragma unroll
    for (int l = 0; l < LP; ++l)
        x[l] = 0.0f;
    bool finite = true;
    if (live) {
        const float2* rt = a.r + t * a.antennas;
#pragma unroll
        for (int m = 0; m < H; ++m)
            if (m < a.antennas) {
                const float2 v = rt[m];
                finite = finite && isfinite(v.x) && isfinite(v.y);
                x[m] = v.x * a.inv_scale;
                x[H + m] = v.y * a.inv_scale;
            }
    }
    float nx = 0.0f;
#pragma unroll
    for (int l = 0; l < LP; ++l)
        nx = fmaf(x[l], x[l], nx);
    float acc1[KP], acc2[KP];
#pragma unroll
    for (int k = 0; k < KP; ++k)
        acc1[k] = acc2[k] = 0.0f;
    const int first = blockIdx.y * a.per_split, last = min(a.entries, first + a.per_split);
    for (int base = first; base < last; base += kTile) {
        const int n = min(kTile, last - base);
        __syncthreads(); // the previous tile is used up
        for (int i = threadIdx.x; i < n * LP; i += kThreads)
            s_d[i / LP][i % LP] = a.dictionary[static_cast<std::size_t>(base) * LP + i];
        for (int i = threadIdx.x; i < n; i += kThreads)
            s_n[i] = a.norm2[base + i];
        for (int i = threadIdx.x; i < KP * kTile; i += kThreads) {
            const int k = i / kTile, e = i % kTile;
            s_g[k][e] = e < n ? a.gamma[static_cast<std::size_t>(k) * a.entries + base + e] : 0.0f;
        }
        __syncthreads();
        for (int i = 0; i < n; ++i) {
            float dot1 = 0.0f, dot2 = 0.0f;
#pragma unroll
            for (int m = 0; m < H; ++m) {
                const float dr = s_d[i][m], di = s_d[i][H + m];
                dot1 = fmaf(dr, x[m], fmaf(di, x[H + m], dot1));
                dot2 = fmaf(dr, x[H + m], fmaf(-di, x[m], dot2));
            }
            const float k1 = __expf(-fmaxf(s_n[i] + nx - 2.0f * dot1, 0.0f) * a.inv_two_var);
            const float k2 = __expf(-fmaxf(s_n[i] + nx - 2.0f * dot2, 0.0f) * a.inv_two_var);
#pragma unroll
            for (int k = 0; k < KP; ++k) {
                acc1[k] = fmaf(s_g[k][i], k1, acc1[k]);
                acc2[k] = fmaf(s_g[k][i], k2, acc2[k]);
            }
        }
    }
    if (!live)
        return;
    if (!finite) { // the output stays zero; counted once per vector
        if (blockIdx.y == 0)
            atomicAdd(a.erased, 1ull);
        return;
    }
    if (blockIdx.y == 0)
#pragma unroll
        for (int k = 0; k < KP; ++k)
#pragma unroll
            for (int m = 0; m < H; ++m) {
                const float cr = a.linear[k * LP + m], ci = a.linear[k * LP + H + m];
                acc1[k] = fmaf(cr, x[m], fmaf(ci, x[H + m], acc1[k]));
                acc2[k] = fmaf(cr, x[H + m], fmaf(-ci, x[m], acc2[k]));
            }
#pragma unroll
    for (int k = 0; k < KP; ++k)
        if (k < a.users) {
            atomicAdd(a.out + (t * a.users + k) * 2, acc1[k]);
            atomicAdd(a.out + (t * a.users + k) * 2 + 1, acc2[k]);
        }
}

template <int LP>
void launch_users(const ApsmArgs& a, int kp, dim3 grid, cudaStream_t stream)
{
    switch (kp) {
    case 1: apsm_detect_kernel<LP, 1><<<grid, kThreads, 0, stream>>>(a); break;
    case 2: apsm_detect_kernel<LP, 2><<<grid, kThreads, 0, stream>>>(a); break;
    case 4: apsm_detect_kernel<LP, 4><<<grid, kThreads, 0, stream>>>(a); break;
    case 8: apsm_detect_kernel<LP, 8><<<grid, kThreads, 0, stream>>>(a); break;
    default: apsm_detect_kernel<LP, 16><<<grid, kThreads, 0, stream>>>(a); break;
    }
}

std::size_t padded(std::size_t n, std::size_t least)
{
    std::size_t p = least;
    while (p < n)
        p *= 2;
    return p;
}

} // namespace

struct CudaApsmDetector::Impl {
    int device = 0, sms = 1;
    std::size_t M = 0, K = 0, LP = 0, KP = 0, D = 0;
    float inv_scale = 1.0f, inv_two_var = 1.0f;
    std::unique_ptr<Buffer<float>> dictionary, norm2, gamma, linear;
    std::unique_ptr<Buffer<unsigned long long>> erased;
    std::unique_ptr<Buffer<cf32>> r, out; // staging of host calls, grown as needed
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
    MIMODET_CUDA_CHECK(cudaDeviceGetAttribute(&m.sms, cudaDevAttrMultiProcessorCount, device));
    m.LP = padded(2 * m.M, 8);
    m.KP = padded(m.K, 1);
    m.D = rx.dictionary_size();
    const std::size_t H = m.LP / 2, L = 2 * m.M;
    const apsm::ApsmParams& p = rx.params();
    m.inv_scale = static_cast<float>(1.0 / rx.input_scale());
    m.inv_two_var = static_cast<float>(1.0 / (2.0 * p.kernel_variance));
    auto place = [&](std::size_t l) { return l < m.M ? l : H + (l - m.M); }; // Im part at LP/2
    std::vector<float> dict(m.D * m.LP, 0.0f), norm2(m.D, 0.0f), gamma(m.KP * m.D, 0.0f),
        linear(m.KP * m.LP, 0.0f);
    const std::vector<double>& src = rx.dictionary();
    for (std::size_t i = 0; i < m.D; ++i)
        for (std::size_t l = 0; l < L; ++l) {
            const float v = static_cast<float>(src[i * L + l]);
            dict[i * m.LP + place(l)] = v;
            norm2[i] += v * v;
        }
    for (std::size_t k = 0; k < m.K; ++k) {
        const apsm::ApsmFilter& f = rx.filter(k);
        if (!f.linear_only)
            for (std::size_t i = 0; i < m.D; ++i)
                gamma[k * m.D + i] = static_cast<float>(p.weight_gaussian * f.coefficient[i]);
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
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    MIMODET_CUDA_CHECK(cudaMemsetAsync(d_out, 0, count * m.K * sizeof(cf32), s));
    if (count == 0)
        return;
    ApsmArgs a{};
    a.r = reinterpret_cast<const float2*>(d_r);
    a.count = count;
    a.antennas = static_cast<int>(m.M);
    a.users = static_cast<int>(m.K);
    a.entries = static_cast<int>(m.D);
    a.dictionary = m.dictionary->get();
    a.norm2 = m.norm2->get();
    a.gamma = m.gamma->get();
    a.linear = m.linear->get();
    a.inv_scale = m.inv_scale;
    a.inv_two_var = m.inv_two_var;
    a.out = reinterpret_cast<float*>(d_out);
    a.erased = m.erased->get();
    // Enough blocks for 16 per SM (4 gave 20% occupancy on an H100 at section 5's size):
    // the dictionary split over blocks when the vectors are few.
    const unsigned vector_blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
    const unsigned tiles = static_cast<unsigned>((m.D + kTile - 1) / kTile);
    const unsigned splits =
        std::max(1u, std::min(tiles, (16u * m.sms + vector_blocks - 1) / vector_blocks));
    const unsigned tiles_per_split = (tiles + splits - 1) / splits;
    a.per_split = static_cast<int>(tiles_per_split * kTile);
    const dim3 grid(vector_blocks, (tiles + tiles_per_split - 1) / tiles_per_split);
    switch (m.LP) {
    case 8: launch_users<8>(a, static_cast<int>(m.KP), grid, s); break;
    case 16: launch_users<16>(a, static_cast<int>(m.KP), grid, s); break;
    case 32: launch_users<32>(a, static_cast<int>(m.KP), grid, s); break;
    default: launch_users<64>(a, static_cast<int>(m.KP), grid, s); break;
    }
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
