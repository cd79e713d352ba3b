/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A NOMA uplink like mehlhose2022's experiments (section 5): K users at small angular
 * separation seen by an array of M antennas (uniform circular or linear, neighbours half a
 * wavelength apart), a line-of-sight channel per user with its power and a random phase,
 * optionally scattered paths around each user's direction (a one-ring model: Rician with
 * factor K_R, L paths of CN(0, 1) gain at directions N(theta_k, spread^2); python/mimodet/
 * noma.py's channel() states the formula), white Gaussian noise; a transmission is a
 * training block and a data block of symbols. */

#ifndef INCLUDED_MIMODET_CORE_APSM_NOMA_SCENARIO_H
#define INCLUDED_MIMODET_CORE_APSM_NOMA_SCENARIO_H

#include <mimodet/constellation.h>
#include <mimodet/layout.h>
#include <cstdint>
#include <vector>

namespace mimodet {
namespace apsm {

enum class ArrayShape { circular, linear };

struct NomaScenario {
    std::size_t antennas = 16, users = 6;
    std::size_t training_symbols = 685, data_symbols = 3840; //!< section 5's transmission
    ArrayShape array = ArrayShape::circular;
    double separation_deg = 5.0; //!< between neighbouring users' directions
    double center_deg = 0.0;     //!< the users' mean direction
    std::vector<double> powers;  //!< p_k; empty: 1 for every user
    std::size_t scatter_paths = 0;    //!< L scattered paths per user; 0: line of sight only
    double angular_spread_deg = 20.0; //!< standard deviation of the paths' directions
    double rician_k_db = 0.0;         //!< line-of-sight to scattered power (+-100 dB)
    double snr_db = 20.0;        //!< of a unit-power user per antenna: N0 = 10^(-snr/10)
    Modulation modulation = Modulation::qpsk;
    std::uint64_t seed = 1;
};

struct NomaTransmission {
    std::vector<cf32> channel;                  //!< [M][K]: h_k in column k
    std::vector<cf32> training_rx, data_rx;     //!< [T][M], [N][M]
    std::vector<cf32> training_tx, data_tx;     //!< [T][K], [N][K] symbols
    std::vector<std::uint8_t> data_points;      //!< [N][K] constellation indices sent
    double n0 = 0.0;
};

//! The steering vector of direction theta (radians) for the scenario's array ([M]).
std::vector<cf32> steering_vector(ArrayShape array, std::size_t antennas, double theta);

//! One transmission; the same scenario (seed included) gives the same transmission.
NomaTransmission simulate_noma(const NomaScenario& scenario);

} // namespace apsm
} // namespace mimodet

#endif
