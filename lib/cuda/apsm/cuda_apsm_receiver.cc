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
    : apsm::SoftApsmDetector(checked(config)), d_trainer(config.device)
{
}

std::size_t CudaApsmReceiver::equalize(const cf32* r, std::size_t count, cf32* z)
{
    d_engine->detect(r, count, z);
    return apsm::count_erased(r, d_config.num_antennas, count);
}

} // namespace cuda
} // namespace mimodet
