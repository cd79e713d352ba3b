/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_MIMO_CHANNEL_SIM_H
#define INCLUDED_MIMODET_MIMO_CHANNEL_SIM_H

#include <gnuradio/mimodet/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <string>

namespace gr {
namespace mimodet {

/*!
 * \brief Simulated multi-user MIMO uplink: a source of received OFDM symbols with channel
 * tags. \ingroup mimodet
 *
 * \details
 * Output 0: one item = one OFDM symbol, [N_sc][B] complex64. The first item of each frame
 * (symbols_per_frame items, constant channel) carries the tags "mimo_h" (c32vector
 * [N_sc][B][U]), "mimo_n0" (double) and "mimo_frame" (uint64 frame index).
 * Output 1: the transmitted bits, one item = [N_sc][U][bits] bytes (0/1), the same layout
 * as the detector's LLRs.
 * SNR is li2015's average receive SNR U*Es/N0 with Es = 1; channels are i.i.d. Rayleigh
 * or Kronecker with exponential correlation r across base-station antennas.
 * With external_bits, input 0 gives the bits (output 1 repeats them).
 */
class MIMODET_API mimo_channel_sim : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<mimo_channel_sim> sptr;

    /*!
     * \param num_antennas B
     * \param num_users U
     * \param num_subcarriers N_sc
     * \param symbols_per_frame N_sym per coherence block
     * \param modulation "bpsk", "qpsk", "16qam", "64qam" or "256qam"
     * \param snr_db average receive SNR in dB
     * \param channel_model "rayleigh" or "kronecker"
     * \param correlation r of the exponential correlation model, 0 <= r < 1
     * \param seed random seed; the same seed gives the same stream
     * \param max_frames stop after this many frames, 0 = run forever
     * \param external_bits an input of the bits to send, one item = [N_sc][U][bits]
     *        bytes (0/1, the layout of output 1) per OFDM symbol, instead of random
     *        bits: a channel encoder's output goes through the uplink (bytes other than
     *        0 and 1 are sent as 1 and logged once)
     */
    static sptr make(int num_antennas,
                     int num_users,
                     int num_subcarriers,
                     int symbols_per_frame = 14,
                     const std::string& modulation = "16qam",
                     double snr_db = 10.0,
                     const std::string& channel_model = "rayleigh",
                     double correlation = 0.0,
                     std::uint64_t seed = 1,
                     std::uint64_t max_frames = 0,
                     bool external_bits = false);

    virtual double snr_db() const = 0;
    //! Takes effect from the next frame.
    virtual void set_snr_db(double snr_db) = 0;
    virtual std::uint64_t frames() const = 0;
};

} // namespace mimodet
} // namespace gr

#endif
