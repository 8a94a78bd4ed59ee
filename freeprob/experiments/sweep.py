r"""Sweeps: a grid of cells executed through Dask, results kept in a :class:`ResultStore`.

A :class:`SweepCell` is one unit of work: a module-level function and its keyword
arguments, a stable key and its parameters (configuration, ``n``, ``β``, seed …).
:func:`run_cells` skips the cells the store already holds, submits the others to an
:class:`Executor` and writes each result to the store the moment it arrives, so a killed
run resumes where it stopped and nothing finished is computed twice.

Execution (:class:`Executor`):

* ``workers = 1`` and no scheduler: in this process, one cell after the other (what
  Dask's synchronous scheduler would do, without starting one), BLAS on every core;
* ``workers = k > 1``: a ``dask.distributed.LocalCluster`` of ``k`` single-threaded
  worker processes, each cell's BLAS/LAPACK limited to ``cores // k`` threads;
* ``scheduler = "tcp://host:port"``: an existing Dask cluster, unchanged; an unreachable
  address fails within :data:`CONNECT_TIMEOUT` seconds, a cluster without workers, whose
  workers lack freeprob or run other freeprob code (:func:`freeprob.experiments.store.code_version`,
  checked at connection and again with every result) is refused.

A cluster that fails during a run (the scheduler lost, a worker that cannot run the cells,
no workers left for :data:`WORKERS_LOST_GRACE` seconds) stops it with
:class:`SchedulerError`; the cells finished before are stored.  SIGTERM during a command
(:func:`sigterm_as_interrupt`) stops it like Ctrl-C.  A cell whose
own function raises is reported in :attr:`SweepStats.failed` and the others go on.

Randomness never depends on scheduling: a cell draws from
``numpy.random.default_rng(cell_seed(sweep_seed, key))`` (:func:`cell_seed`: the sweep
seed and a hash of the cell key).

Source: this project's design (docs/guide/sweeps.md); Dask distributed,
https://distributed.dask.org (``LocalCluster``, ``Client``, ``as_completed``).
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import multiprocessing
import os
import re
import socket
import sys
import time
from dataclasses import dataclass, field

from freeprob import _progress
from freeprob._extras import require
from freeprob._interruptible import WorkerDied, WorkerProcess
from freeprob.experiments.sweep_progress import RunningCells, cell_bar, dask_progress_sink
from freeprob.experiments.sweep_cluster import CLOSE_TIMEOUT, close_bounded, close_started_clusters
from freeprob.experiments import store as _store  # noqa: F401 (fixes the code identity at import, on workers too)
from freeprob._checks import check_int
from freeprob.errors import FreeprobValueError

__all__ = ["SweepCell", "Executor", "SchedulerError", "run_cells", "pending_cells", "max_local_workers",
           "LOCAL_CLUSTER_OPTIONS", "cell_seed", "SweepStats", "Terminated", "sigterm_as_interrupt", "interruption",
           "CONNECT_TIMEOUT", "CLOSE_TIMEOUT", "WORKERS_LOST_GRACE", "check_workers", "check_executor",
           "TRANSIENT"]

#: key of an ``"object"`` cell's result dict that is handed to ``on_result`` but never stored
#: (e.g. a law's set-up for the main process, :mod:`freeprob.experiments.verify_laws`)
TRANSIENT = "transient"
#: seconds to reach a scheduler given with ``--scheduler`` (fail fast)
CONNECT_TIMEOUT = 10
#: seconds to wait for a first worker on a reachable scheduler
WORKER_WAIT = 30
#: keyword arguments of every ``LocalCluster`` freeprob starts: no dashboard, and the
#: scheduler's HTTP endpoints (health, metrics), which Dask starts even without a dashboard,
#: on a free port of localhost: on its default port 8787, held by another cluster or program,
#: Dask would warn "Port 8787 is already in use" on the terminal
LOCAL_CLUSTER_OPTIONS = dict(dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})

#: seconds for a LocalCluster to start its workers
LOCAL_START_TIMEOUT = 120
#: seconds a running sweep waits while its cluster has no workers (all lost: killed, crashed,
#: preempted) before it stops with :class:`SchedulerError`; a worker that joins meanwhile
#: resumes the run
WORKERS_LOST_GRACE = 60
#: seconds between two looks at the cluster's workers while no result arrives
_WATCH_INTERVAL = 1.0


def _sweep_extra(module):
    """``module`` of the ``sweep`` extra (dask, distributed, tqdm, threadpoolctl), or
    :class:`freeprob._extras.MissingExtra` naming ``pip install 'freeprob[sweep]'``."""
    return require(module, "sweep")


class SchedulerError(FreeprobValueError):
    """The Dask scheduler cannot be used (unreachable, no workers, workers without
    freeprob or with other freeprob code, workers that cannot start, or a cluster lost
    during a run); the message says which and what to do."""


def max_local_workers() -> int:
    """The most local worker processes allowed: ``max(8, 2 × cores)`` (more only
    oversubscribe the cores: each is a Python process with its own memory).  Source: this
    project's sweep design (docs/guide/sweeps.md)."""
    return max(8, 2 * (os.cpu_count() or 1))


def check_workers(workers, who="workers"):
    """``workers`` as an int in ``[1, max_local_workers()]``.

    Raises :class:`FreeprobValueError` (naming ``who`` and the allowed range) otherwise.
    Source: this project's sweep design (docs/guide/sweeps.md)."""
    workers = check_int(workers, None, who, minimum=1)
    top = max_local_workers()
    if workers > top:
        raise FreeprobValueError(f"{who} = {workers} is more than this machine's {os.cpu_count()} cores can "
                                 "run "
                                 f"(at most {top} local worker processes); for more, start a Dask cluster "
                                 "and pass --scheduler ADDRESS")
    return workers


def check_executor(workers=None, scheduler=None):
    r"""Validate the arguments of :class:`Executor` without starting or contacting
    anything (so that a refused run creates nothing).

    Parameters
    ----------
    workers : int ≥ 1, optional
        Local worker processes; default the number of cores, at most 8.
    scheduler : str, optional
        Address of a running Dask scheduler.

    Returns
    -------
    (int, str or None)
        The worker count and the normalised address.

    Raises
    ------
    FreeprobValueError
        ``workers`` not an integer in ``[1, max_local_workers()]``.
    SchedulerError
        A malformed address.

    Source: this project's sweep design (docs/guide/sweeps.md).
    """
    address = None if scheduler is None else _check_address(scheduler)
    return check_workers(workers if workers is not None else min(os.cpu_count() or 1, 8)), address


def cell_seed(sweep_seed, key) -> list:
    """Entropy for ``numpy.random.default_rng``: ``[sweep_seed, w0, w1, w2, w3]`` with
    ``w_i`` the 32-bit words of the SHA-256 of the cell key, so that a cell's draws
    depend only on the sweep seed and the cell (never on worker, order or timing).

    >>> cell_seed(2026, "gpt2-small/n512/beta1/seed0")[:2]
    [2026, 907597370]
    """
    sweep_seed = check_int(sweep_seed, None, "the sweep seed", minimum=0)
    h = hashlib.sha256(str(key).encode()).digest()
    return [sweep_seed] + [int.from_bytes(h[4 * i:4 * i + 4], "little") for i in range(4)]


@dataclass(frozen=True)
class SweepCell:
    r"""One cell of a sweep.

    Parameters
    ----------
    key : str
        Stable identity (same settings → same key; different numbers → different key).
    params : dict
        JSON-able; ``config``, ``n``, ``beta``, ``seed`` become columns of the store.
    fn : callable
        A module-level function (workers import it by name) returning ``dict`` with
        ``quantities`` (str → float or None) and optionally ``arrays`` (str → array), or,
        for an ``object`` cell, any JSON-able value.
    kwargs : dict
        Keyword arguments of ``fn`` (picklable).
    kind : {"cell", "object"}
        ``"object"``: the result is stored with :meth:`ResultStore.put_object` under
        ``key`` (records shared by cells, e.g. a tabulated exact law).
    priority : int
        Higher runs first (Dask priority).
    """

    key: str
    params: dict
    fn: object
    kwargs: dict = field(default_factory=dict)
    kind: str = "cell"
    priority: int = 0


@dataclass
class SweepStats:
    """Counts of a :func:`run_cells` call: ``computed``, ``resumed`` (already stored),
    ``failed`` (``{key: message}``), ``elapsed`` (s); ``by_kind`` the same two counts per
    cell kind (``{"cell": [computed, resumed], "object": [...]}``)."""

    computed: int = 0
    resumed: int = 0
    failed: dict = field(default_factory=dict)
    elapsed: float = 0.0
    by_kind: dict = field(default_factory=lambda: {"cell": [0, 0], "object": [0, 0]})


def _run_cell(fn, kwargs, blas_threads, key=None):
    """Worker side: run one cell with a BLAS thread limit; returns
    ``(result, seconds, host, None, code)`` or ``(None, seconds, host, error text, code)``
    with ``code`` the worker's :func:`_worker_version` (checked by :func:`run_cells`).  On a
    Dask worker the cell's reports (:func:`freeprob._progress.report`) go to the client as
    events of :data:`PROGRESS_TOPIC` (``key``, fraction done, text)."""
    threadpool_limits = _sweep_extra("threadpoolctl").threadpool_limits
    t = time.perf_counter()
    sink = dask_progress_sink(key)
    try:
        with threadpool_limits(limits=blas_threads), \
                (_progress.reporting(sink) if sink is not None else contextlib.nullcontext()):
            res = fn(**kwargs)
        return res, time.perf_counter() - t, socket.gethostname(), None, _worker_version()
    except Exception as exc:      # reported by run_cells, the cell stays undone
        return (None, time.perf_counter() - t, socket.gethostname(), f"{type(exc).__name__}: {exc}",
                _worker_version())


def _worker_version():
    """The code identity of this process (:func:`freeprob.experiments.store.code_version`) and the
    store format: workers must match the client exactly."""
    from freeprob.experiments.store import STORE_FORMAT, code_version
    return f"{code_version()}/store{STORE_FORMAT}"


def _other_code(where, theirs, ours):
    return SchedulerError(
        f"{where} runs other freeprob code ({theirs}) than this process ({ours}): results of different "
        "code are never mixed.  Install the same freeprob (the same version and sources) in the Python "
        "environment of every `dask worker`, restart the workers, and rerun (finished cells are kept)")


def _plural(count, word):
    return f"{count} {word}{'' if count == 1 else 's'}"


def _workers_named(addresses, of):
    """``the worker ADDRESS of SCHEDULER`` or ``the workers A, B of SCHEDULER`` (at most
    five named), for messages."""
    addresses = sorted(str(a) for a in addresses)
    shown = ", ".join(addresses[:5]) + (f" and {len(addresses) - 5} more" if len(addresses) > 5 else "")
    return f"the worker{'' if len(addresses) == 1 else 's'} {shown} of {of}"


def _workers_without_freeprob(client):
    """``{address: exception}`` of the workers of ``client`` that cannot import freeprob
    (empty when every worker can, or when the workers cannot be asked)."""
    try:
        answers = client.run(_worker_version, on_error="return")
    except Exception:               # the cluster is going away: nothing more to learn
        return {}
    return {w: v for w, v in answers.items() if isinstance(v, BaseException) and _is_missing_freeprob(v)}


def _missing_freeprob(where, exc):
    return SchedulerError(
        f"{where} cannot import freeprob ({type(exc).__name__}: {exc}): install freeprob, the same version "
        "and sources as here, in the Python environment that runs `dask worker` on every machine of the "
        "cluster, restart the workers, and rerun")


def _is_missing_freeprob(exc):
    """A worker could not import freeprob (Dask passes the worker's ModuleNotFoundError on,
    or wraps it in a plain Exception that quotes it)."""
    return (isinstance(exc, ImportError) and (exc.name or "").split(".")[0] == "freeprob") \
        or "No module named 'freeprob" in str(exc)


# Terminated, interruption, sigterm_as_interrupt: the one SIGTERM handler (freeprob._signals),
# re-exported here where they were
from freeprob._signals import (Terminated, deferred_signals, interruption,  # noqa: E402,F401
                               sigterm_as_interrupt, interrupt_latch, raise_lost_interrupt)


_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:[A-Za-z0-9_.\-]+|\[[0-9A-Fa-f:.]+\]):\d{1,5}"
                      r"|inproc://\S+")


def _check_address(address):
    if not isinstance(address, str) or not address.strip():
        raise SchedulerError(f"--scheduler must be an address like tcp://10.0.0.5:8786; got {address!r}")
    a = address.strip()
    if not _ADDRESS.fullmatch(a):
        raise SchedulerError(f"--scheduler must be an address like tcp://10.0.0.5:8786 (protocol://host:port "
                             f"or host:port); got {address!r}")
    return a


def _probe_scheduler(address):
    """Ask whatever listens at ``address`` who it is, with a hard deadline: a port that
    accepts connections but is not a Dask scheduler (a web server, a silent listener,
    another protocol, a worker) must not hang the command.

    Opens an asynchronous ``distributed.Client(address, timeout=CONNECT_TIMEOUT)`` (Dask's
    public API) in a private event loop and reads :meth:`Client.scheduler_info` (the
    identity the server sent), all under :func:`asyncio.wait_for` with
    :data:`CONNECT_TIMEOUT`: the client's own ``timeout`` bounds the TCP connection but not
    Dask's handshake, which a silent listener never answers (it would wait forever)."""
    import asyncio

    Client = _sweep_extra("distributed").Client
    seen = {}

    async def ask():
        client = Client(address, timeout=CONNECT_TIMEOUT, asynchronous=True, set_as_default=False)
        try:
            await client
        finally:
            with contextlib.suppress(Exception):        # what answered, even if it then failed
                seen.update(client.scheduler_info())
            await client.close(timeout=2)

    try:
        asyncio.run(asyncio.wait_for(ask(), CONNECT_TIMEOUT))
        info = seen
    except BaseException as exc:         # noqa: BLE001 — anything from a foreign server
        if isinstance(exc, KeyboardInterrupt):
            raise
        # a Dask server that is not a scheduler: its identity (older distributed: a worker
        # answers it, then ignores the client's registration) or its refusal of the
        # scheduler's request (newer: "Worker.identity() got an unexpected keyword …")
        m = None if isinstance(exc, OSError) else re.search(r"\b([A-Z]\w*)\.identity\(", str(exc))
        if seen.get("type") not in (None, "Scheduler"):
            info = seen
        elif m is None:
            why = "no answer" if isinstance(exc, asyncio.TimeoutError | TimeoutError) else type(exc).__name__
            raise SchedulerError(f"{address} does not answer as a Dask scheduler within {CONNECT_TIMEOUT} s "
                                 f"({why}); check the address (the scheduler's port, 8786 by default)") from None
        else:
            info = {"type": m.group(1)}
    if not isinstance(info, dict) or info.get("type") != "Scheduler":
        kind = info.get("type") if isinstance(info, dict) else type(info).__name__
        raise SchedulerError(f"{address} is not a Dask scheduler (it answers as {kind!r}); give the "
                             "scheduler's address, not a worker's")


def _probe_tcp(address):
    """Fail at once (not after Dask's connect retries) when nothing listens at a
    ``tcp://host:port`` or ``host:port`` address."""
    m = re.fullmatch(r"(?:tcp://)?\[?([\w.\-:]+?)\]?:(\d+)", address)
    if m is None:
        return
    host, port = m.group(1), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        raise SchedulerError(f"cannot reach the Dask scheduler at {address} ({exc.strerror or exc}); "
                             "check the "
                             "address and that `dask scheduler` runs there, or drop --scheduler to run "
                             "locally") from None


class Executor:
    r"""Where cells run: in this process, a ``LocalCluster`` or an existing cluster.

    Parameters
    ----------
    workers : int ≥ 1, optional
        Local worker processes (default: the number of cores, at most 8; ``1`` runs in
        this process).  Ignored with ``scheduler``.
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:port``).
    blas_threads : int, optional
        BLAS/LAPACK threads per cell (default ``cores // workers``; all cores in process).

    Raises
    ------
    SchedulerError
        Unreachable or malformed address (within :data:`CONNECT_TIMEOUT` s), no workers
        after :data:`WORKER_WAIT` s, workers without freeprob or running other freeprob
        code (:func:`freeprob.experiments.store.code_version`), local workers that fail to start, or a
        call from a spawned worker process (a script that starts a sweep must guard it
        with ``if __name__ == "__main__":``).
    FreeprobValueError
        ``workers`` or ``blas_threads`` not an integer ≥ 1.

    Use as a context manager; :meth:`close` shuts down a local cluster.  Dask's own log
    messages are silenced while it is open (the run reports failures itself).  In this
    process (``workers = 1``) :func:`run_cells` runs the cells in one worker process forked
    from this one (:class:`freeprob._interruptible.WorkerProcess`), which Ctrl-C and SIGTERM
    stop at once.
    """

    def __init__(self, workers=None, scheduler=None, blas_threads=None):
        cores = os.cpu_count() or 1
        self.workers, self.scheduler = check_executor(workers, scheduler)
        if blas_threads is not None:
            check_workers(blas_threads, "blas_threads")
        self.client = self.cluster = None
        # in this process: the cells run in one forked worker process, so that Ctrl-C and
        # SIGTERM stop a long compiled call at once (freeprob._interruptible)
        self.process = WorkerProcess(persistent=True)
        self._quiet = contextlib.ExitStack()
        try:
            if self.scheduler is not None:
                self._silence()
                self._connect()
                self.blas_threads = blas_threads
            elif self.workers == 1:
                self.blas_threads = blas_threads
            else:
                self._local()
                self.blas_threads = blas_threads or max(1, cores // self.workers)
        except BaseException:           # Ctrl-C while starting included: no cluster left behind
            self.close()
            raise

    def _silence(self):
        """Silence distributed's loggers until :meth:`close` (a lost scheduler is reported
        by :func:`run_cells`, not by a reconnection traceback)."""
        silence = _sweep_extra("distributed.utils").silence_logging_cmgr
        self._quiet.enter_context(silence(logging.CRITICAL))

    @property
    def description(self):
        """One line: where the cells run."""
        if self.scheduler is not None:
            return f"Dask cluster at {self.scheduler} ({_plural(self.workers, 'worker')})"
        if self.cluster is None:
            return "this process (1 worker)"
        return f"Dask LocalCluster, {self.workers} worker processes × {self.blas_threads} BLAS threads"

    def _connect(self):
        Client = _sweep_extra("distributed").Client
        _probe_tcp(self.scheduler)
        _probe_scheduler(self.scheduler)
        try:
            self.client = Client(self.scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except Exception as exc:
            raise SchedulerError(f"cannot reach the Dask scheduler at {self.scheduler} within "
                                 f"{CONNECT_TIMEOUT} s ({type(exc).__name__}: {exc}); check the address "
                                 "and that "
                                 "`dask scheduler` runs there, or drop --scheduler to run locally") from None
        try:
            try:
                self.client.wait_for_workers(1, timeout=WORKER_WAIT)
            except Exception:
                raise SchedulerError(f"the Dask scheduler at {self.scheduler} has no workers (waited "
                                     f"{WORKER_WAIT} "
                                     "s); start some with `dask worker ADDRESS`") from None
            try:
                versions = self.client.run(_worker_version, on_error="return")     # per worker
            except Exception as exc:
                versions = {"": exc}
            failed = {w: v for w, v in versions.items() if isinstance(v, BaseException)}
            missing = {w: v for w, v in failed.items() if _is_missing_freeprob(v)}
            if missing:
                raise _missing_freeprob(_workers_named(missing, self.scheduler), next(iter(missing.values())))
            if failed:
                w, exc = next(iter(failed.items()))
                who = _workers_named(failed, self.scheduler) if w else f"the workers of {self.scheduler}"
                raise SchedulerError(f"{who} cannot run freeprob ({type(exc).__name__}: {exc}); check that "
                                     "every `dask worker` runs in a Python environment with the same "
                                     "freeprob installed")
            ours = _worker_version()
            other = {w: v for w, v in versions.items() if v != ours}
            if other:
                w, v = next(iter(other.items()))
                raise _other_code(f"worker {w} of {self.scheduler}", v, ours)
            self.workers = len(versions)
        except BaseException:
            self.close()
            raise

    def _local(self):
        distributed = _sweep_extra("distributed")
        Client, LocalCluster = distributed.Client, distributed.LocalCluster
        if multiprocessing.parent_process() is not None:
            raise SchedulerError(
                "a sweep was started inside a spawned worker process: a script that runs verify() or a "
                "sweep must protect the call with `if __name__ == \"__main__\":` (the workers re-import the "
                "script)")
        before = set(distributed.SpecCluster._instances)
        try:
            # memory_limit=0: Dask's default per-worker cap (RAM / workers) would restart a
            # worker holding one large-n cell (n = 8192: a few GB); the OS decides instead.
            # Logs below CRITICAL silenced: on Ctrl-C the workers log the scheduler's
            # shutdown as errors; a cell that fails is reported by run_cells instead.
            # Dask's statistical profiler off: it samples each worker's stack every 10 ms
            # (CPU time for a dashboard this cluster does not serve: measured 2 s a minute for
            # two idle workers, more under sympy's deep stacks).
            config = _sweep_extra("dask").config.set({"distributed.worker.profile.enabled": False})
            # Ctrl-C and SIGTERM are held back while the cluster starts (an interrupt inside
            # Dask's start-up leaves a half-built cluster that Dask's own exit handler then
            # fails to close): the workers inherit SIGINT blocked (Ctrl-C, sent by the
            # terminal to the whole process group, reaches only this process, which stops
            # the cluster, instead of printing every worker's traceback); a signal that
            # arrived closes the cluster (bounded) as soon as the start returns, and is then
            # raised again: KeyboardInterrupt or Terminated, as at any other moment.
            with deferred_signals(cleanup=lambda: self._close_dask(before)), config:
                self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                            silence_logs=logging.CRITICAL, timeout=LOCAL_START_TIMEOUT,
                                            memory_limit=0, **LOCAL_CLUSTER_OPTIONS)
                self.client = Client(self.cluster, set_as_default=False)
        except Exception as exc:
            self._close_dask(before)
            raise SchedulerError(f"the local Dask workers failed to start ({type(exc).__name__}: {exc}); "
                                 "if this is a script, protect the sweep with "
                                 "`if __name__ == \"__main__\":`; "
                                 "or run with --workers 1") from None

    def _close_dask(self, before=None):
        """Close the client and the cluster (bounded), quietly; with ``before`` (Dask's
        cluster instances before a start), also a cluster whose start was cut short."""
        with contextlib.ExitStack() as quiet:
            if self.cluster is not None or self.client is not None or before is not None:
                silence = _sweep_extra("distributed.utils").silence_logging_cmgr
                quiet.enter_context(silence(logging.CRITICAL))
            for obj in (self.client, self.cluster):
                if obj is not None:
                    close_bounded(obj)
            self.client = self.cluster = None
            if before is not None:
                close_started_clusters(before)

    def close(self):
        """Shut down the client and a local cluster, quietly (idempotent), each within
        :data:`CLOSE_TIMEOUT` s (then the cluster's worker processes are killed)."""
        self._close_dask()
        self.process.close()
        self._quiet.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def pending_cells(cells, store, done=None) -> list:
    """The cells of ``cells`` that ``store`` does not hold yet (in order): a ``"cell"``
    whose key is done, or an ``"object"`` stored under its key, is not pending.  ``done``:
    the store's done keys when already read.  Source: this project's sweep design."""
    done = store.done_keys() if done is None else done
    return [c for c in cells
            if not ((c.kind == "object" and store.get_object(c.key) is not None)
                    or (c.kind == "cell" and c.key in done))]


def run_cells(cells, store, sweep, executor, *, progress=True, desc="cells", on_result=None):
    r"""Run the cells of a sweep that the store does not hold yet; store each result as
    it arrives.

    Parameters
    ----------
    cells : sequence of SweepCell
        Keys must be unique.
    store : freeprob.experiments.store.ResultStore
    sweep : str
        Sweep name (from :meth:`ResultStore.begin_sweep`).
    executor : Executor
    progress : bool
        A tqdm bar on stderr: cells done, rate and time left.
    desc : str
        Label of the bar.
    on_result : callable, optional
        ``on_result(cell, result)`` after a cell is stored (in this process); the result of
        an ``"object"`` cell still holds its :data:`TRANSIENT` entry, which is not stored.

    Returns
    -------
    SweepStats
        A failed cell (its function raised) is recorded in ``failed`` and left undone,
        so that a rerun retries it; the other cells are still run and stored.

    Raises
    ------
    FreeprobValueError
        Duplicate keys.
    SchedulerError
        The cluster failed during the run (the scheduler lost, a worker without freeprob
        or with other freeprob code, a task lost by Dask, or no workers for
        :data:`WORKERS_LOST_GRACE` seconds); every cell finished before is stored and a
        rerun resumes.
    KeyboardInterrupt
        Passed on after cancelling the pending cells; every finished cell is stored.  A
        Ctrl-C whose exception Python discarded (in a finaliser or a callback of Dask's) is
        raised again while the run waits (:func:`freeprob._signals.interrupt_latch`).
    """
    with interrupt_latch():
        return _run_cells(cells, store, sweep, executor, progress=progress, desc=desc, on_result=on_result)


def _run_cells(cells, store, sweep, executor, *, progress, desc, on_result):
    """:func:`run_cells` inside its :func:`freeprob._signals.interrupt_latch`."""
    tqdm = _sweep_extra("tqdm").tqdm

    t0 = time.perf_counter()
    keys = [c.key for c in cells]
    if len(set(keys)) != len(keys):
        raise FreeprobValueError("run_cells: cell keys must be unique")
    done = store.done_keys()
    stats = SweepStats()
    todo = pending_cells(cells, store, done)
    todo_keys = {c.key for c in todo}
    for c in cells:
        if c.key not in todo_keys:
            stats.resumed += 1
            stats.by_kind[c.kind][1] += 1

    reused = [c.key for c in cells if c.kind == "cell" and c.key in done]
    if reused:
        store.add_members(sweep, reused)

    ours = _worker_version()

    def record(cell, out):
        res, seconds, host, err, code = out
        if code != ours:            # a worker that joined the cluster later with other code
            raise _other_code(f"the worker on {host}", code, ours)
        if err is not None:
            stats.failed[cell.key] = err
            return
        if cell.kind == "object":
            kept = {k: v for k, v in res.items() if k != TRANSIENT} if isinstance(res, dict) else res
            store.put_object(cell.key, cell.params.get("object_kind", "object"), kept)
        else:
            if not isinstance(res, dict) or "quantities" not in res:
                stats.failed[cell.key] = (f"cell function returned {type(res).__name__}, not a dict with "
                                          "'quantities'")
                return
            store.write_cell(sweep, cell.key, cell.params, res["quantities"], arrays=res.get("arrays"),
                             seconds=round(seconds, 3), host=host)
        stats.computed += 1
        stats.by_kind[cell.kind][0] += 1
        if on_result is not None:
            on_result(cell, res)

    bar = cell_bar(tqdm, total=len(cells), initial=stats.resumed, desc=desc, file=sys.stderr,
                   disable=not progress)
    tick = bar.refresh if progress and _isatty(sys.stderr) else None     # the elapsed time, on a terminal
    try:
        if executor.client is None:
            for c in sorted(todo, key=lambda c: -c.priority):
                bar.set_postfix_str(_label(c))
                start = bar.n

                def on_report(done, total, text, c=c, start=start):
                    """A sub-step of the cell: the bar moves within it (never to its end)."""
                    if total:
                        bar.update(max(0.0, start + min(float(done or 0) / float(total), 0.99) - bar.n))
                    bar.set_postfix_str(_label(c) + (f": {text}" if text else ""))
                try:
                    out = executor.process.call(_run_cell, (c.fn, c.kwargs, executor.blas_threads),
                                                on_report=on_report, on_wait=tick, wait_interval=1.0)
                except WorkerDied as exc:        # killed (out of memory): a failed cell, the others go on
                    out = (None, 0.0, socket.gethostname(), f"{type(exc).__name__}: {exc}", _worker_version())
                record(c, out)
                bar.update(start + 1 - bar.n)
        else:
            as_completed = _sweep_extra("distributed").as_completed
            futures = {}
            running = RunningCells(executor.client, bar)      # the cells' reports move the bar
            for c in todo:
                f = executor.client.submit(_run_cell, c.fn, c.kwargs, executor.blas_threads, c.key,
                                           key=f"freeprob-{sweep}-{c.key}", priority=c.priority, pure=False)
                futures[f] = c
            try:
                # results are gathered in the background (a result lost with its worker is
                # recomputed there), so this loop never blocks on one and sees lost workers
                pending = as_completed(list(futures), loop=executor.client.loop, with_results=True,
                                       raise_errors=False)
                watch = _WorkerWatch(executor, bar)
                while not pending.is_empty():
                    raise_lost_interrupt()        # a Ctrl-C discarded in a callback (freeprob._signals)
                    batch = pending.next_batch(block=False)
                    if not batch:           # no result yet: are there still workers to compute one?
                        watch.idle(stats, len(todo), store)
                        running.show()
                        time.sleep(0.05)
                        continue
                    watch.alive()
                    for f, res in batch:
                        c = futures.pop(f)
                        exc = _task_exception(res)
                        out = res if exc is None else _cluster_failure(exc, executor, stats, len(todo), store)
                        record(c, out)
                        f.release()
                        bar.set_postfix_str(_label(c), refresh=False)
                        running.finished(c.key)
            finally:
                running.close()
                if futures:
                    try:
                        executor.client.cancel(list(futures))
                    except Exception:       # the cluster is gone: nothing left to cancel
                        pass
    finally:
        bar.close()
        stats.elapsed = time.perf_counter() - t0
    return stats


class _WorkerWatch:
    """While a sweep waits for results: stop it with :class:`SchedulerError` once its
    cluster has had no workers (or this client no scheduler) for
    :data:`WORKERS_LOST_GRACE` seconds, instead of waiting forever; the progress bar says
    how long it has waited.  Looks at most every :data:`_WATCH_INTERVAL` seconds."""

    def __init__(self, executor, bar):
        self.executor, self.bar = executor, bar
        self.next_look = time.monotonic() + _WATCH_INTERVAL
        self.since = None           # when the cluster was first seen without workers

    def alive(self):
        """A result arrived: the cluster works."""
        self.since = None

    def idle(self, stats, total, store):
        now = time.monotonic()
        if now < self.next_look:
            return
        self.next_look = now + _WATCH_INTERVAL
        workers = _cluster_workers(self.executor.client)
        if workers:
            if self.since is not None:
                self.bar.set_postfix_str(f"{_plural(workers, 'worker')} back")
            self.since = None
            return
        self.since = now if self.since is None else self.since
        waited = now - self.since
        if waited < WORKERS_LOST_GRACE:
            self.bar.set_postfix_str(f"no {'workers' if workers == 0 else 'scheduler'} for {waited:.0f} s "
                                     f"(stops after {WORKERS_LOST_GRACE} s)")
            return
        ex = self.executor
        what = (f"all workers of the {ex.description} were lost" if workers == 0 else
                f"the connection to the scheduler of the {ex.description} was lost")
        start = (f"start workers (`dask worker {ex.scheduler}`) and rerun to resume" if ex.scheduler is not None
                 else "rerun to resume")
        raise SchedulerError(f"{what} after {stats.computed} of {total} cells (none for {WORKERS_LOST_GRACE} s, "
                             f"freeprob.experiments.sweep.WORKERS_LOST_GRACE); the finished cells are stored in {store.path}; "
                             f"{start}")


def _cluster_workers(client):
    """Workers connected to the scheduler of ``client`` now; ``None`` when the client is not
    connected to its scheduler."""
    if client.status != "running":
        return None
    try:
        return len(client.nthreads())
    except Exception:               # the scheduler went away between the two looks
        return None


def _task_exception(res):
    """The exception of a task from ``as_completed(..., with_results=True,
    raise_errors=False)``: its ``(type, exception, traceback)`` (an error) or the
    ``CancelledError``; ``None`` for :func:`_run_cell`'s result (a 5-tuple)."""
    if isinstance(res, BaseException):
        return res
    if isinstance(res, tuple) and len(res) == 3 and isinstance(res[1], BaseException):
        return res[1]
    return None


def _cluster_failure(exc, executor, stats, total, store):
    """A future that raised instead of returning :func:`_run_cell`'s tuple: a cell that
    killed its worker (Dask's ``KilledWorker``, e.g. out of memory) is a failed cell; any
    other error means the cluster cannot go on (:class:`SchedulerError`)."""
    KilledWorker = _sweep_extra("distributed").KilledWorker
    if isinstance(exc, KilledWorker):
        return None, 0.0, "?", f"{type(exc).__name__}: {exc}", _worker_version()
    if _is_missing_freeprob(exc):
        missing = _workers_without_freeprob(executor.client)
        raise _missing_freeprob(_workers_named(missing, executor.scheduler or "the Dask cluster") if missing
                                else "a worker of the Dask cluster", exc) from None
    reason = str(exc).strip().splitlines()
    reason = f"{type(exc).__name__}: {reason[-1] if reason else ''}".rstrip(": ")
    raise SchedulerError(f"the Dask cluster ({executor.description}) failed after {stats.computed} of "
                         f"{total} cells ({reason}); the finished cells are stored in {store.path} and a "
                         "rerun resumes (check the scheduler and the workers, or run locally without "
                         "--scheduler)") from None


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _label(c):
    p = c.params
    bits = [str(p[k]) if k == "config" else f"{k}={p[k]}" for k in ("config", "n", "beta", "seed") if k in p]
    return " ".join(bits) or c.key
