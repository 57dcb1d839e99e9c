#!/usr/bin/env bash
# run_estimate.sh — `weft estimate` (the timing model of tools/trace/sim.h) pinned on a few
# library files (golden/estimate.txt: per-size estimates, critical paths, the parameters, usage
# errors), its SVG timeline, and its calibration: against the recorded 2-GPU times of the
# library's allreduce files (docs/estimate.md) every estimate is within 25%, and at each of 13
# sizes the model's fastest file is the measured fastest (below 2 MB either LL file: they were
# equal within the measurement's noise).
#   run_estimate.sh WEFT ALGORITHMS_DIR      (WEFT_UPDATE_GOLDEN=1 rewrites the golden file)
set -u
weft=$1
alg=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$alg/.." || exit 1
a=$(basename "$alg")
run() {
  echo "\$ weft estimate $*"
  "$weft" estimate "$@" 2>&1
  echo "exit=$?"
}
{
  run "$a/allreduce_direct_ll.weft" --sizes 8,8K,32K
  # the own block's copy (2 chunks, a local step) does not halve the slices, as in the runtime
  run "$a/allgather_direct_ll.weft" --sizes 1M
  run "$a/allreduce_direct_simple.weft" --sizes 1M,128M --path 1M
  run "$a/allreduce_ring.weft" -D N=4 -D SERVE=1 --sizes 8,1M --set gpu_gbps=450 --link-gbps 450 --path 8
  run "$a/allreduce_ring.weft" -D N=4 -D SERVE=1 -D PROTO=LL --sizes 8,1M --type half
  run --model
  run "$a/allreduce_direct_ll.weft" --set bogus=1
  run "$a/allreduce_direct_ll.weft" --set ll.wire_eff=2
  run "$a/allreduce_direct_ll.weft" --link-gbps fast
  run "$a/allreduce_direct_ll.weft" --set slots=0
  run "$a/allreduce_direct_ll.weft" --set max_ctas=1.5
  run "$a/allreduce_direct_simple.weft" --sizes 512G --set simple.cta_gbps=0.000000001 --link-gbps 0
  run "$a/allreduce_direct_ll.weft" --sizes 8,1M --path 4K
  run "$a/allreduce_direct_ll.weft" --sizes 0
  run "$a/allreduce_ring.weft" -D N=4
  run tests/verify/bad/deadlock-cycle.xml --sizes 8
  run
} >"$tmp/out"
fail=0
if [ "${WEFT_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$tmp/out" "$here/golden/estimate.txt"
else
  diff -u "$here/golden/estimate.txt" "$tmp/out" || fail=1
fi
# linear in the steps: a 10,000-step ping-pong between two ranks (every step waits for the
# previous message) estimates in well under a second (it took 14 s at 1,000 steps when each
# wait searched every placed step)
awk 'BEGIN {
  print "<algo name=\"pingpong\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"2\" coll=\"allreduce\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">"
  for (r = 0; r < 2; r++) {
    printf "<gpu id=\"%d\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"1\">\n", r
    printf "<tb id=\"0\" send=\"%d\" recv=\"%d\" chan=\"0\">\n", 1 - r, 1 - r
    for (i = 0; i < 5000; i++)
      for (h = 0; h < 2; h++) {
        t = (h == r) ? "s" : "r"
        printf "<step s=\"%d\" type=\"%s\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n", 2 * i + h, t
      }
    print "</tb>\n</gpu>"
  }
  print "</algo>" }' >"$tmp/chain.xml"
start=$(date +%s%N)
"$weft" estimate "$tmp/chain.xml" --sizes 8,1M >"$tmp/chain.out" 2>&1 ||
  { echo "estimate of a 10,000-step chain failed:"; cat "$tmp/chain.out"; fail=1; }
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -lt "${WEFT_ESTIMATE_CHAIN_MS:-1000}" ] ||
  { echo "estimate of a 10,000-step chain took $ms ms (at most 1000)"; fail=1; }
# the timeline picture
"$weft" estimate "$a/allreduce_direct_ll_wide.weft" --sizes 8,32K --svg "$tmp/t.svg" --at 32K \
  >/dev/null 2>&1 || { echo "estimate --svg failed"; fail=1; }
grep -q '^<svg ' "$tmp/t.svg" && grep -q 'allreduce_direct_ll_wide: 32 KB on 2 ranks' "$tmp/t.svg" &&
  grep -q 'critical path' "$tmp/t.svg" && tail -n1 "$tmp/t.svg" | grep -q '</svg>' ||
  { echo "estimate --svg: not a complete timeline"; fail=1; }
# the calibration (docs/estimate.md): file size measured-us (2 x H200, weft_bench, eager, out of
# place, 2026-11-28)
cal="allreduce_direct_ll 8 5.82
allreduce_direct_ll_wide 32K 5.56
allreduce_direct_ll_wide 128K 5.61
allreduce_direct_ll_wide 512K 10.20
allreduce_direct_simple 1M 14.28
allreduce_direct_simple 2M 18.84
allreduce_direct_simple 4M 28.35
allreduce_direct_simple 8M 47.43
allreduce_direct_simple 16M 75.64
allreduce_direct_simple 32M 130.33
allreduce_direct_simple 64M 238.06
allreduce_direct_simple 128M 455.37"
est() { "$weft" estimate "$a/$1.weft" --sizes "$2" 2>/dev/null | awk 'NR == 4 { print $3 }'; }
while read -r f s m; do
  e=$(est "$f" "$s")
  awk -v e="$e" -v m="$m" 'BEGIN { d = (e - m) / m; exit !(e != "" && d < 0.25 && d > -0.25) }' ||
    { echo "calibration: $f at $s estimated '$e' us, measured $m (over 25% off)"; fail=1; }
done <<<"$cal"
# the same run measured every file at 13 sizes: _simple fastest from 2 MB; below, _ll and
# _ll_wide within 10% of each other (its noise), either counts
agree=0
for s in 8 32 128 512 2K 8K 32K 128K 512K 2M 8M 32M 128M; do
  case $s in 2M | 8M | 32M | 128M) want=allreduce_direct_simple ;; *) want=allreduce_direct_ll ;; esac
  best=$(for f in allreduce_direct_ll allreduce_direct_ll_wide allreduce_direct_simple; do
    echo "$(est $f $s) $f"; done | sort -g | head -n1 | cut -d' ' -f2)
  [ "${best%_wide}" = "$want" ] && agree=$((agree + 1))
done
[ "$agree" -ge 13 ] || { echo "ranking: the model picks a measured-fastest file at only $agree of 13 sizes"; fail=1; }
exit $fail
