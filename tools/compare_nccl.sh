#!/usr/bin/env bash
# compare_nccl.sh — weft through libweft_nccl.so against stock NCCL, the way users check it:
# nccl-tests without and with the shim, alternating runs, every collective; per size the stock
# and weft times, weft/NCCL and #wrong, and a verdict line per collective and launch kind.
# Skips, saying why, where there is no GPU. Every performance claim in README comes from it.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/tools/gpu_env.sh"

usage() {
  cat <<EOF
usage: tools/compare_nccl.sh --nccl-tests DIR [options]

Runs nccl-tests (one process per GPU under mpirun) without weft and with
LD_PRELOAD=libweft_nccl.so WEFT_ALGO_DIR=ALGOS, alternating (stock, weft, stock, weft...), for
each collective and launch kind, and prints per size: stock us, weft us, weft/NCCL out of place
and in place (medians over the pairs), weft's #wrong; then one verdict line per collective: the
largest weft/NCCL and how many sizes exceed --limit. Exit 0 when every run finished with
#wrong 0 (a ratio above the limit is reported, not an error), 1 otherwise, 2 on a usage error.

  --nccl-tests DIR  folder of nccl-tests' binaries (all_reduce_perf ...; built with MPI=1)
  --lib FILE        libweft_nccl.so (default: build/shim/libweft_nccl.so)
  --algos PATHS     WEFT_ALGO_DIR for the weft runs (default: the repository's algorithms/)
  --np N            processes, one per GPU (default: every GPU here)
  --pairs K         alternating stock/weft pairs per collective (default 3)
  --min SIZE, --max SIZE, --factor F
                    nccl-tests -b, -e, -f (default 8, 1G, 2)
  --colls LIST      comma-separated, of all_reduce,all_gather,reduce_scatter,alltoall,broadcast
                    (default all five)
  --graph           also CUDA graphs (nccl-tests -G 1)
  --registered      also symmetric registered buffers (nccl-tests -R 2; with --graph also -R 2 -G 1)
  --iters N, --warmup N   nccl-tests -n, -w (default 20, 5)
  --limit X         the ratio a size may reach (default 1.02)
  --env 'K=V ...'   more environment for the weft runs (e.g. WEFT_TUNE_FILE=table.txt)
  --out DIR         keep the logs there (default: a temporary folder, removed)
  --timeout S       seconds per nccl-tests run (default 300)
EOF
}

tests_dir="" lib=$root/build/shim/libweft_nccl.so algos=$root/algorithms np="" pairs=3
minb=8 maxb=1G factor=2 colls="all_reduce,all_gather,reduce_scatter,alltoall,broadcast"
graph=0 registered=0 iters=20 warmup=5 limit=1.02 extra_env="" out="" run_timeout=300
while [ $# -gt 0 ]; do
  case $1 in
  --nccl-tests) tests_dir=$2; shift ;;
  --lib) lib=$2; shift ;;
  --algos) algos=$2; shift ;;
  --np) np=$2; shift ;;
  --pairs) pairs=$2; shift ;;
  --min) minb=$2; shift ;;
  --max) maxb=$2; shift ;;
  --factor) factor=$2; shift ;;
  --colls) colls=$2; shift ;;
  --graph) graph=1 ;;
  --registered) registered=1 ;;
  --iters) iters=$2; shift ;;
  --warmup) warmup=$2; shift ;;
  --limit) limit=$2; shift ;;
  --env) extra_env=$2; shift ;;
  --out) out=$2; shift ;;
  --timeout) run_timeout=$2; shift ;;
  -h | --help) usage; exit 0 ;;
  *) echo "compare_nccl: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

ngpu=$(gpu_count)
if [ "${ngpu:-0}" -lt 2 ]; then
  echo "compare_nccl: skipped: ${ngpu:-0} GPUs here (nvidia-smi), a comparison needs 2 or more"
  exit 0
fi
[ -n "$tests_dir" ] || { echo "compare_nccl: --nccl-tests DIR is required" >&2; usage >&2; exit 2; }
[ -f "$lib" ] || { echo "compare_nccl: $lib not found (--lib)" >&2; exit 2; }
command -v mpirun >/dev/null 2>&1 || { echo "compare_nccl: mpirun not found (Open MPI)" >&2; exit 2; }
np=${np:-$ngpu}
for c in ${colls//,/ }; do
  [ -x "$tests_dir/${c}_perf" ] || { echo "compare_nccl: $tests_dir/${c}_perf not found" >&2; exit 2; }
done
use_pip_nccl
keep=1
[ -n "$out" ] || { out=$(mktemp -d /tmp/compare_nccl.XXXXXX); keep=0; }
mkdir -p "$out"
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")

kinds=("eager:")
[ $graph -eq 1 ] && kinds+=("graph:-G 1")
[ $registered -eq 1 ] && kinds+=("registered:-R 2")
[ $registered -eq 1 ] && [ $graph -eq 1 ] && kinds+=("registered-graph:-R 2 -G 1")

echo "== compare_nccl: $np processes on $ngpu GPUs ($(gpu_names)); NCCL from $NCCL_FROM"
echo "   weft: $lib, WEFT_ALGO_DIR=$algos${extra_env:+, $extra_env}"
echo "   nccl-tests $tests_dir: -b $minb -e $maxb -f $factor -n $iters -w $warmup -c 1; $pairs" \
  "alternating pairs (stock, weft); weft/NCCL < 1: weft faster"
rc=0
# one nccl-tests run: NAME ENV BIN ARGS...; a hang or crash fails the comparison
run() {
  local name=$1 envs=$2 bin=$3 x=() e
  shift 3
  for e in $envs; do x+=(-x "$e"); done
  timeout -s KILL "$run_timeout" "${MPIRUN[@]}" -np "$np" "${x[@]}" "$tests_dir/${bin}_perf" \
    -g 1 "$@" >"$out/$name.log" 2>&1
  local r=$?
  if [ $r -ne 0 ]; then
    echo "compare_nccl: $name failed (rc $r): $out/$name.log"
    tail -3 "$out/$name.log" | sed 's/^/  /'
    rc=1
  fi
}
weft_env="LD_PRELOAD=$lib WEFT_ALGO_DIR=$algos $extra_env"
for kind in "${kinds[@]}"; do
  kname=${kind%%:*} kflags=${kind#*:}
  for c in ${colls//,/ }; do
    for i in $(seq "$pairs"); do
      # shellcheck disable=SC2086 # kflags is a list of options
      run "$c.$kname.stock.$i" "" "$c" -b "$minb" -e "$maxb" -f "$factor" -n "$iters" \
        -w "$warmup" -c 1 $kflags
      # shellcheck disable=SC2086
      run "$c.$kname.weft.$i" "$weft_env" "$c" -b "$minb" -e "$maxb" -f "$factor" -n "$iters" \
        -w "$warmup" -c 1 $kflags
    done
    echo
    echo "== $c, $kname (A = stock NCCL, B = weft through the shim)"
    python3 "$root/tests/gpu/nccl_tests_ratio.py" --name "$c $kname" --limit "$limit" \
      "$out/$c.$kname".stock.*.log -- "$out/$c.$kname".weft.*.log | tee "$out/$c.$kname.ratio"
    if ! grep -q "#wrong 0 (B), 0 (A)" "$out/$c.$kname.ratio"; then rc=1; fi
  done
done
echo
echo "== verdicts (weft/NCCL, limit $limit)"
cat "$out"/*.ratio 2>/dev/null | grep '^verdict'
[ $keep -eq 1 ] && echo "logs: $out" || rm -rf "$out"
exit $rc
