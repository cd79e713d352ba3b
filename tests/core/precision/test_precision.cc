/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Narrow storage formats (lib/core/precision): rounding against every code of each format
// decoded from its bit fields, the block scale, and DetectorConfig::precision end to end
// (scale invariance, BER against float32).

#include "core/precision/precision.h"
#include <mimodet/ber_sim.h>
#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <gtest/gtest.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace mimodet;

namespace {

struct Bits {
    int exponent_bits, fraction_bits, bias;
    bool ieee_special; //!< all-ones exponent is Inf/NaN (fp16, bf16, e5m2); e4m3: only S.1111.111 is NaN
};

Bits bits_of(Precision p)
{
    switch (p) {
    case Precision::fp16:
        return { 5, 10, 15, true };
    case Precision::bf16:
        return { 8, 7, 127, true };
    case Precision::fp8_e4m3:
        return { 4, 3, 7, false };
    case Precision::fp8_e5m2:
        return { 5, 2, 15, true };
    default:
        break;
    }
    return { 8, 23, 127, true };
}

//! Every finite non-negative value of the format, in code order (increasing), decoded from
//! the exponent and fraction fields (OCP FP8 and IEEE 754 definitions).
std::vector<double> finite_values(Precision p)
{
    const Bits b = bits_of(p);
    std::vector<double> v;
    const int max_exp = (1 << b.exponent_bits) - 1, max_frac = (1 << b.fraction_bits) - 1;
    for (int e = 0; e <= max_exp; ++e)
        for (int f = 0; f <= max_frac; ++f) {
            if (b.ieee_special && e == max_exp)
                continue;
            if (!b.ieee_special && e == max_exp && f == max_frac)
                continue; // E4M3's NaN
            const double frac = static_cast<double>(f) / (1 << b.fraction_bits);
            v.push_back(e == 0 ? std::ldexp(frac, 1 - b.bias)
                               : std::ldexp(1.0 + frac, e - b.bias));
        }
    return v;
}

//! Nearest code, ties to the one with an even fraction (its index is even: codes step
//! through the fraction fastest and each binade has an even count), saturating.
double nearest(const std::vector<double>& values, double a)
{
    if (a >= values.back())
        return values.back();
    const auto hi = std::lower_bound(values.begin(), values.end(), a);
    if (*hi == a || hi == values.begin())
        return *hi;
    const auto lo = hi - 1;
    const double dl = a - *lo, dh = *hi - a;
    if (dl < dh)
        return *lo;
    if (dh < dl)
        return *hi;
    return ((lo - values.begin()) % 2 == 0) ? *lo : *hi;
}

//! 16x4 16-QAM at 15 dB, 12 subcarriers x 3 symbols: the detector-level tests' frame.
ChannelSimConfig small_sim()
{
    ChannelSimConfig s;
    s.num_antennas = 16;
    s.num_users = 4;
    s.num_subcarriers = 12;
    s.symbols_per_frame = 3;
    s.modulation = Modulation::qam16;
    s.snr_db = 15.0;
    return s;
}

const Precision kNarrow[] = { Precision::fp16, Precision::bf16, Precision::fp8_e4m3,
                              Precision::fp8_e5m2 };

} // namespace

TEST(Precision, NamesRoundTrip)
{
    for (Precision p : { Precision::fp32, Precision::fp16, Precision::bf16,
                         Precision::fp8_e4m3, Precision::fp8_e5m2 })
        EXPECT_EQ(parse_precision(to_string(p)), p);
    EXPECT_EQ(parse_precision("fp8"), Precision::fp8_e4m3);
    EXPECT_THROW(parse_precision("fp4"), std::invalid_argument);
}

TEST(Precision, RoundingIsTheNearestCodeTiesToEven)
{
    std::mt19937 rng(3);
    for (Precision p : kNarrow) {
        SCOPED_TRACE(to_string(p));
        const std::vector<double> values = finite_values(p);
        EXPECT_EQ(precision::format_of(p).max, static_cast<float>(values.back()));
        // Random magnitudes over the whole range, subnormals and saturation included.
        const double lo = std::log2(values[1]) - 2, hi = std::log2(values.back()) + 1;
        std::uniform_real_distribution<double> log2v(lo, hi);
        for (int i = 0; i < 20000; ++i) {
            const float v = static_cast<float>(std::exp2(log2v(rng)));
            ASSERT_EQ(precision::round_to(p, v), static_cast<float>(nearest(values, v))) << v;
            ASSERT_EQ(precision::round_to(p, -v), -static_cast<float>(nearest(values, v))) << v;
        }
        // Exact midpoints between neighbouring codes (where float32 holds them).
        const std::size_t step = std::max<std::size_t>(1, values.size() / 3000);
        for (std::size_t k = 0; k + 1 < values.size(); k += step) {
            const double mid = 0.5 * (values[k] + values[k + 1]);
            if (static_cast<double>(static_cast<float>(mid)) != mid)
                continue;
            ASSERT_EQ(precision::round_to(p, static_cast<float>(mid)),
                      static_cast<float>(nearest(values, mid)))
                << mid;
        }
    }
    // Spot values: binary16's largest, ties to even, E4M3's 448 and its saturation.
    EXPECT_EQ(precision::round_to(Precision::fp16, 65519.0f), 65504.0f);
    EXPECT_EQ(precision::round_to(Precision::fp16, 1.0f + 0x1p-11f), 1.0f);
    EXPECT_EQ(precision::round_to(Precision::fp16, 1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
    EXPECT_EQ(precision::round_to(Precision::bf16, 1.0f + 0x1p-8f), 1.0f);
    EXPECT_EQ(precision::round_to(Precision::fp8_e4m3, 1e6f), 448.0f);
    EXPECT_EQ(precision::round_to(Precision::fp8_e4m3, 0x1p-9f), 0x1p-9f); // smallest subnormal
    EXPECT_EQ(precision::round_to(Precision::fp8_e5m2, INFINITY), 57344.0f);
    EXPECT_TRUE(std::isnan(precision::round_to(Precision::fp16, NAN)));
    EXPECT_EQ(precision::round_to(Precision::fp32, 1.2345678f), 1.2345678f);
}

TEST(Precision, BlockScaleFillsTheRangeAndKeepsHugeAndTinyInputsFinite)
{
    for (Precision p : kNarrow) {
        SCOPED_TRACE(to_string(p));
        const float max = precision::format_of(p).max;
        for (float m : { 1e-30f, 3e-7f, 1.0f, 777.0f, 1e30f }) {
            const float s = precision::block_scale(p, m);
            EXPECT_EQ(std::exp2(std::round(std::log2(s))), s); // a power of two
            if (p == Precision::bf16) {
                EXPECT_EQ(s, 1.0f); // float32's range: nothing to move
            } else if (m * s <= max) {
                EXPECT_GT(static_cast<double>(m) * s, max / 2.0) << m;
            }
        }
        EXPECT_EQ(precision::block_scale(p, 0.0f), 1.0f);
        // A block of power 1e30 and one of 1e-30: finite, within the format's relative
        // step of every component at least 2^-12 of the largest (E4M3: 2^-4 relative).
        const int m_bits = precision::format_of(p).mantissa_bits;
        for (float power : { 1e30f, 1e-30f, 1.0f }) {
            std::mt19937 rng(5);
            std::normal_distribution<float> g(0.0f, power);
            std::vector<cf32> in(4096), out(4096);
            for (auto& v : in)
                v = cf32(g(rng), g(rng));
            in[7] = cf32(NAN, in[7].imag()); // passes through, and does not set the scale
            precision::quantize_block(p, in.data(), in.size(), out.data());
            float largest = 0.0f;
            for (std::size_t i = 0; i < in.size(); ++i)
                if (i != 7)
                    largest = std::max({ largest, std::abs(in[i].real()), std::abs(in[i].imag()) });
            EXPECT_TRUE(std::isnan(out[7].real()));
            for (std::size_t i = 0; i < in.size(); ++i) {
                if (i == 7)
                    continue;
                for (int part = 0; part < 2; ++part) {
                    const float a = part ? in[i].imag() : in[i].real();
                    const float b = part ? out[i].imag() : out[i].real();
                    ASSERT_TRUE(std::isfinite(b)) << power;
                    if (std::abs(a) >= largest * 0x1p-12f) {
                        ASSERT_LE(std::abs(b - a), std::ldexp(std::abs(a), -m_bits))
                            << power << " " << a << " " << b;
                    }
                }
            }
        }
    }
}

// A detector's output does not depend on the inputs' level: with every block scaled by a
// power of two, the rounded values scale with it, and so does everything after them.
TEST(Precision, DetectionDoesNotDependOnTheInputLevel)
{
    const ChannelSimConfig sim = small_sim();
    Frame f;
    ChannelSimulator(sim).next_frame(f);
    for (Precision p : kNarrow)
        for (DetectorMode mode : { DetectorMode::chol, DetectorMode::box, DetectorMode::sfsd }) {
            SCOPED_TRACE(to_string(p) + " " + to_string(mode));
            DetectorConfig cfg = detector_config_for(sim, mode);
            cfg.precision = p;
            auto det = make_detector(cfg);
            EXPECT_EQ(det->name(), "cpu-" + to_string(mode) + "-" + to_string(p));
            const std::size_t n = sim.symbols_per_frame;
            std::vector<float> nominal(n * cfg.dims().llr_items());
            det->set_channel(f.h.data(), f.n0);
            det->detect(f.y.data(), n, nominal.data());
            for (int shift : { 40, -40 }) {
                const float k = std::ldexp(1.0f, shift);
                std::vector<cf32> h = f.h, y = f.y;
                for (auto& v : h)
                    v *= k;
                for (auto& v : y)
                    v *= k;
                std::vector<float> got(nominal.size());
                det->set_channel(h.data(), f.n0 * k * k);
                det->detect(y.data(), n, got.data());
                for (std::size_t i = 0; i < got.size(); ++i)
                    ASSERT_NEAR(got[i], nominal[i], 1e-4f * std::max(1.0f, std::abs(nominal[i])))
                        << "scaled by 2^" << shift << " at " << i;
            }
        }
}

// The codes of narrow input (mimodet/precision.h): every code of each format decodes to
// the value of its bit fields (finite_values, written apart from the library) and encodes
// back to itself.
TEST(Precision, EveryCodeDecodesToItsBitFieldsAndBack)
{
    for (Precision p : kNarrow) {
        SCOPED_TRACE(to_string(p));
        const int width = static_cast<int>(8 * precision::code_bytes(p));
        const std::vector<double> values = finite_values(p);
        std::size_t finite = 0;
        for (std::uint32_t code = 0; code < (1u << width); ++code) {
            const float v = precision::decode_value(p, code);
            if (std::isnan(v))
                continue;
            if (std::isinf(v)) {
                EXPECT_NE(p, Precision::fp8_e4m3);
                EXPECT_EQ(precision::encode_value(p, v), code);
                continue;
            }
            const double a = std::fabs(static_cast<double>(v));
            // code order is value order within a sign
            const std::uint32_t magnitude = code & ((1u << (width - 1)) - 1);
            ASSERT_LT(magnitude, values.size()) << code;
            ASSERT_EQ(a, values[magnitude]) << code;
            ASSERT_EQ(std::signbit(v), (code >> (width - 1)) != 0) << code;
            ASSERT_EQ(precision::encode_value(p, v), code) << code;
            ++finite;
        }
        EXPECT_EQ(finite, 2 * values.size());
        EXPECT_TRUE(std::isnan(precision::decode_value(
            p, precision::encode_value(p, std::numeric_limits<float>::quiet_NaN()))));
    }
}

// encode_block's codes and scale decode to quantize_block's values bit for bit, over
// block powers of 1e-30 to 1e30, with NaN and infinity inside the blocks.
TEST(Precision, EncodedBlocksDecodeToTheEmulatedValues)
{
    std::mt19937 rng(5);
    std::normal_distribution<float> g(0.0f, 1.0f);
    const float inf = std::numeric_limits<float>::infinity();
    for (Precision p : { Precision::fp32, Precision::fp16, Precision::bf16,
                         Precision::fp8_e4m3, Precision::fp8_e5m2 })
        for (float level : { 1e-30f, 1e-7f, 1.0f, 3e4f, 1e30f }) {
            SCOPED_TRACE(to_string(p) + " level " + std::to_string(level));
            std::vector<cf32> in(257);
            for (auto& v : in)
                v = cf32(g(rng), g(rng)) * level;
            in[3] = cf32(std::numeric_limits<float>::quiet_NaN(), 1.0f);
            in[7] = cf32(0.5f, -inf);
            in[9] = cf32(0.0f, -0.0f);
            std::vector<unsigned char> codes(2 * in.size() * precision::code_bytes(p));
            const float scale = precision::encode_block(p, in.data(), in.size(), codes.data());
            std::vector<cf32> decoded(in.size()), emulated(in.size());
            precision::decode_block(p, codes.data(), in.size(), scale, decoded.data());
            precision::quantize_block(p, in.data(), in.size(), emulated.data());
            for (std::size_t i = 0; i < in.size(); ++i)
                for (int part = 0; part < 2; ++part) {
                    const float d = part ? decoded[i].imag() : decoded[i].real();
                    const float e = part ? emulated[i].imag() : emulated[i].real();
                    if (std::isnan(e) || (std::isinf(e) && p == Precision::fp8_e4m3)) {
                        ASSERT_TRUE(std::isnan(d)) << i; // E4M3 has no infinity
                        continue;
                    }
                    ASSERT_EQ(std::memcmp(&d, &e, sizeof d), 0) << i << " " << d << " " << e;
                }
        }
}

// Detector::set_channel_encoded / detect_encoded give set_channel / detect's LLRs on the
// decoded values, bit for bit (the CPU's default path and the emulating wrapper).
TEST(Precision, EncodedInputDetectsAsTheEmulation)
{
    const ChannelSimConfig sim = small_sim();
    Frame f;
    ChannelSimulator(sim).next_frame(f);
    for (Precision p : kNarrow)
        for (DetectorMode mode : { DetectorMode::chol, DetectorMode::box, DetectorMode::sfsd }) {
            SCOPED_TRACE(to_string(p) + " " + to_string(mode));
            DetectorConfig cfg = detector_config_for(sim, mode);
            cfg.precision = p;
            auto det = make_detector(cfg);
            const Dims d = cfg.dims();
            const std::size_t n = sim.symbols_per_frame, cb = precision::code_bytes(p);
            std::vector<float> want(n * d.llr_items()), got(want.size());
            det->set_channel(f.h.data(), f.n0);
            det->detect(f.y.data(), n, want.data());
            std::vector<unsigned char> h_codes(2 * d.channel_items() * cb),
                y_codes(2 * n * d.rx_items() * cb);
            std::vector<float> y_scales(n);
            const float h_scale =
                precision::encode_block(p, f.h.data(), d.channel_items(), h_codes.data());
            for (std::size_t s = 0; s < n; ++s)
                y_scales[s] = precision::encode_block(p,
                                                      f.y.data() + s * d.rx_items(),
                                                      d.rx_items(),
                                                      y_codes.data() + 2 * s * d.rx_items() * cb);
            det->set_channel_encoded(h_codes.data(), h_scale, f.n0);
            det->detect_encoded(y_codes.data(), y_scales.data(), n, got.data());
            ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
        }
}

// Detector::detect_int8 (the CPU's default): the float LLRs rounded; a scale that is not
// positive and finite is refused before anything is detected.
TEST(Precision, DetectInt8RoundsTheFloatLlrs)
{
    const ChannelSimConfig sim = small_sim();
    Frame f;
    ChannelSimulator(sim).next_frame(f);
    auto det = make_detector(detector_config_for(sim, DetectorMode::chol));
    det->set_channel(f.h.data(), f.n0);
    const std::size_t n = sim.symbols_per_frame;
    std::vector<float> llr(n * det->config().dims().llr_items());
    det->detect(f.y.data(), n, llr.data());
    std::vector<std::int8_t> want(llr.size()), got(llr.size());
    precision::llrs_to_int8(llr.data(), llr.size(), 8.0f, want.data());
    det->detect_int8(f.y.data(), n, got.data(), 8.0f);
    EXPECT_EQ(got, want);
    EXPECT_THROW(det->detect_int8(f.y.data(), n, got.data(), -1.0f), std::invalid_argument);
    EXPECT_THROW(det->detect_int8(f.y.data(), n, got.data(), INFINITY), std::invalid_argument);
    EXPECT_EQ(det->stats().symbols, 2 * n);
}

TEST(Precision, Int8LlrsRoundTiesToEvenAndSaturate)
{
    const std::vector<float> llr{ 0.0f, 0.0624f, 0.0625f, 0.1875f, -0.0625f, -1.3f,
                                  15.87f, 16.0f, -1e30f, INFINITY, NAN, 3.99f };
    std::vector<std::int8_t> q(llr.size());
    precision::llrs_to_int8(llr.data(), llr.size(), 8.0f, q.data());
    // 0.0625 * 8 = 0.5 -> 0 (even), 0.1875 * 8 = 1.5 -> 2 (even), 15.87 * 8 = 126.96 -> 127
    EXPECT_EQ(q, (std::vector<std::int8_t>{ 0, 0, 0, 2, 0, -10, 127, 127, -127, 127, 0, 32 }));
}

TEST(Precision, Fp16LlrsRoundToNearestEvenAndSaturate)
{
    const std::vector<float> llr{ 0.0f,     1.0f,   -2.5f,   0.1f,     65504.0f,
                                  65519.0f, 1e6f,   -INFINITY, NAN,    3e-8f,
                                  1e-8f,    -0.0f,  2049.0f, 2051.0f };
    std::vector<std::uint16_t> q(llr.size());
    precision::llrs_to_fp16(llr.data(), llr.size(), q.data());
    // 0.1 -> 0x2e66 (0.0999756); 65519 rounds down to 65504; 3e-8 -> 2^-24, the smallest
    // subnormal; 1e-8 -> 0; 2049 and 2051 are ties between steps of 2 -> even (2048, 2052)
    EXPECT_EQ(q,
              (std::vector<std::uint16_t>{ 0x0000, 0x3c00, 0xc100, 0x2e66, 0x7bff, 0x7bff,
                                           0x7bff, 0xfbff, 0x0000, 0x0001, 0x0000, 0x8000,
                                           0x6800, 0x6802 }));
    for (std::size_t i = 0; i < llr.size(); ++i)
        if (std::isfinite(llr[i]) && std::abs(llr[i]) <= 65504.0f)
            EXPECT_NEAR(precision::decode_value(Precision::fp16, q[i]),
                        llr[i],
                        std::abs(llr[i]) / 2048 + 3e-8f)
                << llr[i];
}

// Detector::detect_fp16 (the CPU's default): the float LLRs as binary16 codes.
TEST(Precision, DetectFp16RoundsTheFloatLlrs)
{
    const ChannelSimConfig sim = small_sim();
    Frame f;
    ChannelSimulator(sim).next_frame(f);
    auto det = make_detector(detector_config_for(sim, DetectorMode::chol));
    det->set_channel(f.h.data(), f.n0);
    const std::size_t n = sim.symbols_per_frame;
    std::vector<float> llr(n * det->config().dims().llr_items());
    det->detect(f.y.data(), n, llr.data());
    std::vector<std::uint16_t> want(llr.size()), got(llr.size());
    precision::llrs_to_fp16(llr.data(), llr.size(), want.data());
    det->detect_fp16(f.y.data(), n, got.data());
    EXPECT_EQ(got, want);
    EXPECT_EQ(det->stats().symbols, 2 * n);
}

// Detector::submit_llrs by default: submit() for float32, detect_int8 / detect_fp16
// (done at once: false) for the narrow formats.
TEST(Precision, SubmitLlrsOnTheCpuIsDetectNow)
{
    const ChannelSimConfig sim = small_sim();
    Frame f;
    ChannelSimulator(sim).next_frame(f);
    auto det = make_detector(detector_config_for(sim, DetectorMode::chol));
    det->set_channel(f.h.data(), f.n0);
    const std::size_t n = sim.symbols_per_frame;
    std::vector<float> llr(n * det->config().dims().llr_items()), got(llr.size());
    det->detect(f.y.data(), n, llr.data());
    EXPECT_FALSE(det->submit_llrs(f.y.data(), n, got.data(), LlrFormat::float32));
    EXPECT_EQ(got, llr);
    std::vector<std::int8_t> want8(llr.size()), got8(llr.size());
    precision::llrs_to_int8(llr.data(), llr.size(), 3.0f, want8.data());
    EXPECT_FALSE(det->submit_llrs(f.y.data(), n, got8.data(), LlrFormat::int8, 3.0f));
    EXPECT_EQ(got8, want8);
    std::vector<std::uint16_t> want16(llr.size()), got16(llr.size());
    precision::llrs_to_fp16(llr.data(), llr.size(), want16.data());
    EXPECT_FALSE(det->submit_llrs(f.y.data(), n, got16.data(), LlrFormat::fp16));
    EXPECT_EQ(got16, want16);
    EXPECT_THROW(det->submit_llrs(f.y.data(), n, got8.data(), LlrFormat::int8, -1.0f),
                 std::invalid_argument);
}

TEST(Precision, LlrFormatNames)
{
    for (auto f : { LlrFormat::float32, LlrFormat::fp16, LlrFormat::int8 })
        EXPECT_EQ(parse_llr_format(to_string(f)), f);
    EXPECT_EQ(parse_llr_format("float"), LlrFormat::float32);
    EXPECT_EQ(parse_llr_format("byte"), LlrFormat::int8);
    EXPECT_EQ(llr_bytes(LlrFormat::fp16), 2u);
    EXPECT_THROW(parse_llr_format("int4"), std::invalid_argument);
}

namespace {

//! BER at each SNR for one precision, on the same frames (same seed) as every other.
std::vector<double> ber_curve(std::size_t b, std::size_t u, Modulation m, Precision p,
                              const std::vector<double>& snrs, std::uint64_t frames)
{
    std::vector<double> ber;
    for (double snr : snrs) {
        ChannelSimConfig sim;
        sim.num_antennas = b;
        sim.num_users = u;
        sim.num_subcarriers = 64;
        sim.symbols_per_frame = 14;
        sim.modulation = m;
        sim.snr_db = snr;
        sim.seed = 77;
        DetectorConfig cfg = detector_config_for(sim, DetectorMode::chol);
        cfg.precision = p;
        ber.push_back(simulate_ber_point(sim, cfg, frames).ber());
    }
    return ber;
}

double snr_at(const std::vector<double>& snr, const std::vector<double>& ber, double target)
{
    for (std::size_t i = 0; i + 1 < snr.size(); ++i)
        if (ber[i] >= target && ber[i + 1] < target) {
            const double lo = std::log10(ber[i]), hi = std::log10(std::max(ber[i + 1], 1e-12));
            return snr[i] + (std::log10(target) - lo) / (hi - lo) * (snr[i + 1] - snr[i]);
        }
    return NAN;
}

} // namespace

// Issue 23: binary16 and bfloat16 storage cost at most 0.2 dB at BER 1e-3 against float32
// on 128x8 and 64x16 16-QAM exact MMSE (PULPO Fig. 2(a): no visible loss), and on 16x2;
// FP8's loss is measured and bounded here, stated in docs/precision.md (PULPO: about 1 dB
// on 16x2).
TEST(Precision, SixteenBitStorageCostsAtMostAFifthOfADecibel)
{
    struct System {
        std::size_t b, u;
        std::vector<double> snr;
    };
    for (const System& s : { System{ 128, 8, { 3, 4, 5, 6, 7 } },
                             System{ 64, 16, { 10, 11, 12, 13, 14 } },
                             System{ 16, 2, { 6, 7, 8, 9, 10, 11 } } }) {
        const std::string what = std::to_string(s.b) + "x" + std::to_string(s.u);
        SCOPED_TRACE(what);
        const auto ref = ber_curve(s.b, s.u, Modulation::qam16, Precision::fp32, s.snr, 3);
        const double at = snr_at(s.snr, ref, 1e-3);
        ASSERT_TRUE(std::isfinite(at)) << ref[0] << " .. " << ref.back();
        for (Precision p : kNarrow) {
            const auto curve = ber_curve(s.b, s.u, Modulation::qam16, p, s.snr, 3);
            const double loss = snr_at(s.snr, curve, 1e-3) - at;
            RecordProperty(what + "_" + to_string(p) + "_loss_db", std::to_string(loss));
            if (p == Precision::fp16 || p == Precision::bf16)
                EXPECT_LE(loss, 0.2) << to_string(p);
            else
                EXPECT_LE(loss, 3.0) << to_string(p); // stated, not a target
        }
    }
}
