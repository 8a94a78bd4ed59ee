r"""The schema of a result store and the values of its rows: the tables
(:data:`RESULT_COLUMNS`, the store format :data:`STORE_FORMAT`), the SHA-256 checksum of
every row (:func:`_row`, :func:`_checksum`), the digest of what a cell stored
(:func:`_content`) and the conversions of values to what SQLite stores (arrays as ``.npy``
bytes, quantities as finite floats or NULL, the ``config, n, beta, seed`` columns).

Part of :mod:`freeprob.experiments.store` (``freeprob.experiments.store``), which re-exports every
name here; see its docstring for the tables and what the checksums guarantee.

Source: this project's design (docs/guide/sweeps.md); :mod:`hashlib`, :func:`numpy.save`.
"""
from __future__ import annotations

import hashlib
import io
import math
import operator
import time

import numpy as np

from freeprob.errors import FreeprobValueError

__all__ = ["STORE_FORMAT", "RESULT_COLUMNS"]

#: Bump when the schema or the meaning of stored rows changes; stores of another format
#: are refused.  2: a checksum per row; the code identity (source hash) in ``code_version``.
#: 3: each cell's done-mark records its rows (counts and a digest), ``members`` rows a checksum.
STORE_FORMAT = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, settings TEXT NOT NULL,
    code_version TEXT NOT NULL, created TEXT NOT NULL, report TEXT, checksum TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    cell_key TEXT PRIMARY KEY, sweep TEXT NOT NULL, config TEXT, n INTEGER, beta TEXT,
    seed INTEGER, params TEXT NOT NULL, seconds REAL, host TEXT,
    code_version TEXT NOT NULL, time TEXT NOT NULL, results INTEGER NOT NULL, arrays INTEGER NOT NULL,
    content TEXT NOT NULL, checksum TEXT NOT NULL);
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
    sweep TEXT NOT NULL, cell_key TEXT NOT NULL, checksum TEXT NOT NULL, PRIMARY KEY (sweep, cell_key));
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
               "code_version", "time", "results", "arrays", "content"), ("cell_key",)),
    "results": (RESULT_COLUMNS, ("cell_key", "quantity")),
    "arrays": (("cell_key", "name", "data"), ("cell_key", "name")),
    "objects": (("key", "kind", "data", "code_version", "time"), ("key",)),
    "members": (("sweep", "cell_key"), ("sweep", "cell_key")),
}
#: tables of every freeprob store (a file that has them is a damaged store, not another database)
_STORE_TABLES = frozenset({"meta", "sweeps", "cells", "results", "arrays", "objects", "members"})
_SQLITE_HEADER = b"SQLite format 3\x00"


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


def _content(results, arrays) -> str:
    """Digest (32 hex digits) of what a cell stored: the checksums of its ``results`` and
    ``arrays`` rows (each covers the row's cell key, name and value), in sorted order."""
    h = hashlib.sha256(b"cell content")
    for tag, sums in ((b"r", results), (b"a", arrays)):
        for c in sorted(sums):
            h.update(tag + str(c).encode())
    return h.hexdigest()[:32]


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
