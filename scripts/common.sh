# Shared steps of scripts/demo and scripts/test: install what is missing, configure, build,
# install. Sourced, not run. Idempotent: a second run only rebuilds what changed.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${MIMODET_BUILD_DIR:-$TOP/build}
# Root installs into /usr/local (on Debian's default paths); anyone else into ~/.local.
if [ "$(id -u)" -eq 0 ]; then
  PREFIX=${MIMODET_PREFIX:-/usr/local}
  SUDO=""
else
  PREFIX=${MIMODET_PREFIX:-$HOME/.local}
  SUDO=sudo
fi
# Debian's python3 is the one that imports gnuradio (a pyenv python3 on PATH cannot).
PYTHON=/usr/bin/python3

DEB_PACKAGES=(
  cmake make g++ pkg-config git
  gnuradio gnuradio-dev libvolk2-dev libspdlog-dev libfmt-dev libgmp-dev libboost-dev
  pybind11-dev python3-pybind11 python3-numpy python3-matplotlib python3-yaml python3-mako
  libuhd-dev libeigen3-dev libgtest-dev
)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

install_dependencies() {
  local missing=()
  for p in "${DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "Debian packages: all present"
    return
  fi
  log "Installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

python_dir() {
  # Where the Python module goes, relative to $PREFIX: for /usr/local this is on Debian's
  # default sys.path; for another prefix export_environment() adds it to PYTHONPATH.
  "$PYTHON" -c 'import sys; print("lib/python3.%d/dist-packages" % sys.version_info.minor)'
}

configure_build_install() {
  local pydir
  pydir=$(python_dir)
  log "Configuring in $BUILD_DIR (prefix $PREFIX)"
  cmake -S "$TOP" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DPYTHON_EXECUTABLE="$PYTHON" -DCMAKE_INSTALL_PREFIX="$PREFIX" -DGR_PYTHON_DIR="$pydir" \
    -DMIMODET_NATIVE_ARCH=ON \
    >"$BUILD_DIR.configure.log" 2>&1 || { cat "$BUILD_DIR.configure.log"; exit 1; }
  log "Building"
  cmake --build "$BUILD_DIR" -j "$(nproc)"
  log "Installing into $PREFIX"
  mkdir -p "$PREFIX" 2>/dev/null || true
  if [ -w "$PREFIX" ]; then
    cmake --install "$BUILD_DIR" >/dev/null
  else
    $SUDO cmake --install "$BUILD_DIR" >/dev/null
  fi
  if [ "$(id -u)" -eq 0 ]; then ldconfig; fi
  export_environment
}

export_environment() {
  # Make the installed module importable and findable by GRC for this process and its children.
  local pydir
  pydir=$(python_dir)
  case ":${PYTHONPATH:-}:" in *":$PREFIX/$pydir:"*) ;; *) export PYTHONPATH="$PREFIX/$pydir${PYTHONPATH:+:$PYTHONPATH}" ;; esac
  case ":${LD_LIBRARY_PATH:-}:" in *":$PREFIX/lib:"*) ;; *) export LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;; esac
  case ":${PATH}:" in *":$PREFIX/bin:"*) ;; *) export PATH="$PREFIX/bin:$PATH" ;; esac
  export GRC_BLOCKS_PATH="$PREFIX/share/gnuradio/grc/blocks${GRC_BLOCKS_PATH:+:$GRC_BLOCKS_PATH}"
}
