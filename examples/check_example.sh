#!/bin/sh
# Compiles a .grc with grcc and runs the generated flowgraph headless; passes when it exits 0
# and its output has a line matching EXPECTED (an extended regex).
# Usage: check_example.sh GRCC PYTHON FILE.grc OUTDIR EXPECTED [flowgraph arguments...]
set -e
grcc=$1; python=$2; grc=$3; outdir=$4; expected=$5
shift 5
mkdir -p "$outdir"
"$grcc" -o "$outdir" "$grc"
name=$(basename "$grc" .grc)
output=$("$python" -u "$outdir/$name.py" "$@")
printf '%s\n' "$output"
printf '%s\n' "$output" | grep -Eq "$expected" || { echo "expected a line matching: $expected" >&2; exit 1; }
