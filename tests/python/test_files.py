"""
File safety of the fastconv CLI: outputs appear complete or not at all. A failed run never
truncates or replaces an existing file and leaves no temporary behind; -o naming a directory,
a FIFO (any non-regular file), a place that cannot be written (also when running as root),
or a file that cannot grow (a full disk, simulated with RLIMIT_FSIZE) gives a one-line error
and a non-zero exit status.
"""
import os
import resource
import shutil
import signal
import stat
import subprocess
import tempfile

import numpy as np
import pytest

from conftest import cli_path


def run(args, preexec_fn=None, user_nobody=False, timeout=60):
    cmd = [cli_path(), *[str(a) for a in args]]
    if user_nobody:
        cmd = [shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, preexec_fn=preexec_fn)
    return p.returncode, p.stdout, p.stderr


def one_line_error(err):
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("fastconv: "), err
    return lines[0]


@pytest.fixture
def inputs(tmp_path):
    """A signal and taps whose conv1d output is 16 KB, and an existing output file."""
    x = np.linspace(-1, 1, 4000, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "k.npy", np.ones(5, dtype=np.float32))
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    old = tmp_path / "old.npy"
    old.write_bytes(b"precious contents")
    return tmp_path


def leftovers(d, keep):
    return sorted(n for n in os.listdir(d) if n not in keep)


KEEP = {"x.npy", "k.npy", "bad.npy", "old.npy"}


def test_failed_run_keeps_existing_output(inputs):
    rc, _, err = run(["conv1d", inputs / "bad.npy", inputs / "k.npy", "-o", inputs / "old.npy"])
    assert rc == 1
    one_line_error(err)
    assert (inputs / "old.npy").read_bytes() == b"precious contents"
    assert leftovers(inputs, KEEP) == []


def test_successful_run_replaces_output_atomically(inputs):
    rc, _, err = run(["conv1d", inputs / "x.npy", inputs / "k.npy", "-o", inputs / "old.npy"])
    assert rc == 0, err
    y = np.load(inputs / "old.npy")
    assert y.shape == (4004,)
    assert leftovers(inputs, KEEP) == []


def test_output_is_a_directory(inputs):
    d = inputs / "adir.npy"  # the extension is right: only the directory is wrong
    d.mkdir()
    rc, _, err = run(["conv1d", inputs / "x.npy", inputs / "k.npy", "-o", d])
    assert rc in (1, 2)  # the CLI treats it as a usage error (2)
    assert "is a directory" in one_line_error(err)
    assert os.listdir(d) == []


def test_output_is_a_fifo_is_refused(inputs):
    """A FIFO (as /dev/full or any device would be): never opened, never replaced."""
    fifo = inputs / "pipe.npy"
    os.mkfifo(fifo)
    rc, _, err = run(["conv1d", inputs / "x.npy", inputs / "k.npy", "-o", fifo], timeout=30)
    assert rc == 1
    assert "not a regular file" in one_line_error(err)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(inputs, KEEP | {"pipe.npy"}) == []


def test_output_is_a_link_to_a_fifo_is_refused(inputs):
    fifo = inputs / "pipe"
    os.mkfifo(fifo)
    os.symlink(fifo, inputs / "link.npy")
    rc, _, err = run(["conv1d", inputs / "x.npy", inputs / "k.npy", "-o", inputs / "link.npy"],
                     timeout=30)
    assert rc == 1
    one_line_error(err)
    assert os.path.islink(inputs / "link.npy")


def test_unwritable_place_under_proc(inputs):
    """/proc refuses new files even to root: a genuinely unwritable directory."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    rc, _, err = run(["conv1d", inputs / "x.npy", inputs / "k.npy", "-o", "/proc/fastconv-test.npy"])
    assert rc == 1
    one_line_error(err)
    assert not os.path.exists("/proc/fastconv-test.npy")


def test_read_only_directory_as_unprivileged_user():
    """Run as user nobody (root ignores permission bits) against a root-owned 0755 directory."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to user nobody")
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) not available")
    base = tempfile.mkdtemp(prefix="fastconv-ro-", dir="/tmp")
    try:
        os.chmod(base, 0o755)
        np.save(os.path.join(base, "x.npy"), np.ones(64, dtype=np.float32))
        np.save(os.path.join(base, "k.npy"), np.ones(3, dtype=np.float32))
        old = os.path.join(base, "old.npy")
        with open(old, "wb") as f:
            f.write(b"precious contents")
        for name in ("x.npy", "k.npy", "old.npy"):
            os.chmod(os.path.join(base, name), 0o644)
        # The user must be able to run the CLI at all, else the test would prove nothing.
        rc, _, err = run(["info"], user_nobody=True)
        if rc != 0:
            pytest.skip(f"user nobody cannot run the CLI here: {err.strip()}")
        for target in (os.path.join(base, "new.npy"), old):
            rc, _, err = run(["conv1d", os.path.join(base, "x.npy"), os.path.join(base, "k.npy"),
                              "-o", target], user_nobody=True)
            assert rc == 1, err
            assert "not writable" in one_line_error(err) or "Permission denied" in err
        assert open(old, "rb").read() == b"precious contents"
        assert sorted(os.listdir(base)) == ["k.npy", "old.npy", "x.npy"]
    finally:
        shutil.rmtree(base)


def _limit_file_size():
    # A "full disk": writes beyond 1 KiB fail with EFBIG (SIGXFSZ ignored, else it kills).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


@pytest.mark.parametrize("ext", [".npy", ".png", ".pgm"])
def test_full_disk_keeps_existing_output(inputs, ext):
    target = inputs / ("old" + ext)
    target.write_bytes(b"precious contents")
    if ext == ".npy":
        args = ["conv1d", inputs / "x.npy", inputs / "k.npy", "-o", target]
    else:
        rng = np.random.default_rng(5)  # noise: a PNG that compresses to well over 1 KiB
        np.save(inputs / "img.npy", (rng.random((64, 64)) * 255).astype(np.float32))
        args = ["filter", inputs / "img.npy", "-k", "identity", "-o", target]
    rc, _, err = run(args, preexec_fn=_limit_file_size)
    assert rc == 1, err
    line = one_line_error(err)
    assert "too large" in line.lower() or "write" in line.lower() or "close" in line.lower(), line
    assert target.read_bytes() == b"precious contents"
    assert leftovers(inputs, KEEP | {"img.npy", target.name}) == []
