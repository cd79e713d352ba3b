/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The GPU detector blocks inside real GNU Radio flowgraphs, against the same flowgraph
 * on the CPU backend: mmse_detector, box_detector, fsd_detector, ofdm_uplink_detector and
 * apsm_receiver fed by vector sources with their tags, run by GNU Radio's scheduler with
 * few items per work() call, so that frame boundaries, a channel change, an N0-only
 * update and training sections fall inside work() calls. Hard decisions must be
 * identical and LLRs equal within float tolerance. Without a GPU each test skips itself
 * (CI); scripts/gpu-run-gnuradio runs them on a GPU machine. */

#include "ofdm_stream.h"
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/mimodet/apsm_receiver.h>
#include <gnuradio/mimodet/box_detector.h>
#include <gnuradio/mimodet/fsd_detector.h>
#include <gnuradio/mimodet/mmse_detector.h>
#include <gnuradio/mimodet/ofdm_uplink_detector.h>
#include <gnuradio/top_block.h>
#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <mimodet/layout.h>
#include <gtest/gtest.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using cf32 = std::complex<float>;

#define SKIP_WITHOUT_GPU_BACKEND()              \
    do {                                        \
        std::string why;                        \
        if (!::mimodet::gpu_available(&why))    \
            GTEST_SKIP() << "no GPU: " << why;  \
    } while (0)

gr::tag_t make_tag(uint64_t offset, const char* key, pmt::pmt_t value)
{
    gr::tag_t t;
    t.offset = offset;
    t.key = pmt::intern(key);
    t.value = value;
    t.srcid = pmt::PMT_F;
    return t;
}

//! Same signs wherever the CPU's LLR is clearly non-zero, and values within float
//! tolerance of the largest LLR (the GPU sums in another order).
void expect_same_llrs(const std::vector<float>& gpu, const std::vector<float>& cpu)
{
    ASSERT_EQ(gpu.size(), cpu.size());
    float scale = 0.0f;
    for (float v : cpu)
        scale = std::max(scale, std::abs(v));
    const float atol = 1e-4f * scale;
    std::size_t sign_flips = 0, far = 0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        if (std::abs(cpu[i]) > atol && (gpu[i] > 0) != (cpu[i] > 0))
            ++sign_flips;
        if (!(std::abs(gpu[i] - cpu[i]) <= atol + 2e-3f * std::abs(cpu[i])))
            ++far;
    }
    EXPECT_EQ(sign_flips, 0u) << "hard decisions differ";
    EXPECT_EQ(far, 0u) << "LLRs beyond float tolerance (scale " << scale << ")";
}

struct MmseRun {
    std::vector<float> llrs;
    std::string implementation;
    uint64_t channel_updates = 0;
    uint64_t erased_items = 0;
};

//! A detector block (mmse_detector or box_detector) between a vector source with the
//! frames' tags and a vector sink.
template <class Block>
MmseRun run_detector_block(std::shared_ptr<Block> det,
                           const mimodet::ChannelSimConfig& c,
                           const std::vector<cf32>& y,
                           const std::vector<gr::tag_t>& tags,
                           int max_items)
{
    const int item = static_cast<int>(c.num_subcarriers * c.num_antennas);
    auto tb = gr::make_top_block("detector_flowgraph");
    auto src = gr::blocks::vector_source_c::make(y, false, item, tags);
    det->set_max_noutput_items(max_items); // frames and tags inside work() calls
    const int llr_item = static_cast<int>(c.dims().llr_items());
    auto sink = gr::blocks::vector_sink_f::make(llr_item);
    tb->connect(src, 0, det, 0);
    tb->connect(det, 0, sink, 0);
    tb->run();
    return { sink->data(), det->implementation(), det->channel_updates(),
             det->erased_items() };
}

//! mmse_detector, chol on 16-QAM, of c's dimensions.
gr::mimodet::mmse_detector::sptr make_mmse(const mimodet::ChannelSimConfig& c,
                                           const std::string& backend)
{
    return gr::mimodet::mmse_detector::make(static_cast<int>(c.num_antennas),
                                            static_cast<int>(c.num_users),
                                            static_cast<int>(c.num_subcarriers),
                                            "16qam",
                                            "chol",
                                            3,
                                            backend);
}

MmseRun run_mmse(const std::string& backend,
                 const mimodet::ChannelSimConfig& c,
                 const std::vector<cf32>& y,
                 const std::vector<gr::tag_t>& tags,
                 int max_items)
{
    return run_detector_block(make_mmse(c, backend), c, y, tags, max_items);
}

//! Three frames of the simulator, a new channel on each frame's first item and an
//! N0-only update in the middle of the second frame.
void three_frames(const mimodet::ChannelSimConfig& c,
                  std::vector<cf32>& y,
                  std::vector<gr::tag_t>& tags)
{
    mimodet::ChannelSimulator sim(c);
    for (int f = 0; f < 3; ++f) {
        mimodet::Frame frame;
        sim.next_frame(frame);
        const uint64_t first = static_cast<uint64_t>(f) * c.symbols_per_frame;
        tags.push_back(make_tag(first,
                                mimodet::kChannelTagKey,
                                pmt::init_c32vector(frame.h.size(), frame.h)));
        tags.push_back(
            make_tag(first, mimodet::kNoiseVarTagKey, pmt::from_double(frame.n0)));
        if (f == 1)
            tags.push_back(make_tag(
                first + 4, mimodet::kNoiseVarTagKey, pmt::from_double(2.0 * frame.n0)));
        y.insert(y.end(), frame.y.begin(), frame.y.end());
    }
}

//! A detector block made by `make(backend)` on the CPU and the GPU, over three_frames'
//! frames and tags, in work() calls of 2, 3 and 64 items at most: the implementations
//! named `mode` ("cpu-" and "cuda-" before it), the same channel updates (three channels
//! and an N0-only one), nothing erased, and the same LLRs.
template <class Make>
void expect_gpu_block_matches_cpu(Make make,
                                  const std::string& mode,
                                  const mimodet::ChannelSimConfig& c,
                                  const std::vector<cf32>& y,
                                  const std::vector<gr::tag_t>& tags)
{
    for (int max_items : { 2, 3, 64 }) {
        SCOPED_TRACE(mode + ", max_noutput_items " + std::to_string(max_items));
        const MmseRun cpu = run_detector_block(make("cpu"), c, y, tags, max_items);
        const MmseRun gpu = run_detector_block(make("cuda"), c, y, tags, max_items);
        EXPECT_EQ(cpu.implementation, "cpu-" + mode);
        EXPECT_EQ(gpu.implementation, "cuda-" + mode);
        EXPECT_EQ(gpu.channel_updates, cpu.channel_updates);
        EXPECT_EQ(gpu.channel_updates, 4u);
        EXPECT_EQ(gpu.erased_items, 0u);
        ASSERT_EQ(cpu.llrs.size(), 21u * c.dims().llr_items());
        expect_same_llrs(gpu.llrs, cpu.llrs);
    }
}

TEST(GpuFlowgraph, MmseDetectorMatchesTheCpuAcrossChannelChangesAndWorkCalls)
{
    SKIP_WITHOUT_GPU_BACKEND();
    mimodet::ChannelSimConfig c;
    c.num_antennas = 32;
    c.num_users = 8;
    c.num_subcarriers = 48;
    c.symbols_per_frame = 7;
    c.snr_db = 12.0;
    c.seed = 31;
    std::vector<cf32> y;
    std::vector<gr::tag_t> tags;
    three_frames(c, y, tags);
    auto mmse = [&](const std::string& backend) { return make_mmse(c, backend); };
    expect_gpu_block_matches_cpu(mmse, "chol", c, y, tags);
}

struct DisplayRun {
    std::vector<float> llrs, sinr_db, evm;
    std::vector<cf32> symbols;
};

//! mmse_detector (chol) with equalized_output and quality_output on.
DisplayRun run_mmse_displays(const std::string& backend,
                             const mimodet::ChannelSimConfig& c,
                             const std::vector<cf32>& y,
                             const std::vector<gr::tag_t>& tags,
                             int max_items)
{
    auto det = gr::mimodet::mmse_detector::make(static_cast<int>(c.num_antennas),
                                                static_cast<int>(c.num_users),
                                                static_cast<int>(c.num_subcarriers),
                                                "16qam", "chol", 3, backend, true, 0.0f, 0,
                                                std::vector<int>{ 0 }, 3, "fp32", "float",
                                                8.0, true, true);
    const mimodet::Dims d = c.dims();
    auto tb = gr::make_top_block("displays");
    auto src = gr::blocks::vector_source_c::make(
        y, false, static_cast<int>(d.rx_items()), tags);
    det->set_max_noutput_items(max_items);
    auto llr = gr::blocks::vector_sink_f::make(static_cast<int>(d.llr_items()));
    auto sym = gr::blocks::vector_sink_c::make(static_cast<int>(d.symbol_items()));
    auto sinr = gr::blocks::vector_sink_f::make(static_cast<int>(d.num_users));
    auto evm = gr::blocks::vector_sink_f::make(static_cast<int>(d.num_users));
    tb->connect(src, 0, det, 0);
    tb->connect(det, 0, llr, 0);
    tb->connect(det, 1, sym, 0);
    tb->connect(det, 2, sinr, 0);
    tb->connect(det, 3, evm, 0);
    tb->run();
    return { llr->data(), sinr->data(), evm->data(), sym->data() };
}

// The display outputs (docs/signal-quality.md) of the GPU block are the CPU block's, and
// its LLRs with them on are those of the block without them.
TEST(GpuFlowgraph, MmseDetectorDisplaysMatchTheCpu)
{
    SKIP_WITHOUT_GPU_BACKEND();
    mimodet::ChannelSimConfig c;
    c.num_antennas = 16;
    c.num_users = 4;
    c.num_subcarriers = 64;
    c.symbols_per_frame = 7;
    c.snr_db = 20.0;
    c.seed = 41;
    std::vector<cf32> y;
    std::vector<gr::tag_t> tags;
    three_frames(c, y, tags);
    for (int max_items : { 3, 64 }) {
        SCOPED_TRACE("max_noutput_items " + std::to_string(max_items));
        const DisplayRun cpu = run_mmse_displays("cpu", c, y, tags, max_items);
        const DisplayRun gpu = run_mmse_displays("cuda", c, y, tags, max_items);
        expect_same_llrs(gpu.llrs, cpu.llrs);
        expect_same_llrs(gpu.llrs, run_mmse("cuda", c, y, tags, max_items).llrs);
        ASSERT_EQ(gpu.symbols.size(), 21u * c.dims().symbol_items());
        ASSERT_EQ(gpu.symbols.size(), cpu.symbols.size());
        for (std::size_t i = 0; i < cpu.symbols.size(); ++i)
            ASSERT_LT(std::abs(gpu.symbols[i] - cpu.symbols[i]), 1e-4f) << i;
        ASSERT_EQ(gpu.sinr_db.size(), 21u * c.num_users);
        for (std::size_t i = 0; i < cpu.sinr_db.size(); ++i) {
            EXPECT_NEAR(gpu.sinr_db[i], cpu.sinr_db[i], 1e-3f) << i;
            EXPECT_NEAR(gpu.evm[i], cpu.evm[i], 1e-2f) << i;
        }
    }
}

// The sphere decoders on LTE's 4x4 16-QAM (roger2012's case), soft (SFSD) and hard
// (FSD), the same frames, tags and work() splits as above.
TEST(GpuFlowgraph, FsdDetectorMatchesTheCpuAcrossChannelChangesAndWorkCalls)
{
    SKIP_WITHOUT_GPU_BACKEND();
    mimodet::ChannelSimConfig c;
    c.num_antennas = 4;
    c.num_users = 4;
    c.num_subcarriers = 72;
    c.symbols_per_frame = 7;
    c.modulation = mimodet::Modulation::qam16;
    c.snr_db = 18.0;
    c.seed = 43;
    std::vector<cf32> y;
    std::vector<gr::tag_t> tags;
    three_frames(c, y, tags);
    for (const std::string output : { "soft", "hard" }) {
        auto fsd = [&](const std::string& backend) {
            return gr::mimodet::fsd_detector::make(4, 4, 72, "16qam", output, 0, 0, backend);
        };
        expect_gpu_block_matches_cpu(fsd, output == "soft" ? "sfsd" : "fsd", c, y, tags);
    }
}

struct UplinkRun {
    std::vector<float> llrs;
    std::vector<gr::tag_t> tags;
    std::string implementation;
    uint64_t frames = 0, gaps = 0, lost = 0;
};

//! A small frame layout for ofdm_uplink_detector: 8 antennas, 4 users, FFT 128.
mimodet::OfdmConfig small_uplink()
{
    mimodet::OfdmConfig o;
    o.fft_size = 128;
    o.cp_length = 16;
    o.num_subcarriers = 96;
    o.num_data_symbols = 4;
    o.num_users = 4;
    o.num_antennas = 8;
    return o;
}

UplinkRun run_uplink(const std::string& backend,
                     const mimodet::OfdmConfig& o,
                     const mimodet::test::Stream& s,
                     const std::vector<gr::tag_t>& time_tags,
                     double rate,
                     int max_noutput_items = 0)
{
    auto tb = gr::make_top_block("ofdm_uplink_detector_flowgraph");
    auto det = gr::mimodet::ofdm_uplink_detector::make(static_cast<int>(o.num_antennas),
                                                       static_cast<int>(o.num_users),
                                                       static_cast<int>(o.fft_size),
                                                       static_cast<int>(o.cp_length),
                                                       static_cast<int>(o.num_subcarriers),
                                                       static_cast<int>(o.num_data_symbols),
                                                       "16qam",
                                                       "chol",
                                                       3,
                                                       backend,
                                                       rate);
    if (max_noutput_items > 0)
        det->set_max_noutput_items(max_noutput_items);
    for (std::size_t b = 0; b < o.num_antennas; ++b) {
        auto src = gr::blocks::vector_source_c::make(
            s.rx[b], false, 1, b == 0 ? time_tags : std::vector<gr::tag_t>{});
        tb->connect(src, 0, det, static_cast<int>(b));
    }
    auto sink = gr::blocks::vector_sink_f::make(static_cast<int>(o.dims().llr_items()));
    tb->connect(det, 0, sink, 0);
    tb->run();
    return { sink->data(), sink->tags(), det->implementation(), det->frames(),
             det->gaps(), det->lost_samples() };
}

// BOX at full load (16x16 QPSK), the same frames, tags and work() splits as above.
TEST(GpuFlowgraph, BoxDetectorMatchesTheCpuAcrossChannelChangesAndWorkCalls)
{
    SKIP_WITHOUT_GPU_BACKEND();
    mimodet::ChannelSimConfig c;
    c.num_antennas = 16;
    c.num_users = 16;
    c.num_subcarriers = 48;
    c.symbols_per_frame = 7;
    c.modulation = mimodet::Modulation::qpsk;
    c.snr_db = 16.0;
    c.seed = 37;
    std::vector<cf32> y;
    std::vector<gr::tag_t> tags;
    three_frames(c, y, tags);
    auto box = [&](const std::string& backend) {
        return gr::mimodet::box_detector::make(16, 16, 48, "qpsk", 20, "lmmse", true, 0.0f,
                                               backend);
    };
    expect_gpu_block_matches_cpu(box, "box", c, y, tags);
}

TEST(GpuFlowgraph, OfdmUplinkDetectorMatchesTheCpuAcrossAnRxTimeGap)
{
    SKIP_WITHOUT_GPU_BACKEND();
    const mimodet::OfdmConfig o = small_uplink();
    const double rate = 1e6;
    auto s = mimodet::test::make_stream(o, 25.0, 0.1, 4, 77);
    // rx_time at 0, then a jump of 50 samples between the second and third frames, as
    // UHD tags an overflow: no frame may be assembled across it.
    const uint64_t gap_at = (s.starts[1] + s.starts[2]) / 2 + o.frame_samples() / 2;
    ASSERT_LT(gap_at, s.starts[2]);
    auto rx_time = [&](double seconds) {
        const double whole = std::floor(seconds);
        return pmt::make_tuple(pmt::from_uint64(static_cast<uint64_t>(whole)),
                               pmt::from_double(seconds - whole));
    };
    const std::vector<gr::tag_t> time_tags = {
        make_tag(0, mimodet::kRxTimeTagKey, rx_time(5.0)),
        make_tag(gap_at, mimodet::kRxTimeTagKey, rx_time(5.0 + (gap_at + 50) / rate))
    };
    const UplinkRun cpu = run_uplink("cpu", o, s, time_tags, rate);
    const UplinkRun gpu = run_uplink("cuda", o, s, time_tags, rate);
    EXPECT_EQ(cpu.implementation, "cpu-chol");
    EXPECT_EQ(gpu.implementation, "cuda-chol");
    EXPECT_EQ(cpu.frames, 4u);
    EXPECT_EQ(gpu.frames, cpu.frames);
    EXPECT_EQ(gpu.gaps, 1u);
    EXPECT_EQ(gpu.lost, 50u);
    expect_same_llrs(gpu.llrs, cpu.llrs);
    // The same frame tags at the same items.
    auto offsets = [](const std::vector<gr::tag_t>& tags, const char* key) {
        std::vector<uint64_t> at;
        for (const auto& t : tags)
            if (pmt::symbol_to_string(t.key) == key)
                at.push_back(t.offset);
        return at;
    };
    EXPECT_EQ(offsets(gpu.tags, mimodet::kFrameTagKey),
              offsets(cpu.tags, mimodet::kFrameTagKey));
    EXPECT_EQ(offsets(gpu.tags, mimodet::kFrameTagKey).size(), 4u);
}

// Many work() calls: a stream longer than the block's buffers (the sources are not done
// before it starts), 3 frames per call or as many as fit. Every frame comes out, the
// last ones at the end of the stream, with the CPU's LLRs and tags.
TEST(GpuFlowgraph, OfdmUplinkDetectorMatchesTheCpuOverManyWorkCalls)
{
    SKIP_WITHOUT_GPU_BACKEND();
    const mimodet::OfdmConfig o = small_uplink();
    const int frames = 300;
    auto s = mimodet::test::make_stream(o, 25.0, 0.1, frames, 79);
    const UplinkRun cpu = run_uplink("cpu", o, s, {}, 0.0);
    ASSERT_EQ(cpu.frames, static_cast<uint64_t>(frames));
    for (int per_call : { 0, 3 }) {
        SCOPED_TRACE(per_call ? "3 frames per call" : "as many as fit");
        const UplinkRun gpu = run_uplink(
            "cuda", o, s, {}, 0.0, per_call * static_cast<int>(o.num_data_symbols));
        EXPECT_EQ(gpu.frames, cpu.frames);
        expect_same_llrs(gpu.llrs, cpu.llrs);
        ASSERT_EQ(gpu.tags.size(), cpu.tags.size());
        for (std::size_t i = 0; i < cpu.tags.size(); ++i) {
            EXPECT_EQ(gpu.tags[i].offset, cpu.tags[i].offset) << i;
            EXPECT_EQ(pmt::symbol_to_string(gpu.tags[i].key),
                      pmt::symbol_to_string(cpu.tags[i].key))
                << i;
        }
    }
}

struct ApsmRun {
    std::vector<cf32> symbols;
    std::vector<float> llrs;
    std::vector<gr::tag_t> tags;
    std::string implementation;
    uint64_t trainings = 0, erased = 0;
};

ApsmRun run_apsm(const std::string& backend,
                 int M,
                 int K,
                 const std::vector<cf32>& rx,
                 const std::vector<cf32>& training,
                 int period,
                 int max_items)
{
    auto tb = gr::make_top_block("apsm_receiver_flowgraph");
    auto src = gr::blocks::vector_source_c::make(rx, false, M);
    auto rx_block = gr::mimodet::apsm_receiver::make(M, K, "qpsk", training, period, "", backend);
    rx_block->set_max_noutput_items(max_items);
    auto sym = gr::blocks::vector_sink_c::make(K);
    auto llr = gr::blocks::vector_sink_f::make(2 * K);
    tb->connect(src, 0, rx_block, 0);
    tb->connect(rx_block, 0, sym, 0);
    tb->connect(rx_block, 1, llr, 0);
    tb->run();
    return { sym->data(), llr->data(), sym->tags(), rx_block->backend_name(),
             rx_block->trainings(), rx_block->erased_vectors() };
}

TEST(GpuFlowgraph, ApsmReceiverMatchesTheCpuAcrossTrainingSections)
{
    SKIP_WITHOUT_GPU_BACKEND();
    // Three frames [200 training; 250 data] of 6 QPSK users on 8 antennas through a
    // random channel that changes every frame, with a NaN sample in frame 2's data.
    const int M = 8, K = 6, T = 200, N = 250, period = T + N;
    std::mt19937 gen(17);
    std::normal_distribution<float> g(0.0f, 1.0f);
    const float a = std::sqrt(0.5f);
    auto qpsk = [&] { return cf32(gen() & 1 ? a : -a, gen() & 1 ? a : -a); };
    std::vector<cf32> training(static_cast<std::size_t>(T * K)), rx;
    for (auto& v : training)
        v = qpsk();
    for (int f = 0; f < 3; ++f) {
        std::vector<cf32> h(static_cast<std::size_t>(M * K));
        for (auto& v : h)
            v = cf32(g(gen), g(gen)) * a;
        for (int t = 0; t < period; ++t) {
            std::vector<cf32> x(static_cast<std::size_t>(K));
            for (int k = 0; k < K; ++k)
                x[k] = t < T ? training[static_cast<std::size_t>(t * K + k)] : qpsk();
            for (int m = 0; m < M; ++m) {
                cf32 y = cf32(g(gen), g(gen)) * 0.1f;
                for (int k = 0; k < K; ++k)
                    y += h[static_cast<std::size_t>(m * K + k)] * x[k];
                rx.push_back(y);
            }
        }
    }
    rx[static_cast<std::size_t>((2 * period + T + 7) * M + 3)] = cf32(NAN, 0.0f);
    for (int max_items : { 3, 64 }) {
        SCOPED_TRACE("max_noutput_items " + std::to_string(max_items));
        const ApsmRun cpu = run_apsm("cpu", M, K, rx, training, period, max_items);
        const ApsmRun gpu = run_apsm("cuda", M, K, rx, training, period, max_items);
        EXPECT_EQ(cpu.implementation, "cpu-apsm");
        EXPECT_EQ(gpu.implementation, "cuda-apsm");
        EXPECT_EQ(gpu.trainings, 3u);
        EXPECT_EQ(cpu.trainings, 3u);
        EXPECT_EQ(gpu.erased, 1u);
        ASSERT_EQ(gpu.symbols.size(), cpu.symbols.size());
        ASSERT_EQ(cpu.symbols.size(), static_cast<std::size_t>(3 * period * K));
        std::size_t far = 0;
        for (std::size_t i = 0; i < cpu.symbols.size(); ++i)
            far += !(std::abs(gpu.symbols[i] - cpu.symbols[i]) <= 1e-3f);
        EXPECT_EQ(far, 0u) << "equalised symbols beyond float tolerance";
        expect_same_llrs(gpu.llrs, cpu.llrs);
        // The same "apsm_trained" tags, with the same noise variances to rounding.
        auto trained = [](const std::vector<gr::tag_t>& tags) {
            std::vector<gr::tag_t> out;
            for (const auto& t : tags)
                if (pmt::symbol_to_string(t.key) == "apsm_trained")
                    out.push_back(t);
            return out;
        };
        const auto tc = trained(cpu.tags), tg = trained(gpu.tags);
        ASSERT_EQ(tc.size(), 3u);
        ASSERT_EQ(tg.size(), 3u);
        for (std::size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(tg[i].offset, static_cast<uint64_t>(i * period + T));
            EXPECT_EQ(tc[i].offset, tg[i].offset);
            const std::vector<double> nc = pmt::f64vector_elements(tc[i].value);
            const std::vector<double> ng = pmt::f64vector_elements(tg[i].value);
            ASSERT_EQ(ng.size(), static_cast<std::size_t>(K));
            for (int k = 0; k < K; ++k)
                EXPECT_NEAR(ng[k], nc[k], 1e-9 * nc[k]);
        }
    }
}

} // namespace
