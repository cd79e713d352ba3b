#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""NumPy simulator of a NOMA uplink like mehlhose2022's experiments (section 5).

K users, at a small angular separation, send to one array of M antennas over a
non-dispersive line-of-sight channel (mehlhose2022 eq. 5), optionally with scattered paths
around each user's direction (channel()):

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

import os

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
            array="circular", rng=None, scatter_paths=0, angular_spread_deg=20.0,
            rician_k_db=0.0):
    """The users' channel signatures H [M][K]: column k is sqrt(p_k) e^{j phi_k} a(theta_k).

    With scatter_paths = L > 0, each user also arrives over L scattered paths around its
    direction (a geometric one-ring model, as indoors), at the Rician factor
    K_R = 10^(rician_k_db/10) of line-of-sight to scattered power:
    h_k = sqrt(p_k) [sqrt(K_R/(K_R+1)) e^{j phi_k} a(theta_k)
                     + sqrt(1/((K_R+1) L)) sum_l alpha_l a(theta_k + delta_l)],
    alpha_l ~ CN(0, 1), delta_l ~ N(0, angular_spread_deg^2): E|h_mk|^2 = p_k still;
    |rician_k_db| <= 100. The line-of-sight channel (L = 0) draws the same random numbers as
    before the option."""
    rng = np.random.default_rng(rng)
    if antennas < 1 or users < 1:
        raise ValueError("antennas and users must be at least 1")
    if not (isinstance(scatter_paths, (int, np.integer)) and not isinstance(scatter_paths, bool)
            and scatter_paths >= 0):
        raise ValueError("scatter_paths must be an integer >= 0, got %r" % (scatter_paths,))
    if not (np.isfinite(angular_spread_deg) and angular_spread_deg >= 0):
        raise ValueError("angular_spread_deg must be finite and >= 0, got %r" % (angular_spread_deg,))
    if not abs(rician_k_db) <= 100.0:
        raise ValueError("rician_k_db must be within +-100 dB, got %r" % (rician_k_db,))
    p = np.ones(users) if powers is None else np.asarray(powers, dtype=float)
    if p.shape != (users,) or np.any(p < 0):
        raise ValueError("powers: one non-negative power per user (%d), got %r" % (users, powers))
    theta = np.deg2rad(center_deg + (np.arange(users) - 0.5 * (users - 1)) * separation_deg)
    phases = rng.uniform(0.0, 2.0 * np.pi, users)
    h = np.stack([steering_vector(array, antennas, t) for t in theta], axis=1)
    h = h * (np.sqrt(p) * np.exp(1j * phases))[None, :]
    if scatter_paths > 0:
        kr = 10.0 ** (rician_k_db / 10.0)  # within 1e-10 .. 1e10 (validated above)
        los, nlos = np.sqrt(kr / (kr + 1.0)), np.sqrt(1.0 / ((kr + 1.0) * scatter_paths))
        spread = np.deg2rad(angular_spread_deg)
        for k in range(users):
            delta = spread * rng.standard_normal(scatter_paths)
            alpha = (rng.standard_normal(scatter_paths)
                     + 1j * rng.standard_normal(scatter_paths)) / np.sqrt(2.0)
            paths = sum(a * steering_vector(array, antennas, theta[k] + d)
                        for a, d in zip(alpha, delta))
            h[:, k] = los * h[:, k] + nlos * np.sqrt(p[k]) * paths
    return h


def simulate(antennas=16, users=6, training=685, data=3840, modulation="qpsk",
             separation_deg=5.0, snr_db=20.0, array="circular", seed=1, center_deg=0.0,
             powers=None, scatter_paths=0, angular_spread_deg=20.0, rician_k_db=0.0):
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
    h = channel(antennas, users, separation_deg, center_deg, powers, array, rng,
                scatter_paths, angular_spread_deg, rician_k_db)
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


# --- Recordings ---------------------------------------------------------------------------
# A NOMA recording is a multi-channel SigMF capture (sigmf.py), one channel per antenna, with
# global "mimodet:noma": the users, the modulation, where the training sequence starts
# ("training_offset", in samples) and its known symbols ("training_symbols", [T*K] pairs
# [re, im], symbol t of user k at t*K + k), and an annotation "mimodet:apsm_training" over the
# training sequence. That is what the apsm_receiver block needs to run on a recording
# (examples/noma_apsm_capture.grc). write_capture also keeps the sent data in NAME.noma.npz,
# so that a replay of a simulated recording can be scored.

LAYOUT_KEY = "mimodet:noma"
TRAINING_LABEL = "mimodet:apsm_training"


def write_capture(path, transmission, modulation, lead=0, sample_rate=1e6,
                  center_frequency=2.442e9, datatype="cf32_le", seed=0):
    """Writes one transmission of simulate() as a NOMA recording at `path` (a SigMF base
    name): `lead` vectors of noise alone (the transmission's N0), then its training and data
    vectors. Returns the metadata file's name."""
    from . import sigmf
    tr, data = np.asarray(transmission["training_rx"]), np.asarray(transmission["data_rx"])
    sym = np.asarray(transmission["training_tx"])
    if modulation not in ref.BITS:
        raise ValueError("modulation must be one of %s, got %r" % (", ".join(ref.BITS), modulation))
    if not (isinstance(lead, (int, np.integer)) and lead >= 0):
        raise ValueError("lead must be an integer >= 0, got %r" % (lead,))
    antennas, users = tr.shape[1], sym.shape[1]
    rng = np.random.default_rng(seed)
    noise = (rng.standard_normal((lead, antennas)) + 1j * rng.standard_normal((lead, antennas))) \
        * np.sqrt(transmission["n0"] / 2.0)
    samples = np.concatenate([noise, tr, data]).T  # [M][n]
    layout = {"antennas": int(antennas), "users": int(users), "modulation": modulation,
              "training_offset": int(lead), "training": int(tr.shape[0]),
              "training_symbols": [[float(v.real), float(v.imag)] for v in sym.ravel()]}
    scale = None
    if datatype == "ci16_le":  # the largest |I| or |Q| at 30000 steps, as sigmf.write_capture
        peak = max(np.abs(samples.real).max(initial=0.0), np.abs(samples.imag).max(initial=0.0))
        scale = peak / 30000.0 if peak > 0 else 1.0
    with sigmf.CaptureWriter(path, antennas, sample_rate, center_frequency, datatype, scale,
                             description="NOMA uplink, %d users, simulated by "
                             "gnuradio.mimodet.noma" % users,
                             extra={LAYOUT_KEY: layout}) as writer:
        writer.annotate(lead, tr.shape[0], TRAINING_LABEL)
        writer.write(samples)
    np.savez(sigmf.capture_base(path) + ".noma.npz", training_tx=sym,
             data_points=np.asarray(transmission["data_points"]), data=data.shape[0],
             training_offset=lead)
    return writer.meta_path


def read_capture_layout(path):
    """A NOMA recording's layout: dict with antennas, users, modulation, training_offset,
    training (T) and training_symbols (complex [T][K]); plus "truth" (the .noma.npz of a
    simulated recording: training_tx, data_points) or None. Raises ValueError, naming the
    file and field, for a capture without a valid "mimodet:noma"."""
    from . import sigmf
    meta = sigmf.read_metadata(path)
    where = "SigMF capture %r: global %s" % (path, LAYOUT_KEY)
    layout = meta["global"].get(LAYOUT_KEY)
    if not isinstance(layout, dict):
        raise ValueError("%s is missing or not an object (a NOMA recording made by "
                         "noma.write_capture has it; give the training symbols and offset "
                         "to apsm_receiver yourself otherwise)" % where)
    out = {}
    for key in ("antennas", "users", "training_offset", "training"):
        v = layout.get(key)
        least = 0 if key == "training_offset" else 1
        if not (isinstance(v, int) and not isinstance(v, bool) and v >= least):
            raise ValueError("%s: %s must be a %s integer, got %r"
                             % (where, key, "non-negative" if key == "training_offset" else "positive", v))
        out[key] = v
    if layout.get("modulation") not in ref.BITS:
        raise ValueError("%s: modulation must be one of %s, got %r"
                         % (where, ", ".join(ref.BITS), layout.get("modulation")))
    out["modulation"] = layout["modulation"]
    if out["antennas"] != int(meta["global"]["core:num_channels"]):
        raise ValueError("%s: %d antennas, but the capture holds %s channels"
                         % (where, out["antennas"], meta["global"]["core:num_channels"]))
    try:
        pairs = np.asarray(layout.get("training_symbols"), dtype=float)
    except (TypeError, ValueError):
        pairs = np.zeros((0,))
    t, k = out["training"], out["users"]
    if pairs.shape != (t * k, 2) or not np.all(np.isfinite(pairs)):
        raise ValueError("%s: training_symbols must be %d finite [re, im] pairs (T = %d, K = %d)"
                         % (where, t * k, t, k))
    out["training_symbols"] = (pairs[:, 0] + 1j * pairs[:, 1]).reshape(t, k)
    if out["training_offset"] + t > sigmf.num_samples(path, meta):
        raise ValueError("%s: the training sequence (%d vectors at %d) runs past the end of "
                         "the capture (%d)" % (where, t, out["training_offset"],
                                               sigmf.num_samples(path, meta)))
    truth = sigmf.capture_base(path) + ".noma.npz"
    out["truth"] = None
    if os.path.isfile(truth):
        with np.load(truth) as z:
            out["truth"] = {"training_tx": z["training_tx"], "data_points": z["data_points"]}
    return out


def resolve_capture_layout(path):
    """read_capture_layout without raising, for flowgraphs that GRC must show and compile
    before the capture exists: the layout with "error": None, or section 5's defaults (16
    antennas, 6 QPSK users, 685 training symbols at 0) with "error" saying what is wrong;
    the flowgraph checks it before it starts."""
    try:
        return dict(read_capture_layout(path), error=None)
    except (ValueError, OSError) as e:
        return {"antennas": 16, "users": 6, "modulation": "qpsk", "training_offset": 0,
                "training": 685, "training_symbols": np.zeros((685, 6), complex),
                "truth": None, "error": str(e)}


def main(argv=None):
    """python3 -m gnuradio.mimodet.noma NAME [options]: writes a simulated NOMA recording
    (write_capture) to try examples/noma_apsm_capture.grc without a radio."""
    import argparse
    p = argparse.ArgumentParser(prog="python3 -m gnuradio.mimodet.noma",
                                description=main.__doc__.split(":", 1)[1].strip())
    p.add_argument("name", help="SigMF base name of the recording to write")
    p.add_argument("--antennas", type=int, default=16)
    p.add_argument("--users", type=int, default=6)
    p.add_argument("--modulation", default="qpsk", choices=list(ref.BITS))
    p.add_argument("--training", type=int, default=685)
    p.add_argument("--data", type=int, default=3840)
    p.add_argument("--separation", type=float, default=5.0, help="degrees between users")
    p.add_argument("--array", default="circular", choices=list(ARRAYS))
    p.add_argument("--snr", type=float, default=20.0, help="dB, of one user per antenna")
    p.add_argument("--lead", type=int, default=0, help="noise-only vectors before the training")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    for name in ("antennas", "users", "training", "data"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name)
    if a.lead < 0 or a.training < a.antennas:
        p.error("--lead must be >= 0 and --training at least --antennas")
    tx = simulate(a.antennas, a.users, a.training, a.data, a.modulation, a.separation, a.snr,
                  a.array, seed=a.seed)
    print("wrote", write_capture(a.name, tx, a.modulation, lead=a.lead, seed=a.seed))


if __name__ == "__main__":
    main()
