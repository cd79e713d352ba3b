/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Multi-user OFDM uplink: the frame layout shared by the simulator and the receive chain,
 * a time-domain simulator (per-user OFDM through a multipath channel per antenna pair,
 * CFO, noise) and the receiver that turns B antenna streams into the detectors' tensors.
 *
 * Frame, in time: a preamble symbol, a pilot symbol, then num_data_symbols data symbols,
 * each OFDM symbol preceded by its cyclic prefix.
 * Frequency: num_subcarriers used subcarriers around DC, DC itself unused: used index
 * i < N_sc/2 is FFT bin i - N_sc/2 (negative bins wrap), i >= N_sc/2 is bin i - N_sc/2
 * + 1. The FFTs are unitary, so a per-sample noise variance N0 is also the per-subcarrier
 * one.
 * - preamble: known QPSK values on the used subcarriers of even FFT bin (zero on odd
 * ones), sent by every user: its time signal has two identical halves (Schmidl & Cox),
 * which give the timing and the carrier frequency offset.
 * - pilot symbol: a comb, user u on the used subcarriers i with i mod U = u, known
 *   unit-modulus values scaled by sqrt(U) (each user's symbol energy as in a data
 * symbol); least squares on each user's comb, interpolated linearly over the subcarriers.
 * - data: each user's QAM symbols (unit energy) on every used subcarrier.
 * SNR and N0 follow ChannelSimulator: N0 = U / SNR (unit-power channels and symbols).
 */

#ifndef INCLUDED_MIMODET_OFDM_H
#define INCLUDED_MIMODET_OFDM_H

#include <mimodet/constellation.h>
#include <mimodet/layout.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mimodet {

struct OfdmConfig {
    std::size_t fft_size = 256;
    std::size_t cp_length = 32;
    std::size_t num_subcarriers = 192; //!< used subcarriers N_sc: even, < fft_size
    std::size_t num_data_symbols = 14;
    std::size_t num_users = 4;    //!< U
    std::size_t num_antennas = 8; //!< B
    Modulation modulation = Modulation::qam16;

    //! Throws std::invalid_argument naming the offending value.
    void validate() const;
    std::size_t symbol_samples() const { return fft_size + cp_length; }
    //! Preamble, pilot symbol and data symbols, with their cyclic prefixes.
    std::size_t frame_samples() const
    {
        return (2 + num_data_symbols) * symbol_samples();
    }
    //! FFT bin (0 .. fft_size-1) of used subcarrier i.
    std::size_t bin_of(std::size_t used_index) const;
    Dims dims() const
    {
        return Dims{
            num_antennas, num_users, num_subcarriers, bits_per_symbol(modulation)
        };
    }
};

//! The preamble's frequency-domain values on the used subcarriers (0 on odd bins).
std::vector<cf32> preamble_values(const OfdmConfig& c);
//! The preamble body in time (fft_size samples, unitary inverse FFT), for fine timing.
std::vector<cf32> preamble_time(const OfdmConfig& c);

/*! The receivers' shared rules (CPU OfdmReceiver and the GPU chain):
 * - a frame is detected where the Schmidl & Cox metric |P|^2 / (R1 R2) (R1, R2 the
 *   energies of the body's two halves; at most 1) first reaches kPreambleDetectMetric
 *   (noise alone gives about 1 / (fft_size/2 B)); its coarse timing is the metric's peak
 *   within one symbol from there;
 * - each FFT window starts window_advance() samples into the cyclic prefix, so a delay
 *   spread up to that stays inside it; window_ramp()[i] is the phase ramp that the early
 *   window puts on used subcarrier i, taken out before the channel interpolation. */
constexpr double kPreambleDetectMetric = 0.5;
inline std::size_t window_advance(const OfdmConfig& c) { return c.cp_length / 2; }
std::vector<cf32> window_ramp(const OfdmConfig& c);
//! The pilot value on used subcarrier i (it belongs to user i mod U).
cf32 pilot_value(const OfdmConfig& c, std::size_t used_index);

struct UplinkChannelConfig {
    double snr_db = 20.0;
    std::size_t num_taps = 4;       //!< paths per (antenna, user) pair
    std::size_t tap_spacing = 3;    //!< samples between paths; keep the spread < CP
    double tap_decay_db = 3.0;      //!< power decay from one path to the next
    double cfo = 0.0;               //!< common carrier offset, in subcarrier spacings
    double cfo_spread = 0.0;        //!< each user's extra offset, uniform in +-spread
    std::size_t lead_samples = 100; //!< noise-only samples before the frame
    std::uint64_t seed = 1;
};

//! One simulated frame and its truth.
struct UplinkFrame {
    std::vector<std::vector<cf32>> rx; //!< [B][lead + frame + CP samples]
    std::vector<std::uint8_t> bits;    //!< [N_data][N_sc][U][Q], the LLR layout
    std::vector<cf32> symbols;         //!< [N_data][N_sc][U] transmitted
    std::vector<cf32> h;               //!< [N_sc][B][U] true frequency response
    std::vector<double> user_cfo;      //!< [U] in subcarrier spacings
    float n0 = 0.0f;                   //!< per sample and per subcarrier
    std::size_t frame_start = 0;       //!< sample where the preamble's CP begins
};

/*! Per user: bits -> QAM -> OFDM frame (preamble, pilot comb, data); through an
 * independent Rayleigh multipath channel per (antenna, user) pair with an exponential
 * power-delay profile normalized to unit power, each user's CFO, and complex Gaussian
 * noise. One seed gives the same frames. */
class UplinkSimulator
{
public:
    UplinkSimulator(const OfdmConfig& ofdm, const UplinkChannelConfig& channel);
    ~UplinkSimulator();
    void next_frame(UplinkFrame& frame);
    const OfdmConfig& config() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d_impl;
};

//! What the receive chain found in one capture.
struct OfdmReception {
    std::size_t frame_start = 0; //!< sample where the preamble's CP begins
    double cfo = 0.0;            //!< estimated, in subcarrier spacings (then removed)
    float n0 = 0.0f;             //!< noise variance from the unused subcarriers
    std::vector<cf32> h;         //!< [N_sc][B][U] least-squares, interpolated
    std::vector<cf32> y;         //!< [N_data][N_sc][B] the detectors' input items
    //! Where the samples of a call for the next frame begin: it searches the next body
    //! from next_start + cp, a frame after the coarse position minus a CP (the GPU chain
    //! walks by the same rule).
    std::size_t next_start = 0;
};

/*! The CPU receive chain for B antennas: timing and CFO from the preamble (Schmidl & Cox
 * over all antennas, then a cross-correlation with the known preamble for the fine
 * timing), CFO removal, cyclic-prefix removal and FFT, resource-grid extraction, least
 * squares on each user's pilot comb with linear interpolation over the subcarriers, and
 * N0 from the unused subcarriers of the data symbols. */
class OfdmReceiver
{
public:
    explicit OfdmReceiver(const OfdmConfig& config);
    ~OfdmReceiver();
    /*! antennas[b] points at `samples` samples of antenna b. Finds the first complete
     * frame in them; returns false (out untouched) when there is none. A frame whose
     * preamble lies before the search's first body position (sample cp) is skipped and
     * the search goes on after it. On false, `resume` (optional) receives where a later
     * call, given these samples and more, should begin: a frame that the end of the
     * samples cuts is searched again from there. */
    bool receive(const std::vector<const cf32*>& antennas,
                 std::size_t samples,
                 OfdmReception& out,
                 std::size_t* resume = nullptr);
    const OfdmConfig& config() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d_impl;
};

} // namespace mimodet

#endif
