"""
The CLI's --device (docs/gpu.md) on the device of FASTCONV_TEST_DEVICE (opencl in the
conformance_opencl ctest): conv1d / conv2d through the device match numpy, `info` lists the
devices, an absent or unknown device is a one-line error and never a silent CPU run.
"""
import numpy as np
import pytest

from conftest import DEVICES, get_lib, make_rng, run_cli, suite_device

DEVICE = {v: k for k, v in DEVICES.items()}[suite_device()]
pytestmark = pytest.mark.skipif(DEVICE == "cpu", reason="FASTCONV_TEST_DEVICE is cpu")


def test_conv1d_on_device(tmp_path):
    rng = make_rng(77)
    x = rng.standard_normal(500).astype(np.float32)
    k = rng.standard_normal(31).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "k.npy", k)
    rc, out, err = run_cli("conv1d", tmp_path / "x.npy", tmp_path / "k.npy", "-o", tmp_path / "y.npy",
                           "--device", DEVICE, "--algo", "gpu-tiled-halo")
    assert rc == 0, err
    y = np.load(tmp_path / "y.npy")
    ref = np.convolve(x.astype(np.float64), k.astype(np.float64))
    assert np.max(np.abs(y - ref)) <= 1e-5 * np.max(np.convolve(np.abs(x), np.abs(k)))


def test_bench_reports_device_memory():
    """bench --json on the device adds device_bytes: what the plan holds there (weights, bias,
    gpu-im2col-gemm's column buffer: 8 x 9 x 20 x 20 floats)."""
    import json
    rc, out, err = run_cli("bench", "conv2d", "--input", "1x8x20x20", "--filters", "4x3x3", "--pad", "1",
                           "--device", DEVICE, "--algo", "gpu-im2col-gemm", "--reps", "1", "--json")
    assert rc == 0, err
    row = json.loads(out)[0]
    assert row["device_bytes"] == 4 * (4 * 8 * 9 + 8 * 9 * 20 * 20)


def test_cpu_algorithm_on_device_is_refused(tmp_path):
    np.save(tmp_path / "x.npy", np.ones(10, np.float32))
    np.save(tmp_path / "k.npy", np.ones(3, np.float32))
    rc, out, err = run_cli("conv1d", tmp_path / "x.npy", tmp_path / "k.npy", "-o", tmp_path / "y.npy",
                           "--device", DEVICE, "--algo", "direct")
    assert rc != 0 and "direct" in err and DEVICE in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "y.npy").exists()


def test_unknown_device_is_usage_error(tmp_path):
    rc, out, err = run_cli("conv1d", "x.npy", "k.npy", "-o", "y.npy", "--device", "tpu")
    assert rc == 2 and "--device" in err


def test_info_lists_devices():
    rc, out, err = run_cli("info")
    assert rc == 0
    assert "opencl" in out and "cuda" in out
    assert "gpu-implicit-gemm" in out


def test_absent_cuda_is_enodevice(tmp_path):
    if get_lib().fconv_device_count(DEVICES["cuda"]) > 0:
        pytest.skip("an NVIDIA GPU is present")
    np.save(tmp_path / "x.npy", np.ones(10, np.float32))
    np.save(tmp_path / "k.npy", np.ones(3, np.float32))
    rc, out, err = run_cli("conv1d", tmp_path / "x.npy", tmp_path / "k.npy", "-o", tmp_path / "y.npy",
                           "--device", "cuda")
    assert rc == 1 and "cuda" in err
