/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The CG (li2015 Algorithm 1) and CR (broumas2023 Figure 4) iterations for one symbol on
 * a group of lanes, as the direct (equalize_direct.cu) and the matrix-free
 * (equalize_matrix_free.cu) kernels run them (the tiled kernel runs the same iterations
 * on its register tiles), and the product of a Hermitian matrix held column by column
 * with a vector spread over the lanes (internal to lib/cuda/mmse). */

#ifndef INCLUDED_MIMODET_MMSE_CG_CR_CUH
#define INCLUDED_MIMODET_MMSE_CG_CR_CUH

#include "cuda/kernels.h"
#include "device_helpers.cuh"

namespace mimodet {
namespace cuda {

/*! The CG (li2015 Algorithm 1) or CR (broumas2023 Figure 4) iterations for one symbol on
 * a group of UP lanes (lane = first + user): y_mf is this lane's entry of H^H y and
 * apply_a(v) returns this lane's entry of A v, v given by each lane's entry. Every lane
 * of the group must call it (apply_a may shuffle or synchronize). Returns this lane's
 * entry of x. */
template <int UP, typename ApplyA>
__device__ __forceinline__ float2
iterate(KernelMode mode, int iterations, float2 y_mf, const ApplyA& apply_a)
{
    auto step = [](float num, float den) {
        return (num > 0.0f && den > 0.0f) ? num / den : 0.0f;
    };
    float2 r = y_mf, pv = y_mf, x = make_float2(0.0f, 0.0f);
    if (mode == KernelMode::cg) {
        float rr = group_sum<UP>(cnorm(r));
        for (int it = 0; it < iterations; ++it) {
            const float2 sv = apply_a(pv);
            const float alpha = step(rr, group_sum<UP>(cmulc(pv, sv).x));
            x = cadd(x, cscale(pv, alpha));
            r = csub(r, cscale(sv, alpha));
            const float rr_next = group_sum<UP>(cnorm(r));
            const float beta = alpha > 0.0f ? step(rr_next, rr) : 0.0f;
            pv = cadd(r, cscale(pv, beta));
            rr = rr_next;
        }
    } else {
        float2 m = apply_a(r), e = m;
        float rm = group_sum<UP>(cmulc(r, m).x);
        for (int it = 0; it < iterations; ++it) {
            const float alpha = step(rm, group_sum<UP>(cnorm(e)));
            x = cadd(x, cscale(pv, alpha));
            r = csub(r, cscale(e, alpha));
            m = apply_a(r);
            const float rm_next = group_sum<UP>(cmulc(r, m).x);
            const float beta = alpha > 0.0f ? step(rm_next, rm) : 0.0f;
            pv = cadd(r, cscale(pv, beta));
            e = cadd(m, cscale(e, beta));
            rm = rm_next;
        }
    }
    return x;
}

/*! (M v) for this lane's user of a Hermitian U x U matrix M whose column `user` is
 * a_column(j) = M_{j,user} (0 on an inactive lane), v spread over the group's lanes
 * (lane = first + user): (M v)_u = sum_j conj(M_ju) v_j. kColumnInRegisters: compile-time
 * indices (a_column reads registers); otherwise a rolled loop keeps registers down. */
template <int UP, bool kColumnInRegisters, typename AColumn>
__device__ __forceinline__ float2
hermitian_times(const AColumn& a_column, float2 v, int U, int first)
{
    float2 out = make_float2(0.0f, 0.0f);
    if constexpr (kColumnInRegisters) {
#pragma unroll
        for (int j = 0; j < UP; ++j)
            if (j < U)
                out = cfmac(a_column(j), shfl(v, first + j), out);
    } else {
        for (int j = 0; j < U; ++j)
            out = cfmac(a_column(j), shfl(v, first + j), out);
    }
    return out;
}

} // namespace cuda
} // namespace mimodet

#endif
