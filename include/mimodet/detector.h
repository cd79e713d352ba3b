/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_DETECTOR_H
#define INCLUDED_MIMODET_DETECTOR_H

#include <mimodet/constellation.h>
#include <mimodet/layout.h>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mimodet {

//! The detectors: the massive-MIMO linear family, the sphere decoders (U <= 8), BOX.
enum class DetectorMode {
    chol, //!< exact MMSE: Cholesky of A = G + N0 I, exact lambda and rho (li2015 II-B)
    cg,   //!< Conjugate Gradient, I iterations, approximate lambda/rho (li2015 II-C)
    cr,   //!< Conjugate Residual (broumas2023 Fig. 4), I iterations, same approximation
    zf,   //!< zero forcing baseline: A = G, lambda = 1, rho = 1/(N0 [G^-1]_uu)
    fsd,  //!< hard fixed-complexity sphere decoder (roger2012): LLRs of magnitude 1
    sfsd, //!< soft FSD: the list extension of roger2012 section 3, max-log LLRs
    ml,   //!< exhaustive max-log over all M^U vectors (reference; CPU only)
    box   //!< box-constrained least squares by projected gradient (docs/box.md)
};

//! Where the BOX iterations start (docs/box.md).
enum class BoxStart {
    zero,  //!< x = 0
    mf,    //!< the per-user matched filter, [H^H y]_u / G_uu, clipped to the box
    lmmse  //!< the unbiased LMMSE estimate, clipped to the box
};
BoxStart parse_box_start(const std::string& name);
std::string to_string(BoxStart s);

/*! How H and y are stored for detection (castaneda PULPO Fig. 1(e); docs/precision.md):
 * each value is rounded to the format after a power-of-two scale per channel (H) and per
 * OFDM symbol (y) that puts its largest component just below the format's largest finite
 * value, so that no valid input overflows or vanishes; arithmetic stays float32. */
enum class Precision {
    fp32,     //!< as given
    fp16,     //!< IEEE binary16: 5 exponent, 10 mantissa bits
    bf16,     //!< bfloat16: 8 exponent, 7 mantissa bits
    fp8_e4m3, //!< OCP FP8 E4M3 (max 448, no infinity)
    fp8_e5m2  //!< OCP FP8 E5M2 (PULPO's binary8: 5 exponent, 2 mantissa bits)
};
//! "fp32", "fp16", "bf16", "fp8" (= "fp8_e4m3"), "fp8_e4m3", "fp8_e5m2".
Precision parse_precision(const std::string& name);
std::string to_string(Precision p);

/*! How LLRs are written (castaneda PULPO; docs/precision.md, "Narrow LLRs"): the float32
 * values, or fewer bytes for the host link and for decoders that take them. */
enum class LlrFormat {
    float32, //!< 4 bytes each, as computed
    fp16,    //!< IEEE binary16 codes (uint16): round to nearest even, saturated to +-65504
    int8     //!< round(LLR * scale) saturated to +-127: one step is 1 / scale of an LLR
};
//! "float32" (= "float", "fp32"), "fp16" (= "float16", "half"), "int8" (= "byte").
LlrFormat parse_llr_format(const std::string& name);
std::string to_string(LlrFormat f);
//! Bytes of one LLR: 4, 2 or 1.
std::size_t llr_bytes(LlrFormat f);

//! roger2012 eq. 7: T >= sqrt(n_T) - 1 fully expanded levels (at least 1).
std::size_t default_full_levels(std::size_t users);
//! SFSD N_iter: 2, 4, 6 for QPSK, 16-QAM, 64-QAM (roger2012 after [5]); 1 for BPSK and
//! 8 for 256-QAM, extrapolated.
std::size_t default_list_paths(Modulation m);

enum class Backend {
    automatic, //!< the GPU when one is usable, else the CPU (one warning)
    cpu,
    cuda
};

DetectorMode parse_detector_mode(const std::string& name);
std::string to_string(DetectorMode m);
//! The names of every detector mode, in DetectorMode's order ("chol", "cg", ...).
std::vector<std::string> detector_mode_names();
Backend parse_backend(const std::string& name);
std::string to_string(Backend b);

struct DetectorConfig {
    std::size_t num_antennas = 128;    //!< B
    std::size_t num_users = 16;        //!< U
    std::size_t num_subcarriers = 128; //!< N_sc
    Modulation modulation = Modulation::qam16;
    DetectorMode mode = DetectorMode::chol;
    unsigned iterations = 3; //!< CG/CR iterations I (ignored by chol and zf)
    //! fsd/sfsd: fully expanded tree levels T; 0 = default_full_levels(U).
    std::size_t full_levels = 0;
    //! sfsd: N_iter best paths extended (<= 16); 0 = default_list_paths(modulation).
    std::size_t list_paths = 0;
    //! box: projected-gradient iterations (>= 1).
    unsigned box_iterations = 20;
    //! box: gradient step tau; 0 = 1 / (Gershgorin bound on G's largest eigenvalue),
    //! per subcarrier. A step above 2 / lambda_max(G) diverges (then clipped to the box).
    float box_step = 0.0f;
    BoxStart box_start = BoxStart::lmmse;
    //! box: Nesterov/FISTA momentum (Beck & Teboulle 2009); off = PULPO's plain iteration.
    bool box_accelerated = true;
    //! Storage format of H and y (every mode and backend).
    Precision precision = Precision::fp32;
    LlrSign llr_sign = LlrSign::positive_means_one;
    float llr_clip = 0.0f; //!< |LLR| limit; 0: none (at most 50 on a loaded subcarrier)
    //! CPU worker threads; 0 = all cores. The GPU backend's sphere decoders use as many
    //! host threads to gather a submit_frames batch's channels (0: up to 4).
    int num_threads = 0;
    Backend backend = Backend::cpu;
    //! GPUs (CUDA device ordinals) of the GPU backend; empty means device 0. With several
    //! entries every frame's subcarriers are split into contiguous slices, one per entry,
    //! detected concurrently; an ordinal may repeat (several engines on one GPU).
    std::vector<int> devices;
    int streams = 3; //!< CUDA streams of each GPU engine's host-copy pipeline (>= 1)

    Dims dims() const
    {
        return Dims{
            num_antennas, num_users, num_subcarriers, bits_per_symbol(modulation)
        };
    }
    //! Throws std::invalid_argument with the offending value named.
    void validate() const;
    //! fsd, sfsd or ml.
    bool sphere() const
    {
        return mode == DetectorMode::fsd || mode == DetectorMode::sfsd ||
               mode == DetectorMode::ml;
    }
    std::size_t effective_full_levels() const
    {
        return full_levels ? full_levels : default_full_levels(num_users);
    }
    std::size_t effective_list_paths() const
    {
        return list_paths ? list_paths : default_list_paths(modulation);
    }
};

//! Counters of inputs the detector refused to trust; cumulative since construction.
struct DetectorStats {
    std::uint64_t channels = 0; //!< set_channel() calls
    std::uint64_t symbols = 0;  //!< OFDM symbols detected
    //! Subcarriers erased for a channel: H had NaN/Inf, was all zero, or A was unusable.
    std::uint64_t bad_channel_subcarriers = 0;
    //! (subcarrier, user) pairs erased for a channel on an otherwise usable subcarrier:
    //! the user's channel column is (numerically) zero, so nothing can be said about it.
    std::uint64_t unusable_user_channels = 0;
    //! (symbol, subcarrier) pairs erased because y had NaN/Inf.
    std::uint64_t bad_sample_vectors = 0;
    //! Subcarriers whose singular or ill-conditioned A got diagonal loading.
    std::uint64_t regularized_subcarriers = 0;
    //! set_channel() calls with N0 < 0 or not finite (every subcarrier erased).
    std::uint64_t invalid_noise_variance = 0;

    DetectorStats& operator+=(const DetectorStats& o)
    {
        channels += o.channels;
        symbols += o.symbols;
        bad_channel_subcarriers += o.bad_channel_subcarriers;
        unusable_user_channels += o.unusable_user_channels;
        bad_sample_vectors += o.bad_sample_vectors;
        regularized_subcarriers += o.regularized_subcarriers;
        invalid_noise_variance += o.invalid_noise_variance;
        return *this;
    }
};

/*! One frame of a submit_frames() batch: its channel ([N_sc][B][U], read before
 * submit_frames returns) and N0, and how many of the batch's symbols it covers.
 * `continues`: the channel already in force (the last frame's of the call before), given
 * again only so that the backend need not keep it; not counted as a new channel. */
struct ChannelFrame {
    const cf32* h = nullptr;
    float n0 = 0.0f;
    std::size_t n_symbols = 0;
    bool continues = false;
};

/*! A soft-output MIMO detector. The channel of a frame is given once (set_channel); all
 * per-channel work (Gram matrix, factorisation, equalizer, SINR) is done there and reused
 * for every symbol of the frame (detect). Subcarriers whose inputs are not finite, and
 * users whose channel is zero, produce LLR 0 (an erasure) and are counted in stats();
 * nothing else is affected.
 */
class Detector
{
public:
    virtual ~Detector() = default;

    //! h: [N_sc][B][U]; n0: noise variance per complex sample (>= 0).
    virtual void set_channel(const cf32* h, float n0) = 0;
    //! y: [n_symbols][N_sc][B] -> llr: [n_symbols][N_sc][U][bits];
    //! x_hat (optional): [n_symbols][N_sc][U], the linear estimate before bias removal.
    virtual void
    detect(const cf32* y, std::size_t n_symbols, float* llr, cf32* x_hat = nullptr) = 0;
    /*! set_channel(h, n0), then detect(y, n_symbols, llr): the same LLRs and statistics,
     * and the channel stays in force afterwards. Where the backend can (the GPU sphere
     * decoders, with page-locked h, y and llr), the channel's upload and preparation
     * overlap the symbols' copies and search, by ranges of subcarriers, instead of the
     * whole channel going up before the first symbol: for LTE's 7 symbols a channel, H
     * is a third of the input. */
    virtual void detect_with_channel(
        const cf32* h, float n0, const cf32* y, std::size_t n_symbols, float* llr)
    {
        set_channel(h, n0);
        detect(y, n_symbols, llr);
    }
    /*! detect() without waiting, where the backend can: returns true when the batch was
     * only queued; its LLRs are then written, and y may be reused, once complete() has
     * returned. Every other call of this detector (set_channel, detect, stats) waits
     * for it first. One batch at a time: a second submit() completes the first. The GPU
     * backend queues when y and llr are page-locked (pin_host_memory); otherwise, and on
     * the CPU, it is detect() (false). A GNU Radio block uses this to let the GPU work
     * on one call's items while the scheduler prepares the next call. */
    virtual bool submit(const cf32* y, std::size_t n_symbols, float* llr)
    {
        detect(y, n_symbols, llr);
        return false;
    }
    //! Waits for the batch of the last submit(), if any.
    virtual void complete() {}
    /*! submit() with LLRs in `format` at llr: float32 is submit(); int8 (with
     * int8_scale) and fp16 are rounded as detect_int8 / detect_fp16 round them. The GPU
     * backend queues when y and llr are page-locked, rounding on the device; otherwise,
     * and by default, it is detect_int8 / detect_fp16 (false). */
    virtual bool submit_llrs(const cf32* y,
                             std::size_t n_symbols,
                             void* llr,
                             LlrFormat format,
                             float int8_scale = 8.0f);

    /*! Frames that follow one another, each on its own channel (LTE: a slot of 7
     * symbols a channel): y [sum n_symbols][N_sc][B] -> llr as submit_llrs writes it,
     * frame after frame. The same LLRs and statistics as set_channel (skipped for a
     * frame that `continues`) and submit_llrs per frame, and the last frame's channel
     * stays in force. Returns true when the batch was only queued, as submit() says.
     * The GPU sphere decoders, with page-locked y and llr and float32 LLRs, send the
     * whole batch up, prepare every channel and search every symbol in a few launches
     * instead of a round trip per frame; the default is the calls per frame. */
    virtual bool submit_frames(const ChannelFrame* frames,
                               std::size_t n_frames,
                               const cf32* y,
                               void* llr,
                               LlrFormat format,
                               float int8_scale = 8.0f);

    /*! Narrow input (docs/precision.md, "Narrow input"; mimodet/precision.h makes it):
     * H as 2 N_sc B U codes of config().precision (re, im, in set_channel's order),
     * whose values are code * h_scale (h_scale > 0 and finite). The result is
     * set_channel() on those values: bit for bit, except where the GPU forms sums on the
     * tensor cores (9 to 32 users, 32+ symbols a call), which agree to float rounding
     * (docs/precision.md). The GPU backend moves the codes over the host link and reads
     * them in its kernels; the default decodes them to float32 and calls set_channel(). */
    virtual void set_channel_encoded(const void* h_codes, float h_scale, float n0);
    /*! detect() with int8 LLRs, a quarter of float32's bytes, for decoders that take
     * them: precision::llrs_to_int8 (mimodet/precision.h) of detect()'s LLRs, round(LLR
     * scale) saturated to +-127, so one step is 1 / scale of an LLR (scale > 0 and
     * finite). The GPU backend rounds on the device and downloads the int8 values; the
     * default detects, then rounds. */
    virtual void
    detect_int8(const cf32* y, std::size_t n_symbols, std::int8_t* llr, float scale);
    /*! detect() with binary16 LLRs, half of float32's bytes: precision::llrs_to_fp16 of
     * detect()'s LLRs (round to nearest even, saturated to +-65504, NaN gives 0). The GPU
     * backend rounds on the device and downloads the 2-byte codes; the default detects,
     * then rounds. */
    virtual void detect_fp16(const cf32* y, std::size_t n_symbols, std::uint16_t* llr);
    /*! y as 2 n_symbols N_sc B codes, OFDM symbol s scaled by y_scales[s] (one block
     * per symbol, as the precision's emulation rounds it): detect() on those values,
     * as exact as set_channel_encoded says. Default: decode, then detect(). */
    virtual void detect_encoded(const void* y_codes,
                                const float* y_scales,
                                std::size_t n_symbols,
                                float* llr,
                                cf32* x_hat = nullptr);

    /*! What turns detect()'s x_hat into the estimate the demapper reads, for the channel
     * in force, [N_sc][U] each: x_hat * unbias is the bias-free estimate of the sent
     * point (MMSE: 1/lambda, li2015 II-C; ZF and BOX: 1), and sinr is the post-equalizer
     * SINR its LLRs assume (linear, Es = 1: the estimate's error variance is 1/sinr).
     * Erased subcarriers and unusable users get 0 in both. False, writing nothing, when
     * there is no channel or no such estimate (the sphere decoders: x_hat is the chosen
     * point). signal_quality.h turns them into per-user SINR and EVM. */
    virtual bool equalizer_gains(float* unbias, float* sinr) const
    {
        (void)unbias;
        (void)sinr;
        return false;
    }

    virtual bool has_channel() const = 0;
    virtual DetectorStats stats() const = 0;
    //! Human-readable implementation name, e.g. "cpu-chol".
    virtual std::string name() const = 0;
    const DetectorConfig& config() const { return d_config; }

protected:
    explicit Detector(const DetectorConfig& config) : d_config(config) {}
    DetectorConfig d_config;
};

//! True when this build has a GPU backend and a GPU is usable right now.
bool gpu_available(std::string* why_not = nullptr);

/*! Page-locks [p, p + bytes) for the GPU backend (cudaHostRegister, for every device), so
 * that detect() reads y from it and writes LLRs into it by DMA instead of through its
 * staging buffers and a host copy each way. For buffers that live long and are used for
 * many calls (a GNU Radio block's stream buffers); registering costs about as much as
 * copying the range once. False, with the reason, when there is no GPU backend or the
 * driver refuses; the memory then works as before, only slower. Pair with
 * unpin_host_memory(p) before the memory is freed. */
bool pin_host_memory(const void* p, std::size_t bytes, std::string* why_not = nullptr);
void unpin_host_memory(const void* p);

/*! Builds the detector for config.backend: cpu; cuda (throws std::runtime_error naming
 * the reason when no GPU backend is usable, e.g. a listed device that does not exist);
 * automatic (the GPU if usable, else the CPU, and *fallback_reason receives why). On the
 * GPU, one entry in config.devices gives one engine; several give a detector that splits
 * the subcarriers over them.
 */
std::unique_ptr<Detector> make_detector(const DetectorConfig& config,
                                        std::string* fallback_reason = nullptr);

} // namespace mimodet

#endif
