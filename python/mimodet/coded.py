#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Coded BER: a channel code of GNU Radio's gr-fec around a detector block.

What soft output is worth is what a channel decoder makes of it. Each user's bits of a
frame are one codeword of gr-fec's convolutional code (K = 7, rate 1/2, polynomials
109 and 79, i.e. octal 155 and 117, terminated: 2 (k + 6) coded bits for k information
bits), spread over the frame's subcarriers and symbols by a fixed pseudo-random
interleaver, detected by a detector block and decoded by gr-fec's Viterbi decoder
(cc_decoder through extended_decoder) twice: from the LLRs, and from their signs (hard
decisions, +-1) -- the same decoder, so the difference is the soft output's.

LLR sign and scale for gr-fec's decoders (docs/coding.md): cc_decoder reads soft bits
positive for bit 1, nominally in [-1, 1] (the detectors' default sign,
llr_positive_means_one=True, is that). extended_decoder multiplies them by 48, adds 128
and saturates to a byte, so inputs beyond +-2.67 are clipped and steps below 1/48 are
lost: the LLRs are multiplied by llr_scale (default 1/8: an LLR of 8 becomes 1, LLRs
up to 21 are kept) before the decoder. A Viterbi decoder's decisions do not depend on a
common scale of its inputs, only on what the clipping and the byte quantization keep.
"""

import math

import numpy as np

from . import constellation_ref as ref

#: gr-fec's convolutional code (the NASA/CCSDS K = 7 rate 1/2 pair).
K = 7
POLYS = [109, 79]
#: LLR -> decoder input scale (module doc).
DEFAULT_LLR_SCALE = 1.0 / 8.0


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


def coded_ber(antennas, users, modulation, snr_db, frames, mode="chol", iterations=3,
              subcarriers=64, symbols=14, backend="cpu", precision="fp32",
              llr_scale=DEFAULT_LLR_SCALE, seed=1):
    """Uncoded and coded BER of one configuration at one SNR (dB; N0 = U / SNR, unit
    power per user, i.i.d. Rayleigh per subcarrier and frame), through mmse_detector.

    Returns dict(uncoded, soft, hard, *_errors, info_bits, coded_bits): uncoded is the
    detector's own BER (LLR signs against the coded bits); soft and hard the information
    BER of the Viterbi decoder fed the scaled LLRs or their signs.
    """
    from gnuradio import blocks, gr

    from . import channel_tags, mmse_detector

    q = ref.BITS[modulation]
    per_user = symbols * subcarriers * q  # coded bits of one user in one frame
    code = ConvolutionalCode.filling(per_user)
    rng = np.random.default_rng(seed)
    interleaver = np.random.default_rng(12345).permutation(per_user)
    info = rng.integers(0, 2, (frames, users, code.info_bits), dtype=np.uint8)
    coded = code.encode(info).reshape(frames, users, code.coded_bits)
    tx = np.zeros((frames, users, per_user), dtype=np.uint8)
    tx[:, :, :code.coded_bits] = coded  # (padding: zeros, not decoded)
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
    received = received[:, :, :code.coded_bits].reshape(-1)
    soft = code.decode(np.clip(received * np.float32(llr_scale), -1e6, 1e6))
    hard = code.decode(np.where(received > 0, 1.0, -1.0).astype(np.float32))
    want = info.reshape(-1)
    soft_errors = int(np.sum(soft[:want.size] != want))
    hard_errors = int(np.sum(hard[:want.size] != want))
    return dict(uncoded=uncoded_errors / bits.size, uncoded_errors=uncoded_errors,
                soft=soft_errors / want.size, soft_errors=soft_errors,
                hard=hard_errors / want.size, hard_errors=hard_errors,
                info_bits=int(want.size), coded_bits=int(bits.size))


#: The curves of a coded sweep, per detector: label suffix and coded_ber key.
CURVES = (("uncoded", "uncoded"), ("coded, hard decisions", "hard"),
          ("coded, soft LLRs", "soft"))
#: Detector modes the coded sweep runs (through mmse_detector).
MODES = ("chol", "cg", "cr", "zf")


def run_coded_sweep(configs, snrs_db, frames, seed=1, progress=None):
    """ber_sweep.run_sweep with the convolutional code: three rows per config and SNR
    (CURVES), in ber_sweep's CSV fields (bits and errors: coded bits for the uncoded
    curve, information bits for the decoded ones; no throughput)."""
    for cfg in configs:
        cfg.validate()
        if cfg.mode not in MODES:
            raise ValueError("coded sweep: mode %r is not one of %s (mmse_detector's)"
                             % (cfg.mode, ", ".join(MODES)))
        if cfg.channel != "rayleigh":
            raise ValueError("coded sweep: only the i.i.d. Rayleigh channel (got %r)"
                             % cfg.channel)
    rows = []
    for cfg in configs:
        for snr in snrs_db:
            if progress:
                progress.update(cfg.label, snr, 0, frames)
            r = coded_ber(cfg.antennas, cfg.users, cfg.modulation, snr, frames, cfg.mode,
                          cfg.iterations, cfg.subcarriers, cfg.symbols,
                          cfg.backend, cfg.precision,
                          seed=seed)
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
