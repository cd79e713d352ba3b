/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A fuzz target without libFuzzer: replays every file of a corpus, then runs random
 * mutations of them (a short, seeded fuzz run that any compiler builds, for ctest).
 * Each input is written to ./<program>.last-input before it runs (one file per target:
 * ctest runs them side by side in one folder), so a crash leaves the input
 * that caused it behind: copy it into the corpus as a regression test.
 *
 *   fuzz_X_replay [--mutations N] [--seed S] corpus_dir_or_file...
 */

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes read_file(const std::filesystem::path& p)
{
    std::ifstream f(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string last_input = "fuzz-last-input"; // <program>.last-input, set in main()

void run(const Bytes& input)
{
    {
        std::ofstream f(last_input, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(input.data()),
                static_cast<std::streamsize>(input.size()));
    }
    LLVMFuzzerTestOneInput(input.data(), input.size());
}

//! One to four of libFuzzer's simplest mutations.
Bytes mutate(Bytes b, std::mt19937& rng)
{
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
        const std::size_t at = b.empty() ? 0 : rng() % b.size();
        switch (rng() % 6) {
        case 0:
            if (!b.empty())
                b[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
            break;
        case 1:
            if (!b.empty())
                b[at] = static_cast<std::uint8_t>(rng());
            break;
        case 2:
            b.insert(b.begin() + static_cast<std::ptrdiff_t>(at),
                     static_cast<std::uint8_t>(rng()));
            break;
        case 3:
            if (!b.empty())
                b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
            break;
        case 4: // repeat a piece
            if (!b.empty()) {
                const std::size_t len = 1 + rng() % std::min<std::size_t>(16, b.size() - at);
                Bytes piece(b.begin() + static_cast<std::ptrdiff_t>(at),
                            b.begin() + static_cast<std::ptrdiff_t>(at + len));
                b.insert(b.begin() + static_cast<std::ptrdiff_t>(rng() % (b.size() + 1)),
                         piece.begin(), piece.end());
            }
            break;
        default:
            b.resize(at);
        }
    }
    if (b.size() > 4096)
        b.resize(4096);
    return b;
}

} // namespace

int main(int argc, char** argv)
{
    long mutations = 0;
    unsigned seed = 1;
    std::vector<Bytes> corpus;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--mutations" || arg == "--seed") && i + 1 < argc) {
            (arg == "--seed" ? seed = static_cast<unsigned>(std::atol(argv[++i]))
                             : mutations = std::atol(argv[++i]));
            continue;
        }
        const std::filesystem::path p(arg);
        if (std::filesystem::is_directory(p)) {
            // by name: a seed picks the same inputs on every file system
            std::vector<std::filesystem::path> files;
            for (const auto& e : std::filesystem::directory_iterator(p))
                if (e.is_regular_file())
                    files.push_back(e.path());
            std::sort(files.begin(), files.end());
            for (const auto& f : files)
                corpus.push_back(read_file(f));
        } else if (std::filesystem::is_regular_file(p)) {
            corpus.push_back(read_file(p));
        } else {
            std::fprintf(stderr, "%s: no such corpus file or directory: %s\n", argv[0],
                         arg.c_str());
            return 2;
        }
    }
    if (corpus.empty()) {
        std::fprintf(stderr, "usage: %s [--mutations N] [--seed S] corpus...\n", argv[0]);
        return 2;
    }
    last_input = std::filesystem::path(argv[0]).filename().string() + ".last-input";
    const auto start = std::chrono::steady_clock::now();
    for (const Bytes& input : corpus)
        run(input);
    std::mt19937 rng(seed);
    for (long i = 0; i < mutations; ++i) {
        run(mutate(corpus[rng() % corpus.size()], rng));
        if ((i + 1) % 500 == 0)
            std::printf("%ld of %ld mutations\n", i + 1, mutations);
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%zu corpus inputs and %ld mutations (seed %u) ran clean in %.1f s\n",
                corpus.size(), mutations, seed, s);
    std::filesystem::remove(last_input);
    return 0;
}
