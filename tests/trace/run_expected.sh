#!/usr/bin/env bash
# run_expected.sh — malformed trace files: runs `weft trace summarize NAME.json` in the file's
# folder and compares what it prints on stderr with NAME.expected byte for byte; it must exit 1
# and print nothing on stdout.
#   run_expected.sh WEFT FILE.json [--update]   one file (--update rewrites NAME.expected)
set -u
weft=$1 file=$2 update=${3:-}
dir=$(dirname "$file")
name=$(basename "$file" .json)
cd "$dir" || exit 1
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$("$weft" trace summarize "$name.json" 2>"$err")
rc=$?
if [ "$update" = "--update" ]; then
  cp "$err" "$name.expected"
  echo "updated $dir/$name.expected (exit $rc)"
  exit 0
fi
fail=0
[ "$rc" -eq 1 ] || { echo "$name.json: exit code $rc, expected 1"; fail=1; }
if ! cmp -s "$err" "$name.expected"; then
  echo "$name.json: diagnostics differ from $name.expected:"
  diff -u "$name.expected" "$err"
  fail=1
fi
[ -z "$out" ] || { echo "$name.json: output printed although the trace was rejected"; fail=1; }
exit $fail
