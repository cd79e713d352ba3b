/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cuda/apsm/apsm_trainer.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_detector.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimodet {
namespace cuda {

namespace {

constexpr int kGramTile = 16;
constexpr int kLoopThreads = 256;
constexpr int kFinishThreads = 128;

/* kappa(x_i, x_j) = w_L x_i.x_j + w_G exp(-||x_i - x_j||^2 / (2 sigma^2)) for a 16 x 16
 * tile of (i, j), both rows staged in shared memory; L <= 64. */
__global__ void gram_kernel(const double* __restrict__ x,
                            int D,
                            int L,
                            double wl,
                            double wg,
                            double two_var,
                            double* __restrict__ gram)
{
    __shared__ double xi[kGramTile][65], xj[kGramTile][65];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.y * kGramTile, j0 = blockIdx.x * kGramTile;
    for (int l = tx; l < L; l += kGramTile) {
        xi[ty][l] = i0 + ty < D ? x[static_cast<std::size_t>(i0 + ty) * L + l] : 0.0;
        xj[ty][l] = j0 + ty < D ? x[static_cast<std::size_t>(j0 + ty) * L + l] : 0.0;
    }
    __syncthreads();
    const int i = i0 + ty, j = j0 + tx;
    if (i >= D || j >= D)
        return;
    double dot = 0.0, d2 = 0.0;
    for (int l = 0; l < L; ++l) {
        const double a = xi[ty][l], b = xj[tx][l];
        dot = fma(a, b, dot);
        d2 = fma(a - b, a - b, d2);
    }
    gram[static_cast<std::size_t>(i) * D + j] = wl * dot + (wg > 0.0 ? wg * exp(-d2 / two_var) : 0.0);
}

//! base[k][n] = w_L c0_k . x_n: f_0 at every sample.
__global__ void base_kernel(const double* __restrict__ x,
                            const double* __restrict__ c0,
                            int D,
                            int L,
                            double wl,
                            double* __restrict__ base)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y;
    if (n >= D)
        return;
    double s = 0.0;
    for (int l = 0; l < L; ++l)
        s = fma(c0[k * L + l], x[static_cast<std::size_t>(n) * L + l], s);
    base[static_cast<std::size_t>(k) * D + n] = wl * s;
}

__device__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* Eq. 8, all D steps, a block per user; apsm::project (lib/core/apsm/apsm.cc) is the
 * same loop written for one core. f_n(x_n) = base[n] + sum_{i<n} gamma_i kappa(x_i, x_n),
 * since every step adds to c exactly what it adds to gamma times the sample: the block's
 * threads share that dot product, each holding PER entries of the kernel row in registers,
 * loaded one step ahead so that their latency hides behind the step before. The window
 * (W <= 32) is warp 0's: lane l holds sample first + l, its projection (eq. 9), its
 * coefficient update and its filter value, the window's kernel values in shared memory
 * (`near`, a W x W ring as in apsm::project). Two barriers per step: the dot's partial
 * sums, and warp 0's coefficients before the next dot reads them. */
template <int PER>
__global__ void __launch_bounds__(kLoopThreads) project_kernel(const double* __restrict__ gram,
                                                              const double* __restrict__ base,
                                                              const double* __restrict__ targets,
                                                              int D,
                                                              int steps,
                                                              int W,
                                                              double eps,
                                                              double* __restrict__ gamma_out,
                                                              double* __restrict__ apriori_out)
{
    /* steps: the samples projected onto (apsm::trained_samples), <= D. Shared memory: gamma [D]; the residual targets r_j = b_j - f_0(x_j) [D], so that the
     * loop carries f - f_0 and never reads global memory on warp 0's path; the window's
     * values of f - f_0 (fv), the inverse of kappa(x_j, x_j) (inv_kjj), and the kernel
     * values among its samples (near, W x W), all by slot j % W; the dot's partial sums. */
    extern __shared__ double sm[];
    double* gamma = sm;
    double* residual = gamma + D;
    double* fv = residual + D;
    double* inv_kjj = fv + 32;
    double* near = inv_kjj + 32;
    double* red = near + 32 * 32;
    const int k = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    for (int i = tid; i < D; i += kLoopThreads) {
        gamma[i] = 0.0;
        residual[i] = targets[static_cast<std::size_t>(k) * D + i] -
                      base[static_cast<std::size_t>(k) * D + i];
    }
    double row[PER]; // kernel row n at i = tid + p * kLoopThreads
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int i = tid + p * kLoopThreads;
        row[p] = i < D ? gram[i] : 0.0; // row 0
    }
    double apriori = 0.0;
    const int apriori_from = steps / 2; // apsm::apriori_first
    int slot_n = 0;                     // n % W
    __syncthreads();
    for (int n = 0; n < steps; ++n) {
        const int first = n + 1 >= W ? n + 1 - W : 0, count = n - first + 1;
        double s = 0.0;
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            const int i = tid + p * kLoopThreads;
            if (i < n)
                s = fma(gamma[i], row[p], s);
            if (i >= first && i <= n) { // the new sample's kernel values with the window
                const int slot_i = slot_n - (n - i) < 0 ? slot_n - (n - i) + W : slot_n - (n - i);
                near[slot_n * 32 + slot_i] = row[p];
                near[slot_i * 32 + slot_n] = row[p];
                if (i == n) // 0 only for x = 0 with w_G = 0: no projection then
                    inv_kjj[slot_n] = row[p] > 0.0 ? 1.0 / row[p] : 0.0;
            }
        }
        if (n + 1 < steps) { // row n + 1, in flight while this step finishes
            const double* next = gram + static_cast<std::size_t>(n + 1) * D;
#pragma unroll
            for (int p = 0; p < PER; ++p) {
                const int i = tid + p * kLoopThreads;
                row[p] = i < D ? next[i] : 0.0;
            }
        }
        s = warp_sum(s);
        if (lane == 0)
            red[warp] = s;
        __syncthreads();
        if (warp == 0) {
            double fn = lane < kLoopThreads / 32 ? red[lane] : 0.0;
            for (int o = 16; o > 0; o >>= 1)
                fn += __shfl_xor_sync(0xffffffffu, fn, o); // f_n(x_n) - f_0(x_n)
            if (lane == 0 && n >= apriori_from)
                apriori += (fn - residual[n]) * (fn - residual[n]);
            // lane l: sample j = first + l of the window, in slot (first % W + l) mod W
            const int slot_first = count == W ? (slot_n + 1 == W ? 0 : slot_n + 1) : 0;
            const bool in = lane < count;
            const int j = first + lane;
            const int slot = slot_first + lane >= W ? slot_first + lane - W : slot_first + lane;
            const double fj = !in ? 0.0 : j == n ? fn : fv[slot];
            double st = 0.0;
            if (in) { // eq. 9 for sample j, from f_n; uniform weights q_j = 1 / count
                const double e = fj - residual[j];
                const double beta = e < -eps  ? (-e - eps) * inv_kjj[slot]
                                    : e > eps ? (-e + eps) * inv_kjj[slot]
                                              : 0.0;
                st = (1.0 / count) * beta;
                gamma[j] += st;
            }
            double acc = fj;
            int slot_jj = slot_first;
#pragma unroll 4
            for (int jj = 0; jj < count; ++jj) {
                const double sj = __shfl_sync(0xffffffffu, st, jj);
                acc = fma(sj, near[slot_jj * 32 + (in ? slot : 0)], acc);
                slot_jj = slot_jj + 1 == W ? 0 : slot_jj + 1;
            }
            if (in)
                fv[slot] = acc;
        }
        slot_n = slot_n + 1 == W ? 0 : slot_n + 1;
        __syncthreads();
    }
    for (int i = tid; i < D; i += kLoopThreads)
        gamma_out[static_cast<std::size_t>(k) * D + i] = gamma[i];
    if (tid == 0)
        apriori_out[k] = apriori;
}

/* c_k = c0_k + sum_i gamma_k[i] x_i: a block per user; thread t adds dimension t % L over
 * every (kLoopThreads / L)-th sample, then the block adds those partial sums. L <= 64. */
__global__ void __launch_bounds__(kLoopThreads) linear_kernel(const double* __restrict__ x,
                                                              const double* __restrict__ c0,
                                                              const double* __restrict__ gamma,
                                                              int D,
                                                              int L,
                                                              double* __restrict__ c)
{
    __shared__ double part[kLoopThreads];
    const int k = blockIdx.x, tid = threadIdx.x, groups = kLoopThreads / L;
    const int l = tid % L, g = tid / L;
    double s = 0.0;
    if (g < groups)
        for (int i = g; i < D; i += groups)
            s = fma(gamma[static_cast<std::size_t>(k) * D + i], x[static_cast<std::size_t>(i) * L + l], s);
    part[tid] = s;
    __syncthreads();
    if (tid < L) {
        double total = c0[k * L + l];
        for (int h = 0; h < groups; ++h)
            total += part[h * L + l];
        c[k * L + l] = total;
    }
}

/* Squared training errors of the trained filter, of its linear part alone and of f_0 at
 * sample j, a warp per (j, user): the dot product of gamma with kernel row j split over the
 * lanes; summed per user in err[0][k], err[1][k] and err[2][k]. */
__global__ void error_kernel(const double* __restrict__ gram,
                             const double* __restrict__ base,
                             const double* __restrict__ x,
                             const double* __restrict__ c,
                             const double* __restrict__ gamma,
                             const double* __restrict__ targets,
                             int D,
                             int L,
                             int K,
                             double wl,
                             double* __restrict__ err)
{
    const int lane = threadIdx.x & 31;
    const int j = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5), k = blockIdx.y;
    if (j >= D)
        return;
    const double* g = gamma + static_cast<std::size_t>(k) * D;
    const double* row = gram + static_cast<std::size_t>(j) * D;
    double f = 0.0, lin = 0.0;
    for (int i = lane; i < D; i += 32)
        f = fma(g[i], row[i], f);
    for (int l = lane; l < L; l += 32)
        lin = fma(c[k * L + l], x[static_cast<std::size_t>(j) * L + l], lin);
    f = warp_sum(f);
    lin = warp_sum(lin);
    if (lane == 0) {
        const double f0 = base[static_cast<std::size_t>(k) * D + j];
        f += f0;
        lin *= wl;
        const double bj = targets[static_cast<std::size_t>(k) * D + j];
        atomicAdd(&err[k], (f - bj) * (f - bj));
        atomicAdd(&err[K + k], (lin - bj) * (lin - bj));
        atomicAdd(&err[2 * K + k], (f0 - bj) * (f0 - bj));
    }
}

template <int PER>
void launch_project(const double* gram, const double* base, const double* targets, int K,
                    int D, int steps, int W, double eps, double* gamma, double* apriori,
                    cudaStream_t s)
{
    const std::size_t smem = CudaApsmTrainer::shared_memory_bytes(static_cast<std::size_t>(D));
    MIMODET_CUDA_CHECK(cudaFuncSetAttribute(project_kernel<PER>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem)));
    project_kernel<PER><<<K, kLoopThreads, smem, s>>>(gram, base, targets, D, steps, W, eps,
                                                      gamma, apriori);
    MIMODET_CUDA_CHECK(cudaGetLastError());
}

} // namespace

struct CudaApsmTrainer::Impl {
    int device = 0;
    std::size_t max_symbols = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    std::unique_ptr<Buffer<double>> x, gram, base, targets, c0, c, gamma, apriori, err;
    std::size_t capacity_D = 0, capacity_K = 0, capacity_L = 0;
    double gpu_ms = 0.0;

    ~Impl()
    {
        if (start)
            cudaEventDestroy(start);
        if (stop)
            cudaEventDestroy(stop);
        if (stream)
            cudaStreamDestroy(stream);
    }
};

CudaApsmTrainer::CudaApsmTrainer(int device) : d_impl(std::make_unique<Impl>())
{
    d_impl->device = device;
    MIMODET_CUDA_CHECK(cudaSetDevice(device));
    int optin = 0;
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    std::size_t t = kMaxTrainingSymbols;
    while (t > 0 && shared_memory_bytes(2 * t) > static_cast<std::size_t>(optin))
        --t;
    d_impl->max_symbols = t;
    MIMODET_CUDA_CHECK(cudaStreamCreateWithFlags(&d_impl->stream, cudaStreamNonBlocking));
    MIMODET_CUDA_CHECK(cudaEventCreate(&d_impl->start));
    MIMODET_CUDA_CHECK(cudaEventCreate(&d_impl->stop));
}

CudaApsmTrainer::~CudaApsmTrainer() = default;

double CudaApsmTrainer::last_gpu_ms() const { return d_impl->gpu_ms; }

std::size_t CudaApsmTrainer::max_training_symbols() const { return d_impl->max_symbols; }

std::size_t CudaApsmTrainer::shared_memory_bytes(std::size_t samples)
{
    return (2 * samples + 2 * 32 + 32 * 32 + kLoopThreads / 32) * sizeof(double);
}

apsm::TrainingResult CudaApsmTrainer::project(const ApsmParams& params,
                                              const apsm::TrainingProblem& p)
{
    Impl& m = *d_impl;
    params.validate();
    const std::size_t K = p.users, L = p.length(), D = p.samples(), W = params.window;
    if (p.count == 0 || p.count > m.max_symbols)
        throw std::invalid_argument("APSM on the GPU: 1 to " + std::to_string(m.max_symbols) +
                                    " training symbols on this device, not " +
                                    std::to_string(p.count));
    if (W > kMaxWindow)
        throw std::invalid_argument("APSM on the GPU: a window of at most " +
                                    std::to_string(kMaxWindow) + ", not " + std::to_string(W));
    if (p.antennas == 0 || p.antennas > kMaxAntennas)
        throw std::invalid_argument("APSM on the GPU: 1 to " + std::to_string(kMaxAntennas) +
                                    " antennas, not " + std::to_string(p.antennas));
    if (p.dictionary.size() != D * L || p.targets.size() != K * D || p.linear.size() != K * L)
        throw std::invalid_argument("APSM on the GPU: inconsistent training problem");

    MIMODET_CUDA_CHECK(cudaSetDevice(m.device));
    if (D > m.capacity_D || K > m.capacity_K || L > m.capacity_L) {
        // All allocated before any is replaced: a failure leaves the old set whole.
        const std::size_t cD = std::max(D, m.capacity_D), cK = std::max(K, m.capacity_K),
                          cL = std::max(L, m.capacity_L);
        auto x = std::make_unique<Buffer<double>>(cD * cL, false);
        m.gram.reset(); // the big one: freed first, so that the new one fits
        m.capacity_D = m.capacity_K = m.capacity_L = 0;
        auto gram = std::make_unique<Buffer<double>>(cD * cD, false);
        auto base = std::make_unique<Buffer<double>>(cK * cD, false);
        auto targets = std::make_unique<Buffer<double>>(cK * cD, false);
        auto gamma = std::make_unique<Buffer<double>>(cK * cD, false);
        auto c0 = std::make_unique<Buffer<double>>(cK * cL, false);
        auto c = std::make_unique<Buffer<double>>(cK * cL, false);
        auto apriori = std::make_unique<Buffer<double>>(cK, false);
        auto err = std::make_unique<Buffer<double>>(3 * cK, false);
        m.x = std::move(x);
        m.gram = std::move(gram);
        m.base = std::move(base);
        m.targets = std::move(targets);
        m.gamma = std::move(gamma);
        m.c0 = std::move(c0);
        m.c = std::move(c);
        m.apriori = std::move(apriori);
        m.err = std::move(err);
        m.capacity_D = cD;
        m.capacity_K = cK;
        m.capacity_L = cL;
    }
    const cudaStream_t s = m.stream;
    const int iD = static_cast<int>(D), iL = static_cast<int>(L), iK = static_cast<int>(K);
    const double wl = params.weight_linear, wg = params.weight_gaussian;
    MIMODET_CUDA_CHECK(cudaEventRecord(m.start, s));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(m.x->get(), p.dictionary.data(), D * L * sizeof(double),
                                       cudaMemcpyHostToDevice, s));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(m.targets->get(), p.targets.data(), K * D * sizeof(double),
                                       cudaMemcpyHostToDevice, s));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(m.c0->get(), p.linear.data(), K * L * sizeof(double),
                                       cudaMemcpyHostToDevice, s));
    MIMODET_CUDA_CHECK(cudaMemsetAsync(m.err->get(), 0, 3 * K * sizeof(double), s));

    const unsigned tiles = static_cast<unsigned>((D + kGramTile - 1) / kGramTile);
    gram_kernel<<<dim3(tiles, tiles), dim3(kGramTile, kGramTile), 0, s>>>(
        m.x->get(), iD, iL, wl, wg, 2.0 * params.kernel_variance, m.gram->get());
    MIMODET_CUDA_CHECK(cudaGetLastError());
    const unsigned per_user = static_cast<unsigned>((D + kFinishThreads - 1) / kFinishThreads);
    base_kernel<<<dim3(per_user, iK), kFinishThreads, 0, s>>>(m.x->get(), m.c0->get(), iD, iL,
                                                              wl, m.base->get());
    MIMODET_CUDA_CHECK(cudaGetLastError());

    const double eps = params.tolerance;
    const int iW = static_cast<int>(W);
    const int steps = static_cast<int>(apsm::trained_samples(params, D));
    if (D <= 2 * kLoopThreads)
        launch_project<2>(m.gram->get(), m.base->get(), m.targets->get(), iK, iD, steps, iW, eps, m.gamma->get(), m.apriori->get(), s);
    else if (D <= 8 * kLoopThreads)
        launch_project<8>(m.gram->get(), m.base->get(), m.targets->get(), iK, iD, steps, iW, eps, m.gamma->get(), m.apriori->get(), s);
    else
        launch_project<32>(m.gram->get(), m.base->get(), m.targets->get(), iK, iD, steps, iW, eps, m.gamma->get(), m.apriori->get(), s);
    linear_kernel<<<iK, kLoopThreads, 0, s>>>(m.x->get(), m.c0->get(), m.gamma->get(), iD, iL, m.c->get());
    MIMODET_CUDA_CHECK(cudaGetLastError());
    constexpr int warps = kFinishThreads / 32;
    error_kernel<<<dim3(static_cast<unsigned>((D + warps - 1) / warps), iK), kFinishThreads, 0, s>>>(
        m.gram->get(), m.base->get(), m.x->get(), m.c->get(), m.gamma->get(), m.targets->get(),
        iD, iL, iK, wl, m.err->get());
    MIMODET_CUDA_CHECK(cudaGetLastError());

    apsm::TrainingResult res;
    res.linear.resize(K * L);
    res.coefficient.resize(K * D);
    res.error_apriori.resize(K);
    std::vector<double> err(3 * K);
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(res.linear.data(), m.c->get(), K * L * sizeof(double),
                                       cudaMemcpyDeviceToHost, s));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(res.coefficient.data(), m.gamma->get(),
                                       K * D * sizeof(double), cudaMemcpyDeviceToHost, s));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(res.error_apriori.data(), m.apriori->get(),
                                       K * sizeof(double), cudaMemcpyDeviceToHost, s));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(err.data(), m.err->get(), 3 * K * sizeof(double),
                                       cudaMemcpyDeviceToHost, s));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.stop, s));
    MIMODET_CUDA_CHECK(cudaStreamSynchronize(s));
    float ms = 0.0f;
    MIMODET_CUDA_CHECK(cudaEventElapsedTime(&ms, m.start, m.stop));
    m.gpu_ms = ms;
    res.error_full.assign(err.begin(), err.begin() + K);
    res.error_linear.assign(err.begin() + K, err.begin() + 2 * K);
    res.error_start.assign(err.begin() + 2 * K, err.end());
    return res;
}

} // namespace cuda
} // namespace mimodet
