/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CUDA_PRECISION_QUANTIZE_H
#define INCLUDED_MIMODET_CUDA_PRECISION_QUANTIZE_H

// No CUDA header here (as cuda_detector.h), so plain C++ tests can call it.

#include <mimodet/detector.h>
#include <cstddef>
#include <cstdint>

namespace mimodet {
namespace cuda {

/*! DetectorConfig::precision on the GPU, emulated in place (quantize.cu): each of
 * `blocks` consecutive blocks of block_items values of device memory gets
 * lib/core/precision's block scale and rounding, bit for bit, queued on `stream` (a
 * cudaStream_t; null: the legacy default stream). fp32 does nothing. */
void quantize_blocks(cf32* data,
                     std::size_t block_items,
                     std::size_t blocks,
                     Precision precision,
                     void* stream = nullptr);

/*! Narrow input (mimodet/precision.h) to float32 on the device, exactly decode_block:
 * `blocks` consecutive blocks of block_items complex values, block k multiplied by
 * scales[k] (device memory) or, scales null, by `scale`; queued on `stream`. */
void decode_blocks(const void* codes,
                   Precision precision,
                   std::size_t block_items,
                   std::size_t blocks,
                   const float* scales,
                   float scale,
                   cf32* out,
                   void* stream);

//! lib/core/precision's llrs_to_int8 on device memory, bit for bit, queued on `stream`.
void llrs_to_int8(const float* llr, std::size_t n, float scale, std::int8_t* out, void* stream);
//! lib/core/precision's llrs_to_fp16 on device memory, bit for bit, queued on `stream`.
void llrs_to_fp16(const float* llr, std::size_t n, std::uint16_t* out, void* stream);
//! The LLRs in `format` (int8 with `scale`, or fp16) into out, queued on `stream`.
void llrs_to_narrow(
    const float* llr, std::size_t n, LlrFormat format, float scale, void* out, void* stream);

} // namespace cuda
} // namespace mimodet

#endif
