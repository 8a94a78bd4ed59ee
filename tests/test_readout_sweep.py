"""Readout comparisons as sweeps: every measured initialisation is a cell run through
:func:`freeprob.experiments.sweep.run_cells` (in process, on a Dask LocalCluster or a cluster) and
stored in a ResultStore as it finishes; the numbers equal those of the plain run, a rerun
computes nothing, an interrupted run resumes, and ``freeprob readout --scheduler`` fails
fast on an unreachable address."""
import functools
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import freeprob.experiments.comparisons._common as common
from freeprob.cli import main
from freeprob.experiments.comparisons import run_comparison, sweep_name
from freeprob.experiments.comparisons._common import measure, sweep_session
from freeprob.errors import FreeprobValueError
from freeprob.sampler import Dimensions
from freeprob.experiments.store import ResultStore
from freeprob.experiments.sweep import Executor

SCRIPT = Path(sys.executable).with_name("freeprob")
#: the cheapest comparison at the smallest sizes it accepts: h = 4, 16; 2 schemes × 2 models
KEY, SETTINGS = "gqa-vs-tying", dict(quick=True, n=64, seeds=2)
CELLS = 2 * 2 * 2 * 2          # heads × schemes × models × seeds


@pytest.fixture(scope="module")
def sequential():
    """The plain run (no store, no session): today's numbers."""
    return run_comparison(KEY, **SETTINGS)


@pytest.fixture(scope="module")
def clustered(sequential, tmp_path_factory):
    """The same comparison on a real 2-process LocalCluster, stored as it runs."""
    d = tmp_path_factory.mktemp("readout-cluster")
    comp = run_comparison(KEY, workers=2, store=d, **SETTINGS)
    return comp, d


def test_cluster_run_equals_sequential_run(sequential, clustered):
    comp, _ = clustered
    assert comp.sweep["executor"].startswith("Dask LocalCluster, 2 worker processes")
    assert comp.sweep["computed"] == CELLS and comp.sweep["resumed"] == 0
    assert comp.to_dict() == sequential.to_dict()          # bit-for-bit: float equality throughout
    assert comp.data == sequential.data and comp.table() == sequential.table()


def test_rerun_computes_nothing_and_reads_the_same_numbers(sequential, clustered):
    _, d = clustered
    with ResultStore(d) as st:
        before = st.done_keys()
    again = run_comparison(KEY, store=d, **SETTINGS)       # in this process this time
    assert again.sweep["computed"] == 0 and again.sweep["resumed"] == CELLS
    assert again.to_dict() == sequential.to_dict()
    with ResultStore(d) as st:
        assert st.done_keys() == before and len(before) == CELLS
        sw = {s["name"]: s for s in st.sweeps()}[again.sweep["name"]]
        assert sw["kind"] == "readout" and sw["cells"] == CELLS
        assert sw["report"] == sequential.table()
        assert sw["settings"] == dict(comparison=KEY, **SETTINGS)


def test_results_table_has_one_row_per_label_n_beta_seed_quantity(clustered):
    comp, d = clustered
    with ResultStore(d) as st:
        rows = st.rows(comp.sweep["name"])
    idx = {c: i for i, c in enumerate(("sweep", "cell_key", "config", "n", "beta", "seed", "quantity",
                                        "value"))}
    ids = [(r[idx["config"]], r[idx["n"]], r[idx["beta"]], r[idx["seed"]], r[idx["quantity"]]) for r in rows]
    assert len(ids) == len(set(ids)) == CELLS
    assert {i[1] for i in ids} == {64} and {i[2] for i in ids} == {"1"} and {i[3] for i in ids} == {0, 1}
    assert {i[4] for i in ids} == {"ridge_error"}
    labels = {i[0] for i in ids}
    assert len(labels) == CELLS // 2 and all(lab.startswith("ridge ") for lab in labels)
    stored = sorted(r[idx["value"]] for r in rows)
    measured = sorted(v for h in comp.data["softmax"].values() for s in h.values() for v in s)
    measured += [v for h in comp.data["ge"].values() for s in h.values() for v in s]
    assert stored == sorted(measured)


def test_interrupted_run_resumes_without_recomputing(sequential, tmp_path, monkeypatch):
    real = common._ridge_error_one
    calls = []

    @functools.wraps(real)          # same name and qualified name: the same cell keys
    def flaky(**kw):
        calls.append(kw["seed"])
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(**kw)

    monkeypatch.setattr(common, "_ridge_error_one", flaky)
    with pytest.raises(KeyboardInterrupt):
        run_comparison(KEY, store=tmp_path, **SETTINGS)
    with ResultStore(tmp_path) as st:
        assert len(st.done_keys()) == 4                     # the finished cells were stored
    calls.clear()
    monkeypatch.setattr(common, "_ridge_error_one", real)
    resumed = run_comparison(KEY, store=tmp_path, **SETTINGS)
    assert resumed.sweep["resumed"] == 4 and resumed.sweep["computed"] == CELLS - 4
    assert resumed.to_dict() == sequential.to_dict()
    # more seeds: only the new initialisations are computed (cell keys do not name the sweep)
    more = run_comparison(KEY, store=tmp_path, **dict(SETTINGS, seeds=3))
    assert more.sweep["resumed"] == CELLS and more.sweep["computed"] == CELLS // 2
    assert more.sweep["name"] != resumed.sweep["name"] == sweep_name(KEY, SETTINGS)


def _toy(dims, seed, beta, scale):
    rng = np.random.default_rng(seed)
    return dict(curve=rng.standard_normal(5) * scale, mean=float(rng.random()), count=dims.n,
                nan=float("nan"), inf=-math.inf, grid=[1, 2, 3])


def test_measure_round_trips_through_the_store(tmp_path):
    dims = Dimensions(n=8, heads=2, d_k=2, d_v=2, d_o=4)
    calls = [dict(dims=dims, seed=s, beta="0.5", scale=2.0) for s in range(3)]
    plain = measure(_toy, calls, label="toy")               # no session: fn(**kw) itself
    assert plain[0]["grid"] == [1, 2, 3] and isinstance(plain[0]["count"], int)
    with ResultStore(tmp_path) as st, Executor(workers=1) as ex:
        with sweep_session(st, ex, "toy-sweep", kind="test", settings={}) as session:
            first = measure(_toy, calls, label="toy")
            second = measure(_toy, calls, label="toy")
        assert (session.computed, session.resumed) == (3, 3)
        rows = st.rows("toy-sweep")
    for a, b, c in zip(plain, first, second):
        assert list(b) == list(a) == list(c)                # same names, same order
        assert np.array_equal(b["curve"], a["curve"]) and b["curve"].dtype == np.float64
        assert b["mean"] == a["mean"] and b["count"] == 8.0 and isinstance(b["count"], float)
        assert math.isnan(b["nan"]) and b["inf"] == -math.inf and c["inf"] == -math.inf
        assert np.array_equal(b["grid"], [1.0, 2.0, 3.0])
    assert {(r[2], r[3], r[4], r[5]) for r in rows} == {("toy", 8, "0.5", s) for s in range(3)}
    assert {r[6] for r in rows} == {"mean", "count", "nan", "inf"}   # arrays are not result rows


def test_measure_reports_failed_cells(tmp_path):
    dims = Dimensions(n=8, heads=2, d_k=2, d_v=2, d_o=4)
    calls = [dict(dims=dims, seed=s, beta=1, scale="x") for s in range(2)]   # str * array fails
    with ResultStore(tmp_path) as st, Executor(workers=1) as ex:
        with sweep_session(st, ex, "bad", kind="test", settings={}):
            with pytest.raises(FreeprobValueError, match="2 of 2 measurements failed.*rerun retries"):
                measure(_toy, calls, label="toy")
        assert st.done_keys() == set()


def test_cli_unreachable_scheduler_fails_fast(tmp_path):
    """Through the console script, as a user runs it: exit status 2 within 15 s (start-up
    included), the message names the address, no traceback."""
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    t = time.perf_counter()
    proc = subprocess.run([str(SCRIPT), "readout", KEY, "--quick", "--scheduler", "tcp://127.0.0.1:1",
                           "--out", str(tmp_path / "r")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and time.perf_counter() - t < 15
    assert "tcp://127.0.0.1:1" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_refuses_workers_and_scheduler_together(tmp_path, capsys):
    status = main(["readout", KEY, "--quick", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1",
                   "--out", str(tmp_path / "r")])
    assert status == 2 and "not both" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_cli_stores_cells_and_force_reuses_them(sequential, tmp_path, capsys):
    argv = ["readout", KEY, "--quick", "--n", "64", "--seeds", "2", "--no-figure", "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"cells: {CELLS} computed, 0 already stored" in out and (tmp_path / "results.sqlite").is_file()
    assert sequential.table() in out
    assert main(argv) == 0 and "stored result" in capsys.readouterr().out      # JSON reused
    assert main([*argv, "--force"]) == 0
    assert f"cells: 0 computed, {CELLS} already stored" in capsys.readouterr().out


def test_cli_out_must_be_a_directory(tmp_path, capsys):
    assert main(["readout", KEY, "--out", str(tmp_path / "x.sqlite")]) == 2
    assert "names a directory" in capsys.readouterr().err
