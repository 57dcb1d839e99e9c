#!/bin/sh
# check_cli.sh TEST_TUNE — `weft select --table` and the CPU side of `weft tune` against
# cli.golden (run in tests/tune; WEFT_BIN is the weft binary). The tables are made here by
# test_tune, so that their schedule hashes are this build's.
# Regenerate: WEFT_BIN=... sh check_cli.sh TEST_TUNE --print > cli.golden
tt=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tt" algos --write-table "$tmp/table.txt" || exit 1
"$tt" algos --simulate "$tmp/sim.txt" 2>/dev/null || exit 1
run() {
  echo "\$ weft $*" | sed "s#$tmp#TMP#g"
  out=$("$WEFT_BIN" "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" | sed "s#$tmp#TMP#g"
  echo "exit=$rc"
}
{
  # every kind of answer: the table's algorithm beyond the file's range, the table's NCCL, an
  # algorithm built for the table, a missing and a changed one, sections by launch and buffers,
  # a call the table has no section for, a rooted call, and the fingerprint line
  run select -d algos --table "$tmp/table.txt" allreduce --ranks 4 --bytes 64 --both
  run select -d algos --table "$tmp/table.txt" allreduce --ranks 4 --bytes 4K
  run select -d algos --table "$tmp/table.txt" allreduce --ranks 4 --bytes 256K
  run select -d algos --table "$tmp/table.txt" allreduce --ranks 4 --bytes 4M --graph --both
  run select -d algos --table "$tmp/table.txt" allreduce --ranks 4 --bytes 4K --registered --both
  run select -d algos --table "$tmp/table.txt" broadcast --ranks 4 --bytes 1M --root 2
  run select -d algos --table "$tmp/table.txt" allreduce --ranks 2 --bytes 64
  # the same folder with the table in it is read as libweft_nccl.so reads it; --no-table not.
  # Without its machine lines (nothing to compare) so that the answers do not depend on the
  # machine the test runs on.
  cp algos/*.weft "$tmp/" && grep -v '^machine' "$tmp/table.txt" > "$tmp/weft-tune.txt"
  grep -v '^machine' "$tmp/table.txt" > "$tmp/anywhere.txt"
  run select -d "$tmp" allreduce --ranks 4 --bytes 4K
  run select -d "$tmp" --no-table allreduce --ranks 4 --bytes 4K
  WEFT_TUNE_FILE="$tmp/anywhere.txt" run select -d algos allreduce --ranks 4 --bytes 256K
  run select -d algos --table "$tmp/nonexistent.txt" allreduce --ranks 4 --bytes 64
  run select -d algos --table "$tmp/table.txt" --no-table allreduce
  # weft tune: the picture of a table, usage errors
  run tune --plot-only "$tmp/sim.txt"
  test -s "$tmp/sim.svg" && echo "sim.svg written"
  run tune --plot-only "$tmp/sim.txt" -o "$tmp/other.svg"
  test -s "$tmp/other.svg" && echo "other.svg written"
  run tune --plot-only "$tmp/nonexistent.txt"
  run tune -d algos
  run tune -d algos -o "$tmp/t.txt" -b 1M -e 1K
  run tune -d algos -o "$tmp/t.txt" --modes sideways
  run tune -d algos -o "$tmp/t.txt" -C send
  run tune -d algos -o "$tmp/t.txt" -D SERVE
  run tune -d algos -o "$tmp/t.txt" -n 5
  run tune -d algos -o "$tmp/t.txt" --verify-max 3
} > "$tmp/out"
if [ "${2:-}" = "--print" ]; then cat "$tmp/out"; exit 0; fi
diff -u cli.golden "$tmp/out"
