/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Fuzz target: 'rx_time' tags from outside (a radio, a capture, another block) through the
 * receive chain's gap logic, in ofdm_uplink_detector (ofdm_uplink_receiver shares it,
 * lib/receive_chain_common.cc). Tags of every PMT type, and well-formed (seconds,
 * fraction) tuples whose times jump forward and back, by a little or past any sample
 * count, with NaN, Inf, negative and huge parts, at any sample of a stream of four
 * simulated frames; samples may carry a burst of NaN, Inf or other values; the block gets
 * 1 to 64 samples at a time; the sample rate varies. Whatever comes, the block must
 * neither crash nor stall, must output whole frames (N_data LLR items each, every LLR
 * finite) of at most the frames sent (the samples' worth with a burst), and every
 * mimo_time tag it writes must be a finite time. Built as
 * fuzz_detector_tags is (tests/fuzz/README.md).
 */

#include "../common/ofdm_stream.h"
#include "fuzz_input.h"
#include <gnuradio/blocks/copy.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/logger.h>
#include <gnuradio/mimodet/ofdm_uplink_detector.h>
#include <gnuradio/top_block.h>
#include <mimodet/layout.h>
#include <pmt/pmt.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

namespace {

using mimodet::fuzz::any_pmt;
using mimodet::fuzz::FuzzInput;

constexpr int kFrames = 4;

const mimodet::OfdmConfig& layout()
{
    static const mimodet::OfdmConfig o = [] {
        mimodet::OfdmConfig c; // mimodet_rx's tiny layout (apps/test_bad_arguments.py)
        c.num_antennas = 2;
        c.num_users = 1;
        c.fft_size = 32;
        c.cp_length = 9;
        c.num_subcarriers = 16;
        c.num_data_symbols = 1;
        c.modulation = mimodet::Modulation::qpsk;
        return c;
    }();
    return o;
}

const mimodet::test::Stream& stream()
{
    static const mimodet::test::Stream s = mimodet::test::make_stream(layout(), 25.0, 0.1,
                                                                      kFrames, 11, 37);
    return s;
}

pmt::pmt_t any_time(FuzzInput& in, double rate, std::uint64_t offset)
{
    if (in.u8() % 4 == 0)
        return any_pmt(in, 2);
    // Mostly the right time give or take some samples, sometimes anything.
    const double base = 1000.0 + double(offset) / rate;
    double seconds = base + double(static_cast<std::int8_t>(in.u8())) / rate;
    switch (in.u8() % 8) {
    case 0:
        seconds = in.value();
        break;
    case 1:
        seconds = base + double(in.value()) * 1e10;
        break;
    default:
        break;
    }
    const double whole = std::isfinite(seconds) ? std::floor(seconds) : 0.0;
    const pmt::pmt_t full =
        in.u8() % 8 == 0
            ? pmt::from_long(static_cast<long>(static_cast<std::int16_t>(in.u16())))
        : in.u8() % 8 == 0 ? pmt::from_uint64(in.u64())
        : pmt::from_uint64(whole >= 0 && whole < 1.8e19 ? static_cast<std::uint64_t>(whole)
                                                        : 0);
    const double fraction = std::isfinite(seconds) ? seconds - whole : seconds;
    return pmt::make_tuple(full, pmt::from_double(fraction));
}

[[noreturn]] void fail(const char* what, double a, double b)
{
    std::fprintf(stderr, "fuzz_rx_time: %s (%g, %g)\n", what, a, b);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const bool quiet = [] { // a bad tag or a gap logs a warning: by design
        gr::logging::singleton().set_default_level(gr::log_level::off);
        return true;
    }();
    (void)quiet;
    const mimodet::OfdmConfig& o = layout();
    const mimodet::test::Stream& s = stream();
    const std::size_t total = s.rx[0].size();
    FuzzInput in(data, size);
    static const double rates[] = { 1e6, 7.68e6, 1.0, 1e-300, 1e300, 3e-9 };
    const double rate = rates[in.u8() % 6];
    const int max_items = 1 + in.u8() % 64;
    std::vector<std::vector<gr_complex>> rx = s.rx;
    const bool burst = in.u8() % 4 == 0;
    if (burst) { // a burst of NaN, Inf or any values
        const std::size_t at = in.u16() % total, n = 1 + in.u8();
        for (std::size_t i = at; i < std::min(total, at + n); ++i) {
            const std::size_t antenna = in.u8() % rx.size();
            const float re = in.value();
            const float im = in.value();
            rx[antenna][i] = { re, im };
        }
    }
    std::vector<gr::tag_t> tags;
    while (!in.empty() && tags.size() < 12) {
        gr::tag_t tag;
        tag.offset = in.u16() % total;
        tag.key = pmt::intern(in.u8() % 8 ? mimodet::kRxTimeTagKey : mimodet::kNoiseVarTagKey);
        tag.value = any_time(in, rate, tag.offset);
        tags.push_back(tag);
    }

    auto det = gr::mimodet::ofdm_uplink_detector::make(static_cast<int>(o.num_antennas),
                                                       static_cast<int>(o.num_users),
                                                       static_cast<int>(o.fft_size),
                                                       static_cast<int>(o.cp_length),
                                                       static_cast<int>(o.num_subcarriers),
                                                       static_cast<int>(o.num_data_symbols),
                                                       "qpsk",
                                                       "chol",
                                                       3,
                                                       "cpu",
                                                       rate);
    auto tb = gr::make_top_block("fuzz_rx_time");
    for (std::size_t b = 0; b < o.num_antennas; ++b) {
        auto src = gr::blocks::vector_source_c::make(
            rx[b], false, 1, b == 0 ? tags : std::vector<gr::tag_t>{});
        // Not on the source: with tags, vector_source's output multiple is its whole
        // vector, and a smaller limit would never let it produce (GNU Radio #5497).
        auto chunks = gr::blocks::copy::make(sizeof(gr_complex));
        chunks->set_max_noutput_items(max_items);
        tb->connect(src, 0, chunks, 0);
        tb->connect(chunks, 0, det, static_cast<int>(b));
    }
    const std::size_t item = o.dims().llr_items();
    auto sink = gr::blocks::vector_sink_f::make(static_cast<int>(item));
    tb->connect(det, 0, sink, 0);
    tb->run();

    const std::vector<float>& llr = sink->data();
    // A burst may look like a frame (one of 208 equal samples did): then the bound is
    // what the samples could hold.
    const double frames = double(det->frames());
    const double most = burst ? double(total / o.frame_samples()) : double(kFrames);
    if (frames > most)
        fail("more frames than the samples hold", frames, most);
    if (double(llr.size()) != frames * double(o.num_data_symbols * item))
        fail("LLRs that are not whole frames", double(llr.size()), frames);
    for (std::size_t i = 0; i < llr.size(); ++i)
        if (!std::isfinite(llr[i]))
            fail("non-finite LLR at index", double(i), double(llr.size()));
    for (const auto& tag : sink->tags())
        if (pmt::eq(tag.key, pmt::intern(mimodet::kFrameTimeTagKey)) &&
            !(pmt::is_real(tag.value) && std::isfinite(pmt::to_double(tag.value))))
            fail("a mimo_time tag that is not a finite time at item", double(tag.offset), 0);
    return 0;
}
