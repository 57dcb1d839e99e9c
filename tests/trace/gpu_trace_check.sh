#!/usr/bin/env bash
# gpu_trace_check.sh — issue 8's device check, one command on a 2-GPU machine (nvidia-h200-x2):
# records traces of the 2-rank ring, all-pairs one-shot and two-shot allreduce (the algorithm
# library compiled with -D N=2; the registry picks one per size) with WEFT_TRACE, in one process
# driving both GPUs and in one process per GPU under mpirun; checks them without screenshots
# (they parse; Chrome format valid; slices per tb ordered and non-overlapping; the busiest tb's
# summed step time within 10% of the kernel time; nothing dropped; causality across the two
# clocks), summarizes them, and times the same calls untraced and, when DIR has gpu_trace_base
# (built without the instrumentation), without it, alternating processes.
#   bash tests/trace/gpu_trace_check.sh DIR     (DIR from tests/trace/make_carry.sh; logs in $OUT)
set -u
DIR=${1:?usage: gpu_trace_check.sh DIR}
OUT=${OUT:-/tmp/trace-out}
mkdir -p "$OUT" "$OUT/algos"
cp "$DIR"/ring2.xml "$DIR"/allpairs2.xml "$DIR"/twoshot2.xml "$OUT/algos/"
export NCCL_NVLS_ENABLE=0
NCCL_PIP=$(python3 -c "import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], 'lib'))" 2>/dev/null)
[ -n "$NCCL_PIP" ] && export LD_LIBRARY_PATH=$NCCL_PIP:${LD_LIBRARY_PATH:-}
SIZES=4K,64K,256K,1M,4M,16M,64M,256M
SUM=$OUT/summary.txt
: >"$SUM"
note() { echo "$*" | tee -a "$SUM"; }
fail=0
# gt NAME BINARY TRACED(0/1) MPI(0/1) SIZES ITERS
gt() {
  local name=$1 bin=$2 traced=$3 mpi=$4 sizes=$5 iters=$6
  local cmd=("$DIR/$bin" --algo "$OUT/algos" --sizes "$sizes" --iters "$iters" --events "$OUT/${name}_ev")
  [ "$mpi" = 1 ] && cmd=(mpirun --allow-run-as-root -np 2 --bind-to none -x NCCL_NVLS_ENABLE
                         -x LD_LIBRARY_PATH -x WEFT_TRACE "${cmd[@]}")
  local t0=$(date +%s)
  if [ "$traced" = 1 ]; then
    WEFT_TRACE=$OUT/$name.json timeout -s KILL 90 "${cmd[@]}" >"$OUT/$name.log" 2>&1
  else
    env -u WEFT_TRACE timeout -s KILL 90 "${cmd[@]}" >"$OUT/$name.log" 2>&1
  fi
  local rc=$?
  if [ $rc -eq 77 ]; then echo "skipped: no 2 GPUs"; exit 77; fi
  note "$name: rc=$rc $(($(date +%s) - t0)) s, $(grep -c 'calls ok$' "$OUT/$name.log") size(s) correct"
  [ $rc -eq 0 ] || { fail=1; grep -v '^\[' "$OUT/$name.log" | tail -5 | tee -a "$SUM"; }
}
# check NAME: everything about one traced run
check() {
  local name=$1
  ls "$OUT/$name".rank*.json >/dev/null 2>&1 || { note "$name: no trace files"; fail=1; return; }
  "$DIR/weft" trace check "$OUT/$name".rank*.json >"$OUT/$name.check" 2>&1
  local rc=$?
  note "$name: weft trace check rc=$rc"
  cat "$OUT/$name.check" >>"$SUM"
  [ $rc -eq 0 ] || fail=1
  "$DIR/weft" trace summarize "$OUT/$name".rank*.json >"$OUT/$name.summary" 2>&1 || fail=1
  "$DIR/weft" trace merge "$OUT/$name".rank*.json -o "$OUT/$name.merged.json" || fail=1
  python3 "$DIR/chrome_check.py" "$OUT/$name".rank*.json "$OUT/$name.merged.json" >>"$SUM" 2>&1 || fail=1
}
[ -x "$DIR/timer_probe" ] && note "$("$DIR/timer_probe" 2>&1)"
gt single gpu_trace 1 0 "$SIZES" 5
check single
gt mpi gpu_trace 1 1 "$SIZES" 3
check mpi
# The cost: alternating processes, base (if any) / instrumented untraced / traced.
for rep in 1 2; do
  [ -x "$DIR/gpu_trace_base" ] && gt base$rep gpu_trace_base 0 0 4K,64K,1M,16M 20
  gt off$rep gpu_trace 0 0 4K,64K,1M,16M 20
  gt on$rep gpu_trace 1 0 4K,64K,1M,16M 20
done
python3 "$DIR/gpu_compare.py" "$OUT" single mpi >"$OUT/compare.txt" 2>&1 || fail=1
cat "$OUT/compare.txt" | tee -a "$SUM"
note "gpu_trace_check: $([ $fail -eq 0 ] && echo PASS || echo FAIL)"
exit $fail
