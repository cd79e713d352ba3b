/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The APSM receiver behind include/mimodet/apsm.h on a GPU: training by CudaApsmTrainer
 * (float64), equalisation by CudaApsmDetector (float32), the checks, normalisation,
 * fallback and noise variance shared with the CPU (apsm::ApsmReceiver), the LLRs by the
 * CPU's demapper (apsm::soft_output). */

#ifndef INCLUDED_MIMODET_CUDA_APSM_CUDA_APSM_RECEIVER_H
#define INCLUDED_MIMODET_CUDA_APSM_CUDA_APSM_RECEIVER_H

#include "core/apsm/apsm.h"
#include "cuda/apsm/apsm_detector.h"
#include "cuda/apsm/apsm_trainer.h"
#include <mimodet/apsm.h>
#include <memory>
#include <vector>

namespace mimodet {
namespace cuda {

class CudaApsmReceiver : public ApsmDetector
{
public:
    //! Throws std::invalid_argument when the configuration exceeds the GPU kernels' limits.
    explicit CudaApsmReceiver(const ApsmConfig& config);

    void train(const cf32* r, const cf32* symbols, std::size_t count) override;
    bool trained() const override { return d_rx.trained(); }
    void detect(const cf32* r, std::size_t count, cf32* symbols, float* llr) override;
    double noise_variance(std::size_t user) const override;
    ApsmStats stats() const override { return d_stats; }
    std::string name() const override { return "cuda-apsm"; }
    std::size_t max_training_symbols() const override
    {
        return d_trainer.max_training_symbols();
    }
    const apsm::ApsmReceiver& receiver() const { return d_rx; }
    //! GPU time of the last training (CudaApsmTrainer::last_gpu_ms).
    double last_training_gpu_ms() const { return d_trainer.last_gpu_ms(); }

private:
    apsm::ApsmReceiver d_rx;
    CudaApsmTrainer d_trainer;
    std::unique_ptr<CudaApsmDetector> d_engine;
    Constellation d_constellation;
    ApsmStats d_stats;
    std::vector<cf32> d_z;
    std::vector<double> d_noise;
};

} // namespace cuda
} // namespace mimodet

#endif
