#!/bin/sh
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The layers hold (docs/architecture.md): a lower layer never includes a higher one.
#   lib/core and include/mimodet: no CUDA, no GNU Radio, nothing from lib/cuda or lib/factory;
#   lib/cuda: no GNU Radio, nothing from lib/factory; core only through "core/..." (lib/ is
#   the include root), never by climbing out of its folder ("../");
#   every .cu and .cuh: no GNU Radio, no pybind11 (nvcc never sees them).
# Usage: test_layers.sh SOURCE_DIR
set -u
top=$1
status=0
refuse() { # refuse DESCRIPTION PATTERN FILES...
  what=$1 pattern=$2
  shift 2
  found=$(grep -nE "$pattern" "$@" 2>/dev/null)
  if [ -n "$found" ]; then
    printf 'layer violation: %s\n%s\n' "$what" "$found"
    status=1
  fi
}
cd "$top" || exit 1
core=$(find lib/core include/mimodet -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' | sort)
cuda=$(find lib/cuda -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' | sort)
kernels=$(find lib include apps bench -name '*.cu' -o -name '*.cuh' 2>/dev/null | sort)
[ -n "$core" ] && [ -n "$cuda" ] || { echo "no sources found under $top/lib"; exit 1; }
# shellcheck disable=SC2086
{
  refuse "core includes a CUDA, GNU Radio or higher-layer header" \
    '^\s*#\s*include\s*[<"](\.\./|cuda/|factory/|cuda_runtime|cuda\.h|cufft|cublas|gnuradio/|pybind11)' $core
  refuse "cuda includes GNU Radio, pybind11, the factory, or climbs out of lib/cuda" \
    '^\s*#\s*include\s*[<"](\.\./|factory/|gnuradio/|pybind11)' $cuda
  refuse "a CUDA source includes GNU Radio or pybind11" \
    '^\s*#\s*include\s*[<"](gnuradio/|pybind11)' $kernels
}
[ $status -eq 0 ] && echo "layers hold: $(echo $core | wc -w) core, $(echo $cuda | wc -w) cuda sources checked"
exit $status
