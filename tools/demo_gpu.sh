#!/usr/bin/env bash
# demo_gpu.sh — the main job's GPU part: the algorithm library against NCCL on this machine's GPUs
# (bitwise, then side by side in time). Skips, saying why, where there is no GPU to run on.
# Usage: tools/demo_gpu.sh [BUILD_DIR] [ALGO_PATHS]   (tools/demo.sh calls it after the CPU part)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
algos=${2:-$root/algorithms}

source "$root/tools/gpu_env.sh"

skip() { echo "demo: GPU part skipped: $*"; exit 0; }
command -v nvidia-smi >/dev/null 2>&1 || skip "no nvidia-smi (no NVIDIA driver on this machine)"
ngpu=$(gpu_count)
[ "${ngpu:-0}" -ge 1 ] || skip "nvidia-smi lists no GPU"
[ -x "$build/tests/runtime/test_gpu" ] ||
  skip "$build/tests/runtime/test_gpu was not built (needs CUDA and NCCL >= 2.28 headers)"

# The NCCL to compare with: PyTorch's pip NCCL when present (the one PyTorch jobs use), else the
# system's; multicast off (gpu_env.sh).
use_pip_nccl
echo
echo "== GPUs: $ngpu ($(gpu_names)); NCCL from $NCCL_FROM"

rc=0
# 1. Correctness: every 2- and 4-rank instance the registry makes of the library, run by weft and
#    by NCCL on the same inputs and compared bit for bit (one process driving the GPUs).
if [ "$ngpu" -ge 2 ]; then
  echo
  echo "== the library on the GPUs, weft against NCCL bit for bit (test_gpu --library)"
  timeout -s KILL 240 "$build/tests/runtime/test_gpu" --quick --no-loopback --library "$algos" \
    >/tmp/weft-demo-gpu.$$.log 2>&1
  trc=$?
  grep -E "^test_gpu:|FAIL" /tmp/weft-demo-gpu.$$.log | tail -20
  [ $trc -eq 0 ] || { echo "demo: test_gpu failed (rc $trc); log: /tmp/weft-demo-gpu.$$.log"; rc=1; }
else
  echo "demo: one GPU: collectives need 2; running weft's loopback check instead"
  timeout -s KILL 300 "$build/tests/runtime/test_gpu" --quick --loopback-only | tail -3 || rc=1
fi

# 2. Time: per collective and size, what the library's selection runs against NCCL, same run,
#    same buffers, interleaved (bench/weft_bench -L; nccl/weft > 1 means weft is faster).
bench=$build/bench/weft_bench
if [ "$ngpu" -lt 2 ]; then
  echo "demo: timing against NCCL skipped: it needs 2 GPUs"
elif [ ! -x "$bench" ] || ! command -v mpirun >/dev/null 2>&1; then
  echo "demo: timing against NCCL skipped: weft_bench or mpirun missing (Open MPI)"
else
  for coll in allreduce allgather reducescatter alltoall broadcast; do
    echo
    echo "== $coll, $ngpu GPUs: the library's selection against NCCL"
    timeout -s KILL 120 "${MPIRUN[@]}" -np "$ngpu" "$bench" -L "$algos" -C "$coll" -b 8 -e 256M \
      -f 4 -n 20 -w 3 -r 3 \
      >/tmp/weft-demo-bench.$$.log 2>/tmp/weft-demo-bench.$$.err
    brc=$?
    awk '/^# -L/ {next} /^#/ && !/size/ {next}
         /^# *size/ {printf "%11s %11s %11s %9s %7s  %s\n", "bytes", "weft us", "NCCL us", "NCCL/weft", "#wrong", "algorithm"; next}
         /NCCL serves/ {printf "%11s %s\n", $1, substr($0, index($0, "NCCL serves")); next}
         !/^#/ && NF >= 14 {printf "%11s %11s %11s %9s %7s  %s\n", $1, $5, $9, $13, $8, $14}' \
      /tmp/weft-demo-bench.$$.log
    if [ $brc -ne 0 ] || awk '!/NCCL serves/ && NF >= 14 && $1 !~ /^#/ && $8 != 0 {bad=1} END {exit !bad}' \
         /tmp/weft-demo-bench.$$.log; then
      echo "demo: weft_bench $coll failed (rc $brc):"
      tail -5 /tmp/weft-demo-bench.$$.err
      rc=1
    fi
  done
  rm -f /tmp/weft-demo-bench.$$.log /tmp/weft-demo-bench.$$.err
fi
[ $rc -eq 0 ] && rm -f /tmp/weft-demo-gpu.$$.log
echo
echo "demo: GPU part $([ $rc -eq 0 ] && echo passed || echo FAILED)"
exit $rc
