#!/usr/bin/env bash
# test.sh — the test command: installs dependencies, builds (warnings are errors) and runs ctest,
# then repeats the CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

bash "$root/tools/setup.sh" "$root/build" -DWEFT_WERROR=ON
(cd "$root/build" && ctest --output-on-failure -j"$jobs")

echo "== sanitizer build (ASan + UBSan, CPU tests) =="
bash "$root/tools/setup.sh" "$root/build-asan" -DWEFT_WERROR=ON -DWEFT_SANITIZE=ON -DWEFT_CUDA=OFF
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j"$jobs" -LE nosan)
