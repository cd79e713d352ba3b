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
 * vector with a NaN/Inf sample, or whose z overflowed to Inf/NaN, gets LLR 0. Shared by
 * the CPU and GPU backends. */
void soft_output(const Constellation& constellation,
                 const ApsmConfig& config,
                 const double* noise_variance,
                 const cf32* r,
                 const cf32* z,
                 std::size_t count,
                 float* llr);

//! How many of `count` vectors ([count][M]) have a NaN/Inf sample.
std::size_t count_erased(const cf32* r, std::size_t antennas, std::size_t count);

/*! Finite samples near float's range can overflow the filters' output: such a vector's z
 * ([count][K]) is set to 0 for every user, as a NaN/Inf sample's is. Returns how many
 * (vectors of r with a NaN/Inf sample are not counted again). */
std::size_t erase_overflows(const cf32* r, std::size_t antennas, cf32* z, std::size_t users,
                            std::size_t count);

/*! What the CPU and GPU receivers share: training built beside the current one and swapped
 * in only when complete (a refused or failed training leaves it in force), untrained and
 * erased vectors, the noise variances, the LLRs (soft_output). A backend supplies eq. 8's
 * loop and the equalisation. */
class SoftApsmDetector : public ApsmDetector
{
public:
    void train(const cf32* r, const cf32* symbols, std::size_t count) final;
    bool trained() const final { return d_rx.trained(); }
    void detect(const cf32* r, std::size_t count, cf32* symbols, float* llr) final;
    double noise_variance(std::size_t user) const final { return d_noise.at(user); }
    ApsmStats stats() const final { return d_stats; }
    const ApsmReceiver& receiver() const { return d_rx; }

protected:
    explicit SoftApsmDetector(const ApsmConfig& config);
    //! Eq. 8's loop on the backend (apsm::project on the CPU).
    virtual TrainingResult solve(const TrainingProblem& problem) = 0;
    //! Readies the backend for `next`, not yet in force; may throw (nothing changes then).
    virtual void prepare(const ApsmReceiver& next) { (void)next; }
    //! `next` is in force now (after prepare()).
    virtual void installed() {}
    //! z ([count][K]) of r ([count][M]) with the receiver in force; returns how many
    //! vectors had a NaN/Inf sample (their z is 0).
    virtual std::size_t equalize(const cf32* r, std::size_t count, cf32* z) = 0;

    ApsmReceiver d_rx;

private:
    Constellation d_constellation;
    ApsmStats d_stats;
    std::vector<cf32> d_z;
    std::vector<double> d_noise;
};

class CpuApsmDetector : public SoftApsmDetector
{
public:
    explicit CpuApsmDetector(const ApsmConfig& config) : SoftApsmDetector(config) {}

    std::string name() const override
    {
        return d_config.cpu_precision == ApsmPrecision::float32 ? "cpu-apsm-float32" : "cpu-apsm";
    }

protected:
    TrainingResult solve(const TrainingProblem& problem) override
    {
        return project(d_config.params, problem);
    }
    std::size_t equalize(const cf32* r, std::size_t count, cf32* z) override;
};

} // namespace apsm
} // namespace mimodet

#endif
