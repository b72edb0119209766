#!/usr/bin/env bash
# The whole test suite: install dependencies, build (Release) and run every test with ctest
# (C unit tests + Python conformance tests against numpy/scipy), then build again with
# AddressSanitizer + UndefinedBehaviorSanitizer and run the C tests there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

jobs=$(nproc 2>/dev/null || echo 2)
echo "== build (Release) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFCONV_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$jobs"
echo "== tests =="
(cd build && ctest --output-on-failure --no-tests=error -j"$jobs")

echo "== build (ASan + UBSan) =="
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DFCONV_SANITIZE=ON -DFCONV_BUILD_TESTS=ON >/dev/null
cmake --build build-sanitize -j"$jobs"
echo "== C tests under ASan + UBSan =="
(cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure --no-tests=error -j"$jobs" -L unit)
