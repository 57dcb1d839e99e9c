#!/usr/bin/env bash
# run_golden.sh — pinned `weft plan` output: runs weft plan with golden/NAME.args (@ALGOS@: the
# library, @SHARED@: WEFT_SHARED_DIR) in golden/ and compares stdout, stderr and the exit code
# with golden/NAME.expected. Skips (77) a corpus case when ../shared is absent.
#   run_golden.sh WEFT NAME [--update]
set -u
weft=$1 name=$2 update=${3:-}
dir=$(cd "$(dirname "$0")/golden" && pwd)
cd "$dir" || exit 1
shared=${WEFT_SHARED_DIR:-../../../../shared}
read -r line <"$name.args"
if [[ $line == *@SHARED@* ]] && [ ! -d "$shared/conformance" ]; then
  echo "skipped: $shared/conformance not found"
  exit 77
fi
line=${line//@ALGOS@/../../../algorithms}
line=${line//@SHARED@/$shared}
read -r -a args <<<"$line"
got=$(mktemp)
trap 'rm -f "$got"' EXIT
"$weft" plan "${args[@]}" >"$got" 2>&1
echo "exit $?" >>"$got"
sed -i "s|$shared|@SHARED@|g" "$got"
if [ "$update" = "--update" ]; then
  cp "$got" "$name.expected"
  echo "updated $dir/$name.expected"
  exit 0
fi
if ! cmp -s "$got" "$name.expected"; then
  echo "$name: weft plan output differs from $name.expected:"
  diff -u "$name.expected" "$got"
  exit 1
fi
