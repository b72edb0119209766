#!/usr/bin/env bash
# Install what fastconv needs from Debian's packages (Debian 12), only if something is
# missing: the build tools, libpng and libjpeg-turbo, OpenBLAS, FFTW, and numpy/scipy/pytest
# for the conformance tests. Run as root.
set -euo pipefail

packages=(build-essential cmake pkg-config libpng-dev libjpeg-dev libopenblas-dev libfftw3-dev
          python3 python3-numpy python3-scipy python3-pytest
          # GPU backend: OpenCL headers + ICD loader, and PoCL to run the kernels on the CPU in CI
          ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
          # reliability: clang + libFuzzer (scripts/fuzz.sh), setpriv for the read-only test
          clang libclang-rt-14-dev util-linux)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
