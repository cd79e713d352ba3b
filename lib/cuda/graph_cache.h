/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Internal to lib/cuda: recurring stream work replayed as CUDA graphs. */

#ifndef INCLUDED_MIMODET_GRAPH_CACHE_H
#define INCLUDED_MIMODET_GRAPH_CACHE_H

#include "cuda_check.h"
#include <type_traits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mimodet {
namespace cuda {

/*! What a piece of stream work depends on, as bytes: every pointer, size and parameter
 * that its copies and launches take. Two pieces of work with equal keys must enqueue the
 * same operations with the same arguments. */
class GraphKey
{
public:
    template <typename T>
    GraphKey& add(const T& value)
    {
        static_assert(std::has_unique_object_representations_v<T> ||
                          std::is_floating_point_v<T>,
                      "GraphKey: fields one by one (no padding bytes in the key)");
        d_bytes.append(reinterpret_cast<const char*>(&value), sizeof(T));
        return *this;
    }
    bool operator==(const GraphKey& other) const { return d_bytes == other.d_bytes; }

private:
    std::string d_bytes;
};

/*! Replays stream work that recurs as a CUDA graph: launch(stream, key, enqueue) runs
 * enqueue(stream) as it is the first time a key is seen, captures it into a graph the
 * second time (the work recurs) and from then on launches the instantiated graph on
 * `stream`, one call instead of the copies and launches and the host-side choices of
 * their configurations. The capture runs on a stream of the cache's own (non-blocking),
 * never on the caller's: a caller's stream may be the legacy one, which cannot capture,
 * or a blocking one, whose capture would stop other threads' work on the legacy stream.
 * A stream that its caller is capturing gets the work as it is (it joins the caller's
 * graph). Work whose key keeps changing (new caller buffers on every call)
 * is never captured: it costs a look-up. At most `capacity` keys are kept, the least
 * recently used one going first; an executable graph still in flight when it goes is
 * freed by the driver once it completes. The graphs hold no allocation of their own
 * beyond the driver's; the memory their copies and kernels touch must outlive the
 * entries that name it (the key names it, so a new buffer is a new key). */
class GraphCache
{
public:
    explicit GraphCache(std::size_t capacity = 64) : d_capacity(capacity) {}
    ~GraphCache() { clear(); }
    GraphCache(const GraphCache&) = delete;
    GraphCache& operator=(const GraphCache&) = delete;

    template <typename Enqueue>
    void launch(cudaStream_t stream, const GraphKey& key, Enqueue&& enqueue)
    {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        MIMODET_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
        if (status != cudaStreamCaptureStatusNone) {
            enqueue(stream);
            return;
        }
        Entry* entry = find(key);
        if (entry == nullptr) { // first sight: remember the key, run the work as it is
            remember(key);
            enqueue(stream);
            return;
        }
        entry->last_use = ++d_clock;
        if (entry->exec == nullptr)
            entry->exec = capture(enqueue);
        MIMODET_CUDA_CHECK(cudaGraphLaunch(entry->exec, stream));
        ++d_replays;
    }

    //! Graph launches so far (each one the replay of a captured piece of work).
    std::uint64_t replays() const { return d_replays; }
    //! Graphs captured and instantiated so far.
    std::uint64_t captures() const { return d_captures; }

    //! Forgets every key and destroys every executable graph (in flight: freed later)
    //! and the capture stream; on the device the graphs were made on.
    void clear() noexcept
    {
        for (Entry& e : d_entries)
            if (e.exec)
                cudaGraphExecDestroy(e.exec);
        d_entries.clear();
        if (d_capture_stream)
            cudaStreamDestroy(d_capture_stream);
        d_capture_stream = nullptr;
    }

private:
    struct Entry {
        GraphKey key;
        cudaGraphExec_t exec = nullptr; //!< null until the key is seen a second time
        std::uint64_t last_use = 0;
    };

    Entry* find(const GraphKey& key)
    {
        for (Entry& e : d_entries)
            if (e.key == key)
                return &e;
        return nullptr;
    }

    void remember(const GraphKey& key)
    {
        if (d_capacity == 0)
            return;
        if (d_entries.size() >= d_capacity) {
            Entry* oldest = &d_entries.front();
            for (Entry& e : d_entries)
                if (e.last_use < oldest->last_use)
                    oldest = &e;
            if (oldest->exec)
                cudaGraphExecDestroy(oldest->exec);
            *oldest = Entry{ key, nullptr, ++d_clock };
            return;
        }
        d_entries.push_back(Entry{ key, nullptr, ++d_clock });
    }

    //! enqueue(s) captured on the cache's stream s (thread-local mode: other threads'
    //! CUDA calls go on) and instantiated; a failure ends the capture, so the stream is
    //! usable again, and throws.
    template <typename Enqueue>
    cudaGraphExec_t capture(Enqueue& enqueue)
    {
        if (d_capture_stream == nullptr)
            MIMODET_CUDA_CHECK(
                cudaStreamCreateWithFlags(&d_capture_stream, cudaStreamNonBlocking));
        const cudaStream_t stream = d_capture_stream;
        MIMODET_CUDA_CHECK(
            cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        cudaGraph_t graph = nullptr;
        try {
            enqueue(stream);
        } catch (...) {
            cudaStreamEndCapture(stream, &graph);
            if (graph)
                cudaGraphDestroy(graph);
            cudaGetLastError(); // the capture's error was the one thrown
            throw;
        }
        MIMODET_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        cudaGraphExec_t exec = nullptr;
        const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        if (err != cudaSuccess)
            throw_cuda_error(err, "cudaGraphInstantiate", __FILE__, __LINE__);
        ++d_captures;
        return exec;
    }

    std::size_t d_capacity;
    std::vector<Entry> d_entries;
    cudaStream_t d_capture_stream = nullptr; //!< created at the first capture
    std::uint64_t d_clock = 0, d_replays = 0, d_captures = 0;
};

} // namespace cuda
} // namespace mimodet

#endif
