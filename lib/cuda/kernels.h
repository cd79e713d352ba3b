/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Host wrappers of the detector kernels (internal to lib/cuda). Every wrapper checks its
 * launch. Device layouts follow include/mimodet/layout.h:
 *   h     [N_sc][B][U]      channel
 *   wt    [N_sc][B][U]      W^T, W = A^-1 H^H (chol, zf)
 *   a     [N_sc][U][U]      A = G + N0 I, full Hermitian (cg, cr)
 *   y     [n][N_sc][B]      received symbols
 *   llr   [n][N_sc][U][Q]   LLRs;  x_hat [n][N_sc][U] */

#ifndef INCLUDED_MIMODET_KERNELS_H
#define INCLUDED_MIMODET_KERNELS_H

#include "device_math.cuh"
#include <mimodet/constellation.h>
#include <cstddef>
#include <cstdint>

namespace mimodet {
namespace cuda {

enum class KernelMode : int { chol = 0, cg = 1, cr = 2, zf = 3 };

//! The per-axis Gray PAM levels of a constellation, as the kernels' demapper takes them.
DemapTable demap_table(const Constellation& c);

//! Per-subcarrier status bits written by the prepare kernel (a retry under loading that
//! still failed is both).
enum : std::uint8_t { kStatusOk = 0, kStatusBad = 1, kStatusRegularized = 2 };

struct PrepareArgs {
    const float2* h;
    int num_subcarriers, num_antennas, num_users;
    float n0;
    KernelMode mode;
    float2* wt;             //!< chol/zf output
    float2* a;              //!< cg/cr output
    float* rho;             //!< [N_sc][U]
    float* inv_lambda;      //!< [N_sc][U]
    std::uint8_t* status;   //!< [N_sc]
    std::uint8_t* unusable; //!< [N_sc] users without a usable channel
};
void launch_prepare(const PrepareArgs& args, cudaStream_t stream);

struct EqualizeArgs {
    const float2* y;
    std::size_t num_symbols;
    int num_subcarriers, num_antennas, num_users;
    KernelMode mode;
    int iterations;
    const float2* wt; //!< chol/zf
    const float2* h;  //!< cg/cr
    const float2* a;  //!< cg/cr
    const float* rho;
    const float* inv_lambda;
    const std::uint8_t* status;
    DemapTable demap;
    float llr_sign; //!< +1 or -1
    float llr_clip; //!< +inf for none
    float* llr;
    float2* x_hat; //!< optional
    unsigned long long*
        bad_sample_count; //!< incremented per non-finite (symbol, subcarrier)
};
void launch_equalize(const EqualizeArgs& args, cudaStream_t stream);
//! Raises the kernels' dynamic shared memory limits on the current device; throws when
//! this GPU cannot give them what they need.
void configure_kernels();

} // namespace cuda
} // namespace mimodet

#endif
