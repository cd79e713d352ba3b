/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_PRECISION_QUANTIZING_DETECTOR_H
#define INCLUDED_MIMODET_CORE_PRECISION_QUANTIZING_DETECTOR_H

#include <mimodet/detector.h>
#include <memory>
#include <vector>

namespace mimodet {

/*! DetectorConfig::precision for any detector, by emulation: H (per channel) and y (per
 * OFDM symbol) are rounded to the storage format after their power-of-two block scale
 * (lib/core/precision/precision.h) and handed to the float32 detector inside. The
 * numbers are those of a detector that stores the inputs narrow and computes in float32;
 * the time is not (the rounding costs, nothing is saved). make_detector builds it for
 * every precision but fp32. */
class QuantizingDetector : public Detector
{
public:
    //! inner: the detector of the same configuration; it takes the rounded inputs.
    QuantizingDetector(const DetectorConfig& config, std::unique_ptr<Detector> inner);

    void set_channel(const cf32* h, float n0) override;
    void detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat) override;
    //! Codes are already narrow: decoded, they go to the inner detector as they are.
    void set_channel_encoded(const void* h_codes, float h_scale, float n0) override;
    void detect_encoded(const void* y_codes,
                        const float* y_scales,
                        std::size_t n_symbols,
                        float* llr,
                        cf32* x_hat) override;
    bool equalizer_gains(float* unbias, float* sinr) const override
    {
        return d_inner->equalizer_gains(unbias, sinr);
    }
    bool has_channel() const override { return d_inner->has_channel(); }
    DetectorStats stats() const override { return d_inner->stats(); }
    //! The inner detector's name and the format, e.g. "cpu-chol-fp16".
    std::string name() const override;

private:
    std::unique_ptr<Detector> d_inner;
    Dims d_dims;
    std::vector<cf32> d_h, d_y;
};

} // namespace mimodet

#endif
