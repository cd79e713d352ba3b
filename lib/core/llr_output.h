/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Internal to lib/core: the last step of every CPU detector's LLRs (the GPU's mirror is
 * finish_llr in lib/cuda/device_math.cuh). */

#ifndef INCLUDED_MIMODET_CORE_LLR_OUTPUT_H
#define INCLUDED_MIMODET_CORE_LLR_OUTPUT_H

#include <algorithm>
#include <cmath>

namespace mimodet {

/*! An LLR as written out: in the configured sign convention (sign = +-1), clipped (clip =
 * +inf for none). A value float arithmetic could not carry, NaN or an overflow to Inf
 * (finite samples near float's range, or an N0 near 0 with large samples), is erased to 0
 * like the LLRs of bad input (docs/data-contract.md): a decoder must never see Inf. */
inline float finish_llr(float v, float sign, float clip)
{
    const float s = sign * v;
    return std::isfinite(s) ? std::clamp(s, -clip, clip) : 0.0f;
}

} // namespace mimodet

#endif
