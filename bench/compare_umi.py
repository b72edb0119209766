#!/usr/bin/env python3
"""Time fastconv's UMI applications against OpenCV on the same inputs, one run.

Usage:  /usr/bin/python3 bench/compare_umi.py --cli build/fastconv [--runs 7] [--threads 0]
        [--no-write] (needs scripts/install-bench-deps.sh: python3-opencv)

Pairs (bundled data, 640x480 gray / RGB):
  bilateral   fastconv bilateral          vs cv2.bilateralFilter (same d, sigmas)
  stereo      fastconv stereo (SAD, B=9)  vs cv2.StereoBM (numDisparities 48, blockSize 9)
  match       fastconv match (B=8, R=7)   vs a numpy exhaustive block-matching reference
fastconv is timed through the CLI (process start, file reading and writing included, so
its numbers are upper bounds); the peers are timed in-process on arrays already loaded.
Median of --runs runs each. Writes its section of docs/benchmarks.md between the markers
<!-- BEGIN umi (bench/compare_umi.py) --> and <!-- END umi -->.
"""
import argparse
import os
import platform
import statistics
import subprocess
import tempfile
import time

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "data", "sample")
BEGIN, END = "<!-- BEGIN umi (bench/compare_umi.py) -->", "<!-- END umi -->"


def median_time(fn, runs):
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def match_numpy(f0, f1, b, r):
    """Exhaustive SAD block matching, vectorized over blocks per candidate."""
    h, w = f0.shape
    nby, nbx = h // b, w // b
    blocks0 = f0[:nby * b, :nbx * b].reshape(nby, b, nbx, b)
    best = np.full((nby, nbx), np.inf, np.float32)
    vec = np.zeros((nby, nbx, 2), np.float32)
    p = np.pad(f1, r, mode="edge")
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            sh = p[r + dy:r + dy + nby * b, r + dx:r + dx + nbx * b].reshape(nby, b, nbx, b)
            cost = np.abs(sh - blocks0).sum(axis=(1, 3))
            better = cost < best
            best[better] = cost[better]
            vec[better] = (dx, dy)
    return vec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "fastconv"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="fastconv threads and cv2.setNumThreads (0: all)")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    a = ap.parse_args()
    if a.threads:
        cv2.setNumThreads(a.threads)
    gray = cv2.imread(os.path.join(SAMPLE, "scene-gray.png"), cv2.IMREAD_GRAYSCALE)
    rgb = cv2.imread(os.path.join(SAMPLE, "scene.png"), cv2.IMREAD_COLOR)
    frame1 = cv2.imread(os.path.join(SAMPLE, "motion-frame1.png"), cv2.IMREAD_GRAYSCALE)
    right = cv2.imread(os.path.join(SAMPLE, "stereo-right.png"), cv2.IMREAD_GRAYSCALE)
    tmp = tempfile.mkdtemp(prefix="fconv-umi-bench-")
    th = ["--threads", str(a.threads)]

    def cli(*args):
        subprocess.run([a.cli, *args, *th], check=True, capture_output=True)

    rows = []
    s = os.path.join(SAMPLE, "")
    # bilateral: d = 2K+1 = 9 (K = 4), sigma_space 3, sigma_range 30, gray and RGB
    for name, img, path in [("gray", gray, "scene-gray.png"), ("RGB", rgb, "scene.png")]:
        t_f = median_time(lambda: cli("bilateral", s + path, "-o", os.path.join(tmp, "b.npy"),
                                      "--sigma-space", "3", "--sigma-range", "30", "--radius", "4"), a.runs)
        src = img.astype(np.float32)
        t_c = median_time(lambda: cv2.bilateralFilter(src, 9, 30, 3), a.runs)
        rows.append((f"bilateral {name} 640x480, d 9", "cv2.bilateralFilter (float32)", t_f, t_c))
    # stereo: SAD, block 9, disparities 0..47 (StereoBM needs a multiple of 16)
    t_f = median_time(lambda: cli("stereo", s + "scene-gray.png", s + "stereo-right.png", "-o",
                                  os.path.join(tmp, "d.npy"), "--block", "9", "--max-disparity", "47"), a.runs)
    bm = cv2.StereoBM_create(numDisparities=48, blockSize=9)
    t_c = median_time(lambda: bm.compute(gray, right), a.runs)
    rows.append(("stereo 640x480, block 9, 48 disparities", "cv2.StereoBM", t_f, t_c))
    # motion: block 8, search +-7
    t_f = median_time(lambda: cli("match", s + "scene-gray.png", s + "motion-frame1.png", "-o",
                                  os.path.join(tmp, "v.npy"), "--block", "8", "--search", "7"), a.runs)
    f0, f1 = gray.astype(np.float32), frame1.astype(np.float32)
    t_c = median_time(lambda: match_numpy(f0, f1, 8, 7), a.runs)
    rows.append(("match 640x480, block 8, search ±7", "numpy exhaustive SAD", t_f, t_c))

    cmd = f"/usr/bin/python3 bench/compare_umi.py --cli {os.path.relpath(a.cli, ROOT)} --runs {a.runs} --threads {a.threads}"
    lines = [BEGIN, "## UMI applications vs OpenCV", "",
             f"Command: `{cmd}` (median of {a.runs} runs; {platform.machine()}, "
             f"{os.cpu_count()} CPUs, OpenCV {cv2.__version__}, threads {a.threads or 'all'}).",
             "fastconv is timed through its CLI, process start and file I/O included; the peers "
             "in-process on loaded arrays.", "",
             "| problem | peer | fastconv ms | peer ms | fastconv / peer |", "|---|---|---|---|---|"]
    for prob, peer, tf, tc in rows:
        lines.append(f"| {prob} | {peer} | {tf * 1e3:.1f} | {tc * 1e3:.1f} | {tf / tc:.2f} |")
    lines.append(END)
    block = "\n".join(lines)
    print(block)
    if a.no_write:
        return
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    if BEGIN in text and END in text:
        i, j = text.index(BEGIN), text.index(END) + len(END)
        text = text[:i] + block + text[j:]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
