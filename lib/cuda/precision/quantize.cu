/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Narrow storage on the GPU, emulated in place: lib/core/precision/precision.cc's
 * block scale and rounding, bit for bit (the same exact operations in float: a power-of-two
 * scale, a division by the format's quantum, rint, saturation). One CUDA block per data
 * block: a max-reduction of the finite components, then each component rounded. */

#include "quantize.h"
#include "decode.cuh"
#include "cuda/cuda_check.h"
#include <algorithm>
#include <cuda_fp16.h>
#include <stdexcept>

namespace mimodet {
namespace cuda {

namespace {

constexpr int kThreads = 512;

struct DeviceFormat {
    int mantissa_bits, min_exponent;
    float max;
};

__device__ DeviceFormat format_of(int precision)
{
    switch (static_cast<Precision>(precision)) {
    case Precision::fp16:
        return { 10, -14, 65504.0f };
    case Precision::bf16:
        return { 7, -126, 3.38953139e38f };
    case Precision::fp8_e4m3:
        return { 3, -6, 448.0f };
    case Precision::fp8_e5m2:
        return { 2, -14, 57344.0f };
    default:
        break;
    }
    return { 23, -126, 3.40282347e38f };
}

__device__ float round_to(const DeviceFormat& f, float v)
{
    if (isnan(v) || v == 0.0f)
        return v;
    const float a = fabsf(v);
    if (a >= f.max)
        return copysignf(f.max, v);
    int e = 0;
    frexpf(a, &e);
    const int exponent = max(e - 1, f.min_exponent);
    const float quantum = ldexpf(1.0f, exponent - f.mantissa_bits);
    const float r = rintf(a / quantum) * quantum; // exact: powers of two, RNE
    return copysignf(fminf(r, f.max), v);
}

__global__ void __launch_bounds__(kThreads)
    quantize_blocks_kernel(float2* data, std::size_t block_items, int precision)
{
    __shared__ float warp_max[kThreads / 32];
    float2* block = data + blockIdx.x * block_items;
    float m = 0.0f;
    for (std::size_t i = threadIdx.x; i < block_items; i += blockDim.x) {
        const float2 v = block[i];
        if (isfinite(v.x))
            m = fmaxf(m, fabsf(v.x));
        if (isfinite(v.y))
            m = fmaxf(m, fabsf(v.y));
    }
    for (int off = 16; off > 0; off >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if (threadIdx.x % 32 == 0)
        warp_max[threadIdx.x / 32] = m;
    __syncthreads();
    m = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w)
        m = fmaxf(m, warp_max[w]);
    const DeviceFormat f = format_of(precision);
    // block_scale: the largest power of two s with m s <= max (bf16: float32's range, 1).
    float s = 1.0f;
    if (static_cast<Precision>(precision) != Precision::bf16 && m > 0.0f && isfinite(m)) {
        int e = 0;
        frexp(static_cast<double>(f.max) / m, &e); // ratio = r 2^e, r in [0.5, 1)
        s = static_cast<float>(ldexp(1.0, min(max(e - 1, -126), 126)));
    }
    const float inv = 1.0f / s;
    for (std::size_t i = threadIdx.x; i < block_items; i += blockDim.x) {
        float2 v = block[i];
        if (isfinite(v.x))
            v.x = round_to(f, v.x * s) * inv;
        if (isfinite(v.y))
            v.y = round_to(f, v.y * s) * inv;
        block[i] = v;
    }
}

__global__ void llrs_to_int8_kernel(const float* llr, std::size_t n, float scale, std::int8_t* out)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float v = rintf(llr[i] * scale);
        out[i] = isnan(v) ? 0 : static_cast<std::int8_t>(fminf(fmaxf(v, -127.0f), 127.0f));
    }
}

__global__ void llrs_to_fp16_kernel(const float* llr, std::size_t n, std::uint16_t* out)
{
    // Clamped first: __float2half_rn overflows to infinity above 65504 + half a step.
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float v = llr[i];
        out[i] = isnan(v) ? 0
                          : __half_as_ushort(__float2half_rn(fminf(fmaxf(v, -65504.0f), 65504.0f)));
    }
}

__global__ void decode_blocks_kernel(const void* codes,
                                    int bytes,
                                    int precision,
                                    std::size_t block_items,
                                    std::size_t items,
                                    const float* scales,
                                    float scale,
                                    float2* out)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
         i < items;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        out[i] = decode_complex(
            codes, i, bytes, precision, scales ? scales[i / block_items] : scale);
}

} // namespace

void decode_blocks(const void* codes,
                   Precision precision,
                   std::size_t block_items,
                   std::size_t blocks,
                   const float* scales,
                   float scale,
                   cf32* out,
                   void* stream)
{
    const std::size_t items = block_items * blocks;
    if (items == 0)
        return;
    const int bytes = precision == Precision::fp32                                   ? 4
                      : precision == Precision::fp16 || precision == Precision::bf16 ? 2
                                                                                     : 1;
    const std::size_t grid = std::min<std::size_t>((items + 255) / 256, 8192);
    decode_blocks_kernel<<<static_cast<unsigned>(grid),
                           256,
                           0,
                           static_cast<cudaStream_t>(stream)>>>(codes,
                                                                bytes,
                                                                static_cast<int>(precision),
                                                                block_items,
                                                                items,
                                                                scales,
                                                                scale,
                                                                reinterpret_cast<float2*>(out));
    MIMODET_CUDA_CHECK_LAUNCH("decode_blocks_kernel");
}

void llrs_to_int8(const float* llr, std::size_t n, float scale, std::int8_t* out, void* stream)
{
    if (n == 0)
        return;
    const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 4096);
    llrs_to_int8_kernel<<<static_cast<unsigned>(blocks), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        llr, n, scale, out);
    MIMODET_CUDA_CHECK_LAUNCH("llrs_to_int8_kernel");
}

void llrs_to_fp16(const float* llr, std::size_t n, std::uint16_t* out, void* stream)
{
    if (n == 0)
        return;
    const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 4096);
    llrs_to_fp16_kernel<<<static_cast<unsigned>(blocks), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        llr, n, out);
    MIMODET_CUDA_CHECK_LAUNCH("llrs_to_fp16_kernel");
}

void llrs_to_narrow(
    const float* llr, std::size_t n, LlrFormat format, float scale, void* out, void* stream)
{
    if (format == LlrFormat::int8)
        llrs_to_int8(llr, n, scale, static_cast<std::int8_t*>(out), stream);
    else if (format == LlrFormat::fp16)
        llrs_to_fp16(llr, n, static_cast<std::uint16_t*>(out), stream);
    else
        throw std::logic_error("llrs_to_narrow: float32 is not narrow");
}

void quantize_blocks(cf32* data,
                     std::size_t block_items,
                     std::size_t blocks,
                     Precision precision,
                     void* stream)
{
    if (blocks == 0 || block_items == 0 || precision == Precision::fp32)
        return;
    quantize_blocks_kernel<<<static_cast<unsigned>(blocks),
                             kThreads,
                             0,
                             static_cast<cudaStream_t>(stream)>>>(
        reinterpret_cast<float2*>(data), block_items, static_cast<int>(precision));
    MIMODET_CUDA_CHECK_LAUNCH("quantize_blocks_kernel");
}

} // namespace cuda
} // namespace mimodet
