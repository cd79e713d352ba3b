/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "quantizing_detector.h"
#include "precision.h"
#include <omp.h>
#include <stdexcept>

namespace mimodet {

QuantizingDetector::QuantizingDetector(const DetectorConfig& config,
                                       std::unique_ptr<Detector> inner)
    : Detector(config), d_inner(std::move(inner)), d_dims(config.dims())
{
    if (!d_inner)
        throw std::invalid_argument("QuantizingDetector: no detector to wrap");
}

std::string QuantizingDetector::name() const
{
    return d_inner->name() + "-" + to_string(d_config.precision);
}

void QuantizingDetector::set_channel(const cf32* h, float n0)
{
    d_h.resize(d_dims.channel_items());
    precision::quantize_block(d_config.precision, h, d_h.size(), d_h.data());
    d_inner->set_channel(d_h.data(), n0);
}

void QuantizingDetector::detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat)
{
    const std::size_t item = d_dims.rx_items();
    d_y.resize(n_symbols * item);
    const long long n = static_cast<long long>(n_symbols);
    const int threads = d_config.num_threads > 0 ? d_config.num_threads : omp_get_max_threads();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long long s = 0; s < n; ++s) // one scale per OFDM symbol: batching changes nothing
        precision::quantize_block(
            d_config.precision, y + s * item, item, d_y.data() + s * item);
    d_inner->detect(d_y.data(), n_symbols, llr, x_hat);
}

} // namespace mimodet

namespace mimodet {

void QuantizingDetector::set_channel_encoded(const void* h_codes, float h_scale, float n0)
{
    d_h.resize(d_dims.channel_items());
    precision::decode_block(d_config.precision, h_codes, d_h.size(), h_scale, d_h.data());
    d_inner->set_channel(d_h.data(), n0);
}

void QuantizingDetector::detect_encoded(const void* y_codes,
                                        const float* y_scales,
                                        std::size_t n_symbols,
                                        float* llr,
                                        cf32* x_hat)
{
    const std::size_t item = d_dims.rx_items();
    const std::size_t item_bytes = 2 * item * precision::code_bytes(d_config.precision);
    d_y.resize(n_symbols * item);
    for (std::size_t s = 0; s < n_symbols; ++s)
        precision::decode_block(d_config.precision,
                                static_cast<const char*>(y_codes) + s * item_bytes,
                                item,
                                y_scales[s],
                                d_y.data() + s * item);
    d_inner->detect(d_y.data(), n_symbols, llr, x_hat);
}

} // namespace mimodet
