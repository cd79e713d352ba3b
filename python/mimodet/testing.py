#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The backend the QA tests run the detector blocks on.

MIMODET_TEST_BACKEND=cuda runs every detector block of the QA tests on the GPU (as
scripts/gpu-run-gnuradio does on a GPU machine); unset or cpu, they run on the CPU. Tests
of behaviour that belongs to one backend (the CPU fallback, device lists) name it
themselves.
"""

import os

BACKENDS = ("cpu", "cuda")


def backend():
    """The backend named by MIMODET_TEST_BACKEND (default cpu); anything else is refused."""
    name = os.environ.get("MIMODET_TEST_BACKEND", "cpu")
    if name not in BACKENDS:
        raise ValueError("MIMODET_TEST_BACKEND must be one of %s, got %r" % (", ".join(BACKENDS), name))
    return name


BACKEND = backend()


def implementation(mode):
    """What a block's implementation() says for this mode on the test backend."""
    return "%s-%s" % (BACKEND, mode)


def assert_chains_agree(got, want):
    """LLRs of the one-block receive chain (ofdm_uplink_detector) against the receiver
    block followed by a detector block, on the test backend.

    On the CPU both run the same code: bit for bit. On the GPU the one-block chain forms
    h and y with its own kernels and cuFFT while the receiver block runs on the CPU, so
    they differ by float rounding: within 2e-3 relative (plus 1e-4 of the largest LLR),
    and with the same signs wherever an LLR is larger than that.
    """
    import numpy as np

    got, want = np.asarray(got).ravel(), np.asarray(want).ravel()
    if BACKEND == "cpu":
        np.testing.assert_array_equal(got, want)
        return
    atol = 1e-4 * float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=atol)
    clear = np.abs(want) > atol
    np.testing.assert_array_equal(np.sign(got[clear]), np.sign(want[clear]))


def narrow_llrs(llr, llr_type, int8_scale=8.0):
    """Float LLRs as a block with this llr_type writes them (docs/precision.md): "int8"
    round(LLR * int8_scale), ties to even, saturated to +-127; "fp16" IEEE binary16
    saturated to +-65504, as int16 bit patterns. Rounded in float32, as the blocks do."""
    import numpy as np

    llr = np.asarray(llr, dtype=np.float32)
    if llr_type == "int8":
        return np.clip(np.rint(llr * np.float32(int8_scale)), -127, 127).astype(np.int8)
    if llr_type == "fp16":
        return np.clip(llr, -65504, 65504).astype(np.float16).view(np.int16)
    raise ValueError("llr_type must be int8 or fp16, got %r" % (llr_type,))


def run_with_llr_type(make_detector, y, tags, llr_type, max_items=None):
    """A fresh flowgraph: vector source of y [n_sym][N_sc][B] with tags -> the block that
    make_detector(llr_type) makes -> the sink of its item type. The LLRs, as float32 for
    "float", int8 for "int8" and int16 bit patterns for "fp16"."""
    import numpy as np
    from gnuradio import blocks, gr

    tb = gr.top_block()
    det = make_detector(llr_type)
    vlen = y.shape[1] * y.shape[2]
    src = blocks.vector_source_c(y.astype(np.complex64).ravel().tolist(), False, vlen, tags)
    size = {"float": 4, "int8": 1, "fp16": 2}[llr_type]
    sink = {"float": blocks.vector_sink_f, "int8": blocks.vector_sink_b,
            "fp16": blocks.vector_sink_s}[llr_type](
        det.output_signature().sizeof_stream_item(0) // size)
    if max_items:
        det.set_max_noutput_items(max_items)
    tb.connect(src, det, sink)
    tb.run()
    data = np.array(sink.data(), dtype=np.int64 if llr_type != "float" else np.float32)
    if llr_type == "int8":
        return (data & 0xFF).astype(np.uint8).view(np.int8), det
    if llr_type == "fp16":
        return (data & 0xFFFF).astype(np.uint16).view(np.int16), det
    return data, det


def constellation_clouds(symbols, modulation):
    """How equalised symbols cluster around the constellation points. Returns (counts,
    spread): per point, the estimates nearest to it (exact zeros, erased, are left out),
    and the largest RMS distance of a point's estimates to it relative to half the
    minimum distance between points. The constellation shows as separate clouds, one per
    point, when every count is > 0 and spread is well under 1 (< 0.5)."""
    import numpy as np
    from gnuradio.mimodet import constellation_ref as ref

    z = np.asarray(symbols).ravel()
    z = z[z != 0]
    pts = ref.points(modulation)
    nearest = np.abs(z[:, None] - pts[None, :]).argmin(axis=1)
    counts = np.bincount(nearest, minlength=len(pts))
    d = np.abs(pts[:, None] - pts[None, :])
    half_dmin = d[d > 0].min() / 2
    spread = max(np.sqrt(np.mean(np.abs(z[nearest == k] - pts[k]) ** 2))
                 for k in range(len(pts)) if counts[k])
    return counts, spread / half_dmin


def run_with_displays(make_detector, y, tags, max_items=None):
    """A fresh flowgraph: vector source of y [n_sym][N_sc][B] with tags -> the block that
    make_detector() makes with equalized_output and quality_output on -> sinks. Returns
    a dict: llr [n_sym, N_sc*U*bits], sym [n_sym, N_sc*U], sinr_db and evm [n_sym, U],
    messages (the "quality" dicts as Python dicts), det."""
    import numpy as np
    import pmt
    from gnuradio import blocks, gr

    tb = gr.top_block()
    det = make_detector()
    vlen = y.shape[1] * y.shape[2]
    src = blocks.vector_source_c(y.astype(np.complex64).ravel().tolist(), False, vlen, tags)
    sig = det.output_signature()
    llr = blocks.vector_sink_f(sig.sizeof_stream_item(0) // 4)
    sym = blocks.vector_sink_c(sig.sizeof_stream_item(1) // 8)
    sinr = blocks.vector_sink_f(sig.sizeof_stream_item(2) // 4)
    evm = blocks.vector_sink_f(sig.sizeof_stream_item(3) // 4)
    debug = blocks.message_debug()
    if max_items:
        det.set_max_noutput_items(max_items)
    tb.connect(src, det)
    for port, sink in enumerate((llr, sym, sinr, evm)):
        tb.connect((det, port), sink)
    tb.msg_connect((det, "quality"), (debug, "store"))
    tb.run()
    users = sig.sizeof_stream_item(2) // 4
    n = y.shape[0]
    messages = [pmt.to_python(debug.get_message(i)) for i in range(debug.num_messages())]
    return dict(llr=np.array(llr.data()).reshape(n, -1),
                sym=np.array(sym.data()).reshape(n, -1),
                sinr_db=np.array(sinr.data()).reshape(n, users),
                evm=np.array(evm.data()).reshape(n, users),
                messages=messages, det=det)
