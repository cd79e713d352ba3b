/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_PRECISION_PRECISION_H
#define INCLUDED_MIMODET_CORE_PRECISION_PRECISION_H

/* Narrow floating-point storage, emulated in float32 (docs/precision.md): rounding to
 * binary16, bfloat16 and the two OCP FP8 formats (round to nearest, ties to even,
 * subnormals kept, saturating at the largest finite value), and the power-of-two scale
 * that keeps a block of values inside a format's range. */

#include <mimodet/detector.h>
#include <mimodet/precision.h>
#include <cstddef>
#include <cstdint>

namespace mimodet {
namespace precision {

struct Format {
    int mantissa_bits; //!< stored fraction bits
    int min_exponent;  //!< exponent of the smallest normal value (1 - bias)
    float max;         //!< largest finite value
};
//! The format's parameters; fp32 is binary32's.
Format format_of(Precision p);

//! v rounded to the format (fp32: v). NaN stays NaN; beyond the largest finite value,
//! including infinity, saturates to it with v's sign.
float round_to(Precision p, float v);

/*! The power of two s with max_abs * s in (max / 2, max] of the format: the largest values
 * of a block keep all their bits and the smallest as many as the range allows. 1 for fp32
 * and bf16 (float32's exponent range), for max_abs 0 and for a max_abs not finite. */
float block_scale(Precision p, float max_abs);

/*! out[i] = round_to(p, s * in[i]) / s per real and imaginary part, s = block_scale of
 * the block's largest finite component: what a detector reading the stored block (and
 * multiplying by 1/s) computes with. Non-finite components pass through unchanged (the
 * detectors erase them). in and out may be the same. */
void quantize_block(Precision p, const cf32* in, std::size_t n, cf32* out);

// llrs_to_int8: include/mimodet/precision.h

} // namespace precision
} // namespace mimodet

#endif
