#!/usr/bin/env bash
# install-bench-deps.sh — what the peer-comparison benchmarks (bench/*.py) need beyond
# scripts/install-deps.sh, from Debian's packages only: OpenCV's Python bindings.
# Each benchmark section appends its packages to PACKAGES below.
set -euo pipefail
PACKAGES=(python3-numpy python3-opencv)   # bench/compare_umi.py: cv2.bilateralFilter, cv2.StereoBM
# bench/compare.py (issue 4b): scipy, PyTorch, matplotlib plots, oneDNN's C++ API + g++
PACKAGES+=(python3-scipy python3-torch python3-matplotlib libdnnl-dev g++)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
