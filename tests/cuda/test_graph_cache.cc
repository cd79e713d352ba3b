/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The graph cache on its own, with copies as the recurring work: run as it is on first
 * sight, captured on the second, replayed after; keys that keep changing never captured;
 * the least recently used key evicted; a failed capture leaves the streams usable; the
 * legacy stream and blocking streams served; a caller's capture left to the caller.
 * Skipped without a GPU. */

#include "gpu_skip.h"
#include <cuda/graph_cache.h>
#include <gtest/gtest.h>
#include <stdexcept>
#include <vector>

using namespace mimodet;

namespace {

//! A stream, a device array and a pinned host array of n ints.
struct Bench {
    cudaStream_t stream = nullptr;
    cuda::Buffer<int> device, host;

    explicit Bench(std::size_t n) : device(n, false), host(n, true)
    {
        MIMODET_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    }
    ~Bench() { cudaStreamDestroy(stream); }

    //! The recurring work: device[0..n) = byte `value` everywhere, then copied back.
    auto fill_and_fetch(int value, std::size_t n)
    {
        return [this, value, n](cudaStream_t s) {
            MIMODET_CUDA_CHECK(cudaMemsetAsync(device.get(), value, n * sizeof(int), s));
            MIMODET_CUDA_CHECK(cudaMemcpyAsync(
                host.get(), device.get(), n * sizeof(int), cudaMemcpyDeviceToHost, s));
        };
    }

    //! Runs `work` through the cache (after poisoning the host copy) and checks the
    //! result: every int of the first n made of the byte `value`.
    template <typename Work>
    void run(cuda::GraphCache& cache,
             const cuda::GraphKey& key,
             Work&& work,
             int value,
             std::size_t n)
    {
        std::fill(host.get(), host.get() + host.size(), -7);
        cache.launch(stream, key, work);
        MIMODET_CUDA_CHECK(cudaStreamSynchronize(stream));
        const int want = value * 0x01010101;
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(host.get()[i], want) << "int " << i;
    }
};

cuda::GraphKey key_of(int value, std::size_t n)
{
    cuda::GraphKey k;
    k.add(value).add(n);
    return k;
}

} // namespace

TEST(GraphCache, RunsFirstCapturesSecondReplaysAfter)
{
    SKIP_WITHOUT_GPU();
    Bench b(1024);
    cuda::GraphCache cache;
    b.run(cache, key_of(3, 1024), b.fill_and_fetch(3, 1024), 3, 1024);
    EXPECT_EQ(cache.captures(), 0u);
    EXPECT_EQ(cache.replays(), 0u);
    b.run(cache, key_of(3, 1024), b.fill_and_fetch(3, 1024), 3, 1024);
    EXPECT_EQ(cache.captures(), 1u);
    EXPECT_EQ(cache.replays(), 1u);
    // Another key's work in between does not disturb the first key's graph.
    b.run(cache, key_of(5, 512), b.fill_and_fetch(5, 512), 5, 512);
    for (int i = 0; i < 3; ++i)
        b.run(cache, key_of(3, 1024), b.fill_and_fetch(3, 1024), 3, 1024);
    EXPECT_EQ(cache.captures(), 1u);
    EXPECT_EQ(cache.replays(), 4u);
}

TEST(GraphCache, ChangingKeysAreNeverCapturedAndTheOldestKeyGoesFirst)
{
    SKIP_WITHOUT_GPU();
    Bench b(256);
    cuda::GraphCache cache(2);
    for (int v = 1; v <= 6; ++v)
        b.run(cache, key_of(v, 256), b.fill_and_fetch(v, 256), v, 256);
    EXPECT_EQ(cache.captures(), 0u) << "each key seen once";
    // Keys 5 and 6 are held; 5 recurs and is captured; 7 then evicts 6 (the least
    // recently used), so 6 is a first sight again.
    b.run(cache, key_of(5, 256), b.fill_and_fetch(5, 256), 5, 256);
    EXPECT_EQ(cache.captures(), 1u);
    b.run(cache, key_of(7, 256), b.fill_and_fetch(7, 256), 7, 256);
    b.run(cache, key_of(6, 256), b.fill_and_fetch(6, 256), 6, 256);
    EXPECT_EQ(cache.captures(), 1u);
    EXPECT_EQ(cache.replays(), 1u);
    b.run(cache, key_of(6, 256), b.fill_and_fetch(6, 256), 6, 256);
    EXPECT_EQ(cache.captures(), 2u) << "6 seen twice in a row is captured";
}

TEST(GraphCache, AFailedCaptureThrowsAndLeavesTheStreamUsable)
{
    SKIP_WITHOUT_GPU();
    Bench b(64);
    cuda::GraphCache cache;
    auto failing = [&](cudaStream_t s) {
        MIMODET_CUDA_CHECK(cudaMemsetAsync(b.device.get(), 1, 64 * sizeof(int), s));
        throw std::runtime_error("enqueue failed");
    };
    EXPECT_THROW(cache.launch(b.stream, key_of(1, 64), failing), std::runtime_error);
    EXPECT_THROW(cache.launch(b.stream, key_of(1, 64), failing), std::runtime_error)
        << "the second sight captures, and the capture must end on the throw";
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
    MIMODET_CUDA_CHECK(cudaStreamIsCapturing(b.stream, &status));
    EXPECT_EQ(status, cudaStreamCaptureStatusNone);
    EXPECT_EQ(cache.captures(), 0u);
    // The stream works, and the key captures once its work succeeds.
    b.run(cache, key_of(1, 64), b.fill_and_fetch(9, 64), 9, 64);
    b.run(cache, key_of(1, 64), b.fill_and_fetch(9, 64), 9, 64);
    EXPECT_EQ(cache.captures(), 1u);
}

TEST(GraphCache, CapturesOnItsOwnStreamWhateverTheCallersStream)
{
    // The legacy default stream cannot be captured, nor should a caller's blocking stream
    // be (it would stop other threads' work on the legacy stream): the cache captures on
    // a stream of its own and launches the graph on the caller's.
    SKIP_WITHOUT_GPU();
    Bench b(512);
    cudaStream_t blocking = nullptr;
    MIMODET_CUDA_CHECK(cudaStreamCreate(&blocking));
    for (cudaStream_t caller : { cudaStreamLegacy, blocking }) {
        cuda::GraphCache cache;
        for (int i = 0; i < 3; ++i) {
            std::fill(b.host.get(), b.host.get() + b.host.size(), -7);
            cache.launch(caller, key_of(4, 512), b.fill_and_fetch(4, 512));
            MIMODET_CUDA_CHECK(cudaStreamSynchronize(caller));
            for (std::size_t k = 0; k < 512; ++k)
                ASSERT_EQ(b.host.get()[k], 4 * 0x01010101)
                    << "call " << i << ", int " << k;
        }
        EXPECT_EQ(cache.captures(), 1u);
        EXPECT_EQ(cache.replays(), 2u);
    }
    cudaStreamDestroy(blocking);
}

TEST(GraphCache, WorkOnAStreamItsCallerCapturesJoinsTheCallersGraph)
{
    SKIP_WITHOUT_GPU();
    Bench b(256);
    cuda::GraphCache cache;
    std::fill(b.host.get(), b.host.get() + b.host.size(), -7);
    MIMODET_CUDA_CHECK(
        cudaStreamBeginCapture(b.stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < 3; ++i) // first sight, second, third: all into the caller's graph
        cache.launch(b.stream, key_of(6, 256), b.fill_and_fetch(6, 256));
    cudaGraph_t graph = nullptr;
    MIMODET_CUDA_CHECK(cudaStreamEndCapture(b.stream, &graph));
    EXPECT_EQ(cache.captures(), 0u);
    EXPECT_EQ(cache.replays(), 0u);
    for (std::size_t k = 0; k < 256; ++k)
        ASSERT_EQ(b.host.get()[k], -7) << "captured work ran before its graph";
    cudaGraphExec_t exec = nullptr;
    MIMODET_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    MIMODET_CUDA_CHECK(cudaGraphLaunch(exec, b.stream));
    MIMODET_CUDA_CHECK(cudaStreamSynchronize(b.stream));
    for (std::size_t k = 0; k < 256; ++k)
        ASSERT_EQ(b.host.get()[k], 6 * 0x01010101) << "int " << k;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
}
