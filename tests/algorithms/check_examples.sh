#!/usr/bin/env bash
# check_examples.sh — examples/README.md's table against the files: every examples/*.weft has a
# row, the row's weft line count is the file's (lines neither blank nor only a comment), and the
# weft version is shorter than the Python original it translates.
set -uo pipefail
root=$1
readme=$root/examples/README.md
bad=0
for f in "$root"/examples/*.weft; do
    name=$(basename "$f")
    row=$(grep "^| \`$name\` |" "$readme") || { echo "$name: no row in examples/README.md"; bad=1; continue; }
    py=$(awk -F'|' '{gsub(/ /, "", $4); print $4}' <<<"$row")
    wl=$(awk -F'|' '{gsub(/ /, "", $5); print $5}' <<<"$row")
    n=$(grep -v '^[[:space:]]*$' "$f" | grep -cv '^[[:space:]]*//')
    [ "$n" = "$wl" ] || { echo "$name: README says $wl lines, the file has $n"; bad=1; }
    [ "$n" -lt "$py" ] || { echo "$name: $n lines is not shorter than the Python original ($py)"; bad=1; }
done
[ $bad -eq 0 ] && echo "ok: $(ls "$root"/examples/*.weft | wc -l) examples, all shorter than the originals"
exit $bad
