#!/usr/bin/env bash
# run_expected.sh — data-driven diagnostics test: runs `weft fmt NAME.xml` in the file's folder and
# compares what it prints on stderr with NAME.expected byte for byte, and its exit code.
#   run_expected.sh WEFT FILE.xml EXIT [--update]   one file (--update rewrites NAME.expected)
# Files whose name contains "verbose" run with -v (info notes shown).
set -u
weft=$1 file=$2 want=$3 update=${4:-}
dir=$(dirname "$file")
name=$(basename "$file" .xml)
args=()
case $name in *verbose*) args=(-v) ;; esac
cd "$dir" || exit 1
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$("$weft" fmt "${args[@]}" "$name.xml" 2>"$err")
rc=$?
if [ "$update" = "--update" ]; then
  cp "$err" "$name.expected"
  echo "updated $dir/$name.expected (exit $rc)"
  exit 0
fi
fail=0
if [ "$rc" -ne "$want" ]; then
  echo "$name.xml: exit code $rc, expected $want"
  fail=1
fi
if ! cmp -s "$err" "$name.expected"; then
  echo "$name.xml: diagnostics differ from $name.expected:"
  diff -u "$name.expected" "$err"
  fail=1
fi
# A rejected file produces no output; an accepted one its canonical text.
if [ "$want" -ne 0 ] && [ -n "$out" ]; then
  echo "$name.xml: output written although the file was rejected"
  fail=1
fi
if [ "$want" -eq 0 ] && [ -z "$out" ]; then
  echo "$name.xml: no output"
  fail=1
fi
exit $fail
