#!/bin/sh
# check_select.sh — `weft select` against its golden output (run in tests/registry; WEFT_BIN is the
# weft binary). Regenerate: WEFT_BIN=... sh check_select.sh --print > select.golden
run() {
  echo "\$ weft select $*"
  "$WEFT_BIN" select "$@" 2>&1
  echo "exit=$?"
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
{
  run -d algos allreduce --bytes 16 --both
  run -d algos allreduce --bytes 4M --both
  run -d algos allreduce --bytes 64K --op avg
  run -d algos allreduce --bytes 64K --type bfloat16 --op max --inplace
  run -d algos reducescatter --bytes 12 --type half
  run -d algos broadcast --root 1 --bytes 1K
  run -d algos broadcast --bytes 1K --inplace
  run -d algos alltoall --ranks 4 --bytes 1M
  run -d algos:/nonexistent/algos allgather --bytes 2M
  run -d algos gather --bytes 1K
  run -d algos send
  run -d algos allreduce --type fp8
  run -d algos allreduce --sweep --both
} > "$out"
if [ "${1:-}" = "--print" ]; then cat "$out"; exit 0; fi
diff -u select.golden "$out"
