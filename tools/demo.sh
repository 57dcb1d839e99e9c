#!/usr/bin/env bash
# demo.sh — weft's main job: builds weft, compiles, verifies and CPU-executes the algorithm library
# and the msccl-tools examples (a table), then shows and checks every schedule of the conformance
# corpus (later: on a GPU machine, runs them against NCCL).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=${WEFT_SHARED_DIR:-$root/../shared}
bash "$root/tools/setup.sh" "$root/build" >/dev/null
weft="$root/build/tools/weft"
"$weft" env

# Every algorithm and example for every shape it claims: compiled, verified, run on the CPU.
echo
echo "== the algorithm library and the msccl-tools examples (weft library)"
lib_rc=0
(cd "$root" && "$weft" library algorithms examples) || lib_rc=$?

if [ ! -d "$shared/conformance" ]; then
  echo "demo: no conformance corpus at $shared/conformance (set WEFT_SHARED_DIR); stopping here"
  exit "$lib_rc"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every schedule: its summary, then a canonical rewrite that must read back to the same bytes.
n=0 bad=0
for f in "$shared"/conformance/*/*.xml; do
  n=$((n + 1))
  rel=${f#"$shared"/conformance/}
  echo
  echo "== $rel"
  if ! "$weft" show --summary "$f"; then
    echo "demo: weft show failed on $rel"
    bad=$((bad + 1))
    continue
  fi
  if "$weft" fmt "$f" -o "$tmp/a.xml" && "$weft" fmt "$tmp/a.xml" -o "$tmp/b.xml" &&
     cmp -s "$tmp/a.xml" "$tmp/b.xml"; then
    if cmp -s "$f" "$tmp/a.xml"; then
      echo "  fmt: already canonical"
    else
      echo "  fmt: canonical rewrite reads back identically ($(wc -l <"$tmp/a.xml") lines)"
    fi
  else
    echo "demo: fmt round trip failed on $rel"
    bad=$((bad + 1))
  fi
done
echo
echo "demo: $n conformance schedules shown and round-tripped, $bad failed"
[ "$bad" -eq 0 ] && [ "$lib_rc" -eq 0 ]
