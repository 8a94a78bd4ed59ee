"""The SQLite result store (freeprob.experiments.store): round trips, all-or-nothing cells, reopening,
refusal of foreign or other-format files, and a reader next to a writer."""
import sqlite3

import numpy as np
import pytest

from freeprob.errors import FreeprobValueError
from freeprob.experiments.store import RESULT_COLUMNS, STORE_FORMAT, ResultStore, StoreError, _row, store_path


def _params(config="gpt2-small", n=64, beta="1", seed=0):
    return {"config": config, "n": n, "beta": beta, "seed": seed}


def test_store_path_rules(tmp_path):
    assert store_path(tmp_path / "x.sqlite") == tmp_path / "x.sqlite"
    assert store_path(tmp_path / "x.DB") == tmp_path / "x.DB"
    assert store_path(tmp_path / "run") == tmp_path / "run" / "results.sqlite"


def test_round_trip_quantities_arrays_objects(tmp_path):
    eig = np.linspace(-1.5, 2.25, 7)
    with ResultStore(tmp_path / "run") as st:
        st.begin_sweep("s", "verify", {"beta": "1", "seeds": 2})
        st.write_cell("s", "c0", _params(seed=0), {"relW1": 0.125, "ks": float("nan"), "none": None},
                      arrays={"eig": eig, "grid": np.arange(4)}, seconds=1.5, host="h0")
        st.write_cell("s", "c1", _params(seed=1), {"relW1": 0.25, "ks": 0.5, "none": None})
        st.add_quantities("s", "c0", _params(seed=0), {"derived": 3.0})
        st.put_object("law:mp", "law", {"support": [0.0, 4.0], "density": [0.1, 0.2]})
        assert st.cell_quantities("c0") == {"relW1": 0.125, "ks": None, "none": None, "derived": 3.0}
        assert st.quantity("s", "relW1") == [0.125, 0.25]
        a = st.array("c0", "eig")
        assert a.dtype == np.float64 and np.array_equal(a, eig)
        assert st.array("c0", "grid").tolist() == [0, 1, 2, 3]
        assert st.array("c0", "missing") is None and st.array("nope", "eig") is None
        assert st.get_object("law:mp") == {"support": [0.0, 4.0], "density": [0.1, 0.2]}
        assert st.get_object("nope") is None
        info = st.cell_info("c0")
        assert info["params"] == _params(seed=0) and info["seconds"] == 1.5 and info["host"] == "h0"
        assert st.cell_info("nope") is None
        assert st.done_keys("s") == {"c0", "c1"} and st.done_keys("other") == set()
        (sw,) = st.sweeps()
        assert (sw["name"], sw["kind"], sw["settings"], sw["cells"], sw["report"]) == \
            ("s", "verify", {"beta": "1", "seeds": 2}, 2, None)
        st.set_report("s", "all good")
        assert st.sweeps()[0]["report"] == "all good"
        rows = st.rows("s")
        assert all(len(r) == len(RESULT_COLUMNS) for r in rows) and len(rows) == 7
        r = dict(zip(RESULT_COLUMNS, next(r for r in rows if r[1] == "c1" and r[6] == "relW1")))
        assert (r["sweep"], r["config"], r["n"], r["beta"], r["seed"], r["value"]) == \
            ("s", "gpt2-small", 64, "1", 1, 0.25)
        assert st.meta["store_format"] == str(STORE_FORMAT)


def test_numpy_integer_params_are_stored_as_integers(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.write_cell("s", "c", _params(n=np.int64(128), seed=np.int32(3), beta=np.float64(0.5)),
                      {"q": np.float32(0.25)})
        (row,) = st.rows()
    r = dict(zip(RESULT_COLUMNS, row))
    assert r["n"] == 128 and type(r["n"]) is int and r["seed"] == 3 and type(r["seed"]) is int
    assert r["beta"] == "0.5" and r["value"] == 0.25
    with ResultStore(tmp_path / "r.sqlite") as st, pytest.raises(FreeprobValueError, match="params"):
        st.write_cell("s", "d", _params(n=64.5), {"q": 1.0})


def test_cell_is_all_or_nothing(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.begin_sweep("s", "k", {})
        st.write_cell("s", "c0", _params(seed=0), {"a": 1.0, "b": 2.0}, arrays={"x": [1.0, 2.0]})
        before = (st.done_keys(), st.rows(), st.array("c0", "x").tolist())
        # a non-numeric quantity: refused, nothing of the new cell stored
        with pytest.raises(FreeprobValueError, match="real numbers"):
            st.write_cell("s", "c1", _params(seed=1), {"a": 1.0, "b": "oops"}, arrays={"x": [3.0]})
        assert st.done_keys() == before[0] and st.rows() == before[1]
        assert st.cell_quantities("c1") == {} and st.array("c1", "x") is None and st.cell_info("c1") is None
        # two quantities with the same stored name: refused before anything is written
        with pytest.raises(FreeprobValueError, match="two quantities are named '1'"):
            st.write_cell("s", "c0", _params(seed=0), {1: 5.0, "1": 6.0}, arrays={"x": [9.0]})
        # a failure inside the transaction (the disk fills up) after the old rows of c0 were
        # deleted: rolled back, the old c0 is intact
        pages = st._db.execute("PRAGMA page_count").fetchone()[0]
        st._db.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StoreError, match="full"):
            st.write_cell("s", "c0", _params(seed=0), {"a": 5.0}, arrays={"x": np.zeros(100_000)})
        st._db.execute("PRAGMA max_page_count = 1073741823")
        assert st.done_keys() == before[0] and st.rows() == before[1]
        assert st.array("c0", "x").tolist() == before[2]
        # the store is still usable (no transaction left open)
        st.write_cell("s", "c1", _params(seed=1), {"a": 3.0})
        assert st.done_keys() == {"c0", "c1"}


def test_reopen_keeps_data_and_rejects_changed_settings(tmp_path):
    path = tmp_path / "out"
    with ResultStore(path) as st:
        st.begin_sweep("s", "verify", {"seeds": 2, "beta": "1"})
        st.write_cell("s", "c0", _params(), {"q": 0.5}, arrays={"e": np.eye(2)})
        st.put_object("o", "law", [1, 2])
    with ResultStore(path) as st:
        st.begin_sweep("s", "verify", {"beta": "1", "seeds": 2})      # same settings: fine
        assert st.done_keys("s") == {"c0"} and st.quantity("s", "q") == [0.5]
        assert np.array_equal(st.array("c0", "e"), np.eye(2)) and st.get_object("o") == [1, 2]
        with pytest.raises(StoreError, match="other settings"):
            st.begin_sweep("s", "verify", {"beta": "2", "seeds": 2})
        with pytest.raises(StoreError, match="other settings"):
            st.begin_sweep("s", "readout", {"beta": "1", "seeds": 2})
    with ResultStore(path, readonly=True) as st:
        assert st.done_keys() == {"c0"}
        with pytest.raises(StoreError, match="read-only"):
            st.write_cell("s", "c1", _params(), {"q": 1.0})


def test_other_store_format_is_refused(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as st:
        st.write_cell("s", "c0", _params(), {"q": 0.5})
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '999' WHERE key = 'store_format'")
    con.commit()
    con.close()
    for readonly in (False, True):
        with pytest.raises(StoreError) as err:
            ResultStore(db, readonly=readonly)
        msg = str(err.value)
        assert "store format 999" in msg and f"format {STORE_FORMAT} only" in msg
    con = sqlite3.connect(db)                       # untouched by the refused opens
    assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1
    con.close()


def test_foreign_files_are_refused(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database " * 200)
    for readonly in (False, True):
        with pytest.raises(StoreError, match="not a SQLite database"):
            ResultStore(junk, readonly=readonly)
    other = tmp_path / "other.sqlite"               # SQLite, no meta table
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    for readonly in (False, True):
        with pytest.raises(StoreError, match="no meta table"):
            ResultStore(other, readonly=readonly)
    app = tmp_path / "app.sqlite"                   # another application's table named meta
    con = sqlite3.connect(app)
    con.execute("CREATE TABLE meta (k, v)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="not a freeprob result store"):
        ResultStore(app, readonly=True)
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(StoreError, match="empty database"):
        ResultStore(empty, readonly=True)
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(StoreError, match="not a file"):
        ResultStore(tmp_path / "dir.sqlite")


def test_readonly_never_creates(tmp_path):
    with pytest.raises(StoreError, match="no result store"):
        ResultStore(tmp_path / "missing.sqlite", readonly=True)
    with pytest.raises(StoreError, match="no result store"):
        ResultStore(tmp_path / "run", readonly=True)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["we#ird.sqlite", "q?x.sqlite", "p%41 b.sqlite"])
def test_readonly_path_with_uri_characters(tmp_path, name):
    with ResultStore(tmp_path / name) as st:
        st.write_cell("s", "c0", _params(), {"q": 0.5})
    before = {p.name for p in tmp_path.iterdir()}
    with ResultStore(tmp_path / name, readonly=True) as st:
        assert st.quantity("s", "q") == [0.5]
    # only the database and its WAL side files: no stray file named after a URI fragment
    assert {p.name for p in tmp_path.iterdir()} - before <= {name + "-wal", name + "-shm"}


def test_reader_next_to_writer(tmp_path):
    db = tmp_path / "r.sqlite"
    writer = ResultStore(db)
    try:
        writer.begin_sweep("s", "k", {})
        writer.write_cell("s", "c0", _params(seed=0), {"q": 0.5})
        with ResultStore(db, readonly=True) as reader:
            assert reader.done_keys() == {"c0"}
            writer.write_cell("s", "c1", _params(seed=1), {"q": 0.75})
            assert reader.done_keys() == {"c0", "c1"} and reader.quantity("s", "q") == [0.5, 0.75]
            # a write transaction in progress (another connection) does not block the reader,
            # which sees the last committed state
            other = sqlite3.connect(db, isolation_level=None, timeout=1)
            other.execute("BEGIN IMMEDIATE")
            other.execute("INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                          _row("objects", "x", "k", "1", "v", "t"))
            assert reader.get_object("x") is None and reader.done_keys() == {"c0", "c1"}
            other.execute("COMMIT")
            other.close()
            assert reader.get_object("x") == 1
    finally:
        writer.close()
    writer.close()                                  # idempotent


def test_a_reused_cell_is_listed_under_every_sweep_that_uses_it(tmp_path):
    with ResultStore(tmp_path / "m.sqlite") as st:
        st.begin_sweep("a", "toy", {"seeds": 2})
        st.begin_sweep("b", "toy", {"seeds": 3})
        st.write_cell("a", "k0", {"config": "c", "n": 8, "beta": "1", "seed": 0}, {"q": 1.5})
        st.write_cell("b", "k1", {"config": "c", "n": 8, "beta": "1", "seed": 1}, {"q": 2.5})
        st.add_members("b", ["k0", "not-done"])
        assert st.done_keys("a") == {"k0"} and st.done_keys("b") == {"k0", "k1"}
        assert [(r[0], r[1], r[7]) for r in st.rows("b")] == [("b", "k0", 1.5), ("b", "k1", 2.5)]
        assert [(r[0], r[1]) for r in st.rows()] == [("a", "k0"), ("b", "k0"), ("b", "k1")]
        assert {s["name"]: s["cells"] for s in st.sweeps()} == {"a": 1, "b": 2}
