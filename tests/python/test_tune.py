"""test_tune.py — `fastconv tune` and wisdom through the CLI: tune records the winner in the
file named by FASTCONV_WISDOM, AUTO (FASTCONV_VERBOSE=1 bench) then says it follows wisdom,
a corrupt file is ignored with its reason and nothing fails, `bench suite --list` and usage
errors."""
import os
import subprocess

CLI = os.environ.get("FASTCONV_CLI", "build/fastconv")
PROBLEM = ["filter", "--size", "64x48", "--kernel", "5x5", "--threads", "1"]


def run(args, wisdom, verbose=False):
    env = dict(os.environ, FASTCONV_WISDOM=str(wisdom), OMP_WAIT_POLICY="passive")
    if verbose:
        env["FASTCONV_VERBOSE"] = "1"
    return subprocess.run([CLI] + args, capture_output=True, text=True, env=env, timeout=120)


def test_tune_records_and_auto_follows(tmp_path):
    wisdom = tmp_path / "cache" / "wisdom"
    wisdom.parent.mkdir()
    r = run(["tune"] + PROBLEM, wisdom)
    assert r.returncode == 0, r.stderr
    assert "auto: measured: " in r.stdout and "recorded in " + str(wisdom) in r.stdout
    lines = wisdom.read_text().splitlines()
    assert lines[0] == "fastconv-wisdom 1"
    entries = [l for l in lines[1:] if l and not l.startswith("#")]
    assert len(entries) == 1 and "filter2d h=64 w=48" in entries[0]
    winner = entries[0].split("\t")[5]
    r = run(["bench"] + PROBLEM + ["--reps", "1"], wisdom, verbose=True)
    assert r.returncode == 0, r.stderr
    assert f"auto: wisdom: {winner} measured fastest" in r.stderr
    assert f"auto ({winner})" in r.stdout
    r = run(["tune", "--show"], wisdom)
    assert r.returncode == 0 and "1 entry" in r.stdout


def test_hand_written_wisdom_overrides_cost_model(tmp_path):
    """Where wisdom says another algorithm than the cost model, AUTO follows wisdom."""
    wisdom = tmp_path / "wisdom"
    r = run(["tune"] + PROBLEM, wisdom)
    assert r.returncode == 0, r.stderr
    header, comment, entry = wisdom.read_text().splitlines()
    fields = entry.split("\t")
    plain = run(["bench"] + PROBLEM + ["--reps", "1"], "off", verbose=True)
    model = plain.stdout.split("auto (")[1].split(")")[0]
    other = "direct" if model != "direct" else "im2col"
    fields[5] = other
    wisdom.write_text("\n".join([header, comment, "\t".join(fields)]) + "\n")
    r = run(["bench"] + PROBLEM + ["--reps", "1"], wisdom, verbose=True)
    assert f"auto ({other})" in r.stdout, r.stdout + r.stderr
    assert f"the cost model would pick {model}" in r.stderr


def test_corrupt_wisdom_is_ignored(tmp_path):
    wisdom = tmp_path / "wisdom"
    wisdom.write_bytes(b"\x89PNG garbage\n\x00\x01")
    r = run(["bench"] + PROBLEM + ["--reps", "1"], wisdom, verbose=True)
    assert r.returncode == 0, r.stderr
    assert "ignored: " in r.stderr and "not a fastconv wisdom file" in r.stderr
    r = run(["tune", "--show"], wisdom)
    assert "ignored" in r.stdout


def test_suite_list_and_usage_errors(tmp_path):
    r = run(["bench", "suite", "--list", "--quick"], "off")
    assert r.returncode == 0
    rows = [l.split("\t") for l in r.stdout.splitlines()]
    groups = {g for g, _ in rows}
    assert {"image", "rgb", "1d", "cnn-16x16", "resnet50", "vgg16", "seed-004"} <= groups
    full = run(["bench", "suite", "--list"], "off").stdout.splitlines()
    assert len(full) > len(rows)
    assert any("--input 8x" in l for l in full)  # batch 8
    for args in (["tune"], ["tune", "bogus"], ["tune"] + PROBLEM + ["--algo", "direct"],
                 ["bench", "suite", "--group", "nope"], ["tune", "suite", "--threads", "x"]):
        r = run(args, "off")
        assert r.returncode == 2, args
        assert r.stderr.startswith("fastconv: ") and len(r.stderr.strip().splitlines()) == 1, r.stderr



def test_suite_plan_only(tmp_path):
    """`bench suite --plan-only` plans every shape and thread count without running them, and
    names the algorithm `bench` runs for the same shape, for the same reason."""
    r = run(["bench", "suite", "--plan-only", "--group", "cnn-16x16", "--threads", "1,2"], "off")
    assert r.returncode == 0, r.stderr
    shapes = run(["bench", "suite", "--list", "--group", "cnn-16x16"], "off").stdout.splitlines()
    rows = [l.split("\t") for l in r.stdout.splitlines()]
    assert len(rows) == 2 * len(shapes)
    assert all(len(f) == 5 and f[0] == "cnn-16x16" and f[2] in ("1", "2") and
               f[4].startswith("auto: " + f[3] + " has the lowest estimated time") for f in rows), r.stdout
    group, args, threads, algo, reason = rows[-1]
    ran = run(["bench"] + args.split() + ["--threads", threads, "--reps", "1"], "off", verbose=True)
    assert ran.returncode == 0, ran.stderr
    assert f"auto ({algo})" in ran.stdout and reason.split(" (")[0] in ran.stderr, ran.stdout + ran.stderr
