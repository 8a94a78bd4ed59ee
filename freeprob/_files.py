r"""The one policy for files written by request: the path options of the command line
(``density --csv/--plot``, ``sweep export --csv/--parquet``) and the reports
``freeprob verify`` writes.  :func:`check_output` refuses a path before anything is
computed; :func:`write_output` writes it:

- ``-`` means standard output, and so does a path naming it (``/dev/stdout``,
  ``/dev/fd/1``);
- an existing regular file is refused unless ``--force``; a symbolic link is followed,
  so ``--force`` replaces the file it points to (never the link itself);
- a regular file is written through a temporary file beside it (beside the link's
  target) and renamed into place, so a failure never leaves half a file;
- an existing character device or FIFO (``/dev/null``, ``/dev/stderr`` on a terminal,
  a named pipe) is opened and written directly, without ``--force`` since nothing is
  replaced; a FIFO without a reader is refused instead of waiting; a block device
  needs ``--force``; a socket is refused;
- write errors name the path the user gave (``cannot write /dev/full: No space left
  on device``), never the temporary file;
- a file is written only where a file can be created: :func:`check_output` tries (a
  temporary file, removed at once) and refuses a path in a directory that takes no new
  file, saying why (``cannot write --csv '/proc/version': no file can be created in
  '/proc' (a special file system: /proc takes no new files)``) rather than a misleading
  ``No such file or directory`` after the computation (:func:`creation_problem`).

Input files get the same treatment (:func:`check_input`): a path that is missing, a
directory or unreadable is named as such (``fit: cannot read 'runs' (it is a directory); give a
file``) rather than ``no such file``.

It lives in the experiments layer so that the reports of :mod:`freeprob.experiments.verify` use it
without importing the command line; :mod:`freeprob.cli.files` (old name
``freeprob.cli.files``) re-exports it.

Source: this project's design (docs/guide/cli.md and docs/guide/sweeps.md).
"""
from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from freeprob.errors import FreeprobValueError

__all__ = ["STDOUT", "check_input", "check_output", "check_outputs", "creation_problem", "input_problem", "is_stdout", "is_stream",
           "write_output", "status_stream"]

#: the path that means standard output
STDOUT = "-"


def _descriptor(path):
    r"""The open file descriptor of this process that ``path`` names through
    ``/dev/fd/N``, ``/proc/self/fd/N`` or a link to one (``/dev/stdout``), else ``None``.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    int or None

    Raises
    ------
    Nothing.

    Source: this module.
    """
    p = os.path.abspath(path)
    mine = {"self", str(os.getpid())}
    for _ in range(40):                                    # the kernel's own limit on link chains
        head, tail = os.path.split(p)
        try:
            head = os.path.realpath(head)
        except (OSError, ValueError):
            return None
        parts = head.split(os.sep)
        if len(parts) == 4 and parts[1:] == ["proc", parts[2], "fd"] and parts[2] in mine and tail.isdigit():
            return int(tail)
        p = os.path.join(head, tail)
        try:
            if not os.path.islink(p):
                return None
            p = os.path.join(head, os.readlink(p))
        except (OSError, ValueError):
            return None
    return None


def _why_not(exc, directory):
    """Words for an ``OSError`` raised creating a file in the existing ``directory``."""
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):        # the directory is there: it takes no files
        return f"a special file system: {directory} takes no new files"
    if exc.errno == errno.EROFS:
        return "a read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or str(exc)


def creation_problem(directory):
    r"""Why no file can be created in ``directory`` (or, when it does not exist yet, in its
    nearest existing ancestor, where its folders would be made), else ``None``.

    Tried for real: a temporary file is created there and removed at once (permission
    bits say nothing for root, nor for ``/proc``, ``/sys`` or a read-only mount).

    Parameters
    ----------
    directory : str or path-like

    Returns
    -------
    str or None
        ``"no file can be created in '/proc' (a special file system: /proc takes no new
        files)"``, ``"'x' is not a directory"``, …; ``None`` when a file can be created.

    Raises
    ------
    Nothing.

    Source: this module.
    """
    d = Path(os.path.abspath(directory))
    while not os.path.lexists(d) and d != d.parent:
        d = d.parent
    if not d.is_dir():
        return f"{str(d)!r} is not a directory"
    import secrets                     # here: a command that writes no file does not load it
    probe = d / f".freeprob-probe.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        return f"no file can be created in {str(d)!r} ({_why_not(exc, d)})"
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:                              # pragma: no cover - created but not removable
        pass
    return None


def input_problem(path):
    r"""Why ``path`` cannot be read as an input file, else ``None``.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    str or None
        ``"no such file"``, ``"it is a directory"``, ``"its symbolic links never reach a
        file"``, ``"permission denied"``; ``None`` for a readable file (or a pipe,
        a character device: anything that can be read).

    Raises
    ------
    Nothing.

    Source: this module.
    """
    kind, _ = _kind(path)
    if kind == "new":
        return "no such file"
    if kind == "dir":
        return "it is a directory"
    if kind == "loop":
        return "its symbolic links never reach a file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None


def check_input(path, *, who, what="file"):
    r"""Refuse an input path that cannot be read, saying why (the same words for every
    command that reads a file).

    Parameters
    ----------
    path : str or path-like
    who : str
        The command, for the message.
    what : str
        What the file should be (``"file"``, ``"result store"``), for the message.

    Returns
    -------
    None

    Raises
    ------
    FreeprobValueError
        ``"fit: no such file: x.txt"``, ``"fit: cannot read 'data' (it is a directory); give
        a file"``, … (:func:`input_problem`).

    Source: this module.
    """
    problem = input_problem(path)
    if problem == "no such file":
        raise FreeprobValueError(f"{who}: no such {what}: {path}")
    if problem is not None:
        raise FreeprobValueError(f"{who}: cannot read {str(path)!r} ({problem}); give a {what}")


def _kind(path):
    r"""What writing ``path`` would write to.

    Parameters
    ----------
    path : str or path-like
        Not :data:`STDOUT`.

    Returns
    -------
    (str, int or None)
        ``("fd", n)`` for a path naming this process's descriptor ``n`` (``/dev/stdout``),
        else ``(kind, None)`` with kind ``"new"`` (nothing there, or a dangling link),
        ``"file"``, ``"dir"``, ``"chr"``, ``"fifo"``, ``"blk"``, ``"socket"`` (symbolic
        links followed) or ``"loop"`` (links that never reach a file).

    Raises
    ------
    Nothing (an unreadable path is ``"new"``; opening it reports the reason).

    Source: this module.
    """
    fd = _descriptor(path)
    if fd is not None:
        return "fd", fd
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return ("loop" if exc.errno == errno.ELOOP else "new"), None
    except ValueError:
        return "new", None
    for kind, test in (("file", stat.S_ISREG), ("dir", stat.S_ISDIR), ("chr", stat.S_ISCHR),
                       ("fifo", stat.S_ISFIFO), ("blk", stat.S_ISBLK)):
        if test(mode):
            return kind, None
    return "socket", None


def is_stdout(path):
    r"""Whether ``path`` means standard output: :data:`STDOUT` (``-``) or a path naming
    descriptor 1 of this process (``/dev/stdout``, ``/dev/fd/1``).

    Parameters
    ----------
    path : str, path-like or None

    Returns
    -------
    bool

    Raises
    ------
    Nothing.

    Source: this module.
    """
    if path is None:
        return False
    return str(path) == STDOUT or (bool(str(path).strip()) and _descriptor(path) == 1)


def is_stream(path):
    r"""Whether ``path`` is written as a stream rather than a file replaced in place:
    standard output (``-``), a path naming an open descriptor (``/dev/stdout``), an
    existing character device or FIFO.

    Parameters
    ----------
    path : str, path-like or None

    Returns
    -------
    bool

    Raises
    ------
    Nothing.

    Source: this module.
    """
    if path is None or not str(path).strip():
        return False
    return str(path) == STDOUT or _kind(path)[0] in ("fd", "chr", "fifo")


def check_output(path, *, force, who, flag):
    r"""Refuse, before anything is computed, a path that a command may not write.

    Parameters
    ----------
    path : str
        The value of the path option; :data:`STDOUT` (``-``) is always allowed, and so are
        a path naming an open descriptor (``/dev/stdout``), an existing character device
        and a FIFO (written directly: nothing is replaced).
    force : bool
        ``--force``: an existing file (the target of a symbolic link) or a block device
        may be written over.
    who : str
        The command, for the message (``"density"``, ``"sweep export"``).
    flag : str
        The option, for the message (``"--csv"``).

    Returns
    -------
    None

    Raises
    ------
    FreeprobValueError
        An empty path, a directory, a socket, a loop of symbolic links, an existing file without ``force``
        (``density: 'd.csv' exists; --force overwrites it``), a block device without
        ``force``, a missing parent directory (of the link's target for a link).

    Source: this module (the one policy for files written by request).
    """
    if path == STDOUT:
        return
    if not str(path).strip():
        raise FreeprobValueError(f"{who}: {flag} needs a file name (or '-' for standard output); got an "
                                 "empty string")
    kind, _ = _kind(path)
    name = str(path)
    if kind in ("fd", "chr", "fifo"):
        return
    if kind == "dir":
        raise FreeprobValueError(f"{who}: {flag} {name!r} is a directory; give a file name (or '-' for "
                                 "standard output)")
    if kind == "loop":
        raise FreeprobValueError(f"{who}: {flag} {name!r} is a loop of symbolic links; give a file name (or "
                                 "'-' for standard output)")
    if kind == "socket":
        raise FreeprobValueError(f"{who}: {flag} {name!r} is a socket; give a file, a character device, a "
                                 "FIFO or '-' (standard output)")
    if kind == "blk" and not force:
        raise FreeprobValueError(f"{who}: {flag} {name!r} is a block device (a disk); --force writes over it")
    link = f" (a symbolic link to {os.path.realpath(name)!r})" if os.path.islink(name) else ""
    if kind == "file" and not force:
        raise FreeprobValueError(f"{who}: {name!r}{link} exists; --force overwrites it")
    parent = os.path.dirname(os.path.realpath(name))
    if not os.path.isdir(parent):
        raise FreeprobValueError(f"{who}: cannot write {flag} {name!r}{link}: the directory {parent!r} does "
                                 "not exist")
    if kind in ("new", "file"):                  # written through a new file beside it, renamed into place
        problem = creation_problem(parent)
        if problem:
            raise FreeprobValueError(f"{who}: cannot write {flag} {name!r}{link}: {problem}; give a path in a "
                                     "directory you can write (or '-' for standard output)")


def check_outputs(targets, *, force, who):
    r""":func:`check_output` for several ``(flag, path)`` pairs, plus: at most one of
    them may be standard output, and no two may name the same file.

    Parameters
    ----------
    targets : sequence of (str, str)
        ``(flag, path)`` of every path option given (``None`` paths are skipped).
    force : bool
    who : str

    Returns
    -------
    list of (str, str)
        The pairs with a path.

    Raises
    ------
    FreeprobValueError
        As :func:`check_output`; two options on standard output (``-``, ``/dev/stdout``);
        two options on one file (symbolic links followed).

    Source: this module.
    """
    given = [(flag, path) for flag, path in targets if path is not None]
    on_stdout = [flag for flag, path in given if is_stdout(path)]
    if len(on_stdout) > 1:
        raise FreeprobValueError(f"{who}: {' and '.join(on_stdout)} cannot both write to standard output "
                                 "('-')")
    files = [(flag, path) for flag, path in given if not is_stdout(path) and str(path).strip()]
    for i, (flag, p) in enumerate(files):
        for other, q in files[i + 1:]:
            if _same_target(p, q):
                raise FreeprobValueError(f"{who}: {flag} and {other} name the same file")
    for flag, path in given:
        check_output(path, force=force, who=who, flag=flag)
    return given


def status_stream(paths):
    r"""Where a command reports what it wrote: standard error when one of ``paths`` is
    standard output (the data must stay clean there), else standard output.

    Parameters
    ----------
    paths : iterable of str or None
        Output paths; ``-`` and paths naming standard output (``/dev/stdout``) count.

    Returns
    -------
    file
        ``sys.stderr`` or ``sys.stdout``.

    Raises
    ------
    Nothing.

    Source: this module.
    """
    return sys.stderr if any(is_stdout(p) for p in paths) else sys.stdout


def _same_target(p, q):
    """Whether two output paths write the same file (links followed, hard links included)."""
    if os.path.realpath(p) == os.path.realpath(q):
        return True
    try:
        return os.path.samefile(p, q)
    except (OSError, ValueError):
        return False


def write_output(path, write, *, binary=False):
    r"""Write data to ``path`` by the policy of this module: standard output for ``-``
    (or ``/dev/stdout``), a device or FIFO directly, a regular file through a temporary
    file beside it (beside the target of a symbolic link) renamed into place (no
    half-written file on failure).

    Parameters
    ----------
    path : str or path-like
        Target, or :data:`STDOUT`; checked beforehand by :func:`check_output`.
    write : callable
        ``write(fh)`` writes everything to the open file ``fh`` (text with ``newline=""``
        and UTF-8, or binary when ``binary``).
    binary : bool
        Open in binary mode (Parquet, PNG).

    Returns
    -------
    None

    Raises
    ------
    OSError
        The file cannot be written; ``filename`` is ``path`` as given (never the temporary
        file) and the caller turns it into a message.  A FIFO without a reader is
        ``ENXIO`` ("no process is reading the FIFO") rather than a wait.

    Source: this module.
    """
    name = str(path)
    kind, fd = ("fd", 1) if name == STDOUT else _kind(path)
    try:
        if kind == "fd":
            _write_descriptor(fd, write, binary)
        elif kind in ("chr", "fifo", "blk", "socket"):
            _write_through(name, kind, write, binary)
        elif kind == "loop":
            raise OSError(errno.ELOOP, "a loop of symbolic links", name)
        else:
            _write_replace(name, write, binary)
    except BrokenPipeError:
        raise                                    # the reader went away: cli.main stops quietly
    except OSError as exc:                       # name the user's path, not a temporary file
        raise OSError(exc.errno, exc.strerror or str(exc), name) from None


def _open(fd, binary):
    if binary:
        return os.fdopen(fd, "wb")
    return os.fdopen(fd, "w", newline="", encoding="utf-8")


def _write_descriptor(fd, write, binary):
    """Write to this process's descriptor ``fd``; 1 and 2 through ``sys.stdout``/``sys.stderr``."""
    stream = {1: sys.stdout, 2: sys.stderr}.get(fd)
    if stream is not None:
        if binary:
            stream.flush()
            stream = stream.buffer
        write(stream)
        stream.flush()
        return
    with _open(os.dup(fd), binary) as fh:
        write(fh)


def _write_through(name, kind, write, binary):
    """Open an existing device or FIFO for writing (no rename: it is not replaced)."""
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0)
    if kind == "fifo":                           # no reader: ENXIO at once instead of blocking
        flags |= getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        if kind == "fifo" and exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "no process is reading the FIFO (start the reader first)",
                          name) from None
        raise
    if kind == "fifo" and hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    with _open(fd, binary) as fh:
        write(fh)


def _write_replace(name, write, binary):
    """Write a temporary file beside the (link-resolved) target and rename it into place,
    keeping the permission bits of a file it replaces."""
    target = Path(os.path.realpath(name))
    try:
        old_mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        old_mode = None
    import secrets                     # here: a command that writes no file does not load it
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
        except OSError as exc:                   # say why, not a bare "No such file or directory"
            raise OSError(exc.errno, f"no file can be created in {str(target.parent)!r} to write it "
                                     f"({_why_not(exc, target.parent)})", name) from None
    else:                                        # pragma: no cover - 100 random names taken
        raise OSError(errno.EEXIST, "cannot create a temporary file beside it", name)
    try:
        with _open(fd, binary) as fh:
            write(fh)
        if old_mode is not None:
            os.chmod(tmp, old_mode)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
