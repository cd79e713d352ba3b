/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The soak of the core API (docs/reliability.md): many small frames through a detector
 * with a new channel every frame, NaN bursts in the samples and the channel, N0 = 0,
 * singular channels and a detector rebuilt now and then; the process's resident memory
 * (and, through `extra_sample`, the GPU's) sampled along the way. */

#ifndef INCLUDED_MIMODET_TESTS_SOAK_H
#define INCLUDED_MIMODET_TESTS_SOAK_H

#include <mimodet/detector.h>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>
#include <unistd.h>

namespace mimodet_test {

//! Resident memory of this process in bytes (/proc/self/statm), 0 where unknown.
inline std::uint64_t resident_bytes()
{
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    if (!(statm >> size >> resident))
        return 0;
    return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

//! Built with AddressSanitizer (gcc or clang).
constexpr bool address_sanitizer()
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return false;
}

//! A count from the environment (e.g. MIMODET_SOAK_FRAMES), or `fallback`.
inline std::uint64_t env_count(const char* name, std::uint64_t fallback)
{
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

struct SoakSample {
    std::uint64_t frame;
    std::uint64_t resident;
    std::uint64_t extra; // e.g. GPU memory in use
};

struct SoakResult {
    std::vector<SoakSample> samples; // the first one after the warm-up
    std::uint64_t frames = 0, nan_sample_frames = 0, nan_channel_frames = 0, rebuilds = 0;
    std::uint64_t bad_sample_vectors = 0; // summed over the detectors
    std::uint64_t non_finite_llrs = 0;
    double seconds = 0.0;

    //! Largest growth of a sample over the first one.
    std::uint64_t growth(bool extra) const
    {
        std::uint64_t g = 0;
        for (const auto& s : samples) {
            const std::uint64_t first = extra ? samples.front().extra : samples.front().resident;
            const std::uint64_t now = extra ? s.extra : s.resident;
            g = std::max<std::uint64_t>(g, now > first ? now - first : 0);
        }
        return g;
    }
};

/*! Runs `frames` frames of one OFDM symbol each through detectors made by `make` (a new one
 * every `rebuild_every` frames); samples memory every `frames / 20` frames after the first
 * `warm_up` frames (long enough for every kind of detector `make` gives to have run once:
 * the GPU loads a kernel when it first runs). */
inline SoakResult soak(const std::function<std::unique_ptr<mimodet::Detector>()>& make,
                       const mimodet::Dims& d,
                       std::uint64_t frames,
                       std::uint64_t rebuild_every,
                       std::uint64_t warm_up,
                       const std::function<std::uint64_t()>& extra_sample = {})
{
    using mimodet::cf32;
    SoakResult r;
    std::mt19937 rng(1);
    std::normal_distribution<float> g(0.0f, 0.7f);
    constexpr int kChannels = 64; // made once: the loop measures the detector, not rand
    std::vector<std::vector<cf32>> channels(kChannels, std::vector<cf32>(d.channel_items()));
    for (auto& h : channels)
        for (auto& v : h)
            v = { g(rng), g(rng) };
    // one singular channel: every user's column the same
    for (std::size_t i = 0; i < d.channel_items(); ++i)
        channels[7][i] = channels[7][i - i % d.num_users];
    std::vector<cf32> y(d.rx_items());
    for (auto& v : y)
        v = { g(rng), g(rng) };
    std::vector<cf32> h_bad;
    std::vector<float> llr(d.llr_items());
    const float nan = std::numeric_limits<float>::quiet_NaN();

    const std::uint64_t every = std::max<std::uint64_t>(1, frames / 20);
    auto detector = make();
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t f = 0; f < frames; ++f) {
        if (f > 0 && f % rebuild_every == 0) {
            r.bad_sample_vectors += detector->stats().bad_sample_vectors;
            detector = make();
            ++r.rebuilds;
        }
        const std::vector<cf32>* h = &channels[f % kChannels];
        if (f % 1009 == 500) { // a NaN in the channel
            h_bad = *h;
            h_bad[f % h_bad.size()] = { nan, 0.0f };
            h = &h_bad;
            ++r.nan_channel_frames;
        }
        const float n0 = f % 13 == 0 ? 0.0f : 0.05f;
        detector->set_channel(h->data(), n0);
        const bool nan_burst = f % 97 == 3; // a NaN burst in the samples
        if (nan_burst) {
            y[f % y.size()] = { nan, nan };
            ++r.nan_sample_frames;
        }
        detector->detect(y.data(), 1, llr.data());
        if (nan_burst)
            y[f % y.size()] = { 0.1f, -0.2f };
        for (float v : llr)
            r.non_finite_llrs += !std::isfinite(v);
        if (f >= warm_up && (f - warm_up) % every == 0) {
            r.samples.push_back({ f, resident_bytes(), extra_sample ? extra_sample() : 0 });
        }
    }
    r.bad_sample_vectors += detector->stats().bad_sample_vectors;
    r.frames = frames;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

inline void print(const SoakResult& r, const std::string& what)
{
    std::printf("    soak %s: %llu frames in %.1f s, %llu rebuilds, %llu NaN bursts; resident "
                "%.1f MiB after warm-up, grew at most %.1f KiB",
                what.c_str(), static_cast<unsigned long long>(r.frames), r.seconds,
                static_cast<unsigned long long>(r.rebuilds),
                static_cast<unsigned long long>(r.nan_sample_frames),
                r.samples.empty() ? 0.0 : r.samples.front().resident / 1048576.0,
                r.growth(false) / 1024.0);
    if (!r.samples.empty() && r.samples.front().extra)
        std::printf("; GPU memory in use grew at most %.1f KiB", r.growth(true) / 1024.0);
    std::printf("\n");
}

} // namespace mimodet_test

#endif
