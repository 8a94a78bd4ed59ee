r"""Long computations in a forked worker process, so that Ctrl-C and SIGTERM stop them at once.

Python runs its signal handlers between bytecodes, so one long compiled call (a FLINT
series reversion at order 20000, a large resultant, one LAPACK call) holds the interpreter:
Ctrl-C and SIGTERM wait until it returns, which can be hours.  Here the work runs in a child
process forked from this one (it has every object, cache and module of the caller, so only
the result travels, pickled, through a pipe), while this process waits on the pipe, where a
signal is handled at once: the child is killed (SIGKILL: it only computes and holds no file
of ours) and the :class:`KeyboardInterrupt` (or :class:`freeprob._signals.Terminated`) goes on
in the caller as if the work had been interrupted in place.

* :func:`interruptible` (public, ``freeprob.interruptible``): one call, one child.
* :class:`WorkerProcess`: a child kept for many calls (the cells of an in-process sweep);
  requests and results are pickled.
* While waiting, the reports of the child (:func:`freeprob._progress.report`) reach
  ``on_report`` in this process, and ``on_wait`` runs every ``wait_interval`` seconds (a
  progress line).

The child ignores SIGINT (the terminal sends Ctrl-C to the whole process group; this
process handles it), dies with this process on Linux (``PR_SET_PDEATHSIG``), and leaves by
``os._exit``: never through the caller's ``finally`` blocks, ``atexit`` handlers or buffers.

Where ``os.fork`` is missing (Windows), off the main thread (which alone receives signals),
inside a worker already, or with the environment variable ``FREEPROB_IN_PROCESS=1`` (for a
debugger or a profiler), the function runs in this process instead: same result, and Ctrl-C
lands when the compiled call returns.

Base tier: standard library only.  Source: this project's design (docs/guide/cli.md,
"Interrupting and progress"); POSIX ``fork``, ``prctl(2)``.
"""
from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
import traceback

from freeprob import _progress
from freeprob._signals import raise_lost_interrupt

__all__ = ["interruptible", "WorkerProcess", "WorkerDied", "available", "ENV_IN_PROCESS"]

#: set to 1 to run everything in this process (no worker process)
ENV_IN_PROCESS = "FREEPROB_IN_PROCESS"
#: least seconds between two reports the child sends (the latest one is kept and sent later)
_REPORT_INTERVAL = 0.1
_HEADER = struct.Struct("<Q")

_in_worker = False          # True in a worker process: nested calls run in place


class _NoFork(Exception):
    """No worker process could be started (``os.fork`` or ``os.pipe`` failed)."""


class WorkerDied(RuntimeError):
    """The worker process ended without an answer (killed by a signal, e.g. by the system
    when memory ran out, or crashed); the message names the signal or exit status."""


def available() -> bool:
    """Whether work can run in a worker process here: ``os.fork`` exists, this is the main
    thread, not already a worker, and ``FREEPROB_IN_PROCESS`` is not set to a true value.
    Source: this module."""
    return (hasattr(os, "fork") and not _in_worker
            and threading.current_thread() is threading.main_thread()
            and os.environ.get(ENV_IN_PROCESS, "").strip().lower() in ("", "0", "no", "false"))


def interruptible(fn, *args, **kwargs):
    r"""``fn(*args, **kwargs)``, computed in a forked worker process so that Ctrl-C (a
    notebook's "interrupt kernel") and SIGTERM stop it at once, even inside a long compiled
    call such as ``Law.moments(20000)``.

    Parameters
    ----------
    fn : callable
        Anything callable: the child is a copy of this process, so ``fn`` and its arguments
        are not pickled (a bound method of a law with its caches is fine).
    *args, **kwargs
        Its arguments.

    Returns
    -------
    object
        What ``fn`` returns, pickled back (python-flint ``arb``/``acb`` balls cannot be:
        return their strings or midpoints instead).  Side effects of ``fn`` (caches filled,
        attributes set) stay in the child.

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C (SIGTERM inside :func:`freeprob._signals.sigterm_as_interrupt`:
        ``Terminated``); the child is killed first.
    WorkerDied
        The child ended without an answer (killed, e.g. out of memory).
    Exception
        What ``fn`` raised, re-raised here (its traceback in the child as a note).

    Where no worker can run (:func:`available` is false) ``fn`` runs in this process.

    Examples
    --------
    >>> import freeprob as fp
    >>> fp.interruptible(fp.FreePoisson(1).moments, 4)
    (1, 1, 2, 5, 14)

    Source: this module.
    """
    with WorkerProcess() as worker:
        return worker.call(fn, args, kwargs)


class WorkerProcess:
    r"""A forked child that computes what :meth:`call` asks, interruptibly (module docstring).

    Parameters
    ----------
    persistent : bool, keyword-only
        ``False`` (default): every call forks a fresh child, which inherits the caller's
        state at that moment (nothing is pickled on the way in).  ``True``: one child,
        forked at the first call, answers every call until :meth:`close` (the function and
        arguments are pickled: module-level functions and plain data, as for Dask; a call
        that cannot be pickled gets a child of its own); a child that was killed is
        replaced at the next call.

    Use as a context manager, or call :meth:`close`.  Source: this module.
    """

    def __init__(self, *, persistent=False):
        self.persistent = persistent
        self.pid = None
        self._requests = self._answers = None

    # -- the parent --------------------------------------------------------------------------
    def call(self, fn, args=(), kwargs=None, *, on_report=None, on_wait=None, wait_interval=0.25):
        r"""``fn(*args, **kwargs)`` in the child.

        ``on_report(done, total, text)`` receives the child's reports
        (:func:`freeprob._progress.report`); ``on_wait()`` runs every ``wait_interval``
        seconds while waiting.  Without a worker (:func:`available` false) ``fn`` runs here,
        its reports going to ``on_report`` directly.

        Raises what ``fn`` raises; :class:`KeyboardInterrupt` (the child killed first);
        :class:`WorkerDied`."""
        kwargs = {} if kwargs is None else kwargs
        inline = not available()
        if not inline and self.persistent:
            try:
                request = pickle.dumps(("call", fn, args, kwargs), pickle.HIGHEST_PROTOCOL)
            except Exception:          # a local function, a lambda: a child forked for this call
                return WorkerProcess().call(fn, args, kwargs, on_report=on_report, on_wait=on_wait,
                                            wait_interval=wait_interval)
        if not inline:
            try:
                if self.persistent:
                    self._request(request)
                else:
                    self._fork((fn, args, kwargs))
            except _NoFork:            # no process could be started (limits, memory)
                inline = True
        if inline:
            with _progress.reporting(on_report):
                return fn(*args, **kwargs)
        try:
            while True:
                kind, *rest = self._receive(on_wait, wait_interval)
                if kind == "report":
                    if on_report is not None:
                        on_report(*rest)
                    continue
                if not self.persistent:
                    self._reap()
                if kind == "ok":
                    return rest[0]
                exc, text = rest
                if text:
                    exc.add_note("in the worker process:\n" + text.rstrip())
                raise exc
        except BaseException as exc:     # Ctrl-C, SIGTERM, a dead child, an error of on_report: kill it
            if not _is_answer(exc):
                self.kill()
            raise

    def _request(self, data):
        """Send the pickled request ``data`` to the persistent child (forked first if there is
        none; replaced if it was killed while idle)."""
        for attempt in (0, 1):
            if self.pid is None:
                self._fork(None)
            try:
                _send(self._requests, data)
                return
            except BrokenPipeError:
                if attempt:
                    raise WorkerDied(self._death()) from None
                self._reap()

    def _fork(self, job):
        _resolve_prctl()
        for stream in (sys.stdout, sys.stderr):        # no buffered text copied into the child
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            answers = os.pipe()
            requests = os.pipe() if job is None else None
        except OSError as exc:
            raise _NoFork from exc
        parent = os.getpid()
        freeze = gc.get_freeze_count() == 0     # (never thaw what the caller froze)
        if freeze:
            gc.freeze()            # the child's collections skip the inherited objects: no page copied
        try:
            pid = os.fork()
        except OSError as exc:     # process or memory limits: the caller runs the work in place
            for fd in (*answers, *(requests or ())):
                os.close(fd)
            raise _NoFork from exc
        finally:
            if freeze and os.getpid() == parent:
                gc.unfreeze()
        if pid == 0:                                   # the child: never returns
            code = 1
            try:
                os.close(answers[0])
                if requests is not None:
                    os.close(requests[1])
                _child_setup(parent)
                _child_serve(job, None if requests is None else requests[0], answers[1])
                code = 0
            finally:
                os._exit(code)
        self.pid = pid
        os.close(answers[1])
        self._answers = answers[0]
        if requests is not None:
            os.close(requests[0])
            self._requests = requests[1]

    def _receive(self, on_wait, interval):
        """The next message of the child (``on_wait`` every ``interval`` s meanwhile);
        :class:`WorkerDied` at end of file."""
        header = self._read(_HEADER.size, on_wait, interval)
        data = self._read(_HEADER.unpack(header)[0], on_wait, interval)
        try:
            return pickle.loads(data)
        except Exception as exc:       # an exception class that cannot be rebuilt here
            why = f"{type(exc).__name__}: {exc}"
            return ("error", RuntimeError(f"the worker's answer could not be read ({why})"), "")

    def _read(self, n, on_wait, interval):
        chunks, left = [], n
        while left:
            raise_lost_interrupt()          # a Ctrl-C discarded in a finaliser (freeprob._signals)
            ready, _, _ = select.select([self._answers], [], [], interval)   # a signal lands here at once
            if not ready:
                if on_wait is not None:
                    on_wait()
                continue
            chunk = os.read(self._answers, min(left, 1 << 20))
            if not chunk:
                raise WorkerDied(self._death())
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _death(self):
        status = self._reap()
        if status is None:
            return "the worker process closed its pipe without an answer"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            oom = " (the system kills processes so when memory runs out)" if sig == signal.SIGKILL else ""
            return f"the worker process was killed by {name}{oom} before it answered"
        return f"the worker process exited with status {os.WEXITSTATUS(status)} before it answered"

    def _reap(self):
        """Wait for the child; its status (``None`` if already reaped); closes the pipes."""
        pid, self.pid = self.pid, None
        for fd in (self._answers, self._requests):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._answers = self._requests = None
        if pid is None:
            return None
        while True:
            try:
                return os.waitpid(pid, 0)[1]
            except ChildProcessError:
                return None
            except InterruptedError:        # pragma: no cover (PEP 475 retries)
                continue
            except KeyboardInterrupt:       # a second Ctrl-C while reaping a killed child: finish reaping
                continue

    def kill(self):
        """Kill the child (SIGKILL) and reap it; no-op without one."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()

    def close(self):
        """End the child: a persistent one leaves when its request pipe closes; killed if
        it does not within a second (it may be inside a long call)."""
        if self.pid is None:
            return
        if self._requests is not None:
            with contextlib.suppress(OSError):
                os.close(self._requests)
            self._requests = None
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                with contextlib.suppress(ChildProcessError):
                    if os.waitpid(self.pid, os.WNOHANG)[0]:
                        self.pid = None
                        self._reap()
                        return
                time.sleep(0.01)
        self.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _is_answer(exc):
    """An exception that came from the child's answer (the child is alive and well)."""
    return getattr(exc, "_freeprob_from_worker", False)


_PRCTL = []                 # [libc prctl] once resolved (Linux), looked up in the parent: no import per child


def _resolve_prctl():
    if _PRCTL or not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes
        _PRCTL.append(ctypes.CDLL(None, use_errno=True).prctl)


# -- the child ---------------------------------------------------------------------------------
def _child_setup(parent):
    global _in_worker
    _in_worker = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # the parent handles Ctrl-C and kills us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _PRCTL:                                           # die with the parent (kill -9 of the command)
        with contextlib.suppress(Exception):
            _PRCTL[0](1, signal.SIGKILL, 0, 0, 0)        # PR_SET_PDEATHSIG
    if os.getppid() != parent:                           # the parent died before prctl
        os._exit(1)


def _child_serve(job, requests, answers):
    """Run ``job`` (one-shot) or every request read from ``requests``; answer on ``answers``."""
    last = [0.0, None]

    def sink(done, total, text):
        now = time.monotonic()
        if now - last[0] < _REPORT_INTERVAL:
            last[1] = (done, total, text)               # kept: sent before the next answer
            return
        last[0], last[1] = now, None
        _send(answers, pickle.dumps(("report", done, total, text), pickle.HIGHEST_PROTOCOL))

    def run(fn, args, kwargs):
        try:
            with _progress.reporting(sink):
                message = ("ok", fn(*args, **kwargs))
        except BaseException as exc:                    # noqa: BLE001 — every error goes back
            with contextlib.suppress(Exception):
                exc._freeprob_from_worker = True
            message = ("error", exc, traceback.format_exc())
        if last[1] is not None:                          # the latest report, then the answer
            _send(answers, pickle.dumps(("report", *last[1]), pickle.HIGHEST_PROTOCOL))
            last[1] = None
        _send(answers, _dumps(message))

    if job is not None:
        run(*job)
        return
    while True:
        try:
            header = _read_exact(requests, _HEADER.size)
        except EOFError:                                 # the parent closed: done
            return
        request = pickle.loads(_read_exact(requests, _HEADER.unpack(header)[0]))
        if request[0] != "call":
            return
        run(*request[1:])


def _dumps(message):
    """The pickled answer; an unpicklable result or exception becomes a RuntimeError that
    says so."""
    try:
        return pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:            # noqa: BLE001
        what = "result" if message[0] == "ok" else f"exception {type(message[1]).__name__}: {message[1]}"
        err = RuntimeError(f"the worker process cannot send back its {what} ({type(exc).__name__}: {exc}); "
                           "return plain values (python-flint balls as strings)")
        err._freeprob_from_worker = True
        return pickle.dumps(("error", err, message[2] if message[0] == "error" else ""),
                            pickle.HIGHEST_PROTOCOL)


def _send(fd, data):
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
