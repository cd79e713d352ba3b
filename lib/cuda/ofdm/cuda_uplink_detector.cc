/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cuda_uplink_detector.h"
#include "ofdm_chain.h"
#include <mimodet/signal_quality.h>
#include <vector>

namespace mimodet {
namespace cuda {

namespace {

class CudaUplinkDetector : public UplinkDetector
{
public:
    CudaUplinkDetector(const OfdmConfig& ofdm, const DetectorConfig& detector)
        : UplinkDetector(ofdm, detector),
          d_chain(ofdm, d_detector, chain_options(d_detector))
    {
    }

    using UplinkDetector::process;
    std::vector<DetectedFrame>
    process(const UplinkInput& in, const UplinkOutput& out, std::size_t& next) override
    {
        check(in, out);
        // Only the scales in use were checked (check()); the others keep the defaults.
        d_chain.set_scales(in.format == SampleFormat::sc16 ? in.sc16_scale
                                                           : UplinkInput{}.sc16_scale,
                           out.format == LlrFormat::int8 ? out.int8_scale
                                                         : UplinkOutput{}.int8_scale);
        ChainOutputs to;
        to.max_frames = out.max_frames;
        switch (out.format) {
        case LlrFormat::float32:
            to.llr = static_cast<float*>(out.llr);
            break;
        case LlrFormat::fp16:
            to.llr_fp16 = static_cast<std::uint16_t*>(out.llr);
            break;
        case LlrFormat::int8:
            to.llr_int8 = static_cast<std::int8_t*>(out.llr);
            break;
        }
        // Displays: x_hat straight into out.symbols, made bias-free here with the gains.
        const Dims dims = d_ofdm.dims();
        const std::size_t gains = dims.symbol_items();
        to.x_hat = out.symbols;
        if (out.symbols || out.sinr) {
            d_unbias.resize(out.max_frames * gains);
            to.unbias = d_unbias.data();
            if (!out.sinr)
                d_sinr.resize(out.max_frames * gains);
            to.sinr = out.sinr ? out.sinr : d_sinr.data();
        }
        const auto found = d_chain.process(in.antennas, in.format, in.samples, to, &next);
        if (out.symbols)
            for (std::size_t f = 0; f < found.size(); ++f)
                remove_bias(out.symbols + f * d_ofdm.num_data_symbols * gains,
                            d_ofdm.num_data_symbols,
                            d_unbias.data() + f * gains,
                            dims);
        std::vector<DetectedFrame> frames;
        for (const auto& f : found)
            frames.push_back({ f.start, f.cfo, f.n0 });
        return frames;
    }

    std::string name() const override
    {
        // As the CPU chain's QuantizingDetector says it: "cuda-chol-fp16".
        return "cuda-" + to_string(d_detector.mode) +
               (d_detector.precision == Precision::fp32
                    ? std::string()
                    : "-" + to_string(d_detector.precision));
    }
    DetectorStats stats() const override { return d_chain.detector_stats(); }

private:
    static ChainOptions chain_options(const DetectorConfig& d)
    {
        ChainOptions options;
        options.device = d.devices.empty() ? 0 : d.devices.front();
        return options;
    }
    CudaOfdmChain d_chain;
    std::vector<float> d_unbias, d_sinr; //!< the frames' equalizer gains (displays)
};

} // namespace

std::unique_ptr<UplinkDetector> make_cuda_uplink_detector(const OfdmConfig& ofdm,
                                                          const DetectorConfig& detector)
{
    return std::make_unique<CudaUplinkDetector>(ofdm, detector);
}

} // namespace cuda
} // namespace mimodet
