/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CUDA_PULPO_ATOMIC_OPS_H
#define INCLUDED_MIMODET_CUDA_PULPO_ATOMIC_OPS_H

/* PULPO's atomic operations on the GPU, batched: the device twins of
 * lib/core/pulpo/atomic_ops.h, same shapes, layouts and rules, on device pointers, queued
 * on `stream` (a cudaStream_t; null: the legacy default stream). No CUDA header here, as
 * cuda_detector.h. One thread per output element; (H) reads A as stored, coalesced along
 * its rows, without a transposed copy. Building blocks for new iterative algorithms, not
 * tuned kernels: the BOX detector has its own fused kernel (lib/cuda/box/box.cu). */

#include "core/pulpo/atomic_ops.h"

namespace mimodet {
namespace cuda {
namespace pulpo {

using ::mimodet::pulpo::Shape;

void mvp(const Shape& s, const cf32* a, const cf32* x, const cf32* y, cf32* z, void* stream = nullptr);
void hermitian_step(const Shape& s,
                    const cf32* a,
                    const cf32* x,
                    const cf32* y,
                    float tau,
                    cf32* z,
                    void* stream = nullptr);
void prox_box(const cf32* x,
              std::size_t count,
              float rho,
              float a_re,
              float a_im,
              cf32* z,
              void* stream = nullptr);

} // namespace pulpo
} // namespace cuda
} // namespace mimodet

#endif
