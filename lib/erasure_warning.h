/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_ERASURE_WARNING_H
#define INCLUDED_MIMODET_ERASURE_WARNING_H

#include <gnuradio/logger.h>
#include <mimodet/detector.h>

namespace gr {
namespace mimodet {

/*! The detector blocks' one warning about erased inputs (the same words in every block, so
 * that both chains report the same erasures alike); returns whether there was anything to
 * say. Callers warn once: their counters keep the totals. */
inline bool warn_about_erasures(const gr::logger_ptr& logger,
                                const ::mimodet::DetectorStats& s)
{
    if (!(s.bad_channel_subcarriers || s.bad_sample_vectors || s.invalid_noise_variance))
        return false;
    logger->warn("non-finite or unusable input: {:d} channel subcarriers, {:d} "
                 "(symbol, subcarrier) sample vectors, {:d} invalid N0 values so far; "
                 "their LLRs are 0 (logged once; see the block's counters)",
                 s.bad_channel_subcarriers,
                 s.bad_sample_vectors,
                 s.invalid_noise_variance);
    return true;
}

} // namespace mimodet
} // namespace gr

#endif
