#!/usr/bin/env python3
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Emulates the pair-copy staging of equalize_tiled_kernel (lib/cuda/mmse/equalize_tiled.cu, the
# stage lambda's 16-byte path): every staged H and y element must come from the right
# source, or be zero past B, U or the call's symbols, for chunks of 16 and 32 antennas
# (tile_chunk) and every tile shape whose copies spread evenly over a k-group (the
# kernel's static_assert). Python only; ctest runs it (tests/CMakeLists.txt). A failed
# check exits non-zero.
import sys
if not __debug__:
    sys.exit("the checks are asserts: run without python -O")
import itertools
def spreads_evenly(UP, S, CH):
    """The kernel's static_assert: C % G == 0, base % (C / 2) == 0, S % kYRowStep == 0."""
    P = UP // 2; G = S // 4; base = P * G
    return CH % G == 0 and base % (CH // 2) == 0 and S % (base // (CH // 2)) == 0
def check(UP, S, B, U, count, kgroups, CH):
    P = UP // 2; G = S // 4; base = P * G
    chunks = (B + CH - 1) // CH
    rounds = (chunks + kgroups - 1) // kgroups
    kH = CH // G; kYstep = base // (CH // 2); kYrows = S // kYstep
    for kg in range(kgroups):
        for r in range(rounds):
            chunk = r * kgroups + kg; b0 = chunk * CH
            rows = min(CH, B - b0) if chunk < chunks else 0
            ms = {}; ys = {}
            for local in range(base):
                pair, grp = local % P, local // P
                for k in range(kH):  # H pairs
                    row = grp + G * k; valid = 2 * pair < U and row < rows
                    for c in range(2):
                        key = (row, 2 * pair + c); assert key not in ms
                        ms[key] = ('h', b0 + row, 2 * pair + c) if valid else 0
                y_col = 2 * (local % (CH // 2)); y_row = local // (CH // 2)
                for k in range(kYrows):
                    s = y_row + kYstep * k; valid = y_col < rows and s < count
                    for c in range(2):
                        key = (s, y_col + c); assert key not in ys
                        ys[key] = ('y', s, b0 + y_col + c) if valid else 0
            for row, u in itertools.product(range(CH), range(UP)):
                want = ('h', b0 + row, u) if (row < rows and u < U) else 0
                assert ms[(row, u)] == want, (UP, S, B, U, row, u, ms.get((row, u)), want)
            for s, b in itertools.product(range(S), range(CH)):
                want = ('y', s, b0 + b) if (s < count and b < rows) else 0
                assert ys[(s, b)] == want, (UP, S, B, U, s, b)
n = 0
for CH in (16, 32):
  for UP, S in ((8, 32), (8, 64), (16, 16), (16, 32), (16, 64), (32, 8), (32, 16), (32, 64)):
    if not spreads_evenly(UP, S, CH): continue
    for B in (6, 40, 64, 136):
        for U in sorted({UP, UP - 2, max(2, UP // 2)}):
            if U % 2 or U > UP: continue
            for count in sorted({S, max(1, S - 3), 3}):
                for kgroups in (1, 2, 4):
                    check(UP, S, B, U, count, kgroups, CH); n += 1
print("staging emulation: all", n, "cases copy every element from the right place or zero it")
