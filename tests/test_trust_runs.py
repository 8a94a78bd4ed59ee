"""Issue 15, the run machinery of ``freeprob verify`` and ``freeprob readout``: a cluster
that loses every worker stops with the reason; reports never overwrite or delete the
user's files (the report directory's manifest) and never mix two stores; SIGTERM stops a
run like Ctrl-C; no empty ``figures/`` and no stale reports after a run that did not finish.
"""
import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import cloudpickle
import numpy as np
import pytest

from freeprob.experiments import sweep as sweep_mod
from freeprob.experiments.reports import MANIFEST
from freeprob.cli import main
from freeprob.experiments.store import ResultStore, StoreError
from freeprob.experiments.sweep import Executor, SchedulerError, SweepCell, cell_seed, run_cells
from freeprob.experiments.verify import VerifySettings, verify

cloudpickle.register_pickle_by_value(sys.modules[__name__])

TINY = "tiny:d=64,heads=4,d_head=16"
OTHER = "other:d=64,heads=2,d_head=32"
FAST = ["--n", "32", "--seeds", "2", "--points", "60", "--workers", "1", "--no-progress"]
REPORTS = ("table.txt", "summary.csv", "summary.json", "per_seed.csv")


def _run(argv):
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _sleepy(entropy, pause):
    time.sleep(pause)
    return dict(quantities={"u": float(np.random.default_rng(entropy).random())})


def _toy_cells(n, pause=0.0):
    return [SweepCell(key=f"c{i}", params=dict(config="toy", n=4, beta="1", seed=i), fn=_sleepy,
                      kwargs=dict(entropy=cell_seed(3, f"toy/{i}"), pause=pause)) for i in range(n)]


def _cells(path):
    with ResultStore(path, readonly=True) as st:
        return {k for k in st.done_keys() if not k.startswith("theory-")}


# -- 1. a cluster that loses every worker stops the run with the reason --------------------------------
@pytest.fixture
def one_worker_cluster(monkeypatch):
    """A threaded LocalCluster of one worker; the grace period without workers is 2 s.  A
    worker comes back after 30 s, so a run that waits for one (the old behaviour) ends
    instead of hanging the test."""
    from distributed import LocalCluster
    monkeypatch.setattr(sweep_mod, "WORKERS_LOST_GRACE", 2)
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           **sweep_mod.LOCAL_CLUSTER_OPTIONS)
    revive = threading.Timer(30, lambda: cluster.scale(1))
    killed = []

    def kill():
        """Remove the worker (once) and wait until the scheduler has no worker."""
        if not killed:
            killed.append(True)
            cluster.scale(0)
            revive.start()
            deadline = time.monotonic() + 10
            while cluster.scheduler.workers and time.monotonic() < deadline:
                time.sleep(0.01)

    cluster.kill_worker = kill
    try:
        yield cluster
    finally:
        revive.cancel()
        cluster.close()


def test_losing_every_worker_stops_the_run_with_the_reason(tmp_path, one_worker_cluster):
    cluster = one_worker_cluster
    with ResultStore(tmp_path / "r.sqlite") as st, Executor(scheduler=cluster.scheduler_address) as ex:
        st.begin_sweep("s", "toy", {})
        t = time.monotonic()
        with pytest.raises(SchedulerError) as info:
            run_cells(_toy_cells(6, pause=0.3), st, "s", ex, progress=False,
                      on_result=lambda cell, res: cluster.kill_worker())    # the worker goes after one cell
        assert time.monotonic() - t < 20                                    # the grace period, not forever
        msg = str(info.value)
        assert msg.startswith(f"all workers of the Dask cluster at {cluster.scheduler_address}")
        assert "were lost after 1 of 6 cells" in msg and str(st.path) in msg
        assert f"start workers (`dask worker {cluster.scheduler_address}`) and rerun to resume" in msg
        assert st.done_keys("s") == {"c0"}


def test_verify_on_a_cluster_that_loses_its_workers_exits_2_and_leaves_no_reports(tmp_path, monkeypatch,
                                                                                   one_worker_cluster):
    cluster = one_worker_cluster
    real = ResultStore.write_cell

    def write_cell(self, *args, **kwargs):          # the worker is gone once a cell is stored
        real(self, *args, **kwargs)
        cluster.kill_worker()

    monkeypatch.setattr(ResultStore, "write_cell", write_cell)
    out = tmp_path / "o"
    rc, _, err = _run(["verify", "--configs", TINY, "--n", "64", "--seeds", "100", "--points", "60",
                       "--no-progress", "--scheduler", cluster.scheduler_address, "--out", str(out)])
    assert rc == 2 and "freeprob: error: all workers of the Dask cluster" in err, err
    assert f"finished cells are stored in {out / 'results.sqlite'}" in err
    assert 1 <= len(_cells(out)) < 100
    assert sorted(p.name for p in out.iterdir()) == ["results.sqlite"]      # no figures/, no reports


# -- 2. report files freeprob did not write are never overwritten or deleted ---------------------------
def _users_files(folder):
    (folder / "figures").mkdir(parents=True)
    (folder / "table.txt").write_text("my table\n")
    (folder / "summary.csv").write_text("my,summary\n")
    (folder / "figures" / "histograms.png").write_bytes(b"my figure")


def test_verify_never_overwrites_or_deletes_the_users_files(tmp_path):
    out = tmp_path / "project"
    _users_files(out)
    rc, _, err = _run(["verify", "--configs", TINY, *FAST, "--no-figures", "--out", str(out)])
    assert rc == 2
    assert f"'{out / 'table.txt'}', '{out / 'summary.csv'}' exist but were not written by freeprob" in err
    assert "--force" in err and "nothing was computed" in err
    assert sorted(p.name for p in out.iterdir()) == ["figures", "summary.csv", "table.txt"]   # nothing created
    assert (out / "table.txt").read_text() == "my table\n"
    # --force overwrites the files the run writes; a figure it does not write is still not touched
    rc, _, err = _run(["verify", "--configs", TINY, *FAST, "--no-figures", "--force", "--out", str(out)])
    assert rc == 0, err
    assert (out / "table.txt").read_text().startswith("freeprob verify: beta=1, 2 initialisations")
    assert (out / "figures" / "histograms.png").read_bytes() == b"my figure"
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["store"] == "results.sqlite" and sorted(manifest["files"]) == sorted(REPORTS)
    assert manifest["code_version"].startswith("freeprob ")
    # a run with figures would overwrite the user's figure: refused, naming it
    rc, _, err = _run(["verify", "--configs", TINY, *FAST, "--out", str(out)])
    assert rc == 2 and f"'{out / 'figures' / 'histograms.png'}' exists but was not written" in err
    assert (out / "figures" / "histograms.png").read_bytes() == b"my figure"
    # the files freeprob wrote are its own: a rerun replaces them without --force
    rc, stdout, err = _run(["verify", "--configs", TINY, *FAST, "--no-figures", "--out", str(out)])
    assert rc == 0 and "0 cells computed, 2 reused" in stdout, err


def test_readout_never_overwrites_the_users_files(tmp_path):
    out = tmp_path / "project"
    out.mkdir()
    (out / "head-count.json").write_text('{"mine": true}')
    rc, _, err = _run(["readout", "head-count", "--quick", "--out", str(out)])
    assert rc == 2 and f"'{out / 'head-count.json'}' exists but was not written by freeprob" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["head-count.json"]             # nothing created
    assert (out / "head-count.json").read_text() == '{"mine": true}'


# -- 3. a report directory belongs to one store -----------------------------------------------------------
def test_reports_of_two_stores_are_never_mixed(tmp_path):
    x = tmp_path / "x"
    assert _run(["verify", "--configs", TINY, *FAST, "--no-figures", "--out", str(x)])[0] == 0
    before = {f: (x / f).read_text() for f in REPORTS}
    rc, _, err = _run(["verify", "--configs", OTHER, *FAST, "--no-figures", "--out", f"{x}.sqlite"])
    assert rc == 2, err
    assert f"the report directory '{x}' holds the reports of the result store '{x / 'results.sqlite'}'" in err
    assert f"this run's store is '{x}.sqlite'" in err and f"--out '{x}' to add to that store" in err
    assert not Path(f"{x}.sqlite").exists()
    assert {f: (x / f).read_text() for f in REPORTS} == before                # still the reports of `tiny`
    # the other way round: a .sqlite store's reports, then a directory store there
    y = tmp_path / "y"
    assert _run(["verify", "--configs", OTHER, *FAST, "--no-figures", "--out", f"{y}.sqlite"])[0] == 0
    rc, _, err = _run(["verify", "--configs", TINY, *FAST, "--no-figures", "--out", str(y)])
    assert rc == 2 and f"holds the reports of the result store '{y}.sqlite'" in err, err
    assert not (y / "results.sqlite").exists() and "other" in (y / "table.txt").read_text()
    rc, _, err = _run(["readout", "head-count", "--quick", "--out", str(y)])
    assert rc == 2 and "never mixed" in err and not (y / "results.sqlite").exists()
    # a directory that holds another store (no manifest: an earlier version, or by hand)
    z = tmp_path / "z"
    z.mkdir()
    (x / "results.sqlite").rename(z / "results.sqlite")
    rc, _, err = _run(["verify", "--configs", TINY, *FAST, "--no-figures", "--out", f"{z}.sqlite"])
    assert rc == 2 and f"holds another result store, '{z / 'results.sqlite'}'" in err, err
    assert sorted(p.name for p in z.iterdir()) == ["results.sqlite"]


# -- 4. SIGTERM stops a run like Ctrl-C ---------------------------------------------------------------------
def _terminate_after(argv, db, stored=2, timeout=240):
    """Start ``freeprob ARGV``, send SIGTERM once ``stored`` cells are in ``db``; returns
    (exit status, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "freeprob.cli", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()[1]
            time.sleep(0.1)
            try:
                if len(_cells(db)) >= stored:
                    break
            except StoreError:                       # being created
                pass
        proc.send_signal(signal.SIGTERM)             # what `timeout`, SLURM and `docker stop` send
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_stops_verify_cleanly(tmp_path, workers):
    out = tmp_path / "o"
    code, err = _terminate_after(["verify", "--configs", TINY, "--n", "64", "--seeds", "400", "--points", "60",
                                  "--workers", str(workers), "--no-finite-width", "--no-progress", "--out", str(out)],
                                 out)
    # no "Port 8787 is already in use" from Dask (freeprob.experiments.sweep.LOCAL_CLUSTER_OPTIONS)
    lines = [ln for ln in err.splitlines() if ln.strip() and "warn" not in ln.lower()]
    assert code == 143, err
    assert lines == ["freeprob: terminated (SIGTERM); finished cells are kept and a rerun resumes"], err
    assert "leaked" not in err
    wal = out / "results.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0                   # merged into results.sqlite
    assert 2 <= len(_cells(out)) < 400
    assert sorted(p.name for p in out.iterdir()) == ["results.sqlite"]   # no figures/, no reports


def test_sigterm_stops_readout_cleanly(tmp_path):
    out = tmp_path / "r"
    code, err = _terminate_after(["readout", "head-count", "--quick", "--workers", "1", "--out", str(out)],
                                 out, stored=1)
    assert code == 143, err
    assert (f"freeprob: readout head-count: terminated (SIGTERM); its finished cells are stored in "
            f"{out / 'results.sqlite'} and a rerun resumes") in err
    assert "Traceback" not in err and err.count("freeprob:") == 1      # the one line, not repeated
    wal = out / "results.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    assert sorted(p.name for p in out.iterdir()) == ["results.sqlite"]


def test_sigterm_handler_is_one_shot_and_restored():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(sweep_mod.Terminated):
        with sweep_mod.sigterm_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)                                   # interrupted at once
    assert signal.getsignal(signal.SIGTERM) == before
    assert isinstance(sweep_mod.Terminated(), KeyboardInterrupt)
    assert sweep_mod.interruption(sweep_mod.Terminated()) == ("terminated (SIGTERM)", 143)
    assert sweep_mod.interruption(KeyboardInterrupt()) == ("interrupted", 130)


# -- 5. no empty figures/, no stale reports --------------------------------------------------------------
def _settings(out, **kw):
    return VerifySettings(**(dict(configs=(TINY,), n=32, seeds=2, points=60, out=out) | kw))


def test_an_interrupted_run_leaves_no_stale_reports_and_no_empty_figures(tmp_path, monkeypatch):
    out = tmp_path / "o"
    verify(_settings(out), progress=False, stream=None, workers=1)
    (out / "notes.txt").write_text("mine")
    assert (out / "figures" / "qq.png").is_file() and (out / "table.txt").is_file()

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ResultStore, "write_cell", interrupted)
    with pytest.raises(KeyboardInterrupt):
        verify(_settings(out, seeds=3), progress=False, stream=None, workers=1)
    # the previous run's reports are gone (they described another run); the store and the user's file stay
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "results.sqlite"]
    assert len(_cells(out)) == 2
    monkeypatch.undo()
    again = verify(_settings(out), progress=False, stream=None, workers=1)
    assert (again["computed"], again["resumed"]) == (0, 2)
    assert (out / "figures" / "qq.png").is_file() and (out / "table.txt").is_file()


def test_a_full_disk_while_writing_figures_leaves_no_empty_folders(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    def full(self, path, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(Figure, "savefig", full)
    db = tmp_path / "v.sqlite"
    rc, _, err = _run(["verify", "--configs", TINY, *FAST, "--out", str(db)])
    assert rc == 2 and "No space left on device" in err and "finished cells are kept" in err, err
    assert len(_cells(db)) == 2
    assert not (tmp_path / "v").exists()              # the report folder this run created, and figures/ in it
