/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The GPU's narrow storage (lib/cuda/precision/quantize.cu: in-place rounding, decoding of
// codes) against lib/core/precision's, bit for bit, and the GPU detector's float and
// encoded input against the emulation. Skipped without a GPU.

#include "core/precision/precision.h"
#include "cuda/precision/quantize.h"
#include "gpu_skip.h"
#include <cuda/cuda_detector.h>
#include <cuda_runtime_api.h>
#include <mimodet/ber_sim.h>
#include <mimodet/channel_sim.h>
#include <mimodet/precision.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <memory>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

using namespace mimodet;

namespace {

//! 32x8 16-QAM at 14 dB, 24 subcarriers x 11 symbols (3 chunks of 4 symbols below).
ChannelSimConfig chunked_sim()
{
    ChannelSimConfig s;
    s.num_antennas = 32;
    s.num_users = 8;
    s.num_subcarriers = 24;
    s.symbols_per_frame = 11;
    s.modulation = Modulation::qam16;
    s.snr_db = 14.0;
    return s;
}

//! A frame's channel and symbols rounded as the emulation rounds them (hq, yq) and as
//! codes with their decode scales (hc, hs; yc, ys): a block per channel, one per symbol.
struct NarrowFrame {
    std::vector<cf32> hq, yq;
    std::vector<unsigned char> hc, yc;
    float hs = 1.0f;
    std::vector<float> ys;
};
NarrowFrame narrow_frame(Precision p, const Frame& f, const Dims& d, std::size_t n)
{
    NarrowFrame e;
    const std::size_t cb = precision::code_bytes(p), item = d.rx_items();
    e.hq.resize(d.channel_items());
    e.yq.resize(n * item);
    e.hc.resize(2 * d.channel_items() * cb);
    e.yc.resize(2 * n * item * cb);
    e.ys.resize(n);
    precision::quantize_block(p, f.h.data(), d.channel_items(), e.hq.data());
    e.hs = precision::encode_block(p, f.h.data(), d.channel_items(), e.hc.data());
    for (std::size_t s = 0; s < n; ++s) {
        precision::quantize_block(p, f.y.data() + s * item, item, e.yq.data() + s * item);
        e.ys[s] = precision::encode_block(p, f.y.data() + s * item, item, e.yc.data() + 2 * s * item * cb);
    }
    return e;
}

/*! A chunked_sim frame on a GPU engine that takes 3 chunks a call, its channel set, and
 * the float LLRs of detect(): what the narrow-LLR tests round on the CPU. */
struct ChunkedGpu {
    Frame f;
    std::size_t n = 0; //!< symbols
    std::unique_ptr<cuda::CudaDetector> det;
    std::vector<float> llr;
};
ChunkedGpu chunked_gpu(DetectorMode mode)
{
    ChunkedGpu g;
    const ChannelSimConfig sim = chunked_sim();
    ChannelSimulator(sim).next_frame(g.f);
    g.n = sim.symbols_per_frame;
    const DetectorConfig cfg = detector_config_for(sim, mode, 3, Backend::cuda);
    cuda::EngineOptions options;
    options.chunk_bytes = 4 * cfg.dims().rx_items() * sizeof(cf32); // 3 chunks
    g.det = std::make_unique<cuda::CudaDetector>(cfg, options);
    g.det->set_channel(g.f.h.data(), g.f.n0);
    g.llr.resize(g.n * cfg.dims().llr_items());
    g.det->detect(g.f.y.data(), g.n, g.llr.data());
    return g;
}

} // namespace

TEST(CudaQuantize, EqualsTheCpuBitForBit)
{
    SKIP_WITHOUT_GPU();
    std::mt19937 rng(21);
    for (Precision p : { Precision::fp16, Precision::bf16, Precision::fp8_e4m3,
                         Precision::fp8_e5m2, Precision::fp32 }) {
        for (float power : { 1e-30f, 3e-4f, 1.0f, 7e3f, 1e30f }) {
            SCOPED_TRACE(to_string(p) + " power " + std::to_string(power));
            const std::size_t block = 3000, blocks = 7;
            std::normal_distribution<float> g(0.0f, power);
            std::vector<cf32> v(block * blocks);
            for (std::size_t i = 0; i < v.size(); ++i) // blocks of different levels
                v[i] = cf32(g(rng), g(rng)) * std::ldexp(1.0f, static_cast<int>(i / block) - 3);
            v[5] = cf32(NAN, 1.0f);
            v[block + 9] = cf32(2.0f, INFINITY);
            v[2 * block + 1] = cf32(0.0f, -0.0f);
            std::vector<cf32> want(v.size());
            for (std::size_t b = 0; b < blocks; ++b)
                precision::quantize_block(p, v.data() + b * block, block, want.data() + b * block);
            cuda::Buffer<cf32> d(v.size(), false);
            cuda::copy_to_device(d.get(), v.data(), d.bytes());
            cuda::quantize_blocks(d.get(), block, blocks, p);
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
            std::vector<cf32> got(v.size());
            cuda::copy_to_host(got.data(), d.get(), d.bytes());
            std::size_t differ = 0;
            for (std::size_t i = 0; i < v.size(); ++i) // NaN == NaN bitwise
                differ += std::memcmp(&got[i], &want[i], sizeof(cf32)) != 0;
            EXPECT_EQ(differ, 0u);
        }
    }
}

TEST(CudaQuantize, DecodesEveryCodeAsTheCpu)
{
    SKIP_WITHOUT_GPU();
    for (Precision p : { Precision::fp16, Precision::bf16, Precision::fp8_e4m3,
                         Precision::fp8_e5m2 }) {
        SCOPED_TRACE(to_string(p));
        const std::size_t bytes = precision::code_bytes(p), codes = std::size_t{ 1 } << (8 * bytes);
        // every code as a real part, beside another as the imaginary part; 4 blocks
        std::vector<unsigned char> c(2 * codes * bytes);
        for (std::size_t i = 0; i < codes; ++i)
            for (std::size_t part = 0; part < 2; ++part) {
                const std::uint32_t code = static_cast<std::uint32_t>(part ? (i * 7 + 3) % codes : i);
                std::memcpy(c.data() + (2 * i + part) * bytes, &code, bytes); // little endian
            }
        const std::size_t blocks = 4, block = codes / blocks;
        const std::vector<float> scales = { 1.0f, 0x1p-20f, 0x1p+30f, 0x1p-126f };
        std::vector<cf32> want(codes);
        for (std::size_t b = 0; b < blocks; ++b)
            precision::decode_block(p, c.data() + 2 * b * block * bytes, block, scales[b], want.data() + b * block);
        cuda::Buffer<unsigned char> d_codes(c.size(), false);
        cuda::Buffer<float> d_scales(blocks, false);
        cuda::Buffer<cf32> d_out(codes, false);
        cuda::copy_to_device(d_codes.get(), c.data(), c.size());
        cuda::copy_to_device(d_scales.get(), scales.data(), d_scales.bytes());
        cuda::decode_blocks(d_codes.get(), p, block, blocks, d_scales.get(), 1.0f, d_out.get(), nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        std::vector<cf32> got(codes);
        cuda::copy_to_host(got.data(), d_out.get(), d_out.bytes());
        std::size_t differ = 0;
        for (std::size_t i = 0; i < codes; ++i)
            for (int part = 0; part < 2; ++part) {
                const float g = part ? got[i].imag() : got[i].real();
                const float w = part ? want[i].imag() : want[i].real();
                differ += std::isnan(w) ? !std::isnan(g) : std::memcmp(&g, &w, sizeof g) != 0;
            }
        EXPECT_EQ(differ, 0u);
    }
}

// The device's LLR rounding against the CPU's on the edges a detector's LLRs rarely
// reach: ties, subnormals, saturation, infinity, NaN, -0; and every binary16 value's
// neighbourhood (each code's value and the midpoints around it).
TEST(CudaQuantize, NarrowLlrRoundingEqualsTheCpuOnEveryEdge)
{
    SKIP_WITHOUT_GPU();
    std::vector<float> llr{ 0.0f,  -0.0f,     1.0f,     -2.5f,  0.1f,      65504.0f,
                            65519.0f, 65520.0f, 1e6f,   -INFINITY, INFINITY, NAN,
                            3e-8f, 1e-8f,     0x1p-25f, 2049.0f, 2051.0f,   0.0625f,
                            0.1875f, 15.87f,  -1e30f,   126.5f,  -126.5f,   127.49f };
    for (std::uint32_t code = 0; code < 0x7c00u; code += 7) { // finite positive halves
        const float v = precision::decode_value(Precision::fp16, code);
        const float next = precision::decode_value(Precision::fp16, code + 1);
        for (float x : { v, -v, (v + next) / 2, -(v + next) / 2 })
            llr.push_back(x);
    }
    cuda::Buffer<float> d_llr(llr.size(), false);
    cuda::Buffer<std::uint16_t> d16(llr.size(), false);
    cuda::Buffer<std::int8_t> d8(llr.size(), false);
    cuda::copy_to_device(d_llr.get(), llr.data(), d_llr.bytes());
    cuda::llrs_to_fp16(d_llr.get(), llr.size(), d16.get(), nullptr);
    cuda::llrs_to_int8(d_llr.get(), llr.size(), 8.0f, d8.get(), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<std::uint16_t> got16(llr.size()), want16(llr.size());
    std::vector<std::int8_t> got8(llr.size()), want8(llr.size());
    cuda::copy_to_host(got16.data(), d16.get(), d16.bytes());
    cuda::copy_to_host(got8.data(), d8.get(), d8.bytes());
    precision::llrs_to_fp16(llr.data(), llr.size(), want16.data());
    precision::llrs_to_int8(llr.data(), llr.size(), 8.0f, want8.data());
    std::size_t differ16 = 0, differ8 = 0;
    for (std::size_t i = 0; i < llr.size(); ++i) {
        differ16 += got16[i] != want16[i];
        differ8 += got8[i] != want8[i];
        if (got16[i] != want16[i] && differ16 < 5)
            ADD_FAILURE() << "fp16 of " << llr[i] << ": GPU " << got16[i] << ", CPU "
                          << want16[i];
    }
    EXPECT_EQ(differ16, 0u);
    EXPECT_EQ(differ8, 0u);
}

// The GPU detector with a narrow DetectorConfig::precision, fed float32 (rounded on the
// device) or codes (decoded on the device), gives the LLRs of the float32 GPU detector fed
// the emulation's values, bit for bit: every mode family, several chunks, pinned and
// pageable buffers.
TEST(CudaQuantize, FloatAndEncodedInputGiveTheEmulationsLlrs)
{
    SKIP_WITHOUT_GPU();
    const ChannelSimConfig sim = chunked_sim();
    Frame f;
    ChannelSimulator(sim).next_frame(f);
    const std::size_t n = sim.symbols_per_frame;
    for (DetectorMode mode : { DetectorMode::chol, DetectorMode::cg, DetectorMode::zf,
                               DetectorMode::box, DetectorMode::sfsd })
        for (Precision p : { Precision::fp16, Precision::bf16, Precision::fp8_e4m3,
                             Precision::fp8_e5m2 }) {
            SCOPED_TRACE(to_string(mode) + " " + to_string(p));
            DetectorConfig cfg = detector_config_for(sim, mode, 3, Backend::cuda);
            const Dims d = cfg.dims();
            cuda::EngineOptions options;
            options.chunk_bytes = 4 * d.rx_items() * sizeof(cf32); // 3 chunks
            // the reference: float32 on the emulation's values
            const NarrowFrame e = narrow_frame(p, f, d, n);
            const auto &hq = e.hq, &yq = e.yq;
            std::vector<float> want(n * d.llr_items());
            {
                cuda::CudaDetector ref(cfg, options);
                ref.set_channel(hq.data(), f.n0);
                ref.detect(yq.data(), n, want.data());
            }
            cfg.precision = p;
            cuda::CudaDetector det(cfg, options);
            EXPECT_EQ(det.name(), "cuda-" + to_string(mode) + "-" + to_string(p));
            std::vector<float> got(want.size());
            det.set_channel(f.h.data(), f.n0);
            det.detect(f.y.data(), n, got.data());
            EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                << "float input";
            // codes, pageable and pinned
            const auto &hc = e.hc, &yc = e.yc;
            const auto& ys = e.ys;
            const float hs = e.hs;
            std::fill(got.begin(), got.end(), 99.0f);
            det.set_channel_encoded(hc.data(), hs, f.n0);
            det.detect_encoded(yc.data(), ys.data(), n, got.data());
            EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                << "encoded input";
            cuda::Buffer<unsigned char> pinned_y(yc.size(), true);
            cuda::Buffer<float> pinned_llr(got.size(), true);
            std::memcpy(pinned_y.get(), yc.data(), yc.size());
            det.detect_encoded(pinned_y.get(), ys.data(), n, pinned_llr.get());
            EXPECT_EQ(std::memcmp(pinned_llr.get(), want.data(), got.size() * sizeof(float)), 0)
                << "encoded input, pinned";
            EXPECT_EQ(det.stats().symbols, 3 * n);
        }
}

// The device API on codes (the tiled kernels reading them: a channel's fused first call,
// then tiled calls; a call of 2 symbols decodes first) against the float32 device API on
// the emulation's values, bit for bit; sizes where the kernels copy pairs of values and
// where they cannot (odd B and U).
TEST(CudaQuantize, DeviceCodesGiveTheEmulationsLlrs)
{
    SKIP_WITHOUT_GPU();
    for (auto [b, u] : { std::pair<std::size_t, std::size_t>{ 32, 8 }, { 33, 7 }, { 64, 16 } })
        for (DetectorMode mode : { DetectorMode::chol, DetectorMode::cg, DetectorMode::cr,
                                   DetectorMode::zf, DetectorMode::box })
            for (Precision p : { Precision::fp16, Precision::bf16, Precision::fp8_e4m3,
                                 Precision::fp8_e5m2 })
                // N0 = 0: every subcarrier loaded, where chol's fused kernel reads H
                // again (from the codes: the float H is not decoded). Not cg/cr, which
                // do not read it again: their large LLRs at N0 = 0 differ by the tensor
                // cores' rounding beyond this tolerance (one, 64x16 fp8_e4m3, on an H100)
                for (bool zero_n0 : { false, true }) {
                    if (zero_n0 && (mode == DetectorMode::cg || mode == DetectorMode::cr))
                        continue;
                    SCOPED_TRACE(std::to_string(b) + "x" + std::to_string(u) + " " +
                                 to_string(mode) + " " + to_string(p) +
                                 (zero_n0 ? " N0 = 0" : ""));
                    ChannelSimConfig sim;
                    sim.num_antennas = b;
                    sim.num_users = u;
                    sim.num_subcarriers = 20;
                    sim.symbols_per_frame = 33;
                    sim.modulation = Modulation::qam16;
                    sim.snr_db = 14.0;
                    Frame f;
                    ChannelSimulator(sim).next_frame(f);
                    if (zero_n0)
                        f.n0 = 0.0f;
                    DetectorConfig cfg = detector_config_for(sim, mode, 3, Backend::cuda);
                    const Dims d = cfg.dims();
                    const std::size_t n = sim.symbols_per_frame, cb = precision::code_bytes(p);
                    const NarrowFrame e = narrow_frame(p, f, d, n);
                    const auto &hq = e.hq, &yq = e.yq;
                    const auto &hc = e.hc, &yc = e.yc;
                    const auto& ys = e.ys;
                    const float hs = e.hs;
                    cuda::Buffer<cf32> d_hq(hq.size(), false), d_yq(yq.size(), false);
                    cuda::Buffer<unsigned char> d_hc(hc.size(), false), d_yc(yc.size(), false);
                    cuda::Buffer<float> d_ys(n, false), d_want(n * d.llr_items(), false), d_got(n * d.llr_items(), false);
                    cuda::copy_to_device(d_hq.get(), hq.data(), d_hq.bytes());
                    cuda::copy_to_device(d_yq.get(), yq.data(), d_yq.bytes());
                    cuda::copy_to_device(d_hc.get(), hc.data(), d_hc.bytes());
                    cuda::copy_to_device(d_yc.get(), yc.data(), d_yc.bytes());
                    cuda::copy_to_device(d_ys.get(), ys.data(), d_ys.bytes());
                    cuda::CudaDetector ref(cfg, {});
                    DetectorConfig narrow = cfg;
                    narrow.precision = p;
                    cuda::CudaDetector det(narrow, {});
                    ref.set_channel_device(d_hq.get(), f.n0);
                    det.set_channel_device_encoded(d_hc.get(), hs, f.n0);
                    // calls of 11 (the fused first call), 2 (decoded), 20 symbols
                    std::size_t first = 0;
                    for (std::size_t count : { 11, 2, 20 }) {
                        const std::size_t y_off = first * d.rx_items(), llr_off = first * d.llr_items();
                        ref.detect_device(d_yq.get() + y_off, count, d_want.get() + llr_off);
                        det.detect_device_encoded(d_yc.get() + 2 * y_off * cb, d_ys.get() + first, count,
                                                  d_got.get() + llr_off);
                        first += count;
                    }
                    ref.synchronize();
                    det.synchronize();
                    std::vector<float> want(d_want.size()), got(d_got.size());
                    cuda::copy_to_host(want.data(), d_want.get(), d_want.bytes());
                    cuda::copy_to_host(got.data(), d_got.get(), d_got.bytes());
                    // 16 users and tiles of 32 symbols or more (the call of 20) take the
                    // tensor cores: float sums in another order, so to float rounding
                    std::size_t differ = 0, far = 0;
                    for (std::size_t i = 0; i < got.size(); ++i) {
                        differ += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
                        far += !(std::abs(got[i] - want[i]) <= 2e-3f * std::max(1.0f, std::abs(want[i])));
                    }
                    if (u < 16 || mode == DetectorMode::zf || mode == DetectorMode::box) {
                        EXPECT_EQ(differ, 0u);
                    }
                    EXPECT_EQ(far, 0u);
                    EXPECT_EQ(det.stats().bad_sample_vectors, 0u);
                    if (zero_n0) {
                        EXPECT_EQ(det.stats().regularized_subcarriers, sim.num_subcarriers);
                    }
                }
}

// The tensor-core path (16 and 32 users, tiles of 32 or 64 symbols: H^H Y and G from the
// codes by mma) against the float32 kernels on the emulation's values: the LLRs agree to
// float rounding, and the fused first call and a formed channel's call both take it.
TEST(CudaQuantize, TensorCorePathAgreesWithTheFloatKernels)
{
    SKIP_WITHOUT_GPU();
    for (std::size_t u : { 16, 32 })
        for (DetectorMode mode : { DetectorMode::chol, DetectorMode::cg })
            for (Precision p : { Precision::fp16, Precision::bf16, Precision::fp8_e4m3,
                                 Precision::fp8_e5m2 }) {
                SCOPED_TRACE(std::to_string(u) + " users " + to_string(mode) + " " + to_string(p));
                ChannelSimConfig sim;
                sim.num_antennas = 128;
                sim.num_users = u;
                sim.num_subcarriers = 96;
                sim.symbols_per_frame = 64;
                sim.modulation = Modulation::qam16;
                sim.snr_db = 12.0;
                Frame f;
                ChannelSimulator(sim).next_frame(f);
                DetectorConfig cfg = detector_config_for(sim, mode, 3, Backend::cuda);
                const Dims d = cfg.dims();
                const std::size_t n = sim.symbols_per_frame;
                const NarrowFrame e = narrow_frame(p, f, d, n);
                const auto &hq = e.hq, &yq = e.yq;
                const auto &hc = e.hc, &yc = e.yc;
                const auto& ys = e.ys;
                const float hs = e.hs;
                cuda::Buffer<cf32> d_hq(hq.size(), false), d_yq(yq.size(), false);
                cuda::Buffer<unsigned char> d_hc(hc.size(), false), d_yc(yc.size(), false);
                cuda::Buffer<float> d_ys(n, false), d_llr(2 * n * d.llr_items(), false);
                cuda::copy_to_device(d_hq.get(), hq.data(), d_hq.bytes());
                cuda::copy_to_device(d_yq.get(), yq.data(), d_yq.bytes());
                cuda::copy_to_device(d_hc.get(), hc.data(), d_hc.bytes());
                cuda::copy_to_device(d_yc.get(), yc.data(), d_yc.bytes());
                cuda::copy_to_device(d_ys.get(), ys.data(), d_ys.bytes());
                cuda::CudaDetector ref(cfg, {});
                DetectorConfig narrow = cfg;
                narrow.precision = p;
                cuda::CudaDetector det(narrow, {});
                ref.set_channel_device(d_hq.get(), f.n0);
                ref.detect_device(d_yq.get(), n, d_llr.get()); // fused
                det.set_channel_device_encoded(d_hc.get(), hs, f.n0);
                det.detect_device_encoded(d_yc.get(), d_ys.get(), n, d_llr.get() + n * d.llr_items());
                ref.synchronize();
                det.synchronize();
                std::vector<float> llr(d_llr.size());
                cuda::copy_to_host(llr.data(), d_llr.get(), d_llr.bytes());
                // and again on the formed channel (the tiled kernel without the channel)
                det.detect_device_encoded(d_yc.get(), d_ys.get(), n, d_llr.get());
                det.synchronize();
                std::vector<float> again(d_llr.size());
                cuda::copy_to_host(again.data(), d_llr.get(), d_llr.bytes());
                const std::size_t m = n * d.llr_items();
                std::size_t far = 0, far_again = 0, flips = 0;
                double worst = 0.0;
                for (std::size_t i = 0; i < m; ++i) {
                    const float want = llr[i], got = llr[m + i];
                    const float tol = 2e-3f * std::max(1.0f, std::abs(want));
                    far += !(std::abs(got - want) <= tol);
                    far_again += !(std::abs(again[i] - want) <= tol);
                    flips += std::abs(want) > 1e-2f && (got > 0) != (want > 0);
                    worst = std::max(worst, static_cast<double>(std::abs(got - want)) / std::max(1.0f, std::abs(want)));
                }
                EXPECT_EQ(far, 0u) << "worst relative difference " << worst;
                EXPECT_EQ(far_again, 0u);
                EXPECT_EQ(flips, 0u);
            }
}

// detect_int8 on the GPU: the float LLRs rounded on the device (precision::llrs_to_int8)
// and downloaded as bytes, equal to the CPU's rounding of the float detect(), bit for bit:
// several chunks, pageable and pinned buffers, two scales; a bad scale is refused.
TEST(CudaQuantize, Int8LlrsAreTheRoundedFloatLlrs)
{
    SKIP_WITHOUT_GPU();
    for (DetectorMode mode : { DetectorMode::chol, DetectorMode::box }) {
        SCOPED_TRACE(to_string(mode));
        ChunkedGpu g = chunked_gpu(mode);
        const Frame& f = g.f;
        const std::size_t n = g.n;
        cuda::CudaDetector& det = *g.det;
        const std::vector<float>& llr = g.llr;
        for (float scale : { 8.0f, 0.5f }) {
            std::vector<std::int8_t> want(llr.size()), got(llr.size(), 99);
            precision::llrs_to_int8(llr.data(), llr.size(), scale, want.data());
            det.detect_int8(f.y.data(), n, got.data(), scale);
            EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << "scale " << scale;
            cuda::Buffer<cf32> pinned_y(f.y.size(), true);
            cuda::Buffer<std::int8_t> pinned_llr(got.size(), true);
            std::copy(f.y.begin(), f.y.end(), pinned_y.get());
            det.detect_int8(pinned_y.get(), n, pinned_llr.get(), scale);
            EXPECT_EQ(std::memcmp(pinned_llr.get(), want.data(), got.size()), 0)
                << "pinned, scale " << scale;
        }
        std::vector<std::int8_t> out(llr.size());
        EXPECT_THROW(det.detect_int8(f.y.data(), n, out.data(), 0.0f), std::invalid_argument);
        EXPECT_THROW(det.detect_int8(f.y.data(), n, out.data(), NAN), std::invalid_argument);
    }
}

// detect_fp16 on the GPU: the float LLRs as binary16 codes rounded on the device
// (precision::llrs_to_fp16), bit for bit, pageable and pinned, several chunks.
TEST(CudaQuantize, Fp16LlrsAreTheRoundedFloatLlrs)
{
    SKIP_WITHOUT_GPU();
    for (DetectorMode mode : { DetectorMode::chol, DetectorMode::cg }) {
        SCOPED_TRACE(to_string(mode));
        ChunkedGpu g = chunked_gpu(mode);
        const Frame& f = g.f;
        const std::size_t n = g.n;
        cuda::CudaDetector& det = *g.det;
        const std::vector<float>& llr = g.llr;
        std::vector<std::uint16_t> want(llr.size()), got(llr.size(), 0x1234);
        precision::llrs_to_fp16(llr.data(), llr.size(), want.data());
        det.detect_fp16(f.y.data(), n, got.data());
        EXPECT_EQ(got, want);
        cuda::Buffer<cf32> pinned_y(f.y.size(), true);
        cuda::Buffer<std::uint16_t> pinned_llr(got.size(), true);
        std::copy(f.y.begin(), f.y.end(), pinned_y.get());
        det.detect_fp16(pinned_y.get(), n, pinned_llr.get());
        EXPECT_EQ(std::memcmp(pinned_llr.get(), want.data(), want.size() * 2), 0) << "pinned";
        // fp16 and int8 alternated on the same slots, three times each (the second and
        // third replay their captured graphs): each call's own format
        std::vector<std::int8_t> want8(llr.size()), got8(llr.size());
        precision::llrs_to_int8(llr.data(), llr.size(), 8.0f, want8.data());
        const std::uint64_t replays = det.graph_replays();
        for (int round = 0; round < 3; ++round) {
            std::fill(got.begin(), got.end(), std::uint16_t(0x1234));
            std::fill(got8.begin(), got8.end(), std::int8_t(99));
            det.detect_int8(f.y.data(), n, got8.data(), 8.0f);
            EXPECT_EQ(got8, want8) << "round " << round;
            det.detect_fp16(f.y.data(), n, got.data());
            EXPECT_EQ(got, want) << "round " << round;
        }
        if (mode == DetectorMode::chol) { // (cg: graphs where its launches are captured)
            EXPECT_GT(det.graph_replays(), replays);
        }
    }
}

// submit_llrs (what the detector blocks call): queued on page-locked buffers, rounded
// on the device, ready after complete(); at once (false) on pageable ones.
TEST(CudaQuantize, SubmittedNarrowLlrsLandAfterComplete)
{
    SKIP_WITHOUT_GPU();
    ChunkedGpu g = chunked_gpu(DetectorMode::chol);
    const Frame& f = g.f;
    const std::size_t n = g.n;
    cuda::CudaDetector& det = *g.det;
    const std::vector<float>& llr = g.llr;
    std::vector<std::int8_t> want8(llr.size());
    std::vector<std::uint16_t> want16(llr.size());
    precision::llrs_to_int8(llr.data(), llr.size(), 2.0f, want8.data());
    precision::llrs_to_fp16(llr.data(), llr.size(), want16.data());
    cuda::Buffer<cf32> y(f.y.size(), true);
    std::copy(f.y.begin(), f.y.end(), y.get());
    cuda::Buffer<std::int8_t> out8(llr.size(), true);
    cuda::Buffer<std::uint16_t> out16(llr.size(), true);
    EXPECT_TRUE(det.submit_llrs(y.get(), n, out8.get(), LlrFormat::int8, 2.0f));
    det.complete();
    EXPECT_EQ(std::memcmp(out8.get(), want8.data(), want8.size()), 0);
    EXPECT_TRUE(det.submit_llrs(y.get(), n, out16.get(), LlrFormat::fp16));
    det.complete();
    EXPECT_EQ(std::memcmp(out16.get(), want16.data(), 2 * want16.size()), 0);
    std::vector<std::int8_t> pageable(llr.size());
    EXPECT_FALSE(det.submit_llrs(f.y.data(), n, pageable.data(), LlrFormat::int8, 2.0f));
    EXPECT_EQ(pageable, want8);
    cuda::Buffer<float> out32(llr.size(), true);
    EXPECT_TRUE(det.submit_llrs(y.get(), n, out32.get(), LlrFormat::float32));
    det.complete();
    EXPECT_EQ(std::memcmp(out32.get(), llr.data(), llr.size() * sizeof(float)), 0);
    EXPECT_THROW(det.submit_llrs(y.get(), n, out8.get(), LlrFormat::int8, 0.0f),
                 std::invalid_argument);
    EXPECT_EQ(det.stats().symbols, 5 * n);
}

// fp32 codes (binary32 values times a scale) through the host's encoded calls: decoded on
// the device, never sent to the narrow kernels, which take 16- and 8-bit codes only.
TEST(CudaQuantize, Fp32CodesAreDecodedFirst)
{
    SKIP_WITHOUT_GPU();
    ChannelSimConfig sim;
    sim.num_antennas = 64;
    sim.num_users = 16;
    sim.num_subcarriers = 32;
    sim.symbols_per_frame = 40;
    sim.modulation = Modulation::qam16;
    sim.snr_db = 14.0;
    Frame f;
    ChannelSimulator(sim).next_frame(f);
    const std::size_t n = sim.symbols_per_frame;
    const DetectorConfig cfg = detector_config_for(sim, DetectorMode::chol, 3, Backend::cuda);
    const Dims d = cfg.dims();
    cuda::CudaDetector det(cfg);
    std::vector<float> want(n * d.llr_items()), got(want.size());
    det.set_channel(f.h.data(), f.n0);
    det.detect(f.y.data(), n, want.data());
    const NarrowFrame e = narrow_frame(Precision::fp32, f, d, n);
    const auto &hc = e.hc, &yc = e.yc;
    const auto& ys = e.ys;
    const float hs = e.hs;
    det.set_channel_encoded(hc.data(), hs, f.n0);
    det.detect_encoded(yc.data(), ys.data(), n, got.data());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
    EXPECT_THROW(det.detect_encoded(yc.data(), nullptr, n, got.data()), std::invalid_argument);
    EXPECT_THROW(det.set_channel_encoded(hc.data(), 0.0f, f.n0), std::invalid_argument);
}
