#!/usr/bin/env bash
# run_exit.sh — a process that records and never closes its tracer still leaves a complete trace
# file (weft's exit handler), also when the owner closes it later from its own exit handler.
#   run_exit.sh WEFT TEST_TRACE
set -u
weft=$1 tt=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
for mode in --exit-without-close --exit-then-close; do
  # Without a close the tracer's memory is still held at exit, by design: no leak check there.
  leaks=1
  [ "$mode" = --exit-without-close ] && leaks=0
  f=$(ASAN_OPTIONS=detect_leaks=$leaks "$tt" "$mode" "$work/x${mode}") ||
    { echo "$mode: exit code $?"; fail=1; continue; }
  out=$("$weft" trace summarize "$f" 2>&1) || { echo "$mode: $f is not a complete trace:"; echo "$out"; fail=1; continue; }
  case $out in
    "trace: 2 calls on 1 rank, 24 step executions"*) echo "$mode: ok" ;;
    *) echo "$mode: unexpected summary:"; echo "$out" | head -3; fail=1 ;;
  esac
done
exit $fail
