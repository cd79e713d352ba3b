/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The GPU receive chain against the CPU one (OfdmReceiver walked over the same samples)
 * and its LLRs against the CPU detector on the chain's own tensors. Skipped (not failed)
 * on machines without a usable GPU, e.g. CI; run for real by scripts/gpu-test-and-bench.
 */

#include "core/precision/precision.h"
#include "gpu_skip.h"
#include "ofdm_stream.h"
#include <cuda/cuda_detector.h>
#include <cuda/ofdm/ofdm_chain.h>
#include <gtest/gtest.h>
#include <mimodet/detector.h>
#include <mimodet/ofdm.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

using namespace mimodet;
using test::cpu_walk;
using test::make_stream;
using test::Stream;

namespace {

OfdmConfig small_config()
{
    OfdmConfig o;
    o.fft_size = 256;
    o.cp_length = 32;
    o.num_subcarriers = 192;
    o.num_data_symbols = 6;
    o.num_users = 4;
    o.num_antennas = 8;
    o.modulation = Modulation::qam16;
    return o;
}

struct ChainRun {
    std::vector<cuda::ChainFrame> frames;
    std::vector<float> llr;
    std::vector<cf32> h, y;
};

ChainRun run_chain(cuda::CudaOfdmChain& chain,
                   const std::vector<const void*>& antennas,
                   cuda::SampleFormat format,
                   std::size_t samples,
                   std::size_t max_frames)
{
    const OfdmConfig& o = chain.config();
    const Dims d = o.dims();
    ChainRun r;
    // Poisoned: whatever the chain does not write stays NaN.
    r.llr.assign(max_frames * o.num_data_symbols * d.llr_items(),
                 std::numeric_limits<float>::quiet_NaN());
    r.h.assign(max_frames * d.channel_items(), cf32(NAN, NAN));
    r.y.assign(max_frames * o.num_data_symbols * d.rx_items(), cf32(NAN, NAN));
    cuda::ChainOutputs out;
    out.max_frames = max_frames;
    out.llr = r.llr.data();
    out.h = r.h.data();
    out.y = r.y.data();
    r.frames = chain.process(antennas, format, samples, out);
    return r;
}

std::vector<const void*> pointers(const std::vector<std::vector<cf32>>& rx)
{
    std::vector<const void*> p;
    for (const auto& a : rx)
        p.push_back(a.data());
    return p;
}

double relative_error(const cf32* got, const cf32* want, std::size_t n)
{
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
        num += std::norm(cf64(got[i]) - cf64(want[i]));
        den += std::norm(cf64(want[i]));
    }
    return std::sqrt(num / std::max(den, 1e-300));
}

//! Frame by frame: the same frames, CFO and N0, and h and y within float rounding.
void expect_matches_cpu(const ChainRun& gpu,
                        const std::vector<OfdmReception>& cpu,
                        const OfdmConfig& o,
                        double tensor_tol,
                        const std::string& what)
{
    ASSERT_EQ(gpu.frames.size(), cpu.size()) << what;
    const Dims d = o.dims();
    const std::size_t y_frame = o.num_data_symbols * d.rx_items();
    for (std::size_t f = 0; f < cpu.size(); ++f) {
        const std::string at = what + ", frame " + std::to_string(f);
        EXPECT_EQ(gpu.frames[f].start, cpu[f].frame_start) << at;
        EXPECT_NEAR(gpu.frames[f].cfo, cpu[f].cfo, 1e-4) << at;
        EXPECT_NEAR(gpu.frames[f].n0, cpu[f].n0, 1e-3 * cpu[f].n0) << at;
        EXPECT_LT(relative_error(
                      &gpu.h[f * d.channel_items()], cpu[f].h.data(), d.channel_items()),
                  tensor_tol)
            << at << ": h";
        EXPECT_LT(relative_error(&gpu.y[f * y_frame], cpu[f].y.data(), y_frame),
                  tensor_tol)
            << at << ": y";
    }
}

//! The chain's LLRs equal the CPU detector's on the chain's own h, y and N0 (float
//! rounding aside), every one written; returns the BER against the transmitted bits.
//! With no truth, the BER is 0.
double expect_llrs_of_cpu_detector(const ChainRun& gpu,
                                   const OfdmConfig& o,
                                   const DetectorConfig& det,
                                   const std::vector<const UplinkFrame*>& truth,
                                   const std::string& what)
{
    DetectorConfig cpu_config = det;
    cpu_config.num_antennas = o.num_antennas;
    cpu_config.num_users = o.num_users;
    cpu_config.num_subcarriers = o.num_subcarriers;
    cpu_config.modulation = o.modulation;
    cpu_config.backend = Backend::cpu;
    auto cpu = make_detector(cpu_config);
    const Dims d = o.dims();
    const std::size_t llr_frame = o.num_data_symbols * d.llr_items();
    const std::size_t y_frame = o.num_data_symbols * d.rx_items();
    std::vector<float> want(llr_frame);
    std::size_t errors = 0, bits = 0, disagree = 0;
    double worst = 0;
    for (std::size_t f = 0; f < gpu.frames.size(); ++f) {
        cpu->set_channel(&gpu.h[f * d.channel_items()], gpu.frames[f].n0);
        cpu->detect(&gpu.y[f * y_frame], o.num_data_symbols, want.data());
        const float* got = &gpu.llr[f * llr_frame];
        for (std::size_t i = 0; i < llr_frame; ++i) {
            if (!std::isfinite(got[i])) {
                ADD_FAILURE() << what << ": frame " << f << " LLR " << i
                              << " not written";
                return 1.0;
            }
            worst = std::max(worst,
                             std::abs(double(got[i]) - want[i]) /
                                 std::max(1.0, std::abs(double(want[i]))));
            disagree += std::abs(want[i]) > 1e-2f && (got[i] > 0) != (want[i] > 0);
            if (f < truth.size()) {
                errors += (got[i] > 0) != (truth[f]->bits[i] != 0);
                ++bits;
            }
        }
    }
    // The GPU detector's own bound against the CPU (tests/cuda/test_cuda_detector.cc).
    EXPECT_LT(worst, 2e-3) << what;
    EXPECT_EQ(disagree, 0u) << what;
    return bits ? double(errors) / double(bits) : 0.0;
}

DetectorConfig detector(DetectorMode mode, unsigned iterations = 3)
{
    DetectorConfig c;
    c.mode = mode;
    c.iterations = iterations;
    return c;
}

} // namespace

TEST(CudaOfdmChain, FindsTheFramesOfTheCpuChainInEveryWindowing)
{
    SKIP_WITHOUT_GPU();
    const OfdmConfig o = small_config();
    const Stream s = make_stream(o, 25.0, 0.23, 6, 11);
    const auto cpu = cpu_walk(o, s.rx);
    ASSERT_EQ(cpu.size(), s.starts.size());
    std::vector<const UplinkFrame*> truth;
    for (const auto& t : s.truth)
        truth.push_back(&t);
    // One frame per window (every frame across a boundary), a few, and all in one.
    for (std::size_t per_window : { 1, 2, 16 }) {
        cuda::ChainOptions opt;
        opt.frames_per_window = per_window;
        cuda::CudaOfdmChain chain(o, detector(DetectorMode::chol), opt);
        const auto gpu = run_chain(
            chain, pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), 10);
        const std::string what = std::to_string(per_window) + " frames per window";
        expect_matches_cpu(gpu, cpu, o, 1e-4, what);
        const double ber = expect_llrs_of_cpu_detector(
            gpu, o, detector(DetectorMode::chol), truth, what);
        EXPECT_LT(ber, 2e-3) << what; // 25 dB, 8x4 16-QAM
    }
}

TEST(CudaOfdmChain, IterativeDetectorsMatchTheCpuOnTheChainsTensors)
{
    SKIP_WITHOUT_GPU();
    OfdmConfig o = small_config();
    o.modulation = Modulation::qam64;
    const Stream s = make_stream(o, 28.0, -0.1, 3, 21);
    for (auto mode : { DetectorMode::cg, DetectorMode::cr, DetectorMode::zf }) {
        cuda::CudaOfdmChain chain(o, detector(mode, 3));
        const auto gpu =
            run_chain(chain, pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), 5);
        ASSERT_EQ(gpu.frames.size(), 3u) << to_string(mode);
        expect_llrs_of_cpu_detector(gpu, o, detector(mode, 3), {}, to_string(mode));
    }
}

TEST(CudaOfdmChain, Sc16SamplesGiveTheFramesOfTheirFloatValues)
{
    SKIP_WITHOUT_GPU();
    const OfdmConfig o = small_config();
    const Stream s = make_stream(o, 20.0, 0.31, 4, 31);
    float peak = 0;
    for (const auto& a : s.rx)
        for (const cf32& v : a)
            peak = std::max({ peak, std::abs(v.real()), std::abs(v.imag()) });
    const float scale = peak / 30000.0f; // one integer step
    std::vector<std::vector<std::int16_t>> ints(o.num_antennas);
    std::vector<std::vector<cf32>> values(o.num_antennas); // what the integers stand for
    for (std::size_t b = 0; b < o.num_antennas; ++b)
        for (const cf32& v : s.rx[b]) {
            const auto i = static_cast<std::int16_t>(std::lround(v.real() / scale));
            const auto q = static_cast<std::int16_t>(std::lround(v.imag() / scale));
            ints[b].push_back(i);
            ints[b].push_back(q);
            values[b].emplace_back(i * scale, q * scale);
        }
    std::vector<const void*> p;
    for (const auto& a : ints)
        p.push_back(a.data());
    cuda::ChainOptions opt;
    opt.frames_per_window = 2;
    opt.sc16_scale = scale;
    cuda::CudaOfdmChain chain(o, detector(DetectorMode::chol), opt);
    const auto gpu = run_chain(chain, p, cuda::SampleFormat::sc16, s.rx[0].size(), 8);
    expect_matches_cpu(gpu, cpu_walk(o, values), o, 1e-4, "sc16");
    ASSERT_EQ(gpu.frames.size(), s.starts.size());
}

// ChainOutputs::llr_int8: the same frames, and each LLR as precision::llrs_to_int8 makes
// it from the float LLRs of the same chain (bit for bit: both round in float).
TEST(CudaOfdmChain, Int8LlrsAreTheFloatLlrsRounded)
{
    SKIP_WITHOUT_GPU();
    const OfdmConfig o = small_config();
    const Stream s = make_stream(o, 20.0, 0.17, 5, 43);
    cuda::ChainOptions opt;
    opt.frames_per_window = 2;
    opt.llr_int8_scale = 4.0f;
    cuda::CudaOfdmChain chain(o, detector(DetectorMode::chol), opt);
    const auto floats = run_chain(chain, pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), 8);
    ASSERT_EQ(floats.frames.size(), s.starts.size());
    std::vector<std::int8_t> got(floats.llr.size(), 99), want(floats.llr.size());
    cuda::ChainOutputs out;
    out.max_frames = 8;
    out.llr_int8 = got.data();
    const auto frames = chain.process(pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), out);
    ASSERT_EQ(frames.size(), floats.frames.size());
    const std::size_t n = frames.size() * o.num_data_symbols * o.dims().llr_items();
    precision::llrs_to_int8(floats.llr.data(), n, 4.0f, want.data());
    std::size_t differ = 0, saturated = 0;
    for (std::size_t i = 0; i < n; ++i) {
        differ += got[i] != want[i];
        saturated += std::abs(got[i]) == 127;
    }
    EXPECT_EQ(differ, 0u);
    EXPECT_GT(saturated, 0u); // 20 dB: some LLRs beyond 127 / 4
    EXPECT_LT(saturated, n);
    for (std::size_t i = n; i < got.size(); ++i)
        ASSERT_EQ(got[i], 99) << "written past the frames found";
    std::vector<float> spare(floats.llr.size());
    out.llr = spare.data();
    EXPECT_THROW(chain.process(pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), out),
                 std::invalid_argument); // both buffers given
}

TEST(CudaOfdmChain, LteTwentyMegahertzSixteenAntennasMatchesTheCpu)
{
    SKIP_WITHOUT_GPU();
    OfdmConfig o; // the receive-chain target's numerology: 30.72 MS/s, 1200 subcarriers
    o.fft_size = 2048;
    o.cp_length = 144;
    o.num_subcarriers = 1200;
    o.num_data_symbols = 14;
    o.num_users = 6;
    o.num_antennas = 16;
    o.modulation = Modulation::qam16;
    const Stream s = make_stream(o, 22.0, 0.17, 2, 41);
    const auto cpu = cpu_walk(o, s.rx);
    ASSERT_EQ(cpu.size(), 2u);
    cuda::CudaOfdmChain chain(o, detector(DetectorMode::chol));
    const auto gpu =
        run_chain(chain, pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), 4);
    expect_matches_cpu(gpu, cpu, o, 1e-4, "LTE 20 MHz");
    std::vector<const UplinkFrame*> truth{ &s.truth[0], &s.truth[1] };
    const double ber =
        expect_llrs_of_cpu_detector(gpu, o, detector(DetectorMode::chol), truth, "LTE");
    EXPECT_LT(ber, 1e-2);
}

TEST(CudaOfdmChain, StopsWhenTheOutputsAreFullAndRepeatsWithoutAllocating)
{
    SKIP_WITHOUT_GPU();
    const OfdmConfig o = small_config();
    const Stream s = make_stream(o, 25.0, 0.05, 5, 51);
    cuda::ChainOptions opt;
    opt.frames_per_window = 2;
    cuda::CudaOfdmChain chain(o, detector(DetectorMode::cg), opt);
    const auto first =
        run_chain(chain, pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), 3);
    ASSERT_EQ(first.frames.size(), 3u);
    for (std::size_t f = 0; f < 3; ++f)
        EXPECT_EQ(first.frames[f].start, s.starts[f]);
    // Again, all of it: the first three frames the same, bit for bit, and no allocation
    // (the chain and its detector are in their steady state).
    const auto before = cuda::allocation_count();
    const auto all =
        run_chain(chain, pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), 8);
    EXPECT_EQ(cuda::allocation_count(), before);
    ASSERT_EQ(all.frames.size(), 5u);
    const std::size_t llr_frame = o.num_data_symbols * o.dims().llr_items();
    for (std::size_t i = 0; i < 3 * llr_frame; ++i)
        ASSERT_EQ(all.llr[i], first.llr[i]) << "LLR " << i;
    for (std::size_t i = 5 * llr_frame; i < all.llr.size(); ++i)
        ASSERT_TRUE(std::isnan(all.llr[i])) << "LLR " << i << " past the frames written";
}

TEST(CudaOfdmChain, NoiseShortInputAndBadArgumentsAreHandled)
{
    SKIP_WITHOUT_GPU();
    const OfdmConfig o = small_config();
    cuda::CudaOfdmChain chain(o, detector(DetectorMode::chol));
    // Noise alone: no frame.
    Stream noise;
    noise.rx.assign(o.num_antennas, std::vector<cf32>(5 * o.frame_samples()));
    std::uint64_t state = 7;
    for (auto& a : noise.rx)
        for (auto& v : a) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            v = cf32(float(int(state >> 40) % 2001 - 1000) * 1e-3f,
                     float(int(state >> 20) % 2001 - 1000) * 1e-3f);
        }
    EXPECT_TRUE(
        run_chain(
            chain, pointers(noise.rx), cuda::SampleFormat::cf32, noise.rx[0].size(), 4)
            .frames.empty());
    // Shorter than a frame: nothing to find, nothing touched.
    EXPECT_TRUE(
        run_chain(
            chain, pointers(noise.rx), cuda::SampleFormat::cf32, o.frame_samples() - 1, 4)
            .frames.empty());
    // NaN samples in one antenna before a frame: no frame made of them, the frame found.
    Stream s = make_stream(o, 25.0, 0.1, 1, 61);
    for (std::size_t n = 0; n < 30; ++n)
        s.rx[3][n] = cf32(NAN, NAN);
    const auto r =
        run_chain(chain, pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), 2);
    ASSERT_EQ(r.frames.size(), 1u);
    EXPECT_EQ(r.frames[0].start, s.starts[0]);
    // Wrong antenna count, missing buffers.
    std::vector<const void*> few(o.num_antennas - 1, s.rx[0].data());
    cuda::ChainOutputs out;
    std::vector<float> llr(o.num_data_symbols * o.dims().llr_items());
    out.max_frames = 1;
    out.llr = llr.data();
    EXPECT_THROW(chain.process(few, cuda::SampleFormat::cf32, s.rx[0].size(), out),
                 std::invalid_argument);
    out.llr = nullptr;
    EXPECT_THROW(
        chain.process(pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), out),
        std::invalid_argument);
    OfdmConfig bad = o;
    bad.num_users = 40; // more than the GPU detector's 32
    EXPECT_THROW(cuda::CudaOfdmChain(bad, detector(DetectorMode::chol)),
                 std::invalid_argument);
}

TEST(CudaOfdmChain, SamplesStartingInsideAFrameGiveOnlyTheWholeFrames)
{
    SKIP_WITHOUT_GPU();
    const OfdmConfig o = small_config();
    Stream s = make_stream(o, 25.0, 0.2, 4, 71);
    // Start halfway through frame 0: its end (signal, then noise) is the first thing
    // searched, where a metric normalized by one half's energy would rise.
    const std::size_t cut = s.starts[0] + o.frame_samples() / 2;
    for (auto& a : s.rx)
        a.erase(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(cut));
    const auto cpu = cpu_walk(o, s.rx);
    ASSERT_EQ(cpu.size(), 3u);
    cuda::CudaOfdmChain chain(o, detector(DetectorMode::chol));
    const auto gpu =
        run_chain(chain, pointers(s.rx), cuda::SampleFormat::cf32, s.rx[0].size(), 8);
    expect_matches_cpu(gpu, cpu, o, 1e-4, "from inside a frame");
    for (std::size_t f = 0; f < gpu.frames.size(); ++f)
        EXPECT_LE(std::abs(static_cast<long>(gpu.frames[f].start + cut) -
                           static_cast<long>(s.starts[f + 1])),
                  static_cast<long>(o.cp_length / 2));
}
