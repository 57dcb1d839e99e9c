#!/usr/bin/env bash
# run_compare_libs.sh — tools/compare_libs.sh end to end without GPUs: a stub weft_bench
# (libs_stub/) whose times come from each variant's library folder, the stub mpirun and
# nvidia-smi of compare_stub/. The tables must equal libs_stub/expected.txt (regenerate:
# run_compare_libs.sh --print > libs_stub/expected.txt); a wrong result fails the run; usage
# errors exit 2 with a message.
set -u
command -v python3 >/dev/null 2>&1 || { echo "run_compare_libs: skipped: no python3"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
tool=$here/../../tools/compare_libs.sh
stub=$here/libs_stub
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH="$here/compare_stub/bin:$PATH"
mkdir -p "$tmp/base" "$tmp/fast" "$tmp/bad"
echo 4.00 >"$tmp/fast/stub_us"
echo 4096 >"$tmp/fast/stub_max"
echo allgather_new >"$tmp/fast/stub_name"
echo 5.50 >"$tmp/stub_us" # laid over a copy of algorithms/
touch "$tmp/bad/stub_wrong"
run() { bash "$tool" --bench "$stub/weft_bench" "$@" 2>&1; }
# the header names this machine's paths
out=$(run --np 2 --coll allgather --min 64 --max 16K --factor 16 --modes eager,graph --both \
  --rounds 2 base="$tmp/base" fast="$tmp/fast" over="$tmp/stub_us" | grep -v '^   \|^== compare_libs')
rc=${PIPESTATUS[0]}
if [ "${1:-}" = "--print" ]; then printf '%s\n' "$out"; exit 0; fi
fail=0
[ "$rc" -eq 0 ] || { echo "run_compare_libs: exit $rc"; fail=1; }
diff -u "$stub/expected.txt" <(printf '%s\n' "$out") || fail=1
# a wrong result: exit 1, and the row says how many elements
out=$(run --min 64 --max 64 base="$tmp/base" bad="$tmp/bad")
rc=$?
[ $rc -eq 1 ] && printf '%s\n' "$out" | grep -qF '| 64 | 7.00 | 7.00 | 1.000 | 7.00 | allgather_direct | 6 |' ||
  { printf '%s\n' "$out"; echo "run_compare_libs: a wrong result: exit $rc, or no row saying so"; fail=1; }
# usage errors
check_usage() {
  local want=$1
  shift
  out=$(run "$@")
  rc=$?
  [ $rc -eq 2 ] && printf '%s\n' "$out" | grep -qF "$want" ||
    { printf '%s\n' "$out"; echo "run_compare_libs: $*: exit $rc, or not: $want"; fail=1; }
}
check_usage "compare_libs: --modes: unknown mode 'graf'" --modes graf base=-
check_usage "compare_libs: variant base named twice" base=- base=-
check_usage "compare_libs: x=$tmp/none.weft: $tmp/none.weft: no such file" x="$tmp/none.weft"
check_usage "compare_libs: name at least one variant" --np 2
check_usage "a variant is NAME=- , NAME=DIR or NAME=FILE" algorithms
exit $fail
