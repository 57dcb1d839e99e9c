#!/bin/sh
# check_launch.sh — the library's launch modes as `weft select` answers them: on registered
# buffers (eager or in a CUDA graph) allreduce, allgather and reducescatter go to NCCL's symmetric
# kernels at every size on 2 and 4 ranks, while alltoall and broadcast (no symmetric kernel in
# NCCL) and unregistered calls in graphs keep weft's files; -v names the launch mode that ruled
# a file out. Run in tests/registry; WEFT_BIN is the weft binary.
fail=0
sweep() { "$WEFT_BIN" select -d ../../algorithms "$@" --sweep 2>&1; }
for n in 2 4; do
    for c in allreduce allgather reducescatter; do
        for m in "--registered" "--registered --graph"; do
            w=$(sweep "$c" --ranks $n $m | grep -c -- "-> weft")
            [ "$w" -eq 0 ] || { echo "$c --ranks $n $m: weft serves $w sizes"; fail=1; }
        done
    done
done
# where the library serves unregistered calls in graphs, and registered ones without a symmetric
# kernel in NCCL (on 4 ranks broadcast and reducescatter are NCCL's at every size anyway)
for x in "allreduce 2 --graph" "allgather 2 --graph" "reducescatter 2 --graph" \
         "allreduce 4 --graph" "allgather 4 --graph" "alltoall 2 --registered --graph" \
         "broadcast 2 --registered --graph" "alltoall 4 --registered --graph"; do
    set -- $x
    c=$1 n=$2
    shift 2
    w=$(sweep "$c" --ranks $n "$@" | grep -c -- "-> weft")
    [ "$w" -gt 0 ] || { echo "$c --ranks $n $*: weft serves no size"; fail=1; }
done
v=$("$WEFT_BIN" select -d ../../algorithms allreduce --ranks 2 --bytes 1K --registered -v 2>&1)
echo "$v" | grep -q "no algorithm for this launch mode" &&
    echo "$v" | grep -q "allreduce_direct_ll.weft: serves launch modes eager graph; this call is registered" ||
    { echo "select -v does not name the launch mode:"; echo "$v"; fail=1; }
[ $fail -eq 0 ] && echo "launch modes: registered allreduce, allgather, reducescatter to NCCL; the rest as the files say"
exit $fail
