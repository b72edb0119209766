"""
The fastconv command-line tool on files in a temporary directory: results against the
float64 references (and the library), image formats, .npy variants, and every kind of bad
input (exit code != 0, one line on stderr naming the problem, no output file written and an
existing one left byte-identical).

Images are read back without PIL: `fastconv filter X.png -k identity -o X.npy` is the
round trip (identity in 'same' mode with the zero border is exact).
"""
import os
import re
import resource
import struct
import subprocess
import time

import numpy as np
import pytest

from conftest import (make_rng, algo_infos, algorithms, assert_close, cli_path, conv1d, conv2d_reference, error_bound,
                      filter2d, filter2d_reference, get_lib, run_cli, source_dir)

# The CLI plans with AUTO: the default tolerance bounds its error.
BOUND = 1e-5

SCENE = os.path.join(source_dir(), "data", "sample", "scene.png")
SCENE_GRAY = os.path.join(source_dir(), "data", "sample", "scene-gray.png")

BUILTIN_KERNELS = ["identity", "edge1", "edge2", "edge3", "sharpen", "box3", "box5", "gaussian3",
                   "gaussian5", "unsharp5", "sobel-x", "sobel-y", "sobel-mag", "laplacian", "emboss"]

# The built-in kernels as documented in cli/kernels.c (convolution orientation).
KERNEL_VALUES = {
    "identity": [[0, 0, 0], [0, 1, 0], [0, 0, 0]],
    "sobel-x": [[1, 0, -1], [2, 0, -2], [1, 0, -1]],
    "sobel-y": [[1, 2, 1], [0, 0, 0], [-1, -2, -1]],
    "box3": np.ones((3, 3)) / 9,
    "box5": np.ones((5, 5)) / 25,
    "gaussian3": np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16,
    "laplacian": [[0, 1, 0], [1, -4, 1], [0, 1, 0]],
    "sharpen": [[0, -1, 0], [-1, 5, -1], [0, -1, 0]],
}
# Sum of each built-in kernel's taps: a constant image with the replicate border comes out
# multiplied by it.
KERNEL_SUMS = {"identity": 1, "edge1": 0, "edge2": 0, "edge3": 0, "sharpen": 1, "box3": 1,
               "box5": 1, "gaussian3": 1, "gaussian5": 1, "unsharp5": 1, "sobel-x": 0, "sobel-y": 0,
               "sobel-mag": 0, "laplacian": 0, "emboss": 1}


def ok(*args):
    """Run the CLI and require success with nothing on stderr."""
    rc, out, err = run_cli(*args)
    assert rc == 0, f"fastconv {' '.join(map(str, args))}: exit {rc}: {err}"
    assert err == "", err
    return out


def read_image(path, tmp_path):
    """Pixels of an image file as float32 H x W (x C), through the CLI's identity filter."""
    back = tmp_path / (os.path.basename(str(path)) + ".back.npy")
    ok("filter", path, "-k", "identity", "-o", back)
    return np.load(back)


def to_image_values(y, depth=8):
    """What an image writer stores: round to nearest, clamp to [0, 2^depth - 1], NaN -> 0."""
    y = np.nan_to_num(np.asarray(y, dtype=np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)
    return np.clip(np.floor(y + 0.5), 0, 2**depth - 1)


def assert_image_values(got, y, depth=8):
    """got (read back from an image) equals y rounded and clamped; a value within 1e-3 of a
    .5 tie may round either way."""
    want = to_image_values(y, depth)
    y64 = np.asarray(y, dtype=np.float64)
    tie = np.abs(y64 - np.floor(y64) - 0.5) < 1e-3
    diff = np.abs(got - want)
    assert np.all((diff == 0) | (tie & (diff <= 1))), f"max diff {diff.max()}"


def save(path, arr):
    np.save(path, arr)
    return path


# ==========================================================================================
# filter on .npy
# ==========================================================================================

@pytest.mark.parametrize("shape", [(17, 23), (15, 12, 3), (9, 8, 1), (6, 7, 5)],
                         ids=["2d", "3d-rgb", "3d-1ch", "3d-5ch"])
def test_filter_npy_matches_reference(tmp_path, shape):
    rng = make_rng(len(shape) * 100 + shape[-1])
    x = rng.standard_normal(shape).astype(np.float32)
    k = rng.standard_normal((4, 3)).astype(np.float32)
    save(tmp_path / "x.npy", x)
    save(tmp_path / "k.npy", k)
    ok("filter", tmp_path / "x.npy", "-k", tmp_path / "k.npy", "-o", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == np.float32 and y.shape == x.shape
    assert_close(y, filter2d_reference(x, k), filter2d_reference(np.abs(x), np.abs(k)), BOUND)
    assert_close(y, filter2d(x, k), filter2d_reference(np.abs(x), np.abs(k)), BOUND, "library")


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("border", ["zero", "constant=2.5", "replicate", "reflect", "mirror", "wrap"])
@pytest.mark.parametrize("correlate", [False, True], ids=["convolve", "correlate"])
def test_filter_options(tmp_path, mode, border, correlate):
    rng = make_rng(7)
    x = rng.standard_normal((11, 9, 2)).astype(np.float32)
    k = rng.standard_normal((4, 5)).astype(np.float32)
    save(tmp_path / "x.npy", x)
    save(tmp_path / "k.npy", k)
    args = ["filter", tmp_path / "x.npy", "-k", tmp_path / "k.npy", "-o", tmp_path / "y.npy",
            "--mode", mode, "--border", border] + (["--correlate"] if correlate else [])
    ok(*args)
    name, _, v = border.partition("=")
    value = float(v) if v else 0.0
    ref = filter2d_reference(x, k, mode, name, value, correlate)
    scale = filter2d_reference(np.abs(x), np.abs(k), mode, name, abs(value), correlate)
    y = np.load(tmp_path / "y.npy")
    assert y.shape == ref.shape
    assert_close(y, ref, scale, BOUND)


@pytest.mark.parametrize("algo", algorithms("filter2d") + ["auto"])
def test_filter_algo_and_threads(tmp_path, algo):
    """--algo and --threads on a 5x5 kernel; an algorithm that cannot serve it (Winograd is
    3x3 only) must refuse cleanly: exit 1, its name and reason on stderr, no output."""
    rng = make_rng(8)
    x = rng.standard_normal((20, 18)).astype(np.float32)
    save(tmp_path / "x.npy", x)
    bound = BOUND if algo == "auto" else error_bound(algo)
    for threads in ("1", "2", "0"):
        args = ("filter", tmp_path / "x.npy", "-k", "gaussian5", "-o", tmp_path / "y.npy", "--algo", algo,
                "--threads", threads)
        rc, _, err = run_cli(*args)
        if rc != 0 and algo != "auto":
            assert rc == 1 and algo in err and len(err.strip().splitlines()) == 1, err
            assert not (tmp_path / "y.npy").exists()
            pytest.skip(f"{algo} declines a 5x5 kernel: {err.strip()}")
        assert rc == 0, f"fastconv {' '.join(map(str, args))}: exit {rc}: {err}"
        k = np.array([[1, 4, 6, 4, 1], [4, 16, 24, 16, 4], [6, 24, 36, 24, 6], [4, 16, 24, 16, 4],
                      [1, 4, 6, 4, 1]]) / 256
        assert_close(np.load(tmp_path / "y.npy"), filter2d_reference(x, k),
                     filter2d_reference(np.abs(x), k), bound)


def test_filter_several_pairs(tmp_path):
    """Several -k/-o pairs in one call: one output per kernel, each its own format."""
    rng = make_rng(9)
    x = (rng.random((16, 20)) * 255).astype(np.float32)
    save(tmp_path / "x.npy", x)
    k = rng.standard_normal((3, 2)).astype(np.float32)
    save(tmp_path / "k.npy", k)
    ok("filter", tmp_path / "x.npy", "-k", "box3", "-o", tmp_path / "a.npy", "-k", "sobel-x", "-o",
       tmp_path / "b.npy", "-k", tmp_path / "k.npy", "-o", tmp_path / "c.npy", "-k", "identity",
       "-o", tmp_path / "d.png")
    for name, kern in (("a", np.ones((3, 3)) / 9), ("b", KERNEL_VALUES["sobel-x"]), ("c", k)):
        kern = np.asarray(kern, dtype=np.float32)
        assert_close(np.load(tmp_path / f"{name}.npy"), filter2d_reference(x, kern),
                     filter2d_reference(x, np.abs(kern)), BOUND, name)
    assert_image_values(read_image(tmp_path / "d.png", tmp_path), x)


@pytest.mark.parametrize("name", sorted(KERNEL_VALUES))
def test_builtin_kernel_values(tmp_path, name):
    rng = make_rng(10)
    x = rng.standard_normal((9, 10)).astype(np.float32)
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", name, "-o", tmp_path / "y.npy")
    k = np.asarray(KERNEL_VALUES[name], dtype=np.float64)
    assert_close(np.load(tmp_path / "y.npy"), filter2d_reference(x, k),
                 filter2d_reference(np.abs(x), np.abs(k)), BOUND)


@pytest.mark.parametrize("name", BUILTIN_KERNELS)
def test_builtin_kernel_sums(tmp_path, name):
    """A constant image with the replicate border comes out multiplied by the kernel's sum
    (1 for smoothing/sharpening kernels, 0 for edge detectors)."""
    x = np.full((8, 9), 3.0, dtype=np.float32)
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", name, "-o", tmp_path / "y.npy", "--border", "replicate")
    y = np.load(tmp_path / "y.npy")
    assert np.allclose(y, 3.0 * KERNEL_SUMS[name], atol=1e-4), (name, y.min(), y.max())


def test_sobel_orientation(tmp_path):
    """sobel-x is positive where the image gets brighter to the right, sobel-y where it gets
    brighter downwards (cli/kernels.c)."""
    ramp_x = np.tile(np.arange(10, dtype=np.float32), (8, 1))
    save(tmp_path / "rx.npy", ramp_x)
    save(tmp_path / "ry.npy", np.ascontiguousarray(ramp_x.T))
    ok("filter", tmp_path / "rx.npy", "-k", "sobel-x", "-o", tmp_path / "gx.npy", "-k", "sobel-y", "-o",
       tmp_path / "gy.npy", "--mode", "valid")
    ok("filter", tmp_path / "ry.npy", "-k", "sobel-y", "-o", tmp_path / "gyy.npy", "--mode", "valid")
    assert np.allclose(np.load(tmp_path / "gx.npy"), 8.0)
    assert np.allclose(np.load(tmp_path / "gy.npy"), 0.0)
    assert np.allclose(np.load(tmp_path / "gyy.npy"), 8.0)


@pytest.mark.parametrize("shape", [(14, 15), (10, 12, 3)], ids=["2d", "3d"])
def test_sobel_mag(tmp_path, shape):
    rng = make_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", "sobel-x", "-o", tmp_path / "gx.npy", "-k", "sobel-y", "-o",
       tmp_path / "gy.npy", "-k", "sobel-mag", "-o", tmp_path / "mag.npy", "--border", "reflect")
    gx, gy, mag = (np.load(tmp_path / f).astype(np.float64) for f in ("gx.npy", "gy.npy", "mag.npy"))
    assert mag.shape == x.shape
    assert np.allclose(mag, np.sqrt(gx**2 + gy**2), rtol=1e-5, atol=1e-5)
    # And against float64 numpy.
    sx = filter2d_reference(x, np.array(KERNEL_VALUES["sobel-x"], float), border="reflect")
    sy = filter2d_reference(x, np.array(KERNEL_VALUES["sobel-y"], float), border="reflect")
    scale = filter2d_reference(np.abs(x), np.abs(np.array(KERNEL_VALUES["sobel-x"], float)), border="reflect")
    assert_close(mag, np.sqrt(sx**2 + sy**2), scale, 2 * BOUND)


# ==========================================================================================
# filter on images
# ==========================================================================================

@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """scene.png's pixels (480 x 640 x 3, values 0..255)."""
    d = tmp_path_factory.mktemp("scene")
    ok("filter", SCENE, "-k", "identity", "-o", d / "scene.npy")
    x = np.load(d / "scene.npy")
    assert x.shape == (480, 640, 3)
    assert x.min() >= 0 and x.max() <= 255 and np.array_equal(x, np.round(x))
    return x


def test_builtin_kernels_on_scene(tmp_path, scene):
    """Every built-in kernel on scene.png writes a PNG whose pixels are the float result
    rounded and clamped to 0..255 (one call, one output per kernel)."""
    args = ["filter", SCENE]
    for name in BUILTIN_KERNELS:
        args += ["-k", name, "-o", tmp_path / f"{name}.png"]
    args += ["-k", "sobel-mag", "-o", tmp_path / "sobel-mag.npy", "-k", "gaussian5", "-o",
             tmp_path / "gaussian5.npy"]
    ok(*args)
    for name in BUILTIN_KERNELS:
        with open(tmp_path / f"{name}.png", "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n", name
    for name in ("sobel-mag", "gaussian5"):
        y = np.load(tmp_path / f"{name}.npy")
        assert y.shape == scene.shape
        assert_image_values(read_image(tmp_path / f"{name}.png", tmp_path), y)
    for name in ("identity", "box3", "sharpen"):
        got = read_image(tmp_path / f"{name}.png", tmp_path)
        k = np.asarray(KERNEL_VALUES[name], dtype=np.float64)
        assert_image_values(got, filter2d_reference(scene, k).astype(np.float32))


def test_gray_image(tmp_path):
    ok("filter", SCENE_GRAY, "-k", "box3", "-o", tmp_path / "g.png", "-k", "identity", "-o", tmp_path / "g.npy",
       "-k", "identity", "-o", tmp_path / "g.pgm")
    g = np.load(tmp_path / "g.npy")
    assert g.shape == (480, 640)
    assert_image_values(read_image(tmp_path / "g.png", tmp_path), filter2d_reference(g, np.ones((3, 3)) / 9))
    assert np.array_equal(read_image(tmp_path / "g.pgm", tmp_path), g)
    with open(tmp_path / "g.pgm", "rb") as f:
        assert f.read(2) == b"P5"


def test_png_of_npy_is_clamped(tmp_path):
    x = np.array([[-50.0, -0.4, 0.4, 0.6], [12.4, 12.6, 254.4, 254.6], [255.0, 300.0, 1e9, -1e9]],
                 dtype=np.float32)
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", "identity", "-o", tmp_path / "x.png")
    got = read_image(tmp_path / "x.png", tmp_path)
    assert got.shape == x.shape
    assert np.array_equal(got, [[0, 0, 0, 1], [12, 13, 254, 255], [255, 255, 255, 0]])


def test_png_nonfinite(tmp_path):
    """NaN is written as 0, +Inf as the maximum, -Inf as 0 (io/image.h). (A 1x1 kernel: with
    the 3x3 identity, 0 * Inf = NaN spreads to the neighbours, as IEEE arithmetic says.)"""
    x = np.array([[np.nan, np.inf, -np.inf, 7.0]], dtype=np.float32)
    save(tmp_path / "x.npy", x)
    save(tmp_path / "one.npy", np.ones((1, 1), dtype=np.float32))
    ok("filter", tmp_path / "x.npy", "-k", tmp_path / "one.npy", "-o", tmp_path / "x.png", "-k",
       tmp_path / "one.npy", "-o", tmp_path / "x.npy.out.npy")
    y = np.load(tmp_path / "x.npy.out.npy")
    assert np.isnan(y[0, 0]) and y[0, 1] == np.inf and y[0, 2] == -np.inf and y[0, 3] == 7
    assert np.array_equal(read_image(tmp_path / "x.png", tmp_path), [[0, 255, 0, 7]])


@pytest.mark.parametrize("depth", [8, 16])
def test_normalize(tmp_path, depth):
    rng = make_rng(12)
    x = (rng.standard_normal((12, 13, 3)) * 40 - 17).astype(np.float32)
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", "sobel-x", "-o", tmp_path / "y.npy", "-k", "sobel-x", "-o",
       tmp_path / "y.png", "--normalize", "--bit-depth", str(depth))
    y = np.load(tmp_path / "y.npy").astype(np.float64)
    top = 2**depth - 1
    got = read_image(tmp_path / "y.png", tmp_path)
    assert got.min() == 0 and got.max() == top
    want = (y - y.min()) / (y.max() - y.min()) * top
    assert np.max(np.abs(got - want)) <= 0.5 + 1e-3 * top / 255


def test_16bit_png_roundtrip(tmp_path):
    x = np.arange(0, 70000, 7000, dtype=np.float32).reshape(2, 5)
    x[0, 0] = -3.0
    x[0, 1] = 1234.4
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", "identity", "-o", tmp_path / "x16.png", "--bit-depth", "16")
    with open(tmp_path / "x16.png", "rb") as f:
        head = f.read(32)
    assert head[24] == 16  # IHDR bit depth
    got = read_image(tmp_path / "x16.png", tmp_path)
    assert_image_values(got, x, depth=16)
    # A 16-bit input stays 16-bit by default.
    ok("filter", tmp_path / "x16.png", "-k", "identity", "-o", tmp_path / "again.png")
    with open(tmp_path / "again.png", "rb") as f:
        assert f.read(32)[24] == 16
    assert np.array_equal(read_image(tmp_path / "again.png", tmp_path), got)


@pytest.mark.parametrize("mode", ["same", "full", "valid"])
def test_rgba_alpha_passes_through(tmp_path, mode):
    rng = make_rng(13)
    x = np.floor(rng.random((10, 12, 4)) * 256).astype(np.float32)
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", "identity", "-o", tmp_path / "x.png")  # an RGBA PNG
    with open(tmp_path / "x.png", "rb") as f:
        assert f.read(32)[25] == 6  # IHDR colour type 6: RGBA
    ok("filter", tmp_path / "x.png", "-k", "box3", "-o", tmp_path / "y.npy", "-k", "box3", "-o", tmp_path / "y.png",
       "-k", "edge3", "-o", tmp_path / "z.png", "--normalize", "--mode", mode, "--border", "replicate")
    y = np.load(tmp_path / "y.npy")
    ref_rgb = filter2d_reference(x[:, :, :3], np.ones((3, 3)) / 9, mode, "replicate")
    assert y.shape == ref_rgb.shape[:2] + (4,)
    assert_close(y[:, :, :3], ref_rgb, ref_rgb, BOUND)
    # Alpha is moved like the colours (same window) but not filtered.
    identity = np.zeros((3, 3))
    identity[1, 1] = 1
    alpha = filter2d_reference(x[:, :, 3], identity, mode, "replicate")
    assert np.array_equal(y[:, :, 3], alpha)
    assert np.array_equal(read_image(tmp_path / "y.png", tmp_path)[:, :, 3], alpha)
    # --normalize stretches the colours only.
    z = read_image(tmp_path / "z.png", tmp_path)
    assert np.array_equal(z[:, :, 3], alpha)
    assert z[:, :, :3].min() == 0 and z[:, :, :3].max() == 255


def test_gray_alpha_png(tmp_path):
    rng = make_rng(14)
    x = np.floor(rng.random((7, 9, 2)) * 256).astype(np.float32)
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", "identity", "-o", tmp_path / "x.png")
    with open(tmp_path / "x.png", "rb") as f:
        assert f.read(32)[25] == 4  # gray + alpha
    ok("filter", tmp_path / "x.png", "-k", "sharpen", "-o", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy")
    assert np.array_equal(y[:, :, 1], x[:, :, 1])
    assert_close(y[:, :, 0], filter2d_reference(x[:, :, 0], KERNEL_VALUES["sharpen"]),
                 filter2d_reference(x[:, :, 0], np.abs(KERNEL_VALUES["sharpen"])), BOUND)


@pytest.mark.parametrize("channels,ext,magic", [(0, "pgm", b"P5"), (3, "ppm", b"P6")])
@pytest.mark.parametrize("depth", [8, 16])
def test_pnm_output(tmp_path, channels, ext, magic, depth):
    rng = make_rng(15)
    top = 2**depth - 1
    shape = (6, 5, channels) if channels else (6, 5)
    x = (rng.random(shape) * (top + 40) - 20).astype(np.float32)
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", "identity", "-o", tmp_path / f"x.{ext}", "--bit-depth", str(depth))
    with open(tmp_path / f"x.{ext}", "rb") as f:
        data = f.read()
    assert data.startswith(magic)
    assert f"\n{top}\n".encode() in data[:30]
    assert len(data) < 30 + x.size * depth // 8 + 1
    assert_image_values(read_image(tmp_path / f"x.{ext}", tmp_path), x, depth)


@pytest.mark.parametrize("text,want", [
    (b"P2\n# a comment\n3 2\n255\n0 1 2\n250 251 255\n", [[0, 1, 2], [250, 251, 255]]),
    (b"P3\n2 1\n255\n1 2 3  4 5 6\n", [[[1, 2, 3], [4, 5, 6]]]),
    (b"P5\n2 2\n255\n" + bytes([0, 10, 200, 255]), [[0, 10], [200, 255]]),
    (b"P5\n2 1\n65535\n" + bytes([0x12, 0x34, 0xff, 0xfe]), [[0x1234, 0xfffe]]),
], ids=["P2", "P3", "P5", "P5-16bit"])
def test_pnm_input(tmp_path, text, want):
    (tmp_path / "x.pnm").write_bytes(text)
    ok("filter", tmp_path / "x.pnm", "-k", "identity", "-o", tmp_path / "y.npy")
    assert np.array_equal(np.load(tmp_path / "y.npy"), np.asarray(want, dtype=np.float32))


def test_jpeg_output(tmp_path, scene):
    ok("filter", SCENE, "-k", "identity", "-o", tmp_path / "s.jpg", "-k", "identity", "-o", tmp_path / "s.jpeg")
    for name in ("s.jpg", "s.jpeg"):
        with open(tmp_path / name, "rb") as f:
            assert f.read(3) == b"\xff\xd8\xff"
        back = read_image(tmp_path / name, tmp_path)
        assert back.shape == scene.shape
        assert np.mean(np.abs(back - scene)) < 4  # lossy, quality 95


# ==========================================================================================
# conv2d and conv1d
# ==========================================================================================

def _pad4(spec):
    v = [int(t) for t in spec.split(",")]
    if len(v) == 1:
        return (v[0],) * 4
    if len(v) == 2:
        return (v[0], v[1], v[0], v[1])
    return tuple(v)


def _pair(spec):
    v = [int(t) for t in spec.split(",")]
    return (v[0], v[-1])


CONV2D_CLI_CASES = [
    # (x shape, (K, R, S), options)
    ((2, 3, 9, 10), (4, 3, 3), []),
    ((2, 3, 9, 10), (4, 3, 3), ["--stride", "2"]),
    ((1, 2, 11, 9), (3, 2, 3), ["--stride", "3,2", "--pad", "1"]),
    ((1, 2, 8, 8), (3, 3, 3), ["--pad", "2,1"]),
    ((1, 2, 8, 8), (3, 3, 3), ["--pad", "0,1,2,3"]),
    ((1, 2, 12, 12), (2, 3, 3), ["--dilation", "2"]),
    ((1, 2, 12, 13), (2, 3, 2), ["--dilation", "2,3", "--pad", "1,2", "--stride", "2"]),
    ((1, 4, 7, 7), (6, 3, 3), ["--groups", "2", "--pad", "1"]),
    ((2, 4, 7, 7), (8, 3, 3), ["--groups", "4", "--pad", "1", "--bias"]),
    ((1, 3, 7, 7), (5, 3, 3), ["--bias"]),
    ((1, 3, 7, 7), (5, 3, 3), ["--relu"]),
    ((1, 3, 7, 7), (5, 3, 3), ["--bias", "--relu", "--pad", "1", "--algo", "reference", "--threads", "1"]),
    ((3, 9, 10), (4, 3, 3), ["--pad", "1"]),  # 3D input: N = 1, 3D output
    ((3, 9, 10), (4, 2, 2), ["--bias", "--relu", "--stride", "2"]),
]


@pytest.mark.parametrize("xshape,wshape,opts", CONV2D_CLI_CASES,
                         ids=[f"{len(x)}d-{'_'.join(o).replace('--', '') or 'plain'}"
                              for x, _, o in CONV2D_CLI_CASES])
def test_conv2d_cli(tmp_path, xshape, wshape, opts):
    rng = make_rng(len(opts) * 10 + len(xshape))
    opts = list(opts)
    kw = {}
    groups = 1
    i = 0
    cli_opts = []
    bias = None
    c = xshape[-3]
    while i < len(opts):
        o = opts[i]
        if o == "--bias":
            bias = rng.standard_normal(wshape[0]).astype(np.float32)
            save(tmp_path / "b.npy", bias)
            cli_opts += ["--bias", tmp_path / "b.npy"]
            i += 1
            continue
        if o == "--relu":
            kw["relu"] = True
            cli_opts.append(o)
            i += 1
            continue
        v = opts[i + 1]
        cli_opts += [o, v]
        if o == "--stride":
            kw["stride"] = _pair(v)
        elif o == "--dilation":
            kw["dilation"] = _pair(v)
        elif o == "--pad":
            kw["pad"] = _pad4(v)
        elif o == "--groups":
            groups = kw["groups"] = int(v)
        i += 2
    x = rng.standard_normal(xshape).astype(np.float32)
    w = rng.standard_normal((wshape[0], c // groups, wshape[1], wshape[2])).astype(np.float32)
    save(tmp_path / "x.npy", x)
    save(tmp_path / "w.npy", w)
    ok("conv2d", tmp_path / "x.npy", tmp_path / "w.npy", "-o", tmp_path / "y.npy", *cli_opts)
    y = np.load(tmp_path / "y.npy")
    x4 = x if x.ndim == 4 else x[None]
    ref = conv2d_reference(x4, w, bias, **kw)
    scale_kw = {k: v for k, v in kw.items() if k != "relu"}
    scale = conv2d_reference(np.abs(x4), np.abs(w), None if bias is None else np.abs(bias), **scale_kw)
    if x.ndim == 3:
        ref, scale = ref[0], scale[0]
    assert y.dtype == np.float32 and y.shape == ref.shape
    assert_close(y, ref, scale, BOUND)


@pytest.mark.parametrize("batched", [True, False], ids=["4d", "3d"])
@pytest.mark.parametrize("algo", ["auto", "implicit-gemm", "direct"])
def test_conv2d_cli_nhwc(tmp_path, batched, algo):
    """--layout nhwc: the input read as [N] x H x W x C, the output written [N] x P x Q x K;
    implicit-gemm runs it as it lies, direct through the layout copies."""
    rng = make_rng(77)
    x = rng.standard_normal((2, 5, 9, 11)).astype(np.float32)
    w = rng.standard_normal((6, 5, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    xn = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    save(tmp_path / "x.npy", xn if batched else xn[0])
    save(tmp_path / "w.npy", w)
    save(tmp_path / "b.npy", b)
    ok("conv2d", tmp_path / "x.npy", tmp_path / "w.npy", "--bias", tmp_path / "b.npy", "--pad", "1",
       "--stride", "2", "--layout", "nhwc", "--algo", algo, "-o", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy")
    xs = x if batched else x[:1]
    ref = conv2d_reference(xs, w, b, pad=(1, 1, 1, 1), stride=(2, 2)).transpose(0, 2, 3, 1)
    scale = conv2d_reference(np.abs(xs), np.abs(w), np.abs(b), pad=(1, 1, 1, 1), stride=(2, 2)).transpose(0, 2, 3, 1)
    if not batched:
        ref, scale = ref[0], scale[0]
    assert y.shape == ref.shape
    assert_close(y, ref, scale, BOUND)
    # An NCHW-shaped input whose channel count the weights do not match, read as NHWC.
    save(tmp_path / "bad.npy", x)
    code, _, err = run_cli("conv2d", tmp_path / "bad.npy", tmp_path / "w.npy", "--layout", "nhwc",
                           "-o", tmp_path / "z.npy")
    assert code != 0 and "input channels" in err and not (tmp_path / "z.npy").exists()
    code, _, err = run_cli("conv2d", tmp_path / "x.npy", tmp_path / "w.npy", "--layout", "chwn",
                           "-o", tmp_path / "z.npy")
    assert code != 0 and "unknown layout 'chwn'" in err


def test_conv2d_sample_layer(tmp_path):
    d = os.path.join(source_dir(), "data", "sample")
    ok("conv2d", os.path.join(d, "layer-input.npy"), os.path.join(d, "layer-weights.npy"), "--bias",
       os.path.join(d, "layer-bias.npy"), "--pad", "1", "--relu", "-o", tmp_path / "y.npy")
    x, w, b = (np.load(os.path.join(d, f)) for f in ("layer-input.npy", "layer-weights.npy", "layer-bias.npy"))
    y = np.load(tmp_path / "y.npy")
    assert y.shape == (1, 8, 64, 64)
    assert_close(y, conv2d_reference(x, w, b, pad=(1, 1, 1, 1), relu=True),
                 conv2d_reference(np.abs(x), np.abs(w), np.abs(b), pad=(1, 1, 1, 1)), BOUND)


@pytest.mark.parametrize("mode", [None, "full", "same", "valid"])
@pytest.mark.parametrize("correlate", [False, True], ids=["convolve", "correlate"])
@pytest.mark.parametrize("n,m", [(40, 7), (33, 6), (5, 9), (1, 1)])
def test_conv1d_cli(tmp_path, mode, correlate, n, m):
    rng = make_rng(n * 100 + m)
    x = rng.standard_normal(n).astype(np.float32)
    k = rng.standard_normal(m).astype(np.float32)
    save(tmp_path / "x.npy", x)
    save(tmp_path / "k.npy", k)
    args = ["conv1d", tmp_path / "x.npy", tmp_path / "k.npy", "-o", tmp_path / "y.npy"]
    args += (["--mode", mode] if mode else []) + (["--correlate"] if correlate else [])
    mode = mode or "full"  # the default, as numpy
    if mode == "valid" and m > n:
        rc, out, err = run_cli(*args)
        assert rc != 0 and "kernel" in err and not (tmp_path / "y.npy").exists()
        return
    ok(*args)
    y = np.load(tmp_path / "y.npy")
    x64, k64 = x.astype(np.float64), k.astype(np.float64)
    kk = k64[::-1] if correlate else k64
    full = np.convolve(x64, kk, "full")
    ref = {"full": full, "same": full[(m - 1) // 2:(m - 1) // 2 + n], "valid": full[m - 1:n]}[mode]
    if m <= n:
        assert np.allclose(ref, (np.correlate if correlate else np.convolve)(x64, k64, mode))
    assert y.shape == ref.shape
    assert_close(y, ref, np.convolve(np.abs(x64), np.abs(k64), "full"), BOUND)
    assert_close(y, conv1d(x, k, mode, correlate), np.convolve(np.abs(x64), np.abs(k64)), BOUND, "library")


def test_conv1d_sample(tmp_path):
    d = os.path.join(source_dir(), "data", "sample")
    ok("conv1d", os.path.join(d, "signal.npy"), os.path.join(d, "lowpass31.npy"), "--mode", "same",
       "-o", tmp_path / "y.npy")
    x = np.load(os.path.join(d, "signal.npy")).astype(np.float64)
    k = np.load(os.path.join(d, "lowpass31.npy")).astype(np.float64)
    assert_close(np.load(tmp_path / "y.npy"), np.convolve(x, k, "same"), np.convolve(np.abs(x), np.abs(k)), BOUND)


# ==========================================================================================
# .npy reading
# ==========================================================================================

def _write_npy_version(path, arr, version):
    with open(path, "wb") as f:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


@pytest.mark.parametrize("variant", ["f8", ">f4", ">f8", "fortran", "fortran-3d", "v2", "v3",
                                     "v3-fortran-f8"])
def test_npy_variants(tmp_path, variant):
    rng = make_rng(16)
    base = rng.standard_normal((7, 6, 2) if "3d" in variant else (7, 6))
    path = tmp_path / "x.npy"
    if variant in ("f8", ">f4", ">f8"):
        arr = base.astype(variant.replace("f8", "<f8") if variant == "f8" else variant)
        np.save(path, arr)
    elif variant.startswith("fortran"):
        arr = np.asfortranarray(base.astype(np.float32))
        np.save(path, arr)
    elif variant == "v2":
        arr = base.astype(np.float32)
        _write_npy_version(path, arr, (2, 0))
    elif variant == "v3":
        arr = base.astype(np.float32)
        _write_npy_version(path, arr, (3, 0))
    else:
        arr = np.asfortranarray(base)
        _write_npy_version(path, arr, (3, 0))
    with open(path, "rb") as f:
        head = f.read(10)
    if variant.startswith("v2"):
        assert head[6:8] == b"\x02\x00"
    if variant.startswith("v3"):
        assert head[6:8] == b"\x03\x00"
    # identity in same mode reproduces the array (converted to float32, C order); the
    # reference is exact here, faster algorithms only to within rounding
    ok("filter", path, "-k", "identity", "-o", tmp_path / "y.npy", "--algo", "reference")
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == np.dtype("<f4") and y.flags.c_contiguous
    assert np.array_equal(y, np.asarray(arr, dtype=np.float32))
    # and as a kernel / conv inputs
    ok("filter", path, "-k", path if arr.ndim == 2 else "box3", "-o", tmp_path / "z.npy")


def test_npy_variants_conv(tmp_path):
    """conv2d / conv1d accept the same .npy variants (weights big-endian float64, Fortran)."""
    rng = make_rng(17)
    x = rng.standard_normal((1, 2, 6, 7))
    w = rng.standard_normal((3, 2, 3, 3))
    np.save(tmp_path / "x.npy", np.asfortranarray(x.astype(">f4")))
    _write_npy_version(tmp_path / "w.npy", w.astype(">f8"), (2, 0))
    ok("conv2d", tmp_path / "x.npy", tmp_path / "w.npy", "-o", tmp_path / "y.npy")
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    assert_close(np.load(tmp_path / "y.npy"), conv2d_reference(x32, w32),
                 conv2d_reference(np.abs(x32), np.abs(w32)), BOUND)
    s = rng.standard_normal(30)
    np.save(tmp_path / "s.npy", s.astype(">f8"))
    np.save(tmp_path / "k.npy", s[:5].astype("<f8"))
    ok("conv1d", tmp_path / "s.npy", tmp_path / "k.npy", "-o", tmp_path / "c.npy")
    s32 = s.astype(np.float32).astype(np.float64)
    assert_close(np.load(tmp_path / "c.npy"), np.convolve(s32, s32[:5]), np.convolve(np.abs(s32), np.abs(s32[:5])),
                 BOUND)


def test_npy_output_format(tmp_path):
    """Outputs are little-endian float32, C order, version 1.0, 64-byte aligned header."""
    np.save(tmp_path / "x.npy", np.ones((3, 4), dtype=">f8"))
    ok("filter", tmp_path / "x.npy", "-k", "box3", "-o", tmp_path / "y.npy")
    with open(tmp_path / "y.npy", "rb") as f:
        data = f.read()
    assert data[:8] == b"\x93NUMPY\x01\x00"
    hlen = struct.unpack("<H", data[8:10])[0]
    assert (10 + hlen) % 64 == 0
    header = data[10:10 + hlen].decode("latin1")
    assert "'descr': '<f4'" in header and "'fortran_order': False" in header and "(3, 4)" in header
    assert len(data) == 10 + hlen + 3 * 4 * 4


# ==========================================================================================
# bad input: exit code != 0, one line on stderr, no output (an existing one untouched)
# ==========================================================================================

def _absurd_npy(path, shape="(1000000, 1000000)", descr="<f4", data=16):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    assert (10 + len(header)) % 64 == 0
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + b"\0" * data)


def _make_inputs(d):
    """Every input the bad-input cases need, in directory d."""
    rng = make_rng(18)
    np.save(d / "img.npy", (rng.random((12, 10)) * 255).astype(np.float32))
    np.save(d / "img3.npy", (rng.random((12, 10, 3)) * 255).astype(np.float32))
    np.save(d / "rgba.npy", (rng.random((6, 5, 4)) * 255).astype(np.float32))
    np.save(d / "five.npy", np.ones((4, 4, 5), dtype=np.float32))  # 5 channels: no image format
    np.save(d / "int32.npy", np.ones((5, 5), dtype=np.int32))
    np.save(d / "complex.npy", np.ones((5, 5), dtype=np.complex64))
    np.save(d / "object.npy", np.array([[1, None]], dtype=object), allow_pickle=True)
    np.save(d / "f16.npy", np.ones((5, 5), dtype=np.float16))
    np.save(d / "empty.npy", np.ones((0, 5), dtype=np.float32))
    np.save(d / "v1.npy", np.ones(9, dtype=np.float32))
    np.save(d / "v4.npy", np.ones((2, 3, 4, 5), dtype=np.float32))
    np.save(d / "x4.npy", rng.standard_normal((1, 4, 8, 8)).astype(np.float32))
    np.save(d / "w4.npy", rng.standard_normal((6, 4, 3, 3)).astype(np.float32))
    np.save(d / "w3ch.npy", rng.standard_normal((6, 3, 3, 3)).astype(np.float32))
    np.save(d / "wg.npy", rng.standard_normal((6, 2, 3, 3)).astype(np.float32))
    np.save(d / "w3d.npy", rng.standard_normal((6, 4, 3)).astype(np.float32))
    np.save(d / "bias5.npy", rng.standard_normal(5).astype(np.float32))
    np.save(d / "bias2d.npy", rng.standard_normal((6, 1)).astype(np.float32))
    np.save(d / "big_k.npy", np.ones((13, 3), dtype=np.float32))
    np.save(d / "k3d.npy", np.ones((3, 3, 1), dtype=np.float32))
    np.save(d / "sig.npy", rng.standard_normal(20).astype(np.float32))
    np.save(d / "sig_k.npy", rng.standard_normal(30).astype(np.float32))
    good = (d / "img.npy").read_bytes()
    (d / "truncated.npy").write_bytes(good[:-7])
    (d / "header_only.npy").write_bytes(good[:60])
    (d / "garbage.npy").write_bytes(b"this is not a numpy file\n" * 8)
    (d / "garbage.png").write_bytes(b"this is not an image either\n" * 8)
    (d / "empty_file.npy").write_bytes(b"")
    _absurd_npy(d / "absurd.npy")
    _absurd_npy(d / "overflow.npy", shape="(4611686018427387904, 4611686018427387904)")
    _absurd_npy(d / "negative.npy", shape="(-5, 4)")
    _absurd_npy(d / "bad_header.npy", shape="(5, 'a')")
    ok("filter", d / "img3.npy", "-k", "identity", "-o", d / "good.png", "-k", "identity", "-o", d / "good.jpg")
    ok("filter", d / "rgba.npy", "-k", "identity", "-o", d / "rgba.png")
    png = (d / "good.png").read_bytes()
    (d / "truncated.png").write_bytes(png[:len(png) // 2])
    bad = bytearray(png)
    bad[40:60] = b"\0" * 20  # inside IHDR/IDAT: CRC or zlib error
    (d / "corrupt.png").write_bytes(bytes(bad))
    jpg = (d / "good.jpg").read_bytes()
    (d / "truncated.jpg").write_bytes(jpg[:len(jpg) // 3])
    sof = jpg.index(b"\xff\xc0")  # baseline frame header: FFC0 len(2) precision(1) height(2)
    (d / "corrupt_header.jpg").write_bytes(jpg[:sof + 5] + b"\0\0" + jpg[sof + 7:])  # height 0
    data = bytearray(jpg)
    sos = jpg.index(b"\xff\xda")
    for i in range(sos + 40, len(data) - 2, 53):  # stray markers in the entropy-coded data
        data[i:i + 2] = b"\xff\xd9" if i % 2 else b"\xff\xc4"
    (d / "corrupt_data.jpg").write_bytes(bytes(data))
    (d / "truncated.ppm").write_bytes(b"P6\n4 4\n255\n" + b"\x10" * 20)
    (d / "bad_maxval.pgm").write_bytes(b"P5\n2 2\n70000\n" + b"\0" * 8)


# (name, argv with {d} for the inputs' directory and OUT[.ext] for the output (default .npy),
#  a regular expression stderr must match, exit code: 1 bad input, 2 bad command line
#  (main.c), None: any non-zero)
BAD_CASES = [
    ("int32", ["filter", "{d}/int32.npy", "-k", "box3", "-o", "OUT"], ["dtype"], 1),
    ("complex", ["filter", "{d}/complex.npy", "-k", "box3", "-o", "OUT"], ["dtype"], 1),
    ("object", ["filter", "{d}/object.npy", "-k", "box3", "-o", "OUT"], ["dtype"], 1),
    ("float16", ["filter", "{d}/f16.npy", "-k", "box3", "-o", "OUT"], ["dtype"], 1),
    ("truncated-npy", ["filter", "{d}/truncated.npy", "-k", "box3", "-o", "OUT"], ["truncated"], 1),
    ("header-only-npy", ["filter", "{d}/header_only.npy", "-k", "box3", "-o", "OUT"], ["npy|truncated|header"], 1),
    ("garbage-npy", ["filter", "{d}/garbage.npy", "-k", "box3", "-o", "OUT"], ["npy|magic"], 1),
    ("empty-file", ["filter", "{d}/empty_file.npy", "-k", "box3", "-o", "OUT"], ["empty|npy|truncated"], 1),
    ("garbage-image", ["filter", "{d}/garbage.png", "-k", "box3", "-o", "OUT"], ["format|image"], 1),
    ("missing-file", ["filter", "{d}/nope.npy", "-k", "box3", "-o", "OUT"], ["No such file"], 1),
    ("missing-image", ["filter", "{d}/nope.png", "-k", "box3", "-o", "OUT"], ["No such file"], 1),
    ("empty-array", ["filter", "{d}/empty.npy", "-k", "box3", "-o", "OUT"], ["empty"], 1),
    ("1d-filter", ["filter", "{d}/v1.npy", "-k", "box3", "-o", "OUT"], ["2D"], 1),
    ("4d-filter", ["filter", "{d}/v4.npy", "-k", "box3", "-o", "OUT"], ["3D"], 1),
    ("3d-kernel", ["filter", "{d}/img.npy", "-k", "{d}/k3d.npy", "-o", "OUT"], ["kernel"], 1),
    ("missing-kernel-file", ["filter", "{d}/img.npy", "-k", "{d}/nope.npy", "-o", "OUT"], ["No such file"], 1),
    ("valid-kernel-too-big", ["filter", "{d}/img.npy", "-k", "{d}/big_k.npy", "--mode", "valid", "-o", "OUT"],
     ["kernel"], 1),
    ("absurd-shape", ["filter", "{d}/absurd.npy", "-k", "box3", "-o", "OUT"], ["truncated|large|size"], 1),
    ("overflow-shape", ["filter", "{d}/overflow.npy", "-k", "box3", "-o", "OUT"], ["overflow|large|size|shape"], 1),
    ("negative-shape", ["filter", "{d}/negative.npy", "-k", "box3", "-o", "OUT"], ["shape"], 1),
    ("bad-header", ["filter", "{d}/bad_header.npy", "-k", "box3", "-o", "OUT"], ["shape|header"], 1),
    ("2d-conv2d", ["conv2d", "{d}/img.npy", "{d}/w4.npy", "-o", "OUT"], ["N x C x H x W"], 1),
    ("3d-weights", ["conv2d", "{d}/x4.npy", "{d}/w3d.npy", "-o", "OUT"], ["weights"], 1),
    ("channel-mismatch", ["conv2d", "{d}/x4.npy", "{d}/w3ch.npy", "-o", "OUT"], ["channels"], 1),
    ("bias-length", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--bias", "{d}/bias5.npy", "-o", "OUT"], ["bias"], 1),
    ("bias-2d", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--bias", "{d}/bias2d.npy", "-o", "OUT"], ["bias"], 1),
    ("groups-not-dividing", ["conv2d", "{d}/x4.npy", "{d}/wg.npy", "--groups", "3", "-o", "OUT"], ["groups"], 1),
    ("groups-weights", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--groups", "2", "-o", "OUT"], ["groups|channels"], 1),
    ("conv2d-empty-output", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--dilation", "5", "-o", "OUT"],
     ["kernel|empty"], 1),
    ("conv2d-int32", ["conv2d", "{d}/x4.npy", "{d}/int32.npy", "-o", "OUT"], ["dtype"], 1),
    ("conv1d-2d", ["conv1d", "{d}/img.npy", "{d}/sig.npy", "-o", "OUT"], ["1D"], 1),
    ("conv1d-valid-too-big", ["conv1d", "{d}/sig.npy", "{d}/sig_k.npy", "--mode", "valid", "-o", "OUT"],
     ["kernel"], 1),
    ("unknown-kernel", ["filter", "{d}/img.npy", "-k", "blur9", "-o", "OUT"], ["unknown kernel"], None),
    ("unknown-mode", ["filter", "{d}/img.npy", "-k", "box3", "--mode", "half", "-o", "OUT"], ["mode"], 2),
    ("unknown-border", ["filter", "{d}/img.npy", "-k", "box3", "--border", "clamp", "-o", "OUT"], ["border"], 2),
    ("bad-constant", ["filter", "{d}/img.npy", "-k", "box3", "--border", "constant=x", "-o", "OUT"], ["border"], 2),
    ("unknown-algo", ["filter", "{d}/img.npy", "-k", "box3", "--algo", "magic", "-o", "OUT"], ["algorithm"], 2),
    ("conv2d-unknown-algo", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--algo", "magic", "-o", "OUT"],
     ["algorithm"], 2),
    ("conv1d-unknown-mode", ["conv1d", "{d}/sig.npy", "{d}/sig.npy", "--mode", "half", "-o", "OUT"], ["mode"], 2),
    ("threads-negative", ["filter", "{d}/img.npy", "-k", "box3", "--threads", "-1", "-o", "OUT"], ["threads"], 2),
    ("threads-text", ["conv1d", "{d}/sig.npy", "{d}/sig.npy", "--threads", "many", "-o", "OUT"], ["threads"], 2),
    ("stride-0", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--stride", "0", "-o", "OUT"], ["stride"], 2),
    ("stride-list", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--stride", "1,,2", "-o", "OUT"], ["stride"], 2),
    ("dilation-0", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--dilation", "1,0", "-o", "OUT"], ["dilation"], 2),
    ("pad-3-values", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--pad", "1,2,3", "-o", "OUT"], ["pad"], 2),
    ("pad-negative", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--pad", "-1", "-o", "OUT"], ["pad"], 2),
    ("groups-0", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--groups", "0", "-o", "OUT"], ["groups"], 2),
    ("bit-depth-12", ["filter", "{d}/img.npy", "-k", "box3", "--bit-depth", "12", "-o", "OUT.png"], ["bit-depth"], 2),
    ("pairs-mismatch", ["filter", "{d}/img.npy", "-k", "box3", "-k", "box5", "-o", "OUT"], ["pairs"], 2),
    ("no-kernel", ["filter", "{d}/img.npy", "-o", "OUT"], ["-k"], 2),
    ("unknown-extension", ["filter", "{d}/img.npy", "-k", "box3", "-o", "OUT.tiff"], ["format"], 2),
    ("conv2d-png-output", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "-o", "OUT.png"], ["npy"], 2),
    ("conv1d-png-output", ["conv1d", "{d}/sig.npy", "{d}/sig.npy", "-o", "OUT.png"], ["npy"], 2),
    ("missing-directory", ["filter", "{d}/img.npy", "-k", "box3", "-o", "{d}/no/such/dir/y.npy"],
     ["cannot create|No such|does not exist"], 1),
    ("jpeg-with-alpha", ["filter", "{d}/rgba.png", "-k", "box3", "-o", "OUT.jpg"], ["alpha"], 1),
    ("ppm-with-alpha", ["filter", "{d}/rgba.png", "-k", "box3", "-o", "OUT.ppm"], ["alpha"], 1),
    ("jpeg-16bit", ["filter", "{d}/img.npy", "-k", "box3", "--bit-depth", "16", "-o", "OUT.jpg"], ["8 bits"], 1),
    ("too-many-channels-png", ["filter", "{d}/five.npy", "-k", "box3", "-o", "OUT.png"], ["channels"], 1),
    ("truncated-png", ["filter", "{d}/truncated.png", "-k", "box3", "-o", "OUT"], ["PNG"], 1),
    ("corrupt-png", ["filter", "{d}/corrupt.png", "-k", "box3", "-o", "OUT"], ["PNG"], 1),
    ("truncated-jpeg", ["filter", "{d}/truncated.jpg", "-k", "box3", "-o", "OUT"], ["JPEG"], 1),
    ("corrupt-jpeg-header", ["filter", "{d}/corrupt_header.jpg", "-k", "box3", "-o", "OUT"], ["JPEG"], 1),
    ("corrupt-jpeg-data", ["filter", "{d}/corrupt_data.jpg", "-k", "box3", "-o", "OUT"], ["JPEG"], 1),
    ("truncated-ppm", ["filter", "{d}/truncated.ppm", "-k", "box3", "-o", "OUT"], ["truncated"], 1),
    ("bad-maxval-pgm", ["filter", "{d}/bad_maxval.pgm", "-k", "box3", "-o", "OUT"], ["maxval|65535"], 1),
    ("unknown-command", ["blur", "{d}/img.npy", "-o", "OUT"], ["unknown command"], 2),
    ("unknown-option-filter", ["filter", "{d}/img.npy", "-k", "box3", "--fast", "-o", "OUT"], ["unknown option"], 2),
    ("unknown-option-conv2d", ["conv2d", "{d}/x4.npy", "{d}/w4.npy", "--bogus", "-o", "OUT"], ["unknown option"], 2),
    ("unknown-option-conv1d", ["conv1d", "{d}/sig.npy", "{d}/sig.npy", "-x", "-o", "OUT"], ["unknown option"], 2),
    ("option-needs-value", ["filter", "{d}/img.npy", "-o", "OUT", "-k"], ["needs a value"], 2),
    ("extra-argument", ["conv1d", "{d}/sig.npy", "{d}/sig.npy", "{d}/sig.npy", "-o", "OUT"], ["unexpected"], 2),
    ("missing-weights", ["conv2d", "{d}/x4.npy", "-o", "OUT"], ["WEIGHTS"], 2),
]


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    _make_inputs(d)
    return d


SENTINEL = b"existing output: must stay byte-identical\n"


@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing"])
@pytest.mark.parametrize("name,argv,words,code", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_input(tmp_path, bad_inputs, name, argv, words, code, existing):
    d = str(bad_inputs)
    out_base = str(tmp_path / "out")
    args, outputs = [], []
    for a in argv:
        a = a.replace("{d}", d)
        if a.startswith("OUT"):
            ext = a[3:] or ".npy"
            a = out_base + ext
            outputs.append(a)
        args.append(a)
    if existing:
        for o in outputs:
            with open(o, "wb") as f:
                f.write(SENTINEL)
    before_inputs = sorted(os.listdir(d))
    before_out = sorted(os.listdir(tmp_path))
    t0 = time.monotonic()
    rc, out, err = run_cli(*args)
    elapsed = time.monotonic() - t0
    assert rc != 0, f"exit 0 for bad input; stderr: {err!r}"
    if code is not None:
        assert rc == code, f"exit {rc}, expected {code}; stderr: {err!r}"
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and err.endswith("\n"), f"stderr is not one line: {err!r}"
    assert err.startswith("fastconv: "), err
    assert re.search(words[0], err, re.IGNORECASE), f"{words[0]!r} not in {err!r}"
    assert out == "", f"stdout: {out!r}"
    # No output written (nor any temporary left behind); an existing output is untouched.
    assert sorted(os.listdir(tmp_path)) == before_out
    assert sorted(os.listdir(d)) == before_inputs
    for o in outputs:
        if existing:
            with open(o, "rb") as f:
                assert f.read() == SENTINEL
        else:
            assert not os.path.exists(o)
    assert elapsed < 10


def test_absurd_shape_refused_without_allocating(bad_inputs):
    """A header claiming 4e12 bytes backed by 16 is refused at once, even with a small
    address-space limit (nothing big is allocated first)."""
    limit = 1 << 30

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    for f in ("absurd.npy", "overflow.npy"):
        t0 = time.monotonic()
        p = subprocess.run([cli_path(), "filter", str(bad_inputs / f), "-k", "box3", "-o",
                            str(bad_inputs / "never.npy")], capture_output=True, text=True,
                           timeout=30, preexec_fn=cap)
        assert time.monotonic() - t0 < 5
        assert p.returncode == 1, p.stderr
        assert "memory" not in p.stderr.lower(), p.stderr
        assert not (bad_inputs / "never.npy").exists()


def test_failing_second_output_writes_nothing(tmp_path):
    """cmd-filter.c: 'Every output's format is checked before any work.' An output that
    cannot hold the data (a PGM for an RGB image) must be refused before the first output
    of the same call is written."""
    x = np.ones((6, 7, 3), dtype=np.float32) * 100
    save(tmp_path / "x.npy", x)
    rc, out, err = run_cli("filter", tmp_path / "x.npy", "-k", "box3", "-o", tmp_path / "first.npy",
                           "-k", "box3", "-o", tmp_path / "second.pgm")
    assert rc != 0
    assert len(err.strip().split("\n")) == 1
    assert not (tmp_path / "first.npy").exists(), "first output written although the call failed"
    assert not (tmp_path / "second.pgm").exists()


def test_16bit_input_to_jpeg(tmp_path):
    """A 16-bit PNG input and a JPEG output (no --bit-depth): refused before any output is
    written, or written — never a failure after the first output of the call exists."""
    x = np.arange(6 * 7, dtype=np.float32).reshape(6, 7) * 1000
    save(tmp_path / "x.npy", x)
    ok("filter", tmp_path / "x.npy", "-k", "identity", "-o", tmp_path / "x16.png", "--bit-depth", "16")
    rc, out, err = run_cli("filter", tmp_path / "x16.png", "-k", "box3", "-o", tmp_path / "first.npy",
                           "-k", "box3", "-o", tmp_path / "second.jpg")
    if rc != 0:
        assert len(err.strip().split("\n")) == 1
        assert not (tmp_path / "first.npy").exists(), f"first output written although the call failed: {err}"
        assert not (tmp_path / "second.jpg").exists()


def test_usage_errors_exit_2(bad_inputs, tmp_path):
    """main.c: exit 2 for a bad command line. An unknown built-in kernel name is one (its
    message is printed by cli_usage_error)."""
    rc, out, err = run_cli("filter", bad_inputs / "img.npy", "-k", "blur9", "-o", tmp_path / "y.npy")
    assert rc == 2, f"exit {rc}: {err}"


@pytest.mark.parametrize("cmd,args", [
    ("conv2d", ["{d}/x4.npy", "{d}/w4.npy", "--dilation", "5"]),
    ("conv1d", ["{d}/sig.npy", "{d}/sig_k.npy", "--mode", "valid"]),
])
def test_library_error_message_not_doubled(bad_inputs, tmp_path, cmd, args):
    """A library error is reported once, as 'fastconv: <what>: <reason>', without the
    subcommand named twice ('fastconv: conv2d: conv2d: kernel height ...')."""
    argv = [a.replace("{d}", str(bad_inputs)) for a in args]
    rc, out, err = run_cli(cmd, *argv, "-o", tmp_path / "y.npy")
    assert rc == 1
    assert f"{cmd}: {cmd}:" not in err, err


# ==========================================================================================
# help, version, info
# ==========================================================================================

@pytest.mark.parametrize("cmd", ["filter", "conv2d", "conv1d", "info"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(cmd, flag):
    rc, out, err = run_cli(cmd, flag)
    assert rc == 0 and err == ""
    assert out.startswith(f"usage: fastconv {cmd}")


def test_help_mentions_options():
    _, out, _ = run_cli("filter", "--help")
    for word in ["--mode", "--border", "--correlate", "--normalize", "--bit-depth", "--algo", "--threads",
                 *BUILTIN_KERNELS]:
        assert word in out, word
    _, out, _ = run_cli("conv2d", "--help")
    for word in ["--bias", "--stride", "--pad", "--dilation", "--groups", "--relu"]:
        assert word in out, word


def test_main_help_and_no_arguments():
    rc, out, err = run_cli("--help")
    assert rc == 0 and out.startswith("usage: fastconv") and err == ""
    for cmd in ("filter", "conv2d", "conv1d", "info"):
        assert cmd in out
    rc, out, err = run_cli()
    assert rc == 2 and "usage: fastconv" in err and out == ""


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    rc, out, err = run_cli(flag)
    version = get_lib().fconv_version().decode()
    assert version == "0.1.0" or version.count(".") == 2
    assert rc == 0 and out == f"fastconv {version}\n" and err == ""


def test_info_lists_algorithms():
    rc, out, err = run_cli("info")
    assert rc == 0 and err == ""
    assert out.startswith(f"fastconv {get_lib().fconv_version().decode()}\n")
    assert "reference" in out
    for info in algo_infos():
        line = next(line for line in out.splitlines() if line.strip().startswith(info["name"] + " "))
        assert "serves" in line
    rc, _, err = run_cli("info", "extra")
    assert rc == 2 and "unexpected" in err


def test_info_names_the_gemm():
    rc, out, err = run_cli("info")
    assert rc == 0 and err == ""
    line = next(line for line in out.splitlines() if line.startswith("gemm:"))
    assert "packed" in line and line == "gemm:       " + get_lib().fconv_gemm_report().decode()
    # FCONV_GEMM=packed sends every product to the packed kernel, and the line says why
    p = subprocess.run([cli_path(), "info"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "FCONV_GEMM": "packed"})
    line = next(line for line in p.stdout.splitlines() if line.startswith("gemm:"))
    assert p.returncode == 0 and line.startswith("gemm:       fastconv packed ")
    assert "FCONV_GEMM=packed" in line or "OpenBLAS runs its kernels for" in line
