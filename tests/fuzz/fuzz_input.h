/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The fuzz targets' reading of their bytes: a stream of choices (FuzzInput), and any PMT
 * a tag or message could carry (any_pmt). A mutation of one byte changes one choice;
 * a target's corpus keeps its meaning as long as these read the same bytes the same way.
 */

#ifndef INCLUDED_MIMODET_TESTS_FUZZ_INPUT_H
#define INCLUDED_MIMODET_TESTS_FUZZ_INPUT_H

#include <pmt/pmt.h>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace mimodet {
namespace fuzz {

//! The fuzzer's bytes as a stream of choices; past the end every read is 0.
class FuzzInput
{
public:
    FuzzInput(const std::uint8_t* data, std::size_t size) : d_data(data), d_size(size) {}
    bool empty() const { return d_pos >= d_size; }
    std::uint8_t u8() { return d_pos < d_size ? d_data[d_pos++] : 0; }
    // Each read its own statement: the order of a call's arguments or an operator's
    // operands is unspecified, and an input must mean the same under every compiler.
    std::uint16_t u16()
    {
        const unsigned low = u8();
        const unsigned high = u8();
        return static_cast<std::uint16_t>(low | (high << 8));
    }
    std::uint64_t u64()
    {
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v |= static_cast<std::uint64_t>(u8()) << (8 * i);
        return v;
    }
    //! Mostly small values, sometimes one of the values that break arithmetic.
    float value()
    {
        static const float special[] = {
            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
            -std::numeric_limits<float>::infinity(), 0.0f, -0.0f, 1e30f, -1e30f, 1e-30f,
            std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
            1e-7f, 1e7f
        };
        const std::uint8_t b = u8();
        if (b < 232)
            return (static_cast<int>(b) - 116) / 32.0f;
        return special[(b - 232) % (sizeof special / sizeof special[0])];
    }
    std::size_t length(std::size_t expected)
    {
        const std::uint8_t b = u8();
        return b < 128 ? expected : b % 24; // half the vectors have the right length
    }

private:
    const std::uint8_t* d_data;
    std::size_t d_size;
    std::size_t d_pos = 0;
};

//! Any PMT: vectors of about `expected` values (the right length half the time),
//! numbers, NaN and Inf, symbols, tuples, pairs, nil. depth bounds the nesting.
inline pmt::pmt_t any_pmt(FuzzInput& in, std::size_t expected, int depth = 0)
{
    const int type = depth > 2 ? 9 : in.u8() % 15;
    switch (type) {
    case 0:
    case 1: { // the channel's own type, the right length or not
        std::vector<std::complex<float>> v(in.length(expected));
        for (auto& x : v)
            x = { in.value(), in.value() };
        return pmt::init_c32vector(v.size(), v);
    }
    case 2: {
        std::vector<float> v(in.length(expected));
        for (auto& x : v)
            x = in.value();
        return pmt::init_f32vector(v.size(), v);
    }
    case 3: {
        std::vector<std::complex<double>> v(in.length(expected));
        for (auto& x : v)
            x = { in.value(), in.value() };
        return pmt::init_c64vector(v.size(), v);
    }
    case 4:
    case 5: { // N0 as a double: negative, NaN, Inf, huge or tiny included
        const double v = in.value();
        return pmt::from_double(v * (in.u8() % 2 ? 1e-3 : 1.0));
    }
    case 6:
        return pmt::from_long(static_cast<long>(static_cast<std::int16_t>(in.u16())));
    case 7:
        return pmt::from_uint64(in.u64());
    case 8: {
        const float re = in.value();
        const float im = in.value();
        return pmt::from_complex(re, im);
    }
    case 9:
        return pmt::PMT_NIL;
    case 10:
        return pmt::from_bool(in.u8() % 2);
    case 11:
        return pmt::intern(std::string(in.u8() % 8, 'h'));
    case 12: {
        const int n = in.u8() % 4;
        std::vector<pmt::pmt_t> items;
        for (int i = 0; i < n; ++i)
            items.push_back(any_pmt(in, expected, depth + 1));
        return n == 0 ? pmt::make_tuple()
               : n == 1 ? pmt::make_tuple(items[0])
               : n == 2 ? pmt::make_tuple(items[0], items[1])
                        : pmt::make_tuple(items[0], items[1], items[2]);
    }
    case 13: {
        const pmt::pmt_t car = any_pmt(in, expected, depth + 1);
        const pmt::pmt_t cdr = any_pmt(in, expected, depth + 1);
        return pmt::cons(car, cdr);
    }
    default: {
        std::vector<std::uint8_t> v(in.length(expected * 8));
        for (auto& x : v)
            x = in.u8();
        return pmt::init_u8vector(v.size(), v);
    }
    }
}

} // namespace fuzz
} // namespace mimodet

#endif
