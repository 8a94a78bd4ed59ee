"""Closing a Dask client or local cluster within a bounded time, also one whose start was
cut short: a command that stops (Ctrl-C, SIGTERM) must exit within seconds, with no
traceback from Dask's exit handler.

Source: this project's design (docs/guide/cli.md, "Interrupting and progress"); Dask distributed,
https://distributed.dask.org (``Client.close(timeout=…)``, ``SpecCluster.close(timeout=…)``).
"""
from __future__ import annotations

import contextlib
import os
import signal

__all__ = ["CLOSE_TIMEOUT", "close_bounded", "close_started_clusters"]

#: seconds to close a client or a local cluster; past them its worker processes are killed
#: (a stop must not hang on a cluster that was interrupted while starting)
CLOSE_TIMEOUT = 5


def _spec_cluster():
    import distributed
    return distributed.SpecCluster


def _worker_pids(cluster):
    """Process ids of a LocalCluster's worker processes (those started so far)."""
    pids = []
    for nanny in list((getattr(cluster, "workers", None) or {}).values()):
        with contextlib.suppress(Exception):
            pid = nanny.process.process.pid
            if pid:
                pids.append(pid)
    return pids


def close_bounded(obj, timeout=CLOSE_TIMEOUT):
    """Close a Dask ``Client`` or ``LocalCluster`` within ``timeout`` seconds, best effort
    (this runs after an interrupt); a cluster that does not close in time (or fails to)
    has its worker processes killed (SIGKILL) and is taken out of Dask's exit handler
    (``distributed.deploy.spec.close_clusters``, which would wait for it again and fail).
    Returns whether it closed in time.  Raises nothing.  Source: docs/guide/cli.md (interruption)."""
    pids = _worker_pids(obj)
    try:
        obj.close(timeout=timeout)
        return True
    except Exception:               # noqa: BLE001 — a timeout, or a cluster broken by the interrupt
        pass
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        _spec_cluster()._instances.discard(obj)
    with contextlib.suppress(Exception):
        obj._loop_runner.stop(timeout=1)
    return False


def close_started_clusters(before, timeout=CLOSE_TIMEOUT):
    """Close (bounded, :func:`close_bounded`) every Dask cluster created since the set
    ``before`` of ``SpecCluster._instances`` that is not closed, e.g. a ``LocalCluster``
    whose constructor was cut short, and take it out of Dask's exit handler.  Raises
    nothing.  Source: docs/guide/cli.md (interruption)."""
    with contextlib.suppress(Exception):
        SpecCluster = _spec_cluster()
        for cluster in set(SpecCluster._instances) - set(before):
            if str(getattr(cluster, "status", "")) != "Status.closed":
                close_bounded(cluster, timeout)
            SpecCluster._instances.discard(cluster)
