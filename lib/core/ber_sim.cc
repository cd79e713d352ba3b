/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <mimodet/ber_sim.h>
#include <chrono>
#include <cmath>

namespace mimodet {

DetectorConfig detector_config_for(const ChannelSimConfig& sim,
                                   DetectorMode mode,
                                   unsigned iterations,
                                   Backend backend)
{
    DetectorConfig d;
    d.num_antennas = sim.num_antennas;
    d.num_users = sim.num_users;
    d.num_subcarriers = sim.num_subcarriers;
    d.modulation = sim.modulation;
    d.mode = mode;
    d.iterations = iterations;
    d.backend = backend;
    return d;
}

BerPoint simulate_ber_point(const ChannelSimConfig& sim_config,
                            const DetectorConfig& detector_config,
                            std::uint64_t frames,
                            std::uint64_t min_errors,
                            const std::function<bool(std::uint64_t)>& progress)
{
    const Dims sd = sim_config.dims(), dd = detector_config.dims();
    if (sd.num_antennas != dd.num_antennas || sd.num_users != dd.num_users ||
        sd.num_subcarriers != dd.num_subcarriers ||
        sd.bits_per_symbol != dd.bits_per_symbol)
        throw std::invalid_argument(
            "simulate_ber_point: simulator and detector sizes differ");

    ChannelSimulator sim(sim_config);
    auto detector = make_detector(detector_config);
    Frame frame;
    std::vector<float> llr(sim_config.symbols_per_frame * dd.llr_items());
    BerPoint point;
    point.snr_db = sim_config.snr_db;
    using clock = std::chrono::steady_clock;
    for (std::uint64_t f = 0; f < frames; ++f) {
        sim.next_frame(frame);
        const auto start = clock::now();
        detector->set_channel(frame.h.data(), frame.n0);
        detector->detect(frame.y.data(), sim_config.symbols_per_frame, llr.data());
        point.detect_seconds +=
            std::chrono::duration<double>(clock::now() - start).count();
        for (std::size_t i = 0; i < llr.size(); ++i) {
            const bool erased = llr[i] == 0.0f || std::isnan(llr[i]); // as ber_meter
            point.erasures += erased ? 1 : 0;
            point.bit_errors +=
                (erased || hard_bit(llr[i], detector_config.llr_sign) != frame.bits[i])
                    ? 1
                    : 0;
        }
        point.bits += llr.size();
        ++point.frames;
        if (progress && !progress(point.frames))
            break;
        if (min_errors && point.bit_errors >= min_errors)
            break;
    }
    return point;
}

} // namespace mimodet
