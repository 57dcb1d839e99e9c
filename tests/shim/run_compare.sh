#!/usr/bin/env bash
# run_compare.sh — tools/compare_nccl.sh end to end without GPUs: stub nvidia-smi, mpirun,
# nccl-tests and torchrun (compare_stub/) run its three ways, rounds and modes (PyTorch's capture
# among them) and the untimed served-by runs;
# the tables, verdicts and summary must equal compare_stub/expected.txt. Regenerate:
# run_compare.sh --print > compare_stub/expected.txt. Then a served-by run that fails: the
# comparison still passes, without that column, and the message names the log the run joins.
set -u
command -v python3 >/dev/null 2>&1 || { echo "run_compare: skipped: no python3"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "run_compare: skipped: no C compiler"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
stub=$here/compare_stub
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a real shared object for LD_PRELOAD (the loader warns about anything else), doing nothing
cc -shared -o "$tmp/libnothing.so" -x c /dev/null || exit 1
out=$(PATH="$stub/bin:$PATH" bash "$here/../../tools/compare_nccl.sh" --nccl-tests "$stub/nt" \
  --lib "$tmp/libnothing.so" --np 2 --colls all_gather --min 64 --max 64M --factor 64 \
  --modes eager,graph,torch-graph --rounds 2 2>&1)
rc=$?
# the header names this machine's paths
out=$(printf '%s\n' "$out" | grep -v '^   weft: \|^   nccl-tests \|NCCL from ')
[ $rc -eq 0 ] || { printf '%s\n' "$out"; echo "run_compare: compare_nccl.sh exit $rc"; exit 1; }
if [ "${1:-}" = "--print" ]; then printf '%s\n' "$out"; exit 0; fi
diff -u "$stub/expected.txt" <(printf '%s\n' "$out") || exit 1
out=$(PATH="$stub/bin:$PATH" bash "$here/../../tools/compare_nccl.sh" --nccl-tests "$stub/nt" \
  --lib "$tmp/libnothing.so" --np 2 --colls all_gather --min 64 --max 64M --factor 64 \
  --modes eager --rounds 1 --env STUB_FAIL_REPORT=1 2>&1)
rc=$?
want="compare_nccl: all_gather.eager.served.part0 failed (rc 3): all_gather.eager.served.log (--out DIR keeps the logs)"
printf '%s\n' "$out" | grep -qxF "$want" && [ $rc -eq 0 ] &&
  printf '%s\n' "$out" | grep -q "that column is left out" ||
  { printf '%s\n' "$out"; echo "run_compare: a failed served-by run: exit $rc, or not: $want"; exit 1; }
