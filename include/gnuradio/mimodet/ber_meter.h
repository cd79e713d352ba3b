/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_BER_METER_H
#define INCLUDED_MIMODET_BER_METER_H

#include <gnuradio/mimodet/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>

namespace gr {
namespace mimodet {

/*!
 * \brief Bit error rate of LLRs against the transmitted bits.
 * \ingroup mimodet
 *
 * \details
 * Input 0: LLR vectors (float32, vlen); input 1: reference bits (bytes 0/1, same vlen and
 * layout). A bit is decided 1 when its LLR is positive (or negative with
 * llr_positive_means_one false); an LLR of exactly 0 is an erasure and counts as an
 * error. The message port "ber" publishes a dict {ber, bits, bit_errors, erasures} every
 * report_period items (0: no messages; read the getters).
 */
class MIMODET_API ber_meter : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<ber_meter> sptr;

    /*!
     * \param vlen bits per item (N_sc * U * bits per symbol for the detector's output)
     * \param llr_positive_means_one sign convention of the LLRs
     * \param report_period items between "ber" messages, 0 = none
     * \param num_users with bits_per_symbol > 0: an output of num_users float32 per
     *        item, each user's fraction of bits in error in that item (erasures count as
     *        errors), for the detector's layout [N_sc][U][bits]; vlen must be a multiple
     *        of num_users * bits_per_symbol. 0: no output.
     * \param bits_per_symbol bits of each user's symbol (with num_users)
     */
    static sptr make(int vlen,
                     bool llr_positive_means_one = true,
                     int report_period = 0,
                     int num_users = 0,
                     int bits_per_symbol = 0);

    virtual double ber() const = 0;
    virtual std::uint64_t bits() const = 0;
    virtual std::uint64_t bit_errors() const = 0;
    virtual std::uint64_t erasures() const = 0;
    virtual void reset() = 0;
};

} // namespace mimodet
} // namespace gr

#endif
