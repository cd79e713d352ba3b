/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_ANTENNAS_TO_TENSOR_IMPL_H
#define INCLUDED_MIMODET_ANTENNAS_TO_TENSOR_IMPL_H

#include <gnuradio/mimodet/antennas_to_tensor.h>

namespace gr {
namespace mimodet {

class antennas_to_tensor_impl : public antennas_to_tensor
{
private:
    const std::size_t d_antennas;
    const std::size_t d_subcarriers;

public:
    antennas_to_tensor_impl(int num_antennas, int num_subcarriers);

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;
};

} // namespace mimodet
} // namespace gr

#endif
