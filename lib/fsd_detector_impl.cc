/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "fsd_detector_impl.h"
#include <gnuradio/io_signature.h>
#include <stdexcept>

namespace gr {
namespace mimodet {

namespace {

core::DetectorMode mode_of_output(const std::string& output)
{
    if (output == "soft")
        return core::DetectorMode::sfsd;
    if (output == "hard")
        return core::DetectorMode::fsd;
    throw std::invalid_argument("fsd_detector: output must be \"soft\" or \"hard\", got \"" +
                                output + "\"");
}

} // namespace

fsd_detector::sptr fsd_detector::make(int num_antennas,
                                      int num_users,
                                      int num_subcarriers,
                                      const std::string& modulation,
                                      const std::string& output,
                                      int list_paths,
                                      int full_levels,
                                      const std::string& backend,
                                      bool llr_positive_means_one,
                                      float llr_clip,
                                      int num_threads,
                                      const std::vector<int>& devices,
                                      int streams,
                                      const std::string& precision,
                                      const std::string& llr_type,
                                      double llr_int8_scale)
{
    auto not_negative = [](int v, const char* what) {
        if (v < 0)
            throw std::invalid_argument(std::string("fsd_detector: ") + what +
                                        " must be >= 0 (0 = the default), got " +
                                        std::to_string(v));
        return static_cast<std::size_t>(v);
    };
    core::DetectorConfig c = block_config("fsd_detector",
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
    c.mode = mode_of_output(output);
    c.list_paths = not_negative(list_paths, "list_paths");
    c.full_levels = not_negative(full_levels, "full_levels");
    c.precision = parse_block_precision("fsd_detector", precision);
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("fsd_detector: ") + e.what());
    }
    return gnuradio::make_block_sptr<fsd_detector_impl>(
        c, parse_llr_items("fsd_detector", llr_type, llr_int8_scale));
}

fsd_detector_impl::fsd_detector_impl(const core::DetectorConfig& config,
                                     const llr_items& llr)
    : gr::sync_block("fsd_detector", items_in(config), llrs_out(config, llr)),
      detector_block<fsd_detector>(config, llr, extra_outputs{ false, false, false })
{
}

std::string fsd_detector_impl::output() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_config.mode == core::DetectorMode::sfsd ? "soft" : "hard";
}

void fsd_detector_impl::set_output(const std::string& output)
{
    const auto mode = mode_of_output(output); // throws before touching state
    std::lock_guard<std::mutex> lock(d_mutex);
    if (mode == d_config.mode)
        return;
    auto config = d_config;
    config.mode = mode;
    rebuild_detector(config);
}

std::string fsd_detector_impl::precision() const { return precision_name(); }

void fsd_detector_impl::set_precision(const std::string& precision)
{
    change_precision("fsd_detector", precision);
}

int fsd_detector_impl::list_paths() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return static_cast<int>(d_config.effective_list_paths());
}

void fsd_detector_impl::set_list_paths(int list_paths)
{
    if (list_paths < 0)
        throw std::invalid_argument("fsd_detector: list_paths must be >= 0, got " +
                                    std::to_string(list_paths));
    std::lock_guard<std::mutex> lock(d_mutex);
    auto config = d_config;
    config.list_paths = static_cast<std::size_t>(list_paths);
    if (config.effective_list_paths() == d_config.effective_list_paths())
        return;
    config.validate(); // refused before anything changes
    rebuild_detector(config);
}

int fsd_detector_impl::full_levels() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return static_cast<int>(d_config.effective_full_levels());
}

} // namespace mimodet
} // namespace gr
