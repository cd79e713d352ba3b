/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <mimodet/uplink_detector.h>
#ifdef MIMODET_HAVE_CUDA
#include "../cuda/cuda_ofdm_chain.h"
#endif
#include <algorithm>
#include <stdexcept>

namespace mimodet {

namespace {

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

class CpuUplinkDetector : public UplinkDetector
{
public:
    CpuUplinkDetector(const OfdmConfig& ofdm, const DetectorConfig& detector)
        : UplinkDetector(ofdm, detector), d_receiver(ofdm), d_detector_impl(nullptr)
    {
        DetectorConfig cpu = d_detector;
        cpu.backend = Backend::cpu;
        d_detector_impl = make_detector(cpu);
    }

    std::vector<DetectedFrame> process(const std::vector<const cf32*>& antennas,
                                       std::size_t samples,
                                       float* llr,
                                       std::size_t max_frames,
                                       std::size_t& next) override
    {
        const OfdmConfig& o = d_ofdm;
        if (antennas.size() != o.num_antennas)
            throw std::invalid_argument(
                "uplink detector: " + std::to_string(antennas.size()) +
                " antenna streams for a " + std::to_string(o.num_antennas) +
                "-antenna layout");
        const std::size_t frame = o.frame_samples();
        const std::size_t llr_frame = o.num_data_symbols * o.dims().llr_items();
        std::vector<DetectedFrame> frames;
        std::vector<const cf32*> at(antennas.size());
        std::size_t pos = 0;
        next = 0;
        while (frames.size() < max_frames && samples - pos >= frame) {
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
            float* out = llr + frames.size() * llr_frame;
            if (found.erased()) { // as the GPU chain: LLRs 0, the detector not called
                std::fill(out, out + llr_frame, 0.0f);
            } else {
                d_detector_impl->set_channel(d_reception.h.data(), d_reception.n0);
                d_detector_impl->detect(d_reception.y.data(), o.num_data_symbols, out);
            }
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
};

#ifdef MIMODET_HAVE_CUDA
class CudaUplinkDetector : public UplinkDetector
{
public:
    CudaUplinkDetector(const OfdmConfig& ofdm, const DetectorConfig& detector)
        : UplinkDetector(ofdm, detector),
          d_chain(ofdm, d_detector, chain_options(d_detector))
    {
    }

    std::vector<DetectedFrame> process(const std::vector<const cf32*>& antennas,
                                       std::size_t samples,
                                       float* llr,
                                       std::size_t max_frames,
                                       std::size_t& next) override
    {
        cuda::ChainOutputs out;
        out.max_frames = max_frames;
        out.llr = llr;
        const std::vector<const void*> at(antennas.begin(), antennas.end());
        const auto found =
            d_chain.process(at, cuda::SampleFormat::cf32, samples, out, &next);
        std::vector<DetectedFrame> frames;
        for (const auto& f : found)
            frames.push_back({ f.start, f.cfo, f.n0 });
        return frames;
    }

    std::string name() const override { return "cuda-" + to_string(d_detector.mode); }
    DetectorStats stats() const override { return d_chain.detector_stats(); }

private:
    static cuda::ChainOptions chain_options(const DetectorConfig& d)
    {
        cuda::ChainOptions options;
        options.device = d.devices.empty() ? 0 : d.devices.front();
        return options;
    }
    cuda::CudaOfdmChain d_chain;
};
#endif

//! The GPU chain, or nullptr with the reason when it cannot run here.
std::unique_ptr<UplinkDetector>
try_gpu(const OfdmConfig& ofdm, const DetectorConfig& detector, std::string& why_not)
{
    if (!gpu_available(&why_not))
        return nullptr;
#ifdef MIMODET_HAVE_CUDA
    try {
        return std::make_unique<CudaUplinkDetector>(ofdm, detector);
    } catch (const std::exception& e) {
        why_not = e.what();
    }
#endif
    return nullptr;
}

} // namespace

UplinkDetector::UplinkDetector(const OfdmConfig& ofdm, const DetectorConfig& detector)
    : d_ofdm(ofdm), d_detector(sized_for(ofdm, detector))
{
}

std::unique_ptr<UplinkDetector> make_uplink_detector(const OfdmConfig& ofdm,
                                                     const DetectorConfig& detector,
                                                     std::string* fallback_reason)
{
    const DetectorConfig sized = sized_for(ofdm, detector);
    std::string why_not;
    switch (sized.backend) {
    case Backend::cpu:
        return std::make_unique<CpuUplinkDetector>(ofdm, sized);
    case Backend::cuda:
        if (auto gpu = try_gpu(ofdm, sized, why_not))
            return gpu;
        throw std::runtime_error("backend 'cuda' requested but unusable: " + why_not);
    case Backend::automatic:
        if (auto gpu = try_gpu(ofdm, sized, why_not))
            return gpu;
        if (fallback_reason)
            *fallback_reason = why_not;
        return std::make_unique<CpuUplinkDetector>(ofdm, sized);
    }
    throw std::logic_error("make_uplink_detector: unknown backend");
}

} // namespace mimodet
