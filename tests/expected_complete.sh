#!/usr/bin/env bash
# expected_complete.sh — a folder of pinned-output test inputs is whole: at least MIN files with
# the extension EXT, each with its NAME.expected, and no .expected without its input. Shared by
# the ir, verify and trace diagnostics tests (their run_expected.sh checks one file each).
#   expected_complete.sh DIR EXT MIN      e.g. expected_complete.sh tests/ir/bad xml 30
set -u
dir=$1 ext=$2 min=$3 n=0 bad=0
for f in "$dir"/*."$ext"; do
  [ -e "$f" ] || continue
  n=$((n + 1))
  [ -f "${f%."$ext"}.expected" ] || { echo "missing ${f%."$ext"}.expected"; bad=1; }
done
for e in "$dir"/*.expected; do
  [ -e "$e" ] || continue
  [ -f "${e%.expected}.$ext" ] || { echo "orphan $e"; bad=1; }
done
[ "$n" -ge "$min" ] || { echo "only $n files in $dir, want at least $min"; bad=1; }
echo "$n files in $dir"
exit $bad
