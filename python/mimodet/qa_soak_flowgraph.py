#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Soak of a detector flowgraph: many frames, each with a new channel, NaN bursts, bad
channels, N0 = 0 and rx_time gaps, while another thread calls the block's setters and
getters. MIMODET_SOAK_FRAMES sets the frames (default 1e6; docs/reliability.md). With
MIMODET_TEST_BACKEND=cuda the GPU memory in use (nvidia-smi) must stay flat too."""

import os
import shutil
import subprocess
import threading
import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import mimodet
from gnuradio.mimodet.testing import BACKEND

FRAMES = int(os.environ.get("MIMODET_SOAK_FRAMES", "1000000"))
PERIOD = 64  # frames in the repeated stretch of the source
BLOCK = 1024  # frames per sum of |LLR| (a multiple of PERIOD)
SYMBOLS = 2  # items per frame
RSS_BOUND_KIB = 8 * 1024


GPU_BOUND_MIB = 16  # as the core API's GPU soak (docs/reliability.md)


def gpu_used_mib():
    """The GPU's memory in use (the whole card, as nvidia-smi sees it), or None."""
    if BACKEND != "cuda" or shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=30, check=True)
        return int(out.stdout.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def resident_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class qa_soak_flowgraph(gr_unittest.TestCase):

    def test_001_mmse_detector_stays_right_under_setters_from_another_thread(self):
        n_sc, b, u, q = 2, 2, 2, 2
        rng = np.random.default_rng(9)
        # Whole blocks of 1024 frames (a multiple of PERIOD), at least FRAMES of them
        frames = -(-max(FRAMES, 1) // BLOCK) * BLOCK
        h = (rng.standard_normal((PERIOD, n_sc, b, u)) +
             1j * rng.standard_normal((PERIOD, n_sc, b, u))) / np.sqrt(2)
        y = (rng.standard_normal((PERIOD, SYMBOLS, n_sc, b)) +
             1j * rng.standard_normal((PERIOD, SYMBOLS, n_sc, b)))
        n0 = np.full(PERIOD, 0.1)
        y[5, 1] = np.nan          # a NaN burst: one item, every subcarrier
        h[17, 0] = np.nan         # a channel that is not finite on one subcarrier
        n0[23] = 0.0              # a channel declared noiseless
        h[31, :, :, 1] = h[31, :, :, 0]  # two users on one channel: singular G
        tags = []
        for f in range(PERIOD):
            tags += mimodet.channel_tags(h[f], n0[f], f * SYMBOLS)
            # rx_time with a gap of one second at frame 40 (the detectors pass it on)
            seconds = f * 1e-3 + (1.0 if f >= 40 else 0.0)
            tags.append(mimodet.make_tag(
                f * SYMBOLS, "rx_time",
                pmt.make_tuple(pmt.from_uint64(int(seconds)),
                               pmt.from_double(seconds - int(seconds)))))
        src = blocks.vector_source_c(y.astype(np.complex64).ravel().tolist(), True, n_sc * b,
                                     tags)
        head = blocks.head(gr.sizeof_gr_complex * n_sc * b, frames * SYMBOLS)
        det = mimodet.mmse_detector(b, u, n_sc, "qpsk", "chol", 3, BACKEND)
        n_llr = n_sc * u * q
        # Sums of |LLR| over BLOCK frames: a NaN or Inf anywhere shows in its sum.
        decim = BLOCK * SYMBOLS * n_llr
        to_stream = blocks.vector_to_stream(gr.sizeof_float, n_llr)
        # (vector_sink keeps every tag it gets: 3e6 of them would be the leak measured)
        to_stream.set_tag_propagation_policy(gr.TPP_DONT)
        magnitude = blocks.abs_ff()
        sums = blocks.integrate_ff(decim)
        sink = blocks.vector_sink_f()
        tb = gr.top_block()
        tb.connect(src, head, det, to_stream, magnitude, sums, sink)

        done = threading.Event()
        calls = {"setters": 0, "getters": 0}
        rss = []
        gpu = []  # (MiB in use) with the GPU backend, every 2 s
        errors = []

        def poke():
            choice = np.random.default_rng(4)
            last_sample = last_gpu = 0.0
            try:
                while not done.is_set():
                    det.set_mode(str(choice.choice(["chol", "cg", "cr", "zf"])))
                    det.set_iterations(int(choice.integers(1, 5)))
                    det.set_precision(str(choice.choice(["fp32", "fp16", "bf16"])))
                    calls["setters"] += 3
                    det.mode(), det.iterations(), det.precision(), det.implementation()
                    det.channel_updates(), det.bad_sample_vectors()
                    calls["getters"] += 6
                    now = time.monotonic()
                    if now - last_sample > 0.25:
                        rss.append(resident_kib())
                        last_sample = now
                    if now - last_gpu > 2.0:
                        used = gpu_used_mib()
                        if used is not None:
                            gpu.append(used)
                        last_gpu = now
                    time.sleep(0.001)
            except Exception as e:  # noqa: BLE001 (reported by the test thread)
                errors.append(e)

        start = time.monotonic()
        tb.start()
        thread = threading.Thread(target=poke)
        thread.start()
        tb.wait()
        done.set()
        thread.join()
        elapsed = time.monotonic() - start
        self.assertEqual(errors, [])

        out = np.array(sink.data())
        self.assertEqual(out.size, frames // BLOCK)
        self.assertTrue(np.all(np.isfinite(out)), "an LLR that is not finite")
        self.assertTrue(np.all(out > 0), "a block of frames of zero LLRs")
        reps = frames // PERIOD
        self.assertEqual(det.channel_updates(), frames)
        self.assertEqual(det.bad_sample_vectors(), reps * n_sc)
        self.assertEqual(det.erased_items(), 0)
        self.assertGreaterEqual(det.bad_channel_subcarriers(), reps)
        self.assertGreater(calls["setters"], 30)
        growth = 0
        # After a warm-up of a third of the run: every mode built, the buffers grown.
        settled = rss[len(rss) // 3:]
        if settled:
            growth = max(settled) - settled[0]
        print("soak: %d frames in %.1f s, %d setter and %d getter calls from another "
              "thread; resident %d KiB after warm-up, growth %d KiB (%d samples)"
              % (frames, elapsed, calls["setters"], calls["getters"],
                 settled[0] if settled else 0, growth, len(rss)))
        gpu_settled = gpu[len(gpu) // 3:]
        if gpu_settled:
            gpu_growth = max(gpu_settled) - gpu_settled[0]
            print("soak: GPU memory in use %d MiB after warm-up, growth %d MiB (%d samples)"
                  % (gpu_settled[0], gpu_growth, len(gpu)))
            self.assertLess(gpu_growth, GPU_BOUND_MIB)
        if "san" in os.environ.get("LD_PRELOAD", ""):
            return  # a sanitizer's runtime keeps freed memory (ASan) or shadows it: RSS
            # says nothing
        self.assertGreaterEqual(len(settled), 3)
        self.assertLess(growth, RSS_BOUND_KIB)


if __name__ == "__main__":
    gr_unittest.run(qa_soak_flowgraph)
