/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Internal to the library and its tools (tests, mimodet_bench): no CUDA header here, so
 * plain C++ code can use the GPU detector. */

#ifndef INCLUDED_MIMODET_CUDA_DETECTOR_H
#define INCLUDED_MIMODET_CUDA_DETECTOR_H

#include <mimodet/detector.h>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimodet {
namespace cuda {

//! Largest system the fused kernels take: one warp holds a user per lane.
constexpr std::size_t kMaxUsers = 32;
constexpr std::size_t kMaxAntennas = 256;

//! Number of usable CUDA devices; 0 with the reason when none.
int device_count(std::string* why_not = nullptr);
//! cudaHostRegister (portable) of caller memory; false with the driver's reason.
bool register_host_memory(const void* p, std::size_t bytes, std::string* why_not);
//! Undoes register_host_memory(p); nothing when p was not registered.
void unregister_host_memory(const void* p);
//! "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)" or similar.
std::string device_description(int device);
//! Device and pinned host allocations the library has made so far in this process (all of
//! them go through device_malloc and pinned_malloc), for the steady-state tests.
std::uint64_t allocation_count();

/*! An allocation the GPU (or the page-locked host memory) could not give: the message names
 * the bytes asked for and what the device had free. backend=auto falls back to the CPU on
 * it like on any other failure to build a GPU detector. */
class OutOfMemory : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};
//! "12.5 MiB", "3.2 GiB": sizes in errors.
std::string human_bytes(double bytes);

//! Device and pinned host memory without CUDA types, for the tests and the benchmark.
//! Throw OutOfMemory when the memory is not there.
void* device_malloc(std::size_t bytes);
void device_free(void* p) noexcept;
void* pinned_malloc(std::size_t bytes);
void pinned_free(void* p) noexcept;
//! Complete on return, whatever the kind of host memory.
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);

//! RAII array in device (pinned = false) or pinned host (pinned = true) memory.
template <typename T>
class Buffer
{
public:
    Buffer(std::size_t count, bool pinned)
        : d_count(count),
          d_pinned(pinned),
          d_ptr(static_cast<T*>(pinned ? pinned_malloc(count * sizeof(T))
                                       : device_malloc(count * sizeof(T))))
    {
    }
    ~Buffer() { d_pinned ? pinned_free(d_ptr) : device_free(d_ptr); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    T* get() const { return d_ptr; }
    std::size_t size() const { return d_count; }
    std::size_t bytes() const { return d_count * sizeof(T); }

private:
    std::size_t d_count;
    bool d_pinned;
    T* d_ptr;
};

/*! Row strides of the caller's host buffers in detect(), in items per OFDM symbol (cf32
 * for y and x_hat, float for llr); 0 means the detector's own size, i.e. dense arrays.
 * A larger stride lets an engine read and write its slice of subcarriers inside the
 * buffers of a wider frame (MultiGpuDetector): symbol s of the slice starts at
 * y + s * y_row_items, and so on. set_channel() always takes a dense H.
 */
struct HostLayout {
    std::size_t y_row_items = 0;     //!< >= N_sc * B of the engine
    std::size_t llr_row_items = 0;   //!< >= N_sc * U * bits of the engine
    std::size_t x_hat_row_items = 0; //!< >= N_sc * U of the engine
};

struct EngineOptions {
    int device = 0;
    int streams = 3;                    //!< CUDA streams of the host-copy pipeline
    std::size_t chunk_bytes = 4u << 20; //!< received bytes per pipelined chunk
    HostLayout host_layout;             //!< caller row strides of detect()
    //! Device API: let the first detect call on a channel prepare it inside its equalize
    //! kernel (off: the prepare kernel, then equalize; for measurements).
    bool fuse_prepare = true;
    //! Replay a formed channel's recurring equalize launch and downloads (a chunk of the
    //! same size, buffers and channel as before) as a CUDA graph
    //! (lib/cuda/graph_cache.h).
    bool graphs = true;
};

/*! The GPU implementation of the soft-output MMSE family. Per channel (set_channel) one
 * kernel computes, per subcarrier, G, A and A^-1 by Gauss-Jordan (or keeps A for
 * CG/CR), lambda and rho, and leaves them on the device; per batch of symbols one
 * fused kernel does the equalization (H^H y as a small GEMM per subcarrier and tile of
 * symbols, then A^-1 times it or the CG/CR iterations) and the max-log demapping (see
 * lib/cuda/mmse/ and docs/architecture.md). Through the device API the first call
 * on a channel prepares it inside the equalize kernel when it can (one launch, one pass
 * over H; chol/zf with A^-1 by Gauss-Jordan), and CG/CR calls of very few
 * symbols per channel skip A and iterate from H alone. detect() on host memory
 * pipelines upload, kernels and download over several streams through pinned staging
 * buffers (or by DMA straight from and to pinned caller buffers), with the row strides of
 * EngineOptions::host_layout. Once the channel is formed, a chunk that recurs (same size,
 * buffers and channel: every chunk of a steady stream of frames) launches its equalize
 * kernel and downloads as one CUDA graph (EngineOptions::graphs).
 */
class CudaDetector : public Detector
{
public:
    CudaDetector(const DetectorConfig& config, const EngineOptions& options = {});
    ~CudaDetector() override;

    void set_channel(const cf32* h, float n0) override;
    void detect(const cf32* y,
                std::size_t n_symbols,
                float* llr,
                cf32* x_hat = nullptr) override;
    //! Sphere modes with page-locked buffers: pipelined by subcarrier range.
    void detect_with_channel(const cf32* h,
                             float n0,
                             const cf32* y,
                             std::size_t n_symbols,
                             float* llr) override;
    //! Pinned y and llr (see pin_host_memory): queues the batch and returns at once
    //! (true); otherwise detects at once (false). See Detector::submit.
    bool submit(const cf32* y, std::size_t n_symbols, float* llr) override;
    /*! Sphere modes, fp32 storage, page-locked y and llr, 2+ frames: the frames' H and
     * symbols go up in a few pieces, each piece's channels are prepared and its symbols
     * searched in one launch each, and the LLRs (float32, or int8 / fp16 rounded on the
     * device) come down, queued (true). Otherwise the calls per frame
     * (Detector::submit_frames). */
    bool submit_frames(const ChannelFrame* frames,
                       std::size_t n_frames,
                       const cf32* y,
                       void* llr,
                       LlrFormat format,
                       float int8_scale = 8.0f) override;
    void complete() override;
    /*! Narrow input (Detector::set_channel_encoded): the codes cross the host link as
     * they are and are decoded on the device. With DetectorConfig::precision other than
     * fp32, float input is rounded on the device after its upload instead, to the
     * emulation's values (docs/precision.md). */
    void set_channel_encoded(const void* h_codes, float h_scale, float n0) override;
    void detect_encoded(const void* y_codes,
                        const float* y_scales,
                        std::size_t n_symbols,
                        float* llr,
                        cf32* x_hat = nullptr) override;
    //! Detector::detect_int8: the LLRs rounded on the device, a byte each downloaded
    //! (by DMA straight into pinned caller buffers).
    void detect_int8(const cf32* y,
                     std::size_t n_symbols,
                     std::int8_t* llr,
                     float scale) override;
    //! Detector::detect_fp16: the same, two bytes each.
    void detect_fp16(const cf32* y, std::size_t n_symbols, std::uint16_t* llr) override;
    //! Detector::submit_llrs: queued when y and llr are page-locked, as submit().
    bool submit_llrs(const cf32* y,
                     std::size_t n_symbols,
                     void* llr,
                     LlrFormat format,
                     float int8_scale = 8.0f) override;
    //! Waits for the channel's preparation; false for the sphere decoders and for a
    //! device-API channel that no detect call has prepared yet.
    bool equalizer_gains(float* unbias, float* sinr) const override;
    bool has_channel() const override;
    //! Waits for the device-API calls queued so far: their channels' status and erasures
    //! are counted on the device.
    DetectorStats stats() const override;
    std::string name() const override;

    // Device-memory interface (for benchmarks and a future device-resident chain).
    // Pointers are device pointers; `stream` is a cudaStream_t (nullptr = the engine's
    // first stream).
    //! Takes the channel from a device copy of H, which must stay valid and unchanged
    //! until the next set_channel*() (the kernels read it again per symbol batch), ready
    //! once the work queued on `stream` so far is done. The first detect call prepares it
    //! (fused with its equalization when the call is one tile of symbols per subcarrier)
    //! and counts its status on the device, which stats() adds (CG/CR calls that iterate
    //! from H alone, see matrix_formed(), count none).
    void set_channel_device(const cf32* d_h, float n0, void* stream = nullptr);
    //! Equalizes and demaps n_symbols received items already on the device.
    void detect_device(const cf32* d_y,
                       std::size_t n_symbols,
                       float* d_llr,
                       cf32* d_x_hat = nullptr,
                       void* stream = nullptr);
    /*! A window of frames, each with its own channel and N0, detected by one launch (the
     * receive chain's frames; chol, cg, cr and zf; 1 to 64 symbols). The detector's
     * subcarriers are slots of `frame_subcarriers`; the first `frames` slots are
     * detected: H [frames * frame_subcarriers][B][U] at d_h (frame after frame), N0 of
     * slot f at frame_n0[f] (host memory, read before the call returns; NaN skips the
     * slot: nothing of it is written or counted), y, LLRs and x_hat in rows of all the
     * detector's subcarriers per symbol, [n][N_sc][B] and so on. Every channel is
     * prepared in the launch (fused) and counted on the device; device_gains() then
     * holds slot f's gains at its subcarriers, and whatever an earlier call left at those
     * of the slots skipped or past `frames` (not written: read only detected slots'
     * gains). H must stay valid until the work is done.
     * A detect call after it needs a new set_channel*() first. */
    void detect_frames_device(const cf32* d_h,
                              const float* frame_n0,
                              std::size_t frame_subcarriers,
                              std::size_t frames,
                              const cf32* d_y,
                              std::size_t n_symbols,
                              float* d_llr,
                              cf32* d_x_hat = nullptr,
                              void* stream = nullptr);
    /*! The device API on narrow input (DetectorConfig::precision other than fp32; the
     * codes and scales of mimodet/precision.h in device memory, kept valid as
     * set_channel_device's H). chol, cg and cr read the codes in their tiled kernels
     * (3 or more symbols a call, or a channel's first call of up to 64); the other
     * paths decode them first. Float input through the device API is read as it is
     * (not rounded). */
    void set_channel_device_encoded(const void* d_h_codes,
                                    float h_scale,
                                    float n0,
                                    void* stream = nullptr);
    void detect_device_encoded(const void* d_y_codes,
                               const float* d_y_scales,
                               std::size_t n_symbols,
                               float* d_llr,
                               cf32* d_x_hat = nullptr,
                               void* stream = nullptr);
    //! Where the channel in force's equalizer_gains() come from, in device memory:
    //! 1/lambda and the SINR [N_sc][U], the status [N_sc] (kernels.h).
    struct DeviceGains {
        const float* inv_lambda = nullptr;
        const float* sinr = nullptr;
        const std::uint8_t* status = nullptr;
    };
    /*! For the device API: the gains as the work queued so far leaves them (valid until
     * the next set_channel*() or detect call); false where equalizer_gains() would be.
     * Copied to the host, finish_gains() makes equalizer_gains()' result of them. */
    bool device_gains(DeviceGains& gains) const;
    //! What equalizer_gains() makes of the device_gains() copied to the host, in place.
    void finish_gains(float* unbias, float* sinr, const std::uint8_t* status) const;
    //! Whether the channel in force is prepared (A or A^-1 formed). After
    //! set_channel_device() not before the first detect call, and CG/CR calls of few
    //! symbols per channel leave it unformed: they iterate from H alone while that costs
    //! less (see kernels.h, matrix_free_pays). Always true after set_channel().
    bool matrix_formed() const;
    //! Waits for all work of the engine.
    void synchronize();
    //! Equalize launches (with their downloads) replayed from CUDA graphs so far.
    std::uint64_t graph_replays() const;
    int device() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d_impl;
    //! Queues upload, kernels and download of n_symbols items in chunks over the slots'
    //! streams; drain() waits for them and counts them.
    //! y_scales null: y is cf32; otherwise codes of the precision, a scale per symbol.
    //! narrow (then llr null): LLRs in narrow_format (int8 with int8_scale, or fp16),
    //! rounded on the device.
    void enqueue(const void* y,
                 const float* y_scales,
                 std::size_t n_symbols,
                 float* llr,
                 cf32* x_hat,
                 bool direct,
                 void* narrow = nullptr,
                 LlrFormat narrow_format = LlrFormat::float32,
                 float int8_scale = 0.0f);
    //! detect_int8 / detect_fp16 (queue false), submit_llrs (queue true: left in flight
    //! when the buffers are page-locked, returning true).
    bool detect_narrow(const cf32* y,
                       std::size_t n_symbols,
                       void* llr,
                       LlrFormat format,
                       float scale,
                       const char* call,
                       bool queue);
    //! set_channel (h) or set_channel_encoded (codes, scale).
    void upload_channel(const cf32* h, const void* codes, float scale, float n0);
    void drain();
    //! Before detect_with_channel or submit_frames replaces the channel in force: all
    //! work on it done and its status counted.
    void retire_channel();
};

} // namespace cuda
} // namespace mimodet

#endif
