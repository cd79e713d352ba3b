/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_CPU_UPLINK_DETECTOR_H
#define INCLUDED_MIMODET_CORE_CPU_UPLINK_DETECTOR_H

#include <mimodet/uplink_detector.h>
#include <memory>

namespace mimodet {

//! The detector configuration with its sizes those of the frame layout (both checked).
DetectorConfig sized_for(const OfdmConfig& ofdm, DetectorConfig d);

//! The receive chain on the CPU (OfdmReceiver), then the CPU detector, frame by frame.
std::unique_ptr<UplinkDetector> make_cpu_uplink_detector(const OfdmConfig& ofdm,
                                                         const DetectorConfig& detector);

} // namespace mimodet

#endif
