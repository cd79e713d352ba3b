#!/bin/sh
# Compiles a .grc with grcc and runs the generated flowgraph headless; passes when it exits 0
# and its output has a line matching EXPECTED (an extended regex); with EXPECTED = !PATTERN
# it passes when the flowgraph fails with a line matching PATTERN.
# Usage: check_example.sh GRCC PYTHON FILE.grc OUTDIR EXPECTED [flowgraph arguments...]
set -e
grcc=$1; python=$2; grc=$3; outdir=$4; expected=$5
shift 5
mkdir -p "$outdir"
"$grcc" -o "$outdir" "$grc"
name=$(basename "$grc" .grc)
case $expected in
'!'*) # "!PATTERN": the flowgraph must fail, saying PATTERN (e.g. no radio attached)
  if output=$("$python" -u "$outdir/$name.py" "$@" </dev/null 2>&1); then
    printf '%s\n' "$output"; echo "expected the flowgraph to fail" >&2; exit 1
  fi
  printf '%s\n' "$output"
  printf '%s\n' "$output" | grep -Eq "${expected#!}" || { echo "expected a line matching: ${expected#!}" >&2; exit 1; }
  exit 0 ;;
esac
output=$("$python" -u "$outdir/$name.py" "$@")
printf '%s\n' "$output"
printf '%s\n' "$output" | grep -Eq "$expected" || { echo "expected a line matching: $expected" >&2; exit 1; }
