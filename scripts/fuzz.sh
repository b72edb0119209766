#!/usr/bin/env bash
# Build the libFuzzer harnesses with clang (ASan + UBSan) in build-fuzz and run each for
# FUZZ_SECONDS (default 60) from its committed corpus (tests/fuzz/corpus/<name>; new inputs
# go to a scratch copy, the committed corpus is not modified). Fails on any finding: the
# crashing input is left in build-fuzz/findings/<name>/ — add it to tests/fuzz/regressions/.
# FUZZ_SEED (default 1) fixes libFuzzer's seed so that a CI run explores the same inputs each
# time and a landing is not blocked by chance; FUZZ_SEED=0 explores with a random seed.
# Usage: scripts/fuzz.sh [harness...]   (default: npy image cli_args plan)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
seed=${FUZZ_SEED:-1}
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(npy image cli_args plan)
jobs=$(nproc 2>/dev/null || echo 2)

# OpenMP off: libFuzzer runs one thread and clang's OpenMP runtime is not installed.
# CUDA off: the harnesses exercise the CPU paths and the decoders.
# -O1: the instrumented library built in 115-146 s instead of -O2's 165 s on a fresh 2-core
# clone, the longest step of CI's reliability phase; in CI's 20 s the npy harness then ran
# 4.6-7.4 M inputs (7.5 M at -O2), plan 40-51 K (54 K), image and cli_args no fewer.
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" -DFCONV_FUZZ=ON \
    -DFCONV_OPENMP=OFF -DFCONV_CUDA=OFF -DFCONV_BUILD_TESTS=OFF -DFCONV_BUILD_CLI=OFF >/dev/null
# One target at a time: several --target at once race on the shared static library.
build_all() {
    for h in "${harnesses[@]}"; do cmake --build build-fuzz -j"$jobs" --target fuzz_"$h" || return 1; done
}
if ! build_all >build-fuzz/build.log 2>&1; then
    grep -E 'error' build-fuzz/build.log | head -20
    echo "fuzz: build failed (full log: build-fuzz/build.log)"
    exit 1
fi

# Input size bounds per harness: images need room for a real PNG/JPEG, strings do not.
declare -A max_len=([npy]=4096 [image]=65536 [cli_args]=512 [plan]=256)
status=0
for h in "${harnesses[@]}"; do
    work=build-fuzz/corpus-work/$h
    findings=build-fuzz/findings/$h
    rm -rf "$work" "$findings"
    mkdir -p "$work" "$findings"
    cp tests/fuzz/corpus/"$h"/* "$work"/
    log=build-fuzz/fuzz-$h.log
    echo "== fuzz_$h: ${seconds}s =="
    # -rss_limit_mb also caps single allocations (malloc_limit_mb defaults to it).
    if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       build-fuzz/fuzz_"$h" -max_total_time="$seconds" -rss_limit_mb=2048 \
           -max_len="${max_len[$h]:-4096}" -timeout=25 -print_final_stats=1 -seed="$seed" \
           -artifact_prefix="$findings"/ "$work" tests/fuzz/regressions/"$h" >"$log" 2>&1; then
        execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
        echo "fuzz_$h: no findings, $execs executions"
    else
        echo "fuzz_$h: FINDING (see $log and $findings/):"
        grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" | head -20 || tail -30 "$log"
        status=1
    fi
done
exit $status
