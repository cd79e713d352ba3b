/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Host wrappers of the detector kernels (internal to lib/cuda), defined beside their
 * kernels in lib/cuda/mmse/ (launch.cu there says which file holds which). Every wrapper
 * checks its launch. Device layouts follow include/mimodet/layout.h:
 *   h     [N_sc][B][U]      channel
 *   a     [N_sc][U][U]      full Hermitian: A^-1 (chol, zf) or A = G + N0 I (cg, cr)
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

enum class KernelMode : int { chol = 0, cg = 1, cr = 2, zf = 3, fsd = 4, sfsd = 5, box = 6 };

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
    float2* a;              //!< A^-1 (chol/zf) or A (cg/cr)
    float* rho;             //!< [N_sc][U]
    float* inv_lambda;      //!< [N_sc][U]
    std::uint8_t* status;   //!< [N_sc]
    std::uint8_t* unusable; //!< [N_sc] users without a usable channel
    //! Optional (null: not counted): running totals on the device, [kChannelCountBad]
    //! subcarriers without a usable channel, [kChannelCountRegularized] those inverted
    //! under extra loading, [kChannelCountUnusableUsers] users without a usable channel.
    unsigned long long* counts;
    //! A narrow-precision channel's codes (the fused kernel's narrow instantiation; null
    //! otherwise), for the reads of H past G: a loaded subcarrier's |w_u|^2, where h (the
    //! float H) is not decoded.
    const void* h_codes;
    float h_scale;
    int code_precision, code_bytes;
    /*! Optional (null: n0 everywhere): subcarriers in frames of `frame_subcarriers`, each
     * with its own N0, frame_n0[sc / frame_subcarriers] (device memory). A frame whose N0
     * is NaN is skipped: nothing is written or counted for its subcarriers. */
    const float* frame_n0;
    int frame_subcarriers;
};
enum ChannelCount : int {
    kChannelCountBad = 0,
    kChannelCountRegularized = 1,
    kChannelCountUnusableUsers = 2,
    kChannelCounts = 3
};
void launch_prepare(const PrepareArgs& args, cudaStream_t stream);

struct EqualizeArgs {
    const float2* y;
    std::size_t num_symbols;
    int num_subcarriers, num_antennas, num_users;
    KernelMode mode;
    int iterations;
    float n0; //!< read by the matrix-free kernel only (the others: the prepared gains)
    const float2* h;
    const float2* a; //!< A^-1 (chol/zf) or A (cg/cr); unused by the matrix-free kernel
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
    /* Narrow input (include/mimodet/precision.h), read by the tiled kernels only (launch
     * tiled: 3 or more symbols, or fused), chol/cg/cr: y_codes non-null means y and h are
     * these codes of `code_precision` (a Precision other than fp32; code_bytes each), y
     * [n][N_sc][B] scaled per symbol by y_scales[n], h [N_sc][B][U] by h_scale; y and h
     * are not read. Decoded in the register staging they are the float values exactly;
     * on the tensor-core path (UP >= 16, S >= 32, sm_80+) the sums of their products run
     * in the tensor cores' order (float rounding, not bit for bit). */
    const void* y_codes;
    const float* y_scales;
    const void* h_codes;
    float h_scale;
    int code_precision;
    int code_bytes;
    /*! The tiled kernels only (fused or not): y, llr and x_hat are rows of this many
     * subcarriers per symbol, of which the first num_subcarriers are detected (0:
     * num_subcarriers), and frame_n0 / frame_subcarriers as PrepareArgs' (a frame whose
     * N0 is NaN is skipped). The receive chain's window of frames is one launch so. */
    std::size_t row_subcarriers;
    const float* frame_n0;
    int frame_subcarriers;
    //! The matrix-free kernel only (null: not counted): PrepareArgs::counts, to which it
    //! adds the status of the channel it forms no state for.
    unsigned long long* channel_counts;
};
void launch_equalize(const EqualizeArgs& args, cudaStream_t stream);
//! Whether launch_equalize takes args.y_codes for `num_symbols` (the tiled kernel).
bool equalize_reads_codes(std::size_t num_symbols);

/*! The first call on a channel not prepared yet, when its symbols are one tile per
 * subcarrier (fused_supported: 1..64 symbols; every mode and user count): one kernel
 * prepares the channel (the outputs of launch_prepare, into `prep`) and equalizes,
 * reading H once. */
bool fused_supported(std::size_t num_symbols);
void launch_equalize_fused(const EqualizeArgs& args,
                           const PrepareArgs& prep,
                           cudaStream_t stream);

/*! CG/CR straight from H (no A, no prepare): applying H and then H^H in each iteration
 * costs 2 B U per product with A where forming A costs B U^2 per subcarrier, so for calls
 * of few symbols per channel (broumas2023's single-symbol systems) this is the cheaper
 * path. matrix_free_supported(): H of one subcarrier fits a warp's shared memory;
 * matrix_free_pays(): `symbols` on one channel cost less this way. */
bool matrix_free_supported(int num_antennas, int num_users);
bool matrix_free_pays(int num_users, int iterations, std::size_t symbols);
void launch_equalize_matrix_free(const EqualizeArgs& args, cudaStream_t stream);
// The sphere decoders (lib/cuda/sphere/fsd.cu, mirroring lib/core/sphere/fsd.cc).
constexpr int kSphereMaxStreams = 8;     //!< users (the core's sphere::kMaxStreams)
constexpr int kSphereMaxListPaths = 16;  //!< SFSD N_iter (DetectorConfig's bound)
constexpr std::uint8_t kSphereUnusable = 0x80; //!< in `order`: that user has no channel

/*! The constellation's points in index order (bits b(0).. as the index's MSB first), and
 * where they form a square grid of `levels` per axis at (2 i - levels + 1) * step, the
 * point of grid cell (i_re, i_im) at grid[i_re * levels + i_im] (levels 0: no grid). */
struct SpherePoints {
    int count, bits;
    int levels;
    float step;
    float2 p[256];
    std::uint8_t grid[256];
};
//! Fills `levels`, `step` and `grid` of points whose `count` and `p` are set.
void find_sphere_grid(SpherePoints& points);
struct SpherePrepareArgs {
    const float2* h;
    int num_subcarriers, num_antennas, num_users, full_levels;
    float2* r;              //!< [U][U][N_sc] upper triangular, imag(R_cc) = 1 / R_cc
    float2* qh;             //!< [U][B][N_sc] Q^H (element-major: a warp's reads coalesce)
    std::uint8_t* order;    //!< [N_sc][U] user of column c, | kSphereUnusable
    float* floor;           //!< [N_sc] smallest N0 of the LLRs
    std::uint8_t* status;   //!< [N_sc] as launch_prepare's
    std::uint8_t* unusable; //!< [N_sc] users without a channel
    unsigned long long* counts; //!< optional, as PrepareArgs::counts
    /*! Elements of r and qh lie this far apart (0: num_subcarriers). A range of a larger
     * channel's subcarriers passes its pointers offset by the range's first subcarrier
     * and the whole channel's count here, so that its state lands where the whole
     * channel's would. */
    std::size_t state_stride;
};
void launch_prepare_sphere(const SpherePrepareArgs& args, cudaStream_t stream);
struct SphereDetectArgs {
    const float2* y;
    std::size_t num_symbols;
    int num_subcarriers, num_antennas, num_users;
    int full_levels, list_paths; //!< list_paths 0: the hard FSD
    const float2* r;  //!< as SpherePrepareArgs::r, element-major
    const float2* qh; //!< as SpherePrepareArgs::qh
    const std::uint8_t* order;
    const float* floor;
    const std::uint8_t* status;
    float n0;
    float llr_sign, llr_clip; //!< llr_clip +inf for none
    float* llr;
    float2* x_hat; //!< optional: the best path's points
    unsigned long long* bad_sample_count;
    SpherePoints points;
    std::size_t state_stride; //!< as SpherePrepareArgs::state_stride
    /*! Several channels in one launch (submit_frames): symbol t is on channel
     * frame_of_symbol[t], whose state starts frame * num_subcarriers elements into r,
     * qh, floor, status (order: times U) and whose N0 is frame_n0[frame]. Null: one
     * channel, N0 n0. */
    const int* frame_of_symbol;
    const float* frame_n0;
};
void launch_detect_sphere(const SphereDetectArgs& args, cudaStream_t stream);

// BOX (lib/cuda/box/box.cu, mirroring lib/core/box/): the channel is launch_prepare's
// (mode chol: A^-1, rho, 1/lambda, status) plus G and the step of launch_prepare_box.
enum class BoxStartKind : int { zero = 0, mf = 1, lmmse = 2 };
struct BoxPrepareArgs {
    const float2* h;
    int num_subcarriers, num_antennas, num_users;
    float box_step; //!< > 0: this step everywhere; 0: 1 / (Gershgorin bound of G)
    float2* gram;   //!< [N_sc][U][U] G = H^H H
    float* step;    //!< [N_sc] tau
};
void launch_prepare_box(const BoxPrepareArgs& args, cudaStream_t stream);
struct BoxDetectArgs {
    EqualizeArgs eq; //!< y, sizes, h, a = A^-1, rho, inv_lambda, status, LLR settings;
                     //!< iterations = box_iterations
    const float2* gram;
    const float* step;
    float bound_re, bound_im; //!< the box's half-widths
    int start;                //!< BoxStartKind
    const float* momentum;    //!< [iterations] FISTA's schedule; null: the plain iteration
};
void launch_detect_box(const BoxDetectArgs& args, cudaStream_t stream);
//! Raises the BOX kernel's dynamic shared memory limit (H of a subcarrier).
void configure_box_kernels(int optin);
//! Dynamic shared memory of one BOX detect block: H of a subcarrier and the iterates.
std::size_t box_detect_shared_bytes(int num_antennas, int num_users);

//! Raises the kernels' dynamic shared memory limits on the current device; throws when
//! this GPU cannot give them what they need.
void configure_kernels();

} // namespace cuda
} // namespace mimodet

#endif
