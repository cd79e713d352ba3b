/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "precision.h"
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

namespace mimodet {
namespace precision {

Format format_of(Precision p)
{
    switch (p) {
    case Precision::fp16:
        return { 10, -14, 65504.0f };
    case Precision::bf16:
        return { 7, -126, 3.38953139e38f }; // (2 - 2^-7) 2^127
    case Precision::fp8_e4m3:
        return { 3, -6, 448.0f }; // exponent 15 with fraction 111 is NaN
    case Precision::fp8_e5m2:
        return { 2, -14, 57344.0f };
    case Precision::fp32:
        break;
    }
    return { 23, -126, std::numeric_limits<float>::max() };
}

float round_to(Precision p, float v)
{
    if (p == Precision::fp32 || std::isnan(v) || v == 0.0f)
        return v;
    const Format f = format_of(p);
    const double a = std::fabs(static_cast<double>(v));
    if (a >= f.max)
        return std::copysign(f.max, v);
    int e = 0;
    std::frexp(a, &e); // a = m 2^e, m in [0.5, 1): the leading bit has exponent e - 1
    const int exponent = std::max(e - 1, f.min_exponent); // subnormals share min_exponent's quantum
    const double quantum = std::ldexp(1.0, exponent - f.mantissa_bits);
    // a / quantum is exact (a power-of-two scale of a float); rint rounds to nearest,
    // ties to even, in the default rounding mode.
    const double r = std::rint(a / quantum) * quantum;
    return std::copysign(static_cast<float>(std::min(r, static_cast<double>(f.max))), v);
}

float block_scale(Precision p, float max_abs)
{
    // bfloat16 has float32's exponent range: every float32 input fits as it is.
    if (p == Precision::fp32 || p == Precision::bf16 || !(max_abs > 0.0f) ||
        !std::isfinite(max_abs))
        return 1.0f;
    // The largest power of two s with max_abs * s <= max: ratio = r 2^e, r in [0.5, 1),
    // so s = 2^(e - 1) (frexp is exact; lib/cuda/precision/quantize.cu does the same).
    int e = 0;
    std::frexp(static_cast<double>(format_of(p).max) / max_abs, &e);
    return static_cast<float>(std::ldexp(1.0, std::clamp(e - 1, -126, 126)));
}

void quantize_block(Precision p, const cf32* in, std::size_t n, cf32* out)
{
    if (p == Precision::fp32) {
        if (out != in)
            std::copy(in, in + n, out);
        return;
    }
    float max_abs = 0.0f;
    for (std::size_t i = 0; i < n; ++i)
        for (float c : { in[i].real(), in[i].imag() })
            if (std::isfinite(c))
                max_abs = std::max(max_abs, std::fabs(c));
    const float s = block_scale(p, max_abs), inv = 1.0f / s;
    for (std::size_t i = 0; i < n; ++i) {
        auto q = [&](float c) { return std::isfinite(c) ? round_to(p, c * s) * inv : c; };
        out[i] = cf32(q(in[i].real()), q(in[i].imag()));
    }
}

std::size_t code_bytes(Precision p)
{
    switch (p) {
    case Precision::fp16:
    case Precision::bf16:
        return 2;
    case Precision::fp8_e4m3:
    case Precision::fp8_e5m2:
        return 1;
    case Precision::fp32:
        break;
    }
    return 4;
}

namespace {

//! Bit fields of the IEEE-like formats: exponent bits, bias = 1 - min_exponent.
struct Fields {
    int mantissa, exponent, bias;
};
Fields fields_of(Precision p)
{
    const Format f = format_of(p);
    const int exponent_bits = p == Precision::fp16 || p == Precision::fp8_e5m2 ? 5 : 4;
    return { f.mantissa_bits, exponent_bits, 1 - f.min_exponent };
}

std::uint32_t float_bits(float v)
{
    std::uint32_t b = 0;
    std::memcpy(&b, &v, sizeof b);
    return b;
}
float bits_float(std::uint32_t b)
{
    float v = 0.0f;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

} // namespace

std::uint32_t encode_value(Precision p, float v)
{
    if (p == Precision::fp32)
        return float_bits(v);
    if (p == Precision::bf16) // v is a bfloat16 value: its lower half is zero
        return std::isnan(v) ? 0x7fc0u : float_bits(v) >> 16;
    const Fields f = fields_of(p);
    const int width = 1 + f.exponent + f.mantissa;
    const std::uint32_t sign = std::signbit(v) ? 1u << (width - 1) : 0u;
    const std::uint32_t top = (1u << f.exponent) - 1; // the all-ones exponent
    if (std::isnan(v) || (std::isinf(v) && p == Precision::fp8_e4m3))
        return p == Precision::fp8_e4m3 ? 0x7fu : (top << f.mantissa) | (1u << (f.mantissa - 1));
    if (std::isinf(v))
        return sign | (top << f.mantissa);
    const double a = std::fabs(static_cast<double>(v));
    if (a == 0.0)
        return sign;
    int e = 0;
    std::frexp(a, &e); // a = m 2^e, m in [0.5, 1)
    const int exponent = e - 1;
    if (exponent < 1 - f.bias) // subnormal: a multiple of 2^(1 - bias - mantissa)
        return sign | static_cast<std::uint32_t>(std::ldexp(a, f.bias - 1 + f.mantissa));
    const std::uint32_t mant = static_cast<std::uint32_t>(
        std::ldexp(a, f.mantissa - exponent) - std::ldexp(1.0, f.mantissa));
    return sign | (static_cast<std::uint32_t>(exponent + f.bias) << f.mantissa) | mant;
}

float decode_value(Precision p, std::uint32_t code)
{
    if (p == Precision::fp32)
        return bits_float(code);
    if (p == Precision::bf16)
        return bits_float(code << 16);
    const Fields f = fields_of(p);
    const int width = 1 + f.exponent + f.mantissa;
    const bool negative = (code >> (width - 1)) & 1u;
    const std::uint32_t exp = (code >> f.mantissa) & ((1u << f.exponent) - 1);
    const std::uint32_t mant = code & ((1u << f.mantissa) - 1);
    const std::uint32_t top = (1u << f.exponent) - 1;
    double a = 0.0;
    if (p == Precision::fp8_e4m3 && exp == top && mant == (1u << f.mantissa) - 1)
        return std::numeric_limits<float>::quiet_NaN();
    if (p != Precision::fp8_e4m3 && exp == top)
        a = mant ? std::numeric_limits<double>::quiet_NaN()
                 : std::numeric_limits<double>::infinity();
    else if (exp == 0)
        a = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantissa);
    else
        a = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -f.mantissa),
                       static_cast<int>(exp) - f.bias);
    return static_cast<float>(negative ? -a : a);
}

float encode_block(Precision p, const cf32* in, std::size_t n, void* codes)
{
    float max_abs = 0.0f;
    if (p != Precision::fp32)
        for (std::size_t i = 0; i < n; ++i)
            for (float c : { in[i].real(), in[i].imag() })
                if (std::isfinite(c))
                    max_abs = std::max(max_abs, std::fabs(c));
    const float s = block_scale(p, max_abs);
    auto code = [&](float c) {
        return encode_value(p, std::isfinite(c) ? round_to(p, c * s) : c);
    };
    const std::size_t bytes = code_bytes(p);
    for (std::size_t i = 0; i < 2 * n; ++i) {
        const float c = i % 2 ? in[i / 2].imag() : in[i / 2].real();
        const std::uint32_t v = code(c);
        if (bytes == 4)
            static_cast<std::uint32_t*>(codes)[i] = v;
        else if (bytes == 2)
            static_cast<std::uint16_t*>(codes)[i] = static_cast<std::uint16_t>(v);
        else
            static_cast<std::uint8_t*>(codes)[i] = static_cast<std::uint8_t>(v);
    }
    return 1.0f / s;
}

void decode_block(Precision p, const void* codes, std::size_t n, float scale, cf32* out)
{
    const std::size_t bytes = code_bytes(p);
    auto at = [&](std::size_t i) -> std::uint32_t {
        if (bytes == 4)
            return static_cast<const std::uint32_t*>(codes)[i];
        if (bytes == 2)
            return static_cast<const std::uint16_t*>(codes)[i];
        return static_cast<const std::uint8_t*>(codes)[i];
    };
    // (a non-finite value times the scale stays what it is)
    for (std::size_t i = 0; i < n; ++i)
        out[i] = cf32(decode_value(p, at(2 * i)) * scale, decode_value(p, at(2 * i + 1)) * scale);
}

void llrs_to_int8(const float* llr, std::size_t n, float scale, std::int8_t* out)
{
    for (std::size_t i = 0; i < n; ++i) {
        const float v = std::rint(llr[i] * scale); // in float, as the GPU's kernel
        out[i] = std::isnan(v) ? 0 : static_cast<std::int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
}

void llrs_to_fp16(const float* llr, std::size_t n, std::uint16_t* out)
{
    // round_to saturates (infinity too); the GPU's kernel clamps, then converts.
    for (std::size_t i = 0; i < n; ++i)
        out[i] = std::isnan(llr[i]) ? 0
                                    : static_cast<std::uint16_t>(encode_value(
                                          Precision::fp16, round_to(Precision::fp16, llr[i])));
}

} // namespace precision
} // namespace mimodet
