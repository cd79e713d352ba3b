/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_BOX_CPU_BOX_DETECTOR_H
#define INCLUDED_MIMODET_CORE_BOX_CPU_BOX_DETECTOR_H

#include "core/box/box.h"
#include <mimodet/detector.h>
#include <atomic>
#include <vector>

namespace mimodet {

/*! BOX equalization on the CPU (mode box; lib/core/box/box.h, docs/box.md), float32,
 * OpenMP over subcarriers, the symbols of a call as matrix columns. Per channel it keeps,
 * per subcarrier: H, the full Gram matrix G, the step tau, and exact MMSE's equalizer
 * W = A^-1 H^H with its 1/lambda and rho (lib/core/mmse/cholesky.h: the same loading
 * and erasure rules as mode chol). Per symbol: y_mf = H^H y, the start (zero, matched
 * filter, or the unbiased LMMSE estimate), box_iterations steps, then max-log LLRs of
 * the BOX estimate with LMMSE's post-equalization SINR rho_u as the stated noise
 * estimate (1/rho_u: the unbiased LMMSE error variance, an upper bound on BOX's error
 * wherever BOX does better than LMMSE, so its LLRs err on the cautious side). x_hat
 * receives the BOX estimate (inside the box). */
class CpuBoxDetector : public Detector
{
public:
    explicit CpuBoxDetector(const DetectorConfig& config);

    void set_channel(const cf32* h, float n0) override;
    void detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat) override;
    //! unbias 1 (x_hat is BOX's estimate), sinr LMMSE's rho, as the LLRs use them.
    bool equalizer_gains(float* unbias, float* sinr) const override;
    bool has_channel() const override { return d_has_channel; }
    DetectorStats stats() const override;
    std::string name() const override { return "cpu-box"; }

private:
    Dims d_dims;
    Constellation d_constellation;
    box::BoxBounds d_bounds;
    std::vector<float> d_momentum; //!< empty: the plain iteration
    int d_threads;
    bool d_has_channel = false;
    float d_n0 = 0.0f;

    std::vector<std::uint8_t> d_bad; //!< [N_sc] 1 = no usable channel
    std::vector<std::uint8_t> d_loaded; //!< [N_sc] 1 = the channel had to be loaded
    std::vector<cf32> d_channel;     //!< [N_sc][B][U] H
    std::vector<cf32> d_gram;        //!< [N_sc][U][U] G (column-major, full)
    std::vector<cf32> d_equalizer;   //!< [N_sc][U][B] W = A^-1 H^H, row-major
    std::vector<float> d_step;       //!< [N_sc] tau
    std::vector<float> d_inv_lambda; //!< [N_sc][U]
    std::vector<float> d_rho;        //!< [N_sc][U]

    std::uint64_t d_channels = 0, d_symbols = 0, d_bad_channel = 0, d_regularized = 0,
                  d_unusable_users = 0, d_invalid_n0 = 0;
    std::atomic<std::uint64_t> d_bad_samples{ 0 };

    void prepare_subcarrier(std::size_t sc,
                            const cf32* h,
                            bool& regularized,
                            std::uint64_t& unusable_users);
};

} // namespace mimodet

#endif
