r"""Where a result store lives and which paths must never be written over: the
``--out`` rules (:func:`store_path`, :data:`DB_SUFFIXES`), the store's SQLite files
(:func:`store_files`), refusing an export or report onto them (:func:`refuse_store_targets`),
refusing an output directory that cannot be made (:func:`check_creatable`), what to do on
a full disk (:func:`disk_full_hint`) and :class:`StoreError`.

Part of :mod:`freeprob.experiments.store` (``freeprob.experiments.store``), which re-exports every
name here; the store itself is :class:`freeprob.experiments.store.ResultStore`.

Source: this project's design (docs/guide/sweeps.md); SQLite's file naming
(https://www.sqlite.org/tempfiles.html).
"""
from __future__ import annotations

import os
from pathlib import Path

from freeprob._files import creation_problem
from freeprob.errors import FreeprobValueError

__all__ = ["DB_SUFFIXES", "DB_NAME", "FILE_SUFFIXES", "StoreError", "store_path", "store_files",
           "refuse_store_targets", "check_creatable", "check_out_name", "disk_full_hint"]

#: ``--out`` paths with these suffixes name the database itself; other paths are
#: directories that hold ``results.sqlite`` next to the reports.
DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")
DB_NAME = "results.sqlite"

#: suffixes of single output files: an ``--out`` ending in one (and not an existing directory)
#: is refused (:func:`check_out_name`) rather than made into a directory named ``foo.txt``
FILE_SUFFIXES = (".txt", ".csv", ".tsv", ".json", ".png", ".pdf", ".svg", ".parquet", ".npy", ".npz",
                 ".md", ".html", ".log", ".out")


class StoreError(FreeprobValueError):
    """The result store cannot be used: not a freeprob store, another store format, or
    not writable.  The message says which and what to do."""


def store_path(out) -> Path:
    """The database file named by an ``--out`` path: the path itself when it ends in
    one of :data:`DB_SUFFIXES`, else ``out/results.sqlite``."""
    out = Path(out)
    return out if out.suffix.lower() in DB_SUFFIXES else out / DB_NAME


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


def disk_full_hint(path) -> str:
    r"""What to do when the disk of a result store is full (the end of the error message).

    Parameters
    ----------
    path : path
        The store's database file or ``--out`` directory (:func:`store_path`).

    Returns
    -------
    str
        Free space and rerun (the stored cells are kept); when the store's ``-wal`` file
        holds data, also that the store's latest data is only there until it is merged, so
        it must be kept and copied with the database file, and how to merge it once space
        is freed.

    Raises
    ------
    Nothing.

    Source: SQLite's write-ahead log (https://www.sqlite.org/wal.html): a checkpoint, which
    copies the log into the database file, needs space in that file.
    """
    db = store_path(path)
    hint = "free disk space (or choose another --out) and rerun: the cells stored before are kept"
    wal = store_files(db)[1]
    try:
        size = wal.stat().st_size
    except OSError:
        size = 0
    if size:
        hint += (f".  Until then the store's latest data is only in {wal.name} ({size} bytes) beside "
                 f"{db.name}: keep that file, and copy it together with {db.name} (the main file alone is "
                 "incomplete or unreadable).  Once space is freed, any rerun merges it into the main file, "
                 f"or {_shell_sql(db, 'PRAGMA wal_checkpoint(TRUNCATE)')}")
    return hint


def _shell_sql(path, sql):
    """``sqlite3 PATH "SQL"`` as a shell command line (quoted with :func:`shlex.quote` when
    double quotes would not keep it literal)."""
    import shlex
    arg = f'"{sql}"' if not any(c in sql for c in '"$`\\!') else shlex.quote(sql)
    return f"sqlite3 {shlex.quote(str(path))} {arg}"


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)      # Path.resolve raises on a loop of links


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

    Source: this project's design (a refused run leaves nothing behind; docs/guide/sweeps.md).
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise FreeprobValueError(f"the output path {str(directory)!r} exists and is not a directory; choose "
                                 "another --out")
    problem = creation_problem(directory)        # tried for real: root, /proc, read-only mounts
    if problem:
        raise FreeprobValueError(f"cannot write to the output directory {str(directory)!r} ({problem}); "
                                 "choose another --out")


def check_out_name(out, *, who, database=True):
    r"""Refuse an ``--out`` that names a single file of another kind (``--out results.txt``):
    ``--out`` is the run's directory (created with any missing parents, as ``mkdir -p``: a run
    writes a folder of reports and its store), or, where ``database``, the store's
    ``.sqlite``/``.sqlite3``/``.db`` file.

    Parameters
    ----------
    out : path
    who : str
        The command, for the message.
    database : bool
        Whether the command takes a database file as ``--out`` (verify: yes).

    Returns
    -------
    None

    Raises
    ------
    FreeprobValueError
        ``out`` ends in one of :data:`FILE_SUFFIXES` (or, without ``database``, of
        :data:`DB_SUFFIXES`) and is not an existing directory.

    Source: this project's design (docs/guide/verify.md, "Output and resuming").
    """
    p = Path(out)
    if not database and p.suffix.lower() in DB_SUFFIXES and not p.is_dir():
        raise FreeprobValueError(f"--out {str(out)!r} looks like a database file; for {who} it names a "
                                 "directory (the store is written to DIR/results.sqlite)")
    if p.suffix.lower() in FILE_SUFFIXES and not p.is_dir():
        raise FreeprobValueError(
            f"{who}: --out {str(out)!r} looks like the name of a single {p.suffix} file, but --out names "
            "the run's directory (it holds results.sqlite and the reports; created if missing)"
            + (", or the result store itself: a .sqlite, .sqlite3 or .db file" if database else "")
            + "; give a directory name")


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

    Source: this project's design (docs/guide/sweeps.md).
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
