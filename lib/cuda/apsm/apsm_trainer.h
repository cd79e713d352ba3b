/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* APSM training on a GPU (mehlhose2022 eq. 8, section 3): apsm::project's loop, float64,
 * for all users at once. Every kernel value the loop needs is among the training samples,
 * so one kernel first computes the whole kernel matrix kappa(x_i, x_j) (D x D, D = 2 x the
 * training symbols, the linear and Gaussian parts summed); then a persistent kernel, a
 * block per user, runs all D steps without returning to the host: each step is one dot
 * product over the dictionary (f_n(x_n)) and the W projections of the window, which only
 * touch W coefficients and the W filter values of the window. */

#ifndef INCLUDED_MIMODET_CUDA_APSM_APSM_TRAINER_H
#define INCLUDED_MIMODET_CUDA_APSM_APSM_TRAINER_H

#include "core/apsm/apsm.h"
#include <cstddef>
#include <memory>

namespace mimodet {
namespace cuda {

class CudaApsmTrainer
{
public:
    //! The kernel matrix takes 8 D^2 bytes: 4096 symbols (D = 8192) need 512 MiB.
    static constexpr std::size_t kMaxTrainingSymbols = 4096;
    //! The training loop keeps gamma and the targets of all D samples in shared memory:
    //! 16 D bytes and 8.8 KB more, within the device's opt-in limit per block.
    static std::size_t shared_memory_bytes(std::size_t samples);
    static constexpr std::size_t kMaxWindow = 32; //!< the window is one warp's, a lane per sample
    static constexpr std::size_t kMaxAntennas = 32;

    explicit CudaApsmTrainer(int device = 0);
    ~CudaApsmTrainer();
    CudaApsmTrainer(const CudaApsmTrainer&) = delete;
    CudaApsmTrainer& operator=(const CudaApsmTrainer&) = delete;

    /*! What apsm::project gives (float64; sums in another order, so equal to rounding).
     * Throws std::invalid_argument for a problem beyond the limits above. */
    apsm::TrainingResult project(const ApsmParams& params, const apsm::TrainingProblem& problem);

    //! GPU time of the last project() from the first upload to the last download, in ms.
    double last_gpu_ms() const;
    /*! The most training symbols this device takes: kMaxTrainingSymbols, or fewer where
     * its shared memory per block is smaller (4096 on an H100 or A100, 2894 with 99 KB
     * (sm_86/89), 1774 with 64 KB (sm_75)). */
    std::size_t max_training_symbols() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d_impl;
};

} // namespace cuda
} // namespace mimodet

#endif
