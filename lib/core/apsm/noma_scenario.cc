/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "core/apsm/noma_scenario.h"
#include <cmath>
#include <complex>
#include <random>
#include <stdexcept>

namespace mimodet {
namespace apsm {

std::vector<cf32> steering_vector(ArrayShape array, std::size_t antennas, double theta)
{
    const double pi = std::acos(-1.0);
    std::vector<cf32> a(antennas);
    for (std::size_t m = 0; m < antennas; ++m) {
        double phase;
        if (array == ArrayShape::linear) {
            phase = pi * static_cast<double>(m) * std::sin(theta);
        } else {
            // radius / wavelength for neighbours half a wavelength apart
            const double rho = antennas > 1 ? 1.0 / (4.0 * std::sin(pi / antennas)) : 0.0;
            phase = 2.0 * pi * rho * std::cos(theta - 2.0 * pi * m / antennas);
        }
        a[m] = cf32(static_cast<float>(std::cos(phase)), static_cast<float>(std::sin(phase)));
    }
    return a;
}

NomaTransmission simulate_noma(const NomaScenario& s)
{
    const std::size_t M = s.antennas, K = s.users;
    if (M == 0 || K == 0)
        throw std::invalid_argument("NOMA scenario: antennas and users must be at least 1");
    if (!s.powers.empty() && s.powers.size() != K)
        throw std::invalid_argument("NOMA scenario: one power per user");
    if (!std::isfinite(s.angular_spread_deg) || s.angular_spread_deg < 0.0 ||
        !(std::abs(s.rician_k_db) <= 100.0))
        throw std::invalid_argument("NOMA scenario: the angular spread must be finite and >= 0, "
                                    "the Rician factor within +-100 dB");
    const double pi = std::acos(-1.0);
    std::mt19937_64 rng(s.seed);
    std::uniform_real_distribution<double> uniform(0.0, 2.0 * pi);
    NomaTransmission out;
    out.n0 = std::pow(10.0, -s.snr_db / 10.0);
    out.channel.assign(M * K, cf32());
    for (std::size_t k = 0; k < K; ++k) {
        const double theta =
            (s.center_deg + (static_cast<double>(k) - 0.5 * (K - 1)) * s.separation_deg) * pi /
            180.0;
        const double p = s.powers.empty() ? 1.0 : s.powers[k];
        const std::complex<double> g = std::polar(std::sqrt(p), uniform(rng));
        const auto a = steering_vector(s.array, M, theta);
        for (std::size_t m = 0; m < M; ++m)
            out.channel[m * K + k] = cf32(g * std::complex<double>(a[m]));
    }
    // Scattered paths after every phase, so that line of sight alone draws what it did.
    if (s.scatter_paths > 0) {
        // sqrt(K_R / (K_R + 1)) and sqrt(1 / ((K_R + 1) L)) without K_R itself overflowing
        const double L = static_cast<double>(s.scatter_paths);
        const double los = 1.0 / std::sqrt(1.0 + std::pow(10.0, -s.rician_k_db / 10.0)),
                     nlos = 1.0 / std::sqrt((1.0 + std::pow(10.0, s.rician_k_db / 10.0)) * L);
        std::normal_distribution<double> gauss(0.0, 1.0);
        for (std::size_t k = 0; k < K; ++k) {
            const double theta =
                (s.center_deg + (static_cast<double>(k) - 0.5 * (K - 1)) * s.separation_deg) *
                pi / 180.0;
            const double p = s.powers.empty() ? 1.0 : s.powers[k];
            std::vector<std::complex<double>> h(M);
            for (std::size_t m = 0; m < M; ++m)
                h[m] = los * std::complex<double>(out.channel[m * K + k]);
            for (std::size_t l = 0; l < s.scatter_paths; ++l) {
                const double delta = s.angular_spread_deg * pi / 180.0 * gauss(rng);
                const double re = gauss(rng), im = gauss(rng);
                const std::complex<double> alpha(re / std::sqrt(2.0), im / std::sqrt(2.0));
                const auto a = steering_vector(s.array, M, theta + delta);
                for (std::size_t m = 0; m < M; ++m)
                    h[m] += nlos * std::sqrt(p) * alpha * std::complex<double>(a[m]);
            }
            for (std::size_t m = 0; m < M; ++m)
                out.channel[m * K + k] = cf32(h[m]);
        }
    }
    const Constellation c(s.modulation);
    std::uniform_int_distribution<std::size_t> point(0, c.size() - 1);
    std::normal_distribution<double> noise(0.0, std::sqrt(out.n0 / 2.0));
    auto block = [&](std::size_t n, std::vector<cf32>& rx, std::vector<cf32>& tx,
                     std::vector<std::uint8_t>* points) {
        rx.assign(n * M, cf32());
        tx.assign(n * K, cf32());
        if (points)
            points->assign(n * K, 0);
        for (std::size_t t = 0; t < n; ++t) {
            for (std::size_t k = 0; k < K; ++k) {
                const std::size_t i = point(rng);
                tx[t * K + k] = c.points()[i];
                if (points)
                    (*points)[t * K + k] = static_cast<std::uint8_t>(i);
            }
            for (std::size_t m = 0; m < M; ++m) {
                std::complex<double> v(noise(rng), noise(rng));
                for (std::size_t k = 0; k < K; ++k)
                    v += std::complex<double>(out.channel[m * K + k]) *
                         std::complex<double>(tx[t * K + k]);
                rx[t * M + m] = cf32(v);
            }
        }
    };
    block(s.training_symbols, out.training_rx, out.training_tx, nullptr);
    block(s.data_symbols, out.data_rx, out.data_tx, &out.data_points);
    return out;
}

} // namespace apsm
} // namespace mimodet
