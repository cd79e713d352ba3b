/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The fixed-complexity sphere decoder of roger2012 (../shared/papers/roger2012-fsd-sfsd-gpu.md)
 * for one subcarrier: the FSD ordering and sorted QR of its channel (section 3, after
 * Barbero and Thompson), the hard FSD (T fully expanded levels, then successive
 * interference cancellation, eq. 6) and the soft SFSD (the FSD list extended by bit-flipped
 * branches of the N_iter best paths, max-log LLRs of eqs. 9-11). Plain functions on one
 * received vector, so that the CPU detector, the tests and the GPU kernels (which mirror
 * them) share one statement of the algorithm. */

#ifndef INCLUDED_MIMODET_CORE_SPHERE_FSD_H
#define INCLUDED_MIMODET_CORE_SPHERE_FSD_H

#include <mimodet/constellation.h>
#include <mimodet/layout.h>
#include <cstddef>
#include <vector>

namespace mimodet {
namespace sphere {

//! Streams (users) a sphere decoder takes at most: n_T <= 8 (the bound).
constexpr std::size_t kMaxStreams = 8;

/*! One subcarrier's channel as the tree search uses it. The detection order puts the
 * stream detected first in the last column: y' = Q^H y and R (upper triangular, real
 * positive diagonal) give |y'_c - sum_{j >= c} R_cj s_j|^2 per level, from c = n-1 (the
 * tree's top, fully expanded) down to c = 0. */
struct FsdChannel {
    std::size_t users = 0, antennas = 0;
    std::vector<int> user_of_column; //!< [n] the user whose symbol column c holds
    std::vector<cf32> r;             //!< [n][n] row-major, upper triangular
    std::vector<cf32> qh;            //!< [n][B] row-major: Q^H
    std::vector<std::uint8_t> unusable_user; //!< [U] 1: no channel (its LLRs are 0)
    float noise_floor = 0.0f; //!< smallest N0 used for LLRs: the loading's, kLoading * mean
    bool usable = false;      //!< false: non-finite or all-zero H (every LLR 0)
    bool regularized = false; //!< rank-deficient: QR of [H; sqrt(delta) I] instead
};

/*! Orders and factors one subcarrier's H ([B][U] row-major) for `full_levels` fully
 * expanded levels (T). FSD ordering, level by level from the top: a fully expanded level
 * takes the remaining stream with the largest post-detection noise amplification
 * [(H_S^H H_S)^-1]_kk, a single-expansion level the smallest. Non-finite or all-zero H:
 * usable = false. A column whose energy is below mmse::kMinUserGain of the strongest is an
 * unusable user; a pivot below mmse::kMinPivotRatio of the largest column energy makes the
 * QR use the loaded matrix [H; sqrt(delta) I], delta = mmse::kLoading * mean energy
 * (counted as regularized), the MMSE family's rules. */
void prepare_fsd_channel(const cf32* h,
                         std::size_t antennas,
                         std::size_t users,
                         std::size_t full_levels,
                         FsdChannel& out);

//! A complete path of the tree: a point index per column, and its distance ||y' - R s||^2.
struct FsdPath {
    std::uint8_t point[kMaxStreams];
    float distance;
};

/*! The candidate list of one received vector y ([B]): the FSD's M^T paths and, for
 * list_paths = N_iter > 0, the SFSD's extension (from each of the N_iter best FSD paths,
 * at every level below the top, one branch per bit of the path's symbol with that bit
 * flipped, completed by SIC). `rotated` receives y' = Q^H y. Returns the index of the best
 * path in `list`. */
std::size_t fsd_candidates(const FsdChannel& ch,
                           const Constellation& constellation,
                           const cf32* y,
                           std::size_t full_levels,
                           std::size_t list_paths,
                           std::vector<FsdPath>& list);

/*! Max-log LLRs (positive means 1) of every user's bits from a candidate list, in user
 * order: llr[u * Q + p] = (min_{b_p = 0} d - min_{b_p = 1} d) / N0, N0 raised to
 * ch.noise_floor. A bit whose every candidate agrees has no counter-hypothesis in the
 * list: its missing distance is the list's largest, so that its LLR is the list's widest
 * margin, finite and of the agreed sign (0, an erasure, only if every candidate has the
 * same distance). Unusable users get 0. */
void fsd_llrs(const FsdChannel& ch,
              const Constellation& constellation,
              const std::vector<FsdPath>& list,
              float n0,
              float* llr);

/*! Hard decisions of the best path (point indices in user order) as LLRs of magnitude
 * `magnitude` with the sign of each bit (positive means 1); unusable users get 0. */
void fsd_hard_llrs(const FsdChannel& ch,
                   const Constellation& constellation,
                   const FsdPath& best,
                   float magnitude,
                   float* llr);

// Exhaustive references (float64, every one of the M^U vectors; tests and BER curves).

//! argmin_s ||y - H s||^2: a point index per user; h [B][U], y [B].
void ml_exhaustive(const cf32* h,
                   const cf32* y,
                   std::size_t antennas,
                   std::size_t users,
                   const Constellation& constellation,
                   std::uint8_t* points);
//! Exact max-log LLRs (eq. 9, positive means 1), llr[u * Q + p], N0 > 0.
void maxlog_exhaustive(const cf32* h,
                       const cf32* y,
                       std::size_t antennas,
                       std::size_t users,
                       const Constellation& constellation,
                       double n0,
                       float* llr);

} // namespace sphere
} // namespace mimodet

#endif
