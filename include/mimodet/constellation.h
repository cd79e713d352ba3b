/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CONSTELLATION_H
#define INCLUDED_MIMODET_CONSTELLATION_H

#include <mimodet/layout.h>
#include <cstdint>
#include <string>
#include <vector>

namespace mimodet {

enum class Modulation { bpsk, qpsk, qam16, qam64, qam256 };

//! "bpsk", "qpsk", "16qam", "64qam", "256qam" (also "qam16" etc.); throws on anything
//! else.
Modulation parse_modulation(const std::string& name);
std::string to_string(Modulation m);
std::size_t bits_per_symbol(Modulation m);

/*! A constellation with the Gray mapping of 3GPP TS 38.211 section 5.1 and unit average
 * energy (Es = 1). Point index i holds the bits b(0..Q-1) with b(0) as the most
 * significant bit of i, exactly the order in which LLRs are written.
 */
class Constellation
{
public:
    explicit Constellation(Modulation m);

    Modulation modulation() const { return d_modulation; }
    std::size_t bits_per_symbol() const { return d_bits; }
    std::size_t size() const { return d_points.size(); }
    const std::vector<cf32>& points() const { return d_points; }

    //! Bit p (0 = b(0) of 38.211) of point index i.
    int bit_of(std::size_t index, std::size_t p) const
    {
        return static_cast<int>((index >> (d_bits - 1 - p)) & 1u);
    }
    //! Maps Q bits (values 0/1, b(0) first) to the constellation point.
    cf32 map(const std::uint8_t* bits) const;

    /*! Max-log LLRs of one equalized symbol z with post-equalization SINR rho:
     *  LLR_p = rho * (min_{a: b_p=0} |z-a|^2 - min_{a: b_p=1} |z-a|^2), positive means 1.
     * QAM is a product of two Gray PAMs (even bits on I, odd bits on Q), so each bit
     * needs only a sqrt(M)-level search along one axis; this is exact max-log, not an
     * approximation.
     */
    void demap_maxlog(cf32 z, float rho, float* llr) const;

    //! The same LLRs by exhaustive search over all M points (test reference, slow).
    void demap_maxlog_bruteforce(cf32 z, float rho, float* llr) const;

private:
    Modulation d_modulation;
    std::size_t d_bits;
    std::vector<cf32> d_points;
    //! PAM levels per axis (QAM only) and, for each axis bit, which levels carry a 1.
    std::vector<float> d_levels;
    std::vector<std::uint32_t>
        d_level_bits; //!< bit pattern of the axis bits of each level
};

} // namespace mimodet

#endif
