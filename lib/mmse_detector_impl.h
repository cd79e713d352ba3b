/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_MMSE_DETECTOR_IMPL_H
#define INCLUDED_MIMODET_MMSE_DETECTOR_IMPL_H

#include "detector_block.h"
#include <gnuradio/mimodet/mmse_detector.h>

namespace gr {
namespace mimodet {

class mmse_detector_impl : public detector_block<mmse_detector>
{
public:
    mmse_detector_impl(const ::mimodet::DetectorConfig& config,
                       const llr_items& llr,
                       const extra_outputs& extra);

    std::string mode() const override;
    void set_mode(const std::string& mode) override;
    int iterations() const override;
    void set_iterations(int iterations) override;
    std::string precision() const override;
    void set_precision(const std::string& precision) override;
};

} // namespace mimodet
} // namespace gr

#endif
