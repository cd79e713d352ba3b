/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The blocks' setters and getters called from other threads while GNU Radio's scheduler
 * runs work(), as GRC callbacks and Python threads call them: per block (CPU backend,
 * small sizes) one thread calls every public setter with changing valid values and every
 * getter, a second every getter, until the flowgraph ends. The flowgraph must end within
 * a deadline with the items its input implies, all finite, counters that only grow, and
 * getters that give what was last set. Under ThreadSanitizer (-DMIMODET_SANITIZE=thread)
 * the same runs look for data races between the setters and work(). */

#include "ofdm_stream.h"
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/throttle.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/mimodet/apsm_receiver.h>
#include <gnuradio/mimodet/box_detector.h>
#include <gnuradio/mimodet/fsd_detector.h>
#include <gnuradio/mimodet/mimo_channel_sim.h>
#include <gnuradio/mimodet/mmse_detector.h>
#include <gnuradio/mimodet/ofdm_uplink_detector.h>
#include <gnuradio/mimodet/ofdm_uplink_receiver.h>
#include <gnuradio/top_block.h>
#include <gtest/gtest.h>
#include <mimodet/channel_sim.h>
#include <mimodet/layout.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <future>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using cf32 = std::complex<float>;
using namespace std::chrono_literals;

//! Built with ThreadSanitizer (gcc or clang).
constexpr bool thread_sanitizer()
{
#if defined(__SANITIZE_THREAD__)
    return true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return true;
#endif
#endif
    return false;
}

// A block's input at a radio's pace (a throttle) for about this long, as flowgraphs run:
// fed as fast as it goes, work() holds the block's mutex nearly all the time and a
// setter waits many calls for it (std::mutex is not fair).
constexpr double kPacedSeconds = 1.0;
//! Item counts sized for well under kPacedSeconds of work() (2 cores); ThreadSanitizer
//! runs 10x slower, and far slower around OpenMP teams (apsm_receiver,
//! ofdm_uplink_detector).
constexpr std::uint64_t scaled(std::uint64_t n) { return thread_sanitizer() ? n / 8 : n; }
// A flowgraph that has not ended by then hangs.
constexpr auto kDeadline = thread_sanitizer() ? 300s : 60s;
// Between two rounds of calls: many rounds per run, without starving work() of the
// block's mutex or of the two cores.
constexpr auto kPause = 200us;

#ifdef MIMODET_TSAN_SUPPRESSIONS
// tests/tsan.supp also when gtest_discover_tests lists the tests at build time, where a
// report at exit would fail the build; the longest history keeps the OpenMP threads'
// stacks for it. TSAN_OPTIONS still overrides both.
extern "C" __attribute__((visibility("default"))) const char* __tsan_default_options()
{
    return "history_size=7 suppressions=" MIMODET_TSAN_SUPPRESSIONS;
}
#endif

gr::tag_t make_tag(uint64_t offset, const char* key, pmt::pmt_t value)
{
    gr::tag_t t;
    t.offset = offset;
    t.key = pmt::intern(key);
    t.value = value;
    t.srcid = pmt::PMT_F;
    return t;
}

//! A getter's value that breaks an invariant: ends that thread's loop, the test fails.
void check(bool ok, const std::string& what)
{
    if (!ok)
        throw std::runtime_error(what);
}

template <class T>
bool one_of(const T& v, const std::vector<T>& values)
{
    return std::find(values.begin(), values.end(), v) != values.end();
}

bool all_finite(const std::vector<float>& v)
{
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

bool all_finite(const std::vector<cf32>& v)
{
    return std::all_of(v.begin(), v.end(), [](cf32 x) {
        return std::isfinite(x.real()) && std::isfinite(x.imag());
    });
}

//! A counter that must never go back (cumulative across rebuilds).
class monotonic
{
public:
    explicit monotonic(const char* name) : d_name(name) {}
    void operator()(std::uint64_t v)
    {
        check(v >= d_last,
              std::string(d_name) + " went back from " + std::to_string(d_last) + " to " +
                  std::to_string(v));
        d_last = v;
    }

private:
    const char* d_name;
    std::uint64_t d_last = 0;
};

struct PokeRun {
    bool finished = false;           // the flowgraph ended before the deadline
    double seconds = 0.0;            // start() to its end
    std::uint64_t setter_rounds = 0; // rounds of every setter and getter
    std::uint64_t getter_rounds = 0; // rounds of the getters-only thread
    std::string error;               // the first exception of either thread
};

/*! Starts `tb`; one thread calls setters(round) then getters() and another
 * more_getters(), each in a loop until the flowgraph ends (or the deadline passes: then
 * it is stopped). Each thread has its own copy of its functors, which may keep state. */
template <class Setters, class Getters, class MoreGetters>
PokeRun run_while_poking(const gr::top_block_sptr& tb,
                         Setters setters,
                         Getters getters,
                         MoreGetters more_getters)
{
    PokeRun r;
    std::atomic<bool> done{ false };
    std::mutex error_mutex;
    auto loop = [&](std::uint64_t& rounds, auto&& body) {
        try {
            for (; !done; ++rounds) {
                body(rounds);
                std::this_thread::sleep_for(kPause);
            }
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (r.error.empty())
                r.error = e.what();
        }
    };
    const auto t0 = std::chrono::steady_clock::now();
    tb->start();
    auto ended = std::async(std::launch::async, [&] { tb->wait(); });
    std::thread setter([&] {
        loop(r.setter_rounds, [&](std::uint64_t round) {
            setters(round);
            getters();
        });
    });
    std::thread getter(
        [&] { loop(r.getter_rounds, [&](std::uint64_t) { more_getters(); }); });
    r.finished = ended.wait_for(kDeadline) == std::future_status::ready;
    if (!r.finished) {
        tb->stop();
        ended.wait();
    }
    r.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    done = true;
    setter.join();
    getter.join();
    return r;
}

void expect_poked(const PokeRun& r)
{
    EXPECT_TRUE(r.finished) << "the flowgraph did not end within the deadline";
    EXPECT_EQ(r.error, "");
    // (tens to hundreds of rounds on an idle machine; a loaded one may leave work()
    // behind its throttle, and then the block's mutex starves the setters: a low bound)
    EXPECT_GE(r.setter_rounds, 2u) << "no setter calls while work() ran";
    EXPECT_GE(r.getter_rounds, 2u);
    std::printf("  %.2f s, %llu setter rounds, %llu getter rounds\n",
                r.seconds,
                static_cast<unsigned long long>(r.setter_rounds),
                static_cast<unsigned long long>(r.getter_rounds));
}

//! Frames of the simulator with their channel and N0 tags on each frame's first item.
struct Frames {
    std::vector<cf32> y;
    std::vector<gr::tag_t> tags;
};

Frames simulate(const mimodet::ChannelSimConfig& c, int frames)
{
    Frames out;
    mimodet::ChannelSimulator sim(c);
    for (int f = 0; f < frames; ++f) {
        mimodet::Frame frame;
        sim.next_frame(frame);
        const uint64_t first = static_cast<uint64_t>(f) * c.symbols_per_frame;
        out.tags.push_back(make_tag(first,
                                    mimodet::kChannelTagKey,
                                    pmt::init_c32vector(frame.h.size(), frame.h)));
        out.tags.push_back(
            make_tag(first, mimodet::kNoiseVarTagKey, pmt::from_double(frame.n0)));
        out.y.insert(out.y.end(), frame.y.begin(), frame.y.end());
    }
    return out;
}

/*! `items` items of `frames`, repeated with their tags, through a detector block into a
 * vector sink of its LLRs, while the functors run; returns the LLRs. */
template <class Block, class Setters, class Getters, class MoreGetters>
std::vector<float> run_detector(const std::shared_ptr<Block>& det,
                                const mimodet::ChannelSimConfig& c,
                                const Frames& frames,
                                std::uint64_t items,
                                PokeRun& poked,
                                Setters setters,
                                Getters getters,
                                MoreGetters more_getters)
{
    const mimodet::Dims d = c.dims();
    const int item = static_cast<int>(d.rx_items());
    auto tb = gr::make_top_block("setters_while_work");
    auto src = gr::blocks::vector_source_c::make(frames.y, true, item, frames.tags);
    auto head = gr::blocks::head::make(sizeof(gr_complex) * item, items);
    auto throttle = gr::blocks::throttle::make(
        sizeof(gr_complex) * item, static_cast<double>(items) / kPacedSeconds);
    // Frame boundaries inside work() calls, and many calls for the setters to fall
    // between.
    det->set_max_noutput_items(static_cast<int>(c.symbols_per_frame) + 2);
    auto sink = gr::blocks::vector_sink_f::make(static_cast<int>(d.llr_items()));
    tb->connect(src, 0, head, 0);
    tb->connect(head, 0, throttle, 0);
    tb->connect(throttle, 0, det, 0);
    tb->connect(det, 0, sink, 0);
    poked = run_while_poking(tb, setters, getters, more_getters);
    return sink->data();
}

mimodet::ChannelSimConfig small_uplink(mimodet::Modulation m)
{
    mimodet::ChannelSimConfig c;
    c.num_antennas = 8;
    c.num_users = 4;
    c.num_subcarriers = 16;
    c.symbols_per_frame = 4;
    c.modulation = m;
    c.snr_db = 15.0;
    c.seed = 23;
    return c;
}

const std::vector<std::string> kPrecisions = {
    "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"
};

//! A detector's implementation() for its mode's name and storage precision.
std::string implementation_of(const std::string& detector, const std::string& precision)
{
    return detector + (precision == "fp32" ? "" : "-" + precision);
}

TEST(BlockSetters, MmseDetectorWhileWorkRuns)
{
    const auto c = small_uplink(mimodet::Modulation::qam16);
    const Frames frames = simulate(c, 16);
    const std::uint64_t nframes = scaled(4000), items = nframes * c.symbols_per_frame;
    auto det = gr::mimodet::mmse_detector::make(
        8, 4, 16, "16qam", "chol", 3, "cpu", true, 0.0f, 1);
    const std::vector<std::string> modes = { "chol", "cg", "cr", "zf" };
    struct {
        std::string mode = "chol", precision = "fp32";
        int iterations = 3;
    } last;
    auto setters = [&](std::uint64_t round) {
        last.mode = modes[round % modes.size()];
        det->set_mode(last.mode);
        last.iterations = 1 + static_cast<int>(round % 3);
        det->set_iterations(last.iterations);
        last.precision = kPrecisions[round % kPrecisions.size()];
        det->set_precision(last.precision);
    };
    auto getters = [&, updates = monotonic("channel_updates()")]() mutable {
        check(one_of(det->mode(), modes), "mode() " + det->mode());
        const int it = det->iterations();
        check(it >= 1 && it <= 3, "iterations() " + std::to_string(it));
        check(one_of(det->precision(), kPrecisions), "precision() " + det->precision());
        check(det->llr_type() == "float", "llr_type() " + det->llr_type());
        check(det->implementation().rfind("cpu-", 0) == 0,
              "implementation() " + det->implementation());
        updates(det->channel_updates());
        det->bad_channel_subcarriers();
        det->bad_sample_vectors();
        det->regularized_subcarriers();
        det->unusable_user_channels();
        check(det->erased_items() == 0,
              "erased_items() " + std::to_string(det->erased_items()));
    };
    PokeRun poked;
    const auto llrs =
        run_detector(det, c, frames, items, poked, setters, getters, getters);
    expect_poked(poked);
    EXPECT_EQ(llrs.size(), items * c.dims().llr_items());
    EXPECT_TRUE(all_finite(llrs));
    // What was last set, and one channel update per frame: a rebuild re-applies the
    // channel in force without counting it.
    EXPECT_EQ(det->mode(), last.mode);
    EXPECT_EQ(det->iterations(), last.iterations);
    EXPECT_EQ(det->precision(), last.precision);
    EXPECT_EQ(det->implementation(),
              implementation_of("cpu-" + last.mode, last.precision));
    EXPECT_EQ(det->channel_updates(), nframes);
    EXPECT_EQ(det->erased_items(), 0u);
    EXPECT_EQ(det->bad_sample_vectors(), 0u);
}

TEST(BlockSetters, FsdDetectorWhileWorkRuns)
{
    const auto c = small_uplink(mimodet::Modulation::qam16);
    const Frames frames = simulate(c, 16);
    const std::uint64_t nframes = scaled(1500), items = nframes * c.symbols_per_frame;
    auto det = gr::mimodet::fsd_detector::make(
        8, 4, 16, "16qam", "soft", 0, 0, "cpu", true, 0.0f, 1);
    const std::vector<std::string> outputs = { "soft", "hard" };
    const int full_levels = det->full_levels();
    struct {
        std::string output = "soft", precision = "fp32";
        int list_paths = 4; // 0 at make(): 16-QAM's default
    } last;
    auto setters = [&](std::uint64_t round) {
        last.output = outputs[round % outputs.size()];
        det->set_output(last.output);
        // 0 (the default, 4 for 16-QAM) and 1..6
        const int paths = static_cast<int>(round % 7);
        det->set_list_paths(paths);
        last.list_paths = paths == 0 ? 4 : paths;
        last.precision = kPrecisions[round % kPrecisions.size()];
        det->set_precision(last.precision);
    };
    auto getters = [&, updates = monotonic("channel_updates()")]() mutable {
        check(one_of(det->output(), outputs), "output() " + det->output());
        const int paths = det->list_paths();
        check(paths >= 1 && paths <= 6, "list_paths() " + std::to_string(paths));
        check(det->full_levels() == full_levels,
              "full_levels() " + std::to_string(det->full_levels()));
        check(one_of(det->precision(), kPrecisions), "precision() " + det->precision());
        check(det->llr_type() == "float", "llr_type() " + det->llr_type());
        check(det->implementation().rfind("cpu-", 0) == 0,
              "implementation() " + det->implementation());
        updates(det->channel_updates());
        det->bad_channel_subcarriers();
        det->bad_sample_vectors();
        det->regularized_subcarriers();
        det->unusable_user_channels();
        check(det->erased_items() == 0,
              "erased_items() " + std::to_string(det->erased_items()));
    };
    PokeRun poked;
    const auto llrs =
        run_detector(det, c, frames, items, poked, setters, getters, getters);
    expect_poked(poked);
    EXPECT_EQ(llrs.size(), items * c.dims().llr_items());
    EXPECT_TRUE(all_finite(llrs));
    EXPECT_EQ(det->output(), last.output);
    EXPECT_EQ(det->list_paths(), last.list_paths);
    EXPECT_EQ(det->precision(), last.precision);
    EXPECT_EQ(det->implementation(),
              implementation_of(last.output == "soft" ? "cpu-sfsd" : "cpu-fsd",
                                last.precision));
    EXPECT_EQ(det->channel_updates(), nframes);
    EXPECT_EQ(det->erased_items(), 0u);
    EXPECT_EQ(det->bad_sample_vectors(), 0u);
}

TEST(BlockSetters, BoxDetectorWhileWorkRuns)
{
    const auto c = small_uplink(mimodet::Modulation::qpsk);
    const Frames frames = simulate(c, 16);
    const std::uint64_t nframes = scaled(3000), items = nframes * c.symbols_per_frame;
    auto det = gr::mimodet::box_detector::make(
        8, 4, 16, "qpsk", 20, "lmmse", true, 0.0f, "cpu", true, 0.0f, 1);
    const std::vector<std::string> starts = { "lmmse", "mf", "zero" };
    const std::vector<float> steps = { 0.0f, 0.01f, 0.05f };
    struct {
        int iterations = 20;
        std::string start = "lmmse", precision = "fp32";
        bool accelerated = true;
        float step = 0.0f;
    } last;
    auto setters = [&](std::uint64_t round) {
        last.iterations = 1 + static_cast<int>(round % 30);
        det->set_iterations(last.iterations);
        last.start = starts[round % starts.size()];
        det->set_start(last.start);
        last.accelerated = round % 2 == 0;
        det->set_accelerated(last.accelerated);
        last.step = steps[(round / 2) % steps.size()];
        det->set_step(last.step);
        last.precision = kPrecisions[round % kPrecisions.size()];
        det->set_precision(last.precision);
    };
    auto getters = [&, updates = monotonic("channel_updates()")]() mutable {
        const int it = det->iterations();
        check(it >= 1 && it <= 30, "iterations() " + std::to_string(it));
        check(one_of(det->start(), starts), "start() " + det->start());
        det->accelerated();
        check(one_of(det->step(), steps), "step() " + std::to_string(det->step()));
        check(one_of(det->precision(), kPrecisions), "precision() " + det->precision());
        check(det->llr_type() == "float", "llr_type() " + det->llr_type());
        check(det->implementation().rfind("cpu-box", 0) == 0,
              "implementation() " + det->implementation());
        updates(det->channel_updates());
        det->bad_channel_subcarriers();
        det->bad_sample_vectors();
        det->regularized_subcarriers();
        det->unusable_user_channels();
        check(det->erased_items() == 0,
              "erased_items() " + std::to_string(det->erased_items()));
    };
    PokeRun poked;
    const auto llrs =
        run_detector(det, c, frames, items, poked, setters, getters, getters);
    expect_poked(poked);
    EXPECT_EQ(llrs.size(), items * c.dims().llr_items());
    EXPECT_TRUE(all_finite(llrs));
    EXPECT_EQ(det->iterations(), last.iterations);
    EXPECT_EQ(det->start(), last.start);
    EXPECT_EQ(det->accelerated(), last.accelerated);
    EXPECT_EQ(det->step(), last.step);
    EXPECT_EQ(det->precision(), last.precision);
    EXPECT_EQ(det->implementation(), implementation_of("cpu-box", last.precision));
    EXPECT_EQ(det->channel_updates(), nframes);
    EXPECT_EQ(det->erased_items(), 0u);
    EXPECT_EQ(det->bad_sample_vectors(), 0u);
}

TEST(BlockSetters, ApsmReceiverWhileWorkRuns)
{
    // Frames [T training; N data] of 4 QPSK users on 8 antennas, a new channel each
    // frame, the same training symbols in every frame; sections every T + N items.
    const int M = 8, K = 4, T = 64, N = 192, period = T + N, distinct = 4;
    std::mt19937 gen(29);
    std::normal_distribution<float> g(0.0f, 1.0f);
    const float a = std::sqrt(0.5f);
    auto qpsk = [&] { return cf32(gen() & 1 ? a : -a, gen() & 1 ? a : -a); };
    std::vector<cf32> training(static_cast<std::size_t>(T * K)), rx;
    for (auto& v : training)
        v = qpsk();
    for (int f = 0; f < distinct; ++f) {
        std::vector<cf32> h(static_cast<std::size_t>(M * K));
        for (auto& v : h)
            v = cf32(g(gen), g(gen)) * a;
        for (int t = 0; t < period; ++t) {
            std::vector<cf32> x(static_cast<std::size_t>(K));
            for (int k = 0; k < K; ++k)
                x[k] = t < T ? training[static_cast<std::size_t>(t * K + k)] : qpsk();
            for (int m = 0; m < M; ++m) {
                cf32 y = cf32(g(gen), g(gen)) * 0.05f;
                for (int k = 0; k < K; ++k)
                    y += h[static_cast<std::size_t>(m * K + k)] * x[k];
                rx.push_back(y);
            }
        }
    }
    // The other symbols the setter gives: the first 48 vectors of the section (still
    // what was sent from its start, T' >= M).
    const std::vector<cf32> shorter(training.begin(), training.begin() + 48 * K);
    const std::uint64_t items = scaled(160) * period;

    auto tb = gr::make_top_block("apsm_setters_while_work");
    auto src = gr::blocks::vector_source_c::make(rx, true, M);
    auto head = gr::blocks::head::make(sizeof(gr_complex) * M, items);
    auto throttle = gr::blocks::throttle::make(
        sizeof(gr_complex) * M, static_cast<double>(items) / kPacedSeconds);
    auto det =
        gr::mimodet::apsm_receiver::make(M, K, "qpsk", training, period, "", "cpu");
    det->set_max_noutput_items(T / 2 + 3);
    auto sym = gr::blocks::vector_sink_c::make(K);
    auto llr = gr::blocks::vector_sink_f::make(2 * K);
    tb->connect(src, 0, head, 0);
    tb->connect(head, 0, throttle, 0);
    tb->connect(throttle, 0, det, 0);
    tb->connect(det, 0, sym, 0);
    tb->connect(det, 1, llr, 0);

    std::vector<cf32> last = training;
    std::uint64_t retrains = 0;
    auto setters = [&](std::uint64_t round) {
        last = round % 2 ? shorter : training;
        det->set_training_symbols(last);
        if (round % 16 == 3) { // a section from the next work() call's first item
            det->retrain();
            ++retrains;
        }
    };
    auto getters = [&,
                    trainings = monotonic("trainings()"),
                    untrained = monotonic("untrained_vectors()")]() mutable {
        const auto s = det->training_symbols();
        check(s == training || s == shorter,
              "training_symbols() of " + std::to_string(s.size()) + " values");
        trainings(det->trainings());
        untrained(det->untrained_vectors());
        check(det->training_failures() == 0,
              "training_failures() " + std::to_string(det->training_failures()));
        check(det->erased_vectors() == 0,
              "erased_vectors() " + std::to_string(det->erased_vectors()));
        check(det->linear_fallbacks() <= static_cast<std::uint64_t>(K),
              "linear_fallbacks() " + std::to_string(det->linear_fallbacks()));
        const auto n0 = det->noise_variance();
        check(n0.size() == static_cast<std::size_t>(K) &&
                  std::all_of(n0.begin(),
                              n0.end(),
                              [](double v) { return std::isfinite(v) && v >= 0.0; }),
              "noise_variance()");
        check(det->backend_name() == "cpu-apsm", "backend_name() " + det->backend_name());
    };
    const PokeRun poked = run_while_poking(tb, setters, getters, getters);
    expect_poked(poked);
    EXPECT_GE(retrains, 1u);
    const auto symbols = sym->data();
    const auto llrs = llr->data();
    EXPECT_EQ(symbols.size(), items * K);
    EXPECT_EQ(llrs.size(), items * 2 * K);
    EXPECT_TRUE(all_finite(symbols));
    EXPECT_TRUE(all_finite(llrs));
    EXPECT_EQ(det->training_symbols(), last);
    EXPECT_EQ(det->training_failures(), 0u);
    EXPECT_EQ(det->erased_vectors(), 0u);
    // No training can end before the first section's vectors (48 or T).
    EXPECT_GE(det->untrained_vectors(), shorter.size() / K);
    EXPECT_GE(det->trainings(), 1u);
    // One "apsm_trained" tag per training, but for one that ended on the last item.
    std::uint64_t tagged = 0;
    for (const auto& t : sym->tags())
        tagged += pmt::symbol_to_string(t.key) == "apsm_trained";
    EXPECT_LE(tagged, det->trainings());
    EXPECT_GE(tagged + 1, det->trainings());
}

TEST(BlockSetters, MimoChannelSimWhileWorkRuns)
{
    const int B = 8, U = 4, N_sc = 16, symbols = 4;
    const std::uint64_t frames = scaled(8000);
    auto sim = gr::mimodet::mimo_channel_sim::make(
        B, U, N_sc, symbols, "16qam", 10.0, "rayleigh", 0.0, 5, frames);
    auto tb = gr::make_top_block("channel_sim_setters_while_work");
    auto y = gr::blocks::vector_sink_c::make(N_sc * B);
    auto bits = gr::blocks::vector_sink_b::make(N_sc * U * 4);
    sim->set_max_noutput_items(2 * symbols);
    tb->connect(sim, 0, y, 0);
    tb->connect(sim, 1, bits, 0);

    const std::vector<double> snrs = { 10.0, 0.0, 5.5, 20.0, -3.0 };
    double last = 10.0;
    auto setters = [&](std::uint64_t round) {
        last = snrs[round % snrs.size()];
        sim->set_snr_db(last);
    };
    auto getters = [&, counted = monotonic("frames()")]() mutable {
        check(one_of(sim->snr_db(), snrs), "snr_db() " + std::to_string(sim->snr_db()));
        const std::uint64_t f = sim->frames();
        counted(f);
        check(f <= frames, "frames() " + std::to_string(f));
    };
    const PokeRun poked = run_while_poking(tb, setters, getters, getters);
    expect_poked(poked);
    EXPECT_EQ(sim->frames(), frames);
    EXPECT_EQ(sim->snr_db(), last);
    const auto samples = y->data();
    EXPECT_EQ(samples.size(), frames * symbols * N_sc * B);
    EXPECT_TRUE(all_finite(samples));
    EXPECT_EQ(bits->data().size(), frames * symbols * N_sc * U * 4);
    // Every frame's N0 is U / SNR of one SNR that was set: none from a torn update.
    std::uint64_t n0_tags = 0, unknown = 0;
    for (const auto& t : y->tags()) {
        if (pmt::symbol_to_string(t.key) != mimodet::kNoiseVarTagKey)
            continue;
        ++n0_tags;
        const double n0 = pmt::to_double(t.value);
        unknown += std::none_of(snrs.begin(), snrs.end(), [&](double snr) {
            return std::abs(n0 - U / std::pow(10.0, snr / 10.0)) <= 1e-5 * n0;
        });
    }
    EXPECT_EQ(n0_tags, frames);
    EXPECT_EQ(unknown, 0u);
}

//! OFDM frames with an rx_time tag at 0 and a jump of 50 samples before frame F/2.
struct TimedStream {
    mimodet::test::Stream s;
    std::vector<gr::tag_t> time_tags;
};

TimedStream timed_stream(const mimodet::OfdmConfig& o, int frames, double rate)
{
    TimedStream t{ mimodet::test::make_stream(o, 25.0, 0.1, frames, 41, 0), {} };
    const std::size_t f = static_cast<std::size_t>(frames / 2);
    const uint64_t gap_at =
        (t.s.starts[f - 1] + t.s.starts[f]) / 2 + o.frame_samples() / 2;
    auto rx_time = [](double seconds) {
        const double whole = std::floor(seconds);
        return pmt::make_tuple(pmt::from_uint64(static_cast<uint64_t>(whole)),
                               pmt::from_double(seconds - whole));
    };
    t.time_tags = {
        make_tag(0, mimodet::kRxTimeTagKey, rx_time(5.0)),
        make_tag(gap_at, mimodet::kRxTimeTagKey, rx_time(5.0 + (gap_at + 50) / rate))
    };
    return t;
}

//! The stream's antennas into `block`'s inputs, antenna 0 (the others follow) paced.
void connect_antennas(const gr::top_block_sptr& tb,
                      const gr::basic_block_sptr& block,
                      const TimedStream& t)
{
    auto throttle = gr::blocks::throttle::make(
        sizeof(gr_complex), static_cast<double>(t.s.rx[0].size()) / kPacedSeconds);
    for (std::size_t b = 0; b < t.s.rx.size(); ++b) {
        auto src = gr::blocks::vector_source_c::make(
            t.s.rx[b], false, 1, b == 0 ? t.time_tags : std::vector<gr::tag_t>{});
        if (b == 0) {
            tb->connect(src, 0, throttle, 0);
            tb->connect(throttle, 0, block, 0);
        } else {
            tb->connect(src, 0, block, static_cast<int>(b));
        }
    }
}

mimodet::OfdmConfig small_ofdm()
{
    mimodet::OfdmConfig o;
    o.fft_size = 64;
    o.cp_length = 16;
    o.num_subcarriers = 48;
    o.num_data_symbols = 4;
    o.num_users = 2;
    o.num_antennas = 4;
    return o;
}

// The receive-chain blocks have no setters: both threads call every getter.
TEST(BlockSetters, OfdmUplinkDetectorGettersWhileWorkRuns)
{
    const auto o = small_ofdm();
    const double rate = 1e6;
    const int frames = static_cast<int>(scaled(600));
    const TimedStream t = timed_stream(o, frames, rate);
    ASSERT_LT(t.time_tags[1].offset, t.s.starts[frames / 2]);
    auto tb = gr::make_top_block("ofdm_uplink_detector_getters_while_work");
    auto det = gr::mimodet::ofdm_uplink_detector::make(
        4, 2, 64, 16, 48, 4, "16qam", "chol", 3, "cpu", rate);
    connect_antennas(tb, det, t);
    auto sink = gr::blocks::vector_sink_f::make(static_cast<int>(o.dims().llr_items()));
    tb->connect(det, 0, sink, 0);

    auto getters = [&,
                    found = monotonic("frames()"),
                    gaps = monotonic("gaps()")]() mutable {
        check(det->implementation() == "cpu-chol",
              "implementation() " + det->implementation());
        check(det->precision() == "fp32", "precision() " + det->precision());
        check(det->sample_type() == "fc32", "sample_type() " + det->sample_type());
        check(det->llr_type() == "float", "llr_type() " + det->llr_type());
        const std::uint64_t f = det->frames();
        found(f);
        check(f <= static_cast<std::uint64_t>(frames), "frames() " + std::to_string(f));
        gaps(det->gaps());
        check(det->gaps() <= 1, "gaps() " + std::to_string(det->gaps()));
        const std::uint64_t lost = det->lost_samples();
        check(lost == 0 || lost == 50, "lost_samples() " + std::to_string(lost));
        check(std::isfinite(det->last_cfo()), "last_cfo()");
        check(std::isfinite(det->last_n0()) && det->last_n0() >= 0.0, "last_n0()");
        check(det->erased_items() == 0,
              "erased_items() " + std::to_string(det->erased_items()));
        det->bad_channel_subcarriers();
        det->bad_sample_vectors();
        det->regularized_subcarriers();
        det->unusable_user_channels();
    };
    const PokeRun poked = run_while_poking(
        tb, [](std::uint64_t) {}, getters, getters);
    expect_poked(poked);
    EXPECT_EQ(det->frames(), static_cast<std::uint64_t>(frames));
    EXPECT_EQ(det->gaps(), 1u);
    EXPECT_EQ(det->lost_samples(), 50u);
    EXPECT_EQ(det->erased_items(), 0u);
    EXPECT_GT(det->last_n0(), 0.0);
    const auto llrs = sink->data();
    EXPECT_EQ(llrs.size(), frames * o.num_data_symbols * o.dims().llr_items());
    EXPECT_TRUE(all_finite(llrs));
}

TEST(BlockSetters, OfdmUplinkReceiverGettersWhileWorkRuns)
{
    const auto o = small_ofdm();
    const double rate = 1e6;
    const int frames = static_cast<int>(scaled(1000));
    const TimedStream t = timed_stream(o, frames, rate);
    auto tb = gr::make_top_block("ofdm_uplink_receiver_getters_while_work");
    auto rx = gr::mimodet::ofdm_uplink_receiver::make(4, 2, 64, 16, 48, 4, rate);
    connect_antennas(tb, rx, t);
    auto sink = gr::blocks::vector_sink_c::make(static_cast<int>(o.dims().rx_items()));
    tb->connect(rx, 0, sink, 0);

    auto getters = [&,
                    found = monotonic("frames()"),
                    gaps = monotonic("gaps()")]() mutable {
        const std::uint64_t f = rx->frames();
        found(f);
        check(f <= static_cast<std::uint64_t>(frames), "frames() " + std::to_string(f));
        gaps(rx->gaps());
        check(rx->gaps() <= 1, "gaps() " + std::to_string(rx->gaps()));
        const std::uint64_t lost = rx->lost_samples();
        check(lost == 0 || lost == 50, "lost_samples() " + std::to_string(lost));
        check(std::isfinite(rx->last_cfo()), "last_cfo()");
        check(std::isfinite(rx->last_n0()) && rx->last_n0() >= 0.0, "last_n0()");
    };
    const PokeRun poked = run_while_poking(
        tb, [](std::uint64_t) {}, getters, getters);
    expect_poked(poked);
    EXPECT_EQ(rx->frames(), static_cast<std::uint64_t>(frames));
    EXPECT_EQ(rx->gaps(), 1u);
    EXPECT_EQ(rx->lost_samples(), 50u);
    EXPECT_GT(rx->last_n0(), 0.0);
    const auto items = sink->data();
    EXPECT_EQ(items.size(), frames * o.num_data_symbols * o.dims().rx_items());
    EXPECT_TRUE(all_finite(items));
}

} // namespace
