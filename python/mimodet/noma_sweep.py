#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""BER sweeps of the APSM NOMA receiver against a least-squares linear receiver
(mehlhose2022 section 5, Figures 8 and 9): table, CSV and PNG plot.

Every point runs N transmissions of noma.simulate (T training and D data symbols, K users
at a small angular separation, M antennas); the APSM receiver (apsm_detector) and the
least-squares receiver (noma.least_squares_equalize) are trained on the same training
symbols of the same transmission. APSM's bits are its LLRs' signs, least squares' the
nearest points' bits. A point reports the BER over all its bits and the standard deviation
of the transmissions' BERs (the paper's +-1 SD bars). Transmission i of every point uses the
seed (seed, i), so curves that differ only in the receiver see the same data.

Used by apps/mimodet_sim (curves MxK:MODULATION:apsm or :ls); importable for scripts.
"""

import csv
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from . import noma
from .mimodet_python import apsm_detector

RECEIVERS = ("apsm", "ls")
ARRAYS = noma.ARRAYS
MODULATIONS = ("bpsk", "qpsk", "16qam", "64qam", "256qam")
CSV_FIELDS = ["label", "receiver", "antennas", "users", "modulation", "array",
              "separation_deg", "training", "data", "snr_db", "transmissions", "bits",
              "bit_errors", "ber", "ber_std", "implementation", "scatter_paths",
              "angular_spread_deg", "rician_k_db", "powers_db", "user_ber"]
#: Users' powers within this of a unit-power user (noma.channel's p_k, in dB).
MAX_POWER_DB = 60.0


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass
class NomaConfig:
    """One curve: a NOMA scenario (antennas, users, modulation, array, separation) and a
    receiver, "apsm" or "ls". backend and num_threads are APSM's."""
    antennas: int = 16
    users: int = 6
    modulation: str = "qpsk"
    receiver: str = "apsm"
    array: str = "circular"
    separation_deg: float = 5.0
    scatter_paths: int = 0          # noma.channel: 0 is line of sight only
    angular_spread_deg: float = 20.0
    rician_k_db: float = 0.0
    powers_db: tuple = ()           # p_k of noma.channel in dB, one per user; (): all 0 dB
    training: int = 685
    data: int = 3840
    backend: str = "auto"
    num_threads: int = 0
    label: str = field(default="")

    def __post_init__(self):
        if not self.label:
            name = "APSM" if self.receiver == "apsm" else "least squares"
            self.label = f"{self.antennas}x{self.users} {self.modulation} {name}"

    def validate(self):
        """Raises ValueError naming the first bad field (run_sweep checks every curve
        before any point runs)."""
        def need(ok, what):
            if not ok:
                raise ValueError(f"NOMA curve {self.label!r}: {what}")
        for name in ("antennas", "users", "training", "data"):
            value = getattr(self, name)
            need(_is_int(value) and value >= 1, f"{name} must be a positive integer, got {value!r}")
        need(self.training >= self.antennas,
             f"training ({self.training}) must be at least antennas ({self.antennas}): the "
             "least-squares fit needs M symbols")
        need(self.receiver in RECEIVERS, f"receiver must be one of {', '.join(RECEIVERS)}")
        need(self.modulation in MODULATIONS,
             f"modulation must be one of {', '.join(MODULATIONS)}, got {self.modulation!r}")
        need(self.array in ARRAYS, f"array must be one of {', '.join(ARRAYS)}")
        need(isinstance(self.separation_deg, numbers.Real) and
             math.isfinite(self.separation_deg), "separation_deg must be a finite number")
        need(_is_int(self.scatter_paths) and self.scatter_paths >= 0,
             f"scatter_paths must be an integer >= 0, got {self.scatter_paths!r}")
        need(isinstance(self.angular_spread_deg, numbers.Real) and
             math.isfinite(self.angular_spread_deg) and self.angular_spread_deg >= 0,
             "angular_spread_deg must be a finite number >= 0")
        need(isinstance(self.rician_k_db, numbers.Real) and abs(self.rician_k_db) <= 100.0,
             "rician_k_db must be a number within +-100 dB")
        need(len(self.powers_db) in (0, self.users) and
             all(isinstance(p, numbers.Real) and not isinstance(p, bool) and
                 abs(p) <= MAX_POWER_DB
                 for p in self.powers_db),
             f"powers_db must be one power per user ({self.users}), each within "
             f"+-{MAX_POWER_DB:g} dB, got {list(self.powers_db)!r}")
        need(self.backend in ("auto", "cpu", "cuda"), f"unknown backend {self.backend!r}")
        need(_is_int(self.num_threads) and self.num_threads >= 0,
             f"num_threads must be an integer >= 0, got {self.num_threads!r}")


def _seed(seed, i):
    return [int(seed), int(i)]


def run_point(cfg, snr_db, transmissions, seed=1, detector=None, progress=None):
    """One point of one curve; returns a row dict (CSV_FIELDS). `detector`: an
    apsm_detector of cfg's size to reuse (it is retrained on every transmission)."""
    q = noma.ref.BITS[cfg.modulation]
    if cfg.receiver == "apsm" and detector is None:
        detector = apsm_detector(cfg.antennas, cfg.users, cfg.modulation, backend=cfg.backend,
                                 num_threads=cfg.num_threads)
    errors, bits, per_tx = 0, 0, []
    user_errors = np.zeros(cfg.users, dtype=np.int64)
    powers = [10.0 ** (p / 10.0) for p in cfg.powers_db] if cfg.powers_db else None
    for i in range(transmissions):
        tx = noma.simulate(cfg.antennas, cfg.users, cfg.training, cfg.data, cfg.modulation,
                           cfg.separation_deg, snr_db, cfg.array, seed=_seed(seed, i),
                           powers=powers,
                           scatter_paths=cfg.scatter_paths,
                           angular_spread_deg=cfg.angular_spread_deg,
                           rician_k_db=cfg.rician_k_db)
        sent = noma.bits_of_points(tx["data_points"], cfg.modulation)  # [N][K][q]
        if cfg.receiver == "apsm":
            detector.train(tx["training_rx"].astype(np.complex64),
                           tx["training_tx"].astype(np.complex64))
            _, llr = detector.detect(tx["data_rx"].astype(np.complex64))
            got = (llr > 0).astype(sent.dtype)
        else:
            z = noma.least_squares_equalize(tx["training_rx"], tx["training_tx"], tx["data_rx"])
            got = noma.bits_of_points(noma.hard_decisions(z, cfg.modulation), cfg.modulation)
        wrong = got != sent
        user_errors += np.count_nonzero(wrong, axis=(0, 2))
        e = int(np.count_nonzero(wrong))
        errors += e
        bits += sent.size
        per_tx.append(e / sent.size)
        if progress:
            progress.update(cfg.label, snr_db, i + 1, transmissions)
    assert bits == transmissions * cfg.data * cfg.users * q
    return {"label": cfg.label, "receiver": cfg.receiver, "antennas": cfg.antennas,
            "users": cfg.users, "modulation": cfg.modulation, "array": cfg.array,
            "separation_deg": cfg.separation_deg, "training": cfg.training, "data": cfg.data,
            "snr_db": snr_db, "transmissions": transmissions, "bits": bits,
            "bit_errors": errors, "ber": errors / bits,
            "ber_std": float(np.std(per_tx)) if per_tx else 0.0,
            "implementation": detector.name() if cfg.receiver == "apsm" else "numpy-lstsq",
            "scatter_paths": cfg.scatter_paths, "angular_spread_deg": cfg.angular_spread_deg,
            "rician_k_db": cfg.rician_k_db,
            "powers_db": ";".join(f"{p:g}" for p in cfg.powers_db),
            # each user's BER: with unequal powers the weak users' BER is the one that counts
            "user_ber": ";".join(f"{e / (bits / cfg.users):.4e}" for e in user_errors)}


def run_sweep(configs, snrs_db, transmissions, seed=1, progress=None):
    """Every curve at every SNR; returns the rows. Raises ValueError before running
    anything on a bad curve or argument."""
    for cfg in configs:
        cfg.validate()
    if not snrs_db:
        raise ValueError("NOMA sweep: no SNR points")
    for snr in snrs_db:
        if not (isinstance(snr, numbers.Real) and math.isfinite(snr)):
            raise ValueError(f"NOMA sweep: SNR {snr!r} dB is not a finite number")
    if not (_is_int(transmissions) and transmissions >= 1):
        raise ValueError(f"NOMA sweep: transmissions must be a positive integer, got "
                         f"{transmissions!r}")
    rows = []
    for cfg in configs:
        detector = None
        if cfg.receiver == "apsm":
            detector = apsm_detector(cfg.antennas, cfg.users, cfg.modulation,
                                     backend=cfg.backend, num_threads=cfg.num_threads)
        for snr in snrs_db:
            rows.append(run_point(cfg, snr, transmissions, seed, detector, progress))
            if progress:
                progress.point_done()
    return rows


def format_table(rows):
    # each user's BER too where the users' powers differ (power-domain NOMA)
    per_user = any(r.get("powers_db") for r in rows)
    header = (f"{'receiver':<28} {'SNR dB':>7} {'bits':>11} {'errors':>9} {'BER':>10} "
              f"{'SD':>10}  implementation")
    if per_user:
        header += "     BER of each user"
    lines = [header, "-" * len(header)]
    for r in rows:
        line = (f"{r['label']:<28} {r['snr_db']:>7.1f} {r['bits']:>11d} "
                f"{r['bit_errors']:>9d} {r['ber']:>10.3e} {r['ber_std']:>10.3e}  "
                f"{r['implementation']}")
        if per_user:
            line += "  " + " ".join(f"{float(b):.2e}" for b in r["user_ber"].split(";"))
        lines.append(line)
    return "\n".join(lines)


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def plot_png(rows, path, x="snr", title=None):
    """BER curves with +-1 SD bands. x="snr": one curve per label against SNR (Figure 8's
    comparison as curves); x="antennas": against the antenna count, one curve per receiver,
    users, modulation and SNR (Figure 9). Points without errors are left out (no place on a
    log axis) and the plot says how many. Against SNR, curves of users of unequal power
    also show the BER of their weakest user (the first of the lowest power), dotted.
    Returns the legend's labels."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if x not in ("snr", "antennas"):
        raise ValueError(f"plot_png: x must be 'snr' or 'antennas', got {x!r}")
    if x == "snr":
        key = lambda r: r["label"]  # noqa: E731
        xval, xlabel = "snr_db", "SNR of one user per antenna (dB)"
    else:
        key = lambda r: (f"{'APSM' if r['receiver'] == 'apsm' else 'least squares'} "  # noqa: E731
                         f"{r['users']} users {r['modulation']} {r['snr_db']:g} dB")
        xval, xlabel = "antennas", "receive antennas M"
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    omitted = 0
    for label in dict.fromkeys(key(r) for r in rows):
        pts = sorted((r[xval], r["ber"], r["ber_std"]) for r in rows if key(r) == label)
        shown = [p for p in pts if p[1] > 0]
        omitted += len(pts) - len(shown)
        if not shown:
            continue
        xs = [p[0] for p in shown]
        ber = np.array([p[1] for p in shown])
        sd = np.array([p[2] for p in shown])
        line, = ax.semilogy(xs, ber, marker="o", label=label,
                            linestyle="--" if "least" in label else "-")
        ax.fill_between(xs, np.maximum(ber - sd, ber / 10), ber + sd, alpha=0.15,
                        color=line.get_color())
        mine = [r for r in rows if key(r) == label]
        if x == "snr" and mine[0].get("powers_db"):
            # the mean hides the weak users, whose BER is the one a link budget needs
            powers = [float(p) for p in mine[0]["powers_db"].split(";")]
            k = int(np.argmin(powers))
            weak = sorted((r["snr_db"], float(r["user_ber"].split(";")[k])) for r in mine)
            weak_shown = [p for p in weak if p[1] > 0]
            omitted += len(weak) - len(weak_shown)
            if weak_shown:
                ax.semilogy([p[0] for p in weak_shown], [p[1] for p in weak_shown],
                            linestyle=":", marker=".", color=line.get_color(),
                            label=f"{label}, user {k} ({powers[k]:g} dB)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("uncoded BER")
    if rows:
        r0 = rows[0]
        channel = "line of sight" if not r0.get("scatter_paths") else (
            f"{r0['scatter_paths']} scattered paths, {r0['angular_spread_deg']:g} deg spread, "
            f"K {r0['rician_k_db']:g} dB")
        if r0.get("powers_db"):
            channel += f"; user powers {r0['powers_db'].replace(';', ', ')} dB"
        ax.set_title(title or f"NOMA, {r0['array']} array, users {r0['separation_deg']:g} deg "
                              f"apart, {r0['transmissions']} transmissions a point\n{channel}",
                     fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if rows and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    if omitted:
        # under the axis label, where no legend or curve can cover it
        ax.set_xlabel(f"{ax.get_xlabel()}\n({omitted} point(s) with no bit errors not shown)")
    labels = ax.get_legend_handles_labels()[1]
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return labels
