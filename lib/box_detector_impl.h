/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_BOX_DETECTOR_IMPL_H
#define INCLUDED_MIMODET_BOX_DETECTOR_IMPL_H

#include "detector_block.h"
#include <gnuradio/mimodet/box_detector.h>

namespace gr {
namespace mimodet {

class box_detector_impl : public detector_block<box_detector>
{
public:
    box_detector_impl(const ::mimodet::DetectorConfig& config,
                      const llr_items& llr,
                      const extra_outputs& extra);

    int iterations() const override;
    void set_iterations(int iterations) override;
    std::string start() const override;
    void set_start(const std::string& start) override;
    bool accelerated() const override;
    void set_accelerated(bool accelerated) override;
    float step() const override;
    void set_step(float step) override;
    std::string precision() const override;
    void set_precision(const std::string& precision) override;

private:
    //! Validates `config` (refusing it with this block's name) and rebuilds the detector
    //! when it differs from the one in force; the caller holds d_mutex.
    void reconfigure(core::DetectorConfig config);
};

} // namespace mimodet
} // namespace gr

#endif
