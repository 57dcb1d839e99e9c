#!/usr/bin/env bash
# compare_corpus.sh — a weft example against the XML msccl-tools generated from the Python
# original: both verify, both compute the collective on the CPU executor, and they agree on what
# the schedule is (collective, ranks, chunking, call modes) and on how much data every rank sends
# to every other (`weft show --summary`: chunks sent per peer pair).
# Usage: compare_corpus.sh WEFT EXAMPLE.weft CORPUS_XML SHAPE   (exit 77 without ../shared)
set -euo pipefail
weft=$1
file=$2
corpus_rel=$3
shape=$4
shared=${WEFT_SHARED_DIR:-}
if [ -z "$shared" ] || [ ! -f "$shared/conformance/$corpus_rel" ]; then
    echo "skipped: no $corpus_rel under WEFT_SHARED_DIR"
    exit 77
fi
corpus=$shared/conformance/$corpus_rel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

defs=()
IFS=',' read -ra kvs <<<"$shape"
for kv in "${kvs[@]}"; do defs+=(-D "$kv"); done
"$weft" compile "$file" "${defs[@]}" -o "$tmp/weft.xml" || fail "compile"
for x in "$tmp/weft.xml" "$corpus"; do
    "$weft" verify "$x" >"$tmp/v.out" 2>&1 || { cat "$tmp/v.out"; fail "verify $x"; }
    for run in "--type float --op sum --count 1000" "--type int32 --op max --count 77 --sched-seed 5"; do
        # shellcheck disable=SC2086
        "$weft" run --cpu "$x" -q $run || fail "run --cpu $x $run"
    done
done

# The summary lines that describe behaviour (not the name, protocol, channels or fusion).
behaviour() {
    "$weft" show --summary "$1" |
        sed -n -e 's/^  \(modes\|ranks\|chunks\): */\1 /p' -e '/chunks sent/,$p'
}
behaviour "$tmp/weft.xml" >"$tmp/weft.sum"
behaviour "$corpus" >"$tmp/corpus.sum"
if ! diff -u "$tmp/corpus.sum" "$tmp/weft.sum"; then
    fail "the weft example moves different data than $corpus_rel (diff above: - corpus, + weft)"
fi
echo "ok: $(basename "$file") $shape behaves as $corpus_rel:"
cat "$tmp/weft.sum"
