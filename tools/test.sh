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
# Under the sanitizers the library's per-shape tests run for shapes of up to 4 ranks and
# algo.defaults for N = 1..9 (WEFT_TEST_SAN): the same code paths, at a third of the time; the
# build above ran all of them.
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   WEFT_TEST_SAN=1 ctest --output-on-failure -j"$jobs" -LE nosan \
   -E '^(algo|example)\.[^.]+\.N([5-9]|[1-9][0-9]+)(_|$)')
