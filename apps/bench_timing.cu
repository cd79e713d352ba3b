/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_timing.h"
#include <cuda/cuda_check.h>

namespace mimodet {
namespace bench {

namespace {
__global__ void spin_kernel(unsigned long long nanoseconds)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
}
} // namespace

L2Flusher::L2Flusher()
{
    int device = 0, l2 = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    d_bytes = 2ul * static_cast<unsigned long>(l2);
    MIMODET_CUDA_CHECK(cudaMalloc(&d_buffer, d_bytes));
}

L2Flusher::~L2Flusher() { cudaFree(d_buffer); }

void L2Flusher::flush(void* stream)
{
    MIMODET_CUDA_CHECK(
        cudaMemsetAsync(d_buffer, 0x5a, d_bytes, static_cast<cudaStream_t>(stream)));
}

void hold_stream(void* stream, double microseconds)
{
    spin_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<unsigned long long>(microseconds * 1000.0));
    MIMODET_CUDA_CHECK_LAUNCH("spin_kernel");
}

} // namespace bench
} // namespace mimodet
