/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// clang-format off
/* mimodet_bench: throughput and latency of the detectors on the configurations of the papers
 * (li2015 Tables I/II, broumas2023's 32x32 batches, a 5G NR 100 MHz slot, roger2012 Tables
 * 1-2) or any other.
 *
 * For the GPU (median of --reps after warm-up):
 *   kernel-only  set_channel + detect on data already on the device, per frame, timed with
 *                CUDA events after an L2 flush and with the stream held until all launches
 *                are queued (so the events time the GPU, not the host's launch rate);
 *                the flush leaves dirty lines whose write-back is timed, --l2 clean
 *                writes them back first (L2Flusher)
 *   end-to-end   the same from pinned host memory (channel and symbols up, LLRs down, as
 *                li2015) through the engine's stream pipeline (detect_with_channel: the
 *                sphere decoders overlap the channel with the symbols), host clock;
 *                pageable buffers (a GNU Radio block's) add a staging copy not timed here.
 *                --devices 0,1 runs it on several GPUs, each frame's subcarriers split
 *                between them (MultiGpuDetector); the bound below stays the first GPU's
 *   baseline     li2015's cuBLAS/cuSOLVER pipeline (cublas_baseline.cu), timed like
 *                kernel-only, Cholesky mode only
 *   issue us     host time to queue one detect_device call on a formed channel, with
 *                the GPU held so that only the queuing is timed (mean of 32 calls)
 * and, measured in the same run, the device-to-device copy bandwidth (bytes read + written)
 * and the host-to-device and device-to-host bandwidths, which set the floors:
 *   kernel floor = (H + y + LLR bytes, each once) / D2D bandwidth
 *   e2e bound    = max((H + y bytes) / H2D, LLR bytes / D2H, all of them / both ways)
 * and the stream floor: the same bytes read and written by a kernel without arithmetic,
 * timed like kernel-only after the same flush (stream% = its time / the kernel's), the
 * floor in the cache state the kernel meets, the flush's write-back included.
 * roger2012 (--config roger2012): 4x4 FSD/SFSD, 100 LTE slots of 7 OFDM symbols with a
 * channel per slot (folded into 100 x N_c channels), as above, then one slot alone
 * (latency) and, unless --cpu off, the CPU implementation on all cores; a second table
 * sets them beside the paper's figures.
 * apsm (--config apsm): mehlhose2022's transmission, APSM training and detection on the
 * CPU and on the GPU, beside the paper's Table 2 (run_apsm_bench).
 * --backend cpu times the CPU implementation (end-to-end only). Table on stdout, --json FILE.
 * Kernel-only, the baseline and the bandwidths run on the first GPU of --devices (--device D
 * is --devices D); --streams sets the end-to-end engines' CUDA streams and --graphs off
 * keeps them from replaying recurring chunks as CUDA graphs (EngineOptions). Kernel-only goes
 * through the device API, where the detect call prepares the channel itself (fused into
 * its equalize kernel; --fuse off: the prepare kernel first, in the same call), so
 * "prep ms" (the time to the end of set_channel_device) is ~0 and "eq ms" is all of it.
 */
// clang-format on

#include <mimodet/ber_sim.h>
#include <mimodet/channel_sim.h>
#include <mimodet/detector.h>
#include <mimodet/precision.h>
#ifdef MIMODET_HAVE_CUDA
#include "bench_timing.h"
#include "cublas_baseline.h"
#include <cuda/apsm/apsm_detector.h>
#include <cuda/apsm/apsm_trainer.h>
#include <cuda/apsm/cuda_apsm_receiver.h>
#include <cuda/cuda_detector.h>
#include <cuda/multi_gpu_detector.h>
#include <cuda_runtime.h>
#endif
#include "cli_args.h"
#include "core/apsm/apsm.h"
#include "core/apsm/noma_scenario.h"
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace mimodet;
using mimodet::cli::check_writable;
using mimodet::cli::parse_integer;
using mimodet::cli::UsageError;

namespace {

struct BenchConfig {
    std::string name;
    std::size_t b, u, nsc, nsym;
    Modulation mod;
    DetectorMode mode;
    unsigned iterations;
    //! roger2012's tables: `slots` LTE slots (7 OFDM symbols, a channel each) of
    //! `slot_subcarriers`, folded into nsc = slots x N_c channels; the paper's figure.
    std::size_t slots = 0, slot_subcarriers = 0;
    double paper_mbps = 0, paper_ms = 0;
    //! --precision: storage of H and y. Not fp32 on the GPU: the inputs are codes
    //! (mimodet/precision.h, made before timing) in device memory for kernel-only and in
    //! pinned host memory end to end, through the detector's *_encoded calls.
    Precision precision = Precision::fp32;
};

/* roger2012 Tables 1 (FSD) and 2 (SFSD), 4x4 on a Tesla C2070: Mb/s and ms per slot for
 * N_c = 150, 300, 600, 900, 1200 (index 1..5; N_c = 72 is not in the paper), columns
 * QPSK, 16-QAM, 64-QAM. */
constexpr std::size_t kRogerSubcarriers[] = { 72, 150, 300, 600, 900, 1200 };
constexpr double kRogerFsd[6][3][2] = {
    { { 0, 0 }, { 0, 0 }, { 0, 0 } },
    { { 182.61, 0.046 }, { 311.11, 0.054 }, { 115.07, 0.219 } },
    { { 311.11, 0.054 }, { 436.36, 0.077 }, { 123.23, 0.409 } },
    { { 430.77, 0.078 }, { 533.33, 0.126 }, { 130.57, 0.772 } },
    { { 494.12, 0.102 }, { 579.31, 0.174 }, { 131.25, 1.15 } },
    { { 537.60, 0.125 }, { 610.91, 0.220 }, { 132.81, 1.52 } },
};
constexpr double kRogerSfsd[6][3][2] = {
    { { 0, 0 }, { 0, 0 }, { 0, 0 } },
    { { 73.04, 0.115 }, { 45.04, 0.373 }, { 9.82, 2.57 } },
    { { 82.35, 0.204 }, { 49.41, 0.680 }, { 9.74, 5.17 } },
    { { 105.99, 0.317 }, { 52.09, 1.29 }, { 9.68, 10.40 } },
    { { 118.31, 0.426 }, { 51.88, 1.94 }, { 9.59, 15.77 } },
    { { 125.61, 0.535 }, { 52.09, 2.58 }, { 9.60, 21 } },
};
constexpr std::size_t kRogerSlots = 100, kRogerSymbolsPerSlot = 7;

std::vector<BenchConfig> builtin_configs()
{
    std::vector<BenchConfig> v;
    const auto m16 = Modulation::qam16;
    for (std::size_t n : { 8, 16, 32, 64 }) { // li2015 Table I, 128x16
        v.push_back({ "li2015-128x16-chol-N" + std::to_string(n),
                      128,
                      16,
                      128,
                      n,
                      m16,
                      DetectorMode::chol,
                      3 });
        v.push_back({ "li2015-128x16-cg3-N" + std::to_string(n),
                      128,
                      16,
                      128,
                      n,
                      m16,
                      DetectorMode::cg,
                      3 });
    }
    for (std::size_t n : { 2, 4, 8, 16 }) { // li2015 Table I, 256x32
        v.push_back({ "li2015-256x32-chol-N" + std::to_string(n),
                      256,
                      32,
                      128,
                      n,
                      m16,
                      DetectorMode::chol,
                      4 });
        v.push_back({ "li2015-256x32-cg4-N" + std::to_string(n),
                      256,
                      32,
                      128,
                      n,
                      m16,
                      DetectorMode::cg,
                      4 });
    }
    for (auto mode :
         { DetectorMode::chol, DetectorMode::cg, DetectorMode::cr }) // the 40 Gb/s target
        v.push_back({ "target-128x16-" + to_string(mode) + "-1024x64",
                      128,
                      16,
                      1024,
                      64,
                      m16,
                      mode,
                      3 });
    for (std::size_t b :
         { 64, 128 }) // one 5G NR 100 MHz slot: 3276 subcarriers x 14 symbols
        for (auto mode : { DetectorMode::chol, DetectorMode::cg, DetectorMode::cr })
            v.push_back({ "nr-slot-" + std::to_string(b) + "x16-" + to_string(mode),
                          b,
                          16,
                          3276,
                          14,
                          m16,
                          mode,
                          3 });
    for (std::size_t n :
         { 128, 1024, 8192 }) // broumas2023: n independent 32x32 systems, 3 CR iterations
        v.push_back({ "broumas-32x32-cr3-" + std::to_string(n),
                      32,
                      32,
                      n,
                      1,
                      m16,
                      DetectorMode::cr,
                      3 });
    // castaneda PULPO: BOX at 128x16 256-QAM (its 240 Mb/s case; issue target 20 Gb/s
    // kernel-only with 20 iterations), the 16-QAM target size, and load factor 1.
    v.push_back({ "pulpo-128x16-box-256qam-1024x64",
                  128,
                  16,
                  1024,
                  64,
                  Modulation::qam256,
                  DetectorMode::box,
                  20 });
    v.push_back({ "target-128x16-box-1024x64", 128, 16, 1024, 64, m16, DetectorMode::box, 20 });
    v.push_back({ "box-16x16-qpsk-1024x64",
                  16,
                  16,
                  1024,
                  64,
                  Modulation::qpsk,
                  DetectorMode::box,
                  20 });
    for (auto mode : { DetectorMode::fsd, DetectorMode::sfsd }) // roger2012 Tables 1-2
        for (int m = 0; m < 3; ++m)
            for (int i = 0; i < 6; ++i) {
                const Modulation mod =
                    m == 0 ? Modulation::qpsk : m == 1 ? Modulation::qam16 : Modulation::qam64;
                const std::size_t nc = kRogerSubcarriers[i];
                const double* paper =
                    (mode == DetectorMode::fsd ? kRogerFsd : kRogerSfsd)[i][m];
                BenchConfig c{ "roger2012-" + to_string(mode) + "-" + to_string(mod) +
                                   "-Nc" + std::to_string(nc),
                               4,
                               4,
                               kRogerSlots * nc,
                               kRogerSymbolsPerSlot,
                               mod,
                               mode,
                               1 };
                c.slots = kRogerSlots;
                c.slot_subcarriers = nc;
                c.paper_mbps = paper[0];
                c.paper_ms = paper[1];
                v.push_back(c);
            }
    return v;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Result {
    BenchConfig c;
    std::string backend, device;
    //! The detector timed end-to-end, e.g. "cuda-chol x2 GPUs (0,1)".
    std::string e2e_engine;
    double bits = 0, kernel_ms = 0, e2e_ms = 0, kernel_floor_ms = 0, e2e_bound_ms = 0,
           ber = 0;
    double prepare_ms = 0,
           equalize_ms = 0; //!< kernel-only split: per channel, per symbols
    //! In-run cuBLAS/cuSOLVER baseline (li2015's library approach; chol only): its
    //! kernel-only time and the share of confident hard decisions it agrees on with ours.
    double baseline_ms = 0, baseline_agreement = 0;
    //! Host time to queue one detect_device call on a formed channel (the GPU held, so
    //! that only the queuing is timed): the launch overhead that CUDA graphs cut.
    double issue_us = 0;
    //! The call's bytes (H and y read, the LLRs written) moved without arithmetic, timed
    //! like it after the same L2 flush: the floor in the same cache state.
    double stream_floor_ms = 0;
    std::uint64_t bytes_in = 0, bytes_out = 0;
    //! roger2012 configurations: one slot's kernel-only and end-to-end times, and the
    //! CPU implementation's time for all the slots, in the same run.
    double slot_kernel_ms = 0, slot_e2e_ms = 0, cpu_ms = 0;
    std::string cpu_engine;
};

ChannelSimConfig sim_config(const BenchConfig& c)
{
    ChannelSimConfig s;
    s.num_antennas = c.b;
    s.num_users = c.u;
    s.num_subcarriers = c.nsc;
    s.symbols_per_frame = c.nsym;
    s.modulation = c.mod;
    s.snr_db = 10.0;
    s.seed = 2024;
    return s;
}

std::vector<Frame> make_frames(const BenchConfig& c, int count)
{
    ChannelSimulator sim(sim_config(c));
    std::vector<Frame> frames(static_cast<std::size_t>(count));
    for (auto& f : frames)
        sim.next_frame(f);
    return frames;
}

DetectorConfig detector_config(const BenchConfig& c, Backend backend)
{
    DetectorConfig d = detector_config_for(sim_config(c), c.mode, c.iterations, backend);
    if (c.mode == DetectorMode::box) // --iterations: BOX's steps
        d.box_iterations = c.iterations;
    d.precision = c.precision;
    return d;
}

double ber_of(const std::vector<float>& llr, const std::vector<std::uint8_t>& bits)
{
    std::size_t errors = 0;
    for (std::size_t i = 0; i < llr.size(); ++i)
        errors += hard_bit(llr[i]) != bits[i];
    return llr.empty() ? 0.0 : static_cast<double>(errors) / llr.size();
}

Result bench_cpu(const BenchConfig& c, int reps)
{
    Result r;
    r.c = c;
    r.backend = "cpu";
    r.device = "CPU";
    const auto frames = make_frames(c, 2);
    auto det = make_detector(detector_config(c, Backend::cpu));
    r.e2e_engine = det->name();
    const Dims d = det->config().dims();
    std::vector<float> llr(c.nsym * d.llr_items());
    std::vector<double> times;
    for (int i = 0; i < reps + 1; ++i) {
        const Frame& f = frames[static_cast<std::size_t>(i) % frames.size()];
        const auto t0 = std::chrono::steady_clock::now();
        det->set_channel(f.h.data(), f.n0);
        det->detect(f.y.data(), c.nsym, llr.data());
        const auto t1 = std::chrono::steady_clock::now();
        if (i > 0) // the first call warms caches and thread pools
            times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    r.e2e_ms = median(times);
    r.bits = static_cast<double>(llr.size());
    r.ber = ber_of(llr, frames[static_cast<std::size_t>(reps) % frames.size()].bits);
    return r;
}

#ifdef MIMODET_HAVE_CUDA
#define CHECK(call)                                              \
    do {                                                         \
        const cudaError_t e_ = (call);                           \
        if (e_ != cudaSuccess)                                   \
            throw std::runtime_error(std::string(#call) + ": " + \
                                     cudaGetErrorString(e_));    \
    } while (0)

//! Long enough for the host to queue one frame's launches (the cuBLAS pipeline issues
//! ~10).
constexpr double kHoldMicroseconds = 200.0;

using bench::Bandwidth;
using bench::measure_bandwidth;

Result bench_cuda(const BenchConfig& c,
                  int reps,
                  int streams,
                  bool fuse,
                  bool graphs,
                  bool clean_l2,
                  const std::vector<int>& devices,
                  const Bandwidth& bw)
{
    const int device = devices.front();
    Result r;
    r.c = c;
    r.backend = "cuda";
    r.device = cuda::device_description(device);
    const int kSets =
        2; // rotate input sets so that repeated runs do not just measure the L2
    const auto frames = make_frames(c, kSets);
    cuda::EngineOptions opt;
    opt.device = device;
    opt.streams = streams;
    opt.fuse_prepare = fuse;
    opt.graphs = graphs;
    cuda::CudaDetector det(detector_config(c, Backend::cuda), opt);
    const Dims d = det.config().dims();
    const std::size_t y_count = c.nsym * d.rx_items(), llr_count = c.nsym * d.llr_items();
    r.bits = static_cast<double>(llr_count);
    // Narrow input: the frames as codes and scales (the bytes that move), made here.
    const bool narrow = c.precision != Precision::fp32;
    const std::size_t item_bytes =
        narrow ? 2 * precision::code_bytes(c.precision) : sizeof(cf32);
    r.bytes_in = (d.channel_items() + y_count) * item_bytes +
                 (narrow ? c.nsym * sizeof(float) : 0);
    r.bytes_out = llr_count * sizeof(float);
    struct Codes {
        std::vector<unsigned char> h, y;
        float h_scale = 1.0f;
        std::vector<float> y_scales;
    };
    std::vector<Codes> codes(narrow ? frames.size() : 0);
    for (std::size_t k = 0; k < codes.size(); ++k) {
        Codes& e = codes[k];
        e.h.resize(d.channel_items() * item_bytes);
        e.y.resize(y_count * item_bytes);
        e.y_scales.resize(c.nsym);
        e.h_scale = precision::encode_block(
            c.precision, frames[k].h.data(), d.channel_items(), e.h.data());
        for (std::size_t s = 0; s < c.nsym; ++s)
            e.y_scales[s] = precision::encode_block(c.precision,
                                                    frames[k].y.data() + s * d.rx_items(),
                                                    d.rx_items(),
                                                    e.y.data() + s * d.rx_items() * item_bytes);
    }

    // Kernel-only: everything already on the device (narrow: the codes in dh and dy).
    std::vector<std::unique_ptr<cuda::Buffer<cf32>>> dh, dy;
    std::vector<std::unique_ptr<cuda::Buffer<float>>> dscales;
    for (std::size_t k = 0; k < frames.size(); ++k) {
        const auto& f = frames[k];
        dh.push_back(std::make_unique<cuda::Buffer<cf32>>(f.h.size(), false));
        dy.push_back(std::make_unique<cuda::Buffer<cf32>>(f.y.size(), false));
        if (narrow) {
            dscales.push_back(std::make_unique<cuda::Buffer<float>>(c.nsym, false));
            cuda::copy_to_device(dh.back()->get(), codes[k].h.data(), codes[k].h.size());
            cuda::copy_to_device(dy.back()->get(), codes[k].y.data(), codes[k].y.size());
            cuda::copy_to_device(
                dscales.back()->get(), codes[k].y_scales.data(), c.nsym * sizeof(float));
        } else {
            cuda::copy_to_device(dh.back()->get(), f.h.data(), dh.back()->bytes());
            cuda::copy_to_device(dy.back()->get(), f.y.data(), dy.back()->bytes());
        }
    }
    // The device API on frame k (codes where narrow).
    auto set_channel_device = [&](std::size_t k, cudaStream_t s) {
        if (narrow)
            det.set_channel_device_encoded(dh[k]->get(), codes[k].h_scale, frames[k].n0, s);
        else
            det.set_channel_device(dh[k]->get(), frames[k].n0, s);
    };
    auto detect_device = [&](std::size_t k, float* llr, cudaStream_t s) {
        if (narrow)
            det.detect_device_encoded(dy[k]->get(), dscales[k]->get(), c.nsym, llr, nullptr, s);
        else
            det.detect_device(dy[k]->get(), c.nsym, llr, nullptr, s);
    };
    cuda::Buffer<float> dllr(llr_count, false);
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    // Each timed frame starts with a cold L2 and with all its launches already queued.
    bench::L2Flusher flusher(clean_l2);
    cudaEvent_t e_mid;
    CHECK(cudaEventCreate(&e_mid));
    std::vector<double> kernel_ms, prepare_ms, equalize_ms;
    for (int i = 0; i < reps + 3; ++i) {
        const std::size_t k = static_cast<std::size_t>(i) % frames.size();
        flusher.flush(stream);
        bench::hold_stream(stream, kHoldMicroseconds);
        CHECK(cudaEventRecord(e0, stream));
        set_channel_device(k, stream);
        CHECK(cudaEventRecord(e_mid, stream));
        detect_device(k, dllr.get(), stream);
        CHECK(cudaEventRecord(e1, stream));
        CHECK(cudaEventSynchronize(e1));
        float t = 0, t_prepare = 0;
        CHECK(cudaEventElapsedTime(&t, e0, e1));
        CHECK(cudaEventElapsedTime(&t_prepare, e0, e_mid));
        if (i >= 3) {
            kernel_ms.push_back(t);
            prepare_ms.push_back(t_prepare);
            equalize_ms.push_back(t - t_prepare);
        }
    }
    CHECK(cudaEventDestroy(e_mid));
    r.kernel_ms = median(kernel_ms);
    {
        // The queuing of detect_device calls on a formed channel, behind a spin kernel
        // that holds the GPU for longer than the queuing takes. Untimed: the calls up
        // to the one that forms the channel (cg/cr calls of few symbols iterate from H
        // alone until forming A pays; a kernel's first launch also loads it), then the
        // graph cache's first sight and capture when graphs are on.
        set_channel_device(0, stream);
        for (int i = 0; i < 64 && !det.matrix_formed(); ++i)
            detect_device(0, dllr.get(), stream);
        CHECK(cudaStreamSynchronize(stream));
        constexpr int kUntimed = 2, kTimed = 32;
        bench::hold_stream(stream, 20000.0);
        for (int i = 0; i < kUntimed; ++i)
            detect_device(0, dllr.get(), stream);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kTimed; ++i)
            detect_device(0, dllr.get(), stream);
        const auto t1 = std::chrono::steady_clock::now();
        CHECK(cudaStreamSynchronize(stream));
        r.issue_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / kTimed;
    }
    r.prepare_ms = median(prepare_ms);
    r.equalize_ms = median(equalize_ms);
    // Median ms of work(k) on frame k, timed like kernel-only: the frames rotated, the L2
    // flushed and the stream held before each, 3 warm-up runs.
    auto time_like_kernel = [&](auto&& work) {
        std::vector<double> ms;
        for (int i = 0; i < reps + 3; ++i) {
            const std::size_t k = static_cast<std::size_t>(i) % frames.size();
            flusher.flush(stream);
            bench::hold_stream(stream, kHoldMicroseconds);
            CHECK(cudaEventRecord(e0, stream));
            work(k);
            CHECK(cudaEventRecord(e1, stream));
            CHECK(cudaEventSynchronize(e1));
            float t = 0;
            CHECK(cudaEventElapsedTime(&t, e0, e1));
            if (i >= 3)
                ms.push_back(t);
        }
        return median(ms);
    };
    // The stream floor: this call's bytes moved without arithmetic, timed like it.
    r.stream_floor_ms = time_like_kernel([&](std::size_t k) {
        bench::stream_traffic(dh[k]->get(),
                              d.channel_items() * item_bytes,
                              dy[k]->get(),
                              y_count * item_bytes,
                              dllr.get(),
                              dllr.bytes(),
                              stream);
    });

    if (c.mode == DetectorMode::chol && !narrow) {
        // The same frames through the library pipeline, timed the same way, and its LLRs
        // compared with ours on the last frame (signs of the LLRs that are not near
        // zero).
        bench::CublasMmseBaseline baseline(d, c.nsym, c.mod);
        cuda::Buffer<float> dllr_base(llr_count, false);
        std::size_t k = 0; // the last frame run
        r.baseline_ms = time_like_kernel([&](std::size_t frame) {
            k = frame;
            baseline.run(
                dh[k]->get(), frames[k].n0, dy[k]->get(), dllr_base.get(), stream);
        });
        det.set_channel_device(dh[k]->get(), frames[k].n0, stream);
        det.detect_device(dy[k]->get(), c.nsym, dllr.get(), nullptr, stream);
        CHECK(cudaStreamSynchronize(stream));
        std::vector<float> ours(llr_count), theirs(llr_count);
        cuda::copy_to_host(ours.data(), dllr.get(), dllr.bytes());
        cuda::copy_to_host(theirs.data(), dllr_base.get(), dllr_base.bytes());
        std::size_t confident = 0, agree = 0;
        for (std::size_t i = 0; i < llr_count; ++i)
            if (std::abs(ours[i]) > 1e-2f) {
                ++confident;
                agree += (ours[i] > 0) == (theirs[i] > 0);
            }
        r.baseline_agreement = confident ? static_cast<double>(agree) / confident : 0.0;
    }

    // End-to-end from pinned host memory (channel and symbols, as li2015) through the
    // engine's pipeline; with several GPUs, through one engine per listed GPU.
    std::unique_ptr<cuda::MultiGpuDetector> split;
    if (devices.size() > 1)
        split = std::make_unique<cuda::MultiGpuDetector>(
            detector_config(c, Backend::cuda), devices, opt);
    Detector& e2e = split ? static_cast<Detector&>(*split) : det;
    r.e2e_engine = e2e.name();
    std::vector<std::unique_ptr<cuda::Buffer<cf32>>> hy, hh;
    for (std::size_t k = 0; k < frames.size(); ++k) {
        const auto& f = frames[k];
        hy.push_back(std::make_unique<cuda::Buffer<cf32>>(f.y.size(), true));
        hh.push_back(std::make_unique<cuda::Buffer<cf32>>(f.h.size(), true));
        if (narrow) {
            std::memcpy(hy.back()->get(), codes[k].y.data(), codes[k].y.size());
            std::memcpy(hh.back()->get(), codes[k].h.data(), codes[k].h.size());
        } else {
            std::copy(f.y.begin(), f.y.end(), hy.back()->get());
            std::copy(f.h.begin(), f.h.end(), hh.back()->get());
        }
    }
    cuda::Buffer<float> hllr(llr_count, true);
    std::vector<double> e2e_ms;
    for (int i = 0; i < reps + 3; ++i) {
        const std::size_t k = static_cast<std::size_t>(i) % frames.size();
        const auto t0 = std::chrono::steady_clock::now();
        if (narrow) {
            e2e.set_channel_encoded(hh[k]->get(), codes[k].h_scale, frames[k].n0);
            e2e.detect_encoded(hy[k]->get(), codes[k].y_scales.data(), c.nsym, hllr.get());
        } else { // set_channel then detect; the sphere decoders overlap the two
            e2e.detect_with_channel(
                hh[k]->get(), frames[k].n0, hy[k]->get(), c.nsym, hllr.get());
        }
        const auto t1 = std::chrono::steady_clock::now();
        if (i >= 3)
            e2e_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    r.e2e_ms = median(e2e_ms);
    const std::size_t last = static_cast<std::size_t>(reps + 2) % frames.size();
    r.ber =
        ber_of(std::vector<float>(hllr.get(), hllr.get() + llr_count), frames[last].bits);
    r.kernel_floor_ms = (r.bytes_in + r.bytes_out) / (bw.d2d_gbs * 1e6);
    // Each way alone, and both ways at once where uploads and downloads share the link
    // (as mimodet_rx_bench's bound).
    r.e2e_bound_ms = std::max({ r.bytes_in / (bw.h2d_gbs * 1e6),
                                r.bytes_out / (bw.d2h_gbs * 1e6),
                                (r.bytes_in + r.bytes_out) / (bw.duplex_gbs * 1e6) });
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    CHECK(cudaStreamDestroy(stream));
    return r;
}
#endif

/* --config apsm: mehlhose2022 section 5's transmission (16 antennas, 6 users, QPSK, 685
 * training and 3840 data symbols, apsm::simulate_noma at 20 dB): the CPU receiver's
 * training (float64, every user), its detection of the data symbols, and on the GPU that
 * detection kernel-only (median of --reps, data on the device) and end to end (host copies
 * included), and the GPU receiver's training, beside the paper's Table 2 (Titan V,
 * detection one user at a time; training "about 100 ms" in its text). */
int run_apsm_bench(int reps, bool gpu, int device)
{
    apsm::NomaScenario s;
    s.seed = 2024;
    const apsm::NomaTransmission tr = apsm::simulate_noma(s);
    const std::size_t M = s.antennas, K = s.users, N = s.data_symbols;
    using clock = std::chrono::steady_clock;
    auto ms_since = [](clock::time_point t0) {
        return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    };
    apsm::ApsmReceiver cpu(M, K);
    auto t0 = clock::now();
    cpu.train(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
    const double train_ms = ms_since(t0);
    std::vector<cf32> out(N * K);
    t0 = clock::now();
    cpu.detect(tr.data_rx.data(), N, out.data(), 1);
    const double cpu_detect_ms = ms_since(t0);
    t0 = clock::now();
    cpu.detect(tr.data_rx.data(), N, out.data(), 0);
    const double cpu_detect_all_ms = ms_since(t0);
    t0 = clock::now();
    cpu.detect_float32(tr.data_rx.data(), N, out.data(), 0);
    const double cpu_detect_f32_ms = ms_since(t0);
    std::printf("# APSM, %zu antennas, %zu users, %zu training / %zu data symbols, "
                "dictionary %zu\n",
                M, K, s.training_symbols, N, cpu.dictionary_size());
    std::printf("%-36s %12s %14s\n", "step", "ms", "paper (Titan V)");
    std::printf("%-36s %12.3f %14s\n", "training, CPU float64, all users", train_ms, "~100");
    std::printf("%-36s %12.3f %14s\n", "detection, CPU float64, 1 thread", cpu_detect_ms, "");
    std::printf("%-36s %12.3f %14s\n", "detection, CPU float64, all cores", cpu_detect_all_ms, "");
    std::printf("%-36s %12.3f %14s\n", "detection, CPU float32, all cores", cpu_detect_f32_ms, "");
#ifdef MIMODET_HAVE_CUDA
    if (gpu) {
        std::string why;
        if (cuda::device_count(&why) == 0)
            throw std::runtime_error(why + " (--backend cpu times the CPU alone)");
        CHECK(cudaSetDevice(device));
        cuda::CudaApsmDetector det(cpu, device);
        cuda::Buffer<cf32> d_r(N * M, false), d_out(N * K, false);
        cuda::copy_to_device(d_r.get(), tr.data_rx.data(), d_r.bytes());
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        std::printf("# %s\n", cuda::device_description(device).c_str());
        // Kernel-only two ways: one call between two events with the GPU idle before it
        // (launch latency included, as a lone call pays it), and the mean of --reps calls
        // queued back to back (the GPU's time per call when it is kept busy).
        auto time_kernel = [&](cuda::CudaApsmDetector& d, double* back_to_back) {
            std::vector<double> one;
            for (int i = 0; i < reps + 3; ++i) {
                CHECK(cudaEventRecord(e0, nullptr));
                d.detect_device(d_r.get(), N, d_out.get(), nullptr);
                CHECK(cudaEventRecord(e1, nullptr));
                CHECK(cudaEventSynchronize(e1));
                float t = 0.0f;
                CHECK(cudaEventElapsedTime(&t, e0, e1));
                if (i >= 3)
                    one.push_back(t);
            }
            CHECK(cudaEventRecord(e0, nullptr));
            for (int i = 0; i < reps; ++i)
                d.detect_device(d_r.get(), N, d_out.get(), nullptr);
            CHECK(cudaEventRecord(e1, nullptr));
            CHECK(cudaEventSynchronize(e1));
            float t = 0.0f;
            CHECK(cudaEventElapsedTime(&t, e0, e1));
            *back_to_back = t / std::max(reps, 1);
            return median(one);
        };
        // Both arithmetics where the GPU has both (ApsmArithmetic), the chosen one first.
        std::vector<cuda::ApsmArithmetic> arithmetics{ det.arithmetic() };
        if (det.arithmetic() == cuda::ApsmArithmetic::tf32x3)
            arithmetics.push_back(cuda::ApsmArithmetic::fp32);
        for (const cuda::ApsmArithmetic a : arithmetics) {
            cuda::CudaApsmDetector d(cpu, device, a);
            double queued = 0.0;
            const double single = time_kernel(d, &queued);
            const std::string name = std::string("detection, GPU ") + cuda::to_string(a);
            std::printf("%-36s %12.4f %14s\n", (name + ", kernel-only").c_str(), single, "0.403");
            std::printf("%-36s %12.4f %14s\n", (name + ", back to back").c_str(), queued, "");
        }
        std::vector<double> e2e;
        for (int i = 0; i < reps + 3; ++i) {
            const auto h0 = clock::now();
            det.detect(tr.data_rx.data(), N, out.data());
            if (i >= 3)
                e2e.push_back(ms_since(h0));
        }
        std::printf("%-36s %12.4f %14s\n", "detection, GPU, with host copies", median(e2e), "");

        // The same with a dictionary maximum (ApsmParams::max_dictionary): detection costs in
        // proportion to the dictionary; symbol errors of both on the data, for the price.
        {
            const Constellation qpsk(s.modulation);
            auto errors = [&](const std::vector<cf32>& z) {
                std::size_t e = 0;
                for (std::size_t i = 0; i < z.size(); ++i) {
                    std::size_t best = 0;
                    for (std::size_t q = 1; q < qpsk.size(); ++q)
                        if (std::norm(z[i] - qpsk.points()[q]) < std::norm(z[i] - qpsk.points()[best]))
                            best = q;
                    e += best != tr.data_points[i];
                }
                return e;
            };
            det.detect(tr.data_rx.data(), N, out.data());
            const std::size_t full_errors = errors(out);
            for (const std::size_t most : { std::size_t(1024), std::size_t(512) }) {
                ApsmParams limited = cpu.params();
                limited.max_dictionary = most;
                apsm::ApsmReceiver small(M, K, limited);
                small.train(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
                cuda::CudaApsmDetector sdet(small, device);
                double queued = 0.0;
                const double single = time_kernel(sdet, &queued);
                std::vector<cf32> z(N * K);
                sdet.detect(tr.data_rx.data(), N, z.data());
                const std::string what = "detection, GPU, dictionary " + std::to_string(most);
                std::printf("%-36s %12.4f %14s  back to back %.4f, symbol errors %zu "
                            "(dictionary %zu: %zu)\n",
                            what.c_str(), single, "", queued, errors(z), cpu.dictionary_size(),
                            full_errors);
            }
        }
        CHECK(cudaEventDestroy(e0));
        CHECK(cudaEventDestroy(e1));

        // Training: the host's share (checks, normalisation, least-squares start), the GPU's
        // (uploads, kernel matrix, the persistent loop, errors, downloads; CUDA events), and
        // the whole train() of the GPU receiver, detection engine upload included.
        cuda::CudaApsmTrainer trainer(device);
        ApsmConfig config;
        config.num_antennas = M;
        config.num_users = K;
        config.backend = Backend::cuda;
        config.device = device;
        cuda::CudaApsmReceiver receiver(config);
        std::vector<double> prepare, gpu_ms, whole;
        for (int i = 0; i < reps + 2; ++i) {
            t0 = clock::now();
            const apsm::TrainingProblem problem =
                cpu.prepare_training(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
            const double prepare_ms = ms_since(t0);
            trainer.project(cpu.params(), problem);
            t0 = clock::now();
            receiver.train(tr.training_rx.data(), tr.training_tx.data(), s.training_symbols);
            if (i >= 2) {
                prepare.push_back(prepare_ms);
                gpu_ms.push_back(trainer.last_gpu_ms());
                whole.push_back(ms_since(t0));
            }
        }
        std::printf("%-36s %12.3f %14s\n", "training, host share (LS start)", median(prepare), "");
        std::printf("%-36s %12.3f %14s\n", "training, GPU share (events)", median(gpu_ms), "");
        std::printf("%-36s %12.3f %14s\n", "training, GPU receiver, whole", median(whole), "~100");
        // The receiver's detect(): host copies, the kernel, the LLRs on the host.
        std::vector<float> llr(N * K * bits_per_symbol(s.modulation));
        std::vector<double> soft;
        for (int i = 0; i < reps + 2; ++i) {
            t0 = clock::now();
            receiver.detect(tr.data_rx.data(), N, out.data(), llr.data());
            if (i >= 2)
                soft.push_back(ms_since(t0));
        }
        std::printf("%-36s %12.4f %14s\n", "detection + LLRs, GPU receiver", median(soft), "");
        std::size_t same = 0;
        for (std::size_t k = 0; k < K; ++k)
            same += receiver.receiver().filter(k).linear_only == cpu.filter(k).linear_only;
        std::printf("# GPU training: %zu of %zu users' fallback decisions as the CPU's\n", same, K);
    }
#else
    (void)reps;
    (void)device;
    if (gpu)
        throw std::runtime_error("this build has no CUDA backend; use --backend cpu");
#endif
    return 0;
}

void usage()
{
    std::cout
        << "usage: mimodet_bench [--config NAME|all|list] [--backend cuda|cpu] [--reps "
           "N]\n"
           "                     [--streams S] [--devices D[,D...]] [--fuse on|off]\n"
           "                     [--graphs on|off] [--l2 dirty|clean] [--cpu on|off]\n"
           "                     [--json FILE] [--precision fp32,fp16,bf16,fp8_e4m3,...]\n"
           "                     [--antennas B --users U --subcarriers N --symbols S\n"
           "                      --modulation M --mode chol|cg|cr|zf --iterations I]\n"
           "Times the built-in paper configurations (--config all, the default) or one\n"
           "given with --antennas etc.; --config apsm times the APSM receiver.\n"
           "given with --antennas etc. See the comment at the top of "
           "bench/mimodet_bench.cc.\n";
}

} // namespace

int main(int argc, char** argv)
{
    try {
        std::map<std::string, std::string> opt{
            { "--config", "all" }, { "--backend", "cuda" }, { "--reps", "20" },
            { "--streams", "3" },  { "--device", "0" },     { "--modulation", "16qam" },
            { "--mode", "chol" },  { "--iterations", "3" }, { "--fuse", "on" },
            { "--graphs", "on" },  { "--l2", "dirty" },     { "--cpu", "on" }
        };
        const std::vector<std::string> known{
            "--config",      "--backend",    "--reps", "--streams",    "--device",
            "--devices",     "--modulation", "--mode", "--iterations", "--fuse",
            "--graphs",      "--l2",         "--json", "--antennas",   "--users",
            "--subcarriers", "--symbols",    "--cpu",  "--precision"
        };
        std::map<std::string, bool> given; // the options on the command line
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
            opt[a] = argv[++i];
            given[a] = true;
        }
        // Every option is checked here, before any configuration runs.
        const bool gpu = opt["--backend"] == "cuda";
        if (!gpu && opt["--backend"] != "cpu")
            throw UsageError("--backend: expected cuda or cpu, got '" + opt["--backend"] +
                             "'");
        if (!gpu)
            for (const char* o :
                 { "--streams", "--device", "--devices", "--fuse", "--graphs", "--l2" })
                if (given.count(o))
                    throw UsageError(std::string(o) + " applies to --backend cuda only");
        if (given.count("--device") && given.count("--devices"))
            throw UsageError(
                "--device and --devices: give one (--device D is --devices D)");
        const int reps = static_cast<int>(parse_integer("--reps", opt["--reps"], 1));
        [[maybe_unused]] const int streams =
            static_cast<int>(parse_integer("--streams", opt["--streams"], 1)); // GPU only
        if (opt["--fuse"] != "on" && opt["--fuse"] != "off")
            throw UsageError("--fuse: expected on or off, got '" + opt["--fuse"] + "'");
        [[maybe_unused]] const bool fuse = opt["--fuse"] == "on";
        if (opt["--graphs"] != "on" && opt["--graphs"] != "off")
            throw UsageError("--graphs: expected on or off, got '" + opt["--graphs"] +
                             "'");
        [[maybe_unused]] const bool graphs = opt["--graphs"] == "on";
        if (opt["--l2"] != "dirty" && opt["--l2"] != "clean")
            throw UsageError("--l2: expected dirty or clean, got '" + opt["--l2"] + "'");
        [[maybe_unused]] const bool clean_l2 = opt["--l2"] == "clean";
        if (opt["--cpu"] != "on" && opt["--cpu"] != "off")
            throw UsageError("--cpu: expected on or off, got '" + opt["--cpu"] + "'");
        [[maybe_unused]] const bool with_cpu = opt["--cpu"] == "on";
        // --devices 0,1 (a GPU may repeat); --device D, the older form, is --devices D.
        std::vector<int> devices;
        {
            const std::string name = given.count("--devices") ? "--devices" : "--device";
            const std::string text = opt[name];
            std::stringstream list(text);
            for (std::string item; std::getline(list, item, ',');)
                devices.push_back(static_cast<int>(parse_integer(
                    name, item, 0, INT_MAX))); // an empty item is refused too
            if (devices.empty() || (!text.empty() && text.back() == ','))
                throw UsageError(name +
                                 ": expected GPU numbers >= 0 separated by commas "
                                 "(e.g. 0,1), got '" +
                                 text + "'");
        }
        if (given.count("--json"))
            check_writable("--json", opt["--json"]);
        if (opt["--config"] == "apsm") {
            if (given.count("--json"))
                throw UsageError("--config apsm prints a table only; --json is not taken");
            return run_apsm_bench(reps, gpu, devices.front());
        }

        std::vector<BenchConfig> configs;
        const bool custom = given.count("--antennas") || given.count("--users") ||
                            given.count("--subcarriers") || given.count("--symbols");
        if (custom) {
            for (const char* o :
                 { "--antennas", "--users", "--subcarriers", "--symbols" })
                if (!given.count(o))
                    throw UsageError(std::string(o) +
                                     " is missing: a custom configuration needs "
                                     "--antennas, --users, --subcarriers and --symbols");
            if (given.count("--config"))
                throw UsageError("--config and a custom configuration (--antennas ...): "
                                 "give one");
            BenchConfig c;
            c.name = "custom";
            c.b = parse_integer("--antennas", opt["--antennas"], 1);
            c.u = parse_integer("--users", opt["--users"], 1);
            c.nsc = parse_integer("--subcarriers", opt["--subcarriers"], 1);
            c.nsym = parse_integer("--symbols", opt["--symbols"], 1);
            if (c.u > c.b)
                throw UsageError("--users " + std::to_string(c.u) +
                                 " exceeds --antennas " + std::to_string(c.b) +
                                 " (the detector needs users <= antennas)");
            try {
                c.mod = parse_modulation(opt["--modulation"]);
            } catch (const std::invalid_argument& e) {
                throw UsageError(std::string("--modulation: ") + e.what());
            }
            try {
                c.mode = parse_detector_mode(opt["--mode"]);
            } catch (const std::invalid_argument& e) {
                throw UsageError(std::string("--mode: ") + e.what());
            }
            c.iterations = static_cast<unsigned>(
                parse_integer("--iterations", opt["--iterations"], 1));
            configs.push_back(c);
        } else {
            for (const char* o : { "--modulation", "--mode", "--iterations" })
                if (given.count(o))
                    throw UsageError(std::string(o) +
                                     " applies to a custom configuration (--antennas, "
                                     "--users, --subcarriers, --symbols); the built-in "
                                     "ones set their own");
            for (const auto& c : builtin_configs())
                if (opt["--config"] == "all" || opt["--config"] == "list" ||
                    c.name.find(opt["--config"]) != std::string::npos)
                    configs.push_back(c);
            if (opt["--config"] == "list") {
                for (const auto& c : configs)
                    std::cout << c.name << "\n";
                return 0;
            }
            if (configs.empty())
                throw UsageError("--config: no built-in configuration matches '" +
                                 opt["--config"] + "' (--config list)");
        }
        // --precision fp32,fp16,...: each configuration in each storage precision, named
        // CONFIG@PRECISION but for fp32.
        if (given.count("--precision")) {
            std::vector<Precision> precisions;
            std::stringstream list(opt["--precision"]);
            for (std::string item; std::getline(list, item, ',');) {
                try {
                    precisions.push_back(parse_precision(item));
                } catch (const std::invalid_argument& e) {
                    throw UsageError(std::string("--precision: ") + e.what());
                }
            }
            if (precisions.empty())
                throw UsageError("--precision: expected e.g. fp32,fp16");
            std::vector<BenchConfig> each;
            for (const auto& c : configs)
                for (Precision p : precisions) {
                    BenchConfig n = c;
                    n.precision = p;
                    if (p != Precision::fp32)
                        n.name += "@" + to_string(p);
                    if (n.slots > 0 && p != Precision::fp32)
                        throw UsageError("--precision: the roger2012 configurations run "
                                         "in fp32 only");
                    each.push_back(n);
                }
            configs = each;
        }

        std::vector<Result> results;
#ifdef MIMODET_HAVE_CUDA
        Bandwidth bw;
        if (gpu) {
            std::string why;
            if (cuda::device_count(&why) == 0)
                throw std::runtime_error(why);
            CHECK(cudaSetDevice(devices.front()));
            bw = measure_bandwidth();
            std::printf(
                "# %s: D2D %.0f GB/s (read+write), H2D %.1f GB/s, D2H %.1f GB/s, both "
                "ways at once %.1f GB/s\n",
                cuda::device_description(devices.front()).c_str(),
                bw.d2d_gbs,
                bw.h2d_gbs,
                bw.d2h_gbs,
                bw.duplex_gbs);
            std::string list;
            for (int d : devices)
                list += (list.empty() ? "" : ",") + std::to_string(d);
            std::printf(
                "# end-to-end on GPUs %s (%s), %d streams each, CUDA graphs %s; "
                "kernel-only with the channel prepared %s\n",
                list.c_str(),
                devices.size() > 1 ? "subcarriers split between them" : "one engine",
                streams,
                graphs ? "on" : "off",
                fuse ? "in the first detect call's kernel where it fits (--fuse on)"
                     : "by the prepare kernel (--fuse off)");
        }
#else
        if (gpu)
            throw std::runtime_error("this build has no CUDA backend; use --backend cpu");
#endif
        std::printf("%-32s %12s %12s %10s %10s %10s %10s %8s %8s %9s %9s %8s %8s %8s\n",
                    "config",
                    "kernel Mb/s",
                    "e2e Mb/s",
                    "kernel ms",
                    "prep ms",
                    "eq ms",
                    "e2e ms",
                    "floor%",
                    "bound%",
                    "BER",
                    "cuBLAS ms",
                    "x cuBLAS",
                    "issue us",
                    "stream%");
        for (const auto& c : configs) {
            Result r;
#ifdef MIMODET_HAVE_CUDA
            if (gpu) {
                r = bench_cuda(c, reps, streams, fuse, graphs, clean_l2, devices, bw);
                if (c.slots > 0) { // roger2012: one slot's latency, the CPU's figure
                    BenchConfig one = c;
                    one.nsc = c.slot_subcarriers;
                    one.slots = 0;
                    const Result s =
                        bench_cuda(one, reps, streams, fuse, graphs, clean_l2, devices, bw);
                    r.slot_kernel_ms = s.kernel_ms;
                    r.slot_e2e_ms = s.e2e_ms;
                    if (with_cpu) {
                        const Result cpu = bench_cpu(c, std::min(reps, 3));
                        r.cpu_ms = cpu.e2e_ms;
                        r.cpu_engine = cpu.e2e_engine;
                    }
                }
            } else
#endif
                r = bench_cpu(c, reps);
            results.push_back(r);
            auto mbps = [&](double ms) { return ms > 0 ? r.bits / (ms * 1e3) : 0.0; };
            std::printf(
                "%-32s %12.1f %12.1f %10.4f %10.4f %10.4f %10.4f %8.1f %8.1f %9.2e %9.4f "
                "%8.1f %8.1f %8.1f\n",
                c.name.c_str(),
                mbps(r.kernel_ms),
                mbps(r.e2e_ms),
                r.kernel_ms,
                r.prepare_ms,
                r.equalize_ms,
                r.e2e_ms,
                r.kernel_ms > 0 ? 100.0 * r.kernel_floor_ms / r.kernel_ms : 0.0,
                r.e2e_ms > 0 && r.e2e_bound_ms > 0 ? 100.0 * r.e2e_bound_ms / r.e2e_ms
                                                   : 0.0,
                r.ber,
                r.baseline_ms,
                r.baseline_ms > 0 && r.kernel_ms > 0 ? r.baseline_ms / r.kernel_ms : 0.0,
                r.issue_us,
                r.kernel_ms > 0 ? 100.0 * r.stream_floor_ms / r.kernel_ms : 0.0);
            std::fflush(stdout);
        }
        bool roger = false;
        for (const auto& r : results)
            roger = roger || r.slot_kernel_ms > 0;
        if (roger) {
            /* roger2012 Tables 1-2 beside ours: Gb/s over 100 slots (a channel per slot),
             * the time of one slot alone, end to end with host copies against the bound
             * of the host-device bandwidth measured above, the CPU implementation. */
            std::printf("\n# roger2012 Tables 1-2 (4x4, %zu slots of %zu OFDM symbols, a channel "
                        "per slot; paper: Tesla C2070, Mb/s and ms per slot)\n",
                        kRogerSlots,
                        kRogerSymbolsPerSlot);
            std::printf("%-30s %10s %10s %10s %9s %9s %10s %10s %8s %10s %8s\n",
                        "config",
                        "kern Gb/s",
                        "paper Mb/s",
                        "x paper",
                        "slot us",
                        "paper us",
                        "slot e2e us",
                        "e2e Gb/s",
                        "bound%",
                        "CPU Mb/s",
                        "x CPU");
            for (const auto& r : results) {
                if (r.slot_kernel_ms <= 0)
                    continue;
                const double kernel_mbps = r.bits / (r.kernel_ms * 1e3);
                const double cpu_mbps = r.cpu_ms > 0 ? r.bits / (r.cpu_ms * 1e3) : 0.0;
                std::printf("%-30s %10.2f %10.2f %10.0f %9.1f %9.0f %10.1f %10.2f %8.1f %10.1f "
                            "%8.1f\n",
                            r.c.name.c_str(),
                            kernel_mbps / 1e3,
                            r.c.paper_mbps,
                            r.c.paper_mbps > 0 ? kernel_mbps / r.c.paper_mbps : 0.0,
                            r.slot_kernel_ms * 1e3,
                            r.c.paper_ms * 1e3,
                            r.slot_e2e_ms * 1e3,
                            r.bits / (r.e2e_ms * 1e6),
                            r.e2e_bound_ms > 0 ? 100.0 * r.e2e_bound_ms / r.e2e_ms : 0.0,
                            cpu_mbps,
                            cpu_mbps > 0 ? kernel_mbps / cpu_mbps : 0.0);
            }
            std::fflush(stdout);
        }
        if (opt.count("--json")) {
            std::ofstream out(opt["--json"]);
            out << "{\n";
#ifdef MIMODET_HAVE_CUDA
            if (gpu) {
                out << "  \"bandwidth_gbs\": {\"d2d\": " << bw.d2d_gbs
                    << ", \"h2d\": " << bw.h2d_gbs << ", \"d2h\": " << bw.d2h_gbs
                    << ", \"duplex\": " << bw.duplex_gbs << "},\n";
                out << "  \"devices\": [";
                for (std::size_t i = 0; i < devices.size(); ++i)
                    out << (i ? ", " : "") << devices[i];
                out << "],\n  \"streams\": " << streams << ",\n";
                out << "  \"l2_before_timing\": \"" << opt["--l2"] << "\",\n";
                out << "  \"graphs\": " << (graphs ? "true" : "false") << ",\n";
            }
#endif
            out << "  \"results\": [\n";
            for (std::size_t i = 0; i < results.size(); ++i) {
                const auto& r = results[i];
                out << "    {\"config\": \"" << r.c.name << "\", \"backend\": \""
                    << r.backend << "\", \"device\": \"" << r.device
                    << "\", \"antennas\": " << r.c.b << ", \"users\": " << r.c.u
                    << ", \"subcarriers\": " << r.c.nsc << ", \"symbols\": " << r.c.nsym
                    << ", \"modulation\": \"" << to_string(r.c.mod) << "\", \"mode\": \""
                    << to_string(r.c.mode) << "\", \"precision\": \""
                    << to_string(r.c.precision) << "\", \"iterations\": " << r.c.iterations
                    << ", \"bits\": " << r.bits << ", \"kernel_ms\": " << r.kernel_ms
                    << ", \"prepare_ms\": " << r.prepare_ms
                    << ", \"equalize_ms\": " << r.equalize_ms
                    << ", \"e2e_ms\": " << r.e2e_ms << ", \"e2e_engine\": \""
                    << r.e2e_engine << "\""
                    << ", \"cublas_baseline_ms\": " << r.baseline_ms
                    << ", \"cublas_baseline_agreement\": " << r.baseline_agreement
                    << ", \"kernel_floor_ms\": " << r.kernel_floor_ms
                    << ", \"stream_floor_ms\": " << r.stream_floor_ms
                    << ", \"e2e_bound_ms\": " << r.e2e_bound_ms << ", \"ber\": " << r.ber
                    << ", \"issue_us\": " << r.issue_us;
                if (r.slot_kernel_ms > 0)
                    out << ", \"slots\": " << r.c.slots
                        << ", \"slot_subcarriers\": " << r.c.slot_subcarriers
                        << ", \"slot_kernel_ms\": " << r.slot_kernel_ms
                        << ", \"slot_e2e_ms\": " << r.slot_e2e_ms
                        << ", \"cpu_ms\": " << r.cpu_ms << ", \"cpu_engine\": \""
                        << r.cpu_engine << "\", \"paper_mbps\": " << r.c.paper_mbps
                        << ", \"paper_ms\": " << r.c.paper_ms;
                out << "}"
                    << (i + 1 < results.size() ? "," : "") << "\n";
            }
            out << "  ]\n}\n";
        }
        return 0;
    } catch (const UsageError& e) {
        std::cerr << "mimodet_bench: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "mimodet_bench: " << e.what() << "\n";
        return 1;
    }
}
