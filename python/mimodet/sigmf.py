#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
Multi-channel SigMF captures: B antenna streams in one recording.

A capture is two files, ``<base>.sigmf-meta`` (JSON) and ``<base>.sigmf-data``. The data
holds the channels interleaved sample by sample (channel 0 of sample 0, channel 1 of sample
0, ..., channel 0 of sample 1, ...), as SigMF's ``core:num_channels`` specifies, in one of
two types:

- ``cf32_le``: complex float32 (8 bytes per sample), written and read as is;
- ``ci16_le``: complex int16 (4 bytes per sample, what a USRP sends over the wire), stored
  as round(x / scale) and read back as int * scale, where scale, the float value of one
  integer step, is kept in the global object as ``mimodet:scale`` (1 when absent).

Both are little-endian, as their names say (the hosts GNU Radio runs on are).

Required metadata: ``core:datatype``, ``core:sample_rate``, ``core:num_channels`` and a
first capture with ``core:frequency`` (the centre frequency). A file that lacks one of
these, whose data length does not fit the channel count, or whose type is not one of the
two above is refused with a ValueError that says what is wrong and where.

``write_capture`` / ``read_capture`` work on numpy arrays held in memory (cf32 captures
are memory-mapped, ci16 ones decoded whole); ``CaptureWriter`` writes one chunk at a time.
In a flowgraph, ``sigmf_source`` replays a capture (one complex output per channel, at the
recorded rate or as fast as possible) and ``sigmf_sink`` records one; both stream through
files, in bounded memory, whatever the capture's length.

Lost samples: ``write_segments`` records where a recording was interrupted (from UHD's
``rx_time`` tags, after the recording flowgraph has run) as capture segments with
``mimodet:lost_samples``; ``segments`` reads them back, and ``sigmf_source`` replays one
stretch at a time (``first``, ``count``), so that no frame is assembled across a gap.
"""

import json
import math
import os
import numbers
import datetime

import numpy as np
from gnuradio import blocks, gr

SIGMF_VERSION = "1.0.0"
DATATYPES = ("cf32_le", "ci16_le")
SCALE_KEY = "mimodet:scale"
#: More channels than this is no capture of a receiver (sigmf_source makes a port each).
MAX_CHANNELS = 1024


def _paths(path):
    """(meta, data) file names for a base name or either file's name."""
    for ext in (".sigmf-meta", ".sigmf-data", ".sigmf"):
        if path.endswith(ext):
            path = path[: -len(ext)]
            break
    return path + ".sigmf-meta", path + ".sigmf-data"


def capture_base(path):
    """A capture's base name, from the base name itself or either file's name."""
    return _paths(path)[0][: -len(".sigmf-meta")]


def num_samples(path, meta=None):
    """Samples per channel in a capture's data file (meta: its metadata, if read)."""
    g = (meta or read_metadata(path))["global"]
    per_sample = 8 if g["core:datatype"] == "cf32_le" else 4
    return os.path.getsize(_paths(path)[1]) // (per_sample * int(g["core:num_channels"]))


class Capture:
    """A capture's metadata and samples ([channels][n] complex64, memory-mapped for cf32)."""

    def __init__(self, meta_path, data_path, meta, samples):
        self.meta_path = meta_path
        self.data_path = data_path
        self.meta = meta
        self.samples = samples
        g = meta["global"]
        self.datatype = g["core:datatype"]
        self.sample_rate = float(g["core:sample_rate"])
        self.num_channels = int(g["core:num_channels"])
        self.center_frequency = float(meta["captures"][0]["core:frequency"])
        self.scale = float(g.get(SCALE_KEY, 1.0))

    @property
    def num_samples(self):
        return self.samples.shape[1]


def write_capture(path, samples, sample_rate, center_frequency, datatype="cf32_le",
                  scale=None, description="", hardware="", extra=None):
    """Writes samples ([channels][n] complex) as a multi-channel SigMF capture.

    For ci16_le, ``scale`` is the float value of one integer step (default: the largest
    |I| or |Q| maps to 30000); values beyond the int16 range are refused rather than
    clipped silently. ``extra``: more global fields, each key in a namespace other than
    ``core:`` (e.g. ``mimodet:ofdm``). Returns the metadata file's name.
    """
    x = np.asarray(samples)
    if x.ndim != 2 or not 1 <= x.shape[0] <= MAX_CHANNELS:
        raise ValueError("write_capture: samples must be [channels][n] with 1 to %d "
                         "channels, got shape %s" % (MAX_CHANNELS, x.shape))
    _check_capture("write_capture", datatype, x.shape[0], sample_rate, center_frequency,
                   None)
    if datatype == "ci16_le":
        peak = max(np.abs(x.real).max(initial=0.0), np.abs(x.imag).max(initial=0.0))
        if scale is None:
            scale = peak / 30000.0 if peak > 0 else 1.0
        if not (_finite(scale) and scale > 0):
            raise ValueError("write_capture: scale must be a finite number > 0, got %r"
                             % (scale,))
        if peak / scale > 32767:
            raise ValueError("write_capture: samples up to %g do not fit int16 with scale "
                             "%g (one step); use a larger scale" % (peak, scale))
    with CaptureWriter(path, x.shape[0], sample_rate, center_frequency, datatype, scale,
                       description, hardware, extra) as writer:
        writer.write(x)
    return writer.meta_path


class CaptureWriter:
    """Writes a multi-channel SigMF capture chunk by chunk: ``write`` takes [channels][n]
    arrays, so that a recording needs one chunk in memory at a time, whatever its length.

    For ci16_le, ``scale`` (the float value of one integer step) is fixed before the first
    sample is written: given, or chosen from the first chunk's peak with 12 dB of headroom
    (the peak maps to 8000); a later sample beyond the int16 range is refused with a
    ValueError that says so, never clipped. ``annotate`` adds a SigMF annotation (e.g. where
    a frame starts). The metadata is written when the writer is made and again by
    ``close`` (with the scale and the annotations). Use it as a context manager.
    """

    def __init__(self, path, channels, sample_rate, center_frequency, datatype="cf32_le",
                 scale=None, description="", hardware="", extra=None):
        _check_capture("CaptureWriter", datatype, channels, sample_rate, center_frequency,
                       scale)
        self.meta_path, self.data_path = _paths(path)
        self.channels = channels
        self.datatype = datatype
        self.scale = scale
        self.num_samples = 0
        self.meta = _metadata(datatype, sample_rate, channels, center_frequency, description,
                              hardware, extra, "CaptureWriter")
        self._write_meta()
        self.file = open(self.data_path, "wb")

    def _write_meta(self):
        if self.datatype == "ci16_le" and self.scale is not None:
            self.meta["global"][SCALE_KEY] = float(self.scale)
        with open(self.meta_path, "w") as f:
            json.dump(self.meta, f, indent=2)

    def write(self, samples):
        x = np.asarray(samples)
        if x.ndim != 2 or x.shape[0] != self.channels:
            raise ValueError("CaptureWriter: samples must be [%d][n], got shape %s"
                             % (self.channels, x.shape))
        interleaved = np.ascontiguousarray(x.T).reshape(-1)  # sample-major, channels inside
        if self.datatype == "cf32_le":
            self.file.write(interleaved.astype("<c8").tobytes())
        else:
            peak = max(np.abs(interleaved.real).max(initial=0.0),
                       np.abs(interleaved.imag).max(initial=0.0))
            if self.scale is None:
                self.scale = peak / 8000.0 if peak > 0 else 1.0
                self._write_meta()
            if peak / self.scale > 32767:
                raise ValueError("CaptureWriter: samples up to %g after sample %d do not fit "
                                 "int16 with scale %g (one step); record as cf32_le or give "
                                 "a larger scale" % (peak, self.num_samples, self.scale))
            pairs = np.empty((interleaved.size, 2), dtype="<i2")
            pairs[:, 0] = np.round(interleaved.real / self.scale)
            pairs[:, 1] = np.round(interleaved.imag / self.scale)
            self.file.write(pairs.tobytes())
        self.num_samples += x.shape[1]

    def annotate(self, sample_start, sample_count, label):
        self.meta["annotations"].append({"core:sample_start": int(sample_start),
                                         "core:sample_count": int(sample_count),
                                         "core:label": str(label)})

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None
            self._write_meta()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _finite(value):
    """Whether value is a finite real number (not a bool, a string or None)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:  # (an integer, e.g. from JSON, may lie past float's range)
        return math.isfinite(value)
    except OverflowError:
        return False


def _check_capture(who, datatype, channels, sample_rate, center_frequency, scale):
    """Refuses, before any file is written, what read_metadata would refuse in the
    capture: a writer that took it would record in vain. scale None: none is written."""
    if datatype not in DATATYPES:
        raise ValueError("%s: datatype must be one of %s, got %r" % (who, DATATYPES, datatype))
    if isinstance(channels, bool) or not isinstance(channels, numbers.Integral) or \
            not 1 <= channels <= MAX_CHANNELS:
        raise ValueError("%s: channels must be an integer from 1 to %d, got %r"
                         % (who, MAX_CHANNELS, channels))
    if not (_finite(sample_rate) and sample_rate > 0):
        raise ValueError("%s: sample_rate must be a finite number > 0, got %r"
                         % (who, sample_rate))
    if not _finite(center_frequency):
        raise ValueError("%s: center_frequency must be a finite number, got %r"
                         % (who, center_frequency))
    if scale is not None and not (_finite(scale) and scale > 0):
        raise ValueError("%s: scale must be a finite number > 0, got %r" % (who, scale))


def _metadata(datatype, sample_rate, channels, center_frequency, description, hardware,
              extra, who):
    """The SigMF metadata of a capture that starts now (global, one capture segment)."""
    g = {
        "core:datatype": datatype,
        "core:sample_rate": float(sample_rate),
        "core:num_channels": channels,
        "core:version": SIGMF_VERSION,
        "core:recorder": "gr-mimodet",
    }
    if description:
        g["core:description"] = description
    if hardware:
        g["core:hw"] = hardware
    for key, value in (extra or {}).items():
        if ":" not in key or key.startswith("core:"):
            raise ValueError("%s: extra key %r must be namespaced, not core:" % (who, key))
        g[key] = value
    return {
        "global": g,
        "captures": [{
            "core:sample_start": 0,
            "core:frequency": float(center_frequency),
            "core:datetime": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }],
        "annotations": [],
    }


class sigmf_sink(gr.hier_block2):
    """Records `channels` streams as one multi-channel SigMF capture (the inverse of
    sigmf_source): complex float inputs as cf32_le, or sc16 inputs (a USRP's cpu_format
    sc16, two shorts per sample) as ci16_le with one integer step worth `scale` (1/32768:
    UHD's full scale is 1.0). Samples are interleaved channel by channel as they arrive; the
    metadata is written when the block is made, the data file grows while it runs.
    """

    def __init__(self, path, channels, sample_rate, center_frequency, datatype="cf32_le",
                 scale=1.0 / 32768, description="", hardware="", extra=None):
        _check_capture("sigmf_sink", datatype, channels, sample_rate, center_frequency,
                       scale if datatype == "ci16_le" else None)
        itemsize = gr.sizeof_gr_complex if datatype == "cf32_le" else 2 * gr.sizeof_short
        gr.hier_block2.__init__(self, "sigmf_sink",
                                gr.io_signature(channels, channels, itemsize),
                                gr.io_signature(0, 0, 0))
        meta_path, data_path = _paths(path)
        meta = _metadata(datatype, sample_rate, channels, center_frequency, description,
                         hardware, extra, "sigmf_sink")
        if datatype == "ci16_le":
            meta["global"][SCALE_KEY] = float(scale)
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=2)
        self.meta_path = meta_path
        # (as bytes: a name that is not UTF-8 holds surrogates, which pybind11 refuses)
        self.file = blocks.file_sink(itemsize, os.fsencode(data_path), False)
        self.file.set_unbuffered(False)
        if channels == 1:
            self.connect((self, 0), self.file)
        else:
            self.interleave = blocks.interleave(itemsize, 1)
            for ch in range(channels):
                self.connect((self, ch), (self.interleave, ch))
            self.connect(self.interleave, self.file)


LOST_KEY = "mimodet:lost_samples"


def write_segments(path, segments):
    """Records where a capture's samples were interrupted: segments [(start, stop, lost)]
    (as n310.contiguous_segments gives them from UHD's rx_time tags) become SigMF capture
    segments, one per uninterrupted stretch, with the samples lost before it as
    mimodet:lost_samples. Call it once the recording flowgraph has finished."""
    meta_path, _ = _paths(path)
    with open(meta_path) as f:
        meta = json.load(f)
    first = meta["captures"][0]
    captures = []
    for start, _, lost in segments:
        seg = dict(first)
        seg["core:sample_start"] = int(start)
        if lost:
            seg[LOST_KEY] = int(lost)
        captures.append(seg)
    meta["captures"] = captures or [first]
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)


def segments(meta, num_samples):
    """[(start, stop, lost)] of a capture's uninterrupted stretches, from its capture
    segments (one stretch for a capture without mimodet:lost_samples); raises ValueError
    for segments that are not in order within the samples."""
    starts = []
    for seg in meta.get("captures", []):
        if not isinstance(seg, dict):
            raise ValueError("SigMF capture segment %r: not an object" % (seg,))
        start, lost = seg.get("core:sample_start", 0), seg.get(LOST_KEY, 0)
        if not (type(start) is int and type(lost) is int and 0 <= start and
                lost >= 0 and start <= num_samples and (not starts or start > starts[-1][0])):
            raise ValueError("SigMF capture segment at sample %r (lost %r): not an increasing "
                             "sample within the %d samples" % (start, lost, num_samples))
        starts.append((start, lost))
    if not starts or starts[0][0] != 0:
        starts.insert(0, (0, 0))
    return [(start, starts[k + 1][0] if k + 1 < len(starts) else num_samples, lost)
            for k, (start, lost) in enumerate(starts)]


def read_metadata(path):
    """Validated metadata of a capture (dict); raises ValueError naming the problem."""
    meta_path, data_path = _paths(path)
    for p in (meta_path, data_path):
        if not os.path.isfile(p):
            raise ValueError("SigMF capture %r: %s is missing" % (path, p))
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (OSError, ValueError, RecursionError) as e:  # (ValueError: JSON's, and an
        # integer of more digits than Python converts)
        raise ValueError("SigMF capture %r: %s is not valid JSON (%s)"
                         % (path, meta_path, e)) from e
    if not isinstance(meta, dict) or not isinstance(meta.get("global"), dict):
        raise ValueError("SigMF capture %r: %s has no \"global\" object" % (path, meta_path))
    g = meta["global"]
    for key in ("core:datatype", "core:sample_rate", "core:num_channels"):
        if key not in g:
            raise ValueError("SigMF capture %r: %s lacks global %s" % (path, meta_path, key))
    if g["core:datatype"] not in DATATYPES:
        raise ValueError("SigMF capture %r: datatype %r is not supported (only %s)"
                         % (path, g["core:datatype"], ", ".join(DATATYPES)))

    def number(value):
        """value as a finite float, or None (JSON strings and booleans are not numbers)."""
        return float(value) if _finite(value) else None

    rate = number(g["core:sample_rate"])
    if rate is None or not rate > 0:
        raise ValueError("SigMF capture %r: %s: global core:sample_rate must be a finite "
                         "number > 0, got %r" % (path, meta_path, g["core:sample_rate"]))
    channels = g["core:num_channels"]
    if isinstance(channels, bool) or not isinstance(channels, int) or \
            not 1 <= channels <= MAX_CHANNELS:
        raise ValueError("SigMF capture %r: %s: global core:num_channels must be an integer "
                         "from 1 to %d, got %r" % (path, meta_path, MAX_CHANNELS, channels))
    if SCALE_KEY in g:
        scale = number(g[SCALE_KEY])
        if scale is None or not scale > 0:
            raise ValueError("SigMF capture %r: %s: global %s (the value of one integer "
                             "step) must be a finite number > 0, got %r"
                             % (path, meta_path, SCALE_KEY, g[SCALE_KEY]))
    caps = meta.get("captures")
    if not isinstance(caps, list) or not caps or not isinstance(caps[0], dict) or \
            "core:frequency" not in caps[0]:
        raise ValueError("SigMF capture %r: %s needs a first capture with core:frequency"
                         % (path, meta_path))
    if number(caps[0]["core:frequency"]) is None:
        raise ValueError("SigMF capture %r: %s: the first capture's core:frequency must be "
                         "a finite number, got %r" % (path, meta_path,
                                                      caps[0]["core:frequency"]))
    size = os.path.getsize(data_path)
    per_sample = 8 if g["core:datatype"] == "cf32_le" else 4
    if size % (per_sample * channels):
        raise ValueError("SigMF capture %r: %s has %d bytes, not a whole number of %d-channel "
                         "%s samples (%d bytes each)" % (path, data_path, size, channels,
                                                         g["core:datatype"], per_sample))
    return meta


def read_capture(path):
    """Reads a capture into a Capture ([channels][n] complex64 samples)."""
    meta = read_metadata(path)
    meta_path, data_path = _paths(path)
    g = meta["global"]
    channels = int(g["core:num_channels"])
    if os.path.getsize(data_path) == 0:  # (an empty file cannot be mapped)
        samples = np.zeros((channels, 0), dtype=np.complex64)
    elif g["core:datatype"] == "cf32_le":
        flat = np.memmap(data_path, dtype="<c8", mode="r")
        samples = flat.reshape(-1, channels).T
    else:
        pairs = np.fromfile(data_path, dtype="<i2").reshape(-1, 2)
        scale = float(g.get(SCALE_KEY, 1.0))
        flat = (pairs[:, 0].astype(np.float32) + 1j * pairs[:, 1].astype(np.float32)) * scale
        samples = flat.astype(np.complex64).reshape(-1, channels).T
    return Capture(meta_path, data_path, meta, samples)


class sigmf_source(gr.hier_block2):
    """Replays a multi-channel SigMF capture: one complex64 output per channel.

    realtime: throttle to the recorded sample rate (else as fast as the flowgraph goes).
    repeat: start over at the end of the file.
    channels: the number of outputs the caller expects (0: whatever the file holds); a
        file with another count is refused.
    first, count: replay `count` samples per channel from sample `first` (count 0: to the
        end), e.g. one uninterrupted stretch of `segments()`.
    vector: one output instead, each item the vector of all channels' samples at one time
        (what apsm_receiver takes).
    """

    def __init__(self, path, realtime=False, repeat=False, channels=0, first=0, count=0,
                 vector=False):
        meta = read_metadata(path)
        g = meta["global"]
        self.channels = int(g["core:num_channels"])
        if channels and channels != self.channels:
            # GRC sizes the outputs before the file is read: say which count is right
            raise ValueError("sigmf_source: %r holds %d channels, the block was given %d"
                             % (path, self.channels, channels))
        _, data_path = _paths(path)
        if os.path.getsize(data_path) == 0:  # (file_source refuses it less clearly)
            raise ValueError("sigmf_source: %r holds no samples" % (path,))
        self.sample_rate = float(g["core:sample_rate"])
        self.center_frequency = float(meta["captures"][0]["core:frequency"])
        outputs = 1 if vector else self.channels
        gr.hier_block2.__init__(
            self, "mimodet_sigmf_source", gr.io_signature(0, 0, 0),
            gr.io_signature(outputs, outputs,
                            gr.sizeof_gr_complex * (self.channels if vector else 1)))
        out = self
        if vector:
            out = blocks.streams_to_vector(gr.sizeof_gr_complex, self.channels)
            self.connect(out, self)
        cf32 = g["core:datatype"] == "cf32_le"
        item = gr.sizeof_gr_complex if cf32 else 2 * gr.sizeof_short
        src = blocks.file_source(item, os.fsencode(data_path), repeat, first * self.channels,
                                 count * self.channels)
        head = src
        if realtime:
            throttle = blocks.throttle(item, self.sample_rate * self.channels)
            self.connect(src, throttle)
            head = throttle
        split = blocks.deinterleave(item, 1)
        self.connect(head, split)
        scale = float(g.get(SCALE_KEY, 1.0))
        for ch in range(self.channels):
            if cf32:
                self.connect((split, ch), (out, ch))
            else:
                # interleaved_short_to_complex divides by its factor: 1/scale multiplies
                conv = blocks.interleaved_short_to_complex(True, False, 1.0 / scale)
                self.connect((split, ch), conv, (out, ch))


def read_layout(path):
    """The OFDM frame layout that ``mimodet_rx --record`` writes into a capture's global
    metadata as ``mimodet:ofdm``: a dict with antennas, users, fft, cp, subcarriers,
    symbols (integers) and modulation (a name such as "16qam"); None when the capture has
    none (one not recorded by mimodet_rx). The capture is checked as read_metadata checks
    it; a layout that is not such a dict raises ValueError saying what is wrong."""
    meta = read_metadata(path)
    layout = meta["global"].get("mimodet:ofdm")
    if layout is None:
        return None
    meta_path, _ = _paths(path)
    where = "SigMF capture %r: %s: global mimodet:ofdm" % (path, meta_path)
    if not isinstance(layout, dict):
        raise ValueError("%s must be an object, got %r" % (where, layout))
    sizes = ("antennas", "users", "fft", "cp", "subcarriers", "symbols")
    missing = [key for key in sizes + ("modulation",) if key not in layout]
    if missing:
        raise ValueError("%s lacks %s" % (where, ", ".join(missing)))
    for key in sizes:
        value, least = layout[key], 0 if key == "cp" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError("%s: %s must be an integer >= %d, got %r"
                             % (where, key, least, value))
    if not isinstance(layout["modulation"], str):
        raise ValueError("%s: modulation must be a name, got %r"
                         % (where, layout["modulation"]))
    return dict(layout)
