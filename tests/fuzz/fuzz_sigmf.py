#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Fuzz target for SigMF captures (python/mimodet/sigmf.py), by Hypothesis.

A capture is a metadata file and a data file from outside. Both are generated: metadata as
a valid capture's with fields deleted or replaced by hostile values (wrong types, NaN and
Inf, integers past float's range, negative and huge counts, non-UTF-8 text, deep nesting),
or as raw bytes; data of any length, truncated or not. The parsers must either accept the
capture or raise ValueError naming the problem, never another exception. An accepted
capture must read back consistently: read_capture's samples [channels][n] with n from the
file's size, segments() in order within them, and sigmf_source in a flowgraph giving
exactly those samples on every channel.

Every crash found is kept below as an @example, replayed first on each run.
Usage: fuzz_sigmf.py [--examples N] [--seed S]   (default 1000 examples, seed 0: what
ctest runs; tests/fuzz/README.md has longer runs)
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
from hypothesis import HealthCheck, example, given, seed, settings
from hypothesis import strategies as st

from gnuradio import blocks, gr
from gnuradio.mimodet import sigmf

BASE_META = {
    "global": {
        "core:datatype": "cf32_le",
        "core:sample_rate": 1e6,
        "core:num_channels": 2,
        "core:version": "1.0.0",
    },
    "captures": [{"core:sample_start": 0, "core:frequency": 3.5e9}],
    "annotations": [],
}
# (where, key) of the fields a mutation may delete or replace
FIELDS = [("global", "core:datatype"), ("global", "core:sample_rate"),
          ("global", "core:num_channels"), ("global", sigmf.SCALE_KEY),
          ("global", "mimodet:ofdm"), ("capture0", "core:frequency"),
          ("capture0", "core:sample_start"), ("capture1", "core:sample_start"),
          ("capture1", sigmf.LOST_KEY), ("root", "captures"), ("root", "global")]
# A sample run through a flowgraph only when the capture is this small.
MAX_FLOWGRAPH_ITEMS = 4096

hostile = st.deferred(lambda: st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-2**70, max_value=2**70),
    st.sampled_from([0, 1, 2, 3, -1, 2**31, 2**63, 10**400, -10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["cf32_le", "ci16_le", "cf32_be", "ri8", "", "NaN"]),
    st.text(max_size=12),
    st.lists(hostile, max_size=3),
    st.dictionaries(st.text(max_size=6), hostile, max_size=3)))


@st.composite
def metadata(draw):
    """The metadata file's bytes: a mutated valid capture's, or anything."""
    kind = draw(st.sampled_from(["mutated", "mutated", "mutated", "raw", "nested"]))
    if kind == "raw":
        return draw(st.binary(max_size=200))
    if kind == "nested":  # JSON nested past the parser's recursion limit
        depth = draw(st.sampled_from([10, 1000, 100000]))
        return ("[" * depth + "]" * depth).encode()
    meta = json.loads(json.dumps(BASE_META))
    meta["global"]["core:datatype"] = draw(st.sampled_from(sigmf.DATATYPES))
    meta["global"]["core:num_channels"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        meta["captures"].append({"core:sample_start": 2, sigmf.LOST_KEY: 7})
    if draw(st.booleans()):
        meta["global"]["mimodet:ofdm"] = {"antennas": 2, "users": 1, "fft": 64, "cp": 16,
                                          "subcarriers": 48, "symbols": 14,
                                          "modulation": "qpsk"}
    for where, key in draw(st.lists(st.sampled_from(FIELDS), max_size=4)):
        if where == "root":
            parent = meta
        elif where == "global":
            parent = meta.get("global")
        else:
            caps = meta.get("captures")
            k = int(where[-1])
            parent = caps[k] if isinstance(caps, list) and len(caps) > k else None
        if not isinstance(parent, dict):
            continue
        if draw(st.booleans()):
            parent.pop(key, None)
        else:
            parent[key] = draw(hostile)
    text = json.dumps(meta, allow_nan=True).encode()
    if draw(st.integers(0, 9)) == 0:  # a byte that is not UTF-8, somewhere
        at = draw(st.integers(0, len(text)))
        text = text[:at] + b"\xff\xfe" + text[at:]
    return text


@st.composite
def data(draw):
    """The data file's bytes: whole samples of 1-4 channels, or any length."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=64))
    n = draw(st.integers(0, 300))
    unit = draw(st.sampled_from([96, 96, 96, 4, 8, 16, 24]))  # 96: whole for any metadata
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return rng.integers(-2**15, 2**15, size=n * unit // 2, dtype="<i2").tobytes()


def replay(base, channels, first=0, count=0):
    """sigmf_source's outputs, one array per channel."""
    tb = gr.top_block()
    src = sigmf.sigmf_source(base, channels=channels, first=first, count=count)
    sinks = [blocks.vector_sink_c() for _ in range(channels)]
    for ch, sink in enumerate(sinks):
        tb.connect((src, ch), sink)
    tb.run()
    return [np.array(s.data(), dtype=np.complex64) for s in sinks]


COUNTS = {"accepted": 0, "replayed": 0}


def check_capture(meta_bytes, data_bytes):
    folder = tempfile.mkdtemp(prefix="mimodet-fuzz-sigmf-")
    try:
        base = os.path.join(folder, "capture")
        with open(base + ".sigmf-meta", "wb") as f:
            f.write(meta_bytes)
        with open(base + ".sigmf-data", "wb") as f:
            f.write(data_bytes)
        try:
            meta = sigmf.read_metadata(base)
        except ValueError:
            return
        COUNTS["accepted"] += 1
        g = meta["global"]
        channels = g["core:num_channels"]
        n = sigmf.num_samples(base, meta)
        per_sample = 8 if g["core:datatype"] == "cf32_le" else 4
        assert n * channels * per_sample == len(data_bytes), "a capture that does not add up"
        try:
            stretches = sigmf.segments(meta, n)
        except ValueError:
            stretches = None
        if stretches is not None:
            assert stretches[0][0] == 0 and stretches[-1][1] == n
            for (start, stop, lost), nxt in zip(stretches, stretches[1:] + [None]):
                assert 0 <= start <= stop <= n and lost >= 0
                assert nxt is None or nxt[0] == stop
        try:
            sigmf.read_layout(base)
        except ValueError:
            pass
        cap = sigmf.read_capture(base)
        assert cap.samples.shape == (channels, n), cap.samples.shape
        if n == 0:
            try:
                sigmf.sigmf_source(base)
            except ValueError:
                return
            raise AssertionError("sigmf_source took a capture without samples")
        if n * channels <= MAX_FLOWGRAPH_ITEMS:
            got = replay(base, channels)
            COUNTS["replayed"] += 1
            for ch in range(channels):
                if g["core:datatype"] == "cf32_le":
                    # (random cf32 bytes hold NaNs, whose payloads Python's complex may
                    # change)
                    assert np.array_equal(got[ch], cap.samples[ch], equal_nan=True), \
                        "sigmf_source channel %d differs from read_capture" % ch
                else:  # VOLK divides by 1/scale where numpy multiplies: 1 ulp apart
                    np.testing.assert_allclose(got[ch], cap.samples[ch], rtol=3e-7, atol=0,
                                               err_msg="sigmf_source channel %d" % ch)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @seed(args.seed)
    @given(metadata(), data())
    # Regressions: each input that once escaped as something other than ValueError.
    @example(b'{"global": {"core:datatype": "cf32_le", "core:sample_rate": 1e6, '
             b'"core:num_channels": 1}, "captures": [{"core:frequency": 1' + b"0" * 400 + b"}]}",
             b"")
    @example(b"[" * 100000 + b"]" * 100000, b"")
    @example(b'{"global": {"core:datatype": "cf32_le", "core:sample_rate": 1e6, '
             b'"core:num_channels": 1}, "captures": [{"core:frequency": 1}, 5]}', b"")
    @example(b'{"global": {"core:datatype": "cf32_le", "core:sample_rate": 1e6, '
             b'"core:num_channels": 100000000}, "captures": [{"core:frequency": 1}]}', b"")
    def fuzz(meta_bytes, data_bytes):
        check_capture(meta_bytes, data_bytes)

    fuzz()
    print("fuzz_sigmf: %d generated captures (seed %d) and the regressions: clean; "
          "%d accepted, %d of them replayed in a flowgraph"
          % (args.examples, args.seed, COUNTS["accepted"], COUNTS["replayed"]))


if __name__ == "__main__":
    sys.exit(main())
