#!/bin/sh
# check_library_select.sh — which algorithm of the library (../../algorithms, instantiated for the
# communicator size as libweft_nccl.so does) `weft select` picks for every nccl-tests size of
# allreduce, allgather, reducescatter, alltoall and broadcast (root 0) on 2, 4 and 8 ranks, in both
# buffer modes and all four launch modes (eager or captured in a CUDA graph, on plain or registered
# buffers), condensed into size ranges, and how many files each communicator size rules
# out, against library_select.golden (run in tests/registry; WEFT_BIN is
# the weft binary). Regenerate: WEFT_BIN=... sh check_library_select.sh --print > library_select.golden
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for n in 2 4 8; do
    for c in allreduce allgather reducescatter alltoall broadcast; do
        for g in "" --graph --registered "--graph --registered"; do
            # shellcheck disable=SC2086
            "$WEFT_BIN" select -d ../../algorithms "$c" --ranks "$n" --sweep --both $g 2>/dev/null ||
                echo "weft select $c --ranks $n $g: exit $?"
        done
    done
done | awk '
# one line per size and mode: "COLL, N ranks, B B (...), ..., MODE -> weft '\''NAME'\'' (FILE)" or
# "... -> NCCL: why"; printed as ranges of sizes with the same choice
function hb(b) {
    if (b >= 1073741824 && b % 1073741824 == 0) return b / 1073741824 " GB"
    if (b >= 1048576 && b % 1048576 == 0) return b / 1048576 " MB"
    if (b >= 1024 && b % 1024 == 0) return b / 1024 " KB"
    return b " B"
}
function flush(k) {
    if (first[k] != "") out[k] = out[k] sprintf("  %6s - %-6s  %s\n", hb(first[k]), hb(last[k]), cur[k])
}
/ -> / {
    split($0, a, " -> ")
    n = split(a[1], f, ", ")
    r = f[2]
    sub(/ ranks/, "", r)
    match(f[3], /^[0-9]+/)
    bytes = substr(f[3], 1, RLENGTH) + 0
    what = a[2]
    if (what ~ /^weft/) {
        sub(/^weft ./, "", what)
        sub(/. \(.*$/, "", what)
    } else {
        sub(/:.*/, "", what)
    }
    mode = f[n]
    if (mode == "unregistered") mode = f[n - 2] ", graph"
    else if (mode == "registered") mode = f[n - 2] ", " f[n - 1] ", registered"
    k = f[1] " on " r " ranks, " mode
    if (!(k in cur)) keys[++nk] = k
    else if (cur[k] == what) { last[k] = bytes; next }
    flush(k)
    cur[k] = what
    first[k] = last[k] = bytes
    next
}
# "N COLL files are ruled out on R ranks (...)": kept, at the end, one per collective and size
/ ruled out on / { sub(/ \(a require.*$/, ""); if (!($0 in seen)) { seen[$0] = 1; ruled[++nr] = $0 }; next }
{ print "unexpected: " $0 }
END {
    for (i = 1; i <= nk; i++) { flush(keys[i]); printf "%s:\n%s", keys[i], out[keys[i]] }
    for (i = 1; i <= nr; i++) print ruled[i]
}
' >"$out"
if [ "${1:-}" = "--print" ]; then cat "$out"; exit 0; fi
diff -u library_select.golden "$out"
