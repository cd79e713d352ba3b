/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Host helpers of the MMSE kernels' launches (internal to lib/cuda/mmse): occupancy and
 * waves, the switch from a run-time user count to the kernels' UP, and the entry points
 * by which launch.cu reaches the kernels of the other files (each .cu launches the
 * kernels it holds: no relocatable device code). */

#ifndef INCLUDED_MIMODET_MMSE_LAUNCH_HELPERS_H
#define INCLUDED_MIMODET_MMSE_LAUNCH_HELPERS_H

#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include <type_traits>
#include <cstddef>
#include <limits>

namespace mimodet {
namespace cuda {

//! Blocks of `kernel` that fit on the whole current GPU at once.
inline long long resident_blocks(const void* kernel, int threads, std::size_t smem)
{
    int device = 0, sms = 0, per_sm = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    MIMODET_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    return static_cast<long long>(per_sm) * sms;
}

//! Rounds of `blocks` blocks when `slots` fit at once (a partial round costs a whole
//! one).
inline long long waves(long long blocks, long long slots)
{
    return slots > 0 ? (blocks + slots - 1) / slots
                     : std::numeric_limits<long long>::max();
}

inline int round_up_users(int u) { return u <= 4 ? 4 : u <= 8 ? 8 : u <= 16 ? 16 : 32; }

//! Calls f(std::integral_constant<int, UP>{}), UP = `users` rounded up to 4, 8, 16 or 32:
//! the one switch from a run-time user count to the kernels' template parameter.
template <typename F>
void with_user_tile(int users, F&& f)
{
    switch (round_up_users(users)) {
    case 4:
        return f(std::integral_constant<int, 4>{});
    case 8:
        return f(std::integral_constant<int, 8>{});
    case 16:
        return f(std::integral_constant<int, 16>{});
    default:
        return f(std::integral_constant<int, 32>{});
    }
}

//! Raises the prepare kernel's dynamic shared memory limit for U > 16 to what it needs;
//! throws when `optin`, the device's opt-in limit, is below that (prepare.cu).
void configure_prepare_kernels(int optin);
//! Raises the dynamic shared memory limit of every tiled instantiation to the tiles'
//! limit, or to `optin` where that is lower (equalize_tiled.cu).
void configure_tiled_kernels(int optin);

//! The direct kernel: a warp per (subcarrier, symbol), for calls of one or two symbols
//! per subcarrier (equalize_direct.cu).
void launch_equalize_direct(const EqualizeArgs& args, cudaStream_t stream);
//! The tiled kernel on a prepared channel: a block per subcarrier and tile of symbols
//! (equalize_tiled.cu).
void launch_equalize_tiled(const EqualizeArgs& args, cudaStream_t stream);

} // namespace cuda
} // namespace mimodet

#endif
