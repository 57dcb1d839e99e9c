#!/usr/bin/env bash
# shim_device.sh — libweft_nccl.so on a 2-GPU machine: nccl-tests under mpirun (one process per
# GPU) and PyTorch under torchrun, with weft, with WEFT_DISABLE=1, with broken algorithm folders,
# and without weft. Writes every log and a summary under OUT.
#
#   tests/gpu/shim_device.sh CARRY OUT PHASE...   (then OUT/summary.txt and OUT.tgz, all logs)
#     CARRY: libweft_nccl.so, nccl-tests/ (all_reduce_perf ...), algos/ (the algorithms to serve)
#     PHASE: stock shim shim-graph disable broken overhead compare torch; stock, shim, shim-graph
#            and disable take an optional :coll,coll list (all five by default)
#     NP=4 runs the nccl-tests, overhead and compare phases on 4 ranks (default 2; torch stays 2)
set -uo pipefail
carry=$(cd "$1" && pwd) out=$2
shift 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tools/gpu_env.sh"
lib=$carry/libweft_nccl.so bins=$carry/nccl-tests algos=$carry/algos
summary=$out/summary.txt
all_colls="all_reduce all_gather reduce_scatter alltoall broadcast"

use_pip_nccl
say() { echo "$*" | tee -a "$summary"; }
say "== $(date -u +%FT%TZ) $(gpu_names)"
say "NCCL from $NCCL_FROM"

# nt NAME 'ENV=V ...' BIN ARGS...: one nccl-tests run (2 ranks); its #wrong total and sizes.
nt() {
  local name=$1 envs=$2 bin=$3
  shift 3
  local x=() e
  for e in $envs; do x+=(-x "$e"); done
  timeout "${NT_TIMEOUT:-90}" "${MPIRUN[@]}" -np "${NP:-2}" "${x[@]}" "$bins/${bin}_perf" -g 1 "$@" \
    > "$out/$name.log" 2>&1
  local rc=$?
  # rows: size count type redop root | time algbw busbw #wrong (out of place) | same in place
  awk -v name="$name" -v rc=$rc '
    $1 ~ /^[0-9]+$/ && NF >= 13 { n++; w += $9 + $13; if (!min) min = $1; max = $1 }
    /Out of bounds values/ { oob = $0; sub(/.*: /, "", oob) }
    END { printf "%-34s rc=%d sizes=%d (%s..%s B) #wrong=%d oob=%s\n", name, rc, n, min, max, w, oob }
  ' "$out/$name.log" | tee -a "$summary"
  if [ $rc -eq 124 ]; then # a hang: stop here rather than spend the device time
    say "TIMEOUT in $name: stopping"
    tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
    exit 1
  fi
}

weft_env() { # what a run with weft passes to the ranks
  echo "LD_PRELOAD=$lib WEFT_ALGO_DIR=$1 WEFT_DEBUG=INFO WEFT_DEBUG_FILE=$out/$2.weft.%h.%p.log"
}

for arg in "$@"; do
  phase=${arg%%:*} colls=$all_colls
  [ "$phase" != "$arg" ] && colls=${arg#*:} && colls=${colls//,/ }
  say "== phase $phase ($colls)"
  case $phase in
  stock)
    for c in $colls; do nt "$c.stock" "" "$c" -b 8 -e 1G -f 2 -c 1 -n 5 -w 2; done ;;
  shim)
    for c in $colls; do nt "$c.weft" "$(weft_env "$algos" "$c.weft")" "$c" -b 8 -e 1G -f 2 -c 1 -n 5 -w 2; done
    for c in $colls; do
      served=$(cat "$out/$c.weft".weft.*.log 2>/dev/null | grep -c -- "-> weft '")
      fell=$(cat "$out/$c.weft".weft.*.log 2>/dev/null | grep -c -- "-> NCCL:")
      say "  $c: weft log lines: $served distinct calls served by weft, $fell by NCCL"
    done ;;
  shim-graph)
    for c in $colls; do nt "$c.weft.graph" "$(weft_env "$algos" "$c.weft.graph")" "$c" -b 8 -e 1G -f 2 -c 1 -n 5 -w 2 -G 2; done ;;
  disable)
    for c in $colls; do nt "$c.disabled" "$(weft_env "$algos" "$c.disabled") WEFT_DISABLE=1" "$c" -b 8 -e 1G -f 2 -c 1 -n 5 -w 2; done ;;
  broken)
    bad=$out/broken_algos
    mkdir -p "$bad"
    printf '<algo name="broken" proto="Simple"\n' > "$bad/broken.xml"
    nt all_reduce.missing_dir "$(weft_env /nonexistent/weft "all_reduce.missing_dir")" all_reduce -b 8 -e 1G -f 2 -c 1 -n 5 -w 2
    nt all_reduce.broken_dir "$(weft_env "$bad:$algos" "all_reduce.broken_dir")" all_reduce -b 8 -e 1G -f 2 -c 1 -n 5 -w 2
    say "  reports of the broken file per rank log: $(grep -h -c 'broken.xml: note: algorithm skipped' "$out"/all_reduce.broken_dir.weft.*.log | tr '\n' ' ')" ;;
  overhead)
    # the shim's cost on calls that fall back, in one process (tests/gpu/shim_overhead.c): the
    # same allreduce, reducescatter and grouped send/recv through ncclX and straight into
    # libnccl's pncclX, alternating. The fallback set has no allreduce or reducescatter
    # algorithm: communicators attach, every call goes through the shim's decision to NCCL.
    fb=$out/fallback_algos
    mkdir -p "$fb"
    cp "$algos"/* "$fb"/ 2>/dev/null
    grep -l -E 'coll="(allreduce|reducescatter)"|collective +(allreduce|reducescatter)' "$fb"/* \
      2>/dev/null | xargs -r rm -f
    ov() {
      local name=$1 envs=$2 x=() e
      for e in $envs; do x+=(-x "$e"); done
      timeout 120 "${MPIRUN[@]}" -np "${NP:-2}" "${x[@]}" "$carry/shim_overhead" > "$out/$name.log" 2>&1
      say "  $name (rc=$?):"
      grep -E '^[|#]' "$out/$name.log" | tee -a "$summary"
    }
    ov overhead.no_shim ""
    ov overhead.attached_fallback "LD_PRELOAD=$lib WEFT_ALGO_DIR=$fb WEFT_DEBUG=INFO WEFT_DEBUG_FILE=$out/overhead.attached.%h.%p.log"
    ov overhead.not_attached "LD_PRELOAD=$lib WEFT_ALGO_DIR=/nonexistent/weft" ;;
  compare)
    # the shipped comparison (tools/compare_nccl.sh), COMPARE_REPS alternating rounds
    bash "$root/tools/compare_nccl.sh" --nccl-tests "$bins" --lib "$lib" --algos "$algos" \
      --np "${NP:-2}" --rounds "${COMPARE_REPS:-2}" --out "$out/compare" 2>&1 | tee -a "$summary" ;;
  torch)
    tr=(torchrun --nproc_per_node=2 --master_port=29531 "$here/torch_shim.py")
    timeout 240 "${tr[@]}" --out "$out/torch.stock" > "$out/torch.stock.log" 2>&1
    say "  torch without weft: rc=$? $(grep -h 'collective checks' "$out/torch.stock.log" | tr '\n' ' ')"
    LD_PRELOAD=$lib WEFT_ALGO_DIR=$algos WEFT_DEBUG=INFO WEFT_DEBUG_FILE=$out/torch.weft.%h.%p.log \
      timeout 240 "${tr[@]}" --out "$out/torch.weft" > "$out/torch.weft.log" 2>&1
    say "  torch with weft: rc=$? $(grep -h 'collective checks' "$out/torch.weft.log" | tr '\n' ' ')"
    say "  torch weft log: $(cat "$out"/torch.weft.*.log | grep -c -- "-> weft '") distinct calls served by weft, $(cat "$out"/torch.weft.*.log | grep -c -- '-> NCCL:') by NCCL"
    LD_PRELOAD=$lib WEFT_ALGO_DIR=$algos WEFT_DISABLE=1 timeout 240 "${tr[@]}" --out "$out/torch.disabled" > "$out/torch.disabled.log" 2>&1
    say "  torch WEFT_DISABLE=1: rc=$? $(grep -h 'collective checks' "$out/torch.disabled.log" | tr '\n' ' ')"
    python3 "$here/torch_shim.py" --compare "$out/torch.weft" "$out/torch.stock" | sed 's/^/  weft vs stock: /' | tee -a "$summary"
    python3 "$here/torch_shim.py" --compare "$out/torch.disabled" "$out/torch.stock" | sed 's/^/  disabled vs stock: /' | tee -a "$summary" ;;
  *) say "unknown phase $phase" ;;
  esac
done
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
