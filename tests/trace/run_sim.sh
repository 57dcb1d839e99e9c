#!/usr/bin/env bash
# run_sim.sh — a synthetic trace end to end: trace_sim runs XML through the timing model and
# writes one file per rank with the runtime's writer; `weft trace summarize` and `weft trace check`
# must print exactly golden/NAME.summary and golden/NAME.check (the check's exit code is its last
# line); every file must pass chrome_check.py (skipped without python3).
#   run_sim.sh WEFT SIM NAME XML [trace_sim options...]
# WEFT_UPDATE_GOLDEN=1 rewrites the golden files instead (review the diff).
set -u
weft=$1 sim=$2 name=$3 xml=$4
shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$sim" "$xml" "$name" "$@" || { echo "trace_sim failed"; exit 1; }
files=$(ls "$name".rank*.json)
"$weft" trace summarize $files >summary 2>&1
echo "exit $?" >>summary
"$weft" trace check $files >check 2>&1
echo "exit $?" >>check
if [ "${WEFT_UPDATE_GOLDEN:-}" = 1 ]; then
  cp summary "$here/golden/$name.summary"
  cp check "$here/golden/$name.check"
  echo "updated golden/$name.summary and golden/$name.check"
  exit 0
fi
fail=0
for k in summary check; do
  if ! cmp -s "$k" "$here/golden/$name.$k"; then
    echo "$name: $k differs from golden/$name.$k:"
    diff -u "$here/golden/$name.$k" "$k"
    fail=1
  fi
done
if command -v python3 >/dev/null 2>&1; then
  python3 "$here/chrome_check.py" $files || fail=1
fi
exit $fail
