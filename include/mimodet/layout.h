/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/*! \file layout.h
 * The data contract of gr-mimodet, written once: tensor layouts, tag keys, units and the
 * LLR sign. Every block, kernel and test indexes tensors through these helpers.
 * docs/data-contract.md is the prose version of this header.
 */

#ifndef INCLUDED_MIMODET_LAYOUT_H
#define INCLUDED_MIMODET_LAYOUT_H

#include <array>
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace mimodet {

using cf32 = std::complex<float>;
using cf64 = std::complex<double>;

//! Tag key of the channel: a PMT c32vector of length N_sc*B*U in layout channel_index().
constexpr const char* kChannelTagKey = "mimo_h";
//! Tag key of the noise variance N0 (per complex sample, linear, same scale as y): PMT
//! double.
constexpr const char* kNoiseVarTagKey = "mimo_n0";
//! Tag key of the frame index (PMT uint64) on the first item of each simulated or
//! received frame.
constexpr const char* kFrameTagKey = "mimo_frame";
//! Receive chain, on a frame's first item: the sample of input 0 where the frame (its
//! preamble's cyclic prefix) begins (PMT uint64), its carrier offset in subcarrier
//! spacings (PMT double) and, when the samples carried rx_time, its time in seconds (PMT
//! double).
constexpr const char* kFrameStartTagKey = "mimo_frame_start";
constexpr const char* kCfoTagKey = "mimo_cfo";
constexpr const char* kFrameTimeTagKey = "mimo_time";
//! UHD's time tag (PMT tuple of uint64 full seconds and double fractional seconds).
constexpr const char* kRxTimeTagKey = "rx_time";

/*! Sizes of one detection problem: B receive antennas, U users (layers), N_sc subcarriers
 * and the bits per constellation symbol. A frame (coherence block) is N_sym OFDM symbols
 * over which the channel is constant; N_sym is not part of the per-item layout.
 */
struct Dims {
    std::size_t num_antennas = 0;    //!< B
    std::size_t num_users = 0;       //!< U
    std::size_t num_subcarriers = 0; //!< N_sc
    std::size_t bits_per_symbol = 0; //!< log2(M)

    //! complex64 per received item (one OFDM symbol): [N_sc][B]
    std::size_t rx_items() const { return num_subcarriers * num_antennas; }
    //! complex64 per channel tag: [N_sc][B][U]
    std::size_t channel_items() const
    {
        return num_subcarriers * num_antennas * num_users;
    }
    //! float32 per LLR item (one OFDM symbol): [N_sc][U][bits]
    std::size_t llr_items() const
    {
        return num_subcarriers * num_users * bits_per_symbol;
    }
    //! complex64 per equalized-symbol item: [N_sc][U]
    std::size_t symbol_items() const { return num_subcarriers * num_users; }

    //! Offset of y[sc][b] inside one received item.
    std::size_t rx_index(std::size_t sc, std::size_t b) const
    {
        return sc * num_antennas + b;
    }
    //! Offset of H[sc][b][u] inside one channel tensor (row-major B x U per subcarrier).
    std::size_t channel_index(std::size_t sc, std::size_t b, std::size_t u) const
    {
        return (sc * num_antennas + b) * num_users + u;
    }
    //! Offset of LLR[sc][u][bit] inside one LLR item; bit 0 is the first bit of the
    //! TS 38.211 mapping (b(i) in the standard).
    std::size_t llr_index(std::size_t sc, std::size_t u, std::size_t bit) const
    {
        return (sc * num_users + u) * bits_per_symbol + bit;
    }
    //! Offset of x_hat[sc][u] inside one equalized-symbol item.
    std::size_t symbol_index(std::size_t sc, std::size_t u) const
    {
        return sc * num_users + u;
    }

    //! Throws std::invalid_argument naming the offending size (used by every make()).
    void validate(const std::string& who) const
    {
        auto need = [&](bool ok, const std::string& what) {
            if (!ok)
                throw std::invalid_argument(who + ": " + what);
        };
        need(num_antennas > 0, "num_antennas (B) must be > 0");
        need(num_users > 0, "num_users (U) must be > 0");
        need(num_subcarriers > 0, "num_subcarriers must be > 0");
        need(num_users <= num_antennas,
             "num_users (U=" + std::to_string(num_users) +
                 ") must not exceed num_antennas (B=" + std::to_string(num_antennas) +
                 ")");
        need(bits_per_symbol > 0, "bits_per_symbol must be > 0");
    }
};

/*! Non-owning row-major view of a rank-R tensor: element (i0, ..., iR-1) is at
 * ((i0 * n1 + i1) * n2 + i2) ... . Bounds are not checked (sizes are validated at
 * make()).
 */
template <typename T, std::size_t R>
class TensorView
{
public:
    TensorView(T* data, const std::array<std::size_t, R>& shape)
        : d_data(data), d_shape(shape)
    {
    }
    template <typename... I>
    T& operator()(I... index) const
    {
        static_assert(sizeof...(I) == R, "one index per dimension");
        const std::size_t idx[R] = { static_cast<std::size_t>(index)... };
        std::size_t offset = idx[0];
        for (std::size_t k = 1; k < R; ++k)
            offset = offset * d_shape[k] + idx[k];
        return d_data[offset];
    }
    T* data() const { return d_data; }
    std::size_t extent(std::size_t k) const { return d_shape[k]; }
    std::size_t size() const
    {
        std::size_t n = 1;
        for (auto e : d_shape)
            n *= e;
        return n;
    }

private:
    T* d_data;
    std::array<std::size_t, R> d_shape;
};

//! y[sym][sc][b]: n_symbols received items.
template <typename T>
TensorView<T, 3> rx_view(T* y, const Dims& d, std::size_t n_symbols)
{
    return TensorView<T, 3>(y, { n_symbols, d.num_subcarriers, d.num_antennas });
}
//! H[sc][b][u]: one channel tensor.
template <typename T>
TensorView<T, 3> channel_view(T* h, const Dims& d)
{
    return TensorView<T, 3>(h, { d.num_subcarriers, d.num_antennas, d.num_users });
}
//! llr[sym][sc][u][bit] (also the transmitted bits): n_symbols LLR items.
template <typename T>
TensorView<T, 4> llr_view(T* llr, const Dims& d, std::size_t n_symbols)
{
    return TensorView<T, 4>(
        llr, { n_symbols, d.num_subcarriers, d.num_users, d.bits_per_symbol });
}
//! x[sym][sc][u]: n_symbols equalized-symbol items.
template <typename T>
TensorView<T, 3> symbol_view(T* x, const Dims& d, std::size_t n_symbols)
{
    return TensorView<T, 3>(x, { n_symbols, d.num_subcarriers, d.num_users });
}

/*! LLR sign convention. The papers' formula gives LLR = log P(b=1)/P(b=0): positive means
 * bit 1. Decoders that want log P(b=0)/P(b=1) (e.g. many LDPC decoders) ask for the
 * opposite.
 */
enum class LlrSign { positive_means_one, positive_means_zero };

//! Hard decision of one LLR under a sign convention; 0 (an erasure) decides bit 0.
inline int hard_bit(float llr, LlrSign sign = LlrSign::positive_means_one)
{
    return sign == LlrSign::positive_means_one ? (llr > 0.0f ? 1 : 0)
                                               : (llr < 0.0f ? 1 : 0);
}

} // namespace mimodet

#endif
