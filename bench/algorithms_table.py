#!/usr/bin/python3
"""Measure every algorithm on the seed shapes and write the "when each algorithm wins" table.

Runs `fastconv bench ... --algo all --json` for images 512^2..2048^2 with 3x3..31x31 kernels,
the 16x16 feature layers with 128..1024 channels and ResNet-50's 3x3 layers (batch 1), and
replaces the part of docs/algorithms.md between the BEGIN/END markers with a Markdown table of
median milliseconds per algorithm (the fastest in bold, AUTO's choice alongside).

    /usr/bin/python3 bench/algorithms_table.py --fastconv build/fastconv [--reps 7] [--quick]

Benchmark only while nothing else runs on the machine.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "algorithms.md")
BEGIN = "<!-- BEGIN measured table (bench/algorithms_table.py) -->"
END = "<!-- END measured table -->"

ALGOS = ["direct", "separable", "im2col", "implicit-gemm", "indirect", "mec", "winograd-2x2", "winograd-4x4",
         "winograd-6x6", "winograd-stride2", "winograd-rows", "fft", "fft-tiled", "fft-rows", "fft-cols"]


def problems(quick):
    sizes = [512, 1024] if quick else [512, 1024, 2048]
    kernels = [3, 7, 31] if quick else [3, 5, 7, 11, 15, 31]
    for n in sizes:
        for k in kernels:
            yield (f"image {n}² {k}×{k}", ["filter", "--size", f"{n}x{n}", "--kernel", f"{k}x{k}"])
    yield ("image 1024² 15×15 Gaussian",
           ["filter", "--size", "1024x1024", "--kernel", "15x15", "--kernel-values", "gaussian"])
    channels = [128, 256] if quick else [128, 256, 512, 1024]
    for c in channels:
        yield (f"16×16×{c} → {c}, 3×3", ["conv2d", "--input", f"1x{c}x16x16", "--filters", f"{c}x3x3",
                                          "--pad", "1"])
    resnet = [(64, 56), (128, 28), (256, 14), (512, 7)]
    for c, hw in (resnet[:2] if quick else resnet):
        yield (f"ResNet-50 {c}×{hw}² 3×3", ["conv2d", "--input", f"1x{c}x{hw}x{hw}", "--filters", f"{c}x3x3",
                                             "--pad", "1"])
    yield ("ResNet-50 128×56² 3×3/2", ["conv2d", "--input", "1x128x56x56", "--filters", "128x3x3",
                                       "--pad", "1", "--stride", "2"])


def run(fastconv, args, reps):
    cmd = [fastconv, "bench"] + args + ["--algo", "all", "--json", "--reps", str(reps)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fastconv", default=os.path.join(ROOT, "build", "fastconv"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--print", action="store_true", help="print the table instead of editing the doc")
    opts = ap.parse_args()

    header = "| problem | " + " | ".join(ALGOS) + " | auto picks |"
    lines = [header, "|" + "---|" * (len(ALGOS) + 2)]
    for name, args in problems(opts.quick):
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        rows = run(opts.fastconv, args, opts.reps)
        times = {r["algo"]: r["median_ms"] for r in rows if r["requested"] != "auto"}
        auto = [r for r in rows if r["requested"] == "auto"]
        best = min(times, key=times.get)
        cells = []
        for a in ALGOS:
            if a not in times:
                cells.append("—")
            elif a == best:
                cells.append(f"**{times[a]:.3g}**")
            else:
                cells.append(f"{times[a]:.3g}")
        pick = f"{auto[0]['algo']} ({auto[0]['median_ms']:.3g})" if auto else "—"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {pick} |")

    stamp = time.strftime("%Y-%m-%d")
    threads = rows[0]["threads"] if rows else "?"
    cmd = "/usr/bin/python3 bench/algorithms_table.py" + (" --quick" if opts.quick else "")
    block = "\n".join([
        BEGIN,
        f"Median milliseconds of {opts.reps} runs after a warm-up, {threads} threads, weights given at plan "
        f"time; — = the algorithm declines the problem (or, for the reference, is not run). Measured "
        f"{stamp} on {platform.machine()} ({os.cpu_count()} cores) with `{cmd}`.",
        "",
        *lines,
        END,
    ])
    if opts.print:
        print(block)
        return
    text = open(DOC).read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{DOC}: markers not found")
    text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    open(DOC, "w").write(text)
    print(f"updated {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()
