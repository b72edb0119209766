#!/usr/bin/env bash
# Install the built tree into a temporary prefix, then build and run a consumer with
# find_package(fastconv) (shared and static targets) and with pkg-config.
# usage: check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/fastconv.h"
test -f "$prefix/lib/pkgconfig/fastconv.pc" || test -f "$prefix"/lib/*/pkgconfig/fastconv.pc
cmake -S "$src/tests/install/consumer" -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/lib:$(dirname "$(find "$prefix" -name 'libfastconv.so' | head -1)")" \
    "$prefix/consumer/consumer_cmake"
"$prefix/consumer/consumer_static"
pc_dir=$(dirname "$(find "$prefix" -name fastconv.pc | head -1)")
export PKG_CONFIG_PATH="$pc_dir"
cc -std=c11 "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags --libs fastconv) \
    -Wl,-rpath,"$(pkg-config --variable=libdir fastconv)" -o "$prefix/consumer_pc"
"$prefix/consumer_pc"
echo "install ok"
