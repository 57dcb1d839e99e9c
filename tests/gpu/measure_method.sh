#!/usr/bin/env bash
# measure_method.sh — issue 29 in one command on a GPU machine: why weft_bench and weft tune saw
# NCCL slower than nccl-tests, whether their new method agrees with nccl-tests, what the shim
# costs, and the shipped comparison. Per collective: nccl-tests stock and through the shim
# (tools/compare_nccl.sh, alternating pairs), then weft_bench --diagnose at the same sizes; then
# weft_bench --diagnose --order blocked for broadcast and alltoall; then tests/gpu/shim_overhead.
# Prints a compact summary (tests/gpu/method_summary.py) and leaves at most 5 files in OUT.
#
#   bash tests/gpu/measure_method.sh CARRY OUT
#     CARRY: nccl-tests.tgz (nccl-tests/*_perf) and weft-29.tgz (weft/: libweft_nccl.so,
#            weft_bench, shim_overhead), or those folders unpacked
#     OUT:   summary.txt, compare.txt, diag.txt, overhead.txt, logs.tgz
#   Environment: NP (default every GPU), PAIRS (3), MAX (128M), FACTOR (4), BUDGET (seconds of
#   wall time for the whole run, default 480: later steps are skipped, saying so, when it runs
#   out; the collectives go in the order broadcast, alltoall, reduce_scatter, all_reduce,
#   all_gather, the ones nccl-tests and weft_bench disagreed on most first), ALGOS (default the
#   repository's algorithms/).
set -uo pipefail
[ $# -eq 2 ] || { sed -n 2,17p "$0"; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tools/gpu_env.sh"
carry=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/measure_method.XXXXXX)
logs=$work/logs
mkdir -p "$logs"
t_start=$(date +%s)
budget=${BUDGET:-480}
left() { echo $((budget - ($(date +%s) - t_start))); }
say() { echo "$*" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"

ngpu=$(gpu_count)
if [ "${ngpu:-0}" -lt 2 ]; then
  say "measure_method: skipped: ${ngpu:-0} GPUs here (nvidia-smi); it needs 2 or more"
  exit 0
fi
np=${NP:-$ngpu} pairs=${PAIRS:-3} maxb=${MAX:-128M} factor=${FACTOR:-4}
algos=${ALGOS:-$root/algorithms}

# the binaries
for pkg in nccl-tests weft-29; do
  if [ -f "$carry/$pkg.tgz" ]; then
    tar xzf "$carry/$pkg.tgz" -C "$work" || { say "cannot unpack $carry/$pkg.tgz"; exit 1; }
  fi
done
nt=$work/nccl-tests bin=$work/weft
[ -d "$nt" ] || nt=$carry/nccl-tests
[ -d "$bin" ] || bin=$carry/weft
[ -d "$bin" ] || bin=$carry
for f in "$nt/all_reduce_perf" "$bin/libweft_nccl.so" "$bin/weft_bench" "$bin/shim_overhead"; do
  [ -e "$f" ] || { say "measure_method: $f missing (CARRY: nccl-tests.tgz, weft-29.tgz)"; exit 2; }
done
use_pip_nccl
say "== measure_method $(date -u +%FT%TZ): $np processes, $ngpu GPUs ($(gpu_names)); NCCL from" \
  "$NCCL_FROM; weft $(cat "$bin/COMMIT" 2>/dev/null || echo '(commit unknown)');" \
  "$(cat "$nt/VERSION" 2>/dev/null || echo nccl-tests)"
say "   sizes 8 B - $maxb x$factor, -n 20 -w 5; budget ${budget}s"

declare -A wname=([all_reduce]=allreduce [all_gather]=allgather [reduce_scatter]=reducescatter
  [alltoall]=alltoall [broadcast]=broadcast)
colls="broadcast alltoall reduce_scatter all_reduce all_gather"

# weft_bench --diagnose for one collective: NAME COLL ARGS...
diag() {
  local name=$1 c=$2
  shift 2
  timeout -s KILL "${DIAG_TIMEOUT:-100}" "${MPIRUN[@]}" -np "$np" "$bin/weft_bench" --diagnose \
    -L "$algos" -C "${wname[$c]}" -b 8 -e "$maxb" -f "$factor" -n 20 -w 5 -r 5 "$@" \
    >"$logs/$name.log" 2>"$logs/$name.err"
  local r=$?
  [ $r -eq 0 ] || say "   weft_bench $name failed (rc $r): $(tail -2 "$logs/$name.err" | tr '\n' ' ')"
}

# 1. per collective: the shipped comparison, then the diagnosis at the same sizes
for c in $colls; do
  if [ "$(left)" -lt 60 ]; then
    say "   $c: skipped, $(left)s of the budget left"
    continue
  fi
  t0=$(date +%s)
  bash "$root/tools/compare_nccl.sh" --nccl-tests "$nt" --lib "$bin/libweft_nccl.so" \
    --algos "$algos" --np "$np" --pairs "$pairs" --max "$maxb" --factor "$factor" \
    --colls "$c" --timeout 90 --out "$logs/compare" >>"$out/compare.txt" 2>&1
  t1=$(date +%s)
  diag "diag.$c" "$c"
  say "   $c: compare $((t1 - t0))s, diagnose $(($(date +%s) - t1))s"
done

# 2. interleaved against blocked, where weft_bench and nccl-tests differed most
for c in broadcast alltoall; do
  if [ "$(left)" -lt 50 ]; then
    say "   blocked $c: skipped, $(left)s of the budget left"
    continue
  fi
  diag "diag.blocked.$c" "$c" --order blocked
done

# 3. the shim's cost on calls it hands to NCCL: a folder without allreduce and reducescatter
#    algorithms (the communicator attaches; those calls fall back), and no shim as the control
if [ "$(left)" -ge 40 ]; then
  fb=$work/fallback_algos
  mkdir -p "$fb"
  cp "$algos"/* "$fb"/ 2>/dev/null
  grep -l -E 'coll="(allreduce|reducescatter)"|collective +(allreduce|reducescatter)' "$fb"/* \
    2>/dev/null | xargs -r rm -f
  for v in "no_shim:" "shim:LD_PRELOAD=$bin/libweft_nccl.so WEFT_ALGO_DIR=$fb"; do
    name=${v%%:*} envs=${v#*:} x=()
    for e in $envs; do x+=(-x "$e"); done
    timeout -s KILL 120 "${MPIRUN[@]}" -np "$np" "${x[@]}" "$bin/shim_overhead" \
      >"$logs/overhead.$name.log" 2>&1
    r=$?
    { echo "== shim_overhead, $name (rc $r)"; cat "$logs/overhead.$name.log"; } >>"$out/overhead.txt"
  done
else
  say "   shim_overhead: skipped, $(left)s of the budget left"
fi

# 4. the summary
for f in "$logs"/diag.*.log; do
  [ -e "$f" ] && { echo "== $(basename "$f" .log)"; cat "$f"; }
done >"$out/diag.txt"
python3 "$here/method_summary.py" --logs "$logs" --colls "$colls" 2>&1 | tee -a "$out/summary.txt"
say "== took $(($(date +%s) - t_start))s"
tar czf "$out/logs.tgz" -C "$work" logs 2>/dev/null
rm -rf "$work"
