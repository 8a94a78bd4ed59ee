"""SIGTERM as Ctrl-C: the one handler of every freeprob command (base tier, standard
library only, so that the law commands load no experiments module to install it)."""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

__all__ = ["Terminated", "interruption", "sigterm_as_interrupt", "deferred_signals", "interrupt_latch",
           "raise_lost_interrupt", "ignore_stops"]


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by :func:`sigterm_as_interrupt` on SIGTERM (``timeout``,
    SLURM, ``docker stop``, ``kill``): a :class:`KeyboardInterrupt`, so that a run stops
    exactly as on Ctrl-C (finished cells kept, the store closed with its WAL merged, the
    cluster closed quietly); exit status 143 (= 128 + 15)."""


def interruption(exc):
    """``(word, exit status)`` of an interrupt: ``("terminated (SIGTERM)", 143)`` for
    :class:`Terminated`, ``("interrupted", 130)`` for Ctrl-C.  Source: this module."""
    return ("terminated (SIGTERM)", 143) if isinstance(exc, Terminated) else ("interrupted", 130)


#: the signals that stop a command: Ctrl-C and SIGTERM
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: the stops (:class:`KeyboardInterrupt`, :class:`Terminated`) that :func:`_latch` raised
#: in the current :func:`interrupt_latch` block (cleared when the outermost block ends)
_RAISED: list = []
#: how many :func:`interrupt_latch` blocks are open (in the main thread)
_DEPTH = [0]


def _latch(signum, frame):
    """The handler of Ctrl-C and SIGTERM inside :func:`interrupt_latch`: record the stop,
    then raise it.  Once: the signals this block handles are ignored after the first stop,
    for the rest of the block, so that a Ctrl-C pressed again (or a SIGTERM after it) does
    not cut the clean-up (closing a Dask cluster, which is bounded:
    :data:`freeprob.experiments.sweep.CLOSE_TIMEOUT`) and leave a traceback."""
    exc = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
    for s in _STOP_SIGNALS:
        if signal.getsignal(s) is _latch:
            signal.signal(s, signal.SIG_IGN)
    _RAISED.append(exc)
    raise exc()


def ignore_stops():
    """Ignore Ctrl-C and SIGTERM from now on (main thread only; no-op elsewhere): what a
    command line entry point calls once its command has stopped on one, so that another
    during Python's exit (Dask's exit hooks) neither prints a traceback nor changes the exit
    status.  Raises nothing.  Source: this module."""
    if threading.current_thread() is threading.main_thread():
        for s in _STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)


def _quiet_lost_stop(previous):
    """A :data:`sys.unraisablehook` that says nothing of a stop of :func:`_latch` that Python
    discarded (it is raised again: :func:`raise_lost_interrupt`) and passes anything else to
    ``previous``."""
    def hook(unraisable):
        if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and _RAISED):
            previous(unraisable)
    return hook


@contextlib.contextmanager
def interrupt_latch(*, sigterm=False):
    """Within the block a Ctrl-C that Python discarded is raised again by
    :func:`raise_lost_interrupt`.

    Python runs a signal handler in whatever Python code the main thread executes next;
    when that is a finaliser (``__del__``), a weak-reference or garbage-collector callback
    (Dask's scheduler installs one), the :class:`KeyboardInterrupt` is printed as
    "Exception ignored in ..." and the work goes on as if no Ctrl-C had come.  Inside the
    block Ctrl-C is handled by a handler that records the stop before raising it (a
    discarded one is not printed: :data:`sys.unraisablehook` passes over it), and the
    loops of long work (a sweep waiting for its cells, a worker process's parent, every
    :func:`freeprob._progress.report`) call :func:`raise_lost_interrupt`, which raises a
    recorded stop again.  Ctrl-C is latched only where Python's own handler
    (:func:`signal.default_int_handler`) is in place: an ignored SIGINT or a handler of the
    caller's stays as it is.  With ``sigterm=True`` SIGTERM is latched too and raises
    :class:`Terminated` (:func:`sigterm_as_interrupt`).  The previous handlers are restored
    after.  No-op off the main thread (where handlers cannot be set); blocks nest.

    Raises nothing itself.  Source: this project's design (docs/guide/cli.md, "Interrupting
    and progress"); Python's documentation of :mod:`signal` (handlers run in the main
    thread between bytecode instructions) and of :data:`sys.unraisablehook`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old, hook = {}, sys.unraisablehook
    if _DEPTH[0] == 0:
        sys.unraisablehook = _quiet_lost_stop(hook)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        old[signal.SIGINT] = signal.signal(signal.SIGINT, _latch)
    if sigterm:
        old[signal.SIGTERM] = signal.signal(signal.SIGTERM, _latch)
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1
        for s, h in old.items():
            signal.signal(s, h)
        if _DEPTH[0] == 0:
            _RAISED.clear()
            sys.unraisablehook = hook


def raise_lost_interrupt() -> None:
    """Raise again the first Ctrl-C (:class:`KeyboardInterrupt`) or SIGTERM
    (:class:`Terminated`) handled in the current :func:`interrupt_latch` block; nothing if
    none came.  Called where long work is in its normal flow (a loop waiting for results, a
    progress report): reached after a stop only when Python discarded the stop's exception
    (see :func:`interrupt_latch`).  Source: this module."""
    if _RAISED:
        raise _RAISED[0]()


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (once: a
    second SIGTERM during the clean-up is ignored), and a Ctrl-C or SIGTERM that Python
    discarded is raised again at the next :func:`raise_lost_interrupt`
    (:func:`interrupt_latch`); the previous handlers are restored after.  No-op off the
    main thread.  Source: this project's design (docs/guide/sweeps.md)."""
    with interrupt_latch(sigterm=True):
        yield


#: a helper process that reports the Ctrl-Cs its process group receives (one byte ``i``
#: each on stdout) until its stdin closes; ``r`` when ready
_WATCHER = ("import os, signal\n"
            "signal.signal(signal.SIGINT, lambda s, f: os.write(1, b'i'))\n"
            "os.write(1, b'r')\n"
            "while os.read(0, 1):\n"
            "    pass\n")
#: seconds to wait for the helper to be ready (else Ctrl-C is ignored during the block)
_WATCHER_READY = 10


def _start_watcher():
    """The Ctrl-C watcher (:data:`_WATCHER`) once ready, or ``None`` if it cannot start
    (or off POSIX, where process groups and ``select`` on pipes are missing)."""
    if os.name != "posix":
        return None
    import select
    import subprocess
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    ready, _, _ = select.select([proc.stdout], [], [], _WATCHER_READY)
    if not ready or os.read(proc.stdout.fileno(), 1) != b"r":
        _stop_watcher(proc)
        return None
    return proc


def _stop_watcher(proc):
    """Stop the watcher (within 2 s); whether it saw a Ctrl-C."""
    import select
    import subprocess
    with contextlib.suppress(OSError):
        proc.stdin.close()                    # the watcher's read ends: it exits
    out, fd = b"", proc.stdout.fileno()
    try:
        while select.select([fd], [], [], 2)[0]:
            chunk = os.read(fd, 64)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()
    return b"i" in out


@contextlib.contextmanager
def deferred_signals(cleanup=None):
    """Hold Ctrl-C (SIGINT) and SIGTERM back during a start-up that must not be cut in the
    middle (a Dask ``LocalCluster`` spawning its worker processes), then act on them.

    Within the block SIGINT is *ignored*, so that every process started in the block
    inherits it ignored: Ctrl-C, which the terminal sends to the whole process group,
    then stops only this process (which stops the cluster) instead of printing every
    worker's ``KeyboardInterrupt`` traceback.  A Ctrl-C is still seen: a small helper
    process in the same process group (:data:`_WATCHER`) reports the SIGINTs the group
    receives (the terminal's Ctrl-C, ``timeout -s INT``, ``kill -INT -PGID``; a SIGINT sent
    to this process alone, ``kill -INT PID``, is lost within the block).  A SIGTERM is
    recorded by a handler.  On leaving the block, if a signal arrived: ``cleanup()`` runs
    first (undo the start, e.g. close the cluster with a bounded timeout; SIGINT still
    ignored, SIGTERM still recorded), then the previous handlers are restored and the
    first signal is raised again in this process, so that it has exactly its usual effect
    (``KeyboardInterrupt`` for Ctrl-C, :class:`Terminated` under
    :func:`sigterm_as_interrupt`, death by the default action otherwise).  A signal that
    was ignored before the block stays ignored.  No-op off the main thread (where
    handlers cannot be set).

    Yields the list of signal numbers received so far (in order; a Ctrl-C is added on
    leaving).  Raises whatever the re-raised signal raises; ``cleanup``'s exceptions are
    suppressed (best effort after an interrupt).  Source: this project's design
    (docs/guide/cli.md, "Interrupting and progress"); POSIX: an ignored signal stays ignored over
    ``fork`` and ``execve``, and Python keeps it so at start-up."""
    got = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def note(signum, frame):
        if signum not in got:
            got.append(signum)

    old = {s: signal.getsignal(s) for s in _STOP_SIGNALS}
    old = {s: h for s, h in old.items() if h is not signal.SIG_IGN and h is not None}
    watcher = _start_watcher() if signal.SIGINT in old else None
    try:
        if signal.SIGTERM in old:
            signal.signal(signal.SIGTERM, note)
        if signal.SIGINT in old:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        yield got
    finally:
        try:
            if watcher is not None and _stop_watcher(watcher):
                note(signal.SIGINT, None)
            if got and cleanup is not None:
                try:
                    cleanup()
                except Exception:             # noqa: BLE001 — undoing a start after an interrupt
                    pass
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        if got and got[0] in old:
            signal.raise_signal(got[0])       # its usual effect, now that its handler is back
