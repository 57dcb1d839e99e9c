#!/usr/bin/env bash
# compare_nccl.sh — weft through libweft_nccl.so against stock NCCL, the way users check it:
# nccl-tests without the shim, with it (weft serving) and with it disabled (the control: the shim
# loaded, WEFT_DISABLE=1), alternating runs, every collective and launch mode; per size the
# times, weft/NCCL, control/NCCL, #wrong and who served it, a verdict line per collective and
# mode and one summary line. --torch adds PyTorch's own CUDA-graph capture (tests/gpu/torch_graph.py).
# Skips, saying why, where there is no GPU. Every performance claim in README comes from it.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/tools/gpu_env.sh"

usage() {
  cat <<EOF
usage: tools/compare_nccl.sh --nccl-tests DIR [options]

Runs nccl-tests (one process per GPU under mpirun) three ways, alternating in rotating order:
stock NCCL; LD_PRELOAD=libweft_nccl.so WEFT_ALGO_DIR=ALGOS (weft); and the shim loaded with
WEFT_DISABLE=1 (the control: NCCL serves every call, so control/NCCL is what run-to-run noise and
the shim's pass-through read as). Per collective and launch mode, per size: the median times,
weft/NCCL and control/NCCL out of place and in place, weft's #wrong and who served the size (the
algorithm or NCCL, from one untimed weft run with WEFT_REPORT=1, whose bookkeeping would cost the
timed runs host time); a verdict line (the largest weft/NCCL, how many sizes are slower than both
--limit and the control, and how many of those weft served); then one summary line.
Sizes below 1 MB run with --iters-small iterations (nccl-tests' own noise is 10-30% at -n 20).
Exit 0 when every run finished with #wrong 0 (a slow size is reported, not an error), 1
otherwise, 2 on a usage error.

  --nccl-tests DIR  folder of nccl-tests' binaries (all_reduce_perf ...; built with MPI=1)
  --lib FILE        libweft_nccl.so (default: build/shim/libweft_nccl.so)
  --algos PATHS     WEFT_ALGO_DIR for the weft runs (default: the repository's algorithms/)
  --np N            processes, one per GPU (default: every GPU here)
  --rounds K        alternating rounds (stock, weft, control) per collective and mode (default 4)
  --min SIZE, --max SIZE, --factor F
                    nccl-tests -b, -e, -f (default 8, 1G, 2)
  --colls LIST      comma-separated, of all_reduce,all_gather,reduce_scatter,alltoall,broadcast
                    (default all five)
  --graph           also CUDA graphs (nccl-tests -G 1)
  --registered      also symmetric registered buffers (nccl-tests -R 2; with --graph also -R 2 -G 1)
  --torch           also PyTorch's CUDA-graph capture (torchrun running tests/gpu/torch_graph.py:
                    20 captured calls per graph, each on its own tensors) for all_reduce (in
                    place), all_gather and reduce_scatter
  --no-eager        skip the eager mode (with --graph, --registered or --torch)
  --modes LIST      exactly these modes, comma-separated, of eager,graph,registered,
                    registered-graph,torch-graph (instead of the four options above)
  --no-control      skip the control runs
  --iters N         nccl-tests -n for sizes of 1 MB and more (default 20)
  --iters-small N   nccl-tests -n below 1 MB (default 200)
  --warmup N        nccl-tests -w (default 5)
  --limit X         the ratio a size may reach (default 1.03)
  --env 'K=V ...'   more environment for the weft runs (e.g. WEFT_TUNE_FILE=table.txt)
  --out DIR         keep the logs there (default: a temporary folder, removed)
  --timeout S       seconds per run (default 300)
EOF
}

tests_dir="" lib=$root/build/shim/libweft_nccl.so algos=$root/algorithms np="" rounds=4
minb=8 maxb=1G factor=2 colls="all_reduce,all_gather,reduce_scatter,alltoall,broadcast"
graph=0 registered=0 torch=0 eager=1 control=1 iters=20 iters_small=200 warmup=5 limit=1.03
extra_env="" out="" run_timeout=300 modes=""
while [ $# -gt 0 ]; do
  case $1 in
  --nccl-tests) tests_dir=$2; shift ;;
  --lib) lib=$2; shift ;;
  --algos) algos=$2; shift ;;
  --np) np=$2; shift ;;
  --rounds | --pairs) rounds=$2; shift ;;
  --min) minb=$2; shift ;;
  --max) maxb=$2; shift ;;
  --factor) factor=$2; shift ;;
  --colls) colls=$2; shift ;;
  --graph) graph=1 ;;
  --registered) registered=1 ;;
  --torch) torch=1 ;;
  --no-eager) eager=0 ;;
  --modes) modes=$2; shift ;;
  --no-control) control=0 ;;
  --iters) iters=$2; shift ;;
  --iters-small) iters_small=$2; shift ;;
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

# bytes SIZE: nccl-tests' size notation (8, 64K, 1M, 1G) in bytes; empty when it is not one
bytes() {
  case $1 in
  *[Kk]) echo $((${1%?} * 1024)) ;;
  *[Mm]) echo $((${1%?} * 1024 * 1024)) ;;
  *[Gg]) echo $((${1%?} * 1024 * 1024 * 1024)) ;;
  *[!0-9]* | "") echo "" ;;
  *) echo "$1" ;;
  esac
}
lo=$(bytes "$minb") hi=$(bytes "$maxb")
if [ -z "$lo" ] || [ -z "$hi" ] || [ "$lo" -gt "$hi" ]; then
  echo "compare_nccl: --min $minb --max $maxb is not a size range" >&2
  exit 2
fi
[ "$factor" -ge 2 ] 2>/dev/null || { echo "compare_nccl: --factor $factor: 2 or more" >&2; exit 2; }
# The sizes nccl-tests visits, cut at 1 MB: below it -n iters_small, from it -n iters.
ranges=() small_last="" large_first=""
for ((s = lo; s <= hi; s *= factor)); do
  if [ "$s" -lt 1048576 ]; then small_last=$s; elif [ -z "$large_first" ]; then large_first=$s; fi
done
[ -n "$small_last" ] && ranges+=("-b $lo -e $small_last -f $factor -n $iters_small")
[ -n "$large_first" ] && ranges+=("-b $large_first -e $hi -f $factor -n $iters")

if [ -n "$modes" ]; then
  eager=0 graph=0 registered=0 torch=0
  for m in ${modes//,/ }; do
    case $m in
    eager) eager=1 ;;
    graph) graph=1 ;;
    registered | registered-graph | torch-graph) ;;
    *) echo "compare_nccl: --modes: unknown mode '$m'" >&2; exit 2 ;;
    esac
  done
fi
# want MODE: whether MODE runs (--modes names it, or the flags above ask for it)
want() {
  if [ -n "$modes" ]; then [[ ",$modes," == *",$1,"* ]]; return; fi
  case $1 in
  eager) [ $eager -eq 1 ] ;;
  graph) [ $graph -eq 1 ] ;;
  registered) [ $registered -eq 1 ] ;;
  registered-graph) [ $registered -eq 1 ] && [ $graph -eq 1 ] ;;
  torch-graph) [ $torch -eq 1 ] ;;
  esac
}
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
if [[ ",$modes," == *",torch-graph,"* || $torch -eq 1 ]] && ! command -v torchrun >/dev/null 2>&1; then
  echo "compare_nccl: --torch needs torchrun (PyTorch) on PATH" >&2
  exit 2
fi
use_pip_nccl
keep=1
[ -n "$out" ] || { out=$(mktemp -d /tmp/compare_nccl.XXXXXX); keep=0; }
mkdir -p "$out"
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")

kinds=()
want eager && kinds+=("eager:")
want graph && kinds+=("graph:-G 1")
want registered && kinds+=("registered:-R 2")
want registered-graph && kinds+=("registered-graph:-R 2 -G 1")
want torch-graph && kinds+=("torch-graph:")
ways="stock weft"
[ $control -eq 1 ] && ways="stock weft control"

echo "== compare_nccl: $np processes on $ngpu GPUs ($(gpu_names)); NCCL from $NCCL_FROM"
echo "   weft: $lib, WEFT_ALGO_DIR=$algos${extra_env:+, $extra_env}"
echo "   nccl-tests $tests_dir: -b $minb -e $maxb -f $factor, -n $iters_small below 1 MB and" \
  "$iters above, -w $warmup -c 1; $rounds rounds of ($ways) in rotating order;" \
  "weft/NCCL < 1: weft faster; control = shim loaded with WEFT_DISABLE=1"
rc=0
# one run: NAME ENV COLL KIND ARGS...; a hang or crash fails the comparison. torch-graph runs
# torchrun with tests/gpu/torch_graph.py, every other kind nccl-tests under mpirun.
run() {
  local name=$1 envs=$2 coll=$3 kname=$4 x=() e r
  shift 4
  if [ "$kname" = torch-graph ]; then
    # shellcheck disable=SC2086 # envs is a list of assignments
    env $envs timeout -s KILL "$run_timeout" torchrun --standalone --nproc_per_node="$np" \
      "$root/tests/gpu/torch_graph.py" --coll "$coll" --smallest "$lo" --largest "$hi" --step "$factor" \
      "$@" >"$out/$name.log" 2>&1
    r=$?
  else
    for e in $envs; do x+=(-x "$e"); done
    timeout -s KILL "$run_timeout" "${MPIRUN[@]}" -np "$np" "${x[@]}" "$tests_dir/${coll}_perf" \
      -g 1 "$@" >"$out/$name.log" 2>&1
    r=$?
  fi
  if [ $r -ne 0 ]; then
    # a size range's run is named for the log it joins (run_ranges: shown_log), which outlives
    # this run only with --out
    local where=${shown_log:-$out/$name.log}
    [ $keep -eq 1 ] || where="$(basename "$where") (--out DIR keeps the logs)"
    echo "compare_nccl: $name failed (rc $r): $where"
    tail -3 "$out/$name.log" | sed 's/^/  /'
    rc=1
  fi
}
# every size range of one way, out/NAME.log: NAME ENV COLL KIND OPTIONS... (nccl-tests options
# after the range's own: a later -n or -w wins)
run_ranges() {
  local name=$1 envs=$2 coll=$3 kname=$4 ri
  local shown_log=$out/$name.log # read by run
  shift 4
  : >"$out/$name.log.all"
  for ri in "${!ranges[@]}"; do
    # shellcheck disable=SC2086 # the range is a list of options
    run "$name.part$ri" "$envs" "$coll" "$kname" ${ranges[$ri]} "$@"
    cat "$out/$name.part$ri.log" >>"$out/$name.log.all"
    rm -f "$out/$name.part$ri.log"
  done
  mv "$out/$name.log.all" "$out/$name.log"
}
weft_env="LD_PRELOAD=$lib WEFT_ALGO_DIR=$algos $extra_env"
control_env="LD_PRELOAD=$lib WEFT_ALGO_DIR=$algos WEFT_DISABLE=1"
for kind in "${kinds[@]}"; do
  kname=${kind%%:*} kflags=${kind#*:}
  for c in ${colls//,/ }; do
    [ "$kname" = torch-graph ] && [ "$c" != all_reduce ] && [ "$c" != all_gather ] &&
      [ "$c" != reduce_scatter ] && continue
    for i in $(seq "$rounds"); do
      # rotate the order so that no way always runs first (warm clocks, a neighbour's load)
      read -ra order <<<"$ways"
      for ((k = 0; k < (i - 1) % ${#order[@]}; k++)); do order=("${order[@]:1}" "${order[0]}"); done
      for way in "${order[@]}"; do
        case $way in
        stock) envs="" ;;
        weft) envs=$weft_env ;;
        control) envs=$control_env ;;
        esac
        if [ "$kname" = torch-graph ]; then
          run "$c.$kname.$way.$i" "$envs" "$c" "$kname"
          continue
        fi
        # shellcheck disable=SC2086 # kflags is a list of options
        run_ranges "$c.$kname.$way.$i" "$envs" "$c" "$kname" -w "$warmup" -c 1 $kflags
      done
    done
    # who served each size: one untimed weft run with the shim's report (its bookkeeping costs
    # every call some host time, so the timed runs go without it)
    served=()
    rc_timed=$rc
    if [ "$kname" = torch-graph ]; then
      # PyTorch's captured calls are the report's graph rows (it warms up eagerly first)
      run "$c.$kname.served" "$weft_env WEFT_REPORT=1" "$c" "$kname" --replays 1 --rounds 1
      launch=graph
    else
      # shellcheck disable=SC2086 # kflags is a list of options
      run_ranges "$c.$kname.served" "$weft_env WEFT_REPORT=1" "$c" "$kname" -n 1 -w 0 -c 0 $kflags
      launch=$kname
    fi
    if [ "$rc" -eq "$rc_timed" ]; then
      served=(--served "$out/$c.$kname.served.log" --launch "$launch")
    else
      # the timed weft runs judge weft; without its report the table only lacks a column
      echo "compare_nccl: the untimed run for who served $c $kname failed; that column is left out"
      rc=$rc_timed
    fi
    echo
    echo "== $c, $kname"
    groups=("$out/$c.$kname".stock.*.log -- "$out/$c.$kname".weft.*.log)
    [ $control -eq 1 ] && groups+=(-- "$out/$c.$kname".control.*.log)
    python3 "$root/tests/gpu/nccl_tests_ratio.py" --name "$c $kname" --limit "$limit" \
      "${served[@]}" "${groups[@]}" | tee "$out/$c.$kname.ratio"
    if ! grep -q "#wrong 0 (weft), 0 (NCCL)" "$out/$c.$kname.ratio"; then rc=1; fi
  done
done
echo
echo "== verdicts (weft/NCCL, limit $limit)"
cat "$out"/*.ratio 2>/dev/null | grep '^verdict'
# one line a reader can quote: the worst ratio anywhere, where, and the control's band
python3 - "$out" "$limit" "$np" "$(gpu_names)" "$control" <<'EOF'
import glob, re, sys
out, limit, np_, names = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
ctl_word = " and the control" if sys.argv[5] == "1" else ""
worst, slow, total, wrong, lo, hi, slow_weft = None, 0, 0, 0, None, None, None
for p in sorted(glob.glob(out + "/*.ratio")):
    for line in open(p, errors="replace"):
        m = re.match(r"verdict (\S+ \S+): max weft/NCCL ([0-9.]+) \(([^)]*)\); (\d+) of (\d+)"
                     r" sizes[^;]*(?:; control ([0-9.]+)-([0-9.]+))?; #wrong (\d+)", line)
        w = re.search(r"\((\d+) of them served by weft\)", line)
        if w:
            slow_weft = (slow_weft or 0) + int(w.group(1))
        if not m:
            continue
        r = float(m.group(2))
        if worst is None or r > worst[0]:
            worst = (r, m.group(1), m.group(3))
        slow += int(m.group(4))
        total += int(m.group(5))
        wrong += int(m.group(8))
        if m.group(6):
            lo = min(lo, float(m.group(6))) if lo is not None else float(m.group(6))
            hi = max(hi, float(m.group(7))) if hi is not None else float(m.group(7))
if worst is None:
    print("summary: no comparison finished")
else:
    band = f", control/NCCL {lo:.2f}-{hi:.2f}" if lo is not None else ""
    print(f"summary ({np_} x {names.split(' x ', 1)[-1].strip()}): worst weft/NCCL {worst[0]:.2f}"
          f" ({worst[1]}, {worst[2]}); {slow} of {total} sizes slower than {limit:g}{ctl_word}"
          f"{'' if slow_weft is None else f' ({slow_weft} of them served by weft)'}"
          f"{band}; #wrong {wrong}")
EOF
if [ $keep -eq 1 ]; then echo "logs: $out"; else rm -rf "$out"; fi
exit $rc
