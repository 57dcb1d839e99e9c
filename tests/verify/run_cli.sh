#!/usr/bin/env bash
# run_cli.sh — `weft verify` and `weft run --cpu` from the command line: exit codes, usage
# errors, the success summary, quiet mode, several files.
set -u
weft=$1
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
fail=0
expect() { # expect CODE DESCRIPTION -- command...
  local want=$1 what=$2
  shift 3
  "$@" >/tmp/weft_cli_out.$$ 2>&1
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL ($what): exit $rc, expected $want: $*"
    cat /tmp/weft_cli_out.$$
    fail=1
  fi
}
has() { # has TEXT: the last command's output contains TEXT
  grep -qF -- "$1" /tmp/weft_cli_out.$$ || { echo "FAIL: output lacks '$1'"; cat /tmp/weft_cli_out.$$; fail=1; }
}
good=run/ok-short-count.xml

expect 2 "no file" -- "$weft" verify
expect 2 "bad --fifo" -- "$weft" verify --fifo x "$good"
expect 2 "unknown option" -- "$weft" verify --frobnicate "$good"
expect 0 "help" -- "$weft" verify --help
has "usage: weft verify"
expect 0 "good file" -- "$weft" verify "$good"
cat >/tmp/weft_cli_want.$$ <<'WANT'
run/ok-short-count.xml: verified allgather (out-of-place) on 2 ranks
  2 ranks, 2 tbs, 6 steps, 1 channel; critical path 3 steps
  needs connection buffers of 1 message
  8 chunks moved over 2 peer pairs (4 each)
  chunks per pair: 0->1:4 1->0:4
WANT
cmp -s /tmp/weft_cli_out.$$ /tmp/weft_cli_want.$$ || { echo "FAIL: summary differs"; diff /tmp/weft_cli_want.$$ /tmp/weft_cli_out.$$; fail=1; }
expect 0 "quiet" -- "$weft" verify -q "$good"
[ -s /tmp/weft_cli_out.$$ ] && { echo "FAIL: -q printed"; cat /tmp/weft_cli_out.$$; fail=1; }
expect 1 "one bad of two" -- "$weft" verify "$good" bad/deadlock-cycle.xml
has "run/ok-short-count.xml: verified allgather"
has "deadlock-cycle.xml: verification failed: 1 deadlock"
expect 1 "missing file" -- "$weft" verify no-such-file.xml
expect 1 "fifo 1 is stricter" -- "$weft" verify --fifo 1 bad/fifo-deadlock.xml
has "deadlock when a connection buffers 1 message"
expect 0 "fifo 0 skips the bounded check" -- "$weft" verify --fifo 0 bad/fifo-deadlock.xml

expect 2 "run: no mode" -- "$weft" run "$good"
expect 2 "run: no file" -- "$weft" run --cpu
expect 2 "run: bad type" -- "$weft" run --cpu "$good" --type complex
expect 2 "run: bad op" -- "$weft" run --cpu "$good" --op xor
expect 2 "run: negative count" -- "$weft" run --cpu "$good" --count -1
expect 2 "run: two files" -- "$weft" run --cpu "$good" "$good"
expect 2 "run: undeclared mode" -- "$weft" run --cpu "$good" --inplace
has "does not declare in-place calls"
expect 0 "run: help" -- "$weft" run --help
has "--cpu"
expect 0 "run: count 0" -- "$weft" run --cpu "$good" --count 0
expect 0 "run: every type" -- bash -c "for t in int8 uint8 int32 uint32 int64 uint64 half float double bfloat16; do '$weft' run --cpu -q '$good' --count 13 --type \$t --sched-seed 3 || exit 1; done"
expect 0 "run: quiet" -- "$weft" run --cpu -q "$good"
[ -s /tmp/weft_cli_out.$$ ] && { echo "FAIL: run -q printed"; fail=1; }
expect 1 "run: missing file" -- "$weft" run --cpu no-such-file.xml
rm -f /tmp/weft_cli_out.$$ /tmp/weft_cli_want.$$
exit $fail
