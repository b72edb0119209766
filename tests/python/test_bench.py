"""test_bench.py — `fastconv bench --algo A,B,...`: the listed plans timed in alternation, one
row each in list order (JSON and table), each row's speed against the first, and the list's
usage errors and a declining member."""
import json
import os
import subprocess

CLI = os.environ.get("FASTCONV_CLI", "build/fastconv")
PROBLEM = ["conv2d", "--input", "1x8x12x10", "--filters", "4x3x3", "--pad", "1", "--threads", "1"]


def run(args):
    env = dict(os.environ, OMP_WAIT_POLICY="passive", FASTCONV_WISDOM="off")
    return subprocess.run([CLI, "bench"] + args, capture_output=True, text=True, env=env, timeout=120)


def test_interleaved_rows_in_list_order_json():
    r = run(PROBLEM + ["--algo", "direct,im2col,auto,direct", "--reps", "5", "--json"])
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert [row["requested"] for row in rows] == ["direct", "im2col", "auto", "direct"]
    assert rows[0]["vs_first"] == 1.0
    for row in rows:
        assert row["vs_first"] > 0 and row["median_ms"] > 0 and row["min_ms"] <= row["max_ms"]
        assert row["error"] < 1e-5 and row["threads"] == 1
    # the same algorithm twice: the same plan, the same output
    assert rows[3]["algo"] == "direct" and rows[3]["error"] == rows[0]["error"]
    # every plan is alive together: one peak for all
    assert len({row["peak_rss_bytes"] for row in rows}) == 1



def test_interleaved_errors_are_each_plans_own():
    """Each row's error is its own plan's output: the last round leaves y holding one plan's
    output, and the others run again before theirs is measured (a second direct after
    winograd-4x4 had reported winograd-4x4's error), whichever way the last round ran."""
    for reps in ("4", "5"):
        r = run(PROBLEM + ["--algo", "direct,winograd-4x4,direct,winograd-4x4", "--reps", reps, "--json"])
        assert r.returncode == 0, r.stderr
        rows = json.loads(r.stdout)
        assert rows[0]["error"] != rows[1]["error"]  # the two algorithms round differently here
        assert rows[2]["error"] == rows[0]["error"] and rows[3]["error"] == rows[1]["error"], (reps, rows)


def test_interleaved_table_names_the_ratios():
    r = run(PROBLEM + ["--algo", "im2col,winograd-4x4", "--reps", "3"])
    assert r.returncode == 0, r.stderr
    assert "3 alternated rounds" in r.stdout
    lines = r.stdout.splitlines()
    assert any(l.startswith("im2col ") for l in lines) and any(l.startswith("winograd-4x4 ") for l in lines)
    assert "speed against im2col" in r.stdout
    ratio = [l for l in lines if l.strip().startswith("winograd-4x4") and " x" in l]
    assert len(ratio) == 1 and float(ratio[0].split("x")[-1]) > 0


def test_interleaved_usage_errors():
    for algo, message in (("im2col,", "not a list of algorithm names"), ("direct,,im2col", "not a list"),
                          ("im2col,all", "'all' cannot be part of a list"),
                          ("im2col,nope", "unknown algorithm 'nope'"),
                          (",".join(["direct"] * 9), "at most 8")):
        r = run(PROBLEM + ["--algo", algo])
        assert r.returncode == 2, (algo, r.stdout, r.stderr)
        assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_interleaved_declining_member_fails_with_its_name():
    r = run(["conv2d", "--input", "1x3x8x8", "--filters", "2x1x1", "--algo", "direct,winograd-4x4", "--json"])
    assert r.returncode == 1
    assert json.loads(r.stdout) == []
    assert "winograd-4x4" in r.stderr and "3x3" in r.stderr
