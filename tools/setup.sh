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

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$jobs"
