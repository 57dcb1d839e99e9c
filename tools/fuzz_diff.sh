#!/usr/bin/env bash
# fuzz_diff.sh — the differential fuzzer's long run (tests/fuzz/fuzz_diff.cc): JOBS processes,
# each over its own range of seeds, for a time or a number of seeds; failing schedules saved in
# OUT; a summary of every process's report at the end (verified schedules run, per minute).
#   bash tools/fuzz_diff.sh [BUILD] [--seconds T | --count N] [--seed S] [--ranks LO-HI] [--jobs J]
#     BUILD: the build folder (default build); OUT (environment): reproducers and logs
#     (default /tmp/fuzz_diff); a reproducer replays with fuzz_diff --file F (add --dump for its plan)
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
case ${1:-} in -*) ;; "") ;; *) build=$1; shift ;; esac
bin=$build/tests/fuzz/fuzz_diff
[ -x "$bin" ] || { echo "fuzz_diff.sh: $bin: not built (cmake --build $build --target fuzz_diff)"; exit 2; }
secs="" count=1000000 seed=1 ranks="" jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  case $1 in
  --seconds) secs=$2; shift 2 ;;
  --count) count=$2; shift 2 ;;
  --seed) seed=$2; shift 2 ;;
  --ranks) ranks="--ranks $2"; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  *) sed -n 2,7p "$0"; exit 2 ;;
  esac
done
out=${OUT:-/tmp/fuzz_diff}
mkdir -p "$out"
per=$(( (count + jobs - 1) / jobs ))
start=$(date +%s)
for j in $(seq 0 $((jobs - 1))); do
  s=$((seed + j * per))
  if [ -n "$secs" ]; then
    # a time: each process starts far enough from the others never to meet them
    s=$((seed + j * 100000000))
    "$bin" --seed $s --seconds "$secs" $ranks --save "$out" >"$out/job$j.log" 2>&1 &
  else
    "$bin" --seed $s --count $per $ranks --save "$out" >"$out/job$j.log" 2>&1 &
  fi
done
wait
wall=$(( $(date +%s) - start ))
grep -h -E '^FAIL' "$out"/job*.log
grep -h -E '^fuzz_diff: seeds' "$out"/job*.log
awk -v wall="$wall" '/^fuzz_diff: seeds/ { for (i = 1; i <= NF; i++) {
      if ($(i + 1) == "run") run += $i; if ($(i + 1) == "failed") bad += $i; if ($(i + 1) == "schedules,") n += $i } }
  END { printf "fuzz_diff.sh: %d schedules, %d verified and run, %d failed, %d s, %.0f verified schedules per minute\n",
        n, run, bad, wall, (wall > 0 ? 60 * run / wall : 0); exit (bad > 0) }' "$out"/job*.log
