r"""The paper's readout comparisons ([HK26]_ §5 and appendix D), one module
each, every one predicting from the exact laws and measuring on finite-n softmax features.

========================  ==================================================  ============
key                       comparison                                          module
========================  ==================================================  ============
``head-count``            loss plateau = zero mass; slow vs rapid decay       head_count
``width-allocation``      coefficient-error peaks at a 6n² budget             width_allocation
``temperature``           (64,192) vs (128,128) error ratio across β          temperature
``sharing``               across-head K/V sharing; time to loss 0.1           sharing
``gqa-vs-tying``          GQA vs within-head K/V tying, h = 2..32             gqa_tying
========================  ==================================================  ============

Each module has ``run(*, quick=False, n=None, seeds=None, progress=None) -> Comparison``
(:class:`freeprob.experiments.comparisons._common.Comparison`: ``.table()``, ``.to_dict()``,
``.save_figure(path)``, ``.write(dir)``) and ``plan(*, quick, n, seeds)``, its validated
settings and measured cells (:class:`freeprob.experiments.comparisons._common.Plan`), which
:func:`check_comparison` checks against the cost limits before a run creates anything;
``freeprob readout KEY`` runs it from the shell.
:func:`run_comparison` with a ``store`` runs the measured initialisations as sweep cells
(in this process, on a Dask ``LocalCluster`` or an existing cluster), each stored as it
finishes, so an interrupted comparison resumes.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
from types import SimpleNamespace as Namespace

from freeprob.errors import FreeprobValueError
from freeprob.experiments.comparisons._common import Comparison, Plan, check_measurements, sweep_session

__all__ = ["COMPARISONS", "run_comparison", "check_comparison", "sweep_name", "Comparison", "Plan",
           "SETTINGS"]

#: the settings that name a comparison's sweep (:func:`sweep_name`)
SETTINGS = ("quick", "n", "seeds")

#: key -> (module name, one-line description)
COMPARISONS = {
    "head-count": ("head_count", "loss plateau set by the zero mass; slow vs rapid decay (§5.1, D.2)"),
    "width-allocation": ("width_allocation",
                         "coefficient-error peaks at a fixed 6n² projection budget (§5.2, D.3)"),
    "temperature": ("temperature", "(d_QK, d_V) = (64,192) vs (128,128) error ratio across β (§5.2, D.4)"),
    "sharing": ("sharing", "across-head K/V sharing and the time to relative loss 0.1 (§5.3, D.5)"),
    "gqa-vs-tying": ("gqa_tying", "GQA vs within-head K/V tying at equal widths and budget (§5.3, D.6)"),
}


def sweep_name(key, settings) -> str:
    """``readout-KEY-HASH``: the store's sweep name of comparison ``key`` run with
    ``settings`` (``quick``, ``n``, ``seeds``) by this code (HASH = 8 hex digits of the
    SHA-1 of the settings and :func:`freeprob.experiments.store.code_version`: a run of other code is
    another sweep, never mixed with this one)."""
    from freeprob.experiments.store import code_version
    plain = {k: settings.get(k) for k in SETTINGS}
    plain["quick"] = bool(plain["quick"])
    text = json.dumps(plain, sort_keys=True) + code_version()
    return f"readout-{key}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def _module(key):
    if key not in COMPARISONS:
        raise FreeprobValueError(f"unknown comparison {key!r}; known: {', '.join(COMPARISONS)}")
    return importlib.import_module(f".{COMPARISONS[key][0]}", __name__)


def check_comparison(key, *, quick=False, n=None, seeds=None, workers=1, scheduler=None, force=False) -> Plan:
    r"""Validate a comparison's settings and refuse sizes above the cost limits, computing
    and creating nothing (what ``freeprob readout`` does before it opens a store).

    Parameters
    ----------
    key : str
        A key of :data:`COMPARISONS`.
    quick, n, seeds
        The settings of the module's ``run``.
    workers : int
        Local processes running cells at once (memory check).
    scheduler : str, optional
        A remote cluster: no memory check.
    force : bool
        Lift the cost limits (``--force``; also inside :func:`freeprob.experiments.cost.allow_large`).

    Returns
    -------
    Plan
        The module's ``plan``: ``n``, ``seeds`` and the measured cells.

    Raises
    ------
    FreeprobValueError
        Unknown key; ``n`` or ``seeds`` the comparison does not allow (the message says
        what it allows); more than :data:`freeprob.experiments.cost.MAX_CELLS` measured cells, or one
        cell estimated above :data:`freeprob.experiments.cost.MAX_CELL_SECONDS` or the memory (the
        message says what to lower and that ``--force`` runs it anyway).

    Source: this project's design (a refused run creates nothing; docs/guide/sweeps.md);
    :mod:`freeprob.experiments.cost`.
    """
    from freeprob.experiments.cost import allow_large
    plan = _module(key).plan(quick=quick, n=n, seeds=seeds)
    with allow_large() if force else contextlib.nullcontext():
        check_measurements(plan.groups, workers=workers, scheduler=scheduler)
    return plan


def run_comparison(key, *, workers=None, scheduler=None, store=None, executor=None, **kwargs) -> Comparison:
    r"""Run the comparison named ``key`` (see :data:`COMPARISONS`).

    Parameters
    ----------
    key : str
    workers : int ≥ 1, optional
        Local Dask worker processes for the measured parts (default 1: this process).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``) instead.
    store : freeprob.experiments.store.ResultStore or path, optional
        Result store (a ``.sqlite`` file or a directory holding ``results.sqlite``).  With a
        store, every measured initialisation is a sweep cell (sweep
        :func:`sweep_name`, kind ``"readout"``) written the moment it finishes; cells already
        stored are read back, not recomputed, so an interrupted run resumes.  The final
        table is stored as the sweep's report.  ``workers``/``scheduler`` without a store
        use a temporary one (deleted afterwards).
    executor : freeprob.experiments.sweep.Executor, optional
        An open executor to use (and leave open) instead of ``workers``/``scheduler``.
    **kwargs
        Keyword arguments of the module's ``run`` (``quick``, ``n``, ``seeds``, ``progress``).

    Returns
    -------
    Comparison
        With a store, ``.sweep`` holds ``name``, ``store``, ``executor``, ``computed`` and
        ``resumed`` (cell counts); the numbers are those of the run without a store.

    Raises
    ------
    FreeprobValueError
        Unknown key (the message lists the known ones), bad settings of the comparison,
        both ``workers`` and ``scheduler`` (or ``executor`` with either), a failed cell.
    freeprob.experiments.store.StoreError
        Not a freeprob store, another store format, or not writable.
    freeprob.experiments.sweep.SchedulerError
        Unreachable scheduler (within :data:`freeprob.experiments.sweep.CONNECT_TIMEOUT` s), no workers,
        other freeprob version on the workers, local workers that cannot start.

    Source: this project's design (docs/guide/sweeps.md); :func:`freeprob.experiments.sweep.run_cells`.
    """
    mod = _module(key)
    if workers is not None and scheduler is not None:
        raise FreeprobValueError("give workers (local processes) or scheduler (an existing cluster), "
                                 "not both")
    if executor is not None and (workers is not None or scheduler is not None):
        raise FreeprobValueError("give executor, or workers/scheduler, not both")
    if store is None and executor is None and workers is None and scheduler is None:
        return mod.run(**kwargs)
    # refused settings and sizes create nothing (no store, no workers)
    on = executor if executor is not None else Namespace(workers=workers or 1, scheduler=scheduler)
    check_comparison(key, quick=kwargs.get("quick", False), n=kwargs.get("n"), seeds=kwargs.get("seeds"),
                     workers=on.workers, scheduler=on.scheduler)
    if store is None:
        import tempfile
        with tempfile.TemporaryDirectory(prefix="freeprob-readout-") as tmp:
            return run_comparison(key, workers=workers, scheduler=scheduler, store=tmp, executor=executor,
                                  **kwargs)
    from freeprob.experiments.store import ResultStore
    from freeprob.experiments.sweep import Executor

    settings = {k: kwargs.get(k) for k in SETTINGS}
    settings["quick"] = bool(settings["quick"])
    name = sweep_name(key, settings)
    with contextlib.ExitStack() as stack:
        if not isinstance(store, ResultStore):
            store = stack.enter_context(ResultStore(store))
        if executor is None:
            executor = stack.enter_context(Executor(workers=1 if workers is None and scheduler is None
                                                    else workers, scheduler=scheduler))
        with sweep_session(store, executor, name, kind="readout",
                           settings=dict(comparison=key, **settings)) as session:
            comp = mod.run(**kwargs)
            session._begin()
        store.set_report(name, comp.table())
        comp.sweep = dict(name=name, store=str(store.path), executor=executor.description,
                          computed=session.computed, resumed=session.resumed)
    return comp
