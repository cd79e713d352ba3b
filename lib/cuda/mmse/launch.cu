/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The launch choice of kernels.h's equalize call and the kernels' configuration: calls of
 * one or two symbols per subcarrier take the direct kernel (equalize_direct.cu), longer
 * ones the tiled kernel (equalize_tiled.cu). The other entry points of kernels.h live
 * beside their kernels: launch_prepare in prepare.cu, launch_equalize_fused and
 * fused_supported in equalize_tiled.cu, the matrix-free ones in equalize_matrix_free.cu.
 */

#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include "launch_helpers.h"
#include <cstddef>
#include <stdexcept>

namespace mimodet {
namespace cuda {

namespace {

//! Symbols per subcarrier below which each warp takes a (subcarrier, symbol) pair.
constexpr std::size_t kDirectBelowSymbols = 3;

} // namespace

void configure_kernels()
{
    int device = 0, optin = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    configure_prepare_kernels(optin);
    configure_tiled_kernels(optin);
    configure_box_kernels(optin);
}

bool equalize_reads_codes(std::size_t num_symbols)
{
    return num_symbols >= kDirectBelowSymbols;
}

void launch_equalize(const EqualizeArgs& args, cudaStream_t stream)
{
    if (args.y_codes && !equalize_reads_codes(args.num_symbols))
        throw std::logic_error("launch_equalize: codes go to the tiled kernel only");
    if (args.num_symbols == 0 || args.num_subcarriers == 0)
        return;
    if (args.num_symbols < kDirectBelowSymbols)
        launch_equalize_direct(args, stream);
    else
        launch_equalize_tiled(args, stream);
    MIMODET_CUDA_CHECK_LAUNCH("equalize_kernel");
}

} // namespace cuda
} // namespace mimodet
