"""
Shared machinery of the Python conformance tests: the library through ctypes, the CLI
through subprocess, and float64 numpy references.

Environment (set by ctest, see tests/tests.cmake):
  FASTCONV_LIB         path of libfastconv.so
  FASTCONV_CLI         path of the fastconv executable
  FASTCONV_SOURCE_DIR  repository root (sample data)
  FASTCONV_TEST_DEVICE cpu (default), opencl or cuda: the device every plan of the suite
                       runs on, and algorithms() lists that device's algorithms (docs/gpu.md)

The helpers are plain module-level functions (tests import them with
`from conftest import ...`) and the most used ones are also fixtures.
"""
import ctypes
import os
import subprocess

import numpy as np
import pytest
import scipy.signal

# ------------------------------------------------------------------------------------------
# Environment
# ------------------------------------------------------------------------------------------

_ENV_HELP = (
    "the Python conformance tests need FASTCONV_LIB (path of libfastconv.so) and "
    "FASTCONV_CLI (path of the fastconv executable) in the environment, e.g.\n"
    "  FASTCONV_LIB=build/libfastconv.so FASTCONV_CLI=build/fastconv "
    "FASTCONV_SOURCE_DIR=$PWD /usr/bin/python3 -m pytest -q tests/python\n"
    "(ctest sets them; see tests/tests.cmake)")


def _env_path(name, must_exist=True):
    value = os.environ.get(name)
    if not value:
        raise pytest.UsageError(f"{name} is not set: {_ENV_HELP}")
    if must_exist and not os.path.exists(value):
        raise pytest.UsageError(f"{name}={value}: no such file: {_ENV_HELP}")
    return value


def pytest_configure(config):
    # Fail the whole session at once, with one clear message, rather than every test.
    _env_path("FASTCONV_LIB")
    _env_path("FASTCONV_CLI")


def base_seed():
    """FCONV_TEST_SEED (default 0) shifts every random draw of the suite (STYLE.md); the
    default run is fully deterministic."""
    return int(os.environ.get("FCONV_TEST_SEED", "0"))


def make_rng(*key):
    """A numpy Generator seeded by (FCONV_TEST_SEED, *key): the same key gives the same data."""
    flat = []
    for k in key:
        flat.extend(k if isinstance(k, (list, tuple)) else [k])
    return np.random.default_rng([base_seed(), *[int(k) for k in flat]])


def pytest_report_header(config):
    return f"fastconv: FASTCONV_LIB={os.environ.get('FASTCONV_LIB')} FCONV_TEST_SEED={base_seed()}"


def source_dir():
    value = os.environ.get("FASTCONV_SOURCE_DIR")
    if value:
        return value
    # Not set: the repository root is two levels above this file.
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# ------------------------------------------------------------------------------------------
# ctypes mirror of include/fastconv.h (field order and types exactly as in the header;
# C enums are int)
# ------------------------------------------------------------------------------------------

c_int64 = ctypes.c_int64
c_enum = ctypes.c_int

FCONV_OK, FCONV_EINVAL, FCONV_EUNSUPPORTED, FCONV_ENOMEM = 0, 1, 2, 3
FCONV_EWORKSPACE, FCONV_ENODEVICE, FCONV_EOVERFLOW, FCONV_EINTERNAL = 4, 5, 6, 7

ALGO_AUTO = 0
ALGO_COUNT = 26  # FCONV_ALGO_COUNT_ (include/fastconv.h): one past the last value

DEVICES = {"cpu": 0, "opencl": 1, "cuda": 2}


def suite_device():
    """The fconv_device value the suite runs on (FASTCONV_TEST_DEVICE, default cpu)."""
    name = os.environ.get("FASTCONV_TEST_DEVICE", "cpu")
    if name not in DEVICES:
        raise pytest.UsageError(f"FASTCONV_TEST_DEVICE={name}: expected one of {sorted(DEVICES)}")
    return DEVICES[name]

MODES = {"full": 0, "same": 1, "valid": 2}
BORDERS = {"zero": 0, "constant": 1, "replicate": 2, "reflect": 3, "mirror": 4, "wrap": 5}
ACTIVATION_NONE, ACTIVATION_RELU = 0, 1
LAYOUTS = {"nchw": 0, "nhwc": 1}

SERVES = {"conv2d": 0x1, "filter2d": 0x2, "conv1d": 0x4}


class Conv2dDesc(ctypes.Structure):
    _fields_ = [
        ("n", c_int64), ("c", c_int64), ("h", c_int64), ("w", c_int64),
        ("k", c_int64), ("r", c_int64), ("s", c_int64),
        ("stride_h", c_int64), ("stride_w", c_int64),
        ("pad_top", c_int64), ("pad_left", c_int64), ("pad_bottom", c_int64), ("pad_right", c_int64),
        ("dilation_h", c_int64), ("dilation_w", c_int64),
        ("groups", c_int64),
        ("has_bias", ctypes.c_int),
        ("activation", c_enum),
        ("layout", c_enum),
    ]


class Filter2dDesc(ctypes.Structure):
    _fields_ = [
        ("h", c_int64), ("w", c_int64),
        ("channels", c_int64),
        ("kh", c_int64), ("kw", c_int64),
        ("mode", c_enum),
        ("border", c_enum),
        ("border_value", ctypes.c_float),
        ("correlate", ctypes.c_int),
    ]


class Conv1dDesc(ctypes.Structure):
    _fields_ = [
        ("n", c_int64),
        ("m", c_int64),
        ("mode", c_enum),
        ("correlate", ctypes.c_int),
    ]


class Options(ctypes.Structure):
    _fields_ = [
        ("algo", c_enum),
        ("threads", ctypes.c_int),
        ("max_workspace_bytes", ctypes.c_size_t),
        ("tolerance", ctypes.c_double),
        ("flags", ctypes.c_uint),
        ("device", c_enum),
        ("max_isa", c_enum),  # fconv_isa
    ]


class AlgoInfo(ctypes.Structure):
    _fields_ = [
        ("algo", c_enum),
        ("name", ctypes.c_char_p),
        ("summary", ctypes.c_char_p),
        ("serves", ctypes.c_uint),
        ("error_bound", ctypes.c_double),
        ("devices", ctypes.c_uint),
    ]


_FLOAT_P = ctypes.POINTER(ctypes.c_float)
_PLAN_P = ctypes.c_void_p


def _declare(lib):
    def fn(name, restype, *argtypes):
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = list(argtypes)

    st = ctypes.c_int
    fn("fconv_strerror", ctypes.c_char_p, st)
    fn("fconv_last_error", ctypes.c_char_p)
    fn("fconv_plan_conv2d", st, ctypes.POINTER(Conv2dDesc), ctypes.POINTER(Options), _FLOAT_P,
       _FLOAT_P, ctypes.POINTER(_PLAN_P))
    fn("fconv_plan_filter2d", st, ctypes.POINTER(Filter2dDesc), ctypes.POINTER(Options), _FLOAT_P,
       ctypes.POINTER(_PLAN_P))
    fn("fconv_plan_conv1d", st, ctypes.POINTER(Conv1dDesc), ctypes.POINTER(Options), _FLOAT_P,
       ctypes.POINTER(_PLAN_P))
    fn("fconv_plan_destroy", None, _PLAN_P)
    fn("fconv_plan_output_shape", ctypes.c_int, _PLAN_P, ctypes.POINTER(c_int64))
    fn("fconv_plan_input_elements", c_int64, _PLAN_P)
    fn("fconv_plan_weight_elements", c_int64, _PLAN_P)
    fn("fconv_plan_output_elements", c_int64, _PLAN_P)
    fn("fconv_plan_workspace_size", ctypes.c_size_t, _PLAN_P)
    fn("fconv_plan_algo", c_enum, _PLAN_P)
    fn("fconv_plan_explain", ctypes.c_char_p, _PLAN_P)
    fn("fconv_plan_threads", ctypes.c_int, _PLAN_P)
    fn("fconv_execute", st, _PLAN_P, _FLOAT_P, _FLOAT_P, _FLOAT_P, _FLOAT_P)
    fn("fconv_execute_with_workspace", st, _PLAN_P, _FLOAT_P, _FLOAT_P, _FLOAT_P, _FLOAT_P,
       ctypes.c_void_p, ctypes.c_size_t)
    fn("fconv_algo_get_info", st, c_enum, ctypes.POINTER(AlgoInfo))
    fn("fconv_algo_name", ctypes.c_char_p, c_enum)
    fn("fconv_algo_from_name", st, ctypes.c_char_p, ctypes.POINTER(c_enum))
    fn("fconv_version", ctypes.c_char_p)
    fn("fconv_gemm_report", ctypes.c_char_p)
    fn("fconv_build_options", ctypes.c_char_p)
    fn("fconv_cpu_features", ctypes.c_char_p)
    fn("fconv_default_threads", ctypes.c_int)
    fn("fconv_device_count", ctypes.c_int, c_enum)
    fn("fconv_device_name", st, c_enum, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t)
    fn("fconv_last_execute_timing", st, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double))
    return lib


_LIB = None


def get_lib():
    """The library, loaded once (ctypes.CDLL of $FASTCONV_LIB with every prototype declared)."""
    global _LIB
    if _LIB is None:
        _LIB = _declare(ctypes.CDLL(_env_path("FASTCONV_LIB")))
    return _LIB


@pytest.fixture(scope="session")
def lib():
    return get_lib()


class FastconvError(RuntimeError):
    """A library call failed: .status (fconv_status), .message (fconv_last_error())."""

    def __init__(self, call, status, message):
        self.status = status
        self.message = message
        super().__init__(f"{call}: status {status}: {message}")


def last_error():
    return get_lib().fconv_last_error().decode()


def _check(call, status):
    if status != FCONV_OK:
        raise FastconvError(call, status, last_error())


def _fptr(a):
    if a is None:
        return None
    assert a.dtype == np.float32 and a.flags.c_contiguous
    return a.ctypes.data_as(_FLOAT_P)


def _f32(a):
    return np.ascontiguousarray(a, dtype=np.float32)


# ------------------------------------------------------------------------------------------
# Algorithms
# ------------------------------------------------------------------------------------------

def algo_infos():
    """Every algorithm built into the library: list of dicts (algo, name, serves, error_bound)."""
    lib = get_lib()
    out = []
    for a in range(1, ALGO_COUNT):
        info = AlgoInfo()
        if lib.fconv_algo_get_info(a, ctypes.byref(info)) == FCONV_OK:
            out.append({"algo": a, "name": info.name.decode(), "summary": info.summary.decode(),
                        "serves": info.serves, "error_bound": info.error_bound,
                        "devices": info.devices})
    return out


def algorithms(kind):
    """CLI names of every built-in algorithm that serves kind ('conv2d', 'filter2d', 'conv1d')
    on the suite's device (FASTCONV_TEST_DEVICE)."""
    dev = 1 << suite_device()
    return [i["name"] for i in algo_infos() if i["serves"] & SERVES[kind] and i["devices"] & dev]


def algo_value(name):
    v = c_enum()
    _check(f"fconv_algo_from_name({name!r})", get_lib().fconv_algo_from_name(name.encode(), ctypes.byref(v)))
    return v.value


def error_bound(name):
    for i in algo_infos():
        if i["name"] == name:
            return i["error_bound"]
    raise KeyError(name)


def _options(algo, threads):
    o = Options()
    o.algo = algo_value(algo) if isinstance(algo, str) else int(algo)
    o.threads = threads
    o.device = suite_device()
    return o


# ------------------------------------------------------------------------------------------
# plan + execute + destroy
# ------------------------------------------------------------------------------------------

class _Plan:
    def __init__(self, call, planner, desc, options, *weights):
        self.lib = get_lib()
        self.handle = _PLAN_P()
        _check(call, planner(ctypes.byref(desc), ctypes.byref(options), *weights,
                             ctypes.byref(self.handle)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.lib.fconv_plan_destroy(self.handle)
        self.handle = None

    def output_shape(self):
        shape = (c_int64 * 4)()
        nd = self.lib.fconv_plan_output_shape(self.handle, shape)
        return tuple(shape[:nd])

    def algo_name(self):
        return self.lib.fconv_algo_name(self.lib.fconv_plan_algo(self.handle)).decode()

    def run(self, x, w=None, bias=None):
        lib = self.lib
        assert lib.fconv_plan_input_elements(self.handle) == x.size
        shape = self.output_shape()
        n_out = lib.fconv_plan_output_elements(self.handle)
        assert n_out == int(np.prod(shape))
        # A sentinel fill: every output element must be written.
        y = np.full(shape, np.nan, dtype=np.float32)
        _check("fconv_execute", lib.fconv_execute(self.handle, _fptr(x), _fptr(w), _fptr(bias), _fptr(y)))
        return y


def conv2d(x, w, bias=None, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1,
           relu=False, algo="auto", threads=0, layout="nchw"):
    """y = conv2d(x[N,C,H,W], w[K,C/g,R,S]) through the library (weights given at plan time).
    pad is (top, left, bottom, right). layout "nhwc": x is [N,H,W,C] and y [N,P,Q,K].
    Raises FastconvError on failure."""
    x, w = _f32(x), _f32(w)
    bias = None if bias is None else _f32(bias)
    d = Conv2dDesc()
    if layout == "nhwc":
        d.n, d.h, d.w, d.c = x.shape
    else:
        d.n, d.c, d.h, d.w = x.shape
    d.layout = LAYOUTS[layout]
    d.k, _, d.r, d.s = w.shape
    d.stride_h, d.stride_w = stride
    d.pad_top, d.pad_left, d.pad_bottom, d.pad_right = pad
    d.dilation_h, d.dilation_w = dilation
    d.groups = groups
    d.has_bias = int(bias is not None)
    d.activation = ACTIVATION_RELU if relu else ACTIVATION_NONE
    lib = get_lib()
    with _Plan("fconv_plan_conv2d", lib.fconv_plan_conv2d, d, _options(algo, threads),
               _fptr(w), _fptr(bias)) as p:
        return p.run(x)


def filter2d(img, k, mode="same", border="zero", value=0.0, correlate=False, algo="auto", threads=0):
    """filter2d of img (H x W or H x W x C) with k (KH x KW) through the library; the result
    has img's rank. Raises FastconvError on failure."""
    img, k = _f32(img), _f32(k)
    assert img.ndim in (2, 3) and k.ndim == 2
    d = Filter2dDesc()
    d.h, d.w = img.shape[:2]
    d.channels = img.shape[2] if img.ndim == 3 else 1
    d.kh, d.kw = k.shape
    d.mode = MODES[mode]
    d.border = BORDERS[border]
    d.border_value = value
    d.correlate = int(bool(correlate))
    lib = get_lib()
    with _Plan("fconv_plan_filter2d", lib.fconv_plan_filter2d, d, _options(algo, threads), _fptr(k)) as p:
        y = p.run(img)
    return y if img.ndim == 3 else y[:, :, 0]


def conv1d(x, k, mode="full", correlate=False, algo="auto", threads=0):
    """numpy.convolve / numpy.correlate through the library. Raises FastconvError on failure."""
    x, k = _f32(x), _f32(k)
    d = Conv1dDesc()
    d.n, d.m = x.size, k.size
    d.mode = MODES[mode]
    d.correlate = int(bool(correlate))
    lib = get_lib()
    with _Plan("fconv_plan_conv1d", lib.fconv_plan_conv1d, d, _options(algo, threads), _fptr(k)) as p:
        return p.run(x)


# ------------------------------------------------------------------------------------------
# Error metric (DESIGN.md §4)
# ------------------------------------------------------------------------------------------

def normalized_error(y, yref, scale):
    """max|y - yref| / max(scale), scale = sum |x*w| per output (the same convolution applied
    to np.abs of the inputs, in float64). NaN anywhere in y counts as an infinite error."""
    y = np.asarray(y, dtype=np.float64)
    yref = np.asarray(yref, dtype=np.float64)
    assert y.shape == yref.shape, f"shape {y.shape} != reference {yref.shape}"
    if y.size == 0:
        return 0.0
    if not np.all(np.isfinite(y)):
        return np.inf
    denom = float(np.max(scale)) if np.size(scale) else 0.0
    diff = float(np.max(np.abs(y - yref)))
    if denom == 0.0:
        return diff  # an all-zero problem: the answer must be (almost) exactly zero
    return diff / denom


def assert_close(y, yref, scale, bound, what=""):
    err = normalized_error(y, yref, scale)
    assert err <= bound, f"{what}: normalized error {err:.3g} > bound {bound:.1g}"


# ------------------------------------------------------------------------------------------
# float64 references
# ------------------------------------------------------------------------------------------

NP_PAD_MODE = {"zero": "constant", "constant": "constant", "replicate": "edge",
               "reflect": "symmetric", "mirror": "reflect", "wrap": "wrap"}


def filter2d_reference(x, k, mode="same", border="zero", value=0.0, correlate=False):
    """float64 filter2d (DESIGN.md §2) of x (H x W, or H x W x C channel by channel): extend x
    by numpy.pad's rule far enough for the full output, take the 'valid' convolution (= the
    full output), crop the mode's window (same: from (kh-1)//2; valid: from kh-1)."""
    if x.ndim == 3:
        return np.stack([filter2d_reference(x[:, :, c], k, mode, border, value, correlate)
                         for c in range(x.shape[2])], axis=2)
    x = np.asarray(x, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if correlate:
        k = k[::-1, ::-1]
    kh, kw = k.shape
    h, w = x.shape
    pad = ((kh - 1, kh - 1), (kw - 1, kw - 1))
    if NP_PAD_MODE[border] == "constant":
        xp = np.pad(x, pad, mode="constant", constant_values=value if border == "constant" else 0.0)
    else:
        xp = np.pad(x, pad, mode=NP_PAD_MODE[border])
    full = scipy.signal.convolve2d(xp, k, "valid")
    assert full.shape == (h + kh - 1, w + kw - 1)
    if mode == "full":
        return full
    if mode == "same":
        return full[(kh - 1) // 2:(kh - 1) // 2 + h, (kw - 1) // 2:(kw - 1) // 2 + w]
    return full[kh - 1:h, kw - 1:w]


def conv2d_reference(x, w, bias=None, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1,
                     relu=False):
    """float64 conv2d: explicit zero padding (top, left, bottom, right), then a sum over the
    kernel taps (r, s) of strided/dilated slices, per group."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    sh, sw = stride
    pt, pl, pb, pr = pad
    dh, dw = dilation
    assert c == cg * groups and k % groups == 0
    p = (h + pt + pb - dh * (r - 1) - 1) // sh + 1
    q = (wd + pl + pr - dw * (s - 1) - 1) // sw + 1
    assert p >= 1 and q >= 1
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    y = np.zeros((n, k, p, q))
    kg = k // groups
    for g in range(groups):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * kg:(g + 1) * kg]
        for i in range(r):
            for j in range(s):
                patch = xg[:, :, i * dh:i * dh + (p - 1) * sh + 1:sh, j * dw:j * dw + (q - 1) * sw + 1:sw]
                assert patch.shape == (n, cg, p, q)
                y[:, g * kg:(g + 1) * kg] += np.einsum("ncpq,kc->nkpq", patch, wg[:, :, i, j])
    if bias is not None:
        y += np.asarray(bias, dtype=np.float64)[None, :, None, None]
    if relu:
        y = np.maximum(y, 0.0)
    return y


# ------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------

def cli_path():
    return _env_path("FASTCONV_CLI")


def run_cli(*args, timeout=60):
    """Run the fastconv CLI: returns (returncode, stdout, stderr) as text."""
    p = subprocess.run([cli_path(), *[str(a) for a in args]], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="session")
def cli():
    return run_cli
