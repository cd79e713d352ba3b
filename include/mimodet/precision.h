/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_PRECISION_H
#define INCLUDED_MIMODET_PRECISION_H

/* Narrow input and output for the detectors (docs/precision.md, "Narrow input"): a block of complex
 * values stored as codes of a Precision, real and imaginary part each one code, with one
 * float per block by which the decoded codes are multiplied. This is what
 * Detector::set_channel_encoded and detect_encoded take, and what crosses the host link
 * when they run on a GPU. */

#include <mimodet/detector.h>
#include <cstddef>
#include <cstdint>

namespace mimodet {
namespace precision {

//! Bytes of one code (one real value): 4 for fp32, 2 for fp16 and bf16, 1 for FP8.
std::size_t code_bytes(Precision p);

/*! Codes of n complex values (2 n codes: re, im, ...): IEEE binary16, the upper half of
 * a binary32 (bfloat16), OCP FP8 E4M3 or E5M2, binary32 for fp32. The values are those
 * of quantize_block (block scale s, round to nearest even, saturating): code * (1 / s).
 * Returns 1 / s, the block's decode scale. NaN is the format's NaN; infinity is the
 * format's infinity, or NaN in E4M3, which has none (the detectors erase both). */
float encode_block(Precision p, const cf32* in, std::size_t n, void* codes);

//! out[i] = decode(codes[i]) * scale: exactly quantize_block's values for encode_block's
//! codes and scale.
void decode_block(
    Precision p, const void* codes, std::size_t n, float scale, cf32* out);

/*! LLRs as int8 for a narrower download and decoders that take them: out[i] =
 * round(llr[i] * scale) (ties to even) saturated to [-127, 127]; NaN gives 0. The LLR
 * of one step is 1 / scale (8: steps of 0.125, |LLR| up to 15.9). */
void llrs_to_int8(const float* llr, std::size_t n, float scale, std::int8_t* out);

/*! LLRs as IEEE binary16 codes, half of float32's bytes with 11 significant bits:
 * round to nearest even, saturated to +-65504 (no infinity), NaN gives +0. */
void llrs_to_fp16(const float* llr, std::size_t n, std::uint16_t* out);

//! One code of an exactly representable value (round_to's output), and back.
std::uint32_t encode_value(Precision p, float v);
float decode_value(Precision p, std::uint32_t code);

} // namespace precision
} // namespace mimodet

#endif
