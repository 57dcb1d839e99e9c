#!/usr/bin/env bash
# run_topo.sh — `weft verify --topo` and `weft estimate --topo` on NCCL's topology dumps of the
# lent machines (data/, as NCCL_TOPO_DUMP_FILE wrote them) and on variants of them (data/README.md
# says what each is), pinned in golden/topo.txt; malformed dumps (bad/) refused with file:line; a
# slower link makes a larger estimate.
#   run_topo.sh WEFT ALGORITHMS_DIR      (WEFT_UPDATE_GOLDEN=1 rewrites the golden file)
set -u
weft=$1
alg=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# names in the output relative to a folder of our own: data/, bad/, the schedules
ln -s "$here/data" "$tmp/data"
ln -s "$here/bad" "$tmp/bad"
cd "$tmp" || exit 1
fail=0
"$weft" compile "$alg/allreduce_ring.weft" -D N=4 -D SERVE=1 -o ring4.xml &&
  "$weft" compile "$alg/allreduce_ring.weft" -D N=8 -D SERVE=1 -o ring8.xml &&
  "$weft" compile "$alg/allreduce_ring.weft" -D N=6 -D SERVE=1 -o ring6.xml &&
  "$weft" compile "$alg/allreduce_direct_simple.weft" -o direct2.xml &&
  "$weft" compile "$alg/allreduce_allpairs_oneshot.weft" -D N=4 -D SERVE=1 -o allpairs4.xml ||
  { echo "cannot compile the schedules"; exit 1; }
run() {
  echo "\$ weft $*"
  "$weft" "$@" 2>&1
  echo "exit=$?"
}
{
  # the machines' dumps: every pair of GPUs on NVLink (through NVSwitch), so no warning
  run verify --topo data/h200x4.xml ring4.xml allpairs4.xml
  run verify -v --topo data/h200x2.xml direct2.xml
  run verify -v --topo data/h200x4-gpus01.xml direct2.xml
  run verify --topo data/h200x4.xml direct2.xml
  # a GPU without NVLink: its pairs warn, at the sending tb's line; the file still verifies
  run verify --topo data/h200x4_gpu3_no_nvlink.xml ring4.xml allpairs4.xml
  # a hand-written bare-metal layout: direct NVLink, a PCIe switch, two CPUs, a NIC on the switch
  run verify -v --topo data/mixed_sample.xml allpairs4.xml
  # more ranks than GPUs: other nodes over the network, or refused
  run verify -v --topo data/h200x4.xml ring8.xml
  run verify --topo data/h200x4.xml ring6.xml
  run verify --topo data/h200x4_no_nic.xml ring8.xml
  # malformed dumps
  for f in bad/*.xml; do run verify --topo "$f" ring4.xml; done
  run verify --topo data/missing.xml ring4.xml
  # the estimate: each pair at its link; a GPU without NVLink costs; the network more
  run estimate direct2.xml --sizes 8,1M,128M
  run estimate direct2.xml --sizes 8,1M,128M --topo data/h200x2.xml
  run estimate direct2.xml --sizes 8,1M,128M --topo data/h200x4-gpus01.xml
  run estimate ring4.xml --sizes 8,1M,128M --topo data/h200x4.xml
  run estimate ring4.xml --sizes 8,1M,128M --topo data/h200x4_gpu3_no_nvlink.xml
  run estimate ring8.xml --sizes 8,1M --topo data/h200x4.xml
  run estimate ring8.xml --sizes 8,1M --topo data/mixed_sample.xml
  run estimate ring8.xml --sizes 8 --topo data/h200x4_no_nic.xml
  run estimate ring4.xml --topo data/h200x4.xml --link-gbps 100
  run estimate ring4.xml --topo data/h200x4.xml --set gpu_gbps=100
  run estimate ring4.xml --topo bad/truncated.xml
} >"$tmp/out"
if [ "${WEFT_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$tmp/out" "$here/golden/topo.txt"
else
  diff -u "$here/golden/topo.txt" "$tmp/out" || fail=1
fi
# a slower link, a longer call: the 128 MB estimate of the ring without GPU 3's NVLink
est() { "$weft" estimate ring4.xml --sizes 128M "$@" | awk '$1 == "128" {print $3}'; }
fast=$(est --topo data/h200x4.xml)
slow=$(est --topo data/h200x4_gpu3_no_nvlink.xml)
awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(f > 0 && s > 2 * f) }' ||
  { echo "a PCIe link should at least double the 128 MB estimate: $fast us on NVLink, $slow us"; fail=1; }
exit $fail
