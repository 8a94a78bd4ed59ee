r"""Shared pieces of the ``freeprob`` command line: bounded integer options and (re-exported
from :mod:`freeprob._files`) the one policy for files written by request.

* :func:`bounded_int` is the argparse type of every integer option: it names the allowed
  range and, for an upper limit, where that limit lives (``freeprob.laws.law.MAX_DPS``), so
  ``--dps 100000`` says ``expected an integer from 1 to 50000 (freeprob.laws.law.MAX_DPS)``.
* :func:`check_output` and :func:`write_output` (defined in
  :mod:`freeprob._files`, so that the experiments layer writes its reports
  without importing the command line) implement the policy for every path option that
  writes data (``density --csv/--plot``, ``sweep export --csv/--parquet``) and for the
  reports ``freeprob verify`` writes (``-`` is standard output, existing files need
  ``--force``, regular files are replaced atomically, devices and FIFOs written directly;
  the full list is in :mod:`freeprob._files`).

Source: this project's design (docs/guide/cli.md and docs/guide/sweeps.md).
"""
from __future__ import annotations

import argparse
import os  # noqa: F401  (``freeprob.cli.files.os``: tests patch ``os.replace`` through it)

from freeprob._checks import describe_int
from freeprob._files import (  # noqa: F401  (re-exported: the old freeprob.cli.files names)
    STDOUT,
    _descriptor,
    _kind,
    _open,
    _same_target,
    _write_descriptor,
    _write_replace,
    _write_through,
    check_output,
    check_outputs,
    is_stdout,
    is_stream,
    status_stream,
    write_output,
)

__all__ = ["STDOUT", "DPS_ARG", "ORDER_ARG", "POSITIVE_ORDER_ARG", "bounded_int", "check_output",
           "check_outputs", "is_stdout", "is_stream", "write_output", "status_stream"]


def bounded_int(minimum, maximum=None, *, limit=None):
    r"""An argparse ``type=``: an integer ``≥ minimum`` (and ``≤ maximum`` if given).

    Parameters
    ----------
    minimum : int
        Smallest value accepted.
    maximum : int or callable, optional
        Largest value accepted; a callable is asked at parse time (so raising a module
        constant such as ``freeprob.laws.law.MAX_DPS`` takes effect).
    limit : str, optional
        Where the maximum lives or why it is there (``"freeprob.laws.law.MAX_DPS"``); shown in
        the message.

    Returns
    -------
    callable
        ``parse(text) -> int``; raises :class:`argparse.ArgumentTypeError` with the allowed
        range, e.g. ``expected an integer from 1 to 50000 (freeprob.laws.law.MAX_DPS); got
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
        allowed = describe_int(minimum, top, limit)        # the wording of freeprob._checks
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
        from freeprob.core import params          # read at parse time: raising the constant takes effect
        return getattr(params, name)              # (freeprob.laws.law.MAX_DPS sets this one)

    return get


#: ``--dps``: 1 to :data:`freeprob.laws.law.MAX_DPS` certified digits
DPS_ARG = bounded_int(1, _law_limit("MAX_DPS"), limit="freeprob.laws.law.MAX_DPS")
#: ``--order``: 0 to :data:`freeprob.laws.law.MAX_ORDER`
ORDER_ARG = bounded_int(0, _law_limit("MAX_ORDER"), limit="freeprob.laws.law.MAX_ORDER")
#: ``--order`` of a count that must be positive (``freeprob jacobi``): 1 to
#: :data:`freeprob.laws.law.MAX_ORDER`
POSITIVE_ORDER_ARG = bounded_int(1, _law_limit("MAX_ORDER"), limit="freeprob.laws.law.MAX_ORDER")
