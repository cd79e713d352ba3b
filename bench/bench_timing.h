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
 * That write leaves the L2 full of dirty lines, whose write-back to device memory then
 * falls in the timed region. `clean` also reads a second buffer twice the L2's size
 * after it, so that the write-back happens before the region and the L2 holds clean
 * lines (the state Nsight Compute's cache control leaves).
 */
class L2Flusher
{
public:
    explicit L2Flusher(bool clean = false);
    ~L2Flusher();
    void flush(void* stream);

private:
    void* d_buffer = nullptr;
    void* d_clean_buffer = nullptr; //!< read after the write when clean
    unsigned long d_bytes = 0;
};

/*! The traffic of a detector call without its arithmetic: reads `a_bytes` at `a` and
 * `b_bytes` at `b` once each and writes `out_bytes` to `out`, in 16-byte words (the last
 * bytes of each buffer past a whole word are left out), on `stream`. Timed after the
 * same L2 flush as the call, it is the floor that the call's bytes set in that cache
 * state: with --l2 dirty it includes the write-back of the flush's dirty lines, which
 * the D2D copy's floor does not. */
void stream_traffic(const void* a,
                    unsigned long a_bytes,
                    const void* b,
                    unsigned long b_bytes,
                    void* out,
                    unsigned long out_bytes,
                    void* stream);

/*! Holds `stream` busy for about `microseconds` on the GPU, so that the launches queued
 * after it are all issued by the host before the timed region starts: events then time
 * the GPU's work, not the host's launch rate. */
void hold_stream(void* stream, double microseconds);

//! The device's copy bandwidths in GB/s: device to device counting bytes read and
//! written, and each way between pinned host memory and the device.
struct Bandwidth {
    double d2d_gbs = 0, h2d_gbs = 0, d2h_gbs = 0;
    //! Both ways at once (two streams), bytes of both directions over the time: whether
    //! uploads and downloads overlap on this machine's host link.
    double duplex_gbs = 0;
};

//! Measured on the current device: a 1 GiB device copy and 256 MiB each way between
//! pinned host memory and the device, one way and both at once; medians of 5 after a
//! warm-up.
Bandwidth measure_bandwidth();

} // namespace bench
} // namespace mimodet

#endif
