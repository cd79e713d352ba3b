#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Blocks for a receiver's displays (docs/signal-quality.md): channel_magnitude shows the
channel in force, from the 'mimo_h' tags, as |H| over the subcarriers; frame_timing shows
what the receive chain found of each frame, from its 'mimo_cfo' and 'mimo_frame_start'
tags, as the carrier frequency offset and the spacing of frame starts."""

import numpy as np
import pmt
from gnuradio import gr

from . import CHANNEL_TAG

CFO_TAG = "mimo_cfo"
FRAME_START_TAG = "mimo_frame_start"


class channel_magnitude(gr.sync_block):
    """|H| in dB over the subcarriers seen by one antenna, one output per user.

    Input: the detector's input items ([N_sc][B] complex64 per item) carrying the
    'mimo_h' tags ([N_sc][B][U], docs/data-contract.md); connect it beside the detector.
    Output u: per item, 20 log10 |H[sc, antenna, u]| of the channel in force at that item,
    [N_sc] float32 (a QT GUI Vector Sink with one input per user shows them). Before the
    first channel, and for a malformed one (logged once), the floor of -120 dB.
    """

    FLOOR_DB = -120.0

    def __init__(self, num_antennas, num_users, num_subcarriers, antenna=0):
        if min(num_antennas, num_users, num_subcarriers) <= 0:
            raise ValueError("channel_magnitude: sizes must be > 0, got B=%r U=%r N_sc=%r"
                             % (num_antennas, num_users, num_subcarriers))
        if not 0 <= antenna < num_antennas:
            raise ValueError("channel_magnitude: antenna must be in 0..%d, got %r"
                             % (num_antennas - 1, antenna))
        gr.sync_block.__init__(self, name="channel_magnitude",
                               in_sig=[(np.complex64, num_subcarriers * num_antennas)],
                               out_sig=[(np.float32, num_subcarriers)] * num_users)
        self.dims = (num_subcarriers, num_antennas, num_users)
        self.antenna = antenna
        self.current = np.full((num_users, num_subcarriers), self.FLOOR_DB, np.float32)
        self.warned = False
        self.key = pmt.intern(CHANNEL_TAG)

    def magnitude_db(self, value):
        n_sc, b, u = self.dims
        if not pmt.is_c32vector(value) or pmt.length(value) != n_sc * b * u:
            if not self.warned:
                gr.log.error("channel_magnitude: a '%s' tag is not a c32vector of %d "
                             "entries; showing the floor until a good one" % (CHANNEL_TAG, n_sc * b * u))
                self.warned = True
            return np.full((u, n_sc), self.FLOOR_DB, np.float32)
        h = np.asarray(pmt.c32vector_elements(value), np.complex64).reshape(n_sc, b, u)
        mag = np.maximum(np.abs(h[:, self.antenna, :]).T, 1e-6)
        return (20.0 * np.log10(mag)).astype(np.float32)

    def work(self, input_items, output_items):
        n = len(output_items[0])
        start = self.nitems_read(0)
        tags = sorted(self.get_tags_in_window(0, 0, n, self.key), key=lambda t: t.offset)
        at = 0
        for tag in tags + [None]:
            end = n if tag is None else int(tag.offset - start)
            for u, out in enumerate(output_items):
                out[at:end] = self.current[u]
            if tag is None:
                break
            self.current = self.magnitude_db(tag.value)
            at = end
        return n


class frame_timing(gr.sync_block):
    """The carrier frequency offset and frame timing the receive chain found, per item.

    Input: items of the receive chain ([N_sc][B] complex64 of ofdm_uplink_receiver, or the
    [N_sc][U][Q] float32 LLRs of ofdm_uplink_detector: `vlen` values of `dtype`) whose
    first item of each frame carries 'mimo_cfo' (subcarrier spacings) and
    'mimo_frame_start' (the frame's first sample). Output 0: the frame's CFO, in Hz when
    samp_rate and fft_size are given (spacing samp_rate / fft_size), else in subcarrier
    spacings. Output 1: samples from the previous frame's start to this one's (a steady
    value for a steady frame rate; NaN for the first frame). Each holds its frame's value
    on all of the frame's items; NaN before the first frame.
    """

    def __init__(self, vlen, dtype="complex", samp_rate=0.0, fft_size=0):
        types = {"complex": np.complex64, "float": np.float32}
        if dtype not in types:
            raise ValueError("frame_timing: dtype must be 'complex' or 'float', got %r" % dtype)
        if vlen <= 0:
            raise ValueError("frame_timing: vlen must be > 0, got %r" % vlen)
        if samp_rate < 0 or fft_size < 0 or (samp_rate > 0) != (fft_size > 0):
            raise ValueError("frame_timing: give samp_rate and fft_size both > 0 (CFO in Hz) "
                             "or both 0 (in subcarrier spacings), got %r and %r"
                             % (samp_rate, fft_size))
        gr.sync_block.__init__(self, name="frame_timing", in_sig=[(types[dtype], vlen)],
                               out_sig=[np.float32, np.float32])
        self.spacing_hz = samp_rate / fft_size if fft_size else 1.0
        self.cfo = np.nan
        self.interval = np.nan
        self.last_start = None
        self.frames = 0
        self.keys = (pmt.intern(CFO_TAG), pmt.intern(FRAME_START_TAG))

    def work(self, input_items, output_items):
        n = len(output_items[0])
        start = self.nitems_read(0)
        tags = {}
        for tag in self.get_tags_in_window(0, 0, n):
            if tag.key in self.keys:
                tags.setdefault(int(tag.offset - start), {})[pmt.symbol_to_string(tag.key)] = tag.value
        at = 0
        for offset in sorted(tags) + [n]:
            output_items[0][at:offset] = self.cfo
            output_items[1][at:offset] = self.interval
            if offset == n:
                break
            found = tags[offset]
            if CFO_TAG in found:
                self.cfo = pmt.to_double(found[CFO_TAG]) * self.spacing_hz
            if FRAME_START_TAG in found:
                first = pmt.to_uint64(found[FRAME_START_TAG])
                self.interval = (np.nan if self.last_start is None
                                 else float(first - self.last_start))
                self.last_start = first
                self.frames += 1
            at = offset
        return n
