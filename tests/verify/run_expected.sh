#!/usr/bin/env bash
# run_expected.sh — pinned diagnostics of broken schedules: runs weft in the file's folder and
# compares stdout+stderr with NAME.expected byte for byte, and the exit code with EXIT.
#   run_expected.sh WEFT verify FILE.xml EXIT [--update]   weft verify [NAME.args] NAME.xml
#   run_expected.sh WEFT run FILE.xml EXIT [--update]      weft run --cpu NAME.xml [NAME.args]
set -u
weft=$1 cmd=$2 file=$3 want=$4 update=${5:-}
dir=$(dirname "$file")
name=$(basename "$file" .xml)
cd "$dir" || exit 1
args=()
[ -f "$name.args" ] && read -r -a args <"$name.args"
got=$(mktemp)
trap 'rm -f "$got"' EXIT
if [ "$cmd" = run ]; then
  "$weft" run --cpu "$name.xml" "${args[@]}" >"$got" 2>&1
else
  "$weft" verify "${args[@]}" "$name.xml" >"$got" 2>&1
fi
rc=$?
if [ "$update" = "--update" ]; then
  cp "$got" "$name.expected"
  echo "updated $dir/$name.expected (exit $rc)"
  exit 0
fi
fail=0
if [ "$rc" -ne "$want" ]; then
  echo "$name.xml: exit code $rc, expected $want"
  fail=1
fi
if ! cmp -s "$got" "$name.expected"; then
  echo "$name.xml: output differs from $name.expected:"
  diff -u "$name.expected" "$got"
  fail=1
fi
exit $fail
