/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "antennas_to_tensor_impl.h"
#include <gnuradio/io_signature.h>
#include <mimodet/layout.h>
#include <vector>

namespace gr {
namespace mimodet {

antennas_to_tensor::sptr antennas_to_tensor::make(int num_antennas, int num_subcarriers)
{
    if (num_antennas <= 0 || num_subcarriers <= 0)
        throw std::invalid_argument(
            "antennas_to_tensor: num_antennas and num_subcarriers must "
            "be > 0, got " +
            std::to_string(num_antennas) + " and " + std::to_string(num_subcarriers));
    return gnuradio::make_block_sptr<antennas_to_tensor_impl>(num_antennas,
                                                              num_subcarriers);
}

antennas_to_tensor_impl::antennas_to_tensor_impl(int num_antennas, int num_subcarriers)
    : gr::sync_block("antennas_to_tensor",
                     gr::io_signature::make(num_antennas,
                                            num_antennas,
                                            sizeof(gr_complex) * num_subcarriers),
                     gr::io_signature::make(
                         1, 1, sizeof(gr_complex) * num_subcarriers * num_antennas)),
      d_antennas(static_cast<std::size_t>(num_antennas)),
      d_subcarriers(static_cast<std::size_t>(num_subcarriers))
{
    // Only antenna 0's tags (the channel) are forwarded; see work().
    set_tag_propagation_policy(TPP_CUSTOM);
}

int antennas_to_tensor_impl::work(int noutput_items,
                                  gr_vector_const_void_star& input_items,
                                  gr_vector_void_star& output_items)
{
    auto* out = static_cast<gr_complex*>(output_items[0]);
    std::vector<gr::tag_t> tags;
    get_tags_in_range(tags, 0, nitems_read(0), nitems_read(0) + noutput_items);
    for (const auto& tag : tags)
        add_item_tag(0, tag); // sync block: input and output offsets are the same
    const ::mimodet::Dims dims{ d_antennas, 1, d_subcarriers, 1 };
    for (int item = 0; item < noutput_items; ++item) {
        gr_complex* o = out + static_cast<std::size_t>(item) * dims.rx_items();
        for (std::size_t b = 0; b < d_antennas; ++b) {
            const auto* in =
                static_cast<const gr_complex*>(input_items[b]) + item * d_subcarriers;
            for (std::size_t sc = 0; sc < d_subcarriers; ++sc)
                o[dims.rx_index(sc, b)] = in[sc];
        }
    }
    return noutput_items;
}

} // namespace mimodet
} // namespace gr
