#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
The transmitted bits behind a simulated capture, and scoring detected frames against them.

``mimodet_rx --simulate N --record NAME`` writes, beside the capture NAME.sigmf-meta/-data:

- ``NAME.truth.npy``: uint8 ``[frames][ceil(N_data*N_sc*U*Q / 8)]``, each frame's
  transmitted bits in the LLR layout ``[N_data][N_sc][U][Q]``, packed by ``np.packbits``;
- one SigMF annotation per frame in the capture's metadata: ``core:sample_start`` (where the
  frame's preamble, its cyclic prefix included, begins), ``core:sample_count`` and
  ``core:label`` ``"frame K"`` (K: the row of the truth).

Both are written frame by frame, and read one frame at a time, so that a capture longer
than the machine's memory can be recorded and scored. Detected frames are matched to the
truth by where they start, not by their order: a frame the receiver missed does not shift
the ones after it, and a frame that matches no recorded start (a capture cut at its
beginning, or the truth of another capture) is counted as unmatched instead of being
scored against the wrong bits. Captures recorded before this format carry
``NAME.truth.npz`` (bits of every frame, matched by order), which is still read.

``frame_scorer`` is the sink that does the scoring in a flowgraph.
"""

import os
import zipfile

import numpy as np
import pmt
from gnuradio import gr

from . import constellation_ref as ref

FRAME_START_TAG = "mimo_frame_start"
CFO_TAG = "mimo_cfo"
NOISE_VAR_TAG = "mimo_n0"
CHANNEL_TAG = "mimo_h"


def truth_path(capture_base):
    return capture_base + ".truth.npy"


class TruthWriter:
    """Writes NAME.truth.npy frame by frame (the frame count is known up front)."""

    def __init__(self, path, num_frames, bits_per_frame):
        self.path = path
        self.num_frames = int(num_frames)
        self.bits_per_frame = int(bits_per_frame)
        self.row_bytes = (self.bits_per_frame + 7) // 8
        self.written = 0
        self.file = open(path, "wb")
        np.lib.format.write_array_header_1_0(
            self.file, {"descr": "|u1", "fortran_order": False,
                        "shape": (self.num_frames, self.row_bytes)})

    def add(self, bits):
        bits = np.asarray(bits).reshape(-1)
        if bits.size != self.bits_per_frame or self.written >= self.num_frames:
            raise ValueError("TruthWriter: frame %d of %d bits, expected %d of %d"
                             % (self.written, bits.size, self.num_frames, self.bits_per_frame))
        self.file.write(np.packbits(bits != 0).tobytes())
        self.written += 1

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None
            if self.written != self.num_frames:
                raise ValueError("TruthWriter: %s holds %d of %d frames"
                                 % (self.path, self.written, self.num_frames))


class Truth:
    """The transmitted bits of a capture's frames, looked up by where a frame starts."""

    def __init__(self, bits_of, num_frames, num_bits, starts=None, tolerance=0):
        self._bits_of = bits_of        # k -> uint8 bits [num_bits]
        self.num_frames = num_frames
        self.num_bits = num_bits
        self.starts = starts           # recorded frame starts, or None: match by order
        self.tolerance = tolerance

    def match(self, frame_start, order):
        """The truth row of a frame detected at sample frame_start (the order-th frame
        found), or None when no recorded frame starts within the tolerance."""
        if self.starts is None:
            return order if order < self.num_frames else None
        k = int(np.searchsorted(self.starts, frame_start))
        for c in (k - 1, k):
            if 0 <= c < len(self.starts) and abs(int(self.starts[c]) - frame_start) <= \
                    self.tolerance:
                return c
        return None

    def bits(self, k):
        return self._bits_of(k)


def read_truth(capture_base, meta, num_bits, tolerance):
    """The Truth of a capture (its base name and metadata), or None when it has none.
    Raises ValueError for a truth file that does not fit the capture."""
    new, old = truth_path(capture_base), capture_base + ".truth.npz"
    if os.path.isfile(new):
        try:
            rows = np.load(new, mmap_mode="r")
        except (OSError, ValueError, EOFError) as e:
            raise ValueError("%s: not a truth file (%s)" % (new, e)) from e
        row_bytes = (num_bits + 7) // 8
        if rows.ndim != 2 or rows.shape[1] != row_bytes or rows.dtype != np.uint8:
            raise ValueError("%s: rows of %s bytes (%s), the capture's layout needs %d"
                             % (new, rows.shape[1:], rows.dtype, row_bytes))
        starts = []
        for a in meta.get("annotations", []):
            label = str(a.get("core:label", ""))
            if label.startswith("frame ") and "core:sample_start" in a:
                starts.append((int(label.split()[1]), int(a["core:sample_start"])))
        if len(starts) != rows.shape[0] or sorted(k for k, _ in starts) != \
                list(range(rows.shape[0])):
            raise ValueError("%s holds %d frames, the capture's annotations list %d"
                             % (new, rows.shape[0], len(starts)))
        starts = np.array([s for _, s in sorted(starts)], dtype=np.int64)
        if np.any(np.diff(starts) <= 0):
            raise ValueError("%s: the frame annotations do not start in increasing order"
                             % capture_base)
        return Truth(lambda k: np.unpackbits(np.asarray(rows[k]))[:num_bits], len(starts),
                     num_bits, starts, tolerance)
    if os.path.isfile(old):
        try:
            bits = np.load(old)["bits"]
        except (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile) as e:
            raise ValueError("%s: not a truth file (%s)" % (old, e)) from e
        if bits.ndim < 2:
            raise ValueError("%s: bits of shape %s, expected [frames][...]" % (old, bits.shape))
        bits = bits.reshape(bits.shape[0], -1)
        if bits.shape[1] != num_bits:
            raise ValueError("%s: frames of %d bits, the capture's layout needs %d"
                             % (old, bits.shape[1], num_bits))
        return Truth(lambda k: bits[k], bits.shape[0], num_bits)
    return None


class frame_scorer(gr.sync_block):
    """Scores detected frames: input 0, LLR items ([N_sc][U][Q] float, the frame tags of
    the receive chain on each frame's first item); input 1 (with_rx), the receive chain's
    items ([N_sc][B] complex, its mimo_h tag on each frame's first item) for the EVM of a
    zero-forcing equalization. Without a truth the EVM is blind (nearest points) and no
    BER is counted. Keeps only per-frame sums, so it runs in bounded memory.
    """

    def __init__(self, num_antennas, num_users, num_subcarriers, num_data_symbols,
                 modulation, truth=None, with_rx=False, progress=None, sample_offset=0):
        self.B, self.U, self.nsc, self.nd = (num_antennas, num_users, num_subcarriers,
                                             num_data_symbols)
        self.q = ref.BITS[modulation]
        self.modulation = modulation
        self.points = np.asarray(ref.points(modulation), dtype=np.complex64)
        self.truth = truth
        self.with_rx = with_rx
        self.progress = progress
        self.sample_offset = sample_offset  # of the replayed stretch in the whole capture
        self.item_bits = self.nsc * self.U * self.q
        in_sig = [(np.float32, self.item_bits)]
        if with_rx:
            in_sig.append((np.complex64, self.nsc * self.B))
        gr.sync_block.__init__(self, "mimodet_frame_scorer", in_sig=in_sig, out_sig=[])
        self.frames = []          # per frame: start, cfo, n0, truth row or None
        self.frames_before = 0    # frames scored by earlier stretches of the capture
        self.bits = 0             # scored bits (frames with a truth row)
        self.bit_errors = 0
        self.unmatched = 0        # frames found with no truth row
        self.evm_err = 0.0
        self.evm_ref = 0.0
        self.items = 0
        self._item_in_frame = None  # items of the current frame seen so far
        self._row = None            # its truth bits, or None
        self._pinv = None           # its ZF equalizer [N_sc][U][B]
        self._symbols = None        # its transmitted symbols [N_data][N_sc][U], or None

    # -- per frame ---------------------------------------------------------------------
    def _start_frame(self, tags0, tags1):
        by_key = {pmt.symbol_to_string(t.key): t.value for t in tags0}
        start = self.sample_offset + int(pmt.to_uint64(by_key[FRAME_START_TAG])) \
            if FRAME_START_TAG in by_key else -1
        cfo = pmt.to_double(by_key[CFO_TAG]) if CFO_TAG in by_key else float("nan")
        n0 = pmt.to_double(by_key[NOISE_VAR_TAG]) if NOISE_VAR_TAG in by_key else float("nan")
        row = None
        if self.truth is not None:
            row = self.truth.match(start, self.frames_before + len(self.frames))
            if row is None:
                self.unmatched += 1
        self.frames.append((start, cfo, n0, row))
        self._item_in_frame = 0
        self._row = self.truth.bits(row) if row is not None else None
        self._symbols = None
        if self._row is not None and self.with_rx:
            sym = ref.map_bits(self.modulation, self._row.reshape(-1, self.q))
            self._symbols = np.asarray(sym, dtype=np.complex64).reshape(
                self.nd, self.nsc, self.U)
        self._pinv = None
        if self.with_rx:
            h = [t.value for t in tags1 if pmt.symbol_to_string(t.key) == CHANNEL_TAG]
            if h:
                hv = np.asarray(pmt.c32vector_elements(h[-1]), dtype=np.complex64)
                self._pinv = np.linalg.pinv(hv.reshape(self.nsc, self.B, self.U))
        if self.progress:
            self.progress("frame %d at sample %d: CFO %+.4f subcarriers, N0 %.3g"
                          % (len(self.frames), start, cfo, n0))

    def work(self, input_items, output_items):
        llr = input_items[0]
        n = len(llr)
        base = self.nitems_read(0)
        starts = {}
        for t in self.get_tags_in_window(0, 0, n):
            starts.setdefault(t.offset - base, []).append(t)
        rx_tags = {}
        if self.with_rx:
            for t in self.get_tags_in_window(1, 0, n):
                rx_tags.setdefault(t.offset - base, []).append(t)
        for i in range(n):
            tags = starts.get(i, [])
            if any(pmt.symbol_to_string(t.key) == FRAME_START_TAG for t in tags):
                self._start_frame(tags, rx_tags.get(i, []))
            if self._item_in_frame is None or self._item_in_frame >= self.nd:
                continue  # items outside a tagged frame: nothing to score them against
            j = self._item_in_frame
            if self._row is not None:
                want = self._row[j * self.item_bits:(j + 1) * self.item_bits]
                self.bit_errors += int(np.count_nonzero((llr[i] > 0) != (want != 0)))
                self.bits += self.item_bits
            if self.with_rx and self._pinv is not None:
                y = input_items[1][i].reshape(self.nsc, self.B)
                x = np.einsum("iub,ib->iu", self._pinv, y)
                s = self._symbols[j] if self._symbols is not None else \
                    self.points[np.argmin(np.abs(x[..., None] - self.points), axis=-1)]
                self.evm_err += float(np.sum(np.abs(x - s) ** 2))
                self.evm_ref += float(np.sum(np.abs(s) ** 2))
            self._item_in_frame += 1
        self.items += n
        return n

    # -- results -----------------------------------------------------------------------
    def ber(self):
        return self.bit_errors / self.bits if self.bits else float("nan")

    def evm(self):
        return float(np.sqrt(self.evm_err / self.evm_ref)) if self.evm_ref > 0 else float("nan")

    def evm_is_blind(self):
        return self.truth is None or any(row is None for *_, row in self.frames)


class ScoreTotal:
    """The sums of several frame_scorers (one per uninterrupted stretch of a capture)."""

    def __init__(self, scorers):
        self.truth = scorers[0].truth if scorers else None
        self.item_bits = scorers[0].item_bits if scorers else 0
        self.frames = [f for s in scorers for f in s.frames]
        for name in ("bits", "bit_errors", "unmatched", "evm_err", "evm_ref", "items"):
            setattr(self, name, sum(getattr(s, name) for s in scorers))

    ber = frame_scorer.ber
    evm = frame_scorer.evm
    evm_is_blind = frame_scorer.evm_is_blind
