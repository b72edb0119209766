#!/usr/bin/env python3
"""Generate the bundled sample data in data/sample/.

Usage:  /usr/bin/python3 tools/make-sample-data.py [--out DIR]

Needs only the Python standard library and numpy (no PIL/OpenCV: PNGs are
written by the small encoder below). Output is deterministic: every random
stream uses a fixed seed and nothing depends on the time, so re-running the
script reproduces byte-identical files (same numpy/zlib build).
"""

import argparse
import os
import struct
import zlib

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO_ROOT, "data", "sample")

WIDTH, HEIGHT = 640, 480


# --------------------------------------------------------------------------
# Minimal PNG writer: 8-bit gray (colour type 0) or RGB (colour type 2).
# --------------------------------------------------------------------------
def _png_chunk(tag, data):
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def write_png(path, img):
    img = np.ascontiguousarray(img)
    if img.dtype != np.uint8:
        raise ValueError("write_png expects uint8")
    if img.ndim == 2:
        color_type, channels = 0, 1
    elif img.ndim == 3 and img.shape[2] == 3:
        color_type, channels = 2, 3
    else:
        raise ValueError("write_png expects HxW or HxWx3")
    h, w = img.shape[:2]
    rows = img.reshape(h, w * channels)
    # Filter type 0 (None) byte in front of every scanline.
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows], axis=1).tobytes()
    ihdr = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    png = (b"\x89PNG\r\n\x1a\n"
           + _png_chunk(b"IHDR", ihdr)
           + _png_chunk(b"IDAT", zlib.compress(raw, 9))
           + _png_chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)


# --------------------------------------------------------------------------
# Scene construction. Shapes are drawn from signed distance fields with a
# one-pixel linear ramp, which gives smooth, sub-pixel anti-aliased edges.
# --------------------------------------------------------------------------
def _coverage(sdf):
    """Signed distance (px, negative inside) -> coverage in [0, 1]."""
    return np.clip(0.5 - sdf, 0.0, 1.0)


def _blend(img, cov, color):
    cov = cov[..., None]
    img *= 1.0 - cov
    img += cov * np.asarray(color, np.float64)


def _sdf_disc(x, y, cx, cy, r):
    return np.hypot(x - cx, y - cy) - r


def _sdf_ring(x, y, cx, cy, r, half_width):
    return np.abs(np.hypot(x - cx, y - cy) - r) - half_width


def _sdf_box(x, y, cx, cy, hw, hh):
    dx = np.abs(x - cx) - hw
    dy = np.abs(y - cy) - hh
    outside = np.hypot(np.maximum(dx, 0.0), np.maximum(dy, 0.0))
    inside = np.minimum(np.maximum(dx, dy), 0.0)
    return outside + inside


def _sdf_polygon(x, y, verts):
    """Exact signed distance to a simple polygon (negative inside)."""
    d = np.full(x.shape, np.inf)
    sign = np.ones(x.shape)
    n = len(verts)
    for i in range(n):
        ax, ay = verts[i]
        bx, by = verts[i - 1]
        ex, ey = bx - ax, by - ay
        wx, wy = x - ax, y - ay
        t = np.clip((wx * ex + wy * ey) / (ex * ex + ey * ey), 0.0, 1.0)
        d = np.minimum(d, np.hypot(wx - ex * t, wy - ey * t))
        c1 = y >= ay
        c2 = y < by
        c3 = ex * wy > ey * wx
        flip = (c1 & c2 & c3) | (~c1 & ~c2 & ~c3)
        sign = np.where(flip, -sign, sign)
    return sign * d


def make_scene():
    # Pixel centres.
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64) + 0.5
    img = np.zeros((HEIGHT, WIDTH, 3), np.float64)

    # Background: sky (deep blue -> pale blue) above a horizon, ground
    # (olive green -> dark brown) below, blended smoothly across the horizon.
    horizon = 0.55 * HEIGHT
    v = y / HEIGHT
    sky_top, sky_bot = np.array([40, 90, 185]), np.array([190, 215, 240])
    gnd_top, gnd_bot = np.array([120, 140, 60]), np.array([70, 50, 30])
    ts = np.clip(y / horizon, 0, 1)[..., None]
    tg = np.clip((y - horizon) / (HEIGHT - horizon), 0, 1)[..., None]
    sky = sky_top * (1 - ts) + sky_bot * ts
    gnd = gnd_top * (1 - tg) + gnd_bot * tg
    mix = np.clip((y - horizon) / 6.0 + 0.5, 0, 1)[..., None]
    img[:] = sky * (1 - mix) + gnd * mix
    del v

    # Sun: a large warm disc in the sky.
    _blend(img, _coverage(_sdf_disc(x, y, 95.0, 80.0, 48.0)), (250, 205, 60))

    # Checkerboard patch (12 px squares) with a thin dark frame, top middle.
    cb_x0, cb_y0, cb_w, cb_h, sq = 200, 30, 144, 108, 12
    inside = (x >= cb_x0) & (x < cb_x0 + cb_w) & (y >= cb_y0) & (y < cb_y0 + cb_h)
    checker = (((x - cb_x0) // sq + (y - cb_y0) // sq) % 2 == 0)
    cov = _coverage(_sdf_box(x, y, cb_x0 + cb_w / 2, cb_y0 + cb_h / 2, cb_w / 2 + 2, cb_h / 2 + 2))
    _blend(img, cov, (30, 30, 30))
    img[inside & checker] = (235, 235, 235)
    img[inside & ~checker] = (20, 20, 20)

    # Zone plate (sinusoidal, frequency rising with radius to 0.4 cycles/px),
    # top right: a high-frequency region where blur and sharpen differ.
    zp_cx, zp_cy, zp_r = 520.0, 110.0, 90.0
    r2 = (x - zp_cx) ** 2 + (y - zp_cy) ** 2
    k = 0.4 * np.pi / zp_r  # local freq = k*r/pi -> 0.4 cyc/px at the rim
    zone = 0.5 + 0.5 * np.cos(k * r2)
    zcov = _coverage(_sdf_disc(x, y, zp_cx, zp_cy, zp_r))
    zval = (20 + 215 * zone)[..., None] * np.ones(3)
    img[:] = img * (1 - zcov[..., None]) + zval * zcov[..., None]

    # Red rectangle, lower left, slightly rotated (anti-aliased edges).
    ang = np.deg2rad(12.0)
    rcx, rcy = 110.0, 330.0
    rx = (x - rcx) * np.cos(ang) + (y - rcy) * np.sin(ang)
    ry = -(x - rcx) * np.sin(ang) + (y - rcy) * np.cos(ang)
    _blend(img, _coverage(_sdf_box(rx, ry, 0.0, 0.0, 70.0, 45.0)), (160, 20, 30))

    # Axis-aligned teal rectangle partly behind a purple disc.
    _blend(img, _coverage(_sdf_box(x, y, 300.0, 360.0, 60.0, 40.0)), (70, 210, 190))
    _blend(img, _coverage(_sdf_disc(x, y, 350.0, 330.0, 42.0)), (120, 50, 160))

    # Yellow-orange triangle.
    tri = [(420.0, 430.0), (560.0, 430.0), (470.0, 285.0)]
    _blend(img, _coverage(_sdf_polygon(x, y, tri)), (245, 150, 30))

    # White ring (annulus) on the ground, lower right.
    _blend(img, _coverage(_sdf_ring(x, y, 585.0, 330.0, 38.0, 6.0)), (245, 245, 245))

    # Fine line grid (2 px pitch stripes then a 4 px grid), bottom left strip,
    # a text-like texture of thin dark lines on a light panel.
    gx0, gy0, gx1, gy1 = 20, 415, 200, 465
    panel = (x >= gx0) & (x < gx1) & (y >= gy0) & (y < gy1)
    img[panel] = (225, 222, 210)
    xi, yi = x - 0.5, y - 0.5
    stripes = panel & (xi < 80) & (xi % 2 == 0)                       # 1-px vertical lines, pitch 2
    hstripes = panel & (xi >= 80) & (xi < 130) & (yi % 3 == 0)        # 1-px horizontal lines, pitch 3
    grid = panel & (xi >= 130) & ((xi % 4 == 0) | (yi % 4 == 0))      # 4-px grid
    img[stripes | hstripes | grid] = (25, 25, 35)

    # Small dark disc and a thin diagonal line for fine detail.
    _blend(img, _coverage(_sdf_disc(x, y, 240.0, 230.0, 10.0)), (15, 15, 20))
    # Line segment from (170,200) to (400,250), 1.5 px wide.
    ax, ay, bx, by = 170.0, 205.0, 420.0, 255.0
    ex, ey = bx - ax, by - ay
    t = np.clip(((x - ax) * ex + (y - ay) * ey) / (ex * ex + ey * ey), 0, 1)
    dline = np.hypot(x - ax - ex * t, y - ay - ey * t) - 0.75
    _blend(img, _coverage(dline), (250, 250, 250))

    # Mild Gaussian sensor noise, sigma = 3 on 0..255.
    rng = np.random.default_rng(20240601)
    img += rng.normal(0.0, 3.0, img.shape)
    return np.clip(np.floor(img + 0.5), 0, 255).astype(np.uint8)


def to_gray(rgb):
    """ITU-R BT.601 luma, rounded half up."""
    f = rgb.astype(np.float64)
    luma = 0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]
    return np.clip(np.floor(luma + 0.5), 0, 255).astype(np.uint8)


# --------------------------------------------------------------------------
# 1-D signal and kernels.
# --------------------------------------------------------------------------
def make_signal(n=4096):
    t = np.arange(n, dtype=np.float64)
    s = 1.0 * np.sin(2 * np.pi * 0.01 * t)                 # slow sine
    s += 0.5 * np.sin(2 * np.pi * 0.04 * t + 0.3)          # second sine
    f0, f1 = 0.12, 0.45                                    # linear chirp (cyc/sample)
    s += 0.3 * np.sin(2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * n)))
    rng = np.random.default_rng(4096)
    s += rng.normal(0.0, 0.1, n)
    return s.astype(np.float32)


def make_lowpass(taps=31, cutoff=0.08):
    """Hamming-windowed sinc; cutoff in cycles/sample; unit DC gain."""
    m = np.arange(taps, dtype=np.float64) - (taps - 1) / 2
    h = 2 * cutoff * np.sinc(2 * cutoff * m) * np.hamming(taps)
    h /= h.sum()
    return h.astype(np.float32)


def make_layer(gray_rgb_scene):
    # Centre 448x448 crop of the scene, 7x7 box-averaged to 64x64, RGB planes
    # as the 3 channels, scaled to [0, 1]; NCHW.
    h0 = (HEIGHT - 448) // 2
    w0 = (WIDTH - 448) // 2
    crop = gray_rgb_scene[h0:h0 + 448, w0:w0 + 448].astype(np.float64)
    small = crop.reshape(64, 7, 64, 7, -1).mean(axis=(1, 3)) / 255.0
    inp = np.ascontiguousarray(small.transpose(2, 0, 1)[None]).astype(np.float32)
    rng = np.random.default_rng(27)
    w = (rng.standard_normal((8, 3, 3, 3)) / np.sqrt(27.0)).astype(np.float32)
    b = (0.1 * rng.standard_normal(8)).astype(np.float32)
    return inp, w, b


# --------------------------------------------------------------------------
# UMI applications: a motion pair and a rectified stereo pair, both made from
# the gray scene by integer shifts, so the ground truth is exact.
# --------------------------------------------------------------------------
MOTION_GLOBAL = (3, -2)          # (dx, dy) of the whole frame
MOTION_PATCH = (-4, 5)           # (dx, dy) of the moving square
MOTION_SQUARE = (160, 256, 96)   # its top-left (y, x) in frame0 and side: block-aligned
MOTION_BLOCK = 8


def _shift(img, dx, dy):
    """out[y, x] = img[y - dy, x - dx], edges replicated."""
    h, w = img.shape
    ys = np.clip(np.arange(h) - dy, 0, h - 1)
    xs = np.clip(np.arange(w) - dx, 0, w - 1)
    return img[ys][:, xs]


def make_motion_pair(gray):
    """frame1: frame0 moved by MOTION_GLOBAL, except a square of frame0 that moved by
    MOTION_PATCH (pasted on top). Ground truth per 8x8 block of frame0: (dx, dy), NaN where
    a block is not wholly one motion, sees the frame edge or is covered by the square."""
    h, w = gray.shape
    f1 = _shift(gray, *MOTION_GLOBAL)
    sy, sx, side = MOTION_SQUARE
    pdx, pdy = MOTION_PATCH
    f1[sy + pdy:sy + pdy + side, sx + pdx:sx + pdx + side] = gray[sy:sy + side, sx:sx + side]
    b = MOTION_BLOCK
    gt = np.full((h // b, w // b, 2), np.nan, np.float32)
    gdx, gdy = MOTION_GLOBAL
    for by in range(h // b):
        for bx in range(w // b):
            y0, x0 = by * b, bx * b
            if sy <= y0 and y0 + b <= sy + side and sx <= x0 and x0 + b <= sx + side:
                gt[by, bx] = MOTION_PATCH
                continue
            # Background block: its target must be inside the frame, away from the pasted
            # square (with a block of margin on each side), and its source must not be in
            # the square either.
            ty, tx = y0 + gdy, x0 + gdx
            if ty < 0 or tx < 0 or ty + b > h or tx + b > w:
                continue
            qy0, qx0 = sy + pdy - b, sx + pdx - b
            if qy0 < ty + b and ty < qy0 + side + 2 * b and qx0 < tx + b and tx < qx0 + side + 2 * b:
                continue
            if sy - b < y0 + b and y0 < sy + side + b and sx - b < x0 + b and x0 < sx + side + b:
                continue
            gt[by, bx] = MOTION_GLOBAL
    return f1, gt


STEREO_BACKGROUND = 4
STEREO_OBJECTS = [((120, 300, 130, 150), 12), ((260, 380, 200, 120), 24)]  # (y, x, h, w), d


def make_stereo_pair(gray):
    """left = the gray scene; the right view is painted from it back to front: right[y, x - d]
    = left[y, x] with d = 4 for the background and d = 12, 24 for two fronto-parallel
    rectangles. Right pixels no left pixel lands on (background hidden in the left view)
    get seeded noise. Ground truth disparity in left coordinates as uint8; 255 marks pixels
    without one (occluded in the right view, or x - d < 0)."""
    h, w = gray.shape
    left = gray
    disp = np.full((h, w), STEREO_BACKGROUND, np.int32)
    for (y, x, hh, ww), d in STEREO_OBJECTS:
        disp[y:y + hh, x:x + ww] = d
    rng = np.random.default_rng(5150)
    right = rng.integers(0, 256, (h, w), dtype=np.uint8)
    owner = np.full((h, w), -1, np.int64)  # which left x each right pixel shows
    for y in range(h):
        # Painter's order: nearer (larger disparity) surfaces last.
        for x in np.argsort(disp[y], kind="stable"):
            tx = x - disp[y, x]
            if 0 <= tx < w:
                right[y, tx] = left[y, x]
                owner[y, tx] = x
    gt = np.full((h, w), 255, np.uint8)
    for y in range(h):
        seen = owner[y][owner[y] >= 0]
        gt[y, seen] = disp[y, seen]
    return right, gt

README = """\
# Sample data

Generated by `tools/make-sample-data.py`; `/usr/bin/python3 tools/make-sample-data.py`
regenerates every file below byte-identically (fixed seeds, no time dependence).

- `scene.png` - 640x480 8-bit RGB synthetic test scene: sky/ground gradient, sun disc, rotated and axis-aligned rectangles, a disc, a triangle, a ring, a checkerboard, a sinusoidal zone plate, a fine line/grid panel, a thin diagonal line, Gaussian noise (sigma 3).
- `scene-gray.png` - the same scene as 8-bit grayscale (BT.601 luma 0.299 R + 0.587 G + 0.114 B, rounded).
- `signal.npy` - float32, 4096 samples: sines at 0.01 and 0.04 cycles/sample, a 0.12->0.45 cycles/sample linear chirp, Gaussian noise (sigma 0.1).
- `lowpass31.npy` - float32, 31-tap Hamming-windowed-sinc low-pass kernel, cutoff 0.08 cycles/sample, sums to 1.
- `kernel-sharpen.npy` - float32 3x3 sharpen kernel [[0,-1,0],[-1,5,-1],[0,-1,0]].
- `layer-input.npy` - float32 1x3x64x64 (NCHW): centre 448x448 crop of `scene.png`, 7x7 box-downsampled, R/G/B planes as channels, scaled to [0,1].
- `layer-weights.npy` - float32 8x3x3x3 (OIHW) seeded normal weights scaled by 1/sqrt(27).
- `layer-bias.npy` - float32, 8 seeded bias values (normal, sigma 0.1).
- `motion-frame1.png` - 640x480 gray: `scene-gray.png` (frame 0) moved by (dx, dy) = (3, -2), except a 96x96 square (top-left y 160, x 256 in frame 0) that moved by (-4, 5); edges replicated.
- `motion-gt.npy` - float32 60x80x2: the true (dx, dy) of every 8x8 block of frame 0, NaN where a block mixes motions, is covered by the square or leaves the frame.
- `stereo-right.png` - 640x480 gray right view of a rectified pair whose left view is `scene-gray.png`: background at disparity 4, rectangles (y 120, x 300, 130x150) at 12 and (y 260, x 380, 200x120) at 24; right[y, x - d] = left[y, x], painted back to front; background hidden in the left view is seeded noise.
- `stereo-gt.npy` - uint8 480x640: the true disparity of every left pixel, 255 where it has none (occluded in the right view or outside it).
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="output directory (default: data/sample)")
    args = ap.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)

    scene = make_scene()
    write_png(os.path.join(out, "scene.png"), scene)
    write_png(os.path.join(out, "scene-gray.png"), to_gray(scene))

    np.save(os.path.join(out, "signal.npy"), make_signal())
    np.save(os.path.join(out, "lowpass31.npy"), make_lowpass())
    np.save(os.path.join(out, "kernel-sharpen.npy"),
            np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], dtype=np.float32))

    inp, w, b = make_layer(scene)
    np.save(os.path.join(out, "layer-input.npy"), inp)
    np.save(os.path.join(out, "layer-weights.npy"), w)
    np.save(os.path.join(out, "layer-bias.npy"), b)

    gray = to_gray(scene)
    frame1, motion_gt = make_motion_pair(gray)
    write_png(os.path.join(out, "motion-frame1.png"), frame1)
    np.save(os.path.join(out, "motion-gt.npy"), motion_gt)
    right, disp_gt = make_stereo_pair(gray)
    write_png(os.path.join(out, "stereo-right.png"), right)
    np.save(os.path.join(out, "stereo-gt.npy"), disp_gt)

    with open(os.path.join(out, "README.md"), "w", newline="\n") as f:
        f.write(README)


if __name__ == "__main__":
    main()
