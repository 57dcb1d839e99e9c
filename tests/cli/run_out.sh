#!/usr/bin/env bash
# run_out.sh — every writer of weft writes its output file the same way (common/out.c): through
# symbolic links (also dangling ones) to their target, into a FIFO as a stream and into /dev/null
# without replacing them, a new file with 0666 less the umask and an old one keeping its mode,
# the output that is also an input read before it changes, no temporary left behind, and
# /dev/full or a directory refused with exit 1 and a message. (That a link planted at a
# temporary's name is never followed: tests/common, test_out.)
#   run_out.sh WEFT [TEST_TUNE]   (run in the source tree's tests/cli)
set -u
weft=$1
test_tune=${2:-}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$weft" compile "$root/algorithms/allreduce_ring.weft" -D N=4 -D SERVE=1 -o "$tmp/ring4.xml" ||
  fail "compile ring4"
trace=$root/tests/trace/data/min.json
# write NAME OUT: runs writer NAME with its output at OUT (exit code returned)
write() {
  case $1 in
  fmt) "$weft" fmt "$tmp/ring4.xml" -o "$2" ;;
  show) "$weft" show --format=svg "$tmp/ring4.xml" -o "$2" ;;
  compile) "$weft" compile "$root/algorithms/allreduce_ring.weft" -D N=4 -D SERVE=1 -o "$2" ;;
  merge) "$weft" trace merge -o "$2" "$trace" ;;
  plot) "$weft" tune --plot-only "$tmp/table.txt" -o "$2" >/dev/null ;;
  table) (cd "$root/tests/tune" && "$test_tune" algos --write-table "$2") ;;
  esac
}
writers="fmt show compile merge"
if [ -n "$test_tune" ] && [ -x "$test_tune" ]; then
  (cd "$root/tests/tune" && "$test_tune" algos --write-table "$tmp/table.txt") || fail "test_tune table"
  writers="$writers plot table"
else
  echo "SKIP: the runtime layer is not built: weft tune's picture and table writer not tested"
fi

for w in $writers; do
  d=$tmp/$w
  mkdir "$d"
  write $w "$d/ref" 2>"$d/err" || fail "$w: exit $?: $(cat "$d/err")"
  [ -s "$d/ref" ] || { fail "$w: wrote nothing"; continue; }
  # a symbolic link: its target is written, the link stays
  echo old >"$d/target"
  ln -s target "$d/link"
  write $w "$d/link" 2>"$d/err" || fail "$w -o link: exit $?: $(cat "$d/err")"
  [ -L "$d/link" ] || fail "$w -o link: the link was replaced"
  cmp -s "$d/target" "$d/ref" || fail "$w -o link: the target does not hold the output"
  # a dangling link: the file it names is created
  ln -s made "$d/dangling"
  write $w "$d/dangling" 2>"$d/err" || fail "$w -o dangling link: exit $?: $(cat "$d/err")"
  [ -L "$d/dangling" ] && cmp -s "$d/made" "$d/ref" || fail "$w -o dangling link: not written through"
  # a FIFO: streamed into, still a FIFO
  mkfifo "$d/fifo"
  cat "$d/fifo" >"$d/from-fifo" &
  reader=$!
  write $w "$d/fifo" 2>"$d/err" || fail "$w -o fifo: exit $?: $(cat "$d/err")"
  wait $reader
  [ -p "$d/fifo" ] || fail "$w -o fifo: no longer a FIFO"
  cmp -s "$d/from-fifo" "$d/ref" || fail "$w -o fifo: the reader got other bytes"
  # /dev/null: written into, never replaced (as root it would otherwise be)
  write $w /dev/null 2>"$d/err" || fail "$w -o /dev/null: exit $?: $(cat "$d/err")"
  [ -c /dev/null ] || fail "$w -o /dev/null: /dev/null is no longer a device"
  # modes: a new file from the umask, an old one keeps its own
  (umask 027 && write $w "$d/new") 2>"$d/err" || fail "$w umask 027: exit $?"
  [ "$(stat -c %a "$d/new")" = 640 ] || fail "$w: new file mode $(stat -c %a "$d/new") under umask 027"
  (umask 077 && write $w "$d/fresh") 2>/dev/null
  [ "$(stat -c %a "$d/fresh")" = 600 ] || fail "$w: new file mode $(stat -c %a "$d/fresh") under umask 077"
  chmod 604 "$d/new"
  (umask 077 && write $w "$d/new") 2>/dev/null
  [ "$(stat -c %a "$d/new")" = 604 ] || fail "$w: an old file's mode became $(stat -c %a "$d/new")"
  # refused: a full device, a directory, a missing folder; exit 1 and a message each
  write $w /dev/full 2>"$d/err"
  rc=$?
  [ "$rc" -eq 1 ] || fail "$w -o /dev/full: exit $rc"
  grep -q 'cannot write' "$d/err" || fail "$w -o /dev/full: no message: $(cat "$d/err")"
  write $w "$d" 2>"$d/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q 'directory' "$d/err" || fail "$w -o DIR: exit $rc: $(cat "$d/err")"
  write $w "$d/missing/out" 2>"$d/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q 'cannot write' "$d/err" || fail "$w -o missing/out: exit $rc: $(cat "$d/err")"
  ls -A "$d" | grep -q '\.tmp\.' && fail "$w: a temporary file was left: $(ls -A "$d")"
done

# The output is also an input: read whole before it is replaced.
cp "$tmp/ring4.xml" "$tmp/same.xml"
"$weft" fmt "$tmp/same.xml" -o "$tmp/same.xml" || fail "fmt X -o X: exit $?"
"$weft" fmt "$tmp/ring4.xml" | cmp -s - "$tmp/same.xml" || fail "fmt X -o X: not the formatted input"
cp "$trace" "$tmp/a.json"
"$weft" trace merge -o "$tmp/a.json" "$tmp/a.json" || fail "trace merge -o A A: exit $?"
cmp -s "$tmp/a.json" "$tmp/merge/ref" || fail "trace merge -o A A: A truncated before it was read"
cp "$root/algorithms/allreduce_ring.weft" "$tmp/ring.weft"
"$weft" compile "$tmp/ring.weft" -D N=4 -D SERVE=1 -o "$tmp/ring.weft" || fail "compile X -o X: exit $?"
grep -q '^<algo' "$tmp/ring.weft" || fail "compile X -o X: no schedule written"

# a picture on standard output is all of it: estimate's table then goes to standard error
"$weft" estimate "$tmp/ring4.xml" --sizes 8 --at 1K --svg - >"$tmp/est.svg" 2>"$tmp/est.err" ||
  fail "estimate --svg -"
head -c 5 "$tmp/est.svg" | grep -q "<?xml" && tail -n1 "$tmp/est.svg" | grep -q "</svg>" ||
  fail "estimate --svg -: standard output is not the picture alone"
grep -q "critical path" "$tmp/est.err" || fail "estimate --svg -: no table on standard error"
echo "$fails failures"
[ "$fails" -eq 0 ]
