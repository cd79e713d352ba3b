/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Fuzz target for the parsers behind the C++ apps' options (mimodet_bench, mimodet_rx_bench,
 * mimodet_flowgraph_bench): bench/cli_args.h's parse_integer, parse_positive and
 * check_writable, and the core's parse_modulation, parse_detector_mode and parse_precision,
 * which the blocks' string parameters go through too. Each input picks a parser, its range,
 * and the option's text (any bytes). A parser must either accept the text and return what
 * it says, or throw its documented error naming the option (UsageError for cli_args.h,
 * std::invalid_argument for the core), and nothing else:
 * - parse_integer accepts exactly [-]digits whose value lies in [low, high], and returns it;
 * - parse_positive returns a finite number > 0 that the whole text spells;
 * - the core's parsers return a value whose name parses back to itself.
 * The apps' option loops only look their names up in a fixed list; apps/test_bad_arguments.py
 * checks their messages.
 */

#include "cli_args.h"
#include <mimodet/constellation.h>
#include <mimodet/detector.h>
#include <cctype>
#include <cmath>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

using mimodet::cli::UsageError;

[[noreturn]] void fail(const std::string& what, const std::string& text)
{
    std::string shown;
    for (unsigned char c : text) {
        char hex[8];
        std::snprintf(hex, sizeof hex, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
        shown += hex;
    }
    std::fprintf(stderr, "fuzz_cli_args: %s (text \"%s\")\n", what.c_str(), shown.c_str());
    std::abort();
}

// What the message of a refusal must start with: the option's name.
void check_refusal(const std::string& message, const std::string& option,
                   const std::string& text)
{
    if (message.rfind(option + ": ", 0) != 0)
        fail("a refusal that does not start with the option: " + message, text);
}

//! text's value by hand (not through strtoll, which parse_integer uses); false past
//! long long's range.
bool value_of(const std::string& text, long long& v)
{
    const bool negative = text[0] == '-';
    unsigned long long magnitude = 0;
    const unsigned long long limit =
        negative ? 1ull + static_cast<unsigned long long>(LLONG_MAX) : LLONG_MAX;
    for (std::size_t i = negative ? 1 : 0; i < text.size(); ++i) {
        const unsigned digit = static_cast<unsigned>(text[i] - '0');
        if (magnitude > (limit - digit) / 10)
            return false;
        magnitude = magnitude * 10 + digit;
    }
    v = negative ? (magnitude == 0 ? 0 : -static_cast<long long>(magnitude - 1) - 1)
                 : static_cast<long long>(magnitude);
    return true;
}

bool decimal(const std::string& text)
{
    const std::size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
    if (text.size() == sign)
        return false;
    for (std::size_t i = sign; i < text.size(); ++i)
        if (text[i] < '0' || text[i] > '9')
            return false;
    return true;
}

void fuzz_integer(const std::uint8_t* range, const std::string& text)
{
    static const long long limits[] = { LLONG_MIN, INT_MIN, -1, 0, 1, 2, 1000, INT_MAX,
                                        LLONG_MAX };
    const long long low = limits[range[0] % 9];
    const long long high = range[1] % 2 ? INT_MAX : limits[range[2] % 9];
    try {
        const long long v = mimodet::cli::parse_integer("--reps", text, low, high);
        long long want = 0;
        if (!decimal(text) || v < low || v > high)
            fail("parse_integer accepted " + std::to_string(v) + " out of its rules", text);
        if (!value_of(text, want) || want != v)
            fail("parse_integer returned " + std::to_string(v) + ", not the text's value",
                 text);
    } catch (const UsageError& e) {
        check_refusal(e.what(), "--reps", text);
        long long v = 0; // a refusal of a decimal in range is wrong
        if (decimal(text) && value_of(text, v) && v >= low && v <= high)
            fail("parse_integer refused a decimal in range", text);
    }
}

void fuzz_positive(const std::string& text)
{
    try {
        const double v = mimodet::cli::parse_positive("--rate", text);
        char* end = nullptr;
        // (strtod itself skips leading white space, which the option must not)
        if (!std::isfinite(v) || !(v > 0) || std::strtod(text.c_str(), &end) != v ||
            end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text[0])))
            fail("parse_positive accepted " + std::to_string(v) + " out of its rules", text);
    } catch (const UsageError& e) {
        check_refusal(e.what(), "--rate", text);
    }
}

void fuzz_writable(const std::string& text)
{
    // Reads the file system only; any name, NUL bytes included.
    try {
        mimodet::cli::check_writable("--json", text);
    } catch (const UsageError& e) {
        check_refusal(e.what(), "--json", text);
    }
}

template <typename Parse, typename Name>
void fuzz_name(Parse parse, Name name, const std::string& text)
{
    try {
        const auto v = parse(text);
        if (parse(name(v)) != v)
            fail("a parsed value whose name does not parse back to it", text);
    } catch (const std::invalid_argument& e) {
        if (std::string(e.what()).find("unknown ") != 0)
            fail(std::string("a refusal that does not say what is unknown: ") + e.what(),
                 text);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // Byte 0 picks the parser; parse_integer's range takes the next 3; the rest is the text.
    std::uint8_t head[4] = { 0, 0, 0, 0 };
    for (std::size_t i = 0; i < 4 && i < size; ++i)
        head[i] = data[i];
    const int which = head[0] % 6;
    const std::size_t skip = which == 0 ? 4 : 1;
    const std::string text = size > skip ? std::string(reinterpret_cast<const char*>(data) + skip,
                                                       size - skip)
                                         : std::string();
    switch (which) {
    case 0:
        fuzz_integer(head + 1, text);
        break;
    case 1:
        fuzz_positive(text);
        break;
    case 2:
        fuzz_writable(text);
        break;
    case 3:
        fuzz_name([](const std::string& s) { return mimodet::parse_modulation(s); },
                  [](mimodet::Modulation m) { return mimodet::to_string(m); }, text);
        break;
    case 4:
        fuzz_name([](const std::string& s) { return mimodet::parse_detector_mode(s); },
                  [](mimodet::DetectorMode m) { return mimodet::to_string(m); }, text);
        break;
    default:
        fuzz_name([](const std::string& s) { return mimodet::parse_precision(s); },
                  [](mimodet::Precision p) { return mimodet::to_string(p); }, text);
        break;
    }
    return 0;
}
