/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_ANTENNAS_TO_TENSOR_H
#define INCLUDED_MIMODET_ANTENNAS_TO_TENSOR_H

#include <gnuradio/mimodet/api.h>
#include <gnuradio/sync_block.h>

namespace gr {
namespace mimodet {

/*!
 * \brief Interleaves B per-antenna streams of N_sc-vectors into [N_sc][B] items.
 * \ingroup mimodet
 *
 * \details
 * Input b: one item = one OFDM symbol of antenna b, N_sc complex64 (e.g. the output of an
 * FFT). Output: one item = [N_sc][B] complex64, the detector's input layout. Tags of
 * input 0 are forwarded (one-to-one), so channel tags ride on antenna 0's stream.
 */
class MIMODET_API antennas_to_tensor : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<antennas_to_tensor> sptr;

    /*!
     * \param num_antennas B, the number of inputs
     * \param num_subcarriers N_sc, the vector length of each input
     */
    static sptr make(int num_antennas, int num_subcarriers);
};

} // namespace mimodet
} // namespace gr

#endif
