"""Numbers a user can trust (issue 15): the result store, sweeps and the run machinery.

No data loss (an export onto the store, the WAL after a clean exit, read-only media), no
silent mixing (code identity and every setting in the cell keys, a checksum per row),
clear exits (a lost scheduler, SQLite errors, workers without freeprob or with other
code, Ctrl-C), and refused runs that leave nothing behind.  Real Dask clusters where
the behaviour is Dask's (threaded LocalClusters; one process LocalCluster for Ctrl-C).
"""
import os
import shutil
import sqlite3
import struct
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

from freeprob.experiments import store as store_mod
from freeprob.experiments import sweep as sweep_mod
from freeprob.experiments import verify as verify_mod
from freeprob.cli import main
from freeprob.errors import FreeprobValueError
from freeprob.experiments.store import STORE_FORMAT, ResultStore, StoreError, code_version
from freeprob.experiments.sweep import Executor, SchedulerError, SweepCell, cell_seed, run_cells
from freeprob.experiments.verify import VerifySettings, verify

cloudpickle.register_pickle_by_value(sys.modules[__name__])

TINY = "tiny:d=64,heads=4,d_head=16"
ROOT = Path(__file__).resolve().parent.parent


def _run(argv):
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _tiny(out, **kw):
    kw = dict(configs=(TINY,), n=32, seeds=2, points=60, out=out, figures=False) | kw
    return VerifySettings(**kw)


def _store(path, values=(0.123456789, 0.5)):
    with ResultStore(path) as st:
        st.begin_sweep("s", "toy", {"seeds": len(values)})
        for i, v in enumerate(values):
            st.write_cell("s", f"c{i}", {"config": "toy", "n": 8, "beta": "1", "seed": i}, {"q": v},
                          arrays={"x": np.arange(4.0) + i})
    return path


def _sleepy(entropy, pause):
    time.sleep(pause)
    return dict(quantities={"u": float(np.random.default_rng(entropy).random())})


def _toy_cells(n, pause=0.0):
    return [SweepCell(key=f"c{i}", params=dict(config="toy", n=4, beta="1", seed=i), fn=_sleepy,
                      kwargs=dict(entropy=cell_seed(3, f"toy/{i}"), pause=pause)) for i in range(n)]


# -- 1. an export or report path is never the store ------------------------------------------------
def test_export_onto_the_store_is_refused_and_the_store_is_kept(tmp_path):
    db = _store(tmp_path / "run" / "results.sqlite")
    before = db.read_bytes()
    for target in (db, tmp_path / "run" / "." / "results.sqlite", Path(str(db) + "-wal")):
        rc, _, err = _run(["sweep", "export", str(tmp_path / "run"), "--csv", str(target), "--force"])
        assert rc == 2 and "is the result store" in err and "destroy the stored results" in err
    rc, _, err = _run(["sweep", "export", str(db), "--parquet", str(db), "--force"])
    assert rc == 2 and "--parquet" in err and "is the result store" in err
    assert db.read_bytes() == before
    with ResultStore(db, readonly=True) as st:
        assert st.quantity("s", "q") == [0.123456789, 0.5]


# -- 2. code identity ----------------------------------------------------------------------------------
def test_code_version_is_the_version_and_a_hash_of_the_sources(tmp_path):
    import importlib.metadata
    ver = code_version()
    assert ver.startswith(f"freeprob {importlib.metadata.version('freeprob')}+src.")
    assert len(ver.rsplit(".", 1)[1]) == 16
    # a copy of the sources has the same identity; one changed byte gives another
    probe = "import freeprob.experiments.store as s; print(s.code_version())"
    for name, change in (("same", False), ("changed", True)):
        pkg = tmp_path / name / "freeprob"
        shutil.copytree(ROOT / "freeprob", pkg, ignore=shutil.ignore_patterns("__pycache__"))
        if change:
            with open(pkg / "errors.py", "a") as f:
                f.write("\n# another comment\n")
        got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             cwd=tmp_path / name, env=dict(os.environ, PYTHONPATH=str(tmp_path / name)),
                             timeout=120).stdout.strip()
        assert (got == ver) is not change and got.startswith("freeprob ")


def test_a_resumed_sweep_never_reuses_cells_of_other_code(tmp_path, monkeypatch, capsys):
    first = verify(_tiny(tmp_path / "o"), progress=False, stream=None, workers=1)
    assert first["computed"] == 2
    with ResultStore(tmp_path / "o", readonly=True) as st:
        old_rows = st.rows(first["sweep"])
    new = code_version() + ".edited"
    monkeypatch.setattr(store_mod, "code_version", lambda: new)
    monkeypatch.setattr(verify_mod, "code_version", lambda: new)
    second = verify(_tiny(tmp_path / "o"), progress=False, stream=None, workers=1)
    assert (second["computed"], second["resumed"], second["laws_computed"]) == (2, 0, 2)   # GE, finite width
    assert second["sweep"] != first["sweep"]
    assert f"sweep {first['sweep']} of these settings" in capsys.readouterr().err
    with ResultStore(tmp_path / "o", readonly=True) as st:
        assert st.rows(first["sweep"]) == old_rows                     # the old sweep is untouched
        rows = st.rows(second["sweep"])
        assert rows and {r[8] for r in rows} == {new}                   # only the new code's cells
        assert not {r[1] for r in rows} & {r[1] for r in old_rows}


def test_a_worker_with_other_code_is_refused_with_every_result(tmp_path, monkeypatch):
    from distributed import LocalCluster
    real = sweep_mod._worker_version
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      **sweep_mod.LOCAL_CLUSTER_OPTIONS) as cluster, \
            ResultStore(tmp_path / "r.sqlite") as st, Executor(scheduler=cluster.scheduler_address) as ex:
        st.begin_sweep("s", "toy", {})
        # the worker is replaced by one running other code after the connection check
        monkeypatch.setattr(sweep_mod, "_worker_version", lambda: "freeprob 9.9+src.0/store2"
                            if threading.current_thread() is not threading.main_thread() else real())
        with pytest.raises(SchedulerError, match=r"runs other freeprob code \(freeprob 9.9\+src.0/store2\)"):
            run_cells(_toy_cells(3), st, "s", ex, progress=False)
        assert st.done_keys() == set()                                   # nothing of it stored


# -- 3. every setting that changes a stored number is in the key ----------------------------------------
def test_sweeps_differing_only_in_points_do_not_share_cells(tmp_path):
    a = verify(_tiny(tmp_path / "o", points=60), progress=False, stream=None, workers=1)
    with ResultStore(tmp_path / "o", readonly=True) as st:
        rows_a = st.rows(a["sweep"])
    b = verify(_tiny(tmp_path / "o", points=90), progress=False, stream=None, workers=1)
    assert (b["computed"], b["resumed"]) == (2, 0)
    with ResultStore(tmp_path / "o", readonly=True) as st:
        assert st.rows(a["sweep"]) == rows_a           # the theory-derived values of a are not overwritten
        th_a = {r[1]: r[7] for r in rows_a if r[6] == "out/sm_th_KS"}
        th_b = {r[1]: r[7] for r in st.rows(b["sweep"]) if r[6] == "out/sm_th_KS"}
    assert len(th_a) == len(th_b) == 2 and not th_a.keys() & th_b.keys()


# -- 4. a checksum per row -------------------------------------------------------------------------------
def test_a_bit_flip_inside_a_valid_store_is_reported_not_read(tmp_path):
    db = _store(tmp_path / "r.sqlite")
    raw = bytearray(db.read_bytes())
    packed = struct.pack(">d", 0.123456789)         # SQLite stores REAL big-endian
    at = raw.find(packed)
    assert at > 0 and raw.count(packed) == 1
    raw[at + 7] ^= 1                                   # the last mantissa bit
    db.write_bytes(bytes(raw))
    with ResultStore(db, readonly=True) as st:
        with pytest.raises(StoreError, match=r"damaged: the results row \(cell_key 'c0', quantity 'q'\)"):
            st.rows()
        with pytest.raises(StoreError, match="checksum"):
            st.cell_quantities("c0")
        assert st.cell_quantities("c1") == {"q": 0.5}
    rc, out, err = _run(["sweep", "show", str(db)])
    assert rc == 2 and "cell_key 'c0', quantity 'q'" in err and "0.123" not in out
    # an array blob changed behind the store's back
    con = sqlite3.connect(db)
    con.execute("UPDATE arrays SET data = ? WHERE cell_key = 'c1'", (store_mod._npy_bytes(np.zeros(4)),))
    con.commit()
    con.close()
    with ResultStore(db, readonly=True) as st:
        with pytest.raises(StoreError, match=r"arrays row \(cell_key 'c1', name 'x'\)"):
            st.array("c1", "x")


def test_stores_of_the_format_without_checksums_are_refused(tmp_path):
    assert STORE_FORMAT == 3
    db = _store(tmp_path / "r.sqlite")
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '1' WHERE key = 'store_format'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="store format 1.*format 3 only"):
        ResultStore(db, readonly=True)


# -- 5. a lost scheduler stops the run with the reason ---------------------------------------------------
def test_a_lost_scheduler_stops_the_run_and_keeps_the_finished_cells(tmp_path):
    from distributed import LocalCluster
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           **sweep_mod.LOCAL_CLUSTER_OPTIONS)
    try:
        with ResultStore(tmp_path / "r.sqlite") as st, Executor(scheduler=cluster.scheduler_address) as ex:
            st.begin_sweep("s", "toy", {})
            with pytest.raises(SchedulerError,
                               match=r"failed after 1 of 6 cells .*finished cells are stored"):
                run_cells(_toy_cells(6, pause=0.3), st, "s", ex, progress=False,
                          on_result=lambda cell, res: cluster.close())
            assert len(st.done_keys("s")) == 1
    finally:
        cluster.close()


# -- 6. SQLite errors become StoreError (exit status 2) ----------------------------------------------------
def test_disk_full_is_a_store_error_with_the_path_and_reason(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.write_cell("s", "c0", {"seed": 0}, {"q": 1.0})
        st._db.execute(f"PRAGMA max_page_count = {st._db.execute('PRAGMA page_count').fetchone()[0]}")
        with pytest.raises(StoreError,
                           match=r"r.sqlite.*(full).*free disk space.*cells stored before are kept"):
            st.write_cell("s", "c1", {"seed": 1}, {"q": 2.0}, arrays={"x": np.zeros(50_000)})
        assert st.done_keys() == {"c0"}


def test_verify_on_a_damaged_store_exits_2_with_the_reason(tmp_path):
    db = _store(tmp_path / "r.sqlite", values=tuple(range(40)))
    con = sqlite3.connect(db)
    page = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'cells'").fetchone()[0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(db, "r+b") as f:                       # garbage over the cells table's root page
        f.seek((page - 1) * size)
        f.write(b"\xa5" * size)
    rc, _, err = _run(["verify", "--configs", TINY, "--n", "32", "--seeds", "1", "--points", "60",
                       "--workers", "1", "--no-figures", "--no-progress", "--out", str(db)])
    assert rc == 2 and "r.sqlite" in err and "malformed" in err and "damaged" in err


# -- 7. workers without freeprob ----------------------------------------------------------------------
def test_workers_without_freeprob_say_what_to_install(monkeypatch):
    from distributed import LocalCluster
    real = sweep_mod._worker_version

    def missing():      # what a `dask worker` without freeprob answers (its threads here)
        if threading.current_thread() is threading.main_thread():
            return real()
        raise ModuleNotFoundError("No module named 'freeprob'", name="freeprob")

    monkeypatch.setattr(sweep_mod, "_worker_version", missing)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      **sweep_mod.LOCAL_CLUSTER_OPTIONS) as cluster:
        with pytest.raises(SchedulerError, match=r"cannot import freeprob .*install freeprob.*`dask worker`"):
            Executor(scheduler=cluster.scheduler_address)


# -- 8. read-only media; one file after a clean exit --------------------------------------------------
def test_a_clean_exit_leaves_everything_in_the_main_file(tmp_path):
    db = tmp_path / "r.sqlite"
    reader = ResultStore(_store(db, values=(0.25,)), readonly=True)     # e.g. `sweep show` still open
    try:
        with ResultStore(db) as st:
            st.write_cell("s", "c9", {"seed": 9}, {"q": 0.75})
        wal = Path(str(db) + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0
        copy = tmp_path / "copy" / "r.sqlite"              # the main file alone
        copy.parent.mkdir()
        shutil.copy(db, copy)
        with ResultStore(copy, readonly=True) as st:
            assert st.done_keys() == {"c0", "c9"} and st.cell_quantities("c9") == {"q": 0.75}
    finally:
        reader.close()


@pytest.fixture
def readonly_dir(tmp_path):
    """A directory on read-only media: a read-only bind mount (root), else a directory
    without write permission (another user)."""
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    src.mkdir()
    mnt.mkdir()
    if os.geteuid() == 0:
        if subprocess.run(["mount", "--bind", str(src), str(mnt)], capture_output=True).returncode:
            pytest.skip("cannot make read-only media here (mount not permitted)")
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mnt)], check=True, capture_output=True)
        try:
            yield src, mnt
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)
    else:
        src.chmod(0o555)
        try:
            yield src, src
        finally:
            src.chmod(0o755)


def test_a_store_on_read_only_media_can_be_shown_and_exported(readonly_dir, tmp_path):
    src, ro = readonly_dir
    if src != ro:
        _store(src / "r.sqlite")
    else:                                     # written before the permission was taken away
        ro.chmod(0o755)
        _store(ro / "r.sqlite")
        ro.chmod(0o555)
    rc, out, err = _run(["sweep", "show", str(ro / "r.sqlite"), "--format", "csv", "--per-seed"])
    assert rc == 0 and err == "" and "s,c0,toy,8,1,0,q,0.123456789," in out
    rc, _, err = _run(["sweep", "export", str(ro / "r.sqlite"), "--csv", str(tmp_path / "x.csv")])
    assert rc == 0 and (tmp_path / "x.csv").read_text().count("\n") == 3


# -- 9. Ctrl-C during a multi-worker run: one clean line ----------------------------------------------
# tests/test_verify.py::test_interrupted_sweep_resumes_with_only_the_missing_cells[2]: Ctrl-C sent
# to the process group of `freeprob verify --workers 2` while the run waits for the store: exit
# status 130 and the one line, then the rerun computes only the missing cells


# -- 10. refused runs leave nothing behind; one message for duplicates ------------------------------------
def test_refused_runs_create_nothing(tmp_path):
    with pytest.raises(FreeprobValueError, match="workers"):
        verify(_tiny(tmp_path / "a"), progress=False, stream=None, workers=sweep_mod.max_local_workers() + 1)
    base = ["--n", "32", "--seeds", "1", "--points", "60", "--no-figures", "--no-progress"]
    rc, _, err = _run(["verify", "--configs", TINY, *base, "--scheduler", "tcp://127.0.0.1:1",
                       "--out", str(tmp_path / "b")])
    assert rc == 2 and "cannot reach the Dask scheduler" in err
    rc, _, err = _run(["readout", "head-count", "--quick", "--scheduler", "tcp://127.0.0.1:1",
                       "--out", str(tmp_path / "c")])
    assert rc == 2 and "cannot reach the Dask scheduler" in err
    with pytest.raises(SystemExit):
        _run(["verify", "--configs", f"{TINY},{TINY}", *base, "--out", str(tmp_path / "d")])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag,value,field,given,message", [
    ("--configs", "gpt2-small,gpt2-small", "configs", ("gpt2-small",) * 2, "lists 'gpt2-small' twice"),
    ("--schemes", "mqa,gqa:1", "schemes", ("mqa", "gqa:1"), "lists 'mqa' and 'gqa:1', the same value"),
    ("--objects", "out,out", "objects", ("out", "out"), "lists 'out' twice"),
    ("--beta", "0.5,1/2", "beta", "0.5,1/2", "lists '0.5' and '1/2', the same value"),
    ("--n", "64,64", "n", (64, 64), "lists 64 twice"),
])
def test_duplicates_get_one_message_everywhere(tmp_path, capsys, flag, value, field, given, message):
    with pytest.raises(SystemExit) as exc:
        main(["verify", flag, value, "--out", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert f"argument {flag}: {message}; give each value once" in capsys.readouterr().err
    with pytest.raises(FreeprobValueError, match=f"^{field} {message}; give each value once$"):
        VerifySettings(**{field: given}, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()
