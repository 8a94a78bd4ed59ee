r"""The work of a command in a worker process, with its progress line: :func:`compute`.

Source: this project's design (docs/guide/cli.md, "Interrupting and progress").
"""
from __future__ import annotations

from freeprob._interruptible import WorkerProcess
from freeprob._progress import ProgressLine

__all__ = ["compute"]


def compute(who, fn, *args, unit="", after=None, **kwargs):
    r"""``fn(*args, **kwargs)`` for a law command: in a worker process
    (:class:`freeprob._interruptible.WorkerProcess`), so that Ctrl-C and SIGTERM stop even a
    long compiled call (an exact series of order 20000) at once, with a
    :class:`freeprob._progress.ProgressLine` on stderr once the work takes more than a few
    seconds (its reports of ``done``/``total`` in ``unit``; ``after``: seconds before the
    line, default :class:`~freeprob._progress.ProgressLine`'s).

    Returns what ``fn`` returns (pickled back: plain values).  Raises what ``fn`` raises,
    :class:`KeyboardInterrupt` (the worker killed first) and
    :class:`freeprob._interruptible.WorkerDied`.  Source: this module.
    """
    with ProgressLine(who, unit=unit, after=after) as line, WorkerProcess() as worker:
        return worker.call(fn, args, kwargs, on_report=line.update, on_wait=line.tick)
