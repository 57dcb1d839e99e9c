#!/usr/bin/env bash
# check_depths.sh — the critical paths the compiler reaches, pinned: every shape on the `// test:`
# lines of algorithms/, examples/ and tests/algorithms/hintfree/ against depths.golden (a change
# shows as a diff; regenerate with depths.sh after an intended scheduling change, and say why in
# the commit). Also: each hintfree/ file is its example without placement hints, and
# examples/README.md's critical-path table states the pinned depths and that they are no deeper
# than msccl-tools' schedules for the same arguments.
# Usage: check_depths.sh WEFT ROOT
set -uo pipefail
weft=$1
root=$2
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/depths.golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0

bash "$here/depths.sh" "$weft" "$root" >"$tmp/actual" || bad=1
if ! diff -u "$golden" "$tmp/actual"; then
    echo "FAIL: critical paths differ from depths.golden (- pinned, + now)"
    bad=1
fi

# A program with its hints taken out and its comments and layout ignored.
strip() {
    grep -v '^[[:space:]]*//' "$1" | sed -E 's/[[:space:]]+(sendtb|recvtb|tb|chan)=/\x01/g' |
        sed -E 's/\x01[^\x01;]*//g' | tr -d ' \t\n'
}
for f in "$root"/tests/algorithms/hintfree/*.weft; do
    ex=$root/examples/$(basename "$f")
    [ -f "$ex" ] || { echo "FAIL: $f: no examples/$(basename "$f")"; bad=1; continue; }
    grep -Eq '(sendtb|recvtb|[^a-z]tb|chan)=' <(grep -v '^[[:space:]]*//' "$f") &&
        { echo "FAIL: $f still has placement hints"; bad=1; }
    [ "$(strip "$f")" = "$(strip "$ex")" ] ||
        { echo "FAIL: $f is not examples/$(basename "$f") without its hints"; bad=1; }
done

# README rows: | schedule | `file.weft` SHAPE | weft | weft, no hints | msccl-tools |
rows=0
while IFS='|' read -r _ _ src d1 d2 ms _; do
    file=$(sed -n 's/.*`\(.*\.weft\)`.*/\1/p' <<<"$src")
    shape=$(sed 's/.*`[^`]*`[[:space:]]*//; s/[[:space:]]*$//' <<<"$src")
    d1=${d1// /} d2=${d2// /} ms=${ms// /}
    rows=$((rows + 1))
    want1=$(awk -v f="examples/$file" -v s="$shape" '$1 == f && $2 == s {print $3}' "$golden")
    nh=tests/algorithms/hintfree/$file
    [ -f "$root/$nh" ] || nh=examples/$file # no hints to take out
    want2=$(awk -v f="$nh" -v s="$shape" '$1 == f && $2 == s {print $3}' "$golden")
    [ -n "$want1" ] && [ -n "$want2" ] ||
        { echo "FAIL: README row $file $shape: no such shape in depths.golden"; bad=1; continue; }
    [ "$d1" = "$want1" ] && [ "$d2" = "$want2" ] ||
        { echo "FAIL: README row $file $shape says $d1 and $d2, depths.golden $want1 and $want2"; bad=1; }
    [ "$want1" -le "$ms" ] && [ "$want2" -le "$ms" ] ||
        { echo "FAIL: $file $shape: weft $want1 / $want2 is deeper than msccl-tools' $ms"; bad=1; }
done < <(grep -E '^\| [^|]+ \| `[a-z0-9_]+\.weft` [A-Z]' "$root/examples/README.md")
[ $rows -gt 0 ] || { echo "FAIL: no critical-path rows in examples/README.md"; bad=1; }
[ $bad -eq 0 ] && echo "ok: $(wc -l <"$golden") pinned critical paths, $rows README rows"
exit $bad
