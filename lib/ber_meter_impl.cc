/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "ber_meter_impl.h"
#include <gnuradio/io_signature.h>

namespace gr {
namespace mimodet {

ber_meter::sptr ber_meter::make(int vlen,
                                bool llr_positive_means_one,
                                int report_period,
                                int num_users,
                                int bits_per_symbol)
{
    if (vlen <= 0)
        throw std::invalid_argument("ber_meter: vlen must be > 0, got " +
                                    std::to_string(vlen));
    if (report_period < 0)
        throw std::invalid_argument("ber_meter: report_period must be >= 0");
    if (num_users < 0 || bits_per_symbol < 0 || (num_users > 0) != (bits_per_symbol > 0) ||
        (num_users > 0 && vlen % (num_users * bits_per_symbol) != 0))
        throw std::invalid_argument(
            "ber_meter: num_users and bits_per_symbol must both be 0 (no per-user output) "
            "or both > 0 with vlen a multiple of their product, got num_users " +
            std::to_string(num_users) + ", bits_per_symbol " +
            std::to_string(bits_per_symbol) + ", vlen " + std::to_string(vlen));
    return gnuradio::make_block_sptr<ber_meter_impl>(
        vlen, llr_positive_means_one, report_period, num_users, bits_per_symbol);
}

ber_meter_impl::ber_meter_impl(int vlen,
                               bool llr_positive_means_one,
                               int report_period,
                               int num_users,
                               int bits_per_symbol)
    : gr::sync_block("ber_meter",
                     gr::io_signature::make2(
                         2, 2, sizeof(float) * vlen, sizeof(std::uint8_t) * vlen),
                     num_users > 0
                         ? gr::io_signature::make(1, 1, sizeof(float) * num_users)
                         : gr::io_signature::make(0, 0, 0)),
      d_vlen(static_cast<std::size_t>(vlen)),
      d_positive_means_one(llr_positive_means_one),
      d_report_period(static_cast<std::uint64_t>(report_period)),
      d_port(pmt::mp("ber")),
      d_users(static_cast<std::size_t>(num_users)),
      d_bits_per_symbol(static_cast<std::size_t>(bits_per_symbol)),
      d_user_errors(d_users)
{
    message_port_register_out(d_port);
}

double ber_meter_impl::ber() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_bits ? static_cast<double>(d_errors) / static_cast<double>(d_bits) : 0.0;
}
std::uint64_t ber_meter_impl::bits() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_bits;
}
std::uint64_t ber_meter_impl::bit_errors() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_errors;
}
std::uint64_t ber_meter_impl::erasures() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_erasures;
}
void ber_meter_impl::reset()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_bits = d_errors = d_erasures = d_items_since_report = 0;
}

void ber_meter_impl::publish()
{
    pmt::pmt_t dict = pmt::make_dict();
    const double ber =
        d_bits ? static_cast<double>(d_errors) / static_cast<double>(d_bits) : 0.0;
    dict = pmt::dict_add(dict, pmt::mp("ber"), pmt::from_double(ber));
    dict = pmt::dict_add(dict, pmt::mp("bits"), pmt::from_uint64(d_bits));
    dict = pmt::dict_add(dict, pmt::mp("bit_errors"), pmt::from_uint64(d_errors));
    dict = pmt::dict_add(dict, pmt::mp("erasures"), pmt::from_uint64(d_erasures));
    message_port_pub(d_port, dict);
}

int ber_meter_impl::work(int noutput_items,
                         gr_vector_const_void_star& input_items,
                         gr_vector_void_star& output_items)
{
    const auto* llr = static_cast<const float*>(input_items[0]);
    const auto* ref = static_cast<const std::uint8_t*>(input_items[1]);
    const std::size_t n = static_cast<std::size_t>(noutput_items) * d_vlen;
    std::uint64_t errors = 0, erasures = 0;
    auto wrong = [&](std::size_t i) {
        const float l = llr[i];
        const bool erased = l == 0.0f || l != l; // a NaN carries no information either
        const int decided = d_positive_means_one ? (l > 0.0f) : (l < 0.0f);
        erasures += erased;
        return (erased || decided != (ref[i] & 1)) ? 1u : 0u;
    };
    if (d_users == 0) {
        for (std::size_t i = 0; i < n; ++i)
            errors += wrong(i);
    } else {
        // [N_sc][U][bits]: bit i belongs to user (i / bits) mod U
        auto* out = static_cast<float*>(output_items[0]);
        const std::size_t per_user = d_vlen / d_users; // bits of a user in one item
        for (int item = 0; item < noutput_items; ++item) {
            std::fill(d_user_errors.begin(), d_user_errors.end(), 0);
            const std::size_t first = static_cast<std::size_t>(item) * d_vlen;
            for (std::size_t i = 0; i < d_vlen; ++i)
                d_user_errors[(i / d_bits_per_symbol) % d_users] += wrong(first + i);
            for (std::size_t u = 0; u < d_users; ++u) {
                errors += d_user_errors[u];
                out[static_cast<std::size_t>(item) * d_users + u] =
                    static_cast<float>(d_user_errors[u]) / static_cast<float>(per_user);
            }
        }
    }
    std::lock_guard<std::mutex> lock(d_mutex);
    d_bits += n;
    d_errors += errors;
    d_erasures += erasures;
    d_items_since_report += static_cast<std::uint64_t>(noutput_items);
    if (d_report_period && d_items_since_report >= d_report_period) {
        publish();
        d_items_since_report = 0;
    }
    return noutput_items;
}

} // namespace mimodet
} // namespace gr
