"""Sweep execution (:mod:`freeprob.experiments.sweep`): seeding, executors, failures, schedulers.

Real Dask clusters throughout: a LocalCluster of worker processes, and a threaded one
reached by its address standing in for "an existing cluster".  The toy cell functions
live in this module, which the worker processes cannot import: it is registered with
cloudpickle to travel by value.
"""
import contextlib
import socket
import sys
import threading
import time
import warnings

import cloudpickle

import numpy as np
import pytest

from freeprob.experiments import sweep as sweep_mod
from freeprob.errors import FreeprobValueError
from freeprob.experiments.store import ResultStore
from freeprob.experiments.sweep import Executor, SchedulerError, SweepCell, cell_seed, run_cells

cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _draw(entropy, size):
    """A cell: a few normal draws from the cell's own generator."""
    x = np.random.default_rng(entropy).standard_normal(size)
    return dict(quantities={"mean": float(x.mean()), "max": float(x.max())}, arrays={"x": x})


def _fails_on(entropy, bad):
    if bad:
        raise ValueError("this cell is broken on purpose")
    return _draw(entropy, 4)


def _cells(n=6, base_seed=7, fn=_draw, **extra):
    return [SweepCell(key=f"c{i}", params=dict(config="toy", n=4, beta="1", seed=i),
                      fn=fn, kwargs=dict(entropy=cell_seed(base_seed, f"toy/{i}"), **extra,
                                         **({} if extra else {"size": 5})))
            for i in range(n)]


def _stored(path, keys):
    with ResultStore(path, readonly=True) as st:
        return {k: (st.cell_quantities(k), st.array(k, "x").tolist()) for k in keys}


def test_cell_seed_depends_on_sweep_seed_and_key_only():
    assert cell_seed(1, "a") == cell_seed(1, "a")
    assert cell_seed(1, "a") != cell_seed(2, "a") and cell_seed(1, "a") != cell_seed(1, "b")
    assert cell_seed(5, "k")[0] == 5 and all(0 <= w < 2 ** 32 for w in cell_seed(5, "k"))
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(FreeprobValueError, match="sweep seed"):
            cell_seed(bad, "a")


def test_local_cluster_matches_in_process(tmp_path):
    cells = _cells()
    with ResultStore(tmp_path / "seq.sqlite") as st, Executor(workers=1) as ex:
        st.begin_sweep("s", "toy", {})
        seq = run_cells(cells, st, "s", ex, progress=False)
    # Dask's default port 8787 held by someone else (here, or by the program that already holds
    # it): the cluster starts without "Port 8787 is already in use" (issue 26)
    busy = socket.socket()
    with contextlib.suppress(OSError):
        busy.bind(("127.0.0.1", 8787))
        busy.listen()
    with busy, warnings.catch_warnings(record=True) as caught, \
            ResultStore(tmp_path / "par.sqlite") as st, Executor(workers=2) as ex:
        warnings.simplefilter("always")
        assert ex.cluster is not None and len(ex.client.scheduler_info()["workers"]) == 2
        st.begin_sweep("s", "toy", {})
        par = run_cells(list(reversed(cells)), st, "s", ex, progress=False)
    assert not [w for w in caught if "already in use" in str(w.message)]
    assert seq.computed == par.computed == 6 and not seq.failed and not par.failed
    keys = [c.key for c in cells]
    assert _stored(tmp_path / "seq.sqlite", keys) == _stored(tmp_path / "par.sqlite", keys)
    # the values are the cell's own draws (not shared between cells)
    vals = _stored(tmp_path / "seq.sqlite", keys)
    x0 = np.random.default_rng(cell_seed(7, "toy/0")).standard_normal(5)
    assert vals["c0"][1] == x0.tolist() and vals["c0"][0]["mean"] == pytest.approx(x0.mean(), abs=0)
    assert len({tuple(v[1]) for v in vals.values()}) == 6


def test_rerun_skips_done_cells_and_retries_failed_ones(tmp_path):
    cells = [SweepCell(key=f"c{i}", params=dict(seed=i), fn=_fails_on,
                       kwargs=dict(entropy=cell_seed(1, str(i)), bad=(i == 2))) for i in range(4)]
    with ResultStore(tmp_path / "r.sqlite") as st, Executor(workers=1) as ex:
        st.begin_sweep("s", "toy", {})
        first = run_cells(cells, st, "s", ex, progress=False)
        assert first.computed == 3 and list(first.failed) == ["c2"]
        assert "this cell is broken on purpose" in first.failed["c2"]
        assert st.done_keys("s") == {"c0", "c1", "c3"}
        fixed = [SweepCell(c.key, c.params, c.fn, dict(c.kwargs, bad=False)) for c in cells]
        second = run_cells(fixed, st, "s", ex, progress=False)
        assert second.computed == 1 and second.resumed == 3 and not second.failed
    with pytest.raises(FreeprobValueError, match="unique"):
        with ResultStore(tmp_path / "d.sqlite") as st:
            run_cells(cells[:1] * 2, st, "s", Executor(workers=1), progress=False)


def test_existing_cluster_by_address(tmp_path):
    from distributed import LocalCluster
    cells = _cells(4)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      **sweep_mod.LOCAL_CLUSTER_OPTIONS) as cluster:
        with ResultStore(tmp_path / "a.sqlite") as st, Executor(scheduler=cluster.scheduler_address) as ex:
            assert ex.workers == 2 and cluster.scheduler_address in ex.description
            st.begin_sweep("s", "toy", {})
            stats = run_cells(cells, st, "s", ex, progress=False)
    assert stats.computed == 4
    with ResultStore(tmp_path / "b.sqlite") as st, Executor(workers=1) as ex:
        st.begin_sweep("s", "toy", {})
        run_cells(cells, st, "s", ex, progress=False)
    keys = [c.key for c in cells]
    assert _stored(tmp_path / "a.sqlite", keys) == _stored(tmp_path / "b.sqlite", keys)


def test_workers_of_another_version_are_refused(monkeypatch):
    from distributed import LocalCluster
    real = sweep_mod._worker_version

    def fake():   # the workers of this threaded cluster are threads of this process
        return "0.0.0/store0" if threading.current_thread() is not threading.main_thread() else real()

    monkeypatch.setattr(sweep_mod, "_worker_version", fake)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      **sweep_mod.LOCAL_CLUSTER_OPTIONS) as cluster:
        with pytest.raises(SchedulerError,
                           match=r"runs other freeprob code \(0.0.0/store0\).*Install the same"):
            Executor(scheduler=cluster.scheduler_address)


@pytest.mark.parametrize("address,match", [
    ("tcp://127.0.0.1:1", "cannot reach the Dask scheduler at tcp://127.0.0.1:1"),
    ("localhost:1", "cannot reach"),
    ("not an address", "must be an address like tcp://"),
    ("", "must be an address like tcp://"),
])
def test_unreachable_or_malformed_scheduler_fails_fast(address, match):
    t = time.monotonic()
    with pytest.raises(SchedulerError, match=match):
        Executor(scheduler=address)
    assert time.monotonic() - t < 30          # a guard against hanging, not a speed target


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2", "too many"])
def test_bad_worker_counts(bad):
    if bad == "too many":       # more local processes than the machine can run: refused, not started
        bad = sweep_mod.max_local_workers() + 1
    with pytest.raises(FreeprobValueError, match="workers"):
        Executor(workers=bad)


def test_a_port_that_is_not_a_dask_scheduler_fails_fast():
    # a silent listener and a web server accept connections but never answer Dask's
    # handshake: refused within the connect timeout instead of hanging
    import http.server
    import socket
    silent = socket.create_server(("127.0.0.1", 0))
    web = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        for port in (silent.getsockname()[1], web.server_address[1]):
            t = time.monotonic()
            with pytest.raises(SchedulerError, match="does not answer as a Dask scheduler"):
                Executor(scheduler=f"tcp://127.0.0.1:{port}")
            assert time.monotonic() - t < 30          # a guard against hanging
    finally:
        web.shutdown()
        silent.close()


def test_a_worker_address_is_not_a_scheduler():
    from distributed import LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      **sweep_mod.LOCAL_CLUSTER_OPTIONS) as cluster:
        worker = next(iter(cluster.scheduler.workers))
        with pytest.raises(SchedulerError, match="is not a Dask scheduler .*'Worker'"):
            Executor(scheduler=worker)
