/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "precision.h"
#include <algorithm>
#include <cfenv>
#include <cmath>
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

void llrs_to_int8(const float* llr, std::size_t n, float scale, std::int8_t* out)
{
    for (std::size_t i = 0; i < n; ++i) {
        const float v = std::rint(llr[i] * scale); // in float, as the GPU's kernel
        out[i] = std::isnan(v) ? 0 : static_cast<std::int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
}

} // namespace precision
} // namespace mimodet
