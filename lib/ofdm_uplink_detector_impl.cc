/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "ofdm_uplink_detector_impl.h"
#include "core/cpu_threads.h"
#include "detector_block.h"
#include "erasure_warning.h"
#include <gnuradio/io_signature.h>
#include <mimodet/layout.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace gr {
namespace mimodet {

namespace {
// GPU: samples of all antennas per process() call, and a cap on frames per call.
constexpr std::size_t kGpuBatchBytes = std::size_t(256) << 20;
constexpr std::size_t kGpuMaxBatchFrames = 64;
} // namespace

ofdm_uplink_detector::sptr ofdm_uplink_detector::make(int num_antennas,
                                                      int num_users,
                                                      int fft_size,
                                                      int cp_length,
                                                      int num_subcarriers,
                                                      int num_data_symbols,
                                                      const std::string& modulation,
                                                      const std::string& mode,
                                                      int iterations,
                                                      const std::string& backend,
                                                      double samp_rate,
                                                      bool llr_positive_means_one,
                                                      float llr_clip,
                                                      int device,
                                                      const std::string& precision,
                                                      const std::string& sample_type,
                                                      double sc16_scale,
                                                      const std::string& llr_type,
                                                      double llr_int8_scale,
                                                      bool equalized_output,
                                                      bool quality_output,
                                                      int num_threads)
{
    const std::string name = "ofdm_uplink_detector";
    if (!(samp_rate >= 0.0) || !std::isfinite(samp_rate))
        throw std::invalid_argument(name +
                                    ": samp_rate must be >= 0 (0: ignore rx_time), "
                                    "got " +
                                    std::to_string(samp_rate));
    if (iterations < 0)
        throw std::invalid_argument(name + ": iterations must be >= 0");
    // (checked as the float the chain takes: 1e-50 would become 0)
    if (!(static_cast<float>(sc16_scale) > 0.0f) ||
        !std::isfinite(static_cast<float>(sc16_scale)))
        throw std::invalid_argument(name + ": sc16_scale must be > 0 and finite, got " +
                                    std::to_string(sc16_scale));
    if (!(static_cast<float>(llr_int8_scale) > 0.0f) ||
        !std::isfinite(static_cast<float>(llr_int8_scale)))
        throw std::invalid_argument(name + ": llr_int8_scale must be > 0 and finite, got " +
                                    std::to_string(llr_int8_scale));
    ::mimodet::OfdmConfig ofdm = ofdm_config_of(name,
                                                num_antennas,
                                                num_users,
                                                fft_size,
                                                cp_length,
                                                num_subcarriers,
                                                num_data_symbols);
    ::mimodet::DetectorConfig det;
    ::mimodet::SampleFormat sample_format{};
    ::mimodet::LlrFormat llr_format{};
    try {
        ofdm.modulation = ::mimodet::parse_modulation(modulation);
        det.mode = ::mimodet::parse_detector_mode(mode);
        det.backend = ::mimodet::parse_backend(backend);
        det.precision = ::mimodet::parse_precision(precision);
        sample_format = ::mimodet::parse_sample_format(sample_type);
        llr_format = ::mimodet::parse_llr_format(llr_type);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(name + ": " + e.what());
    }
    det.iterations = static_cast<unsigned>(iterations);
    det.llr_sign = llr_positive_means_one ? ::mimodet::LlrSign::positive_means_one
                                          : ::mimodet::LlrSign::positive_means_zero;
    det.llr_clip = llr_clip;
    det.devices = { device };
    if (num_threads < 0 || num_threads > ::mimodet::kMaxCpuThreads)
        throw std::invalid_argument(name + ": num_threads must be from 0 to " +
                                    std::to_string(::mimodet::kMaxCpuThreads) + ", got " +
                                    std::to_string(num_threads));
    det.num_threads = num_threads;
    if ((equalized_output || quality_output) && det.sphere())
        throw std::invalid_argument(name + ": equalized_output and quality_output need a "
                                           "linear estimate, which mode " +
                                    mode + " does not make");
    std::string fallback;
    auto chain = ::mimodet::make_uplink_detector(ofdm, det, &fallback);
    auto block = gnuradio::make_block_sptr<ofdm_uplink_detector_impl>(
        std::move(chain),
        samp_rate,
        sample_format,
        static_cast<float>(sc16_scale),
        llr_format,
        static_cast<float>(llr_int8_scale),
        equalized_output,
        quality_output);
    if (!fallback.empty())
        block->d_logger->warn("backend=auto: no usable GPU ({:s}); running on the CPU",
                              fallback);
    return block;
}

ofdm_uplink_detector_impl::ofdm_uplink_detector_impl(
    std::unique_ptr<::mimodet::UplinkDetector> chain,
    double samp_rate,
    ::mimodet::SampleFormat sample_format,
    float sc16_scale,
    ::mimodet::LlrFormat llr_format,
    float llr_int8_scale,
    bool equalized_output,
    bool quality_output)
    : gr::block(
          "ofdm_uplink_detector",
          gr::io_signature::make(static_cast<int>(chain->ofdm().num_antennas),
                                 static_cast<int>(chain->ofdm().num_antennas),
                                 sample_format == ::mimodet::SampleFormat::sc16
                                     ? 2 * sizeof(std::int16_t)
                                     : sizeof(gr_complex)),
          llrs_out(chain->detector(),
                   llr_items{ llr_format, llr_int8_scale },
                   extra_outputs{ equalized_output, quality_output })),
      d_chain(std::move(chain)),
      d_config(d_chain->ofdm()),
      d_gaps(samp_rate),
      d_on_gpu(d_chain->name().rfind("cuda", 0) == 0),
      d_equalized(equalized_output),
      d_quality_on(quality_output)
{
    message_port_register_out(pmt::mp(quality_port()));
    if (d_quality_on)
        d_quality = std::make_unique<::mimodet::SignalQuality>(d_config.dims(),
                                                               d_config.modulation);
    d_input.antennas.resize(d_config.num_antennas);
    d_input.format = sample_format;
    d_input.sc16_scale = sc16_scale;
    d_output.format = llr_format;
    d_output.int8_scale = llr_int8_scale;
    set_output_multiple(static_cast<int>(d_config.num_data_symbols));
    // N_data items per frame of samples: GNU Radio sizes the input buffers from it
    // (twice a frame's samples), see ofdm_uplink_receiver.
    set_relative_rate(d_config.num_data_symbols, d_config.frame_samples());
    set_tag_propagation_policy(TPP_DONT);
    if (d_on_gpu) {
        // Each process() call costs the GPU chain a round trip or two whatever its
        // frames, so it wants many frames per call; GNU Radio's buffers of two frames
        // gave it half a frame per call (docs/performance.md for the batch size). A block cannot size its input buffers; GNU
        // Radio makes them at least 2 (frame + history) samples, so a history of a
        // batch of frames leaves room for about one batch more (the history samples
        // themselves are never read). The output buffer holds two batches' LLRs (a call
        // gets at most half of it).
        const std::size_t frame = d_config.frame_samples();
        const std::size_t frame_bytes =
            frame * d_config.num_antennas * input_signature()->sizeof_stream_item(0);
        d_batch_frames =
            std::clamp<std::size_t>(kGpuBatchBytes / frame_bytes, 1, kGpuMaxBatchFrames);
        set_history(static_cast<unsigned>(d_batch_frames * frame + 1));
        set_min_output_buffer(
            static_cast<long>(2 * d_batch_frames * d_config.num_data_symbols));
    }
}

void ofdm_uplink_detector_impl::forecast(int, gr_vector_int& ninput_items_required)
{
    std::fill(ninput_items_required.begin(),
              ninput_items_required.end(),
              static_cast<int>(std::max(d_config.frame_samples(), d_need) + history() - 1));
}

int ofdm_uplink_detector_impl::general_work(int noutput_items,
                                            gr_vector_int& ninput_items,
                                            gr_vector_const_void_star& input_items,
                                            gr_vector_void_star& output_items)
{
    const std::size_t nd = d_config.num_data_symbols, frame = d_config.frame_samples();
    const std::uint64_t first = nitems_read(0);
    // The first sample not consumed yet is after the history (never read).
    const std::size_t skip = history() - 1;
    const std::size_t available = static_cast<std::size_t>(std::max<long>(
        0,
        *std::min_element(ninput_items.begin(), ninput_items.end()) -
            static_cast<long>(skip)));
    std::vector<gr::tag_t> times;
    if (d_gaps.enabled())
        get_tags_in_range(
            times, 0, first, first + available, pmt::intern(::mimodet::kRxTimeTagKey));
    const std::size_t usable =
        d_gaps.samples_before_gap(times, first, available, d_logger);

    const std::size_t item_bytes = input_signature()->sizeof_stream_item(0);
    for (std::size_t b = 0; b < d_input.antennas.size(); ++b)
        d_input.antennas[b] = static_cast<const char*>(input_items[b]) + skip * item_bytes;
    d_input.samples = usable;
    std::size_t next = 0;
    const std::size_t max_frames = static_cast<std::size_t>(noutput_items) / nd;
    std::vector<::mimodet::DetectedFrame> found;
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        if (d_on_gpu)
            d_pins.pin_stream_buffers(*this, d_logger);
        d_output.llr = output_items[0];
        d_output.max_frames = max_frames;
        const std::size_t items = d_config.dims().symbol_items();
        if (d_equalized) {
            d_output.symbols = static_cast<gr_complex*>(output_items[1]);
        } else if (d_quality_on) {
            d_symbols.resize(max_frames * nd * items);
            d_output.symbols = d_symbols.data();
        }
        if (d_quality_on) {
            d_sinr.resize(max_frames * items);
            d_output.sinr = d_sinr.data();
        }
        found = d_chain->process(d_input, d_output, next);
        const auto now = std::chrono::steady_clock::now();
        if (!found.empty() && !d_warned_bad_inputs && now >= d_next_check) {
            warn_once_about_bad_inputs();
            d_next_check = now + std::chrono::seconds(1);
        }
    }
    for (std::size_t f = 0; f < found.size(); ++f) {
        const std::uint64_t item = nitems_written(0) + f * nd;
        const std::uint64_t start = first + found[f].start;
        for (const auto& [key, value] :
             frame_tags(d_frames, start, found[f].cfo, found[f].n0, d_gaps))
            add_item_tag(0, item, key, value);
        if (found[f].erased()) {
            d_erased_items += nd;
            d_logger->error("frame {:d} (first sample {:d}): N0 is not finite ({:g}), "
                            "NaN/Inf samples in the frame; its {:d} LLR items are 0 "
                            "(counted in erased_items())",
                            static_cast<std::uint64_t>(d_frames),
                            start,
                            found[f].n0,
                            nd);
        }
        if (d_quality_on)
            publish_quality(f, output_items);
        ++d_frames;
        d_last_cfo = found[f].cfo;
        d_last_n0 = found[f].n0;
    }
    // Before a gap nothing more will arrive: unless the output space stopped the search,
    // what is left (nothing, or a frame the gap cuts) is dropped.
    std::size_t consumed = next;
    if (usable < available && (found.size() < max_frames || usable - consumed < frame))
        consumed = usable;
    // The search ran and could neither find nor drop anything: it needs more samples.
    d_need = consumed == 0 && found.empty() && max_frames > 0 ? available + 1 : 0;
    consume_each(static_cast<int>(consumed));
    return static_cast<int>(found.size() * nd);
}

void ofdm_uplink_detector_impl::publish_quality(std::size_t f,
                                                gr_vector_void_star& output_items)
{
    const std::size_t nd = d_config.num_data_symbols, u = d_config.num_users;
    const std::size_t items = d_config.dims().symbol_items();
    const std::size_t port = d_equalized ? 2 : 1;
    d_quality->reset();
    d_quality->set_sinr(d_sinr.data() + f * items);
    d_quality->add(d_output.symbols + f * nd * items,
                   nd,
                   static_cast<float*>(output_items[port]) + f * nd * u,
                   static_cast<float*>(output_items[port + 1]) + f * nd * u);
    std::vector<float> sinr, evm;
    for (const auto& t : d_quality->totals()) {
        sinr.push_back(static_cast<float>(t.sinr_db));
        evm.push_back(static_cast<float>(t.evm_percent));
    }
    pmt::pmt_t dict = pmt::make_dict();
    dict = pmt::dict_add(dict, pmt::mp("frame"), pmt::from_uint64(d_frames));
    dict = pmt::dict_add(dict, pmt::mp("symbols"), pmt::from_uint64(nd));
    dict = pmt::dict_add(dict, pmt::mp("sinr_db"), pmt::init_f32vector(sinr.size(), sinr));
    dict = pmt::dict_add(dict, pmt::mp("evm_percent"), pmt::init_f32vector(evm.size(), evm));
    message_port_pub(pmt::mp(quality_port()), dict);
}

bool ofdm_uplink_detector_impl::stop()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    warn_once_about_bad_inputs(); // what the last second's frames erased
    d_pins.release();             // before GNU Radio frees its buffers
    return true;
}

::mimodet::DetectorStats ofdm_uplink_detector_impl::stats() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_chain->stats();
}

void ofdm_uplink_detector_impl::warn_once_about_bad_inputs()
{
    if (!d_warned_bad_inputs)
        d_warned_bad_inputs = warn_about_erasures(d_logger, d_chain->stats());
}

} // namespace mimodet
} // namespace gr
