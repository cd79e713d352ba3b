/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "core/box/fista.h"
#include "core/worker_team.h"
#include "cuda_check.h"
#include "cuda_detector.h"
#include "graph_cache.h"
#include "kernels.h"
#include "precision/quantize.h"
#include <mimodet/precision.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

namespace mimodet {
namespace cuda {

DemapTable demap_table(const Constellation& c)
{
    DemapTable t{};
    t.bits = static_cast<int>(c.bits_per_symbol());
    t.bpsk = c.modulation() == Modulation::bpsk ? 1 : 0;
    if (t.bpsk)
        return t;
    t.bits_per_axis = t.bits / 2;
    t.levels = 1 << t.bits_per_axis;
    // The in-phase amplitude of the point whose even bits spell the pattern and whose odd
    // bits are 0: the constellation is a product of two identical Gray PAMs.
    for (int pattern = 0; pattern < t.levels; ++pattern) {
        std::size_t index = 0;
        for (int j = 0; j < t.bits_per_axis; ++j) {
            const int bit = (pattern >> (t.bits_per_axis - 1 - j)) & 1;
            index |= static_cast<std::size_t>(bit) << (t.bits - 1 - 2 * j);
        }
        t.level[pattern] = c.points()[index].real();
    }
    return t;
}

int device_count(std::string* why_not)
{
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        cudaGetLastError(); // reset the last-error state (a missing driver stays
                            // reported)
        if (why_not) {
            *why_not = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
            // The runtime says this also when no driver is installed at all.
            if (err == cudaErrorInsufficientDriver)
                *why_not += " (no NVIDIA driver, or one older than CUDA " +
                            std::to_string(CUDART_VERSION / 1000) + "." +
                            std::to_string(CUDART_VERSION % 1000 / 10) + " needs)";
#ifdef __SANITIZE_ADDRESS__
            // the driver maps memory where AddressSanitizer guards its shadow gap
            if (err == cudaErrorMemoryAllocation)
                *why_not += " (under AddressSanitizer: run with "
                            "ASAN_OPTIONS=protect_shadow_gap=0)";
#endif
        }
        return 0;
    }
    if (count == 0 && why_not)
        *why_not = "no CUDA device found";
    return count;
}

std::string device_description(int device)
{
    cudaDeviceProp prop{};
    MIMODET_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) +
           " SMs)";
}

namespace {
//! Every device and pinned allocation of the library goes through device_malloc or
//! pinned_malloc, which count it here.
std::atomic<std::uint64_t> allocations{ 0 };
} // namespace

std::uint64_t allocation_count() { return allocations.load(); }

std::string human_bytes(double bytes)
{
    const char* unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int i = 0;
    while (bytes >= 1024.0 && i < 4) {
        bytes /= 1024.0;
        ++i;
    }
    char text[32];
    std::snprintf(text, sizeof text, i ? "%.1f %s" : "%.0f %s", bytes, unit[i]);
    return text;
}

namespace {
//! The OutOfMemory of a failed allocation of `bytes`, the device's free memory named; the
//! runtime's error is cleared, so that the next launch check does not report it again.
[[noreturn]] void throw_out_of_memory(std::size_t bytes, bool pinned)
{
    cudaGetLastError();
    std::string where = "page-locked host memory";
    std::string state;
    int device = 0;
    std::size_t free_bytes = 0, total_bytes = 0;
    if (!pinned && cudaGetDevice(&device) == cudaSuccess &&
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        cudaDeviceProp prop{};
        const bool named = cudaGetDeviceProperties(&prop, device) == cudaSuccess;
        where = "GPU memory on device " + std::to_string(device) +
                (named ? std::string(" (") + prop.name + ")" : std::string());
        state = "; " + human_bytes(static_cast<double>(free_bytes)) + " free of " +
                human_bytes(static_cast<double>(total_bytes));
    }
    cudaGetLastError();
    throw OutOfMemory("out of " + where + ": asked for " +
                      human_bytes(static_cast<double>(bytes)) + state);
}
} // namespace

void* device_malloc(std::size_t bytes)
{
    void* p = nullptr;
    if (bytes) {
        const cudaError_t err = cudaMalloc(&p, bytes);
        if (err == cudaErrorMemoryAllocation)
            throw_out_of_memory(bytes, false);
        MIMODET_CUDA_CHECK(err);
        ++allocations;
    }
    return p;
}
void device_free(void* p) noexcept { cudaFree(p); }
void* pinned_malloc(std::size_t bytes)
{
    void* p = nullptr;
    if (bytes) {
        const cudaError_t err = cudaMallocHost(&p, bytes);
        if (err == cudaErrorMemoryAllocation)
            throw_out_of_memory(bytes, true);
        MIMODET_CUDA_CHECK(err);
        ++allocations;
    }
    return p;
}
void pinned_free(void* p) noexcept { cudaFreeHost(p); }
void copy_to_device(void* dst, const void* src, std::size_t bytes)
{
    MIMODET_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return before its DMA has landed, and the
    // engine's non-blocking streams do not wait for the legacy stream that carries it.
    MIMODET_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}


void copy_to_host(void* dst, const void* src, std::size_t bytes)
{
    MIMODET_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

namespace {
// Changes whenever host memory is registered or unregistered: part of every graph's key,
// so that no graph captured with copies from or to registered host memory is replayed
// after that memory was unregistered (and perhaps registered again at the same address).
std::atomic<std::uint64_t> g_registration_epoch{ 0 };
std::uint64_t registration_epoch() { return g_registration_epoch.load(); }
} // namespace

bool register_host_memory(const void* p, std::size_t bytes, std::string* why_not)
{
    const cudaError_t err =
        cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterPortable);
    ++g_registration_epoch;
    if (err == cudaSuccess)
        return true;
    cudaGetLastError(); // not sticky: the process's CUDA state stays usable
    if (why_not)
        *why_not = std::string("cudaHostRegister: ") + cudaGetErrorString(err);
    return false;
}

void unregister_host_memory(const void* p)
{
    ++g_registration_epoch;
    if (cudaHostUnregister(const_cast<void*>(p)) != cudaSuccess)
        cudaGetLastError(); // not registered: nothing to undo
}

namespace {

KernelMode kernel_mode(DetectorMode m)
{
    switch (m) {
    case DetectorMode::chol:
        return KernelMode::chol;
    case DetectorMode::cg:
        return KernelMode::cg;
    case DetectorMode::cr:
        return KernelMode::cr;
    case DetectorMode::zf:
        return KernelMode::zf;
    case DetectorMode::fsd:
        return KernelMode::fsd;
    case DetectorMode::sfsd:
        return KernelMode::sfsd;
    case DetectorMode::box:
        return KernelMode::box;
    default:
        break;
    }
    // A mode without a GPU kernel is refused by name (backend=auto then runs it on the CPU,
    // saying why), never run as another mode's kernel.
    throw std::invalid_argument("CUDA detector: no GPU kernel for detector " + to_string(m));
}


template <typename T>
T* device_alloc(std::size_t count)
{
    return static_cast<T*>(device_malloc(count * sizeof(T)));
}

template <typename T>
T* pinned_alloc(std::size_t count)
{
    return static_cast<T*>(pinned_malloc(count * sizeof(T)));
}

bool is_pinned(const void* p)
{
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return attr.type == cudaMemoryTypeHost;
}

//! Copies `rows` rows of `row_bytes` between host arrays with the given row pitches.
void copy_rows(void* dst,
               std::size_t dst_pitch,
               const void* src,
               std::size_t src_pitch,
               std::size_t row_bytes,
               std::size_t rows)
{
    if (dst_pitch == row_bytes && src_pitch == row_bytes) {
        std::memcpy(dst, src, rows * row_bytes);
        return;
    }
    for (std::size_t r = 0; r < rows; ++r)
        std::memcpy(static_cast<char*>(dst) + r * dst_pitch,
                    static_cast<const char*>(src) + r * src_pitch,
                    row_bytes);
}

//! The same between host and device, queued on `stream`: one DMA transfer either way
//! (a 2D one when a pitch differs from the row size).
void copy_rows_async(void* dst,
                     std::size_t dst_pitch,
                     const void* src,
                     std::size_t src_pitch,
                     std::size_t row_bytes,
                     std::size_t rows,
                     cudaMemcpyKind kind,
                     cudaStream_t stream)
{
    if (dst_pitch == row_bytes && src_pitch == row_bytes)
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(dst, src, rows * row_bytes, kind, stream));
    else
        MIMODET_CUDA_CHECK(cudaMemcpy2DAsync(
            dst, dst_pitch, src, src_pitch, row_bytes, rows, kind, stream));
}

//! A caller row stride: 0 means dense (`own` items); less than `own` is refused.
std::size_t row_stride(std::size_t requested, std::size_t own, const char* what)
{
    if (requested == 0)
        return own;
    if (requested < own)
        throw std::invalid_argument(std::string("CUDA detector: host_layout.") + what +
                                    " must be 0 or >= " + std::to_string(own) + " (got " +
                                    std::to_string(requested) + ")");
    return requested;
}

/* Copies n frames' channels of `chan` elements each, one after another, to `to`: in
 * slices across the team when there is enough to share (waking a thread costs more than
 * copying a small piece). */
void gather_channels(const ChannelFrame* frames,
                     std::size_t n,
                     std::size_t chan,
                     cf32* to,
                     WorkerTeam& team)
{
    constexpr std::size_t kShareFrom = std::size_t(1) << 15; // elements: 256 KiB
    const std::size_t total = n * chan;
    const auto copy = [&](std::size_t i, std::size_t end) {
        while (i < end) {
            const std::size_t f = i / chan, j = i % chan;
            const std::size_t count = std::min(end - i, chan - j);
            std::copy(frames[f].h + j, frames[f].h + j + count, to + i);
            i += count;
        }
    };
    if (team.size() == 1 || total < kShareFrom) {
        copy(0, total);
        return;
    }
    team.run_slices(total, copy);
}

} // namespace

struct CudaDetector::Impl {
    DetectorConfig config;
    Dims dims;
    EngineOptions options;
    Constellation constellation;
    DemapTable demap{};
    KernelMode mode;
    std::size_t chunk_symbols = 1;
    // Caller row strides of detect(), in items (dense unless host_layout says otherwise).
    std::size_t y_stride = 0, llr_stride = 0, x_hat_stride = 0;

    // Channel state, resident on the device for the whole frame.
    float2* d_h = nullptr;
    float2* d_a = nullptr; //!< A^-1 (chol/zf) or A (cg/cr)
    float* d_rho = nullptr;
    float* d_inv_lambda = nullptr;
    std::uint8_t* d_status = nullptr;
    std::uint8_t* d_unusable = nullptr;
    // The sphere decoders' channel state (R in d_a): Q^H, the detection order, N0 floor.
    float2* d_qh = nullptr;
    std::uint8_t* d_order = nullptr;
    float* d_floor = nullptr;
    SpherePoints sphere_points{};
    /* Host threads that gather a submit_frames piece's channels into pinned memory: one
     * thread copies a few GB/s, and an LTE work() call of 500 items brings 71 channels
     * (11 MB). Made by the first batch; config.num_threads parts, else up to 4. */
    std::unique_ptr<WorkerTeam> gather_team;
    // BOX's channel state beside exact MMSE's: G and the step tau per subcarrier.
    float2* d_gram = nullptr;
    float* d_step = nullptr;
    float* d_momentum = nullptr; //!< FISTA's schedule (null: plain)
    float box_bound_re = 0.0f, box_bound_im = 0.0f; //!< the constellation's box
    unsigned long long* d_bad_samples = nullptr;
    /* The channel status of device-API channels (set_channel_device), counted by the
     * kernels that prepare them (PrepareArgs::counts; kChannelCounts totals, never
     * reset), and read by stats(): their status is never copied to the host, as a host
     * channel's is (fold_channel_status). */
    unsigned long long* d_channel_counts = nullptr;
    bool has_channel = false;
    const float2* channel = nullptr; //!< H in force: d_h, or the caller's device copy
    float n0 = 0.0f;
    // Through the device API the channel is prepared by the first detect call on it:
    // fused into the equalize kernel when the call is one tile per subcarrier (1..64
    // symbols), skipped while CG/CR iterate from H alone (matrix_free_pays
    // for the symbols so far), or by the prepare kernel otherwise. a_formed: A or A^-1
    // is there for the channel.
    bool a_formed = false;
    std::size_t symbols_on_channel = 0;
    // A device-API channel's status is in d_channel_counts (counted by the first kernel
    // that reads it: matrix-free, fused or prepare), so that later calls skip it.
    bool channel_counted = false;
    // detect_frames_device: its channels are in force (no detect call may follow), and
    // the frames' N0, staged (pinned) and on the device, made by its first call.
    bool frames_channel = false;
    float* h_frame_n0 = nullptr;
    float* d_frame_n0 = nullptr;
    cudaEvent_t frame_n0_sent = nullptr;
    // Pipeline slots: one stream each, device buffers and pinned staging for a chunk.
    struct Slot {
        cudaStream_t stream = nullptr;
        cudaEvent_t done = nullptr;
        // detect_with_channel: the range's upload landed; its search has read d_y
        cudaEvent_t uploaded = nullptr, consumed = nullptr;
        float2* d_y = nullptr;
        float* d_llr = nullptr;
        float2* d_x_hat = nullptr;
        float2* h_y = nullptr;
        float* h_llr = nullptr;
        float2* h_x_hat = nullptr;
        // encoded input (detect_encoded): the chunk's codes and per-symbol scales
        void* d_y_codes = nullptr;
        float* d_y_scales = nullptr;
        // narrow LLRs (detect_int8, detect_fp16): rounded on the device, staged for
        // pageable callers; room for 2 bytes each
        void* d_llr_narrow = nullptr;
        void* h_llr_narrow = nullptr;
        // the chunk in flight: where its outputs go once it completes
        std::size_t first = 0, count = 0;
        bool busy = false;
    };
    std::vector<Slot> slots;
    // Ordering of the channel state between streams: equalize launches wait for the last
    // prepare (channel_ready); a new prepare waits for the device-API calls before it
    // (last_use). Each device-API call waits for the one before it, so that last_use,
    // recorded after each, covers them all whatever streams they ran on.
    cudaEvent_t channel_ready = nullptr, last_use = nullptr;
    /* set_channel() returns once H is read, without waiting for its preparation: that
     * runs on channel_stream while detect() uploads the symbols on the slots' streams.
     * Its per-subcarrier status comes back by a copy queued behind it (status_ready)
     * and is counted into the statistics when they are next needed
     * (fold_channel_status); h_read marks the end of the upload from a pinned caller
     * buffer, which the caller may overwrite once set_channel() returns. */
    cudaStream_t channel_stream = nullptr;
    cudaEvent_t h_read = nullptr, status_ready = nullptr;
    bool status_pending = false;
    // The last enqueue() (detect, or a submit() until complete()): what drain() needs.
    bool submitted = false; //!< a submit() is in flight
    bool enqueued_direct = false;
    std::size_t enqueued_symbols = 0, next_slot = 0;
    float* enqueued_llr = nullptr;
    void* enqueued_narrow = nullptr; //!< detect_int8/fp16's output (then llr is null)
    std::size_t enqueued_narrow_bytes = 0; //!< its bytes per LLR
    cf32* enqueued_x_hat = nullptr;
    cudaStream_t count_stream = nullptr;
    bool channel_stream_used = false; //!< by a host set_channel() not waited for yet
    float2* h_channel = nullptr;      // pinned staging of H
    std::uint8_t* h_status = nullptr; // pinned copies of the per-subcarrier results
    std::uint8_t* h_unusable = nullptr;
    unsigned long long* h_bad_samples = nullptr;

    /* submit_frames (sphere decoders): every frame's channel state side by side, each
     * array frames * N_sc subcarriers long (r and qh element-major at that stride), the
     * batch's symbols and LLRs, and the symbol -> frame map and N0 per frame. Grown by
     * the first batch that needs more; `pending` until complete() counts its status. */
    struct FrameBatch {
        std::size_t frames_cap = 0, symbols_cap = 0;
        float2 *d_h = nullptr, *d_r = nullptr, *d_qh = nullptr, *d_y = nullptr;
        std::uint8_t *d_order = nullptr, *d_status = nullptr, *d_unusable = nullptr;
        float *d_floor = nullptr, *d_llr = nullptr, *d_n0 = nullptr;
        void* d_llr_narrow = nullptr; // int8 / fp16 LLRs, made by the first narrow batch
        int* d_frame = nullptr;
        float2* h_h = nullptr; // pinned staging of the frames' H
        int* h_frame = nullptr;
        float* h_n0 = nullptr;
        std::uint8_t *h_status = nullptr, *h_unusable = nullptr;
        cudaEvent_t done = nullptr;
        std::vector<char> counted; // frames whose channel is new (counted in the stats)
        std::size_t frames = 0, symbols = 0;
        bool pending = false;

        void release() noexcept
        {
            for (void* p : { static_cast<void*>(d_h),
                             static_cast<void*>(d_r),
                             static_cast<void*>(d_qh),
                             static_cast<void*>(d_y),
                             static_cast<void*>(d_order),
                             static_cast<void*>(d_status),
                             static_cast<void*>(d_unusable),
                             static_cast<void*>(d_floor),
                             static_cast<void*>(d_llr),
                             static_cast<void*>(d_n0),
                             static_cast<void*>(d_llr_narrow),
                             static_cast<void*>(d_frame) })
                cudaFree(p);
            for (void* p : { static_cast<void*>(h_h),
                             static_cast<void*>(h_frame),
                             static_cast<void*>(h_n0),
                             static_cast<void*>(h_status),
                             static_cast<void*>(h_unusable) })
                cudaFreeHost(p);
            if (done)
                cudaEventDestroy(done);
            *this = FrameBatch{};
        }
    };
    FrameBatch batch;
    //! Room for a batch of `frames` channels and `symbols` symbols (nothing in flight).
    void ensure_batch(std::size_t frames, std::size_t symbols, bool narrow)
    {
        FrameBatch& b = batch;
        const std::size_t nsc = dims.num_subcarriers, bb = dims.num_antennas,
                          u = dims.num_users;
        if (frames > b.frames_cap) {
            b.release(); // (both parts: simpler than two growth paths, and rare)
        }
        if (!b.done)
            MIMODET_CUDA_CHECK(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming));
        if (frames > b.frames_cap) {
            const std::size_t f = frames, n = f * nsc;
            b.d_h = device_alloc<float2>(n * bb * u);
            b.d_r = device_alloc<float2>(n * u * u);
            b.d_qh = device_alloc<float2>(n * u * bb);
            b.d_order = device_alloc<std::uint8_t>(n * u);
            b.d_status = device_alloc<std::uint8_t>(n);
            b.d_unusable = device_alloc<std::uint8_t>(n);
            b.d_floor = device_alloc<float>(n);
            b.d_n0 = device_alloc<float>(f);
            b.h_h = pinned_alloc<float2>(n * bb * u);
            b.h_n0 = pinned_alloc<float>(f);
            b.h_status = pinned_alloc<std::uint8_t>(n);
            b.h_unusable = pinned_alloc<std::uint8_t>(n);
            b.counted.assign(f, 0);
            b.frames_cap = f;
        }
        if (symbols > b.symbols_cap) {
            cudaFree(b.d_y);
            cudaFree(b.d_llr);
            cudaFree(b.d_frame);
            cudaFree(b.d_llr_narrow);
            cudaFreeHost(b.h_frame);
            b.d_y = nullptr, b.d_llr = nullptr, b.d_frame = nullptr, b.h_frame = nullptr;
            b.d_llr_narrow = nullptr;
            b.symbols_cap = 0;
            b.d_y = device_alloc<float2>(symbols * dims.rx_items());
            b.d_llr = device_alloc<float>(symbols * dims.llr_items());
            b.d_frame = device_alloc<int>(symbols);
            b.h_frame = pinned_alloc<int>(symbols);
            b.symbols_cap = symbols;
        }
        if (narrow && !b.d_llr_narrow) // (2 bytes an LLR: room for int8 and fp16)
            b.d_llr_narrow =
                device_alloc<std::uint16_t>(b.symbols_cap * dims.llr_items());
    }

    /* Storage precision (docs/precision.md). Float input is rounded on the device after
     * its upload (quantize_blocks: the emulation's values, bit for bit); encoded input
     * (set_channel_encoded, detect_encoded) crosses the host link as codes, a quarter or
     * half of float32's bytes, and is decoded on the device (decode_blocks). */
    Precision precision = Precision::fp32;
    std::size_t code_bytes = 4;
    void* d_h_codes = nullptr; //!< the channel's codes; allocated by the first encoded call
    bool code_buffers = false; //!< d_h_codes and the slots' code buffers exist
    bool narrow_buffers = false; //!< the slots' narrow LLR buffers exist
    /* An encoded channel in force: its codes (d_h_codes, or the caller's device copy)
     * and scale. The tiled kernels (chol, cg, cr) read the codes of H and y as they are;
     * the other paths read float32, decoded on the device when first needed
     * (ensure_float_channel; h_decoded). */
    const void* channel_codes = nullptr;
    float channel_scale = 1.0f;
    bool h_decoded = true;
    float2* d_y_scratch = nullptr; //!< device API: decoded y for the other paths
    std::size_t y_scratch_symbols = 0;

    DetectorStats stats;
    bool device_selected = false; // acquire() got as far as cudaSetDevice
    //! Recurring equalize launches and their downloads, as graphs (EngineOptions::graphs).
    GraphCache graphs;

    Impl(const DetectorConfig& c, const EngineOptions& o)
        : config(c),
          dims(c.dims()),
          options(o),
          constellation(c.modulation),
          mode(kernel_mode(c.mode)),
          precision(c.precision),
          code_bytes(precision::code_bytes(c.precision))
    {
        try {
            acquire();
        } catch (const OutOfMemory& e) {
            const std::string held = device_selected ? memory_held() : std::string();
            release();
            throw OutOfMemory(
                "CUDA detector " + std::to_string(dims.num_antennas) + "x" +
                std::to_string(dims.num_users) + " " + to_string(config.modulation) + " " +
                to_string(config.mode) + ", " + std::to_string(dims.num_subcarriers) +
                " subcarriers, " + std::to_string(options.streams) + " stream(s) of " +
                std::to_string(chunk_symbols) + " symbols: " + e.what() + held +
                ". Fewer subcarriers or streams fit; backend=auto runs it on the CPU");
        } catch (...) {
            release(); // nothing leaks when construction fails half-way
            throw;
        }
    }

    std::size_t free_at_start = 0; // device memory free when acquire() selected the device
    //! "; this detector held about 1.2 GiB": what the failed acquire() had already taken.
    std::string memory_held() const
    {
        std::size_t free_now = 0, total = 0;
        if (cudaMemGetInfo(&free_now, &total) != cudaSuccess || free_now > free_at_start) {
            cudaGetLastError();
            return {};
        }
        return "; this detector held about " +
               human_bytes(static_cast<double>(free_at_start - free_now)) + " by then";
    }

    void acquire()
    {
        config.validate();
        if (dims.num_users > kMaxUsers || dims.num_antennas > kMaxAntennas)
            throw std::invalid_argument(
                "CUDA detector: supports up to U=" + std::to_string(kMaxUsers) +
                " users and B=" + std::to_string(kMaxAntennas) +
                " antennas (got U=" + std::to_string(dims.num_users) +
                ", B=" + std::to_string(dims.num_antennas) + ")");
        if (options.streams < 1)
            throw std::invalid_argument("CUDA detector: streams must be >= 1, got " +
                                        std::to_string(options.streams));
        y_stride =
            row_stride(options.host_layout.y_row_items, dims.rx_items(), "y_row_items");
        llr_stride = row_stride(
            options.host_layout.llr_row_items, dims.llr_items(), "llr_row_items");
        x_hat_stride = row_stride(
            options.host_layout.x_hat_row_items, dims.symbol_items(), "x_hat_row_items");
        std::string why;
        const int count = device_count(&why);
        if (count == 0)
            throw std::runtime_error("CUDA detector: " + why);
        if (options.device < 0 || options.device >= count)
            throw std::invalid_argument(
                "CUDA detector: device " + std::to_string(options.device) +
                " does not exist (" + std::to_string(count) + " found)");
        MIMODET_CUDA_CHECK(cudaSetDevice(options.device));
        device_selected = true;
        std::size_t total = 0;
        MIMODET_CUDA_CHECK(cudaMemGetInfo(&free_at_start, &total));
        configure_kernels();
        if (box()) { // H of a subcarrier in shared memory: 256 x 32 is past sm_75's 64 KiB
            int optin = 0;
            MIMODET_CUDA_CHECK(cudaDeviceGetAttribute(
                &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, options.device));
            const std::size_t need = box_detect_shared_bytes(
                static_cast<int>(dims.num_antennas), static_cast<int>(dims.num_users));
            if (need > static_cast<std::size_t>(optin))
                throw std::invalid_argument(
                    "CUDA detector: BOX at " + std::to_string(dims.num_antennas) + "x" +
                    std::to_string(dims.num_users) + " needs " + std::to_string(need) +
                    " bytes of shared memory per block; this GPU gives " +
                    std::to_string(optin) + " (backend cpu runs it)");
        }
        demap = demap_table(constellation);

        const std::size_t nsc = dims.num_subcarriers, b = dims.num_antennas,
                          u = dims.num_users;
        chunk_symbols = std::max<std::size_t>(
            1, options.chunk_bytes / (dims.rx_items() * sizeof(cf32)));
        d_h = device_alloc<float2>(nsc * b * u);
        d_a = device_alloc<float2>(nsc * u * u);
        d_rho = device_alloc<float>(nsc * u);
        d_inv_lambda = device_alloc<float>(nsc * u);
        d_status = device_alloc<std::uint8_t>(nsc);
        d_unusable = device_alloc<std::uint8_t>(nsc);
        if (sphere()) {
            d_qh = device_alloc<float2>(nsc * u * b);
            d_order = device_alloc<std::uint8_t>(nsc * u);
            d_floor = device_alloc<float>(nsc);
            sphere_points.count = static_cast<int>(constellation.size());
            sphere_points.bits = static_cast<int>(constellation.bits_per_symbol());
            for (std::size_t i = 0; i < constellation.size(); ++i)
                sphere_points.p[i] = make_float2(constellation.points()[i].real(),
                                                 constellation.points()[i].imag());
            find_sphere_grid(sphere_points);
        }
        if (box()) {
            d_gram = device_alloc<float2>(nsc * u * u);
            d_step = device_alloc<float>(nsc);
            for (const cf32& p : constellation.points()) { // once, not per detect call
                box_bound_re = std::max(box_bound_re, std::abs(p.real()));
                box_bound_im = std::max(box_bound_im, std::abs(p.imag()));
            }
            if (config.box_accelerated) {
                const std::vector<float> m = box::fista_momentum(config.box_iterations);
                d_momentum = device_alloc<float>(m.size());
                copy_to_device(d_momentum, m.data(), m.size() * sizeof(float));
            }
        }
        d_bad_samples = device_alloc<unsigned long long>(1);
        MIMODET_CUDA_CHECK(cudaMemset(d_bad_samples, 0, sizeof(unsigned long long)));
        d_channel_counts = device_alloc<unsigned long long>(kChannelCounts);
        MIMODET_CUDA_CHECK(
            cudaMemset(d_channel_counts, 0, kChannelCounts * sizeof(unsigned long long)));
        h_status = pinned_alloc<std::uint8_t>(nsc);
        h_unusable = pinned_alloc<std::uint8_t>(nsc);
        h_bad_samples = pinned_alloc<unsigned long long>(1);
        slots.resize(static_cast<std::size_t>(options.streams));
        for (auto& s : slots) {
            MIMODET_CUDA_CHECK(
                cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
            MIMODET_CUDA_CHECK(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
            MIMODET_CUDA_CHECK(
                cudaEventCreateWithFlags(&s.uploaded, cudaEventDisableTiming));
            MIMODET_CUDA_CHECK(
                cudaEventCreateWithFlags(&s.consumed, cudaEventDisableTiming));
            s.d_y = device_alloc<float2>(chunk_symbols * dims.rx_items());
            s.d_llr = device_alloc<float>(chunk_symbols * dims.llr_items());
            s.d_x_hat = device_alloc<float2>(chunk_symbols * dims.symbol_items());
            s.h_y = pinned_alloc<float2>(chunk_symbols * dims.rx_items());
            s.h_llr = pinned_alloc<float>(chunk_symbols * dims.llr_items());
            s.h_x_hat = pinned_alloc<float2>(chunk_symbols * dims.symbol_items());
        }
        MIMODET_CUDA_CHECK(
            cudaEventCreateWithFlags(&channel_ready, cudaEventDisableTiming));
        MIMODET_CUDA_CHECK(cudaEventCreateWithFlags(&last_use, cudaEventDisableTiming));
        MIMODET_CUDA_CHECK(
            cudaStreamCreateWithFlags(&channel_stream, cudaStreamNonBlocking));
        MIMODET_CUDA_CHECK(cudaEventCreateWithFlags(&h_read, cudaEventDisableTiming));
        MIMODET_CUDA_CHECK(
            cudaEventCreateWithFlags(&status_ready, cudaEventDisableTiming));
    }

    ~Impl() { release(); }

    //! Frees whatever was acquired; never throws (errors while freeing are ignored, and
    //! cleared: a construction that failed half-way must not leave this thread's CUDA
    //! last-error set for the next launch check to report).
    void release() noexcept
    {
        // Before the device is selected nothing exists; cudaSetDevice on a device that
        // was refused would only set an error.
        if (!device_selected)
            return;
        cudaSetDevice(options.device);
        if (last_use)
            cudaEventSynchronize(last_use);
        graphs.clear();
        if (channel_stream) {
            cudaStreamSynchronize(channel_stream);
            cudaStreamDestroy(channel_stream);
        }
        for (cudaEvent_t e : { channel_ready, last_use, h_read, status_ready })
            if (e)
                cudaEventDestroy(e);
        for (auto& s : slots) {
            if (s.stream) {
                cudaStreamSynchronize(s.stream);
                cudaStreamDestroy(s.stream);
            }
            for (cudaEvent_t e : { s.done, s.uploaded, s.consumed })
                if (e)
                    cudaEventDestroy(e);
            cudaFree(s.d_y);
            cudaFree(s.d_llr);
            cudaFree(s.d_x_hat);
            cudaFreeHost(s.h_y);
            cudaFreeHost(s.h_llr);
            cudaFreeHost(s.h_x_hat);
            cudaFree(s.d_y_codes);
            cudaFree(s.d_y_scales);
            cudaFree(s.d_llr_narrow);
            cudaFreeHost(s.h_llr_narrow);
        }
        narrow_buffers = false;
        cudaFree(d_h_codes);
        d_h_codes = nullptr;
        cudaFree(d_y_scratch);
        d_y_scratch = nullptr;
        y_scratch_symbols = 0;
        code_buffers = false;
        cudaFree(d_h);
        cudaFree(d_a);
        cudaFree(d_rho);
        cudaFree(d_inv_lambda);
        cudaFree(d_status);
        cudaFree(d_unusable);
        cudaFree(d_qh);
        cudaFree(d_order);
        cudaFree(d_floor);
        d_qh = nullptr;
        d_order = nullptr;
        d_floor = nullptr;
        cudaFree(d_gram);
        cudaFree(d_step);
        cudaFree(d_momentum);
        d_gram = nullptr;
        d_step = nullptr;
        d_momentum = nullptr;
        cudaFree(d_bad_samples);
        cudaFree(d_channel_counts);
        cudaFree(d_frame_n0);
        cudaFreeHost(h_frame_n0);
        if (frame_n0_sent)
            cudaEventDestroy(frame_n0_sent);
        d_frame_n0 = h_frame_n0 = nullptr;
        frame_n0_sent = nullptr;
        batch.release();
        cudaFreeHost(h_channel);
        cudaFreeHost(h_status);
        cudaFreeHost(h_unusable);
        cudaFreeHost(h_bad_samples);
        slots.clear();
        channel_ready = last_use = h_read = status_ready = nullptr;
        channel_stream = nullptr;
        status_pending = channel_stream_used = false;
        d_h = d_a = nullptr;
        d_rho = d_inv_lambda = nullptr;
        d_status = d_unusable = nullptr;
        d_bad_samples = h_bad_samples = d_channel_counts = nullptr;
        h_channel = nullptr;
        h_status = h_unusable = nullptr;
        device_selected = false;
        cudaGetLastError();
    }

    //! The device buffers of encoded input, made by its first call.
    void ensure_code_buffers()
    {
        if (code_buffers)
            return;
        const std::size_t item = 2 * code_bytes; // bytes of a complex value
        d_h_codes = device_malloc(dims.channel_items() * item);
        for (auto& s : slots) {
            s.d_y_codes = device_malloc(chunk_symbols * dims.rx_items() * item);
            s.d_y_scales = device_alloc<float>(chunk_symbols);
        }
        code_buffers = true;
    }

    //! The slots' narrow LLR buffers, made by the first detect_int8 or detect_fp16.
    void ensure_narrow_buffers()
    {
        if (narrow_buffers)
            return;
        for (auto& s : slots) {
            s.d_llr_narrow = device_alloc<std::uint16_t>(chunk_symbols * dims.llr_items());
            s.h_llr_narrow = pinned_alloc<std::uint16_t>(chunk_symbols * dims.llr_items());
        }
        narrow_buffers = true;
    }

    cudaStream_t stream_or_default(void* s) const
    {
        return s ? static_cast<cudaStream_t>(s) : slots.front().stream;
    }

    PrepareArgs prepare_args(const float2* d_channel, float n0) const
    {
        PrepareArgs a{};
        a.h = d_channel;
        a.num_subcarriers = static_cast<int>(dims.num_subcarriers);
        a.num_antennas = static_cast<int>(dims.num_antennas);
        a.num_users = static_cast<int>(dims.num_users);
        a.n0 = n0;
        a.mode = mode;
        a.a = d_a;
        a.rho = d_rho;
        a.inv_lambda = d_inv_lambda;
        a.status = d_status;
        a.unusable = d_unusable;
        return a;
    }

    //! Orders `stream` after the last use of the channel state and after the point where
    //! the channel in force was given (channel_ready, also recorded by
    //! set_channel_device on the caller's stream).
    void wait_for_channel(cudaStream_t stream)
    {
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, last_use, 0));
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, channel_ready, 0));
    }

    //! Counts the per-subcarrier status of the last host channel into the statistics,
    //! once its copy to h_status has landed.
    void fold_channel_status()
    {
        if (!status_pending)
            return;
        MIMODET_CUDA_CHECK(cudaEventSynchronize(status_ready));
        status_pending = false;
        for (std::size_t sc = 0; sc < dims.num_subcarriers; ++sc) {
            stats.bad_channel_subcarriers += (h_status[sc] & kStatusBad) ? 1 : 0;
            stats.regularized_subcarriers += (h_status[sc] & kStatusRegularized) ? 1 : 0;
            stats.unusable_user_channels += h_unusable[sc];
        }
    }

    /*! Queues on `cs`, behind the first `used` slots' work: the status and unusable
     * counts of n subcarriers and the erasure count down to the host (the count reset
     * for the next call). */
    void queue_results_download(cudaStream_t cs,
                                std::size_t used,
                                std::uint8_t* h_status_out,
                                const std::uint8_t* d_status_in,
                                std::uint8_t* h_unusable_out,
                                const std::uint8_t* d_unusable_in,
                                std::size_t n)
    {
        for (std::size_t i = 0; i < used; ++i)
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(cs, slots[i].done, 0));
        MIMODET_CUDA_CHECK(
            cudaMemcpyAsync(h_status_out, d_status_in, n, cudaMemcpyDeviceToHost, cs));
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(
            h_unusable_out, d_unusable_in, n, cudaMemcpyDeviceToHost, cs));
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(h_bad_samples,
                                           d_bad_samples,
                                           sizeof(unsigned long long),
                                           cudaMemcpyDeviceToHost,
                                           cs));
        MIMODET_CUDA_CHECK(
            cudaMemsetAsync(d_bad_samples, 0, sizeof(unsigned long long), cs));
    }

    /*! The sphere decoders' preparation of subcarriers [first, first + count) of the
     * channel d_channel ([N_sc][B][U]), their state where the whole channel's goes. */
    SpherePrepareArgs sphere_prepare_args(const float2* d_channel,
                                          std::size_t first,
                                          std::size_t count) const
    {
        const std::size_t b = dims.num_antennas, u = dims.num_users;
        SpherePrepareArgs s{};
        s.h = d_channel + first * b * u;
        s.num_subcarriers = static_cast<int>(count);
        s.num_antennas = static_cast<int>(b);
        s.num_users = static_cast<int>(u);
        s.full_levels = static_cast<int>(config.effective_full_levels());
        s.r = d_a + first;
        s.qh = d_qh + first;
        s.order = d_order + first * u;
        s.floor = d_floor + first;
        s.status = d_status + first;
        s.unusable = d_unusable + first;
        s.state_stride = dims.num_subcarriers;
        return s;
    }

    //! counts: PrepareArgs::counts (device-API channels; host ones fold their status).
    void prepare(const float2* d_channel,
                 float n0,
                 cudaStream_t stream,
                 unsigned long long* counts = nullptr)
    {
        wait_for_channel(stream);
        if (sphere()) {
            SpherePrepareArgs s = sphere_prepare_args(d_channel, 0, dims.num_subcarriers);
            s.counts = counts;
            launch_prepare_sphere(s, stream);
            MIMODET_CUDA_CHECK(cudaEventRecord(channel_ready, stream));
            a_formed = true;
            return;
        }
        PrepareArgs args = prepare_args(d_channel, n0);
        args.counts = counts;
        if (box()) // the LMMSE start and the LLRs' SINR are exact MMSE's
            args.mode = KernelMode::chol;
        launch_prepare(args, stream);
        if (box()) {
            BoxPrepareArgs b{};
            b.h = d_channel;
            b.num_subcarriers = static_cast<int>(dims.num_subcarriers);
            b.num_antennas = static_cast<int>(dims.num_antennas);
            b.num_users = static_cast<int>(dims.num_users);
            b.box_step = config.box_step;
            b.gram = d_gram;
            b.step = d_step;
            launch_prepare_box(b, stream);
        }
        MIMODET_CUDA_CHECK(cudaEventRecord(channel_ready, stream));
        a_formed = true;
    }

    bool iterative() const { return mode == KernelMode::cg || mode == KernelMode::cr; }
    bool sphere() const { return mode == KernelMode::fsd || mode == KernelMode::sfsd; }
    bool box() const { return mode == KernelMode::box; }

    //! BOX on n symbols of the prepared channel.
    void detect_box(const float2* d_y, std::size_t n, float* d_llr, float2* d_x_hat,
                    cudaStream_t stream) const
    {
        BoxDetectArgs b{};
        b.eq = equalize_args(d_y, n, d_llr, d_x_hat, false);
        b.eq.iterations = static_cast<int>(config.box_iterations);
        b.gram = d_gram;
        b.step = d_step;
        b.bound_re = box_bound_re;
        b.bound_im = box_bound_im;
        b.start = static_cast<int>(config.box_start == BoxStart::zero ? BoxStartKind::zero
                                   : config.box_start == BoxStart::mf ? BoxStartKind::mf
                                                                      : BoxStartKind::lmmse);
        b.momentum = d_momentum;
        launch_detect_box(b, stream);
    }

    //! The sphere decoders' search of n symbols on the prepared channel.
    void detect_sphere(const float2* d_y, std::size_t n, float* d_llr, float2* d_x_hat,
                       cudaStream_t stream)
    {
        detect_sphere_range(d_y, n, 0, dims.num_subcarriers, d_llr, d_x_hat, stream);
    }

    /*! The search of n symbols on subcarriers [first, first + count) of the prepared
     * channel: d_y [n][count][B] -> d_llr [n][count][U][bits] (a range's own rows). */
    void detect_sphere_range(const float2* d_y,
                             std::size_t n,
                             std::size_t first,
                             std::size_t count,
                             float* d_llr,
                             float2* d_x_hat,
                             cudaStream_t stream)
    {
        const std::size_t u = dims.num_users;
        SphereDetectArgs s{};
        s.y = d_y;
        s.num_symbols = n;
        s.num_subcarriers = static_cast<int>(count);
        s.num_antennas = static_cast<int>(dims.num_antennas);
        s.num_users = static_cast<int>(u);
        s.full_levels = static_cast<int>(config.effective_full_levels());
        s.list_paths =
            mode == KernelMode::sfsd ? static_cast<int>(config.effective_list_paths()) : 0;
        s.r = d_a + first;
        s.qh = d_qh + first;
        s.order = d_order + first * u;
        s.floor = d_floor + first;
        s.status = d_status + first;
        s.state_stride = dims.num_subcarriers;
        s.n0 = n0;
        s.llr_sign = config.llr_sign == LlrSign::positive_means_one ? 1.0f : -1.0f;
        s.llr_clip = config.llr_clip > 0.0f ? config.llr_clip : INFINITY;
        s.llr = d_llr;
        s.x_hat = d_x_hat;
        s.bad_sample_count = d_bad_samples;
        s.points = sphere_points;
        launch_detect_sphere(s, stream);
    }

    //! Whether `symbols` on one channel run faster from H alone (cg/cr, no A).
    bool matrix_free_for(std::size_t symbols) const
    {
        return iterative() &&
               matrix_free_supported(static_cast<int>(dims.num_antennas),
                                     static_cast<int>(dims.num_users)) &&
               matrix_free_pays(static_cast<int>(dims.num_users),
                                static_cast<int>(config.iterations),
                                symbols);
    }

    //! A new channel in force, not prepared yet.
    void new_channel(const float2* d_channel, float channel_n0)
    {
        channel = d_channel;
        n0 = channel_n0;
        a_formed = false;
        frames_channel = false;
        symbols_on_channel = 0;
        channel_counted = false;
        channel_codes = nullptr;
        channel_scale = 1.0f;
        h_decoded = true;
    }

    //! An encoded channel's float H in d_h, for the paths that read float32 (queued on
    //! `stream` after the channel was given; later users wait for channel_ready).
    void ensure_float_channel(cudaStream_t stream)
    {
        if (h_decoded)
            return;
        // d_h may still be read by the last channel's work on another stream
        wait_for_channel(stream);
        decode_blocks(channel_codes,
                      precision,
                      dims.channel_items(),
                      1,
                      nullptr,
                      channel_scale,
                      reinterpret_cast<cf32*>(d_h),
                      stream);
        MIMODET_CUDA_CHECK(cudaEventRecord(channel_ready, stream));
        channel = d_h;
        h_decoded = true;
    }

    //! The equalize kernel's arguments for n symbols on the channel in force (n0 only
    //! where the matrix-free kernel reads it: the others take the prepared gains, and a
    //! graph of them stays valid across channels of other noise variances).
    EqualizeArgs equalize_args(const float2* d_y,
                               std::size_t n,
                               float* d_llr,
                               float2* d_x_hat,
                               bool matrix_free) const
    {
        EqualizeArgs a{};
        a.y = d_y;
        a.num_symbols = n;
        a.num_subcarriers = static_cast<int>(dims.num_subcarriers);
        a.num_antennas = static_cast<int>(dims.num_antennas);
        a.num_users = static_cast<int>(dims.num_users);
        a.mode = mode;
        a.iterations = static_cast<int>(config.iterations);
        a.n0 = matrix_free ? n0 : 0.0f;
        a.h = channel;
        a.a = d_a;
        a.rho = d_rho;
        a.inv_lambda = d_inv_lambda;
        a.status = d_status;
        a.demap = demap;
        a.llr_sign = config.llr_sign == LlrSign::positive_means_one ? 1.0f : -1.0f;
        a.llr_clip = config.llr_clip > 0.0f ? config.llr_clip
                                            : std::numeric_limits<float>::infinity();
        a.llr = d_llr;
        a.x_hat = d_x_hat;
        a.bad_sample_count = d_bad_samples;
        return a;
    }

    /*! Equalizes n symbols on `stream`, then enqueues copies_out(stream) (a chunk's
     * downloads, or nothing). On a formed channel that is the same work whenever the
     * arguments and `outputs` (what copies_out depends on) recur: with
     * EngineOptions::graphs it goes through the graph cache, so that a recurring chunk is
     * one graph launch instead of the kernel's launch (and the host-side choice of its
     * configuration) and the copies. */
    /*! y_codes (with y_scales, device memory): encoded symbols, read as they are by the
     * tiled kernels where the channel is encoded too (chol, cg, cr), decoded into d_y
     * for the other paths. */
    template <typename CopiesOut>
    void equalize(const float2* d_y,
                  std::size_t n,
                  float* d_llr,
                  float2* d_x_hat,
                  cudaStream_t stream,
                  const GraphKey& outputs,
                  CopiesOut&& copies_out,
                  const void* y_codes = nullptr,
                  const float* y_scales = nullptr)
    {
        if (frames_channel)
            throw std::logic_error("detect after detect_frames_device: give a channel "
                                   "(set_channel*) first");
        const bool matrix_free_next = !a_formed && !sphere() && !box() &&
                                      matrix_free_for(symbols_on_channel + n);
        const bool tiled = a_formed ? equalize_reads_codes(n)
                                    : !matrix_free_next && options.fuse_prepare &&
                                          fused_supported(n);
        // (fp32 codes are float32 values times a scale: decoded, not a kernel format)
        const bool codes = precision != Precision::fp32 && y_codes && channel_codes &&
                           tiled && !sphere() && !box() &&
                           mode != KernelMode::zf;
        if (!codes) { // float32 H and y
            ensure_float_channel(stream);
            if (y_codes)
                decode_blocks(y_codes,
                              precision,
                              dims.rx_items(),
                              n,
                              y_scales,
                              1.0f,
                              reinterpret_cast<cf32*>(const_cast<float2*>(d_y)), // ours
                              stream);
        }
        auto with_codes = [&](EqualizeArgs a) {
            if (codes) {
                a.y_codes = y_codes;
                a.y_scales = y_scales;
                a.h_codes = channel_codes;
                a.h_scale = channel_scale;
                a.code_precision = static_cast<int>(precision);
                a.code_bytes = static_cast<int>(code_bytes);
            }
            return a;
        };
        symbols_on_channel += n;
        // (a channel not formed yet is a device-API one: its status is counted on the
        // device, once)
        auto counts_once = [&]() {
            unsigned long long* c = channel_counted ? nullptr : d_channel_counts;
            channel_counted = true;
            return c;
        };
        if (sphere() || box()) { // no fused or matrix-free path, no graphs (yet)
            if (!a_formed)
                prepare(channel, n0, stream, counts_once());
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, channel_ready, 0));
            if (box())
                detect_box(d_y, n, d_llr, d_x_hat, stream);
            else
                detect_sphere(d_y, n, d_llr, d_x_hat, stream);
            copies_out(stream);
            return;
        }
        if (a_formed) {
            const EqualizeArgs a = with_codes(equalize_args(d_y, n, d_llr, d_x_hat, false));
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, channel_ready, 0));
            auto work = [&](cudaStream_t s) {
                launch_equalize(a, s);
                copies_out(s);
            };
            if (options.graphs)
                graphs.launch(stream, key_of(a, outputs), work);
            else
                work(stream);
            return;
        }
        const bool matrix_free = matrix_free_for(symbols_on_channel);
        const bool fused = options.fuse_prepare && !matrix_free && fused_supported(n);
        if (!matrix_free && !fused) // forming A pays, in its own kernel
            prepare(channel, n0, stream, counts_once());
        EqualizeArgs a = with_codes(equalize_args(d_y, n, d_llr, d_x_hat, matrix_free));
        if (matrix_free && n > 0) // (no launch, so no count, for no symbols)
            a.channel_counts = counts_once();
        if (fused) {
            wait_for_channel(stream);
            PrepareArgs channel_args = prepare_args(channel, n0);
            channel_args.counts = counts_once();
            if (codes) { // (channel, d_h, is not decoded: the kernel reads the codes)
                channel_args.h_codes = channel_codes;
                channel_args.h_scale = channel_scale;
                channel_args.code_precision = static_cast<int>(precision);
                channel_args.code_bytes = static_cast<int>(code_bytes);
            }
            launch_equalize_fused(a, channel_args, stream);
            MIMODET_CUDA_CHECK(cudaEventRecord(channel_ready, stream));
            a_formed = true;
        } else {
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, channel_ready, 0));
            if (matrix_free)
                launch_equalize_matrix_free(a, stream);
            else
                launch_equalize(a, stream);
        }
        copies_out(stream);
    }

    //! The graph key of an equalize launch followed by copies that depend on `outputs`:
    //! every argument but the demapping table, which is the engine's for its lifetime.
    static GraphKey key_of(const EqualizeArgs& a, const GraphKey& outputs)
    {
        static_assert(sizeof(EqualizeArgs) == 264,
                      "a new field of EqualizeArgs belongs in its graph key");
        GraphKey k = outputs;
        k.add(registration_epoch())
            .add(a.y)
            .add(a.num_symbols)
            .add(a.num_subcarriers)
            .add(a.num_antennas)
            .add(a.num_users)
            .add(a.mode)
            .add(a.iterations)
            .add(a.n0)
            .add(a.h)
            .add(a.a)
            .add(a.rho)
            .add(a.inv_lambda)
            .add(a.status)
            .add(a.llr_sign)
            .add(a.llr_clip)
            .add(a.llr)
            .add(a.x_hat)
            .add(a.bad_sample_count)
            .add(a.y_codes)
            .add(a.y_scales)
            .add(a.h_codes)
            .add(a.h_scale)
            .add(a.code_precision)
            .add(a.code_bytes)
            .add(a.row_subcarriers)
            .add(a.frame_n0)
            .add(a.frame_subcarriers)
            .add(a.channel_counts);
        return k;
    }

    //! Waits for a slot's chunk and, when staged, copies its outputs to the caller's
    //! rows.
    void finish_slot(Slot& s,
                     float* llr,
                     cf32* x_hat,
                     void* narrow = nullptr,
                     std::size_t narrow_bytes = 0)
    {
        MIMODET_CUDA_CHECK(cudaEventSynchronize(s.done));
        if (narrow)
            copy_rows(static_cast<char*>(narrow) + s.first * llr_stride * narrow_bytes,
                      llr_stride * narrow_bytes,
                      s.h_llr_narrow,
                      dims.llr_items() * narrow_bytes,
                      dims.llr_items() * narrow_bytes,
                      s.count);
        if (s.h_llr && llr)
            copy_rows(llr + s.first * llr_stride,
                      llr_stride * sizeof(float),
                      s.h_llr,
                      dims.llr_items() * sizeof(float),
                      dims.llr_items() * sizeof(float),
                      s.count);
        if (x_hat)
            copy_rows(x_hat + s.first * x_hat_stride,
                      x_hat_stride * sizeof(cf32),
                      s.h_x_hat,
                      dims.symbol_items() * sizeof(cf32),
                      dims.symbol_items() * sizeof(cf32),
                      s.count);
        s.busy = false;
    }
};

CudaDetector::CudaDetector(const DetectorConfig& config, const EngineOptions& options)
    : Detector(config), d_impl(std::make_unique<Impl>(config, options))
{
}

CudaDetector::~CudaDetector() = default;

bool CudaDetector::has_channel() const { return d_impl->has_channel; }
DetectorStats CudaDetector::stats() const
{
    const_cast<CudaDetector*>(this)->complete(); // a submitted batch's erasures count
    Impl& m = *d_impl;
    m.fold_channel_status();
    DetectorStats s = m.stats;
    /* Device-API calls: their channels' status is counted on the device, and their
     * erasures wait in d_bad_samples until a host detect() collects them (and clears it),
     * both as of the last device-API call, which is waited for. */
    MIMODET_CUDA_CHECK(cudaEventSynchronize(m.last_use));
    unsigned long long counts[kChannelCounts + 1] = {};
    MIMODET_CUDA_CHECK(cudaMemcpy(counts,
                                  m.d_channel_counts,
                                  kChannelCounts * sizeof(unsigned long long),
                                  cudaMemcpyDeviceToHost));
    MIMODET_CUDA_CHECK(cudaMemcpy(counts + kChannelCounts,
                                  m.d_bad_samples,
                                  sizeof(unsigned long long),
                                  cudaMemcpyDeviceToHost));
    s.bad_channel_subcarriers += counts[kChannelCountBad];
    s.regularized_subcarriers += counts[kChannelCountRegularized];
    s.unusable_user_channels += counts[kChannelCountUnusableUsers];
    s.bad_sample_vectors += counts[kChannelCounts];
    return s;
}
bool CudaDetector::equalizer_gains(float* unbias, float* sinr) const
{
    Impl& m = *d_impl;
    DeviceGains g;
    if (!device_gains(g))
        return false;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    const_cast<CudaDetector*>(this)->synchronize(); // the prepare kernel has written them
    const std::size_t nsc = m.dims.num_subcarriers, u = m.dims.num_users;
    std::vector<std::uint8_t> status(nsc);
    MIMODET_CUDA_CHECK(cudaMemcpy(status.data(), g.status, nsc, cudaMemcpyDeviceToHost));
    MIMODET_CUDA_CHECK(
        cudaMemcpy(unbias, g.inv_lambda, nsc * u * sizeof(float), cudaMemcpyDeviceToHost));
    MIMODET_CUDA_CHECK(
        cudaMemcpy(sinr, g.sinr, nsc * u * sizeof(float), cudaMemcpyDeviceToHost));
    finish_gains(unbias, sinr, status.data());
    return true;
}
bool CudaDetector::device_gains(DeviceGains& gains) const
{
    const Impl& m = *d_impl;
    if (!m.has_channel || !m.a_formed || m.sphere())
        return false;
    gains.inv_lambda = m.d_inv_lambda;
    gains.sinr = m.d_rho;
    gains.status = m.d_status;
    return true;
}
void CudaDetector::finish_gains(float* unbias, float* sinr, const std::uint8_t* status) const
{
    const Impl& m = *d_impl;
    const std::size_t nsc = m.dims.num_subcarriers, u = m.dims.num_users;
    for (std::size_t sc = 0; sc < nsc; ++sc)
        for (std::size_t i = sc * u; i < (sc + 1) * u; ++i) {
            // BOX's x_hat is its own estimate of the point (as CpuBoxDetector's)
            if (m.box())
                unbias[i] = unbias[i] > 0.0f ? 1.0f : 0.0f;
            if (status[sc] & kStatusBad) {
                unbias[i] = 0.0f;
                sinr[i] = 0.0f;
            }
        }
}
std::string CudaDetector::name() const
{
    // as the CPU's emulating wrapper says it: "cuda-chol-fp16"
    return "cuda-" + to_string(d_config.mode) +
           (d_config.precision == Precision::fp32 ? "" : "-" + to_string(d_config.precision));
}
int CudaDetector::device() const { return d_impl->options.device; }
bool CudaDetector::matrix_formed() const { return d_impl->a_formed; }
std::uint64_t CudaDetector::graph_replays() const { return d_impl->graphs.replays(); }

void CudaDetector::synchronize()
{
    MIMODET_CUDA_CHECK(cudaSetDevice(d_impl->options.device));
    complete();
    for (auto& s : d_impl->slots)
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    MIMODET_CUDA_CHECK(cudaStreamSynchronize(d_impl->channel_stream));
}

void CudaDetector::set_channel(const cf32* h, float n0)
{
    upload_channel(h, nullptr, 1.0f, n0);
}

void CudaDetector::set_channel_encoded(const void* h_codes, float h_scale, float n0)
{
    if (!h_codes || !(h_scale > 0.0f) || !std::isfinite(h_scale))
        throw std::invalid_argument(name() + ": set_channel_encoded needs codes and a scale "
                                             "> 0 and finite (got " +
                                    std::to_string(h_scale) + ")");
    upload_channel(nullptr, h_codes, h_scale, n0);
}

void CudaDetector::upload_channel(const cf32* h, const void* codes, float scale, float n0)
{
    Impl& m = *d_impl;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    ++m.stats.channels;
    m.has_channel = true;
    const std::size_t nsc = m.dims.num_subcarriers;
    cudaStream_t stream = m.channel_stream;
    // The previous channel may still be in use by queued symbols (engine streams, or a
    // caller's stream through the device API), and its status not counted yet.
    synchronize();
    MIMODET_CUDA_CHECK(cudaEventSynchronize(m.last_use));
    m.fold_channel_status();
    m.channel_stream_used = true;
    if (!std::isfinite(n0) || n0 < 0.0f) {
        ++m.stats.invalid_noise_variance;
        m.stats.bad_channel_subcarriers += nsc;
        m.new_channel(m.d_h, 0.0f);
        m.a_formed = true; // the kernels that read the status, which erases everything
        MIMODET_CUDA_CHECK(cudaMemsetAsync(m.d_status, kStatusBad, nsc, stream));
        MIMODET_CUDA_CHECK(cudaEventRecord(m.channel_ready, stream));
        return;
    }
    // A pinned H goes up by DMA directly; otherwise through the pinned staging copy.
    // Codes go up as they are and are decoded into d_h on the device.
    if (codes)
        m.ensure_code_buffers();
    const void* src = codes ? codes : static_cast<const void*>(h);
    const std::size_t h_bytes =
        m.dims.channel_items() * (codes ? 2 * m.code_bytes : sizeof(cf32));
    const bool direct = is_pinned(src);
    if (!direct) {
        // Made on first use: a detector fed only through the device API (the receive
        // chain's window detector, 10 frames of 16x16 channels) never needs it.
        if (!m.h_channel)
            m.h_channel = pinned_alloc<float2>(m.dims.channel_items());
        std::memcpy(m.h_channel, src, h_bytes);
        src = m.h_channel;
    }
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(
        codes ? m.d_h_codes : static_cast<void*>(m.d_h), src, h_bytes, cudaMemcpyHostToDevice, stream));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.h_read, stream));
    if (codes)
        decode_blocks(m.d_h_codes,
                      m.precision,
                      m.dims.channel_items(),
                      1,
                      nullptr,
                      scale,
                      reinterpret_cast<cf32*>(m.d_h),
                      stream);
    else // narrow storage of float input: H rounded as the emulation rounds it
        quantize_blocks(reinterpret_cast<cf32*>(m.d_h),
                        m.dims.channel_items(),
                        1,
                        m.precision,
                        stream);
    // Host calls form A at once (their statistics need the prepare kernel's status),
    // but do not wait for it: detect() orders its kernels after channel_ready.
    m.new_channel(m.d_h, n0);
    if (codes) { // the tiled kernels read the codes, the others d_h (decoded above)
        m.channel_codes = m.d_h_codes;
        m.channel_scale = scale;
    }
    m.prepare(m.d_h, n0, stream);
    MIMODET_CUDA_CHECK(
        cudaMemcpyAsync(m.h_status, m.d_status, nsc, cudaMemcpyDeviceToHost, stream));
    MIMODET_CUDA_CHECK(
        cudaMemcpyAsync(m.h_unusable, m.d_unusable, nsc, cudaMemcpyDeviceToHost, stream));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.status_ready, stream));
    m.status_pending = true;
    // The caller may reuse a pinned H once this returns: wait until the DMA has read it.
    if (direct)
        MIMODET_CUDA_CHECK(cudaEventSynchronize(m.h_read));
}

void CudaDetector::retire_channel()
{
    Impl& m = *d_impl;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    // As upload_channel: the last channel's work done and its status counted.
    for (auto& s : m.slots)
        if (s.busy) {
            cudaStreamSynchronize(s.stream);
            s.busy = false;
        }
    synchronize();
    MIMODET_CUDA_CHECK(cudaEventSynchronize(m.last_use));
    m.fold_channel_status();
}

void CudaDetector::detect_with_channel(
    const cf32* h, float n0, const cf32* y, std::size_t n_symbols, float* llr)
{
    Impl& m = *d_impl;
    const Dims& d = m.dims;
    const std::size_t nsc = d.num_subcarriers;
    // A range's symbols go through one slot's buffers: at most `fit` subcarriers.
    const std::size_t fit = n_symbols > 0 ? m.chunk_symbols * nsc / n_symbols : 0;
    const bool pipelined = m.sphere() && m.precision == Precision::fp32 && fit > 0 &&
                           std::isfinite(n0) && n0 >= 0.0f && h && y && llr &&
                           is_pinned(h) && is_pinned(y) && is_pinned(llr);
    /* Only where the LLRs outweigh H and y: there the download bounds the call, and
     * starting it early pays. Where the upload bounds it (QPSK on 4x4), H going up alone
     * first at the full one-way rate measured faster (docs/performance.md). */
    const bool download_bound =
        n_symbols * d.llr_items() * sizeof(float) >
        (d.channel_items() + n_symbols * d.rx_items()) * sizeof(cf32);
    if (!pipelined || !download_bound) { // (bad N0, pageable buffers: the two calls)
        Detector::detect_with_channel(h, n0, y, n_symbols, llr);
        return;
    }
    retire_channel();
    ++m.stats.channels;
    m.has_channel = true;
    m.channel_stream_used = true;
    m.new_channel(m.d_h, n0);
    /* Ranges of subcarriers: their H and symbols go up in order on one stream (the
     * channel stream, idle here), each range's preparation, search and LLR download on
     * the next slot's stream. Uploads wait only for the search that last read the
     * slot's d_y, never for a download, so that the copy engines move one range's LLRs
     * down while later ranges go up, and the first search starts after 1/kRanges of the
     * channel instead of all of it. Ranges under kMinRange subcarriers would pay more
     * in launches and copy setup than they overlap. */
    constexpr std::size_t kRanges = 16, kMinRange = 2048;
    const std::size_t range =
        std::min(fit, std::max(kMinRange, (nsc + kRanges - 1) / kRanges));
    const std::size_t h_sc = d.num_antennas * d.num_users; // items of H per subcarrier
    const std::size_t y_sc = d.num_antennas, llr_sc = d.llr_items() / nsc;
    cudaStream_t up = m.channel_stream;
    std::size_t used = 0;
    for (std::size_t first = 0, k = 0; first < nsc; first += range, ++k) {
        const std::size_t count = std::min(range, nsc - first);
        auto& s = m.slots[k % m.slots.size()];
        if (k >= m.slots.size()) // the slot's last search has read its d_y
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(up, s.consumed, 0));
        used = std::max(used, k % m.slots.size() + 1);
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(m.d_h + first * h_sc,
                                           h + first * h_sc,
                                           count * h_sc * sizeof(cf32),
                                           cudaMemcpyHostToDevice,
                                           up));
        copy_rows_async(s.d_y,
                        count * y_sc * sizeof(cf32),
                        y + first * y_sc,
                        m.y_stride * sizeof(cf32),
                        count * y_sc * sizeof(cf32),
                        n_symbols,
                        cudaMemcpyHostToDevice,
                        up);
        MIMODET_CUDA_CHECK(cudaEventRecord(s.uploaded, up));
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(s.stream, s.uploaded, 0));
        launch_prepare_sphere(m.sphere_prepare_args(m.d_h, first, count), s.stream);
        m.detect_sphere_range(s.d_y, n_symbols, first, count, s.d_llr, nullptr, s.stream);
        MIMODET_CUDA_CHECK(cudaEventRecord(s.consumed, s.stream));
        copy_rows_async(llr + first * llr_sc,
                        m.llr_stride * sizeof(float),
                        s.d_llr,
                        count * llr_sc * sizeof(float),
                        count * llr_sc * sizeof(float),
                        n_symbols,
                        cudaMemcpyDeviceToHost,
                        s.stream);
        MIMODET_CUDA_CHECK(cudaEventRecord(s.done, s.stream));
    }
    // The channel's status and the call's erasures come back once every range has run.
    cudaStream_t cs = up;
    m.queue_results_download(
        cs, used, m.h_status, m.d_status, m.h_unusable, m.d_unusable, nsc);
    MIMODET_CUDA_CHECK(cudaEventRecord(m.status_ready, cs));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.channel_ready, cs));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.last_use, cs));
    m.a_formed = true;
    m.symbols_on_channel = n_symbols;
    m.status_pending = true;
    MIMODET_CUDA_CHECK(cudaStreamSynchronize(cs));
    m.channel_stream_used = false;
    m.fold_channel_status();
    m.stats.bad_sample_vectors += *m.h_bad_samples;
    m.stats.symbols += n_symbols;
}

bool CudaDetector::submit_frames(const ChannelFrame* frames,
                                 std::size_t n_frames,
                                 const cf32* y,
                                 void* llr,
                                 LlrFormat format,
                                 float int8_scale)
{
    Impl& m = *d_impl;
    const Dims& d = m.dims;
    const std::size_t nsc = d.num_subcarriers, u = d.num_users;
    // int8 and fp16 LLRs rounded on the device as submit_llrs rounds them (a bad int8
    // scale takes the default, whose submit_llrs names it).
    const bool narrow = format != LlrFormat::float32;
    const bool format_ok = format == LlrFormat::float32 || format == LlrFormat::fp16 ||
                           (int8_scale > 0.0f && std::isfinite(int8_scale));
    bool fast = m.sphere() && m.precision == Precision::fp32 && format_ok &&
                n_frames >= 2 && n_frames < (std::size_t(1) << 30) && frames && y &&
                llr && m.y_stride == d.rx_items() && m.llr_stride == d.llr_items() &&
                is_pinned(y) && is_pinned(llr);
    std::size_t total = 0;
    for (std::size_t f = 0; fast && f < n_frames; ++f) {
        const ChannelFrame& c = frames[f];
        fast = c.h && std::isfinite(c.n0) && c.n0 >= 0.0f && c.n_symbols > 0;
        total += c.n_symbols;
    }
    if (!fast) // (bad N0 erases its frame through set_channel's rules)
        return Detector::submit_frames(frames, n_frames, y, llr, format, int8_scale);

    retire_channel(); // (the batch's last channel replaces the state in force)
    m.ensure_batch(n_frames, total, narrow);
    if (!m.gather_team) {
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        m.gather_team = std::make_unique<WorkerTeam>(
            m.config.num_threads > 0 ? static_cast<std::size_t>(m.config.num_threads)
                                     : std::min(4u, cores));
    }
    Impl::FrameBatch& b = m.batch;
    const std::size_t chan = d.channel_items(), rx = d.rx_items(), li = d.llr_items();
    const std::size_t stride = n_frames * nsc; // of the batch's r and qh
    const std::size_t llr_size = llr_bytes(format);
    std::size_t channels = 0;
    for (std::size_t f = 0, t = 0; f < n_frames; ++f) {
        b.h_n0[f] = frames[f].n0;
        for (std::size_t i = 0; i < frames[f].n_symbols; ++i)
            b.h_frame[t++] = static_cast<int>(f);
        // (as the default: a frame that continues sets no channel, unless none is)
        b.counted[f] = !frames[f].continues || (f == 0 && !m.has_channel);
        channels += b.counted[f] ? 1 : 0;
    }
    cudaStream_t up = m.channel_stream;
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(
        b.d_frame, b.h_frame, total * sizeof(int), cudaMemcpyHostToDevice, up));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(
        b.d_n0, b.h_n0, n_frames * sizeof(float), cudaMemcpyHostToDevice, up));

    SphereDetectArgs a{};
    a.num_subcarriers = static_cast<int>(nsc);
    a.num_antennas = static_cast<int>(d.num_antennas);
    a.num_users = static_cast<int>(u);
    a.full_levels = static_cast<int>(m.config.effective_full_levels());
    a.list_paths = m.mode == KernelMode::sfsd
                       ? static_cast<int>(m.config.effective_list_paths())
                       : 0;
    a.r = b.d_r;
    a.qh = b.d_qh;
    a.order = b.d_order;
    a.floor = b.d_floor;
    a.status = b.d_status;
    a.state_stride = stride;
    a.frame_n0 = b.d_n0;
    a.llr_sign = m.config.llr_sign == LlrSign::positive_means_one ? 1.0f : -1.0f;
    a.llr_clip = m.config.llr_clip > 0.0f ? m.config.llr_clip : INFINITY;
    a.bad_sample_count = m.d_bad_samples;
    a.points = m.sphere_points;

    /* Pieces of whole frames, each on the next slot's stream: its H and symbols go up
     * in order on the channel stream, then its channels' preparation, its search and its
     * LLRs' download, so that one piece's LLRs come down while later pieces go up and
     * the CPU gathers the next piece's H into pinned memory. */
    constexpr std::size_t kPieces = 8;
    const std::size_t per_piece = (n_frames + kPieces - 1) / kPieces;
    std::size_t used = 0, t0 = 0;
    for (std::size_t f0 = 0, k = 0; f0 < n_frames; f0 += per_piece, ++k) {
        const std::size_t f1 = std::min(n_frames, f0 + per_piece);
        std::size_t t1 = t0;
        gather_channels(frames + f0,
                        f1 - f0,
                        chan,
                        reinterpret_cast<cf32*>(b.h_h) + f0 * chan,
                        *m.gather_team);
        for (std::size_t f = f0; f < f1; ++f)
            t1 += frames[f].n_symbols;
        auto& s = m.slots[k % m.slots.size()];
        used = std::max(used, k % m.slots.size() + 1);
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(b.d_h + f0 * chan,
                                           b.h_h + f0 * chan,
                                           (f1 - f0) * chan * sizeof(cf32),
                                           cudaMemcpyHostToDevice,
                                           up));
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(b.d_y + t0 * rx,
                                           y + t0 * rx,
                                           (t1 - t0) * rx * sizeof(cf32),
                                           cudaMemcpyHostToDevice,
                                           up));
        MIMODET_CUDA_CHECK(cudaEventRecord(s.uploaded, up));
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(s.stream, s.uploaded, 0));
        SpherePrepareArgs p{};
        p.h = b.d_h + f0 * chan;
        p.num_subcarriers = static_cast<int>((f1 - f0) * nsc);
        p.num_antennas = a.num_antennas;
        p.num_users = a.num_users;
        p.full_levels = a.full_levels;
        p.r = b.d_r + f0 * nsc;
        p.qh = b.d_qh + f0 * nsc;
        p.order = b.d_order + f0 * nsc * u;
        p.floor = b.d_floor + f0 * nsc;
        p.status = b.d_status + f0 * nsc;
        p.unusable = b.d_unusable + f0 * nsc;
        p.state_stride = stride;
        launch_prepare_sphere(p, s.stream);
        SphereDetectArgs piece = a;
        piece.y = b.d_y + t0 * rx;
        piece.num_symbols = t1 - t0;
        piece.frame_of_symbol = b.d_frame + t0;
        piece.llr = b.d_llr + t0 * li;
        launch_detect_sphere(piece, s.stream);
        const std::size_t n_llr = (t1 - t0) * li, offset = t0 * li * llr_size;
        if (narrow)
            llrs_to_narrow(piece.llr,
                           n_llr,
                           format,
                           int8_scale,
                           static_cast<char*>(b.d_llr_narrow) + offset,
                           s.stream);
        MIMODET_CUDA_CHECK(
            cudaMemcpyAsync(static_cast<char*>(llr) + offset,
                            narrow ? static_cast<const char*>(b.d_llr_narrow) + offset
                                   : reinterpret_cast<const char*>(piece.llr),
                            n_llr * llr_size,
                            cudaMemcpyDeviceToHost,
                            s.stream));
        MIMODET_CUDA_CHECK(cudaEventRecord(s.done, s.stream));
        t0 = t1;
    }
    // Once every piece has run: the channels' status and the erasures come back, and the
    // last frame's state becomes the channel in force.
    cudaStream_t cs = up;
    m.queue_results_download(
        cs, used, b.h_status, b.d_status, b.h_unusable, b.d_unusable, stride);
    const std::size_t last = n_frames - 1, ant = d.num_antennas;
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(
        m.d_h, b.d_h + last * chan, chan * sizeof(cf32), cudaMemcpyDeviceToDevice, cs));
    MIMODET_CUDA_CHECK(cudaMemcpy2DAsync(m.d_a,
                                         nsc * sizeof(float2),
                                         b.d_r + last * nsc,
                                         stride * sizeof(float2),
                                         nsc * sizeof(float2),
                                         u * u,
                                         cudaMemcpyDeviceToDevice,
                                         cs));
    MIMODET_CUDA_CHECK(cudaMemcpy2DAsync(m.d_qh,
                                         nsc * sizeof(float2),
                                         b.d_qh + last * nsc,
                                         stride * sizeof(float2),
                                         nsc * sizeof(float2),
                                         u * ant,
                                         cudaMemcpyDeviceToDevice,
                                         cs));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(
        m.d_order, b.d_order + last * nsc * u, nsc * u, cudaMemcpyDeviceToDevice, cs));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(m.d_floor,
                                       b.d_floor + last * nsc,
                                       nsc * sizeof(float),
                                       cudaMemcpyDeviceToDevice,
                                       cs));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(
        m.d_status, b.d_status + last * nsc, nsc, cudaMemcpyDeviceToDevice, cs));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(
        m.d_unusable, b.d_unusable + last * nsc, nsc, cudaMemcpyDeviceToDevice, cs));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.channel_ready, cs));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.last_use, cs));
    MIMODET_CUDA_CHECK(cudaEventRecord(b.done, cs));
    m.stats.channels += channels;
    m.has_channel = true;
    m.channel_stream_used = true;
    m.new_channel(m.d_h, frames[last].n0);
    m.a_formed = true;
    m.symbols_on_channel = frames[last].n_symbols;
    b.frames = n_frames;
    b.symbols = total;
    b.pending = true;
    return true;
}

void CudaDetector::set_channel_device(const cf32* d_h, float n0, void* stream)
{
    Impl& m = *d_impl;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    if (!std::isfinite(n0) || n0 < 0.0f)
        throw std::invalid_argument("set_channel_device: N0 must be finite and >= 0");
    // A host channel's preparation and status copy may still be queued: they write the
    // channel state that this one's first detect call will.
    if (m.channel_stream_used) {
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(m.channel_stream));
        m.fold_channel_status();
        m.channel_stream_used = false;
    }
    ++m.stats.channels;
    m.has_channel = true;
    // The caller keeps H alive; the first detect call prepares it (see Impl::a_formed).
    m.new_channel(reinterpret_cast<const float2*>(d_h), n0);
    MIMODET_CUDA_CHECK(cudaEventRecord(m.channel_ready, m.stream_or_default(stream)));
}

void CudaDetector::detect_device(
    const cf32* d_y, std::size_t n_symbols, float* d_llr, cf32* d_x_hat, void* stream)
{
    Impl& m = *d_impl;
    if (!m.has_channel)
        throw std::logic_error(name() + ": detect_device() called before set_channel()");
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    cudaStream_t s = m.stream_or_default(stream);
    MIMODET_CUDA_CHECK(cudaStreamWaitEvent(s, m.last_use, 0));
    m.equalize(reinterpret_cast<const float2*>(d_y),
               n_symbols,
               d_llr,
               reinterpret_cast<float2*>(d_x_hat),
               s,
               GraphKey{},
               [](cudaStream_t) {});
    MIMODET_CUDA_CHECK(cudaEventRecord(m.last_use, s));
    m.stats.symbols += n_symbols;
}

void CudaDetector::detect_frames_device(const cf32* d_h,
                                        const float* frame_n0,
                                        std::size_t frame_subcarriers,
                                        std::size_t frames,
                                        const cf32* d_y,
                                        std::size_t n_symbols,
                                        float* d_llr,
                                        cf32* d_x_hat,
                                        void* stream)
{
    Impl& m = *d_impl;
    const std::size_t nsc = m.dims.num_subcarriers;
    if (m.sphere() || m.box())
        throw std::invalid_argument(name() + ": detect_frames_device is for chol, cg, cr "
                                             "and zf");
    if (!fused_supported(n_symbols))
        throw std::invalid_argument("detect_frames_device: 1 to 64 symbols a call (got " +
                                    std::to_string(n_symbols) + ")");
    if (frame_subcarriers == 0 || frames > nsc / frame_subcarriers)
        throw std::invalid_argument("detect_frames_device: " + std::to_string(frames) +
                                    " frames of " + std::to_string(frame_subcarriers) +
                                    " subcarriers do not fit the detector's " +
                                    std::to_string(nsc));
    if (!d_h || !d_y || !d_llr || !frame_n0)
        throw std::invalid_argument("detect_frames_device: null H, N0, y or LLRs");
    std::size_t active = 0;
    for (std::size_t f = 0; f < frames; ++f) {
        if (std::isnan(frame_n0[f]))
            continue;
        if (!std::isfinite(frame_n0[f]) || frame_n0[f] < 0.0f)
            throw std::invalid_argument("detect_frames_device: N0 of frame " +
                                        std::to_string(f) +
                                        " must be finite and >= 0 (or NaN: skipped)");
        ++active;
    }
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    if (m.channel_stream_used) { // as set_channel_device
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(m.channel_stream));
        m.fold_channel_status();
        m.channel_stream_used = false;
    }
    const std::size_t slots = nsc / frame_subcarriers;
    if (!m.d_frame_n0) {
        m.d_frame_n0 = device_alloc<float>(slots);
        m.h_frame_n0 = pinned_alloc<float>(slots);
        MIMODET_CUDA_CHECK(
            cudaEventCreateWithFlags(&m.frame_n0_sent, cudaEventDisableTiming));
        MIMODET_CUDA_CHECK(cudaEventRecord(m.frame_n0_sent, m.slots.front().stream));
    }
    cudaStream_t s = m.stream_or_default(stream);
    // The last call's copy has read the staging; its work and any other use of the
    // channel state are done before this launch writes it.
    MIMODET_CUDA_CHECK(cudaEventSynchronize(m.frame_n0_sent));
    std::copy(frame_n0, frame_n0 + frames, m.h_frame_n0);
    MIMODET_CUDA_CHECK(cudaStreamWaitEvent(s, m.last_use, 0));
    MIMODET_CUDA_CHECK(cudaStreamWaitEvent(s, m.channel_ready, 0));
    if (frames)
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(m.d_frame_n0,
                                           m.h_frame_n0,
                                           frames * sizeof(float),
                                           cudaMemcpyHostToDevice,
                                           s));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.frame_n0_sent, s));
    m.stats.channels += active;
    m.has_channel = true;
    m.new_channel(reinterpret_cast<const float2*>(d_h), 0.0f);
    const int count = static_cast<int>(frames * frame_subcarriers);
    EqualizeArgs a = m.equalize_args(reinterpret_cast<const float2*>(d_y),
                                     n_symbols,
                                     d_llr,
                                     reinterpret_cast<float2*>(d_x_hat),
                                     false);
    a.num_subcarriers = count;
    a.row_subcarriers = nsc;
    a.frame_n0 = m.d_frame_n0;
    a.frame_subcarriers = static_cast<int>(frame_subcarriers);
    PrepareArgs prep = m.prepare_args(m.channel, 0.0f);
    prep.num_subcarriers = count;
    prep.counts = m.d_channel_counts;
    prep.frame_n0 = m.d_frame_n0;
    prep.frame_subcarriers = static_cast<int>(frame_subcarriers);
    launch_equalize_fused(a, prep, s);
    MIMODET_CUDA_CHECK(cudaEventRecord(m.channel_ready, s));
    MIMODET_CUDA_CHECK(cudaEventRecord(m.last_use, s));
    m.a_formed = true;
    m.symbols_on_channel = n_symbols;
    m.frames_channel = true;
    m.stats.symbols += n_symbols * active;
}

void CudaDetector::set_channel_device_encoded(const void* d_codes,
                                              float h_scale,
                                              float n0,
                                              void* stream)
{
    Impl& m = *d_impl;
    if (m.precision == Precision::fp32)
        throw std::invalid_argument(
            "set_channel_device_encoded: the detector's precision is fp32 (no codes)");
    if (!d_codes || !(h_scale > 0.0f) || !std::isfinite(h_scale))
        throw std::invalid_argument(
            "set_channel_device_encoded: needs codes and a scale > 0 and finite");
    set_channel_device(nullptr, n0, stream);
    m.channel = m.d_h; // the float H of the paths that need it, decoded when they do
    m.channel_codes = d_codes;
    m.channel_scale = h_scale;
    m.h_decoded = false;
}

void CudaDetector::detect_device_encoded(const void* d_codes,
                                         const float* d_scales,
                                         std::size_t n_symbols,
                                         float* d_llr,
                                         cf32* d_x_hat,
                                         void* stream)
{
    Impl& m = *d_impl;
    if (!m.has_channel)
        throw std::logic_error(name() + ": detect_device_encoded() called before set_channel()");
    if (m.precision == Precision::fp32)
        throw std::invalid_argument(
            "detect_device_encoded: the detector's precision is fp32 (no codes)");
    if (n_symbols > 0 && (!d_codes || !d_scales || !d_llr))
        throw std::invalid_argument("detect_device_encoded: null codes, scales or LLRs");
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    cudaStream_t s = m.stream_or_default(stream);
    MIMODET_CUDA_CHECK(cudaStreamWaitEvent(s, m.last_use, 0));
    // a float copy of y for the paths that do not read codes (grown, never shrunk)
    if (m.y_scratch_symbols < n_symbols) {
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(s));
        cudaFree(m.d_y_scratch);
        m.d_y_scratch = nullptr;
        m.y_scratch_symbols = 0;
        m.d_y_scratch = device_alloc<float2>(n_symbols * m.dims.rx_items());
        m.y_scratch_symbols = n_symbols;
    }
    m.equalize(m.d_y_scratch,
               n_symbols,
               d_llr,
               reinterpret_cast<float2*>(d_x_hat),
               s,
               GraphKey{},
               [](cudaStream_t) {},
               d_codes,
               d_scales);
    MIMODET_CUDA_CHECK(cudaEventRecord(m.last_use, s));
    m.stats.symbols += n_symbols;
}

void CudaDetector::detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat)
{
    Impl& m = *d_impl;
    if (!m.has_channel)
        throw std::logic_error(name() + ": detect() called before set_channel()");
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    // Pinned caller buffers are read and written by DMA directly; others go through the
    // slots' pinned staging (a host copy each way).
    const bool direct =
        is_pinned(y) && is_pinned(llr) && (x_hat == nullptr || is_pinned(x_hat));
    enqueue(y, nullptr, n_symbols, llr, x_hat, direct);
    drain();
}

void CudaDetector::detect_int8(const cf32* y,
                               std::size_t n_symbols,
                               std::int8_t* llr,
                               float scale)
{
    detect_narrow(y, n_symbols, llr, LlrFormat::int8, scale, "detect_int8", false);
}

void CudaDetector::detect_fp16(const cf32* y, std::size_t n_symbols, std::uint16_t* llr)
{
    detect_narrow(y, n_symbols, llr, LlrFormat::fp16, 0.0f, "detect_fp16", false);
}

bool CudaDetector::detect_narrow(const cf32* y,
                                 std::size_t n_symbols,
                                 void* llr,
                                 LlrFormat format,
                                 float scale,
                                 const char* call,
                                 bool queue)
{
    Impl& m = *d_impl;
    if (format == LlrFormat::int8 && (!(scale > 0.0f) || !std::isfinite(scale)))
        throw std::invalid_argument(name() + ": " + call +
                                    " scale must be > 0 and finite, got " +
                                    std::to_string(scale));
    if (!m.has_channel)
        throw std::logic_error(name() + ": " + call + "() called before set_channel()");
    if (n_symbols > 0 && (!y || !llr))
        throw std::invalid_argument(name() + ": " + call + " needs y and LLRs");
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    m.ensure_narrow_buffers();
    const bool direct = is_pinned(y) && is_pinned(llr);
    enqueue(y, nullptr, n_symbols, nullptr, nullptr, direct, llr, format, scale);
    if (queue && direct) { // in flight until complete(), as submit()
        m.submitted = true;
        return true;
    }
    drain(); // staged copies need the host: at once
    return false;
}

void CudaDetector::detect_encoded(const void* y_codes,
                                  const float* y_scales,
                                  std::size_t n_symbols,
                                  float* llr,
                                  cf32* x_hat)
{
    Impl& m = *d_impl;
    if (!m.has_channel)
        throw std::logic_error(name() + ": detect_encoded() called before set_channel()");
    if (n_symbols > 0 && (!y_codes || !y_scales || !llr))
        throw std::invalid_argument(name() + ": detect_encoded needs codes, scales and LLRs");
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    m.ensure_code_buffers();
    const bool direct =
        is_pinned(y_codes) && is_pinned(llr) && (x_hat == nullptr || is_pinned(x_hat));
    enqueue(y_codes, y_scales, n_symbols, llr, x_hat, direct);
    drain();
}

bool CudaDetector::submit(const cf32* y, std::size_t n_symbols, float* llr)
{
    Impl& m = *d_impl;
    if (!m.has_channel)
        throw std::logic_error(name() + ": submit() called before set_channel()");
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    complete();
    if (!(is_pinned(y) && is_pinned(llr))) { // staged copies need the host: at once
        enqueue(y, nullptr, n_symbols, llr, nullptr, false);
        drain();
        return false;
    }
    enqueue(y, nullptr, n_symbols, llr, nullptr, true);
    d_impl->submitted = true;
    return true;
}

bool CudaDetector::submit_llrs(
    const cf32* y, std::size_t n_symbols, void* llr, LlrFormat format, float int8_scale)
{
    if (format == LlrFormat::float32)
        return submit(y, n_symbols, static_cast<float*>(llr));
    return detect_narrow(y,
                         n_symbols,
                         llr,
                         format,
                         int8_scale,
                         format == LlrFormat::int8 ? "submit_llrs(int8)" : "submit_llrs(fp16)",
                         true);
}

void CudaDetector::complete()
{
    Impl::FrameBatch& b = d_impl->batch;
    if (b.pending) { // a submit_frames batch: its LLRs landed, its channels counted
        Impl& m = *d_impl;
        MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
        b.pending = false;
        MIMODET_CUDA_CHECK(cudaEventSynchronize(b.done));
        m.channel_stream_used = false;
        const std::size_t nsc = m.dims.num_subcarriers;
        for (std::size_t f = 0; f < b.frames; ++f) {
            if (!b.counted[f])
                continue;
            for (std::size_t sc = f * nsc; sc < (f + 1) * nsc; ++sc) {
                m.stats.bad_channel_subcarriers += (b.h_status[sc] & kStatusBad) ? 1 : 0;
                m.stats.regularized_subcarriers +=
                    (b.h_status[sc] & kStatusRegularized) ? 1 : 0;
                m.stats.unusable_user_channels += b.h_unusable[sc];
            }
        }
        m.stats.bad_sample_vectors += *m.h_bad_samples;
        m.stats.symbols += b.symbols;
    }
    if (!d_impl->submitted)
        return;
    MIMODET_CUDA_CHECK(cudaSetDevice(d_impl->options.device));
    d_impl->submitted = false;
    drain();
}

void CudaDetector::enqueue(const void* y,
                           const float* y_scales,
                           std::size_t n_symbols,
                           float* llr,
                           cf32* x_hat,
                           bool direct,
                           void* narrow,
                           LlrFormat narrow_format,
                           float int8_scale)
{
    Impl& m = *d_impl;
    const Dims& d = m.dims;
    // A previous call that threw may have left chunks in flight: drain them, discard
    // them.
    for (auto& s : m.slots)
        if (s.busy) {
            cudaStreamSynchronize(s.stream);
            s.busy = false;
        }
    m.enqueued_symbols = n_symbols;
    m.enqueued_llr = llr;
    // (narrow LLRs: 1 or 2 bytes each, rounded on the device before the download)
    const std::size_t narrow_bytes = narrow ? llr_bytes(narrow_format) : 0;
    m.enqueued_narrow = narrow;
    m.enqueued_narrow_bytes = narrow_bytes;
    m.enqueued_x_hat = x_hat;
    m.enqueued_direct = direct;
    std::size_t next_slot = 0;
    for (std::size_t first = 0; first < n_symbols; first += m.chunk_symbols) {
        const std::size_t count = std::min(m.chunk_symbols, n_symbols - first);
        auto& s = m.slots[next_slot];
        next_slot = (next_slot + 1) % m.slots.size();
        // A direct chunk reuses its slot's device buffers in its stream's order: no wait.
        if (s.busy && !direct)
            m.finish_slot(s, llr, x_hat, narrow, narrow_bytes);
        // Row sizes on the device (dense) and row pitches in the caller's buffers.
        // (encoded: codes of 2 code_bytes per complex value, in the caller's row strides)
        const bool encoded = y_scales != nullptr;
        const std::size_t item_bytes = encoded ? 2 * m.code_bytes : sizeof(cf32);
        const std::size_t y_row = d.rx_items() * item_bytes;
        const std::size_t llr_size = narrow ? narrow_bytes : sizeof(float);
        const std::size_t llr_row = d.llr_items() * llr_size;
        const std::size_t x_row = d.symbol_items() * sizeof(cf32);
        const char* y_rows = static_cast<const char*>(y) + first * m.y_stride * item_bytes;
        void* y_dst = encoded ? s.d_y_codes : static_cast<void*>(s.d_y);
        if (direct) {
            copy_rows_async(y_dst,
                            y_row,
                            y_rows,
                            m.y_stride * item_bytes,
                            y_row,
                            count,
                            cudaMemcpyHostToDevice,
                            s.stream);
        } else {
            copy_rows(s.h_y, y_row, y_rows, m.y_stride * item_bytes, y_row, count);
            MIMODET_CUDA_CHECK(cudaMemcpyAsync(
                y_dst, s.h_y, count * y_row, cudaMemcpyHostToDevice, s.stream));
        }
        if (encoded) { // (the caller's scales stay valid until drain() returns)
            MIMODET_CUDA_CHECK(cudaMemcpyAsync(s.d_y_scales,
                                               y_scales + first,
                                               count * sizeof(float),
                                               cudaMemcpyHostToDevice,
                                               s.stream));
        } else { // narrow storage of float input: rounded as the emulation rounds it
            quantize_blocks(
                reinterpret_cast<cf32*>(s.d_y), d.rx_items(), count, m.precision, s.stream);
        }
        // The downloads: straight into the caller's rows, or into the slot's staging.
        void* llr_dst =
            direct ? (narrow ? static_cast<void*>(static_cast<char*>(narrow) +
                                                  first * m.llr_stride * narrow_bytes)
                             : static_cast<void*>(llr + first * m.llr_stride))
                   : (narrow ? s.h_llr_narrow : static_cast<void*>(s.h_llr));
        const std::size_t llr_pitch = direct ? m.llr_stride * llr_size : llr_row;
        void* x_dst = !x_hat ? nullptr
                      : direct ? static_cast<void*>(x_hat + first * m.x_hat_stride)
                               : static_cast<void*>(s.h_x_hat);
        const std::size_t x_pitch = direct ? m.x_hat_stride * sizeof(cf32) : x_row;
        GraphKey outputs;
        outputs.add(llr_dst)
            .add(llr_pitch)
            .add(x_dst)
            .add(x_pitch)
            .add(count)
            .add(narrow_bytes)
            .add(static_cast<int>(narrow_format))
            .add(int8_scale);
        m.equalize(s.d_y,
                   count,
                   s.d_llr,
                   x_hat ? s.d_x_hat : nullptr,
                   s.stream,
                   outputs,
                   [&](cudaStream_t stream) {
                       if (narrow)
                           llrs_to_narrow(s.d_llr,
                                          count * d.llr_items(),
                                          narrow_format,
                                          int8_scale,
                                          s.d_llr_narrow,
                                          stream);
                       copy_rows_async(llr_dst,
                                       llr_pitch,
                                       narrow ? static_cast<const void*>(s.d_llr_narrow)
                                              : static_cast<const void*>(s.d_llr),
                                       llr_row,
                                       llr_row,
                                       count,
                                       cudaMemcpyDeviceToHost,
                                       stream);
                       if (x_dst)
                           copy_rows_async(x_dst,
                                           x_pitch,
                                           s.d_x_hat,
                                           x_row,
                                           x_row,
                                           count,
                                           cudaMemcpyDeviceToHost,
                                           stream);
                   },
                   encoded ? s.d_y_codes : nullptr,
                   encoded ? s.d_y_scales : nullptr);
        MIMODET_CUDA_CHECK(cudaEventRecord(s.done, s.stream));
        s.first = first;
        s.count = count;
        s.busy = true;
    }
    // The erasure count of the call comes back behind its last chunk once every chunk
    // has run, so that the drain below waits for it too (no round trip of its own).
    auto& last = m.slots[(next_slot + m.slots.size() - 1) % m.slots.size()];
    const bool any_chunk = last.busy;
    cudaStream_t count_stream = any_chunk ? last.stream : m.slots.front().stream;
    for (auto& s : m.slots)
        if (s.busy && &s != &last)
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(count_stream, s.done, 0));
    MIMODET_CUDA_CHECK(cudaMemcpyAsync(m.h_bad_samples,
                                       m.d_bad_samples,
                                       sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost,
                                       count_stream));
    MIMODET_CUDA_CHECK(
        cudaMemsetAsync(m.d_bad_samples, 0, sizeof(unsigned long long), count_stream));
    if (any_chunk)
        MIMODET_CUDA_CHECK(cudaEventRecord(last.done, count_stream));
    m.next_slot = next_slot;
    m.count_stream = count_stream;
}

void CudaDetector::drain()
{
    Impl& m = *d_impl;
    const bool direct = m.enqueued_direct;
    float* llr = direct ? nullptr : m.enqueued_llr;
    void* narrow = direct ? nullptr : m.enqueued_narrow;
    cf32* x_hat = direct ? nullptr : m.enqueued_x_hat;
    // In submission order.
    bool any_chunk = false;
    for (std::size_t k = 0; k < m.slots.size(); ++k) {
        auto& s = m.slots[(m.next_slot + k) % m.slots.size()];
        if (s.busy) {
            any_chunk = true;
            m.finish_slot(s, llr, x_hat, narrow, m.enqueued_narrow_bytes);
        }
    }
    if (!any_chunk) // no symbols: nothing drained
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(m.count_stream));
    m.stats.bad_sample_vectors += *m.h_bad_samples;
    m.stats.symbols += m.enqueued_symbols;
    m.enqueued_symbols = 0;
}

} // namespace cuda
} // namespace mimodet
