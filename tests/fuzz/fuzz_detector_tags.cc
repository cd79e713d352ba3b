/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Fuzz target: the 'mimo_h' / 'mimo_n0' tags (and others) of every PMT type and length,
 * with samples that may be NaN or Inf, through the detector blocks (mmse_detector chol, cg
 * and zf, fsd_detector, box_detector) in a real flowgraph. Whatever the tags, a block must
 * neither crash nor stall, must produce one LLR item per input item once a channel tag
 * opened the stream (none before), and every LLR must be finite (docs/data-contract.md:
 * bad input is erased to 0).
 *
 * The bytes are read as a small program (FuzzInput below), so that a mutation of one byte
 * changes one choice. Built as a libFuzzer target with -DMIMODET_FUZZ=ON (clang), and as
 * a corpus replay with mutations (fuzz_replay_main.cc) in every build: tests/fuzz/README.md.
 */

#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/logger.h>
#include <gnuradio/mimodet/box_detector.h>
#include <gnuradio/mimodet/fsd_detector.h>
#include <gnuradio/mimodet/mmse_detector.h>
#include <gnuradio/top_block.h>
#include <mimodet/layout.h>
#include "fuzz_input.h"
#include <pmt/pmt.h>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using mimodet::fuzz::FuzzInput;

constexpr int kAntennas = 2, kUsers = 2, kSubcarriers = 2;
constexpr int kItem = kAntennas * kSubcarriers;                  // complex per input item
constexpr std::size_t kChannel = kSubcarriers * kAntennas * kUsers; // entries of H
constexpr int kLlrItem = kSubcarriers * kUsers * 2;                // QPSK LLRs per item

pmt::pmt_t any_key(FuzzInput& in)
{
    switch (in.u8() % 4) {
    case 0:
    case 1:
        return pmt::intern(mimodet::kChannelTagKey);
    case 2:
        return pmt::intern(mimodet::kNoiseVarTagKey);
    default:
        return pmt::intern("rx_time");
    }
}

std::shared_ptr<gr::sync_block> any_detector(std::uint8_t choice)
{
    // CPU: the same tag handling runs on every backend (detector_block.h), and the fuzzer
    // runs where there is no GPU.
    switch (choice % 5) {
    case 0:
        return gr::mimodet::mmse_detector::make(
            kAntennas, kUsers, kSubcarriers, "qpsk", "chol", 3, "cpu", true, 0.0f, 1);
    case 1:
        return gr::mimodet::mmse_detector::make(
            kAntennas, kUsers, kSubcarriers, "qpsk", "cg", 3, "cpu", true, 0.0f, 1);
    case 2:
        return gr::mimodet::mmse_detector::make(
            kAntennas, kUsers, kSubcarriers, "qpsk", "zf", 3, "cpu", true, 0.0f, 1);
    case 3:
        return gr::mimodet::fsd_detector::make(
            kAntennas, kUsers, kSubcarriers, "qpsk", "soft", 0, 0, "cpu", true, 0.0f, 1);
    default:
        return gr::mimodet::box_detector::make(kAntennas, kUsers, kSubcarriers, "qpsk", 20,
                                               "lmmse", true, 0.0f, "cpu", true, 0.0f, 1);
    }
}

[[noreturn]] void fail(const char* what, std::size_t a, std::size_t b)
{
    std::fprintf(stderr, "fuzz_detector_tags: %s (%zu, %zu)\n", what, a, b);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const bool quiet = [] { // a bad tag logs an error each time: by design
        gr::logging::singleton().set_default_level(gr::log_level::off);
        return true;
    }();
    (void)quiet;
    FuzzInput in(data, size);
    const std::uint8_t block = in.u8();
    const int items = 1 + in.u8() % 8;
    const int max_items = 1 + in.u8() % 4;
    std::vector<gr_complex> samples(static_cast<std::size_t>(items) * kItem);
    for (auto& s : samples)
        s = { in.value(), in.value() };
    std::vector<gr::tag_t> tags;
    while (!in.empty() && tags.size() < 16) {
        gr::tag_t tag;
        tag.offset = in.u8() % items;
        tag.key = any_key(in);
        tag.value = mimodet::fuzz::any_pmt(in, kChannel);
        tags.push_back(tag);
    }

    auto det = any_detector(block);
    det->set_max_noutput_items(max_items); // tags inside and across work() calls
    auto tb = gr::make_top_block("fuzz_detector_tags");
    auto src = gr::blocks::vector_source_c::make(samples, false, kItem, tags);
    auto sink = gr::blocks::vector_sink_f::make(kLlrItem);
    tb->connect(src, 0, det, 0);
    tb->connect(det, 0, sink, 0);
    tb->run();

    // A stream must open with a channel tag: items before the first one are refused and
    // the block stops (docs/data-contract.md); after it, every item gets its LLRs.
    bool opens_with_channel = false;
    for (const auto& tag : tags)
        opens_with_channel |= tag.offset == 0 && pmt::eq(tag.key, pmt::intern(mimodet::kChannelTagKey));
    const std::vector<float>& llr = sink->data();
    const std::size_t expected = opens_with_channel ? samples.size() / kItem * kLlrItem : 0;
    if (llr.size() != expected)
        fail("LLRs of a wrong number of items", llr.size(), expected);
    for (std::size_t i = 0; i < llr.size(); ++i)
        if (!std::isfinite(llr[i]))
            fail("non-finite LLR at index", i, llr.size());
    return 0;
}
