/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CUDA_UPLINK_DETECTOR_H
#define INCLUDED_MIMODET_CUDA_UPLINK_DETECTOR_H

#include <mimodet/uplink_detector.h>
#include <memory>

namespace mimodet {
namespace cuda {

//! The receive chain and the detector on the GPU (CudaOfdmChain), behind UplinkDetector.
//! Throws when no GPU is usable.
std::unique_ptr<UplinkDetector> make_cuda_uplink_detector(const OfdmConfig& ofdm,
                                                          const DetectorConfig& detector);

} // namespace cuda
} // namespace mimodet

#endif
