#!/usr/bin/env bash
# setup.sh — installs missing build dependencies (Debian/Ubuntu) and configures + builds weft.
# Usage: tools/setup.sh BUILD_DIR [cmake options...]. Sourced by demo.sh and test.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
shift || true

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v flex >/dev/null || need+=(flex)
command -v bison >/dev/null || need+=(bison)
command -v xml2-config >/dev/null || need+=(libxml2-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v mpicc >/dev/null || need+=(libopenmpi-dev openmpi-bin)
command -v cc >/dev/null || need+=(build-essential)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Kernels: machine code for sm_90 plus PTX where a GPU can run them; where none can (no driver,
# CI), PTX only: the CUDA sources still go through the whole front end and optimizer, and the
# half of the kernels' compile time spent assembling machine code nobody here runs is saved.
# A later -DCMAKE_CUDA_ARCHITECTURES=... among the arguments overrides either.
source "$root/tools/gpu_env.sh"
archs="90-real;90-virtual"
if [ "$(gpu_count)" -eq 0 ]; then
  archs="90-virtual"
  echo "setup: no GPU here: CUDA kernels compiled to PTX only (a GPU machine builds sm_90 code)"
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
  "$@" >/dev/null
cmake --build "$build" -j"$jobs"
