#!/usr/bin/env bash
# The whole test suite: install dependencies, build (Release) and run every test with ctest
# (C unit tests, Python conformance tests against numpy/scipy on the CPU and on OpenCL/PoCL),
# then build again with AddressSanitizer + UndefinedBehaviorSanitizer and run the C tests
# there, then the concurrency test under ThreadSanitizer and each fuzzer for a bounded time.
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
# CUDA off here: nvcc's objects are not instrumented, and CI has no NVIDIA GPU to run them
# (the Release build above compiles them; docs/gpu.md says how they are tested on a GPU).
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DFCONV_SANITIZE=ON -DFCONV_CUDA=OFF -DFCONV_BUILD_TESTS=ON >/dev/null
cmake --build build-sanitize -j"$jobs"
echo "== C tests under ASan + UBSan =="
(cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS=suppressions="$PWD/../tests/lsan.supp" ctest --output-on-failure --no-tests=error -j"$jobs" -L unit)

# ---- reliability (docs/reliability.md): races under ThreadSanitizer, then each libFuzzer
# harness for FUZZ_SECONDS (20 here, so that the suite stays under 15 minutes on a fresh
# 2-core machine; 4 harnesses) under ASan + UBSan.
echo "== ThreadSanitizer =="
bash scripts/tsan.sh
export FUZZ_SECONDS=${FUZZ_SECONDS:-20}
echo "== fuzzing ($FUZZ_SECONDS s per harness) =="
bash scripts/fuzz.sh
# ---- end reliability
