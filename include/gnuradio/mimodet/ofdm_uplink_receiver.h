/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_OFDM_UPLINK_RECEIVER_H
#define INCLUDED_MIMODET_OFDM_UPLINK_RECEIVER_H

#include <gnuradio/block.h>
#include <gnuradio/mimodet/api.h>
#include <cstdint>

namespace gr {
namespace mimodet {

/*!
 * \brief The OFDM uplink receive chain: B antenna streams in, the detectors' tensors and
 * channel tags out.
 * \ingroup mimodet
 *
 * \details
 * Inputs: B complex sample streams, one per antenna, time-aligned (e.g. the N310 array
 * source or sigmf_source). Frames in the layout of include/mimodet/ofdm.h are found one
 * after another (Schmidl & Cox timing and CFO, fine timing on the known preamble, CP
 * removal and FFT, least squares on the pilot combs, N0 from the unused subcarriers;
 * the CPU chain of the core, docs/receive-chain.md). Output: per frame, N_data items of
 * [N_sc][B] complex64, the first tagged with the channel ("mimo_h", [N_sc][B][U]), N0
 * ("mimo_n0"), the frame's index ("mimo_frame"), its first sample in input 0
 * ("mimo_frame_start"), its CFO ("mimo_cfo", subcarrier spacings) and, once an rx_time
 * tag was seen, its time ("mimo_time", seconds): what mmse_detector reads.
 *
 * Gaps: with samp_rate > 0, rx_time tags on input 0 (UHD tags the first sample and the
 * first sample after an overflow with their device time) show lost samples; no frame is
 * assembled across such a gap: the samples before it that cannot hold a whole frame are
 * dropped and the search starts again after it. Counted in gaps() and lost_samples().
 */
class MIMODET_API ofdm_uplink_receiver : virtual public gr::block
{
public:
    typedef std::shared_ptr<ofdm_uplink_receiver> sptr;

    /*!
     * \param num_antennas B, the number of inputs
     * \param num_users U, users whose pilot combs the frame carries
     * \param fft_size FFT length
     * \param cp_length cyclic prefix, samples
     * \param num_subcarriers N_sc used subcarriers around DC (even, < fft_size)
     * \param num_data_symbols N_data OFDM data symbols per frame
     * \param samp_rate the inputs' sample rate, for rx_time gaps (0: ignore rx_time)
     */
    static sptr make(int num_antennas,
                     int num_users,
                     int fft_size,
                     int cp_length,
                     int num_subcarriers,
                     int num_data_symbols,
                     double samp_rate = 0.0);

    virtual std::uint64_t frames() const = 0;       //!< frames found so far
    virtual std::uint64_t gaps() const = 0;         //!< rx_time gaps seen
    virtual std::uint64_t lost_samples() const = 0; //!< samples the gaps lost
    virtual double last_cfo() const = 0;            //!< of the last frame, spacings
    virtual double last_n0() const = 0;             //!< of the last frame
};

} // namespace mimodet
} // namespace gr

#endif
