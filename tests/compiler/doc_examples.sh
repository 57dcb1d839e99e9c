#!/usr/bin/env bash
# doc_examples.sh — every complete program in docs/language.md compiles, verifies and runs on
# the CPU executor (for N = 2, 4, 8 where it takes N), so the document cannot drift from the
# compiler. A complete program is a fenced block with an `algorithm` block and no `...`.
set -u
weft=$1
doc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
  /^```/ { if (inb) { close(f); inb = 0 } else { inb = 1; n++; f = dir "/ex" n ".weft" } next }
  inb { print > f }
' "$doc"
count=0
fail=0
for f in "$tmp"/ex*.weft; do
  grep -q '^algorithm [A-Za-z_"]' "$f" || continue
  grep -q '\.\.\.' "$f" && continue
  grep -q 'algorithm NAME' "$f" && continue
  sizes="0"
  grep -q '^param N\b' "$f" && sizes="2 4 8"
  for n in $sizes; do
    args=()
    [ "$n" != 0 ] && args=(-D "N=$n")
    grep -q '^param G\b' "$f" && args+=(-D G=2)
    if ! "$weft" compile "$f" "${args[@]}" -o "$tmp/out.xml" 2>"$tmp/err"; then
      echo "FAIL: example $(basename "$f") ${args[*]} does not compile:"; cat "$tmp/err"; sed -n 1,5p "$f"
      fail=1; continue
    fi
    count=$((count + 1))
    grep -q 'coll="custom"' "$tmp/out.xml" && continue
    "$weft" verify -q "$tmp/out.xml" || { echo "FAIL: $(basename "$f") ${args[*]} does not verify"; fail=1; }
    "$weft" run --cpu -q --count 333 "$tmp/out.xml" || { echo "FAIL: $(basename "$f") ${args[*]} computes a wrong result"; fail=1; }
  done
done
echo "$count example compilations"
[ "$count" -ge 10 ] || { echo "FAIL: expected at least 10 example compilations"; fail=1; }
exit $fail
