#!/usr/bin/env bash
# gpu_trace_check.sh — issue 8's device check, one command on a 2-GPU machine (nvidia-h200-x2):
# records traces of the 2-rank ring allreduce and the all-pairs allreduce with WEFT_TRACE (one
# process driving both GPUs, and the ring again with one process per GPU under mpirun), checks
# them without screenshots (they parse; Chrome format valid; slices per tb ordered and
# non-overlapping; the busiest tb's summed step time within 10% of the kernel time; nothing
# dropped; causality across the two clocks), summarizes them, and times the same calls untraced.
# Run from the repository root; DIR holds gpu_trace, weft, ring2.xml, allpairs2.xml and the
# scripts chrome_check.py and gpu_compare.py (see docs/trace.md, "Testing on GPUs").
#   bash tests/trace/gpu_trace_check.sh DIR        (logs and traces under $OUT)
set -u
DIR=${1:?usage: gpu_trace_check.sh DIR}
OUT=${OUT:-/tmp/trace-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
NCCL_PIP=$(python3 -c "import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], 'lib'))" 2>/dev/null)
[ -n "$NCCL_PIP" ] && export LD_LIBRARY_PATH=$NCCL_PIP:${LD_LIBRARY_PATH:-}
SUM=$OUT/summary.txt
: >"$SUM"
note() { echo "$*" | tee -a "$SUM"; }
fail=0
run() { # name algo sizes [mpi]
  local name=$1 algo=$2 sizes=$3 mpi=${4:-}
  local cmd=("$DIR/gpu_trace" --algo "$DIR/$algo" --sizes "$sizes" --iters 5)
  if [ -n "$mpi" ]; then
    cmd=(mpirun --allow-run-as-root -np 2 --bind-to none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH
         -x WEFT_TRACE "${cmd[@]}")
  fi
  WEFT_TRACE=$OUT/$name.json timeout -s KILL 60 "${cmd[@]}" --events "$OUT/${name}_ev" \
    >"$OUT/$name.log" 2>&1
  local rc=$?
  note "$name: gpu_trace rc=$rc: $(grep -c ' ok$' "$OUT/$name.log") sizes ok"
  [ $rc -eq 0 ] || { fail=1; tail -5 "$OUT/$name.log" | tee -a "$SUM"; return; }
  env -u WEFT_TRACE timeout -s KILL 60 "${cmd[@]}" --events "$OUT/${name}_off" \
    >"$OUT/${name}_off.log" 2>&1 || note "$name untraced: rc=$?"
  "$DIR/weft" trace check "$OUT/$name".rank*.json >"$OUT/$name.check" 2>&1
  local rc2=$?
  note "$name: weft trace check rc=$rc2"; cat "$OUT/$name.check" >>"$SUM"
  [ $rc2 -eq 0 ] || fail=1
  "$DIR/weft" trace summarize "$OUT/$name".rank*.json >"$OUT/$name.summary" 2>&1 || fail=1
  "$DIR/weft" trace merge "$OUT/$name".rank*.json -o "$OUT/$name.merged.json" || fail=1
  python3 "$DIR/chrome_check.py" "$OUT/$name".rank*.json "$OUT/$name.merged.json" >>"$SUM" 2>&1 || fail=1
  python3 "$DIR/gpu_compare.py" "$OUT/$name" "$OUT/${name}_ev" "$OUT/${name}_off" >"$OUT/$name.compare" 2>&1 || fail=1
  cat "$OUT/$name.compare" >>"$SUM"
}
run ring ring2.xml 1M,16M,64M,256M
run allpairs allpairs2.xml 4K,64K,256K
run ring_mpi ring2.xml 16M,256M mpi
note "gpu_trace_check: $([ $fail -eq 0 ] && echo PASS || echo FAIL)"
cp "$OUT"/*.summary "$OUT"/*.check "$OUT"/*.compare . 2>/dev/null
exit $fail
