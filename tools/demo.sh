#!/usr/bin/env bash
# demo.sh — weft's main job: builds weft, then shows and checks every schedule of the conformance
# corpus (later: compiles, verifies and executes the algorithm library; on a GPU machine, runs it
# against NCCL).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=${WEFT_SHARED_DIR:-$root/../shared}
bash "$root/tools/setup.sh" "$root/build" >/dev/null
weft="$root/build/tools/weft"
"$weft" env
