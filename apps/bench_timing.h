/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Helpers that keep mimodet_bench's event timings honest (no CUDA type in this header).
 */

#ifndef INCLUDED_MIMODET_BENCH_TIMING_H
#define INCLUDED_MIMODET_BENCH_TIMING_H

namespace mimodet {
namespace bench {

/*! Evicts the L2 cache before a timed region (writes a buffer twice its size on
 * `stream`), so small configurations are timed from device memory as the floors assume.
 */
class L2Flusher
{
public:
    L2Flusher();
    ~L2Flusher();
    void flush(void* stream);

private:
    void* d_buffer = nullptr;
    unsigned long d_bytes = 0;
};

/*! Holds `stream` busy for about `microseconds` on the GPU, so that the launches queued
 * after it are all issued by the host before the timed region starts: events then time
 * the GPU's work, not the host's launch rate. */
void hold_stream(void* stream, double microseconds);

} // namespace bench
} // namespace mimodet

#endif
