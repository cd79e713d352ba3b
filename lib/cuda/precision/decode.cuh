/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* One code of narrow input (include/mimodet/precision.h) to float32 on the device: exact
 * for every code (each format's values are float32 values), NaN and infinity included,
 * as lib/core/precision's decode_value. Shared by the decode kernel (quantize.cu) and the
 * kernels that read narrow tensors directly. */

#ifndef INCLUDED_MIMODET_CUDA_PRECISION_DECODE_CUH
#define INCLUDED_MIMODET_CUDA_PRECISION_DECODE_CUH

#include <mimodet/detector.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cstdint>
#include <type_traits>

namespace mimodet {
namespace cuda {

//! kPrecision is a Precision as an int, known at compile time (no branch).
template <int kPrecision>
__device__ __forceinline__ float decode_code_of(std::uint32_t code)
{
    constexpr Precision p = static_cast<Precision>(kPrecision);
    if constexpr (p == Precision::fp16) {
        return __half2float(__ushort_as_half(static_cast<unsigned short>(code)));
    } else if constexpr (p == Precision::bf16) { // the upper half of a binary32
        return __uint_as_float(code << 16);
    } else if constexpr (p == Precision::fp8_e5m2) { // the upper byte of a binary16
        return __half2float(__ushort_as_half(static_cast<unsigned short>(code << 8)));
    } else if constexpr (p == Precision::fp8_e4m3) {
        const __half_raw h = __nv_cvt_fp8_to_halfraw(
            static_cast<__nv_fp8_storage_t>(code), __NV_E4M3);
        return __half2float(__half(h));
    } else {
        return __uint_as_float(code);
    }
}

//! `precision` is a Precision (an int, so that kernels can take it as an argument).
__device__ __forceinline__ float decode_code(std::uint32_t code, int precision)
{
    switch (static_cast<Precision>(precision)) {
    case Precision::fp16:
        return decode_code_of<static_cast<int>(Precision::fp16)>(code);
    case Precision::bf16:
        return decode_code_of<static_cast<int>(Precision::bf16)>(code);
    case Precision::fp8_e5m2:
        return decode_code_of<static_cast<int>(Precision::fp8_e5m2)>(code);
    case Precision::fp8_e4m3:
        return decode_code_of<static_cast<int>(Precision::fp8_e4m3)>(code);
    default:
        break;
    }
    return __uint_as_float(code);
}

/*! Calls f(std::integral_constant<int, P>{}) for the narrow format `precision`, so that
 * a loop of decodes inside f has no branch on the format. */
template <typename F>
__device__ __forceinline__ void with_code_format(int precision, F&& f)
{
    switch (static_cast<Precision>(precision)) {
    case Precision::fp16:
        f(std::integral_constant<int, static_cast<int>(Precision::fp16)>{});
        break;
    case Precision::bf16:
        f(std::integral_constant<int, static_cast<int>(Precision::bf16)>{});
        break;
    case Precision::fp8_e4m3:
        f(std::integral_constant<int, static_cast<int>(Precision::fp8_e4m3)>{});
        break;
    case Precision::fp8_e5m2:
        f(std::integral_constant<int, static_cast<int>(Precision::fp8_e5m2)>{});
        break;
    default:
        break;
    }
}

//! The complex value of codes (re, im) at `index` (complex values) of a code array of
//! `bytes` per code, times `scale`.
__device__ __forceinline__ float2
decode_complex(const void* codes, std::size_t index, int bytes, int precision, float scale)
{
    std::uint32_t re = 0, im = 0;
    if (bytes == 2) {
        const ushort2 c = static_cast<const ushort2*>(codes)[index];
        re = c.x;
        im = c.y;
    } else if (bytes == 1) {
        const uchar2 c = static_cast<const uchar2*>(codes)[index];
        re = c.x;
        im = c.y;
    } else {
        const uint2 c = static_cast<const uint2*>(codes)[index];
        re = c.x;
        im = c.y;
    }
    return make_float2(decode_code(re, precision) * scale, decode_code(im, precision) * scale);
}

} // namespace cuda
} // namespace mimodet

#endif
