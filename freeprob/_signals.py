"""SIGTERM as Ctrl-C: the one handler of every freeprob command (base tier, standard
library only, so that the law commands load no experiments module to install it)."""
from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["Terminated", "interruption", "sigterm_as_interrupt"]


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by :func:`sigterm_as_interrupt` on SIGTERM (``timeout``,
    SLURM, ``docker stop``, ``kill``): a :class:`KeyboardInterrupt`, so that a run stops
    exactly as on Ctrl-C (finished cells kept, the store closed with its WAL merged, the
    cluster closed quietly); exit status 143 (= 128 + 15)."""


def interruption(exc):
    """``(word, exit status)`` of an interrupt: ``("terminated (SIGTERM)", 143)`` for
    :class:`Terminated`, ``("interrupted", 130)`` for Ctrl-C.  Source: this module."""
    return ("terminated (SIGTERM)", 143) if isinstance(exc, Terminated) else ("interrupted", 130)


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (once: a
    second SIGTERM during the clean-up is ignored); the previous handler is restored after.
    No-op off the main thread.  Source: this project's design (docs/guide/sweeps.md)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
