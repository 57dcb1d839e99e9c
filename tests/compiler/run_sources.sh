#!/usr/bin/env bash
# run_sources.sh — a .weft source is accepted wherever a schedule is: `weft verify`, `show`, `run
# --cpu`, `fmt` and `plan` compile it with -D (the one loader, weft_cc_load_file) and give the same
# schedule as `weft compile`; an error in the source comes out as file:line:col with the line and
# a caret; -D on an XML file is refused.
#   run_sources.sh WEFT ALGORITHMS_DIR
set -u
weft=$1
alg=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {
  local want=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "$* -> exit $rc, expected $want: $(head -c 400 "$tmp/err")"
}
cd "$alg" || exit 1

# the issue's command: a library file for 4 ranks with its gate open
expect 0 "$weft" verify allreduce_ring.weft -D N=4 -D SERVE=1
grep -q '^allreduce_ring.weft: verified allreduce (in-place, out-of-place) on 4 ranks$' "$tmp/out" ||
  fail "verify: $(cat "$tmp/out")"
# the same schedule as weft compile gives, through fmt (both forms of -D)
expect 0 "$weft" compile allreduce_ring.weft -D N=4 -D SERVE=1 -D PROTO=LL -o "$tmp/c.xml"
expect 0 "$weft" fmt allreduce_ring.weft -DN=4 -DSERVE=1 -D PROTO=LL -o "$tmp/f.xml"
cmp -s "$tmp/c.xml" "$tmp/f.xml" || fail "fmt of the source differs from weft compile's XML"
grep -q 'proto="LL"' "$tmp/f.xml" || fail "-D PROTO=LL did not reach the XML"
expect 0 "$weft" show --summary allreduce_ring.weft -D N=4 -D SERVE=1
grep -q '^  ranks: *4' "$tmp/out" || fail "show: $(head -5 "$tmp/out")"
expect 0 "$weft" run --cpu allreduce_direct_ll.weft -D C=1 --count 1001
[ "$(grep -c ': ok (' "$tmp/out")" = 2 ] || fail "run: $(cat "$tmp/out")"
expect 0 "$weft" plan allreduce_hierarchical.weft --gpus-per-node 2 --ranks 4
# the gate's require, at file:line:col with the source line and a caret
expect 1 "$weft" verify allreduce_ring.weft -D N=4
line=$(grep -n 'require N == 2 || SERVE == 1' allreduce_ring.weft | cut -d: -f1)
grep -q "^allreduce_ring.weft:$line:1: error: requirement failed: on 3 or more GPUs" "$tmp/err" ||
  fail "verify -D N=4: $(cat "$tmp/err")"
grep -q '^  \^~~' "$tmp/err" || fail "verify -D N=4: no caret line"
# an error in the source, for each command
printf 'algorithm a {\n    collective allreduce;\n    ranks 2;\n    protocol LX;\n}\n' >"$tmp/bad.weft"
for cmd in verify show "run --cpu" fmt; do
  # shellcheck disable=SC2086
  expect 1 "$weft" $cmd "$tmp/bad.weft"
  grep -q "bad.weft:4:14: error: unknown protocol 'LX' (expected Simple, LL or LL128)" "$tmp/err" ||
    fail "$cmd bad.weft: $(cat "$tmp/err")"
done
expect 1 "$weft" verify allreduce_ring.weft -D N=4 -D SERVE=1 -D PROTO=LX
grep -q "unknown protocol 'LX', the value of parameter PROTO" "$tmp/err" || fail "PROTO=LX: $(cat "$tmp/err")"
# -D belongs to sources; a missing value is a usage error
expect 0 "$weft" compile allreduce_direct_ll.weft -o "$tmp/ll.xml"
expect 1 "$weft" verify "$tmp/ll.xml" -D N=2
grep -q 'an XML schedule has no parameters' "$tmp/err" || fail "-D on XML: $(cat "$tmp/err")"
for cmd in verify show "run --cpu" fmt; do
  # shellcheck disable=SC2086
  expect 2 "$weft" $cmd allreduce_direct_ll.weft -D
done
[ "$fails" = 0 ] && echo "ok"
exit $((fails > 0))
