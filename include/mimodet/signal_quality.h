/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_SIGNAL_QUALITY_H
#define INCLUDED_MIMODET_SIGNAL_QUALITY_H

/*! \file
 * What a receiver's displays show of a linear detector's output: the bias-free equalised
 * symbols (a constellation plot), and per user the post-equalizer SINR the detector
 * assumes and the EVM it measures (docs/signal-quality.md).
 */

#include <mimodet/constellation.h>
#include <mimodet/layout.h>
#include <cstdint>
#include <limits>
#include <vector>

namespace mimodet {

/*! x [n_symbols][N_sc][U] times unbias [N_sc][U] in place (Detector::equalizer_gains):
 * detect()'s x_hat becomes the bias-free estimate of each sent point. */
void remove_bias(cf32* x, std::size_t n_symbols, const float* unbias, const Dims& dims);

//! One user's quality over the estimates counted.
struct UserQuality {
    /*! 10 log10 of the harmonic mean, over the user's usable subcarriers, of the linear
     * post-equalizer SINR the detector's LLRs assume: 1 over the mean error variance it
     * assumes, which EVM^2 measures (NaN: none usable). */
    double sinr_db = std::numeric_limits<double>::quiet_NaN();
    /*! RMS EVM in percent: the RMS distance of the bias-free estimates to their nearest
     * constellation point, relative to the constellation's RMS amplitude (1). Decided
     * from the estimates themselves (no reference symbols), so where decisions err (EVM
     * above about half the minimum distance) it reads low. NaN: no estimate counted. */
    double evm_percent = std::numeric_limits<double>::quiet_NaN();
    std::uint64_t estimates = 0; //!< estimates counted (erased ones, exactly 0, are not)
};

/*! Per-user SINR and EVM of bias-free estimates, per OFDM symbol and accumulated over a
 * span of symbols (a frame: the symbols of one channel). Not thread-safe. */
class SignalQuality
{
public:
    SignalQuality(const Dims& dims, Modulation modulation);

    //! The channel in force's post-equalizer SINR, [N_sc][U] (Detector::equalizer_gains).
    void set_sinr(const float* sinr);
    /*! Counts n_symbols items of bias-free estimates x [n][N_sc][U]. Estimates exactly 0
     * (erased by the detector) or on a subcarrier whose SINR is 0 are skipped. Per
     * symbol, optionally: sinr_db [n][U] (the channel's SINR per user, as sinr_db of
     * totals()) and evm_percent [n][U] (that symbol's EVM per user; NaN if none counted).
     */
    void add(const cf32* x,
             std::size_t n_symbols,
             float* sinr_db = nullptr,
             float* evm_percent = nullptr);
    //! Per user, over the symbols added since the last reset(); the SINR is the channel's.
    std::vector<UserQuality> totals() const;
    //! Symbols added since the last reset().
    std::uint64_t symbols() const { return d_symbols; }
    void reset();

    //! The constellation point nearest to z.
    cf32 nearest(cf32 z) const;

private:
    Dims d_dims;
    Constellation d_constellation;
    std::vector<float> d_levels_re, d_levels_im; // separable constellations: per axis
    std::vector<int> d_grid; // [re level][im level] -> point index
    bool d_separable = false;
    std::vector<float> d_sinr;           // [N_sc][U]
    std::vector<double> d_user_sinr_db;  // [U], of d_sinr
    std::vector<double> d_error_energy;  // [U], since reset()
    std::vector<std::uint64_t> d_counted; // [U]
    std::uint64_t d_symbols = 0;
};

} // namespace mimodet

#endif
