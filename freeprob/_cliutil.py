r"""Shared pieces of the ``freeprob`` command line: bounded integer options and the one
policy for files written by request.

* :func:`bounded_int` is the argparse type of every integer option: it names the allowed
  range and, for an upper limit, where that limit lives (``freeprob.law.MAX_DPS``), so
  ``--dps 100000`` says ``expected an integer from 1 to 50000 (freeprob.law.MAX_DPS)``.
* :func:`check_output` and :func:`write_output` implement the policy for every path
  option that writes data (``density --csv/--plot``, ``sweep export --csv/--parquet``):
  an existing file is refused unless ``--force``; ``-`` means standard output; a file is
  written through a temporary file and renamed into place, so a failure never leaves
  half a file.

Source: this project's design (README, "Three jobs from the shell" and "Sweeps").
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .errors import FreeprobValueError

__all__ = ["STDOUT", "DPS_ARG", "ORDER_ARG", "bounded_int", "check_output", "check_outputs", "write_output",
           "status_stream"]

#: the path that means standard output
STDOUT = "-"


def bounded_int(minimum, maximum=None, *, limit=None):
    r"""An argparse ``type=``: an integer ``≥ minimum`` (and ``≤ maximum`` if given).

    Parameters
    ----------
    minimum : int
        Smallest value accepted.
    maximum : int or callable, optional
        Largest value accepted; a callable is asked at parse time (so raising a module
        constant such as ``freeprob.law.MAX_DPS`` takes effect).
    limit : str, optional
        Where the maximum lives or why it is there (``"freeprob.law.MAX_DPS"``); shown in
        the message.

    Returns
    -------
    callable
        ``parse(text) -> int``; raises :class:`argparse.ArgumentTypeError` with the allowed
        range, e.g. ``expected an integer from 1 to 50000 (freeprob.law.MAX_DPS); got
        100000``.

    Raises
    ------
    Nothing itself.

    Source: this module.

    >>> bounded_int(1, 10, limit="the demo limit")("7")
    7
    """
    def parse(text):
        top = maximum() if callable(maximum) else maximum
        if top is None:
            allowed = f"an integer ≥ {minimum}"
        else:
            allowed = f"an integer from {minimum} to {top}" + (f" ({limit})" if limit else "")
        try:
            v = int(str(text).strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {allowed}; got {text!r}") from None
        if v < minimum or (top is not None and v > top):
            raise argparse.ArgumentTypeError(f"expected {allowed}; got {v}")
        return v

    return parse


def _law_limit(name):
    def get():
        from . import law             # read at parse time: raising the constant takes effect
        return getattr(law, name)

    return get


#: ``--dps``: 1 to :data:`freeprob.law.MAX_DPS` certified digits
DPS_ARG = bounded_int(1, _law_limit("MAX_DPS"), limit="freeprob.law.MAX_DPS")
#: ``--order``: 0 to :data:`freeprob.law.MAX_ORDER`
ORDER_ARG = bounded_int(0, _law_limit("MAX_ORDER"), limit="freeprob.law.MAX_ORDER")


def check_output(path, *, force, who, flag):
    r"""Refuse, before anything is computed, a path that a command may not write.

    Parameters
    ----------
    path : str
        The value of the path option; :data:`STDOUT` (``-``) is always allowed.
    force : bool
        ``--force``: an existing file may be replaced.
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
        An empty path, a directory, an existing file without ``force`` (``density:
        'd.csv' exists; --force overwrites it``), a missing parent directory.

    Source: this module (the one policy for files written by request).
    """
    if path == STDOUT:
        return
    if not str(path).strip():
        raise FreeprobValueError(f"{who}: {flag} needs a file name (or '-' for standard output); got an "
                                 "empty string")
    if os.path.isdir(path):
        raise FreeprobValueError(f"{who}: {flag} {str(path)!r} is a directory; give a file name (or '-' for "
                                 "standard output)")
    if os.path.lexists(path) and not force:
        raise FreeprobValueError(f"{who}: {str(path)!r} exists; --force overwrites it")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FreeprobValueError(f"{who}: cannot write {flag} {str(path)!r}: the directory {parent!r} does "
                                 "not exist")


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
        As :func:`check_output`; two options on ``-``; two options on one file.

    Source: this module.
    """
    given = [(flag, path) for flag, path in targets if path is not None]
    on_stdout = [flag for flag, path in given if path == STDOUT]
    if len(on_stdout) > 1:
        raise FreeprobValueError(f"{who}: {' and '.join(on_stdout)} cannot both write to standard output "
                                 "('-')")
    files = [(flag, os.path.abspath(path)) for flag, path in given if path != STDOUT and str(path).strip()]
    for i, (flag, p) in enumerate(files):
        for other, q in files[i + 1:]:
            if p == q:
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

    Returns
    -------
    file
        ``sys.stderr`` or ``sys.stdout``.

    Raises
    ------
    Nothing.

    Source: this module.
    """
    return sys.stderr if any(p == STDOUT for p in paths) else sys.stdout


def write_output(path, write, *, binary=False):
    r"""Write data to ``path``: standard output for ``-``, else a temporary file beside
    ``path`` renamed into place (no half-written file on failure).

    Parameters
    ----------
    path : str or path-like
        Target, or :data:`STDOUT`.
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
        The file cannot be written (the caller turns it into a message).

    Source: this module.
    """
    if str(path) == STDOUT:
        stream = sys.stdout.buffer if binary else sys.stdout
        if binary:
            sys.stdout.flush()
        write(stream)
        stream.flush()
        return
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    try:
        if binary:
            with open(tmp, "wb") as fh:
                write(fh)
        else:
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                write(fh)
        os.replace(tmp, target)
    except OSError as exc:                       # name the target, not the temporary file
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
    finally:
        tmp.unlink(missing_ok=True)
