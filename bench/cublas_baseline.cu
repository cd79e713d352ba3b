/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cublas_baseline.h"
#include <cublas_v2.h>
#include <cuda/cuda_check.h>
#include <cuda/device_math.cuh>
#include <cuda/kernels.h>
#include <cusolverDn.h>
#include <string>
#include <utility>
#include <vector>

namespace mimodet {
namespace bench {

namespace {

void check_cublas(cublasStatus_t s, const char* what)
{
    if (s != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string("cuBLAS error in ") + what + ": " +
                                 std::to_string(s));
}
void check_cusolver(cusolverStatus_t s, const char* what)
{
    if (s != CUSOLVER_STATUS_SUCCESS)
        throw std::runtime_error(std::string("cuSOLVER error in ") + what + ": " +
                                 std::to_string(s));
}

using cuda::cmul;
using cuda::cscale;

//! Hcm[sc] = H[sc] as a column-major B x U matrix (element (b, u) at u * B + b).
__global__ void transpose_kernel(const float2* h, float2* hcm, int nsc, int B, int U)
{
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<std::size_t>(nsc) * B * U)
        return;
    const std::size_t sc = i / (B * U);
    const int r = static_cast<int>(i % (B * U)), b = r / U, u = r % U;
    hcm[sc * B * U + static_cast<std::size_t>(u) * B + b] = h[i];
}

//! A = G + N0 I, and an identity matrix per subcarrier for A^-1 (column-major U x U).
__global__ void
regularize_kernel(const float2* g, float2* a, float2* ainv, int nsc, int U, float n0)
{
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<std::size_t>(nsc) * U * U)
        return;
    const int r = static_cast<int>(i % (U * U)), row = r % U, col = r / U;
    float2 v = g[i];
    if (row == col)
        v.x += n0;
    a[i] = v;
    ainv[i] = make_float2(row == col ? 1.0f : 0.0f, 0.0f);
}

/* li2015's separate soft-output kernel: a thread per (symbol, subcarrier, user):
 * lambda = Re diag(A^-1 G), rho = lambda / (1 - lambda), LLRs of x / lambda. */
__global__ void llr_kernel(const float2* x, // [sc][s][u] (U x n column-major per sc)
                           const float2* ainv,
                           const float2* g,
                           float* llr,
                           std::size_t nsym,
                           int nsc,
                           int U,
                           cuda::DemapTable demap)
{
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= nsym * nsc * U)
        return;
    const int u = static_cast<int>(i % U);
    const std::size_t sc = (i / U) % nsc, s = i / (static_cast<std::size_t>(U) * nsc);
    const float2* ai = ainv + sc * U * U; // column-major: (row, col) at col * U + row
    const float2* gi = g + sc * U * U;
    float lambda = 0.0f;
    for (int j = 0; j < U; ++j)
        lambda += cmul(ai[j * U + u], gi[u * U + j]).x;
    const float rho = lambda / (1.0f - lambda);
    const float2 xv = x[(sc * nsym + s) * U + u];
    float out[8];
    cuda::demap_maxlog(demap, cscale(xv, 1.0f / lambda), rho, out);
    float* dst = llr + ((s * nsc + sc) * U + u) * demap.bits;
    for (int q = 0; q < demap.bits; ++q)
        dst[q] = out[q];
}


} // namespace

struct CublasMmseBaseline::Impl {
    Dims d;
    std::size_t nsym;
    cuda::DemapTable demap;
    cublasHandle_t blas = nullptr;
    cusolverDnHandle_t solver = nullptr;
    float2 *hcm = nullptr, *g = nullptr, *a = nullptr, *ainv = nullptr, *x = nullptr;
    int* info = nullptr;
    float2 **a_ptrs = nullptr, **ainv_ptrs = nullptr, **x_ptrs = nullptr;

    template <typename T>
    T* alloc(std::size_t n)
    {
        void* p = nullptr;
        MIMODET_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
        return static_cast<T*>(p);
    }
    float2** pointers(float2* base, std::size_t stride)
    {
        std::vector<float2*> host(d.num_subcarriers);
        for (std::size_t i = 0; i < host.size(); ++i)
            host[i] = base + i * stride;
        float2** dev = alloc<float2*>(host.size());
        MIMODET_CUDA_CHECK(cudaMemcpy(
            dev, host.data(), host.size() * sizeof(float2*), cudaMemcpyHostToDevice));
        return dev;
    }
};

CublasMmseBaseline::CublasMmseBaseline(const Dims& dims,
                                       std::size_t num_symbols,
                                       Modulation m)
    : d_impl(std::make_unique<Impl>())
{
    Impl& s = *d_impl;
    s.d = dims;
    s.nsym = num_symbols;
    s.demap = cuda::demap_table(Constellation(m));
    check_cublas(cublasCreate(&s.blas), "cublasCreate");
    check_cusolver(cusolverDnCreate(&s.solver), "cusolverDnCreate");
    const std::size_t nsc = dims.num_subcarriers, b = dims.num_antennas,
                      u = dims.num_users;
    s.hcm = s.alloc<float2>(nsc * b * u);
    s.g = s.alloc<float2>(nsc * u * u);
    s.a = s.alloc<float2>(nsc * u * u);
    s.ainv = s.alloc<float2>(nsc * u * u);
    s.x = s.alloc<float2>(nsc * u * num_symbols);
    s.info = s.alloc<int>(nsc);
    s.a_ptrs = s.pointers(s.a, u * u);
    s.ainv_ptrs = s.pointers(s.ainv, u * u);
    s.x_ptrs = s.pointers(s.x, u * num_symbols);
}

CublasMmseBaseline::~CublasMmseBaseline()
{
    Impl& s = *d_impl;
    cublasDestroy(s.blas);
    cusolverDnDestroy(s.solver);
    for (void* p : { (void*)s.hcm,
                     (void*)s.g,
                     (void*)s.a,
                     (void*)s.ainv,
                     (void*)s.x,
                     (void*)s.info,
                     (void*)s.a_ptrs,
                     (void*)s.ainv_ptrs,
                     (void*)s.x_ptrs })
        cudaFree(p);
}

void CublasMmseBaseline::run(
    const cf32* d_h, float n0, const cf32* d_y, float* d_llr, void* stream_v)
{
    Impl& s = *d_impl;
    cudaStream_t stream = static_cast<cudaStream_t>(stream_v);
    check_cublas(cublasSetStream(s.blas, stream), "cublasSetStream");
    check_cusolver(cusolverDnSetStream(s.solver, stream), "cusolverDnSetStream");
    const int nsc = static_cast<int>(s.d.num_subcarriers),
              B = static_cast<int>(s.d.num_antennas), U = static_cast<int>(s.d.num_users),
              n = static_cast<int>(s.nsym);
    const cuComplex one = make_cuComplex(1.0f, 0.0f), zero = make_cuComplex(0.0f, 0.0f);
    const int threads = 256;
    auto blocks = [&](std::size_t count) {
        return static_cast<unsigned>((count + threads - 1) / threads);
    };

    transpose_kernel<<<blocks(static_cast<std::size_t>(nsc) * B * U),
                       threads,
                       0,
                       stream>>>(reinterpret_cast<const float2*>(d_h), s.hcm, nsc, B, U);
    MIMODET_CUDA_CHECK_LAUNCH("transpose_kernel");
    // G = Hcm^H Hcm (U x U per subcarrier)
    check_cublas(cublasCgemmStridedBatched(s.blas,
                                           CUBLAS_OP_C,
                                           CUBLAS_OP_N,
                                           U,
                                           U,
                                           B,
                                           &one,
                                           reinterpret_cast<cuComplex*>(s.hcm),
                                           B,
                                           static_cast<long long>(B) * U,
                                           reinterpret_cast<cuComplex*>(s.hcm),
                                           B,
                                           static_cast<long long>(B) * U,
                                           &zero,
                                           reinterpret_cast<cuComplex*>(s.g),
                                           U,
                                           static_cast<long long>(U) * U,
                                           nsc),
                 "cublasCgemmStridedBatched (Gram)");
    regularize_kernel<<<blocks(static_cast<std::size_t>(nsc) * U * U),
                        threads,
                        0,
                        stream>>>(s.g, s.a, s.ainv, nsc, U, n0);
    MIMODET_CUDA_CHECK_LAUNCH("regularize_kernel");
    check_cusolver(cusolverDnCpotrfBatched(s.solver,
                                           CUBLAS_FILL_MODE_LOWER,
                                           U,
                                           reinterpret_cast<cuComplex**>(s.a_ptrs),
                                           U,
                                           s.info,
                                           nsc),
                   "cusolverDnCpotrfBatched");
    // y_MF = Hcm^H Y: Y of subcarrier sc is B x n with columns one OFDM symbol apart.
    check_cublas(cublasCgemmStridedBatched(s.blas,
                                           CUBLAS_OP_C,
                                           CUBLAS_OP_N,
                                           U,
                                           n,
                                           B,
                                           &one,
                                           reinterpret_cast<cuComplex*>(s.hcm),
                                           B,
                                           static_cast<long long>(B) * U,
                                           reinterpret_cast<const cuComplex*>(d_y),
                                           nsc * B,
                                           B,
                                           &zero,
                                           reinterpret_cast<cuComplex*>(s.x),
                                           U,
                                           static_cast<long long>(U) * n,
                                           nsc),
                 "cublasCgemmStridedBatched (matched filter)");
    // x = L^-H L^-1 y_MF and A^-1 = L^-H L^-1 I: two triangular solves each.
    auto solve = [&](float2** rhs, int cols, cublasOperation_t op, const char* what) {
        check_cublas(
            cublasCtrsmBatched(s.blas,
                               CUBLAS_SIDE_LEFT,
                               CUBLAS_FILL_MODE_LOWER,
                               op,
                               CUBLAS_DIAG_NON_UNIT,
                               U,
                               cols,
                               &one,
                               reinterpret_cast<const cuComplex* const*>(s.a_ptrs),
                               U,
                               reinterpret_cast<cuComplex* const*>(rhs),
                               U,
                               nsc),
            what);
    };
    for (auto [rhs, cols] :
         { std::pair<float2**, int>{ s.x_ptrs, n }, { s.ainv_ptrs, U } }) {
        solve(rhs, cols, CUBLAS_OP_N, "cublasCtrsmBatched (L)");
        solve(rhs, cols, CUBLAS_OP_C, "cublasCtrsmBatched (L^H)");
    }
    llr_kernel<<<blocks(s.nsym * nsc * U), threads, 0, stream>>>(
        s.x, s.ainv, s.g, d_llr, s.nsym, nsc, U, s.demap);
    MIMODET_CUDA_CHECK_LAUNCH("llr_kernel");
}

} // namespace bench
} // namespace mimodet
