/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The uplink detector's base and its CPU implementation; the GPU one is
// lib/cuda/ofdm/cuda_uplink_detector.cc, and lib/factory chooses between them.

#include "core/box/cpu_box_detector.h"
#include "core/cpu_detector.h"
#include "core/precision/quantizing_detector.h"
#include "core/sphere/cpu_sphere_detector.h"
#include "cpu_uplink_detector.h"
#include <mimodet/precision.h>
#include <mimodet/signal_quality.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace mimodet {

DetectorConfig sized_for(const OfdmConfig& ofdm, DetectorConfig d)
{
    ofdm.validate();
    d.num_antennas = ofdm.num_antennas;
    d.num_users = ofdm.num_users;
    d.num_subcarriers = ofdm.num_subcarriers;
    d.modulation = ofdm.modulation;
    d.validate();
    return d;
}

namespace {

class CpuUplinkDetector : public UplinkDetector
{
public:
    CpuUplinkDetector(const OfdmConfig& ofdm, const DetectorConfig& detector)
        : UplinkDetector(ofdm, detector), d_receiver(ofdm), d_detector_impl(nullptr)
    {
        DetectorConfig cpu = d_detector;
        cpu.backend = Backend::cpu;
        if (cpu.sphere())
            d_detector_impl = std::make_unique<CpuSphereDetector>(cpu);
        else if (cpu.mode == DetectorMode::box)
            d_detector_impl = std::make_unique<CpuBoxDetector>(cpu);
        else
            d_detector_impl = std::make_unique<CpuDetector>(cpu);
        if (cpu.precision != Precision::fp32) // narrow storage, emulated
            d_detector_impl =
                std::make_unique<QuantizingDetector>(cpu, std::move(d_detector_impl));
    }

    using UplinkDetector::process;
    std::vector<DetectedFrame>
    process(const UplinkInput& in, const UplinkOutput& out, std::size_t& next) override
    {
        check(in, out);
        const OfdmConfig& o = d_ofdm;
        const std::size_t samples = in.samples;
        std::vector<const cf32*> antennas(in.antennas.size());
        if (in.format == SampleFormat::sc16) { // as the GPU converts them, in float
            d_converted.resize(antennas.size());
            for (std::size_t b = 0; b < antennas.size(); ++b) {
                const auto* iq = static_cast<const std::int16_t*>(in.antennas[b]);
                d_converted[b].resize(samples);
                for (std::size_t i = 0; i < samples; ++i)
                    d_converted[b][i] = cf32(static_cast<float>(iq[2 * i]) * in.sc16_scale,
                                             static_cast<float>(iq[2 * i + 1]) * in.sc16_scale);
                antennas[b] = d_converted[b].data();
            }
        } else {
            for (std::size_t b = 0; b < antennas.size(); ++b)
                antennas[b] = static_cast<const cf32*>(in.antennas[b]);
        }
        const std::size_t frame = o.frame_samples();
        const std::size_t llr_frame = o.num_data_symbols * o.dims().llr_items();
        const std::size_t bytes = llr_bytes(out.format);
        const std::size_t x_frame = o.num_data_symbols * o.dims().symbol_items();
        const std::size_t gains = o.dims().symbol_items();
        if (out.format != LlrFormat::float32)
            d_llr.resize(llr_frame);
        std::vector<DetectedFrame> frames;
        std::vector<const cf32*> at(antennas.size());
        std::size_t pos = 0;
        next = 0;
        while (frames.size() < out.max_frames && samples >= pos + frame) {
            for (std::size_t b = 0; b < at.size(); ++b)
                at[b] = antennas[b] + pos;
            std::size_t resume = 0;
            if (!d_receiver.receive(at, samples - pos, d_reception, &resume)) {
                next = pos + resume;
                return frames;
            }
            const DetectedFrame found{ pos + d_reception.frame_start,
                                       d_reception.cfo,
                                       d_reception.n0 };
            void* dst = static_cast<char*>(out.llr) + frames.size() * llr_frame * bytes;
            float* llr = out.format == LlrFormat::float32 ? static_cast<float*>(dst)
                                                          : d_llr.data();
            const std::size_t f = frames.size();
            cf32* x = out.symbols ? out.symbols + f * x_frame : nullptr;
            float* sinr = out.sinr ? out.sinr + f * gains : nullptr;
            if (found.erased()) { // as the GPU chain: LLRs 0, the detector not called
                std::fill(llr, llr + llr_frame, 0.0f);
                if (x)
                    std::fill(x, x + x_frame, cf32());
                if (sinr)
                    std::fill(sinr, sinr + gains, 0.0f);
            } else {
                d_detector_impl->set_channel(d_reception.h.data(), d_reception.n0);
                d_detector_impl->detect(d_reception.y.data(), o.num_data_symbols, llr, x);
                if (x || sinr) {
                    d_unbias.resize(gains);
                    d_sinr.resize(gains);
                    if (!d_detector_impl->equalizer_gains(d_unbias.data(), d_sinr.data())) {
                        std::fill(d_unbias.begin(), d_unbias.end(), 1.0f);
                        std::fill(d_sinr.begin(), d_sinr.end(), 0.0f);
                    }
                    if (x)
                        remove_bias(x, o.num_data_symbols, d_unbias.data(), o.dims());
                    if (sinr)
                        std::copy(d_sinr.begin(), d_sinr.end(), sinr);
                }
            }
            if (out.format == LlrFormat::int8)
                precision::llrs_to_int8(
                    llr, llr_frame, out.int8_scale, static_cast<std::int8_t*>(dst));
            else if (out.format == LlrFormat::fp16)
                precision::llrs_to_fp16(llr, llr_frame, static_cast<std::uint16_t*>(dst));
            frames.push_back(found);
            pos += d_reception.next_start;
        }
        next = pos;
        return frames;
    }

    std::string name() const override { return d_detector_impl->name(); }
    DetectorStats stats() const override { return d_detector_impl->stats(); }

private:
    OfdmReceiver d_receiver;
    OfdmReception d_reception;
    std::unique_ptr<Detector> d_detector_impl;
    std::vector<std::vector<cf32>> d_converted; //!< sc16 input as cf32
    std::vector<float> d_llr;                   //!< a frame's LLRs before narrowing
    std::vector<float> d_unbias, d_sinr;        //!< a frame's equalizer_gains
};

} // namespace

UplinkDetector::UplinkDetector(const OfdmConfig& ofdm, const DetectorConfig& detector)
    : d_ofdm(ofdm), d_detector(sized_for(ofdm, detector))
{
}

std::vector<DetectedFrame> UplinkDetector::process(const std::vector<const cf32*>& antennas,
                                                   std::size_t samples,
                                                   float* llr,
                                                   std::size_t max_frames,
                                                   std::size_t& next)
{
    UplinkInput in;
    in.antennas.assign(antennas.begin(), antennas.end());
    in.samples = samples;
    UplinkOutput out;
    out.llr = llr;
    out.max_frames = max_frames;
    return process(in, out, next);
}

void UplinkDetector::check(const UplinkInput& in, const UplinkOutput& out) const
{
    if (in.antennas.size() != d_ofdm.num_antennas)
        throw std::invalid_argument("uplink detector: " + std::to_string(in.antennas.size()) +
                                    " antenna streams for a " +
                                    std::to_string(d_ofdm.num_antennas) + "-antenna layout");
    for (const void* a : in.antennas)
        if (!a && in.samples)
            throw std::invalid_argument("uplink detector: null antenna stream");
    if (in.format == SampleFormat::sc16 &&
        (!(in.sc16_scale > 0.0f) || !std::isfinite(in.sc16_scale)))
        throw std::invalid_argument("uplink detector: sc16_scale must be > 0 and finite, got " +
                                    std::to_string(in.sc16_scale));
    if (out.max_frames && !out.llr)
        throw std::invalid_argument("uplink detector: no LLR buffer for " +
                                    std::to_string(out.max_frames) + " frames");
    if (out.format == LlrFormat::int8 &&
        (!(out.int8_scale > 0.0f) || !std::isfinite(out.int8_scale)))
        throw std::invalid_argument("uplink detector: int8_scale must be > 0 and finite, got " +
                                    std::to_string(out.int8_scale));
    if ((out.symbols || out.sinr) && d_detector.sphere())
        throw std::invalid_argument("uplink detector: equalised symbols and SINR need a "
                                    "linear estimate, which the sphere decoder (" +
                                    to_string(d_detector.mode) + ") does not make");
}

SampleFormat parse_sample_format(const std::string& name)
{
    if (name == "cf32" || name == "fc32" || name == "complex")
        return SampleFormat::cf32;
    if (name == "sc16" || name == "short" || name == "int16")
        return SampleFormat::sc16;
    throw std::invalid_argument("unknown sample format '" + name +
                                "' (expected cf32 or sc16)");
}

std::string to_string(SampleFormat f)
{
    return f == SampleFormat::sc16 ? "sc16" : "cf32";
}

std::unique_ptr<UplinkDetector> make_cpu_uplink_detector(const OfdmConfig& ofdm,
                                                         const DetectorConfig& detector)
{
    return std::make_unique<CpuUplinkDetector>(ofdm, detector);
}

} // namespace mimodet
