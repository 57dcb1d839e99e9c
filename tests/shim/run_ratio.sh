#!/usr/bin/env bash
# run_ratio.sh — nccl_tests_ratio.py, the table and verdicts of tools/compare_nccl.sh, on fixture
# logs (ratio/: stock, weft and control runs and an untimed weft run's WEFT_REPORT tables) against
# ratio/expected.txt (the report also holds eager rows, as nccl-tests -G warms up eagerly: only
# the graph rows count; a mode it never names is refused). Regenerate:
# run_ratio.sh --print > ratio/expected.txt
set -u
command -v python3 >/dev/null 2>&1 || { echo "run_ratio: skipped: no python3"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/ratio" || exit 1
out=$(python3 "$here/../gpu/nccl_tests_ratio.py" --name "all_gather graph" --served served.log --launch graph \
  stock.1.log stock.2.log -- weft.1.log weft.2.log -- control.1.log control.2.log) || exit 1
if [ "${1:-}" = "--print" ]; then printf '%s\n' "$out"; exit 0; fi
diff -u expected.txt <(printf '%s\n' "$out") || exit 1
# a launch mode the report never names is a usage error, not a column of "NCCL"
if python3 "$here/../gpu/nccl_tests_ratio.py" --launch grpah --served served.log stock.1.log -- \
  weft.1.log >/dev/null 2>&1; then
  echo "run_ratio: --launch grpah was accepted"
  exit 1
fi
