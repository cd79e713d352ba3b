/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The APSM receiver behind include/mimodet/apsm.h on the CPU: apsm::ApsmReceiver (float64)
 * for training and equalisation, the project's max-log demapper for the LLRs. */

#ifndef INCLUDED_MIMODET_CORE_APSM_CPU_APSM_DETECTOR_H
#define INCLUDED_MIMODET_CORE_APSM_CPU_APSM_DETECTOR_H

#include "core/apsm/apsm.h"
#include <mimodet/apsm.h>
#include <vector>

namespace mimodet {
namespace apsm {

/*! Max-log LLRs ([count][K][bits]) of equalised symbols z ([count][K]) of the received
 * vectors r ([count][M]): user k's with SINR 1 / noise_variance[k] (floored at 1e-6, so
 * that a perfect fit gives large but finite LLRs), sign and clip as the config says; a
 * vector with a NaN/Inf sample gets LLR 0. Shared by the CPU and GPU backends. */
void soft_output(const Constellation& constellation,
                 const ApsmConfig& config,
                 const double* noise_variance,
                 const cf32* r,
                 const cf32* z,
                 std::size_t count,
                 float* llr);

//! How many of `count` vectors ([count][M]) have a NaN/Inf sample.
std::size_t count_erased(const cf32* r, std::size_t antennas, std::size_t count);

class CpuApsmDetector : public ApsmDetector
{
public:
    explicit CpuApsmDetector(const ApsmConfig& config);

    void train(const cf32* r, const cf32* symbols, std::size_t count) override;
    bool trained() const override { return d_rx.trained(); }
    void detect(const cf32* r, std::size_t count, cf32* symbols, float* llr) override;
    double noise_variance(std::size_t user) const override;
    ApsmStats stats() const override;
    std::string name() const override
    {
        return d_config.cpu_precision == ApsmPrecision::float32 ? "cpu-apsm-float32" : "cpu-apsm";
    }
    const ApsmReceiver& receiver() const { return d_rx; }

private:
    ApsmReceiver d_rx;
    Constellation d_constellation;
    ApsmStats d_stats;
    std::vector<cf32> d_z;
    std::vector<double> d_noise;
};

} // namespace apsm
} // namespace mimodet

#endif
