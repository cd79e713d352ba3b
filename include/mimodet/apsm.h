/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The APSM NOMA multiuser receiver (mehlhose2022, docs/apsm.md): per user a partially
 * linear filter trained on known symbols by the adaptive projected subgradient method,
 * then applied to received vectors of M antennas, giving each user's equalised symbol and
 * max-log LLRs. A CPU implementation (float64) and a GPU one (training in float64,
 * detection in float32), chosen as the MIMO detectors are (make_apsm_detector). */

#ifndef INCLUDED_MIMODET_APSM_H
#define INCLUDED_MIMODET_APSM_H

#include <mimodet/constellation.h>
#include <mimodet/detector.h>
#include <mimodet/layout.h>
#include <cstdint>
#include <memory>
#include <string>

namespace mimodet {

/*! Eqs. 8-9's parameters. W, w_L, w_G are the paper's (section 5); sigma^2 and eps are
 * ours: the input is divided by the RMS norm of the training vectors, and these refer to
 * that scale (docs/apsm.md says how they were chosen). */
struct ApsmParams {
    std::size_t window = 20;         //!< W: concurrent projections per training step
    double weight_linear = 0.5;      //!< w_L, weight of the linear kernel
    double weight_gaussian = 0.5;    //!< w_G, weight of the Gaussian kernel
    double kernel_variance = 0.005;  //!< sigma^2 of the Gaussian kernel, normalised input
    double tolerance = 0.01;         //!< eps: hyperslab half-width, in symbol units (Es = 1)
    bool least_squares_start = true; //!< start from the least-squares linear filter, else 0
    /*! Gaussian dictionary entries at most (2 per training symbol; 0: every training
     * sample). When the dictionary is full, training ends: the section's later samples are
     * not projected onto, and count only in the training errors that decide the fallback.
     * Detection costs in proportion to the dictionary. At least W when set. */
    std::size_t max_dictionary = 0;

    //! Throws std::invalid_argument naming the offending value.
    void validate() const;
};

//! Arithmetic of the CPU backend's detection (training is float64 on both backends; the
//! GPU detects in float32).
enum class ApsmPrecision { float64, float32 };

struct ApsmConfig {
    std::size_t num_antennas = 16; //!< M
    std::size_t num_users = 6;     //!< K
    Modulation modulation = Modulation::qpsk;
    ApsmParams params;
    LlrSign llr_sign = LlrSign::positive_means_one;
    float llr_clip = 0.0f; //!< |LLR| limit; 0 means no clipping
    Backend backend = Backend::cpu;
    int device = 0;      //!< CUDA device ordinal of the GPU backend
    int num_threads = 0; //!< CPU backend's detection threads; 0 = all cores
    ApsmPrecision cpu_precision = ApsmPrecision::float64; //!< CPU backend's detection

    //! Throws std::invalid_argument naming the offending value.
    void validate() const;
};

//! Counters since construction.
struct ApsmStats {
    std::uint64_t trainings = 0;       //!< successful train() calls
    std::uint64_t vectors = 0;         //!< received vectors detected
    std::uint64_t erased_vectors = 0;  //!< of those, with a NaN/Inf sample or an output that
                                       //!< overflowed float: zeros, LLR 0
    std::uint64_t untrained_vectors = 0; //!< detected before any training: zeros, LLR 0
    //! Users of the current training detected by the least-squares filter alone (the
    //! Gaussian part did not predict unseen training samples better; docs/apsm.md).
    std::uint64_t linear_fallbacks = 0;
};

class ApsmDetector
{
public:
    virtual ~ApsmDetector() = default;

    /*! Trains every user's filter, from scratch, on `count` received vectors r
     * ([count][M]) and the users' known symbols ([count][K], unit average energy, as
     * Constellation's points). Throws std::invalid_argument on non-finite or all-zero
     * input and on count < M, leaving the previous training in place. */
    virtual void train(const cf32* r, const cf32* symbols, std::size_t count) = 0;
    virtual bool trained() const = 0;

    /*! r: [count][M] -> symbols: [count][K] equalised symbols and llr: [count][K][bits]
     * max-log LLRs with the user's noise variance; either output may be null. A vector
     * with a NaN/Inf sample, and every vector before the first training, gives zeros
     * (LLR 0, an erasure) and is counted in stats(). */
    virtual void detect(const cf32* r, std::size_t count, cf32* symbols, float* llr) = 0;

    /*! The variance of user k's equalisation error E|g(r) - b|^2, estimated on the
     * training symbols: the a-priori errors (each training sample predicted before the
     * filter was projected onto it) of the second half of training, so not flattered by
     * fitting, or the training MSE where that is larger; the least-squares filter's
     * training MSE for a user that falls back to it.
     * 0 before training. */
    virtual double noise_variance(std::size_t user) const = 0;
    virtual ApsmStats stats() const = 0;
    //! The most training symbols train() takes; 0: no limit (the CPU's).
    virtual std::size_t max_training_symbols() const { return 0; }
    //! "cpu-apsm", "cpu-apsm-float32" or "cuda-apsm".
    virtual std::string name() const = 0;
    const ApsmConfig& config() const { return d_config; }

protected:
    explicit ApsmDetector(const ApsmConfig& config) : d_config(config) {}
    ApsmConfig d_config;
};

/*! Builds the APSM receiver for config.backend: cpu; cuda (throws std::runtime_error with
 * the reason when no GPU is usable or the configuration does not fit the GPU kernels);
 * automatic (the GPU when usable, else the CPU, *fallback_reason says why). */
std::unique_ptr<ApsmDetector> make_apsm_detector(const ApsmConfig& config,
                                                 std::string* fallback_reason = nullptr);

} // namespace mimodet

#endif
