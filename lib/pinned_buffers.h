/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_PINNED_BUFFERS_H
#define INCLUDED_MIMODET_PINNED_BUFFERS_H

#include <gnuradio/block.h>
#include <gnuradio/logger.h>
#include <cstddef>
#include <set>

namespace gr {
namespace mimodet {

/*! Page-locks a GPU detector block's stream buffers (and other long-lived host memory,
 * such as the channel it keeps), so that the CUDA engine reads y and writes LLRs there by
 * DMA instead of through its staging buffers and a host copy each way. GNU Radio's
 * buffers are pageable, allocated before the flowgraph starts and kept until it is torn
 * down: each is registered once, on the first work() call that sees it, and all are
 * released in the block's stop(). Where the driver refuses, the block says so once and
 * the copies go through the staging buffers as before. */
class pinned_buffers
{
public:
    pinned_buffers() = default;
    pinned_buffers(const pinned_buffers&) = delete;
    pinned_buffers& operator=(const pinned_buffers&) = delete;
    ~pinned_buffers() { release(); }

    //! Every input and output stream buffer of `block` not registered yet.
    void pin_stream_buffers(gr::block& block, const gr::logger_ptr& logger);
    //! [p, p + bytes), unless p is registered already.
    void pin(const void* p, std::size_t bytes, const gr::logger_ptr& logger);
    //! Unregisters everything (the block's stop()).
    void release();
    std::size_t pinned_bytes() const { return d_bytes; }

private:
    std::set<const void*> d_seen; // registered, or refused (not tried again)
    std::set<const void*> d_pinned;
    std::size_t d_bytes = 0;
    bool d_said_why = false;
};

} // namespace mimodet
} // namespace gr

#endif
