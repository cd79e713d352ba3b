#!/usr/bin/env python3
"""Session 7: compares the sm_90 PTX of three builds of lib/cuda/kernels.cu kernel by kernel,
the anonymous namespace's hash normalized: which kernels of the third (the landed split) equal
the first's (d573c61) or the second's (the tested two-pass build), and for the others the diff
with virtual register numbers and labels normalized.
Usage: nvcc -std=c++17 -O3 -arch=sm_90 -ptx -Iinclude -Ilib/cuda lib/cuda/kernels.cu -o X.ptx
for each tree, then: ptx-compare.py base.ptx tested.ptx landed.ptx"""
import difflib, re, sys

def entries(path):
    txt = re.sub(r"_GLOBAL__N__[0-9a-f]{8}_\d+_kernels_cu_[0-9a-f]{8}", "ANON", open(path).read())
    out = {}
    for m in re.finditer(r"^(?:\.visible |\.weak )?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?(\S+?)\(",
                         txt, re.M):
        end = txt.index("\n}\n", m.start()) + 3
        out[m.group(1)] = txt[m.start():end]
    return out

base, tested, landed = (entries(p) for p in sys.argv[1:4])
assert set(base) == set(tested) == set(landed)
norm = lambda s: re.sub(r"%(p|rs|r|rd|f|fd|b)\d+", r"%\1", re.sub(r"\$L__BB\d+_\d+", "L", s))
counts = {"base": 0, "tested": 0, "neither": 0}
for name in sorted(landed):
    if landed[name] == base[name]:
        counts["base"] += 1
    elif landed[name] == tested[name]:
        counts["tested"] += 1
        print("as the tested build:", name)
    else:
        counts["neither"] += 1
        diff = list(difflib.unified_diff(norm(base[name]).split("\n"), norm(landed[name]).split("\n"),
                                         lineterm="", n=1))
        print("as neither:", name, f"({len(diff)} normalized diff lines against base)")
        print("\n".join(diff))
print(f"{len(landed)} functions: {counts}")
