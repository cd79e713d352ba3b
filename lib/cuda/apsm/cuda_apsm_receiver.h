/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The APSM receiver behind include/mimodet/apsm.h on a GPU: training by CudaApsmTrainer
 * (float64), equalisation by CudaApsmDetector (float32); the rest (checks, swap of a
 * complete training, erasures, noise variances, LLRs) is apsm::SoftApsmDetector's, shared
 * with the CPU. */

#ifndef INCLUDED_MIMODET_CUDA_APSM_CUDA_APSM_RECEIVER_H
#define INCLUDED_MIMODET_CUDA_APSM_CUDA_APSM_RECEIVER_H

#include "core/apsm/apsm.h"
#include "core/apsm/cpu_apsm_detector.h"
#include "cuda/apsm/apsm_detector.h"
#include "cuda/apsm/apsm_trainer.h"
#include <mimodet/apsm.h>
#include <memory>

namespace mimodet {
namespace cuda {

class CudaApsmReceiver : public apsm::SoftApsmDetector
{
public:
    //! Throws std::invalid_argument when the configuration exceeds the GPU kernels' limits.
    explicit CudaApsmReceiver(const ApsmConfig& config);

    std::string name() const override { return "cuda-apsm"; }
    std::size_t max_training_symbols() const override
    {
        return d_trainer.max_training_symbols();
    }
    //! GPU time of the last training (CudaApsmTrainer::last_gpu_ms).
    double last_training_gpu_ms() const { return d_trainer.last_gpu_ms(); }

protected:
    apsm::TrainingResult solve(const apsm::TrainingProblem& problem) override
    {
        return d_trainer.project(d_config.params, problem);
    }
    void prepare(const apsm::ApsmReceiver& next) override
    {
        d_next = std::make_unique<CudaApsmDetector>(next, d_config.device);
    }
    void installed() override { d_engine = std::move(d_next); }
    std::size_t equalize(const cf32* r, std::size_t count, cf32* z) override;

private:
    CudaApsmTrainer d_trainer;
    std::unique_ptr<CudaApsmDetector> d_engine, d_next; // in force, being readied
};

} // namespace cuda
} // namespace mimodet

#endif
