/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* APSM detection on a GPU (mehlhose2022 section 3): a filter trained by
 * apsm::ApsmReceiver (lib/core/apsm/apsm.h) applied to many received vectors at once, in
 * float32, all users in one launch. Section 3.3.3's balanced ordering: a block holds the
 * real samples of 32 received vectors and walks dictionary tiles staged in shared memory,
 * every user's coefficients beside them; a thread takes 4 samples by 4 entries, so that
 * each value loaded feeds four multiply-adds (a matrix product), and one kernel value
 * serves all users. When the vectors are few the dictionary is split over blocks too, and
 * the last block of each tile adds the partial sums in a fixed order.
 *
 * On GPUs with TF32 tensor cores (sm_80 and later) the same two matrix products (samples
 * by entries for the distances, kernel values by coefficients for the users' sums) run on
 * them by default, each float split into two TF32 values and multiplied as three products
 * (3xTF32), which keeps float32's precision; ApsmArithmetic chooses. */

#ifndef INCLUDED_MIMODET_CUDA_APSM_APSM_DETECTOR_H
#define INCLUDED_MIMODET_CUDA_APSM_APSM_DETECTOR_H

#include "core/apsm/apsm.h"
#include <mimodet/layout.h>
#include <cstddef>
#include <memory>

namespace mimodet {
namespace cuda {

//! The arithmetic of the detection's two matrix products.
enum class ApsmArithmetic {
    automatic, //!< tf32x3 where the GPU and the build have TF32 tensor cores (sm_80+), else fp32
    fp32,      //!< float32 multiply-adds on the CUDA cores (every GPU)
    tf32x3,    //!< the tensor cores, float32 precision from three TF32 products (sm_80+)
};

const char* to_string(ApsmArithmetic a);

class CudaApsmDetector
{
public:
    //! Antennas beyond kMaxAntennas are refused (the sample tile's shared memory).
    static constexpr std::size_t kMaxAntennas = 32;

    /*! Uploads the trained receiver's dictionary and filters to GPU `device`. tf32x3 on a
     * GPU without TF32 tensor cores, or from a build without an sm_80+ image, is refused
     * (std::invalid_argument). */
    explicit CudaApsmDetector(const apsm::ApsmReceiver& trained,
                              int device = 0,
                              ApsmArithmetic arithmetic = ApsmArithmetic::automatic);
    ~CudaApsmDetector();
    CudaApsmDetector(const CudaApsmDetector&) = delete;
    CudaApsmDetector& operator=(const CudaApsmDetector&) = delete;

    /*! Equalised symbols ([count][K]) of `count` received vectors ([count][M]), host
     * memory, as ApsmReceiver::detect: a vector with a non-finite sample gives zeros and
     * is counted. */
    void detect(const cf32* r, std::size_t count, cf32* out);
    /*! The same on device memory, queued on `stream` (a cudaStream_t; null: the default).
     * Calls on one detector go on one stream: they share its scratch for split sums. */
    void detect_device(const cf32* d_r, std::size_t count, cf32* d_out, void* stream = nullptr);

    std::size_t erased_vectors() const; //!< waits for the queued work
    std::size_t antennas() const;
    std::size_t users() const;
    ApsmArithmetic arithmetic() const; //!< fp32 or tf32x3: what automatic chose

private:
    struct Impl;
    std::unique_ptr<Impl> d_impl;
};

} // namespace cuda
} // namespace mimodet

#endif
