"""
The UMI applications through the CLI: `fastconv match`, `stereo` and `bilateral` against
plain numpy references on small random inputs (integer-valued, so the SAD costs are exact
and the arg-mins must agree exactly), the ground truth of the bundled motion and stereo
pairs, and bad inputs (one-line error, non-zero exit, no output file).
"""
import os
import subprocess

import numpy as np
import pytest

from conftest import make_rng, source_dir

CLI = os.environ.get("FASTCONV_CLI")
SAMPLE = os.path.join(source_dir(), "data", "sample")


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=120)


def run_ok(*args):
    p = run(*args)
    assert p.returncode == 0, p.stderr
    return p


# ---- references -------------------------------------------------------------------------------

def match_ref(f0, f1, b, r):
    h, w = f0.shape
    out = np.zeros((h // b, w // b, 2), np.float32)
    for by in range(h // b):
        for bx in range(w // b):
            y0, x0 = by * b, bx * b
            blk = f0[y0:y0 + b, x0:x0 + b].astype(np.float64)
            best = None
            for dy in range(-r, r + 1):
                for dx in range(-r, r + 1):
                    if y0 + dy < 0 or x0 + dx < 0 or y0 + dy + b > h or x0 + dx + b > w:
                        continue
                    cost = np.abs(f1[y0 + dy:y0 + dy + b, x0 + dx:x0 + dx + b] - blk).sum()
                    key = (cost, dx * dx + dy * dy)
                    if best is None or key < best[0]:
                        best = (key, dx, dy)
            out[by, bx] = best[1], best[2]
    return out


def box_sum(a, k):
    """Sums over k x k windows of a (valid): shape (H - k + 1, W - k + 1)."""
    c = np.cumsum(np.cumsum(np.pad(a, ((1, 0), (1, 0))), axis=0), axis=1)
    return c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]


def stereo_ref(left, right, b, dmax):
    h, w = left.shape
    r = b // 2
    lp = np.pad(left.astype(np.float64), r, mode="edge")
    rrows = np.pad(right.astype(np.float64), ((r, r), (0, 0)), mode="edge")
    costs = []
    for d in range(dmax + 1):
        cols = np.clip(np.arange(-r, w + r) - d, 0, w - 1)  # the window coordinate is clamped
        costs.append(box_sum(np.abs(lp - rrows[:, cols]), b))
    costs = np.stack(costs)                       # (D+1, H, W)
    x = np.arange(w)[None, None, :]
    costs[np.broadcast_to(np.arange(dmax + 1)[:, None, None] > x, costs.shape)] = np.inf  # d <= x
    return np.argmin(costs, axis=0).astype(np.float32)       # first minimum: smallest d


def bilateral_ref(x, ss, sr, radius):
    x = x.astype(np.float64)
    squeeze = x.ndim == 2
    if squeeze:
        x = x[..., None]
    h, w, _ = x.shape
    xp = np.pad(x, ((radius, radius), (radius, radius), (0, 0)), mode="reflect")
    ws = np.zeros_like(x)
    wx = np.zeros_like(x)
    for i in range(-radius, radius + 1):
        for j in range(-radius, radius + 1):
            if i * i + j * j > radius * radius:
                continue
            n = xp[radius + i:radius + i + h, radius + j:radius + j + w]
            wt = np.exp(-(i * i + j * j) / (2 * ss * ss)) * np.exp(-(n - x) ** 2 / (2 * sr * sr))
            ws += wt
            wx += wt * n
    y = wx / ws
    return y[..., 0] if squeeze else y


# ---- against the references -------------------------------------------------------------------

@pytest.mark.parametrize("shape,b,r", [((40, 56), 8, 3), ((33, 29), 4, 2), ((17, 23), 5, 0), ((12, 12), 3, 6)])
def test_match_equals_reference(tmp_path, shape, b, r):
    rng = make_rng(501, shape, b, r)
    f0 = rng.integers(0, 256, shape).astype(np.float32)
    f1 = np.roll(f0, (1, -2), axis=(0, 1)) + rng.integers(0, 20, shape).astype(np.float32)
    np.save(tmp_path / "f0.npy", f0)
    np.save(tmp_path / "f1.npy", f1)
    run_ok("match", tmp_path / "f0.npy", tmp_path / "f1.npy", "-o", tmp_path / "v.npy",
           "--block", b, "--search", r, "--threads", 2)
    np.testing.assert_array_equal(np.load(tmp_path / "v.npy"), match_ref(f0, f1, b, r))


@pytest.mark.parametrize("shape,b,d", [((30, 50), 5, 8), ((21, 40), 1, 5), ((25, 31), 7, 30)])
def test_stereo_equals_reference(tmp_path, shape, b, d):
    rng = make_rng(502, shape, b, d)
    left = rng.integers(0, 256, shape).astype(np.float32)
    right = np.roll(left, -3, axis=1) + rng.integers(0, 30, shape).astype(np.float32)
    np.save(tmp_path / "l.npy", left)
    np.save(tmp_path / "r.npy", right)
    run_ok("stereo", tmp_path / "l.npy", tmp_path / "r.npy", "-o", tmp_path / "d.npy",
           "--block", b, "--max-disparity", d)
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), stereo_ref(left, right, b, d))


def test_stereo_and_match_non_integer_inputs(tmp_path):
    """Halves are not integers, so the CLI takes the direct UMI SAD path (the box-sum path
    is used only where it is bit-identical); sums of halves are still exact in float32."""
    rng = make_rng(504)
    left = rng.integers(0, 512, (26, 40)).astype(np.float32) / 2
    right = np.roll(left, -2, axis=1) + rng.integers(0, 9, left.shape).astype(np.float32) / 2
    np.save(tmp_path / "l.npy", left)
    np.save(tmp_path / "r.npy", right)
    run_ok("stereo", tmp_path / "l.npy", tmp_path / "r.npy", "-o", tmp_path / "d.npy", "--block", 5,
           "--max-disparity", 6)
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), stereo_ref(left, right, 5, 6))
    run_ok("match", tmp_path / "l.npy", tmp_path / "r.npy", "-o", tmp_path / "v.npy", "--block", 6,
           "--search", 3)
    np.testing.assert_array_equal(np.load(tmp_path / "v.npy"), match_ref(left, right, 6, 3))


@pytest.mark.parametrize("shape", [(23, 31), (19, 26, 3), (9, 7, 2)])
def test_bilateral_equals_reference(tmp_path, shape):
    rng = make_rng(503, shape)
    x = (rng.random(shape) * 255).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    run_ok("bilateral", tmp_path / "x.npy", "-o", tmp_path / "y.npy", "--sigma-space", 2,
           "--sigma-range", 40, "--radius", 3)
    y = np.load(tmp_path / "y.npy")
    assert y.shape == x.shape
    np.testing.assert_allclose(y, bilateral_ref(x, 2.0, 40.0, 3), rtol=0, atol=2e-3)


def test_bilateral_default_radius_and_image(tmp_path):
    run_ok("bilateral", os.path.join(SAMPLE, "scene.png"), "-o", tmp_path / "s.png", "--sigma-space", 1.5)
    run_ok("bilateral", os.path.join(SAMPLE, "scene.png"), "-o", tmp_path / "s.npy", "--sigma-space", 1.5)
    y = np.load(tmp_path / "s.npy")
    assert y.shape == (480, 640, 3)
    # A flat-ish region stays, noise shrinks: the filtered sky is smoother than the input.
    run_ok("filter", os.path.join(SAMPLE, "scene.png"), "-k", "identity", "-o", tmp_path / "x.npy")
    x = np.load(tmp_path / "x.npy")
    ref = bilateral_ref(x[100:140, 20:60], 1.5, 30.0, 2)  # radius round(1.5 * 1.5) = 2
    np.testing.assert_allclose(y[102:138, 22:58], ref[2:-2, 2:-2], atol=2e-3)
    assert y[380:470, 200:400].std() > 0


# ---- the bundled data ------------------------------------------------------------------------

def test_match_recovers_bundled_motion(tmp_path):
    run_ok("match", os.path.join(SAMPLE, "scene-gray.png"), os.path.join(SAMPLE, "motion-frame1.png"),
           "-o", tmp_path / "v.npy", "--block", 8, "--search", 7, "--viz", tmp_path / "v.png")
    v = np.load(tmp_path / "v.npy")
    gt = np.load(os.path.join(SAMPLE, "motion-gt.npy"))
    known = ~np.isnan(gt[..., 0])
    assert known.sum() > 4000 and (gt[..., 0] == -4).sum() >= 100
    np.testing.assert_array_equal(v[known], gt[known])
    assert os.path.getsize(tmp_path / "v.png") > 0


def test_stereo_recovers_bundled_disparity(tmp_path):
    b, dmax = 9, 32
    run_ok("stereo", os.path.join(SAMPLE, "scene-gray.png"), os.path.join(SAMPLE, "stereo-right.png"),
           "-o", tmp_path / "d.npy", "--block", b, "--max-disparity", dmax, "--viz", tmp_path / "d.png")
    d = np.load(tmp_path / "d.npy")
    gt = np.load(os.path.join(SAMPLE, "stereo-gt.npy")).astype(np.int64)
    h, w = gt.shape
    r = b // 2
    # Away from occlusions: every pixel of the window has the same known disparity, and
    # the window stays inside both views.
    g = np.where(gt == 255, -1, gt)
    gp = np.pad(g, r, mode="constant", constant_values=-1)
    win = np.lib.stride_tricks.sliding_window_view(gp, (b, b))
    uniform = (win.min(axis=(2, 3)) == win.max(axis=(2, 3))) & (g >= 0)
    uniform[:, :dmax + r] = False
    uniform[:, w - r:] = False
    assert uniform.sum() > 200000
    np.testing.assert_array_equal(d[uniform], gt[uniform])


# ---- bad inputs ------------------------------------------------------------------------------

def _expect_error(tmp_path, args, text, out="out.npy"):
    p = run(*args)
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], p.stderr
    assert not os.path.exists(tmp_path / out)


def test_bad_inputs(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((20, 30), np.float32))
    np.save(tmp_path / "b.npy", np.zeros((20, 31), np.float32))
    np.save(tmp_path / "c.npy", np.zeros((4, 5, 6, 7), np.float32))
    a, b, c, o = tmp_path / "a.npy", tmp_path / "b.npy", tmp_path / "c.npy", tmp_path / "out.npy"
    _expect_error(tmp_path, ["match", a, b, "-o", o], "frames differ in size")
    _expect_error(tmp_path, ["match", a, a, "-o", o, "--block", 21], "larger than the frames")
    _expect_error(tmp_path, ["match", a, a, "-o", o, "--block", 0], "--block")
    _expect_error(tmp_path, ["match", a, a, "-o", o, "--search", -1], "--search")
    _expect_error(tmp_path, ["match", a, c, "-o", o], "2D")
    _expect_error(tmp_path, ["match", a, tmp_path / "missing.npy", "-o", o], "missing.npy")
    _expect_error(tmp_path, ["match", a, a, "-o", o, "--viz", tmp_path / "v.txt"], "picture")
    _expect_error(tmp_path, ["match", a, a], "missing -o")
    _expect_error(tmp_path, ["stereo", a, b, "-o", o], "differ in size")
    _expect_error(tmp_path, ["stereo", a, a, "-o", o, "--block", 4], "odd")
    _expect_error(tmp_path, ["stereo", a, a, "-o", o, "--max-disparity", 30], "below the image width")
    _expect_error(tmp_path, ["stereo", a, a, "-o", o, "--max-disparity", 0], "--max-disparity")
    _expect_error(tmp_path, ["bilateral", a, "-o", o, "--sigma-space", 0], "--sigma-space")
    _expect_error(tmp_path, ["bilateral", a, "-o", o, "--sigma-range", "nan"], "--sigma-range")
    _expect_error(tmp_path, ["bilateral", a, "-o", o, "--radius", 65], "--radius")
    _expect_error(tmp_path, ["bilateral", c, "-o", o], "2D")
    _expect_error(tmp_path, ["bilateral", a, "-o", tmp_path / "out.xyz"], "unknown output format", out="out.xyz")
    np.save(tmp_path / "rgb.npy", np.zeros((5, 5, 3), np.float32))
    _expect_error(tmp_path, ["bilateral", tmp_path / "rgb.npy", "-o", tmp_path / "out.pgm"], "channels", out="out.pgm")
