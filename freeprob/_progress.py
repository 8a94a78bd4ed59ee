r"""Progress of long work: the sub-steps a computation reports, and the line that shows them.

A long computation calls :func:`report` at its sub-steps (``report(3, 14, "β = 0.53")``:
three of fourteen done, now at β = 0.53).  Whoever runs it decides where that goes
(:func:`reporting`): the progress bar of a sweep (:func:`freeprob.experiments.sweep.run_cells`),
the :class:`ProgressLine` of a law command, or the pipe of a worker process
(:mod:`freeprob._interruptible`), whose parent shows it.  Without a receiver a report costs
one context-variable lookup.

:class:`ProgressLine` is the elapsed-time line of work over a few seconds, on standard error
(never on standard output, which carries the numbers): on a terminal one line redrawn in
place (``freeprob moments: 12 s (Ctrl-C stops)``, with the reported fraction, sub-step and
time left when known); otherwise (a log, a pipe) a line after :data:`QUIET_SECONDS`, then
after every doubling of the elapsed time (10, 20, 40 s, …), and a last line at the end.

Base tier: standard library only.  Source: this project's design (docs/guide/cli.md,
"Interrupting and progress").
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time

from freeprob._signals import raise_lost_interrupt

__all__ = ["report", "reporting", "within", "ProgressLine", "human_seconds", "QUIET_SECONDS", "TTY_AFTER"]

#: seconds of silence before a :class:`ProgressLine` writes to a stream that is not a terminal
QUIET_SECONDS = 10.0
#: seconds before a :class:`ProgressLine` appears on a terminal
TTY_AFTER = 2.0

_SINK = contextvars.ContextVar("freeprob_progress_sink", default=None)


def report(done=None, total=None, text=None) -> None:
    r"""Report a sub-step of the current long computation to its receiver (if any).

    Parameters
    ----------
    done, total : number, optional
        Sub-steps done and their total (an upper bound is fine); ``done`` may be fractional.
    text : str, optional
        What is being done now (``"β = 0.53: tabulating the law"``).

    Returns
    -------
    None
        Nothing happens without a receiver (:func:`reporting`).  An exception of the
        receiver passes on (a worker's parent that went away).

    Raises
    ------
    KeyboardInterrupt
        A Ctrl-C (or SIGTERM) that Python discarded earlier in the current
        :func:`freeprob._signals.interrupt_latch` block, raised again here.

    Source: this module.
    """
    raise_lost_interrupt()
    sink = _SINK.get()
    if sink is not None:
        sink(done, total, text)


@contextlib.contextmanager
def reporting(sink):
    """Within the block, :func:`report` calls ``sink(done, total, text)`` (``None``: reports
    are dropped); the previous receiver is restored after.  Source: this module."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


@contextlib.contextmanager
def within(done, span, total, text=None):
    r"""Within the block, the reports of an inner computation (its own ``done/total``) are
    passed on to the current receiver as the part ``span`` of the outer sub-steps starting at
    ``done`` (of ``total``), its text after ``text`` (``"β = 0.5: tabulating: piece 1/2"``).

    For a computation that reports its own sub-steps run as one sub-step of another (the
    tabulation of a law inside a frontier evaluation).  No-op without a receiver.
    Source: this module.
    """
    outer = _SINK.get()
    if outer is None:
        yield
        return

    def sink(d, t, txt):
        frac = min(max(float(d or 0) / float(t), 0.0), 1.0) if t else 0.0
        outer(done + span * frac, total, f"{text}: {txt}" if text and txt else (txt or text))

    with reporting(sink):
        yield


def human_seconds(s) -> str:
    """``7 s``, ``2 min 05 s``, ``1 h 03 min``: elapsed or remaining time for a progress line."""
    s = max(0, int(round(s)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class ProgressLine:
    r"""The elapsed-time line of one long computation, on ``stream`` (default ``sys.stderr``).

    Parameters
    ----------
    desc : str
        What runs (``"freeprob moments"``).
    stream : file, optional
        Default ``sys.stderr``.
    after : float, optional
        Seconds before the first line: default :data:`TTY_AFTER` on a terminal and
        :data:`QUIET_SECONDS` otherwise (so a command that finishes in seconds prints
        nothing on standard error).
    unit : str
        The unit of ``done``/``total`` in the line (``"points"``).
    hint : str
        Appended on a terminal (default ``" (Ctrl-C stops)"``).

    Call :meth:`update` with each report, :meth:`tick` while waiting (it draws when due) and
    :meth:`close` at the end (the last state, once something was shown).  Use as a context
    manager.  Never raises for a stream that cannot be written (the line is dropped).

    Source: this module.
    """

    def __init__(self, desc, *, stream=None, after=None, unit="", hint=" (Ctrl-C stops)"):
        self.desc, self.unit, self.hint = desc, unit, hint
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError, OSError):
            self.tty = False
        self.after = (TTY_AFTER if self.tty else QUIET_SECONDS) if after is None else after
        self.t0 = time.monotonic()
        self.done = self.total = self.text = None
        self.shown = False
        self.next = self.t0 + self.after
        self.width = 0

    def update(self, done=None, total=None, text=None):
        """Record the latest sub-step (from :func:`report`) and draw if due."""
        if done is not None:
            self.done = done
        if total is not None:
            self.total = total
        if text is not None:
            self.text = text
        self.tick()

    def line(self):
        """The text of the line now."""
        elapsed = time.monotonic() - self.t0
        parts = []
        if self.total:
            done = self.done or 0
            frac = min(1.0, done / self.total)
            count = f"{done:g}/{self.total:g}{' ' + self.unit if self.unit else ''}"
            parts.append(f"{100 * frac:.0f}% ({count})")
        if self.text:
            parts.append(str(self.text))
        when = human_seconds(elapsed)
        if self.total and self.done and 0 < self.done < self.total and elapsed > 1:
            when += f", about {human_seconds(elapsed * (self.total - self.done) / self.done)} left"
        parts.append(when)
        return f"{self.desc}: " + ", ".join(parts)

    def tick(self):
        """Draw the line if it is due: on a terminal every quarter second once
        ``after`` has passed; otherwise at ``after`` and at every doubling of the elapsed time."""
        now = time.monotonic()
        if now < self.next:
            return
        elapsed = now - self.t0
        self.next = now + 0.25 if self.tty else self.t0 + max(2 * elapsed, self.after + 1)
        self._draw(self.line() + (self.hint if self.tty else ""))

    def _draw(self, text, end=""):
        try:
            if self.tty:
                cols = _columns(self.stream)
                text = text if len(text) < cols else text[:cols - 2] + "…"
                pad = max(0, self.width - len(text))
                self.stream.write("\r" + text + " " * pad + end)
                self.width = 0 if end else len(text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
            self.shown = True
        except (OSError, ValueError):       # a closed or broken stream: progress is optional
            pass

    def close(self):
        """The last state (once a line was shown), ending the terminal line."""
        if self.shown:
            self._draw(self.line(), end="\n")
        self.shown = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _columns(stream):
    """The terminal's width (80 when unknown: a pseudo-terminal of size 0, no descriptor)."""
    try:
        cols = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        cols = 0
    return cols if cols >= 20 else 80
