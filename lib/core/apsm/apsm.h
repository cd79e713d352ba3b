/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The partially linear APSM multiuser receiver of mehlhose2022
 * (../shared/papers/mehlhose2022-apsm-noma-gpu.md, section 2.4), float64: per user a filter
 * f in the sum RKHS of the linear and the Gaussian kernel, kappa = w_L kappa_L + w_G kappa_G,
 * trained by the adaptive projected subgradient method (eq. 8): at step n the filter is
 * projected onto the hyperslabs C_j = {f : |f(r_j) - b_j| <= eps} of the last W training
 * samples (eq. 9) and the projections are averaged with weights q_j (uniform). A complex
 * received vector r of M antennas gives the two real samples r_1 = [Re r; Im r] and
 * r_2 = [Im r; -Re r] with the targets Re b and Im b; detection is g(r) = f(r_1) + i f(r_2).
 *
 * What the paper leaves open, decided here:
 *  - Scale: the input is divided by the root mean squared norm of the training vectors
 *    (so that E||r||^2 = 1 on them); sigma^2 and eps refer to that scale, and a receiver
 *    trained and run on the input times any a > 0 gives the same decisions.
 *  - Start: f_0 is the least-squares linear filter of the training symbols (the paper's
 *    suggestion), or zero.
 *  - Never worse than its linear start: after training, a user whose filter predicts the
 *    training samples it has not yet seen (the a-priori errors of the second half of
 *    training) no better than the least-squares filter fits them all detects with the
 *    least-squares filter (counted per user). Its training error would not do: every
 *    training sample is in the dictionary, and the trained linear part alone was worse
 *    than least squares on data in tests. Without the least-squares start, the trained
 *    linear part is the fallback.
 *  - eps is not given in the paper; 0.01 (symbols of unit average energy) is ours. The
 *    paper's sigma^2 = 0.05 is relative to a signal scale it does not state; at this
 *    receiver's scale it lost to the least-squares receiver on noma_scenario (6 users 5
 *    degrees apart, QPSK), where 0.002 to 0.01 won at 4, 8 and 16 antennas: 0.005.
 * Every training sample is a Gaussian dictionary entry (2 per training symbol), shared by
 * the users; only the coefficients are per user. */

#ifndef INCLUDED_MIMODET_CORE_APSM_APSM_H
#define INCLUDED_MIMODET_CORE_APSM_APSM_H

#include <mimodet/apsm.h>
#include <mimodet/layout.h>
#include <algorithm>
#include <cstddef>
#include <vector>

namespace mimodet {
namespace apsm {

using mimodet::ApsmParams; // include/mimodet/apsm.h

/*! One user's filter on real vectors x of length 2M (normalised input):
 * f(x) = w_L c^T x + w_G sum_i gamma_i kappa_G(d_i, x), d_i the receiver's dictionary. */
struct ApsmFilter {
    std::vector<double> linear;      //!< c, [2M]
    std::vector<double> coefficient; //!< gamma, [dictionary size]
    bool linear_only = false;        //!< the Gaussian part did not pay: linear is the fallback
    double training_mse = 0.0;       //!< E|g(r) - b|^2 on the training symbols, as detected
    //! E|g(r) - b|^2 estimated as ApsmDetector::noise_variance says (include/mimodet/apsm.h)
    double noise_variance = 0.0;
};

//! What training starts from: the checked, normalised input, shared by the backends.
struct TrainingProblem {
    std::size_t antennas = 0, users = 0, count = 0; //!< M, K, training symbols
    double scale = 0.0;              //!< the RMS norm the input is divided by
    std::vector<double> dictionary;  //!< [D = 2 count][L = 2M]: the real samples
    std::vector<double> targets;     //!< [K][D]: Re b, Im b of each symbol
    std::vector<double> linear;      //!< [K][L]: c of f_0 (least squares or 0)
    std::size_t samples() const { return 2 * count; }
    std::size_t length() const { return 2 * antennas; }
};

//! What eq. 8's loop leaves, per user; sums of squared real errors.
struct TrainingResult {
    std::vector<double> linear;       //!< [K][L]: c after training
    std::vector<double> coefficient;  //!< [K][D]: gamma
    std::vector<double> error_full;   //!< [K]: over all D samples, the trained filter
    std::vector<double> error_linear; //!< [K]: the same, its linear part alone
    std::vector<double> error_start;  //!< [K]: the same, f_0 (the least-squares start)
    //! [K]: a-priori errors f_n(x_n) - b_n (before the projections of step n) of the
    //! samples n >= D/2
    std::vector<double> error_apriori;
};

/*! The first index of the samples whose a-priori errors estimate the noise variance. */
inline std::size_t apriori_first(std::size_t samples) { return samples / 2; }

//! The training samples projected onto (and kept as the dictionary): max_dictionary's rule.
inline std::size_t trained_samples(const ApsmParams& params, std::size_t samples)
{
    return params.max_dictionary ? std::min(samples, params.max_dictionary) : samples;
}

//! Eq. 8's loop on the CPU, float64 (the reference for the GPU trainer).
TrainingResult project(const ApsmParams& params, const TrainingProblem& problem);

class ApsmReceiver
{
public:
    ApsmReceiver(std::size_t antennas, std::size_t users, const ApsmParams& params = {});

    /*! Trains every user's filter, from scratch, on `count` training vectors r ([count][M])
     * and their symbols ([count][K], unit average energy). Throws std::invalid_argument on
     * non-finite or all-zero input and on fewer than M vectors (the least-squares start
     * needs M). */
    void train(const cf32* r, const cf32* symbols, std::size_t count);

    //! train()'s checks and normalisation, leaving the receiver untouched (throws as it).
    TrainingProblem prepare_training(const cf32* r, const cf32* symbols, std::size_t count) const;
    //! Installs a trained filter: the per-user fallback and noise variance are decided here.
    void install(TrainingProblem&& problem, const TrainingResult& result);

    /*! Equalised symbols ([count][K]) of `count` vectors ([count][M]), on `threads` CPU
     * threads (0: all cores). A vector with a non-finite sample gives 0 for every user
     * and is counted in erased_vectors(). */
    void detect(const cf32* r, std::size_t count, cf32* out, int threads = 0);
    /*! detect() in float32 (as the GPU computes): the normalised dictionary and the
     * coefficients rounded to float, squared distances summed in float, expf. */
    void detect_float32(const cf32* r, std::size_t count, cf32* out, int threads = 0);

    bool trained() const { return !d_dictionary.empty(); }
    std::size_t antennas() const { return d_antennas; }
    std::size_t users() const { return d_users; }
    const ApsmParams& params() const { return d_params; }
    double input_scale() const { return d_scale; } //!< the RMS norm the input is divided by
    std::size_t dictionary_size() const { return d_dictionary.size() / (2 * d_antennas); }
    //! The Gaussian dictionary: the normalised training samples, [D][2M].
    const std::vector<double>& dictionary() const { return d_dictionary; }
    const ApsmFilter& filter(std::size_t user) const { return d_filters.at(user); }
    std::size_t linear_fallbacks() const; //!< users detected by their linear part alone
    std::size_t erased_vectors() const { return d_erased; }

private:
    std::size_t d_antennas, d_users;
    ApsmParams d_params;
    double d_scale = 0.0;
    std::vector<double> d_dictionary; //!< [D][2M]: the normalised training samples
    std::vector<ApsmFilter> d_filters;
    // detect_float32's copies, made by install(): [D][L], w_G gamma [K][D] (0 for a user on
    // its linear part), w_L c [K][L]
    std::vector<float> d_dictionary_f, d_gamma_f, d_linear_f;
    std::size_t d_erased = 0;
};

//! The two real samples of a complex vector r of M antennas divided by `scale`.
void real_samples(const cf32* r, std::size_t antennas, double scale, double* x1, double* x2);

} // namespace apsm
} // namespace mimodet

#endif
