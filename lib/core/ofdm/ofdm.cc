/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <mimodet/ofdm.h>
#include <unsupported/Eigen/FFT>
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace mimodet {

namespace {

constexpr double kTwoPi = 6.283185307179586476925;
//! Seed of the known preamble and pilot sequences (the receiver knows them too).
constexpr std::uint32_t kSequenceSeed = 0x6d696d6f;

//! Unitary FFTs of one length (Eigen's KISS FFT; the inverse includes 1/N).
class UnitaryFft
{
public:
    explicit UnitaryFft(std::size_t n) : d_n(n), d_scale(1.0f / std::sqrt(float(n))) {}
    void forward(const cf32* in, std::vector<cf32>& out)
    {
        d_in.assign(in, in + d_n);
        d_fft.fwd(out, d_in);
        for (auto& v : out)
            v *= d_scale;
    }
    void inverse(const std::vector<cf32>& in, std::vector<cf32>& out)
    {
        d_fft.inv(out, in); // includes 1/N
        const float up = std::sqrt(float(d_n));
        for (auto& v : out)
            v *= up;
    }

private:
    std::size_t d_n;
    float d_scale;
    std::vector<cf32> d_in;
    Eigen::FFT<float> d_fft;
};

} // namespace

void OfdmConfig::validate() const
{
    auto fail = [](const std::string& what) {
        throw std::invalid_argument("OFDM config: " + what);
    };
    if (fft_size < 8)
        fail("fft_size must be >= 8, got " + std::to_string(fft_size));
    if (num_subcarriers == 0 || num_subcarriers % 2 || num_subcarriers >= fft_size)
        fail("num_subcarriers must be even, > 0 and < fft_size (" +
             std::to_string(fft_size) + "), got " + std::to_string(num_subcarriers));
    if (cp_length >= fft_size)
        fail("cp_length must be < fft_size, got " + std::to_string(cp_length));
    if (num_data_symbols == 0)
        fail("num_data_symbols must be >= 1");
    if (num_users == 0 || num_users > num_subcarriers / 2)
        fail("num_users must be in 1.." + std::to_string(num_subcarriers / 2) +
             " (each user's pilot comb needs two subcarriers at least), got " +
             std::to_string(num_users));
    if (num_antennas == 0)
        fail("num_antennas must be >= 1");
}

std::size_t OfdmConfig::bin_of(std::size_t i) const
{
    const long half = static_cast<long>(num_subcarriers / 2);
    const long k = static_cast<long>(i) < half ? static_cast<long>(i) - half
                                               : static_cast<long>(i) - half + 1;
    return static_cast<std::size_t>((k + static_cast<long>(fft_size)) %
                                    static_cast<long>(fft_size));
}

std::vector<cf32> preamble_values(const OfdmConfig& c)
{
    std::mt19937 rng(kSequenceSeed);
    std::vector<cf32> v(c.num_subcarriers, cf32(0.0f, 0.0f));
    const float a = 1.0f; // sqrt(2) energy on half the subcarriers, /sqrt(2) per axis
    for (std::size_t i = 0; i < c.num_subcarriers; ++i) {
        const std::uint32_t r = rng();
        if (c.bin_of(i) % 2 == 0)
            v[i] = cf32((r & 1) ? a : -a, (r & 2) ? a : -a);
    }
    return v;
}

std::vector<cf32> preamble_time(const OfdmConfig& c)
{
    std::vector<cf32> grid(c.fft_size, cf32(0.0f, 0.0f)), time;
    const auto values = preamble_values(c);
    for (std::size_t i = 0; i < c.num_subcarriers; ++i)
        grid[c.bin_of(i)] = values[i];
    UnitaryFft(c.fft_size).inverse(grid, time);
    return time;
}

std::vector<cf32> window_ramp(const OfdmConfig& c)
{
    const long n = static_cast<long>(c.fft_size);
    std::vector<cf32> ramp(c.num_subcarriers);
    for (std::size_t i = 0; i < c.num_subcarriers; ++i) {
        const long bin = static_cast<long>(c.bin_of(i));
        const double k = double(bin >= n / 2 ? bin - n : bin); // signed frequency
        const double ph = -kTwoPi * k * double(window_advance(c)) / double(n);
        ramp[i] = cf32(float(std::cos(ph)), float(std::sin(ph)));
    }
    return ramp;
}

cf32 pilot_value(const OfdmConfig& c, std::size_t i)
{
    // A chirp: unit modulus, low peak-to-average power over each comb.
    const double phase = kTwoPi * 0.5 * double(i) * double(i) / double(c.num_subcarriers);
    return std::sqrt(float(c.num_users)) *
           cf32(float(std::cos(phase)), float(std::sin(phase)));
}

/* ------------------------------------------------------------------------------------ */

struct UplinkSimulator::Impl {
    OfdmConfig ofdm;
    UplinkChannelConfig channel;
    Constellation constellation;
    std::mt19937_64 rng;
    UnitaryFft fft;
    std::vector<cf32> preamble;

    Impl(const OfdmConfig& o, const UplinkChannelConfig& c)
        : ofdm(o),
          channel(c),
          constellation(o.modulation),
          rng(c.seed),
          fft(o.fft_size),
          preamble(preamble_values(o))
    {
    }

    cf32 gaussian(double variance)
    {
        std::normal_distribution<double> n(0.0, std::sqrt(variance / 2.0));
        return cf32(float(n(rng)), float(n(rng)));
    }

    //! Appends one OFDM symbol (CP + body) with the given used-subcarrier values.
    void append_symbol(const std::vector<cf32>& used, std::vector<cf32>& out)
    {
        std::vector<cf32> grid(ofdm.fft_size, cf32(0.0f, 0.0f)), time;
        for (std::size_t i = 0; i < ofdm.num_subcarriers; ++i)
            grid[ofdm.bin_of(i)] = used[i];
        fft.inverse(grid, time);
        out.insert(out.end(), time.end() - ofdm.cp_length, time.end());
        out.insert(out.end(), time.begin(), time.end());
    }
};

UplinkSimulator::UplinkSimulator(const OfdmConfig& ofdm,
                                 const UplinkChannelConfig& channel)
    : d_impl(std::make_unique<Impl>(ofdm, channel))
{
    ofdm.validate();
    if ((channel.num_taps == 0 ? 0 : (channel.num_taps - 1) * channel.tap_spacing) >
        ofdm.cp_length)
        throw std::invalid_argument(
            "uplink channel: the delay spread (" +
            std::to_string((channel.num_taps - 1) * channel.tap_spacing) +
            " samples) exceeds the cyclic prefix (" + std::to_string(ofdm.cp_length) +
            ")");
    if (channel.num_taps == 0)
        throw std::invalid_argument("uplink channel: num_taps must be >= 1");
}

UplinkSimulator::~UplinkSimulator() = default;
const OfdmConfig& UplinkSimulator::config() const { return d_impl->ofdm; }

void UplinkSimulator::next_frame(UplinkFrame& f)
{
    Impl& m = *d_impl;
    const OfdmConfig& o = m.ofdm;
    const std::size_t nsc = o.num_subcarriers, U = o.num_users, B = o.num_antennas;
    const std::size_t Q = bits_per_symbol(o.modulation), nd = o.num_data_symbols;
    const double n0 = double(U) / std::pow(10.0, m.channel.snr_db / 10.0);
    f.n0 = float(n0);
    f.frame_start = m.channel.lead_samples;

    // Bits and symbols in the detectors' layouts.
    std::uniform_int_distribution<int> coin(0, 1);
    f.bits.resize(nd * nsc * U * Q);
    f.symbols.resize(nd * nsc * U);
    for (auto& b : f.bits)
        b = static_cast<std::uint8_t>(coin(m.rng));
    for (std::size_t k = 0; k < nd * nsc * U; ++k)
        f.symbols[k] = m.constellation.map(&f.bits[k * Q]);

    // Each user's time signal: preamble, pilot comb, data.
    std::vector<std::vector<cf32>> tx(U);
    for (std::size_t u = 0; u < U; ++u) {
        auto& x = tx[u];
        x.reserve(o.frame_samples());
        m.append_symbol(m.preamble, x);
        std::vector<cf32> used(nsc, cf32(0.0f, 0.0f));
        for (std::size_t i = u; i < nsc; i += U)
            used[i] = pilot_value(o, i);
        m.append_symbol(used, x);
        for (std::size_t s = 0; s < nd; ++s) {
            for (std::size_t i = 0; i < nsc; ++i)
                used[i] = f.symbols[(s * nsc + i) * U + u];
            m.append_symbol(used, x);
        }
    }

    // Per-user CFO (subcarrier spacings -> cycles per sample), applied from the frame
    // start.
    std::uniform_real_distribution<double> spread(-1.0, 1.0);
    f.user_cfo.resize(U);
    for (std::size_t u = 0; u < U; ++u) {
        f.user_cfo[u] = m.channel.cfo + m.channel.cfo_spread * spread(m.rng);
        const double step = kTwoPi * f.user_cfo[u] / double(o.fft_size);
        for (std::size_t n = 0; n < tx[u].size(); ++n)
            tx[u][n] *= cf32(float(std::cos(step * n)), float(std::sin(step * n)));
    }

    // Multipath per (antenna, user): exponential power-delay profile, unit total power.
    const std::size_t taps = m.channel.num_taps;
    std::vector<double> power(taps);
    double total = 0.0;
    for (std::size_t l = 0; l < taps; ++l)
        total += power[l] = std::pow(10.0, -m.channel.tap_decay_db * double(l) / 10.0);
    const std::size_t length = f.frame_start + o.frame_samples() + o.cp_length;
    f.rx.assign(B, std::vector<cf32>(length));
    f.h.assign(nsc * B * U, cf32(0.0f, 0.0f));
    for (std::size_t b = 0; b < B; ++b) {
        auto& r = f.rx[b];
        for (auto& v : r)
            v = m.gaussian(n0);
        for (std::size_t u = 0; u < U; ++u) {
            for (std::size_t l = 0; l < taps; ++l) {
                const cf32 g = m.gaussian(power[l] / total);
                const std::size_t delay = l * m.channel.tap_spacing;
                for (std::size_t n = 0; n < tx[u].size(); ++n)
                    r[f.frame_start + delay + n] += g * tx[u][n];
                // Frequency response on each used subcarrier: sum_l g_l e^{-j 2 pi k d /
                // N}.
                for (std::size_t i = 0; i < nsc; ++i) {
                    const double phase = -kTwoPi * double(o.bin_of(i)) * double(delay) /
                                         double(o.fft_size);
                    f.h[(i * B + b) * U + u] +=
                        g * cf32(float(std::cos(phase)), float(std::sin(phase)));
                }
            }
        }
    }
}

/* ------------------------------------------------------------------------------------ */

struct OfdmReceiver::Impl {
    OfdmConfig ofdm;
    UnitaryFft fft;
    std::vector<cf32> preamble_time;             //!< the preamble body (N samples)
    std::vector<cf32> window, grid;              //!< scratch: one FFT's input and output
    std::vector<std::complex<double>> reference; //!< conj(preamble) with the CFO applied

    explicit Impl(const OfdmConfig& o)
        : ofdm(o), fft(o.fft_size), preamble_time(mimodet::preamble_time(o))
    {
    }
};

OfdmReceiver::OfdmReceiver(const OfdmConfig& config)
    : d_impl(std::make_unique<Impl>(config))
{
    config.validate();
}

OfdmReceiver::~OfdmReceiver() = default;
const OfdmConfig& OfdmReceiver::config() const { return d_impl->ofdm; }

namespace {

//! The B antenna streams of one receive() call, as the steps below read them.
struct Samples {
    const std::vector<const cf32*>& antennas;
};

/*! Step 1 (coarse timing), Schmidl & Cox over all antennas: the preamble body has two
 * identical halves, so P(d) = sum_b sum_m conj(r[d+m]) r[d+m+L] peaks across the CP
 * plateau. d is the body's first sample; a frame starts cp earlier. Also the energies of
 * the two halves. */
void schmidl_cox(const Samples& x,
                 std::size_t half,
                 std::size_t d,
                 std::complex<double>& p,
                 double& first,
                 double& second)
{
    p = 0.0;
    first = second = 0.0;
    for (const cf32* antenna : x.antennas) {
        const cf32* r = antenna + d;
        for (std::size_t k = 0; k < half; ++k) {
            p += std::complex<double>(std::conj(r[k]) * r[k + half]);
            first += std::norm(r[k]);
            second += std::norm(r[k + half]);
        }
    }
}

/*! The metric |P|^2 / (R1 R2), R1 and R2 the energies of the two halves: at most 1
 * (Cauchy-Schwarz), reached on the plateau; normalized by the second half's energy alone
 * (R2^2) it would also rise where a burst ends (a strong first half over a noise-only
 * second half). */
double schmidl_cox_metric(const Samples& x, std::size_t half, std::size_t d)
{
    std::complex<double> p;
    double first, second;
    schmidl_cox(x, half, d, p, first, second);
    return first * second > 0.0 ? std::norm(p) / (first * second) : 0.0;
}

//! The carrier offset in subcarrier spacings from P: half a body apart, the offset turns
//! the phase by 2 pi cfo L / N = pi cfo, so |cfo| < 1.
double cfo_of(const std::complex<double>& p) { return std::arg(p) / (kTwoPi / 2.0); }

/*! Step 2 (fine timing): cross-correlation with the known preamble body (the coarse CFO
 * turned into `reference`) for bodies from `from` to `to`; the strongest. */
std::size_t fine_timing(const Samples& x,
                        const std::vector<cf32>& preamble_time,
                        double cfo,
                        std::vector<std::complex<double>>& reference,
                        std::size_t from,
                        std::size_t to,
                        std::size_t coarse)
{
    const std::size_t N = preamble_time.size();
    const double step = -kTwoPi * cfo / double(N);
    reference.resize(N);
    for (std::size_t k = 0; k < N; ++k) {
        const double ph = step * double(k);
        reference[k] = std::conj(std::complex<double>(preamble_time[k])) *
                       std::complex<double>(std::cos(ph), std::sin(ph));
    }
    double best = -1.0;
    std::size_t body = coarse;
    for (std::size_t d = from; d <= to; ++d) {
        double sum = 0.0;
        for (const cf32* antenna : x.antennas) {
            std::complex<double> c = 0.0;
            const cf32* r = antenna + d;
            for (std::size_t k = 0; k < N; ++k)
                c += reference[k] * std::complex<double>(r[k]);
            sum += std::norm(c);
        }
        if (sum > best) {
            best = sum;
            body = d;
        }
    }
    return body;
}

/*! Step 5 (channel estimate) on one antenna: least squares on each user's pilot comb,
 * linear interpolation (and extrapolation at the edges) over the used subcarriers. The
 * early FFT window turns bin k by e^{-j 2 pi k advance / N}, a steep known ramp: it is
 * taken out before interpolating and put back after, so that the interpolation sees only
 * the channel's own slope. `grid`: the pilot symbol's FFT; writes h[i][b][u]. */
void estimate_channel(const OfdmConfig& o,
                      const std::vector<cf32>& grid,
                      const std::vector<cf32>& ramp,
                      std::size_t b,
                      std::vector<cf32>& h)
{
    const std::size_t nsc = o.num_subcarriers, U = o.num_users, B = o.num_antennas;
    for (std::size_t u = 0; u < U; ++u) {
        std::vector<std::size_t> at;
        std::vector<cf32> ls;
        for (std::size_t i = u; i < nsc; i += U) {
            at.push_back(i);
            ls.push_back(grid[o.bin_of(i)] / (pilot_value(o, i) * ramp[i]));
        }
        for (std::size_t i = 0; i < nsc; ++i) {
            // the comb segment [j, j+1] around i (the first or last for the edges)
            std::size_t j = i <= at.front() ? 0 : (i - at.front()) / U;
            if (j + 1 >= at.size())
                j = at.size() >= 2 ? at.size() - 2 : 0;
            cf32 v = ls[j];
            if (at.size() >= 2) {
                const float t = (float(i) - float(at[j])) / float(at[j + 1] - at[j]);
                v = ls[j] + t * (ls[j + 1] - ls[j]);
            }
            h[(i * B + b) * U + u] = v * ramp[i];
        }
    }
}

} // namespace

bool OfdmReceiver::receive(const std::vector<const cf32*>& antennas,
                           std::size_t samples,
                           OfdmReception& out,
                           std::size_t* resume)
{
    Impl& m = *d_impl;
    const OfdmConfig& o = m.ofdm;
    const std::size_t N = o.fft_size, L = N / 2, cp = o.cp_length;
    const std::size_t nsc = o.num_subcarriers, nd = o.num_data_symbols;
    const std::size_t B = antennas.size();
    if (B != o.num_antennas)
        throw std::invalid_argument("OFDM receiver: " + std::to_string(B) +
                                    " antenna streams for a " +
                                    std::to_string(o.num_antennas) + "-antenna config");
    const std::size_t frame = o.frame_samples();
    if (samples < frame) {
        if (resume)
            *resume = 0;
        return false;
    }
    const Samples x{ antennas };
    const std::size_t last_start = samples - frame;
    const std::size_t last_body = last_start + cp; // of the last frame that fits
    const std::size_t last_metric = samples - N;   // the last body the samples cover

    // Steps 1 and 2 on the first frame of the samples: the search arms where the metric
    // first reaches kPreambleDetectMetric and takes the peak within one symbol from there,
    // so a later, stronger frame is left for the next call. A frame that overlaps the
    // samples before the search (its body before search_from) is skipped and the search
    // goes on after it; one that the end of the samples cuts is left for a call with more
    // of them.
    std::size_t search_from = cp, coarse = 0, body = 0;
    std::complex<double> p;
    double first, second;
    for (;;) {
        std::size_t crossing = search_from;
        while (crossing <= last_body &&
               schmidl_cox_metric(x, L, crossing) < kPreambleDetectMetric)
            ++crossing;
        if (crossing > last_body) { // no two-halves structure stands out of the noise
            if (resume)
                *resume = std::max(last_start + 1, search_from - cp);
            return false;
        }
        double best_metric = -1.0;
        const std::size_t peak_last =
            std::min(crossing + o.symbol_samples(), last_metric);
        for (std::size_t d = crossing; d <= peak_last; ++d) {
            const double metric = schmidl_cox_metric(x, L, d);
            if (metric > best_metric) {
                best_metric = metric;
                coarse = d;
            }
        }
        schmidl_cox(x, L, coarse, p, first, second);
        // Fine timing around the plateau; then the FFT window starts cp/2 early, so that
        // with the strongest path anywhere in a delay spread up to cp/2 no path reaches
        // into the next symbol (the channel estimate absorbs the phase ramp).
        body = fine_timing(x,
                           m.preamble_time,
                           cfo_of(p),
                           m.reference,
                           coarse > cp ? coarse - cp : 0,
                           std::min(coarse + cp, last_metric),
                           coarse);
        if (body > last_body) { // cut by the end of the samples: again with more
            if (resume)
                *resume = crossing - cp;
            return false;
        }
        if (body >= search_from)
            break;
        search_from = coarse + frame - cp; // overlaps what came before: not a frame
    }
    out.next_start = coarse + frame - 2 * cp;
    const std::size_t start = body - cp; // the frame's first sample
    const std::size_t advance = window_advance(o);
    // Step 3: the CFO again from the window the FFTs will use: free of the neighbouring
    // symbols, unlike the coarse position, which may reach into the pilot symbol.
    schmidl_cox(x, L, body - advance, p, first, second);
    const double cfo_fine = cfo_of(p);
    const double step_fine = -kTwoPi * cfo_fine / double(N);

    // Step 4: FFT of symbol s (0 preamble, 1 pilots, 2.. data) of antenna b, CFO removed
    // with the phase counted from the frame start (common to all symbols, absorbed by H).
    auto symbol_fft = [&](std::size_t b, std::size_t s, std::vector<cf32>& grid) {
        const std::size_t first = start + s * o.symbol_samples() + cp - advance;
        m.window.resize(N);
        for (std::size_t k = 0; k < N; ++k) {
            const double ph = step_fine * double(first + k - start);
            m.window[k] =
                antennas[b][first + k] * cf32(float(std::cos(ph)), float(std::sin(ph)));
        }
        m.fft.forward(m.window.data(), grid);
    };

    // Step 5: the channel from the pilot symbol.
    const std::vector<cf32> ramp = window_ramp(o);
    std::vector<cf32>& grid = m.grid;
    out.h.assign(nsc * B * o.num_users, cf32(0.0f, 0.0f));
    for (std::size_t b = 0; b < B; ++b) {
        symbol_fft(b, 1, grid);
        estimate_channel(o, grid, ramp, b, out.h);
    }

    // Step 6: data symbols into [N_data][N_sc][B]; N0 from the unused bins (not DC).
    std::vector<bool> used(N, false);
    for (std::size_t i = 0; i < nsc; ++i)
        used[o.bin_of(i)] = true;
    double noise = 0.0;
    std::size_t noise_bins = 0;
    out.y.assign(nd * nsc * B, cf32(0.0f, 0.0f));
    for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t s = 0; s < nd; ++s) {
            symbol_fft(b, 2 + s, grid);
            for (std::size_t i = 0; i < nsc; ++i)
                out.y[(s * nsc + i) * B + b] = grid[o.bin_of(i)];
            for (std::size_t k = 1; k < N; ++k)
                if (!used[k]) {
                    noise += std::norm(grid[k]);
                    ++noise_bins;
                }
        }
    }
    out.n0 = noise_bins ? float(noise / double(noise_bins)) : 0.0f;
    out.frame_start = start;
    out.cfo = cfo_fine;
    return true;
}

} // namespace mimodet
