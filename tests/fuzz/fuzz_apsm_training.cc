/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Fuzz target: the apsm_receiver's training input from outside, in a real flowgraph.
 * Training tags ('apsm_train' and other keys) of every PMT type and length at any item,
 * messages of every PMT type on port "train" (c32vectors of any length, PDUs, pairs,
 * numbers), retrain() calls, any period and offset, and received samples that may be NaN,
 * Inf or near float's range, split over work() calls of 1 to 4 items. Whatever comes, the
 * block must neither crash nor stall, must give one symbol item and one LLR item per
 * input item, and every symbol and LLR must be finite (a refused training is logged and
 * counted; docs/data-contract.md). Built as fuzz_detector_tags is (tests/fuzz/README.md).
 */

#include "fuzz_input.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/logger.h>
#include <gnuradio/mimodet/apsm_receiver.h>
#include <gnuradio/top_block.h>
#include <pmt/pmt.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using mimodet::fuzz::any_pmt;
using mimodet::fuzz::FuzzInput;

constexpr int kAntennas = 2, kUsers = 2, kBits = 2; // QPSK
constexpr int kTraining = 3;                           // T vectors of a section
constexpr int kSymbols = kTraining * kUsers;

[[noreturn]] void fail(const char* what, std::size_t a, std::size_t b)
{
    std::fprintf(stderr, "fuzz_apsm_training: %s (%zu, %zu)\n", what, a, b);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const bool quiet = [] { // a refused tag or message logs an error: by design
        gr::logging::singleton().set_default_level(gr::log_level::off);
        return true;
    }();
    (void)quiet;
    FuzzInput in(data, size);
    static const int periods[] = { -1, 0, 3, 4, 7 };
    const int period = periods[in.u8() % 5];
    const int offset = in.u8() % 4;
    const int items = 1 + in.u8() % 24;
    const int max_items = 1 + in.u8() % 4;
    const bool retrain = in.u8() % 4 == 0;
    std::vector<gr_complex> training(kSymbols);
    for (auto& s : training) // the symbols given at make() must be finite: refused else
        s = { in.u8() % 2 ? 0.7071f : -0.7071f, in.u8() % 2 ? 0.7071f : -0.7071f };
    std::vector<gr_complex> samples(static_cast<std::size_t>(items) * kAntennas);
    for (auto& s : samples)
        s = { in.value(), in.value() };
    const int messages = in.u8() % 4;
    std::vector<pmt::pmt_t> train_messages;
    for (int m = 0; m < messages; ++m)
        train_messages.push_back(any_pmt(in, kSymbols));
    std::vector<gr::tag_t> tags;
    while (!in.empty() && tags.size() < 16) {
        gr::tag_t tag;
        tag.offset = in.u8() % items;
        tag.key = pmt::intern(in.u8() % 4 ? "apsm_train" : "rx_time");
        tag.value = any_pmt(in, kSymbols);
        tags.push_back(tag);
    }

    auto rx = gr::mimodet::apsm_receiver::make(kAntennas, kUsers, "qpsk", training, period,
                                               "apsm_train", "cpu", 2, 0.5, 0.5, 0.005,
                                               0.01, true, 0.0f, 0, offset, 8);
    rx->set_max_noutput_items(max_items); // sections across work() calls
    for (const auto& msg : train_messages)
        rx->_post(pmt::mp("train"), msg); // handled before the first work() call
    if (retrain)
        rx->retrain();
    auto tb = gr::make_top_block("fuzz_apsm_training");
    auto src = gr::blocks::vector_source_c::make(samples, false, kAntennas, tags);
    auto symbols = gr::blocks::vector_sink_c::make(kUsers);
    auto llrs = gr::blocks::vector_sink_f::make(kUsers * kBits);
    tb->connect(src, 0, rx, 0);
    tb->connect(rx, 0, symbols, 0);
    tb->connect(rx, 1, llrs, 0);
    tb->run();

    const std::size_t n = static_cast<std::size_t>(items);
    if (symbols->data().size() != n * kUsers)
        fail("symbols of a wrong number of items", symbols->data().size(), n * kUsers);
    if (llrs->data().size() != n * kUsers * kBits)
        fail("LLRs of a wrong number of items", llrs->data().size(), n * kUsers * kBits);
    for (std::size_t i = 0; i < symbols->data().size(); ++i)
        if (!std::isfinite(symbols->data()[i].real()) ||
            !std::isfinite(symbols->data()[i].imag()))
            fail("non-finite symbol at index", i, symbols->data().size());
    for (std::size_t i = 0; i < llrs->data().size(); ++i)
        if (!std::isfinite(llrs->data()[i]))
            fail("non-finite LLR at index", i, llrs->data().size());
    return 0;
}
