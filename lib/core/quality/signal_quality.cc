/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <mimodet/signal_quality.h>
#include <algorithm>
#include <cmath>

namespace mimodet {

void remove_bias(cf32* x, std::size_t n_symbols, const float* unbias, const Dims& dims)
{
    const std::size_t items = dims.symbol_items();
    for (std::size_t s = 0; s < n_symbols; ++s)
        for (std::size_t i = 0; i < items; ++i)
            x[s * items + i] *= unbias[i];
}

namespace {

//! Index of the level of `levels` (sorted) nearest to v.
std::size_t nearest_level(const std::vector<float>& levels, float v)
{
    const auto it = std::lower_bound(levels.begin(), levels.end(), v);
    if (it == levels.begin())
        return 0;
    if (it == levels.end())
        return levels.size() - 1;
    const auto i = static_cast<std::size_t>(it - levels.begin());
    return (v - levels[i - 1] <= levels[i] - v) ? i - 1 : i;
}

//! The distinct values of v, sorted, those closer than 1e-5 taken as one.
std::vector<float> distinct_levels(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    std::vector<float> r;
    for (float x : v)
        if (r.empty() || x - r.back() > 1e-5f)
            r.push_back(x);
    return r;
}

} // namespace

SignalQuality::SignalQuality(const Dims& dims, Modulation modulation)
    : d_dims(dims),
      d_constellation(modulation),
      d_sinr(dims.symbol_items(), 0.0f),
      d_user_sinr_db(dims.num_users, std::numeric_limits<double>::quiet_NaN()),
      d_error_energy(dims.num_users, 0.0),
      d_counted(dims.num_users, 0)
{
    // Square QAM (and QPSK) is a grid: the nearest point is the nearest level on each
    // axis. BPSK's two points on the diagonal are not, and are searched.
    const auto& points = d_constellation.points();
    std::vector<float> re, im;
    for (const cf32& p : points) {
        re.push_back(p.real());
        im.push_back(p.imag());
    }
    d_levels_re = distinct_levels(re);
    d_levels_im = distinct_levels(im);
    d_grid.assign(d_levels_re.size() * d_levels_im.size(), -1);
    d_separable = d_grid.size() == points.size();
    for (std::size_t i = 0; i < points.size() && d_separable; ++i) {
        int& at = d_grid[nearest_level(d_levels_re, points[i].real()) * d_levels_im.size() +
                         nearest_level(d_levels_im, points[i].imag())];
        d_separable = at < 0;
        at = static_cast<int>(i);
    }
}

cf32 SignalQuality::nearest(cf32 z) const
{
    const auto& points = d_constellation.points();
    if (d_separable)
        return points[static_cast<std::size_t>(
            d_grid[nearest_level(d_levels_re, z.real()) * d_levels_im.size() +
                   nearest_level(d_levels_im, z.imag())])];
    return *std::min_element(points.begin(), points.end(), [&](cf32 a, cf32 b) {
        return std::norm(z - a) < std::norm(z - b);
    });
}

void SignalQuality::set_sinr(const float* sinr)
{
    const std::size_t u = d_dims.num_users;
    std::copy(sinr, sinr + d_sinr.size(), d_sinr.begin());
    for (std::size_t j = 0; j < u; ++j) {
        // The harmonic mean: 1 / its mean error variance, which EVM^2 measures.
        double inverse_sum = 0.0;
        std::size_t usable = 0;
        for (std::size_t sc = 0; sc < d_dims.num_subcarriers; ++sc) {
            const float r = d_sinr[sc * u + j];
            if (r > 0.0f && std::isfinite(r)) {
                inverse_sum += 1.0 / static_cast<double>(r);
                ++usable;
            }
        }
        d_user_sinr_db[j] = usable ? 10.0 * std::log10(static_cast<double>(usable) / inverse_sum)
                                   : std::numeric_limits<double>::quiet_NaN();
    }
}

void SignalQuality::add(const cf32* x, std::size_t n_symbols, float* sinr_db, float* evm_percent)
{
    const std::size_t u = d_dims.num_users, nsc = d_dims.num_subcarriers;
    std::vector<double> energy(u);
    std::vector<std::uint64_t> counted(u);
    for (std::size_t s = 0; s < n_symbols; ++s) {
        std::fill(energy.begin(), energy.end(), 0.0);
        std::fill(counted.begin(), counted.end(), 0);
        const cf32* xs = x + s * d_dims.symbol_items();
        for (std::size_t sc = 0; sc < nsc; ++sc)
            for (std::size_t j = 0; j < u; ++j) {
                const cf32 z = xs[sc * u + j];
                if (!(d_sinr[sc * u + j] > 0.0f) || z == cf32() || !std::isfinite(z.real()) ||
                    !std::isfinite(z.imag()))
                    continue;
                energy[j] += std::norm(z - nearest(z));
                ++counted[j];
            }
        for (std::size_t j = 0; j < u; ++j) {
            d_error_energy[j] += energy[j];
            d_counted[j] += counted[j];
            if (sinr_db)
                sinr_db[s * u + j] = static_cast<float>(d_user_sinr_db[j]);
            if (evm_percent)
                evm_percent[s * u + j] =
                    counted[j] ? static_cast<float>(
                                     100.0 * std::sqrt(energy[j] / static_cast<double>(counted[j])))
                               : std::numeric_limits<float>::quiet_NaN();
        }
    }
    d_symbols += n_symbols;
}

std::vector<UserQuality> SignalQuality::totals() const
{
    std::vector<UserQuality> r(d_dims.num_users);
    for (std::size_t j = 0; j < r.size(); ++j) {
        r[j].sinr_db = d_user_sinr_db[j];
        r[j].estimates = d_counted[j];
        if (d_counted[j])
            r[j].evm_percent =
                100.0 * std::sqrt(d_error_energy[j] / static_cast<double>(d_counted[j]));
    }
    return r;
}

void SignalQuality::reset()
{
    std::fill(d_error_energy.begin(), d_error_energy.end(), 0.0);
    std::fill(d_counted.begin(), d_counted.end(), 0);
    d_symbols = 0;
}

} // namespace mimodet
