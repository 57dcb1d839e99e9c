#!/usr/bin/env bash
# run_defaults.sh — the library as the runtime loads it (a WEFT_ALGO_DIR pointing at algorithms/):
# every file compiles and verifies with its defaults alone, or is refused by its own `require`
# lines (files that NCCL out-serves by default on more than 2 GPUs or across nodes, until -D
# SERVE=1), and for every rank count N = 1..17 (1..9 under the sanitizers) it either compiles to
# a verified schedule or is refused only by its `require` lines (which the registry reports as
# "no instance for N=..." at INFO, instead of a broken file).
set -uo pipefail
weft=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
maxn=17
[ -n "${WEFT_TEST_SAN:-}" ] && maxn=9 # under the sanitizers (tools/test.sh)
for f in "$root"/algorithms/*.weft; do
    name=$(basename "$f" .weft)
    rm -f "$tmp/d.xml"
    if ! "$weft" compile "$f" -o "$tmp/d.xml" 2>"$tmp/err" && grep -q '^require .*SERVE == 1' "$f"; then
        grep -Eq "error: requirement failed: (on 3 or more GPUs|across nodes) NCCL serves" "$tmp/err" ||
            { echo "$name: refused with its defaults other than by its SERVE require:"; cat "$tmp/err"; bad=1; }
    elif ! [ -s "$tmp/d.xml" ] || ! "$weft" verify "$tmp/d.xml" >"$tmp/v" 2>&1; then
        echo "$name: does not compile and verify with its defaults:"
        cat "$tmp/err" "$tmp/v"
        bad=1
        continue
    fi
    ok=""
    for n in $(seq 1 "$maxn"); do
        if "$weft" compile "$f" -D N=$n -o "$tmp/n.xml" 2>"$tmp/err"; then
            "$weft" verify "$tmp/n.xml" >"$tmp/v" 2>&1 || { echo "$name N=$n: does not verify"; cat "$tmp/v"; bad=1; }
            ok="$ok $n"
            continue
        fi
        # Every error must point at a require line of the file.
        while IFS= read -r line; do
            ln=$(sed -n 's/^[^:]*:\([0-9]*\):[0-9]*: error: .*/\1/p' <<<"$line")
            if [ -z "$ln" ] || ! sed -n "${ln}p" "$f" | grep -q '^require '; then
                echo "$name N=$n: refused other than by a require line: $line"
                bad=1
            fi
        done < <(grep ': error: ' "$tmp/err")
        grep -q ': error: ' "$tmp/err" || { echo "$name N=$n: failed without an error"; cat "$tmp/err"; bad=1; }
    done
    echo "$name: defaults ok; compiles for N =$ok"
done
exit $bad
