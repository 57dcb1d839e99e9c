#!/usr/bin/env bash
# run_library.sh — tests `weft library`: the table for a passing subset, a failing file (exit 1,
# FAIL row with the compiler's diagnostic), usage errors (exit 2).
set -euo pipefail
weft=$1
root=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

out=$("$weft" library --shape N=3,SERVE=1 "$root/algorithms/allreduce_ring.weft" \
      "$root/algorithms/broadcast_chain.weft") || fail "library on good files exited $?: $out"
echo "$out"
grep -q '^algorithm  *shape  *ranks  *steps  *tbs  *tb/rank  *depth  *verified  *executed  *ms$' <<<"$out" ||
    fail "no table header"
grep -Eq '^allreduce_ring +N=3,SERVE=1 +3 .* ok +ok 10/10 ' <<<"$out" || fail "no passing allreduce_ring row"
grep -Eq '^broadcast_chain +N=3,SERVE=1 +3 .* ok +ok 10/10 ' <<<"$out" || fail "no passing broadcast_chain row"
grep -q '^2 files, 2 shapes: all compiled, verified and executed (20 CPU runs)' <<<"$out" ||
    fail "no summary line"

# The test lines of a file are its shapes; a directory means its .weft files in name order.
out=$("$weft" library -q "$here/bad") && fail "a broken algorithm must fail the table"
echo "$out"
grep -Eq '^ring_missing_hop +N=3 +- .* no ' <<<"$out" || fail "no failing row"
grep -q 'error: ' <<<"$out" || fail "the compiler's diagnostic is not shown"
grep -q '^1 files, 1 shapes: 1 FAILED' <<<"$out" || fail "no failure summary"

set +e
"$weft" library --count 0 "$root/algorithms" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--count 0 must be a usage error"
"$weft" library --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option must be a usage error"
"$weft" library "$here/no-such-dir" >/dev/null 2>&1
[ $? -eq 1 ] || fail "a missing directory must exit 1"
echo "ok"
