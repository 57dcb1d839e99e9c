#!/usr/bin/env bash
# compare_libs.sh — variants of the algorithm library side by side on the GPUs, NCCL beside: to
# decide a library change (a file's thread blocks, its size range) by measurement.
#
#   bash tools/compare_libs.sh [OPTIONS] VARIANT...
#     VARIANT: NAME=- (the repository's algorithms/ as they are), NAME=DIR (a folder of
#              algorithms), or NAME=FILE[,FILE...] (.weft or .xml files laid over a copy of the
#              repository's algorithms/, each replacing the file of its name). The first variant
#              is the baseline the others are compared with.
#   Options:
#     --np N            processes, one per GPU (default 2)
#     --coll C          allreduce, allgather, reducescatter, alltoall, ... (default allreduce)
#     --min B --max B   sizes in bytes as nccl-tests counts them (default 8 and 32K; K, M, G)
#     --factor F        each size F times the last (default 4)
#     --modes LIST      comma-separated of eager, graph, registered, registered-graph
#                       (default graph)
#     --inplace         in place instead of out of place; --both: both
#     --rounds R        rounds; each runs every variant once, in turn (default 2)
#     --iters N         weft_bench -n (default 200); each run takes -r 3 samples
#     --bench PATH      weft_bench (default build/bench/weft_bench)
#     --out DIR         keep every run's output there
#
# Every weft_bench run measures the variant's choice for each size (-L, as libweft_nccl.so would
# select) and NCCL in the same process, interleaved. Per launch mode and buffer mode one table:
# per size, each variant's weft time (median of its rounds, µs), each later variant's ratio to
# the baseline (< 1: faster), NCCL's time (median over all runs), the schedules that served, and
# the elements any run found differing from NCCL's result (#wrong). Exit 1 when a run failed or a
# result was wrong; exit 0, saying so, where there is no GPU.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/gpu_env.sh"

usage() {
  sed -n 2,28p "$0" | sed 's/^# \{0,1\}//'
  exit 2
}
np=2 coll=allreduce min=8 max=32K factor=4 modes=graph io=0 rounds=2 iters=200
bench=$root/build/bench/weft_bench out=""
variants=()
while [ $# -gt 0 ]; do
  case $1 in
  --np) np=$2; shift ;;
  --coll) coll=$2; shift ;;
  --min) min=$2; shift ;;
  --max) max=$2; shift ;;
  --factor) factor=$2; shift ;;
  --modes) modes=$2; shift ;;
  --inplace) io=1 ;;
  --both) io=both ;;
  --rounds) rounds=$2; shift ;;
  --iters) iters=$2; shift ;;
  --bench) bench=$2; shift ;;
  --out) out=$2; shift ;;
  -h | --help) usage ;;
  --*) echo "compare_libs: unknown option $1" >&2; usage ;;
  *=*) variants+=("$1") ;;
  *) echo "compare_libs: $1: a variant is NAME=- , NAME=DIR or NAME=FILE[,FILE...]" >&2; exit 2 ;;
  esac
  shift
done
[ ${#variants[@]} -ge 1 ] || { echo "compare_libs: name at least one variant" >&2; usage; }
[ -x "$bench" ] || { echo "compare_libs: $bench: no weft_bench there (--bench)" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "compare_libs: needs python3" >&2; exit 2; }
case $rounds in '' | *[!0-9]* | 0) echo "compare_libs: --rounds: a count >= 1" >&2; exit 2 ;; esac
declare -A mode_flags=([eager]="-G 0" [graph]="-G 1" [registered]="-R 1 -G 0"
  [registered-graph]="-R 1 -G 1")
for m in ${modes//,/ }; do
  [ -n "${mode_flags[$m]:-}" ] || { echo "compare_libs: --modes: unknown mode '$m'" >&2; exit 2; }
done

ngpu=$(gpu_count)
if [ "${ngpu:-0}" -lt 1 ]; then
  echo "compare_libs: skipped: no GPU here (nvidia-smi)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=${out:-$work/logs}
mkdir -p "$logs"
# the variants' library folders
names=() libs=()
for v in "${variants[@]}"; do
  name=${v%%=*} what=${v#*=}
  case $name in '' | *[!A-Za-z0-9_.-]*)
    echo "compare_libs: $v: a name of letters, digits, '.', '_' or '-'" >&2; exit 2 ;; esac
  for n in "${names[@]}"; do
    [ "$n" != "$name" ] || { echo "compare_libs: variant $name named twice" >&2; exit 2; }
  done
  if [ "$what" = - ]; then
    lib=$root/algorithms
  elif [ -d "$what" ]; then
    lib=$what
  else
    lib=$work/lib.$name
    cp -r "$root/algorithms" "$lib" || exit 1
    IFS=, read -ra files <<<"$what"
    for f in "${files[@]}"; do
      [ -f "$f" ] || { echo "compare_libs: $v: $f: no such file" >&2; exit 2; }
      cp "$f" "$lib/" || exit 1
    done
  fi
  names+=("$name") libs+=("$lib")
done

use_pip_nccl
echo "== compare_libs: $np processes ($(gpu_names)); NCCL from $NCCL_FROM"
for i in "${!names[@]}"; do echo "   ${names[$i]}: ${libs[$i]}"; done
case $io in both) ios="0 1" ;; *) ios=$io ;; esac
rc=0
for m in ${modes//,/ }; do
  for i in $ios; do
    for ((r = 1; r <= rounds; r++)); do
      for k in "${!names[@]}"; do
        log=$logs/$m.$i.${names[$k]}.$r.log
        # shellcheck disable=SC2086 # the mode's flags are words
        timeout 300 "${MPIRUN[@]}" -np "$np" "$bench" -L "${libs[$k]}" -C "$coll" -b "$min" \
          -e "$max" -f "$factor" -n "$iters" -r 3 -I "$i" ${mode_flags[$m]} >"$log" 2>&1 ||
          { echo "compare_libs: ${names[$k]}, $m, round $r failed: $log" >&2; rc=1; }
      done
    done
    python3 - "$logs" "$m" "$i" "$rounds" "$coll" "$np" "${names[@]}" <<'EOF' || rc=1
import statistics, sys
logs, mode, inplace, rounds, coll, np_ = sys.argv[1:7]
names = sys.argv[7:]
rows = {}  # size -> variant -> list of (weft us, nccl us, wrong, schedule)
for v in names:
    for r in range(1, int(rounds) + 1):
        try:
            f = open(f"{logs}/{mode}.{inplace}.{v}.{r}.log")
        except OSError:
            continue
        for line in f:
            p = line.split()
            if len(p) < 14 or not p[0].isdigit() or p[4] == "NCCL":
                continue
            try:
                w, wrong, n = float(p[4]), int(p[7]), float(p[8])
            except ValueError:
                continue
            rows.setdefault(int(p[0]), {}).setdefault(v, []).append((w, n, wrong, p[13]))
where = "in place" if inplace == "1" else "out of place"
print(f"== {coll}, {np_} ranks, {mode}, {where} ({rounds} rounds; us, median of the rounds)")
head = ["size"] + names + [f"{v}/{names[0]}" for v in names[1:]] + ["NCCL", "schedule", "#wrong"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
bad = 0
for size in sorted(rows):
    by = rows[size]
    med = {v: statistics.median(x[0] for x in by[v]) for v in names if v in by}
    cells = [f"{size}"] + [f"{med[v]:.2f}" if v in med else "NCCL" for v in names]
    for v in names[1:]:
        cells.append(f"{med[v] / med[names[0]]:.3f}" if v in med and names[0] in med else "-")
    nccl = [x[1] for v in by for x in by[v]]
    cells.append(f"{statistics.median(nccl):.2f}")
    scheds = []
    for v in names:
        s = sorted({x[3] for x in by.get(v, [])})
        scheds.append("/".join(s) if s else "NCCL")
    cells.append(scheds[0] if len(set(scheds)) == 1 else "; ".join(scheds))
    wrong = sum(x[2] for v in by for x in by[v])
    bad += wrong
    cells.append(str(wrong))
    print("| " + " | ".join(cells) + " |")
if not rows:
    print("(no size that weft served)")
sys.exit(1 if bad else 0)
EOF
  done
done
[ -n "$out" ] && echo "logs: $out"
exit $rc
