r"""The result store of sweeps: one SQLite file, written as results arrive.

A sweep (``freeprob verify``, a readout comparison) is a grid of *cells*; a cell is one
unit of work with a stable key (configuration, ``n``, ``β``, seed and the settings that
change its numbers).  :class:`ResultStore` keeps, per finished cell,

* one row per scalar quantity in ``results`` — columns ``sweep, cell_key, config, n,
  beta, seed, quantity, value, code_version, time`` (the table users query, export and
  :command:`freeprob sweep show`),
* its arrays (e.g. sampled spectra, float64) in ``arrays`` as ``.npy`` bytes,
* a row in ``cells`` (parameters as JSON, seconds, host, code version, time, and what the
  cell stored: the number of its ``results`` and ``arrays`` rows and a digest of their
  checksums): the mark that the cell is done.  All of a cell is written in one
  transaction, so a killed run leaves either the whole cell or none of it; a rerun skips
  done cells,
* a row in ``members`` per sweep the cell belongs to (the one that computed it, and any
  that reused it).

plus ``objects`` (JSON records shared by cells, e.g. a tabulated exact law), ``sweeps``
(name, kind, settings, report text) and ``meta`` (store format and the version that
created it).  A store written with another :data:`STORE_FORMAT` is refused with
:class:`StoreError`, never mixed.

Every row of ``sweeps``, ``cells``, ``results``, ``arrays``, ``objects`` and ``members``
carries a SHA-256 checksum of its values, checked whenever the row is read: a changed or
corrupted value raises :class:`StoreError` naming the row instead of being reported as
data.  Whenever a cell is reused or read, its rows are checked against its done-mark: a
cell with missing, extra or replaced rows (or missing from ``members`` under the sweep
that computed it) raises :class:`StoreError` naming the cell ("incomplete"), never a
table built from fewer cells.  Every stored row also records :func:`code_version`, the
exact identity of the code that computed it (version and a hash of the package sources);
callers put it in their cell keys, so results of different code are never mixed.  Any
:class:`sqlite3.Error` (disk full, a damaged file) leaves this module as a
:class:`StoreError` with the path and the reason (a full disk: that the newest data is in
the ``-wal`` file until it is merged; a damaged file: restore a copy or ``sqlite3 FILE
.recover``).

Only the process that runs the sweep writes (workers return their results to it), so
SQLite's single-writer rule is never in the way; the file is opened in WAL mode so that
``freeprob sweep show`` can read while a sweep writes, and a writer checkpoints the WAL
into the main file when it closes (after a clean exit the store is one file).  Read-only
opening reads a store whose ``-wal`` holds nothing with SQLite's ``immutable=1`` URI (so no
``-wal``/``-shm`` file is created beside it, and read-only media work), else with
``mode=ro`` (the WAL content is read).

The module is split in three: the paths and guards (:mod:`freeprob.experiments.store_paths`),
the schema and row checksums (:mod:`freeprob.experiments.store_schema`) and, here,
:func:`code_version` and :class:`ResultStore`; every name of the other two is re-exported
here.

Source: the design of this project (docs/guide/sweeps.md); SQLite is the Python standard
library's :mod:`sqlite3`.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import socket
import sqlite3
from pathlib import Path

from freeprob._files import input_problem
from freeprob.experiments.store_paths import (
    DB_NAME,  # noqa: F401 (re-exported)
    DB_SUFFIXES,
    StoreError,
    _same_file,  # noqa: F401 (re-exported: freeprob.experiments.store keeps every name it had)
    _shell_sql,
    check_creatable,
    check_out_name,
    disk_full_hint,
    refuse_store_targets,
    store_files,
    store_path,
)
from freeprob.experiments.store_schema import (
    _SCHEMA,
    _SQLITE_HEADER,
    _STORE_TABLES,
    _TABLES,
    RESULT_COLUMNS,  # noqa: F401 (re-exported)
    STORE_FORMAT,
    _checksum,
    _columns,
    _content,
    _finite_or_none,
    _now,
    _npy_bytes,
    _npy_load,
    _row,
    _unique_names,
)

__all__ = ["DB_SUFFIXES", "STORE_FORMAT", "ResultStore", "StoreError", "code_version", "store_path",
           "store_files", "refuse_store_targets", "check_creatable", "check_out_name", "disk_full_hint"]


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    r"""The exact identity of the running freeprob code, computed once per process (when
    :mod:`freeprob.experiments.store` is imported).

    Returns
    -------
    str
        ``freeprob <version>+src.<hash>``: the installed distribution's version
        (:func:`importlib.metadata.version`; ``freeprob.__version__`` when freeprob runs
        from a source tree that is not installed) and the first 16 hex digits of the
        SHA-256 of every ``freeprob/**/*.py`` file (relative path and contents, in sorted
        order).  Any change to the sources changes it.  Recorded with every stored row,
        part of every sweep cell key (so results of different code never mix) and compared
        with the Dask workers' (:class:`freeprob.experiments.sweep.Executor`).

    Raises
    ------
    Nothing.

    Source: this project's design (docs/guide/sweeps.md); :mod:`hashlib`, :mod:`importlib.metadata`.
    """
    try:
        version = importlib.metadata.version("freeprob")
    except importlib.metadata.PackageNotFoundError:
        from freeprob import __version__ as version
    root = Path(__file__).resolve().parents[1]       # the package: freeprob/**/*.py
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + len(data).to_bytes(8, "little") + data)
    return f"freeprob {version}+src.{h.hexdigest()[:16]}"


code_version()      # computed on import, next to the loading of the code it names (not after later edits)


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


def _reading(method):
    """:func:`_sqlite_guard` for a method that only reads: all of it reads one snapshot of the
    store (one read transaction), so rows a writer commits meanwhile (a new cell, derived
    quantities and the done-mark that records them) are seen whole or not at all."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if self._db.in_transaction:         # inside another reading or writing method
            return method(self, *args, **kwargs)
        self._db.execute("BEGIN")
        try:
            return method(self, *args, **kwargs)
        finally:
            if self._db.in_transaction:
                self._db.execute("COMMIT")
    return _sqlite_guard(wrapper)


class ResultStore:
    r"""A SQLite result store (see the module docstring for the tables).

    Parameters
    ----------
    path : path
        The database file (created with its parent directories if missing), or an
        ``--out`` directory (then ``path/results.sqlite``; :func:`store_path`).
    readonly : bool
        Open an existing store for reading only (``freeprob sweep show``); never creates
        (not even SQLite's ``-wal``/``-shm`` files when the ``-wal`` holds nothing).

    Raises
    ------
    StoreError
        The file is not a SQLite database, is a damaged store (the message says to restore
        a copy or use ``sqlite3 FILE .recover``), is a store of another
        :data:`STORE_FORMAT`, does not exist (``readonly``), or cannot be created or written.

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
            why = input_problem(self.path)
            why = f"{why}; " if why not in (None, "no such file") else ""
            raise StoreError(f"no result store at {str(self.path)!r} ({why}give the database file or the "
                             "--out directory of a run)")
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
            # Reading a store whose -wal holds nothing: the main file is the whole store, read
            # as immutable, so no -wal/-shm files are created beside it (and read-only media
            # work).  With WAL content SQLite's shared-memory reader is needed (mode=ro).
            tables = self._connect(None if not readonly else "mode=ro" if self._wal_size() else "immutable=1")
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
            if self._looks_like_store():
                raise self._damaged(exc) from None
            raise StoreError(f"{str(self.path)!r} is not a SQLite database ({exc}); {self._hint}") from None
        try:
            if not tables:
                if readonly:
                    raise StoreError(f"{str(self.path)!r} is an empty database, not a freeprob result store"
                                     + self._copied_without_wal())
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

    def _looks_like_store(self):
        """Whether the file has the SQLite header or the schema of a freeprob store (so an
        error reading it means it is damaged, not that it is some other file)."""
        try:
            with open(self.path, "rb") as f:
                head = f.read(65536)
        except OSError:
            return False
        return head.startswith(_SQLITE_HEADER) or all(f"CREATE TABLE {t} (".encode() in head
                                                      for t in ("cells", "members"))

    def _copied_without_wal(self):
        """`` (if it was copied without its -wal file …)`` for a WAL-mode file with less in it
        than its header says (or only its first page) and no ``-wal`` file beside it; else
        ``""``."""
        try:
            with open(self.path, "rb") as f:
                head = f.read(100)
            size = self.path.stat().st_size
        except OSError:
            return ""
        page = int.from_bytes(head[16:18], "big") or 65536
        pages = int.from_bytes(head[28:32], "big")             # "in-header database size"
        short = head[18:20] == b"\x02\x02" and (size <= page or pages * page != size)
        if not short or self._wal_size():
            return ""
        wal = store_files(self.path)[1].name
        return (f" (if it was copied without its {wal} file, copy that file beside it too: the data not yet "
                "merged into the main file is there)")

    def _damaged(self, reason):
        """The :class:`StoreError` of a damaged store file, with what to do."""
        import shlex
        path = str(self.path)
        return StoreError(
            f"the result store {path!r} is damaged ({reason}){self._copied_without_wal()}; nothing of it is "
            "used.  Restore it from a copy, or rescue the rows that are intact with "
            f"`sqlite3 {shlex.quote(path)} .recover | sqlite3 rescued.sqlite` and check them with "
            "`freeprob sweep show rescued.sqlite`"
            + ("" if self.readonly else "; or start a new store with another --out"))

    def _sqlite_error(self, what, exc):
        """The :class:`StoreError` for a :class:`sqlite3.Error` raised by ``what``."""
        reason = str(exc) or type(exc).__name__
        low = reason.lower()
        if "full" in low:
            hint = disk_full_hint(self.path)
        elif "malformed" in low or "corrupt" in low or "not a database" in low:
            return self._damaged(f"{reason}, in {what}")
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
        ours = len(tables & _STORE_TABLES) >= 4         # a freeprob store's tables, whatever became of meta
        if "meta" not in tables:
            if ours:
                raise self._damaged("its meta table is missing")
            raise StoreError(f"{str(self.path)!r} is a SQLite database but not a freeprob result store "
                             f"(no meta table); {self._hint}")
        try:
            meta = dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError as exc:
            if ours:
                raise self._damaged(f"{exc}, in its meta table") from None
            meta = {}                       # another application's table named meta
        if meta.get("application") != "freeprob" or "store_format" not in meta:
            if ours:
                raise self._damaged("its meta table lacks the store format")
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
                    code_version(), now, len(rows), len(blobs),
                    _content([r[-1] for r in rows], [b[-1] for b in blobs]))
        with self._tx():
            self._db.execute("DELETE FROM results WHERE cell_key = ?", (str(key),))
            self._db.execute("DELETE FROM arrays WHERE cell_key = ?", (str(key),))
            self._db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.executemany("INSERT INTO arrays VALUES (?, ?, ?, ?)", blobs)
            self._db.execute(f"INSERT OR REPLACE INTO cells VALUES ({', '.join('?' * len(cell))})", cell)
            self._db.execute("INSERT OR IGNORE INTO members VALUES (?, ?, ?)",
                             _row("members", str(sweep), str(key)))

    @_sqlite_guard
    def add_members(self, sweep, keys):
        """Count cells already stored (by another sweep with the same cell keys) as part of
        ``sweep`` too: :meth:`rows`, :meth:`sweeps` and ``freeprob sweep show`` then list
        them under it.  Keys that are not done are ignored."""
        self._writable("add_members")
        done = self.done_keys()
        with self._tx():
            self._db.executemany("INSERT OR IGNORE INTO members VALUES (?, ?, ?)",
                                 [_row("members", str(sweep), k) for k in keys if k in done])

    @_sqlite_guard
    def add_quantities(self, sweep, key, params, quantities):
        """Add (or replace) derived quantities of a done cell (e.g. distances to an exact
        law computed after the cell), one transaction; the cell's done-mark is updated to
        record them.  A cell that is not done (or not complete) is refused with
        :class:`StoreError`."""
        self._writable("add_quantities")
        cols = _columns(params)
        now = _now()
        rows = [_row("results", str(sweep), str(key), *cols, q, v, code_version(), now)
                for q, v in _unique_names("quantities", quantities, _finite_or_none)]
        with self._tx():
            cell = self._done_cells("key", str(key))[0].get(str(key))
            if cell is None:
                raise StoreError(f"ResultStore.add_quantities: cell {key!r} is not stored in "
                                 f"{str(self.path)!r}; derived quantities are added to done cells only")
            k = (str(key),)
            sums = dict(self._db.execute("SELECT quantity, checksum FROM results WHERE cell_key = ?", k))
            arrays = [c for (c,) in self._db.execute("SELECT checksum FROM arrays WHERE cell_key = ?", k)]
            sums.update({r[6]: r[-1] for r in rows})
            self._db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                 rows)
            mark = _row("cells", *cell[:11], len(sums), len(arrays), _content(sums.values(), arrays))
            self._db.execute(f"INSERT OR REPLACE INTO cells VALUES ({', '.join('?' * len(mark))})", mark)

    @_sqlite_guard
    def put_object(self, key, kind, data):
        """Store a JSON-able record shared by cells (e.g. a tabulated law)."""
        self._writable("put_object")
        with self._tx():
            self._db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                             _row("objects", str(key), str(kind), json.dumps(data), code_version(), _now()))

    # -- reading ------------------------------------------------------------------------
    def _done_cells(self, scope=None, arg=None):
        r"""The done-marks (``cells`` rows, checksum-verified) of the cells in ``scope``, each
        checked against the rows it records.

        Parameters
        ----------
        scope : {None, "key", "sweep"}
            All cells, the cell ``arg``, or the cells of sweep ``arg`` (computed by it or
            reused through :meth:`add_members`).
        arg : str

        Returns
        -------
        (dict, set)
            ``cell_key → cells row`` (without its checksum) and the ``(sweep, cell_key)``
            pairs of the verified ``members`` rows in scope.

        Raises
        ------
        StoreError
            A row that fails its checksum; a cell whose ``results`` or ``arrays`` rows are
            not the ones its done-mark records (missing, extra or replaced rows), or that is
            missing from ``members`` under the sweep that computed it: the store was changed
            outside freeprob.
        """
        if scope is None:
            where, args = "1", ()
        elif scope == "key":
            where, args = "cell_key = ?", (arg,)
        else:
            where, args = ("cell_key IN (SELECT cell_key FROM members WHERE sweep = ? "
                           "UNION SELECT cell_key FROM cells WHERE sweep = ?)"), (arg, arg)
        cells = {r[0]: r for r in self._fetch("cells", where, args)}
        pairs = {(r[0], r[1]) for r in self._fetch("members", where, args)}
        for key, r in cells.items():
            if (r[1], key) not in pairs:
                raise self._incomplete(key, f"it is missing from the members table under its sweep {r[1]!r}")
        if scope == "sweep":
            pairs = {p for p in pairs if p[0] == arg}
            cells = {k: r for k, r in cells.items() if (arg, k) in pairs}
        found = {k: ([], []) for k in cells}
        for i, table in enumerate(("results", "arrays")):
            query = f"SELECT cell_key, checksum FROM {table} WHERE {where}"
            for key, checksum in self._db.execute(query, args):
                if key in found:
                    found[key][i].append(checksum)
        for key, r in cells.items():
            want = dict(zip(("result", "array"), r[11:13]))
            got = dict(zip(("result", "array"), map(len, found[key])))
            if got != want or _content(*found[key]) != r[13]:
                detail = [f"{got[w]} of {want[w]} {w} rows" if got[w] < want[w] else
                          f"{got[w]} {w} rows where it stored {want[w]}" for w in want if got[w] != want[w]]
                raise self._incomplete(key, ", ".join(detail) or f"its {got['result']} result and "
                                       f"{got['array']} array rows are not the ones it stored")
        return cells, {p for p in pairs if p[1] in cells}

    def _incomplete(self, key, detail):
        """The :class:`StoreError` of a cell whose rows do not match its done-mark."""
        sql = "DELETE FROM cells WHERE cell_key = '" + str(key).replace("'", "''") + "'"
        return StoreError(
            f"the result store {str(self.path)!r} is damaged: cell {key!r} is incomplete ({detail}); the "
            "store was modified outside freeprob, so nothing of the cell is used.  Restore the store from a "
            "copy, or use a new store (another --out); or, to have a rerun recompute just this cell, delete "
            f"its done-mark: {_shell_sql(self.path, sql)}")

    @_reading
    def get_object(self, key):
        """The record stored under ``key``, or ``None``."""
        rows = self._fetch("objects", "key = ?", (key,))
        return json.loads(rows[0][2]) if rows else None

    @_reading
    def done_keys(self, sweep=None) -> set:
        """Keys of the finished cells (of one sweep — computed by it or reused through
        :meth:`add_members` — or all).  Every ``cells`` and ``members`` row read is
        checksum-verified and every cell checked against the rows its done-mark records
        (:class:`StoreError` naming an incomplete cell)."""
        return set(self._done_cells(None if sweep is None else "sweep", sweep)[0])

    @_reading
    def cell_quantities(self, key) -> dict:
        """``quantity → value`` of one done cell (``None`` for NULL; ``{}`` if the cell is
        not done); the cell is checked as in :meth:`done_keys`."""
        if key not in self._done_cells("key", key)[0]:
            return {}
        return {r[6]: r[7] for r in self._fetch("results", "cell_key = ?", (key,))}

    @_reading
    def cell_info(self, key):
        """``dict(params, seconds, host, code_version, time)`` of a done cell, or ``None``;
        the cell is checked as in :meth:`done_keys`."""
        row = self._done_cells("key", key)[0].get(key)
        if row is None:
            return None
        params, seconds, host, ver, when = row[6:11]
        return {"params": json.loads(params), "seconds": seconds, "host": host, "code_version": ver,
                "time": when}

    @_reading
    def array(self, key, name):
        """A stored array of a done cell, or ``None``; the cell is checked as in
        :meth:`done_keys`."""
        if key not in self._done_cells("key", key)[0]:
            return None
        rows = self._fetch("arrays", "cell_key = ? AND name = ?", (key, name))
        return _npy_load(rows[0][2]) if rows else None

    @_reading
    def quantity(self, sweep, quantity):
        """All stored values of one quantity in a sweep (its done cells, checked as in
        :meth:`done_keys`), in cell-key order."""
        done = self._done_cells("sweep", sweep)[0]
        return [r[7] for r in self._fetch("results", "sweep = ? AND quantity = ?", (sweep, quantity),
                                          " ORDER BY cell_key") if r[1] in done]

    @_reading
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

    @_reading
    def rows(self, sweep=None):
        """The ``results`` table (of one sweep, or all) as a list of tuples in
        :data:`RESULT_COLUMNS` order, sorted by sweep, config, n, beta, quantity, seed.

        A cell that belongs to several sweeps (computed by one, reused by another) is
        listed under each, with that sweep's name in the ``sweep`` column.  Only done cells
        are listed, each checked as in :meth:`done_keys`; every row's checksum is verified
        (:class:`StoreError` naming a damaged row or an incomplete cell)."""
        _, pairs = self._done_cells(None if sweep is None else "sweep", sweep)
        q = (f"SELECT m.sweep, {self._cols('results', 'r.')} FROM members m "
             "JOIN results r ON r.cell_key = m.cell_key")
        args = ()
        if sweep is not None:
            q += " WHERE m.sweep = ?"
            args = (sweep,)
        order = " ORDER BY m.sweep, r.config, r.n, r.beta, r.quantity, r.seed"
        return [(r[0], *r[2:]) for r in self._checked("results", q + order, args, prefix=1)
                if (r[0], r[2]) in pairs]

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
