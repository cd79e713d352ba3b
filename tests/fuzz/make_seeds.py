#!/usr/bin/env python3
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the seed inputs of the C++ fuzz targets' corpora (tests/fuzz/corpus/<target>):
well-formed inputs that the fuzzer then breaks. The byte format is each target's reading
of FuzzInput (fuzz_input.h) in fuzz_<target>.cc (cli_args: bytes of its own)."""
import os
import random

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
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


def detector_tags_seeds():
    rng = random.Random(7)
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
    return seeds


# --- apsm_training: [period, offset, items-1, max_items-1, retrain, 6 training symbols'
# signs (2 bytes each), items x 2 samples, messages, message PMTs..., then tags of
# (offset, key, PMT); key byte % 4 != 0 is 'apsm_train'.
PERIOD = {-1: 0, 0: 1, 3: 2, 4: 3, 7: 4}
TRAIN_KEY, OTHER = 1, 0


def symbols(rng, n=6, bad=None):  # a c32vector of n symbols (any_pmt case 0)
    vals = [value(rng.choice([-0.7071, 0.7071])) for _ in range(2 * n)]
    if bad is not None:
        vals[1] = bad
    length = 0 if n == 6 else 144 + n  # FuzzInput::length: b >= 128 reads b % 24
    return [0, length] + vals


def apsm(rng, period, items, messages=(), tags=(), offset=0, max_items=2, retrain=False,
         nan_at=()):
    b = [PERIOD[period], offset, items - 1, max_items - 1, 0 if retrain else 1]
    b += [rng.randrange(2) for _ in range(12)]
    samples = [value(rng.gauss(0, 0.7)) for _ in range(items * 2 * 2)]
    for i in nan_at:
        samples[i] = NAN
    b += samples
    b += [len(messages)]
    for m in messages:
        b += m
    for at, key, pmt in tags:
        b += [at, key] + pmt
    return bytes(b)


def apsm_training_seeds():
    rng = random.Random(11)
    return {
        "periodic": apsm(rng, 3, 12),
        "offset-once": apsm(rng, 0, 10, offset=2, max_items=3),
        "tag-symbols": apsm(rng, -1, 14, tags=[(2, TRAIN_KEY, symbols(rng)),
                                               (8, TRAIN_KEY, [9])]),
        "message": apsm(rng, -1, 10, messages=[symbols(rng)]),
        "pdu-message": apsm(rng, -1, 10, messages=[[13, 9] + symbols(rng)]),
        "retrain": apsm(rng, -1, 8, retrain=True, max_items=1),
        "nan-training": apsm(rng, -1, 10, messages=[symbols(rng, bad=NAN)]),
        "wrong-length-tag": apsm(rng, 4, 12, tags=[(1, TRAIN_KEY, symbols(rng, 5))]),
        "nan-samples": apsm(rng, 3, 9, tags=[(0, OTHER, [4, NAN, 0])], nan_at=(1, 13)),
    }


# --- rx_time: [rate, max_items-1, burst?, (burst: u16 at, n, per sample antenna and two
# values), then tags of (u16 offset, key, time)]; key byte % 8 != 0 is rx_time; a time
# is [pmt? (0: any PMT follows), int8 jitter in samples, kind (0: value, 1: base + value *
# 1e10, else base), full seconds as long (0: then u16) or uint64 (1, then 0: then u64)].
RATE_1E6, RATE_TINY = 0, 3
RX_TIME, N0 = 1, 0


def u16(v):
    return [v & 0xFF, v >> 8]


def time_tag(at, jitter=0, kind=2, value_byte=0, seconds_as=None):
    b = u16(at) + [RX_TIME, 1, jitter & 0xFF, kind]
    if kind in (0, 1):
        b.append(value_byte)
    if seconds_as == "long":
        b += [0, 5, 0]
    elif seconds_as == "uint64":
        b += [1, 0] + [0xFF] * 8
    else:
        b += [1, 1]
    return b


def rx(rate, tags, max_items=16, burst=None):
    b = [rate, max_items - 1]
    if burst is None:
        b.append(1)
    else:
        at, n = burst
        b += [0] + u16(at) + [n - 1]
        for _ in range(n):
            b += [0, NAN, 0]
    for t in tags:
        b += t
    return bytes(b)


def rx_time_seeds():
    return {
        "valid-time": rx(RATE_1E6, [time_tag(0)]),
        "gap": rx(RATE_1E6, [time_tag(0), time_tag(400, jitter=50)], max_items=64),
        "backwards": rx(RATE_1E6, [time_tag(0), time_tag(400, jitter=-100)]),
        "nan-fraction": rx(RATE_1E6, [time_tag(0), time_tag(300, kind=0, value_byte=NAN)]),
        "huge-jump": rx(RATE_1E6, [time_tag(0), time_tag(300, kind=1, value_byte=200)]),  # 2.6e16 samples
        "long-seconds": rx(RATE_1E6, [time_tag(0, seconds_as="long")], max_items=5),
        "uint64-seconds": rx(RATE_1E6, [time_tag(0), time_tag(500, seconds_as="uint64")]),
        "not-a-tuple": rx(RATE_1E6, [u16(10) + [RX_TIME, 0, 4, value(1.5), 0]]),
        "nan-burst": rx(RATE_1E6, [time_tag(0)], burst=(200, 20)),
        "tiny-rate": rx(RATE_TINY, [time_tag(0), time_tag(400, jitter=3)], max_items=1),
    }


def cli_args_seeds():
    # byte 0: the parser (0 integer, 1 positive, 2 writable, 3 modulation, 4 mode,
    # 5 precision); parse_integer's range takes bytes 1-3 (low, INT_MAX or not, high)
    def integer(text, low=4, high=1):
        return bytes([0, low, high, 0]) + text.encode()
    return {
        "integer": integer("20"),
        "integer-leading-zeros": integer("007"),
        "integer-negative": integer("-5", low=2),
        "integer-past-long-long": integer("9" * 30),
        "integer-int-max-plus-one": integer(str(2**31)),
        "integer-empty": integer(""),
        "positive": b"\x01" + b"7.68e6",
        "positive-hex": b"\x01" + b"0x1p3",
        "positive-nan": b"\x01" + b"nan",
        "positive-space": b"\x01" + b" 5",
        "writable": b"\x02" + b"out.json",
        "writable-folder": b"\x02" + b"/tmp",
        "writable-nul": b"\x02" + b"a\x00b",
        "modulation": b"\x03" + b"QAM16",
        "modulation-latin1": b"\x03" + b"16q\xc1m",
        "mode": b"\x04" + b"cholesky",
        "precision": b"\x05" + b"fp8_e4m3",
    }


def main():
    for target, seeds in (("detector_tags", detector_tags_seeds()),
                          ("apsm_training", apsm_training_seeds()),
                          ("rx_time", rx_time_seeds()),
                          ("cli_args", cli_args_seeds())):
        out = os.path.join(CORPUS, target)
        os.makedirs(out, exist_ok=True)
        for name, data in seeds.items():
            if target == "detector_tags" and name.startswith("regression-"):
                continue
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
        print(f"{len(seeds)} seeds in {out}")


if __name__ == "__main__":
    main()
