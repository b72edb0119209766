#!/usr/bin/env bash
# The main job on the bundled sample data: install dependencies, build, then filter the
# bundled scene (edge detection, blur, sharpen), low-pass a 1D signal and run a CNN layer.
# Results go to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFCONV_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
fc=build/fastconv
mkdir -p out
s=data/sample

"$fc" info | head -4
echo
"$fc" filter $s/scene.png -k sobel-mag -o out/edges.png -k gaussian5 -o out/blur.png \
    -k sharpen -o out/sharpen.png -k emboss -o out/emboss.png --border reflect
echo "filter: $s/scene.png (RGB 640x480) -> out/edges.png (Sobel gradient magnitude)," \
     "out/blur.png (5x5 Gaussian), out/sharpen.png, out/emboss.png (reflect border)"
"$fc" filter $s/scene-gray.png -k edge3 -o out/edges-gray.png --normalize
echo "filter: $s/scene-gray.png -> out/edges-gray.png (8-neighbour edge kernel, min..max stretched)"
"$fc" conv1d $s/signal.npy $s/lowpass31.npy -o out/signal-lowpass.npy --mode same
echo "conv1d: $s/signal.npy (4096 samples) * 31-tap low-pass -> out/signal-lowpass.npy"
"$fc" conv2d $s/layer-input.npy $s/layer-weights.npy --bias $s/layer-bias.npy --pad 1 --relu \
    -o out/layer-output.npy
echo "conv2d: $s/layer-input.npy (1x3x64x64) with 8 3x3 filters, pad 1, bias, ReLU" \
     "-> out/layer-output.npy (1x8x64x64)"
