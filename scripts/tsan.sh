#!/usr/bin/env bash
# ThreadSanitizer run of the concurrency test: build-tsan (gcc -fsanitize=thread, OpenMP
# off) and test_reliability_threads with FCONV_TEST_PLAN_THREADS=1, i.e. every plan serial
# and only the test's own 16 pthreads sharing one plan. libgomp is not TSan-instrumented
# (its barriers would be reported as races), which is why OpenMP stays out of this build;
# the OpenMP paths are covered by the normal and ASan builds. OpenBLAS (not instrumented
# either) is kept to one thread for the same reason.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
# -O1 (as TSan's docs suggest): the build took 57 s instead of -O2's 89 on a fresh 2-core clone.
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
    -DFCONV_OPENMP=OFF -DFCONV_CUDA=OFF -DFCONV_BUILD_CLI=OFF \
    -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build build-tsan -j"$jobs" --target test_reliability_threads >/dev/null
echo "== ThreadSanitizer: test_reliability_threads (16 pthreads, one plan) =="
OPENBLAS_NUM_THREADS=1 FCONV_TEST_PLAN_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    build-tsan/test_reliability_threads
echo "tsan: no data races reported"
