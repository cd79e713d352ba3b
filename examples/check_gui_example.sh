#!/bin/sh
# Compiles a QT GUI .grc with grcc, runs it headless (QT_QPA_PLATFORM=offscreen) through
# gnuradio.mimodet.screenshot, which grabs its window to OUTDIR/NAME.png and checks what
# its arguments ask; passes when that exits 0 and its output has a line matching EXPECTED.
# Usage: check_gui_example.sh GRCC PYTHON FILE.grc OUTDIR EXPECTED [screenshot arguments...]
set -e
grcc=$1; python=$2; grc=$3; outdir=$4; expected=$5
shift 5
mkdir -p "$outdir"
"$grcc" -o "$outdir" "$grc"
name=$(basename "$grc" .grc)
status=0
output=$(QT_QPA_PLATFORM=offscreen "$python" -u -m gnuradio.mimodet.screenshot \
  "$outdir/$name.py" --png "$outdir/$name.png" "$@" 2>&1) || status=$?
printf '%s\n' "$output"
[ "$status" = 0 ] || { echo "the flowgraph failed (exit $status)" >&2; exit 1; }
printf '%s\n' "$output" | grep -Eq "$expected" || { echo "expected a line matching: $expected" >&2; exit 1; }
