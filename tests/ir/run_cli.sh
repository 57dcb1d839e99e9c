#!/usr/bin/env bash
# run_cli.sh — `weft show` and `weft fmt` on every conformance file (fmt is idempotent, -o writes
# the same bytes, in place too), plus their usage errors and exit codes.
# usage: run_cli.sh WEFT   (WEFT_SHARED_DIR names the shared/ folder; exit 77 without it)
set -u
weft=$1
shared=${WEFT_SHARED_DIR:-}
[ -n "$shared" ] && [ -d "$shared/conformance" ] || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE CMD...: runs CMD, output to $tmp/out and $tmp/err, checks the exit code.
expect() {
  local want=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "$* -> exit $rc, expected $want: $(head -c 300 "$tmp/err")"
}

n=0
for f in "$shared"/conformance/*/*.xml; do
  n=$((n + 1))
  expect 0 "$weft" show "$f"
  grep -q '^rank 0: ' "$tmp/out" || fail "show $f: no rank listing"
  grep -q '^  ranks: ' "$tmp/out" || fail "show $f: no summary"
  [ -s "$tmp/err" ] && fail "show $f: unexpected diagnostics: $(cat "$tmp/err")"
  expect 0 "$weft" show --summary "$f"
  grep -q '^rank ' "$tmp/out" && fail "show --summary $f: listing printed"
  grep -q '^  chunks sent' "$tmp/out" || fail "show --summary $f: no peer pairs"
  expect 0 "$weft" fmt "$f"
  cp "$tmp/out" "$tmp/a.xml"
  expect 0 "$weft" fmt "$tmp/a.xml"
  cmp -s "$tmp/out" "$tmp/a.xml" || fail "fmt $f: not idempotent"
  expect 0 "$weft" fmt "$f" -o "$tmp/b.xml"
  [ -s "$tmp/out" ] && fail "fmt -o $f: wrote to stdout"
  cmp -s "$tmp/a.xml" "$tmp/b.xml" || fail "fmt -o $f: differs from stdout"
  grep -q "$(printf '\t')" "$tmp/a.xml" && fail "fmt $f: tab in output"
  head -c 5 "$tmp/a.xml" | grep -q '^<algo' || fail "fmt $f: does not start with <algo"
done
[ "$n" -ge 18 ] || fail "only $n conformance files"

# Legacy notes only with -v; fmt -o onto the input file itself.
legacy=$(ls "$shared"/conformance/legacy/*.xml | head -1)
expect 0 "$weft" show --summary "$legacy"
[ -s "$tmp/err" ] && fail "show legacy: info note printed without -v"
expect 0 "$weft" show -v --summary "$legacy"
grep -q ': info: legacy MSCCL format' "$tmp/err" || fail "show -v legacy: no info note"
cp "$legacy" "$tmp/inplace.xml"
expect 0 "$weft" fmt "$tmp/inplace.xml" -o "$tmp/inplace.xml"
grep -q 'outofplace="' "$tmp/inplace.xml" || fail "fmt -o in place: legacy file not rewritten"
expect 0 "$weft" fmt "$tmp/inplace.xml"
cmp -s "$tmp/out" "$tmp/inplace.xml" || fail "fmt -o in place: result not canonical"
ls "$tmp" | grep -q '\.tmp\.' && fail "fmt -o left a temporary file"

# Rejected input: exit 1, nothing written, OUT untouched.
printf '<algo/>\n' >"$tmp/bad.xml"
echo keep >"$tmp/keep.xml"
expect 1 "$weft" fmt "$tmp/bad.xml" -o "$tmp/keep.xml"
[ "$(cat "$tmp/keep.xml")" = keep ] || fail "fmt -o overwrote OUT for a rejected file"
grep -q "bad.xml:1: error: <algo> is missing attribute 'ngpus'" "$tmp/err" || fail "fmt bad: message"
expect 1 "$weft" show "$tmp/bad.xml" "$legacy"
grep -q "^==> $legacy <==" "$tmp/out" || fail "show: good file after a bad one not shown"
expect 1 "$weft" show "$tmp/missing.xml"
grep -q "missing.xml: error: cannot open" "$tmp/err" || fail "show missing: message"

# Usage errors: exit 2 and one line on stderr (the help only when asked).
expect 2 "$weft" show
expect 2 "$weft" show --bogus "$legacy"
grep -q "^weft show: unknown option '--bogus'" "$tmp/err" || fail "show --bogus: message"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "show --bogus: more than one line: $(cat "$tmp/err")"
expect 2 "$weft" show --summay "$legacy"
grep -q "did you mean '--summary'?" "$tmp/err" || fail "show --summay: no did-you-mean"
expect 2 "$weft" fmt
expect 2 "$weft" fmt "$legacy" "$legacy"
expect 2 "$weft" fmt "$legacy" -o
expect 2 "$weft" fmt -x "$legacy"
expect 0 "$weft" show --help
grep -q '^usage: weft show' "$tmp/out" || fail "show --help"
expect 0 "$weft" fmt -h
grep -q '^usage: weft fmt' "$tmp/out" || fail "fmt -h"
expect 0 "$weft" --help
grep -q '^  show ' "$tmp/out" && grep -q '^  fmt ' "$tmp/out" || fail "weft --help lists show and fmt"

echo "$n conformance files, $fails failures"
[ "$fails" -eq 0 ]
