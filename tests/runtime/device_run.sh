#!/bin/bash
# device_run.sh — the runtime's whole GPU check on a 2-GPU machine, in one command: probe, the
# GPU test (one process for both GPUs, then one process per GPU under mpirun), the benchmark
# sweeps; logs under $OUT, a summary last. (tests/gpu/test_gpu_mpi.sh runs the GPU test alone on
# any number of GPUs.) Usage (from the repository root, binaries built on
# the CPU machine and carried in DIR with test_gpu, weft_bench and conformance/):
#   tests/runtime/device_run.sh DIR [full|quick|test|bench]
set -u
DIR=${1:?usage: device_run.sh DIR [quick]}
MODE=${2:-full}
OUT=${OUT:-/tmp/weft-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NCCL_PIP=$(python3 -c "import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], 'lib'))" 2>/dev/null)
[ -n "$NCCL_PIP" ] && export LD_LIBRARY_PATH=$NCCL_PIP:${LD_LIBRARY_PATH:-}
export WEFT_SHARED_DIR=$DIR
MPI="mpirun --allow-run-as-root -np 2 --bind-to none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x WEFT_SHARED_DIR -x WEFT_FIFO -x WEFT_DEBUG"
SUM=$OUT/summary.txt
: > "$SUM"
note() { echo "$*" | tee -a "$SUM"; }

{
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
  nvidia-smi topo -m
  mpirun --version | head -1
  echo "NCCL_PIP=$NCCL_PIP"; ls "$NCCL_PIP"
  ldd "$DIR/test_gpu" | grep -E "nccl|mpi|xml|not found"
} > "$OUT/probe.log" 2>&1
note "probe: $(nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' ') nccl=$NCCL_PIP"

Q=""; [ "$MODE" = quick ] && Q=--quick  # MODE: full | quick | test (no benchmark) | bench
if [ "$MODE" != bench ]; then
t0=$(date +%s)
LIB=""; [ -d algorithms ] && LIB="--library algorithms"
timeout -s KILL 150 "$DIR/test_gpu" $Q $LIB > "$OUT/test_single.log" 2>&1; rc=$?
note "test_gpu (one process, both GPUs, loopback + NCCL): rc=$rc $(($(date +%s)-t0)) s: $(tail -1 "$OUT/test_single.log")"
if [ $rc -ne 0 ] && grep -q "illegal\|misaligned\|unspecified launch" "$OUT/test_single.log"; then
  timeout -s KILL 120 compute-sanitizer --tool memcheck --show-backtrace device \
    "$DIR/test_gpu" --quick --loopback-only > "$OUT/sanitizer.log" 2>&1
  note "compute-sanitizer: $(grep -m3 -E 'Invalid|at 0x|ERROR SUMMARY' "$OUT/sanitizer.log" | tr '\n' ' ')"
fi
t0=$(date +%s)
timeout -s KILL 120 $MPI "$DIR/test_gpu" $Q $LIB --no-loopback > "$OUT/test_mpi.log" 2>&1; rc=$?
note "test_gpu (mpirun -np 2, one process per GPU): rc=$rc $(($(date +%s)-t0)) s: $(grep test_gpu: "$OUT/test_mpi.log" | tail -1)"
grep -h "FAIL" "$OUT"/test_*.log | head -20 | tee -a "$SUM"
fi

B="$DIR/weft_bench -d float -o sum -n 20 -w 5 -r 5 -S"
bench() { # name timeout fifo args...
  local name=$1 to=$2 fifo=$3; shift 3
  local t0=$(date +%s)
  WEFT_FIFO=$fifo timeout -s KILL $to $MPI $B "$@" > "$OUT/bench_$name.log" 2>&1
  note "bench $name (WEFT_FIFO=$fifo): rc=$? $(($(date +%s)-t0)) s"
}
LL="-A ar_direct:ch=1:proto=LL -A ar_direct:ch=2:proto=LL -A ar_direct:ch=4:proto=LL -A ar_direct:ch=8:proto=LL -A ar_direct:ch=16:proto=LL"
SIMPLE="-A ar_direct:ch=16:proto=Simple -A ar_direct:ch=32:proto=Simple -A ar_direct:ch=64:proto=Simple"
if [ "$MODE" != test ]; then
bench small 60 "" -b 8 -e 1M -f 4 $LL -A ar_direct:ch=8:proto=Simple
bench graph 40 "" -G 1 -b 8 -e 64K -f 8 -A ar_direct:ch=1:proto=LL -A ar_direct:ch=2:proto=LL
bench s128k 60 "Simple=8x128K" -b 256K -e 256M -f 4 $SIMPLE -A ar_direct1:ch=64:proto=Simple
bench s16x64k 60 "Simple=16x64K" -b 1M -e 16M -f 4 $SIMPLE -A ar_direct1:ch=64:proto=Simple
fi

echo "==== summary ===="
cat "$SUM"
echo "==== bench (best weft schedule per size; nccl/weft > 1: weft faster) ===="
for f in "$OUT"/bench_*.log; do
  echo "-- $(basename "$f")"
  grep -v '^#' "$f" | grep -v '^\[' | awk '{k=$1; if (!(k in best) || $13 > best[k]) {best[k]=$13; line[k]=$0}} END {for (k in line) print line[k]}' | sort -n | awk '{printf "%11s %9s us %9s us  x%5s  %-30s host %s/%s\n", $1, $5, $9, $13, $14, $15, $16}'
  grep -E "Error|error|FAIL|abort" "$f" | head -3
done
# The tool brings back at most 8 files: one archive of the logs, and the summary.
(cd "$OUT" && tar czf logs.tgz *.log && rm -f *.log)
