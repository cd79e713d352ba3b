/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The in-run baseline of mimodet_bench: li2015's library approach to exact soft-output
 * MMSE (section III-B) with today's libraries, one call per stage: transpose H ->
 * cublasCgemmStridedBatched G = H^H H -> kernel A = G + N0 I
 *   -> cusolverDnCpotrfBatched -> cublasCgemmStridedBatched y_MF = H^H Y
 *   -> cublasCtrsmBatched x (L, then L^H) and A^-1 (for lambda) -> LLR kernel.
 * Device pointers only; no CUDA type in this header. */

#ifndef INCLUDED_MIMODET_CUBLAS_BASELINE_H
#define INCLUDED_MIMODET_CUBLAS_BASELINE_H

#include <mimodet/constellation.h>
#include <mimodet/layout.h>
#include <memory>

namespace mimodet {
namespace bench {

class CublasMmseBaseline
{
public:
    CublasMmseBaseline(const Dims& dims, std::size_t num_symbols, Modulation modulation);
    ~CublasMmseBaseline();
    //! h [N_sc][B][U], y [n][N_sc][B] -> llr [n][N_sc][U][Q], all on the device; `stream`
    //! is a cudaStream_t.
    void run(const cf32* d_h, float n0, const cf32* d_y, float* d_llr, void* stream);

private:
    struct Impl;
    std::unique_ptr<Impl> d_impl;
};

} // namespace bench
} // namespace mimodet

#endif
