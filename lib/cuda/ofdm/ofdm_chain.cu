/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The GPU receive chain (ofdm_chain.h). It follows OfdmReceiver (lib/core/ofdm/ofdm.cc)
 * step by step, so the two can be compared frame by frame; see docs/receive-chain.md.
 * Device layouts, per pipelined window of W samples:
 *   input   [B][W]                     float2 (sc16 arrives as short2 and is converted)
 *   metric  [W - N + 1]                Schmidl & Cox |P|^2 / (R1 R2) at every body
 * position grid    [frame][B][1 + N_data][N]  FFTs of the pilot symbol and the data
 * symbols h       [frame][N_sc][B][U],  y  [frame][N_data][N_sc][B],  llr [frame][LLR
 * layout] Positions inside a window are window-relative ints; the caller's are size_t. */

#include "cuda/cuda_check.h"
#include "cuda/cuda_detector.h"
#include "cuda/precision/quantize.h"
#include "ofdm_chain.h"
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cufft.h>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#define MIMODET_CUFFT_CHECK(call)                                                    \
    do {                                                                             \
        const cufftResult mimodet_fft_ = (call);                                     \
        if (mimodet_fft_ != CUFFT_SUCCESS)                                           \
            throw std::runtime_error(std::string("cuFFT error in ") + #call + " (" + \
                                     __FILE__ + ":" + std::to_string(__LINE__) +     \
                                     "): cufftResult " +                             \
                                     std::to_string(int(mimodet_fft_)));             \
    } while (0)

namespace mimodet {
namespace cuda {

namespace {

constexpr int kThreads = 256;        // threads of the element-wise kernels
constexpr int kTile = 1024;          // metric positions per block (and per tile summary)
constexpr int kSearchThreads = 1024; // the one block that walks the frames
constexpr int kNoCrossing = INT_MAX;

//! Prefix sums of the Schmidl & Cox terms, in float64: P and the energy of any window of
//! L positions are then one difference, without cancellation at these lengths.
struct Sums {
    double re, im, energy;
};
struct AddSums {
    __host__ __device__ Sums operator()(const Sums& a, const Sums& b) const
    {
        return { a.re + b.re, a.im + b.im, a.energy + b.energy };
    }
};
struct MinOp {
    template <typename T>
    __device__ T operator()(const T& a, const T& b) const
    {
        return b < a ? b : a;
    }
};
struct MaxOp {
    template <typename T>
    __device__ T operator()(const T& a, const T& b) const
    {
        return a < b ? b : a;
    }
};

//! A frame found by the walk, as fine timing judges it (OfdmReceiver::receive's cases).
enum FrameStatus : int {
    kFrameValid = 0,
    kFrameOverlapping = 1, //!< its body lies before the search position: not a frame
    kFrameCut = 2          //!< the end of the samples cuts it: searched again with more
};

//! What the chain learns of one frame on the device; downloaded once per window.
struct FrameMeta {
    int crossing;    //!< where the metric first reached the threshold
    int coarse;      //!< preamble body from the metric's peak
    int search_from; //!< the search position (bodies before it overlap the last frame)
    int start;       //!< preamble CP start after fine timing
    int status;      //!< FrameStatus
    int pad;
    double cfo_coarse, cfo;   //!< subcarrier spacings
    double cycles_per_sample; //!< -cfo / N: the rotation that removes the CFO
    double noise;             //!< sum of |X|^2 over the unused bins (unscaled FFT)
};

//! The frame layout and the window, as the kernels take them.
struct Geometry {
    int B, U, nsc, N, L, cp, sym, frame, nd, advance, W, n_unused;
    float scale; //!< 1/sqrt(N): cuFFT's forward transform made unitary
};

//! Key whose maximum is the largest non-negative value, ties to the smallest index
//! (OfdmReceiver keeps the first maximum).
__device__ unsigned long long argmax_key(float value, int index)
{
    return (static_cast<unsigned long long>(__float_as_uint(value)) << 32) |
           (0xffffffffu - static_cast<unsigned>(index));
}
__device__ int argmax_index(unsigned long long key)
{
    return static_cast<int>(0xffffffffu - static_cast<unsigned>(key & 0xffffffffu));
}

//! Sums of the terms over positions d .. d + L - 1: P(d) of the body starting at d and
//! the energy of its first half (that of the second half is the energy at d + L).
__device__ Sums window_sums(const Sums* cum, int d, int L)
{
    const Sums hi = cum[d + L - 1];
    if (d == 0)
        return hi;
    const Sums lo = cum[d - 1];
    return { hi.re - lo.re, hi.im - lo.im, hi.energy - lo.energy };
}

//! e^{j 2 pi cycles}, with the whole cycles taken out in float64 first (cycles grow with
//! the sample index; float32 phases would lose the fraction).
__device__ float2 rotation(double cycles)
{
    const double frac = cycles - floor(cycles);
    float s, c;
    sincospif(2.0f * static_cast<float>(frac), &s, &c);
    return make_float2(c, s);
}

__device__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ float2 cdiv(float2 a, float2 b)
{
    const float d = b.x * b.x + b.y * b.y;
    return make_float2((a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d);
}

//! The kernels read the samples as they were uploaded: sc16 is scaled as it is loaded
//! (no conversion pass, half the bytes of float).
__device__ float2 load_sample(const short2* x, long long i, float scale)
{
    const short2 v = x[i];
    return make_float2(v.x * scale, v.y * scale);
}
__device__ float2 load_sample(const float2* x, long long i, float) { return x[i]; }

//! terms[n] = sum_b conj(x_b[n]) x_b[n + L] and sum_b |x_b[n]|^2 (zero past the data).
//! A pair with a NaN/Inf sample adds nothing: in a prefix sum it would poison every
//! position after it, not only the windows that hold it.
template <typename Sample>
__global__ void sc_terms_kernel(
    const Sample* x, float scale, Geometry g, int data, int count, Sums* terms)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= count)
        return;
    Sums s{ 0.0, 0.0, 0.0 };
    for (int b = 0; b < g.B && n < data; ++b) {
        const float2 a = load_sample(x, static_cast<long long>(b) * g.W + n, scale);
        const float energy = a.x * a.x + a.y * a.y;
        if (isfinite(energy))
            s.energy += energy;
        if (n + g.L < data) {
            const float2 c =
                load_sample(x, static_cast<long long>(b) * g.W + n + g.L, scale);
            const float re = a.x * c.x + a.y * c.y, im = a.x * c.y - a.y * c.x;
            if (isfinite(re) && isfinite(im)) {
                s.re += re;
                s.im += im;
            }
        }
    }
    terms[n] = s;
}

//! The metric at every body position d < n_metric, and per tile of kTile positions the
//! first one where it reaches the detection threshold.
__global__ void __launch_bounds__(kTile)
    metric_kernel(const Sums* cum, int L, int n_metric, float* metric, int* tile_first)
{
    __shared__ int first;
    if (threadIdx.x == 0)
        first = kNoCrossing;
    __syncthreads();
    const int d = blockIdx.x * kTile + threadIdx.x;
    if (d < n_metric) {
        const Sums p = window_sums(cum, d, L); // P and the first half's energy
        const double halves = p.energy * window_sums(cum, d + L, L).energy;
        double m = halves > 0.0 ? (p.re * p.re + p.im * p.im) / halves : 0.0;
        if (!isfinite(m)) // NaN/Inf samples never make a frame
            m = 0.0;
        const float stored = static_cast<float>(m); // the search compares the same value
        metric[d] = stored;
        if (stored >= static_cast<float>(kPreambleDetectMetric))
            atomicMin(&first, d);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        tile_first[blockIdx.x] = first;
}

/*! The frames of one window, one after another as OfdmReceiver::receive finds them:
 * the first crossing at or after the search position (and before `limit`, where the next
 * window's own search begins), the metric's peak within a symbol from it (up to
 * `peak_last`, the last position the samples cover), the coarse CFO there; the next
 * search starts a frame minus a CP after the coarse position. `resume` (absolute, 0 at
 * the start of a call) carries the search position from window to window. */
__global__ void __launch_bounds__(kSearchThreads)
    search_kernel(const float* metric,
                  const int* tile_first,
                  int n_tiles,
                  const Sums* cum,
                  Geometry g,
                  long long begin,
                  int limit,
                  int peak_last,
                  int max_frames,
                  unsigned long long* resume,
                  FrameMeta* meta,
                  int* frame_count)
{
    using IntReduce = cub::BlockReduce<int, kSearchThreads>;
    using KeyReduce = cub::BlockReduce<unsigned long long, kSearchThreads>;
    __shared__ union {
        typename IntReduce::TempStorage ints;
        typename KeyReduce::TempStorage keys;
    } temp;
    __shared__ int found;
    __shared__ unsigned long long best;

    const int t = threadIdx.x;
    // The search position and the validity bound: the same after a frame; at the start
    // of a call both are cp (OfdmReceiver's first body position), and a window's search
    // never starts before its own cp.
    long long bound = static_cast<long long>(*resume);
    bound = (bound < g.cp ? g.cp : bound) - begin;
    long long pos = bound < g.cp ? g.cp : bound;
    int count = 0;
    while (count < max_frames && pos < limit) {
        const int p = static_cast<int>(pos);
        // First crossing: the rest of pos's tile directly, then the tiles' summaries.
        const int tile = p / kTile;
        const int d = p + t;
        int candidate = d < (tile + 1) * kTile && d < limit &&
                                metric[d] >= static_cast<float>(kPreambleDetectMetric)
                            ? d
                            : kNoCrossing;
        int r = IntReduce(temp.ints).Reduce(candidate, MinOp());
        if (t == 0)
            found = r;
        __syncthreads();
        for (int base = tile + 1; found == kNoCrossing && base < n_tiles;
             base += kSearchThreads) {
            candidate = base + t < n_tiles ? tile_first[base + t] : kNoCrossing;
            r = IntReduce(temp.ints).Reduce(candidate, MinOp());
            if (t == 0)
                found = r;
            __syncthreads();
        }
        const int crossing = found;
        if (crossing >= limit) // none (kNoCrossing) or the next window's
            break;
        // The peak within a symbol of the crossing.
        const int last = min(crossing + g.sym, peak_last);
        unsigned long long key = 0;
        for (int q = crossing + t; q <= last; q += kSearchThreads)
            key = max(key, argmax_key(metric[q], q));
        const unsigned long long k = KeyReduce(temp.keys).Reduce(key, MaxOp());
        if (t == 0)
            best = k;
        __syncthreads();
        const int coarse = argmax_index(best);
        if (t == 0) {
            const Sums s = window_sums(cum, coarse, g.L);
            FrameMeta& f = meta[count];
            f.crossing = crossing;
            f.coarse = coarse;
            f.search_from = static_cast<int>(bound < -1 ? -1 : bound);
            f.cfo_coarse =
                atan2(s.im, s.re) / 3.14159265358979323846; // half a body: pi cfo
        }
        ++count;
        pos = bound = coarse + g.frame - g.cp;
        __syncthreads(); // `found`, `best` and the temp storage are reused
    }
    if (t == 0) {
        *frame_count = count;
        if (count > 0)
            *resume = static_cast<unsigned long long>(begin + pos);
    }
}

/*! Fine timing, as OfdmReceiver: per frame and lag d within +-CP of the coarse position,
 * sum_b |sum_k conj(pre[k]) e^{j phi k} x_b[d + k]|^2 (phi the coarse CFO's rotation),
 * the largest (first on ties) wins. All lags at once as a correlation by FFT: z_b[n] =
 * x_b[from + n] e^{j phi n} (the rotation then moves into z, and |.| drops the
 * e^{-j phi d} left over), zero-padded to M >= 2 CP + N, so that
 * IFFT(FFT(z) conj(FFT(pre))) holds every lag's sum without wrapping around.
 * First: the segments z, one per (frame, antenna). */
template <typename Sample>
__global__ void fine_segment_kernel(const Sample* x,
                                    float scale,
                                    Geometry g,
                                    int data,
                                    int fine_size,
                                    const FrameMeta* meta,
                                    const int* frame_count,
                                    float2* segments)
{
    const int f = blockIdx.z, b = blockIdx.y;
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= *frame_count || n >= fine_size)
        return;
    const int coarse = meta[f].coarse;
    const int from = max(coarse - g.cp, 0);
    const int to = min(coarse + g.cp, data - g.N); // as far as the samples go
    float2 z = make_float2(0.0f, 0.0f);
    if (n < to - from + g.N)
        z = cmul(load_sample(x, static_cast<long long>(b) * g.W + from + n, scale),
                 rotation(-meta[f].cfo_coarse * n / g.N));
    segments[(static_cast<long long>(f) * g.B + b) * fine_size + n] = z;
}

//! FFT(z) times conj(FFT(preamble)), in place.
__global__ void correlate_kernel(float2* spectra,
                                 const float2* preamble_spectrum,
                                 int fine_size,
                                 long long count)
{
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i >= count)
        return;
    const float2 p = preamble_spectrum[i % fine_size];
    spectra[i] = cmul(spectra[i], make_float2(p.x, -p.y));
}

//! Per frame: the lag of the largest correlation energy summed over the antennas.
__global__ void __launch_bounds__(kThreads)
    fine_argmax_kernel(const float2* correlations,
                       Geometry g,
                       int data,
                       int fine_size,
                       const FrameMeta* meta,
                       const int* frame_count,
                       unsigned long long* fine_key)
{
    const int f = blockIdx.x;
    if (f >= *frame_count)
        return;
    const int coarse = meta[f].coarse;
    const int from = max(coarse - g.cp, 0);
    const int to = min(coarse + g.cp, data - g.N); // as far as the samples go
    unsigned long long key = 0;
    for (int d = threadIdx.x; d <= to - from; d += kThreads) {
        float energy = 0.0f;
        for (int b = 0; b < g.B; ++b) {
            const float2 c =
                correlations[(static_cast<long long>(f) * g.B + b) * fine_size + d];
            energy += c.x * c.x + c.y * c.y;
        }
        key = max(key, argmax_key(isfinite(energy) ? energy : 0.0f, d));
    }
    using KeyReduce = cub::BlockReduce<unsigned long long, kThreads>;
    __shared__ typename KeyReduce::TempStorage temp;
    const unsigned long long best = KeyReduce(temp).Reduce(key, MaxOp());
    if (threadIdx.x == 0)
        fine_key[f] = best;
}

//! The frame's start, status and CFO from the ISI-free window (one thread a frame).
__global__ void finalize_kernel(const Sums* cum,
                                Geometry g,
                                int last_body,
                                const int* frame_count,
                                const unsigned long long* fine_key,
                                FrameMeta* meta)
{
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= *frame_count)
        return;
    FrameMeta& m = meta[f];
    const int body = max(m.coarse - g.cp, 0) + argmax_index(fine_key[f]);
    m.status = body > last_body       ? kFrameCut
               : body < m.search_from ? kFrameOverlapping
                                      : kFrameValid;
    m.start = body - g.cp;
    m.noise = 0.0;
    m.cfo = 0.0;
    if (m.status == kFrameValid) {
        const Sums s = window_sums(cum, body - g.advance, g.L);
        m.cfo = atan2(s.im, s.re) / 3.14159265358979323846;
    }
    m.cycles_per_sample = -m.cfo / g.N;
}

//! CFO and CP removal: symbol s (0 pilot, 1.. data) of antenna b into the FFT grid.
template <typename Sample>
__global__ void gather_kernel(const Sample* x,
                              float scale,
                              Geometry g,
                              const int* frame_count,
                              const FrameMeta* meta,
                              float2* grid)
{
    const int f = blockIdx.z / g.B, b = blockIdx.z % g.B, s = blockIdx.y;
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= *frame_count || meta[f].status != kFrameValid || k >= g.N)
        return;
    const int offset = (1 + s) * g.sym + g.cp - g.advance + k; // from the frame start
    const float2 v =
        load_sample(x, static_cast<long long>(b) * g.W + meta[f].start + offset, scale);
    grid[((static_cast<long long>(f) * g.B + b) * (1 + g.nd) + s) * g.N + k] =
        cmul(v, rotation(meta[f].cycles_per_sample * offset));
}

//! Least squares on each user's comb, linear interpolation (extrapolation at the edges),
//! with the early window's ramp out and back in, as OfdmReceiver. One thread per entry.
__global__ void channel_estimate_kernel(const float2* grid,
                                        const int* bins,
                                        const float2* pilots,
                                        const float2* ramp,
                                        Geometry g,
                                        const int* frame_count,
                                        const FrameMeta* meta,
                                        float2* h)
{
    const int f = blockIdx.y; // 32-bit index arithmetic within the frame
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= g.nsc * g.B * g.U || f >= *frame_count || meta[f].status != kFrameValid)
        return;
    const int u = idx % g.U;
    const int b = (idx / g.U) % g.B;
    const int i = idx / (g.U * g.B);
    const float2* pilot_grid =
        grid + (static_cast<long long>(f) * g.B + b) * (1 + g.nd) * g.N;
    const int n_at = (g.nsc - u + g.U - 1) / g.U; // comb points of user u
    int j = i <= u ? 0 : (i - u) / g.U;
    if (j + 1 >= n_at)
        j = n_at >= 2 ? n_at - 2 : 0;
    auto ls = [&](int at) {
        const float2 v = pilot_grid[bins[at]];
        return cdiv(make_float2(v.x * g.scale, v.y * g.scale),
                    cmul(pilots[at], ramp[at]));
    };
    const int at0 = u + j * g.U;
    float2 v = ls(at0);
    if (n_at >= 2) {
        const float2 v1 = ls(at0 + g.U);
        const float t = (static_cast<float>(i) - static_cast<float>(at0)) / g.U;
        v = make_float2(v.x + t * (v1.x - v.x), v.y + t * (v1.y - v.y));
    }
    h[static_cast<long long>(f) * g.nsc * g.B * g.U + idx] = cmul(v, ramp[i]);
}

/*! The detector's input from the data symbols' bins: [N_data][N_sc][B] per frame, or
 * (window_rows) the window's frames side by side, [N_data][slots][N_sc][B]. */
__global__ void extract_kernel(const float2* grid,
                               const int* bins,
                               Geometry g,
                               const int* frame_count,
                               const FrameMeta* meta,
                               bool window_rows,
                               float2* y)
{
    const int f = blockIdx.z, s = blockIdx.y; // 32-bit index arithmetic within a symbol
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= g.nsc * g.B || f >= *frame_count || meta[f].status != kFrameValid)
        return;
    const int b = idx % g.B, i = idx / g.B;
    const float2 v =
        grid[((static_cast<long long>(f) * g.B + b) * (1 + g.nd) + 1 + s) * g.N +
             bins[i]];
    const long long row = window_rows ? static_cast<long long>(s) * gridDim.z + f
                                      : static_cast<long long>(f) * g.nd + s;
    y[row * g.nsc * g.B + idx] = make_float2(v.x * g.scale, v.y * g.scale);
}

//! Sum of |X|^2 over the unused bins (not DC) of the data symbols, per frame; one block
//! per (frame, antenna, data symbol).
__global__ void __launch_bounds__(kThreads) noise_kernel(const float2* grid,
                                                         const int* unused_bins,
                                                         Geometry g,
                                                         const int* frame_count,
                                                         FrameMeta* meta)
{
    const int f = blockIdx.z, b = blockIdx.y, s = blockIdx.x;
    if (f >= *frame_count || meta[f].status != kFrameValid)
        return;
    const float2* row =
        grid + ((static_cast<long long>(f) * g.B + b) * (1 + g.nd) + 1 + s) * g.N;
    double sum = 0.0;
    for (int k = threadIdx.x; k < g.n_unused; k += kThreads) {
        const float2 v = row[unused_bins[k]];
        sum += v.x * v.x + v.y * v.y;
    }
    using Reduce = cub::BlockReduce<double, kThreads>;
    __shared__ typename Reduce::TempStorage temp;
    const double total = Reduce(temp).Sum(sum);
    if (threadIdx.x == 0)
        atomicAdd(&meta[f].noise, total);
}

/*! The frames' numbers straight into pinned host memory (mapped: the GPU writes it over
 * the host link itself). A cudaMemcpyAsync would queue on a copy engine behind the
 * previous window's LLR download, and the host waits for these numbers before it can
 * issue the detection. */
__global__ void publish_kernel(const FrameMeta* meta,
                               const int* frame_count,
                               FrameMeta* host_meta,
                               int* host_count)
{
    const int count = *frame_count;
    for (int f = threadIdx.x; f < count; f += blockDim.x)
        host_meta[f] = meta[f];
    if (threadIdx.x == 0)
        *host_count = count;
}

int blocks_for(long long items, int threads)
{
    return static_cast<int>((items + threads - 1) / threads);
}

} // namespace

/* ------------------------------------------------------------------------------------ */

struct CudaOfdmChain::Impl {
    OfdmConfig ofdm;
    ChainOptions options;
    Geometry geo{};
    std::size_t step = 0;      //!< new samples per window
    std::size_t tail = 0;      //!< samples a window shares with the next one
    std::size_t width = 0;     //!< W = step + tail
    int max_frames = 0;        //!< frames one window holds at most
    std::size_t llr_frame = 0; //!< floats of LLRs per frame
    std::size_t h_frame = 0;   //!< complex values of h per frame
    std::size_t y_frame = 0;   //!< complex values of y per frame
    std::size_t x_frame = 0;   //!< complex values of x_hat per frame
    //! ChainOutputs::unbias/sinr: the frames' gains of one call, copied on the device
    //! from each frame's detector before the next window reuses it, and what each
    //! frame has (kGains*).
    std::unique_ptr<Buffer<float>> gains_unbias, gains_sinr;
    std::unique_ptr<Buffer<std::uint8_t>> gains_status;
    std::vector<std::uint8_t> gains_kind;
    enum : std::uint8_t { kGainsErased = 0, kGainsCopied = 1, kGainsNone = 2 };
    //! One detector and stream per frame of a window: the frames' detections run at
    //! once (one subcarrier per warp would leave most of the GPU idle for one frame).
    std::vector<std::unique_ptr<CudaDetector>> detectors;
    std::vector<cudaStream_t> detect_streams;
    std::vector<cudaEvent_t> frame_detected;
    /* chol, cg, cr and zf: one detector over all of a window's frame slots instead, the
     * window detected by one launch (detect_frames_device), its y, LLRs and x_hat in
     * rows of all slots per symbol: about half the GPU time of a launch per frame, whose
     * 1200 subcarriers fill the GPU thinly (docs/performance.md). detectors then holds
     * one detector, for finish_gains. */
    std::unique_ptr<CudaDetector> frames_detector;
    //! A window's frames to detect: the slot, the index among the call's frames, and
    //! whether the frame is erased (NaN/Inf samples).
    struct Pick {
        int slot;
        std::size_t index;
        bool erased;
    };
    std::vector<Pick> picks;

    // Constant tables.
    std::unique_ptr<Buffer<int>> bins, unused_bins;
    std::unique_ptr<Buffer<float2>> pilots, ramp;

    // Scratch of the chain kernels, used in stream order by one window at a time.
    std::unique_ptr<Buffer<Sums>> terms, cum;
    std::unique_ptr<Buffer<float>> metric;
    std::unique_ptr<Buffer<int>> tile_first;
    std::unique_ptr<Buffer<unsigned long long>> fine_key, resume;
    int fine_size = 0; //!< M: FFT length of the fine-timing correlation
    std::unique_ptr<Buffer<float2>> fine_segments, preamble_spectrum;
    std::unique_ptr<Buffer<unsigned char>> scan_temp;
    std::size_t scan_temp_bytes = 0;

    //! What one window needs while its successor is already on its way: its samples,
    //! grid, h and y (read by its detection after the next window's chain), its LLRs
    //! (until downloaded) and its frames.
    struct Set {
        //! The window's samples as uploaded, [B][W]: float2, or short2 in its first half
        std::unique_ptr<Buffer<float2>> x;
        std::unique_ptr<Buffer<float2>> grid, h, y;
        std::unique_ptr<Buffer<float>> llr;
        std::unique_ptr<Buffer<float2>> x_hat; //!< ChainOutputs::x_hat, made when asked
        //! ChainOutputs::llr_int8 / llr_fp16 staging, 2 bytes per LLR
        std::unique_ptr<Buffer<std::uint16_t>> llr_narrow;
        std::unique_ptr<Buffer<FrameMeta>> meta, host_meta; // host_meta pinned
        std::unique_ptr<Buffer<int>> count, host_count;     // host_count pinned
        FrameMeta* mapped_meta = nullptr; //!< host_meta as the device addresses it
        int* mapped_count = nullptr;
        cudaEvent_t uploaded = nullptr, input_free = nullptr, meta_ready = nullptr,
                    downloaded = nullptr;
        cudaEvent_t chain_begin = nullptr; //!< with meta_ready: ChainTimes::chain_ms
    };
    ChainTimes times;                      //!< of the current process() call
    std::size_t next_start = 0;            //!< of the current call's last frame
    std::optional<std::size_t> cut_resume; //!< where a cut frame is searched again
    Set sets[2];
    cudaStream_t upload = nullptr, compute = nullptr, download = nullptr;
    cufftHandle fft = 0, fine_fft = 0;
    bool fft_made = false, fine_fft_made = false;
    Precision precision = Precision::fp32; //!< storage of H and y (emulated)

    Impl(const OfdmConfig& o, const DetectorConfig& d, const ChainOptions& opt)
        : ofdm(o), options(opt)
    {
        ofdm.validate();
        if (opt.frames_per_window == 0)
            throw std::invalid_argument("GPU OFDM chain: frames_per_window must be >= 1");
        if (!(opt.llr_int8_scale > 0.0f) || !std::isfinite(opt.llr_int8_scale))
            throw std::invalid_argument("GPU OFDM chain: llr_int8_scale must be finite and > 0");
        DetectorConfig dc = d;
        dc.num_antennas = o.num_antennas;
        dc.num_users = o.num_users;
        dc.num_subcarriers = o.num_subcarriers;
        dc.modulation = o.modulation;
        dc.backend = Backend::cuda;
        dc.devices = { opt.device };
        dc.validate();
        precision = dc.precision;
        MIMODET_CUDA_CHECK(cudaSetDevice(opt.device));
        EngineOptions engine; // device API only: one stream, no host staging to speak of
        engine.device = opt.device;
        engine.streams = 1;
        engine.chunk_bytes = 1;

        const std::size_t sym = o.symbol_samples(), frame = o.frame_samples();
        step = opt.frames_per_window * frame;
        tail = frame + 2 * sym; // a frame whose peak is up to a symbol past the step
        width = step + tail;
        max_frames = static_cast<int>(step / (frame - o.cp_length) + 2);
        const bool window_launch =
            dc.mode == DetectorMode::chol || dc.mode == DetectorMode::cg ||
            dc.mode == DetectorMode::cr || dc.mode == DetectorMode::zf;
        if (window_launch) {
            DetectorConfig wc = dc;
            wc.num_subcarriers = static_cast<std::size_t>(max_frames) * o.num_subcarriers;
            frames_detector = std::make_unique<CudaDetector>(wc, engine);
        }
        for (int f = 0; f < (window_launch ? 1 : max_frames); ++f) {
            detectors.push_back(std::make_unique<CudaDetector>(dc, engine));
            detect_streams.push_back(nullptr);
            MIMODET_CUDA_CHECK(
                cudaStreamCreateWithFlags(&detect_streams.back(), cudaStreamNonBlocking));
            frame_detected.push_back(nullptr);
            MIMODET_CUDA_CHECK(
                cudaEventCreateWithFlags(&frame_detected.back(), cudaEventDisableTiming));
        }
        if (width * o.num_antennas > static_cast<std::size_t>(INT_MAX) / 2 ||
            static_cast<std::size_t>(max_frames) * o.num_antennas > 65535)
            throw std::invalid_argument("GPU OFDM chain: a window of " +
                                        std::to_string(opt.frames_per_window) +
                                        " frames of " + std::to_string(o.num_antennas) +
                                        " antennas is too large for the kernels' "
                                        "indexing; lower frames_per_window");
        geo.B = static_cast<int>(o.num_antennas);
        geo.U = static_cast<int>(o.num_users);
        geo.nsc = static_cast<int>(o.num_subcarriers);
        geo.N = static_cast<int>(o.fft_size);
        geo.L = geo.N / 2;
        geo.cp = static_cast<int>(o.cp_length);
        geo.sym = static_cast<int>(sym);
        geo.frame = static_cast<int>(frame);
        geo.nd = static_cast<int>(o.num_data_symbols);
        geo.advance = static_cast<int>(window_advance(o));
        geo.W = static_cast<int>(width);
        geo.scale = 1.0f / std::sqrt(static_cast<float>(o.fft_size));
        const Dims dims = o.dims();
        llr_frame = o.num_data_symbols * dims.llr_items();
        h_frame = dims.channel_items();
        y_frame = o.num_data_symbols * dims.rx_items();
        x_frame = o.num_data_symbols * dims.symbol_items();

        // Tables: the used bins, the unused ones (not DC), the pilots
        // and the early window's ramp, all from include/mimodet/ofdm.h.
        std::vector<int> used_bins(o.num_subcarriers), unused;
        std::vector<bool> used(o.fft_size, false);
        std::vector<float2> pilot_table(o.num_subcarriers), ramp_table(o.num_subcarriers);
        const std::vector<cf32> ramp_values = window_ramp(o);
        for (std::size_t i = 0; i < o.num_subcarriers; ++i) {
            used_bins[i] = static_cast<int>(o.bin_of(i));
            used[o.bin_of(i)] = true;
            const cf32 p = pilot_value(o, i);
            pilot_table[i] = make_float2(p.real(), p.imag());
            ramp_table[i] = make_float2(ramp_values[i].real(), ramp_values[i].imag());
        }
        for (std::size_t k = 1; k < o.fft_size; ++k)
            if (!used[k])
                unused.push_back(static_cast<int>(k));
        geo.n_unused = static_cast<int>(unused.size());
        const std::vector<cf32> body = preamble_time(o);
        bins = upload_table<int>(used_bins.data(), used_bins.size());
        unused_bins =
            upload_table<int>(unused.data(), std::max<std::size_t>(unused.size(), 1));
        pilots = upload_table<float2>(pilot_table.data(), pilot_table.size());
        ramp = upload_table<float2>(ramp_table.data(), ramp_table.size());

        const std::size_t n_terms = width;
        terms = std::make_unique<Buffer<Sums>>(n_terms, false);
        cum = std::make_unique<Buffer<Sums>>(n_terms, false);
        metric = std::make_unique<Buffer<float>>(width, false);
        tile_first = std::make_unique<Buffer<int>>(width / kTile + 1, false);
        fine_key = std::make_unique<Buffer<unsigned long long>>(max_frames, false);
        resume = std::make_unique<Buffer<unsigned long long>>(1, false);
        MIMODET_CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr,
                                                          scan_temp_bytes,
                                                          terms->get(),
                                                          cum->get(),
                                                          AddSums(),
                                                          static_cast<int>(n_terms)));
        scan_temp = std::make_unique<Buffer<unsigned char>>(scan_temp_bytes, false);

        const std::size_t B = o.num_antennas;
        const std::size_t grid_values =
            max_frames * B * (1 + o.num_data_symbols) * o.fft_size;
        for (Set& s : sets) {
            s.x = std::make_unique<Buffer<float2>>(B * width, false);
            s.grid = std::make_unique<Buffer<float2>>(grid_values, false);
            // The FFTs run over all max_frames slots, the gather fills only the frames
            // found: zero once, so that the slots no frame used are not read uninitialised.
            MIMODET_CUDA_CHECK(cudaMemset(s.grid->get(), 0, grid_values * sizeof(float2)));
            s.h = std::make_unique<Buffer<float2>>(max_frames * h_frame, false);
            s.y = std::make_unique<Buffer<float2>>(max_frames * y_frame, false);
            s.llr = std::make_unique<Buffer<float>>(max_frames * llr_frame, false);
            // The one-launch window narrows whole rows, skipped slots too (their columns
            // are not copied down): zero once, so that those are not read uninitialised.
            MIMODET_CUDA_CHECK(
                cudaMemset(s.llr->get(), 0, max_frames * llr_frame * sizeof(float)));
            s.llr_narrow =
                std::make_unique<Buffer<std::uint16_t>>(max_frames * llr_frame, false);
            s.meta = std::make_unique<Buffer<FrameMeta>>(max_frames, false);
            // publish_kernel copies whole FrameMeta records, fields a frame left unset too.
            MIMODET_CUDA_CHECK(cudaMemset(s.meta->get(), 0, max_frames * sizeof(FrameMeta)));
            s.host_meta = std::make_unique<Buffer<FrameMeta>>(max_frames, true);
            s.count = std::make_unique<Buffer<int>>(1, false);
            s.host_count = std::make_unique<Buffer<int>>(1, true);
            MIMODET_CUDA_CHECK(cudaHostGetDevicePointer(
                reinterpret_cast<void**>(&s.mapped_meta), s.host_meta->get(), 0));
            MIMODET_CUDA_CHECK(cudaHostGetDevicePointer(
                reinterpret_cast<void**>(&s.mapped_count), s.host_count->get(), 0));
            for (cudaEvent_t* e : { &s.uploaded, &s.input_free, &s.downloaded })
                MIMODET_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
            for (cudaEvent_t* e : { &s.chain_begin, &s.meta_ready })
                MIMODET_CUDA_CHECK(cudaEventCreate(e));
        }
        for (cudaStream_t* s : { &upload, &compute, &download })
            MIMODET_CUDA_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
        int n = geo.N;
        MIMODET_CUFFT_CHECK(
            cufftPlanMany(&fft,
                          1,
                          &n,
                          nullptr,
                          1,
                          n,
                          nullptr,
                          1,
                          n,
                          CUFFT_C2C,
                          static_cast<int>(max_frames * B * (1 + o.num_data_symbols))));
        fft_made = true;
        MIMODET_CUFFT_CHECK(cufftSetStream(fft, compute));

        // Fine timing: segments of up to 2 CP + N samples, FFTs of the next power of two.
        fine_size = 1;
        while (fine_size < 2 * geo.cp + geo.N)
            fine_size *= 2;
        fine_segments = std::make_unique<Buffer<float2>>(
            static_cast<std::size_t>(max_frames) * B * fine_size, false);
        MIMODET_CUDA_CHECK(cudaMemset(fine_segments->get(), 0,
                                      fine_segments->size() * sizeof(float2))); // as s.grid
        MIMODET_CUFFT_CHECK(cufftPlanMany(&fine_fft,
                                          1,
                                          &fine_size,
                                          nullptr,
                                          1,
                                          fine_size,
                                          nullptr,
                                          1,
                                          fine_size,
                                          CUFFT_C2C,
                                          static_cast<int>(max_frames * B)));
        fine_fft_made = true;
        MIMODET_CUFFT_CHECK(cufftSetStream(fine_fft, compute));
        // FFT of the zero-padded preamble body, once, with a plan of one transform.
        std::vector<float2> padded(fine_size, make_float2(0.0f, 0.0f));
        for (std::size_t k = 0; k < body.size(); ++k)
            padded[k] = make_float2(body[k].real(), body[k].imag());
        preamble_spectrum = std::make_unique<Buffer<float2>>(fine_size, false);
        copy_to_device(
            preamble_spectrum->get(), padded.data(), fine_size * sizeof(float2));
        cufftHandle once = 0;
        MIMODET_CUFFT_CHECK(cufftPlan1d(&once, fine_size, CUFFT_C2C, 1));
        const cufftResult made =
            cufftSetStream(once, compute) == CUFFT_SUCCESS
                ? cufftExecC2C(once,
                               reinterpret_cast<cufftComplex*>(preamble_spectrum->get()),
                               reinterpret_cast<cufftComplex*>(preamble_spectrum->get()),
                               CUFFT_FORWARD)
                : CUFFT_EXEC_FAILED;
        cudaStreamSynchronize(compute);
        cufftDestroy(once);
        MIMODET_CUFFT_CHECK(made);
    }

    ~Impl()
    {
        cudaSetDevice(options.device);
        std::vector<cudaStream_t> streams = detect_streams;
        streams.insert(streams.end(), { upload, compute, download });
        for (cudaStream_t s : streams)
            if (s) {
                cudaStreamSynchronize(s);
                cudaStreamDestroy(s);
            }
        for (cudaEvent_t e : frame_detected)
            if (e)
                cudaEventDestroy(e);
        if (fft_made)
            cufftDestroy(fft);
        if (fine_fft_made)
            cufftDestroy(fine_fft);
        for (Set& s : sets)
            for (cudaEvent_t e :
                 { s.uploaded, s.input_free, s.meta_ready, s.downloaded, s.chain_begin })
                if (e)
                    cudaEventDestroy(e);
    }

    static double elapsed_ms(cudaEvent_t from, cudaEvent_t to)
    {
        float ms = 0.0f;
        MIMODET_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
        return ms;
    }

    template <typename T, typename Src>
    std::unique_ptr<Buffer<T>> upload_table(const Src* values, std::size_t count)
    {
        static_assert(sizeof(T) == sizeof(Src), "table element sizes");
        auto buffer = std::make_unique<Buffer<T>>(count, false);
        copy_to_device(buffer->get(), values, count * sizeof(T));
        return buffer;
    }

    std::size_t window_begin(std::size_t k) const { return k * step; }
    bool window_exists(std::size_t k, std::size_t samples) const
    {
        return window_begin(k) + ofdm.frame_samples() <= samples;
    }
    std::size_t window_data(std::size_t k, std::size_t samples) const
    {
        return std::min(width, samples - window_begin(k));
    }

    //! Window k's samples into its set: the part it shares with window k-1 copied on the
    //! device, the rest from the host.
    void issue_upload(std::size_t k,
                      const std::vector<const void*>& antennas,
                      SampleFormat format,
                      std::size_t samples)
    {
        Set& s = sets[k % 2];
        Set& prev = sets[(k + 1) % 2];
        const std::size_t B = ofdm.num_antennas, data = window_data(k, samples);
        const std::size_t bytes =
            format == SampleFormat::sc16 ? sizeof(short2) : sizeof(float2);
        unsigned char* dst = reinterpret_cast<unsigned char*>(s.x->get());
        const unsigned char* prev_dst = reinterpret_cast<unsigned char*>(prev.x->get());
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(upload, s.input_free, 0));
        std::size_t shared = 0;
        if (k > 0) {
            shared = std::min(tail, data);
            MIMODET_CUDA_CHECK(cudaMemcpy2DAsync(dst,
                                                 width * bytes,
                                                 prev_dst + step * bytes,
                                                 width * bytes,
                                                 shared * bytes,
                                                 B,
                                                 cudaMemcpyDeviceToDevice,
                                                 upload));
        }
        if (data > shared)
            for (std::size_t b = 0; b < B; ++b)
                MIMODET_CUDA_CHECK(
                    cudaMemcpyAsync(dst + (b * width + shared) * bytes,
                                    static_cast<const unsigned char*>(antennas[b]) +
                                        (window_begin(k) + shared) * bytes,
                                    (data - shared) * bytes,
                                    cudaMemcpyHostToDevice,
                                    upload));
        MIMODET_CUDA_CHECK(cudaEventRecord(s.uploaded, upload));
    }

    void issue_chain(std::size_t k, SampleFormat format, std::size_t samples)
    {
        Set& s = sets[k % 2];
        if (format == SampleFormat::sc16)
            issue_chain(k, reinterpret_cast<const short2*>(s.x->get()), samples);
        else
            issue_chain(k, s.x->get(), samples);
    }

    //! Window k's chain up to the detector's inputs and the frames' numbers (pinned).
    template <typename Sample>
    void issue_chain(std::size_t k, const Sample* x, std::size_t samples)
    {
        Set& s = sets[k % 2];
        const float scale = options.sc16_scale; // sc16 only
        const int data = static_cast<int>(window_data(k, samples));
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(compute, s.uploaded, 0));
        MIMODET_CUDA_CHECK(cudaEventRecord(s.chain_begin, compute));
        const int n_terms = static_cast<int>(width);
        sc_terms_kernel<<<blocks_for(n_terms, kThreads), kThreads, 0, compute>>>(
            x, scale, geo, data, n_terms, terms->get());
        MIMODET_CUDA_CHECK_LAUNCH("sc_terms_kernel");
        std::size_t temp_bytes = scan_temp_bytes;
        MIMODET_CUDA_CHECK(cub::DeviceScan::InclusiveScan(scan_temp->get(),
                                                          temp_bytes,
                                                          terms->get(),
                                                          cum->get(),
                                                          AddSums(),
                                                          n_terms,
                                                          compute));
        const int n_metric = data - geo.N + 1; // > 0: a window holds a frame at least
        const int n_tiles = blocks_for(n_metric, kTile);
        metric_kernel<<<n_tiles, kTile, 0, compute>>>(
            cum->get(), geo.L, n_metric, metric->get(), tile_first->get());
        MIMODET_CUDA_CHECK_LAUNCH("metric_kernel");
        // Crossings up to the next window's first search position or the last body whose
        // frame fits (OfdmReceiver's last_start + cp); peaks as far as the samples go.
        const int last_body = data - geo.frame + geo.cp;
        const int limit = std::min(static_cast<int>(step) + geo.cp, last_body + 1);
        const int peak_last = n_metric - 1;
        search_kernel<<<1, kSearchThreads, 0, compute>>>(
            metric->get(),
            tile_first->get(),
            n_tiles,
            cum->get(),
            geo,
            static_cast<long long>(window_begin(k)),
            limit,
            peak_last,
            max_frames,
            resume->get(),
            s.meta->get(),
            s.count->get());
        MIMODET_CUDA_CHECK_LAUNCH("search_kernel");
        fine_segment_kernel<<<dim3(blocks_for(fine_size, kThreads), geo.B, max_frames),
                              kThreads,
                              0,
                              compute>>>(x,
                                         scale,
                                         geo,
                                         data,
                                         fine_size,
                                         s.meta->get(),
                                         s.count->get(),
                                         fine_segments->get());
        MIMODET_CUDA_CHECK_LAUNCH("fine_segment_kernel");
        cufftComplex* segments = reinterpret_cast<cufftComplex*>(fine_segments->get());
        MIMODET_CUFFT_CHECK(cufftExecC2C(fine_fft, segments, segments, CUFFT_FORWARD));
        const long long spectra = fine_segments->size();
        correlate_kernel<<<blocks_for(spectra, kThreads), kThreads, 0, compute>>>(
            fine_segments->get(), preamble_spectrum->get(), fine_size, spectra);
        MIMODET_CUDA_CHECK_LAUNCH("correlate_kernel");
        MIMODET_CUFFT_CHECK(cufftExecC2C(fine_fft, segments, segments, CUFFT_INVERSE));
        fine_argmax_kernel<<<max_frames, kThreads, 0, compute>>>(fine_segments->get(),
                                                                 geo,
                                                                 data,
                                                                 fine_size,
                                                                 s.meta->get(),
                                                                 s.count->get(),
                                                                 fine_key->get());
        MIMODET_CUDA_CHECK_LAUNCH("fine_argmax_kernel");
        finalize_kernel<<<blocks_for(max_frames, 32), 32, 0, compute>>>(
            cum->get(), geo, last_body, s.count->get(), fine_key->get(), s.meta->get());
        MIMODET_CUDA_CHECK_LAUNCH("finalize_kernel");
        gather_kernel<<<dim3(blocks_for(geo.N, kThreads), 1 + geo.nd, max_frames * geo.B),
                        kThreads,
                        0,
                        compute>>>(
            x, scale, geo, s.count->get(), s.meta->get(), s.grid->get());
        MIMODET_CUDA_CHECK_LAUNCH("gather_kernel");
        MIMODET_CUDA_CHECK(cudaEventRecord(s.input_free, compute));
        MIMODET_CUFFT_CHECK(cufftExecC2C(fft,
                                         reinterpret_cast<cufftComplex*>(s.grid->get()),
                                         reinterpret_cast<cufftComplex*>(s.grid->get()),
                                         CUFFT_FORWARD));
        channel_estimate_kernel<<<dim3(blocks_for(h_frame, kThreads), max_frames),
                                  kThreads,
                                  0,
                                  compute>>>(s.grid->get(),
                                             bins->get(),
                                             pilots->get(),
                                             ramp->get(),
                                             geo,
                                             s.count->get(),
                                             s.meta->get(),
                                             s.h->get());
        MIMODET_CUDA_CHECK_LAUNCH("channel_estimate_kernel");
        extract_kernel<<<dim3(blocks_for(geo.nsc * geo.B, kThreads), geo.nd, max_frames),
                         kThreads,
                         0,
                         compute>>>(s.grid->get(),
                                    bins->get(),
                                    geo,
                                    s.count->get(),
                                    s.meta->get(),
                                    frames_detector != nullptr,
                                    s.y->get());
        MIMODET_CUDA_CHECK_LAUNCH("extract_kernel");
        if (geo.n_unused > 0) {
            noise_kernel<<<dim3(geo.nd, geo.B, max_frames), kThreads, 0, compute>>>(
                s.grid->get(), unused_bins->get(), geo, s.count->get(), s.meta->get());
            MIMODET_CUDA_CHECK_LAUNCH("noise_kernel");
        }
        publish_kernel<<<1, 32, 0, compute>>>(
            s.meta->get(), s.count->get(), s.mapped_meta, s.mapped_count);
        MIMODET_CUDA_CHECK_LAUNCH("publish_kernel");
        MIMODET_CUDA_CHECK(cudaEventRecord(s.meta_ready, compute));
    }

    //! How a call's walk went on after a window.
    enum class Walk { on, full, cut };

    //! Frame `index`'s gains from its detector into the call's gains buffers, queued.
    //! `first`: the frame's first subcarrier in the detector's (a window's slot).
    void copy_gains(const CudaDetector& detector,
                    std::size_t index,
                    std::size_t first,
                    cudaStream_t stream)
    {
        CudaDetector::DeviceGains g;
        if (!detector.device_gains(g)) {
            gains_kind[index] = kGainsNone;
            return;
        }
        const std::size_t nsc = ofdm.num_subcarriers, n = nsc * ofdm.num_users;
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(gains_unbias->get() + index * n,
                                           g.inv_lambda + first * ofdm.num_users,
                                           n * sizeof(float),
                                           cudaMemcpyDeviceToDevice,
                                           stream));
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(gains_sinr->get() + index * n,
                                           g.sinr + first * ofdm.num_users,
                                           n * sizeof(float),
                                           cudaMemcpyDeviceToDevice,
                                           stream));
        MIMODET_CUDA_CHECK(cudaMemcpyAsync(gains_status->get() + index * nsc,
                                           g.status + first,
                                           nsc,
                                           cudaMemcpyDeviceToDevice,
                                           stream));
        gains_kind[index] = kGainsCopied;
    }

    //! After the call's work: the frames' gains to the host, as equalizer_gains gives them.
    void download_gains(const ChainOutputs& out, std::size_t frames)
    {
        const std::size_t nsc = ofdm.num_subcarriers, n = nsc * ofdm.num_users;
        if (!frames)
            return;
        MIMODET_CUDA_CHECK(cudaMemcpy(
            out.unbias, gains_unbias->get(), frames * n * sizeof(float), cudaMemcpyDeviceToHost));
        MIMODET_CUDA_CHECK(cudaMemcpy(
            out.sinr, gains_sinr->get(), frames * n * sizeof(float), cudaMemcpyDeviceToHost));
        std::vector<std::uint8_t> status(frames * nsc);
        MIMODET_CUDA_CHECK(cudaMemcpy(
            status.data(), gains_status->get(), frames * nsc, cudaMemcpyDeviceToHost));
        for (std::size_t f = 0; f < frames; ++f) {
            float* unbias = out.unbias + f * n;
            float* sinr = out.sinr + f * n;
            switch (gains_kind[f]) {
            case kGainsCopied:
                detectors.front()->finish_gains(unbias, sinr, status.data() + f * nsc);
                break;
            case kGainsNone: // the symbols pass as they are, the SINR is unknown
                std::fill(unbias, unbias + n, 1.0f);
                std::fill(sinr, sinr + n, 0.0f);
                break;
            default:
                std::fill(unbias, unbias + n, 0.0f);
                std::fill(sinr, sinr + n, 0.0f);
            }
        }
    }

    //! Waits for window k's frames, detects them and queues the LLR download; says
    //! whether the walk goes on (a full output or a frame cut by the end of the samples
    //! ends it, next_start / cut_resume tell where a later call resumes).
    Walk issue_detection(std::size_t k,
                         const ChainOutputs& out,
                         std::vector<ChainFrame>& frames)
    {
        Set& s = sets[k % 2];
        const auto wait_from = std::chrono::steady_clock::now();
        MIMODET_CUDA_CHECK(cudaEventSynchronize(s.meta_ready));
        times.host_wait_ms += std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - wait_from)
                                  .count();
        times.chain_ms += elapsed_ms(s.chain_begin, s.meta_ready);
        ++times.windows;
        const int count = *s.host_count->get();
        const double bins_summed = static_cast<double>(geo.n_unused) * geo.B * geo.nd;
        const std::size_t first = frames.size();
        // The walk over the window's frames: which are output, where the next search
        // starts.
        picks.clear();
        Walk walk = Walk::on;
        for (int f = 0; f < count; ++f) {
            const FrameMeta& m = s.host_meta->get()[f];
            if (m.status == kFrameCut) { // the rest comes with more samples
                cut_resume =
                    window_begin(k) + static_cast<std::size_t>(m.crossing - geo.cp);
                walk = Walk::cut;
                break;
            }
            if (frames.size() == out.max_frames) {
                walk = Walk::full;
                break;
            }
            // The next search starts a frame after the coarse position (overlapping
            // frames included), as OfdmReceiver's next_start.
            next_start = window_begin(k) + static_cast<std::size_t>(m.coarse) +
                         ofdm.frame_samples() - 2 * ofdm.cp_length;
            if (m.status != kFrameValid)
                continue;
            ChainFrame frame;
            frame.start = window_begin(k) + static_cast<std::size_t>(m.start);
            frame.cfo = m.cfo;
            frame.n0 =
                bins_summed > 0.0
                    ? static_cast<float>(m.noise * geo.scale * geo.scale / bins_summed)
                    : 0.0f;
            picks.push_back(Pick{ f, frames.size(), !std::isfinite(frame.n0) });
            frames.push_back(frame);
        }
        if (frames_detector)
            detect_window(s, out, frames);
        else
            detect_frames(s, out, frames, first);
        MIMODET_CUDA_CHECK(cudaEventRecord(s.downloaded, download));
        if (walk == Walk::on && frames.size() == out.max_frames)
            walk = Walk::full;
        return walk;
    }

    //! Each picked frame on its own detector and stream, once the window's chain is
    //! done and the LLRs of two windows ago (same buffer) are downloaded. The compute
    //! stream joins them before the chain that reuses this set (window k+2), and the
    //! download stream before fetching the LLRs.
    void detect_frames(Set& s,
                       const ChainOutputs& out,
                       const std::vector<ChainFrame>& frames,
                       std::size_t first)
    {
        std::size_t detected = 0;
        for (const Pick& pick : picks) {
            const ChainFrame& frame = frames[pick.index];
            const std::size_t index = pick.index;
            float2* h = s.h->get() + pick.slot * h_frame;
            float2* y = s.y->get() + pick.slot * y_frame;
            cudaStream_t stream = detect_streams[detected];
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, s.meta_ready, 0));
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, s.downloaded, 0));
            // Narrow storage (emulated, as the CPU chain's QuantizingDetector): H per
            // frame, y per OFDM symbol, in the chain's own buffers.
            quantize_blocks(reinterpret_cast<cf32*>(h), h_frame, 1, precision, stream);
            quantize_blocks(reinterpret_cast<cf32*>(y),
                            y_frame / ofdm.num_data_symbols,
                            ofdm.num_data_symbols,
                            precision,
                            stream);
            float* llr = s.llr->get() + detected * llr_frame;
            cf32* x_hat = out.x_hat ? reinterpret_cast<cf32*>(s.x_hat->get()) +
                                          detected * x_frame
                                    : nullptr;
            if (!pick.erased) {
                CudaDetector& detector = *detectors[detected];
                detector.set_channel_device(
                    reinterpret_cast<const cf32*>(h), frame.n0, stream);
                detector.detect_device(reinterpret_cast<const cf32*>(y),
                                       ofdm.num_data_symbols,
                                       llr,
                                       x_hat,
                                       stream);
                if (out.unbias)
                    copy_gains(detector, index, 0, stream);
            } else { // NaN/Inf samples in the frame: erased, as the CPU detector does
                MIMODET_CUDA_CHECK(
                    cudaMemsetAsync(llr, 0, llr_frame * sizeof(float), stream));
                if (x_hat)
                    MIMODET_CUDA_CHECK(
                        cudaMemsetAsync(x_hat, 0, x_frame * sizeof(cf32), stream));
                if (out.unbias)
                    gains_kind[index] = kGainsErased;
            }
            if (out.x_hat)
                MIMODET_CUDA_CHECK(cudaMemcpyAsync(out.x_hat + index * x_frame,
                                                   x_hat,
                                                   x_frame * sizeof(cf32),
                                                   cudaMemcpyDeviceToHost,
                                                   stream));
            // Optional outputs (tests): straight into the caller's memory.
            if (out.h)
                MIMODET_CUDA_CHECK(cudaMemcpyAsync(out.h + index * h_frame,
                                                   h,
                                                   h_frame * sizeof(cf32),
                                                   cudaMemcpyDeviceToHost,
                                                   stream));
            if (out.y)
                MIMODET_CUDA_CHECK(cudaMemcpyAsync(out.y + index * y_frame,
                                                   y,
                                                   y_frame * sizeof(cf32),
                                                   cudaMemcpyDeviceToHost,
                                                   stream));
            MIMODET_CUDA_CHECK(cudaEventRecord(frame_detected[detected], stream));
            MIMODET_CUDA_CHECK(cudaStreamWaitEvent(compute, frame_detected[detected], 0));
            MIMODET_CUDA_CHECK(
                cudaStreamWaitEvent(download, frame_detected[detected], 0));
            ++detected;
        }
        if (detected && (out.llr_int8 || out.llr_fp16)) { // a quarter or half the bytes
            const LlrFormat format = out.llr_int8 ? LlrFormat::int8 : LlrFormat::fp16;
            const std::size_t bytes = llr_bytes(format);
            llrs_to_narrow(s.llr->get(),
                           detected * llr_frame,
                           format,
                           options.llr_int8_scale,
                           s.llr_narrow->get(),
                           download);
            char* dst = out.llr_int8 ? reinterpret_cast<char*>(out.llr_int8)
                                     : reinterpret_cast<char*>(out.llr_fp16);
            MIMODET_CUDA_CHECK(cudaMemcpyAsync(dst + first * llr_frame * bytes,
                                               s.llr_narrow->get(),
                                               detected * llr_frame * bytes,
                                               cudaMemcpyDeviceToHost,
                                               download));
        } else if (detected) {
            MIMODET_CUDA_CHECK(cudaMemcpyAsync(out.llr + first * llr_frame,
                                               s.llr->get(),
                                               detected * llr_frame * sizeof(float),
                                               cudaMemcpyDeviceToHost,
                                               download));
        }
    }

    /*! The picked frames in one launch (frames_detector): the slots up to the last
     * picked one, a slot not picked or erased skipped by a NaN N0. y, the LLRs and x_hat
     * are rows of all max_frames slots per data symbol, so a frame's outputs come down
     * as 2-D copies of its columns. */
    void
    detect_window(Set& s, const ChainOutputs& out, const std::vector<ChainFrame>& frames)
    {
        if (picks.empty())
            return;
        const std::size_t slots = static_cast<std::size_t>(picks.back().slot) + 1;
        const std::size_t nsc = ofdm.num_subcarriers, nd = ofdm.num_data_symbols;
        const std::size_t row_y = nsc * ofdm.num_antennas, row_llr = llr_frame / nd,
                          row_x = x_frame / nd,
                          all = static_cast<std::size_t>(max_frames);
        cudaStream_t stream = detect_streams.front();
        // A slot's columns of nd rows of `all` slots (`row` bytes each): to the host
        // (frame after frame, as the caller's outputs are), or zeroed.
        auto columns_to_host = [&](void* dst,
                                   const void* rows,
                                   std::size_t slot,
                                   std::size_t row,
                                   cudaStream_t on) {
            MIMODET_CUDA_CHECK(
                cudaMemcpy2DAsync(dst,
                                  row,
                                  static_cast<const char*>(rows) + slot * row,
                                  all * row,
                                  row,
                                  nd,
                                  cudaMemcpyDeviceToHost,
                                  on));
        };
        auto zero_columns = [&](void* rows, std::size_t slot, std::size_t row) {
            MIMODET_CUDA_CHECK(cudaMemset2DAsync(
                static_cast<char*>(rows) + slot * row, all * row, 0, row, nd, stream));
        };
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, s.meta_ready, 0));
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(stream, s.downloaded, 0));
        // Narrow storage (emulated): H per frame, y per frame and OFDM symbol, as
        // detect_frames'.
        float2* h = s.h->get();
        float2* y = s.y->get();
        quantize_blocks(reinterpret_cast<cf32*>(h), h_frame, slots, precision, stream);
        quantize_blocks(reinterpret_cast<cf32*>(y), row_y, nd * all, precision, stream);
        std::vector<float> n0(slots, std::numeric_limits<float>::quiet_NaN());
        for (const Pick& pick : picks)
            if (!pick.erased)
                n0[pick.slot] = frames[pick.index].n0;
        float* llr = s.llr->get();
        float2* x_hat = out.x_hat ? s.x_hat->get() : nullptr;
        frames_detector->detect_frames_device(reinterpret_cast<const cf32*>(h),
                                              n0.data(),
                                              nsc,
                                              slots,
                                              reinterpret_cast<const cf32*>(y),
                                              nd,
                                              llr,
                                              reinterpret_cast<cf32*>(x_hat),
                                              stream);
        for (const Pick& pick : picks) {
            const std::size_t slot = static_cast<std::size_t>(pick.slot);
            if (pick.erased) { // NaN/Inf samples in the frame: erased, as the CPU does
                zero_columns(llr, slot, row_llr * sizeof(float));
                if (x_hat)
                    zero_columns(x_hat, slot, row_x * sizeof(float2));
                if (out.unbias)
                    gains_kind[pick.index] = kGainsErased;
            } else if (out.unbias) {
                copy_gains(*frames_detector, pick.index, slot * nsc, stream);
            }
            if (out.x_hat)
                columns_to_host(out.x_hat + pick.index * x_frame,
                                x_hat,
                                slot,
                                row_x * sizeof(float2),
                                stream);
            // Optional outputs (tests): straight into the caller's memory.
            if (out.h)
                MIMODET_CUDA_CHECK(cudaMemcpyAsync(out.h + pick.index * h_frame,
                                                   h + slot * h_frame,
                                                   h_frame * sizeof(cf32),
                                                   cudaMemcpyDeviceToHost,
                                                   stream));
            if (out.y)
                columns_to_host(out.y + pick.index * y_frame,
                                y,
                                slot,
                                row_y * sizeof(float2),
                                stream);
        }
        MIMODET_CUDA_CHECK(cudaEventRecord(frame_detected.front(), stream));
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(compute, frame_detected.front(), 0));
        MIMODET_CUDA_CHECK(cudaStreamWaitEvent(download, frame_detected.front(), 0));
        // The LLRs down, each frame's columns of the rows: narrowed first where asked
        // (from the first row to the last picked slot of the last row).
        const float* src = llr;
        char* dst = reinterpret_cast<char*>(out.llr);
        std::size_t bytes = sizeof(float);
        if (out.llr_int8 || out.llr_fp16) { // a quarter or half the bytes
            const LlrFormat format = out.llr_int8 ? LlrFormat::int8 : LlrFormat::fp16;
            bytes = llr_bytes(format);
            llrs_to_narrow(llr,
                           ((nd - 1) * all + slots) * row_llr,
                           format,
                           options.llr_int8_scale,
                           s.llr_narrow->get(),
                           download);
            src = nullptr;
            dst = out.llr_int8 ? reinterpret_cast<char*>(out.llr_int8)
                               : reinterpret_cast<char*>(out.llr_fp16);
        }
        const char* base = src ? reinterpret_cast<const char*>(src)
                               : reinterpret_cast<const char*>(s.llr_narrow->get());
        for (const Pick& pick : picks)
            columns_to_host(dst + pick.index * llr_frame * bytes,
                            base,
                            static_cast<std::size_t>(pick.slot),
                            row_llr * bytes,
                            download);
    }
};

CudaOfdmChain::CudaOfdmChain(const OfdmConfig& ofdm,
                             const DetectorConfig& detector,
                             const ChainOptions& options)
    : d_impl(std::make_unique<Impl>(ofdm, detector, options))
{
}

CudaOfdmChain::~CudaOfdmChain() = default;
const OfdmConfig& CudaOfdmChain::config() const { return d_impl->ofdm; }

void CudaOfdmChain::set_scales(float sc16_scale, float llr_int8_scale)
{
    if (!(sc16_scale > 0.0f) || !std::isfinite(sc16_scale) || !(llr_int8_scale > 0.0f) ||
        !std::isfinite(llr_int8_scale))
        throw std::invalid_argument("GPU OFDM chain: sc16_scale and llr_int8_scale must be "
                                    "finite and > 0");
    d_impl->options.sc16_scale = sc16_scale;
    d_impl->options.llr_int8_scale = llr_int8_scale;
}

std::vector<ChainFrame> CudaOfdmChain::process(const std::vector<const void*>& antennas,
                                               SampleFormat format,
                                               std::size_t samples,
                                               const ChainOutputs& out,
                                               std::size_t* next)
{
    Impl& m = *d_impl;
    if (antennas.size() != m.ofdm.num_antennas)
        throw std::invalid_argument("GPU OFDM chain: " + std::to_string(antennas.size()) +
                                    " antenna streams for a " +
                                    std::to_string(m.ofdm.num_antennas) +
                                    "-antenna config");
    for (const void* a : antennas)
        if (!a && samples)
            throw std::invalid_argument("GPU OFDM chain: null antenna stream");
    if (out.max_frames && (!!out.llr + !!out.llr_int8 + !!out.llr_fp16) != 1)
        throw std::invalid_argument(
            "GPU OFDM chain: give one LLR buffer, llr, llr_int8 or llr_fp16, for " +
            std::to_string(out.max_frames) + " frames");
    if (!out.unbias != !out.sinr)
        throw std::invalid_argument("GPU OFDM chain: give unbias and sinr together");
    std::vector<ChainFrame> frames;
    m.times = ChainTimes{};
    if (next)
        *next = 0;
    if (!out.max_frames || !m.window_exists(0, samples))
        return frames;
    MIMODET_CUDA_CHECK(cudaSetDevice(m.options.device));
    // The display outputs' device buffers, made the first time they are asked for.
    if (out.x_hat)
        for (Impl::Set& s : m.sets)
            if (!s.x_hat)
                s.x_hat = std::make_unique<Buffer<float2>>(m.max_frames * m.x_frame, false);
    if (out.unbias) {
        const std::size_t n = m.ofdm.num_subcarriers * m.ofdm.num_users;
        if (!m.gains_unbias || m.gains_unbias->size() < out.max_frames * n) {
            m.gains_unbias = std::make_unique<Buffer<float>>(out.max_frames * n, false);
            m.gains_sinr = std::make_unique<Buffer<float>>(out.max_frames * n, false);
            m.gains_status = std::make_unique<Buffer<std::uint8_t>>(
                out.max_frames * m.ofdm.num_subcarriers, false);
        }
        m.gains_kind.assign(out.max_frames, Impl::kGainsErased);
    }
    MIMODET_CUDA_CHECK(
        cudaMemsetAsync(m.resume->get(), 0, sizeof(unsigned long long), m.compute));
    // Pipeline: the upload of window k+2 and the chain of window k+1 are queued before
    // the host waits for window k's frames, so the copy engines and the GPU keep busy
    // while it does.
    m.issue_upload(0, antennas, format, samples);
    if (m.window_exists(1, samples))
        m.issue_upload(1, antennas, format, samples);
    m.issue_chain(0, format, samples);
    m.next_start = 0;
    m.cut_resume.reset();
    Impl::Walk walk = Impl::Walk::on;
    try {
        for (std::size_t k = 0; walk == Impl::Walk::on && m.window_exists(k, samples);
             ++k) {
            if (m.window_exists(k + 2, samples))
                m.issue_upload(k + 2, antennas, format, samples);
            if (m.window_exists(k + 1, samples))
                m.issue_chain(k + 1, format, samples);
            walk = m.issue_detection(k, out, frames);
        }
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(m.compute));
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(m.download));
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(m.upload));
        for (cudaStream_t s : m.detect_streams)
            MIMODET_CUDA_CHECK(cudaStreamSynchronize(s));
        if (out.unbias)
            m.download_gains(out, frames.size());
    } catch (...) {
        // Nothing queued may outlive the call: the caller's buffers go away.
        for (cudaStream_t s : { m.compute, m.download, m.upload })
            cudaStreamSynchronize(s);
        for (cudaStream_t s : m.detect_streams)
            cudaStreamSynchronize(s);
        throw;
    }
    if (next) {
        // A cut frame is searched again from its crossing; a full output resumes after
        // its last frame; otherwise every crossing up to the last body whose frame fits
        // was searched.
        const std::size_t frame = m.ofdm.frame_samples();
        *next = m.cut_resume               ? *m.cut_resume
                : walk == Impl::Walk::full ? m.next_start
                                           : std::max(m.next_start, samples - frame + 1);
    }
    return frames;
}

ChainTimes CudaOfdmChain::last_times() const { return d_impl->times; }

DetectorStats CudaOfdmChain::detector_stats() const
{
    MIMODET_CUDA_CHECK(cudaSetDevice(d_impl->options.device));
    DetectorStats s;
    for (const auto& detector : d_impl->detectors)
        s += detector->stats();
    if (d_impl->frames_detector)
        s += d_impl->frames_detector->stats();
    return s;
}

} // namespace cuda
} // namespace mimodet
