#!/usr/bin/env bash
# run_cli.sh — `weft trace` usage: exit codes (0 ok, 1 input, 2 usage), messages, and the exact
# summary and check of the hand-written sample data/min.json (golden/min.*).
#   run_cli.sh WEFT
set -u
weft=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here" || exit 1
fail=0
# expect CODE PATTERN ARGS...: exit code CODE and PATTERN in stdout+stderr.
expect() {
  local code=$1 pat=$2
  shift 2
  local out rc
  out=$("$weft" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$code" ]; then
    echo "weft $*: exit $rc, expected $code"; echo "$out" | head -5; fail=1
  elif [[ "$out" != *"$pat"* ]]; then
    echo "weft $*: output lacks \"$pat\":"; echo "$out" | head -5; fail=1
  fi
}
expect 2 "weft trace: which command? summarize, check, merge or draw" trace
expect 2 "unknown command 'sum'; did you mean 'summarize'?" trace sum data/min.json
expect 2 "no trace file given" trace summarize
expect 2 "--call: 'x' is not a whole number" trace summarize --call x data/min.json
expect 2 "--call needs a value (N)" trace summarize --call
expect 2 "--path-max: -1 is out of range (0 to" trace summarize --path-max -1 data/min.json
expect 2 "--tolerance: 2 is out of range (0 to 1)" trace check --tolerance 2 data/min.json
expect 2 "--tolerance: '0.1x' is not a number" trace check --tolerance 0.1x data/min.json
expect 2 "--tolerance: a fraction between 0 and 1, not 0" trace check --tolerance=0 data/min.json
expect 2 "unknown option '--bogus'" trace summarize --bogus data/min.json
expect 2 "unknown option '-o'" trace summarize -o x data/min.json
expect 2 "-o needs a value (OUT)" trace merge data/min.json -o
expect 0 "usage: weft trace summarize" trace --help
expect 0 "usage: weft trace check" trace check --help
expect 1 "nonexistent.json: error: cannot open" trace summarize nonexistent.json
expect 1 "weft trace: call 99 is not in the trace" trace summarize --call 99 data/min.json
expect 1 "cannot write" trace merge -o /nonexistent-dir/m.json data/min.json
expect 1 "busiest tb's step time / kernel time: 0.833 .. 0.875" trace check data/min.json
expect 0 "busiest tb's step time / kernel time: 0.833 .. 0.875 (tolerance 0.20" trace check --tolerance 0.2 data/min.json
out=$("$weft" trace summarize --call 99 data/min.json 2>/dev/null)
[ -z "$out" ] || { echo "summarize --call 99 printed a report"; fail=1; }
for k in summary check; do
  "$weft" trace "${k/summary/summarize}" data/min.json >"/tmp/weft-trace-cli.$$" 2>&1
  echo "exit $?" >>"/tmp/weft-trace-cli.$$"
  if [ "${WEFT_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "/tmp/weft-trace-cli.$$" "golden/min.$k"
  elif ! cmp -s "/tmp/weft-trace-cli.$$" "golden/min.$k"; then
    echo "min.json: $k differs from golden/min.$k:"; diff -u "golden/min.$k" "/tmp/weft-trace-cli.$$"; fail=1
  fi
  rm -f "/tmp/weft-trace-cli.$$"
done
[ "$fail" -eq 0 ] && echo "cli ok"
exit $fail
