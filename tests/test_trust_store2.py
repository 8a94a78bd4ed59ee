"""Numbers a user can trust (issue 15, second review): the result store and readout runs.

A cell's done-mark records the rows it stored, so missing rows are found (not read as a
smaller table); ``members`` rows carry a checksum; a full disk says where the data is; a
read-only ``sweep show`` creates no file; a damaged store is called damaged; refused
``readout`` runs (bad sizes, too many cells) create nothing and refuse at once; a worker
without freeprob is named.
"""
import errno
import pathlib
import sqlite3
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from types import SimpleNamespace

import numpy as np
import pytest

from freeprob.experiments import sweep as sweep_mod
from freeprob.cli import main
from freeprob.experiments.comparisons import check_comparison, run_comparison
from freeprob.errors import FreeprobValueError
from freeprob.experiments.store import ResultStore, StoreError
from freeprob.experiments.sweep import Executor, SchedulerError, SweepCell, SweepStats, run_cells

TINY = "tiny:d=64,heads=4,d_head=16"


def _run(argv):
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _cell(seed):
    return dict(quantities={f"q{k}": seed + k / 10 for k in range(5)},
                arrays={"eig": np.arange(3.0) + seed, "grid": np.ones(2)})


def _cells(n=3):
    return [SweepCell(key=f"c{i}", params=dict(config="toy", n=4, beta="1", seed=i), fn=_cell,
                      kwargs=dict(seed=i)) for i in range(n)]


def _sweep(db, n=3):
    with ResultStore(db) as st, Executor(workers=1) as ex:
        st.begin_sweep("s", "toy", {})
        return run_cells(_cells(n), st, "s", ex, progress=False)


def _sql(db, *statements):
    con = sqlite3.connect(db)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()


# -- 1. missing rows are found: the done-mark records what the cell stored -----------------------------
@pytest.mark.parametrize("statement,detail", [
    ("DELETE FROM results WHERE cell_key = 'c1' AND quantity IN ('q0', 'q3')", "3 of 5 result rows"),
    ("DELETE FROM arrays WHERE cell_key = 'c1' AND name = 'eig'", "1 of 2 array rows"),
    ("DELETE FROM results WHERE cell_key = 'c1'", "0 of 5 result rows"),
])
def test_a_cell_with_missing_rows_is_refused_not_reused_or_read(tmp_path, statement, detail):
    db = tmp_path / "r.sqlite"
    assert _sweep(db).computed == 3
    _sql(db, statement)
    message = rf"damaged: cell 'c1' is incomplete \({detail}\).*modified outside freeprob"
    with ResultStore(db) as st, Executor(workers=1) as ex:        # a rerun: never "3 reused" from 2 cells
        with pytest.raises(StoreError, match=message):
            run_cells(_cells(), st, "s", ex, progress=False)
    with ResultStore(db, readonly=True) as st:
        for read in (st.done_keys, st.rows, lambda: st.done_keys("s"), lambda: st.cell_quantities("c1"),
                     lambda: st.array("c1", "grid"), lambda: st.cell_info("c1"),
                     lambda: st.quantity("s", "q1")):
            with pytest.raises(StoreError, match=message):
                read()
        assert st.cell_quantities("c0") == {f"q{k}": k / 10 for k in range(5)}       # other cells are fine
    rc, out, err = _run(["sweep", "show", str(db)])
    assert rc == 2 and "cell 'c1' is incomplete" in err and out == ""
    # what the message offers: delete the done-mark, and a rerun recomputes that cell only
    assert "DELETE FROM cells WHERE cell_key = 'c1'" in err
    _sql(db, "DELETE FROM cells WHERE cell_key = 'c1'")
    stats = _sweep(db)
    assert (stats.computed, stats.resumed) == (1, 2)
    with ResultStore(db, readonly=True) as st:
        assert st.cell_quantities("c1") == {f"q{k}": 1 + k / 10 for k in range(5)}
        assert st.array("c1", "eig").tolist() == [1.0, 2.0, 3.0] and len(st.rows("s")) == 15


def test_extra_or_replaced_rows_are_found(tmp_path):
    db = tmp_path / "r.sqlite"
    _sweep(db)
    # the same number of rows, not the same rows: c1's q4 replaced by a renamed copy of its q0
    _sql(db, "DELETE FROM results WHERE cell_key = 'c1' AND quantity = 'q4'",
         "INSERT INTO results SELECT sweep, cell_key, config, n, beta, seed, 'q9', value, code_version, "
         "time, checksum FROM results WHERE cell_key = 'c1' AND quantity = 'q0'")
    with ResultStore(db, readonly=True) as st:
        with pytest.raises(StoreError, match=r"cell 'c1' is incomplete \(its 5 result and 2 array rows are "
                                             r"not the ones it stored\)"):
            st.done_keys()
    # a row more
    db = tmp_path / "r2.sqlite"
    _sweep(db)
    _sql(db, "INSERT INTO arrays SELECT cell_key, 'copy', data, checksum FROM arrays WHERE cell_key = 'c2' "
             "AND name = 'eig'")
    with ResultStore(db, readonly=True) as st:
        with pytest.raises(StoreError, match=r"cell 'c2' is incomplete \(3 array rows where it stored 2\)"):
            st.done_keys("s")


def test_members_rows_have_a_checksum_and_are_checked(tmp_path):
    db = tmp_path / "r.sqlite"
    _sweep(db)
    with ResultStore(db) as st:
        st.begin_sweep("t", "toy", {})
        st.add_members("t", ["c0", "c2", "not-done"])
        assert st.done_keys("t") == {"c0", "c2"}
    _sql(db, "UPDATE members SET sweep = 't' WHERE sweep = 's' AND cell_key = 'c1'")
    with ResultStore(db, readonly=True) as st:
        with pytest.raises(StoreError, match=r"damaged: the members row \(sweep 't', cell_key 'c1'\) does "
                                             "not match its checksum"):
            st.rows("t")
    _sql(db, "DELETE FROM members WHERE cell_key = 'c1'")
    with ResultStore(db, readonly=True) as st:
        with pytest.raises(StoreError, match="cell 'c1' is incomplete .*missing from the members table under "
                                             "its sweep 's'"):
            st.done_keys("s")


def test_derived_quantities_keep_the_done_mark_consistent(tmp_path):
    db = tmp_path / "r.sqlite"
    _sweep(db)
    with ResultStore(db) as st:
        st.add_quantities("s", "c1", {"seed": 1}, {"q0": 7.5, "extra": 2.0})
        assert st.cell_quantities("c1") == {"q0": 7.5, "q1": 1.1, "q2": 1.2, "q3": 1.3, "q4": 1.4,
                                            "extra": 2.0}
        assert st.done_keys("s") == {"c0", "c1", "c2"} and len(st.rows("s")) == 16
        with pytest.raises(StoreError, match="cell 'nope' is not stored"):
            st.add_quantities("s", "nope", {}, {"x": 1.0})
    _sql(db, "DELETE FROM results WHERE cell_key = 'c1' AND quantity = 'extra'")
    with ResultStore(db, readonly=True) as st:
        with pytest.raises(StoreError, match=r"cell 'c1' is incomplete \(5 of 6 result rows\)"):
            st.rows()


def test_a_reader_sees_derived_quantities_written_meanwhile_whole(tmp_path):
    db = tmp_path / "r.sqlite"
    _sweep(db)
    with ResultStore(db) as writer:                 # e.g. verify adding distances while `sweep show` reads
        writer.write_cell("s", "c9", {"seed": 9}, {"q0": 9.0})
        with ResultStore(db, readonly=True) as reader:
            fetch = reader._fetch

            def meanwhile(table, *args, **kwargs):   # the writer commits between two of the reader's queries
                if table == "members" and not writer.cell_quantities("c1").get("extra"):
                    writer.add_quantities("s", "c1", {"seed": 1}, {"extra": 5.0})
                return fetch(table, *args, **kwargs)

            reader._fetch = meanwhile
            assert len(reader.rows("s")) == 16              # one snapshot: without the new row
            assert len(reader.rows("s")) == 17 and reader.cell_quantities("c1")["extra"] == 5.0


# -- 2. a full disk: the data is in the -wal; no stray probe file ---------------------------------------
def test_disk_full_says_the_latest_data_is_in_the_wal_file(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.write_cell("s", "c0", {"seed": 0}, {"q": 1.0})
        st._db.execute(f"PRAGMA max_page_count = {st._db.execute('PRAGMA page_count').fetchone()[0]}")
        with pytest.raises(StoreError) as exc:
            st.write_cell("s", "c1", {"seed": 1}, {"q": 2.0}, arrays={"x": np.zeros(50_000)})
    msg = str(exc.value)
    assert "(database or disk is full)" in msg and "free disk space" in msg
    assert "latest data is only in r.sqlite-wal" in msg and "copy it together with r.sqlite" in msg
    assert "PRAGMA wal_checkpoint(TRUNCATE)" in msg


def test_a_full_disk_leaves_no_write_test_file(tmp_path, monkeypatch):
    real = pathlib.Path.write_text

    def full(self, *args, **kwargs):            # what a full disk does: the file is created, the write fails
        if self.name == ".freeprob-write-test":
            self.touch()
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    out = tmp_path / "o"
    rc, _, err = _run(["verify", "--configs", TINY, "--n", "32", "--seeds", "1", "--points", "60",
                       "--workers", "1", "--no-figures", "--no-progress", "--out", str(out)])
    assert rc == 2 and "No space left on device" in err and "free disk space" in err
    assert not (out / ".freeprob-write-test").exists()


def test_a_main_file_copied_without_its_wal_says_so(tmp_path):
    import shutil
    with ResultStore(tmp_path / "r.sqlite") as st:            # a run still going: its cells are in the -wal
        st.write_cell("s", "c0", {"seed": 0}, {"q": 1.0})
        shutil.copy(tmp_path / "r.sqlite", tmp_path / "copy.sqlite")
    rc, _, err = _run(["sweep", "show", str(tmp_path / "copy.sqlite")])
    assert rc == 2 and "if it was copied without its copy.sqlite-wal file, copy that file beside it too" in err


# -- 3. read-only show/export create no file beside the store -------------------------------------------
def test_reading_a_store_creates_no_wal_or_shm_file(tmp_path):
    db = tmp_path / "run" / "results.sqlite"
    _sweep(db)
    assert sorted(p.name for p in db.parent.iterdir()) == ["results.sqlite"]
    rc, out, _ = _run(["sweep", "show", str(db), "--format", "csv", "--per-seed"])
    assert rc == 0 and out.count("\n") == 16
    rc, _, _ = _run(["sweep", "export", str(db), "--csv", str(tmp_path / "x.csv")])
    assert rc == 0 and (tmp_path / "x.csv").read_text().count("\n") == 16
    with ResultStore(db, readonly=True) as st:
        assert st.done_keys() == {"c0", "c1", "c2"}
    assert sorted(p.name for p in db.parent.iterdir()) == ["results.sqlite"]
    # a store with WAL content (a writer still open) is read with it: its newest cell is seen
    with ResultStore(db) as writer:
        writer.write_cell("s", "c9", {"seed": 9}, {"q": 9.0})
        with ResultStore(db, readonly=True) as st:
            assert "c9" in st.done_keys("s") and st.cell_quantities("c9") == {"q": 9.0}


# -- 4. a damaged store is called damaged ------------------------------------------------------------------
@pytest.mark.parametrize("where", ["page 2", "header"])
def test_a_damaged_store_is_reported_as_damaged_with_what_to_do(tmp_path, where):
    db = tmp_path / "r.sqlite"
    _sweep(db)
    raw = bytearray(db.read_bytes())
    if where == "page 2":                     # the meta table's page
        raw[4096 + 8:4096 + 200] = bytes(b ^ 0xA5 for b in raw[4096 + 8:4096 + 200])
    else:
        raw[:16] = b"garbage garbage!"
    db.write_bytes(bytes(raw))
    rc, _, err = _run(["sweep", "show", str(db)])
    assert rc == 2 and f"the result store {str(db)!r} is damaged (" in err
    assert "Restore it from a copy" in err and ".recover" in err
    assert "not a freeprob result store" not in err and "not a SQLite database" not in err
    # a file that is no database at all is still not called a damaged store
    other = tmp_path / "notes.sqlite"
    other.write_bytes(b"just some text, not a database at all\n" * 200)
    rc, _, err = _run(["sweep", "show", str(other)])
    assert rc == 2 and "is not a SQLite database" in err and "is damaged" not in err


# -- 5/6. refused readout runs create nothing, at once --------------------------------------------------
@pytest.mark.parametrize("args,message", [
    (["--n", "7"], "`n` must be an integer ≥ 128; got 7"),
    (["--n", "129"], "`n` must be a multiple of 64"),
    (["--n", "10000000"], "one initialisation would take about"),
    (["--seeds", "100000"], "would have 300000 cells"),
])
def test_refused_readout_runs_create_nothing_and_refuse_at_once(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    t = time.perf_counter()
    rc, out, err = _run(["readout", "head-count", "--quick", *args])
    assert time.perf_counter() - t < 2.0                # no exact law computed first
    assert rc == 2 and message in err and ("--force" in err) == ("must be" not in message)
    assert list(tmp_path.iterdir()) == []


def test_readout_cell_limit_is_lifted_by_force_and_checked_by_run_comparison(tmp_path):
    with pytest.raises(FreeprobValueError, match=r"300000 cells .*MAX_CELLS.*--force"):
        check_comparison("head-count", quick=True, seeds=100_000)
    plan = check_comparison("head-count", quick=True, seeds=100_000, force=True)
    assert (plan.n, plan.seeds, plan.cells) == (256, 100_000, 300_000)
    assert check_comparison("gqa-vs-tying", quick=True).cells == 2 * 2 * 2 * 6
    with pytest.raises(FreeprobValueError, match="multiple of 64"):
        run_comparison("sharing", quick=True, n=100, store=tmp_path / "s.sqlite")
    assert list(tmp_path.iterdir()) == []
    rc, _, err = _run(["readout", "all", "--quick", "--n", "7", "--out", str(tmp_path / "o")])
    assert rc == 2 and err.count("; skipped") == 5 and "all 5 comparisons refused" in err
    assert list(tmp_path.iterdir()) == []


# -- 7. a worker without freeprob is named ----------------------------------------------------------------
def test_workers_without_freeprob_are_named_and_counts_are_singular(monkeypatch):
    from distributed import LocalCluster
    real = sweep_mod._worker_version

    def missing():
        if threading.current_thread() is threading.main_thread():
            return real()
        raise ModuleNotFoundError("No module named 'freeprob'", name="freeprob")

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      **sweep_mod.LOCAL_CLUSTER_OPTIONS) as cluster:
        with Executor(scheduler=cluster.scheduler_address) as ex:
            assert ex.description == f"Dask cluster at {cluster.scheduler_address} (1 worker)"
        monkeypatch.setattr(sweep_mod, "_worker_version", missing)
        (worker,) = cluster.scheduler.workers
        with pytest.raises(SchedulerError, match=rf"^the worker {worker} of {cluster.scheduler_address} "
                                                 "cannot import freeprob"):
            Executor(scheduler=cluster.scheduler_address)


def test_a_worker_without_freeprob_during_a_run_is_named(tmp_path):
    gone = ModuleNotFoundError("No module named 'freeprob'", name="freeprob")
    answers = {"tcp://10.0.0.7:4000": gone, "tcp://10.0.0.8:4000": "ok"}
    client = SimpleNamespace(run=lambda fn, on_error: answers)
    ex = SimpleNamespace(client=client, scheduler="tcp://10.0.0.5:8786", description="a cluster")
    with pytest.raises(SchedulerError, match=r"^the worker tcp://10.0.0.7:4000 of tcp://10.0.0.5:8786 cannot "
                                             "import freeprob"):
        sweep_mod._cluster_failure(gone, ex, SweepStats(), 3, SimpleNamespace(path=tmp_path / "r.sqlite"))
