/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_BER_METER_IMPL_H
#define INCLUDED_MIMODET_BER_METER_IMPL_H

#include <gnuradio/mimodet/ber_meter.h>
#include <mutex>
#include <vector>

namespace gr {
namespace mimodet {

class ber_meter_impl : public ber_meter
{
private:
    const std::size_t d_vlen;
    const bool d_positive_means_one;
    const std::uint64_t d_report_period;
    std::uint64_t d_bits = 0, d_errors = 0, d_erasures = 0, d_items_since_report = 0;
    mutable std::mutex d_mutex;
    const pmt::pmt_t d_port;
    const std::size_t d_users, d_bits_per_symbol; // per-user output when d_users > 0
    std::vector<std::uint64_t> d_user_errors;     // scratch: one item's errors per user

    void publish();

public:
    ber_meter_impl(int vlen,
                   bool llr_positive_means_one,
                   int report_period,
                   int num_users,
                   int bits_per_symbol);

    double ber() const override;
    std::uint64_t bits() const override;
    std::uint64_t bit_errors() const override;
    std::uint64_t erasures() const override;
    void reset() override;

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;
};

} // namespace mimodet
} // namespace gr

#endif
