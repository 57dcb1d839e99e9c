#!/usr/bin/env bash
# depths.sh — the critical path (`weft verify`'s "critical path N steps") of every shape on the
# `// test:` lines of the library, the examples and their hint-free variants, one row per shape:
# `FILE SHAPE DEPTH` (FILE relative to the source root). depths.golden is this script's output;
# run_algo.sh checks each compiled shape against its row and check_depths.sh that the table has a
# row for every shape. Regenerate after an intended scheduling change:
#   tests/algorithms/depths.sh build/tools/weft . > tests/algorithms/depths.golden
# Usage: depths.sh WEFT ROOT [--rows]   (--rows: only the FILE SHAPE pairs, nothing compiled)
set -uo pipefail
weft=$1
root=$2
rows_only=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for f in "$root"/algorithms/*.weft "$root"/examples/*.weft "$root"/tests/algorithms/hintfree/*.weft; do
    rel=${f#"$root"/}
    for shape in $(grep '^// test:' "$f" | sed 's#^// test:##'); do
        if [ -n "$rows_only" ]; then
            echo "$rel $shape"
            continue
        fi
        defs=()
        IFS=',' read -ra kvs <<<"$shape"
        for kv in "${kvs[@]}"; do defs+=(-D "$kv"); done
        if ! "$weft" compile "$f" "${defs[@]}" -o "$tmp/a.xml" >"$tmp/err" 2>&1 ||
            ! "$weft" verify "$tmp/a.xml" >"$tmp/v" 2>&1; then
            echo "$rel $shape: does not compile and verify" >&2
            cat "$tmp/err" "$tmp/v" >&2
            bad=1
            continue
        fi
        echo "$rel $shape $(sed -n 's/.*critical path \([0-9]*\) steps.*/\1/p' "$tmp/v" | head -n1)"
    done
done
exit $bad
