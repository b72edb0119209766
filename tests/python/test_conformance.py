"""
The library (through ctypes) against numpy / scipy, in float64, on seeded random data.

Every test runs for every algorithm built into the library that serves its kind
(conftest.algorithms), and demands the algorithm's own documented error bound
(fconv_algo_info.error_bound) under DESIGN.md §4's metric:
    max |y - y_ref| / max sum |x * w|
where the denominator is the same convolution of np.abs(x) with np.abs(w), in float64.
An algorithm that does not accept a shape may say so with FCONV_EUNSUPPORTED (then the test
is skipped for it); "reference" and "auto" must accept everything valid.
"""
import numpy as np
import pytest
import scipy.ndimage as ndimage
import scipy.signal as signal

from conftest import (make_rng, FCONV_EINVAL, FCONV_EUNSUPPORTED, FastconvError, algorithms, assert_close,
                      conv1d, conv2d, conv2d_reference, error_bound, filter2d,
                      filter2d_reference, suite_device)

# The "auto" choice is checked too, against the default tolerance (FCONV_DEFAULT_TOLERANCE).
AUTO_BOUND = 1e-5


def _algos(kind):
    return algorithms(kind) + ["auto"]


def _bound(algo):
    return AUTO_BOUND if algo == "auto" else error_bound(algo)


def _call(algo, fn, *args, **kwargs):
    """Run fn; an algorithm other than reference/auto may refuse a shape as unsupported."""
    try:
        return fn(*args, algo=algo, **kwargs)
    except FastconvError as e:
        if e.status == FCONV_EUNSUPPORTED and algo not in ("reference", "auto"):
            pytest.skip(f"{algo} does not serve this shape: {e.message}")
        raise


def _rand(rng, shape):
    """float32 normal data, returned as the float32 array (what the library sees)."""
    return rng.standard_normal(shape).astype(np.float32)


# ==========================================================================================
# conv1d vs numpy.convolve / numpy.correlate
# ==========================================================================================

_rng1 = make_rng(1001)
CONV1D_SIZES = [(1, 1), (5, 1), (1, 5), (8, 2), (7, 4), (9, 3), (16, 16), (10, 13), (3, 8),
                (100, 31), (257, 64), (2, 7)]
CONV1D_SIZES += [tuple(int(v) for v in _rng1.integers(1, 80, 2)) for _ in range(6)]


def _conv1d_design(x, k, mode, correlate):
    """DESIGN.md §2 literally: full[j] = sum_t k[t] x[j - t], windows of full."""
    x64, k64 = x.astype(np.float64), k.astype(np.float64)
    if correlate:
        k64 = k64[::-1]
    n, m = x.size, k.size
    full = np.convolve(x64, k64, "full")
    if mode == "full":
        return full
    if mode == "same":
        return full[(m - 1) // 2:(m - 1) // 2 + n]
    return full[m - 1:n]


@pytest.mark.parametrize("algo", _algos("conv1d"))
@pytest.mark.parametrize("correlate", [False, True], ids=["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", CONV1D_SIZES, ids=[f"n{n}m{m}" for n, m in CONV1D_SIZES])
def test_conv1d_vs_numpy(n, m, mode, correlate, algo):
    rng = make_rng(n * 1000 + m)
    x, k = _rand(rng, n), _rand(rng, m)
    if mode == "valid" and m > n:
        with pytest.raises(FastconvError) as e:
            conv1d(x, k, mode, correlate, algo=algo)
        assert e.value.status == FCONV_EINVAL and e.value.message
        return
    y = _call(algo, conv1d, x, k, mode, correlate)
    x64, k64 = x.astype(np.float64), k.astype(np.float64)
    np_fn = np.correlate if correlate else np.convolve
    if mode == "same" and m > n:
        # numpy returns max(n, m) values here; the library returns n, as scipy.signal does.
        ref = (signal.correlate if correlate else signal.convolve)(x64, k64, "same")
        design = _conv1d_design(x, k, mode, correlate)
        assert np.allclose(ref, design)  # scipy and the design rule agree
    else:
        ref = np_fn(x64, k64, mode)
    scale = np_fn(np.abs(x64), np.abs(k64), "full")
    assert y.shape == ref.shape
    assert_close(y, ref, scale, _bound(algo), f"conv1d {mode} correlate={correlate}")
    # The literal design rule, too.
    assert_close(y, _conv1d_design(x, k, mode, correlate), scale, _bound(algo), "design rule")


@pytest.mark.parametrize("algo", _algos("conv1d"))
def test_conv1d_sample_signal(algo):
    import os
    from conftest import source_dir
    x = np.load(os.path.join(source_dir(), "data", "sample", "signal.npy"))
    k = np.load(os.path.join(source_dir(), "data", "sample", "lowpass31.npy"))
    for mode in ("full", "same", "valid"):
        y = _call(algo, conv1d, x, k, mode)
        ref = np.convolve(x.astype(np.float64), k.astype(np.float64), mode)
        scale = np.convolve(np.abs(x.astype(np.float64)), np.abs(k.astype(np.float64)), "full")
        assert_close(y, ref, scale, _bound(algo), mode)


# ==========================================================================================
# filter2d vs scipy.signal.convolve2d, numpy.pad + convolve2d, scipy.ndimage
# ==========================================================================================

SCIPY_BOUNDARY = {"zero": "fill", "constant": "fill", "reflect": "symm", "wrap": "wrap"}
NDIMAGE_MODE = {"zero": "constant", "constant": "constant", "replicate": "nearest",
                "reflect": "reflect", "mirror": "mirror", "wrap": "wrap"}
BORDER_VALUE = -1.75  # the V of constant=V


def _per_channel(fn, x, *args):
    if x.ndim == 2:
        return fn(x, *args)
    return np.stack([fn(x[:, :, c], *args) for c in range(x.shape[2])], axis=2)


# (H, W, channels or 0 for a 2D image), (KH, KW): 1x1 images, kernels larger than the image,
# even and non-square kernels; plus seeded random ones.
FILTER_CASES = [
    ((1, 1, 0), (1, 1)), ((1, 1, 0), (3, 3)), ((1, 1, 3), (2, 5)), ((5, 6, 0), (1, 1)),
    ((7, 9, 0), (3, 3)), ((8, 8, 0), (2, 2)), ((6, 11, 0), (4, 3)), ((9, 5, 2), (3, 6)),
    ((3, 4, 0), (5, 7)), ((2, 2, 0), (9, 9)), ((4, 3, 3), (11, 2)), ((1, 7, 0), (3, 3)),
    ((10, 1, 0), (1, 4)), ((16, 12, 4), (5, 5)), ((13, 17, 1), (7, 4)),
]
_rng2 = make_rng(2002)
for _ in range(5):
    _h, _w = (int(v) for v in _rng2.integers(1, 20, 2))
    _kh, _kw = (int(v) for v in _rng2.integers(1, 12, 2))
    FILTER_CASES.append(((_h, _w, int(_rng2.integers(0, 4))), (_kh, _kw)))
FILTER_IDS = [f"{h}x{w}x{c}-k{kh}x{kw}" for (h, w, c), (kh, kw) in FILTER_CASES]
BORDER_NAMES = ["zero", "constant", "replicate", "reflect", "mirror", "wrap"]


def _filter_data(case):
    (h, w, c), (kh, kw) = case
    rng = make_rng([h, w, c, kh, kw])
    x = _rand(rng, (h, w, c) if c else (h, w))
    k = _rand(rng, (kh, kw))
    return x, k


@pytest.mark.parametrize("algo", _algos("filter2d"))
@pytest.mark.parametrize("correlate", [False, True], ids=["convolve", "correlate"])
@pytest.mark.parametrize("border", BORDER_NAMES)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("case", FILTER_CASES, ids=FILTER_IDS)
def test_filter2d_vs_reference(case, mode, border, correlate, algo):
    x, k = _filter_data(case)
    (h, w, _), (kh, kw) = case
    value = BORDER_VALUE if border == "constant" else 0.0
    if mode == "valid" and (kh > h or kw > w):
        with pytest.raises(FastconvError) as e:
            filter2d(x, k, mode, border, value, correlate, algo=algo)
        assert e.value.status == FCONV_EINVAL and e.value.message
        return
    y = _call(algo, filter2d, x, k, mode, border, value, correlate)
    ref = _per_channel(filter2d_reference, x, k, mode, border, value, correlate)
    scale = _per_channel(filter2d_reference, np.abs(x), np.abs(k), mode, border, abs(value), correlate)
    assert y.shape == ref.shape
    bound = _bound(algo)
    assert_close(y, ref, scale, bound, "numpy.pad reference")

    # scipy.signal.convolve2d where it has the border. (scipy 1.10's symm/wrap follow
    # numpy.pad's repeated reflection / wrap even when the kernel is larger than the image;
    # older scipy versions did not, and there numpy.pad's rule — DESIGN.md §2 — decides:
    # the scipy comparison is skipped when scipy and the numpy.pad reference disagree.)
    if border in SCIPY_BOUNDARY:
        kk = (k[::-1, ::-1] if correlate else k).astype(np.float64)
        sref = _per_channel(lambda ch: signal.convolve2d(ch.astype(np.float64), kk, mode,
                                                         boundary=SCIPY_BOUNDARY[border],
                                                         fillvalue=value), x)
        if sref.shape == ref.shape and np.allclose(sref, ref, rtol=1e-9, atol=1e-9):
            assert_close(y, sref, scale, bound, "scipy.signal.convolve2d")

    # scipy.ndimage for odd kernels in 'same' mode (centred there): correlate, or convolve.
    if mode == "same" and kh % 2 == 1 and kw % 2 == 1:
        nd_fn = ndimage.correlate if correlate else ndimage.convolve
        nref = _per_channel(lambda ch: nd_fn(ch.astype(np.float64), k.astype(np.float64),
                                             mode=NDIMAGE_MODE[border], cval=value), x)
        assert_close(y, nref, scale, bound, f"scipy.ndimage mode={NDIMAGE_MODE[border]}")


@pytest.mark.parametrize("algo", _algos("filter2d"))
@pytest.mark.parametrize("kshape", [(2, 2), (4, 3), (3, 4), (3, 3), (5, 5), (6, 2)])
def test_filter2d_correlate_vs_scipy_correlate2d(kshape, algo):
    """--correlate is convolving with the flipped kernel; in 'full' and 'valid' that is exactly
    scipy.signal.correlate2d. In 'same' mode for even kernel sizes scipy.signal.correlate2d picks
    the window one pixel further (full[kh//2 + i] instead of full[(kh-1)//2 + i], per axis):
    the library follows numpy.correlate / cv2.filter2D / scipy.ndimage (DESIGN.md §2)."""
    rng = make_rng(31 + kshape[0] * 7 + kshape[1])
    x = _rand(rng, (9, 11))
    k = _rand(rng, kshape)
    x64, k64 = x.astype(np.float64), k.astype(np.float64)
    scale = signal.convolve2d(np.abs(x64), np.abs(k64), "full")
    bound = _bound(algo)
    for mode in ("full", "valid"):
        y = _call(algo, filter2d, x, k, mode, "zero", 0.0, True)
        assert_close(y, signal.correlate2d(x64, k64, mode), scale, bound, mode)
    y = _call(algo, filter2d, x, k, "same", "zero", 0.0, True)
    full = signal.correlate2d(x64, k64, "full")
    kh, kw = kshape
    assert_close(y, full[(kh - 1) // 2:(kh - 1) // 2 + 9, (kw - 1) // 2:(kw - 1) // 2 + 11], scale,
                 bound, "same")
    scipy_same = signal.correlate2d(x64, k64, "same")
    assert np.allclose(scipy_same, full[kh // 2:kh // 2 + 9, kw // 2:kw // 2 + 11])
    if kh % 2 and kw % 2:
        assert_close(y, scipy_same, scale, bound, "same, odd kernel")


@pytest.mark.parametrize("algo", _algos("filter2d"))
def test_filter2d_channels_independent(algo):
    """H x W x C: every channel is filtered on its own with the same kernel."""
    rng = make_rng(77)
    x = _rand(rng, (12, 10, 3))
    k = _rand(rng, (3, 5))
    y = _call(algo, filter2d, x, k, "same", "reflect", 0.0, False)
    for c in range(3):
        yc = _call(algo, filter2d, np.ascontiguousarray(x[:, :, c]), k, "same", "reflect", 0.0, False)
        scale = filter2d_reference(np.abs(x[:, :, c]), np.abs(k), "same", "reflect", 0.0, False)
        assert_close(y[:, :, c], yc, scale, 2 * _bound(algo), f"channel {c}")


# ==========================================================================================
# conv2d vs a float64 numpy reference (torch.nn.functional.conv2d semantics)
# ==========================================================================================

def _conv2d_scale(x, w, bias, **kw):
    kw = dict(kw)
    kw.pop("relu", None)
    b = None if bias is None else np.abs(np.asarray(bias, dtype=np.float64))
    return conv2d_reference(np.abs(x), np.abs(w), b, **kw)


# name: (N, C, H, W, K, R, S, options)
CONV2D_CASES = {
    "1x1": (1, 3, 5, 6, 4, 1, 1, {}),
    "3x3": (1, 4, 9, 8, 5, 3, 3, {}),
    "3x3-pad1": (2, 3, 8, 8, 6, 3, 3, dict(pad=(1, 1, 1, 1))),
    "asym-pad": (1, 2, 7, 9, 3, 3, 2, dict(pad=(0, 2, 3, 1))),
    "big-pad": (1, 2, 4, 4, 2, 3, 3, dict(pad=(5, 4, 6, 7))),
    "stride2": (1, 3, 11, 10, 4, 3, 3, dict(stride=(2, 2), pad=(1, 1, 1, 1))),
    "stride-gt-kernel": (2, 2, 13, 12, 3, 2, 3, dict(stride=(5, 4))),
    "stride-asym": (1, 3, 12, 9, 2, 5, 3, dict(stride=(3, 1), pad=(2, 0, 1, 2))),
    "dilation": (1, 3, 12, 13, 4, 3, 3, dict(dilation=(2, 3))),
    "dilation-stride-pad": (2, 2, 14, 11, 3, 3, 2, dict(stride=(2, 3), pad=(3, 1, 0, 2), dilation=(3, 2))),
    "groups2": (1, 4, 8, 7, 6, 3, 3, dict(groups=2, pad=(1, 1, 1, 1))),
    "groups3-bias": (2, 6, 6, 6, 9, 2, 2, dict(groups=3, bias=True)),
    "depthwise": (1, 5, 9, 9, 5, 3, 3, dict(groups=5, pad=(1, 1, 1, 1))),
    "depthwise-x2": (2, 4, 10, 8, 8, 3, 3, dict(groups=4, stride=(2, 2), pad=(1, 1, 1, 1), bias=True)),
    "bias": (1, 3, 7, 7, 5, 3, 3, dict(bias=True)),
    "relu": (1, 3, 7, 7, 5, 3, 3, dict(relu=True)),
    "bias-relu": (3, 3, 6, 8, 4, 3, 3, dict(bias=True, relu=True, pad=(1, 1, 1, 1))),
    "batch4": (4, 2, 6, 5, 3, 3, 3, dict(pad=(1, 0, 1, 0))),
    "kernel-eq-input": (1, 2, 5, 4, 3, 5, 4, {}),
    "1x1-image": (2, 3, 1, 1, 4, 1, 1, dict(bias=True)),
    "1x1-image-padded": (1, 2, 1, 1, 3, 3, 3, dict(pad=(1, 1, 1, 1))),
    "wide-channels": (1, 32, 6, 6, 16, 3, 3, dict(pad=(1, 1, 1, 1))),
    "7x7-stride2": (1, 3, 20, 20, 4, 7, 7, dict(stride=(2, 2), pad=(3, 3, 3, 3), bias=True, relu=True)),
    "nonsquare-kernel": (1, 2, 9, 12, 3, 1, 5, dict(pad=(0, 2, 0, 2))),
}


@pytest.mark.parametrize("algo", _algos("conv2d"))
@pytest.mark.parametrize("name", list(CONV2D_CASES))
def test_conv2d_vs_reference(name, algo):
    n, c, h, w, k, r, s, opts = CONV2D_CASES[name]
    opts = dict(opts)
    groups = opts.get("groups", 1)
    rng = make_rng(sum(map(ord, name)))
    x = _rand(rng, (n, c, h, w))
    wt = _rand(rng, (k, c // groups, r, s))
    bias = _rand(rng, k) if opts.pop("bias", False) else None
    y = _call(algo, conv2d, x, wt, bias, **opts)
    ref = conv2d_reference(x, wt, bias, **opts)
    scale = _conv2d_scale(x, wt, bias, **opts)
    assert y.shape == ref.shape
    assert_close(y, ref, scale, _bound(algo), name)
    if opts.get("relu"):
        assert np.all(y >= 0)


@pytest.mark.parametrize("algo", _algos("conv2d"))
@pytest.mark.parametrize("name", list(CONV2D_CASES))
def test_conv2d_nhwc_vs_reference(name, algo):
    """The same layers channels last: x as N x H x W x C, y as N x P x Q x K (implicit-gemm
    and the reference read it as it lies, the others through NCHW copies)."""
    n, c, h, w, k, r, s, opts = CONV2D_CASES[name]
    opts = dict(opts)
    groups = opts.get("groups", 1)
    rng = make_rng(sum(map(ord, name)) + 1)
    x = _rand(rng, (n, c, h, w))
    wt = _rand(rng, (k, c // groups, r, s))
    bias = _rand(rng, k) if opts.pop("bias", False) else None
    y = _call(algo, conv2d, np.ascontiguousarray(x.transpose(0, 2, 3, 1)), wt, bias, layout="nhwc", **opts)
    ref = conv2d_reference(x, wt, bias, **opts).transpose(0, 2, 3, 1)
    scale = _conv2d_scale(x, wt, bias, **opts).transpose(0, 2, 3, 1)
    assert y.shape == ref.shape
    assert_close(y, ref, scale, _bound(algo), name)


@pytest.mark.parametrize("algo", _algos("conv2d"))
def test_conv2d_sample_layer(algo):
    import os
    from conftest import source_dir
    d = os.path.join(source_dir(), "data", "sample")
    x = np.load(os.path.join(d, "layer-input.npy"))
    w = np.load(os.path.join(d, "layer-weights.npy"))
    b = np.load(os.path.join(d, "layer-bias.npy"))
    opts = dict(pad=(1, 1, 1, 1))
    y = _call(algo, conv2d, x, w, b, **opts)
    assert_close(y, conv2d_reference(x, w, b, **opts), _conv2d_scale(x, w, b, **opts), _bound(algo))


@pytest.mark.skipif(suite_device() != 0, reason="names the CPU reference and CPU threads")
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_conv2d_threads(threads):
    """Any thread count gives the answer (the reference is deterministic: identical bits)."""
    rng = make_rng(5)
    x = _rand(rng, (3, 4, 9, 9))
    w = _rand(rng, (6, 4, 3, 3))
    y1 = conv2d(x, w, pad=(1, 1, 1, 1), algo="reference", threads=1)
    yt = conv2d(x, w, pad=(1, 1, 1, 1), algo="reference", threads=threads)
    assert np.array_equal(y1, yt)


@pytest.mark.parametrize("bad", [
    dict(groups=3),                       # 4 channels
    dict(pad=(0, 0, 0, 0), stride=(1, 1), dilation=(5, 1)),  # dilated kernel taller than input
], ids=["groups-not-dividing", "no-output"])
def test_conv2d_invalid(bad):
    rng = make_rng(9)
    x = _rand(rng, (1, 4, 6, 6))
    w = _rand(rng, (6, 1 if "groups" in bad else 4, 3, 3))
    with pytest.raises(FastconvError) as e:
        conv2d(x, w, algo="reference", **bad)
    assert e.value.status == FCONV_EINVAL
    assert e.value.message  # fconv_last_error() says what was wrong


def test_every_algorithm_enumerated():
    """The suite's walk over algorithms (conftest.ALGO_COUNT) reaches the header's last one: a
    stale count had left winograd-stride2 out of every test here."""
    import os
    import re
    from conftest import ALGO_COUNT, source_dir
    with open(os.path.join(source_dir(), "include", "fastconv.h")) as f:
        count = int(re.search(r"FCONV_ALGO_COUNT_\s*=\s*(\d+)", f.read()).group(1))
    assert ALGO_COUNT == count
