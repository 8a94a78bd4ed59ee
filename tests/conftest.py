"""Test configuration: precision reset before each test, Hypothesis profiles, and three session
fixtures that keep tests cheap (issue 27): one BLAS thread, exact-law tabulations of `verify`
computed once, sweeps without `workers` run in this process."""
import os
import sys

import flint
import mpmath
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, max_examples=50)
settings.register_profile("ci", deadline=None, max_examples=30, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def _reset_precision():
    """Every test starts at mpmath's and python-flint's default precision (mpmath conftest)."""
    mpmath.mp.prec = 53
    flint.ctx.prec = 53
    flint.ctx.cap = 10
    yield
    # the library must restore what it changes: a test that leaves a change fails here
    assert mpmath.mp.prec == 53, "mpmath precision was not restored"
    assert flint.ctx.prec == 53 and flint.ctx.cap == 10, "python-flint context was not restored"


@pytest.fixture(scope="session", autouse=True)
def _one_blas_thread():
    """BLAS on one thread in this test process (threadpoolctl), as the derivation scripts
    (tests/test_derivations.py) and the subprocess tests (``OPENBLAS_NUM_THREADS=1``) have it.

    The sampled matrices of the tests are small (n ≤ 1024): a multi-threaded OpenBLAS adds
    CPU (threads spin-waiting inside LAPACK) and no check: the suite's figure of merit is its
    CPU time (tests/test_sampler.py: ~5 s on one thread, 15–25 s multi-threaded on a loaded
    2-core machine).  Forked workers (:class:`freeprob.experiments.sweep.Executor`) inherit
    the limit; a sweep's own ``blas_threads`` still sets its cells' limit inside it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:             # the sweep extra is not installed: BLAS as it is
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(scope="session", autouse=True)
def _tabulated_laws_computed_once(tmp_path_factory):
    """Cache the exact-law tabulations of ``freeprob verify`` for the whole session.

    Dozens of tests run ``verify`` in this process on the same tiny configurations, each in
    a fresh store, so each tabulated the same exact laws again (the finite-width law of the
    ``tiny`` layer costs ~5 s of CPU, the plain one ~1 s).  The tabulation
    (``freeprob.experiments.verify_laws.theory_job``, called through ``verify``'s name ``theory_job``) is a pure function of its arguments; here
    each distinct call is computed once and later calls load its result from a session
    folder (a file, not memory: in-process runs execute their cells in a forked worker
    process, :class:`freeprob.experiments.sweep.Executor`).  The store, the sweep and their
    counts (``laws_computed``, ``computed``, ``resumed``) are untouched: a cell is still
    planned, run and stored as before; only the work inside the worker function is shared.
    Dask workers and subprocesses are not affected (the wrapper pickles by reference to the
    original function), so runs there still compute every law.
    """
    import functools
    import hashlib
    import importlib
    import pickle

    # imported here only when a collected test module uses verify (it costs ~2 s of CPU)
    if not any(m.startswith(("freeprob.experiments.verify", "freeprob.cli")) for m in sys.modules):
        yield
        return
    verify_mod = importlib.import_module("freeprob.experiments.verify")
    # renamed or moved: fail here, loudly, rather than silently cache nothing
    assert hasattr(verify_mod, "theory_job"), "conftest: freeprob.experiments.verify.theory_job is gone"
    job = verify_mod.theory_job
    folder = tmp_path_factory.mktemp("tabulated-laws")

    @functools.wraps(job)
    def cached(*args, **kwargs):
        key = repr((args, sorted(kwargs.items())))
        path = folder / (hashlib.sha256(key.encode()).hexdigest() + ".pickle")
        if path.exists():
            return pickle.loads(path.read_bytes())
        result = job(*args, **kwargs)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(result))
        tmp.replace(path)
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(verify_mod, "theory_job", cached)
        yield


@pytest.fixture(scope="session", autouse=True)
def _sweeps_run_in_this_process_unless_asked():
    """In this test process a sweep without ``workers`` or ``scheduler`` runs its cells in
    this process (``workers = 1``) instead of the default of the command line (a Dask
    ``LocalCluster`` of one worker process per core): starting a cluster costs ~8–15 s of CPU
    (two fresh interpreters importing freeprob, which then tabulate the exact laws again), and
    most tests that leave ``workers`` out check the run's results, files and messages, which
    are the same on every executor (tests/test_verify.py
    ``test_local_cluster_gives_the_sequential_numbers``, tests/test_readout_sweep.py).  The
    cluster itself is tested where a test asks for it (``workers=2``, ``--workers 2``, an
    explicit ``LocalCluster``), and the command line's default in the subprocess tests.
    """
    if "freeprob.experiments.sweep" not in sys.modules:
        yield
        return
    sweep_mod = sys.modules["freeprob.experiments.sweep"]
    check = getattr(sweep_mod, "check_executor", None)
    assert check is not None, "conftest: freeprob.experiments.sweep.check_executor is gone"

    def in_process_by_default(workers=None, scheduler=None):
        return check(1 if workers is None and scheduler is None else workers, scheduler)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sweep_mod, "check_executor", in_process_by_default)
        yield
