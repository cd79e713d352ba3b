/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// clang-format off
/* mimodet_flowgraph_bench: the blocks inside a real GNU Radio flowgraph (gr::top_block,
 * headless), so that a user can measure their own machine and so that the block's rate
 * can be set against the core's (mimodet_bench, mimodet_rx_bench) in the same run.
 *   --block mmse  vector_source_c -> head -> mmse_detector -> sink. The source
 *                 repeats two simulated frames (ChannelSimulator as mimodet_bench: i.i.d.
 *                 Rayleigh, SNR 10 dB, seed 2024), each with its mimo_h and mimo_n0 tags
 *                 on its first item (a repeating vector_source re-emits its tags on every
 *                 repetition); head passes --frames frames. Every frame must reach the
 *                 detector as a channel update (channel_updates()), else the run fails.
 *                 --source replay: instead, a source that writes each slot of its
 *                 buffer once (the buffer holds whole repetitions) and then only tags
 *                 and counts, so that the detector block's own rate is measured.
 *   --block fsd   the same flowgraph around fsd_detector (--mode sfsd: soft output, the
 *                 default; fsd: hard), --config lte: roger2012's LTE slot, 4x4, 1200
 *                 subcarriers x 7 OFDM symbols with a channel per slot (a frame here),
 *                 as mimodet_bench's roger2012 rows.
 *   --block ofdm  B vector sources (vector_source_c, or _i of sc16 words) -> head ->
 *                 ofdm_uplink_detector -> sink: each
 *                 antenna's stream of up to four distinct simulated frames, each after its
 *                 own stretch of noise (UplinkSimulator as mimodet_rx_bench), head passes
 *                 --frames frames' samples. Every frame must be found (frames()).
 *                 --source replay: per antenna, the replay source above (the last
 *                 frame's noise lengthened so that the repetition fills whole pages).
 *                 --source file: per antenna, a file_source of the run's frames
 *                 written to a temporary folder (--frames x about 35.6k samples of 4
 *                 or 8 bytes each; read back from the page cache) straight into the
 *                 block, as a recording would be played (no head). --samples sc16 feeds the
 *                 block the radio's 16-bit samples (sample_type sc16, peak at 30000
 *                 steps as mimodet_rx_bench's capture) instead of gr_complex.
 *                 --detector off: the same sources into sinks, without the block: the
 *                 rate at which they can feed it together (their buffers as the block's
 *                 history would size them; timed from the first sink's first call to
 *                 the last sink's last). Mb/s and frames/s are then not detected ones.
 * Timed: tb->run() with the host's steady clock, one untimed warm-up run (the same
 * blocks) and then --reps runs, median reported. The rates include GNU Radio's work: a
 * vector source and head copy every item once each (file_source once, from the page
 * cache; the replay source after its first pass not at all), the scheduler hands the detector what its
 * buffers hold (items/call: for mmse a few of its large items unless --buffer-items
 * asks for more), and a GPU detector stages the pageable buffers itself.
 * "work s" is the detector's own time in work() (GNU Radio's performance counters, which
 * this program turns on for itself with the wall clock; --work-time off leaves the
 * configuration as it is, "-" when the counters are off); work% its share of the run.
 * The sink notes when LLRs arrive: "steady Mb/s" (mmse) and "steady x" (ofdm, real time)
 * count from its first call to its last, without the flowgraph's start (on a GPU the
 * block page-locks its buffers then).
 * Reported: items/s, frames/s, detected Mb/s (LLR bits out), and for ofdm the real-time
 * factor (the samples' duration at --rate over the run's time). Table on stdout,
 * --json FILE.
 */
// clang-format on

#include "cli_args.h"
#include "ofdm_configs.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/blocks/file_source.h>
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/buffer.h>
#include <gnuradio/high_res_timer.h>
#include <gnuradio/mimodet/fsd_detector.h>
#include <gnuradio/mimodet/mmse_detector.h>
#include <gnuradio/mimodet/ofdm_uplink_detector.h>
#include <gnuradio/prefs.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/top_block.h>
#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <mimodet/layout.h>
#include <mimodet/ofdm.h>
#include <pmt/pmt.h>
#include <system_error>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using mimodet::cli::check_writable;
using mimodet::cli::parse_integer;
using mimodet::cli::parse_positive;
using mimodet::cli::UsageError;
using mimodet::bench::layout_problem;
using mimodet::bench::lte20;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

//! One sc16 sample, as UHD gives it and ofdm_uplink_detector's sample_type "sc16" takes it.
struct Sc16Sample {
    std::int16_t i, q;
};

//! --source file: a folder of its own under the system's temporary folder, removed at exit.
class TempDir
{
public:
    TempDir() = default;
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir()
    {
        std::error_code ignored;
        if (!d_dir.empty())
            std::filesystem::remove_all(d_dir, ignored);
    }
    std::string path(const std::string& name)
    {
        if (d_dir.empty()) {
            std::string pattern =
                (std::filesystem::temp_directory_path() / "mimodet_flowgraph_bench.XXXXXX")
                    .string();
            if (::mkdtemp(pattern.data()) == nullptr)
                throw std::runtime_error("cannot make a temporary folder like " + pattern);
            d_dir = pattern;
        }
        return (std::filesystem::path(d_dir) / name).string();
    }

private:
    std::string d_dir;
};

//! One timed run of the flowgraph.
/*! --source replay: a source of the frames that costs (almost) nothing, so that the
 * detector block's own rate is measured rather than a copying source's. Its output buffer
 * holds a whole number of repetitions (period items), so once the first pass has written
 * every slot, each slot already holds the item that comes next there: later passes only
 * attach the tags and count. Stops after `total` items. */
template <class T> // gr_complex, or Sc16Sample
class replay_source : public gr::sync_block
{
public:
    replay_source(std::shared_ptr<const std::vector<T>> data,
                  std::vector<gr::tag_t> tags,
                  std::size_t vlen,
                  std::size_t period,
                  std::uint64_t total)
        : gr::sync_block("replay_source",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(1, 1, sizeof(T) * vlen)),
          d_data(std::move(data)),
          d_tags(std::move(tags)),
          d_vlen(vlen),
          d_period(period),
          d_total(total)
    {
    }
    int work(int noutput_items, gr_vector_const_void_star&, gr_vector_void_star& out) override
    {
        const std::uint64_t first = nitems_written(0);
        if (first >= d_total)
            return WORK_DONE;
        const std::uint64_t n =
            std::min<std::uint64_t>(static_cast<std::uint64_t>(noutput_items), d_total - first);
        const std::uint64_t slots = detail()->output(0)->bufsize();
        const bool whole = slots % d_period == 0;
        auto* dst = static_cast<T*>(out[0]);
        // A slot is written on the first pass, or always when the buffer does not hold
        // whole repetitions; in runs that stay within one repetition (samples are items).
        for (std::uint64_t item = first; item < first + n;) {
            const std::size_t in_period = static_cast<std::size_t>(item % d_period);
            std::uint64_t run = std::min<std::uint64_t>(first + n - item, d_period - in_period);
            const bool write = item < slots || !whole;
            if (item < slots)
                run = std::min(run, slots - item);
            if (write)
                std::copy_n(d_data->data() + in_period * d_vlen,
                            static_cast<std::size_t>(run) * d_vlen,
                            dst + static_cast<std::size_t>(item - first) * d_vlen);
            item += run;
        }
        for (const auto& t : d_tags) { // each repetition's tags within this call
            std::uint64_t item = first - first % d_period + t.offset;
            if (item < first)
                item += d_period;
            for (; item < first + n; item += d_period)
                add_item_tag(0, item, t.key, t.value);
        }
        return static_cast<int>(n);
    }

private:
    std::shared_ptr<const std::vector<T>> d_data; // [period][vlen]
    std::vector<gr::tag_t> d_tags;                          // offsets within one period
    std::size_t d_vlen, d_period;
    std::uint64_t d_total;
};

/*! A null sink that notes when items arrive: the steady rate, from its first work() call
 * to its last, leaves out the start of the flowgraph (buffers allocated and, on a GPU,
 * page-locked; the first batch), which a short run would otherwise count in full. */
class probe_sink : public gr::sync_block
{
public:
    explicit probe_sink(std::size_t item_bytes)
        : gr::sync_block("probe_sink",
                         gr::io_signature::make(1, 1, item_bytes),
                         gr::io_signature::make(0, 0, 0))
    {
    }
    int work(int n, gr_vector_const_void_star&, gr_vector_void_star&) override
    {
        const auto now = Clock::now();
        d_total += static_cast<std::uint64_t>(n);
        if (d_items == 0) {
            d_first = now;
            d_first_items = static_cast<std::uint64_t>(n);
        }
        d_last = now;
        d_items += static_cast<std::uint64_t>(n);
        return n;
    }
    void reset() { d_items = d_first_items = d_total = 0; }
    std::uint64_t items() const { return d_total; }
    //! The first call's time and items, and the last call's time (see steady_rate).
    Clock::time_point first() const { return d_first; }
    Clock::time_point last() const { return d_last; }
    std::uint64_t steady_items() const { return d_items - d_first_items; }
    //! Items per second after the first call's items; 0 when there was one call only.
    double steady_rate() const
    {
        const double s = std::chrono::duration<double>(d_last - d_first).count();
        return s > 0 ? static_cast<double>(d_items - d_first_items) / s : 0.0;
    }

private:
    Clock::time_point d_first, d_last;
    std::uint64_t d_items = 0, d_first_items = 0, d_total = 0;
};

struct Run {
    double seconds = 0;
    double work_s = -1;      //!< the detector's time in work(), -1 without counters
    double per_call = 0;     //!< items (mmse) or frames (ofdm) per work() call
    double steady_items_per_s = 0; //!< at the sink, after its first call
    std::uint64_t count = 0; //!< channel updates (mmse) or frames found (ofdm)
};

//! GNU Radio records each buffer's allocated size as its block's maximum, which would cap
//! the buffers of the next flowgraph around the same block (and --buffer-items).
void unlimit_buffers(const gr::block_sptr& block) { block->set_max_output_buffer(-1); }

//! Builds a fresh top_block around the same blocks (so the warm-up warms the detector),
//! runs it and reads the detector's counters while the flowgraph still holds them.
Run run_flowgraph(const std::function<void(const gr::top_block_sptr&)>& connect,
                  const gr::block_sptr& det,
                  const std::function<std::uint64_t()>& count,
                  double items_per_unit)
{
    auto tb = gr::make_top_block("mimodet_flowgraph_bench");
    connect(tb);
    const std::uint64_t before = count();
    const auto t0 = Clock::now();
    tb->run();
    Run r;
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.count = count() - before;
    // Off, the counters hold whatever the block's detail started with.
    const double work = det->pc_work_time_total();
    if (gr::prefs::singleton()->get_bool("PerfCounters", "on", false) && work > 0) {
        r.work_s = work / static_cast<double>(gr::high_res_timer_tps());
        r.per_call = det->pc_nproduced_avg() / items_per_unit;
    }
    return r;
}

std::string work_text(double work_s, const char* format)
{
    if (work_s < 0)
        return "-";
    char text[32];
    std::snprintf(text, sizeof text, format, work_s);
    return text;
}

struct Options {
    std::map<std::string, std::string> value;
    std::map<std::string, bool> given;
    bool has(const std::string& o) const { return given.count(o) != 0; }
    const std::string& operator[](const std::string& o) const { return value.at(o); }
};

//! What a benchmark prints and writes, whichever block it timed.
struct Report {
    std::string block, config, describe, backend, implementation;
    std::size_t frames = 0;
    double items = 0, bits = 0, samples = 0, rate = 0; // samples, rate: ofdm only
    std::vector<Run> runs;
};

//! ofdm: the real-time factor at the sink after its first call (samples per item as in
//! the whole run, noise included).
double steady_realtime(const Report& rep, const Run& r)
{
    return r.steady_items_per_s * (rep.samples / rep.items) / rep.rate;
}

//! The block's GNU Radio name.
std::string block_name(const std::string& block)
{
    return block == "ofdm" ? "ofdm_uplink_detector" : block + "_detector";
}

void print_row(const Report& rep, const std::string& label, const Run& r)
{
    const bool ofdm = rep.block == "ofdm";
    const std::string work = work_text(r.work_s, "%.4f");
    const std::string share = work_text(r.work_s * 100.0 / r.seconds, "%.1f");
    const std::string per_call = work_text(r.work_s < 0 ? -1 : r.per_call, "%.1f");
    if (ofdm)
        std::printf("%-7s %10.4f %8llu %12.3f %12.1f %12.3f %10s %6s %12s\n",
                    label.c_str(),
                    r.seconds,
                    static_cast<unsigned long long>(r.count),
                    rep.samples / rep.rate / r.seconds,
                    rep.bits / r.seconds * 1e-6,
                    steady_realtime(rep, r),
                    work.c_str(),
                    share.c_str(),
                    per_call.c_str());
    else
        std::printf("%-7s %10.4f %12.1f %10.2f %12.1f %12.1f %10s %6s %12s\n",
                    label.c_str(),
                    r.seconds,
                    rep.items / r.seconds,
                    rep.frames / r.seconds,
                    rep.bits / r.seconds * 1e-6,
                    r.steady_items_per_s * rep.bits / rep.items * 1e-6,
                    work.c_str(),
                    share.c_str(),
                    per_call.c_str());
    std::fflush(stdout);
}

//! The warm-up, then the timed runs, each row printed as it ends; check(run) throws
//! when a run did not handle every frame.
void time_runs(Report& rep,
               int reps,
               const std::function<Run()>& run,
               const std::function<void(const Run&)>& check)
{
    std::fprintf(stderr, "mimodet_flowgraph_bench: warm-up run ...\n");
    check(run());
    for (int i = 0; i < reps; ++i) {
        std::fprintf(stderr, "mimodet_flowgraph_bench: run %d/%d ...\n", i + 1, reps);
        rep.runs.push_back(run());
        check(rep.runs.back());
        print_row(rep, std::to_string(i + 1), rep.runs.back());
    }
}

void print_header(const Report& rep)
{
    std::printf("# %s %s (%s), backend %s, implementation %s, %zu frames\n",
                block_name(rep.block).c_str(),
                rep.config.c_str(),
                rep.describe.c_str(),
                rep.backend.c_str(),
                rep.implementation.c_str(),
                rep.frames);
    if (rep.block == "ofdm")
        std::printf("%-7s %10s %8s %12s %12s %12s %10s %6s %12s\n",
                    "run",
                    "seconds",
                    "found",
                    "x real time",
                    "Mb/s",
                    "steady x",
                    "work s",
                    "work%",
                    "frames/call");
    else
        std::printf("%-7s %10s %12s %10s %12s %12s %10s %6s %12s\n",
                    "run",
                    "seconds",
                    "items/s",
                    "frames/s",
                    "Mb/s",
                    "steady Mb/s",
                    "work s",
                    "work%",
                    "items/call");
    std::fflush(stdout);
}

//! The run of median time (the upper one of an even count, as median()), with its own
//! work time and items per call.
Run median_run(const std::vector<Run>& runs)
{
    std::vector<double> t;
    for (const auto& r : runs)
        t.push_back(r.seconds);
    const double m = median(t);
    return *std::find_if(
        runs.begin(), runs.end(), [&](const Run& r) { return r.seconds == m; });
}

void write_json(const std::string& path, const Report& rep, const Options& opt)
{
    const Run m = median_run(rep.runs);
    std::ofstream out(path);
    out << std::setprecision(10);
    out << "{\n  \"block\": \"" << block_name(rep.block) << "\",\n  \"config\": \""
        << rep.config << "\",\n  \"antennas\": " << opt["--antennas"]
        << ",\n  \"users\": " << opt["--users"]
        << ",\n  \"subcarriers\": " << opt["--subcarriers"]
        << ",\n  \"symbols\": " << opt["--symbols"];
    if (rep.block != "ofdm")
        out << ",\n  \"buffer_items\": "
            << (opt.has("--buffer-items") ? opt["buffer_n"] : "null");
    out << ",\n  \"source\": \"" << opt["--source"] << "\"";
    if (rep.block != "ofdm")
        out << ",\n  \"llr\": \""
            << mimodet::to_string(mimodet::parse_llr_format(opt["--llr"])) << "\"";
    out << ",\n  \"threads\": " << opt["threads_n"];
    const bool detected = opt["--detector"] != "off"; // off: the sources alone
    if (rep.block == "ofdm")
        out << ",\n  \"detector\": " << (detected ? "true" : "false");
    if (rep.block == "ofdm")
        out << ",\n  \"fft\": " << opt["--fft"] << ",\n  \"cp\": " << opt["--cp"]
            << ",\n  \"rate\": " << rep.rate << ",\n  \"samples\": \""
            << opt["--samples"] << "\"";
    out << ",\n  \"modulation\": \"" << opt["--modulation"] << "\",\n  \"mode\": \""
        << opt["--mode"] << "\",\n  \"iterations\": "
        << (rep.block == "fsd" ? std::string("null") : opt["--iterations"])
        << ",\n  \"backend\": \"" << rep.backend << "\",\n  \"implementation\": "
        << (detected ? "\"" + rep.implementation + "\"" : std::string("null"))
        << ",\n  \"frames\": " << rep.frames << ",\n  \"items\": " << rep.items
        << ",\n  \"bits\": " << rep.bits << ",\n  \"seconds\": [";
    for (std::size_t i = 0; i < rep.runs.size(); ++i)
        out << (i ? ", " : "") << rep.runs[i].seconds;
    out << "],\n  \"median_seconds\": " << m.seconds;
    if (detected)
        out << ",\n  \"items_per_s\": " << rep.items / m.seconds
            << ",\n  \"frames_per_s\": " << rep.frames / m.seconds
            << ",\n  \"mbps\": " << rep.bits / m.seconds * 1e-6;
    else
        out << ",\n  \"items_per_s\": null,\n  \"frames_per_s\": null,\n  \"mbps\": null";
    if (rep.block != "ofdm")
        out << ",\n  \"steady_mbps\": "
            << m.steady_items_per_s * rep.bits / rep.items * 1e-6;
    if (rep.block == "ofdm")
        out << ",\n  \"samples_per_antenna\": " << rep.samples
            << ",\n  \"realtime_factor\": " << rep.samples / rep.rate / m.seconds
            << ",\n  \"steady_realtime_factor\": " << steady_realtime(rep, m);
    if (m.work_s >= 0)
        out << ",\n  \"work_seconds\": " << m.work_s
            << ",\n  \"per_work_call\": " << m.per_call;
    else
        out << ",\n  \"work_seconds\": null,\n  \"per_work_call\": null";
    out << "\n}\n";
    if (!out)
        throw std::runtime_error("--json: could not write " + path);
}

// --block mmse and --block fsd

void bench_detector(const Options& opt, Report& rep)
{
    mimodet::ChannelSimConfig sim;
    sim.num_antennas = parse_integer("--antennas", opt["--antennas"], 1);
    sim.num_users = parse_integer("--users", opt["--users"], 1);
    sim.num_subcarriers = parse_integer("--subcarriers", opt["--subcarriers"], 1);
    sim.symbols_per_frame = parse_integer("--symbols", opt["--symbols"], 1);
    sim.modulation = mimodet::parse_modulation(opt["--modulation"]);
    sim.snr_db = 10.0;
    sim.seed = 2024;
    const int iterations = std::stoi(opt["iterations_n"]);
    const auto frames = static_cast<std::size_t>(std::stoull(opt["frames_n"]));
    const int streams = std::stoi(opt["streams_n"]), reps = std::stoi(opt["reps_n"]);
    const int threads = std::stoi(opt["threads_n"]);
    const mimodet::Dims d = sim.dims();
    const std::size_t S = sim.symbols_per_frame;

    gr::block_sptr det;
    std::function<std::uint64_t()> channel_updates;
    if (rep.block == "fsd") {
        auto fsd =
            gr::mimodet::fsd_detector::make(static_cast<int>(d.num_antennas),
                                            static_cast<int>(d.num_users),
                                            static_cast<int>(d.num_subcarriers),
                                            opt["--modulation"],
                                            opt["--mode"] == "fsd" ? "hard" : "soft",
                                            0,
                                            0,
                                            opt["--backend"],
                                            true,
                                            0.0f,
                                            threads,
                                            std::vector<int>{ 0 },
                                            streams,
                                            "fp32",
                                            opt["--llr"]);
        rep.implementation = fsd->implementation();
        channel_updates = [fsd] { return fsd->channel_updates(); };
        det = fsd;
    } else {
        auto mmse = gr::mimodet::mmse_detector::make(static_cast<int>(d.num_antennas),
                                                     static_cast<int>(d.num_users),
                                                     static_cast<int>(d.num_subcarriers),
                                                     opt["--modulation"],
                                                     opt["--mode"],
                                                     iterations,
                                                     opt["--backend"],
                                                     true,
                                                     0.0f,
                                                     threads,
                                                     std::vector<int>{ 0 },
                                                     streams,
                                                     "fp32",
                                                     opt["--llr"]);
        rep.implementation = mmse->implementation();
        channel_updates = [mmse] { return mmse->channel_updates(); };
        det = mmse;
    }

    // Two distinct frames, cycled: the source's repetition (its buffer) stays small.
    std::fprintf(stderr, "mimodet_flowgraph_bench: simulating 2 frames ...\n");
    constexpr std::size_t kDistinct = 2;
    std::vector<gr_complex> data;
    std::vector<gr::tag_t> tags;
    {
        mimodet::ChannelSimulator simulator(sim);
        mimodet::Frame f;
        data.reserve(kDistinct * S * d.rx_items());
        for (std::size_t k = 0; k < kDistinct; ++k) {
            simulator.next_frame(f);
            gr::tag_t h, n0;
            h.offset = n0.offset = k * S;
            h.key = pmt::intern(mimodet::kChannelTagKey);
            h.value = pmt::init_c32vector(f.h.size(), f.h.data());
            n0.key = pmt::intern(mimodet::kNoiseVarTagKey);
            n0.value = pmt::from_double(f.n0);
            tags.push_back(h);
            tags.push_back(n0);
            data.insert(data.end(), f.y.begin(), f.y.end());
        }
    }
    const unsigned vlen = static_cast<unsigned>(d.rx_items());
    const bool replay = opt["--source"] == "replay";
    std::shared_ptr<const std::vector<gr_complex>> replay_data;
    std::size_t replay_slots = 0;
    gr::blocks::vector_source_c::sptr src;
    if (replay) {
        replay_data = std::make_shared<const std::vector<gr_complex>>(std::move(data));
        // a whole number of repetitions, at least what --buffer-items asks
        const std::size_t period = kDistinct * S;
        // GNU Radio makes the buffer at least 2 (history + 1) items for the detector
        // (on a GPU it asks for room for two batches) and --buffer-items.
        std::size_t want = 2 * (static_cast<std::size_t>(det->history()) + 1);
        if (opt.has("--buffer-items"))
            want = std::max(want, static_cast<std::size_t>(std::stoi(opt["buffer_n"])));
        replay_slots = period * ((want + period - 1) / period);
    } else {
        src = gr::blocks::vector_source_c::make(data, true, vlen, tags);
    }
    data = std::vector<gr_complex>(); // the source holds its own copy
    auto head = gr::blocks::head::make(sizeof(gr_complex) * vlen, frames * S);
    if (opt.has("--buffer-items")) {
        // GNU Radio sizes the buffers of large items to a few items, so the detector
        // gets one or two symbols per call; this lets it batch more (in and out).
        const int n = std::stoi(opt["buffer_n"]);
        head->set_min_output_buffer(n);
        det->set_min_output_buffer(n);
    }
    // (the LLRs' bytes in the block's llr_type; Mb/s counts LLRs, whatever their size)
    auto sink = std::make_shared<probe_sink>(
        mimodet::llr_bytes(mimodet::parse_llr_format(opt["--llr"])) * d.llr_items());

    rep.frames = frames;
    rep.items = static_cast<double>(frames * S);
    rep.bits = rep.items * static_cast<double>(d.llr_items());
    print_header(rep);
    auto connect = [&](const gr::top_block_sptr& tb) {
        if (replay) {
            // a fresh source each run: it counts its items from 0
            auto fresh = std::make_shared<replay_source<gr_complex>>(replay_data,
                                                         tags,
                                                         vlen,
                                                         kDistinct * S,
                                                         static_cast<std::uint64_t>(frames * S));
            fresh->set_min_output_buffer(static_cast<long>(replay_slots));
            for (const gr::block_sptr& b : { gr::block_sptr(fresh), gr::block_sptr(det) })
                unlimit_buffers(b);
            tb->connect(fresh, 0, det, 0);
            tb->connect(det, 0, sink, 0);
            return;
        }
        src->rewind();
        head->reset();
        for (const gr::block_sptr& b :
             { gr::block_sptr(src), gr::block_sptr(head), gr::block_sptr(det) })
            unlimit_buffers(b);
        tb->connect(src, 0, head, 0);
        tb->connect(head, 0, det, 0);
        tb->connect(det, 0, sink, 0);
    };
    time_runs(
        rep,
        reps,
        [&] {
            sink->reset();
            Run r = run_flowgraph(connect, det, channel_updates, 1.0);
            r.steady_items_per_s = sink->steady_rate();
            return r;
        },
        [&](const Run& r) {
            if (r.count != frames)
                throw std::runtime_error("the detector saw " + std::to_string(r.count) +
                                         " channel updates, not " +
                                         std::to_string(frames) + " (one per frame)");
        });
}

// --block ofdm

mimodet::OfdmConfig ofdm_config(const Options& opt)
{
    mimodet::OfdmConfig o;
    o.num_antennas = parse_integer("--antennas", opt["--antennas"], 1);
    o.num_users = parse_integer("--users", opt["--users"], 1);
    o.fft_size = parse_integer("--fft", opt["--fft"], 1);
    o.cp_length = parse_integer("--cp", opt["--cp"], 0);
    o.num_subcarriers = parse_integer("--subcarriers", opt["--subcarriers"], 1);
    o.num_data_symbols = parse_integer("--symbols", opt["--symbols"], 1);
    o.modulation = mimodet::parse_modulation(opt["--modulation"]);
    return o;
}

void bench_ofdm(const Options& opt, Report& rep)
{
    const mimodet::OfdmConfig o = ofdm_config(opt);
    const int iterations = std::stoi(opt["iterations_n"]),
              reps = std::stoi(opt["reps_n"]);
    const auto frames = static_cast<std::size_t>(std::stoull(opt["frames_n"]));
    rep.rate = parse_positive("--rate", opt["--rate"]);
    // The block's input items: gr_complex, or the radio's sc16 (half the bytes up).
    const bool sc16 = opt["--samples"] == "sc16";
    const std::size_t item_bytes = sc16 ? sizeof(Sc16Sample) : sizeof(gr_complex);

    // Up to four distinct frames, as mimodet_rx_bench's make_capture: each after its own
    // stretch of noise, alternating carrier offsets.
    const std::size_t distinct = std::min<std::size_t>(frames, 4);
    std::fprintf(
        stderr, "mimodet_flowgraph_bench: simulating %zu frames ...\n", distinct);
    std::vector<std::vector<gr_complex>> stream(o.num_antennas);
    std::vector<std::size_t> length(distinct);
    // GNU Radio's buffers come in whole pages: the last frame's stretch of noise is
    // lengthened to make the repetition a whole number of them, so that the replay
    // source's buffer holds whole repetitions.
    const std::size_t page_samples = 4096 / item_bytes;
    std::size_t period = 0, pad = 0;
    for (std::size_t f = 0; f < distinct; ++f) {
        mimodet::UplinkChannelConfig ch;
        ch.snr_db = 20.0;
        ch.cfo = 0.2 * (f % 2 ? -1.0 : 1.0);
        ch.lead_samples = 64 + 97 * f;
        ch.seed = 2024 + f;
        mimodet::UplinkFrame s;
        mimodet::UplinkSimulator(o, ch).next_frame(s);
        if (f + 1 == distinct) { // again, with the noise that makes whole pages
            pad = (page_samples - (period + s.rx[0].size()) % page_samples) % page_samples;
            ch.lead_samples += pad;
            mimodet::UplinkSimulator(o, ch).next_frame(s);
        }
        length[f] = s.rx[0].size();
        period += length[f];
        for (std::size_t b = 0; b < o.num_antennas; ++b)
            stream[b].insert(stream[b].end(), s.rx[b].begin(), s.rx[b].end());
    }
    std::uint64_t samples = 0; // per antenna: the frames' streams head lets through
    for (std::size_t f = 0; f < frames; ++f)
        samples += length[f % distinct];
    // sc16 as mimodet_rx_bench's capture: the peak at 30000 steps.
    float peak = 0.0f;
    for (const auto& a : stream)
        for (const gr_complex& v : a)
            peak = std::max({ peak, std::abs(v.real()), std::abs(v.imag()) });
    const float sc16_scale = peak > 0.0f ? peak / 30000.0f : 1.0f / 32768.0f;

    auto det =
        gr::mimodet::ofdm_uplink_detector::make(static_cast<int>(o.num_antennas),
                                                static_cast<int>(o.num_users),
                                                static_cast<int>(o.fft_size),
                                                static_cast<int>(o.cp_length),
                                                static_cast<int>(o.num_subcarriers),
                                                static_cast<int>(o.num_data_symbols),
                                                opt["--modulation"],
                                                opt["--mode"],
                                                iterations,
                                                opt["--backend"],
                                                rep.rate,
                                                true,
                                                0.0f,
                                                0,
                                                "fp32",
                                                sc16 ? "sc16" : "fc32",
                                                sc16_scale,
                                                "float",
                                                8.0,
                                                false,
                                                false,
                                                std::stoi(opt["threads_n"]));
    rep.implementation = det->implementation();

    const std::string source = opt["--source"];
    // a whole number of repetitions, at least what GNU Radio makes for the detector
    const std::size_t want =
        2 * (o.frame_samples() + static_cast<std::size_t>(det->history()));
    const std::size_t replay_slots = period * ((want + period - 1) / period);
    std::vector<std::shared_ptr<const std::vector<gr_complex>>> replay_c;
    std::vector<std::shared_ptr<const std::vector<Sc16Sample>>> replay_s;
    std::vector<gr::blocks::vector_source_c::sptr> vector_c;
    std::vector<gr::blocks::vector_source_i::sptr> vector_s; // an sc16 sample per int
    TempDir files;
    std::vector<std::string> paths;
    for (std::size_t b = 0; b < o.num_antennas; ++b) {
        std::vector<gr_complex>& a = stream[b];
        std::vector<Sc16Sample> iq;
        if (sc16) {
            iq.resize(a.size());
            for (std::size_t n = 0; n < a.size(); ++n)
                iq[n] = { static_cast<std::int16_t>(std::lround(a[n].real() / sc16_scale)),
                          static_cast<std::int16_t>(std::lround(a[n].imag() / sc16_scale)) };
        }
        const void* bytes = sc16 ? static_cast<const void*>(iq.data()) : a.data();
        if (source == "replay") {
            if (sc16)
                replay_s.push_back(std::make_shared<const std::vector<Sc16Sample>>(std::move(iq)));
            else
                replay_c.push_back(std::make_shared<const std::vector<gr_complex>>(std::move(a)));
        } else if (source == "file") {
            // The whole run per antenna, as a recording: file_source straight into the
            // block, which sizes that buffer itself (no head, no second copy).
            paths.push_back(files.path("antenna" + std::to_string(b) + ".dat"));
            std::ofstream f(paths.back(), std::ios::binary);
            const char* from = static_cast<const char*>(bytes);
            std::size_t first = 0; // the frame's first sample within the repetition
            for (std::size_t k = 0; k < frames; ++k) {
                const std::size_t n = length[k % distinct];
                f.write(from + first * item_bytes, static_cast<std::streamsize>(n * item_bytes));
                first = (first + n) % period;
            }
            if (!f.flush())
                throw std::runtime_error("cannot write " + paths.back());
        } else if (sc16) {
            std::vector<int> words(period);
            std::memcpy(words.data(), bytes, period * item_bytes);
            vector_s.push_back(gr::blocks::vector_source_i::make(words, true));
        } else {
            vector_c.push_back(gr::blocks::vector_source_c::make(a, true));
        }
        a = std::vector<gr_complex>(); // the source holds its own copy
    }
    const mimodet::Dims d = o.dims();
    auto sink = std::make_shared<probe_sink>(sizeof(float) * d.llr_items());

    rep.frames = frames;
    rep.samples = static_cast<double>(samples);
    rep.items = static_cast<double>(frames * o.num_data_symbols);
    rep.bits = rep.items * static_cast<double>(d.llr_items());
    print_header(rep);
    /* Antenna b's source in tb, ready to connect (a vector source already through its
     * head). alone: no block downstream whose history sizes the buffer, so it gets the
     * buffer that history would give it. */
    auto source_of = [&](const gr::top_block_sptr& tb, std::size_t b, bool alone) {
        gr::block_sptr from;
        if (source == "replay") { // a fresh source each run: it counts from 0
            if (sc16)
                from = std::make_shared<replay_source<Sc16Sample>>(
                    replay_s[b], std::vector<gr::tag_t>{}, 1, period, samples);
            else
                from = std::make_shared<replay_source<gr_complex>>(
                    replay_c[b], std::vector<gr::tag_t>{}, 1, period, samples);
            from->set_min_output_buffer(static_cast<long>(replay_slots));
        } else {
            if (source == "file") {
                from = gr::blocks::file_source::make(item_bytes, paths[b].c_str(), false);
            } else {
                gr::block_sptr src =
                    sc16 ? gr::block_sptr(vector_s[b]) : gr::block_sptr(vector_c[b]);
                sc16 ? vector_s[b]->rewind() : vector_c[b]->rewind();
                from = gr::blocks::head::make(item_bytes, samples);
                unlimit_buffers(src);
                tb->connect(src, 0, from, 0);
            }
            if (alone)
                from->set_min_output_buffer(static_cast<long>(want));
        }
        unlimit_buffers(from);
        return from;
    };
    auto connect = [&](const gr::top_block_sptr& tb) {
        for (std::size_t b = 0; b < o.num_antennas; ++b)
            tb->connect(source_of(tb, b, false), 0, det, static_cast<int>(b));
        unlimit_buffers(det);
        tb->connect(det, 0, sink, 0);
    };
    if (opt["--detector"] == "off") {
        // The sources alone into sinks that note arrivals: the rate they can feed.
        std::vector<std::shared_ptr<probe_sink>> sinks;
        for (std::size_t b = 0; b < o.num_antennas; ++b)
            sinks.push_back(std::make_shared<probe_sink>(item_bytes));
        time_runs(
            rep,
            reps,
            [&] {
                auto tb = gr::make_top_block("mimodet_flowgraph_bench");
                for (std::size_t b = 0; b < o.num_antennas; ++b) {
                    gr::block_sptr from = source_of(tb, b, true);
                    sinks[b]->reset();
                    tb->connect(from, 0, sinks[b], 0);
                }
                const auto t0 = Clock::now();
                tb->run();
                Run r;
                r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
                // The block needs every antenna at once: the samples per antenna from
                // the earliest sink's first call to the latest sink's last.
                auto from_t = sinks[0]->first(), to_t = sinks[0]->last();
                double steady_samples = 0.0;
                for (const auto& k : sinks) {
                    from_t = std::min(from_t, k->first());
                    to_t = std::max(to_t, k->last());
                    steady_samples += static_cast<double>(k->steady_items());
                    if (k->items() != samples)
                        throw std::runtime_error(
                            "a sink got " + std::to_string(k->items()) + " of " +
                            std::to_string(samples) + " samples");
                }
                const double span = std::chrono::duration<double>(to_t - from_t).count();
                const double per_antenna = steady_samples / static_cast<double>(sinks.size());
                r.steady_items_per_s = span > 0 ? per_antenna / span * rep.items / rep.samples
                                                : 0.0;
                return r;
            },
            [](const Run&) {});
        return;
    }
    time_runs(
        rep,
        reps,
        [&] {
            sink->reset();
            Run r = run_flowgraph(
                connect,
                det,
                [&] { return det->frames(); },
                static_cast<double>(o.num_data_symbols));
            r.steady_items_per_s = sink->steady_rate();
            return r;
        },
        [&](const Run& r) {
            if (r.count != frames)
                throw std::runtime_error("the detector found " + std::to_string(r.count) +
                                         " of " + std::to_string(frames) + " frames");
        });
}

void usage()
{
    std::cout
        << "usage: mimodet_flowgraph_bench --block mmse|fsd|ofdm [--backend "
           "auto|cpu|cuda]\n"
           "         [--frames F] [--reps R] [--mode chol|cg|cr|zf] [--iterations I]\n"
           "         [--modulation qpsk|16qam|64qam|256qam] [--work-time on|off]\n"
           "         [--json FILE]\n"
           "  mmse: [--config target|nr-slot] [--antennas B] [--users U]\n"
           "        [--subcarriers N] [--symbols S (items per frame)] [--streams S]\n"
           "        [--buffer-items N (the detector's buffers, in and out; default:\n"
           "         GNU Radio's choice, a few items of this size)]\n"
           "        [--source vector|replay (vector: vector_source + head, a copy each;\n"
           "         replay: writes its buffer once, then only tags: the block's rate)]\n"
           "        [--llr float|int8|fp16 (the block's llr_type, int8 at its default\n"
           "         scale of 8 steps per unit; default float)]\n"
           "        [--threads N (the block's num_threads: CPU detection threads, or\n"
           "         on the GPU the fsd batch's channel-copy threads; default 0, auto)]\n"
           "  fsd:  fsd_detector, the options of mmse with [--config lte]\n"
           "        [--mode sfsd|fsd (soft or hard output; default sfsd)]\n"
           "  ofdm: [--config lte20] [--antennas B] [--users U] [--fft N] [--cp N]\n"
           "        [--subcarriers N] [--symbols N (data symbols)] [--rate S/s]\n"
           "        [--source vector|replay|file (vector, replay: as mmse's, per\n"
           "         antenna; file: a file_source per antenna of the run's samples, in\n"
           "         a temporary folder, straight into the block)]\n"
           "        [--detector on|off (off: the sources alone into sinks, the rate\n"
           "         they can feed the block; default on)]\n"
           "        [--samples fc32|sc16 (the block's sample_type: gr_complex, or the\n"
           "         radio's 16-bit I/Q; default fc32, cf32 is taken for fc32)]\n"
           "        [--threads N (the block's num_threads: CPU detection threads;\n"
           "         default 0, all cores)]\n"
           "Runs the block in a GNU Radio flowgraph (sources [-> head] -> block -> "
           "sink)\nand reports its throughput: median of --reps runs after a "
           "warm-up.\n"
           "Configurations (explicit options override their values):\n"
           "  target   128x16, 1024 subcarriers x 64 symbols, 16qam (the default, mmse)\n"
           "  nr-slot  64x16, 3276 subcarriers x 14 symbols, 16qam\n"
           "  lte      4x4, 1200 subcarriers x 7 symbols (an LTE slot, roger2012), "
           "16qam\n"
           "           (the default, fsd)\n"
           "  lte20    16 antennas x 6 users, FFT 2048, CP 144, 1200 subcarriers,\n"
           "           14 data symbols, 16qam, 30.72 MS/s (the default, ofdm)\n"
           "Defaults: --backend auto --frames 50 (mmse) or 64 (ofdm) --reps 5 --mode "
           "chol\n"
           "--iterations 3 --streams 3. --work-time on turns on GNU Radio's performance\n"
           "counters (wall clock) in this process for the block's time in work();\n"
           "the environment (GR_CONF_PERFCOUNTERS_ON=0) still overrides. See the "
           "comment\n"
           "at the top of bench/mimodet_flowgraph_bench.cc.\n";
}

//! Fills in the configuration's values where no option gave one.
void apply_config(Options& opt, const std::string& block)
{
    std::map<std::string, std::string> preset;
    const std::string config = opt["--config"];
    if (block == "mmse") {
        if (config == "target")
            preset = { { "--antennas", "128" },
                       { "--users", "16" },
                       { "--subcarriers", "1024" },
                       { "--symbols", "64" } };
        else if (config == "nr-slot")
            preset = { { "--antennas", "64" },
                       { "--users", "16" },
                       { "--subcarriers", "3276" },
                       { "--symbols", "14" } };
        else
            throw UsageError(
                "--config: expected target or nr-slot for --block mmse, got '" + config +
                "'");
    } else if (block == "fsd") {
        if (config != "lte")
            throw UsageError("--config: expected lte for --block fsd, got '" + config +
                             "'");
        preset = { { "--antennas", "4" },
                   { "--users", "4" },
                   { "--subcarriers", "1200" },
                   { "--symbols", "7" } };
    } else {
        if (config != "lte20")
            throw UsageError("--config: expected lte20 for --block ofdm, got '" + config +
                             "'");
        const mimodet::OfdmConfig o = lte20(6);
        preset = { { "--antennas", std::to_string(o.num_antennas) },
                   { "--users", std::to_string(o.num_users) },
                   { "--fft", std::to_string(o.fft_size) },
                   { "--cp", std::to_string(o.cp_length) },
                   { "--subcarriers", std::to_string(o.num_subcarriers) },
                   { "--symbols", std::to_string(o.num_data_symbols) },
                   { "--rate", "30.72e6" } };
    }
    for (const auto& [key, value] : preset)
        if (!opt.has(key))
            opt.value[key] = value;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        Options opt;
        opt.value = { { "--backend", "auto" },     { "--reps", "5" },
                      { "--mode", "chol" },        { "--iterations", "3" },
                      { "--modulation", "16qam" }, { "--streams", "3" },
                      { "--work-time", "on" } };
        const std::vector<std::string> known{
            "--block",    "--config",     "--backend",     "--frames",       "--reps",
            "--mode",     "--iterations", "--modulation",  "--work-time",    "--json",
            "--antennas", "--users",      "--subcarriers", "--symbols",      "--streams",
            "--fft",      "--cp",         "--rate",        "--buffer-items", "--source",
            "--samples",  "--detector",   "--llr",         "--threads"
        };
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "-h" || a == "--help") {
                usage();
                return 0;
            }
            if (std::find(known.begin(), known.end(), a) == known.end())
                throw UsageError(a.rfind("-", 0) == 0
                                     ? "unknown option '" + a + "' (see --help)"
                                     : "unexpected argument '" + a + "' (see --help)");
            if (i + 1 >= argc)
                throw UsageError(a + ": needs a value (see --help)");
            opt.value[a] = argv[++i];
            opt.given[a] = true;
        }
        // Every option is checked here, before anything is simulated.
        if (!opt.has("--block"))
            throw UsageError("--block is missing: mmse, fsd or ofdm (see --help)");
        const std::string block = opt["--block"];
        if (block != "mmse" && block != "fsd" && block != "ofdm")
            throw UsageError("--block: expected mmse, fsd or ofdm, got '" + block + "'");
        const bool ofdm = block == "ofdm";
        for (const char* o :
             ofdm ? std::vector<const char*>{ "--streams", "--buffer-items", "--llr" }
                  : std::vector<const char*>{
                        "--fft", "--cp", "--rate", "--samples", "--detector" })
            if (opt.has(o))
                throw UsageError(std::string(o) + " applies to --block " +
                                 (ofdm ? "mmse and fsd" : "ofdm") + " only");
        if (block == "fsd" && opt.has("--iterations"))
            throw UsageError("--iterations applies to --block mmse and ofdm only");
        const std::string backend = opt["--backend"];
        if (backend != "auto" && backend != "cpu" && backend != "cuda")
            throw UsageError("--backend: expected auto, cpu or cuda, got '" + backend +
                             "'");
        if (backend == "cpu" && opt.has("--streams"))
            throw UsageError("--streams applies to the cuda backend (and auto) only");
        if (!opt.has("--config"))
            opt.value["--config"] = ofdm ? "lte20" : block == "fsd" ? "lte" : "target";
        if (block == "fsd" && !opt.has("--mode"))
            opt.value["--mode"] = "sfsd";
        apply_config(opt, block);
        if (!opt.has("--frames"))
            opt.value["--frames"] = ofdm ? "64" : "50";
        opt.value["frames_n"] =
            std::to_string(parse_integer("--frames", opt["--frames"], 1));
        opt.value["reps_n"] = std::to_string(parse_integer("--reps", opt["--reps"], 1));
        opt.value["iterations_n"] =
            std::to_string(parse_integer("--iterations", opt["--iterations"], 1));
        if (opt.has("--buffer-items"))
            opt.value["buffer_n"] =
                std::to_string(parse_integer("--buffer-items", opt["--buffer-items"], 1));
        opt.value["streams_n"] =
            std::to_string(parse_integer("--streams", opt["--streams"], 1));
        opt.value["threads_n"] = std::to_string(parse_integer(
            "--threads", opt.has("--threads") ? opt["--threads"] : "0", 0, 1024));
        try {
            mimodet::parse_detector_mode(opt["--mode"]);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--mode: ") + e.what());
        }
        if (block == "fsd" && opt["--mode"] != "fsd" && opt["--mode"] != "sfsd")
            throw UsageError("--mode: expected sfsd or fsd for --block fsd, got '" +
                             opt["--mode"] + "'");
        try {
            mimodet::parse_modulation(opt["--modulation"]);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--modulation: ") + e.what());
        }
        if (!opt.has("--llr"))
            opt.value["--llr"] = "float";
        try {
            mimodet::parse_llr_format(opt["--llr"]);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--llr: ") + e.what());
        }
        if (!opt.has("--source"))
            opt.value["--source"] = "vector";
        if (opt["--source"] != "vector" && opt["--source"] != "replay" &&
            opt["--source"] != "file")
            throw UsageError("--source: expected vector, replay or file, got '" +
                             opt["--source"] + "'");
        if (opt["--source"] == "file" && !ofdm)
            throw UsageError("--source file applies to --block ofdm only (the detector "
                             "block needs its channel tags)");
        if (!opt.has("--samples") || opt["--samples"] == "cf32")
            opt.value["--samples"] = "fc32"; // mimodet_rx_bench's name for it
        if (!opt.has("--detector"))
            opt.value["--detector"] = "on";
        if (opt["--detector"] != "on" && opt["--detector"] != "off")
            throw UsageError("--detector: expected on or off, got '" + opt["--detector"] +
                             "'");
        if (opt["--samples"] != "fc32" && opt["--samples"] != "sc16")
            throw UsageError("--samples: expected fc32 (or cf32) or sc16, got '" +
                             opt["--samples"] + "'");
        const std::string work_time = opt["--work-time"];
        if (work_time != "on" && work_time != "off")
            throw UsageError("--work-time: expected on or off, got '" + work_time + "'");
        if (opt.has("--json"))
            check_writable("--json", opt["--json"]);

        // The layout, checked and named; a configuration keeps its name while only the
        // mode or the modulation differ (mimodet_bench's and mimodet_rx_bench's names).
        Report rep;
        rep.block = block;
        rep.backend = backend;
        const std::string mode = opt["--mode"], mod = opt["--modulation"];
        const auto B =
            static_cast<std::size_t>(parse_integer("--antennas", opt["--antennas"], 1));
        const auto U =
            static_cast<std::size_t>(parse_integer("--users", opt["--users"], 1));
        const std::string BxU = std::to_string(B) + "x" + std::to_string(U);
        bool custom = false;
        for (const char* o : { "--antennas",
                               "--users",
                               "--subcarriers",
                               "--symbols",
                               "--fft",
                               "--cp",
                               "--rate" })
            custom = custom || (opt.has(o) && !(ofdm && std::string(o) == "--users"));
        if (ofdm) {
            const mimodet::OfdmConfig o = ofdm_config(opt);
            const std::string problem = layout_problem(o);
            if (!problem.empty())
                throw UsageError(problem);
            try {
                o.validate();
            } catch (const std::invalid_argument& e) {
                throw UsageError(e.what());
            }
            char rate_text[32];
            std::snprintf(rate_text,
                          sizeof rate_text,
                          "%g",
                          parse_positive("--rate", opt["--rate"]) * 1e-6);
            rep.config = (custom ? "custom-" : "lte20-") + BxU + "-" + mod;
            rep.describe = "FFT " + opt["--fft"] + ", CP " + opt["--cp"] + ", " +
                           opt["--subcarriers"] + " subcarriers x " + opt["--symbols"] +
                           " data symbols, " + mode + ", " + rate_text + " MS/s";
        } else {
            parse_integer("--subcarriers", opt["--subcarriers"], 1);
            parse_integer("--symbols", opt["--symbols"], 1);
            if (U > B)
                throw UsageError("--users " + std::to_string(U) + " exceeds --antennas " +
                                 std::to_string(B) +
                                 " (the detector needs users <= antennas)");
            const std::string nxs = opt["--subcarriers"] + "x" + opt["--symbols"];
            if (custom)
                rep.config = "custom-" + BxU + "-" + mode + "-" + nxs;
            else if (opt["--config"] == "target")
                rep.config = "target-" + BxU + "-" + mode + "-" + nxs;
            else if (opt["--config"] == "lte")
                rep.config =
                    "lte-" + BxU + "-" + mode + "-" + mod + "-Nc" + opt["--subcarriers"];
            else
                rep.config = "nr-slot-" + BxU + "-" + mode;
            rep.describe = opt["--subcarriers"] + " subcarriers x " + opt["--symbols"] +
                           " symbols per frame, " + mod;
        }
        // GNU Radio's item sizes are ints: one OFDM symbol in (mmse) and out must fit.
        const double N = std::stod(opt["--subcarriers"]),
                     Q = double(mimodet::bits_per_symbol(
                         mimodet::parse_modulation(opt["--modulation"])));
        for (const auto& [bytes, what] :
             { std::pair<double, const char*>{ ofdm ? 0.0 : N * B * 8, "input" },
               { N * U * Q * 4, "output (LLR)" } })
            if (bytes > INT_MAX) {
                char size[32];
                std::snprintf(size, sizeof size, "%.3g", bytes / 1073741824.0);
                throw UsageError("--subcarriers " + opt["--subcarriers"] + ": an " +
                                 what + " item of " + size +
                                 " GiB is over GNU Radio's item size limit of 2 GiB");
            }
        if (mode == "cg" || mode == "cr")
            rep.describe += ", " + opt["--iterations"] + " iterations";
        if (opt.has("--buffer-items"))
            rep.describe += ", buffers of >= " + opt["buffer_n"] + " items";
        if (!ofdm && opt.has("--llr"))
            rep.describe += ", " +
                            mimodet::to_string(mimodet::parse_llr_format(opt["--llr"])) +
                            " LLRs";
        rep.describe += ", source " + opt["--source"];
        if (ofdm)
            rep.describe += ", samples " + opt["--samples"];
        if (opt["--detector"] == "off")
            rep.describe += ", sources alone (no detector)";

        if (work_time == "on") {
            // The block's time in work(): wall clock, not the thread's CPU time (the
            // configuration's default), which misses waits on the GPU and on workers.
            gr::prefs::singleton()->set_bool("PerfCounters", "on", true);
            gr::prefs::singleton()->set_string("PerfCounters", "clock", "monotonic");
        }
        if (ofdm)
            bench_ofdm(opt, rep);
        else
            bench_detector(opt, rep);
        print_row(rep, "median", median_run(rep.runs));
        if (opt.has("--json"))
            write_json(opt["--json"], rep, opt);
        return 0;
    } catch (const UsageError& e) {
        std::cerr << "mimodet_flowgraph_bench: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "mimodet_flowgraph_bench: " << e.what() << "\n";
        return 1;
    }
}
