#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Coded BER: a channel code of GNU Radio's gr-fec around a detector block.

What soft output is worth is what a channel decoder makes of it. Each user's bits of a
frame carry codewords of one of two gr-fec codes, spread over the frame's subcarriers
and symbols by a fixed pseudo-random interleaver, detected by a detector block and
decoded twice by the same decoder: from the LLRs, and from hard decisions -- so the
difference is the soft output's.

- ConvolutionalCode (code "cc"): one codeword per user and frame of gr-fec's
  convolutional code (K = 7, rate 1/2, polynomials 109 and 79, i.e. octal 155 and 117,
  terminated: 2 (k + 6) coded bits for k information bits), decoded by gr-fec's Viterbi
  decoder (cc_decoder through extended_decoder). Hard decisions are the LLRs' signs as
  +-1.
- LdpcCode (code "ldpc"): as many codewords as fit of an LDPC code read from an alist
  file (default: GNU Radio's n = 1800, k = 902), encoded by gr-fec's ldpc_encoder and
  decoded by its sum-product ldpc_decoder. Hard decisions are the signs with the
  reliability of a binary symmetric channel of the detector's measured BER p,
  +-log((1 - p) / p): what a belief-propagation decoder needs to know of a hard input.

LLR sign and scale for gr-fec's decoders (docs/coding.md):
- cc_decoder reads soft bits positive for bit 1, nominally in [-1, 1] (the detectors'
  default sign, llr_positive_means_one=True, is that). extended_decoder multiplies them
  by 48, adds 128 and saturates to a byte, so inputs beyond +-2.67 are clipped and steps
  below 1/48 are lost: the LLRs are multiplied by llr_scale (default 1/8: an LLR of 8
  becomes 1, LLRs up to 21 are kept) before the decoder. A Viterbi decoder's decisions do
  not depend on a common scale of its inputs, only on what the clipping and the byte
  quantization keep.
- ldpc_decoder (GNU Radio 3.10.5) reads floats positive for bit 1 and turns an input y
  into the likelihood ratio exp(y / (2 sigma^2)): with sigma = 1/sqrt(2) (LDPC_SIGMA) its
  input is the LLR itself, and unlike the Viterbi decoder its decisions do depend on the
  scale. LLRs are clipped to +-LDPC_LLR_CLIP, far beyond any decision, to keep the
  decoder's exponentials finite.
"""

import math
import os
import re

import numpy as np

from . import constellation_ref as ref

#: gr-fec's convolutional code (the NASA/CCSDS K = 7 rate 1/2 pair).
K = 7
POLYS = [109, 79]
#: LLR -> decoder input scale (module doc).
DEFAULT_LLR_SCALE = 1.0 / 8.0
#: ldpc_decoder's sigma that makes its input the LLR (module doc).
LDPC_SIGMA = 1.0 / math.sqrt(2.0)
#: |LLR| beyond which the LDPC decoder's input is clipped.
LDPC_LLR_CLIP = 30.0
#: GNU Radio's alist file of the default LDPC code (n = 1800, k = 902).
DEFAULT_ALIST = "n_1800_k_0902_gap_28.alist"
#: The codes coded_ber knows.
CODES = ("cc", "ldpc")
#: A number of an alist file, as C++'s >> reads it.
_INTEGER = re.compile(rb"[+-]?[0-9]+")
#: |LLR| below which the LDPC decoder's input is pushed out (an exact 0 is 0/0 there).
LDPC_LLR_FLOOR = 1e-3


class ConvolutionalCode:
    """gr-fec's terminated K = 7 rate 1/2 convolutional code for codewords of
    `info_bits` information bits (2 (info_bits + 6) coded bits)."""

    def __init__(self, info_bits):
        if info_bits < 1:
            raise ValueError("info_bits must be >= 1, got %d" % info_bits)
        self.info_bits = int(info_bits)
        self.coded_bits = 2 * (self.info_bits + K - 1)

    @classmethod
    def filling(cls, coded_bits):
        """The code whose codewords fill `coded_bits` coded bits (the rest padded)."""
        return cls(coded_bits // 2 - (K - 1))

    def encode(self, bits):
        """Information bits (a multiple of info_bits, 0/1) -> coded bits (uint8)."""
        from gnuradio import blocks, fec, gr

        bits = np.asarray(bits, dtype=np.uint8).ravel()
        if bits.size % self.info_bits:
            raise ValueError("%d bits are not whole codewords of %d" % (bits.size, self.info_bits))
        enc = fec.cc_encoder_make(self.info_bits, K, 2, POLYS, 0, fec.CC_TERMINATED, False)
        tb = gr.top_block()
        src = blocks.vector_source_b(bits.tolist(), False)
        sink = blocks.vector_sink_b()
        tb.connect(src, fec.extended_encoder(encoder_obj_list=enc, threading=None, puncpat="11"),
                   sink)
        tb.run()
        return np.array(sink.data(), dtype=np.uint8)

    def decode(self, soft):
        """Soft bits (positive for 1, nominally in [-1, 1]; a multiple of coded_bits)
        -> information bits (uint8), by gr-fec's Viterbi decoder."""
        from gnuradio import blocks, fec, gr

        soft = np.asarray(soft, dtype=np.float32).ravel()
        if soft.size % self.coded_bits:
            raise ValueError("%d soft bits are not whole codewords of %d"
                             % (soft.size, self.coded_bits))
        dec = fec.cc_decoder.make(self.info_bits, K, 2, POLYS, 0, -1, fec.CC_TERMINATED, False)
        tb = gr.top_block()
        src = blocks.vector_source_f(soft.tolist(), False)
        sink = blocks.vector_sink_b()
        tb.connect(src, fec.extended_decoder(decoder_obj_list=dec, threading=None, ann=None,
                                             puncpat="11", integration_period=10000), sink)
        tb.run()
        return np.array(sink.data(), dtype=np.uint8)

    def decode_llrs(self, llr, llr_scale=DEFAULT_LLR_SCALE):
        """LLRs (positive for 1) -> information bits: the LLRs times llr_scale."""
        return self.decode(np.clip(np.asarray(llr, np.float32) * np.float32(llr_scale),
                                   -1e6, 1e6))

    def decode_hard(self, llr, p=None):
        """Hard decisions -> information bits: the LLRs' signs as +-1 (p unused: a
        Viterbi decoder's decisions do not depend on a common scale)."""
        return self.decode(np.where(np.asarray(llr) > 0, 1.0, -1.0).astype(np.float32))


def default_alist():
    """The path of GNU Radio's alist file of DEFAULT_ALIST."""
    from gnuradio import gr

    return os.path.join(gr.prefix(), "share", "gnuradio", "fec", "ldpc", DEFAULT_ALIST)


def read_alist(path):
    """Parity-check matrix size (N, M) of an alist file, after checking it whole.

    gr-fec's alist reader trusts its file: a malformed one crashes the process (a
    segmentation fault in GNU Radio 3.10.5). The layout it reads, line by line: "N M";
    the largest column and row weights; the N column weights; the M row weights; N lines
    with the 1-based rows of each column's ones; M lines with the 1-based columns of each
    row's ones (each line may be padded with zeros after its weight's entries). The two
    lists must describe the same matrix.
    """
    try:
        with open(path, "rb") as f:
            # As gr-fec reads it: lines end at \n only, numbers are ASCII digits
            # separated by C whitespace.
            lines = [ln.split() for ln in f.read().split(b"\n")]
    except OSError as e:
        raise ValueError("alist file %s: %s" % (path, e.strerror or e)) from None

    def ints(k, count, what):
        if k >= len(lines):
            raise ValueError("alist file %s: ends before %s (line %d)" % (path, what, k + 1))
        tokens = lines[k][:count]
        if not all(_INTEGER.fullmatch(t) for t in tokens):
            raise ValueError("alist file %s: line %d (%s) is not integers"
                             % (path, k + 1, what))
        v = [int(t) for t in tokens]
        if len(v) < count:
            raise ValueError("alist file %s: line %d (%s) has %d numbers, needs %d"
                             % (path, k + 1, what, len(v), count))
        return v

    n, m = ints(0, 2, "N M")
    if not 0 < m < n <= 1 << 20:
        raise ValueError("alist file %s: needs 0 < M < N <= 2^20, got N=%d M=%d" % (path, n, m))
    ints(1, 2, "the largest weights")
    col_w = ints(2, n, "the column weights")
    row_w = ints(3, m, "the row weights")
    if min(col_w) < 1 or max(col_w) > m or min(row_w) < 1 or max(row_w) > n:
        raise ValueError("alist file %s: a column or row weight is out of range" % path)
    ones_by_col = set()
    for c in range(n):
        for r in ints(4 + c, col_w[c], "column %d" % (c + 1)):
            if not 1 <= r <= m:
                raise ValueError("alist file %s: column %d names row %d of %d"
                                 % (path, c + 1, r, m))
            ones_by_col.add((r, c + 1))
    ones_by_row = set()
    for r in range(m):
        for c in ints(4 + n + r, row_w[r], "row %d" % (r + 1)):
            if not 1 <= c <= n:
                raise ValueError("alist file %s: row %d names column %d of %d"
                                 % (path, r + 1, c, n))
            ones_by_row.add((r + 1, c))
    if ones_by_col != ones_by_row or len(ones_by_col) != sum(col_w) or \
            len(ones_by_row) != sum(row_w):
        raise ValueError("alist file %s: its column and row lists describe different "
                         "matrices (or repeat an entry)" % path)
    return n, m


class LdpcCode:
    """gr-fec's LDPC code of an alist file: ldpc_encoder, and the sum-product
    ldpc_decoder with at most `max_iterations` iterations. coded_bits is N, info_bits
    the code's dimension k (N minus the rank of H)."""

    def __init__(self, alist=None, max_iterations=50):
        from gnuradio import fec

        self.alist = default_alist() if alist is None else alist
        if max_iterations < 1:
            raise ValueError("max_iterations must be >= 1, got %d" % max_iterations)
        self.max_iterations = int(max_iterations)
        self.coded_bits, checks = read_alist(self.alist)
        # gr-fec builds a reduced form of H for each of these: once per code, not per call.
        self._encoder = fec.ldpc_encoder_make(self.alist)
        self.info_bits = int(self._encoder.get_input_size())
        if self.info_bits != self.coded_bits - checks:
            # The decoder's stopping test reads the first N - k rows of H only.
            raise ValueError("alist file %s: H has dependent rows (rank %d of %d), which "
                             "gr-fec's decoder does not check" % (
                                 self.alist, self.coded_bits - self.info_bits, checks))
        self._decoder = fec.ldpc_decoder.make(self.alist, LDPC_SIGMA, self.max_iterations)

    def encode(self, bits):
        """Information bits (a multiple of info_bits, 0/1) -> coded bits (uint8)."""
        from gnuradio import blocks, fec, gr

        bits = np.asarray(bits, dtype=np.uint8).ravel()
        if bits.size % self.info_bits:
            raise ValueError("%d bits are not whole codewords of %d" % (bits.size, self.info_bits))
        tb = gr.top_block()
        src = blocks.vector_source_b(bits.tolist(), False)
        sink = blocks.vector_sink_b()
        tb.connect(src, fec.encoder(self._encoder, gr.sizeof_char, gr.sizeof_char), sink)
        tb.run()
        return np.array(sink.data(), dtype=np.uint8)

    def decode(self, soft):
        """Decoder inputs (LLRs, positive for 1; a multiple of coded_bits) ->
        information bits (uint8)."""
        from gnuradio import blocks, fec, gr

        soft = np.asarray(soft, dtype=np.float32).ravel()
        if soft.size % self.coded_bits:
            raise ValueError("%d soft bits are not whole codewords of %d"
                             % (soft.size, self.coded_bits))
        tb = gr.top_block()
        src = blocks.vector_source_f(soft.tolist(), False)
        sink = blocks.vector_sink_b()
        tb.connect(src, fec.decoder(self._decoder, gr.sizeof_float, gr.sizeof_char), sink)
        tb.run()
        return np.array(sink.data(), dtype=np.uint8)

    def decode_llrs(self, llr, llr_scale=None):
        """LLRs (positive for 1) -> information bits: the LLRs, clipped (llr_scale is the
        convolutional code's and unused: this decoder reads the LLR itself). An erased
        (0) or NaN LLR becomes +LDPC_LLR_FLOOR: gr-fec 3.10.5 computes 0/0 on an exact 0
        and the NaN takes the whole codeword down."""
        x = np.nan_to_num(np.asarray(llr, np.float32), nan=0.0)
        x = np.where(np.abs(x) < LDPC_LLR_FLOOR, np.where(x < 0, -LDPC_LLR_FLOOR,
                                                           LDPC_LLR_FLOOR), x)
        return self.decode(np.clip(x, -LDPC_LLR_CLIP, LDPC_LLR_CLIP).astype(np.float32))

    def decode_hard(self, llr, p):
        """Hard decisions -> information bits: the LLRs' signs with the reliability of a
        binary symmetric channel of crossover probability p."""
        p = min(max(float(p), 1e-6), 0.49)
        return self.decode(np.where(np.asarray(llr) > 0, 1.0, -1.0).astype(np.float32)
                           * np.float32(math.log((1.0 - p) / p)))


def make_code(name, per_user, alist=None):
    """The code `name` (CODES) for `per_user` coded bits per user and frame, and how many
    of its codewords fit there."""
    if name == "cc":
        if per_user < 2 * K:
            raise ValueError("%d coded bits per user and frame are too few for the "
                             "convolutional code" % per_user)
        return ConvolutionalCode.filling(per_user), 1
    if name == "ldpc":
        code = LdpcCode(alist)
        if per_user < code.coded_bits:
            raise ValueError("an LDPC codeword of %d bits does not fit the %d coded bits of "
                             "one user's frame; use more subcarriers or symbols, or a "
                             "shorter code (alist)" % (code.coded_bits, per_user))
        return code, per_user // code.coded_bits
    raise ValueError("unknown code %r; one of %s" % (name, ", ".join(CODES)))


def coded_ber(antennas, users, modulation, snr_db, frames, mode="chol", iterations=3,
              subcarriers=64, symbols=14, backend="cpu", precision="fp32",
              llr_scale=DEFAULT_LLR_SCALE, seed=1, code="cc", alist=None):
    """Uncoded and coded BER of one configuration at one SNR (dB; N0 = U / SNR, unit
    power per user, i.i.d. Rayleigh per subcarrier and frame), through mmse_detector,
    with the code `code` (CODES; alist: the LDPC code's file, default GNU Radio's
    DEFAULT_ALIST).

    Returns dict(uncoded, soft, hard, *_errors, info_bits, coded_bits, codewords,
    *_zeroed): uncoded is the detector's own BER (LLR signs against the coded bits);
    soft and hard the information BER of the decoder fed the LLRs or hard decisions
    (module doc); codewords the codewords per user and frame; *_zeroed the codewords the
    decoder returned as all zeros that were not sent so.
    """
    from gnuradio import blocks, gr

    from . import channel_tags, mmse_detector

    q = ref.BITS[modulation]
    per_user = symbols * subcarriers * q  # coded bits of one user in one frame
    fec_code, per_frame = make_code(code, per_user, alist)
    n_coded = per_frame * fec_code.coded_bits  # of one user in one frame
    rng = np.random.default_rng(seed)
    interleaver = np.random.default_rng(12345).permutation(per_user)
    info = rng.integers(0, 2, (frames, users, per_frame * fec_code.info_bits), dtype=np.uint8)
    coded = fec_code.encode(info).reshape(frames, users, n_coded)
    tx = np.zeros((frames, users, per_user), dtype=np.uint8)
    tx[:, :, :n_coded] = coded  # (padding: zeros, not decoded)
    tx = tx[:, :, interleaver]
    # [frame][user][(sym, sc, bit)] -> [frame][sym][sc][user][bit]
    bits = tx.reshape(frames, users, symbols, subcarriers, q).transpose(0, 2, 3, 1, 4)
    x = ref.map_bits(modulation, bits)  # [frame][sym][sc][user]
    h = (rng.standard_normal((frames, subcarriers, antennas, users))
         + 1j * rng.standard_normal((frames, subcarriers, antennas, users))) / math.sqrt(2)
    n0 = users / 10 ** (snr_db / 10)
    noise = (rng.standard_normal((frames, symbols, subcarriers, antennas))
             + 1j * rng.standard_normal((frames, symbols, subcarriers, antennas))) * math.sqrt(n0 / 2)
    y = np.einsum("fkbu,fsku->fskb", h, x) + noise

    tags = []
    for f in range(frames):
        tags += channel_tags(h[f], n0, f * symbols)
    tb = gr.top_block()
    src = blocks.vector_source_c(y.astype(np.complex64).ravel().tolist(), False,
                                 subcarriers * antennas, tags)
    det = mmse_detector(antennas, users, subcarriers, modulation, mode, iterations, backend,
                        precision=precision)
    sink = blocks.vector_sink_f(subcarriers * users * q)
    tb.connect(src, det, sink)
    tb.run()
    llr = np.array(sink.data(), dtype=np.float32).reshape(frames, symbols, subcarriers, users, q)

    uncoded_errors = int(np.sum((llr > 0) != (bits != 0)))
    # [frame][sym][sc][user][bit] -> [frame][user][(sym, sc, bit)], de-interleaved
    per = llr.transpose(0, 3, 1, 2, 4).reshape(frames, users, per_user)
    received = np.empty_like(per)
    received[:, :, interleaver] = per
    received = received[:, :, :n_coded].reshape(-1)
    soft = fec_code.decode_llrs(received, llr_scale)
    hard = fec_code.decode_hard(received, uncoded_errors / bits.size)
    want = info.reshape(-1)
    soft_errors = int(np.sum(soft[:want.size] != want))
    hard_errors = int(np.sum(hard[:want.size] != want))

    def zeroed(decoded):
        # Codewords decoded as all zeros that were not sent so: gr-fec 3.10.5's LDPC
        # decoder's failure when its likelihood ratios overflow (docs/coding.md).
        d = decoded[:want.size].reshape(-1, fec_code.info_bits)
        w = want.reshape(-1, fec_code.info_bits)
        return int(np.sum(~d.any(axis=1) & w.any(axis=1)))

    return dict(uncoded=uncoded_errors / bits.size, uncoded_errors=uncoded_errors,
                soft=soft_errors / want.size, soft_errors=soft_errors,
                hard=hard_errors / want.size, hard_errors=hard_errors,
                info_bits=int(want.size), coded_bits=int(bits.size), codewords=per_frame,
                soft_zeroed=zeroed(soft), hard_zeroed=zeroed(hard))


#: The curves of a coded sweep, per detector: label suffix and coded_ber key.
CURVES = (("uncoded", "uncoded"), ("coded, hard decisions", "hard"),
          ("coded, soft LLRs", "soft"))
#: Detector modes the coded sweep runs (through mmse_detector).
MODES = ("chol", "cg", "cr", "zf")


def run_coded_sweep(configs, snrs_db, frames, seed=1, progress=None, code="cc", alist=None):
    """ber_sweep.run_sweep with the code `code` (CODES; coded_ber): three rows per
    config and SNR (CURVES), in ber_sweep's CSV fields (bits and errors: coded bits for
    the uncoded curve, information bits for the decoded ones; no throughput). The code
    and its fit into each config's frames are checked before the first point runs."""
    for cfg in configs:
        cfg.validate()
        if cfg.mode not in MODES:
            raise ValueError("coded sweep: mode %r is not one of %s (mmse_detector's)"
                             % (cfg.mode, ", ".join(MODES)))
        if cfg.channel != "rayleigh":
            raise ValueError("coded sweep: only the i.i.d. Rayleigh channel (got %r)"
                             % cfg.channel)
        make_code(code, cfg.symbols * cfg.subcarriers * ref.BITS[cfg.modulation], alist)
    rows = []
    for cfg in configs:
        for snr in snrs_db:
            if progress:
                progress.update(cfg.label, snr, 0, frames)
            r = coded_ber(cfg.antennas, cfg.users, cfg.modulation, snr, frames, cfg.mode,
                          cfg.iterations, cfg.subcarriers, cfg.symbols,
                          cfg.backend, cfg.precision,
                          seed=seed, code=code, alist=alist)
            if progress:
                progress.point_done()
            for suffix, key in CURVES:
                bits = r["coded_bits"] if key == "uncoded" else r["info_bits"]
                rows.append({"label": "%s, %s" % (cfg.label, suffix),
                             "antennas": cfg.antennas, "users": cfg.users,
                             "modulation": cfg.modulation, "mode": cfg.mode,
                             "iterations": cfg.iterations, "precision": cfg.precision,
                             "channel": cfg.channel, "correlation": cfg.correlation,
                             "snr_db": snr, "frames": frames, "bits": bits,
                             "bit_errors": r[key + "_errors"], "erasures": 0,
                             "ber": r[key], "throughput_mbps": 0.0})
    return rows


def snr_at(snrs, bers, target=1e-3):
    """The SNR where a falling BER curve crosses `target`, interpolated in log10(BER);
    None when it does not cross within the points."""
    for (s0, b0), (s1, b1) in zip(zip(snrs, bers), zip(snrs[1:], bers[1:])):
        if b0 >= target > b1:
            if b1 <= 0:
                return s1
            l0, l1, lt = math.log10(b0), math.log10(b1), math.log10(target)
            return s0 + (s1 - s0) * (l0 - lt) / (l0 - l1)
    return None
