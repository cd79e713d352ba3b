/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// clang-format off
/* mimodet_rx_bench: the receive chain plus detection, from 16-bit host samples to LLRs,
 * against real time. A stream of --frames simulated uplink frames (UplinkSimulator, each
 * after its own stretch of noise, 16-bit I/Q in pinned host memory) goes through
 *   cuda  CudaOfdmChain: upload, timing, CFO, FFT, channel and N0 estimation and the GPU
 *         detector, LLRs back to pinned host memory (float32; fp16 or int8 with --llr:
 *         half or a quarter of the bytes); host wall clock around process(),
 *         median of --reps after a warm-up
 *   cpu   the CPU chain (OfdmReceiver walked frame by frame, as apps/mimodet_rx) and the
 *         CPU detector, on the same samples converted to float (not timed: the
 *         conversion), fewer frames (--cpu-frames)
 * Reported: frames found (all must be), BER against the transmitted bits, time per frame,
 * the real-time factor (stream duration at --rate over processing time), detected Mb/s,
 * the GPU time of the chain per frame (CUDA events; not the copies, nor the detections,
 * which overlap the next window's chain on other streams), the host's time waiting for
 * the GPU, and the host-link bound measured in the same
 * run: max(samples in / H2D, LLRs out / D2H, both / both-at-once bandwidth) over the
 * time. Table on stdout, --json FILE.
 */
// clang-format on

#include <mimodet/detector.h>
#include <mimodet/ofdm.h>
#include <mimodet/precision.h>
#ifdef MIMODET_HAVE_CUDA
#include "bench_timing.h"
#include <cuda/cuda_detector.h>
#include <cuda/ofdm/ofdm_chain.h>
#endif
#include "cli_args.h"
#include "ofdm_configs.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace mimodet;
using mimodet::cli::check_writable;
using mimodet::cli::parse_integer;
using mimodet::cli::parse_positive;
using mimodet::cli::UsageError;
using mimodet::bench::layout_problem;
using mimodet::bench::lte20;

namespace {

struct RxConfig {
    std::string name;
    OfdmConfig ofdm;
    double rate; //!< samples per second of the radio
};

std::vector<RxConfig> builtin_configs()
{
    return { { "lte20-16x6-16qam", lte20(6), 30.72e6 },
             { "lte20-16x16-16qam", lte20(16), 30.72e6 } };
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

//! A stream of `frames` frames cycled from `distinct` simulated ones, as 16-bit I/Q.
struct Capture {
    std::size_t samples = 0;
    float scale = 0;                           //!< float value of one integer step
    std::vector<std::vector<std::int16_t>> iq; //!< [B][2 samples]
    std::vector<std::size_t> frame_of; //!< which distinct frame each stream frame is
    std::vector<std::vector<std::uint8_t>> bits; //!< [distinct] transmitted bits
};

Capture make_capture(const OfdmConfig& o, std::size_t frames, std::size_t distinct)
{
    std::vector<UplinkFrame> sims(distinct);
    for (std::size_t f = 0; f < distinct; ++f) {
        UplinkChannelConfig ch;
        ch.snr_db = 20.0;
        ch.cfo = 0.2 * (f % 2 ? -1.0 : 1.0);
        ch.lead_samples = 64 + 97 * f;
        ch.seed = 2024 + f;
        UplinkSimulator(o, ch).next_frame(sims[f]);
    }
    float peak = 0;
    for (const auto& s : sims)
        for (const auto& a : s.rx)
            for (const cf32& v : a)
                peak = std::max({ peak, std::abs(v.real()), std::abs(v.imag()) });
    Capture c;
    c.scale = peak / 30000.0f;
    c.iq.assign(o.num_antennas, {});
    for (std::size_t f = 0; f < frames; ++f) {
        const UplinkFrame& s = sims[f % distinct];
        c.frame_of.push_back(f % distinct);
        for (std::size_t b = 0; b < o.num_antennas; ++b)
            for (const cf32& v : s.rx[b]) {
                c.iq[b].push_back(
                    static_cast<std::int16_t>(std::lround(v.real() / c.scale)));
                c.iq[b].push_back(
                    static_cast<std::int16_t>(std::lround(v.imag() / c.scale)));
            }
    }
    c.samples = c.iq[0].size() / 2;
    for (auto& s : sims)
        c.bits.push_back(std::move(s.bits));
    return c;
}

struct Result {
    std::string config, backend, device, mode;
    std::string samples = "sc16", llr = "float32"; //!< host formats in and out (cuda)
    std::size_t frames = 0, found = 0;
    double ms = 0, ber = 0, realtime = 0, mbps = 0, bound_ms = 0;
    double chain_gpu_ms = 0; //!< GPU time of the chain per frame (median run)
    double host_wait_ms = 0; //!< host waiting for the GPU, whole call (median run)
};

double
ber_of(const Capture& c, const float* llr, std::size_t frames, std::size_t llr_frame)
{
    std::size_t errors = 0;
    for (std::size_t f = 0; f < frames; ++f) {
        const auto& bits = c.bits[c.frame_of[f]];
        for (std::size_t i = 0; i < llr_frame; ++i)
            errors += (llr[f * llr_frame + i] > 0) != (bits[i] != 0);
    }
    return frames ? double(errors) / double(frames * llr_frame) : 0.0;
}

Result
bench_cpu(const RxConfig& rc, const DetectorConfig& det, std::size_t frames, int reps)
{
    const OfdmConfig& o = rc.ofdm;
    const Capture c = make_capture(o, frames, std::min<std::size_t>(frames, 4));
    std::vector<std::vector<cf32>> rx(o.num_antennas);
    for (std::size_t b = 0; b < o.num_antennas; ++b)
        for (std::size_t n = 0; n < c.samples; ++n)
            rx[b].emplace_back(c.iq[b][2 * n] * c.scale, c.iq[b][2 * n + 1] * c.scale);
    DetectorConfig dc = det;
    dc.num_antennas = o.num_antennas;
    dc.num_users = o.num_users;
    dc.num_subcarriers = o.num_subcarriers;
    dc.modulation = o.modulation;
    dc.backend = Backend::cpu;
    auto detector = make_detector(dc);
    OfdmReceiver receiver(o);
    const std::size_t llr_frame = o.num_data_symbols * o.dims().llr_items();
    std::vector<float> llr(frames * llr_frame);
    Result r;
    r.backend = "cpu";
    r.samples = "cf32"; // the same samples converted to float
    r.device = "CPU";
    std::vector<double> times;
    for (int rep = 0; rep < reps; ++rep) {
        const auto t0 = Clock::now();
        std::size_t pos = 0, found = 0;
        OfdmReception rec;
        while (found < frames) {
            std::vector<const cf32*> at;
            for (const auto& a : rx)
                at.push_back(a.data() + pos);
            if (!receiver.receive(at, c.samples - pos, rec))
                break;
            detector->set_channel(rec.h.data(), rec.n0);
            detector->detect(rec.y.data(), o.num_data_symbols, &llr[found * llr_frame]);
            pos += rec.next_start;
            ++found;
        }
        times.push_back(ms_since(t0));
        r.found = found;
    }
    r.frames = frames;
    r.ms = median(times);
    r.ber = ber_of(c, llr.data(), r.found, llr_frame);
    r.realtime = (double(c.samples) / rc.rate) / (r.ms * 1e-3);
    r.mbps = double(r.found * llr_frame) / (r.ms * 1e3);
    return r;
}

#ifdef MIMODET_HAVE_CUDA
Result bench_cuda(const RxConfig& rc,
                  const DetectorConfig& det,
                  std::size_t frames,
                  int reps,
                  std::size_t frames_per_window,
                  const bench::Bandwidth& bw,
                  bool cf32_samples,
                  LlrFormat llr_format)
{
    const OfdmConfig& o = rc.ofdm;
    const Capture c = make_capture(o, frames, std::min<std::size_t>(frames, 8));
    // Pinned host memory, as a radio driver's receive buffers would be: its sc16, or
    // (--samples cf32) the scaled complex floats a GNU Radio stream carries.
    const std::size_t B = o.num_antennas;
    std::vector<std::unique_ptr<cuda::Buffer<std::int16_t>>> pinned;
    std::vector<std::unique_ptr<cuda::Buffer<cf32>>> pinned_cf32;
    std::vector<const void*> antennas;
    for (std::size_t b = 0; b < B; ++b) {
        if (cf32_samples) {
            pinned_cf32.push_back(std::make_unique<cuda::Buffer<cf32>>(c.samples, true));
            for (std::size_t n = 0; n < c.samples; ++n)
                pinned_cf32.back()->get()[n] =
                    cf32(c.iq[b][2 * n] * c.scale, c.iq[b][2 * n + 1] * c.scale);
            antennas.push_back(pinned_cf32.back()->get());
            continue;
        }
        pinned.push_back(
            std::make_unique<cuda::Buffer<std::int16_t>>(2 * c.samples, true));
        std::memcpy(
            pinned.back()->get(), c.iq[b].data(), 2 * c.samples * sizeof(std::int16_t));
        antennas.push_back(pinned.back()->get());
    }
    const auto format = cf32_samples ? cuda::SampleFormat::cf32 : cuda::SampleFormat::sc16;
    const std::size_t llr_frame = o.num_data_symbols * o.dims().llr_items();
    cuda::Buffer<float> llr(frames * llr_frame, true);
    // --llr int8 / fp16: a quarter / half of the download (ChainOutputs::llr_int8, 8
    // steps per unit; llr_fp16, binary16 codes).
    const bool int8_llrs = llr_format == LlrFormat::int8;
    const bool fp16_llrs = llr_format == LlrFormat::fp16;
    std::unique_ptr<cuda::Buffer<std::int8_t>> llr_int8;
    std::unique_ptr<cuda::Buffer<std::uint16_t>> llr_fp16;
    if (int8_llrs)
        llr_int8 = std::make_unique<cuda::Buffer<std::int8_t>>(frames * llr_frame, true);
    if (fp16_llrs)
        llr_fp16 = std::make_unique<cuda::Buffer<std::uint16_t>>(frames * llr_frame, true);
    cuda::ChainOptions opt;
    opt.frames_per_window = frames_per_window;
    opt.sc16_scale = c.scale;
    cuda::CudaOfdmChain chain(o, det, opt);
    cuda::ChainOutputs out;
    out.max_frames = frames;
    if (int8_llrs)
        out.llr_int8 = llr_int8->get();
    else if (fp16_llrs)
        out.llr_fp16 = llr_fp16->get();
    else
        out.llr = llr.get();
    Result r;
    r.backend = "cuda";
    r.samples = cf32_samples ? "cf32" : "sc16";
    r.llr = to_string(llr_format);
    r.device = cuda::device_description(opt.device);
    r.frames = frames;
    std::vector<double> times;
    std::vector<cuda::ChainTimes> gpu_times;
    for (int rep = 0; rep < reps + 1; ++rep) {
        std::fill(llr.get(), llr.get() + llr.size(), std::nanf(""));
        if (int8_llrs)
            std::fill(llr_int8->get(), llr_int8->get() + llr_int8->size(), std::int8_t(0));
        if (fp16_llrs)
            std::fill(llr_fp16->get(), llr_fp16->get() + llr_fp16->size(), std::uint16_t(0));
        const auto t0 = Clock::now();
        const auto found =
            chain.process(antennas, format, c.samples, out);
        const double ms = ms_since(t0);
        if (rep > 0) { // the first run warms up (module load, cuFFT, first touches)
            times.push_back(ms);
            gpu_times.push_back(chain.last_times());
        }
        r.found = found.size();
    }
    r.ms = median(times);
    const auto at_median = std::find(times.begin(), times.end(), r.ms) - times.begin();
    const cuda::ChainTimes& t = gpu_times[at_median];
    r.host_wait_ms = t.host_wait_ms;
    r.chain_gpu_ms = r.found ? t.chain_ms / r.found : 0.0;
    if (int8_llrs) // the signs are the decisions (0: an erasure, counted as an error)
        for (std::size_t i = 0; i < r.found * llr_frame; ++i)
            llr.get()[i] = llr_int8->get()[i];
    if (fp16_llrs)
        for (std::size_t i = 0; i < r.found * llr_frame; ++i)
            llr.get()[i] = precision::decode_value(Precision::fp16, llr_fp16->get()[i]);
    r.ber = ber_of(c, llr.get(), r.found, llr_frame);
    r.realtime = (double(c.samples) / rc.rate) / (r.ms * 1e-3);
    r.mbps = double(r.found * llr_frame) / (r.ms * 1e3);
    const double in_bytes =
        double(c.samples) * B * (cf32_samples ? sizeof(cf32) : 2 * sizeof(std::int16_t));
    const double out_bytes =
        double(r.found * llr_frame) * llr_bytes(llr_format);
    // Each way alone, and both at once as this machine's link carries them.
    r.bound_ms = std::max({ in_bytes / (bw.h2d_gbs * 1e6),
                            out_bytes / (bw.d2h_gbs * 1e6),
                            (in_bytes + out_bytes) / (bw.duplex_gbs * 1e6) });
    return r;
}
#endif

void usage()
{
    std::cout
        << "usage: mimodet_rx_bench [--config NAME|all|list] [--backend cuda|cpu|both]\n"
           "         [--mode chol|cg|cr|zf] [--iterations I] [--frames F] [--cpu-frames "
           "F]\n"
           "         [--reps R] [--frames-per-window W] [--samples sc16|cf32]\n"
           "         [--llr float32|fp16|int8]\n"
           "         [--json FILE]\n"
           "       custom: --fft N --cp N --subcarriers N --symbols N --antennas B\n"
           "               --users U --modulation qpsk|16qam|64qam|256qam --rate S/s\n";
}


} // namespace

int main(int argc, char** argv)
{
    std::string config = "all", backend = "both", json;
    DetectorConfig det;
    det.mode = DetectorMode::chol;
    std::size_t frames = 64, cpu_frames = 4, per_window = 8;
    bool cf32_samples = false; // the GPU's input: sc16 as from the radio, or cf32
    // the GPU's output: float32 LLRs, fp16 (half the bytes) or int8 (a quarter)
    LlrFormat llr_format = LlrFormat::float32;
    int reps = 10;
    RxConfig custom{ "custom", lte20(6), 30.72e6 };
    bool is_custom = false;
    try {
        std::vector<std::string> given; // the options on the command line
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "-h" || a == "--help") {
                usage();
                return 0;
            }
            auto next = [&]() -> std::string {
                if (i + 1 >= argc)
                    throw UsageError(a + ": needs a value (see --help)");
                given.push_back(a);
                return argv[++i];
            };
            auto size = [&](long long low) {
                const std::string text = next();
                return static_cast<std::size_t>(parse_integer(a, text, low));
            };
            if (a == "--config")
                config = next();
            else if (a == "--backend")
                backend = next();
            else if (a == "--mode") {
                const std::string text = next();
                try {
                    det.mode = parse_detector_mode(text);
                } catch (const std::invalid_argument& e) {
                    throw UsageError("--mode: " + std::string(e.what()));
                }
            } else if (a == "--iterations")
                det.iterations = static_cast<unsigned>(size(1));
            else if (a == "--frames")
                frames = size(1);
            else if (a == "--cpu-frames")
                cpu_frames = size(1);
            else if (a == "--reps")
                reps = static_cast<int>(size(1));
            else if (a == "--frames-per-window")
                per_window = size(1);
            else if (a == "--json")
                json = next();
            else if (a == "--samples") {
                const std::string text = next();
                if (text != "sc16" && text != "cf32")
                    throw UsageError("--samples: expected sc16 or cf32, got '" + text + "'");
                cf32_samples = text == "cf32";
            }
            else if (a == "--llr") {
                const std::string text = next();
                if (text != "float32" && text != "fp16" && text != "int8")
                    throw UsageError("--llr: expected float32, fp16 or int8, got '" + text +
                                     "'");
                llr_format = parse_llr_format(text);
            }
            else if (a == "--fft")
                custom.ofdm.fft_size = size(1), is_custom = true;
            else if (a == "--cp")
                custom.ofdm.cp_length = size(0), is_custom = true;
            else if (a == "--subcarriers")
                custom.ofdm.num_subcarriers = size(1), is_custom = true;
            else if (a == "--symbols")
                custom.ofdm.num_data_symbols = size(1), is_custom = true;
            else if (a == "--antennas")
                custom.ofdm.num_antennas = size(1), is_custom = true;
            else if (a == "--users")
                custom.ofdm.num_users = size(1), is_custom = true;
            else if (a == "--modulation") {
                const std::string text = next();
                try {
                    custom.ofdm.modulation = parse_modulation(text);
                } catch (const std::invalid_argument& e) {
                    throw UsageError("--modulation: " + std::string(e.what()));
                }
                is_custom = true;
            } else if (a == "--rate") {
                const std::string text = next();
                custom.rate = parse_positive("--rate", text), is_custom = true;
            } else
                throw UsageError(a.rfind("-", 0) == 0
                                     ? "unknown option '" + a + "' (see --help)"
                                     : "unexpected argument '" + a + "' (see --help)");
        }
        // Every option is checked here, before any stream is simulated.
        auto was_given = [&](const char* o) {
            return std::find(given.begin(), given.end(), o) != given.end();
        };
        if (backend != "cuda" && backend != "cpu" && backend != "both")
            throw UsageError("--backend: expected cuda, cpu or both, got '" + backend +
                             "'");
        if (backend == "cpu")
            for (const char* o : { "--frames", "--frames-per-window", "--samples" })
                if (was_given(o))
                    throw UsageError(std::string(o) +
                                     " applies to the cuda backend (the cpu one runs "
                                     "--cpu-frames frames)");
        if (backend == "cuda" && was_given("--cpu-frames"))
            throw UsageError("--cpu-frames applies to the cpu backend (the cuda one runs "
                             "--frames frames)");
        if (is_custom && was_given("--config"))
            throw UsageError(
                "--config and a custom configuration (--fft, --antennas ...): "
                "give one");
        if (is_custom) {
            const std::string problem = layout_problem(custom.ofdm);
            if (!problem.empty())
                throw UsageError(problem);
        }
        if (!json.empty() || was_given("--json"))
            check_writable("--json", json);
        std::vector<RxConfig> configs;
        for (const auto& c : builtin_configs())
            if (config == "all" || config == c.name)
                configs.push_back(c);
        if (config == "list") {
            for (const auto& c : builtin_configs())
                std::cout << c.name << "\n";
            return 0;
        }
        if (is_custom)
            configs = { custom };
        if (configs.empty())
            throw UsageError("--config: no configuration named '" + config +
                             "' (--config list)");
        for (auto& c : configs)
            c.ofdm.validate();

        std::vector<Result> results;
#ifdef MIMODET_HAVE_CUDA
        bench::Bandwidth bw;
        std::string why;
        const bool gpu = backend != "cpu" && cuda::device_count(&why) > 0;
        if (backend == "cuda" && !gpu)
            throw std::runtime_error("--backend cuda: " + why);
        if (gpu) {
            bw = bench::measure_bandwidth();
            std::printf("%s: H2D %.1f GB/s, D2H %.1f GB/s, both at once %.1f GB/s "
                        "(pinned, measured now)\n",
                        cuda::device_description(0).c_str(),
                        bw.h2d_gbs,
                        bw.d2h_gbs,
                        bw.duplex_gbs);
        }
#else
        (void)frames, (void)per_window, (void)cf32_samples, (void)llr_format; // cuda's options
        if (backend == "cuda")
            throw std::runtime_error("--backend cuda: this build has no CUDA");
#endif
        for (const auto& c : configs) {
            std::fprintf(stderr, "== %s ...\n", c.name.c_str());
#ifdef MIMODET_HAVE_CUDA
            if (gpu) {
                Result r =
                    bench_cuda(c, det, frames, reps, per_window, bw, cf32_samples, llr_format);
                r.config = c.name;
                r.mode = to_string(det.mode);
                results.push_back(r);
            }
#endif
            if (backend == "cpu" || backend == "both") {
                Result r = bench_cpu(c, det, cpu_frames, std::max(1, std::min(reps, 3)));
                r.config = c.name;
                r.mode = to_string(det.mode);
                results.push_back(r);
            }
        }
        std::printf(
            "\n| config | backend | mode | frames found | ms | ms/frame | x real time "
            "| Mb/s | host-link bound %% | GPU chain ms/frame | host wait ms | BER "
            "|\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        bool all_found = true;
        for (const auto& r : results) {
            all_found = all_found && r.found == r.frames;
            const double per = r.found ? 1.0 / r.found : 0.0;
            auto gpu_ms = [&](double ms) {
                return r.backend == "cuda" ? std::to_string(ms).substr(0, 6) : "-";
            };
            std::printf("| %s | %s | %s | %zu/%zu | %.3f | %.4f | %.2f | %.0f | %s | %s "
                        "| %s | %.2e |\n",
                        r.config.c_str(),
                        r.backend.c_str(),
                        r.mode.c_str(),
                        r.found,
                        r.frames,
                        r.ms,
                        r.ms * per,
                        r.realtime,
                        r.mbps,
                        r.bound_ms > 0
                            ? std::to_string(int(100 * r.bound_ms / r.ms)).c_str()
                            : "-",
                        gpu_ms(r.chain_gpu_ms).c_str(),
                        gpu_ms(r.host_wait_ms).c_str(),
                        r.ber);
        }
        if (!json.empty()) {
            std::ofstream out(json);
            out << "{\n  \"results\": [\n";
            for (std::size_t i = 0; i < results.size(); ++i) {
                const auto& r = results[i];
                out << "    {\"config\": \"" << r.config << "\", \"backend\": \""
                    << r.backend << "\", \"device\": \"" << r.device << "\", \"mode\": \""
                    << r.mode << "\", \"samples\": \"" << r.samples << "\", \"llr\": \""
                    << r.llr << "\", \"frames\": " << r.frames
                    << ", \"found\": " << r.found << ", \"ms\": " << r.ms
                    << ", \"realtime_factor\": " << r.realtime << ", \"mbps\": " << r.mbps
                    << ", \"host_link_bound_ms\": " << r.bound_ms
                    << ", \"gpu_chain_ms_per_frame\": " << r.chain_gpu_ms
                    << ", \"host_wait_ms\": " << r.host_wait_ms << ", \"ber\": " << r.ber
                    << "}" << (i + 1 < results.size() ? "," : "") << "\n";
            }
            out << "  ]\n}\n";
        }
        if (!all_found) {
            std::fprintf(stderr, "mimodet_rx_bench: a run did not find every frame\n");
            return 1;
        }
    } catch (const UsageError& e) {
        std::fprintf(stderr, "mimodet_rx_bench: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mimodet_rx_bench: %s\n", e.what());
        return 2;
    }
    return 0;
}
