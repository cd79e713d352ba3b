/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pinned_buffers.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer.h>
#include <gnuradio/buffer_reader.h>
#include <mimodet/detector.h>
#include <chrono>
#include <string>

namespace gr {
namespace mimodet {

void pinned_buffers::pin(const void* p, std::size_t bytes, const gr::logger_ptr& logger)
{
    if (!p || bytes == 0 || !d_seen.insert(p).second)
        return;
    std::string why;
    if (::mimodet::pin_host_memory(p, bytes, &why)) {
        d_pinned.insert(p);
        d_bytes += bytes;
    } else if (!d_said_why) {
        d_said_why = true;
        logger->info("could not page-lock a buffer of {:d} bytes for the GPU ({:s}); its "
                     "copies go through the detector's staging buffers",
                     bytes,
                     why);
    }
}

void pinned_buffers::pin_stream_buffers(gr::block& block, const gr::logger_ptr& logger)
{
    const auto detail = block.detail();
    if (!detail)
        return;
    auto pin_buffer = [&](const gr::buffer_sptr& buffer) {
        if (!buffer || d_seen.count(buffer->base()))
            return;
        const std::size_t bytes =
            static_cast<std::size_t>(buffer->bufsize()) * buffer->get_sizeof_item();
        // GNU Radio's default buffers map the same pages twice, back to back, so that a
        // read or write may run past the end: both mappings are registered. A buffer
        // mapped once (custom buffers) takes only its own size.
        std::string why;
        const auto t0 = std::chrono::steady_clock::now();
        if (::mimodet::pin_host_memory(buffer->base(), 2 * bytes, &why)) {
            d_seen.insert(buffer->base());
            d_pinned.insert(buffer->base());
            d_bytes += 2 * bytes;
            logger->debug("page-locked a stream buffer of 2 x {:d} bytes in {:.1f} ms",
                          bytes,
                          std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
            return;
        }
        logger->debug("page-locking 2 x {:d} bytes refused ({:s}); trying one mapping",
                      bytes,
                      why);
        pin(buffer->base(), bytes, logger);
    };
    for (int i = 0; i < detail->ninputs(); ++i)
        pin_buffer(detail->input(i)->buffer());
    for (int i = 0; i < detail->noutputs(); ++i)
        pin_buffer(detail->output(i));
}

void pinned_buffers::release()
{
    for (const void* p : d_pinned)
        ::mimodet::unpin_host_memory(p);
    d_pinned.clear();
    d_seen.clear();
    d_bytes = 0;
}

} // namespace mimodet
} // namespace gr
