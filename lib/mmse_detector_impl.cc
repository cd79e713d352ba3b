/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mmse_detector_impl.h"
#include <gnuradio/io_signature.h>
#include <stdexcept>

namespace gr {
namespace mimodet {

namespace {

//! The sphere decoders and BOX have blocks of their own, with their own parameters.
void refuse_other_families(const core::DetectorConfig& c, const std::string& mode)
{
    if (c.sphere())
        throw std::invalid_argument("mmse_detector: mode " + mode +
                                    " is a sphere decoder: use fsd_detector");
    if (c.mode == core::DetectorMode::box)
        throw std::invalid_argument("mmse_detector: mode " + mode +
                                    " is the BOX equalizer: use box_detector");
}

} // namespace

mmse_detector::sptr mmse_detector::make(int num_antennas,
                                        int num_users,
                                        int num_subcarriers,
                                        const std::string& modulation,
                                        const std::string& mode,
                                        int iterations,
                                        const std::string& backend,
                                        bool llr_positive_means_one,
                                        float llr_clip,
                                        int num_threads,
                                        const std::vector<int>& devices,
                                        int streams,
                                        const std::string& precision,
                                        const std::string& llr_type,
                                        double llr_int8_scale,
                                        bool equalized_output,
                                        bool quality_output)
{
    core::DetectorConfig c = block_config("mmse_detector",
                                          num_antennas,
                                          num_users,
                                          num_subcarriers,
                                          modulation,
                                          backend,
                                          llr_positive_means_one,
                                          llr_clip,
                                          num_threads,
                                          devices,
                                          streams);
    c.mode = core::parse_detector_mode(mode);
    refuse_other_families(c, mode);
    if (iterations < 1) // checked for every mode: set_mode() may switch to cg or cr later
        throw std::invalid_argument("mmse_detector: iterations must be >= 1, got " +
                                    std::to_string(iterations));
    c.iterations = static_cast<unsigned>(iterations);
    c.precision = parse_block_precision("mmse_detector", precision);
    c.validate();
    return gnuradio::make_block_sptr<mmse_detector_impl>(
        c, parse_llr_items("mmse_detector", llr_type, llr_int8_scale),
        extra_outputs{ equalized_output, quality_output });
}

mmse_detector_impl::mmse_detector_impl(const core::DetectorConfig& config,
                                       const llr_items& llr,
                                       const extra_outputs& extra)
    : gr::sync_block("mmse_detector", items_in(config), llrs_out(config, llr, extra)),
      detector_block<mmse_detector>(config, llr, extra)
{
}

std::string mmse_detector_impl::mode() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return core::to_string(d_config.mode);
}

void mmse_detector_impl::set_mode(const std::string& mode)
{
    const auto parsed = core::parse_detector_mode(mode); // throws before touching state
    std::lock_guard<std::mutex> lock(d_mutex);
    if (parsed == d_config.mode)
        return;
    auto config = d_config;
    config.mode = parsed;
    refuse_other_families(config, mode);
    rebuild_detector(config);
}

int mmse_detector_impl::iterations() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return static_cast<int>(d_config.iterations);
}

void mmse_detector_impl::set_iterations(int iterations)
{
    if (iterations < 1)
        throw std::invalid_argument("mmse_detector: iterations must be >= 1");
    std::lock_guard<std::mutex> lock(d_mutex);
    if (static_cast<unsigned>(iterations) == d_config.iterations)
        return;
    auto config = d_config;
    config.iterations = static_cast<unsigned>(iterations);
    rebuild_detector(config);
}

std::string mmse_detector_impl::precision() const { return precision_name(); }

void mmse_detector_impl::set_precision(const std::string& precision)
{
    change_precision("mmse_detector", precision);
}

} // namespace mimodet
} // namespace gr
