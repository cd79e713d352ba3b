/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "apsm_receiver_impl.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <limits>
#include <stdexcept>

namespace gr {
namespace mimodet {

namespace core = ::mimodet;

namespace {

const char* const kBlock = "apsm_receiver";
const char* const kTrainedTagKey = "apsm_trained";
const char* const kTrainPort = "train";

std::invalid_argument refused(const std::string& what)
{
    return std::invalid_argument(std::string(kBlock) + ": " + what);
}

//! Training symbols must be [T][K] with T >= M: checked by make() and the setter.
void check_training_symbols(const std::vector<gr_complex>& symbols,
                            std::size_t antennas,
                            std::size_t users,
                            const char* what)
{
    if (symbols.empty() || symbols.size() % users != 0)
        throw refused(std::string(what) + " must be T*K symbols ([T][K], K = " +
                      std::to_string(users) + "), a positive multiple of K; got " +
                      std::to_string(symbols.size()));
    const std::size_t t = symbols.size() / users;
    if (t < antennas)
        throw refused(std::string(what) + " give T = " + std::to_string(t) +
                      " training vectors; training needs T >= M = " +
                      std::to_string(antennas));
}

//! A periodic section must end before the next one starts.
void check_period(int period, std::size_t training_vectors)
{
    if (period > 0 && static_cast<std::size_t>(period) < training_vectors)
        throw refused("training_period " + std::to_string(period) +
                      " is shorter than a training section (T = " +
                      std::to_string(training_vectors) +
                      " vectors): every section would restart before it ends");
}

} // namespace

apsm_receiver::sptr apsm_receiver::make(int num_antennas,
                                        int num_users,
                                        const std::string& modulation,
                                        const std::vector<gr_complex>& training_symbols,
                                        int training_period,
                                        const std::string& training_tag,
                                        const std::string& backend,
                                        int window,
                                        double weight_linear,
                                        double weight_gaussian,
                                        double kernel_variance,
                                        double tolerance,
                                        bool llr_positive_means_one,
                                        float llr_clip,
                                        int device,
                                        int training_offset,
                                        int max_dictionary,
                                        int num_threads)
{
    auto positive = [](int v, const char* what) {
        if (v <= 0)
            throw refused(std::string(what) + " must be > 0, got " + std::to_string(v));
        return static_cast<std::size_t>(v);
    };
    core::ApsmConfig c;
    c.num_antennas = positive(num_antennas, "num_antennas");
    c.num_users = positive(num_users, "num_users");
    c.params.window = positive(window, "window");
    if (device < 0)
        throw refused("device must be a CUDA device ordinal >= 0, got " +
                      std::to_string(device));
    if (max_dictionary < 0)
        throw refused("max_dictionary must be >= 0 (0 = no limit), got " +
                      std::to_string(max_dictionary));
    if (training_offset < 0)
        throw refused("training_offset must be >= 0 (the item of the first section), got " +
                      std::to_string(training_offset));
    try {
        c.modulation = core::parse_modulation(modulation);
        c.backend = core::parse_backend(backend);
        c.params.weight_linear = weight_linear;
        c.params.weight_gaussian = weight_gaussian;
        c.params.kernel_variance = kernel_variance;
        c.params.tolerance = tolerance;
        c.params.max_dictionary = static_cast<std::size_t>(max_dictionary);
        c.llr_sign = llr_positive_means_one ? core::LlrSign::positive_means_one
                                            : core::LlrSign::positive_means_zero;
        c.llr_clip = llr_clip;
        c.device = device;
        c.num_threads = num_threads;
        c.validate();
    } catch (const std::invalid_argument& e) {
        throw refused(e.what());
    }
    check_training_symbols(training_symbols, c.num_antennas, c.num_users, "training_symbols");
    check_period(training_period, training_symbols.size() / c.num_users);
    return gnuradio::make_block_sptr<apsm_receiver_impl>(
        c, training_symbols, training_period, training_tag, training_offset);
}

apsm_receiver_impl::apsm_receiver_impl(const core::ApsmConfig& config,
                                       const std::vector<gr_complex>& training_symbols,
                                       int training_period,
                                       const std::string& training_tag,
                                       int training_offset)
    : gr::sync_block(kBlock,
                     gr::io_signature::make(
                         1, 1, sizeof(gr_complex) * config.num_antennas),
                     gr::io_signature::makev(
                         2,
                         2,
                         { static_cast<int>(sizeof(gr_complex) * config.num_users),
                           static_cast<int>(sizeof(float) * config.num_users *
                                            core::bits_per_symbol(config.modulation)) })),
      d_config(config),
      d_M(config.num_antennas),
      d_K(config.num_users),
      d_bits(core::bits_per_symbol(config.modulation)),
      d_period(training_period),
      d_offset(static_cast<std::uint64_t>(training_offset)),
      d_tag_key(training_tag.empty() ? pmt::PMT_NIL : pmt::intern(training_tag)),
      d_symbols(training_symbols)
{
    std::string fallback_reason;
    d_engine = core::make_apsm_detector(config, &fallback_reason);
    // A GPU that cannot hold the training section: the CPU for auto, an error for cuda.
    const std::size_t t = training_symbols.size() / d_K, limit = d_engine->max_training_symbols();
    if (limit && t > limit) {
        const std::string why = d_engine->name() + " takes at most " + std::to_string(limit) +
                                " training symbols, the section has " + std::to_string(t);
        if (config.backend != core::Backend::automatic)
            throw refused(why);
        auto cpu = config;
        cpu.backend = core::Backend::cpu;
        d_engine = core::make_apsm_detector(cpu);
        fallback_reason = why;
    }
    // One warning per process, as the detector blocks do.
    static std::once_flag warned;
    if (!fallback_reason.empty() && config.backend == core::Backend::automatic)
        std::call_once(warned, [&] {
            d_logger->warn("backend=auto: running on the CPU ({:s})", fallback_reason);
        });
    set_tag_propagation_policy(gr::block::TPP_ALL_TO_ALL);
    message_port_register_in(pmt::mp(kTrainPort));
    set_msg_handler(pmt::mp(kTrainPort),
                    [this](const pmt::pmt_t& msg) { handle_train_message(msg); });
}

void apsm_receiver_impl::check_engine_limit(std::size_t training_vectors) const
{
    const std::size_t limit = d_engine->max_training_symbols();
    if (limit && training_vectors > limit)
        throw refused(d_engine->name() + " takes at most " + std::to_string(limit) +
                      " training symbols, not " + std::to_string(training_vectors));
}

void apsm_receiver_impl::set_training_symbols(const std::vector<gr_complex>& symbols)
{
    check_training_symbols(symbols, d_M, d_K, "training symbols");
    check_period(d_period, symbols.size() / d_K);
    check_engine_limit(symbols.size() / d_K);
    std::lock_guard<std::mutex> lock(d_mutex);
    d_symbols = symbols;
}

std::vector<gr_complex> apsm_receiver_impl::training_symbols() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_symbols;
}

void apsm_receiver_impl::retrain()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_pending_start = true;
}

void apsm_receiver_impl::handle_train_message(const pmt::pmt_t& msg)
{
    // A c32vector, or a PDU (meta . c32vector).
    const pmt::pmt_t v = pmt::is_pair(msg) ? pmt::cdr(msg) : msg;
    if (!pmt::is_c32vector(v)) {
        d_logger->error("message on port '{:s}' is not a c32vector of training symbols "
                        "([T][K], K = {:d}); ignored",
                        kTrainPort,
                        d_K);
        return;
    }
    std::size_t n = 0;
    const gr_complex* p = pmt::c32vector_elements(v, n);
    std::vector<gr_complex> symbols(p, p + n);
    try {
        check_training_symbols(symbols, d_M, d_K, "the 'train' message's symbols");
        check_period(d_period, symbols.size() / d_K);
        check_engine_limit(symbols.size() / d_K);
    } catch (const std::invalid_argument& e) {
        d_logger->error("{:s}; message ignored", e.what());
        return;
    }
    std::lock_guard<std::mutex> lock(d_mutex);
    d_symbols = std::move(symbols);
    d_pending_start = true;
}

std::vector<gr_complex> apsm_receiver_impl::symbols_of_tag(const gr::tag_t& tag) const
{
    if (!pmt::is_c32vector(tag.value))
        return d_symbols;
    const std::size_t n = pmt::length(tag.value);
    if (n == 0 || n % d_K != 0) {
        d_logger->error("'{:s}' tag at item {:d}: a c32vector of {:d} values is not [T][K] "
                        "training symbols (K = {:d}); the section uses the current symbols",
                        pmt::symbol_to_string(tag.key),
                        tag.offset,
                        n,
                        d_K);
        return d_symbols;
    }
    std::size_t len = 0;
    const gr_complex* p = pmt::c32vector_elements(tag.value, len);
    std::vector<gr_complex> symbols(p, p + len);
    try { // the checks of the message's symbols
        check_training_symbols(symbols, d_M, d_K, "the tag's symbols");
        check_period(d_period, symbols.size() / d_K);
        check_engine_limit(symbols.size() / d_K);
    } catch (const std::invalid_argument& e) {
        d_logger->error("'{:s}' tag at item {:d}: {:s}; the section uses the current symbols",
                        pmt::symbol_to_string(tag.key),
                        tag.offset,
                        e.what());
        return d_symbols;
    }
    return symbols;
}

std::uint64_t apsm_receiver_impl::next_periodic_start(std::uint64_t from) const
{
    constexpr auto never = std::numeric_limits<std::uint64_t>::max();
    if (d_period < 0)
        return never;
    if (from <= d_offset)
        return d_offset;
    if (d_period == 0)
        return never;
    const auto p = static_cast<std::uint64_t>(d_period);
    return d_offset + (from - d_offset + p - 1) / p * p;
}

void apsm_receiver_impl::start_section(std::vector<gr_complex> symbols, std::uint64_t offset)
{
    if (d_collecting)
        d_logger->debug("training section from item {:d} restarted at item {:d} after {:d} "
                        "of {:d} vectors",
                        d_section_start,
                        offset,
                        d_collected,
                        d_section_symbols.size() / d_K);
    d_section_symbols = std::move(symbols);
    d_section_rx.resize(d_section_symbols.size() / d_K * d_M);
    d_collected = 0;
    d_section_start = offset;
    d_collecting = true;
}

bool apsm_receiver_impl::train_collected(std::uint64_t last_item)
{
    d_collecting = false;
    const std::size_t t = d_section_symbols.size() / d_K;
    try {
        d_engine->train(d_section_rx.data(), d_section_symbols.data(), t);
    } catch (const std::exception& e) { // bad input, or the GPU failed: the flowgraph goes on
        ++d_training_failures;
        d_logger->error("training section of items {:d}..{:d} refused ({:s}); the previous "
                        "training stays in force",
                        d_section_start,
                        last_item,
                        e.what());
        return false;
    }
    std::vector<double> n0(d_K);
    for (std::size_t k = 0; k < d_K; ++k)
        n0[k] = d_engine->noise_variance(k);
    d_trained_tags[last_item + 1] = pmt::init_f64vector(n0.size(), n0);
    return true;
}

void apsm_receiver_impl::detect(
    const gr_complex* in, int from, int to, gr_complex* sym, float* llr)
{
    if (to <= from)
        return;
    d_engine->detect(in + static_cast<std::size_t>(from) * d_M,
                     static_cast<std::size_t>(to - from),
                     sym + static_cast<std::size_t>(from) * d_K,
                     llr + static_cast<std::size_t>(from) * d_K * d_bits);
}

int apsm_receiver_impl::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star& output_items)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* sym = static_cast<gr_complex*>(output_items[0]);
    auto* llr = static_cast<float*>(output_items[1]);
    const std::uint64_t first = nitems_read(0);
    const std::uint64_t end = first + static_cast<std::uint64_t>(noutput_items);

    // Section starts by tag in this call, by item (the last tag on an item wins).
    std::map<std::uint64_t, gr::tag_t> tag_starts;
    if (!pmt::is_null(d_tag_key)) {
        std::vector<gr::tag_t> tags;
        get_tags_in_range(tags, 0, first, end, d_tag_key);
        for (const auto& t : tags)
            tag_starts[t.offset] = t;
    }

    /* Walk the items: while a section is being collected each vector is copied into its
     * buffer; otherwise jump to the next start. Detection runs in batches between the
     * points where a training completes. */
    int detected = 0;
    std::uint64_t item = first;
    while (item < end) {
        const auto tag = tag_starts.find(item);
        if (tag != tag_starts.end())
            start_section(symbols_of_tag(tag->second), item);
        else if (item == first && d_pending_start)
            start_section(d_symbols, item);
        else if (next_periodic_start(item) == item)
            start_section(d_symbols, item);
        if (item == first)
            d_pending_start = false;

        if (!d_collecting) {
            std::uint64_t next = std::min(end, next_periodic_start(item + 1));
            const auto later = tag_starts.upper_bound(item);
            if (later != tag_starts.end())
                next = std::min(next, later->first);
            item = next;
            continue;
        }
        const int at = static_cast<int>(item - first);
        std::copy(in + static_cast<std::size_t>(at) * d_M,
                  in + static_cast<std::size_t>(at + 1) * d_M,
                  d_section_rx.begin() + static_cast<std::ptrdiff_t>(d_collected * d_M));
        ++d_collected;
        if (d_collected * d_K == d_section_symbols.size()) {
            detect(in, detected, at + 1, sym, llr); // with the training in force
            detected = at + 1;
            train_collected(item);
        }
        ++item;
    }
    detect(in, detected, noutput_items, sym, llr);

    // The trainings' tags, on the first item detected with each.
    while (!d_trained_tags.empty() && d_trained_tags.begin()->first < end) {
        const auto& [offset, n0] = *d_trained_tags.begin();
        if (offset >= first) // (always: the item after a training is never skipped)
            for (int out = 0; out < 2; ++out)
                add_item_tag(out, offset, pmt::intern(kTrainedTagKey), n0, alias_pmt());
        d_trained_tags.erase(d_trained_tags.begin());
    }
    if (!d_warned_erasures) {
        const auto s = d_engine->stats();
        if (s.erased_vectors) {
            d_logger->warn("{:d} received vectors with NaN/Inf samples so far; their "
                           "outputs are 0 and their LLRs 0 (logged once; see "
                           "erased_vectors())",
                           s.erased_vectors);
            d_warned_erasures = true;
        }
    }
    return noutput_items;
}

std::uint64_t apsm_receiver_impl::trainings() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_engine->stats().trainings;
}

std::uint64_t apsm_receiver_impl::training_failures() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_training_failures;
}

std::uint64_t apsm_receiver_impl::erased_vectors() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_engine->stats().erased_vectors;
}

std::uint64_t apsm_receiver_impl::untrained_vectors() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_engine->stats().untrained_vectors;
}

std::uint64_t apsm_receiver_impl::linear_fallbacks() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_engine->stats().linear_fallbacks;
}

std::vector<double> apsm_receiver_impl::noise_variance() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    std::vector<double> n0(d_K);
    for (std::size_t k = 0; k < d_K; ++k)
        n0[k] = d_engine->noise_variance(k);
    return n0;
}

std::string apsm_receiver_impl::backend_name() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_engine->name();
}

} // namespace mimodet
} // namespace gr
