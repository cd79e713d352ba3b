#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""mimodet_rx --args without radios: the N310 path with a stand-in source.

n310.n310_source is replaced by a source of simulated frames with UHD's rx_time tags: the
first sample's time, and after an "overflow" (samples cut out of the middle of frame 3)
the next sample's true time. mimodet_rx must stream the channels into the --record capture
(as int16, with the gap kept as capture segments), replay it through the receive
chain, report the gap and find every frame but the cut one; then a replay of the recorded
capture must find the same frames. Usage: test_rx_n310_path.py MIMODET_RX WORKDIR
"""

import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import sys

import numpy as np
import pmt
from gnuradio import blocks, gr

from gnuradio import mimodet
from gnuradio.mimodet import n310

FRAMES, CUT_FRAME, CUT = 6, 2, 500  # frame 3 (index 2) loses 500 samples
LAYOUT = dict(fft_size=128, cp_length=16, num_subcarriers=96, num_data_symbols=4,
              num_users=2, num_antennas=4, modulation="16qam")
RATE = 7.68e6


def fake_source_class(samples, gap_at, lost):
    class fake_n310_source(gr.hier_block2):
        """What n310_source gives: 4 channels per address, rx_time tags on every channel."""

        def __init__(self, addresses, sample_rate, center_freq, gain=30.0):
            channels = n310.CHANNELS_PER_N310 * len(addresses)
            gr.hier_block2.__init__(self, "fake_n310_source", gr.io_signature(0, 0, 0),
                                    gr.io_signature(channels, channels, gr.sizeof_gr_complex))
            self.actual_sample_rate = RATE
            t0 = 1000  # full seconds of the first sample
            late = (gap_at + lost) / RATE
            tags = [gr.tag_utils.python_to_tag((0, pmt.intern("rx_time"), pmt.make_tuple(
                        pmt.from_uint64(t0), pmt.from_double(0.0)))),
                    gr.tag_utils.python_to_tag((gap_at, pmt.intern("rx_time"), pmt.make_tuple(
                        pmt.from_uint64(t0 + int(late)), pmt.from_double(late % 1))))]
            self.sources = [blocks.vector_source_c(samples[ch].tolist(), False, 1, tags)
                            for ch in range(channels)]
            for ch, src in enumerate(self.sources):
                self.connect(src, (self, ch))
    return fake_n310_source


def load_app(path):
    loader = importlib.machinery.SourceFileLoader("mimodet_rx_app", path)
    spec = importlib.util.spec_from_loader("mimodet_rx_app", loader)
    app = importlib.util.module_from_spec(spec)
    loader.exec_module(app)
    return app


def run(app, argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            app.main(argv)
            code = 0
        except SystemExit as e:
            code = e.code
    print(out.getvalue())
    if code not in (0, None):
        sys.exit("FAILED: mimodet_rx %s exited with %r" % (" ".join(argv), code))
    return out.getvalue()


def main():
    app_path, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    cfg = mimodet.ofdm_config(**LAYOUT)
    sim = mimodet.uplink_simulator(cfg, mimodet.uplink_channel_config(snr_db=25, seed=3))
    frames = [sim.next_frame()["rx"] for _ in range(FRAMES)]
    start = sum(f.shape[1] for f in frames[:CUT_FRAME]) + 300
    samples = np.concatenate(frames, axis=1)
    samples = np.concatenate([samples[:, :start], samples[:, start + CUT:]], axis=1)
    samples *= 0.1  # within UHD's full scale of 1.0, which the int16 recording maps to 32768
    n310.n310_source = fake_source_class(samples, start, CUT)

    app = load_app(app_path)
    base = os.path.join(work, "n310")
    layout = ["--users", "2", "--fft", "128", "--cp", "16", "--subcarriers", "96",
              "--symbols", "4", "--sample-rate", str(RATE), "--backend", "cpu"]
    # --frames asks for more than the source holds: the capture ends with the source
    got = run(app, ["--args", "192.0.2.1", "--frames", str(FRAMES + 2), "--record", base,
                    "--datatype", "ci16_le"] + layout)
    meta = json.load(open(base + ".sigmf-meta"))
    segments = [(c["core:sample_start"], c.get("mimodet:lost_samples", 0))
                for c in meta["captures"]]
    problems = []
    if meta["global"]["core:datatype"] != "ci16_le" or segments != [(0, 0), (start, CUT)]:
        problems.append("capture segments %s (expected [(0, 0), (%d, %d)])"
                        % (segments, start, CUT))
    if "overflow: 1 gaps lost %d samples" % CUT not in got:
        problems.append("no overflow line for the %d lost samples" % CUT)
    if "frames %d " % (FRAMES - 1) not in got:
        problems.append("expected %d frames (the cut one lost)" % (FRAMES - 1))
    again = run(app, ["--replay", base, "--backend", "cpu"])
    if "frames %d " % (FRAMES - 1) not in again or "overflow: 1 gaps" not in again:
        problems.append("the replay of the recorded capture differs")
    if problems:
        sys.exit("FAILED: " + "; ".join(problems))
    print("ok: recorded with its rx_time gap, %d of %d frames found, twice"
          % (FRAMES - 1, FRAMES))


if __name__ == "__main__":
    main()
