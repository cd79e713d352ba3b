/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cuda/apsm/cuda_apsm_receiver.h"
#include "core/apsm/cpu_apsm_detector.h"
#include <algorithm>
#include <stdexcept>
#include <string>

namespace mimodet {
namespace cuda {

namespace {

const ApsmConfig& checked(const ApsmConfig& c)
{
    c.validate();
    if (c.num_antennas > CudaApsmDetector::kMaxAntennas ||
        c.num_antennas > CudaApsmTrainer::kMaxAntennas)
        throw std::invalid_argument("APSM on the GPU: at most " +
                                    std::to_string(CudaApsmDetector::kMaxAntennas) +
                                    " antennas, not " + std::to_string(c.num_antennas));
    if (c.num_users > 16)
        throw std::invalid_argument("APSM on the GPU: at most 16 users, not " +
                                    std::to_string(c.num_users));
    if (c.params.window > CudaApsmTrainer::kMaxWindow)
        throw std::invalid_argument("APSM on the GPU: a window of at most " +
                                    std::to_string(CudaApsmTrainer::kMaxWindow) + ", not " +
                                    std::to_string(c.params.window));
    return c;
}

} // namespace

CudaApsmReceiver::CudaApsmReceiver(const ApsmConfig& config)
    : ApsmDetector(checked(config)),
      d_rx(config.num_antennas, config.num_users, config.params),
      d_trainer(config.device),
      d_constellation(config.modulation),
      d_noise(config.num_users, 0.0)
{
}

void CudaApsmReceiver::train(const cf32* r, const cf32* symbols, std::size_t count)
{
    if (count > d_trainer.max_training_symbols())
        throw std::invalid_argument("APSM on the GPU: at most " +
                                    std::to_string(d_trainer.max_training_symbols()) +
                                    " training symbols on this device, not " +
                                    std::to_string(count));
    // Everything is built beside the current training and swapped in only when complete.
    apsm::TrainingProblem problem = d_rx.prepare_training(r, symbols, count);
    const apsm::TrainingResult result = d_trainer.project(d_config.params, problem);
    apsm::ApsmReceiver next = d_rx;
    next.install(std::move(problem), result);
    auto engine = std::make_unique<CudaApsmDetector>(next, d_config.device);
    d_rx = std::move(next);
    d_engine = std::move(engine);
    for (std::size_t k = 0; k < d_config.num_users; ++k)
        d_noise[k] = d_rx.filter(k).noise_variance;
    ++d_stats.trainings;
    d_stats.linear_fallbacks = d_rx.linear_fallbacks();
}

void CudaApsmReceiver::detect(const cf32* r, std::size_t count, cf32* symbols, float* llr)
{
    const std::size_t K = d_config.num_users, Q = d_constellation.bits_per_symbol();
    d_stats.vectors += count;
    if (!d_engine) {
        d_stats.untrained_vectors += count;
        if (symbols)
            std::fill(symbols, symbols + count * K, cf32(0.0f, 0.0f));
        if (llr)
            std::fill(llr, llr + count * K * Q, 0.0f);
        return;
    }
    cf32* z = symbols;
    if (!z) {
        d_z.resize(count * K);
        z = d_z.data();
    }
    d_engine->detect(r, count, z);
    d_stats.erased_vectors += apsm::count_erased(r, d_config.num_antennas, count);
    if (llr)
        apsm::soft_output(d_constellation, d_config, d_noise.data(), r, z, count, llr);
}

double CudaApsmReceiver::noise_variance(std::size_t user) const { return d_noise.at(user); }

} // namespace cuda
} // namespace mimodet
