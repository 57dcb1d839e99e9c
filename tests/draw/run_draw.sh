#!/usr/bin/env bash
# run_draw.sh WEFT TEST_DRAW SRC — pictures: `weft show --format=svg|dot` of library files of
# several shapes (rings, trees, rooted, hierarchical), each checked by test_draw against the
# schedule and the verifier; usage errors and a deadlocking schedule rejected with a reason; the
# pictures under docs/ regenerated from their sources and compared, so they cannot go stale.
set -euo pipefail
weft=$1 test_draw=$2 src=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft_draw.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# [--gpus-per-node=G] FILE SHAPE...: compile, draw both ways, check; the picture is
# $tmp/NAME.svg, NAME_N.svg from N=8 up
draw() {
    local node=()
    if [[ $1 == --gpus-per-node=* ]]; then node=("$1"); shift; fi
    local f=$1 name
    shift
    name=$(basename "$f" .weft)
    local defs=()
    for s in "$@"; do
        defs+=(-D "$s")
        if [[ $s == N=* ]] && [ "${s#N=}" -ge 8 ]; then name+="_${s#N=}"; fi
    done
    "$weft" compile "$src/$f" "${defs[@]}" -o "$tmp/$name.xml"
    "$weft" show --format=svg "${node[@]}" "$tmp/$name.xml" >"$tmp/$name.svg"
    "$weft" show --format=dot "${node[@]}" "$tmp/$name.xml" >"$tmp/$name.dot"
    "$test_draw" "${node[@]}" "$tmp/$name.xml" "$tmp/$name.svg" "$tmp/$name.dot"
}
draw algorithms/allreduce_ring.weft N=4 SERVE=1
draw algorithms/allreduce_direct_ll.weft N=3 ANYN=1
draw algorithms/broadcast_tree.weft N=5 ROOT=2 SERVE=1
draw algorithms/reduce_chain.weft N=4
draw algorithms/allreduce_hierarchical.weft N=4 G=2
draw algorithms/alltoall_staged.weft N=4 SERVE=1
# 8 and 16 ranks (issue 35: these must read in a PNG), and nodes framed
draw algorithms/allreduce_ring.weft N=8 SERVE=1 I=1
draw algorithms/allreduce_ring.weft N=16 SERVE=1 I=1
draw algorithms/allreduce_allpairs_twoshot.weft N=8 SERVE=1 C=1
draw algorithms/allgather_ring.weft N=16 SERVE=1 C=1
draw --gpus-per-node=4 algorithms/allreduce_hierarchical.weft N=8 G=4 SERVE=1
draw --gpus-per-node=8 algorithms/alltoall_hierarchical.weft N=16 G=8 SERVE=1
# the width follows the content: 16 ranks' ring has twice the columns of 8 ranks'; and rows are
# shared: the 8-rank ring's 128 tbs take 8 rows
w() { sed -nE 's/^<svg [^>]* width="([0-9]+)".*/\1/p' "$1"; }
[ "$(w "$tmp/allreduce_ring_16.svg")" -gt $(($(w "$tmp/allreduce_ring_8.svg") * 3 / 2)) ] ||
    fail "the 16-rank ring is not wider than the 8-rank one"
[ "$(grep -c 'class="row-label"' "$tmp/allreduce_ring_8.svg")" = 8 ] ||
    fail "the 8-rank ring takes $(grep -c 'class="row-label"' "$tmp/allreduce_ring_8.svg") rows, not 8"
grep -q 'class="step crit"' "$tmp/allreduce_hierarchical_8.svg" &&
    grep -q 'stroke="#7b3294"' "$tmp/allreduce_hierarchical_8.svg" ||
    fail "no message between nodes drawn in the nodes' colour"

# weft estimate --svg: past 48 tbs a rank's tbs fold into at most 6 rows, so 8 ranks of 126 tbs
# stay under 900 px (one row per tb drew 14,000), labelled per rank, with a legend
"$weft" estimate -D N=8 -D C=9 "$src/algorithms/allgather_direct.weft" --sizes 1M \
    --svg "$tmp/est.svg" >/dev/null 2>&1
h=$(sed -nE 's/^<svg [^>]* height="([0-9]+)".*/\1/p' "$tmp/est.svg")
[ "$h" -lt 900 ] || fail "estimate --svg of 1008 tbs is $h px tall"
[ "$(grep -c '<text class="rank-label"' "$tmp/est.svg")" -ge 8 ] && grep -q 'class="legend"' "$tmp/est.svg" &&
    grep -q 'us from the call' "$tmp/est.svg" || fail "estimate --svg: no rank labels, legend or axis"

# usage and input errors: exit 2 and 1, with the reason
x="$tmp/allreduce_ring.xml"
expect() { # CODE TEXT CMD...
    local code=$1 text=$2 rc=0
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" = "$code" ] || fail "$* exited $rc, not $code"
    grep -qF -- "$text" "$tmp/err" || { cat "$tmp/err"; fail "$*: no '$text'"; }
}
expect 2 "--format: unknown value 'png' (one of text, svg, dot)" "$weft" show --format=png "$x"
expect 2 "draws one file" "$weft" show --format=svg "$x" "$x"
expect 2 "--gpus-per-node frames nodes in a picture" "$weft" show --gpus-per-node 2 "$x"
expect 1 "the schedule deadlocks, so its steps have no place in time" \
    "$weft" show --format=svg "$src/tests/verify/bad/deadlock-cycle.xml"

# the pictures in the documentation, made by the commands docs/README say
"$weft" show --format=svg -D N=4 -D SERVE=1 "$src/algorithms/allreduce_ring.weft" >"$tmp/ring4.svg"
cmp "$tmp/ring4.svg" "$src/docs/pictures/allreduce_ring_4.svg" ||
    fail "docs/pictures/allreduce_ring_4.svg is stale: regenerate it as docs/pictures/README.md says"
echo "pictures: ok"
