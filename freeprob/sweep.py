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
  address fails within :data:`CONNECT_TIMEOUT` seconds, a cluster without workers or
  whose workers run another freeprob version is refused.

Randomness never depends on scheduling: a cell draws from
``numpy.random.default_rng(cell_seed(sweep_seed, key))`` (:func:`cell_seed`: the sweep
seed and a hash of the cell key).

Source: this project's design (README, "Sweeps"); Dask distributed,
https://distributed.dask.org (``LocalCluster``, ``Client``, ``as_completed``).
"""
from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import socket
import sys
import time
from dataclasses import dataclass, field

from .errors import FreeprobValueError

__all__ = ["SweepCell", "Executor", "SchedulerError", "run_cells", "pending_cells", "max_local_workers",
           "cell_seed", "SweepStats",
           "CONNECT_TIMEOUT", "check_workers"]

#: seconds to reach a scheduler given with ``--scheduler`` (fail fast)
CONNECT_TIMEOUT = 10
#: seconds to wait for a first worker on a reachable scheduler
WORKER_WAIT = 30
#: seconds for a LocalCluster to start its workers
LOCAL_START_TIMEOUT = 120


class SchedulerError(FreeprobValueError):
    """The Dask scheduler cannot be used (unreachable, no workers, other freeprob
    version, or workers that cannot start); the message says which."""


def max_local_workers() -> int:
    """The most local worker processes allowed: ``max(8, 2 × cores)`` (more only
    oversubscribe the cores: each is a Python process with its own memory).  Source: this
    project's sweep design (README, "Sweeps")."""
    return max(8, 2 * (os.cpu_count() or 1))


def check_workers(workers, who="workers"):
    """``workers`` as an int in ``[1, max_local_workers()]``.

    Raises :class:`FreeprobValueError` (naming ``who`` and the allowed range) otherwise.
    Source: this project's sweep design (README, "Sweeps")."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise FreeprobValueError(f"{who} must be an integer ≥ 1; got {workers!r}")
    top = max_local_workers()
    if workers > top:
        raise FreeprobValueError(f"{who} = {workers} is more than this machine's {os.cpu_count()} cores can "
                                 "run "
                                 f"(at most {top} local worker processes); for more, start a Dask cluster "
                                 "and pass --scheduler ADDRESS")
    return workers


def cell_seed(sweep_seed, key) -> list:
    """Entropy for ``numpy.random.default_rng``: ``[sweep_seed, w0, w1, w2, w3]`` with
    ``w_i`` the 32-bit words of the SHA-256 of the cell key, so that a cell's draws
    depend only on the sweep seed and the cell (never on worker, order or timing).

    >>> cell_seed(2026, "gpt2-small/n512/beta1/seed0")[:2]
    [2026, 907597370]
    """
    if isinstance(sweep_seed, bool) or not isinstance(sweep_seed, int) or sweep_seed < 0:
        raise FreeprobValueError(f"the sweep seed must be an integer ≥ 0; got {sweep_seed!r}")
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


def _run_cell(fn, kwargs, blas_threads):
    """Worker side: run one cell with a BLAS thread limit; returns
    ``(result, seconds, host, None)`` or ``(None, seconds, host, error text)``."""
    from threadpoolctl import threadpool_limits
    t = time.perf_counter()
    try:
        with threadpool_limits(limits=blas_threads):
            res = fn(**kwargs)
        return res, time.perf_counter() - t, socket.gethostname(), None
    except Exception as exc:      # reported by run_cells, the cell stays undone
        return None, time.perf_counter() - t, socket.gethostname(), f"{type(exc).__name__}: {exc}"


def _worker_version():
    from . import __version__
    from .store import STORE_FORMAT
    return f"{__version__}/store{STORE_FORMAT}"


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
    """Ask whatever listens at ``address`` who it is (Dask's ``identity`` message), with a
    hard deadline: a port that accepts connections but is not a Dask scheduler (a web
    server, a silent listener, another protocol) must not hang the command."""
    import asyncio

    from distributed.comm import connect

    async def ask():
        comm = await connect(address, timeout=CONNECT_TIMEOUT)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        info = asyncio.run(asyncio.wait_for(ask(), CONNECT_TIMEOUT))
    except BaseException as exc:         # noqa: BLE001 — anything from a foreign server
        if isinstance(exc, KeyboardInterrupt):
            raise
        why = "no answer" if isinstance(exc, asyncio.TimeoutError | TimeoutError) else type(exc).__name__
        raise SchedulerError(f"{address} does not answer as a Dask scheduler within {CONNECT_TIMEOUT} s "
                             f"({why}); check the address (the scheduler's port, 8786 by default)") from None
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
        after :data:`WORKER_WAIT` s, workers running another freeprob version, local
        workers that fail to start, or a call from a spawned worker process (a script
        that starts a sweep must guard it with ``if __name__ == "__main__":``).
    FreeprobValueError
        ``workers`` or ``blas_threads`` not an integer ≥ 1.

    Use as a context manager; :meth:`close` shuts down a local cluster.
    """

    def __init__(self, workers=None, scheduler=None, blas_threads=None):
        cores = os.cpu_count() or 1
        self.scheduler = None if scheduler is None else _check_address(scheduler)
        self.workers = check_workers(workers if workers is not None else min(cores, 8))
        if blas_threads is not None:
            check_workers(blas_threads, "blas_threads")
        self.client = self.cluster = None
        if self.scheduler is not None:
            self._connect()
            self.blas_threads = blas_threads
        elif self.workers == 1:
            self.blas_threads = blas_threads
        else:
            self._local()
            self.blas_threads = blas_threads or max(1, cores // self.workers)

    @property
    def description(self):
        """One line: where the cells run."""
        if self.scheduler is not None:
            return f"Dask cluster at {self.scheduler} ({self.workers} workers)"
        if self.cluster is None:
            return "this process (1 worker)"
        return f"Dask LocalCluster, {self.workers} worker processes × {self.blas_threads} BLAS threads"

    def _connect(self):
        from distributed import Client
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
            versions = self.client.run(_worker_version)
            ours = _worker_version()
            other = {w: v for w, v in versions.items() if v != ours}
            if other:
                w, v = next(iter(other.items()))
                raise SchedulerError(f"worker {w} of {self.scheduler} runs freeprob {v}, this is {ours}: "
                                     "install "
                                     "the same freeprob version on every worker (results are never mixed)")
            self.workers = len(versions)
        except BaseException:
            self.close()
            raise

    def _local(self):
        import logging

        from distributed import Client, LocalCluster
        if multiprocessing.parent_process() is not None:
            raise SchedulerError(
                "a sweep was started inside a spawned worker process: a script that runs verify() or a "
                "sweep must protect the call with `if __name__ == \"__main__\":` (the workers re-import the "
                "script)")
        try:
            # memory_limit=0: Dask's default per-worker cap (RAM / workers) would restart a
            # worker holding one large-n cell (n = 8192: a few GB); the OS decides instead.
            # Logs below CRITICAL silenced: on Ctrl-C the workers log the scheduler's
            # shutdown as errors; a cell that fails is reported by run_cells instead.
            self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=logging.CRITICAL,
                                        timeout=LOCAL_START_TIMEOUT, memory_limit=0)
            self.client = Client(self.cluster, set_as_default=False)
        except Exception as exc:
            self.close()
            raise SchedulerError(f"the local Dask workers failed to start ({type(exc).__name__}: {exc}); "
                                 "if this is a script, protect the sweep with "
                                 "`if __name__ == \"__main__\":`; "
                                 "or run with --workers 1") from None

    def close(self):
        """Shut down the client and a local cluster (idempotent)."""
        for obj in (self.client, self.cluster):
            if obj is not None:
                try:
                    obj.close()
                except Exception:       # shutting down after an interrupt: best effort
                    pass
        self.client = self.cluster = None

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
    store : freeprob.store.ResultStore
    sweep : str
        Sweep name (from :meth:`ResultStore.begin_sweep`).
    executor : Executor
    progress : bool
        A tqdm bar on stderr: cells done, rate and time left.
    desc : str
        Label of the bar.
    on_result : callable, optional
        ``on_result(cell, result)`` after a cell is stored (in this process).

    Returns
    -------
    SweepStats
        A failed cell (its function raised) is recorded in ``failed`` and left undone,
        so that a rerun retries it; the other cells are still run and stored.

    Raises
    ------
    FreeprobValueError
        Duplicate keys.
    KeyboardInterrupt
        Passed on after cancelling the pending cells; every finished cell is stored.
    """
    from tqdm import tqdm

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

    def record(cell, out):
        res, seconds, host, err = out
        if err is not None:
            stats.failed[cell.key] = err
            return
        if cell.kind == "object":
            store.put_object(cell.key, cell.params.get("object_kind", "object"), res)
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

    bar = tqdm(total=len(cells), initial=stats.resumed, desc=desc, unit="cell", file=sys.stderr,
               disable=not progress, dynamic_ncols=True, smoothing=0.1)
    try:
        if executor.client is None:
            for c in sorted(todo, key=lambda c: -c.priority):
                bar.set_postfix_str(_label(c))
                record(c, _run_cell(c.fn, c.kwargs, executor.blas_threads))
                bar.update()
        else:
            from distributed import as_completed
            futures = {}
            for c in todo:
                f = executor.client.submit(_run_cell, c.fn, c.kwargs, executor.blas_threads,
                                           key=f"freeprob-{sweep}-{c.key}", priority=c.priority, pure=False)
                futures[f] = c
            try:
                for f in as_completed(list(futures), loop=executor.client.loop):
                    c = futures.pop(f)
                    try:
                        out = f.result()
                    except Exception as exc:        # a worker died or the cluster lost the task
                        out = (None, 0.0, "?", f"{type(exc).__name__}: {exc}")
                    record(c, out)
                    f.release()
                    bar.set_postfix_str(_label(c))
                    bar.update()
            finally:
                if futures:
                    executor.client.cancel(list(futures))
    finally:
        bar.close()
        stats.elapsed = time.perf_counter() - t0
    return stats


def _label(c):
    p = c.params
    bits = [str(p[k]) if k == "config" else f"{k}={p[k]}" for k in ("config", "n", "beta", "seed") if k in p]
    return " ".join(bits) or c.key
