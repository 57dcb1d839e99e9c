#!/usr/bin/env bash
# demo.sh — weft's main job: builds weft, compiles, verifies and CPU-executes the algorithm library
# and the msccl-tools examples (a table); shows, round-trips, verifies and CPU-executes every
# schedule of the conformance corpus; on a GPU machine then runs the library against NCCL
# (tools/demo_gpu.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=${WEFT_SHARED_DIR:-$root/../shared}
# The build: one line per finished target, so that the minutes of a first build show progress;
# the whole log when it fails.
echo "demo: building weft in $root/build (minutes the first time; the CUDA kernels take longest)"
log=$(mktemp)
if ! bash "$root/tools/setup.sh" "$root/build" 2>&1 | tee "$log" |
  sed -u -n -e 's/^\[ *\([0-9]*\)%\] Built target \(.*\)/  build: \1% \2/p' -e '/^setup:/p'; then
  echo "demo: the build failed; its last lines:"
  tail -40 "$log"
  rm -f "$log"
  exit 1
fi
rm -f "$log"
weft="$root/build/tools/weft"
"$weft" env

# Every algorithm and example for every shape it claims: compiled, verified, run on the CPU.
echo
echo "== the algorithm library and the msccl-tools examples (weft library)"
lib_rc=0
(cd "$root" && "$weft" library algorithms examples) || lib_rc=$?

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every schedule of others: its summary, the verifier's proof, a run on the CPU executor, then a
# canonical rewrite that must read back to the same bytes.
n=0 bad=0
[ -d "$shared/conformance" ] ||
  echo "demo: no conformance corpus at $shared/conformance (set WEFT_SHARED_DIR): skipped"
for f in "$shared"/conformance/*/*.xml; do
  [ -e "$f" ] || continue
  n=$((n + 1))
  rel=${f#"$shared"/conformance/}
  echo
  echo "== $rel"
  if ! "$weft" show --summary "$f"; then
    echo "demo: weft show failed on $rel"
    bad=$((bad + 1))
    continue
  fi
  if ! "$weft" verify "$f" || ! "$weft" run --cpu "$f" --count 1000 --type half --op sum; then
    echo "demo: weft verify or run --cpu failed on $rel"
    bad=$((bad + 1))
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
echo "demo: $n conformance schedules shown, round-tripped, verified and run on the CPU, $bad failed"

# On a machine with GPUs: the library against NCCL (skips, saying why, without them).
gpu_rc=0
bash "$root/tools/demo_gpu.sh" "$root/build" "$root/algorithms" || gpu_rc=$?
[ "$bad" -eq 0 ] && [ "$lib_rc" -eq 0 ] && [ "$gpu_rc" -eq 0 ]
