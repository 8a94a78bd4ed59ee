r"""The report directory of a run (``freeprob verify``, ``freeprob readout``): which files in
it freeprob wrote, for which result store.

A run writes its reports (``table.txt``, summaries, figures; ``NAME.txt/.json/.png`` for a
readout comparison) into a directory that may hold the user's own files (``--out .`` in a
project directory).  So freeprob keeps a small manifest there, ``.freeprob-run.json``
(:data:`MANIFEST`): the result store the reports describe (relative to the directory), the
code version that last wrote there and every report file it wrote.  :class:`ReportDir`
applies the rules:

* **before anything is computed or created** (:meth:`ReportDir.check`): a report file the
  run would write that exists but is not in the manifest is refused, naming it, unless
  ``--force``; a directory in the way of a report file is refused; a directory whose
  reports describe another result store (its manifest names another store that still
  exists or whose reports are still there, or it holds another store's
  ``results.sqlite``) is refused even with ``--force``: the reports of two stores are never
  mixed in one directory;
* **when the run starts computing** (:meth:`ReportDir.begin`): the reports of the previous
  run of the same kind that this run writes again and the manifest lists are removed, so
  every report file present describes the latest run that finished writing it (an
  interrupted run leaves none; the store keeps every finished cell and a rerun writes them
  again).  A report of that kind this run does *not* write (a figure under
  ``--no-figures``) is never removed: it stays if it shows this run's results (the manifest
  records the run identity, settings and code, behind every file), else it is moved aside to
  ``NAME.earlier-<run>.png`` beside it, and the run says so: nothing computed is lost, and
  nothing of other settings sits under a current name;
* **every write** (:meth:`ReportDir.target`) is recorded in the manifest before the file is
  written, so no file freeprob wrote is ever taken for the user's;
* **on every exit path** (:meth:`ReportDir.close`): a folder this run created (``figures/``,
  the report directory itself) is removed if it is empty, and so is a manifest that lists
  no file.

Files the manifest does not list are never overwritten (without ``--force``) or removed.

Source: this project's design (docs/guide/verify.md, "Output and resuming").
"""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path

from freeprob.errors import FreeprobValueError

__all__ = ["MANIFEST", "ReportDir"]

#: the manifest's file name in a report directory
MANIFEST = ".freeprob-run.json"
_FORMAT = 1


class ReportDir:
    r"""The report directory of one run and its manifest (:data:`MANIFEST`).

    Parameters
    ----------
    directory : path
        Where the reports go.
    store : path
        The result store (database file) the reports describe.
    who : str
        The command, for messages (``"verify"``, ``"readout"``).
    force : bool
        ``--force``: report files not written by freeprob may be overwritten.
    run : str, optional
        The identity of the results this run's reports show (a hash of its settings and the
        code); recorded in the manifest for every file written; :meth:`begin` may set it.

    Raises
    ------
    Nothing on construction (:meth:`check` reads the directory).

    Notes
    -----
    Use :meth:`check` before anything is created, then, as a context manager (whose exit
    is :meth:`close`), :meth:`open`, :meth:`begin` and :meth:`target`.  Source: this module.
    """

    def __init__(self, directory, store, *, who, force=False, run=None):
        self.dir = Path(directory)
        self.store = Path(store)
        self.who = who
        self.force = bool(force)
        self.run = run
        self._files = []              # relative paths listed in the manifest
        self._runs = {}               # relative path -> identity of the run that wrote it
        self._created = []            # folders this run created, innermost last

    # ------------------------------------------------------------------ reading
    @property
    def manifest_path(self) -> Path:
        """The manifest file."""
        return self.dir / MANIFEST

    def _read(self):
        """The manifest as a dict (``None`` when there is none); a file of that name that
        is not a freeprob manifest is refused unless ``force`` (then ignored)."""
        path = self.manifest_path
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            ok = (isinstance(data, dict) and isinstance(data.get("store"), str)
                  and isinstance(data.get("files"), list) and all(isinstance(f, str) for f in data["files"]))
        except (OSError, ValueError):
            ok = False
        if not ok:
            if self.force:
                return None
            raise FreeprobValueError(f"{self.who}: {str(path)!r} is not a freeprob run manifest (it names the "
                                     "report files freeprob wrote there); remove it, choose another --out, or "
                                     "pass --force to replace it")
        return data

    def _store_of(self, data):
        return self.dir / data["store"]

    def owns(self, rel) -> bool:
        """Whether the manifest lists ``rel`` (a path relative to the directory) as written
        by freeprob.  Valid after :meth:`check`."""
        return str(Path(rel)) in self._files

    def _out_of(self, store: Path) -> str:
        """The ``--out`` of ``freeprob verify`` that names ``store`` (its directory for a
        ``results.sqlite`` in the report directory)."""
        from freeprob.experiments.store import DB_NAME
        return str(self.dir) if store.name == DB_NAME and self._same(store.parent, self.dir) \
            else os.path.normpath(store)

    @staticmethod
    def _same(a: Path, b: Path) -> bool:
        return os.path.realpath(a) == os.path.realpath(b)

    # ------------------------------------------------------------------ the rules
    def check(self, files):
        r"""Refuse, before anything is computed or created, a run whose reports would
        overwrite files freeprob did not write or mix with the reports of another store.

        Parameters
        ----------
        files : iterable of str
            The report files (relative to the directory) the run may write.

        Returns
        -------
        None

        Raises
        ------
        FreeprobValueError
            The directory holds the reports or the store of another result store (even
            with ``force``); report files exist that the manifest does not list (without
            ``force``; the message names them); a directory is in the way of a report
            file; a manifest that is not one (without ``force``).
        """
        data = self._read() if self.dir.is_dir() else None
        self._files = [str(Path(f)) for f in data["files"]] if data else []
        runs = data.get("runs") if data else None
        self._runs = {str(Path(k)): v for k, v in runs.items()} if isinstance(runs, dict) else {}
        if data is not None and not self._same(self._store_of(data), self.store):
            other = self._store_of(data)
            left = [f for f in self._files if os.path.lexists(self.dir / f)]
            if other.exists() or left:
                name = os.path.normpath(other)
                raise FreeprobValueError(
                    f"{self.who}: the report directory {str(self.dir)!r} holds the reports of the result store "
                    f"{name!r}{'' if other.exists() else ' (since removed)'} "
                    f"({', '.join(left) or 'none left'}), and this run's store is {str(self.store)!r}: the reports "
                    "of two stores are never mixed in one directory.  Give --out another path (a .sqlite "
                    "store's reports go to the same path without the suffix)"
                    + (f", --out {self._out_of(other)!r} to add to that store"
                       if other.exists() and self.who == "verify" else "")
                    + ", or remove those reports first; nothing was computed")
            self._files, self._runs = [], {}     # the other store and its reports are gone: the directory is free
        from freeprob.experiments.store import DB_NAME
        theirs = self.dir / DB_NAME
        if theirs.exists() and not self._same(theirs, self.store):
            raise FreeprobValueError(
                f"{self.who}: the report directory {str(self.dir)!r} holds another result store, "
                f"{str(theirs)!r}, and this run's store is {str(self.store)!r}: the reports of two stores are "
                f"never mixed in one directory.  Give --out {str(self.dir)!r} to add to that store, or another "
                "path")
        for f in files:             # a directory where a file goes, or a file where its folder goes
            path = self.dir / f
            block = path if path.is_dir() else next(
                (q for q in path.parents if q != self.dir and q.exists() and not q.is_dir()), None)
            if block is not None:
                raise FreeprobValueError(
                    f"{self.who}: cannot write {str(path)!r}: {'a directory' if block == path else 'a file'} "
                    f"{str(block)!r} is in the way (remove or rename it); nothing was computed")
        foreign = [f for f in files if os.path.lexists(self.dir / f) and not self.owns(f)]
        if foreign and not self.force:
            names = ", ".join(repr(str(self.dir / f)) for f in foreign)
            raise FreeprobValueError(
                f"{self.who}: {names} {'exists' if len(foreign) == 1 else 'exist'} but "
                f"{'was' if len(foreign) == 1 else 'were'} not written by freeprob here (not in "
                f"{str(self.manifest_path)!r}); freeprob never overwrites files it did not write: choose "
                "another --out, or pass --force to overwrite them; nothing was computed")

    def open(self):
        r"""Create the directory (remembered, so that :meth:`close` removes it if it stays
        empty) and check that it is writable.

        Raises
        ------
        FreeprobValueError
            The directory cannot be created or written.
        """
        probe = self.dir / ".freeprob-write-test"
        try:
            self._mkdir(self.dir)
            try:
                probe.write_text("ok", encoding="utf-8")
            finally:                    # never left behind (a full disk fails after creating it)
                try:
                    probe.unlink()
                except OSError:
                    pass
        except OSError as exc:
            from freeprob.experiments.store import disk_full_hint
            hint = disk_full_hint(self.store) if exc.errno == errno.ENOSPC else "choose another with --out"
            raise FreeprobValueError(f"cannot write to the output directory {str(self.dir)!r} "
                                     f"({exc.strerror or exc}); {hint}") from None

    def begin(self, files, keep=(), run=None):
        r"""A run starts computing: remove the previous run's reports among ``files`` (those
        this run writes again) that the manifest lists (and a folder of them left empty);
        keep those among ``keep`` (reports of this kind this run does not write) that show
        this run's results, and move the others aside (``NAME.earlier-<run>.ext``); record
        this run's store.

        Parameters
        ----------
        files : iterable of str
            Report files this run writes (relative paths); files not in the manifest are
            left alone.
        keep : iterable of str
            Report files of this kind that this run does not write (figures under
            ``--no-figures``); never removed.
        run : str, optional
            The identity of this run's results (sets :attr:`run`).

        Returns
        -------
        list of str
            One line per file of ``keep`` found, saying whether it was kept or moved aside
            (the caller prints them).

        Raises
        ------
        OSError
            A report cannot be removed or moved.
        """
        if run is not None:
            self.run = run
        for rel in [str(Path(f)) for f in files]:
            if self.owns(rel):
                path = self.dir / rel
                if path.is_file() or path.is_symlink():
                    path.unlink()
                self._files.remove(rel)
                self._runs.pop(rel, None)
                parent = path.parent
                if parent != self.dir and parent.is_dir() and not any(parent.iterdir()):
                    parent.rmdir()
        notes = []
        for rel in [str(Path(f)) for f in keep]:
            path = self.dir / rel
            if not (self.owns(rel) and path.is_file()):
                continue
            earlier = self._runs.get(rel)
            if earlier is not None and earlier == self.run:
                notes.append(f"{self.who}: {path} is kept: it shows these results (an earlier run of the same "
                             "settings and code wrote it)")
                continue
            tag = (earlier or "unknown")[:10]
            new = path.with_name(f"{path.stem}.earlier-{tag}{path.suffix}")
            for i in range(2, 1000):                 # an unknown earlier run: never over another file
                if not os.path.lexists(new) or (earlier is not None and self.owns(str(new.relative_to(self.dir)))):
                    break
                new = path.with_name(f"{path.stem}.earlier-{tag}-{i}{path.suffix}")
            new_rel = str(new.relative_to(self.dir))
            if new_rel not in self._files:
                self._files.append(new_rel)
            self._runs[new_rel] = earlier
            self._save()                             # listed before it is there: never taken for the user's
            os.replace(path, new)
            self._files.remove(rel)
            self._runs.pop(rel, None)
            notes.append(f"{self.who}: {path} showed the results of other settings or code, and this run "
                         f"writes none: moved to {new} (nothing removed)")
        self._save()
        return notes

    def target(self, rel) -> Path:
        r"""The path of report file ``rel``, recorded in the manifest first (and its folder
        created, remembered for :meth:`close`).

        Raises
        ------
        OSError
            The manifest or the folder cannot be written.
        """
        rel = str(Path(rel))
        if rel not in self._files or self._runs.get(rel) != self.run:
            if rel not in self._files:
                self._files.append(rel)
            self._runs[rel] = self.run
            self._save()
        path = self.dir / rel
        self._mkdir(path.parent)
        return path

    def close(self):
        """On every exit path (idempotent): forget the listed files that do not exist (a
        write that failed), remove a manifest that then lists none and the folders this run
        created that are empty."""
        if self.manifest_path.is_file():
            kept = [f for f in self._files if os.path.lexists(self.dir / f)]
            try:
                if kept != self._files:
                    self._files = kept
                    self._runs = {f: r for f, r in self._runs.items() if f in kept}
                    self._save()
                if not kept:
                    self.manifest_path.unlink(missing_ok=True)
            except OSError:          # a full disk: the manifest may list a file too many, never one too few
                pass
        for folder in reversed(self._created):
            try:
                folder.rmdir()               # only if empty
            except OSError:
                pass
        self._created = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ helpers
    def _mkdir(self, folder: Path):
        missing = []
        f = folder
        while not f.exists():
            missing.append(f)
            if f == f.parent:
                break
            f = f.parent
        folder.mkdir(parents=True, exist_ok=True)
        self._created += [m for m in reversed(missing) if m not in self._created]

    def _save(self):
        """Write the manifest (through a temporary file: never half a manifest)."""
        if not self._files and not self.manifest_path.exists():
            return
        from freeprob.experiments.store import code_version
        self._mkdir(self.dir)
        data = dict(format=_FORMAT, store=os.path.relpath(os.path.abspath(self.store), os.path.abspath(self.dir)),
                    code_version=code_version(), files=sorted(self._files),
                    runs={f: self._runs[f] for f in sorted(self._files) if self._runs.get(f) is not None})
        tmp = self.dir / f".{MANIFEST}.tmp{os.getpid()}"
        try:
            tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
            os.replace(tmp, self.manifest_path)
        finally:
            tmp.unlink(missing_ok=True)
