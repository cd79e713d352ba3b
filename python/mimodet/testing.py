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
