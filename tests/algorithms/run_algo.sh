#!/usr/bin/env bash
# run_algo.sh — one cell of the algorithm matrix: compiles a .weft file for one shape, verifies
# the XML, and runs it on the CPU executor for several types, ops, counts and interleavings.
# Usage: run_algo.sh WEFT FILE.weft SHAPE   (SHAPE: NAME=VALUE[,NAME=VALUE...], e.g. N=8,C=2)
set -euo pipefail
weft=$1
file=$2
shape=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

defs=()
IFS=',' read -ra kvs <<<"$shape"
for kv in "${kvs[@]}"; do defs+=(-D "$kv"); done
xml=$tmp/algo.xml

step() { # step NAME CMD...: runs CMD, shows its output and fails the test when it fails
    local name=$1
    shift
    if ! "$@" >"$tmp/out" 2>&1; then
        cat "$tmp/out"
        echo "FAIL: $name: $*"
        exit 1
    fi
}

step compile "$weft" compile "$file" "${defs[@]}" -o "$xml"
# The compiler may warn about the MSCCL runtimes' limits; show warnings, they are not failures.
[ -s "$tmp/out" ] && cat "$tmp/out"
step verify "$weft" verify "$xml"

# nchunksperloop K: counts are chosen relative to the chunks per segment k (a divisor of K), so
# K*3+1 is never a multiple of k when k > 1, and a count of 1 leaves most chunks empty.
K=$(sed -n 's/.*nchunksperloop="\([0-9]*\)".*/\1/p' "$xml" | head -n1)
[ -n "$K" ] || { echo "FAIL: no nchunksperloop in the compiled XML"; exit 1; }
runs=(
    "--type float --op sum --count $((K * 4))"
    "--type int32 --op max --count $((K * 3 + 1)) --sched-seed 7"
    "--type bfloat16 --op prod --count 1 --fifo 2"
    "--type double --op min --count $((K * 2 + 3)) --sched-seed 3 --fifo 2"
    "--type uint8 --op sum --count 5"
)
for r in "${runs[@]}"; do
    # shellcheck disable=SC2086 # the options are words on purpose
    step "run $r" "$weft" run --cpu "$xml" -q $r
done
echo "ok: $(basename "$file") $shape (K=$K)"
