/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CHANNEL_SIM_H
#define INCLUDED_MIMODET_CHANNEL_SIM_H

#include <mimodet/constellation.h>
#include <mimodet/layout.h>
#include <cstdint>
#include <random>
#include <vector>

namespace mimodet {

enum class ChannelModel {
    rayleigh, //!< i.i.d. CN(0,1) entries, independent per subcarrier and frame
    kronecker //!< H = R^{1/2} H_w with R[i][j] = r^|i-j| across base-station antennas
};

ChannelModel parse_channel_model(const std::string& name);
std::string to_string(ChannelModel m);

struct ChannelSimConfig {
    std::size_t num_antennas = 128;     //!< B
    std::size_t num_users = 16;         //!< U
    std::size_t num_subcarriers = 128;  //!< N_sc
    std::size_t symbols_per_frame = 14; //!< N_sym, channel constant over these
    Modulation modulation = Modulation::qam16;
    ChannelModel channel = ChannelModel::rayleigh;
    double correlation = 0.0; //!< r of the exponential model (kronecker only), 0 <= r < 1
    double snr_db = 10.0; //!< average receive SNR = U*Es/N0 (li2015 section II-A), Es = 1
    std::uint64_t seed = 1;

    Dims dims() const
    {
        return Dims{
            num_antennas, num_users, num_subcarriers, bits_per_symbol(modulation)
        };
    }
    void validate() const;
};

//! One coherence block: everything a detector gets and everything a BER meter needs.
struct Frame {
    std::vector<cf32> y;            //!< [N_sym][N_sc][B]
    std::vector<cf32> h;            //!< [N_sc][B][U]
    float n0 = 0.0f;                //!< noise variance per complex sample
    std::vector<std::uint8_t> bits; //!< [N_sym][N_sc][U][bits], values 0/1
    std::vector<cf32> x;            //!< transmitted symbols [N_sym][N_sc][U]
};

/*! Uplink simulator: random bits per user, TS 38.211 mapping, a B x U channel per
 * subcarrier held for a frame, and AWGN with N0 = U*Es/SNR. One seed makes every frame
 * reproducible.
 */
class ChannelSimulator
{
public:
    explicit ChannelSimulator(const ChannelSimConfig& config);

    /*! Draws the next frame into `frame` (reusing its storage). With `bits`
     * ([N_sym][N_sc][U][bits] bytes, as Frame::bits) those are sent instead of random
     * ones: 0 is bit 0, anything else bit 1. */
    void next_frame(Frame& frame, const std::uint8_t* bits = nullptr);

    void set_snr_db(double snr_db);
    double snr_db() const { return d_config.snr_db; }
    float noise_variance() const;
    const ChannelSimConfig& config() const { return d_config; }
    const Constellation& constellation() const { return d_constellation; }

private:
    ChannelSimConfig d_config;
    Constellation d_constellation;
    std::mt19937_64 d_rng;
    std::vector<cf32> d_corr_sqrt; //!< lower Cholesky factor of R ([B][B], row-major)
    std::vector<cf32> d_white;     //!< scratch for H_w of one subcarrier ([B][U])

    cf32 complex_gaussian(float variance);
};

} // namespace mimodet

#endif
