/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "box_detector_impl.h"
#include <gnuradio/io_signature.h>
#include <stdexcept>

namespace gr {
namespace mimodet {

namespace {

core::DetectorConfig checked(core::DetectorConfig c)
{
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("box_detector: ") + e.what());
    }
    return c;
}

unsigned iterations_of(int iterations)
{
    if (iterations < 1)
        throw std::invalid_argument("box_detector: iterations must be >= 1, got " +
                                    std::to_string(iterations));
    return static_cast<unsigned>(iterations);
}

core::BoxStart start_of(const std::string& start)
{
    try {
        return core::parse_box_start(start);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("box_detector: ") + e.what());
    }
}

} // namespace

box_detector::sptr box_detector::make(int num_antennas,
                                      int num_users,
                                      int num_subcarriers,
                                      const std::string& modulation,
                                      int iterations,
                                      const std::string& start,
                                      bool accelerated,
                                      float step,
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
    core::DetectorConfig c = block_config("box_detector",
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
    c.mode = core::DetectorMode::box;
    c.box_iterations = iterations_of(iterations);
    c.box_start = start_of(start);
    c.box_accelerated = accelerated;
    c.box_step = step;
    c.precision = parse_block_precision("box_detector", precision);
    return gnuradio::make_block_sptr<box_detector_impl>(
        checked(c), parse_llr_items("box_detector", llr_type, llr_int8_scale),
        extra_outputs{ equalized_output, quality_output });
}

box_detector_impl::box_detector_impl(const core::DetectorConfig& config,
                                     const llr_items& llr,
                                     const extra_outputs& extra)
    : gr::sync_block("box_detector", items_in(config), llrs_out(config, llr, extra)),
      detector_block<box_detector>(config, llr, extra)
{
}

void box_detector_impl::reconfigure(core::DetectorConfig config)
{
    config = checked(config); // refused before anything changes
    if (config.box_iterations == d_config.box_iterations &&
        config.box_start == d_config.box_start &&
        config.box_accelerated == d_config.box_accelerated &&
        config.box_step == d_config.box_step)
        return;
    rebuild_detector(config);
}

int box_detector_impl::iterations() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return static_cast<int>(d_config.box_iterations);
}

void box_detector_impl::set_iterations(int iterations)
{
    const unsigned n = iterations_of(iterations);
    std::lock_guard<std::mutex> lock(d_mutex);
    auto config = d_config;
    config.box_iterations = n;
    reconfigure(config);
}

std::string box_detector_impl::start() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return core::to_string(d_config.box_start);
}

void box_detector_impl::set_start(const std::string& start)
{
    const core::BoxStart s = start_of(start);
    std::lock_guard<std::mutex> lock(d_mutex);
    auto config = d_config;
    config.box_start = s;
    reconfigure(config);
}

bool box_detector_impl::accelerated() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_config.box_accelerated;
}

void box_detector_impl::set_accelerated(bool accelerated)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    auto config = d_config;
    config.box_accelerated = accelerated;
    reconfigure(config);
}

float box_detector_impl::step() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_config.box_step;
}

void box_detector_impl::set_step(float step)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    auto config = d_config;
    config.box_step = step;
    reconfigure(config);
}

std::string box_detector_impl::precision() const { return precision_name(); }

void box_detector_impl::set_precision(const std::string& precision)
{
    change_precision("box_detector", precision);
}

} // namespace mimodet
} // namespace gr
