#!/usr/bin/env bash
# fuzz.sh — runs the libFuzzer target for the language for SECONDS, seeded at run time from the
# golden cases, the algorithm library and the examples (the seeds are never stored in the
# repository). usage: fuzz.sh FUZZER SECONDS WORKDIR [JOBS]
# New inputs accumulate in WORKDIR/corpus; a finding is saved as WORKDIR/crash-* (or timeout-*,
# oom-*) and fails. With JOBS > 1, that many fuzzing processes share the corpus.
set -eu
fuzzer=$1 secs=$2 work=$3 jobs=${4:-1}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$here/../..
mkdir -p "$work/seeds" "$work/corpus"
n=0
for f in "$here"/cases/*.weft "$root"/tests/compiler/cases/*.weft "$root"/algorithms/*.weft \
  "$root"/examples/*.weft; do
  [ -f "$f" ] || continue
  cp "$f" "$work/seeds/$(basename "$(dirname "$f")")-$(basename "$f")"
  n=$((n + 1))
done
echo "fuzz.sh: $n seed files; running $fuzzer for ${secs}s ($jobs job(s))"
cd "$work"
rc=0
# -timeout: one input may take at most 30 s of wall time (FUZZ_TIMEOUT; the budgets keep inputs
# below 3 s of CPU in this instrumented build; the margin is for loaded machines);
# -rss_limit_mb 2048: and 2 GiB (the limits keep them below 1 GiB, sanitizers included).
opts=(-max_total_time="$secs" -dict="$here/weft.dict" -max_len=8192 -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048
  -print_final_stats=1 -artifact_prefix="$work/")
if [ "$jobs" -gt 1 ]; then
  "$fuzzer" "${opts[@]}" -jobs="$jobs" -workers="$jobs" corpus seeds >"$work/fuzz.log" 2>&1 || rc=$?
  cat "$work"/fuzz-*.log >>"$work/fuzz.log" 2>/dev/null || true
else
  "$fuzzer" "${opts[@]}" corpus seeds >"$work/fuzz.log" 2>&1 || rc=$?
fi
grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|Done |stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' \
  "$work/fuzz.log" || true
[ "$rc" -eq 0 ] || { echo "fuzz.sh: the fuzzer exited $rc; see $work/fuzz.log"; tail -40 "$work/fuzz.log"; }
exit "$rc"
