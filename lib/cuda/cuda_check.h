/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Internal to lib/cuda: every CUDA runtime call and kernel launch goes through these, so
 * a failure becomes a std::runtime_error naming the call, the file and the line. */

#ifndef INCLUDED_MIMODET_CUDA_CHECK_H
#define INCLUDED_MIMODET_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdexcept>
#include <string>

namespace mimodet {
namespace cuda {

[[noreturn]] inline void
throw_cuda_error(cudaError_t err, const char* what, const char* file, int line)
{
    throw std::runtime_error(std::string("CUDA error in ") + what + " (" + file + ":" +
                             std::to_string(line) + "): " + cudaGetErrorName(err) + ": " +
                             cudaGetErrorString(err));
}

} // namespace cuda
} // namespace mimodet

#define MIMODET_CUDA_CHECK(call)                                                        \
    do {                                                                                \
        const cudaError_t mimodet_err_ = (call);                                        \
        if (mimodet_err_ != cudaSuccess)                                                \
            ::mimodet::cuda::throw_cuda_error(mimodet_err_, #call, __FILE__, __LINE__); \
    } while (0)

//! After a <<<...>>> launch: configuration errors show up in cudaGetLastError().
#define MIMODET_CUDA_CHECK_LAUNCH(kernel_name)                               \
    do {                                                                     \
        const cudaError_t mimodet_err_ = cudaGetLastError();                 \
        if (mimodet_err_ != cudaSuccess)                                     \
            ::mimodet::cuda::throw_cuda_error(                               \
                mimodet_err_, "launch of " kernel_name, __FILE__, __LINE__); \
    } while (0)

#endif
