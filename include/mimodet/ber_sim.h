/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_BER_SIM_H
#define INCLUDED_MIMODET_BER_SIM_H

#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <functional>

namespace mimodet {

struct BerPoint {
    double snr_db = 0.0;
    std::uint64_t frames = 0;
    std::uint64_t bits = 0;
    std::uint64_t bit_errors = 0;
    std::uint64_t erasures = 0;  //!< LLRs exactly 0 (counted as errors too)
    double detect_seconds = 0.0; //!< wall time in set_channel + detect only
    double ber() const { return bits ? static_cast<double>(bit_errors) / bits : 0.0; }
    //! Detected (uncoded) bits per second of detector time, in Mb/s.
    double throughput_mbps() const
    {
        return detect_seconds > 0.0 ? bits / detect_seconds / 1e6 : 0.0;
    }
};

//! A detector configuration for the sizes and modulation of a simulated uplink (the one
//! place that copies them; everything else of the detector stays at its defaults).
DetectorConfig detector_config_for(const ChannelSimConfig& sim,
                                   DetectorMode mode = DetectorMode::chol,
                                   unsigned iterations = 3,
                                   Backend backend = Backend::cpu);

/*! Monte-Carlo BER of one detector at one SNR: `frames` frames from a simulator seeded
 * with sim.seed, stopping early once `min_errors` errors were seen (0 = never).
 * `progress` is called after each frame with the frames done; returning false cancels the
 * run.
 */
BerPoint simulate_ber_point(const ChannelSimConfig& sim,
                            const DetectorConfig& detector,
                            std::uint64_t frames,
                            std::uint64_t min_errors = 0,
                            const std::function<bool(std::uint64_t)>& progress = {});

} // namespace mimodet

#endif
