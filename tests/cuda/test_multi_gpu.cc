/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The subcarrier split over several GPU engines (MultiGpuDetector) against one engine and
 * the CPU. {0,0} runs two engines on one GPU, so one GPU tests the whole mechanism; tests
 * that need two GPUs skip themselves on a machine with fewer, and every GPU test skips
 * without a usable GPU (CI).
 */

#include "gpu_skip.h"
#include <cuda/cuda_detector.h>
#include <cuda/multi_gpu_detector.h>
#include <gtest/gtest.h>
#include <mimodet/ber_sim.h>
#include <mimodet/channel_sim.h>
#include <cmath>
#include <limits>

using namespace mimodet;

namespace {

struct Problem {
    DetectorConfig config; // backend cuda
    Frame frame;
    std::size_t nsym;
};

Problem problem(std::size_t nsc, std::size_t nsym, DetectorMode mode, std::uint64_t seed)
{
    ChannelSimConfig s;
    s.num_antennas = 64;
    s.num_users = 8;
    s.num_subcarriers = nsc;
    s.symbols_per_frame = nsym;
    s.modulation = Modulation::qam16;
    s.snr_db = 12.0;
    s.seed = seed;
    Problem p;
    p.config = detector_config_for(s, mode, 3, Backend::cuda);
    p.nsym = nsym;
    ChannelSimulator sim(s);
    sim.next_frame(p.frame);
    return p;
}

struct Outputs {
    std::vector<float> llr;
    std::vector<cf32> x_hat;
};

/*! set_channel + detect with x_hat, through pageable caller buffers (the engines' pinned
 * staging) or pinned ones (DMA straight into the caller's strided rows). Outputs start as
 * NaN, so anything an engine does not write fails the comparisons.
 */
Outputs run(Detector& det, const Frame& f, std::size_t nsym, bool pinned)
{
    const Dims d = det.config().dims();
    const std::size_t n_llr = nsym * d.llr_items(), n_x = nsym * d.symbol_items();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Outputs r;
    if (!pinned) {
        r.llr.assign(n_llr, nan);
        r.x_hat.assign(n_x, cf32(nan, nan));
        det.set_channel(f.h.data(), f.n0);
        det.detect(f.y.data(), nsym, r.llr.data(), r.x_hat.data());
        return r;
    }
    cuda::Buffer<cf32> h(f.h.size(), true), y(f.y.size(), true), x_hat(n_x, true);
    cuda::Buffer<float> llr(n_llr, true);
    std::copy(f.h.begin(), f.h.end(), h.get());
    std::copy(f.y.begin(), f.y.end(), y.get());
    std::fill(llr.get(), llr.get() + n_llr, nan);
    std::fill(x_hat.get(), x_hat.get() + n_x, cf32(nan, nan));
    det.set_channel(h.get(), f.n0);
    det.detect(y.get(), nsym, llr.get(), x_hat.get());
    r.llr.assign(llr.get(), llr.get() + n_llr);
    r.x_hat.assign(x_hat.get(), x_hat.get() + n_x);
    return r;
}

//! The GPU's LLRs and x_hat against the CPU detector's, as in test_cuda_detector.cc.
void expect_close_to_cpu(const Outputs& gpu, const Problem& p, const std::string& what)
{
    DetectorConfig cpu_config = p.config;
    cpu_config.backend = Backend::cpu;
    auto cpu = make_detector(cpu_config);
    const Outputs ref = run(*cpu, p.frame, p.nsym, false);
    ASSERT_EQ(gpu.llr.size(), ref.llr.size());
    double worst = 0, num = 0, den = 0;
    for (std::size_t i = 0; i < gpu.llr.size(); ++i) {
        ASSERT_TRUE(std::isfinite(gpu.llr[i])) << what << ": LLR " << i << " not written";
        const double c = ref.llr[i];
        worst = std::max(worst, std::abs(gpu.llr[i] - c) / std::max(1.0, std::abs(c)));
    }
    for (std::size_t i = 0; i < gpu.x_hat.size(); ++i) {
        num += std::norm(cf64(gpu.x_hat[i]) - cf64(ref.x_hat[i]));
        den += std::norm(cf64(ref.x_hat[i]));
    }
    EXPECT_LT(worst, 2e-3) << what;
    EXPECT_LT(std::sqrt(num / den), 1e-4) << what;
}

std::string describe(const std::vector<int>& devices, DetectorMode mode, bool pinned)
{
    std::string list;
    for (int d : devices)
        list += (list.empty() ? "" : ",") + std::to_string(d);
    return to_string(mode) + " on {" + list + "}" + (pinned ? " pinned" : " pageable");
}

/*! Subcarriers are independent given the channel, and every engine runs the same
 * kernels on its slice with the same symbols per launch, so the split gives exactly the
 * LLRs and x_hat of one engine over the whole frame, as long as the prepare kernel splits
 * each subcarrier's antennas between the same number of warps in both (it chooses by
 * frame size; frames this small always get the most warps). For large frames the two can
 * differ in the summation order of G, i.e. agree to float rounding. 37 subcarriers: no
 * equal split.
 */
void expect_split_equals_one_engine(const std::vector<int>& devices)
{
    for (auto mode : { DetectorMode::chol, DetectorMode::cg }) {
        const Problem p = problem(37, 9, mode, 17);
        cuda::CudaDetector single(p.config);
        const Outputs want = run(single, p.frame, p.nsym, false);
        expect_close_to_cpu(want, p, describe(devices, mode, false) + ", one engine");
        for (bool pinned : { false, true }) {
            const std::string what = describe(devices, mode, pinned);
            cuda::MultiGpuDetector split(p.config, devices);
            ASSERT_EQ(split.slices().size(), devices.size()) << what;
            const Outputs got = run(split, p.frame, p.nsym, pinned);
            EXPECT_EQ(got.llr, want.llr) << what;
            EXPECT_EQ(got.x_hat, want.x_hat) << what;
            expect_close_to_cpu(got, p, what);
            // The equalizer gains too, each slice's at its subcarriers.
            const std::size_t items = p.config.dims().symbol_items();
            std::vector<float> su(items, NAN), ss(items, NAN), wu(items), ws(items);
            ASSERT_TRUE(split.equalizer_gains(su.data(), ss.data())) << what;
            ASSERT_TRUE(single.equalizer_gains(wu.data(), ws.data())) << what;
            EXPECT_EQ(su, wu) << what;
            EXPECT_EQ(ss, ws) << what;
        }
    }
}

void expect_same_stats(const DetectorStats& a, const DetectorStats& b, const char* what)
{
    EXPECT_EQ(a.channels, b.channels) << what;
    EXPECT_EQ(a.symbols, b.symbols) << what;
    EXPECT_EQ(a.bad_channel_subcarriers, b.bad_channel_subcarriers) << what;
    EXPECT_EQ(a.unusable_user_channels, b.unusable_user_channels) << what;
    EXPECT_EQ(a.bad_sample_vectors, b.bad_sample_vectors) << what;
    EXPECT_EQ(a.regularized_subcarriers, b.regularized_subcarriers) << what;
    EXPECT_EQ(a.invalid_noise_variance, b.invalid_noise_variance) << what;
}

} // namespace

TEST(MultiGpuDetector, SlicesAreContiguousAndNearEqual)
{
    // No GPU needed: the split itself.
    const auto three = cuda::split_subcarriers(37, { 0, 0, 1 });
    ASSERT_EQ(three.size(), 3u);
    const std::size_t want_first[] = { 0, 13, 25 }, want_count[] = { 13, 12, 12 };
    const int want_device[] = { 0, 0, 1 };
    for (std::size_t k = 0; k < 3; ++k) {
        EXPECT_EQ(three[k].first, want_first[k]) << k;
        EXPECT_EQ(three[k].count, want_count[k]) << k;
        EXPECT_EQ(three[k].device, want_device[k]) << k;
    }
    const auto nr_slot = cuda::split_subcarriers(3276, { 0, 1 });
    ASSERT_EQ(nr_slot.size(), 2u);
    EXPECT_EQ(nr_slot[0].count, 1638u);
    EXPECT_EQ(nr_slot[1].first, 1638u);
    // Fewer subcarriers than devices: the devices at the end get none and are left out.
    const auto short_frame = cuda::split_subcarriers(2, { 3, 1, 2 });
    ASSERT_EQ(short_frame.size(), 2u);
    EXPECT_EQ(short_frame[1].device, 1);
    EXPECT_EQ(short_frame[1].first, 1u);
    EXPECT_EQ(short_frame[1].count, 1u);
}

TEST(MultiGpuDetector, SplitOnOneGpuGivesTheLlrsOfOneEngine)
{
    SKIP_WITHOUT_GPUS(1);
    expect_split_equals_one_engine({ 0, 0 });
    expect_split_equals_one_engine({ 0, 0, 0 });
}

TEST(MultiGpuDetector, SplitOverTwoGpusGivesTheLlrsOfOneEngine)
{
    SKIP_WITHOUT_GPUS(2);
    expect_split_equals_one_engine({ 0, 1 });
    expect_split_equals_one_engine({ 1, 0, 1 });
}

TEST(MultiGpuDetector, PipelinedChunksInEverySliceMatchOneEngine)
{
    // Several chunks per engine over 2 streams, so slots are reused mid-call and each
    // chunk's rows are copied to and from strided caller rows (staged and DMA).
    SKIP_WITHOUT_GPUS(1);
    for (auto mode : { DetectorMode::chol, DetectorMode::cg }) {
        const Problem p = problem(37, 11, mode, 23);
        const std::size_t b = p.config.num_antennas;
        cuda::EngineOptions one_opt;
        one_opt.streams = 2;
        one_opt.chunk_bytes = 3 * 37 * b * sizeof(cf32); // 3 symbols per chunk
        cuda::CudaDetector single(p.config, one_opt);
        const Outputs want = run(single, p.frame, p.nsym, false);
        cuda::EngineOptions split_opt = one_opt;
        // Slices of 19 and 18 subcarriers: 3 symbols per chunk in both, as above, so
        // every launch sees the same symbols (chunks of 3, 3, 3, 2).
        split_opt.chunk_bytes = 3 * 19 * b * sizeof(cf32);
        for (bool pinned : { false, true }) {
            const std::string what = describe({ 0, 0 }, mode, pinned) + ", chunked";
            cuda::MultiGpuDetector split(p.config, { 0, 0 }, split_opt);
            const Outputs got = run(split, p.frame, p.nsym, pinned);
            EXPECT_EQ(got.llr, want.llr) << what;
            EXPECT_EQ(got.x_hat, want.x_hat) << what;
            expect_close_to_cpu(got, p, what);
        }
    }
}

TEST(MultiGpuDetector, StatsAreThoseOfOneEngine)
{
    // Bad inputs in both slices (19 + 18 subcarriers); the per-subcarrier counters add
    // up over the slices, the per-call counters (channels, symbols, invalid N0) do not.
    SKIP_WITHOUT_GPUS(1);
    Problem p = problem(37, 4, DetectorMode::chol, 29);
    const Dims d = p.config.dims();
    Frame& f = p.frame;
    f.h[d.channel_index(2, 5, 1)] = cf32(NAN, 0.0f);                 // slice 0
    f.h[d.channel_index(30, 0, 0)] = cf32(0.0f, INFINITY);           // slice 1
    f.y[1 * d.rx_items() + d.rx_index(25, 3)] = cf32(NAN, 0.0f);     // slice 1
    f.y[3 * d.rx_items() + d.rx_index(7, 0)] = cf32(INFINITY, 0.0f); // slice 0
    for (std::size_t b = 0; b < d.num_antennas; ++b)
        f.h[d.channel_index(20, b, 3)] = cf32(0.0f, 0.0f); // user 3 dead on sc 20
    cuda::CudaDetector single(p.config);
    cuda::MultiGpuDetector split(p.config, { 0, 0 });
    const Outputs want = run(single, f, p.nsym, false);
    const Outputs got = run(split, f, p.nsym, false);
    EXPECT_EQ(got.llr, want.llr);
    const DetectorStats s = split.stats();
    expect_same_stats(s, single.stats(), "bad inputs");
    EXPECT_EQ(s.channels, 1u);
    EXPECT_EQ(s.symbols, p.nsym);
    EXPECT_EQ(s.bad_channel_subcarriers, 2u);
    EXPECT_EQ(s.bad_sample_vectors, 2u);
    EXPECT_EQ(s.unusable_user_channels, 1u);
    // An invalid N0 erases every subcarrier of every slice, counted once as a call.
    single.set_channel(f.h.data(), -1.0f);
    split.set_channel(f.h.data(), -1.0f);
    expect_same_stats(split.stats(), single.stats(), "invalid N0");
    EXPECT_EQ(split.stats().invalid_noise_variance, 1u);
    EXPECT_EQ(split.stats().bad_channel_subcarriers, 2u + 37u);
}

TEST(MultiGpuDetector, FactoryBuildsOneEngineOrASplitFromTheConfig)
{
    SKIP_WITHOUT_GPUS(1);
    Problem p = problem(37, 5, DetectorMode::cg, 31);
    p.config.streams = 1;
    EXPECT_EQ(make_detector(p.config)->name(), "cuda-cg"); // empty list: device 0
    p.config.devices = { 0 };
    EXPECT_EQ(make_detector(p.config)->name(), "cuda-cg"); // one entry: no split
    p.config.devices = { 0, 0 };
    auto split = make_detector(p.config);
    EXPECT_EQ(split->name(), "cuda-cg x2 GPUs (0,0)");
    EXPECT_EQ(split->config().streams, 1);
    EXPECT_EQ(split->config().num_subcarriers, 37u); // the whole frame, not a slice
    cuda::CudaDetector single(p.config);
    EXPECT_EQ(run(*split, p.frame, p.nsym, false).llr,
              run(single, p.frame, p.nsym, false).llr);
    EXPECT_THROW(make_detector(p.config)->detect(p.frame.y.data(), 1, nullptr),
                 std::logic_error); // no channel yet
}

TEST(MultiGpuDetector, MissingDeviceIsAClearError)
{
    SKIP_WITHOUT_GPUS(1);
    const int missing = cuda::device_count();
    const std::string named = "device " + std::to_string(missing);
    Problem p = problem(16, 2, DetectorMode::chol, 37);
    try {
        cuda::MultiGpuDetector split(p.config, { 0, missing });
        FAIL() << "a missing device was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(named + " does not exist"),
                  std::string::npos)
            << e.what();
    }
    for (const std::vector<int>& devices :
         { std::vector<int>{ 0, missing }, std::vector<int>{ missing } }) {
        p.config.devices = devices;
        p.config.backend = Backend::cuda;
        try {
            make_detector(p.config);
            FAIL() << "backend cuda accepted a missing device";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
        }
        p.config.backend = Backend::automatic; // the usual fallback, with the reason
        std::string reason;
        EXPECT_EQ(make_detector(p.config, &reason)->name(), "cpu-chol");
        EXPECT_NE(reason.find(named), std::string::npos) << reason;
    }
}
