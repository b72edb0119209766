#!/usr/bin/python3
"""compare.py — fastconv against its peers on the benchmark suite's shapes, in one run.

For each shape of `fastconv bench suite --list` (one table, in cli/bench-shapes.c): fastconv
(AUTO, through `fastconv bench ... --json`) and, interleaved with it, cv2.filter2D
(preallocated output), scipy.signal.fftconvolve / oaconvolve (scipy.fft workers=2),
numpy.convolve, torch.nn.functional.conv2d (NCHW and channels_last) and oneDNN's own API
(direct and Winograd in its own blocked layouts, and direct on the row's plain layout,
bench/onednn_bench.cpp), all with 2 threads, median of >= 7 runs.
Writes the block between <!-- BEGIN peers (bench/compare.py) --> and <!-- END peers --> of
docs/benchmarks.md (ratio = peer time / fastconv time: > 1 means fastconv is faster) and
PNG plots under docs/bench/. Needs scripts/install-bench-deps.sh.

    /usr/bin/python3 bench/compare.py --cli build/fastconv [--quick] [--limit N]
"""
import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

THREADS = 2
BEGIN, END = "<!-- BEGIN peers (bench/compare.py) -->", "<!-- END peers -->"


def median_ms(fn, reps):
    fn()  # warm-up
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
    return statistics.median(t)


def parse_args_line(args):
    """The `fastconv bench` arguments of a shape as a dict."""
    words = shlex.split(args)
    d = {"kind": words[0]}
    i = 1
    while i < len(words):
        key = words[i].lstrip("-")
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            d[key] = words[i + 1]
            i += 2
        else:
            d[key] = True
            i += 1
    return d


STEAL_LIMIT = 0.02  # of the CPU time of the run: above it, the VM was descheduled too much
STEAL_TRIES = 3
retaken = [0, 0]  # timings retaken, timings in all
BANDWIDTH_1D = "conv1d --size 100000000 --kernel 3 --mode same"  # the bandwidth-bound target's shape
BANDWIDTH_1D_FLOATS = 100000000  # its signal (and output) in floats


def steal_seconds():
    """CPU time the hypervisor gave to others (steal, /proc/stat), in seconds; 0 where unknown."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0
    except (OSError, ValueError):
        return 0.0


def quiet(measure):
    """measure() -> (ms, ...), retaken up to STEAL_TRIES times while the VM lost more than
    STEAL_LIMIT of the run's CPU time (THREADS cores x wall time) to steal; the fastest try
    is kept. On this shared VM whole minutes ran with the second core mostly stolen, which
    halved 2-thread timings of one side of a comparison."""
    best = None
    for attempt in range(STEAL_TRIES):
        s0, t0 = steal_seconds(), time.perf_counter()
        result = measure()
        stolen = (steal_seconds() - s0) / (THREADS * (time.perf_counter() - t0))
        if best is None or (result[0] is not None and best[0] is not None and result[0] < best[0]):
            best = result
        if stolen <= STEAL_LIMIT:
            break
        retaken[0] += 1
    retaken[1] += 1
    return best


# The groups whose layers are also timed with fastconv in NHWC (--layout nhwc) against oneDNN.
NHWC_GROUPS = ("cnn-16x16", "resnet50", "vgg16")


def fastconv_ms(cli, args, reps):
    out = subprocess.run([cli, "bench"] + shlex.split(args) + ["--threads", str(THREADS), "--reps", str(reps), "--json"],
                         check=True, capture_output=True, text=True).stdout
    row = json.loads(out)[0]
    return row["median_ms"], row["algo"], row["gflops"]


def peers_for(shape, onednn, reps):
    """(name, callable or None, extra) for each peer that serves this shape."""
    import cv2
    import scipy.fft
    import scipy.signal
    import torch
    cv2.setNumThreads(THREADS)
    torch.set_num_threads(THREADS)
    rng = np.random.default_rng(1)
    kind = shape["kind"]
    peers = []
    if kind == "filter":
        dims = [int(v) for v in shape["size"].split("x")]
        h, w, ch = dims[0], dims[1], dims[2] if len(dims) > 2 else 1
        kh, kw = (int(v) for v in shape["kernel"].split("x"))
        x = rng.uniform(-1, 1, (h, w, ch) if ch > 1 else (h, w)).astype(np.float32)
        k = rng.uniform(-1, 1, (kh, kw)).astype(np.float32)
        dst = np.empty_like(x)
        border = cv2.BORDER_REFLECT if shape.get("border") == "reflect" else cv2.BORDER_CONSTANT
        peers.append(("cv2.filter2D", lambda: cv2.filter2D(x, -1, k, dst=dst, borderType=border)))
        x3 = x if ch > 1 else x[:, :, None]
        k3 = k[:, :, None]

        def fft(fn):
            def run():
                with scipy.fft.set_workers(THREADS):
                    fn(x3, k3, mode="same", axes=(0, 1))
            return run
        peers.append(("scipy.signal.fftconvolve", fft(scipy.signal.fftconvolve)))
        peers.append(("scipy.signal.oaconvolve", fft(scipy.signal.oaconvolve)))
    elif kind == "conv1d":
        n, m = int(shape["size"]), int(shape["kernel"])
        x = rng.uniform(-1, 1, n).astype(np.float32)
        k = rng.uniform(-1, 1, m).astype(np.float32)
        if n * m <= 3e9:  # 10^7 x 255 (the 1D target) included, 10^8 x 31 and 255 take minutes
            peers.append(("numpy.convolve", lambda: np.convolve(x, k, mode="same")))

        def fft1(fn):
            def run():
                with scipy.fft.set_workers(THREADS):
                    fn(x, k, mode="same")
            return run
        peers.append(("scipy.signal.fftconvolve", fft1(scipy.signal.fftconvolve)))
        peers.append(("scipy.signal.oaconvolve", fft1(scipy.signal.oaconvolve)))
    else:
        n, c, h, w = (int(v) for v in shape["input"].split("x"))
        k, r, s = (int(v) for v in shape["filters"].split("x"))
        stride, pad = int(shape.get("stride", 1)), int(shape.get("pad", 0))
        x = torch.from_numpy(rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32))
        wt = torch.from_numpy(rng.uniform(-1, 1, (k, c, r, s)).astype(np.float32))
        xcl, wcl = x.to(memory_format=torch.channels_last), wt.to(memory_format=torch.channels_last)
        conv = torch.nn.functional.conv2d

        def torch_run(a, b):
            def run():
                with torch.no_grad():
                    conv(a, b, stride=stride, padding=pad)
            return run
        peers.append(("torch conv2d NCHW", torch_run(x, wt)))
        peers.append(("torch conv2d channels_last", torch_run(xcl, wcl)))
        if onednn:
            # its own layouts (the targets' bar), then its direct primitive on the tensors as
            # fastconv reads and writes them (DIRECT_PLAIN: the algo argument follows the row's layout)
            for algo in ("direct", "winograd", DIRECT_PLAIN):
                cmd = [onednn] + [str(v) for v in (n, c, h, w, k, r, s, stride, pad)] + [algo, str(reps)]
                peers.append((ONEDNN_PLAIN if algo == DIRECT_PLAIN else f"oneDNN {algo}", None, cmd))
    return peers


# oneDNN's direct primitive given the input and output in the row's plain layout (NCHW, or NHWC in
# the rows that end in --layout nhwc): bench/onednn_bench.cpp's direct-nchw and direct-nhwc. Not a
# target's bar; it says how much of a gap to oneDNN's rows is the blocked layout they run in.
DIRECT_PLAIN = "direct-plain"
ONEDNN_PLAIN = "oneDNN direct, plain layout"


def run_peer(peer, reps, layout=None, paired=True):
    """(peer ms or None, note, fastconv ms, fastconv's algorithm): the last two only where a
    oneDNN peer ran with fastconv in its process (paired, in layout nchw or nhwc), else None.
    layout also picks the plain layout of ONEDNN_PLAIN (nchw without one)."""
    if peer[1] is not None:
        return median_ms(peer[1], reps), "", None, None
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    cmd = [f"direct-{layout or 'nchw'}" if a == DIRECT_PLAIN else a for a in peer[2]]
    cmd += [layout] if layout and paired else []
    row = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
    if "unavailable" in row:
        return None, row["unavailable"], None, None
    return row["median_ms"], row.get("impl", ""), row.get("fastconv_median_ms"), row.get("fastconv_algo")


def machine():
    model = "unknown CPU"
    flags = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = line
    except OSError:
        pass
    lanes = 16 if " avx512f" in flags else 8 if " avx2" in flags else 4
    return model, os.cpu_count() or 1, lanes


def measure_peak_gflops(lanes):
    """Peak = cores x lanes x 2 FMA units x 2 flops x clock; the clock is estimated from a
    dependent-add chain (1 add/cycle) in numpy, which is crude: the assumption is stated."""
    ghz = None
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("cpu MHz"):
                ghz = float(line.split(":")[1]) / 1e3
                break
    except OSError:
        pass
    ghz = ghz or 2.5
    return ghz, THREADS * lanes * 2 * 2 * ghz


def measure_bandwidth_gbs():
    """STREAM-like triad a = b + s*c on 3 x 64 MiB arrays (numpy, so 2 passes: a lower bound)."""
    n = 16 * 1024 * 1024
    b = np.ones(n, np.float32)
    c = np.ones(n, np.float32)
    a = np.empty(n, np.float32)

    def triad():
        np.multiply(c, np.float32(3.0), out=a)
        np.add(a, b, out=a)
    ms = median_ms(triad, 5)
    return 5 * 4 * n / (ms * 1e6)  # bytes moved by the two numpy passes / time


def measured_roofs(cli):
    """(FMA GFLOP/s of all threads, copy GB/s, non-temporal copy GB/s, the vector ISA timed,
    median non-temporal copy GB/s) from bench/machine_peaks.c, or None where it cannot be
    built (no AVX2 compiler)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "machine_peaks.c")
    exe = os.path.join(os.path.dirname(os.path.abspath(cli)), "machine_peaks")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        flags = " " + open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
        isa = ["-mavx512f"] if " avx512f" in flags else ["-mavx2"]
        if subprocess.run(["gcc", "-O3"] + isa + ["-mfma", "-fopenmp", src, "-o", exe],
                          capture_output=True).returncode != 0:
            return None
    out = subprocess.run([exe], capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(THREADS)))
    try:
        fma, copy, stream, lanes, median = out.stdout.split()
        return float(fma), float(copy), float(stream), "AVX-512" if lanes == "16" else "AVX2", float(median)
    except ValueError:
        return None


def build_bandwidth_1d(cli):
    """bench/bandwidth_1d.c built against the shared library beside the CLI, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.dirname(os.path.abspath(cli))
    exe = os.path.join(build, "bandwidth_1d")
    flags = " " + open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    isa = ["-mavx512f"] if " avx512f" in flags else ["-mavx2"]
    cmd = ["gcc", "-O2"] + isa + ["-fopenmp", "-I", os.path.join(here, "..", "include"),
                                  os.path.join(here, "bandwidth_1d.c"), "-L", build, "-lfastconv",
                                  "-Wl,-rpath," + build, "-o", exe]
    return exe if subprocess.run(cmd, capture_output=True).returncode == 0 else None


def build_onednn(cli):
    """bench/onednn_bench.cpp built beside the CLI: (exe or None, whether it times fastconv too).
    Against the shared library beside the CLI it alternates oneDNN's and fastconv's executes in
    one process (its header says why); without it, oneDNN alone."""
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.dirname(os.path.abspath(cli))
    src, exe = os.path.join(here, "onednn_bench.cpp"), os.path.join(build, "onednn_bench")
    base = ["g++", "-O2", "-std=c++17", src, "-ldnnl", "-o", exe]
    paired = base[:3] + ["-I", os.path.join(here, "..", "include")] + base[3:] + [
        "-L", build, "-lfastconv", "-Wl,-rpath," + build]
    if subprocess.run(paired, capture_output=True).returncode == 0:
        return exe, True
    print("compare: bench/onednn_bench.cpp not built against libfastconv.so beside the CLI: oneDNN's rows "
          "time fastconv through the CLI, a moment apart", file=sys.stderr)
    if subprocess.run(base, capture_output=True).returncode == 0:
        return exe, False
    print("compare: oneDNN benchmark not built (libdnnl-dev, g++ missing?)", file=sys.stderr)
    return None, False


def bandwidth_1d(exe, reps):
    """The 1D bandwidth target in one process (bench/bandwidth_1d.c): conv1d 10^8 x 3 against a
    non-temporal copy of the same buffers, alternated; its JSON, or None."""
    out = subprocess.run([exe, str(BANDWIDTH_1D_FLOATS), "3", str(THREADS), str(max(reps, 9))],
                         capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(THREADS)))
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def write_block(path, text):
    old = open(path).read() if os.path.exists(path) else "# Benchmarks\n\nfastconv against its peers on this machine.\n\n"
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + text + old[old.index(END) + len(END):]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, path)


def seed004(cli, reps, tmp):
    """The seed-004 workload: an RGB 2048x1157 image, twenty 15x15 filters (correlation,
    reflect border as cv2's default is not; zero border here for both)."""
    import cv2
    rng = np.random.default_rng(4)
    img = rng.uniform(0, 1, (1157, 2048, 3)).astype(np.float32)
    kernels = [rng.uniform(-1, 1, (15, 15)).astype(np.float32) for _ in range(20)]
    np.save(os.path.join(tmp, "img.npy"), img)
    args = [cli, "filter", os.path.join(tmp, "img.npy"), "--correlate", "--threads", str(THREADS)]
    for i, k in enumerate(kernels):
        np.save(os.path.join(tmp, f"k{i}.npy"), k)
        args += ["-k", os.path.join(tmp, f"k{i}.npy"), "-o", os.path.join(tmp, f"o{i}.npy")]
    dst = np.empty_like(img)

    def ocv():
        for k in kernels:
            cv2.filter2D(img, -1, k, dst=dst, borderType=cv2.BORDER_CONSTANT)
    fc = median_ms(lambda: subprocess.run(args, check=True), reps)
    return fc, median_ms(ocv, reps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/fastconv")
    ap.add_argument("--quick", action="store_true", help="the suite's --quick shapes")
    ap.add_argument("--limit", type=int, default=0, help="only the first N shapes (a smoke test)")
    ap.add_argument("--group", help="only this group of the suite (image, rgb, 1d, resnet50, ...)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default="docs/benchmarks.md")
    ap.add_argument("--plots", default="docs/bench")
    ap.add_argument("--no-seed004", action="store_true")
    ap.add_argument("--rows", help="the timings of an earlier run (its PLOTS/compare-rows.json) instead of "
                                   "measuring: the tables and plots written again")
    a = ap.parse_args()
    a.reps = max(a.reps, 7)
    onednn, onednn_pairs = build_onednn(a.cli)
    bw1d = build_bandwidth_1d(a.cli)
    if not bw1d:
        print("compare: bench/bandwidth_1d.c not built (no libfastconv.so beside the CLI?): the 1D bound "
              "falls back to machine_peaks' copy in another process", file=sys.stderr)
    listing = subprocess.run([a.cli, "bench", "suite", "--list"] + (["--quick"] if a.quick else []) +
                             (["--group", a.group] if a.group else []),
                             check=True, capture_output=True, text=True).stdout
    shapes = [line.split("\t", 1) for line in listing.splitlines() if line]
    if a.limit:
        shapes = shapes[:a.limit]
    rows = json.load(open(a.rows)) if a.rows else []
    for i, (group, args) in enumerate([] if a.rows else shapes):
        shape = parse_args_line(args)
        print(f"[{i + 1}/{len(shapes)}] {group}: {args}", file=sys.stderr, flush=True)
        first_ms, fc_algo, fc_gflops = quiet(lambda: fastconv_ms(a.cli, args, a.reps))
        work = fc_gflops * first_ms / 1e3  # the problem's work, GFLOP
        for peer in peers_for(shape, onednn, a.reps):
            # oneDNN with fastconv in its process (onednn_pairs): their executes alternated, the
            # pair's medians give the row's ratio, and fastconv's time and algorithm come from
            # there. Other peers interleaved: fastconv is timed again right before each, one
            # median each, taken a moment apart (a best of several fastconv medians against one
            # of the peer's would favour fastconv on this noisy VM).
            paired = onednn_pairs and peer[0].startswith("oneDNN")
            fc_ms = None if paired else quiet(lambda: fastconv_ms(a.cli, args, a.reps))[0]
            # the bandwidth target: conv1d against a copy of the same buffers in one process
            # (bandwidth_1d.c), or else the memory rate in another, right after fastconv's timing
            inproc = bandwidth_1d(bw1d, a.reps) if args == BANDWIDTH_1D and bw1d else None
            roofs_now = measured_roofs(a.cli) if args == BANDWIDTH_1D and not inproc else None
            ms, note, paired_ms, paired_algo = quiet(lambda: run_peer(peer, a.reps, "nchw", paired))
            if paired and paired_ms is None:  # oneDNN unavailable here: fastconv alone, through the CLI
                paired_ms = quiet(lambda: fastconv_ms(a.cli, args, a.reps))[0]
            rows.append({"group": group, "args": args, "peer": peer[0], "peer_ms": ms, "note": note,
                         "fastconv_ms": paired_ms if paired else fc_ms,
                         "algo": paired_algo or fc_algo, "gflop": work, "paired": bool(paired and ms),
                         "stream_median_gbs": roofs_now[4] if roofs_now else None, "bandwidth_1d": inproc})
            # The CNN layers again with fastconv channels last (NHWC), against the same oneDNN,
            # which runs in its own layout either way: interleaved as above.
            if peer[0].startswith("oneDNN") and group in NHWC_GROUPS and ms:
                # its own names: the NCHW rows of the next peers keep the NCHW algorithm (until
                # 2026-11-28 a oneDNN Winograd row after this one showed the NHWC algorithm and a
                # GFLOP/s worked out from the NHWC time; its ratio was right). The work is the
                # same problem's in either layout.
                nhwc = args + " --layout nhwc"
                nhwc_ms = None
                if paired:
                    ms, note, nhwc_ms, nhwc_algo = quiet(lambda: run_peer(peer, a.reps, "nhwc"))
                nhwc_paired = nhwc_ms is not None
                if not nhwc_paired:
                    nhwc_ms, nhwc_algo, _ = quiet(lambda: fastconv_ms(a.cli, nhwc, a.reps))
                    ms, note, _, _ = quiet(lambda: run_peer(peer, a.reps, "nhwc", paired=False))
                rows.append({"group": group, "args": nhwc, "peer": peer[0], "peer_ms": ms, "note": note,
                             "fastconv_ms": nhwc_ms, "algo": nhwc_algo, "gflop": work, "paired": nhwc_paired,
                             "stream_median_gbs": None, "bandwidth_1d": None})
    for r in rows:
        r["gflops"] = r["gflop"] / (r["fastconv_ms"] / 1e3)
    if not a.rows:  # the raw timings, kept before anything else can fail
        os.makedirs(a.plots, exist_ok=True)
        with open(os.path.join(a.plots, "compare-rows.json"), "w") as f:
            json.dump(rows, f, indent=0)
    seed = None
    if not a.no_seed004:
        with tempfile.TemporaryDirectory() as tmp:
            seed = seed004(a.cli, 1 if a.quick else a.reps, tmp)
    model, cores, lanes = machine()
    roofs = measured_roofs(a.cli)
    if roofs:
        peak, bw = roofs[0], roofs[2]
        roof_text = (f"Roofs measured by bench/machine_peaks.c on {THREADS} threads: FMA peak {peak:.0f} GFLOP/s "
                     f"({roofs[3]} FMA chains), memory {roofs[1]:.1f} GB/s copying with ordinary stores, "
                     f"{bw:.1f} GB/s with non-temporal stores (the bandwidth used below).")
    else:  # no AVX2 compiler: the nominal clock and a numpy triad
        ghz, peak = measure_peak_gflops(lanes)
        bw = measure_bandwidth_gbs()
        roof_text = (f"Peak ≈ {THREADS} cores × {lanes} lanes × 2 FMA units × 2 flops × {ghz:.2f} GHz "
                     f"(/proc/cpuinfo) = {peak:.0f} GFLOP/s; bandwidth (numpy triad) ≈ {bw:.1f} GB/s.")
    cmd = "/usr/bin/python3 bench/compare.py " + " ".join(sys.argv[1:])
    out = [BEGIN, "## fastconv vs OpenCV, scipy, numpy, PyTorch and oneDNN", "",
           f"Command: `{cmd}`; machine: {model}, {cores} CPUs, {lanes}-lane FP32 SIMD; "
           f"{THREADS} threads everywhere; median of {a.reps} runs, fastconv re-timed right before each peer "
           "(interleaved): each row's ratio is that pair's, one median each"
           + (" (against oneDNN both in one process, their executes alternated rep by rep: "
              "bench/onednn_bench.cpp)" if any(r.get("paired") for r in rows) else "") +
           ". A timing during which the VM lost more than "
           f"{STEAL_LIMIT:.0%} of its CPU time to the hypervisor (steal in /proc/stat) was taken again, up to "
           f"{STEAL_TRIES} times, the fastest kept: {retaken[0]} retakes for {retaken[1]} timings in this run.",
           roof_text,
           "ratio = peer ms / fastconv ms (> 1: fastconv is faster). fastconv runs AUTO through "
           "`fastconv bench`, in-process timing; peers in-process on preallocated arrays. fastconv reads "
           "and writes NCHW (rows whose problem ends in `--layout nhwc`: channels last, NHWC, against "
           "the same oneDNN timed again); oneDNN (bench/onednn_bench.cpp) runs in the layouts it prefers (format "
           "`any`: channel-blocked, nChw16c-style on AVX-512), its reorders from and to NCHW left out of "
           "the timing, as a framework keeping blocked tensors between layers would run it; its row "
           f"\"{ONEDNN_PLAIN}\" gives the direct primitive the input and output in the row's own layout "
           "(NCHW, or NHWC in the --layout nhwc rows), as a caller holding such tensors runs it without "
           "reorders: not a target's bar, it shows how much of a gap is the blocked layout.", "",
           "| group | problem | fastconv (auto algo) ms | GFLOP/s | % peak | peer | peer ms | ratio |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = f"{r['peer_ms'] / r['fastconv_ms']:.2f}" if r["peer_ms"] else "n/a"
        peer_ms = f"{r['peer_ms']:.3f}" if r["peer_ms"] else "unavailable: " + r["note"][:40]
        out.append(f"| {r['group']} | `{r['args']}` | {r['fastconv_ms']:.3f} ({r['algo']}) | {r['gflops']:.1f} | "
                   f"{100 * r['gflops'] / peak:.0f}% | {r['peer']} | {peer_ms} | {ratio} |")
    if seed:
        one = [r for r in rows if r["group"] == "seed-004" and r["peer"] == "cv2.filter2D"]
        in_process = ""
        if one:  # the seed-004 row times one 15x15 filter of this image in process
            ms20 = 20 * one[0]["fastconv_ms"]
            in_process = (f" In process (20 × the seed-004 row's fastconv time, the same work as the "
                          f"20 kernels): {ms20:.0f} ms, ratio {seed[1] / ms20:.2f}.")
        algo = f" AUTO runs `{one[0]['algo']}` on this filter." if one else ""
        out += ["", f"Seed 004 (RGB 2048×1157, twenty 15×15 filters): `fastconv filter` with 20 -k/-o pairs "
                f"(one process: start, reading the image and writing twenty 28 MB .npy files included) "
                f"{seed[0]:.0f} ms vs twenty in-process cv2.filter2D {seed[1]:.0f} ms: "
                f"ratio {seed[1] / seed[0]:.2f}.{in_process}{algo}"]
    out += targets(rows, seed, bw)
    out += ["", f"Plots: {a.plots}/time_vs_kernel.png, {a.plots}/gflops_per_layer.png.", END]
    write_block(a.out, "\n".join(out))
    plots(rows, a.plots, peak, bw)
    print(f"compare: wrote {a.out} and plots under {a.plots}", file=sys.stderr)


def targets(rows, seed, bw):
    """Issue 4's targets, checked against this run's rows: one line each, met or missed by how much."""
    by = {}
    for r in rows:
        by.setdefault(r["args"], {})[r["peer"]] = r

    def ratio(args, peer):
        r = by.get(args, {}).get(peer)
        return r["peer_ms"] / r["fastconv_ms"] if r and r["peer_ms"] else None

    def line(name, value, goal, unit="x"):
        if value is None:
            return f"| {name} | not in this run | {goal}{unit} | — |"
        return f"| {name} | {value:.2f}{unit} | {goal}{unit} | {'met' if value >= goal else 'missed'} |"

    out = ["", "### Issue 4's targets in this run", "",
           "| target | measured | goal | |", "|---|---|---|---|"]
    for size, k, goal in (("4096x4096", 3, 2.0), ("2048x2048", 7, 4.0), ("2048x2048", 11, 4.0)):
        out.append(line(f"{size} {k}x{k} vs cv2.filter2D", ratio(f"filter --size {size} --kernel {k}x{k}", "cv2.filter2D"), goal))
    for size in ("2048x2048", "4096x4096"):
        args = f"filter --size {size} --kernel 31x31"
        rs = [ratio(args, p) for p in ("cv2.filter2D", "scipy.signal.fftconvolve", "scipy.signal.oaconvolve")]
        rs = [v for v in rs if v]
        out.append(line(f"{size} 31x31 vs the best of scipy and OpenCV", min(rs) if rs else None, 3.0))
    out.append(line("RGB 1024² 5x5 vs cv2.filter2D", ratio("filter --size 1024x1024x3 --kernel 5x5", "cv2.filter2D"), 3.0))
    out.append(line("1D 10^7 x 255 vs numpy.convolve", ratio("conv1d --size 10000000 --kernel 255 --mode same", "numpy.convolve"), 10.0))
    r8 = by.get(BANDWIDTH_1D, {})
    if r8:
        # Read + write 4 bytes a sample at a non-temporal copy's rate: the median of ten copies
        # timed right after each of fastconv's timings of the shape (this VM's bandwidth swings
        # by 2x between minutes), the ratios' median the measure; for reference, fastconv's
        # median time against the fastest copy of the roofs' run.
        ms = statistics.median(r["fastconv_ms"] for r in r8.values())
        best = 8e8 / (bw * 1e9) * 1e3
        pairs = [(r["fastconv_ms"], 8e8 / (r["stream_median_gbs"] * 1e9) * 1e3) for r in r8.values()
                 if r.get("stream_median_gbs")]
        inproc = [r["bandwidth_1d"] for r in r8.values() if r.get("bandwidth_1d")]
        if inproc:
            # One process, the same two buffers: conv1d and a non-temporal copy of them alternated
            # (bench/bandwidth_1d.c), the median of each run's per-round ratios; the runs' median.
            to_bound = statistics.median(b["ratio"] for b in inproc)
            each = ", ".join(f"{b['fastconv_ms']:.1f}/{b['copy_ms']:.1f}" for b in inproc)
            out.append(f"| 1D 10^8 x 3, time / bandwidth bound: a non-temporal copy of the same 10^8 floats between "
                       f"the same buffers, alternated with fastconv in one process (bench/bandwidth_1d.c; ms/ms: "
                       f"{each}; the CLI's median against the roofs' fastest 256 MiB copy, {best:.1f} ms: "
                       f"{ms / best:.2f}) | {to_bound:.2f} | ≤ 1.25 | {'met' if to_bound <= 1.25 else 'missed'} |")
        elif pairs:
            to_bound = statistics.median(t / b for t, b in pairs)
            each = ", ".join(f"{t:.1f}/{b:.1f}" for t, b in pairs)
            out.append(f"| 1D 10^8 x 3, time / bandwidth bound at the median copy rate measured right after each "
                       f"timing (ms/ms: {each}; against the roofs' fastest copy, {best:.1f} ms: "
                       f"{ms / best:.2f}) | {to_bound:.2f} | ≤ 1.25 | {'met' if to_bound <= 1.25 else 'missed'} |")
        else:
            out.append(f"| 1D 10^8 x 3, time / bandwidth bound ({best:.1f} ms) | {ms / best:.2f} | ≤ 1.25 | "
                       f"{'met' if ms / best <= 1.25 else 'missed'} |")
    conv = {}
    for args, peers in by.items():
        if not args.startswith("conv2d") or "few-channel" == next(iter(peers.values()))["group"]:
            continue
        w = args.split()
        r, s_ = (int(v) for v in w[w.index("--filters") + 1].split("x")[1:])
        strided = "--stride" in w and w[w.index("--stride") + 1] != "1"
        kind = ("3x3" if r == 3 and not strided else "1x1 and strided") + (" (NHWC)" if "--layout nhwc" in args else "")
        dnn = [ratio(args, p) for p in ("oneDNN direct", "oneDNN winograd")]
        dnn = min(v for v in dnn if v) if any(dnn) else None
        conv.setdefault(kind, []).append((args, dnn, ratio(args, "torch conv2d NCHW")))
    layers = conv.get("3x3", [])
    if layers:
        ok_d = [a for a, d, t in layers if d is not None and d >= 1.1]
        ok_t = [a for a, d, t in layers if t is not None and t >= 2.0]
        worst = min(layers, key=lambda x: x[1] or 0)
        out.append(f"| 3x3 layers ≥ 1.1x the faster oneDNN | {len(ok_d)} of {len(layers)} (worst {worst[1]:.2f}x, "
                   f"`{worst[0]}`) | all | {'met' if len(ok_d) == len(layers) else 'missed'} |")
        worst = min(layers, key=lambda x: x[2] or 0)
        out.append(f"| 3x3 layers ≥ 2x torch NCHW | {len(ok_t)} of {len(layers)} (worst {worst[2]:.2f}x, "
                   f"`{worst[0]}`) | all | {'met' if len(ok_t) == len(layers) else 'missed'} |")
    for layout in ("", " (NHWC)"):
        layers = conv.get("1x1 and strided" + layout, [])
        if layers:
            ok = [a for a, d, t in layers if d is not None and d >= 0.95]
            worst = min(layers, key=lambda x: x[1] or 0)
            out.append(f"| 1x1 and strided layers{layout} ≥ 0.95x oneDNN | {len(ok)} of {len(layers)} (worst "
                       f"{worst[1]:.2f}x, `{worst[0]}`) | all | {'met' if len(ok) == len(layers) else 'missed'} |")
    layers = conv.get("3x3 (NHWC)", [])
    if layers:
        ok = [a for a, d, t in layers if d is not None and d >= 1.1]
        worst = min(layers, key=lambda x: x[1] or 0)
        out.append(f"| 3x3 layers (NHWC) ≥ 1.1x the faster oneDNN | {len(ok)} of {len(layers)} (worst {worst[1]:.2f}x, "
                   f"`{worst[0]}`) | all | {'met' if len(ok) == len(layers) else 'missed'} |")
    for args, peers in by.items():
        if next(iter(peers.values()))["group"] == "few-channel":
            rs = [ratio(args, p) for p in peers if by[args][p]["peer_ms"]]
            out.append(line(f"few-channel `{args}` vs every peer", min(rs) if rs else None, 5.0))
    one = by.get("filter --size 1157x2048x3 --kernel 15x15 --correlate --border reflect", {}).get("cv2.filter2D")
    if seed and one:
        out.append(line("seed 004 in process vs twenty cv2.filter2D", seed[1] / (20 * one["fastconv_ms"]), 3.0))
    return out


def plots(rows, folder, peak, bw):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(folder, exist_ok=True)
    img = [r for r in rows if r["group"] == "image"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    sizes = sorted({parse_args_line(r["args"])["size"] for r in img})
    for size in sizes:
        sel = [r for r in img if parse_args_line(r["args"])["size"] == size]
        ks = sorted({int(parse_args_line(r["args"])["kernel"].split("x")[0]) for r in sel})

        def series(key, peer=None):
            out = []
            for k in ks:
                m = [r for r in sel if parse_args_line(r["args"])["kernel"] == f"{k}x{k}" and (peer is None or r["peer"] == peer)]
                out.append(m[0][key] if m and m[0][key] else float("nan"))
            return out
        ax.plot(ks, series("fastconv_ms"), "o-", label=f"fastconv {size}")
        ax.plot(ks, series("peer_ms", "cv2.filter2D"), "x--", label=f"cv2.filter2D {size}")
    ax.set_xlabel("kernel size")
    ax.set_ylabel("ms (2 threads)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title("image filtering: time vs kernel size")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "time_vs_kernel.png"), dpi=110)
    plt.close(fig)
    layers = []
    for r in rows:
        if (r["group"] in NHWC_GROUPS and "--layout nhwc" not in r["args"] and
                r["args"] not in [l["args"] for l in layers]):
            layers.append(r)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if layers:
        ax.bar(range(len(layers)), [100 * l["gflops"] / peak for l in layers])
        ax.set_xticks(range(len(layers)))
        ax.set_xticklabels([l["args"].replace("conv2d --input ", "").replace(" --filters ", " k") for l in layers],
                           rotation=60, ha="right", fontsize=6)
    ax.set_ylabel(f"% of peak ({peak:.0f} GFLOP/s)")
    ax.set_title(f"CNN layers: fastconv GFLOP/s as % of peak (bandwidth {bw:.1f} GB/s)")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "gflops_per_layer.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
