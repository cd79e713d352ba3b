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
#include <algorithm>
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

} // namespace

UplinkDetector::UplinkDetector(const OfdmConfig& ofdm, const DetectorConfig& detector)
    : d_ofdm(ofdm), d_detector(sized_for(ofdm, detector))
{
}

std::unique_ptr<UplinkDetector> make_cpu_uplink_detector(const OfdmConfig& ofdm,
                                                         const DetectorConfig& detector)
{
    return std::make_unique<CpuUplinkDetector>(ofdm, detector);
}

} // namespace mimodet
