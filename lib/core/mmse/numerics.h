/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_MMSE_NUMERICS_H
#define INCLUDED_MIMODET_CORE_MMSE_NUMERICS_H

// The numerical rules of the soft-output MMSE family, one definition for the CPU detector
// (lib/core/mmse) and the GPU kernels (lib/cuda), so that both regularize and erase the
// same subcarriers and users. Plain constants: nvcc and g++ both read this header.

namespace mimodet {
namespace mmse {

//! Largest post-equalization SINR reported; keeps LLRs finite when N0 -> 0.
constexpr float kMaxSinr = 1e7f;
//! Relative diagonal loading for a singular or ill-conditioned A (fraction of mean diag
//! G).
constexpr float kLoading = 1e-5f;
//! A Cholesky pivot below this fraction of the largest diagonal entry counts as singular.
constexpr float kMinPivotRatio = 1e-6f;
//! A user whose channel energy G_uu is below this fraction of the strongest user's on the
//! subcarrier has no usable channel (float32 cannot tell it from zero): its LLRs are 0.
constexpr float kMinUserGain = 1e-6f;
//! Every detector's LLRs on a subcarrier it had to load are clipped here: their SINR
//! then rests on the loading's noise level, not a measured one (and a decoder needs no
//! more certainty than e^-50).
constexpr float kLoadedLlrClip = 50.0f;

} // namespace mmse
} // namespace mimodet

#endif
