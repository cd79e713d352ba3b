/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_FSD_DETECTOR_IMPL_H
#define INCLUDED_MIMODET_FSD_DETECTOR_IMPL_H

#include "detector_block.h"
#include <gnuradio/mimodet/fsd_detector.h>

namespace gr {
namespace mimodet {

class fsd_detector_impl : public detector_block<fsd_detector>
{
public:
    fsd_detector_impl(const ::mimodet::DetectorConfig& config, const llr_items& llr);

    std::string output() const override;
    void set_output(const std::string& output) override;
    int list_paths() const override;
    void set_list_paths(int list_paths) override;
    int full_levels() const override;
    std::string precision() const override;
    void set_precision(const std::string& precision) override;
};

} // namespace mimodet
} // namespace gr

#endif
