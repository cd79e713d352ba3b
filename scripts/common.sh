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
# Build choices (README, "Build options"), from the environment:
#   MIMODET_CUDA=auto|on|off        GPU kernels; auto: only when this machine has a GPU
#   MIMODET_CUDA_ARCHITECTURES=...  e.g. "75;80;86;89;90"; default: this machine's GPU
#   MIMODET_NATIVE=1                -march=native (the binaries then run only on such CPUs)
MIMODET_CUDA=${MIMODET_CUDA:-auto}
MIMODET_NATIVE=${MIMODET_NATIVE:-0}

DEB_PACKAGES=(
  cmake make g++ pkg-config git
  gnuradio gnuradio-dev libvolk2-dev libspdlog-dev libfmt-dev libgmp-dev libboost-dev
  pybind11-dev python3-pybind11 python3-numpy python3-matplotlib python3-yaml python3-mako
  python3-hypothesis
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

gpu_architectures() {
  # Compute capabilities of this machine's GPUs ("90" for an H100), or nothing without one.
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
    tr -d '. ' | grep -E '^[0-9]+$' | sort -u | paste -sd ';' || true
}

nvcc_path() {
  command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true
}

# CMake arguments for CUDA. $1: architectures to build when CUDA is on but this machine has
# no GPU ("" = leave CUDA off unless MIMODET_CUDA=on). Sets CUDA_ARGS.
choose_cuda() {
  local fallback_archs=$1 nvcc gpus archs
  nvcc=$(nvcc_path)
  gpus=$(gpu_architectures)
  case $MIMODET_CUDA in
  off | OFF | 0)
    CUDA_ARGS=(-DENABLE_CUDA=OFF); log "CUDA: off (MIMODET_CUDA=off)"; return ;;
  on | ON | 1)
    [ -n "$nvcc" ] || { echo "MIMODET_CUDA=on but no nvcc on PATH or in /usr/local/cuda/bin" >&2; exit 1; }
    archs=${MIMODET_CUDA_ARCHITECTURES:-${gpus:-75;80;86;89;90}} ;;
  auto | AUTO | "")
    if [ -z "$nvcc" ]; then
      CUDA_ARGS=(-DENABLE_CUDA=OFF); log "CUDA: no toolkit found, CPU-only build"; return
    fi
    if [ -n "$gpus" ]; then
      archs=${MIMODET_CUDA_ARCHITECTURES:-$gpus}
    elif [ -n "${MIMODET_CUDA_ARCHITECTURES:-}" ]; then
      archs=$MIMODET_CUDA_ARCHITECTURES
    elif [ -n "$fallback_archs" ]; then
      archs=$fallback_archs
    else
      CUDA_ARGS=(-DENABLE_CUDA=OFF)
      log "CUDA: toolkit found but no GPU, CPU-only build (MIMODET_CUDA=on also builds the" \
          "GPU kernels, for sm_75..sm_90: several times longer)"
      return
    fi ;;
  *) echo "MIMODET_CUDA must be auto, on or off, not '$MIMODET_CUDA'" >&2; exit 1 ;;
  esac
  CUDA_ARGS=(-DENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DMIMODET_CUDA_ARCHITECTURES="$archs")
  local seen="no GPU on this machine"
  [ -z "$gpus" ] || seen="this machine's GPU: sm_$gpus"
  log "CUDA: on, kernels for sm_${archs//;/, sm_} ($seen)"
}

# $1: see choose_cuda.
configure_build_install() {
  local pydir native=OFF cpu="portable CPU code"
  pydir=$(python_dir)
  choose_cuda "${1:-}"
  case $MIMODET_NATIVE in 1 | on | ON | yes) native=ON cpu="-march=native" ;; esac
  log "Configuring in $BUILD_DIR (prefix $PREFIX, $cpu)"
  mkdir -p "$BUILD_DIR"
  cmake -S "$TOP" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DPYTHON_EXECUTABLE="$PYTHON" -DCMAKE_INSTALL_PREFIX="$PREFIX" -DGR_PYTHON_DIR="$pydir" \
    -DMIMODET_NATIVE_ARCH="$native" "${CUDA_ARGS[@]}" \
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
  # Make the installed module importable and findable by GRC for this process and its children
  # (its libraries find each other through their RUNPATH: no LD_LIBRARY_PATH needed).
  local pydir
  pydir=$(python_dir)
  case ":${PYTHONPATH:-}:" in *":$PREFIX/$pydir:"*) ;; *) export PYTHONPATH="$PREFIX/$pydir${PYTHONPATH:+:$PYTHONPATH}" ;; esac
  case ":${PATH}:" in *":$PREFIX/bin:"*) ;; *) export PATH="$PREFIX/bin:$PATH" ;; esac
  export GRC_BLOCKS_PATH="$PREFIX/share/gnuradio/grc/blocks${GRC_BLOCKS_PATH:+:$GRC_BLOCKS_PATH}"
}
