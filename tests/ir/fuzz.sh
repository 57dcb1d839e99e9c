#!/usr/bin/env bash
# fuzz.sh — runs the libFuzzer target for the XML reader for SECONDS, seeded at run time from the
# conformance corpus and tests/ir/{bad,warn} (the seeds are never stored in the repository).
# usage: fuzz.sh FUZZER SECONDS WORKDIR   (WEFT_SHARED_DIR names the shared/ folder)
# New inputs accumulate in WORKDIR/corpus; a finding is saved as WORKDIR/crash-* and fails.
set -eu
fuzzer=$1 secs=$2 work=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shared=${WEFT_SHARED_DIR:-$here/../../../shared}
mkdir -p "$work/seeds" "$work/corpus"
n=0
for f in "$shared"/conformance/*/*.xml "$here"/bad/*.xml "$here"/warn/*.xml; do
  [ -f "$f" ] || continue
  cp "$f" "$work/seeds/$(basename "$(dirname "$f")")-$(basename "$f")"
  n=$((n + 1))
done
echo "fuzz.sh: $n seed files; running $fuzzer for ${secs}s"
# The leak check stays on (detect_leaks); -max_len keeps mutation on the small seeds useful.
cd "$work"
rc=0
"$fuzzer" -max_total_time="$secs" -dict="$here/xml.dict" -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" corpus seeds \
  >"$work/fuzz.log" 2>&1 || rc=$?
grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|Done |stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' \
  "$work/fuzz.log" || true
[ "$rc" -eq 0 ] || { echo "fuzz.sh: the fuzzer exited $rc; see $work/fuzz.log"; tail -40 "$work/fuzz.log"; }
exit "$rc"
