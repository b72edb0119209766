#!/usr/bin/env bash
# The GPU checks of docs/gpu.md on a machine lent for a short while (the device tool's H200),
# in two halves so that the machine's minutes go to the checks, not to builds:
#
#   bash scripts/gpu-check.sh pack [BASELINE_REV]    here: a Release build with CUDA (and, given
#       a commit, that commit's fastconv for a before/after in the same run), their binaries
#       and the Debian libraries they link (not glibc's), stripped and packed with xz into
#       .devcarry/pack.tar.xz (about 15-20 MB; the folder is git-ignored through
#       .git/info/exclude). Carry `.devcarry` to the device.
#   bash scripts/gpu-check.sh run [gpu_compare.py options]    there, from the repository root:
#       unpacks to /tmp/fastconv-gpu, then test_gpu and test_umi_gpu, the conformance suite on
#       the device, compute-sanitizer's memcheck of test_gpu (where it exists), with TILES=REGEX
#       bench/gpu_gemm_tiles.c on the conv2d suite lines matching REGEX (twice) and cuDNN on the
#       same lines, and bench/gpu_compare.py with the given options (the baseline added when
#       packed). Logs and JSON go into one archive, $OUT/gpu-check.tgz (or ./gpu-check-out/):
#       the device tool returns at most 8 files a call.
#
# DEVICE=opencl runs the same on PoCL (a dry run here). Time limits in seconds: TEST_S (60 per
# test binary), MEMCHECK_S (120), TILES_S (150 per sweep), BENCH_S (300). The device has
# python3 with torch and cupy.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
shift || true
carry=.devcarry

pack() {
    local base=${1:-}
    set -e
    grep -qx '/.devcarry/' .git/info/exclude 2>/dev/null || echo '/.devcarry/' >> .git/info/exclude
    local stage
    stage=$(mktemp -d)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFCONV_BUILD_TESTS=ON -DFCONV_CUDA=ON >/dev/null
    cmake --build build -j"$(nproc)" --target fastconv_cli test_gpu test_umi_gpu fastconv >/dev/null
    mkdir -p "$stage/new" "$stage/lib"
    cp build/fastconv build/test_gpu build/test_umi_gpu "$stage/new/"
    cp -P build/libfastconv.so* "$stage/new/"
    cc -O2 -Iinclude bench/gpu_gemm_tiles.c -Lbuild -lfastconv -o "$stage/new/gpu_gemm_tiles"
    if [ -n "$base" ]; then
        local wt
        wt=$(mktemp -d)
        git worktree add -f --detach "$wt" "$base" >/dev/null
        cmake -S "$wt" -B "$wt/build" -DCMAKE_BUILD_TYPE=Release -DFCONV_CUDA=ON >/dev/null
        cmake --build "$wt/build" -j"$(nproc)" --target fastconv_cli >/dev/null
        mkdir -p "$stage/old"
        cp "$wt/build/fastconv" "$stage/old/"
        git worktree remove --force "$wt"
    fi
    # The shared libraries they link, less glibc's own and those every Linux has.
    for f in "$stage"/new/fastconv "$stage"/new/test_gpu "$stage"/new/libfastconv.so.*.*; do ldd "$f"; done |
        awk '/=>/ {print $3}' | sort -u |
        grep -vE '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*|libstdc\+\+|libgcc_s|libz)\.so' |
        while read -r lib; do cp -L "$lib" "$stage/lib/"; done
    find "$stage" -type f \( -name fastconv -o -name 'test_*' -o -name '*.so.*' \) -path '*/new/*' \
        -exec strip {} + 2>/dev/null || true
    [ -f "$stage/old/fastconv" ] && strip "$stage/old/fastconv"
    mkdir -p "$carry"
    (cd "$stage" && tar cf - ./*) | xz -1 -T0 > "$carry/pack.tar.xz"
    rm -rf "$stage"
    echo "packed: $(du -h "$carry/pack.tar.xz" | cut -f1) in $carry/pack.tar.xz (carry \"$carry\")"
}

run() {
    local dev=${DEVICE:-cuda} t=/tmp/fastconv-gpu dest=${OUT:-$PWD/gpu-check-out} rc=0
    local out=$t/out
    rm -rf "$t"
    mkdir -p "$t" "$out" "$dest"
    tar xJf "$carry/pack.tar.xz" -C "$t" || { echo "gpu-check: cannot unpack $carry/pack.tar.xz"; exit 1; }
    export LD_LIBRARY_PATH="$t/new:$t/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
    command -v nvidia-smi >/dev/null && nvidia-smi -L
    for test in test_gpu test_umi_gpu; do
        (cd "$t" && timeout "${TEST_S:-60}" "./new/$test" "$dev") > "$out/$test.log" 2>&1
        local r=$?
        echo "== $test $dev: rc $r"
        [ $r -eq 0 ] || { rc=1; tail -5 "$out/$test.log"; }
    done
    echo "== conformance on $dev"
    FASTCONV_TEST_DEVICE=$dev FASTCONV_LIB="$t/new/libfastconv.so" FASTCONV_CLI="$t/new/fastconv" \
        FASTCONV_SOURCE_DIR="$PWD" timeout 120 python3 -m pytest -q -p no:cacheprovider \
        tests/python/test_conformance.py tests/python/test_gpu_cli.py > "$out/conformance.log" 2>&1 || rc=1
    tail -1 "$out/conformance.log"
    if [ "$dev" = cuda ] && command -v compute-sanitizer >/dev/null; then
        (cd "$t" && timeout "${MEMCHECK_S:-120}" compute-sanitizer --tool memcheck ./new/test_gpu cuda) \
            > "$out/memcheck.log" 2>&1
        echo "== memcheck test_gpu: rc $? ($(grep -o 'ERROR SUMMARY: [0-9]* errors' "$out/memcheck.log"))"
    fi
    if [ -n "${TILES:-}" ]; then
        "$t/new/fastconv" bench suite --list | grep conv2d | grep -E -- "$TILES" > "$out/shapes.txt"
        for i in 1 2; do
            timeout "${TILES_S:-150}" "$t/new/gpu_gemm_tiles" "$dev" < "$out/shapes.txt" \
                > "$out/tiles$i.jsonl" 2>> "$out/tiles.err"
            echo "== gpu_gemm_tiles $i: rc $? ($(wc -l < "$out/tiles$i.jsonl") rows)"
        done
        timeout "${TILES_S:-150}" python3 - "$out/shapes.txt" > "$out/cudnn.jsonl" 2> "$out/cudnn.err" <<'PY'
import json, sys
sys.path.insert(0, "bench")
import gpu_compare as g
for line in open(sys.argv[1]):
    group, args = line.rstrip("\n").split("\t")
    kind, o = g.parse(args.split())
    print(json.dumps({"shape": line.rstrip("\n"), "peers": g.peers(kind, o, 10)}), flush=True)
PY
        echo "== cuDNN on the same shapes: rc $? ($(wc -l < "$out/cudnn.jsonl") rows)"
    fi
    if [ $# -gt 0 ]; then
        local base=()
        [ -x "$t/old/fastconv" ] && base=(--baseline-cli "$t/old/fastconv")
        echo "== bench/gpu_compare.py $*"
        timeout "${BENCH_S:-300}" python3 bench/gpu_compare.py --cli "$t/new/fastconv" --device "$dev" \
            "${base[@]}" --json-out "$out/bench.json" --md-out "$out/bench.md" "$@" 2>&1 | tail -3
    fi
    tar czf "$dest/gpu-check.tgz" -C "$out" . && echo "== outputs: $dest/gpu-check.tgz"
    return $rc
}

case "$mode" in
pack) pack "$@" ;;
run) run "$@" ;;
*)
    sed -n '2,20p' "$0"
    exit 2
    ;;
esac
