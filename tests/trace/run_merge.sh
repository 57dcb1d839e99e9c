#!/usr/bin/env bash
# run_merge.sh — `weft trace merge`: per-rank files written with different clock offsets merge
# into one file that passes chrome_check.py, summarizes exactly as the separate files do (and as
# a run whose ranks had no clock offset: alignment removes it), merges again into the same bytes
# whatever the order, and refuses a rank given twice.
#   run_merge.sh WEFT SIM XML
set -u
weft=$1 sim=$2 xml=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail=0
"$sim" "$xml" a --calls 2 --offset 1000000 || exit 1
"$sim" "$xml" b --calls 2 --offset 0 || exit 1
"$weft" trace merge a.rank0.json a.rank1.json -o m.json || { echo "merge failed"; exit 1; }
"$weft" trace merge a.rank1.json a.rank0.json >m2.json || { echo "merge to stdout failed"; exit 1; }
"$weft" trace merge m.json -o m3.json || exit 1
cmp -s m.json m2.json || { echo "merge depends on the order of the files"; fail=1; }
cmp -s m.json m3.json || { echo "merging a merged file changes it"; fail=1; }
"$weft" trace summarize a.rank0.json a.rank1.json >s_sep
"$weft" trace summarize m.json >s_merged
"$weft" trace summarize b.rank0.json b.rank1.json >s_nooffset
cmp -s s_sep s_merged || { echo "summary of the merged file differs:"; diff -u s_sep s_merged; fail=1; }
cmp -s s_sep s_nooffset || { echo "clock offsets survive alignment:"; diff -u s_nooffset s_sep; fail=1; }
err=$("$weft" trace merge m.json a.rank0.json -o bad.json 2>&1)
rc=$?
[ "$rc" -eq 1 ] || { echo "merging a rank twice: exit $rc, expected 1"; fail=1; }
case $err in
  *"a.rank0.json:9: error: call 0 of rank 0 is also in m.json (line 15)"*) ;;
  *) echo "merging a rank twice: unexpected message: $err"; fail=1 ;;
esac
[ ! -e bad.json ] || { echo "a failed merge wrote its output"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
  python3 "$here/chrome_check.py" m.json || fail=1
fi
[ "$fail" -eq 0 ] && echo "merge ok"
exit $fail
