#!/usr/bin/env bash
# run_trace_draw.sh WEFT TEST_DRAW TRACE_SIM SRC — `weft trace draw` on synthetic traces: the SVG
# of the longest call and of a chosen call checked by test_draw against the trace files and the
# critical path `weft trace summarize` reports; a call not in the trace refused; the picture in
# the documentation made again and compared.
set -euo pipefail
weft=$1 test_draw=$2 sim=$3 src=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft_trace_draw.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }

# NAME XML CALL(-1: the longest) SIM-OPTIONS...
check() {
    local name=$1 xml=$2 call=$3
    shift 3
    "$sim" "$src/tests/trace/data/$xml" "$name" "$@" >/dev/null
    local files opt=()
    files=$(ls "$name".rank*.json)
    [ "$call" -ge 0 ] && opt=(--call "$call")
    # shellcheck disable=SC2086 # one word per file
    "$weft" trace summarize "${opt[@]}" $files >"$name.summary"
    local line seq path
    line=$(grep '^critical path of call ' "$name.summary")
    seq=$(sed -E 's/^critical path of call ([0-9]+) .*/\1/' <<<"$line")
    path=$(sed -E 's/.*: ([0-9]+) steps, .*/\1/' <<<"$line")
    # shellcheck disable=SC2086
    "$weft" trace draw "${opt[@]}" $files >"$name.svg"
    # shellcheck disable=SC2086
    "$test_draw" --trace "$name.svg" "$seq" "$path" $files
}
check ring2 ring2.xml -1
check ring2_calls ring2.xml 2 --calls 3 --niter 4 --late 0:9000
check allpairs2 allpairs2.xml -1
check allpairs3 allpairs3.xml -1 --late 2:5000

# the picture in docs/trace.md (docs/pictures/README.md says how it is made)
cmp ring2.svg "$src/docs/pictures/trace_ring2.svg" ||
    fail "docs/pictures/trace_ring2.svg is stale: regenerate it as docs/pictures/README.md says"

rc=0
"$weft" trace draw --call 9 ring2.rank*.json >/dev/null 2>err || rc=$?
[ "$rc" = 1 ] && grep -q "call 9 is not in the trace" err || fail "draw --call 9: exit $rc"
echo "trace pictures: ok"
