/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* UplinkDetector: the receive chain and a detector in one, against the CPU receiver and
 * detector used by hand; fed whole or in pieces as a GNU Radio block feeds it; the GPU
 * implementation (skipped without a GPU) against the CPU one. */

#include "ofdm_stream.h"
#include <gtest/gtest.h>
#include <mimodet/detector.h>
#include <mimodet/precision.h>
#include <mimodet/uplink_detector.h>
#include <mimodet/signal_quality.h>
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>

using namespace mimodet;
using test::cpu_walk;
using test::make_stream;
using test::Stream;

namespace {

OfdmConfig layout()
{
    OfdmConfig o;
    o.fft_size = 128;
    o.cp_length = 16;
    o.num_subcarriers = 96;
    o.num_data_symbols = 5;
    o.num_users = 3;
    o.num_antennas = 6;
    o.modulation = Modulation::qam16;
    return o;
}

DetectorConfig detector_config(Backend backend, DetectorMode mode = DetectorMode::chol)
{
    DetectorConfig d;
    d.backend = backend;
    d.mode = mode;
    return d;
}

std::size_t llr_per_frame(const OfdmConfig& o)
{
    return o.num_data_symbols * o.dims().llr_items();
}

struct Detected {
    std::vector<DetectedFrame> frames;
    std::vector<float> llr;
};

//! The whole stream in one call.
Detected
whole(UplinkDetector& det, const Stream& s, std::size_t max_frames, std::size_t& next)
{
    Detected r;
    r.llr.assign(max_frames * llr_per_frame(det.ofdm()), std::nanf(""));
    std::vector<const cf32*> at;
    for (const auto& a : s.rx)
        at.push_back(a.data());
    r.frames = det.process(at, s.rx[0].size(), r.llr.data(), max_frames, next);
    r.llr.resize(r.frames.size() * llr_per_frame(det.ofdm()));
    return r;
}

/*! As a GNU Radio block sees it: `chunk` more samples arrive before each call, the call
 * sees what was not consumed, and consumes up to `next`. */
Detected in_pieces(UplinkDetector& det, const Stream& s, std::size_t chunk)
{
    const std::size_t total = s.rx[0].size(), per = llr_per_frame(det.ofdm());
    Detected r;
    std::size_t consumed = 0, arrived = 0;
    std::vector<float> llr(8 * per);
    while (arrived < total) {
        arrived = std::min(total, arrived + chunk);
        std::vector<const cf32*> at;
        for (const auto& a : s.rx)
            at.push_back(a.data() + consumed);
        std::size_t next = 0;
        const auto frames = det.process(at, arrived - consumed, llr.data(), 8, next);
        for (std::size_t f = 0; f < frames.size(); ++f) {
            r.frames.push_back(frames[f]);
            r.frames.back().start += consumed;
            r.llr.insert(r.llr.end(), llr.begin() + f * per, llr.begin() + (f + 1) * per);
        }
        EXPECT_LE(next, arrived - consumed);
        consumed += next;
    }
    return r;
}

void expect_same_frames(const Detected& got,
                        const Detected& want,
                        const std::string& what)
{
    ASSERT_EQ(got.frames.size(), want.frames.size()) << what;
    for (std::size_t f = 0; f < want.frames.size(); ++f) {
        EXPECT_EQ(got.frames[f].start, want.frames[f].start) << what << ", frame " << f;
        EXPECT_NEAR(got.frames[f].cfo, want.frames[f].cfo, 1e-4) << what;
        EXPECT_NEAR(got.frames[f].n0, want.frames[f].n0, 1e-3 * want.frames[f].n0)
            << what;
    }
}

//! LLRs within float rounding (another summation order), every one written.
void expect_llrs_close(const Detected& got,
                       const Detected& want,
                       double tol,
                       const std::string& what)
{
    ASSERT_EQ(got.llr.size(), want.llr.size()) << what;
    double worst = 0;
    std::size_t disagree = 0;
    for (std::size_t i = 0; i < want.llr.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got.llr[i])) << what << ": LLR " << i << " not written";
        worst = std::max(worst,
                         std::abs(double(got.llr[i]) - want.llr[i]) /
                             std::max(1.0, std::abs(double(want.llr[i]))));
        disagree +=
            std::abs(want.llr[i]) > 1e-2f && (got.llr[i] > 0) != (want.llr[i] > 0);
    }
    EXPECT_LE(worst, tol) << what;
    EXPECT_EQ(disagree, 0u) << what;
}

} // namespace

TEST(UplinkDetector, CpuIsTheReceiverThenTheDetector)
{
    const OfdmConfig o = layout();
    const Stream s = make_stream(o, 24.0, 0.15, 4, 3);
    auto det = make_uplink_detector(o, detector_config(Backend::cpu));
    EXPECT_EQ(det->name(), "cpu-chol");
    std::size_t next = 0;
    const Detected got = whole(*det, s, 8, next);
    const auto want = cpu_walk(o, s.rx);
    ASSERT_EQ(got.frames.size(), want.size());
    DetectorConfig d = det->detector();
    auto detector = make_detector(d);
    std::vector<float> llr(llr_per_frame(o));
    for (std::size_t f = 0; f < want.size(); ++f) {
        EXPECT_EQ(got.frames[f].start, want[f].frame_start);
        EXPECT_EQ(got.frames[f].cfo, want[f].cfo);
        EXPECT_EQ(got.frames[f].n0, want[f].n0);
        detector->set_channel(want[f].h.data(), want[f].n0);
        detector->detect(want[f].y.data(), o.num_data_symbols, llr.data());
        for (std::size_t i = 0; i < llr.size(); ++i)
            ASSERT_EQ(got.llr[f * llr.size() + i], llr[i])
                << "frame " << f << " LLR " << i;
    }
    // Searched to the end: resume after the last frame, and no earlier than the first
    // position whose frame would not have fitted.
    EXPECT_EQ(next,
              std::max(want.back().next_start, s.rx[0].size() - o.frame_samples() + 1));
}

TEST(UplinkDetector, PiecesGiveTheFramesOfTheWhole)
{
    const OfdmConfig o = layout();
    const Stream s = make_stream(o, 24.0, -0.1, 5, 13);
    auto det = make_uplink_detector(o, detector_config(Backend::cpu));
    std::size_t next = 0;
    const Detected all = whole(*det, s, 8, next);
    ASSERT_EQ(all.frames.size(), 5u);
    // Chunks from a fifth of a frame to a few frames: every call boundary falls somewhere
    // else in the frames (a search cut short must not take a frame at the wrong time).
    for (std::size_t chunk = 150; chunk < 3000; chunk += 37) {
        const Detected pieces = in_pieces(*det, s, chunk);
        expect_same_frames(pieces, all, "chunks of " + std::to_string(chunk));
        expect_llrs_close(pieces, all, 0.0, "chunks of " + std::to_string(chunk));
        if (HasFailure())
            return;
    }
}

TEST(UplinkDetector, BackToBackFramesAndAStartInsideAFrame)
{
    const OfdmConfig o = layout();
    Stream s = make_stream(o, 24.0, 0.1, 6, 43, -1); // no noise between the frames
    auto det = make_uplink_detector(o, detector_config(Backend::cpu));
    std::size_t next = 0;
    const Detected all = whole(*det, s, 8, next);
    ASSERT_EQ(all.frames.size(), 6u);
    for (std::size_t f = 0; f < 6; ++f)
        EXPECT_LE(std::abs(long(all.frames[f].start) - long(s.starts[f])),
                  long(o.cp_length));
    for (std::size_t chunk : { 333ul, 1000ul, 2500ul })
        expect_same_frames(in_pieces(*det, s, chunk), all, "back to back, in pieces");
    // The samples start in frame 0's cyclic prefix: frame 0 is not whole, the rest is
    // found.
    const std::size_t cut = s.starts[0] + o.cp_length / 2;
    for (auto& a : s.rx)
        a.erase(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(cut));
    const Detected rest = whole(*det, s, 8, next);
    ASSERT_EQ(rest.frames.size(), 5u);
    for (std::size_t f = 0; f < 5; ++f)
        EXPECT_EQ(rest.frames[f].start + cut, all.frames[f + 1].start);
}

TEST(UplinkDetector, StopsAtMaxFramesAndResumesAfterTheLastOne)
{
    const OfdmConfig o = layout();
    const Stream s = make_stream(o, 24.0, 0.05, 4, 23);
    auto det = make_uplink_detector(o, detector_config(Backend::cpu));
    std::size_t next = 0;
    const Detected two = whole(*det, s, 2, next);
    ASSERT_EQ(two.frames.size(), 2u);
    EXPECT_EQ(next, cpu_walk(o, s.rx)[1].next_start); // the search for the third frame
    // Too few samples for a frame: nothing found, nothing consumed.
    std::vector<const cf32*> at;
    for (const auto& a : s.rx)
        at.push_back(a.data());
    std::vector<float> llr(llr_per_frame(o));
    EXPECT_TRUE(det->process(at, o.frame_samples() - 1, llr.data(), 1, next).empty());
    EXPECT_EQ(next, 0u);
    at.pop_back();
    EXPECT_THROW(det->process(at, s.rx[0].size(), llr.data(), 1, next),
                 std::invalid_argument);
}

TEST(UplinkDetector, BackendsFallBackOrFailClearly)
{
    const OfdmConfig o = layout();
    std::string why;
    if (gpu_available(&why)) {
        EXPECT_EQ(make_uplink_detector(o, detector_config(Backend::automatic))->name(),
                  "cuda-chol");
        return;
    }
    std::string reason;
    auto det = make_uplink_detector(o, detector_config(Backend::automatic), &reason);
    EXPECT_EQ(det->name(), "cpu-chol");
    EXPECT_FALSE(reason.empty());
    EXPECT_THROW(make_uplink_detector(o, detector_config(Backend::cuda)),
                 std::runtime_error);
    DetectorConfig bad = detector_config(Backend::cpu, DetectorMode::cg);
    bad.iterations = 0;
    EXPECT_THROW(make_uplink_detector(o, bad), std::invalid_argument);
}

TEST(UplinkDetector, GpuMatchesTheCpuWholeAndInPieces)
{
    std::string why;
    if (!gpu_available(&why))
        GTEST_SKIP() << why;
    const OfdmConfig o = layout();
    const Stream s = make_stream(o, 24.0, 0.2, 5, 33);
    for (auto mode : { DetectorMode::chol, DetectorMode::cg, DetectorMode::box }) {
        auto cpu = make_uplink_detector(o, detector_config(Backend::cpu, mode));
        auto gpu = make_uplink_detector(o, detector_config(Backend::cuda, mode));
        EXPECT_EQ(gpu->name(), "cuda-" + to_string(mode));
        std::size_t cpu_next = 0, gpu_next = 0;
        const Detected want = whole(*cpu, s, 8, cpu_next);
        const Detected got = whole(*gpu, s, 8, gpu_next);
        expect_same_frames(got, want, "GPU " + to_string(mode));
        // The two chains' h and y differ by float rounding (tests/cuda/ofdm/test_ofdm_chain.cc
        // bounds them at 1e-4); the detectors' own bound is 2e-3.
        expect_llrs_close(got, want, 2e-3, "GPU " + to_string(mode));
        EXPECT_EQ(gpu_next, cpu_next);
        for (std::size_t chunk = 150; chunk < 3000; chunk += 173) {
            const Detected pieces = in_pieces(*gpu, s, chunk);
            expect_same_frames(pieces, want, "GPU in chunks of " + std::to_string(chunk));
            expect_llrs_close(pieces, want, 2e-3, "GPU in chunks");
        }
    }
    // Back to back, and from inside a frame's cyclic prefix.
    Stream b2b = make_stream(o, 24.0, -0.1, 6, 53, -1);
    auto cpu = make_uplink_detector(o, detector_config(Backend::cpu));
    auto gpu = make_uplink_detector(o, detector_config(Backend::cuda));
    std::size_t next = 0;
    expect_same_frames(
        whole(*gpu, b2b, 8, next), whole(*cpu, b2b, 8, next), "back to back");
    const std::size_t cut = b2b.starts[0] + o.cp_length / 2;
    for (auto& a : b2b.rx)
        a.erase(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(cut));
    const Detected rest = whole(*cpu, b2b, 8, next);
    EXPECT_EQ(rest.frames.size(), 5u);
    expect_same_frames(whole(*gpu, b2b, 8, next), rest, "from inside a CP");
}

// DetectorConfig::precision in the chain: the CPU chain rounds through QuantizingDetector,
// the GPU chain in its own buffers (lib/cuda/precision/quantize.cu, the same rounding);
// their h and y differ by float rounding, so a value near a rounding boundary may land on
// the neighbouring code. fp16: LLRs within the detectors' bound; E4M3 (a step of 2^-4):
// the same decisions on all but a few bits.
TEST(UplinkDetector, NarrowStorageOnTheGpuMatchesTheCpu)
{
    std::string why;
    const OfdmConfig o = layout();
    const Stream s = make_stream(o, 24.0, 0.2, 4, 35);
    auto config = [&](Backend b, Precision p) {
        DetectorConfig d = detector_config(b, DetectorMode::chol);
        d.precision = p;
        return d;
    };
    std::size_t next = 0;
    auto plain = make_uplink_detector(o, config(Backend::cpu, Precision::fp32));
    const Detected exact = whole(*plain, s, 8, next);
    for (Precision p : { Precision::fp16, Precision::fp8_e4m3 }) {
        SCOPED_TRACE(to_string(p));
        auto cpu = make_uplink_detector(o, config(Backend::cpu, p));
        next = 0;
        const Detected want = whole(*cpu, s, 8, next);
        expect_same_frames(want, exact, "CPU " + to_string(p));
        EXPECT_NE(want.llr, exact.llr); // it rounds
        if (!gpu_available(&why))
            continue;
        auto gpu = make_uplink_detector(o, config(Backend::cuda, p));
        next = 0;
        const Detected got = whole(*gpu, s, 8, next);
        expect_same_frames(got, want, "GPU " + to_string(p));
        if (p == Precision::fp16) {
            expect_llrs_close(got, want, 2e-3, "GPU fp16");
        } else {
            ASSERT_EQ(got.llr.size(), want.llr.size());
            std::size_t differ = 0;
            for (std::size_t i = 0; i < got.llr.size(); ++i)
                differ += (got.llr[i] > 0) != (want.llr[i] > 0);
            EXPECT_LE(differ, got.llr.size() / 1000) << differ << " of " << got.llr.size();
        }
    }
}

namespace {

//! The stream as sc16 integers of one step `scale`, and the values they stand for.
struct Sc16Stream {
    std::vector<std::vector<std::int16_t>> ints;
    Stream values;
    float scale = 0;
};

Sc16Stream to_sc16(const Stream& s)
{
    float peak = 0;
    for (const auto& a : s.rx)
        for (const cf32& v : a)
            peak = std::max({ peak, std::abs(v.real()), std::abs(v.imag()) });
    Sc16Stream r;
    r.scale = peak / 30000.0f;
    r.values = s;
    r.ints.resize(s.rx.size());
    for (std::size_t b = 0; b < s.rx.size(); ++b)
        for (std::size_t i = 0; i < s.rx[b].size(); ++i) {
            const auto re = static_cast<std::int16_t>(std::lround(s.rx[b][i].real() / r.scale));
            const auto im = static_cast<std::int16_t>(std::lround(s.rx[b][i].imag() / r.scale));
            r.ints[b].push_back(re);
            r.ints[b].push_back(im);
            r.values.rx[b][i] = cf32(re * r.scale, im * r.scale);
        }
    return r;
}

} // namespace

/* The general process(): sc16 samples give the LLRs of their float values (bit for bit
 * on the CPU, which converts as the GPU does; within float rounding on the GPU, whose
 * kernels read the integers); int8 and fp16 LLRs are the float LLRs of the same call
 * rounded (precision::llrs_to_int8 / llrs_to_fp16), nothing written past the frames
 * found; bad scales and buffers are refused. */
TEST(UplinkDetector, Sc16SamplesAndNarrowLlrs)
{
    const OfdmConfig o = layout();
    const Sc16Stream s = to_sc16(make_stream(o, 22.0, 0.13, 4, 57));
    const std::size_t per = llr_per_frame(o), max_frames = 6;
    std::string why;
    std::vector<Backend> backends{ Backend::cpu };
    if (gpu_available(&why))
        backends.push_back(Backend::cuda);
    for (Backend backend : backends) {
        SCOPED_TRACE(to_string(backend));
        auto det = make_uplink_detector(o, detector_config(backend));
        std::size_t next_float = 0, next = 0;
        const Detected want = whole(*det, s.values, max_frames, next_float);
        ASSERT_EQ(want.frames.size(), 4u);
        UplinkInput in;
        for (const auto& a : s.ints)
            in.antennas.push_back(a.data());
        in.samples = s.values.rx[0].size();
        in.format = SampleFormat::sc16;
        in.sc16_scale = s.scale;
        std::vector<float> llr(max_frames * per, 99.0f);
        UplinkOutput out;
        out.llr = llr.data();
        out.max_frames = max_frames;
        const auto frames = det->process(in, out, next);
        Detected got{ frames, std::vector<float>(llr.begin(), llr.begin() + frames.size() * per) };
        expect_same_frames(got, want, "sc16");
        EXPECT_EQ(next, next_float);
        expect_llrs_close(got, want, backend == Backend::cpu ? 0.0 : 1e-3, "sc16");
        for (std::size_t i = frames.size() * per; i < llr.size(); ++i)
            ASSERT_EQ(llr[i], 99.0f) << "written past the frames found";

        // Narrow LLRs from the same samples, against this call's float LLRs rounded.
        const std::size_t n = frames.size() * per;
        std::vector<std::int8_t> int8(max_frames * per, 99), want8(n);
        out.llr = int8.data();
        out.format = LlrFormat::int8;
        out.int8_scale = 4.0f;
        ASSERT_EQ(det->process(in, out, next).size(), frames.size());
        precision::llrs_to_int8(llr.data(), n, 4.0f, want8.data());
        EXPECT_TRUE(std::equal(want8.begin(), want8.end(), int8.begin())) << "int8";
        EXPECT_EQ(int8[n], 99) << "int8 written past the frames found";
        std::vector<std::uint16_t> half(max_frames * per, 0x1234), want16(n);
        out.llr = half.data();
        out.format = LlrFormat::fp16;
        ASSERT_EQ(det->process(in, out, next).size(), frames.size());
        precision::llrs_to_fp16(llr.data(), n, want16.data());
        EXPECT_TRUE(std::equal(want16.begin(), want16.end(), half.begin())) << "fp16";
        EXPECT_EQ(half[n], 0x1234) << "fp16 written past the frames found";

        // Refused: a scale that is not positive and finite, no buffer, a null stream.
        UplinkInput bad = in;
        bad.sc16_scale = 0.0f;
        EXPECT_THROW(det->process(bad, out, next), std::invalid_argument);
        UplinkOutput bad_out = out;
        bad_out.format = LlrFormat::int8;
        bad_out.int8_scale = NAN;
        EXPECT_THROW(det->process(in, bad_out, next), std::invalid_argument);
        bad_out = out;
        bad_out.llr = nullptr;
        EXPECT_THROW(det->process(in, bad_out, next), std::invalid_argument);
        bad = in;
        bad.antennas[1] = nullptr;
        EXPECT_THROW(det->process(bad, out, next), std::invalid_argument);
    }
    EXPECT_EQ(parse_sample_format("fc32"), SampleFormat::cf32);
    EXPECT_EQ(parse_sample_format(to_string(SampleFormat::sc16)), SampleFormat::sc16);
    EXPECT_THROW(parse_sample_format("sc8"), std::invalid_argument);
}

/* NaN samples inside one frame of a stream (issue 19 item 8): that frame's LLRs are 0
 * and it says so (an erased frame, or the detector's counters), the other frames are
 * those of the clean stream, bit for bit, whole and in pieces. */
TEST(UplinkDetector, NanSamplesInAFrameAreErasedAndCounted)
{
    const OfdmConfig o = layout();
    const Stream clean = make_stream(o, 24.0, 0.1, 3, 71);
    const std::size_t sym = o.symbol_samples(), per = llr_per_frame(o);
    std::size_t next = 0;
    auto reference = make_uplink_detector(o, detector_config(Backend::cpu));
    const Detected want = whole(*reference, clean, 8, next);
    ASSERT_EQ(want.frames.size(), 3u);
    for (const auto& f : want.frames)
        EXPECT_FALSE(f.erased());
    const DetectorStats none = reference->stats();
    EXPECT_EQ(none.channels, 3u);
    EXPECT_EQ(none.bad_channel_subcarriers, 0u);
    EXPECT_EQ(none.bad_sample_vectors, 0u);

    // Symbol s of frame 1 (0 preamble, 1 pilots, 2.. data), antenna 2: one NaN sample in
    // the middle of its FFT window.
    auto with_nan = [&](std::size_t s) {
        Stream bad = clean;
        bad.rx[2][clean.starts[1] + s * sym + o.cp_length + o.fft_size / 2] =
            cf32(std::nanf(""), 0.0f);
        return bad;
    };
    auto expect_frames_0_and_2_clean = [&](const Detected& got, const std::string& what) {
        ASSERT_EQ(got.frames.size(), 3u) << what;
        for (std::size_t f : { 0u, 2u }) {
            EXPECT_EQ(got.frames[f].start, want.frames[f].start) << what;
            EXPECT_EQ(got.frames[f].n0, want.frames[f].n0) << what;
            EXPECT_FALSE(got.frames[f].erased()) << what;
            for (std::size_t i = 0; i < per; ++i)
                ASSERT_EQ(got.llr[f * per + i], want.llr[f * per + i])
                    << what << ", frame " << f << " LLR " << i;
        }
        EXPECT_EQ(got.frames[1].start, want.frames[1].start) << what;
        for (std::size_t i = 0; i < per; ++i)
            ASSERT_EQ(got.llr[per + i], 0.0f) << what << ", frame 1 LLR " << i;
    };

    // In a data symbol: N0 is not finite, the frame is erased without the detector.
    const Stream data_nan = with_nan(2 + 2);
    for (std::size_t chunk : { 0ul, 700ul, 1777ul }) {
        auto det = make_uplink_detector(o, detector_config(Backend::cpu));
        const std::string what = "NaN in a data symbol, chunks of " + std::to_string(chunk);
        const Detected got =
            chunk ? in_pieces(*det, data_nan, chunk) : whole(*det, data_nan, 8, next);
        expect_frames_0_and_2_clean(got, what);
        EXPECT_TRUE(got.frames[1].erased()) << what;
        const DetectorStats s = det->stats();
        EXPECT_EQ(s.channels, 2u) << what;
        EXPECT_EQ(s.bad_channel_subcarriers, 0u) << what;
        EXPECT_EQ(s.bad_sample_vectors, 0u) << what;
        EXPECT_EQ(s.invalid_noise_variance, 0u) << what;
    }

    // In the pilot symbol only: N0 is finite, the channel estimate of every subcarrier
    // is not; the detector erases and counts them.
    const Stream pilot_nan = with_nan(1);
    auto det = make_uplink_detector(o, detector_config(Backend::cpu));
    const Detected got = whole(*det, pilot_nan, 8, next);
    expect_frames_0_and_2_clean(got, "NaN in the pilot symbol");
    EXPECT_FALSE(got.frames[1].erased());
    const DetectorStats s = det->stats();
    EXPECT_EQ(s.channels, 3u);
    EXPECT_EQ(s.bad_channel_subcarriers, o.num_subcarriers);

    // The GPU chain: the same frames erased and counted (skipped without a GPU).
    std::string why;
    if (!gpu_available(&why))
        return;
    auto gpu = make_uplink_detector(o, detector_config(Backend::cuda));
    const Detected g = whole(*gpu, data_nan, 8, next);
    ASSERT_EQ(g.frames.size(), 3u);
    EXPECT_TRUE(g.frames[1].erased());
    EXPECT_FALSE(g.frames[0].erased() || g.frames[2].erased());
    for (std::size_t i = 0; i < per; ++i)
        ASSERT_EQ(g.llr[per + i], 0.0f) << "GPU, frame 1 LLR " << i;
    EXPECT_EQ(gpu->stats().bad_channel_subcarriers, 0u);
    auto gpu_pilot = make_uplink_detector(o, detector_config(Backend::cuda));
    const Detected gp = whole(*gpu_pilot, pilot_nan, 8, next);
    ASSERT_EQ(gp.frames.size(), 3u);
    EXPECT_FALSE(gp.frames[1].erased());
    for (std::size_t i = 0; i < per; ++i)
        ASSERT_EQ(gp.llr[per + i], 0.0f) << "GPU pilot NaN, frame 1 LLR " << i;
    EXPECT_EQ(gpu_pilot->stats().bad_channel_subcarriers, o.num_subcarriers);
}

namespace {

//! The display outputs of one whole-stream call (UplinkOutput::symbols and sinr).
struct Displays {
    std::vector<DetectedFrame> frames;
    std::vector<cf32> symbols;
    std::vector<float> sinr;
};

Displays displays(UplinkDetector& det, const Stream& s, std::size_t max_frames)
{
    const OfdmConfig& o = det.ofdm();
    const std::size_t items = o.dims().symbol_items();
    std::vector<float> llr(max_frames * llr_per_frame(o));
    Displays r;
    r.symbols.assign(max_frames * o.num_data_symbols * items, cf32(std::nanf(""), 0.0f));
    r.sinr.assign(max_frames * items, std::nanf(""));
    UplinkInput in;
    for (const auto& a : s.rx)
        in.antennas.push_back(a.data());
    in.samples = s.rx[0].size();
    UplinkOutput out;
    out.llr = llr.data();
    out.max_frames = max_frames;
    out.symbols = r.symbols.data();
    out.sinr = r.sinr.data();
    std::size_t next = 0;
    r.frames = det.process(in, out, next);
    r.symbols.resize(r.frames.size() * o.num_data_symbols * items);
    r.sinr.resize(r.frames.size() * items);
    return r;
}

} // namespace

/* The display outputs are what the frame's detector gives: x_hat made bias-free with its
 * equalizer gains, and its SINR (the receiver and detector by hand, bit for bit); zeros
 * for an erased frame; refused for the sphere decoders; the GPU chain's within float
 * rounding of the CPU's. */
TEST(UplinkDetector, EqualisedSymbolsAndSinrAreTheDetectorsOwn)
{
    const OfdmConfig o = layout();
    const std::size_t items = o.dims().symbol_items();
    const std::size_t x_frame = o.num_data_symbols * items;
    const Stream s = make_stream(o, 24.0, 0.15, 4, 91);
    const auto want = cpu_walk(o, s.rx);
    for (auto mode : { DetectorMode::chol, DetectorMode::zf, DetectorMode::cg, DetectorMode::box }) {
        const std::string what = "CPU " + to_string(mode);
        auto det = make_uplink_detector(o, detector_config(Backend::cpu, mode));
        const Displays got = displays(*det, s, 8);
        ASSERT_EQ(got.frames.size(), want.size()) << what;
        auto detector = make_detector(det->detector());
        std::vector<float> llr(llr_per_frame(o)), unbias(items), sinr(items);
        std::vector<cf32> x(x_frame);
        for (std::size_t f = 0; f < want.size(); ++f) {
            detector->set_channel(want[f].h.data(), want[f].n0);
            detector->detect(want[f].y.data(), o.num_data_symbols, llr.data(), x.data());
            ASSERT_TRUE(detector->equalizer_gains(unbias.data(), sinr.data())) << what;
            remove_bias(x.data(), o.num_data_symbols, unbias.data(), o.dims());
            for (std::size_t i = 0; i < x_frame; ++i)
                ASSERT_EQ(got.symbols[f * x_frame + i], x[i]) << what << " frame " << f;
            for (std::size_t i = 0; i < items; ++i) {
                ASSERT_EQ(got.sinr[f * items + i], sinr[i]) << what << " frame " << f;
                EXPECT_GT(sinr[i], 0.0f) << what;
            }
        }
    }

    // An erased frame (NaN in a data symbol): its symbols and SINR are 0.
    Stream bad = s;
    bad.rx[1][s.starts[2] + 3 * o.symbol_samples() + o.cp_length + 7] = cf32(std::nanf(""), 0);
    auto cpu = make_uplink_detector(o, detector_config(Backend::cpu));
    const Displays erased = displays(*cpu, bad, 8);
    ASSERT_EQ(erased.frames.size(), 4u);
    ASSERT_TRUE(erased.frames[2].erased());
    for (std::size_t i = 0; i < x_frame; ++i)
        ASSERT_EQ(erased.symbols[2 * x_frame + i], cf32()) << i;
    for (std::size_t i = 0; i < items; ++i)
        ASSERT_EQ(erased.sinr[2 * items + i], 0.0f) << i;

    // The sphere decoders have no linear estimate to show.
    auto fsd = make_uplink_detector(o, detector_config(Backend::cpu, DetectorMode::fsd));
    EXPECT_THROW(displays(*fsd, s, 8), std::invalid_argument);

    std::string why;
    if (!gpu_available(&why))
        GTEST_SKIP() << why;
    for (auto mode : { DetectorMode::chol, DetectorMode::cg, DetectorMode::box }) {
        const std::string what = "GPU " + to_string(mode);
        auto c = make_uplink_detector(o, detector_config(Backend::cpu, mode));
        auto g = make_uplink_detector(o, detector_config(Backend::cuda, mode));
        const Displays want_d = displays(*c, s, 8), got = displays(*g, s, 8);
        ASSERT_EQ(got.frames.size(), want_d.frames.size()) << what;
        double worst_x = 0, worst_sinr = 0;
        for (std::size_t i = 0; i < want_d.symbols.size(); ++i)
            worst_x = std::max(worst_x, double(std::abs(got.symbols[i] - want_d.symbols[i])));
        for (std::size_t i = 0; i < want_d.sinr.size(); ++i)
            worst_sinr = std::max(worst_sinr,
                                  std::abs(double(got.sinr[i]) - want_d.sinr[i]) /
                                      std::max(1.0, double(want_d.sinr[i])));
        // (the chains' h and y differ by float rounding, as in GpuMatchesTheCpu)
        EXPECT_LE(worst_x, 2e-3) << what;
        EXPECT_LE(worst_sinr, 2e-3) << what;
    }
    auto g = make_uplink_detector(o, detector_config(Backend::cuda));
    const Displays gpu_erased = displays(*g, bad, 8);
    ASSERT_EQ(gpu_erased.frames.size(), 4u);
    for (std::size_t i = 0; i < x_frame; ++i)
        ASSERT_EQ(gpu_erased.symbols[2 * x_frame + i], cf32()) << "GPU " << i;
    for (std::size_t i = 0; i < items; ++i)
        ASSERT_EQ(gpu_erased.sinr[2 * items + i], 0.0f) << "GPU " << i;
}
