/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Detector's narrow input and narrow (int8, fp16) output by default: decode to float32 (exactly the
// emulated values), then the float32 calls; detect, then round the LLRs. The GPU backend
// overrides them to keep the codes and the LLRs narrow on the host link.

#include "precision.h"
#include <mimodet/detector.h>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimodet {

void Detector::set_channel_encoded(const void* h_codes, float h_scale, float n0)
{
    std::vector<cf32> h(d_config.dims().channel_items());
    precision::decode_block(d_config.precision, h_codes, h.size(), h_scale, h.data());
    set_channel(h.data(), n0);
}

void Detector::detect_encoded(const void* y_codes,
                              const float* y_scales,
                              std::size_t n_symbols,
                              float* llr,
                              cf32* x_hat)
{
    const std::size_t item = d_config.dims().rx_items();
    const std::size_t item_bytes = 2 * item * precision::code_bytes(d_config.precision);
    std::vector<cf32> y(n_symbols * item);
    for (std::size_t s = 0; s < n_symbols; ++s)
        precision::decode_block(d_config.precision,
                                static_cast<const char*>(y_codes) + s * item_bytes,
                                item,
                                y_scales[s],
                                y.data() + s * item);
    detect(y.data(), n_symbols, llr, x_hat);
}

void Detector::detect_int8(const cf32* y, std::size_t n_symbols, std::int8_t* llr, float scale)
{
    if (!(scale > 0.0f) || !std::isfinite(scale))
        throw std::invalid_argument(name() + ": detect_int8 scale must be > 0 and finite, got " +
                                    std::to_string(scale));
    std::vector<float> f(n_symbols * d_config.dims().llr_items());
    detect(y, n_symbols, f.data());
    precision::llrs_to_int8(f.data(), f.size(), scale, llr);
}

bool Detector::submit_llrs(
    const cf32* y, std::size_t n_symbols, void* llr, LlrFormat format, float int8_scale)
{
    switch (format) {
    case LlrFormat::float32:
        return submit(y, n_symbols, static_cast<float*>(llr));
    case LlrFormat::int8:
        detect_int8(y, n_symbols, static_cast<std::int8_t*>(llr), int8_scale);
        return false;
    case LlrFormat::fp16:
        detect_fp16(y, n_symbols, static_cast<std::uint16_t*>(llr));
        return false;
    }
    return false;
}

bool Detector::submit_frames(const ChannelFrame* frames,
                             std::size_t n_frames,
                             const cf32* y,
                             void* llr,
                             LlrFormat format,
                             float int8_scale)
{
    const Dims d = d_config.dims();
    const std::size_t llr_row = d.llr_items() * llr_bytes(format);
    bool queued = false;
    std::size_t at = 0; // symbols before this frame
    for (std::size_t f = 0; f < n_frames; ++f) {
        const ChannelFrame& frame = frames[f];
        if (!frame.continues || !has_channel()) {
            if (!frame.h)
                throw std::invalid_argument(name() + ": submit_frames: frame " +
                                            std::to_string(f) + " has no channel");
            set_channel(frame.h, frame.n0);
        }
        queued = submit_llrs(y + at * d.rx_items(),
                             frame.n_symbols,
                             static_cast<char*>(llr) + at * llr_row,
                             format,
                             int8_scale);
        at += frame.n_symbols;
    }
    return queued;
}

void Detector::detect_fp16(const cf32* y, std::size_t n_symbols, std::uint16_t* llr)
{
    std::vector<float> f(n_symbols * d_config.dims().llr_items());
    detect(y, n_symbols, f.data());
    precision::llrs_to_fp16(f.data(), f.size(), llr);
}

} // namespace mimodet
