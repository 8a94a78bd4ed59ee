r"""Shared pieces of the paper's readout comparisons ([HK26]_ §5, appendix D).

Every comparison predicts a readout quantity from the exact token-side law of the MHA
output (:func:`feature_law`, docs/theory.md §4) and measures the same quantity on
sampled finite-n softmax features (:func:`sampled_features`), over several
initialisations with 95% t-intervals (:func:`freeprob.experiments.stats.mean_interval`).
The result is a :class:`Comparison`: a table printed next to the paper's numbers, a JSON
record and a figure.

Conventions (docs/theory.md §4, §8 item 4, the natural choices where the paper is
silent): features ``F = O_full/√m1`` (uncentred output, centred part scaled to mean
squared row norm 1, so the token-side law has mean 1); gradient flow on ``½|Fw − y|²``
with unit learning rate; ridge ``ŵ = (FᵀF + λI)^{−1}Fᵀy`` with penalty ``λ`` in that
normalisation, teacher ``w* ~ N(0, I_{d_O})`` and label noise ``σ``; input width
``d = n`` (orthogonal token rows) and projection parameter count
``2·d·h·d_K + d·h·d_V + h·d_V·d_O`` (Q, K, V, O; fewer with sharing, see
:func:`projection_parameters`).

Measured (sampled) parts go through :func:`measure`: without a session it simply calls the
per-initialisation function; inside :func:`sweep_session` every call is a cell of a sweep
(:func:`freeprob.experiments.sweep.run_cells`), run in this process, on a Dask ``LocalCluster`` or an
existing cluster and stored in a :class:`freeprob.experiments.store.ResultStore` the moment it finishes,
so that an interrupted comparison resumes without recomputing finished initialisations.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from freeprob._extras import require
from freeprob.attention.laws import Architecture, mean_normalized, output_law
from freeprob._checks import check_int
from freeprob._text import text_table
from freeprob.errors import FreeprobValueError
from freeprob.attention.readout import ridge_error
from freeprob.experiments.stats import MeanInterval
from freeprob.sampler.readout import measured_ridge_error
from freeprob.sampler.spectra import Dimensions, sample_objects

__all__ = ["Comparison", "feature_law", "sampled_features", "predicted_ridge_error",
           "measured_ridge_errors", "projection_parameters", "check_size", "RIDGE_PENALTY",
           "RIDGE_NOISE", "DPS", "measure", "sweep_session", "SweepSession", "dims_label", "Plan",
           "check_measurements"]

#: default ridge penalty λ and label-noise standard deviation σ (docs/theory.md §8 item 4:
#: the paper does not give them; every comparison states the values it uses)
RIDGE_PENALTY = 0.1
RIDGE_NOISE = 0.5
#: digits of the exact predictions (far beyond the sampling error)
DPS = 8


@functools.lru_cache(maxsize=256)
def _law_cached(arch: Architecture):
    """Keyed by the layer without sizes: the law depends on the ratios, ``h``, the scheme
    and ``β`` only (not on ``n``)."""
    law = output_law(arch)
    return mean_normalized(law), float(law.moments(1)[1])


@functools.lru_cache(maxsize=64)
def _fw_law_cached(arch: Architecture):
    """The finite-width output law of the sized layer ``arch`` in the features' units
    (divided by the exact mean ``m1`` of the limit law); keyed by the sizes, the scheme and ``β``."""
    from freeprob.laws.operations import dilate
    m1 = output_law(arch.ratios()).moments(1)[1]
    return dilate(output_law(arch, finite_width=True), 1 / m1)


def feature_law(dims: Dimensions, beta, finite_width=False):
    r"""The token-side law of ``F Fᵀ`` for ``F = O_full/√m1`` and the scale ``m1``.

    Parameters
    ----------
    dims : freeprob.sampler.Dimensions
        Sizes and sharing scheme (only the ratios ``γ_K, γ_V, γ_O``, ``h`` and the scheme
        enter the law).
    beta : number or str
        Inverse temperature (exact: ``"0.559"`` is 559/1000).
    finite_width : bool
        False (default): the limit law.  True: the finite-width law of ``out`` at the
        layer's own ``n`` and widths (``output_law(arch, finite_width=True)``,
        :mod:`freeprob.attention.finite_width`, issue 18) divided by the same *limit*
        ``m1`` the features are divided by (so its mean is ``m1^{fw}/m1``, 1 to the
        digits of the chaos weights); cached by the sizes, the scheme and ``β``.

    Returns
    -------
    (Law, float)
        ``mean_normalized(output_law(arch))`` (mean 1, atom at 0 included) and the mean
        ``m1`` of the unnormalised ``out`` law (the feature scale).  Cached by the
        ratios, ``h``, the scheme and ``β`` (the same ratios at another ``n`` reuse it).
        With ``finite_width`` the finite-width law in the same units and the same ``m1``.

    Raises
    ------
    FreeprobValueError
        Bad sizes or ``β``.

    Source: docs/theory.md §3.2 (output law), §4 (normalisation).
    """
    if not (isinstance(dims, Architecture) and dims.sized):
        raise FreeprobValueError(f"feature_law: expected freeprob.sampler.Dimensions, got {dims!r}")
    if not isinstance(finite_width, bool):
        raise FreeprobValueError(f"feature_law: finite_width must be a bool; got {finite_width!r}")
    law, m1 = _law_cached(dims.with_beta(str(beta)).ratios())
    if finite_width:
        law = _fw_law_cached(dims.with_beta(str(beta)))
    return law, m1


def sampled_features(dims: Dimensions, beta, seed, *, model="softmax", m1=None):
    r"""Features ``F = O_full/√m1`` (``n × d_O`` float64) of one initialisation.

    ``seed`` (int ≥ 0) seeds ``numpy.random.default_rng``; ``model`` is ``"softmax"`` or
    ``"ge"`` (:func:`freeprob.sampler.sample_objects`); ``m1`` the scale
    ``feature_law(dims, beta)[1]`` when already known (sweep cells receive it, so that
    worker processes need not compute the exact law).  Raises ``FreeprobValueError``
    for bad sizes, ``β`` or model.  Source: docs/theory.md §1, §4.
    """
    if m1 is None:
        _, m1 = feature_law(dims, beta)
    rng = np.random.default_rng(seed)
    f = sample_objects(dims, float(beta), rng=rng, model=model, objects=("out_full",))["out_full"]
    return f / math.sqrt(m1)


def predicted_ridge_error(dims: Dimensions, beta, penalty=RIDGE_PENALTY, noise=RIDGE_NOISE, *,
                          dps=DPS, finite_width=False):
    r"""Limit of ``E|ŵ − w*|²/d_O`` (:func:`freeprob.attention.readout.ridge_error`) for the features of
    ``dims`` at ``β`` (float); ``finite_width=True``: the same from the finite-width law
    (:func:`feature_law`).  Raises ``FreeprobValueError`` as :func:`feature_law`.
    Source: docs/theory.md §4, §7."""
    law, _ = feature_law(dims, beta, finite_width)
    return float(ridge_error(law, penalty, noise, gamma_o=dims.gamma_o, dps=dps))


def _ridge_error_one(dims, beta, seed, penalty, noise, model, m1):
    """One initialisation of :func:`measured_ridge_errors` (a sweep cell)."""
    return {"ridge_error": measured_ridge_error(sampled_features(dims, beta, seed, model=model, m1=m1),
                                                penalty, noise)}


def measured_ridge_errors(dims: Dimensions, beta, seeds, penalty=RIDGE_PENALTY,
                          noise=RIDGE_NOISE, *, model="softmax", base_seed=0):
    r"""``E_{w*,ε}|ŵ − w*|²/d_O`` on sampled features, one value per initialisation
    ``base_seed + s`` for ``s < seeds`` (list of float; closed form in ``w*, ε``,
    :func:`freeprob.sampler.readout.measured_ridge_error`).  Inside :func:`sweep_session`
    each initialisation is a stored sweep cell (:func:`measure`).  Source: docs/theory.md §4."""
    m1 = feature_law(dims, beta)[1]
    calls = [dict(dims=dims, beta=beta, seed=base_seed + s, penalty=penalty, noise=noise, model=model, m1=m1)
             for s in range(seeds)]
    label = f"ridge {model} {dims_label(dims)} λ={penalty} σ={noise}"
    return [r["ridge_error"] for r in measure(_ridge_error_one, calls, label=label)]


def projection_parameters(dims: Dimensions, d=None):
    r"""Number of projection weights ``W_Q, W_K, W_V, W_O`` for input width ``d``
    (default ``n``): ``d·h·d_K`` (queries) + ``d·g_K·d_K`` (keys) + ``d·g_V·d_V`` (values,
    ``0`` when tied to the keys) + ``h·d_V·d_O`` (output), with ``g_K, g_V`` the numbers of
    distinct key and value matrices (``h`` without sharing, the group count for GQA).
    Source: paper §5.2–5.3 (fixed projection budget)."""
    d = dims.n if d is None else int(d)
    h = dims.heads
    keys = d * dims.key_groups * dims.d_k
    values = 0 if dims.scheme == "tied" else d * dims.value_groups * dims.d_v
    return d * h * dims.d_k + keys + values + h * dims.d_v * dims.d_o


def check_size(name, value, *, minimum=1, multiple_of=None, why="", who=None):
    """An integer ``≥ minimum`` (and a multiple of ``multiple_of`` if given, ``why`` saying
    why) as an ``int``, or ``FreeprobValueError`` naming ``name`` (and ``who``): "`n` must
    be an integer ≥ 128; got 7", "`n` must be a multiple of 64 (d_K = d_V = n/64); got
    129" (:func:`freeprob._checks.check_int`)."""
    value = check_int(value, who, f"`{name}`", minimum=minimum)
    if multiple_of is not None and value % multiple_of:
        where = f"{who}: `{name}`" if who else f"`{name}`"
        raise FreeprobValueError(f"{where} must be a multiple of {multiple_of}{f' ({why})' if why else ''}; "
                                 f"got {value}")
    return value


# ------------------------------------------------------------------ sweeps of measurements

#: version of the cell keys of :func:`measure` (bump when a cell's numbers change meaning)
MEASURE_FORMAT = 1
#: name of the (internal) array that lists a stored cell's outputs, their kinds and order
_MANIFEST = "_outputs"


@dataclass
class SweepSession:
    r"""The sweep that :func:`measure` sends its cells to (see :func:`sweep_session`).

    Attributes
    ----------
    store : freeprob.experiments.store.ResultStore
    executor : freeprob.experiments.sweep.Executor
    sweep : str
        Sweep name (already recorded with :meth:`~freeprob.experiments.store.ResultStore.begin_sweep`).
    progress : bool
        Default of :func:`measure`'s progress bar.
    computed, resumed : int
        Cells computed in this session and cells found already stored.
    keys : list of str
        Keys of every cell measured in this session, in call order.
    """

    store: object
    executor: object
    sweep: str
    progress: bool = False
    computed: int = 0
    resumed: int = 0
    keys: list = field(default_factory=list)
    begin: tuple = None

    def _begin(self):
        """Record the sweep on first use (``begin = (kind, settings)``), so that settings
        refused before any measurement leave no empty sweep in the store."""
        if self.begin is not None:
            kind, settings = self.begin
            self.store.begin_sweep(self.sweep, kind, settings)
            self.begin = None


_SESSION: contextvars.ContextVar = contextvars.ContextVar("freeprob_readout_session", default=None)


@contextlib.contextmanager
def sweep_session(store, executor, sweep_name, *, progress=False, kind=None, settings=None):
    r"""Route every :func:`measure` call inside the ``with`` block through a sweep.

    Parameters
    ----------
    store : freeprob.experiments.store.ResultStore
        Open, writable store; ``sweep_name`` must already be recorded in it
        (:meth:`~freeprob.experiments.store.ResultStore.begin_sweep`) unless ``kind`` is given.
    executor : freeprob.experiments.sweep.Executor
        Where the cells run (this process, a ``LocalCluster`` or an existing cluster).
    sweep_name : str
    progress : bool
        Show a tqdm bar (stderr) per :func:`measure` call.
    kind, settings : str and dict, optional
        With ``kind``: the sweep is recorded (``begin_sweep(sweep_name, kind, settings)``)
        at the first :func:`measure` call; a :class:`freeprob.experiments.store.StoreError` is raised
        there if the store holds that sweep name with other settings.

    Yields
    ------
    SweepSession
        With the running ``computed`` / ``resumed`` cell counts.

    Raises
    ------
    FreeprobValueError
        ``sweep_name`` empty or not a string.

    Source: this project's design (docs/guide/sweeps.md); :func:`freeprob.experiments.sweep.run_cells`.
    """
    if not isinstance(sweep_name, str) or not sweep_name:
        raise FreeprobValueError(f"sweep_session: sweep_name must be a non-empty string; got {sweep_name!r}")
    session = SweepSession(store=store, executor=executor, sweep=sweep_name, progress=bool(progress),
                           begin=None if kind is None else (kind, dict(settings or {})))
    token = _SESSION.set(session)
    try:
        yield session
    finally:
        _SESSION.reset(token)


def dims_label(dims: Dimensions) -> str:
    """Short text naming sizes and scheme, e.g. ``h=4 dK=64 dV=64 dO=256 gqa:2`` (cell labels;
    :meth:`freeprob.attention.Architecture.label`)."""
    return dims.label()


def _plain(v):
    """JSON-able form of a keyword argument of a measured function (``Dimensions`` as a dict)."""
    if isinstance(v, Architecture):
        return v.to_dict()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return v


def _measure_key(label, fn, call):
    from freeprob.experiments.store import code_version
    # the code identity is part of the key: results of other code are never reused or mixed
    payload = json.dumps(dict(v=MEASURE_FORMAT, fn=f"{fn.__module__}.{fn.__qualname__}", label=label,
                              kwargs=_plain(call), code=code_version()), sort_keys=True, default=str)
    return f"{label}/{fn.__name__}/{hashlib.sha1(payload.encode()).hexdigest()[:20]}"


def _measure_params(label, call):
    dims = call.get("dims")
    params = dict(config=label, n=dims.n if isinstance(dims, Architecture) and dims.sized else call.get("n"))
    if "beta" in call:
        params["beta"] = str(call["beta"])
    if "seed" in call:
        params["seed"] = int(call["seed"])
    params.update({k: _plain(v) for k, v in call.items() if k not in ("beta", "seed")})
    return params


def _measure_cell(fn, call):
    r"""Sweep-cell adapter of :func:`measure` (module level: Dask workers import it): run
    ``fn(**call)`` and split its dict into ``quantities`` (real numbers) and ``arrays``
    (float64), plus a manifest array that records the names, kinds and order (and any
    non-finite value, which the store keeps as NULL) so the dict is rebuilt exactly."""
    res = fn(**call)
    if not isinstance(res, dict):
        raise FreeprobValueError(f"measure: {fn.__name__} returned {type(res).__name__}, not a dict")
    quantities, arrays, manifest = {}, {}, []
    for name, v in res.items():
        name = str(name)
        if name == _MANIFEST:
            raise FreeprobValueError(f"measure: {fn.__name__} returned the reserved name {_MANIFEST!r}")
        if isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool | np.bool_):
            v = float(v)
            quantities[name] = v
            manifest.append([name, "float", None if math.isfinite(v) else repr(v)])
        else:
            arrays[name] = np.asarray(v, dtype=np.float64)
            manifest.append([name, "array", None])
    arrays[_MANIFEST] = np.array(json.dumps(manifest))
    return dict(quantities=quantities, arrays=arrays)


def _read_cell(store, key):
    manifest = store.array(key, _MANIFEST)
    if manifest is None:
        raise FreeprobValueError(f"measure: cell {key!r} is not in the store {str(store.path)!r}")
    quantities = store.cell_quantities(key)
    out = {}
    for name, kind, special in json.loads(str(manifest)):
        if kind == "array":
            out[name] = np.asarray(store.array(key, name), dtype=np.float64)
        else:
            v = quantities.get(name)
            out[name] = float(special) if special is not None else float(v)
    return out


#: a batch of measurements estimated to take longer than this (s) shows a progress bar
PROGRESS_AFTER = 60


def check_measurements(groups, *, workers=1, scheduler=None):
    r"""Refuse measurements above the limits of :mod:`freeprob.experiments.cost` before anything runs:
    more than :data:`freeprob.experiments.cost.MAX_CELLS` cells, or one cell estimated above
    :data:`freeprob.experiments.cost.MAX_CELL_SECONDS` or the memory (``--force`` lifts the limits:
    :func:`freeprob.experiments.cost.allow_large`).

    Parameters
    ----------
    groups : iterable of (str, freeprob.sampler.Dimensions, int)
        A label, the sizes and the number of cells (initialisations) of each batch of
        measurements.
    workers : int
        Local processes running cells at once (memory check).
    scheduler : str, optional
        A remote cluster: no memory check (its machines are not this one).

    Returns
    -------
    float
        The largest estimated cell time (s).

    Raises
    ------
    FreeprobValueError
        Too many cells (the message gives the count), or a cell too slow or too large for
        the memory (the estimate); each says what to lower and that ``--force`` runs it.

    Source: :mod:`freeprob.experiments.cost` (measured costs; the limits of ``freeprob verify``).
    """
    from freeprob.experiments import cost

    groups = list(groups)
    count = sum(int(c) for _, _, c in groups)
    cost.check_cell_count(count, hint="lower --seeds", product="configurations × models × initialisations")
    concurrent = None if scheduler is not None else min(int(workers or 1), max(1, count))
    distinct = {}
    for label, d, _ in groups:
        if isinstance(d, Architecture) and d.sized:
            distinct.setdefault(d, label)
    return cost.check_cells([(f"{label} (n={d.n})", d) for d, label in distinct.items()],
                            concurrent=concurrent, models=1, hint="lower --n")


def _check_cost(label, calls, session):
    """:func:`check_measurements` of one :func:`measure` call (on the session's executor)."""
    executor = getattr(session, "executor", None)
    dims = [kw.get("dims") for kw in calls]
    groups = [(label, d, dims.count(d)) for d in dict.fromkeys(dims)]
    return check_measurements(groups, workers=getattr(executor, "workers", 1) if executor is not None else 1,
                              scheduler=getattr(executor, "scheduler", None))


@dataclass(frozen=True)
class Plan:
    r"""What a comparison will measure, from its validated settings (each module's
    ``plan``): checked before a run creates anything (:func:`freeprob.experiments.comparisons.
    check_comparison`).

    Attributes
    ----------
    n, seeds : int
        Tokens and initialisations (defaults filled in).
    groups : tuple of (str, freeprob.sampler.Dimensions, int)
        A label, the sizes and the number of measured cells of each configuration.
    """

    n: int
    seeds: int
    groups: tuple

    @property
    def cells(self) -> int:
        """Measured cells in all (initialisations × models × configurations)."""
        return sum(c for _, _, c in self.groups)


def measure(fn, calls, *, label, progress=None):
    r"""Run a per-initialisation measurement for every keyword set in ``calls``.

    Parameters
    ----------
    fn : callable
        Module-level function (Dask workers import it by name) returning a ``dict`` of
        real numbers and/or arrays; deterministic given its arguments (it seeds its own
        generators from the ``seed`` it is given).
    calls : list of dict
        Keyword arguments of ``fn``, JSON-able apart from ``dims``
        (:class:`freeprob.sampler.Dimensions`); usually ``dims``, ``seed`` and ``beta``.
    label : str
        Names the configuration (the ``config`` column of the store); part of the cell key.
    progress : bool, optional
        A tqdm bar on stderr for the cells (default: the session's setting, and always when
        the batch is estimated to take more than :data:`PROGRESS_AFTER` s).

    Returns
    -------
    list of dict
        ``fn(**call)`` for each call, in call order.  Inside :func:`sweep_session` the
        values are read back from the store: real numbers as ``float``, arrays as float64
        arrays, bit-for-bit the numbers ``fn`` returned (cells already stored are not
        recomputed).  Without a session: ``[fn(**call) for call in calls]``.

    Raises
    ------
    FreeprobValueError
        ``fn`` raised in a cell (after the other cells were run and stored; a rerun
        retries the failed ones), returned something other than a dict, or two calls
        are identical.  Without a session, whatever ``fn`` raises.  Before anything runs:
        cells above the limits of :mod:`freeprob.experiments.cost` (too slow, too large for the memory,
        too many), unless inside :func:`freeprob.experiments.cost.allow_large` (``--force``).

    Notes
    -----
    The cell key is ``label/fn name/sha1`` of the JSON of the keyword arguments (``dims``
    as a dict), the function's qualified name, :data:`MEASURE_FORMAT` and the code
    identity (:func:`freeprob.experiments.store.code_version`): it does not depend on scheduling, the
    same measurement is never computed twice in one store, and results of other code are
    never reused.
    Cell parameters: ``config = label``, ``n = dims.n``, ``beta = str(beta)``, ``seed``
    and the other arguments.

    Source: this project's design (docs/guide/sweeps.md); :func:`freeprob.experiments.sweep.run_cells`.
    """
    calls = list(calls)
    session = _SESSION.get()
    worst = _check_cost(label, calls, session)        # refused before anything runs (freeprob.experiments.cost)
    if session is None:
        return [fn(**kw) for kw in calls]
    from freeprob.experiments.sweep import SweepCell, run_cells

    session._begin()
    keys = [_measure_key(label, fn, kw) for kw in calls]
    cells = [SweepCell(key=k, params=_measure_params(label, kw), fn=_measure_cell,
                       kwargs=dict(fn=fn, call=kw)) for k, kw in zip(keys, calls)]
    # a long batch always shows progress (estimated from freeprob.experiments.cost.cell_cost)
    show = (session.progress or worst * len(calls) > PROGRESS_AFTER) if progress is None else bool(progress)
    stats = run_cells(cells, session.store, session.sweep, session.executor, progress=show, desc=label)
    session.computed += stats.computed
    session.resumed += stats.resumed
    session.keys.extend(keys)
    if stats.failed:
        msg = next(iter(stats.failed.values()))
        raise FreeprobValueError(f"{label}: {len(stats.failed)} of {len(cells)} measurements failed "
                                 f"(first: {msg}); the finished ones are stored and a rerun retries the rest")
    return [_read_cell(session.store, k) for k in keys]


def _cell(v):
    if isinstance(v, MeanInterval):
        return format(v, ".4f")
    if isinstance(v, float):
        return f"{v:.4g}" if (v != 0 and (abs(v) >= 1e4 or abs(v) < 1e-3)) else f"{v:.4f}"
    return str(v)


def _jsonable(v):
    if isinstance(v, MeanInterval):
        return dict(mean=v.mean, half=v.half, n=v.n, level=v.level)
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


@dataclass
class Comparison:
    r"""One comparison of paper §5 / appendix D: what was run and what came out.

    Attributes
    ----------
    key : str
        Command name (``freeprob readout KEY``).
    title : str
    setup : str
        The setup in words (sizes, β, λ, σ, seeds), including the choices the paper
        leaves open.
    columns : list of str
    rows : list of list
        Table body; entries are str, float or :class:`MeanInterval`.
    paper : list of (str, str, str)
        ``(quantity, the paper's figure, ours)``.
    notes : list of str
    data : dict
        Raw numbers (JSON-able after :meth:`to_dict`).
    plot : callable, optional
        ``plot(comparison, fig)`` draws the figure on a matplotlib Figure.
    sweep : dict, optional
        Set by :func:`freeprob.experiments.comparisons.run_comparison` with a store: ``name``,
        ``store`` (path), ``executor``, ``computed`` and ``resumed`` cell counts.  Not part
        of :meth:`to_dict` nor of equality.
    """

    key: str
    title: str
    setup: str
    columns: list
    rows: list
    paper: list
    notes: list = field(default_factory=list)
    data: dict = field(default_factory=dict)
    plot: object = None
    sweep: dict = field(default=None, compare=False, repr=False)

    def table(self) -> str:
        """The printed report: setup, table, ours next to the paper, notes."""
        body = [[_cell(v) for v in r] for r in self.rows]
        out = [f"== {self.title}", "", *_wrap(self.setup), "",
               *text_table(self.columns, body, rule=True).split("\n")]
        if self.paper:
            q = max(len(p[0]) for p in self.paper)
            pw = max(len(p[1]) for p in self.paper)
            out += ["", f"{'quantity'.ljust(q)}  {'paper'.ljust(pw)}  ours"]
            out += [f"{a.ljust(q)}  {b.ljust(pw)}  {c}" for a, b, c in self.paper]
        if self.notes:
            out += [""] + [ln for n in self.notes for ln in _wrap("* " + n)]
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict:
        """JSON-able record (intervals as ``{mean, half, n, level}``)."""
        return _jsonable(dict(key=self.key, title=self.title, setup=self.setup,
                              columns=self.columns, rows=self.rows,
                              paper=[list(p) for p in self.paper], notes=self.notes,
                              data=self.data))

    def save_figure(self, path):
        """Write the figure (PNG/PDF/SVG by suffix) with matplotlib's Agg backend.
        Raises ``FreeprobValueError`` if the comparison has no figure."""
        if self.plot is None:
            raise FreeprobValueError(f"comparison {self.key!r} has no figure")
        Figure = require("matplotlib.figure", "plot").Figure
        fig = Figure(figsize=(7.5, 4.5), layout="constrained")
        self.plot(self, fig)
        fig.savefig(path, dpi=130)
        return Path(path)

    def write(self, directory, *, reports=None):
        r"""Write ``KEY.txt``, ``KEY.json`` and (with a plot) ``KEY.png`` into ``directory``
        (created).

        Parameters
        ----------
        directory : path
        reports : freeprob.experiments.reports.ReportDir, optional
            The report directory of ``freeprob readout`` (for ``directory``): each file is
            recorded in its manifest before it is written.

        Returns
        -------
        list of pathlib.Path
            The paths written.

        Raises
        ------
        OSError
            A file cannot be written.
        """
        d = Path(directory)
        if reports is None:
            d.mkdir(parents=True, exist_ok=True)
        place = reports.target if reports is not None else (lambda rel: d / rel)
        paths = [place(f"{self.key}.txt"), place(f"{self.key}.json")]
        paths[0].write_text(self.table(), encoding="utf-8")
        paths[1].write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")
        if self.plot is not None:
            paths.append(self.save_figure(place(f"{self.key}.png")))
        return paths


def _wrap(text, width=100):
    import textwrap
    return [ln for para in text.split("\n") for ln in (textwrap.wrap(para, width) or [""])]
