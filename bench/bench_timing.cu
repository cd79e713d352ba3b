/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_timing.h"
#include <cuda/cuda_check.h>
#include <cuda/cuda_detector.h>
#include <algorithm>
#include <cstring>
#include <vector>

namespace mimodet {
namespace bench {

namespace {
//! Reads n 16-byte words; the store never happens (flag is 0) but keeps the loads.
__global__ void
read_kernel(const uint4* data, unsigned long long n, int flag, uint4* sink)
{
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
        const uint4 v = data[i];
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if (flag)
        *sink = acc;
}

//! stream_traffic: words [0, na) of a then [0, nb) of b read once, the first nout of
//! them written to out; the store to sink never happens (flag is 0) but keeps the loads.
__global__ void stream_traffic_kernel(const uint4* a,
                                      unsigned long long na,
                                      const uint4* b,
                                      unsigned long long nb,
                                      uint4* out,
                                      unsigned long long nout,
                                      int flag,
                                      uint4* sink)
{
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < na + nb;
         i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
        const uint4 v = i < na ? a[i] : b[i - na];
        if (i < nout) {
            out[i] = v;
        } else {
            acc.x ^= v.x;
            acc.y ^= v.y;
            acc.z ^= v.z;
            acc.w ^= v.w;
        }
    }
    if (flag)
        *sink = acc;
}

__global__ void spin_kernel(unsigned long long nanoseconds)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
}
} // namespace

L2Flusher::L2Flusher(bool clean)
{
    int device = 0, l2 = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    d_bytes = 2ul * static_cast<unsigned long>(l2);
    MIMODET_CUDA_CHECK(cudaMalloc(&d_buffer, d_bytes));
    if (clean) {
        MIMODET_CUDA_CHECK(cudaMalloc(&d_clean_buffer, d_bytes));
        MIMODET_CUDA_CHECK(cudaMemset(d_clean_buffer, 0, d_bytes));
    }
}

L2Flusher::~L2Flusher()
{
    cudaFree(d_buffer);
    cudaFree(d_clean_buffer);
}

void L2Flusher::flush(void* stream)
{
    const auto s = static_cast<cudaStream_t>(stream);
    MIMODET_CUDA_CHECK(cudaMemsetAsync(d_buffer, 0x5a, d_bytes, s));
    if (d_clean_buffer) {
        read_kernel<<<1024, 256, 0, s>>>(static_cast<const uint4*>(d_clean_buffer),
                                         d_bytes / sizeof(uint4),
                                         0,
                                         static_cast<uint4*>(d_clean_buffer));
        MIMODET_CUDA_CHECK_LAUNCH("read_kernel");
    }
}

void stream_traffic(const void* a,
                    unsigned long a_bytes,
                    const void* b,
                    unsigned long b_bytes,
                    void* out,
                    unsigned long out_bytes,
                    void* stream)
{
    const unsigned long long na = a_bytes / sizeof(uint4), nb = b_bytes / sizeof(uint4);
    const unsigned long long nout =
        std::min<unsigned long long>(out_bytes / sizeof(uint4), na + nb);
    if (na + nb == 0)
        return;
    int device = 0, sms = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    constexpr int kThreads = 256, kBlocksPerSm = 8; // every thread slot of the SM
    const auto s = static_cast<cudaStream_t>(stream);
    stream_traffic_kernel<<<sms * kBlocksPerSm, kThreads, 0, s>>>(
        static_cast<const uint4*>(a),
        na,
        static_cast<const uint4*>(b),
        nb,
        static_cast<uint4*>(out),
        nout,
        0,
        static_cast<uint4*>(out));
    MIMODET_CUDA_CHECK_LAUNCH("stream_traffic_kernel");
}

void hold_stream(void* stream, double microseconds)
{
    spin_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<unsigned long long>(microseconds * 1000.0));
    MIMODET_CUDA_CHECK_LAUNCH("spin_kernel");
}

Bandwidth measure_bandwidth()
{
    const std::size_t big = std::size_t{ 1 } << 30, link = std::size_t{ 256 } << 20;
    cuda::Buffer<char> a(big, false), b(big, false), host(link, true), host2(link, true);
    std::memset(host2.get(), 2, link);
    std::memset(host.get(), 1, link);
    MIMODET_CUDA_CHECK(cudaMemset(a.get(), 1, big));
    cudaEvent_t e0, e1;
    MIMODET_CUDA_CHECK(cudaEventCreate(&e0));
    MIMODET_CUDA_CHECK(cudaEventCreate(&e1));
    auto timed_ms = [&](auto&& copy) {
        std::vector<double> ms;
        for (int i = 0; i < 6; ++i) {
            MIMODET_CUDA_CHECK(cudaEventRecord(e0));
            copy();
            MIMODET_CUDA_CHECK(cudaEventRecord(e1));
            MIMODET_CUDA_CHECK(cudaEventSynchronize(e1));
            float t = 0;
            MIMODET_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
            if (i > 0) // the first is the warm-up
                ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        return ms[ms.size() / 2];
    };
    Bandwidth bw;
    bw.d2d_gbs = 2.0 * big /
                 (timed_ms([&] {
                      MIMODET_CUDA_CHECK(cudaMemcpyAsync(
                          b.get(), a.get(), big, cudaMemcpyDeviceToDevice));
                  }) *
                  1e6);
    bw.h2d_gbs = link / (timed_ms([&] {
                             MIMODET_CUDA_CHECK(cudaMemcpyAsync(
                                 a.get(), host.get(), link, cudaMemcpyHostToDevice));
                         }) *
                         1e6);
    bw.d2h_gbs = link / (timed_ms([&] {
                             MIMODET_CUDA_CHECK(cudaMemcpyAsync(
                                 host.get(), a.get(), link, cudaMemcpyDeviceToHost));
                         }) *
                         1e6);
    // Both ways: the download on a second stream that joins the timed (legacy) stream.
    cudaStream_t other;
    cudaEvent_t start, joined;
    MIMODET_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    MIMODET_CUDA_CHECK(cudaEventCreateWithFlags(&start, cudaEventDisableTiming));
    MIMODET_CUDA_CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
    bw.duplex_gbs = 2.0 * link /
                    (timed_ms([&] {
                         MIMODET_CUDA_CHECK(cudaEventRecord(start, 0));
                         MIMODET_CUDA_CHECK(cudaStreamWaitEvent(other, start, 0));
                         MIMODET_CUDA_CHECK(cudaMemcpyAsync(
                             host2.get(), b.get(), link, cudaMemcpyDeviceToHost, other));
                         MIMODET_CUDA_CHECK(cudaMemcpyAsync(
                             a.get(), host.get(), link, cudaMemcpyHostToDevice, 0));
                         MIMODET_CUDA_CHECK(cudaEventRecord(joined, other));
                         MIMODET_CUDA_CHECK(cudaStreamWaitEvent(0, joined, 0));
                     }) *
                     1e6);
    MIMODET_CUDA_CHECK(cudaEventDestroy(start));
    MIMODET_CUDA_CHECK(cudaEventDestroy(joined));
    MIMODET_CUDA_CHECK(cudaStreamDestroy(other));
    MIMODET_CUDA_CHECK(cudaEventDestroy(e0));
    MIMODET_CUDA_CHECK(cudaEventDestroy(e1));
    return bw;
}

} // namespace bench
} // namespace mimodet
