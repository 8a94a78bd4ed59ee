r"""The result store of sweeps: one SQLite file, written as results arrive.

A sweep (``freeprob verify``, a readout comparison) is a grid of *cells*; a cell is one
unit of work with a stable key (configuration, ``n``, ``β``, seed and the settings that
change its numbers).  :class:`ResultStore` keeps, per finished cell,

* one row per scalar quantity in ``results`` — columns ``sweep, cell_key, config, n,
  beta, seed, quantity, value, code_version, time`` (the table users query, export and
  :command:`freeprob sweep show`),
* its arrays (e.g. sampled spectra, float64) in ``arrays`` as ``.npy`` bytes,
* a row in ``cells`` (parameters as JSON, seconds, host, code version, time): the mark
  that the cell is done.  All of a cell is written in one transaction, so a killed run
  leaves either the whole cell or none of it; a rerun skips done cells.

plus ``objects`` (JSON records shared by cells, e.g. a tabulated exact law), ``sweeps``
(name, kind, settings, report text) and ``meta`` (store format and the version that
created it).  A store written with another :data:`STORE_FORMAT` is refused with
:class:`StoreError`, never mixed.

Only the process that runs the sweep writes (workers return their results to it), so
SQLite's single-writer rule is never in the way; the file is opened in WAL mode so that
``freeprob sweep show`` can read while a sweep writes.

Source: the design of this project (README, "Sweeps"); SQLite is the Python standard
library's :mod:`sqlite3`.
"""
from __future__ import annotations

import io
import json
import math
import operator
import socket
import sqlite3
import subprocess
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from .errors import FreeprobValueError

__all__ = ["DB_SUFFIXES", "STORE_FORMAT", "ResultStore", "StoreError", "code_version", "store_path"]

#: Bump when the schema or the meaning of stored rows changes; stores of another format
#: are refused.
STORE_FORMAT = 1
#: ``--out`` paths with these suffixes name the database itself; other paths are
#: directories that hold ``results.sqlite`` next to the reports.
DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")
DB_NAME = "results.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, settings TEXT NOT NULL,
    code_version TEXT NOT NULL, created TEXT NOT NULL, report TEXT);
CREATE TABLE IF NOT EXISTS cells (
    cell_key TEXT PRIMARY KEY, sweep TEXT NOT NULL, config TEXT, n INTEGER, beta TEXT,
    seed INTEGER, params TEXT NOT NULL, seconds REAL, host TEXT,
    code_version TEXT NOT NULL, time TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    sweep TEXT NOT NULL, cell_key TEXT NOT NULL, config TEXT, n INTEGER, beta TEXT,
    seed INTEGER, quantity TEXT NOT NULL, value REAL, code_version TEXT NOT NULL,
    time TEXT NOT NULL, PRIMARY KEY (cell_key, quantity));
CREATE TABLE IF NOT EXISTS arrays (
    cell_key TEXT NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (cell_key, name));
CREATE TABLE IF NOT EXISTS objects (
    key TEXT PRIMARY KEY, kind TEXT NOT NULL, data TEXT NOT NULL,
    code_version TEXT NOT NULL, time TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS members (
    sweep TEXT NOT NULL, cell_key TEXT NOT NULL, PRIMARY KEY (sweep, cell_key));
CREATE INDEX IF NOT EXISTS results_by_sweep ON results (sweep, config, n, beta, quantity);
"""

#: columns of the ``results`` table, in order (exports keep them)
RESULT_COLUMNS = ("sweep", "cell_key", "config", "n", "beta", "seed", "quantity", "value",
                  "code_version", "time")


class StoreError(FreeprobValueError):
    """The result store cannot be used: not a freeprob store, another store format, or
    not writable.  The message says which and what to do."""


@lru_cache(maxsize=1)
def code_version() -> str:
    """``freeprob <version>``, plus ``+g<commit>`` (and ``.dirty``) when running from a
    git checkout of freeprob itself (an editable install; an installed copy inside some
    other repository does not pick up that repository's commit): recorded with every
    stored row."""
    from . import __version__
    here = Path(__file__).resolve().parent.parent
    tag = f"freeprob {__version__}"
    if not (here / ".git").exists() or not (here / "pyproject.toml").is_file():
        return tag
    try:
        rev = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=5, check=False)
        if rev.returncode == 0 and rev.stdout.strip():
            tag += f"+g{rev.stdout.strip()}"
            dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=5, check=False)
            if dirty.returncode == 0 and dirty.stdout.strip():
                tag += ".dirty"
    except (OSError, subprocess.SubprocessError):
        pass
    return tag


def store_path(out) -> Path:
    """The database file named by an ``--out`` path: the path itself when it ends in
    one of :data:`DB_SUFFIXES`, else ``out/results.sqlite``."""
    out = Path(out)
    return out if out.suffix.lower() in DB_SUFFIXES else out / DB_NAME


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, np.asarray(a), allow_pickle=False)
    return buf.getvalue()


def _npy_load(b):
    return np.load(io.BytesIO(b), allow_pickle=False)


def _finite_or_none(v):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float | np.floating | np.integer):
        raise FreeprobValueError(f"ResultStore: quantities must be real numbers or None; got {v!r}")
    v = float(v)
    return v if math.isfinite(v) else None


def _columns(params):
    """``(config, n, beta, seed)`` column values of a cell: ``n`` and ``seed`` as Python
    ints (a numpy integer would otherwise be bound by sqlite3 as an 8-byte BLOB), ``config``
    and ``beta`` as text."""
    def as_int(name):
        v = params.get(name)
        if v is None:
            return None
        try:
            return operator.index(v)
        except TypeError:
            raise FreeprobValueError(f"ResultStore: params[{name!r}] must be an integer or None; "
                                     f"got {v!r}") from None

    config, beta = params.get("config"), params.get("beta")
    return (None if config is None else str(config), as_int("n"), None if beta is None else str(beta),
            as_int("seed"))


class ResultStore:
    r"""A SQLite result store (see the module docstring for the tables).

    Parameters
    ----------
    path : path
        The database file (created with its parent directories if missing), or an
        ``--out`` directory (then ``path/results.sqlite``; :func:`store_path`).
    readonly : bool
        Open an existing store for reading only (``freeprob sweep show``); never creates.

    Raises
    ------
    StoreError
        The file is not a SQLite database, is a store of another :data:`STORE_FORMAT`,
        does not exist (``readonly``), or cannot be created or written.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with ResultStore(os.path.join(d, "r.sqlite")) as st:
    ...         st.begin_sweep("demo", "example", {"a": 1})
    ...         st.write_cell("demo", "c1", dict(config="x", n=8, beta="1", seed=0),
    ...                       {"relW1": 0.5}, arrays={"eig": [1.0, 2.0]})
    ...         st.done_keys("demo"), st.quantity("demo", "relW1"), st.array("c1", "eig").tolist()
    ({'c1'}, [0.5], [1.0, 2.0])
    """

    def __init__(self, path, *, readonly=False):
        self.path = store_path(path)
        self.readonly = readonly
        self._hint = ("give the database file or the --out directory of a run" if readonly
                      else "choose another --out")
        if readonly and not self.path.is_file():
            raise StoreError(f"no result store at {str(self.path)!r} (give the database file or the --out "
                             "directory of a run)")
        if not readonly:
            if self.path.exists() and not self.path.is_file():
                raise StoreError(f"the result store path {str(self.path)!r} exists and is not a file; choose "
                                 "another --out")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory of the result store {str(self.path)!r} "
                                 f"({exc.strerror or exc}); choose another --out") from None
        try:
            # as_uri() percent-encodes: a '?', '#' or '%' in the path must not end the file name
            uri = self.path.absolute().as_uri() + "?mode=ro" if readonly else str(self.path)
            self._db = sqlite3.connect(uri, uri=readonly, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA foreign_keys = ON")
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.OperationalError as exc:
            raise StoreError(f"cannot open the result store {str(self.path)!r} ({exc}); "
                             f"{self._hint}") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{str(self.path)!r} is not a SQLite database ({exc}); {self._hint}") from None
        try:
            if not tables:
                if readonly:
                    raise StoreError(f"{str(self.path)!r} is an empty database, not a freeprob result store")
                self._create()
            else:
                self._check_format(tables)
        except BaseException:
            self._db.close()
            raise

    # -- set-up -------------------------------------------------------------------------
    def _create(self):
        try:
            self._db.execute("PRAGMA journal_mode = WAL")
            with self._tx():
                for stmt in _SCHEMA.strip().split(";"):
                    if stmt.strip():
                        self._db.execute(stmt)
                self._db.executemany("INSERT INTO meta VALUES (?, ?)",
                                     [("store_format", str(STORE_FORMAT)), ("created_by", code_version()),
                                      ("created", _now()), ("application", "freeprob")])
        except sqlite3.OperationalError as exc:
            raise StoreError(f"cannot write the result store {str(self.path)!r} ({exc}); choose another "
                             "--out") from None

    def _check_format(self, tables):
        if "meta" not in tables:
            raise StoreError(f"{str(self.path)!r} is a SQLite database but not a freeprob result store "
                             f"(no meta table); {self._hint}")
        try:
            meta = dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError:       # another application's table named meta
            meta = {}
        if meta.get("application") != "freeprob" or "store_format" not in meta:
            raise StoreError(f"{str(self.path)!r} is not a freeprob result store; {self._hint}")
        if meta["store_format"] != str(STORE_FORMAT):
            raise StoreError(
                f"the result store {str(self.path)!r} was written by "
                f"{meta.get('created_by', 'another version')} in store format {meta['store_format']}; "
                f"this is {code_version()}, which reads and writes format {STORE_FORMAT} only.  Its results "
                "are not mixed with new ones: use a new --out, or read it with the version that wrote it "
                "(`freeprob sweep export` there)")

    def _tx(self):
        return _Transaction(self._db)

    @property
    def meta(self) -> dict:
        """The ``meta`` table as a dict (``store_format``, ``created_by``, ``created``)."""
        return dict(self._db.execute("SELECT key, value FROM meta"))

    # -- writing ------------------------------------------------------------------------
    def _writable(self, who):
        if self.readonly:
            raise StoreError(f"ResultStore.{who}: the store was opened read-only")

    def begin_sweep(self, name, kind, settings):
        """Record (or find) the sweep ``name``; ``settings`` is a JSON-able dict.

        A sweep of the same name with different settings is refused (its cells would mean
        something else): :class:`StoreError`."""
        self._writable("begin_sweep")
        text = json.dumps(settings, sort_keys=True, default=str)
        row = self._db.execute("SELECT kind, settings FROM sweeps WHERE name = ?", (name,)).fetchone()
        if row is not None:
            if row[0] != kind or row[1] != text:
                raise StoreError(f"the store {str(self.path)!r} already holds a sweep {name!r} with other "
                                 "settings; use another --out (or sweep name)")
            return
        with self._tx():
            self._db.execute("INSERT INTO sweeps VALUES (?, ?, ?, ?, ?, NULL)",
                             (name, kind, text, code_version(), _now()))

    def set_report(self, name, text):
        """Store the final report text of a sweep (shown by ``freeprob sweep show``)."""
        self._writable("set_report")
        with self._tx():
            self._db.execute("UPDATE sweeps SET report = ? WHERE name = ?", (text, name))

    def write_cell(self, sweep, key, params, quantities, *, arrays=None, seconds=None, host=None):
        r"""Store one finished cell in one transaction.

        Parameters
        ----------
        sweep, key : str
        params : dict
            JSON-able; ``config``, ``n``, ``beta``, ``seed`` (if present) also fill the
            columns of the same names.
        quantities : dict str → real or None
            One ``results`` row each (non-finite values are stored as NULL).
        arrays : dict str → array_like, optional
        seconds : float, optional
            Compute time of the cell.
        host : str, optional
            Where it ran (default: this host).

        Raises
        ------
        FreeprobValueError
            A quantity that is not a real number.
        """
        self._writable("write_cell")
        cols = _columns(params)
        rows = [(sweep, key, *cols, str(q), _finite_or_none(v), code_version(), _now())
                for q, v in quantities.items()]
        blobs = [(key, str(k), _npy_bytes(v)) for k, v in (arrays or {}).items()]
        with self._tx():
            self._db.execute("DELETE FROM results WHERE cell_key = ?", (key,))
            self._db.execute("DELETE FROM arrays WHERE cell_key = ?", (key,))
            self._db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.executemany("INSERT INTO arrays VALUES (?, ?, ?)", blobs)
            self._db.execute("INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (key, sweep, *cols, json.dumps(params, sort_keys=True, default=str),
                              seconds, host or socket.gethostname(), code_version(), _now()))
            self._db.execute("INSERT OR IGNORE INTO members VALUES (?, ?)", (sweep, key))

    def add_members(self, sweep, keys):
        """Count cells already stored (by another sweep with the same cell keys) as part of
        ``sweep`` too: :meth:`rows`, :meth:`sweeps` and ``freeprob sweep show`` then list
        them under it.  Keys that are not done are ignored."""
        self._writable("add_members")
        done = self.done_keys()
        with self._tx():
            self._db.executemany("INSERT OR IGNORE INTO members VALUES (?, ?)",
                                 [(sweep, k) for k in keys if k in done])

    def add_quantities(self, sweep, key, params, quantities):
        """Add (or replace) derived quantities of a done cell (e.g. distances to an exact
        law computed after the cell), one transaction."""
        self._writable("add_quantities")
        cols = _columns(params)
        rows = [(sweep, key, *cols, str(q), _finite_or_none(v), code_version(), _now())
                for q, v in quantities.items()]
        with self._tx():
            self._db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def put_object(self, key, kind, data):
        """Store a JSON-able record shared by cells (e.g. a tabulated law)."""
        self._writable("put_object")
        with self._tx():
            self._db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)",
                             (key, kind, json.dumps(data), code_version(), _now()))

    # -- reading ------------------------------------------------------------------------
    def get_object(self, key):
        """The record stored under ``key``, or ``None``."""
        row = self._db.execute("SELECT data FROM objects WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def done_keys(self, sweep=None) -> set:
        """Keys of the finished cells (of one sweep — computed by it or reused through
        :meth:`add_members` — or all)."""
        if sweep is None:
            return {r[0] for r in self._db.execute("SELECT cell_key FROM cells")}
        return {r[0] for r in self._db.execute(
            "SELECT m.cell_key FROM members m JOIN cells c ON c.cell_key = m.cell_key WHERE m.sweep = ?",
            (sweep,))}

    def cell_quantities(self, key) -> dict:
        """``quantity → value`` of one cell (``None`` for NULL)."""
        return dict(self._db.execute("SELECT quantity, value FROM results WHERE cell_key = ?", (key,)))

    def cell_info(self, key):
        """``dict(params, seconds, host, code_version, time)`` of a done cell, or ``None``."""
        row = self._db.execute("SELECT params, seconds, host, code_version, time FROM cells "
                               "WHERE cell_key = ?", (key,)).fetchone()
        if row is None:
            return None
        return {"params": json.loads(row[0]), "seconds": row[1], "host": row[2], "code_version": row[3],
                "time": row[4]}

    def array(self, key, name):
        """A stored array, or ``None``."""
        row = self._db.execute("SELECT data FROM arrays WHERE cell_key = ? AND name = ?",
                               (key, name)).fetchone()
        return None if row is None else _npy_load(row[0])

    def quantity(self, sweep, quantity):
        """All stored values of one quantity in a sweep, in cell-key order."""
        return [r[0] for r in self._db.execute(
            "SELECT value FROM results WHERE sweep = ? AND quantity = ? ORDER BY cell_key",
            (sweep, quantity))]

    def sweeps(self) -> list[dict]:
        """One dict per sweep: ``name, kind, settings (dict), code_version, created, report,
        cells`` (the number done)."""
        out = []
        for name, kind, settings, ver, created, report in self._db.execute(
                "SELECT name, kind, settings, code_version, created, report FROM sweeps "
                "ORDER BY created, name"):
            cells = len(self.done_keys(name))
            out.append({"name": name, "kind": kind, "settings": json.loads(settings), "code_version": ver,
                        "created": created, "report": report, "cells": cells})
        return out

    def rows(self, sweep=None):
        """The ``results`` table (of one sweep, or all) as a list of tuples in
        :data:`RESULT_COLUMNS` order, sorted by sweep, config, n, beta, quantity, seed.

        A cell that belongs to several sweeps (computed by one, reused by another) is
        listed under each, with that sweep's name in the ``sweep`` column."""
        cols = ", ".join("m.sweep" if c == "sweep" else f"r.{c}" for c in RESULT_COLUMNS)
        q = f"SELECT {cols} FROM members m JOIN results r ON r.cell_key = m.cell_key"
        args = ()
        if sweep is not None:
            q += " WHERE m.sweep = ?"
            args = (sweep,)
        order = " ORDER BY m.sweep, r.config, r.n, r.beta, r.quantity, r.seed"
        return list(self._db.execute(q + order, args))

    # -- lifetime -----------------------------------------------------------------------
    def close(self):
        """Close the connection (idempotent)."""
        if getattr(self, "_db", None) is not None:
            self._db.close()
            self._db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error) on an autocommit
    connection."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, et, ev, tb):
        if et is not None:
            self.db.execute("ROLLBACK")
            return
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error:           # e.g. busy: leave no half-open transaction behind
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
