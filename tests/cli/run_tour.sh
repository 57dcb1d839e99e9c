#!/usr/bin/env bash
# run_tour.sh — README.md's Quick tour and docs/algorithms.md's opening run exactly as written:
# each command of their first sh block, in order, in a fresh folder that holds the repository's
# algorithms/ and examples/ (as a clone's root does), with weft on PATH; every command must exit
# 0. Commands whose comment says they need GPUs are listed as skipped.
#   run_tour.sh WEFT_DIR   (the folder of the weft binary)
set -u
bindir=$(cd "$1" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH="$bindir:$PATH"
fails=0 ran=0 skipped=0

# The commands of the first ```sh (or ```) block after the heading $2 of file $1, one per line.
commands() {
  awk -v heading="$2" '
    index($0, heading) == 1 { found = 1; next }
    found && !inblock && /^```/ { inblock = 1; next }
    inblock && /^```/ { exit }
    inblock { print }' "$1"
}

run_block() {
  local doc=$1 heading=$2 dir=$tmp/$3
  mkdir -p "$dir"
  ln -s "$root/algorithms" "$dir/algorithms"
  ln -s "$root/examples" "$dir/examples"
  local n=0
  while IFS= read -r line; do
    [ -n "${line// /}" ] || continue
    n=$((n + 1))
    if [[ $line == *"(GPUs"* ]]; then
      echo "SKIP (needs GPUs): $line"
      skipped=$((skipped + 1))
      continue
    fi
    # the command without its trailing comment
    local cmd=${line%%  #*}
    (cd "$dir" && eval "$cmd") >"$tmp/out" 2>"$tmp/err" </dev/null
    local rc=$?
    ran=$((ran + 1))
    if [ "$rc" -ne 0 ]; then
      echo "FAIL: $doc: '$cmd' exited $rc:"
      head -5 "$tmp/err"
      fails=$((fails + 1))
    fi
  done < <(commands "$root/$doc" "$heading")
  [ "$n" -gt 0 ] || { echo "FAIL: $doc: no commands under '$heading'"; fails=$((fails + 1)); }
}

run_block README.md "## Quick tour" readme
run_block docs/algorithms.md "# The algorithm library" algorithms
echo "$ran commands ran, $skipped skipped (GPUs), $fails failed"
[ "$fails" -eq 0 ]
