#!/usr/bin/env python3
"""
GPU comparison on a machine with an NVIDIA GPU (docs/gpu.md): every shape of
`fastconv bench suite --list`, every GPU algorithm of fastconv and AUTO (`--device cuda`,
kernel time from device events, transfers apart), against cuDNN through
torch.nn.functional.conv2d (NCHW, float32 with TF32 off, and with TF32 on as PyTorch's
default for convolutions) and CuPy (cupyx.scipy.ndimage.correlate, cupyx.scipy.signal.fftconvolve,
cupy.convolve for 1D). Peers are timed on device-resident data with CUDA events (median of
--reps after a warm-up), so they compare with fastconv's kernel time.

  python3 bench/gpu_compare.py --cli build/fastconv [--reps 10] [--group G ...]
         [--only REGEX] [--algo LIST] [--baseline-cli OLD/fastconv --baseline-algo LIST]
         [--json-out F] [--md-out F]

--algo limits fastconv's algorithms (a comma list, each timed on its own, those that
decline a shape left out; default all; AUTO is always added); --baseline-cli also times
another build (an earlier commit, say) in the same run, its rows under "baseline" in the
JSON and its AUTO as a table column; --only keeps the suite lines matching a regex.

Peers that are not installed are reported as such; nothing is downloaded.
"""
import argparse
import json
import re
import shlex
import statistics
import subprocess
import sys


def fastconv_rows(cli, device, reps, args, algo="all"):
    """Rows of `fastconv bench --json`: of every algorithm with "all", else of each listed one
    timed on its own, those that decline the shape left out."""
    if algo != "all" and "," in algo:
        rows, failed = [], None
        for name in algo.split(","):
            r = fastconv_rows(cli, device, reps, args, name)
            if isinstance(r, list):
                rows += r
            elif not ("needs" in r["failed"] or "does not serve" in r["failed"]):
                failed = r
        return rows if rows else (failed or {"failed": "every algorithm declined"})
    out = subprocess.run([cli, "bench", *args, "--device", device, "--algo", algo, "--reps",
                          str(reps), "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        return {"failed": out.stderr.strip()}
    return json.loads(out.stdout)


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


def parse(args):
    """The `fastconv bench` arguments of one suite line as a dict of option -> value."""
    kind, rest = args[0], args[1:]
    opts = {}
    i = 0
    while i < len(rest):
        if i + 1 < len(rest) and not rest[i + 1].startswith("--"):
            opts[rest[i][2:]] = rest[i + 1]
            i += 2
        else:
            opts[rest[i][2:]] = True
            i += 1
    return kind, opts


def dims(text):
    return [int(v) for v in text.split("x")]


def peers(kind, o, reps):
    """Peer name -> milliseconds (device-resident data), or a string saying why not."""
    import torch
    res = {}
    if kind == "conv2d":
        n, c, h, w = dims(o["input"])
        k, r, s = dims(o["filters"])
        st = int(o.get("stride", "1").split(",")[0])
        p = int(o.get("pad", "0").split(",")[0])
        x = torch.randn(n, c, h, w, device="cuda")
        wt = torch.randn(k, c, r, s, device="cuda")
        torch.backends.cudnn.benchmark = True
        for name, tf32 in (("cudnn", False), ("cudnn-tf32", True)):
            torch.backends.cudnn.allow_tf32 = tf32
            res[name] = cuda_time(lambda: torch.nn.functional.conv2d(x, wt, stride=st, padding=p), reps)
        torch.backends.cudnn.allow_tf32 = False
        return res
    try:
        import cupy
        import cupyx.scipy.ndimage as ndi
        import cupyx.scipy.signal as sig
    except ImportError as e:
        return {"cupy": f"not installed ({e})"}
    if kind == "filter":
        size = dims(o["size"])
        kh, kw = dims(o["kernel"])
        img = cupy.random.standard_normal(size, dtype=cupy.float32)
        ker = cupy.random.standard_normal((kh, kw) + ((1,) if len(size) == 3 else ()),
                                          dtype=cupy.float32)
        mode = "reflect" if o.get("border") == "reflect" else "constant"
        res["cupy-ndimage"] = cuda_time(lambda: ndi.correlate(img, ker, mode=mode), reps)
        res["cupy-fftconvolve"] = cuda_time(lambda: sig.fftconvolve(img, ker, mode="same",
                                                                    axes=(0, 1)), reps)
    elif kind == "conv1d":
        n, m = int(o["size"]), int(o["kernel"])
        a = cupy.random.standard_normal(n, dtype=cupy.float32)
        v = cupy.random.standard_normal(m, dtype=cupy.float32)
        res["cupy-convolve"] = cuda_time(lambda: cupy.convolve(a, v, mode="same"), reps)
        res["cupy-fftconvolve"] = cuda_time(lambda: sig.fftconvolve(a, v, mode="same"), reps)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--cli", default="build/fastconv")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--group", action="append", help="only these suite groups (repeatable)")
    ap.add_argument("--only", help="only the shapes whose suite line matches this regex")
    ap.add_argument("--algo", default="all", help="fastconv algorithms (comma list; AUTO is added)")
    ap.add_argument("--baseline-cli", help="another fastconv build to time in the same run")
    ap.add_argument("--baseline-algo", default="auto", help="its algorithms (comma list)")
    ap.add_argument("--json-out", help="write every row here")
    ap.add_argument("--md-out", help="write the markdown table here")
    a = ap.parse_args()
    listing = subprocess.run([a.cli, "bench", "suite", "--list"], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    try:
        import torch
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    results = []
    for line in listing:
        group, cmd = line.split("\t", 1)
        if a.group and group not in a.group:
            continue
        if a.only and not re.search(a.only, cmd):
            continue
        args = shlex.split(cmd)
        kind, opts = parse(args)
        print(f"[{len(results) + 1}] {group} {cmd}", file=sys.stderr, flush=True)
        algo = a.algo if a.algo == "all" or "auto" in a.algo.split(",") else a.algo + ",auto"
        rows = fastconv_rows(a.cli, a.device, a.reps, args, algo)
        base = (fastconv_rows(a.baseline_cli, a.device, a.reps, args, a.baseline_algo)
                if a.baseline_cli else None)
        try:
            peer = peers(kind, opts, a.reps) if have_torch else {"torch": "no CUDA torch"}
        except Exception as e:  # a peer that fails must not stop the run
            peer = {"error": f"{type(e).__name__}: {e}"}
        results.append({"group": group, "args": cmd, "fastconv": rows, "peers": peer})
        if base is not None:
            results[-1]["baseline"] = base
        if a.json_out:  # after every shape: a run cut short keeps what it measured
            with open(a.json_out, "w") as f:
                json.dump(results, f, indent=1)
    md = table(results)
    print(md)
    if a.md_out:
        with open(a.md_out, "w") as f:
            f.write(md)


def table(results):
    base = any("baseline" in r for r in results)
    lines = ["| group | problem | AUTO (its choice) kernel ms | best fastconv kernel ms (algo) | "
             "transfer ms | peers ms | best peer / AUTO |" + (" baseline AUTO ms |" if base else ""),
             "|---|---|---|---|---|---|---|" + ("---|" if base else "")]
    for r in results:
        rows = r["fastconv"]
        if isinstance(rows, dict):
            lines.append(f"| {r['group']} | {r['args']} | failed: {rows['failed']} | | | | |" +
                         (" |" if base else ""))
            continue
        auto = next(x for x in rows if x["requested"] == "auto")
        best = min((x for x in rows if x["requested"] != "auto"), key=lambda x: x["kernel_ms"])
        num = {k: v for k, v in r["peers"].items() if isinstance(v, float)}
        exact = {k: v for k, v in num.items() if k != "cudnn-tf32"}
        peer_txt = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k}: {v}"
                             for k, v in r["peers"].items())
        ratio = f"{min(exact.values()) / auto['kernel_ms']:.2f}" if exact else "-"
        old = ""
        if base:
            b = r.get("baseline")
            b_auto = (next((x for x in b if x["requested"] == "auto"), None)
                      if isinstance(b, list) else None)
            old = f" {b_auto['kernel_ms']:.3f} ({b_auto['algo']}) |" if b_auto else " - |"
        lines.append(f"| {r['group']} | {r['args']} | {auto['kernel_ms']:.3f} ({auto['algo']}) | "
                     f"{best['kernel_ms']:.3f} ({best['algo']}) | {auto['transfer_ms']:.3f} | "
                     f"{peer_txt} | {ratio} |{old}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
