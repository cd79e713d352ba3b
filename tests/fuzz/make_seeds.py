#!/usr/bin/env python3
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the seed inputs of tests/fuzz/corpus/detector_tags: well-formed frames that the
fuzzer then breaks (the byte format is FuzzInput in fuzz_detector_tags.cc)."""
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "detector_tags")
NAN, INF = 232, 233
H_KEY, N0_KEY, OTHER_KEY = 0, 2, 3


def value(v):  # FuzzInput::value: b < 232 -> (b - 116) / 32
    return max(0, min(231, round(v * 32) + 116))


def frame(block, items, max_items, rng, tags):
    b = [block, items - 1, max_items - 1]
    b += [value(rng.gauss(0, 1)) for _ in range(items * 4 * 2)]
    for offset, key, pmt in tags:
        b += [offset, key] + pmt
    return bytes(b)


def channel(rng, length_byte=0, bad=None):
    vals = [value(rng.gauss(0, 0.7)) for _ in range(16)]
    if bad is not None:
        vals[3] = bad
    return [0, length_byte] + vals


def n0(v, tiny=False):
    return [4, value(v), 1 if tiny else 0]


def main():
    rng = random.Random(7)
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    for block, name in enumerate(["chol", "cg", "zf", "fsd", "box"]):
        seeds[f"valid-{name}"] = frame(block, 4, 2, rng,
                                       [(0, H_KEY, channel(rng)), (0, N0_KEY, n0(0.1))])
    seeds["channel-change"] = frame(0, 6, 2, rng, [(0, H_KEY, channel(rng)), (0, N0_KEY, n0(0.1)),
                                                   (3, H_KEY, channel(rng))])
    seeds["wrong-length-channel"] = frame(0, 4, 3, rng, [(0, H_KEY, channel(rng)),
                                                         (0, N0_KEY, n0(0.1)),
                                                         (2, H_KEY, channel(rng, 200))])
    seeds["nan-channel"] = frame(2, 4, 1, rng, [(0, H_KEY, channel(rng, 0, NAN)), (0, N0_KEY, n0(0.1))])
    seeds["inf-n0"] = frame(3, 3, 2, rng, [(0, H_KEY, channel(rng)), (1, N0_KEY, [4, INF, 0])])
    seeds["zero-n0"] = frame(1, 3, 2, rng, [(0, H_KEY, channel(rng)), (0, N0_KEY, n0(0.0))])
    seeds["integer-n0"] = frame(0, 3, 1, rng, [(0, H_KEY, channel(rng)), (0, N0_KEY, [6, 1, 0])])
    seeds["tuple-channel"] = frame(4, 3, 2, rng, [(0, H_KEY, [12, 2] + channel(rng) + n0(0.1)),
                                                  (0, N0_KEY, n0(0.1))])
    seeds["no-tags"] = frame(0, 2, 1, rng, [])
    seeds["rx-time"] = frame(0, 3, 1, rng, [(0, OTHER_KEY, [12, 2, 7] + [0] * 8 + [4, 130, 0])])
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"{len(seeds)} seeds in {OUT}")


if __name__ == "__main__":
    main()
