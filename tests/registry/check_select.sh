#!/bin/sh
# check_select.sh — `weft select` against its golden output (run in tests/registry; WEFT_BIN is the
# weft binary). Regenerate: WEFT_BIN=... sh check_select.sh --print > select.golden
run() {
  echo "\$ weft select $*"
  "$WEFT_BIN" select "$@" 2>&1
  echo "exit=$?"
}
# the library: its load-time diagnostics (files that rule out their default shape) are left out
lib() {
  echo "\$ weft select -d ../../algorithms $* 2>/dev/null"
  "$WEFT_BIN" select -d ../../algorithms "$@" 2>/dev/null
  echo "exit=$?"
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
{
  run -d algos allreduce --bytes 16 --both
  run -d algos allreduce --bytes 4M --both
  run -d algos allreduce --bytes 64K --op avg
  run -d algos allreduce --bytes 64K --type bfloat16 --op max --inplace
  run -d algos reducescatter --bytes 12 --type half
  run -d algos broadcast --root 1 --bytes 1K
  run -d algos broadcast --bytes 1K --inplace
  run -d algos alltoall --ranks 4 --bytes 1M
  run -d algos:/nonexistent/algos allgather --bytes 2M
  run -d algos gather --bytes 1K
  run -d algos send
  run -d algos allreduce --type fp8
  run -d algos allreduce --sweep --both
  # several nodes: the library's two-level files, cut into phases (docs/runtime.md)
  lib allreduce --ranks 16 --gpus-per-node 8 --bytes 8 --both
  lib allreduce --ranks 16 --gpus-per-node 8 --bytes 256M
  lib allreduce --ranks 32 --gpus-per-node 8 --bytes 1G
  lib allreduce --ranks 8 --gpus-per-node 4 --bytes 1M
  lib alltoall --ranks 16 --gpus-per-node 8 --bytes 16M --both
  lib allgather --ranks 16 --gpus-per-node 8 --bytes 1M
  lib allreduce --ranks 16 --bytes 1M
  lib allreduce --ranks 8 --gpus-per-node 8 --bytes 16
  lib allreduce --ranks 12 --gpus-per-node 8
  # several algorithms fit one call (issue 28): a one-node all-pairs XML for 4 ranks comes first
  # by name, the two-level file sends fewer bytes across the network and serves where its own
  # range (128 KB .. 32 MB) fits; -v says why
  run -v -d nodes:../../algorithms/allreduce_hierarchical.weft allreduce --ranks 4 --gpus-per-node 2 --bytes 1M --both
  run -v -d nodes:../../algorithms/allreduce_hierarchical.weft allreduce --ranks 4 --gpus-per-node 2 --bytes 8
  run -v -d nodes:../../algorithms/allreduce_hierarchical.weft allreduce --ranks 4 --gpus-per-node 2 --bytes 64M
  run -v -d nodes:../../algorithms/allreduce_hierarchical.weft allreduce --ranks 4 --bytes 1M
  # why each file does or does not serve (-v), and the count of files ruled out without it
  lib allreduce --ranks 4 --bytes 1M
  lib allreduce --ranks 4 --bytes 1M -v
  lib allreduce --ranks 2 --bytes 1M --both -v
  lib allreduce --ranks 16 --gpus-per-node 8 --bytes 8 -v
  lib broadcast --ranks 4 --root 2 --bytes 64K -v
  run -d algos broadcast --root 1 --bytes 1K -v
  run -d algos allreduce --bytes 4M --inplace -v
  # a table keyed by node shape: its 2 x 2 section decides 2 nodes of 2 (NCCL at 16 MB, the
  # two-level file at 64 KB, below its own range), its one-node section one node of 4, and a
  # shape it has no section for is left to the files
  T="--table tables/nodes-2x2.txt"
  run -d nodes:../../algorithms/allreduce_hierarchical.weft $T allreduce --ranks 4 --gpus-per-node 2 --bytes 64K -v
  run -d nodes:../../algorithms/allreduce_hierarchical.weft $T allreduce --ranks 4 --gpus-per-node 2 --bytes 16M
  run -d nodes:../../algorithms/allreduce_hierarchical.weft $T allreduce --ranks 4 --bytes 16M
  run -d nodes:../../algorithms/allreduce_hierarchical.weft $T allreduce --ranks 2 --gpus-per-node 1 --bytes 1M
  # the library's policy across nodes, per node shape (issue 28): 2 x 2 measured (allreduce
  # 128 KB .. 32 MB), 2 x 1 and 2 x 4 not: NCCL serves them
  lib -v allreduce --ranks 4 --gpus-per-node 2 --bytes 64K
  lib -v allreduce --ranks 4 --gpus-per-node 2 --bytes 128K --both
  lib -v allreduce --ranks 4 --gpus-per-node 2 --bytes 32M
  lib -v allreduce --ranks 4 --gpus-per-node 2 --bytes 64M
  lib -v alltoall --ranks 4 --gpus-per-node 2 --bytes 1M
  lib -v allreduce --ranks 2 --gpus-per-node 1 --bytes 1M
  lib -v alltoall --ranks 2 --gpus-per-node 1 --bytes 1M
  lib -v allreduce --ranks 8 --gpus-per-node 4 --bytes 1M
  lib -v alltoall --ranks 8 --gpus-per-node 4 --bytes 1M
} > "$out"
if [ "${1:-}" = "--print" ]; then cat "$out"; exit 0; fi
diff -u select.golden "$out"
