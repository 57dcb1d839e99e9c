#!/usr/bin/env bash
# test_gpu_mpi.sh — the GPU test for any number of GPUs in one command (issue 25, item 1): weft
# against NCCL, bitwise, on every N-rank case (the library with every gate open, the conformance
# corpus, generated schedules, large messages, CUDA graphs, two streams, two communicators, the
# watchdog) under mpirun with one process per GPU, then the 2-rank cases the same way, then all
# of them from one process driving every GPU, then loopback for 2, 4 and 8 ranks shared between
# the GPUs. PyTorch's pip NCCL, NVLS off (tools/gpu_env.sh).
#
#   bash tests/gpu/test_gpu_mpi.sh [BIN] [OUT]
#     BIN: test_gpu, or a folder holding it (build/tests/runtime, or a build folder); default
#          build/tests/runtime/test_gpu
#     OUT: one log per part (mpi4.log, mpi2.log, single.log, loopback.log) and summary.txt;
#          default /tmp/test_gpu_mpi
#   Environment: NP (GPUs to use, default every GPU), NPS (process counts of the MPI parts,
#   default "NP 2"), BUDGET (seconds of wall time for the whole run, default 180), PARTS (default
#   "mpi single loopback"), ALGOS (default the repository's algorithms/), WEFT_SHARED_DIR (the
#   folder with conformance/; default ../shared beside the repository), EXTRA (more test_gpu
#   arguments, e.g. "--only allreduce" or "--quick").
#
# Wall time on 4 x H100 (main at the commit that added this script; 61-66 s in all, two runs):
# mpi4, 110 cases and 54652 calls for 4 ranks, 16-18 s; mpi2, 107 cases and 60109 calls for 2
# ranks, 11 s; single, the 4-rank cases from one process, 20-21 s; loopback, 291 cases and 25664
# calls, 14-16 s. Each part
# runs with --time-limit at its share of the budget left: test_gpu then starts no new case and
# reports the ones it left out ("not run"), and a hard stop 60 s later ends a hang. What to look
# for, per part: "test_gpu: over NCCL, 4 ranks ...: library R run, F failed, S skipped; ..." and
# "test_gpu: C cases run, 0 failed, S skipped, 0 not run"; every FAIL and every skip (with its
# reason) is listed under it, and the last line says PASSED or FAILED.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tools/gpu_env.sh"

bin=${1:-$root/build/tests/runtime/test_gpu}
[ -d "$bin" ] && { [ -x "$bin/test_gpu" ] && bin=$bin/test_gpu || bin=$bin/tests/runtime/test_gpu; }
out=${2:-/tmp/test_gpu_mpi}
[ -x "$bin" ] || { sed -n 2,28p "$0"; echo "test_gpu_mpi: $bin: no test_gpu there"; exit 2; }
mkdir -p "$out"
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }

ngpu=$(gpu_count)
np=${NP:-$ngpu}
if [ "${ngpu:-0}" -lt 1 ]; then
  say "test_gpu_mpi: skipped: no GPU here (nvidia-smi)"
  exit 0
fi
budget=${BUDGET:-180} parts=${PARTS:-mpi single loopback}
algos=${ALGOS:-$root/algorithms}
export WEFT_SHARED_DIR=${WEFT_SHARED_DIR:-$root/../shared}
[ -d "$WEFT_SHARED_DIR/conformance" ] ||
  say "test_gpu_mpi: no conformance corpus at $WEFT_SHARED_DIR/conformance: those cases are left out"
use_pip_nccl
t0=$(date +%s)
left() { echo $((budget - ($(date +%s) - t0))); }
say "== test_gpu_mpi $(date -u +%FT%TZ): $np processes, $ngpu GPUs ($(gpu_names)); NCCL from" \
  "$NCCL_FROM; budget ${budget}s"

rc_all=0
# part NAME SHARE-OF-WHAT-IS-LEFT (percent) COMMAND...: runs with --time-limit at that share
# (test_gpu stops starting cases then and says which it left out) and a hard stop 60 s later.
part() {
  local name=$1 share=$2
  shift 2
  local l=$(($(left) * share / 100))
  if [ "$l" -lt 10 ]; then
    say "-- $name: not run, $(left)s of the budget left"
    rc_all=1
    return
  fi
  local s=$(date +%s)
  timeout -s KILL $((l + 60)) "$@" --time-limit "$l" >"$out/$name.log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || rc_all=1
  say "-- $name: rc=$rc, $(($(date +%s) - s)) s (limit ${l}s): $*"
  grep "^test_gpu:" "$out/$name.log" | tee -a "$sum"
  grep -E "FAIL|skipped:|not run" "$out/$name.log" | sort | uniq -c | sort -rn | head -40 |
    tee -a "$sum"
  [ $rc -eq 137 ] && say "   killed at the hard stop: the log's last lines:" &&
    tail -5 "$out/$name.log" | tee -a "$sum"
}

lib=(--library "$algos")
# the process counts of the MPI parts: every GPU, then 2 (the 2-rank cases) when there are more
nps=${NPS:-$np$([ "$np" -gt 2 ] && echo " 2")}
for p in $parts; do
  if [ "$np" -lt 2 ] && [ "$p" != loopback ]; then
    say "-- $p: skipped: $np GPU (it needs 2 or more)"
    continue
  fi
  case $p in
  mpi)
    for n in $nps; do
      part "mpi$n" $([ "$n" = "$np" ] && echo 45 || echo 35) "${MPIRUN[@]}" -np "$n" \
        -x WEFT_SHARED_DIR "$bin" "${lib[@]}" --no-loopback ${EXTRA:-}
    done
    ;;
  single) part single 55 "$bin" --gpus "$np" "${lib[@]}" --no-loopback ${EXTRA:-} ;;
  loopback) part loopback 90 "${MPIRUN[@]}" -np "$np" -x WEFT_SHARED_DIR "$bin" "${lib[@]}" \
    --loopback-only --ranks 2,4,8 ${EXTRA:-} ;;
  *) say "test_gpu_mpi: unknown part $p (mpi, single, loopback)"; exit 2 ;;
  esac
done
say "== test_gpu_mpi: $(($(date +%s) - t0)) s, $([ $rc_all -eq 0 ] && echo PASSED || echo FAILED)"
exit $rc_all
