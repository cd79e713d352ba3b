#!/bin/sh
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# An ordinary user's install: installs this build into a fresh prefix as a user without root
# (nobody, when the test runs as root), then, in an environment that names only that prefix
# (no LD_LIBRARY_PATH), imports the module, checks that the libraries loaded are the
# prefix's own and not those of another install (a root install in /usr/local would
# otherwise hide a missing RUNPATH), runs an app and compiles and runs an installed example.
# Usage: test_user_install.sh BUILD_DIR PYTHON GR_PYTHON_DIR GRCC
set -eu
build=$1 python=$2 pydir=$3 grcc=$4

work=$(mktemp -d "${TMPDIR:-/tmp}/mimodet-user-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
mkdir -p "$prefix" "$work/home"

as_user() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
  chown -R nobody:nogroup "$work"
  as_user() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
  if ! as_user test -r "$build/cmake_install.cmake"; then
    echo "user install: user nobody cannot read $build (a parent folder is private)" >&2
    exit 1
  fi
  echo "user install: running as nobody"
fi

# cmake --install writes its manifest into the build folder, which the user may not own:
# the same install script, with the manifest written into the user's folder instead.
sed "s|\"$build/\${CMAKE_INSTALL_MANIFEST}\"|\"$work/\${CMAKE_INSTALL_MANIFEST}\"|" \
  "$build/cmake_install.cmake" >"$work/cmake_install.cmake"
chmod a+r "$work/cmake_install.cmake"
as_user cmake -DCMAKE_INSTALL_PREFIX="$prefix" -P "$work/cmake_install.cmake" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; exit 1; }
echo "user install: installed into $prefix"

# What the README tells a user to set for a prefix install, and nothing else (but the
# sanitizer runtime that a -DMIMODET_SANITIZE build's tests preload).
user_env() {
  as_user env -i HOME="$work/home" PATH="$prefix/bin:/usr/bin:/bin" \
    ${LD_PRELOAD:+LD_PRELOAD="$LD_PRELOAD"} ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} \
    PYTHONPATH="$prefix/$pydir" GRC_BLOCKS_PATH="$prefix/share/gnuradio/grc/blocks" "$@"
}

cd "$work/home"
user_env "$python" - "$prefix" <<'EOF'
import sys
prefix = sys.argv[1]
from gnuradio import mimodet
assert mimodet.__file__.startswith(prefix), "module imported from %s" % mimodet.__file__
libs = sorted({line.split()[-1] for line in open("/proc/self/maps")
               if "mimodet" in line and ".so" in line})
print("loaded:", *libs, sep="\n  ")
foreign = [lib for lib in libs if not lib.startswith(prefix)]
assert not foreign, "libraries from outside the prefix: %s" % foreign
assert any("libgnuradio-mimodet" in lib for lib in libs), "no libgnuradio-mimodet loaded"
assert any("libmimodet-core" in lib for lib in libs), "no libmimodet-core loaded"
EOF

app=$(user_env sh -c 'command -v mimodet_uplink')
[ "$app" = "$prefix/bin/mimodet_uplink" ] || { echo "mimodet_uplink found at '$app'" >&2; exit 1; }
user_env "$python" "$app" --antennas 16 --users 4 --subcarriers 32 --snr 30 --frames 2 \
  --backend cpu

example=$prefix/share/gr-mimodet/examples/uplink_sim_128x16.grc
user_env "$grcc" -o "$work/home" "$example" >"$work/grcc.log" 2>&1 || { cat "$work/grcc.log"; exit 1; }
out=$(user_env "$python" -u "$work/home/uplink_sim_128x16.py" --snr-db 30 --frames 2)
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -Eq 'bit errors 0,' || { echo "example: expected 'bit errors 0,'" >&2; exit 1; }
echo "user install: import, app and example ran from $prefix"
