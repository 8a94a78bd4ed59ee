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

Every row of ``sweeps``, ``cells``, ``results``, ``arrays`` and ``objects`` carries a
SHA-256 checksum of its values, checked whenever the row is read: a changed or corrupted
value raises :class:`StoreError` naming the row instead of being reported as data.  Every
stored row also records :func:`code_version`, the exact identity of the code that computed
it (version and a hash of the package sources); callers put it in their cell keys, so
results of different code are never mixed.  Any :class:`sqlite3.Error` (disk full, a
damaged file) leaves this module as a :class:`StoreError` with the path and the reason.

Only the process that runs the sweep writes (workers return their results to it), so
SQLite's single-writer rule is never in the way; the file is opened in WAL mode so that
``freeprob sweep show`` can read while a sweep writes, and a writer checkpoints the WAL
into the main file when it closes (after a clean exit the store is one file).  Read-only
opening uses SQLite's ``mode=ro`` URI, or ``immutable=1`` on read-only media.

Source: the design of this project (README, "Sweeps"); SQLite is the Python standard
library's :mod:`sqlite3`.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import io
import json
import math
import operator
import os
import socket
import sqlite3
import time
from pathlib import Path

import numpy as np

from .errors import FreeprobValueError

__all__ = ["DB_SUFFIXES", "STORE_FORMAT", "ResultStore", "StoreError", "code_version", "store_path",
           "store_files", "refuse_store_targets", "check_creatable"]

#: Bump when the schema or the meaning of stored rows changes; stores of another format
#: are refused.  2: a checksum per row; the code identity (source hash) in ``code_version``.
STORE_FORMAT = 2
#: ``--out`` paths with these suffixes name the database itself; other paths are
#: directories that hold ``results.sqlite`` next to the reports.
DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")
DB_NAME = "results.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, settings TEXT NOT NULL,
    code_version TEXT NOT NULL, created TEXT NOT NULL, report TEXT, checksum TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    cell_key TEXT PRIMARY KEY, sweep TEXT NOT NULL, config TEXT, n INTEGER, beta TEXT,
    seed INTEGER, params TEXT NOT NULL, seconds REAL, host TEXT,
    code_version TEXT NOT NULL, time TEXT NOT NULL, checksum TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    sweep TEXT NOT NULL, cell_key TEXT NOT NULL, config TEXT, n INTEGER, beta TEXT,
    seed INTEGER, quantity TEXT NOT NULL, value REAL, code_version TEXT NOT NULL,
    time TEXT NOT NULL, checksum TEXT NOT NULL, PRIMARY KEY (cell_key, quantity));
CREATE TABLE IF NOT EXISTS arrays (
    cell_key TEXT NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL, checksum TEXT NOT NULL,
    PRIMARY KEY (cell_key, name));
CREATE TABLE IF NOT EXISTS objects (
    key TEXT PRIMARY KEY, kind TEXT NOT NULL, data TEXT NOT NULL,
    code_version TEXT NOT NULL, time TEXT NOT NULL, checksum TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS members (
    sweep TEXT NOT NULL, cell_key TEXT NOT NULL, PRIMARY KEY (sweep, cell_key));
CREATE INDEX IF NOT EXISTS results_by_sweep ON results (sweep, config, n, beta, quantity);
"""

#: columns of the ``results`` table, in order (exports keep them)
RESULT_COLUMNS = ("sweep", "cell_key", "config", "n", "beta", "seed", "quantity", "value",
                  "code_version", "time")
#: the checksummed tables: their columns (in order, without ``checksum``) and the columns
#: that name a row in messages
_TABLES = {
    "sweeps": (("name", "kind", "settings", "code_version", "created", "report"), ("name",)),
    "cells": (("cell_key", "sweep", "config", "n", "beta", "seed", "params", "seconds", "host",
               "code_version", "time"), ("cell_key",)),
    "results": (RESULT_COLUMNS, ("cell_key", "quantity")),
    "arrays": (("cell_key", "name", "data"), ("cell_key", "name")),
    "objects": (("key", "kind", "data", "code_version", "time"), ("key",)),
}


class StoreError(FreeprobValueError):
    """The result store cannot be used: not a freeprob store, another store format, or
    not writable.  The message says which and what to do."""


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    r"""The exact identity of the running freeprob code, computed once per process (when
    :mod:`freeprob.store` is imported).

    Returns
    -------
    str
        ``freeprob <version>+src.<hash>``: the installed distribution's version
        (:func:`importlib.metadata.version`; ``freeprob.__version__`` when freeprob runs
        from a source tree that is not installed) and the first 16 hex digits of the
        SHA-256 of every ``freeprob/**/*.py`` file (relative path and contents, in sorted
        order).  Any change to the sources changes it.  Recorded with every stored row,
        part of every sweep cell key (so results of different code never mix) and compared
        with the Dask workers' (:class:`freeprob.sweep.Executor`).

    Raises
    ------
    Nothing.

    Source: this project's design (README, "Sweeps"); :mod:`hashlib`, :mod:`importlib.metadata`.
    """
    try:
        version = importlib.metadata.version("freeprob")
    except importlib.metadata.PackageNotFoundError:
        from . import __version__ as version
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + len(data).to_bytes(8, "little") + data)
    return f"freeprob {version}+src.{h.hexdigest()[:16]}"


code_version()      # computed on import, next to the loading of the code it names (not after later edits)


def store_files(path) -> list[Path]:
    r"""The files of a result store: the database and SQLite's ``-wal``, ``-shm`` and
    ``-journal`` files beside it (whether they exist or not).

    Parameters
    ----------
    path : path
        The database file or an ``--out`` directory (:func:`store_path`).

    Returns
    -------
    list of pathlib.Path

    Raises
    ------
    Nothing.

    Source: SQLite's file naming (https://www.sqlite.org/tempfiles.html).
    """
    db = store_path(path)
    return [db] + [db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal")]


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_creatable(directory):
    r"""Refuse, without creating anything, an output directory that cannot be made.

    Parameters
    ----------
    directory : path
        A report directory or the directory of a store (``--out``).

    Returns
    -------
    None

    Raises
    ------
    FreeprobValueError
        A file in the way, or a nearest existing ancestor that is not a writable
        directory; the message says which and to choose another ``--out``.

    Source: this project's design (a refused run leaves nothing behind; README, "Sweeps").
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise FreeprobValueError(f"the output path {str(directory)!r} exists and is not a directory; choose "
                                 "another --out")
    ancestor = directory.absolute()
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise FreeprobValueError(f"cannot write to the output directory {str(directory)!r} "
                                 f"({str(ancestor)!r} is not a writable directory); choose another --out")


def refuse_store_targets(targets, store, *, who):
    r"""Refuse output paths that are the result store (or one of its SQLite files).

    Parameters
    ----------
    targets : iterable of (str, path)
        ``(what, path)`` of every file a command is about to write (``what`` names it in
        the message, e.g. ``"--csv"`` or ``"report summary.csv"``); ``None`` paths and
        ``-`` (standard output) are skipped.
    store : path
        The store the command reads or writes (database file or ``--out`` directory).
    who : str
        The command, for the message.

    Returns
    -------
    None

    Raises
    ------
    StoreError
        A target that is the store's database or its ``-wal``, ``-shm`` or ``-journal``
        file, by resolved path or :func:`os.path.samefile` (symbolic and hard links
        included); nothing has been read or written.

    Source: this project's design (README, "Sweeps").
    """
    files = store_files(store)
    for what, target in targets:
        if target is None or str(target) == "-":
            continue
        t = Path(target)
        for f in files:
            if _same_file(t, f):
                raise StoreError(f"{who}: {what} {str(target)!r} is the result store {str(files[0])!r}"
                                 + ("" if f == files[0] else f" (its SQLite file {f.name!r})")
                                 + "; writing there would destroy the stored results: give another file name")


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
    v = float(v) + 0.0          # -0.0 -> 0.0, as SQLite stores it (the checksum is of what is read back)
    return v if math.isfinite(v) else None


def _checksum(table, values) -> str:
    """SHA-256 (32 hex digits) of a row's values, type-tagged and length-prefixed; floats
    by their exact hex form."""
    h = hashlib.sha256(table.encode())
    for v in values:
        if v is None:
            b = b"n"
        elif isinstance(v, bytes | memoryview):
            b = b"b" + bytes(v)
        elif isinstance(v, float):
            b = b"f" + v.hex().encode()
        elif isinstance(v, int):
            b = b"i" + str(v).encode()
        else:
            b = b"s" + str(v).encode()
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()[:32]


def _row(table, *values):
    """A row of ``table`` with its checksum appended (the values as SQLite will return them)."""
    return (*values, _checksum(table, values))


def _sqlite_guard(method):
    """Turn any :class:`sqlite3.Error` of a :class:`ResultStore` method into a
    :class:`StoreError` with the path and the reason."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise self._sqlite_error(method.__name__, exc) from None
    return wrapper


def _unique_names(what, items, convert):
    """``[(str(name), convert(value))]`` of a dict, refusing two names equal as text."""
    out, seen = [], set()
    for k, v in items.items():
        name = str(k)
        if name in seen:
            raise FreeprobValueError(f"ResultStore: two {what} are named {name!r}; names must be unique as "
                                     "text")
        seen.add(name)
        out.append((name, convert(v)))
    return out


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
        self._db = None
        try:
            try:
                tables = self._connect("mode=ro" if readonly else None)
            except sqlite3.OperationalError:
                # read-only media: SQLite cannot create the -shm file that WAL readers need.
                # With no WAL content the main file is the whole store: read it as immutable.
                if not readonly or self._wal_size():
                    raise
                tables = self._connect("immutable=1")
        except sqlite3.OperationalError as exc:
            self.close()
            why = ""
            if readonly and self._wal_size():
                why = (f"; its newest cells are in {self.path.name}-wal, which SQLite cannot read on "
                       "read-only media: copy the store with its -wal file to writable storage")
            raise StoreError(f"cannot open the result store {str(self.path)!r} ({exc}){why}; "
                             f"{self._hint}") from None
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(f"{str(self.path)!r} is not a SQLite database ({exc}); {self._hint}") from None
        try:
            if not tables:
                if readonly:
                    raise StoreError(f"{str(self.path)!r} is an empty database, not a freeprob result store")
                self._create()
            else:
                self._check_format(tables)
        except sqlite3.Error as exc:
            self.close()
            raise self._sqlite_error("opening", exc) from None
        except BaseException:
            self.close()
            raise

    # -- set-up -------------------------------------------------------------------------
    def _connect(self, mode):
        """Open the connection (``mode``: a URI query such as ``mode=ro``, or None for a
        plain read-write path) and return the names of its tables."""
        if self._db is not None:
            self._db.close()
            self._db = None
        # as_uri() percent-encodes: a '?', '#' or '%' in the path must not end the file name
        target = str(self.path) if mode is None else self.path.absolute().as_uri() + "?" + mode
        self._db = sqlite3.connect(target, uri=mode is not None, timeout=30, isolation_level=None)
        self._db.execute("PRAGMA foreign_keys = ON")
        return {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _wal_size(self):
        try:
            return store_files(self.path)[1].stat().st_size
        except OSError:
            return 0

    def _sqlite_error(self, what, exc):
        """The :class:`StoreError` for a :class:`sqlite3.Error` raised by ``what``."""
        reason = str(exc) or type(exc).__name__
        low = reason.lower()
        if "full" in low:
            hint = "free disk space (or choose another --out) and rerun: the cells stored before are kept"
        elif "malformed" in low or "corrupt" in low or "not a database" in low:
            hint = ("the file is damaged: restore it from a copy (`sqlite3 STORE .recover` may rescue "
                    "rows), or start a new store with another --out")
        elif "readonly" in low or "read-only" in low:
            hint = "the store cannot be written here: choose another --out"
        elif "locked" in low or "busy" in low:
            hint = "another process holds the store: wait for it to finish, or choose another --out"
        else:
            hint = self._hint
        return StoreError(f"the result store {str(self.path)!r} failed in {what} ({reason}); {hint}")

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
        except sqlite3.Error as exc:
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

    def _checked(self, table, query, args=(), *, prefix=0):
        """Rows of ``query`` (which selects ``prefix`` extra columns, then the columns of
        ``table`` and its checksum) with every checksum verified; returned without it."""
        columns, names = _TABLES[table]
        out = []
        for r in self._db.execute(query, args):
            values = r[prefix:-1]
            if r[-1] != _checksum(table, values):
                ident = ", ".join(f"{c} {v!r}" for c, v in zip(columns, values) if c in names)
                raise StoreError(
                    f"the result store {str(self.path)!r} is damaged: the {table} row ({ident}) does not "
                    "match its checksum (a value was changed or corrupted after it was written); nothing of "
                    "it is used.  Restore the store from a copy, or start a new one with another --out")
            out.append(r[:-1])
        return out

    @staticmethod
    def _cols(table, alias=""):
        return ", ".join(f"{alias}{c}" for c in (*_TABLES[table][0], "checksum"))

    def _fetch(self, table, where, args=(), order=""):
        """Checksum-verified rows of ``table`` matching ``where`` (see :meth:`_checked`)."""
        return self._checked(table, f"SELECT {self._cols(table)} FROM {table} WHERE {where}{order}", args)

    @property
    @_sqlite_guard
    def meta(self) -> dict:
        """The ``meta`` table as a dict (``store_format``, ``created_by``, ``created``)."""
        return dict(self._db.execute("SELECT key, value FROM meta"))

    # -- writing ------------------------------------------------------------------------
    def _writable(self, who):
        if self.readonly:
            raise StoreError(f"ResultStore.{who}: the store was opened read-only")

    @_sqlite_guard
    def begin_sweep(self, name, kind, settings):
        """Record (or find) the sweep ``name``; ``settings`` is a JSON-able dict.

        A sweep of the same name with different settings is refused (its cells would mean
        something else): :class:`StoreError`."""
        self._writable("begin_sweep")
        text = json.dumps(settings, sort_keys=True, default=str)
        rows = self._fetch("sweeps", "name = ?", (name,))
        if rows:
            if rows[0][1] != kind or rows[0][2] != text:
                raise StoreError(f"the store {str(self.path)!r} already holds a sweep {name!r} with other "
                                 "settings; use another --out (or sweep name)")
            return
        with self._tx():
            self._db.execute("INSERT INTO sweeps VALUES (?, ?, ?, ?, ?, ?, ?)",
                             _row("sweeps", name, kind, text, code_version(), _now(), None))

    @_sqlite_guard
    def set_report(self, name, text):
        """Store the final report text of a sweep (shown by ``freeprob sweep show``)."""
        self._writable("set_report")
        with self._tx():
            rows = self._fetch("sweeps", "name = ?", (name,))
            if rows:
                self._db.execute("INSERT OR REPLACE INTO sweeps VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 _row("sweeps", *rows[0][:5], str(text)))

    @_sqlite_guard
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
            A quantity that is not a real number; two quantities (or arrays) with the same
            name.
        StoreError
            The write failed (disk full, a damaged store …); the cell is not stored.
        """
        self._writable("write_cell")
        cols = _columns(params)
        now = _now()
        rows = [_row("results", str(sweep), str(key), *cols, q, v, code_version(), now)
                for q, v in _unique_names("quantities", quantities, _finite_or_none)]
        blobs = [_row("arrays", str(key), k, v) for k, v in _unique_names("arrays", arrays or {}, _npy_bytes)]
        cell = _row("cells", str(key), str(sweep), *cols, json.dumps(params, sort_keys=True, default=str),
                    None if seconds is None else float(seconds), str(host or socket.gethostname()),
                    code_version(), now)
        with self._tx():
            self._db.execute("DELETE FROM results WHERE cell_key = ?", (key,))
            self._db.execute("DELETE FROM arrays WHERE cell_key = ?", (key,))
            self._db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.executemany("INSERT INTO arrays VALUES (?, ?, ?, ?)", blobs)
            self._db.execute("INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", cell)
            self._db.execute("INSERT OR IGNORE INTO members VALUES (?, ?)", (sweep, key))

    @_sqlite_guard
    def add_members(self, sweep, keys):
        """Count cells already stored (by another sweep with the same cell keys) as part of
        ``sweep`` too: :meth:`rows`, :meth:`sweeps` and ``freeprob sweep show`` then list
        them under it.  Keys that are not done are ignored."""
        self._writable("add_members")
        done = self.done_keys()
        with self._tx():
            self._db.executemany("INSERT OR IGNORE INTO members VALUES (?, ?)",
                                 [(sweep, k) for k in keys if k in done])

    @_sqlite_guard
    def add_quantities(self, sweep, key, params, quantities):
        """Add (or replace) derived quantities of a done cell (e.g. distances to an exact
        law computed after the cell), one transaction."""
        self._writable("add_quantities")
        cols = _columns(params)
        now = _now()
        rows = [_row("results", str(sweep), str(key), *cols, q, v, code_version(), now)
                for q, v in _unique_names("quantities", quantities, _finite_or_none)]
        with self._tx():
            self._db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                 rows)

    @_sqlite_guard
    def put_object(self, key, kind, data):
        """Store a JSON-able record shared by cells (e.g. a tabulated law)."""
        self._writable("put_object")
        with self._tx():
            self._db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                             _row("objects", str(key), str(kind), json.dumps(data), code_version(), _now()))

    # -- reading ------------------------------------------------------------------------
    @_sqlite_guard
    def get_object(self, key):
        """The record stored under ``key``, or ``None``."""
        rows = self._fetch("objects", "key = ?", (key,))
        return json.loads(rows[0][2]) if rows else None

    @_sqlite_guard
    def done_keys(self, sweep=None) -> set:
        """Keys of the finished cells (of one sweep — computed by it or reused through
        :meth:`add_members` — or all); every ``cells`` row read is checksum-verified."""
        if sweep is None:
            return {r[0] for r in self._fetch("cells", "1")}
        return {r[0] for r in self._checked(
            "cells", f"SELECT {self._cols('cells', 'c.')} FROM members m JOIN cells c "
            "ON c.cell_key = m.cell_key WHERE m.sweep = ?", (sweep,))}

    @_sqlite_guard
    def cell_quantities(self, key) -> dict:
        """``quantity → value`` of one cell (``None`` for NULL)."""
        return {r[6]: r[7] for r in self._fetch("results", "cell_key = ?", (key,))}

    @_sqlite_guard
    def cell_info(self, key):
        """``dict(params, seconds, host, code_version, time)`` of a done cell, or ``None``."""
        rows = self._fetch("cells", "cell_key = ?", (key,))
        if not rows:
            return None
        params, seconds, host, ver, when = rows[0][6:]
        return {"params": json.loads(params), "seconds": seconds, "host": host, "code_version": ver,
                "time": when}

    @_sqlite_guard
    def array(self, key, name):
        """A stored array, or ``None``."""
        rows = self._fetch("arrays", "cell_key = ? AND name = ?", (key, name))
        return _npy_load(rows[0][2]) if rows else None

    @_sqlite_guard
    def quantity(self, sweep, quantity):
        """All stored values of one quantity in a sweep, in cell-key order."""
        return [r[7] for r in self._fetch("results", "sweep = ? AND quantity = ?", (sweep, quantity),
                                          " ORDER BY cell_key")]

    @_sqlite_guard
    def sweeps(self) -> list[dict]:
        """One dict per sweep: ``name, kind, settings (dict), code_version, created, report,
        cells`` (the number done)."""
        out = []
        for name, kind, settings, ver, created, report in self._fetch("sweeps", "1", (),
                                                                      " ORDER BY created, name"):
            cells = len(self.done_keys(name))
            out.append({"name": name, "kind": kind, "settings": json.loads(settings), "code_version": ver,
                        "created": created, "report": report, "cells": cells})
        return out

    @_sqlite_guard
    def rows(self, sweep=None):
        """The ``results`` table (of one sweep, or all) as a list of tuples in
        :data:`RESULT_COLUMNS` order, sorted by sweep, config, n, beta, quantity, seed.

        A cell that belongs to several sweeps (computed by one, reused by another) is
        listed under each, with that sweep's name in the ``sweep`` column.  Every row's
        checksum is verified (:class:`StoreError` naming a damaged row)."""
        q = (f"SELECT m.sweep, {self._cols('results', 'r.')} FROM members m "
             "JOIN results r ON r.cell_key = m.cell_key")
        args = ()
        if sweep is not None:
            q += " WHERE m.sweep = ?"
            args = (sweep,)
        order = " ORDER BY m.sweep, r.config, r.n, r.beta, r.quantity, r.seed"
        return [(r[0], *r[2:]) for r in self._checked("results", q + order, args, prefix=1)]

    # -- lifetime -----------------------------------------------------------------------
    def close(self):
        """Close the connection (idempotent).  A writer first checkpoints the WAL into the
        database file and truncates it (``PRAGMA wal_checkpoint(TRUNCATE)``), so that after a
        clean exit the store is the one file; best effort (a reader still open may keep
        the WAL, which is then merged by the next writer)."""
        if getattr(self, "_db", None) is not None:
            if not self.readonly:
                try:
                    self._db.execute("PRAGMA busy_timeout = 2000")      # a reader mid-query: wait briefly
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error:
                    pass
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
            if self.db.in_transaction:      # SQLite may have rolled back itself (e.g. disk full)
                self.db.execute("ROLLBACK")
            return
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error:           # e.g. busy: leave no half-open transaction behind
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
