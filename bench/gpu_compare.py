#!/usr/bin/env python3
"""
GPU comparison for a machine with an NVIDIA GPU (docs/gpu.md): fastconv --device cuda
(kernel time from device events, transfers apart) against cuDNN through
torch.nn.functional.conv2d and CuPy (cupyx.scipy.ndimage.convolve,
cupyx.scipy.signal.convolve2d). Peers are timed on device-resident data with CUDA events,
median of --reps runs after a warm-up, so compare them with fastconv's kernel column.

  /usr/bin/python3 bench/gpu_compare.py --cli build/fastconv [--reps 20] [--device cuda]

Peers that are not installed are reported as such; nothing is downloaded.
"""
import argparse
import json
import statistics
import subprocess

CONV2D = [  # (N, C, H, W, K, R, S, stride, pad)
    (1, 64, 56, 56, 64, 3, 3, 1, 1), (1, 128, 28, 28, 128, 3, 3, 1, 1),
    (1, 256, 14, 14, 256, 3, 3, 1, 1), (8, 64, 56, 56, 64, 1, 1, 1, 0),
    (1, 3, 224, 224, 64, 7, 7, 2, 3),
]
FILTER = [(1080, 1920, 3, 3), (1080, 1920, 15, 15), (2048, 2048, 31, 31)]


def fastconv(cli, device, reps, args):
    out = subprocess.run([cli, "bench", *args, "--device", device, "--reps", str(reps), "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip()}
    rows = json.loads(out.stdout)
    rows = rows if isinstance(rows, list) else rows.get("results", [rows])
    return rows[0]


def cuda_time(fn, reps):
    import torch
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--cli", default="build/fastconv")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    try:
        import torch
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    try:
        import cupy
        import cupyx.scipy.ndimage
        import cupyx.scipy.signal
        have_cupy = True
    except ImportError:
        have_cupy = False
    print(f"{'problem':44s} {'fastconv kernel ms':>18s} {'transfer ms':>12s} {'cuDNN ms':>9s} {'CuPy ms':>8s}")
    for n, c, h, w, k, r, s, st, p in CONV2D:
        fc = fastconv(a.cli, a.device, a.reps, ["conv2d", "--input", f"{n}x{c}x{h}x{w}",
                                                 "--filters", f"{k}x{r}x{s}", "--stride", str(st),
                                                 "--pad", str(p)])
        cudnn = "n/a"
        if have_torch:
            x = torch.randn(n, c, h, w, device="cuda")
            wt = torch.randn(k, c, r, s, device="cuda")
            torch.backends.cudnn.benchmark = True
            cudnn = f"{cuda_time(lambda: torch.nn.functional.conv2d(x, wt, stride=st, padding=p), a.reps):.3f}"
        print(f"conv2d {n}x{c}x{h}x{w} k{k} {r}x{s} s{st} p{p}".ljust(44),
              f"{fc.get('kernel_ms', float('nan')):18.3f} {fc.get('transfer_ms', float('nan')):12.3f}"
              f" {cudnn:>9s} {'-':>8s}", fc.get("error", ""))
    for h, w, kh, kw in FILTER:
        fc = fastconv(a.cli, a.device, a.reps, ["filter", "--size", f"{h}x{w}", "--kernel", f"{kh}x{kw}"])
        cp = "n/a"
        if have_cupy and have_torch:
            img = cupy.random.standard_normal((h, w), dtype=cupy.float32)
            ker = cupy.random.standard_normal((kh, kw), dtype=cupy.float32)
            cp = f"{cuda_time(lambda: cupyx.scipy.signal.convolve2d(img, ker, mode='same'), a.reps):.3f}"
            cp += f" / {cuda_time(lambda: cupyx.scipy.ndimage.convolve(img, ker, mode='constant'), a.reps):.3f}"
        print(f"filter {h}x{w} kernel {kh}x{kw}".ljust(44),
              f"{fc.get('kernel_ms', float('nan')):18.3f} {fc.get('transfer_ms', float('nan')):12.3f}"
              f" {'-':>9s} {cp:>8s}", fc.get("error", ""))


if __name__ == "__main__":
    main()
