#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""NumPy simulator of a NOMA uplink like mehlhose2022's experiments (section 5).

K users, at a small angular separation, send to one array of M antennas over a
non-dispersive line-of-sight channel (mehlhose2022 eq. 5):

    r(t) = sum_k sqrt(p_k) e^{j phi_k} b_k(t) a(theta_k) + n(t),   n ~ CN(0, N0 I_M)

a(theta) is the array's steering vector: a uniform circular array (UCA) of radius
rho = lambda / (4 sin(pi/M)), so that neighbouring elements are half a wavelength apart,
a_m = exp(j 2 pi (rho/lambda) cos(theta - 2 pi m / M)); or a uniform linear array (ULA)
with half-wavelength spacing, a_m = exp(j pi m sin(theta)). User k looks from
theta_k = center + (k - (K-1)/2) * separation. p_k are the users' powers (default 1) and
phi_k independent uniform phases. b_k(t) are unit-energy Gray-mapped symbols of
constellation_ref (TS 38.211), N0 = 10^(-snr_db/10) (the SNR of a unit-power user per
antenna). A transmission is a training block (section 5: 685 symbols) followed by a data
block (3840 symbols), 16 antennas and 6 users.

Independent of the C++ simulator (lib/core/apsm/noma_scenario.cc): the same model, its
own code and random numbers. Also a least-squares linear receiver (the baseline the APSM
filter's linear part starts from) and nearest-point decisions, for tests and examples.
"""

import numpy as np

from . import constellation_ref as ref

ARRAYS = ("circular", "linear")


def steering_vector(array, antennas, theta):
    """The array response a(theta) [M] for direction theta (radians).

    circular: a_m = exp(j 2 pi rho cos(theta - 2 pi m / M)), rho = 1 / (4 sin(pi / M)) in
    wavelengths (neighbouring elements lambda/2 apart); linear: a_m = exp(j pi m sin theta).
    """
    m = np.arange(antennas)
    if array == "linear":
        phase = np.pi * m * np.sin(theta)
    elif array == "circular":
        rho = 1.0 / (4.0 * np.sin(np.pi / antennas)) if antennas > 1 else 0.0
        phase = 2.0 * np.pi * rho * np.cos(theta - 2.0 * np.pi * m / antennas)
    else:
        raise ValueError("array must be one of %s, got %r" % (", ".join(ARRAYS), array))
    return np.exp(1j * phase)


def channel(antennas, users, separation_deg=5.0, center_deg=0.0, powers=None,
            array="circular", rng=None):
    """The users' channel signatures H [M][K]: column k is sqrt(p_k) e^{j phi_k} a(theta_k)."""
    rng = np.random.default_rng(rng)
    if antennas < 1 or users < 1:
        raise ValueError("antennas and users must be at least 1")
    p = np.ones(users) if powers is None else np.asarray(powers, dtype=float)
    if p.shape != (users,) or np.any(p < 0):
        raise ValueError("powers: one non-negative power per user (%d), got %r" % (users, powers))
    theta = np.deg2rad(center_deg + (np.arange(users) - 0.5 * (users - 1)) * separation_deg)
    phases = rng.uniform(0.0, 2.0 * np.pi, users)
    h = np.stack([steering_vector(array, antennas, t) for t in theta], axis=1)
    return h * (np.sqrt(p) * np.exp(1j * phases))[None, :]


def simulate(antennas=16, users=6, training=685, data=3840, modulation="qpsk",
             separation_deg=5.0, snr_db=20.0, array="circular", seed=1, center_deg=0.0,
             powers=None):
    """One transmission: a training block then a data block through the same channel.

    Returns a dict: training_rx [T][M], data_rx [N][M] (complex128 received vectors),
    training_tx [T][K], data_tx [N][K] (the sent symbols), data_points [N][K] (their
    constellation indices; the bits are ref.points' index bits, MSB first), channel [M][K]
    and n0 (the noise variance per antenna, complex)."""
    if modulation not in ref.BITS:
        raise ValueError("modulation must be one of %s, got %r" % (", ".join(ref.BITS), modulation))
    if training < 0 or data < 0:
        raise ValueError("training and data must be >= 0")
    rng = np.random.default_rng(seed)
    h = channel(antennas, users, separation_deg, center_deg, powers, array, rng)
    n0 = 10.0 ** (-snr_db / 10.0)
    pts = ref.points(modulation)

    def block(n):
        idx = rng.integers(0, len(pts), (n, users))
        tx = pts[idx]
        noise = (rng.standard_normal((n, antennas))
                 + 1j * rng.standard_normal((n, antennas))) * np.sqrt(n0 / 2.0)
        return tx @ h.T + noise, tx, idx

    training_rx, training_tx, _ = block(training)
    data_rx, data_tx, data_points = block(data)
    return dict(training_rx=training_rx, data_rx=data_rx, training_tx=training_tx,
                data_tx=data_tx, data_points=data_points, channel=h, n0=n0)


def least_squares_equalize(training_rx, training_tx, data_rx):
    """Linear least-squares receiver: G = argmin ||R_train G - B_train||_F (numpy lstsq),
    applied to the data: Z = R_data G. R: [T][M] / [N][M], B: [T][K] -> Z [N][K]."""
    g, *_ = np.linalg.lstsq(np.asarray(training_rx), np.asarray(training_tx), rcond=None)
    return np.asarray(data_rx) @ g


def hard_decisions(z, modulation):
    """Nearest-point decisions: the index of the constellation point closest to each z."""
    pts = ref.points(modulation)
    return np.argmin(np.abs(np.asarray(z)[..., None] - pts) ** 2, axis=-1)


def bits_of_points(points, modulation):
    """Constellation indices [...] -> their bits [..., q] (MSB first, ref.points' order)."""
    q = ref.BITS[modulation]
    return (np.asarray(points)[..., None] >> np.arange(q - 1, -1, -1)) & 1
