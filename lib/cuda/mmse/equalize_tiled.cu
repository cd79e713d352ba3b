/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The tiled equalize kernel (equalize_tiled_kernel) and its launch: a block per
 * (subcarrier, tile of symbols) forms H^H Y like a small GEMM from staged chunks of H and
 * y, then multiplies it by A^-1 (chol/zf) or runs li2015's CG / broumas2023's CR on it
 * (cg/cr), and demaps; fused (the first call on a channel not prepared yet), it also
 * forms G from the same chunks and prepares the channel (channel_state.cuh) on the way.
 * Here: the tiles' shared-memory layout and shape, the kernel (staging, the fused
 * channel's finish and the product with A^-1 or A as functions of their own), and its
 * launches (prepared channel: launch_equalize_tiled; fused: launch_equalize_fused). */

#include "channel_state.cuh"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include "cuda/precision/decode.cuh"
#include "demap.cuh"
#include "device_helpers.cuh"
#include "gauss_jordan.cuh"
#include "launch_helpers.h"
#include <type_traits>
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace mimodet {
namespace cuda {

namespace {

/* The tiled kernel: a block per (subcarrier, tile of S symbols) computes the U x S
 * matched filter H^H Y like a small GEMM. H and the received vectors are staged in chunks
 * of 32 antennas, double-buffered with asynchronous copies so that the next chunk is in
 * flight while this one is used; thread (pair, group) accumulates users 2 pair and
 * 2 pair + 1 for symbols group + G t, t < 4 (G = S / 4), so each shared-memory load feeds
 * two or four complex multiply-adds instead of one. When subcarriers and symbols are
 * few, KS "k-groups" of threads take every KS-th chunk each and their sums are added in
 * a fixed order. H^H Y then goes through shared memory: chol/zf multiply it by A^-1 with
 * the same register tiling (U^2 S products against U B S for H^H Y; the k-groups share
 * the symbols), cg/cr iterate with A times the shared vectors tiled the same way, and
 * all demap from the registers. H is finite on a usable subcarrier, so a symbol's
 * products are finite exactly when its y is: NaN/Inf in y is found from the results
 * instead of testing every sample. */
constexpr int kTileSymbolsPerThread = 4;
constexpr int kMaxTileSymbols = 64;
constexpr int kMaxKGroups = 4;
//! Shared memory the tiled kernel may use (the opt-in limit of sm_75).
constexpr std::size_t kTileSmemLimit = 64 * 1024;

//! Smallest tile for UP users: a whole warp per k-group, (UP/2) * (S/4) >= 32.
__host__ __device__ constexpr int min_tile_symbols(int up)
{
    return 256 / up > 8 ? 256 / up : 8;
}

/*! Antennas per staged chunk: 32, or 16 on compact grids for chol/zf's small tiles (16
 * symbols or fewer) and for every large tile (32 symbols or more). Large tiles: two
 * buffers of 16 in about the shared memory of one of 32, so that the next chunk's copies
 * overlap the products and as many blocks fit (8 per SM for the 1024 x 64 target, held
 * there by the registers). MIMODET_LARGE_TILE_CHUNK sets it for experiments. Small
 * tiles: a block is a warp or two and its shared memory, not its registers, limits the
 * blocks per SM: the NR slot 64x16 (3276 one-warp blocks) fits 24 per SM (the register
 * limit; 20 with two buffers) with chunks of 16 and one buffer, instead of 17 with 32
 * (A after the buffers). cg/cr keep 32: 16 made them no faster, some slower. Chunks of
 * 8, double-buffered in about the same shared memory (the scratch spanning both
 * buffers), were slower still, for a reason not found. MIMODET_SMALL_TILE_CHUNK, for
 * experiments, sets that chunk. */
#ifndef MIMODET_LARGE_TILE_CHUNK
#define MIMODET_LARGE_TILE_CHUNK 16
#endif
__host__ __device__ constexpr int tile_chunk(int symbols, bool compact, bool iterative)
{
#ifdef MIMODET_SMALL_TILE_CHUNK
    if (compact && !iterative && symbols <= 16)
        return MIMODET_SMALL_TILE_CHUNK;
#endif
    if (compact && symbols >= 32)
        return MIMODET_LARGE_TILE_CHUNK;
    return compact && !iterative && symbols <= 16 ? 16 : 32;
}

/* Row strides (in complex values) of the staged chunks. H: 4 more than a row (16 bytes,
 * so the pair loads stay aligned; modulo 16 values, 4 or 12), so that the tensor-core
 * fragments, lane (g, t) reading row t at column g, hit distinct banks in each
 * half-warp. y for UP >= 8: 4 more than a row, even so that pairs of antennas are
 * copied 16 bytes at a time; the H^H Y loop reads 2, 4 or 8 rows at once, at most
 * two-way conflicting. UP = 4: one more, its warps read 16 rows at once. */
__host__ __device__ constexpr int tile_h_stride(int up) { return up + 4; }
__host__ __device__ constexpr int tile_y_stride(int up, int chunk)
{
    return up >= 8 ? chunk + 4 : chunk + 1;
}

/*! Whether A [UP][UP + 1] lives in k-group 0's staging (formed there after the antenna
 * loop) rather than after the staging buffers: fused chol/zf, whose inversion reads and
 * writes it there. (Fused cg/cr keep it after the buffers: in staging it let more blocks
 * share an SM, left less L1 for their spills and was slower.) */
__host__ __device__ constexpr bool tile_a_in_staging(bool fused, bool iterative)
{
    return fused && !iterative;
}

/*! After the antenna loop the start of k-group 0's staging holds zs, H^H Y [S][UP + 1],
 * then (tile_a_in_staging) A and the inversion's scratch; the other k-groups' parts of
 * H^H Y (and, fused, of G [UP][UP + 1]) go at the start of their own buffers. */
__host__ __device__ constexpr int
tile_scratch_items(int up, int symbols, bool fused, bool iterative)
{
    return symbols * (up + 1) + (fused ? up * (up + 1) : 0) +
           (tile_a_in_staging(fused, iterative) ? invert_scratch_items(up) : 0);
}

//! One staging buffer: the chunk of H [chunk][UP + 4] and the received chunk
//! [S][tile_y_stride]; each k-group has two when it takes several chunks, one
//! otherwise, and together they hold at least the scratch above.
__host__ __device__ constexpr int
tile_buffer_items(int up, int symbols, int chunk, bool fused, bool iterative, int buffers)
{
    const int staging = chunk * tile_h_stride(up) + symbols * tile_y_stride(up, chunk);
    const int scratch =
        (tile_scratch_items(up, symbols, fused, iterative) + buffers - 1) / buffers;
    return staging > scratch ? staging : scratch;
}

/* The fused kernel's Gram matrix on the FP64 tensor cores (sm_80, sm_90: DMMA,
 * mma.m8n8k4 in double) for UP >= 8: the float inputs are exact in double and the sums
 * are kept in double, and the tensor cores work beside the CUDA cores that form H^H Y.
 * (H^H Y there too was slower for the 1024 x 64 target: the FP64 tensor rate of an H100
 * is that of its FP32 CUDA cores, and the conversions cost issue slots.) Other GPUs
 * (sm_75, and sm_86/89 whose FP64 units are few) use the CUDA cores. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)
#define MIMODET_TILE_DMMA 1
#else
#define MIMODET_TILE_DMMA 0
#endif

//! d += a b on an 8x8x4 double tile: lane (g = lane / 4, t = lane % 4) holds a = A[g][t],
//! b = B[t][g] and d = {D[g][2t], D[g][2t + 1]} (PTX mma.m8n8k4 .f64 fragments).
__device__ __forceinline__ void dmma_8x8x4(double (&d)[2], double a, double b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, "
                 "{%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
#endif
}

//! One complex tile step: acc += conj(A) B over 4 antennas (conj(a) b = ar br + ai bi +
//! i (ar bi - ai br)); re and im are the tile's two double fragments.
[[maybe_unused]] __device__ __forceinline__ void
cdmma_conj(double (&re)[2], double (&im)[2], float2 a, float2 b)
{
    dmma_8x8x4(re, a.x, b.x);
    dmma_8x8x4(re, a.y, b.y);
    dmma_8x8x4(im, a.x, b.y);
    dmma_8x8x4(im, -a.y, b.x);
}

/* Narrow input on the tensor cores (sm_80 and later; UP >= 16, S >= 32): H^H Y and G
 * from the staged codes by mma.m16n8k16 in fp16 or bf16 with float accumulation. A
 * complex code (re, im) is one 32-bit register of two halves, which is what a fragment
 * holds for two consecutive k: with k = 2 b + {re, im}, conj(h)^T y = sum_k a_k y_k
 * where a = (hr, hi) for the real part and (-hi, hr) for the imaginary part. FP8 codes
 * are widened to fp16 (exact) as the fragments are loaded. The products are exact and
 * the sums are float, in the tensor cores' order: the LLRs agree with the float32
 * kernels on the decoded values to float rounding, not bit for bit. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define MIMODET_TILE_MMA16 1
#else
#define MIMODET_TILE_MMA16 0
#endif

//! d += A B on a 16x8x16 tile (PTX mma.m16n8k16 fragments), fp16 or bf16 inputs.
template <bool kBf16>
__device__ __forceinline__ void
mma_16816(float (&d)[4], std::uint32_t a0, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3,
          std::uint32_t b0, std::uint32_t b1)
{
#if MIMODET_TILE_MMA16
    if constexpr (kBf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

//! A staged complex code (word w of a chunk) as two halves of the mma's input type.
template <int kPrecision>
__device__ __forceinline__ std::uint32_t code_word(const void* words, int w)
{
    constexpr Precision p = static_cast<Precision>(kPrecision);
    if constexpr (p == Precision::fp16 || p == Precision::bf16) {
        return static_cast<const std::uint32_t*>(words)[w];
    } else {
        const __nv_fp8x2_storage_t c = static_cast<const std::uint16_t*>(words)[w];
        const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(
            c, p == Precision::fp8_e4m3 ? __NV_E4M3 : __NV_E5M2);
        return static_cast<std::uint32_t>(h.x) | (static_cast<std::uint32_t>(h.y) << 16);
    }
}
//! (hr, hi) -> (-hi, hr): the halves swapped, the new low half negated.
__device__ __forceinline__ std::uint32_t times_minus_i_conj(std::uint32_t w)
{
    return __byte_perm(w, 0u, 0x1032) ^ 0x8000u;
}

struct TileShape {
    int symbols;    //!< S: a power of two, at most kMaxTileSymbols
    int kgroups;    //!< KS: 1, 2 or 4
    int buffers;    //!< staging buffers per k-group: 2 (double-buffered) or 1 (one chunk)
    int threads;    //!< (UP / 2) * (S / 4) * KS
    int chunk;      //!< antennas per staged chunk (tile_chunk)
    bool fused;     //!< the channel prepared in the kernel (G formed with H^H Y)
    bool iterative; //!< cg/cr
};

//! Double buffering only pays when a k-group takes more than one chunk.
int staging_buffers(int chunks, int kgroups) { return chunks > kgroups ? 2 : 1; }

//! The staging buffers, then (unless tile_a_in_staging) A^-1 or A [UP][UP + 1].
std::size_t tiled_shared_bytes(int up, const TileShape& t)
{
    const bool a_in_staging = tile_a_in_staging(t.fused, t.iterative);
    return sizeof(float2) *
           (static_cast<std::size_t>(t.kgroups) * t.buffers *
                tile_buffer_items(
                    up, t.symbols, t.chunk, t.fused, t.iterative, t.buffers) +
            (a_in_staging ? 0 : static_cast<std::size_t>(up) * (up + 1)));
}

/*! S covers the call's symbols (at most kMaxTileSymbols; fused: at least UP) and gives at
 * least a whole warp per k-group ((UP/2) * (S/4) >= 32); one staging buffer when two do
 * not fit kTileSmemLimit; KS splits the antennas (not on compact grids, whose blocks are
 * enough to hide the loop) while the blocks are small and the antennas and shared memory
 * allow it. */
TileShape tile_shape(int up,
                     std::size_t num_symbols,
                     int num_antennas,
                     bool iterative,
                     bool fused = false,
                     bool compact = false)
{
    TileShape t{};
    t.symbols = fused ? std::max(min_tile_symbols(up), up) : min_tile_symbols(up);
    while (t.symbols < kMaxTileSymbols &&
           static_cast<std::size_t>(t.symbols) < num_symbols)
        t.symbols *= 2;
    t.chunk = tile_chunk(t.symbols, compact, iterative);
    t.fused = fused;
    t.iterative = iterative;
    const int base = (up / 2) * (t.symbols / kTileSymbolsPerThread);
    const int chunks = (num_antennas + t.chunk - 1) / t.chunk;
    t.kgroups = 1;
    t.buffers = staging_buffers(chunks, t.kgroups);
    if (tiled_shared_bytes(up, t) > kTileSmemLimit)
        t.buffers = 1; // which fits for every UP <= 32 and S <= 64
    for (;;) {
        TileShape wider = t;
        wider.kgroups *= 2;
        wider.buffers = staging_buffers(chunks, wider.kgroups);
        if (compact || wider.kgroups > kMaxKGroups || wider.kgroups > chunks ||
            base * t.kgroups >= 128 || tiled_shared_bytes(up, wider) > kTileSmemLimit)
            break;
        t = wider;
    }
    t.threads = base * t.kgroups;
    return t;
}

/*! Registers per thread of a compact grid's tiled kernel (a compact grid,
 * kCompactBlocksPerSm blocks per SM or more, trades a few spills for occupancy; other
 * grids let the compiler take up to 255, which is best when the grid is about a block per
 * SM and each block's latency counts, as li2015's 128 subcarriers). An SM sub-partition
 * holds floor(16384 / (32 * registers)) warps: 80 registers give 24 warps per SM, 72 give
 * 28, 64 give 32. What pays:
 * - 32 or more symbols: 64 (more resident blocks for the 1024 x 64 target than 80 give).
 * - Fewer, chol/zf: 72, so that the NR slot's 3276 one-warp blocks fit in one wave of
 *   132 SMs x 28 instead of 1.03 waves of 24 (64 were slower).
 * - Fewer, cg/cr: 80. Their shared memory (A after the staging) holds them to 17 blocks
 *   per SM anyway, so fewer registers only spill more.
 * MIMODET_SMALL_TILE_REGISTERS, for experiments, sets one bound for every small tile. */
__host__ __device__ constexpr int tile_compact_registers(int symbols, bool iterative)
{
#ifdef MIMODET_SMALL_TILE_REGISTERS
    if (symbols < 32)
        return MIMODET_SMALL_TILE_REGISTERS;
#endif
    return symbols >= 32 ? 64 : iterative ? 80 : 72;
}

//! Threads of a block of the tiled kernel on a compact grid (one k-group there).
__host__ __device__ constexpr int tile_compact_threads(int up, int symbols)
{
    return (up / 2) * (symbols / kTileSymbolsPerThread);
}

//! Warps per SM that `registers` per thread allow: each of an SM's 4 sub-partitions
//! holds floor(16384 / (32 * registers)) of them.
__host__ __device__ constexpr int warps_for_registers(int registers)
{
    return 4 * (16384 / (32 * registers));
}

/* GPUs that hold fewer blocks per SM (16 on sm_75 and sm_86/87, 24 on sm_89) than the
 * bound of one-warp blocks below asks for would ignore it (ptxas: minnctapersm out of
 * range): there the bound stays that of 256 threads, 3 blocks for small tiles (80
 * registers) and 4 for large ones (64), as before; not measured on those GPUs. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 800 && __CUDA_ARCH__ != 900
#define MIMODET_TILE_BOUNDS_OF_256_THREADS 1
#else
#define MIMODET_TILE_BOUNDS_OF_256_THREADS 0
#endif

//! The tiled kernel's __launch_bounds__: its most threads per block and the blocks per SM
//! that set its register bound (tile_compact_registers on compact grids; ptxas spreads
//! those blocks' warps over the sub-partitions, so 25 one-warp blocks would bound it to
//! 72 registers, not 80).
__host__ __device__ constexpr int tile_max_threads(int up, int symbols, bool compact)
{
    return compact && !MIMODET_TILE_BOUNDS_OF_256_THREADS
               ? tile_compact_threads(up, symbols)
               : 256;
}
__host__ __device__ constexpr int
tile_min_blocks(int up, int symbols, bool compact, bool iterative)
{
    if (!compact)
        return 1;
    if (MIMODET_TILE_BOUNDS_OF_256_THREADS)
        return symbols >= 32 ? 4 : 3;
    return warps_for_registers(tile_compact_registers(symbols, iterative)) /
           (tile_compact_threads(up, symbols) / 32);
}

/* ------------------------------------------------------------------------------------ */
/* Phases of the tiled kernel moved into functions of their own (forced inline). Their
 * arguments are references where the code was a lambda of the kernel capturing by
 * reference, so that its loads stay where they were. The other phases stay in the
 * kernel's body: moved into functions, each changed the kernel's machine code (the
 * optimizer's order over the whole kernel), which a move must not do. */
/* ------------------------------------------------------------------------------------ */

/*! Narrow input (EqualizeArgs::y_codes): two complex values (four codes) at complex
 * index i (even) of a code array, as their bytes (1-byte codes: .x only), and decoded
 * times `scale`. The staging of a narrow kernel loads these into registers before a
 * round's products and decodes them into the float buffers after them. */
template <int kL2Prefetch>
__device__ __forceinline__ uint2 load_code_pair(const void* codes, std::size_t i, int bytes)
{
    // As the float copies (stage_tile_chunk): the L2 fetches kL2Prefetch bytes around
    // each load, so that the next chunks of the same rows are there when they are loaded.
    const char* base = static_cast<const char*>(codes);
    uint2 v = make_uint2(0u, 0u);
    if (bytes == 2) {
        const char* a = base + i * 4;
        if constexpr (kL2Prefetch == 256)
            asm("ld.global.nc.L2::256B.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(a));
        else
            asm("ld.global.nc.L2::128B.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(a));
    } else {
        const char* a = base + i * 2;
        if constexpr (kL2Prefetch == 256)
            asm("ld.global.nc.L2::256B.u32 %0, [%1];" : "=r"(v.x) : "l"(a));
        else
            asm("ld.global.nc.L2::128B.u32 %0, [%1];" : "=r"(v.x) : "l"(a));
    }
    return v;
}
template <int kPrecision>
__device__ __forceinline__ float4 decode_code_pair(uint2 v, float scale)
{
    constexpr bool two = kPrecision == static_cast<int>(Precision::fp16) ||
                         kPrecision == static_cast<int>(Precision::bf16);
    const std::uint32_t c0 = two ? v.x & 0xffffu : v.x & 0xffu;
    const std::uint32_t c1 = two ? v.x >> 16 : (v.x >> 8) & 0xffu;
    const std::uint32_t c2 = two ? v.y & 0xffffu : (v.x >> 16) & 0xffu;
    const std::uint32_t c3 = two ? v.y >> 16 : v.x >> 24;
    return make_float4(decode_code_of<kPrecision>(c0) * scale,
                       decode_code_of<kPrecision>(c1) * scale,
                       decode_code_of<kPrecision>(c2) * scale,
                       decode_code_of<kPrecision>(c3) * scale);
}
__device__ __forceinline__ bool aligned_to(const void* ptr, std::size_t bytes)
{
    return reinterpret_cast<std::uintptr_t>(ptr) % bytes == 0;
}

/*! Staging: queues the copies of this k-group's chunk of round r into buffer r % buffers
 * (past the last chunk, or past B, U or the call's symbols: zeros).
 *
 * The copies of a chunk. Pairs of values (16 bytes) where every address allows it:
 * even U (H) or even B and an even y stride (y), and 16-byte aligned arrays. Thread
 * (pair, grp) then copies users 2 pair, 2 pair + 1 of H rows grp + G k, and the 16
 * pairs of antennas of a y row are spread over 16 threads, so that each copy costs an
 * address step instead of a division and a 64-bit product. Otherwise 8 bytes at a
 * time. */
template <int UP, int S, int C, int kL2Prefetch, typename YAt>
__device__ __forceinline__ void stage_tile_chunk(const EqualizeArgs& p,
                                                 int r,
                                                 const int& kgroups,
                                                 const int& kg,
                                                 const int& chunks,
                                                 const int& B,
                                                 const int& U,
                                                 const int& nsc,
                                                 const int& count,
                                                 const float2* const& mat,
                                                 float2* const& kg_smem,
                                                 const int& buffers,
                                                 const int& buffer_items,
                                                 const int& local,
                                                 const int& pair,
                                                 const int& grp,
                                                 const bool& h_pairs,
                                                 const bool& y_pairs,
                                                 const int& y_col,
                                                 const int& y_row,
                                                 const YAt& y_at)
{
    constexpr int G = S / kTileSymbolsPerThread;
    constexpr int base = (UP / 2) * G; // threads per k-group
    constexpr int HS = tile_h_stride(UP), YS = tile_y_stride(UP, C);
    constexpr int kHRowsPerThread = C / G;
    constexpr int kYRowStep = base / (C / 2), kYRowsPerThread = S / kYRowStep;
    static_assert(C % G == 0 && base % (C / 2) == 0 && S % kYRowStep == 0,
                  "the y pairs of a chunk spread evenly over the k-group");
    const int chunk = r * kgroups + kg, b0 = chunk * C;
    const int rows = chunk < chunks ? min(C, B - b0) : 0;
    float2* ms = kg_smem + (r % buffers) * buffer_items;
    float2* ys = ms + C * HS;
    if (h_pairs) {
        const bool user_ok = 2 * pair < U;
        const float2* src = mat + (b0 + grp) * U + 2 * pair;
#pragma unroll
        for (int k = 0; k < kHRowsPerThread; ++k) {
            const bool valid = user_ok && grp + G * k < rows;
            copy_async16<kL2Prefetch>(
                ms + (grp + G * k) * HS + 2 * pair, valid ? src : mat, valid);
            src += G * U;
        }
    } else {
        for (int idx = local; idx < C * UP; idx += base) {
            const int row = idx / UP, u = idx % UP;
            const bool valid = row < rows && u < U;
            copy_async8<kL2Prefetch>(
                ms + row * HS + u, valid ? mat + (b0 + row) * U + u : mat, valid);
        }
    }
    if (y_pairs) {
        // (found here, once a round, rather than kept in registers through the loop)
        const std::size_t y_row_step = static_cast<std::size_t>(kYRowStep) * nsc * B;
        const bool col_ok = y_col < rows;
        const float2* src = y_at(y_row) + y_col + b0;
#pragma unroll
        for (int k = 0; k < kYRowsPerThread; ++k) {
            const int s = y_row + kYRowStep * k;
            const bool valid = col_ok && s < count;
            copy_async16<kL2Prefetch>(ys + s * YS + y_col, valid ? src : p.y, valid);
            src += y_row_step;
        }
    } else {
        for (int idx = local; idx < S * C; idx += base) {
            const int s = idx / C, b = idx % C;
            const bool valid = s < count && b < rows;
            copy_async8<kL2Prefetch>(
                ys + s * YS + b, valid ? y_at(s) + b0 + b : mat, valid);
        }
    }
    copy_async_commit();
}

/*! The fused kernel's channel: one warp (cg/cr; chol/zf of up to 16 users on compact
 * grids) or the block (other chol/zf) finishes G in a_s (channel_state.cuh); kNarrow:
 * H is read from prep.h_codes where it is read again. Returns whether the channel is
 * usable: on the first warp's lanes, which pass it on. */
template <int UP, int S, bool kIterative, bool kCompact, int base, bool kNarrow>
__device__ __forceinline__ bool finish_tile_channel(const PrepareArgs& prep,
                                                    const int& sc,
                                                    float2* const& a_s,
                                                    float2* const& invert_work,
                                                    float* const& channel_scalars,
                                                    const int& tid,
                                                    const int& threads)
{
    bool usable = false;
    auto* const a_rows = reinterpret_cast<float2(*)[UP + 1]>(a_s);
    /* A compact grid's blocks (several per SM: its other blocks keep the SM busy)
     * leave the inversion to their first warp, even blocks of 128 threads (the
     * target's): faster than the block's invert_in_place there. A grid of a block or
     * so per SM keeps the block's (li2015: see invert_warp). */
    constexpr bool kWarpInverts = kCompact && UP <= 16;
    if constexpr (kIterative) {
        if (tid < 32)
            usable = finish_channel_iterative<UP>(prep, sc, a_rows, tid);
    } else if constexpr (kWarpInverts) {
        if (tid < 32)
            usable = finish_channel_warp<UP, (S < 32), kNarrow>(prep, sc, a_rows, tid);
    } else {
        // (a block of 128 threads or more is one k-group: tile_shape)
        constexpr int kThreads = kCompact || base >= 128 ? base : 0;
        usable = finish_channel_block<UP, kThreads, kNarrow>(
            prep, sc, a_rows, invert_work, channel_scalars, tid, threads);
    }
    return usable;
}

/*! out[i] += M v_t (t = t0 + i) for this thread's users, M Hermitian in a_s
 * ((M v)_u = sum_j conj(M_ju) v_j), v_t the row of symbol grp + G t in zs.
 * With one k-group every symbol is the thread's: no mine() test, whose branch
 * instructions (uniform over a warp, but not known to the compiler) outnumbered the
 * products in the NR cg profile. Testing it once per symbol instead for several
 * k-groups was slower at the NR slot (chol, cr), so several k-groups keep the
 * per-row test. */
template <int UP, int G, typename Out, typename Mine>
__device__ __forceinline__ void tile_times_rows(Out& out,
                                                int t0,
                                                const float2* const& a_s,
                                                const float2* const& zs,
                                                const int& U,
                                                const int& pair,
                                                const int& grp,
                                                const int& kgroups,
                                                const Mine& mine)
{
    constexpr int N = std::extent_v<std::remove_reference_t<decltype(out)>>;
    if (kgroups == 1) {
        for (int j = 0; j < U; ++j) {
            const float2 a0 = a_s[j * (UP + 1) + 2 * pair];
            const float2 a1 = a_s[j * (UP + 1) + 2 * pair + 1];
#pragma unroll
            for (int i = 0; i < N; ++i) {
                const float2 v = zs[(grp + G * (t0 + i)) * (UP + 1) + j];
                out[i][0] = cfmac(a0, v, out[i][0]);
                out[i][1] = cfmac(a1, v, out[i][1]);
            }
        }
        return;
    }
    for (int j = 0; j < U; ++j) {
        const float2 a0 = a_s[j * (UP + 1) + 2 * pair];
        const float2 a1 = a_s[j * (UP + 1) + 2 * pair + 1];
#pragma unroll
        for (int i = 0; i < N; ++i) {
            if (!mine(t0 + i))
                continue;
            const float2 v = zs[(grp + G * (t0 + i)) * (UP + 1) + j];
            out[i][0] = cfmac(a0, v, out[i][0]);
            out[i][1] = cfmac(a1, v, out[i][1]);
        }
    }
}

/* kFused: the call's symbols are one tile per subcarrier and the channel is not prepared
 * yet; the block prepares it on the way, in one launch and one pass over H instead of
 * two. G = H^H H comes out of the same loop as H^H Y, from the chunk of H already
 * staged: on the FP64 tensor cores beside the CUDA cores' H^H Y (kTensorGram), or on
 * the CUDA cores (thread (pair, group) accumulating G_uj for its users u and the columns
 * j = group + G t < UP; S >= UP so that they are covered). Then cg/cr: one warp makes A
 * and the gains (finish_channel_iterative); chol/zf: the block inverts A by
 * Gauss-Jordan (finish_channel_block; finish_channel_warp, one warp, for up to 16 users
 * on compact grids), and the rest follows as usual. */
/* The k-group sums (kgroups > 1): each k-group left its part of H^H Y (and, kFused, of
 * G) in the layout of zs (and a_s) at the start of its buffers;
 * they are added into zs and a_s in k-group order, so that the sums are deterministic. */
template <int UP, int S, bool kFused>
__device__ __forceinline__ void add_kgroup_parts(float2* zs,
                                                 float2* a_s,
                                                 const float2* smem,
                                                 int kgroups,
                                                 int buffers,
                                                 int buffer_items,
                                                 int tid,
                                                 int threads)
{
    for (int idx = tid; idx < S * UP; idx += threads) {
        const int at = (idx / UP) * (UP + 1) + idx % UP;
        float2 sum = zs[at];
        for (int k = 1; k < kgroups; ++k)
            sum = cadd(sum, smem[k * buffers * buffer_items + at]);
        zs[at] = sum;
    }
    if constexpr (kFused)
        for (int idx = tid; idx < UP * UP; idx += threads) {
            const int at = (idx / UP) * (UP + 1) + idx % UP;
            float2 sum = a_s[at];
            for (int k = 1; k < kgroups; ++k)
                sum = cadd(sum, smem[k * buffers * buffer_items + S * (UP + 1) + at]);
            a_s[at] = sum;
        }
}

/* H is finite on a usable subcarrier, so a symbol's H^H y is finite exactly when its y
 * is: NaN/Inf in y is found from the results (zs [S][UP + 1]) instead of testing every
 * sample. */
template <int UP, int S>
__device__ __forceinline__ void
mark_bad_symbols(const float2* zs, int* bad_symbol, int tid, int threads)
{
    for (int s = tid; s < S; s += threads) {
        bool finite = true;
        for (int u = 0; u < UP; ++u)
            finite = finite && cfinite(zs[s * (UP + 1) + u]);
        bad_symbol[s] = finite ? 0 : 1;
    }
}

/* Demapping of the tile's x (in zs [S][UP + 1]): thread tid takes user tid % UP of the
 * symbols tid / UP, tid / UP + threads / UP, ... (threads is a multiple of UP), in a loop
 * rather than unrolled over the thread's own items: one run of demapping code per
 * modulation instead of a copy per item, which made the NR slot kernels stall on
 * instruction fetch, and each warp's stores cover whole rows of LLRs. A symbol with
 * non-finite y is erased (erase) and counted. */
template <int UP, typename LlrAt, typename Erase>
__device__ __forceinline__ void demap_tile(const EqualizeArgs& p,
                                           const float2* zs,
                                           const int* bad_symbol,
                                           int U,
                                           int nsc,
                                           int sc,
                                           std::size_t s0,
                                           int count,
                                           int tid,
                                           int threads,
                                           LlrAt llr_at,
                                           Erase erase)
{
    const int user = tid % UP;
    if (user >= U)
        return;
    // written by this kernel (fused) or an earlier one: plain loads
    const float user_rho = p.rho[sc * U + user];
    const float user_inv_lambda = p.inv_lambda[sc * U + user];
    const float clip = llr_clip_of(p, p.status[sc] & kStatusRegularized);
    const int symbol_step = threads / UP;
    with_bits_per_axis(p.demap, [&](auto bits_per_axis) {
        constexpr int kBitsPerAxis = decltype(bits_per_axis)::value;
        constexpr int kQ = kBitsPerAxis == 0 ? 1 : 2 * kBitsPerAxis;
        const std::size_t llr_step = static_cast<std::size_t>(symbol_step) * nsc * U * kQ;
        float* dst = llr_at(tid / UP) + user * kQ;
        for (int s = tid / UP; s < count; s += symbol_step, dst += llr_step) {
            if (bad_symbol[s]) {
                if (user == 0)
                    atomicAdd(p.bad_sample_count, 1ull);
                erase(s, user);
                continue;
            }
            const float2 xv = zs[s * (UP + 1) + user];
            write_llrs_of<kBitsPerAxis>(p, xv, user_inv_lambda, user_rho, clip, dst);
            if (p.x_hat)
                p.x_hat[((s0 + s) * nsc + sc) * U + user] = xv;
        }
    });
}

template <int UP, int S, bool kIterative, bool kFused, bool kCompact, bool kNarrow>
__global__ void __launch_bounds__(tile_max_threads(UP, S, kCompact),
                                  tile_min_blocks(UP, S, kCompact, kIterative))
    equalize_tiled_kernel(EqualizeArgs p, PrepareArgs prep, int kgroups, int buffers)
{
    // (uniform per block: a block is one subcarrier; fused, prep has the same frames)
    if (frame_skipped(p, blockIdx.x))
        return;
    static_assert(!kFused || S >= UP,
                  "the fused tile covers G's columns with its groups");
    static_assert((UP / 2) * (S / kTileSymbolsPerThread) % UP == 0,
                  "invert_in_place: the block's threads are a multiple of UP");
    extern __shared__ float4 tile_smem[]; // float4: 16-byte alignment for pair loads
    float2* const smem = reinterpret_cast<float2*>(tile_smem);
    __shared__ int bad_symbol[S];
    __shared__ float channel_scalars[2]; // kFused chol/zf: the gains, to the whole block
    __shared__ int channel_usable; // kFused: from the first warp, to the whole block

    constexpr int P = UP / 2;
    const int B = p.num_antennas, U = p.num_users, Q = p.demap.bits;
    // (nsc: the rows' stride in subcarriers, which the window of frames makes longer)
    const int nsc =
        static_cast<int>(p.row_subcarriers ? p.row_subcarriers : p.num_subcarriers);
    constexpr int G = S / kTileSymbolsPerThread;
    constexpr int base = P * G; // threads per k-group
    const int tid = threadIdx.x, threads = blockDim.x;
    const int kg = tid / base, local = tid % base;
    const int pair = local % P, grp = local / P;
    const int sc = blockIdx.x;
    const std::size_t s0 = static_cast<std::size_t>(blockIdx.y) * S;
    const int count =
        static_cast<int>(min(static_cast<std::size_t>(S), p.num_symbols - s0));
    constexpr bool iterative = kIterative;
    constexpr int C = tile_chunk(S, kCompact, kIterative); // antennas per staged chunk
    /* The L2 fetches 256 bytes around each staged copy of a large tile (32+ symbols), 128
     * around those of a small one, so that the next chunk of the same rows of y (and of
     * H) is there when its copies come; 256 bytes did not help the small tiles, 128
     * helped them and helped the large ones less. */
    constexpr int kL2Prefetch = S >= 32 ? 256 : 128;
    // (the scratch may span both buffers of a k-group: a run-time size)
    const int buffer_items = tile_buffer_items(UP, S, C, kFused, kIterative, buffers);
    float2* const kg_smem = smem + kg * buffers * buffer_items; // this k-group's buffers
    // A^-1 or A [UP][UP + 1]: after the buffers, or (tile_a_in_staging, formed after the
    // antenna loop) in k-group 0's staging after zs (tile_scratch_items).
    constexpr bool kAInStaging = tile_a_in_staging(kFused, kIterative);
    float2* const a_s =
        kAInStaging ? smem + S * (UP + 1) : smem + kgroups * buffers * buffer_items;
    auto y_at = [&](int s) { return p.y + ((s0 + s) * nsc + sc) * B; };
    auto llr_at = [&](int s) {
        return p.llr + ((s0 + s) * nsc + sc) * U * static_cast<std::size_t>(Q);
    };
    auto erase = [&](int s, int u) {
        float* dst = llr_at(s) + u * Q;
        for (int j = 0; j < Q; ++j)
            dst[j] = 0.0f;
        if (p.x_hat)
            p.x_hat[((s0 + s) * nsc + sc) * U + u] = make_float2(0.0f, 0.0f);
    };

    // No usable channel: every LLR of the tile is 0.
    auto erase_tile = [&]() {
        const int warp = tid / 32, lane = tid % 32, warps = threads / 32;
        for (int s = warp; s < count; s += warps) {
            bool finite = true; // non-finite y is still counted, as on the CPU
            for (int b = lane; b < B; b += 32) {
                if constexpr (kNarrow)
                    finite = finite && cfinite(decode_complex(
                                           p.y_codes,
                                           ((s0 + s) * nsc + sc) * B + b,
                                           p.code_bytes,
                                           p.code_precision,
                                           1.0f));
                else
                    finite = finite && cfinite(y_at(s)[b]);
            }
            erase_item(p, (s0 + s) * nsc + sc, lane, !__all_sync(0xffffffffu, finite));
        }
    };
    if (!kFused && (p.status[sc] & kStatusBad)) {
        erase_tile();
        return; // uniform per block
    }

    if (!kFused) { // zeros past U: the chol/zf product reads every pair's columns
        const float2* a = p.a + static_cast<std::size_t>(sc) * U * U;
        for (int idx = tid; idx < UP * UP; idx += threads) {
            const int i = idx / UP, j = idx % UP;
            a_s[i * (UP + 1) + j] =
                (i < U && j < U) ? __ldg(a + i * U + j) : make_float2(0.0f, 0.0f);
        }
    }
    const float2* mat = p.h + static_cast<std::size_t>(sc) * B * U;
    const int chunks = (B + C - 1) / C;
    const int rounds = (chunks + kgroups - 1) / kgroups;
    constexpr int HS = tile_h_stride(UP), YS = tile_y_stride(UP, C);
    // The copies of a chunk (stage_tile_chunk): pairs of values where every address
    // allows it, 8 bytes at a time otherwise.
    // (narrow: a pair of values is 4 codes)
    const bool h_pairs =
        U % 2 == 0 && (kNarrow ? aligned_to(p.h_codes, 4 * p.code_bytes) : aligned16(p.h));
    const bool y_pairs = YS % 2 == 0 && B % 2 == 0 &&
                         (kNarrow ? aligned_to(p.y_codes, 4 * p.code_bytes) : aligned16(p.y));
    const int y_col = 2 * (local % (C / 2)), y_row = local / (C / 2);
    // Queues the copies of this k-group's chunk of round r into buffer r % buffers.
    auto stage = [&](int r) {
        stage_tile_chunk<UP, S, C, kL2Prefetch>(p,
                                                r,
                                                kgroups,
                                                kg,
                                                chunks,
                                                B,
                                                U,
                                                nsc,
                                                count,
                                                mat,
                                                kg_smem,
                                                buffers,
                                                buffer_items,
                                                local,
                                                pair,
                                                grp,
                                                h_pairs,
                                                y_pairs,
                                                y_col,
                                                y_row,
                                                y_at);
    };

    /* Narrow staging: a round's codes are loaded into registers (narrow_fetch) before
     * the products of the round before it, and decoded into the float buffer
     * (narrow_store) after them, so that the loads are in flight during the products, as
     * the asynchronous copies of float input are. The same threads take the same values
     * as stage_tile_chunk's pair copies; the other layouts are copied value by value in
     * narrow_store. */
    constexpr int kNarrowH = kNarrow ? C / G : 1;
    constexpr int kNarrowYStep = base / (C / 2);
    constexpr int kNarrowY = kNarrow ? S / kNarrowYStep : 1;
    uint2 code_h[kNarrowH], code_y[kNarrowY];
    float code_y_scale[kNarrowY];
    auto narrow_fetch = [&](int r) {
        if constexpr (kNarrow) {
            const int chunk = r * kgroups + kg, b0 = chunk * C;
            const int rows = chunk < chunks ? min(C, B - b0) : 0;
            if (h_pairs) {
                const bool user_ok = 2 * pair < U;
#pragma unroll
                for (int k = 0; k < kNarrowH; ++k) {
                    const bool valid = user_ok && grp + G * k < rows;
                    code_h[k] = valid ? load_code_pair<kL2Prefetch>(p.h_codes,
                                                       static_cast<std::size_t>(sc) * B * U +
                                                           (b0 + grp + G * k) * U + 2 * pair,
                                                       p.code_bytes)
                                      : make_uint2(0u, 0u);
                }
            }
            if (y_pairs) {
                const bool col_ok = y_col < rows;
#pragma unroll
                for (int k = 0; k < kNarrowY; ++k) {
                    const int s = y_row + kNarrowYStep * k;
                    const bool valid = col_ok && s < count;
                    code_y[k] = valid ? load_code_pair<kL2Prefetch>(p.y_codes,
                                                       ((s0 + s) * nsc + sc) * B + b0 + y_col,
                                                       p.code_bytes)
                                      : make_uint2(0u, 0u);
                    code_y_scale[k] = valid ? __ldg(p.y_scales + s0 + s) : 0.0f;
                }
            }
        }
    };
    auto narrow_store = [&](int r) {
        if constexpr (kNarrow) {
            const int chunk = r * kgroups + kg, b0 = chunk * C;
            const int rows = chunk < chunks ? min(C, B - b0) : 0;
            float2* ms = kg_smem + (r % buffers) * buffer_items;
            float2* ys = ms + C * HS;
            const float4 zero4 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            // one branch on the format, none in the decodes
            with_code_format(p.code_precision, [&](auto format) {
                constexpr int F = decltype(format)::value;
                const int cb = F == static_cast<int>(Precision::fp16) ||
                                       F == static_cast<int>(Precision::bf16)
                                   ? 2
                                   : 1;
                if (h_pairs) {
                    const bool user_ok = 2 * pair < U;
#pragma unroll
                    for (int k = 0; k < kNarrowH; ++k) {
                        const bool valid = user_ok && grp + G * k < rows;
                        *reinterpret_cast<float4*>(ms + (grp + G * k) * HS + 2 * pair) =
                            valid ? decode_code_pair<F>(code_h[k], p.h_scale) : zero4;
                    }
                } else {
                    for (int idx = local; idx < C * UP; idx += base) {
                        const int row = idx / UP, u = idx % UP;
                        ms[row * HS + u] =
                            row < rows && u < U
                                ? decode_complex(p.h_codes,
                                                 static_cast<std::size_t>(sc) * B * U +
                                                     (b0 + row) * U + u,
                                                 cb,
                                                 F,
                                                 p.h_scale)
                                : make_float2(0.0f, 0.0f);
                    }
                }
                if (y_pairs) {
                    const bool col_ok = y_col < rows;
#pragma unroll
                    for (int k = 0; k < kNarrowY; ++k) {
                        const int s = y_row + kNarrowYStep * k;
                        const bool valid = col_ok && s < count;
                        *reinterpret_cast<float4*>(ys + s * YS + y_col) =
                            valid ? decode_code_pair<F>(code_y[k], code_y_scale[k]) : zero4;
                    }
                } else {
                    for (int idx = local; idx < S * C; idx += base) {
                        const int s = idx / C, b = idx % C;
                        ys[s * YS + b] =
                            s < count && b < rows
                                ? decode_complex(p.y_codes,
                                                 ((s0 + s) * nsc + sc) * B + b0 + b,
                                                 cb,
                                                 F,
                                                 __ldg(p.y_scales + s0 + s))
                                : make_float2(0.0f, 0.0f);
                    }
                }
            });
        }
    };

    // This k-group's part of H^H Y (and, kFused, of G = H^H H). H^H Y on the CUDA cores:
    // thread (pair, grp) accumulates users 2 pair, 2 pair + 1 for symbols grp + G t.
    float2 acc[kTileSymbolsPerThread][2];
#pragma unroll
    for (int t = 0; t < kTileSymbolsPerThread; ++t)
        acc[t][0] = acc[t][1] = make_float2(0.0f, 0.0f);
        // G: on the FP64 tensor cores where they are (kTensorGram), in 8x8 tiles of user
        // blocks (bi <= bj, the upper triangle; warp w of the k-group takes tiles w, w +
        // NW,
        // ...), so that it runs beside H^H Y instead of taking CUDA-core issue slots, and
        // summed in double. Otherwise on the CUDA cores: G_{2 pair + k, grp + G t} for
        // the kGramT values of t that reach G's columns.
#if MIMODET_TILE_DMMA
    constexpr bool kTensorGram = kFused && UP >= 8 && !(kNarrow && UP >= 16 && S >= 32);
#else
    constexpr bool kTensorGram = false;
#endif
    constexpr int NW = base / 32;                           // warps per k-group
    constexpr int UB = UP / 8;                              // blocks of 8 users
    constexpr int GT = kTensorGram ? UB * (UB + 1) / 2 : 0; // Gram tiles
    constexpr int GTW = (GT + NW - 1) / NW;                 // Gram tiles per warp
    const int lane = tid % 32, warp_in_kg = local / 32;
    const int g8 = lane / 4, t4 = lane % 4; // the fragments' (groupID, threadID_in_group)
    double gre[GTW > 0 ? GTW : 1][2], gim[GTW > 0 ? GTW : 1][2];
#pragma unroll
    for (int i = 0; i < GTW; ++i)
        gre[i][0] = gre[i][1] = gim[i][0] = gim[i][1] = 0.0;
    // Gram tile j: user blocks (bi, bj), bi <= bj, row by row.
    auto gram_tile = [](int j, int& bi, int& bj) {
        bi = 0;
        while (j >= UB - bi) {
            j -= UB - bi;
            ++bi;
        }
        bj = bi + j;
    };
    // This warp's Gram tiles, found once: their rows and columns in a chunk of H.
    int gram_row[GTW > 0 ? GTW : 1], gram_col[GTW > 0 ? GTW : 1]; // first user of each
    bool gram_own[GTW > 0 ? GTW : 1];
#pragma unroll
    for (int i = 0; i < GTW; ++i) {
        const int j = warp_in_kg + NW * i;
        int bi = 0, bj = 0;
        gram_tile(j < GT ? j : 0, bi, bj);
        gram_own[i] = j < GT;
        gram_row[i] = bi * 8;
        gram_col[i] = bj * 8;
    }
    // narrow input on the tensor cores (MIMODET_TILE_MMA16): stages codes, forms H^H Y and
    // G by mma.m16n8k16; 2 tiles of 16 users x 8 symbols per warp, <= 2 of G
    constexpr bool kTC = kNarrow && UP >= 16 && S >= 32 && MIMODET_TILE_MMA16;
    constexpr int kGramT = kFused && !kTensorGram && !kTC ? (UP + G - 1) / G : 0;
    constexpr int kTcMT = UP >= 16 ? UP / 16 : 1, kTcNW = base >= 32 ? base / 32 : 1;
    constexpr int kTcPerWarp = kTC ? kTcMT * (S / 8) / kTcNW : 1;
    constexpr int kTcGT = kTC && kFused ? kTcMT * (UP / 8) : 0;
    constexpr int kTcGPerWarp = kTcGT > 0 ? (kTcGT + kTcNW - 1) / kTcNW : 1;
    static_assert(!kTC || kTcMT * (S / 8) % kTcNW == 0, "tensor-core tiles per warp");
    constexpr int kTcHW = UP + 8; // H words per staged row (conflict-free A loads)
    static_assert(!kTC || kTcMT == 1 || kTcNW % kTcMT == 0,
                  "a warp's tiles (and Gram tiles) share their users: one A per step");
    // Antennas per round: twice the float chunk where its codes (4-byte words) fit the
    // float buffer, so half the rounds and barriers.
    constexpr int kTcFloatItems = C * tile_h_stride(UP) + S * tile_y_stride(UP, C);
    constexpr int kTcC =
        (2 * C * kTcHW + S * (2 * C + 4)) * 4 <= kTcFloatItems * 8 ? 2 * C : C;
    const int tc_chunks = (B + kTcC - 1) / kTcC;
    const int tc_rounds = (tc_chunks + kgroups - 1) / kgroups;
    // (re d0..d3, im d0..d3) per tile
    float tz[kTcPerWarp][8], tg[kTcGPerWarp][8];
#pragma unroll
    for (int i = 0; i < kTcPerWarp; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            tz[i][j] = 0.0f;
#pragma unroll
    for (int i = 0; i < kTcGPerWarp; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            tg[i][j] = 0.0f;
    const int tc_wb = kTC ? 2 * p.code_bytes : 4; // bytes per staged complex code
    const int tc_yw = tc_wb == 4 ? kTcC + 4 : kTcC + 8; // y words per staged row (16-B rows)
    const bool tc_h_vec = kTC && U % (16 / tc_wb) == 0 && aligned_to(p.h_codes, 16);
    const bool tc_y_vec = kTC && B % (16 / tc_wb) == 0 && aligned_to(p.y_codes, 16);
    // Queues the copies of round r's codes: H [C][kTcHW], y [S][tc_yw] words (zeros past
    // B, U and the call's symbols); 16 bytes at a time where the sizes allow it.
    auto tc_stage = [&](int r) {
        if constexpr (kTC) {
            constexpr int C = kTcC; // (this lambda's chunk)
            const int chunk = r * kgroups + kg, b0 = chunk * C;
            const int rows = chunk < tc_chunks ? min(C, B - b0) : 0;
            char* hsm = reinterpret_cast<char*>(kg_smem + (r % buffers) * buffer_items);
            char* ysm = hsm + C * kTcHW * tc_wb;
            const char* hsrc = static_cast<const char*>(p.h_codes) +
                               (static_cast<std::size_t>(sc) * B + b0) * U * tc_wb;
            const int vw = 16 / tc_wb; // words per 16 bytes
            if (tc_h_vec) {
                const int per_row = UP / vw;
                for (int idx = local; idx < C * per_row; idx += base) {
                    const int row = idx / per_row, col = (idx % per_row) * vw;
                    const bool valid = row < rows && col < U;
                    copy_async16<kL2Prefetch>(
                        reinterpret_cast<float2*>(hsm + (row * kTcHW + col) * tc_wb),
                        reinterpret_cast<const float2*>(valid ? hsrc + (row * U + col) * tc_wb
                                                              : hsrc),
                        valid);
                }
            } else {
                for (int idx = local; idx < C * UP; idx += base) {
                    const int row = idx / UP, col = idx % UP;
                    const bool valid = row < rows && col < U;
                    const int w = row * kTcHW + col;
                    if (tc_wb == 4)
                        reinterpret_cast<std::uint32_t*>(hsm)[w] =
                            valid ? reinterpret_cast<const std::uint32_t*>(hsrc)[row * U + col] : 0u;
                    else
                        reinterpret_cast<std::uint16_t*>(hsm)[w] =
                            valid ? reinterpret_cast<const std::uint16_t*>(hsrc)[row * U + col]
                                  : std::uint16_t{ 0 };
                }
            }
            if (tc_y_vec) {
                const int per_row = C / vw;
                for (int idx = local; idx < S * per_row; idx += base) {
                    const int sy = idx / per_row, col = (idx % per_row) * vw;
                    const bool valid = sy < count && col < rows;
                    const char* src = static_cast<const char*>(p.y_codes) +
                                      (((s0 + sy) * nsc + sc) * B + b0 + col) * tc_wb;
                    copy_async16<kL2Prefetch>(
                        reinterpret_cast<float2*>(ysm + (sy * tc_yw + col) * tc_wb),
                        reinterpret_cast<const float2*>(valid ? src : p.y_codes), // aligned
                        valid);
                }
            } else {
                for (int idx = local; idx < S * C; idx += base) {
                    const int sy = idx / C, col = idx % C;
                    const bool valid = sy < count && col < rows;
                    const std::size_t g = ((s0 + sy) * nsc + sc) * B + b0 + col;
                    const int w = sy * tc_yw + col;
                    if (tc_wb == 4)
                        reinterpret_cast<std::uint32_t*>(ysm)[w] =
                            valid ? static_cast<const std::uint32_t*>(p.y_codes)[g] : 0u;
                    else
                        reinterpret_cast<std::uint16_t*>(ysm)[w] =
                            valid ? static_cast<const std::uint16_t*>(p.y_codes)[g]
                                  : std::uint16_t{ 0 };
                }
            }
            copy_async_commit();
        }
    };
    // Round r's products on the tensor cores: warp w of the k-group takes the tiles (m
    // users, n symbols) w, w + NW, ... of H^H Y and those of G.
    auto tc_compute = [&](int r) {
        if constexpr (kTC) {
            const int chunk = r * kgroups + kg;
            const int rows = chunk < tc_chunks ? min(kTcC, B - chunk * kTcC) : 0;
            const char* hsm = reinterpret_cast<const char*>(kg_smem + (r % buffers) * buffer_items);
            const char* ysm = hsm + kTcC * kTcHW * tc_wb;
            const int u = (warp_in_kg % kTcMT) * 16 + g8; // every tile's users (above)
            with_code_format(p.code_precision, [&](auto format) {
                constexpr int F = decltype(format)::value;
                constexpr bool kBf16 = F == static_cast<int>(Precision::bf16);
                for (int k0 = 0; k0 < rows; k0 += 8) {
                    const int ra = (k0 + t4) * kTcHW, rb = (k0 + t4 + 4) * kTcHW;
                    const std::uint32_t a0 = code_word<F>(hsm, ra + u),
                                        a1 = code_word<F>(hsm, ra + u + 8),
                                        a2 = code_word<F>(hsm, rb + u),
                                        a3 = code_word<F>(hsm, rb + u + 8);
                    const std::uint32_t i0 = times_minus_i_conj(a0), i1 = times_minus_i_conj(a1),
                                        i2 = times_minus_i_conj(a2), i3 = times_minus_i_conj(a3);
#pragma unroll
                    for (int i = 0; i < kTcPerWarp; ++i) {
                        const int n = (warp_in_kg + kTcNW * i) / kTcMT;
                        const int yrow = (n * 8 + g8) * tc_yw + k0 + t4;
                        const std::uint32_t b0 = code_word<F>(ysm, yrow),
                                            b1 = code_word<F>(ysm, yrow + 4);
                        float(&re)[4] = *reinterpret_cast<float(*)[4]>(&tz[i][0]);
                        float(&im)[4] = *reinterpret_cast<float(*)[4]>(&tz[i][4]);
                        mma_16816<kBf16>(re, a0, a1, a2, a3, b0, b1);
                        mma_16816<kBf16>(im, i0, i1, i2, i3, b0, b1);
                    }
#pragma unroll
                    for (int i = 0; i < kTcGPerWarp; ++i) {
                        const int tile = warp_in_kg + kTcNW * i;
                        if (kTcGT == 0 || tile >= kTcGT)
                            continue;
                        const int v = (tile / kTcMT) * 8 + g8;
                        const std::uint32_t b0 = code_word<F>(hsm, ra + v),
                                            b1 = code_word<F>(hsm, rb + v);
                        float(&re)[4] = *reinterpret_cast<float(*)[4]>(&tg[i][0]);
                        float(&im)[4] = *reinterpret_cast<float(*)[4]>(&tg[i][4]);
                        mma_16816<kBf16>(re, a0, a1, a2, a3, b0, b1);
                        mma_16816<kBf16>(im, i0, i1, i2, i3, b0, b1);
                    }
                }
            });
        }
    };
    float2 gacc[kGramT > 0 ? kGramT : 1][2];
#pragma unroll
    for (int t = 0; t < kGramT; ++t)
        gacc[t][0] = gacc[t][1] = make_float2(0.0f, 0.0f);
    // Two buffers: round r + 1 is in flight while round r is used. One buffer: it is
    // refilled only once round r is done with it.
    const bool prefetch = buffers == 2;
    if constexpr (kTC) {
        tc_stage(0);
    } else if constexpr (kNarrow) {
        narrow_fetch(0);
        narrow_store(0);
    } else {
        stage(0);
    }
    const int loop_rounds = kTC ? tc_rounds : rounds;
    for (int r = 0; r < loop_rounds; ++r) {
        if constexpr (kNarrow && !kTC) {
            if (prefetch && r + 1 < rounds)
                narrow_fetch(r + 1); // decoded into the other buffer after this round
        } else if (prefetch) {
            if (r + 1 < loop_rounds) {
                if constexpr (kTC)
                    tc_stage(r + 1);
                else
                    stage(r + 1);
            } else {
                copy_async_commit(); // an empty group keeps the wait below uniform
            }
            copy_async_wait<1>(); // round r's copies have landed (this thread's)
        } else {
            copy_async_wait<0>();
        }
        __syncthreads(); // ... and everyone's
        const int chunk = r * kgroups + kg;
        const int rows = chunk < chunks ? min(C, B - chunk * C) : 0;
        if constexpr (kTC)
            tc_compute(r);
        else {
        const float2* ms = kg_smem + (r % buffers) * buffer_items;
        const float2* ys = ms + C * HS;
        // Steps of 4 antennas (past `rows` the chunk holds zeros): the step's FP64
        // tensor-core Gram products are issued first, and the products of H^H Y run while
        // they are in flight.
        const float2* yrow = ys + grp * YS;
        const float2* wrow = ms + 2 * pair;
        for (int k0 = 0; k0 < rows; k0 += 4) {
            if constexpr (kTensorGram) {
                // A = H^H: A[user g][antenna t] = conj(H[t][g]); B = H: B[antenna t][user
                // g] = H[t][g].
#pragma unroll
                for (int i = 0; i < GTW; ++i)
                    if (gram_own[i])
                        cdmma_conj(gre[i],
                                   gim[i],
                                   ms[(k0 + t4) * HS + gram_row[i] + g8],
                                   ms[(k0 + t4) * HS + gram_col[i] + g8]);
            }
#pragma unroll
            for (int b = k0; b < k0 + 4; ++b) {
                const float4 w = *reinterpret_cast<const float4*>(wrow + b * HS);
                const float2 w0 = make_float2(w.x, w.y), w1 = make_float2(w.z, w.w);
#pragma unroll
                for (int t = 0; t < kTileSymbolsPerThread; ++t) {
                    const float2 yv = yrow[(G * t) * YS + b];
                    acc[t][0] = cfmac(w0, yv, acc[t][0]);
                    acc[t][1] = cfmac(w1, yv, acc[t][1]);
                }
#pragma unroll
                for (int t = 0; t < kGramT; ++t) {
                    if (grp + G * t < UP) {
                        const float2 hv = ms[b * HS + grp + G * t];
                        gacc[t][0] = cfmac(w0, hv, gacc[t][0]);
                        gacc[t][1] = cfmac(w1, hv, gacc[t][1]);
                    }
                }
            }
        }
        } // (not kTC)
        if constexpr (kNarrow && !kTC) { // the other buffer: its last reads were round r - 1's
            if (prefetch && r + 1 < rounds)
                narrow_store(r + 1);
        }
        __syncthreads(); // every read of this buffer is done before it is refilled
        if (!prefetch && r + 1 < loop_rounds) {
            if constexpr (kTC) {
                tc_stage(r + 1);
            } else if constexpr (kNarrow) {
                narrow_fetch(r + 1);
                narrow_store(r + 1);
            } else {
                stage(r + 1);
            }
        }
    }

    // The k-group sums: k-group 0 writes its part of H^H Y straight into zs [S][UP + 1]
    // (and kFused, G into a_s), the others into their consumed buffers (the same layout,
    // tile_scratch_items); then they are added in k-group order (deterministic).
    // (tile_buffer_items: the sums and the scratch fit a k-group's buffers)
    float2* const zs = smem; // [S][UP + 1]
    // fused chol/zf: the inversion's scratch, after A
    float2* const invert_work = smem + S * (UP + 1) + UP * (UP + 1);
    if constexpr (kTC) {
        // the fragments, scaled: H^H Y by h_scale y_scale(s), G by h_scale^2 (powers of
        // two: exact)
        float2* const z_part = kg == 0 ? zs : kg_smem;
        float2* const g_part = kg == 0 ? a_s : kg_smem + S * (UP + 1);
#pragma unroll
        for (int i = 0; i < kTcPerWarp; ++i) {
            const int tile = warp_in_kg + kTcNW * i;
            const int m = tile % kTcMT, n = tile / kTcMT;
#pragma unroll
            for (int c = 0; c < 4; ++c) { // d_c: user g (+8 from c = 2), symbol 2 t (+1)
                const int u = m * 16 + g8 + (c >= 2 ? 8 : 0), sy = n * 8 + 2 * t4 + (c & 1);
                const float scale =
                    sy < count ? p.h_scale * __ldg(p.y_scales + s0 + sy) : 0.0f;
                z_part[sy * (UP + 1) + u] = make_float2(tz[i][c] * scale, tz[i][4 + c] * scale);
            }
        }
        const float g_scale = p.h_scale * p.h_scale;
#pragma unroll
        for (int i = 0; i < kTcGPerWarp; ++i) {
            const int tile = warp_in_kg + kTcNW * i;
            if (kTcGT == 0 || tile >= kTcGT)
                continue;
            const int m = tile % kTcMT, n8 = tile / kTcMT;
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int u = m * 16 + g8 + (c >= 2 ? 8 : 0), v = n8 * 8 + 2 * t4 + (c & 1);
                g_part[u * (UP + 1) + v] = make_float2(tg[i][c] * g_scale, tg[i][4 + c] * g_scale);
            }
        }
    } else {
        float2* const z_part = kg == 0 ? zs : kg_smem;
        float2* const g_part = kg == 0 ? a_s : kg_smem + S * (UP + 1);
#pragma unroll
        for (int t = 0; t < kTileSymbolsPerThread; ++t) {
            z_part[(grp + G * t) * (UP + 1) + 2 * pair] = acc[t][0];
            z_part[(grp + G * t) * (UP + 1) + 2 * pair + 1] = acc[t][1];
        }
#pragma unroll
        for (int t = 0; t < kGramT; ++t) {
            if (grp + G * t < UP) {
                g_part[(2 * pair) * (UP + 1) + grp + G * t] = gacc[t][0];
                g_part[(2 * pair + 1) * (UP + 1) + grp + G * t] = gacc[t][1];
            }
        }
#pragma unroll
        for (int i = 0; i < GTW; ++i) {
            if (!gram_own[i])
                continue;
#pragma unroll
            for (int c = 0; c < 2; ++c) { // D[g][2t + c]
                const int row = gram_row[i] + g8, col = gram_col[i] + 2 * t4 + c;
                const float2 v = make_float2(static_cast<float>(gre[i][c]),
                                             static_cast<float>(gim[i][c]));
                g_part[row * (UP + 1) + col] = v;
                if (gram_row[i] != gram_col[i]) // the lower block, G being Hermitian
                    g_part[col * (UP + 1) + row] = conj2(v);
            }
        }
    }
    __syncthreads();
    if (kgroups > 1) {
        add_kgroup_parts<UP, S, kFused>(zs, a_s, smem, kgroups, buffers, buffer_items, tid, threads);
        __syncthreads();
    }
    mark_bad_symbols<UP, S>(zs, bad_symbol, tid, threads);

    if constexpr (kFused) { // one warp (cg/cr; chol/zf of up to 16 users on compact
        // grids) or the block (other chol/zf) finishes G in a_s (whether the channel is
        // usable passes through shared memory rather than a read-back of the status byte
        // just written)
        const bool usable = finish_tile_channel<UP, S, kIterative, kCompact, base, kNarrow>(
            prep, sc, a_s, invert_work, channel_scalars, tid, threads);
        if (tid == 0)
            channel_usable = usable;
        __syncthreads();
        if (!channel_usable) {
            erase_tile();
            return; // uniform per block
        }
    }
    __syncthreads();

    // x: chol/zf (A^-1 z) and cg, tiled like H^H Y: thread (pair, grp) takes users 2 pair
    // and 2 pair + 1 of the symbols grp + G t with t % KS == kg (each k-group its share
    // of the symbols; KS divides 4), then demaps from the registers.
    auto mine = [&](int t) { return t % kgroups == kg; };
    constexpr int T = kTileSymbolsPerThread;
    float2 x[T][2];
#pragma unroll
    for (int t = 0; t < T; ++t)
        x[t][0] = x[t][1] = make_float2(0.0f, 0.0f);
    // out[i] += M v_t (t = t0 + i) for this thread's users (tile_times_rows).
    auto times_rows = [&](auto& out, int t0) {
        tile_times_rows<UP, G>(out, t0, a_s, zs, U, pair, grp, kgroups, mine);
    };
    // cg/cr: a sum over a symbol's users adds the thread's two, then the P lanes of the
    // symbol (one warp) by shuffles; mine(t) is uniform over a k-group, so every lane of
    // the warp takes part. step() as in iterate().
    auto symbol_sum = [](float v) {
#pragma unroll
        for (int off = 1; off < P; off <<= 1)
            v += __shfl_xor_sync(0xffffffffu, v, off);
        return v;
    };
    auto step = [](float num, float den) {
        return (num > 0.0f && den > 0.0f) ? num / den : 0.0f;
    };
    if (!iterative) {
        times_rows(x, 0); // x = A^-1 y_MF
    } else if (p.mode == KernelMode::cg) {
        /* li2015's CG (the iterations of iterate()) for all the thread's symbols at once:
         * A p as the product above, p kept in zs (where it starts, as y_MF), r and x in
         * registers. */
        float2 r[T][2];
        float rr[T];
#pragma unroll
        for (int t = 0; t < T; ++t) {
            if (!mine(t))
                continue;
            const float2* pt = zs + (grp + G * t) * (UP + 1) + 2 * pair;
            r[t][0] = pt[0];
            r[t][1] = pt[1];
            rr[t] = symbol_sum(cnorm(r[t][0]) + cnorm(r[t][1]));
        }
        for (int it = 0; it < p.iterations; ++it) {
            float2 w[T][2]; // A p, then the next p
#pragma unroll
            for (int t = 0; t < T; ++t)
                w[t][0] = w[t][1] = make_float2(0.0f, 0.0f);
            times_rows(w, 0);
#pragma unroll
            for (int t = 0; t < T; ++t) {
                if (!mine(t))
                    continue;
                const float2* pt = zs + (grp + G * t) * (UP + 1) + 2 * pair;
                const float2 p0 = pt[0], p1 = pt[1];
                const float alpha =
                    step(rr[t], symbol_sum(cmulc(p0, w[t][0]).x + cmulc(p1, w[t][1]).x));
                x[t][0] = cadd(x[t][0], cscale(p0, alpha));
                x[t][1] = cadd(x[t][1], cscale(p1, alpha));
                r[t][0] = csub(r[t][0], cscale(w[t][0], alpha));
                r[t][1] = csub(r[t][1], cscale(w[t][1], alpha));
                const float rr_next = symbol_sum(cnorm(r[t][0]) + cnorm(r[t][1]));
                const float beta = alpha > 0.0f ? step(rr_next, rr[t]) : 0.0f;
                w[t][0] = cadd(r[t][0], cscale(p0, beta));
                w[t][1] = cadd(r[t][1], cscale(p1, beta));
                rr[t] = rr_next;
            }
            __syncwarp(); // the symbol's lanes have read p
#pragma unroll
            for (int t = 0; t < T; ++t) {
                if (!mine(t))
                    continue;
                float2* pt = zs + (grp + G * t) * (UP + 1) + 2 * pair;
                pt[0] = w[t][0];
                pt[1] = w[t][1];
            }
            __syncwarp(); // ... and the new p is there for the next product
        }
    } else { // cr
        /* broumas2023's CR (the iterations of iterate()) the same way: r is the vector
         * that A multiplies, so r is kept in zs (where it starts, as y_MF) and p, e, m
         * and x in registers, for two of the thread's symbols at a time (they would not
         * fit the compact bound for four). */
#pragma unroll
        for (int h = 0; h < T; h += 2) {
            float2 p_[2][2], e[2][2], m[2][2];
            float rm[2], alpha[2];
#pragma unroll
            for (int i = 0; i < 2; ++i)
                m[i][0] = m[i][1] = make_float2(0.0f, 0.0f);
            times_rows(m, h);
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                if (!mine(h + i))
                    continue;
                const float2* rt = zs + (grp + G * (h + i)) * (UP + 1) + 2 * pair;
                p_[i][0] = rt[0];
                p_[i][1] = rt[1];
                e[i][0] = m[i][0];
                e[i][1] = m[i][1];
                rm[i] = symbol_sum(cmulc(rt[0], m[i][0]).x + cmulc(rt[1], m[i][1]).x);
            }
            for (int it = 0; it < p.iterations; ++it) {
                __syncwarp(); // the symbol's lanes have read r
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    if (!mine(h + i))
                        continue;
                    float2* rt = zs + (grp + G * (h + i)) * (UP + 1) + 2 * pair;
                    alpha[i] = step(rm[i], symbol_sum(cnorm(e[i][0]) + cnorm(e[i][1])));
                    x[h + i][0] = cadd(x[h + i][0], cscale(p_[i][0], alpha[i]));
                    x[h + i][1] = cadd(x[h + i][1], cscale(p_[i][1], alpha[i]));
                    rt[0] = csub(rt[0], cscale(e[i][0], alpha[i]));
                    rt[1] = csub(rt[1], cscale(e[i][1], alpha[i]));
                }
                __syncwarp(); // ... and the new r is there for the product
#pragma unroll
                for (int i = 0; i < 2; ++i)
                    m[i][0] = m[i][1] = make_float2(0.0f, 0.0f);
                times_rows(m, h);
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    if (!mine(h + i))
                        continue;
                    const float2* rt = zs + (grp + G * (h + i)) * (UP + 1) + 2 * pair;
                    const float2 r0 = rt[0], r1 = rt[1];
                    const float rm_next =
                        symbol_sum(cmulc(r0, m[i][0]).x + cmulc(r1, m[i][1]).x);
                    const float beta = alpha[i] > 0.0f ? step(rm_next, rm[i]) : 0.0f;
                    p_[i][0] = cadd(r0, cscale(p_[i][0], beta));
                    p_[i][1] = cadd(r1, cscale(p_[i][1], beta));
                    e[i][0] = cadd(m[i][0], cscale(e[i][0], beta));
                    e[i][1] = cadd(m[i][1], cscale(e[i][1], beta));
                    rm[i] = rm_next;
                }
            }
        }
    }
    // Demapping (demap_tile): x goes through zs, whose products have all been read.
    __syncthreads(); // every read of zs is done
#pragma unroll
    for (int t = 0; t < T; ++t) {
        if (!mine(t))
            continue;
#pragma unroll
        for (int k = 0; k < 2; ++k)
            zs[(grp + G * t) * (UP + 1) + 2 * pair + k] = x[t][k];
    }
    __syncthreads();
    demap_tile<UP>(p, zs, bad_symbol, U, nsc, sc, s0, count, tid, threads, llr_at, erase);
}

/*! Calls f with the tiled kernel for UP users and S = `symbols` (tile sizes are template
 * parameters: immediate shared-memory offsets in the inner loop; instantiated only where
 * they are valid for UP, and fused only where S >= UP). */
template <int UP, bool kIterative, bool kFused, bool kCompact, bool kNarrow, typename F>
void with_tiled_kernel_of(int symbols, F&& f)
{
    constexpr int smallest =
        kFused && UP > min_tile_symbols(UP) ? UP : min_tile_symbols(UP);
    switch (symbols) {
    case 8:
        if constexpr (smallest <= 8)
            return f(equalize_tiled_kernel<UP, 8, kIterative, kFused, kCompact, kNarrow>);
        break;
    case 16:
        if constexpr (smallest <= 16)
            return f(equalize_tiled_kernel<UP, 16, kIterative, kFused, kCompact, kNarrow>);
        break;
    case 32:
        if constexpr (smallest <= 32)
            return f(equalize_tiled_kernel<UP, 32, kIterative, kFused, kCompact, kNarrow>);
        break;
    case 64:
        return f(equalize_tiled_kernel<UP, 64, kIterative, kFused, kCompact, kNarrow>);
    }
    throw std::logic_error("launch_equalize: no tile of " + std::to_string(symbols) +
                           " symbols for " + std::to_string(UP) + " users");
}
//! narrow: the instantiation that reads codes (EqualizeArgs::y_codes).
template <int UP, bool kIterative, bool kFused, typename F>
void with_tiled_kernel(int symbols, bool compact, bool narrow, F&& f)
{
    if (narrow) {
        if (compact)
            with_tiled_kernel_of<UP, kIterative, kFused, true, true>(symbols, f);
        else
            with_tiled_kernel_of<UP, kIterative, kFused, false, true>(symbols, f);
    } else if (compact) {
        with_tiled_kernel_of<UP, kIterative, kFused, true, false>(symbols, f);
    } else {
        with_tiled_kernel_of<UP, kIterative, kFused, false, false>(symbols, f);
    }
}

//! Blocks per SM from which a grid takes the compact instantiation (tile_min_blocks).
constexpr int kCompactBlocksPerSm = 4;

template <int UP, bool kIterative, bool kFused = false>
void launch_tiled(const EqualizeArgs& args,
                  const TileShape& given,
                  dim3 grid,
                  cudaStream_t stream,
                  const PrepareArgs& prep = {})
{
    int device = 0, sms = 0;
    MIMODET_CUDA_CHECK(cudaGetDevice(&device));
    MIMODET_CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const bool compact = static_cast<long long>(grid.x) * grid.y >=
                         static_cast<long long>(kCompactBlocksPerSm) * sms;
    // k-groups shorten a block's antenna loop, which pays when there are few blocks to
    // hide it; a compact grid has enough, and one k-group spares the split's sums and
    // the k-group tests (small grids, such as li2015's 128 blocks, were slower with one
    // k-group). Compact grids of small tiles also stage smaller chunks (tile_chunk).
    // Same S, so the grid stays.
    const TileShape shape =
        compact
            ? tile_shape(UP, given.symbols, args.num_antennas, kIterative, kFused, true)
            : given;
    const bool narrow = args.y_codes != nullptr;
    with_tiled_kernel<UP, kIterative, kFused>(shape.symbols, compact, narrow, [&](auto kernel) {
        // Double buffering doubles the shared memory of a block: it pays only when it
        // does not add a wave of blocks, and on compact grids only when it costs no
        // resident blocks either (the NR slot's one-buffer blocks, 24 per SM instead of
        // 20, were faster although both took two waves).
        TileShape chosen = shape;
        if (shape.buffers == 2) {
            TileShape single = shape;
            single.buffers = 1;
            const long long blocks = static_cast<long long>(grid.x) * grid.y;
            auto resident_with = [&](const TileShape& t) {
                return resident_blocks(reinterpret_cast<const void*>(kernel),
                                       t.threads,
                                       tiled_shared_bytes(UP, t));
            };
            const long long resident_single = resident_with(single),
                            resident_double = resident_with(shape);
            if (waves(blocks, resident_single) < waves(blocks, resident_double) ||
                (compact && resident_single > resident_double))
                chosen = single;
        }
        // the compact kernels, and those of 128 threads or more, count on one k-group
        if ((compact || shape.threads / shape.kgroups >= 128) && chosen.kgroups != 1)
            throw std::logic_error(
                "launch_tiled: several k-groups for a one-k-group kernel");
        kernel<<<grid, chosen.threads, tiled_shared_bytes(UP, chosen), stream>>>(
            args, prep, chosen.kgroups, chosen.buffers);
    });
}

//! Raises the dynamic shared memory limit of every tiled instantiation for UP users.
template <int UP>
void set_tiled_smem_limit(int bytes)
{
    auto set = [&](auto kernel) {
        MIMODET_CUDA_CHECK(
            cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 bytes));
    };
    for (int symbols = min_tile_symbols(UP); symbols <= kMaxTileSymbols; symbols *= 2)
        for (bool compact : { false, true })
            for (bool narrow : { false, true }) {
                with_tiled_kernel<UP, false, false>(symbols, compact, narrow, set);
                with_tiled_kernel<UP, true, false>(symbols, compact, narrow, set);
                if (symbols >= UP)
                    with_tiled_kernel<UP, true, true>(symbols, compact, narrow, set);
                if (symbols >= UP)
                    with_tiled_kernel<UP, false, true>(symbols, compact, narrow, set);
            }
}

template <int UP>
void launch_tiled_for(const EqualizeArgs& args, cudaStream_t stream)
{
    // A block per subcarrier and tile of symbols; grid.y is limited to 65535, so long
    // calls are cut into slices.
    const bool iterative = args.mode == KernelMode::cg || args.mode == KernelMode::cr;
    const TileShape shape =
        tile_shape(UP, args.num_symbols, args.num_antennas, iterative);
    const std::size_t max_slice = static_cast<std::size_t>(shape.symbols) * 65535;
    const std::size_t nsc = args.row_subcarriers
                                ? args.row_subcarriers
                                : static_cast<std::size_t>(args.num_subcarriers);
    for (std::size_t first = 0; first < args.num_symbols; first += max_slice) {
        EqualizeArgs slice = args;
        slice.num_symbols = std::min(max_slice, args.num_symbols - first);
        slice.y = args.y + first * nsc * args.num_antennas;
        if (args.y_codes) {
            slice.y_codes = static_cast<const char*>(args.y_codes) +
                            first * nsc * args.num_antennas * 2 * args.code_bytes;
            slice.y_scales = args.y_scales + first;
        }
        slice.llr = args.llr + first * nsc * args.num_users * args.demap.bits;
        if (args.x_hat)
            slice.x_hat = args.x_hat + first * nsc * args.num_users;
        const std::size_t tiles = (slice.num_symbols + shape.symbols - 1) / shape.symbols;
        const dim3 grid(args.num_subcarriers, static_cast<unsigned>(tiles));
        if (iterative)
            launch_tiled<UP, true>(slice, shape, grid, stream);
        else
            launch_tiled<UP, false>(slice, shape, grid, stream);
    }
}

} // namespace

void configure_tiled_kernels(int optin)
{
    // The tiled equalize kernel sizes its tiles to stay within kTileSmemLimit.
    const int tile_limit = static_cast<int>(
        std::min<std::size_t>(kTileSmemLimit, static_cast<std::size_t>(optin)));
    set_tiled_smem_limit<4>(tile_limit);
    set_tiled_smem_limit<8>(tile_limit);
    set_tiled_smem_limit<16>(tile_limit);
    set_tiled_smem_limit<32>(tile_limit);
}

void launch_equalize_tiled(const EqualizeArgs& args, cudaStream_t stream)
{
    with_user_tile(args.num_users,
                   [&](auto up) { launch_tiled_for<decltype(up)::value>(args, stream); });
}

template <int UP>
void launch_fused_for(const EqualizeArgs& args,
                      const PrepareArgs& prep,
                      cudaStream_t stream)
{
    const bool iterative = args.mode == KernelMode::cg || args.mode == KernelMode::cr;
    const TileShape shape =
        tile_shape(UP, args.num_symbols, args.num_antennas, iterative, true);
    const dim3 grid(args.num_subcarriers, 1);
    if (iterative)
        launch_tiled<UP, true, true>(args, shape, grid, stream, prep);
    else
        launch_tiled<UP, false, true>(args, shape, grid, stream, prep);
}

/* chol/zf: A^-1 by Gauss-Jordan on the whole block (finish_channel_block;
 * finish_channel_warp, one warp, for up to 16 users on compact grids). With the Cholesky
 * factorization and the two solves per column instead (its registers, 103 against 66
 * per thread for 16 users) the fused kernel was slower than the prepare kernel and the
 * equalize kernel apart. With Gauss-Jordan, fusing pays for 17..32 users and for calls
 * of 1 or 2 symbols too (which otherwise take the direct kernel after the prepare
 * kernel): one launch and one pass over H. */
bool fused_supported(std::size_t num_symbols)
{
    return num_symbols >= 1 && num_symbols <= static_cast<std::size_t>(kMaxTileSymbols);
}

void launch_equalize_fused(const EqualizeArgs& args,
                           const PrepareArgs& prep,
                           cudaStream_t stream)
{
    if (!fused_supported(args.num_symbols))
        throw std::logic_error("launch_equalize_fused: 1 to 64 symbols (got " +
                               std::to_string(args.num_symbols) + ")");
    if (args.num_subcarriers == 0)
        return;
    with_user_tile(args.num_users, [&](auto up) {
        launch_fused_for<decltype(up)::value>(args, prep, stream);
    });
    MIMODET_CUDA_CHECK_LAUNCH("equalize_tiled_kernel (fused)");
}

} // namespace cuda
} // namespace mimodet
