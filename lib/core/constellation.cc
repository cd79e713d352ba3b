/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <mimodet/constellation.h>
#include <algorithm>
#include <cmath>
#include <cctype>
#include <limits>

namespace mimodet {

Modulation parse_modulation(const std::string& name_in)
{
    std::string name = name_in;
    // (through unsigned char: tolower of a negative char, a byte >= 0x80, is undefined)
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    if (name == "bpsk")
        return Modulation::bpsk;
    if (name == "qpsk" || name == "4qam")
        return Modulation::qpsk;
    if (name == "16qam" || name == "qam16")
        return Modulation::qam16;
    if (name == "64qam" || name == "qam64")
        return Modulation::qam64;
    if (name == "256qam" || name == "qam256")
        return Modulation::qam256;
    throw std::invalid_argument("unknown modulation '" + name_in +
                                "' (expected bpsk, qpsk, 16qam, 64qam or 256qam)");
}

std::string to_string(Modulation m)
{
    switch (m) {
    case Modulation::bpsk:
        return "bpsk";
    case Modulation::qpsk:
        return "qpsk";
    case Modulation::qam16:
        return "16qam";
    case Modulation::qam64:
        return "64qam";
    case Modulation::qam256:
        return "256qam";
    }
    return "?";
}

std::size_t bits_per_symbol(Modulation m)
{
    switch (m) {
    case Modulation::bpsk:
        return 1;
    case Modulation::qpsk:
        return 2;
    case Modulation::qam16:
        return 4;
    case Modulation::qam64:
        return 6;
    case Modulation::qam256:
        return 8;
    }
    return 0;
}

namespace {

/* TS 38.211 5.1.3-5.1.5: one axis of square QAM with K = Q/2 bits c0..c(K-1) taken from
 * b(axis), b(axis+2), ...; amplitude = (1-2c0) * (2^(K-1) - (1-2c1) * (2^(K-2) - ...)).
 */
float gray_pam_amplitude(const std::vector<int>& axis_bits)
{
    const std::size_t k = axis_bits.size();
    float inner = 1.0f;
    // Build from the innermost term outwards: for K=1 the amplitude is (1-2c0).
    for (std::size_t j = k; j-- > 1;) {
        const float scale = static_cast<float>(1u << (k - j));
        inner = scale - (1 - 2 * axis_bits[j]) * inner;
    }
    return (1 - 2 * axis_bits[0]) * inner;
}

} // namespace

Constellation::Constellation(Modulation m)
    : d_modulation(m), d_bits(mimodet::bits_per_symbol(m))
{
    const std::size_t count = std::size_t{ 1 } << d_bits;
    d_points.resize(count);
    if (m == Modulation::bpsk) {
        // 5.1.2: d = (1-2b(0)) (1+j) / sqrt(2)
        const float a = 1.0f / std::sqrt(2.0f);
        d_points[0] = cf32(a, a);
        d_points[1] = cf32(-a, -a);
        return;
    }
    const std::size_t k = d_bits / 2; // bits per axis
    // Average energy of the unnormalized grid: 2 * (4^k - 1) / 3  (2, 10, 42, 170).
    const float norm =
        1.0f / std::sqrt(2.0f * (static_cast<float>(1u << (2 * k)) - 1.0f) / 3.0f);
    for (std::size_t i = 0; i < count; ++i) {
        std::vector<int> ibits(k), qbits(k);
        for (std::size_t j = 0; j < k; ++j) {
            ibits[j] = bit_of(i, 2 * j);
            qbits[j] = bit_of(i, 2 * j + 1);
        }
        d_points[i] =
            cf32(gray_pam_amplitude(ibits) * norm, gray_pam_amplitude(qbits) * norm);
    }
    // Per-axis PAM levels and the axis bits each carries (the same on I and Q).
    const std::size_t levels = std::size_t{ 1 } << k;
    d_levels.resize(levels);
    d_level_bits.resize(levels);
    for (std::size_t pattern = 0; pattern < levels; ++pattern) {
        std::vector<int> bits(k);
        for (std::size_t j = 0; j < k; ++j)
            bits[j] = static_cast<int>((pattern >> (k - 1 - j)) & 1u);
        d_levels[pattern] = gray_pam_amplitude(bits) * norm;
        d_level_bits[pattern] = static_cast<std::uint32_t>(pattern);
    }
}

cf32 Constellation::map(const std::uint8_t* bits) const
{
    std::size_t index = 0;
    for (std::size_t p = 0; p < d_bits; ++p)
        index = (index << 1) | (bits[p] & 1u);
    return d_points[index];
}

void Constellation::demap_maxlog(cf32 z, float rho, float* llr) const
{
    if (d_modulation == Modulation::bpsk) {
        // |z-s|^2 - |z+s|^2 = -4 Re(z conj(s)) with s = (1+j)/sqrt(2) the point of bit 0.
        const float s = 1.0f / std::sqrt(2.0f);
        llr[0] = -4.0f * rho * s * (z.real() + z.imag());
        return;
    }
    const std::size_t k = d_bits / 2;
    const std::size_t levels = d_levels.size();
    constexpr float inf = std::numeric_limits<float>::infinity();
    const float axis_value[2] = { z.real(), z.imag() };
    for (std::size_t axis = 0; axis < 2; ++axis) {
        float min0[4] = { inf, inf, inf, inf }; // k <= 4 (256-QAM)
        float min1[4] = { inf, inf, inf, inf };
        for (std::size_t l = 0; l < levels; ++l) {
            const float d = axis_value[axis] - d_levels[l];
            const float d2 = d * d;
            for (std::size_t j = 0; j < k; ++j) {
                const bool one = (d_level_bits[l] >> (k - 1 - j)) & 1u;
                float& slot = one ? min1[j] : min0[j];
                slot = std::min(slot, d2);
            }
        }
        for (std::size_t j = 0; j < k; ++j)
            llr[2 * j + axis] = rho * (min0[j] - min1[j]);
    }
}

void Constellation::demap_maxlog_bruteforce(cf32 z, float rho, float* llr) const
{
    constexpr float inf = std::numeric_limits<float>::infinity();
    for (std::size_t p = 0; p < d_bits; ++p) {
        float min0 = inf, min1 = inf;
        for (std::size_t i = 0; i < d_points.size(); ++i) {
            const float d2 = std::norm(z - d_points[i]);
            if (bit_of(i, p))
                min1 = std::min(min1, d2);
            else
                min0 = std::min(min0, d2);
        }
        llr[p] = rho * (min0 - min1);
    }
}

} // namespace mimodet
