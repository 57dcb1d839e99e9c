#!/usr/bin/env bash
# run_opts.sh — the option tables' parser on every command: --opt=value and --opt value, -ovalue,
# `--`, `-` for standard input and output, one-line usage errors with exit 2 and a did-you-mean,
# numbers checked for garbage and range, --help per command, --version, and a full standard
# output (/dev/full) reported with exit 1.
#   run_opts.sh WEFT   (run in the source tree's tests/cli)
set -u
weft=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE ARGS...: weft ARGS, stdout in $tmp/out, stderr in $tmp/err, exit code CODE.
expect() {
  local want=$1
  shift
  "$weft" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "weft $* -> exit $rc, expected $want: $(head -c 300 "$tmp/err")"
}
has() { grep -qF -- "$1" "$tmp/err" || fail "$2: stderr lacks \"$1\": $(head -c 300 "$tmp/err")"; }
one_line() { [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$1: not one line: $(cat "$tmp/err")"; }

ring=$root/algorithms/allreduce_ring.weft
cmds=$("$weft" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 && $1 != "commands:" {print $1}')
[ "$(echo "$cmds" | wc -w)" -ge 11 ] || fail "weft --help lists $(echo "$cmds" | wc -w) commands"

# Every command: --help on stdout (exit 0), an unknown option in one line (exit 2).
for c in $cmds; do
  expect 0 "$c" --help
  grep -q "^usage: weft $c" "$tmp/out" || fail "$c --help: no usage line"
  grep -q "^  -h, --help" "$tmp/out" || [ "$c" = trace ] || fail "$c --help: no -h, --help"
  [ -s "$tmp/err" ] && fail "$c --help: wrote to stderr"
  expect 2 "$c" --frobnicate
  has "weft $c: unknown option '--frobnicate'" "$c --frobnicate"
  one_line "$c --frobnicate"
done
expect 0 help compile
grep -q '^usage: weft compile' "$tmp/out" || fail "weft help compile"

# Commands and options with a typo: did you mean.
expect 2 compil "$ring"
has "weft: unknown command 'compil'; did you mean 'compile'?" "compil"
one_line "compil"
expect 2 --verison
has "did you mean '--version'?" "--verison"
expect 2 select -d "$root/algorithms" allreduce --rank 4
has "unknown option '--rank'; did you mean '--ranks'?" "select --rank"
expect 2 select -d "$root/algorithms" allreduce -ranks 4
has "unknown option '-ranks'; did you mean '--ranks'?" "select -ranks"
expect 2 select allreduc
has "did you mean 'allreduce'?" "select allreduc"
expect 2 compile --emit=opz "$ring"
has "weft compile: --emit: unknown value 'opz'; did you mean 'ops'?" "--emit=opz"
expect 2 run --cpu x.xml --type flaot
has "did you mean 'float'?" "run --type flaot"
expect 2 trace sumarize x.json
has "did you mean 'summarize'?" "trace sumarize"
expect 2 select --sweep=3 allreduce
has "--sweep takes no value" "--sweep=3"
expect 2 select allreduce --ranks
has "--ranks needs a value" "--ranks at the end"

# Numbers: garbage and range, never atoi.
for bad in "--ranks 4294967298" "--ranks 0" "--ranks -1" "--ranks 2x" "--ranks ''" "--root abc" \
           "--root 2" "--root -1" "--gpus-per-node 0" "--gpus-per-node 3.5" \
           "--bytes 1E" "--bytes -8" "--bytes 99999999999999999999" "--bytes 17179869184G"; do
  eval "expect 2 select -d \"$root/algorithms\" allreduce $bad"
  one_line "select $bad"
done
expect 2 select allreduce --ranks 4294967298
has "--ranks: 4294967298 is out of range (1 to 8192)" "--ranks 4294967298"
expect 2 select allreduce --root abc
has "--root: 'abc' is not a whole number" "--root abc"
expect 2 select allreduce --ranks 4 --root 4
has "--root 4 is not a rank of 4" "--root 4"
expect 2 select allreduce --bytes 17179869184G
has "is not a size" "--bytes wrapping"
expect 2 verify --fifo 2147483647 x.xml
has "--fifo: 2147483647 is out of range (0 to 1000000)" "--fifo 2147483647"
expect 2 run --cpu x.xml --count 1x
has "--count: '1x' is not a whole number" "run --count 1x"
expect 2 library --count 0
expect 2 plan x.xml --gpus-per-node 99999
has "--gpus-per-node: 99999 is out of range" "plan --gpus-per-node"
expect 2 trace check --tolerance nan x.json
has "is not a number" "--tolerance nan"

# --opt=value and --opt value, -D N and -DN, --define=: the same schedule.
expect 1 compile "$ring" -D N=8 -D C=4
expect 0 compile "$ring" -D N=8 -D C=4 -D SERVE=1
cp "$tmp/out" "$tmp/a.xml"
expect 0 compile "$ring" --define=N=8 --define C=4 -DSERVE=1
cmp -s "$tmp/out" "$tmp/a.xml" || fail "--define=N=8 differs from -D N=8"
expect 0 compile --emit ops "$ring" -D N=3 -D SERVE=1
cp "$tmp/out" "$tmp/ops"
expect 0 compile --emit=ops "$ring" -D N=3 -D SERVE=1
cmp -s "$tmp/out" "$tmp/ops" || fail "--emit=ops differs from --emit ops"
# -o -: standard output; `-` as the input: standard input; `--` ends the options.
expect 0 compile "$ring" -D N=8 -D C=4 -D SERVE=1 -o -
cmp -s "$tmp/out" "$tmp/a.xml" || fail "compile -o - did not write standard output"
[ -e ./- ] && fail "compile -o - wrote a file named -"
"$weft" compile - -D N=8 -D C=4 -D SERVE=1 <"$ring" >"$tmp/out" 2>"$tmp/err" || fail "compile -: exit $?"
sed 's/name="[^"]*"//' "$tmp/out" >"$tmp/b" && sed 's/name="[^"]*"//' "$tmp/a.xml" >"$tmp/c"
cmp -s "$tmp/b" "$tmp/c" || fail "compile - (standard input) differs"
cp "$tmp/a.xml" "$tmp/-v.xml"
(cd "$tmp" && "$weft" verify -q -- -v.xml) || fail "verify -- -v.xml: exit $?"
(cd "$tmp" && "$weft" fmt -- -v.xml -o - >/dev/null 2>&1) && fail "fmt -- -v.xml -o -: -o after -- taken as an option"
"$weft" fmt - <"$tmp/a.xml" >"$tmp/out" || fail "fmt -: exit $?"
"$weft" fmt "$tmp/a.xml" >"$tmp/b" && cmp -s "$tmp/out" "$tmp/b" || fail "fmt - differs from fmt FILE"
"$weft" show -s - <"$tmp/a.xml" | grep -q '^  ranks: *8$' || fail "show -s -: no summary"
# bundled short flags
expect 0 verify -qv "$tmp/a.xml"
[ -s "$tmp/out" ] && fail "verify -qv printed for a verified file"

# --version: the commit, and NCCL and CUDA (or why not)
expect 0 --version
grep -q '^weft [0-9.]* (commit [0-9a-f]*' "$tmp/out" || grep -q '(commit unknown)' "$tmp/out" ||
  fail "--version: no commit: $(cat "$tmp/out")"
grep -q 'NCCL' "$tmp/out" || fail "--version: says nothing about NCCL"
# with the runtime's headers: the NCCL versions libweft_nccl.so serves on (weft_runtime.h)
if grep -q '^built against NCCL' "$tmp/out"; then
  grep -qE '^runs on NCCL [0-9]+\.[0-9]+\.[0-9]+ to [0-9]+\.[0-9]+\.x ' "$tmp/out" ||
    fail "--version: no supported NCCL range: $(cat "$tmp/out")"
fi

# A full standard output: exit 1 and a message, never 0 with the output lost.
if [ -w /dev/full ]; then
  for args in "compile $ring -D N=8 -D SERVE=1" "fmt $tmp/a.xml" "show $tmp/a.xml" \
              "verify $tmp/a.xml" "run --cpu $tmp/a.xml" "env" "--help" "compile --help" \
              "select -d $root/algorithms allreduce --sweep"; do
    "$weft" $args >/dev/full 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 1 ] || fail "weft $args >/dev/full: exit $rc"
    grep -q 'cannot write' "$tmp/err" || fail "weft $args >/dev/full: $(cat "$tmp/err")"
  done
else
  echo "SKIP: /dev/full is absent; full standard output not tested"
fi

echo "$fails failures"
[ "$fails" -eq 0 ]
