#!/usr/bin/env bash
# make_carry.sh — assembles what gpu_trace_check.sh needs into one folder (to carry to the GPU
# machine): gpu_trace and weft from a build, the algorithms it traces compiled for 2 ranks, the
# checking scripts; optionally a gpu_trace built without the instrumentation (the cost baseline).
#   make_carry.sh BUILD DIR [BASELINE_GPU_TRACE]
set -eu
build=$1 dir=$2 base=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$dir"
cp "$build/tests/trace/gpu_trace" "$build/tests/trace/timer_probe" "$build/tools/weft" "$dir/"
cp "$here/chrome_check.py" "$here/gpu_compare.py" "$here/gpu_trace_check.sh" "$dir/"
[ -z "$base" ] || cp "$base" "$dir/gpu_trace_base"
"$dir/weft" compile "$root/algorithms/allreduce_ring.weft" -D N=2 -D ANYN=1 -o "$dir/ring2.xml"
"$dir/weft" compile "$root/algorithms/allreduce_allpairs_oneshot.weft" -D N=2 -D ANYN=1 -o "$dir/allpairs2.xml"
"$dir/weft" compile "$root/algorithms/allreduce_allpairs_twoshot.weft" -D N=2 -D ANYN=1 -o "$dir/twoshot2.xml"
echo "make_carry: $(ls "$dir" | wc -l) files in $dir ($(du -sh "$dir" | cut -f1))"
