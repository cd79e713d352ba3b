/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CPU_DETECTOR_H
#define INCLUDED_MIMODET_CPU_DETECTOR_H

#include <mimodet/detector.h>
#include <atomic>
#include <vector>

namespace mimodet {

/*! CPU implementation of the soft-output MMSE family (chol, cg, cr, zf), float32,
 * parallel over subcarriers with OpenMP; per subcarrier, the symbols of a call are
 * processed together as matrix columns. Per channel it keeps, per subcarrier:
 *  - chol/zf: the equalizer W = A^-1 H^H (U x B), 1/lambda and rho per user, so a symbol
 *    costs one U x B matrix-vector product plus demapping (cuPHY's "coefficients once
 *    per channel block");
 *  - cg/cr: H and A = G + N0 I, so a symbol costs the matched filter H^H y and I
 *    iterations of U x U matrix-vector products (li2015 Algorithm 1, broumas2023 Fig. 4).
 */
class CpuDetector : public Detector
{
public:
    explicit CpuDetector(const DetectorConfig& config);

    void set_channel(const cf32* h, float n0) override;
    void detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat) override;
    bool equalizer_gains(float* unbias, float* sinr) const override;
    bool has_channel() const override { return d_has_channel; }
    DetectorStats stats() const override;
    std::string name() const override { return "cpu-" + to_string(d_config.mode); }

private:
    Dims d_dims;
    Constellation d_constellation;
    int d_threads;
    bool d_has_channel = false;
    float d_n0 = 0.0f;

    std::vector<std::uint8_t> d_bad; //!< [N_sc] 1 = no usable channel on this subcarrier
    std::vector<std::uint8_t> d_loaded; //!< [N_sc] 1 = the channel had to be loaded
    std::vector<cf32> d_equalizer;   //!< chol/zf: [N_sc][U][B] row-major W
    std::vector<cf32> d_channel;     //!< cg/cr: [N_sc][B][U] copy of H
    std::vector<cf32> d_gram;        //!< cg/cr: [N_sc][U][U] A = G + N0 I (column-major)
    std::vector<float> d_inv_lambda; //!< [N_sc][U] 1/lambda (bias removal)
    std::vector<float> d_rho;        //!< [N_sc][U] post-equalization SINR

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
