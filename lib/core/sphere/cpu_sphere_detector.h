/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_SPHERE_CPU_SPHERE_DETECTOR_H
#define INCLUDED_MIMODET_CORE_SPHERE_CPU_SPHERE_DETECTOR_H

#include "core/sphere/fsd.h"
#include <mimodet/detector.h>
#include <atomic>
#include <vector>

namespace mimodet {

/*! The sphere decoders on the CPU (modes fsd, sfsd, ml): set_channel() orders and
 * factors every subcarrier's channel (lib/core/sphere/fsd.h), detect() searches each
 * (symbol, subcarrier) vector, OpenMP over them. fsd writes LLRs of magnitude 1 with the
 * sign of the best path's bits; sfsd the max-log LLRs of its list; ml exact max-log over
 * every vector (float64). x_hat, if asked for, receives the detected constellation
 * points (fsd, sfsd) or zeros (ml). The MMSE family's erasure rules hold: non-finite or
 * all-zero H erases its subcarrier, a user without a channel is erased alone, non-finite
 * y erases its vector, N0 < 0 or not finite erases everything; all counted. */
class CpuSphereDetector : public Detector
{
public:
    explicit CpuSphereDetector(const DetectorConfig& config);

    void set_channel(const cf32* h, float n0) override;
    void detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat) override;
    bool has_channel() const override { return d_has_channel; }
    DetectorStats stats() const override;
    std::string name() const override { return "cpu-" + to_string(d_config.mode); }

private:
    Dims d_dims;
    Constellation d_constellation;
    int d_threads;
    std::size_t d_full_levels, d_list_paths;
    bool d_has_channel = false;
    bool d_n0_valid = false;
    float d_n0 = 0.0f;
    std::vector<sphere::FsdChannel> d_channels; //!< [N_sc]
    std::vector<cf32> d_h;                      //!< ml: the channel, [N_sc][B][U]

    std::uint64_t d_channel_count = 0, d_symbols = 0, d_bad_channel = 0,
                  d_regularized = 0, d_unusable_users = 0, d_invalid_n0 = 0;
    std::atomic<std::uint64_t> d_bad_samples{ 0 };
};

} // namespace mimodet

#endif
