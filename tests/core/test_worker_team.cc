/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The host-thread team behind MultiGpuDetector (one thread per GPU), tested on the CPU.
 */

#include <core/worker_team.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

using namespace mimodet;

namespace {

//! Waits until `count` reaches `target`; false after 10 s (the parts did not overlap).
bool wait_for(const std::atomic<int>& count, int target)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (count.load() < target)
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        else
            std::this_thread::yield();
    return true;
}

} // namespace

TEST(WorkerTeam, RunsEveryPartAtOnceOnThreadsThatLastAcrossRuns)
{
    constexpr int kParts = 4;
    WorkerTeam team(kParts);
    ASSERT_EQ(team.size(), 4u);
    std::vector<std::thread::id> first_ids;
    for (int round = 0; round < 50; ++round) {
        std::vector<std::thread::id> ids(kParts);
        std::atomic<int> arrived{ 0 }, timeouts{ 0 };
        team.run([&](std::size_t k) {
            ids[k] = std::this_thread::get_id();
            // Every part waits for all the others: only concurrent parts get past this.
            ++arrived;
            if (!wait_for(arrived, kParts))
                ++timeouts;
        });
        ASSERT_EQ(timeouts.load(), 0) << "round " << round << ": parts ran one by one";
        EXPECT_EQ(ids[0], std::this_thread::get_id()) << "part 0 runs on the caller";
        EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), 4u);
        if (round == 0)
            first_ids = ids;
        EXPECT_EQ(ids, first_ids) << "round " << round << ": threads were replaced";
    }
}

TEST(WorkerTeam, LowestFailingPartIsRethrownAfterEveryPartHasFinished)
{
    WorkerTeam team(3);
    std::atomic<bool> slow_part_finished{ false };
    try {
        team.run([&](std::size_t k) {
            if (k == 1)
                throw std::runtime_error("part one failed");
            if (k == 2) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                slow_part_finished = true;
                throw std::invalid_argument("part two failed");
            }
        });
        FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "part one failed");
    }
    EXPECT_TRUE(slow_part_finished.load());

    // The team is usable afterwards, and earlier errors are not reported again.
    std::atomic<int> ran{ 0 };
    team.run([&](std::size_t) { ++ran; });
    EXPECT_EQ(ran.load(), 3);
    EXPECT_THROW(team.run([&](std::size_t k) {
        if (k == 0)
            throw std::logic_error("caller's part");
    }),
                 std::logic_error);
}

TEST(WorkerTeam, OnePartRunsOnTheCallerAndZeroPartsAreRefused)
{
    WorkerTeam team(1);
    std::thread::id id;
    team.run([&](std::size_t) { id = std::this_thread::get_id(); });
    EXPECT_EQ(id, std::this_thread::get_id());
    EXPECT_THROW(WorkerTeam(0), std::invalid_argument);
}

TEST(WorkerTeam, SlicesCoverTheRangeOnceInOrder)
{
    // 3 parts, one slice each, contiguous: 10 -> [0,4) [4,8) [8,10); 2 -> [0,1) [1,2)
    // [2,2); 0 -> three empty slices.
    WorkerTeam team(3);
    for (const std::size_t total : { std::size_t(10), std::size_t(2), std::size_t(0) }) {
        std::vector<int> hits(total, 0);
        std::vector<std::pair<std::size_t, std::size_t>> slices;
        std::mutex m;
        team.run_slices(total, [&](std::size_t begin, std::size_t end) {
            std::lock_guard<std::mutex> lock(m);
            slices.emplace_back(begin, end);
            for (std::size_t i = begin; i < end; ++i)
                ++hits[i];
        });
        EXPECT_EQ(hits, std::vector<int>(total, 1)) << total;
        std::sort(slices.begin(), slices.end());
        ASSERT_EQ(slices.size(), 3u) << total;
        EXPECT_EQ(slices.front().first, 0u) << total;
        EXPECT_EQ(slices.back().second, total) << total;
        for (std::size_t k = 1; k < slices.size(); ++k)
            EXPECT_EQ(slices[k].first, slices[k - 1].second) << total;
        if (total == 10)
            EXPECT_EQ(slices,
                      (std::vector<std::pair<std::size_t, std::size_t>>{
                          { 0, 4 }, { 4, 8 }, { 8, 10 } }));
    }
}
