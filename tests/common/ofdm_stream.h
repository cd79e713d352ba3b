/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Test helpers: simulated uplink streams of several frames and the CPU receiver walked
 * over them, the reference of the receive chains. */

#ifndef INCLUDED_MIMODET_TESTS_OFDM_STREAM_H
#define INCLUDED_MIMODET_TESTS_OFDM_STREAM_H

#include <mimodet/ofdm.h>
#include <cstdint>
#include <vector>

namespace mimodet {
namespace test {

//! Frames one after another, each after its own stretch of noise (lead), as one stream.
struct Stream {
    std::vector<std::vector<cf32>> rx; //!< [B][samples]
    std::vector<std::size_t> starts;   //!< true frame starts
    std::vector<UplinkFrame> truth;
};

//! lead_step: the noise before frame f is 40 + lead_step * f samples; with a negative
//! lead_step none (frames back to back, each after the previous one's CP of channel
//! tail).
inline Stream make_stream(const OfdmConfig& o,
                          double snr_db,
                          double cfo,
                          int frames,
                          std::uint64_t seed,
                          long lead_step = 173)
{
    Stream s;
    s.rx.assign(o.num_antennas, {});
    for (int f = 0; f < frames; ++f) {
        UplinkChannelConfig ch;
        ch.snr_db = snr_db;
        ch.cfo = cfo * (f % 2 ? -1.0 : 1.0);
        ch.lead_samples =
            lead_step < 0 ? 0 : 40 + static_cast<std::size_t>(lead_step * f);
        ch.seed = seed + static_cast<std::uint64_t>(f);
        UplinkSimulator sim(o, ch);
        UplinkFrame frame;
        sim.next_frame(frame);
        s.starts.push_back(s.rx[0].size() + frame.frame_start);
        for (std::size_t b = 0; b < o.num_antennas; ++b)
            s.rx[b].insert(s.rx[b].end(), frame.rx[b].begin(), frame.rx[b].end());
        s.truth.push_back(std::move(frame));
    }
    return s;
}

//! OfdmReceiver::receive frame after frame (from each next_start), as apps/mimodet_rx
//! walks.
inline std::vector<OfdmReception> cpu_walk(const OfdmConfig& o,
                                           const std::vector<std::vector<cf32>>& rx)
{
    OfdmReceiver receiver(o);
    std::vector<OfdmReception> found;
    const std::size_t total = rx[0].size();
    std::size_t pos = 0;
    while (pos < total) {
        std::vector<const cf32*> at;
        for (const auto& a : rx)
            at.push_back(a.data() + pos);
        OfdmReception r;
        if (!receiver.receive(at, total - pos, r))
            break;
        r.frame_start += pos;
        r.next_start += pos; // both in the stream's samples
        pos = r.next_start;
        found.push_back(std::move(r));
    }
    return found;
}

} // namespace test
} // namespace mimodet

#endif
