#!/usr/bin/env bash
# run_tune_nogpu.sh — `weft tune` on a machine without a usable GPU (or from a build without
# CUDA): one line "weft tune: no GPU (why)" and exit 1 before weft-tune or MPI start; under
# mpirun only rank 0 says it. Skips (77) where a GPU is present.  run_tune_nogpu.sh WEFT
set -u
weft=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/tools/gpu_env.sh"
if [ "$(gpu_count)" -gt 0 ]; then
  echo "SKIP: this machine has a GPU"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
args=(tune -d "$root/algorithms" -o "$tmp/table.txt" -C allreduce)
env -u OMPI_COMM_WORLD_RANK -u PMI_RANK "$weft" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || fail "exit $rc, expected 1: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
grep -q '^weft tune: no GPU (.\+)$' "$tmp/err" || fail "no 'weft tune: no GPU (...)': $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "wrote to stdout: $(cat "$tmp/out")"
[ -e "$tmp/table.txt" ] && fail "wrote a table"
# as rank 1 of an mpirun job: silent, same exit
OMPI_COMM_WORLD_RANK=1 "$weft" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || fail "rank 1: exit $rc, expected 1"
[ -s "$tmp/err" ] && fail "rank 1 spoke: $(cat "$tmp/err")"
# usage errors are still usage errors (before the GPU is asked)
"$weft" tune --frobnicate >/dev/null 2>&1
[ $? -eq 2 ] || fail "a usage error does not exit 2"
echo "$fails failures"
[ "$fails" -eq 0 ]
