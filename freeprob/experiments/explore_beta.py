r"""``freeprob explore beta-growth``: the largest inverse temperature ``β*(n, ε)`` at which
softmax attention stays within ``ε`` (relative W1) of its Gaussian equivalent, and how
``β*`` grows with ``n`` (paper §6.2: the admissible growth of ``β``; candidate
``β = Θ(√log n)``).

Object: the concatenated attention Gram (theory.md §1, ``concat``) of two width
families at ``γ_K = h d_K/n = 1/2``:

* ``proportional``: ``h = 4``, ``d_K = n/8`` (every width ∝ n);
* ``fixed_head``: ``d_K = 64``, ``h = n/128`` heads (at least 1).

For each ``(family, n)`` the frontier evaluates ``β ↦ relW1`` (mean over ``seeds``
initialisations) of softmax against the GE law (exact core, tabulated) and against the GE
sample (coupled, same Q, K), on a coarse geometric grid of ``β``, then bisects inside the
bracketing grid interval for every ``ε`` (``steps`` halvings): ``β*`` is the midpoint of
the final interval ``[beta_low, beta_high]`` (``beta_low`` within ``ε``, ``beta_high``
not; a frontier below or above the grid is reported as ``[0, β_min]`` with ``β*`` NaN, or
``[β_max, inf]``).  Every evaluation (one β, all seeds) is a stored sweep cell
(:func:`evaluation_job`; :func:`run_beta_growth` runs the grid, then one round of
midpoints after the other).  Diagnostics at ``beta_low``: top eigenvalue (softmax, GE
sample, law edge), relative error of ``m4``, KS.

The noise of ``β*`` (:func:`frontier_sigma`: the seeds' scatter of the distance through
the local slope, and the bisection resolution) enters the comparison of the two growth
laws ``a√(log n) + b`` and ``c nᵅ`` (:func:`compare_frontier_fits`: Δχ², the likelihood
ratio and a parametric bootstrap under each law; issue 26).

Source: docs/theory.md §11, §7 (F1–F3); paper §6.2.
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np

from freeprob._checks import check_ints, check_reals
from freeprob._progress import report, within
from freeprob.errors import FreeprobValueError
from freeprob.experiments.compare import TabulatedLaw, law_distances, two_sample_distances

__all__ = ["FAMILIES", "family_dims", "evaluation_job", "bisect_frontier", "frontier_sigma", "frontier_job",
           "fit_frontier", "sqrtlog_fit", "power_fit", "compare_frontier_fits", "evaluation_count",
           "evaluation_cost", "run_beta_growth", "describe_fit"]

FAMILIES = ("proportional", "fixed_head")


def family_dims(family, n):
    r"""``(heads, d_K)`` of a width family at ``n`` tokens (module docstring).

    Raises ``FreeprobValueError`` for an unknown family or ``n`` not a multiple of 8 (≥ 64).
    Source: theory.md §11."""
    if family not in FAMILIES:
        raise FreeprobValueError(f"explore beta-growth: unknown family {family!r}; known: {FAMILIES}")
    if not isinstance(n, int) or n < 64 or n % 8:
        raise FreeprobValueError(f"explore beta-growth: n must be an integer ≥ 64 and a multiple of 8; got {n!r}")
    if family == "proportional":
        return 4, n // 8
    return max(1, n // 128), 64


def _evaluate(family, n, beta, seeds, entropy, points):
    """relW1/KS of softmax vs the GE law and the GE sample at one β (means over seeds);
    reports its sub-steps (:func:`freeprob._progress.report`): the law tabulated, then each
    draw."""
    from freeprob.attention import laws as attention
    from freeprob.sampler import Dimensions, spectra
    heads, d_k = family_dims(family, n)
    arch = attention.Architecture.from_dimensions(n=n, heads=heads, d_k=d_k, d_v=d_k, d_o=n)
    report(0, seeds + 1, f"β = {beta:.4g}: tabulating the GE law")
    with within(0, 1, seeds + 1, f"β = {beta:.4g}"):
        law = TabulatedLaw.from_law(attention.concatenated_attention_law(arch.with_beta(repr(float(beta)))),
                                    points=points)
    dims = Dimensions(n=n, heads=heads, d_k=d_k, d_v=d_k, d_o=n)
    acc = {k: [] for k in ("law", "sample", "KS_law", "KS_sample", "top_sm", "top_ge", "m4_err")}
    for s in range(seeds):
        report(s + 1, seeds + 1, f"β = {beta:.4g}: draw {s + 1}/{seeds}")
        word = int.from_bytes(hashlib.sha256(f"{beta:.12g}/{s}".encode()).digest()[:4], "little")
        rng = np.random.default_rng(list(entropy) + [word])
        sp = spectra(dims, float(beta), rng=rng, models=("softmax", "ge"), objects=("concat",))
        sm, ge = sp["softmax", "concat"], sp["ge", "concat"]
        dl, ds = law_distances(sm, law), two_sample_distances(sm, ge)
        acc["law"].append(dl["relW1"])
        acc["KS_law"].append(dl["KS"])
        acc["sample"].append(ds["relW1"])
        acc["KS_sample"].append(ds["KS"])
        acc["top_sm"].append(float(sm[-1]))
        acc["top_ge"].append(float(ge[-1]))
        acc["m4_err"].append(float(np.mean(sm**4)) / float(law.moments[4]) - 1)
    out = {k: float(np.mean(v)) for k, v in acc.items()}
    if seeds >= 2:                  # the scatter over seeds: the noise of β* (frontier_sigma)
        out |= {f"{k}_sd": float(np.std(acc[k], ddof=1)) for k in ("law", "sample")}
    out["edge_law"] = float(law.upper_edge)
    return out


def evaluation_job(family, n, beta, seeds, entropy, points=500):
    r"""Worker: one evaluation of a frontier, :func:`_evaluate` at ``beta`` (means, and
    standard deviations over ``seeds``), as a sweep cell of its own (stored as it
    finishes, so an interrupted frontier resumes from its last evaluation).

    A β at which the GE law cannot be tabulated to its mass tolerance (a
    :class:`~freeprob.errors.PrecisionError`, e.g. where two support intervals merge) is
    replaced by the nearest of ``β(1 ± 10⁻³)``, ``β(1 ± 4·10⁻³)`` that can: the bisection
    only needs a point inside its interval.  If none can, the error is raised (the cell
    fails and is reported).

    Returns ``{"quantities": {"beta": β evaluated, <name>: value}}``.
    Raises ``FreeprobValueError`` for bad family/n.  Source: theory.md §11."""
    from freeprob.errors import PrecisionError
    b = float(round(beta, 6))
    for rel in (0.0, 1e-3, -1e-3, 4e-3, -4e-3):
        c = float(round(b * (1 + rel), 6))
        try:
            return dict(quantities={"beta": c, **_evaluate(family, n, c, seeds, entropy, points)})
        except PrecisionError:
            if rel == -4e-3:
                raise
    raise AssertionError("unreachable")         # pragma: no cover


def bisect_frontier(grid, lookup, epsilons, steps, seeds=None):
    r"""Replay the frontier bisection on the evaluations that ``lookup`` knows.

    ``lookup(β)`` returns ``(β evaluated, values)`` (the values of :func:`_evaluate`) or
    ``None`` for a β not evaluated yet.  For every reference (``law``, ``sample``) and
    ``ε``: the first grid point out of tolerance brackets the frontier with its
    predecessor, then ``steps`` halvings (module docstring).

    Returns
    -------
    (dict or None, set)
        The quantities of the frontier (``{target}/{ε}/beta_low|beta_high|beta_star``,
        ``…/beta_sigma`` from :func:`frontier_sigma` when ``seeds ≥ 2`` and the values carry
        standard deviations, ``…/at_low/{name}`` at ``beta_low``) once every point it needs
        is known, else ``None``; and the set of β still needed next (empty when done).

    Raises nothing of its own.  Source: theory.md §11.
    """
    grid = [float(b) for b in grid]
    missing = {b for b in grid if lookup(b) is None}
    if missing:
        return None, missing
    ev = lambda b: lookup(b)[1]  # noqa: E731
    q = {}
    for target in ("law", "sample"):
        for eps in epsilons:
            fail = [i for i, b in enumerate(grid) if ev(b)[target] > eps]
            low_values = None                   # the values at lo (a moved point is not a key of lookup)
            if not fail:
                lo, hi = grid[-1], math.inf
                low_values = ev(lo)
            elif fail[0] == 0:
                lo, hi = 0.0, grid[0]
            else:
                lo, hi = grid[fail[0] - 1], grid[fail[0]]
                low_values = ev(lo)
                bracket = (lo, hi)
                for _ in range(steps):
                    got = lookup(float(round(0.5 * (lo + hi), 6)))
                    if got is None:
                        missing.add(float(round(0.5 * (lo + hi), 6)))
                        break
                    mid, val = got
                    if val[target] <= eps:
                        lo, low_values = mid, val
                    else:
                        hi = mid
            tag = f"{target}/{eps:g}"
            q[f"{tag}/beta_low"], q[f"{tag}/beta_high"] = lo, hi
            q[f"{tag}/beta_star"] = (0.5 * (lo + hi) if math.isfinite(hi) else lo) if lo > 0 else math.nan
            if lo > 0:
                for k, v in low_values.items():
                    q[f"{tag}/at_low/{k}"] = v
            if lo > 0 and math.isfinite(hi) and seeds is not None and seeds >= 2 and not missing:
                pts = sorted({lookup(b)[0]: lookup(b)[1] for b in _evaluated_in(lookup, bracket)}.items())
                q[f"{tag}/beta_sigma"] = frontier_sigma(pts, target, seeds, hi - lo)
    return (None if missing else q), missing


def _evaluated_in(lookup, bracket):
    """The requested β of ``lookup`` (a dict-backed lookup exposes ``keys``) inside ``bracket``."""
    keys = getattr(lookup, "keys", None)
    if keys is None:
        return []
    return [b for b in keys() if bracket[0] <= lookup(b)[0] <= bracket[1]]


def frontier_sigma(points, target, seeds, width):
    r"""The standard deviation of a measured ``β*``: the seed scatter of the mean distance
    turned into β by the local slope, and the bisection resolution.

    ``σ² = (s/√seeds / slope)² + width²/12``: ``s`` the pooled standard deviation over
    seeds of the distance at the evaluated points of the bracketing grid interval
    (``{target}_sd``), ``slope`` the least-squares slope of the mean distance against β
    over those points, ``width`` the final interval ``β_high − β_low`` (``β*`` is its
    midpoint: uniform rounding error).

    Parameters
    ----------
    points : sequence of (β, values)
        The evaluations of one bracket (at least two).
    target : {"law", "sample"}
    seeds : int ≥ 2
    width : float

    Returns
    -------
    float
        NaN when it cannot be estimated (fewer than two points, no standard deviations, a
        slope that is not positive).

    Raises nothing.  Source: the delta method (σ_β = σ_d/|∂d/∂β|); theory.md §11.
    """
    pts = [(b, v) for b, v in points if v.get(f"{target}_sd") is not None]
    if len(pts) < 2:
        return math.nan
    bs = np.array([b for b, _ in pts])
    ds = np.array([v[target] for _, v in pts])
    if np.ptp(bs) == 0:
        return math.nan
    slope = float(np.polyfit(bs, ds, 1)[0])
    if not slope > 0:
        return math.nan
    sd = math.sqrt(float(np.mean([v[f"{target}_sd"] ** 2 for _, v in pts])))
    return math.sqrt((sd / math.sqrt(seeds) / slope) ** 2 + width ** 2 / 12)


class _Lookup:
    """``β requested → (β evaluated, values)`` from a dict, ``None`` when absent."""

    def __init__(self, evals):
        self.evals = evals

    def __call__(self, b):
        return self.evals.get(float(round(b, 6)))

    def keys(self):
        return list(self.evals)


def frontier_job(family, n, epsilons, seeds, steps, betas, entropy, points=500):
    r"""The frontier ``β*`` of one ``(family, n)`` for every ``ε`` and both references,
    evaluated in this process one point after the other (:func:`run_beta_growth` runs
    the same bisection as rounds of stored :func:`evaluation_job` cells).

    Returns ``{"quantities": {...}}`` with ``{target}/{ε}/beta_low|beta_high|beta_star``
    (and ``beta_sigma``, :func:`frontier_sigma`, for ``seeds ≥ 2``), the diagnostics
    ``{target}/{ε}/at_low/{name}`` at ``beta_low``, and the evaluations
    ``eval/{β}/{name}``; ``shifted_evaluations``: how many bisection points were moved
    (:func:`evaluation_job`).

    Raises ``FreeprobValueError`` for bad family/n; the error of a β that cannot be
    evaluated.  Source: theory.md §11.
    """
    evals = {}
    lookup = _Lookup(evals)
    while True:
        q, missing = bisect_frontier(betas, lookup, epsilons, steps, seeds)
        if q is not None:
            return dict(quantities=_frontier_quantities(q, evals))
        for b in sorted(missing):
            res = evaluation_job(family, n, b, seeds, entropy, points)["quantities"]
            evals[b] = (res.pop("beta"), res)


def _frontier_quantities(q, evals):
    """``q`` with the evaluations (``eval/{β}/{name}``) and the count of moved points."""
    q = dict(q)
    for b, vals in dict(evals.values()).items():
        for k, v in vals.items():
            q[f"eval/{b:g}/{k}"] = v
    q["shifted_evaluations"] = sum(1 for b, (c, _) in evals.items() if c != b)
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in q.items()}


def fit_frontier(ns, betas):
    r"""Least-squares fits of ``β*(n)``: ``a√(log n) + b`` and ``c nᵅ`` (in log space).

    Returns ``dict(sqrtlog=(a, b, rms), power=(c, α, rms))`` with rms residuals in β.
    Raises ``FreeprobValueError`` for fewer than 2 finite points.  Source: theory.md §11."""
    ns, betas = np.asarray(ns, float), np.asarray(betas, float)
    ok = np.isfinite(betas) & (betas > 0)
    if ok.sum() < 2:
        raise FreeprobValueError("fit_frontier: needs at least two finite positive β*")
    x, y = np.sqrt(np.log(ns[ok])), betas[ok]
    a, b = np.polyfit(x, y, 1)
    r1 = float(np.sqrt(np.mean((a * x + b - y)**2)))
    alpha, logc = np.polyfit(np.log(ns[ok]), np.log(y), 1)
    r2 = float(np.sqrt(np.mean((np.exp(logc) * ns[ok]**alpha - y)**2)))
    return dict(sqrtlog=(float(a), float(b), r1), power=(float(np.exp(logc)), float(alpha), r2))


def sqrtlog_fit(ns, betas, sigma):
    r"""Weighted least-squares fit of ``β* = a√(log n) + b`` (weights ``1/σ²``); the fitted
    values at ``ns``.  Raises nothing of its own.  Source: theory.md §11."""
    x = np.sqrt(np.log(np.asarray(ns, float)))
    a, b = np.polyfit(x, betas, 1, w=1 / np.asarray(sigma, float))
    return a * x + b


def power_fit(ns, betas, sigma):
    r"""Weighted least-squares fit of ``β* = c nᵅ`` in β (weights ``1/σ²``): for each ``α``
    the best ``c`` is linear, so ``α`` alone is minimised
    (:func:`scipy.optimize.minimize_scalar`, bounded to ±2 around the log-space fit); the
    fitted values at ``ns``.  Raises nothing of its own.  Source: theory.md §11."""
    from scipy.optimize import minimize_scalar
    x = np.asarray(ns, float) / 1024.0              # scaled: a well-conditioned c
    y = np.asarray(betas, float)
    w = 1 / np.asarray(sigma, float) ** 2
    alpha0 = np.polyfit(np.log(x), np.log(np.maximum(y, 1e-9)), 1)[0]

    def fitted(al):
        xa = x ** al
        return xa * (np.sum(w * y * xa) / np.sum(w * xa * xa))

    best = minimize_scalar(lambda al: float(np.sum(w * (y - fitted(al)) ** 2)), bounds=(alpha0 - 2, alpha0 + 2),
                           method="bounded", options=dict(xatol=1e-10))
    return fitted(best.x)


def compare_frontier_fits(ns, betas, sigma, *, draws=1000, seed=0):
    r"""How strongly the measured frontier prefers ``a√(log n) + b`` to ``c nᵅ``, given
    the noise ``sigma`` of each ``β*`` (:func:`frontier_sigma`):
    :func:`freeprob.experiments.stats.compare_models` with :func:`sqrtlog_fit` first and
    :func:`power_fit` second (both two-parameter, so ``Δχ²`` is also the AIC difference).

    Parameters
    ----------
    ns, betas, sigma : 1-d sequences of equal length (at least 3 points)
    draws, seed : bootstrap data sets per model and their seed

    Returns
    -------
    freeprob.experiments.stats.ModelChoice

    Raises
    ------
    FreeprobValueError
        Fewer than 3 points, non-finite values, ``sigma ≤ 0``.

    Source: theory.md §11; parametric bootstrap (Efron & Tibshirani 1993, ch. 16).
    """
    from freeprob.experiments.stats import compare_models
    if len(ns) < 3:
        raise FreeprobValueError(f"compare_frontier_fits: needs at least 3 sizes; got {len(ns)}")
    return compare_models(ns, betas, sigma, {"sqrtlog": sqrtlog_fit, "power": power_fit}, draws=draws, seed=seed)


def evaluation_count(grid_points, epsilons, steps):
    r"""Upper bound on the evaluations of one frontier: the grid, then ``steps`` midpoints
    per ``ε`` and reference (fewer when brackets coincide or fall outside the grid).
    Raises nothing.  Source: :func:`bisect_frontier`."""
    return grid_points + 2 * len(epsilons) * steps


def evaluation_cost(family, n, seeds, points=500):
    r"""Estimated time (s) and peak memory (bytes) of one evaluation
    (:func:`evaluation_job`): ``seeds`` coupled softmax + GE draws of ``concat`` (its Gram
    ``Σ_h M_h M_hᵀ`` has width ``h·n``; :func:`freeprob.experiments.cost.cell_cost`) and
    one tabulated law (1.5 s + :data:`~freeprob.experiments.cost.LAW_SECONDS_PER_POINT`
    per density point, two support intervals).

    Raises ``FreeprobValueError`` for bad family/n.  Source: :mod:`freeprob.experiments.cost`."""
    from freeprob.experiments import cost
    from freeprob.sampler import Dimensions
    heads, d_k = family_dims(family, n)
    dims = Dimensions(n=n, heads=heads, d_k=d_k, d_v=d_k, d_o=n)
    sec, mem = cost.cell_cost(dims, models=2, objects=1, gram_width=heads * n)
    return seeds * sec + 1.5 + 2 * points * cost.LAW_SECONDS_PER_POINT, mem


def run_beta_growth(out, *, quick=False, ns=None, epsilons=(0.01, 0.02, 0.05), families=FAMILIES,
                    seeds=None, steps=None, workers=None, scheduler=None, figures=True, progress=False,
                    force=False, draws=1000):
    r"""``freeprob explore beta-growth``: the frontier ``β*(n, ε)``, its noise, fits with
    their model comparison, and the figure.

    Defaults: ``ns`` 256, 512, 1024, 2048 (``quick``: 128, 256, 512), ``seeds`` 3 (quick 2),
    ``steps`` 4 (quick 2), β grid geometric 0.1 … 2.4 (9 points; quick 6).

    Every evaluation (one β of one ``(family, n)``, all seeds) is a sweep cell
    (:func:`evaluation_job`) stored in ``out/results.sqlite`` as it finishes: the grid
    first, then one round of bisection midpoints after the other
    (:func:`bisect_frontier`), so an interrupted run resumes from its last evaluation and
    an evaluation is reused by any later run that needs the same β (its key holds the
    family, ``n``, β, seeds, density points and the code, not ``ε`` or ``steps``).

    Writes ``beta_frontier.csv`` (``family,n,epsilon,beta_star,beta_low,beta_high,
    beta_sigma`` against the GE law; ``beta_sigma`` the standard deviation of ``β*``,
    :func:`frontier_sigma`), ``beta_frontier_sample.csv`` (the same against the GE sample),
    ``beta_diagnostics.csv`` (top eigenvalues, m4 error, KS at ``beta_low``),
    ``beta_fits.json`` (the fits of :func:`fit_frontier` and, where every ``β*`` has a
    ``beta_sigma``, the model comparison of :func:`compare_frontier_fits`) and
    ``beta_frontier.png``.

    Raises
    ------
    FreeprobValueError
        Bad ``ns``, ``epsilons`` (in (0, 1)), ``families``, ``seeds`` or ``steps``; one
        evaluation estimated above :data:`freeprob.experiments.cost.MAX_CELL_SECONDS` or
        above the memory limit (:func:`evaluation_cost`), unless ``force``.
    """
    from freeprob.experiments import cost
    from freeprob.experiments.explore import _write_csv, cell_key, set_aside
    from freeprob.experiments.store import ResultStore
    from freeprob.experiments.sweep import Executor, SweepCell, SweepStats, cell_seed, check_executor, run_cells
    who = "explore beta-growth"
    ns = check_ints(ns, who, "ns", minimum=64) if ns is not None else ((128, 256, 512) if quick else
                                                                       (256, 512, 1024, 2048))
    families = (families,) if isinstance(families, str) else tuple(families)
    if not families or len(set(families)) != len(families):
        raise FreeprobValueError(f"explore beta-growth: give distinct families from {FAMILIES}; got {list(families)}")
    seeds = seeds if seeds is not None else (2 if quick else 3)
    steps = steps if steps is not None else (2 if quick else 4)
    if len(set(ns)) != len(ns):
        raise FreeprobValueError(f"explore beta-growth: the values of n must be distinct; got {list(ns)}")
    for fam in families:
        for n in ns:
            family_dims(fam, n)
    eps = check_reals(epsilons, who, "epsilons", minimum=0, maximum=1, strict=True)
    if 1 in eps:                                 # a relative distance of 100 %: no frontier
        raise FreeprobValueError(f"{who}: epsilons must lie in (0, 1); item {eps.index(1) + 1} is 1")
    for name, v in (("seeds", seeds), ("steps", steps)):
        if not isinstance(v, int) or v < 1:
            raise FreeprobValueError(f"explore beta-growth: {name} must be an integer ≥ 1; got {v!r}")
    check_executor(workers, scheduler)
    if not (force or cost.large_allowed()):
        for fam in families:
            for n in ns:
                sec, mem = evaluation_cost(fam, n, seeds)
                memory = cost.machine_memory()
                if sec > cost.MAX_CELL_SECONDS or (memory and mem > cost.MEMORY_FRACTION * memory):
                    raise FreeprobValueError(
                        f"explore beta-growth: one evaluation of {fam} at n={n} ({seeds} seeds) would take about "
                        f"{cost.human_time(sec)} and {mem / 2**30:.1f} GiB (estimated from its matrix products and "
                        f"eigvalsh at {cost.FLOP_RATE:.0e} flop/s); the limits are "
                        f"{cost.human_time(cost.MAX_CELL_SECONDS)} per evaluation and "
                        f"{cost.MEMORY_FRACTION:.0%} of the memory (freeprob.experiments.cost): lower --ns or "
                        f"--seeds, or pass --force to run it anyway")
    betas = tuple(float(b) for b in np.round(np.geomspace(0.1, 2.4, 6 if quick else 9), 4))
    points = 500
    total = sum(evaluation_cost(fam, n, seeds, points)[0] for fam in families for n in ns) * evaluation_count(
        len(betas), eps, steps)
    if progress and total > 600:
        print(f"explore beta-growth: at most {evaluation_count(len(betas), eps, steps)} evaluations per (family, n), "
              f"estimated up to {cost.human_time(total)} of one worker at {cost.FLOP_RATE:.0e} flop/s "
              "(freeprob.experiments.cost); each evaluation is stored as it finishes (a rerun resumes)",
              file=sys.stderr)

    def key_of(fam, n, b):
        return cell_key(f"frontier/{fam}/n{n}/b{b:g}", family=fam, n=n, beta=b, seeds=seeds, points=points)

    def cell(fam, n, b):
        return SweepCell(key=key_of(fam, n, b), params=dict(config=fam, n=n, beta=f"{b:g}"), fn=evaluation_job,
                         kwargs=dict(family=fam, n=n, beta=b, seeds=seeds, points=points,
                                     entropy=cell_seed(2026, f"frontier/{fam}/n{n}")))

    settings = dict(ns=list(ns), epsilons=list(eps), families=list(families), seeds=seeds, steps=steps,
                    betas=list(betas))
    name = "explore-beta-" + hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.sqlite"
    evals = {(fam, n): {} for fam in families for n in ns}
    failed, frontier, stats = {}, {}, SweepStats()
    with Executor(workers=workers if workers is not None else 1, scheduler=scheduler) as ex, \
            ResultStore(path) as store:
        store.begin_sweep(name, "explore", settings)
        rnd = 0
        while True:
            todo = []
            for (fam, n), ev in evals.items():
                if (fam, n) in failed or (fam, n) in frontier:
                    continue
                q, missing = bisect_frontier(betas, _Lookup(ev), eps, steps, seeds)
                if q is not None:
                    frontier[fam, n] = _frontier_quantities(q, ev)
                todo += [cell(fam, n, b) for b in sorted(missing)]
            if not todo:
                break
            rnd += 1
            st = run_cells(todo, store, name, ex, progress=progress,
                           desc=f"{name} {'grid' if rnd == 1 else f'bisection {rnd - 1}'}")
            stats.computed += st.computed
            stats.resumed += st.resumed
            for c in todo:
                fam, n, b = c.kwargs["family"], c.kwargs["n"], c.kwargs["beta"]
                if c.key in st.failed:
                    failed[fam, n] = True
                    stats.failed[c.key] = st.failed[c.key]
                    continue
                q = store.cell_quantities(c.key)
                evals[fam, n][b] = (q.pop("beta"), q)
    rows = {"law": [], "sample": []}
    diag = []
    for fam in families:
        for n in ns:
            q = frontier.get((fam, n))
            if not q:               # a failed evaluation: no row (listed in ``failed``), never a made-up interval
                continue
            for target in rows:
                for e in eps:
                    tag = f"{target}/{e:g}"
                    hi = q.get(f"{tag}/beta_high")
                    lo = q.get(f"{tag}/beta_low")
                    star = q.get(f"{tag}/beta_star") if lo else math.nan     # below the grid: unknown
                    sig = q.get(f"{tag}/beta_sigma")
                    rows[target].append(dict(family=fam, n=n, epsilon=e, beta_star=star,
                                             beta_low=q.get(f"{tag}/beta_low"),
                                             beta_high=math.inf if hi is None else hi,
                                             beta_sigma=math.nan if sig is None else sig))
                    if target == "law" and q.get(f"{tag}/at_low/law") is not None:
                        diag.append(dict(family=fam, n=n, epsilon=e, beta_low=q[f"{tag}/beta_low"],
                                         **{k: q[f"{tag}/at_low/{k}"] for k in
                                            ("law", "KS_law", "sample", "KS_sample", "top_sm", "top_ge",
                                             "edge_law", "m4_err")}))
    fields = ("family", "n", "epsilon", "beta_star", "beta_low", "beta_high", "beta_sigma")
    files = [_write_csv(out / "beta_frontier.csv", rows["law"], fields),
             _write_csv(out / "beta_frontier_sample.csv", rows["sample"], fields)]
    if diag:
        files.append(_write_csv(out / "beta_diagnostics.csv", diag))
    fits = {}
    for target in rows:
        for fam in families:
            for e in eps:
                sel = [r for r in rows[target] if r["family"] == fam and r["epsilon"] == e
                       and r["beta_low"] and math.isfinite(r["beta_high"])]
                if len(sel) >= 3:
                    f = fit_frontier([r["n"] for r in sel], [r["beta_star"] for r in sel])
                    f["ns"] = [r["n"] for r in sel]
                    sig = [r["beta_sigma"] for r in sel]
                    if all(math.isfinite(x) and x > 0 for x in sig):
                        f["comparison"] = compare_frontier_fits(f["ns"], [r["beta_star"] for r in sel], sig,
                                                                draws=draws).as_dict()
                    fits[f"{target}/{fam}/{e:g}"] = f
    (out / "beta_fits.json").write_text(json.dumps(fits, indent=1))
    files.append(str(out / "beta_fits.json"))
    if figures and rows["law"]:
        files.append(_figure(out / "beta_frontier.png", rows["law"], fits, families, eps))
    aside = set_aside(out, ("beta_diagnostics.csv", "beta_frontier.png"), files)
    return dict(rows=rows["law"], rows_sample=rows["sample"], diagnostics=diag, fits=fits, files=files,
                set_aside=aside, computed=stats.computed, resumed=stats.resumed, failed=stats.failed)


def describe_fit(key, fit):
    r"""The printed lines of one fit of ``beta_fits.json``: both forms with their rms, and
    the model comparison (Δχ², likelihood ratio and its range, how often each form wins
    under the other) or why there is none.  Raises nothing.  Source: theory.md §11."""
    a, b, r1 = fit["sqrtlog"]
    c, al, r2 = fit["power"]
    ns = fit.get("ns")
    where = f" (n = {', '.join(str(n) for n in ns)})" if ns else ""
    lines = [f"fit {key}{where}: beta* = {a:.3g}*sqrt(log n) {'+' if b >= 0 else '-'} {abs(b):.3g} (rms {r1:.3g}) "
             f"vs {c:.3g}*n^{al:.3g} (rms {r2:.3g})"]
    cmp_ = fit.get("comparison")
    if cmp_ is None:
        lines.append("  no model comparison: a beta* has no noise estimate (needs seeds >= 2 and a bracketed frontier)")
        return lines
    w_s, w_p = cmp_["p_sqrtlog_wins_if_sqrtlog"], cmp_["p_sqrtlog_wins_if_power"]
    lo, hi = cmp_["delta_chi2_range"]
    lines.append(f"  model comparison with the measured noise of beta*: delta chi2 (power - sqrtlog) = "
                 f"{cmp_['delta_chi2']:.2f}, likelihood ratio {cmp_['likelihood_ratio']:.3g} "
                 f"({100 * cmp_['level']:.0f}% range of delta chi2 over redraws under sqrtlog: {lo:.2f} to {hi:.2f}); "
                 f"sqrtlog fits better in {100 * w_s['rate']:.0f}% of draws if sqrtlog is true and in "
                 f"{100 * w_p['rate']:.0f}% ({100 * w_p['lo']:.0f}-{100 * w_p['hi']:.0f}%) if the power law is true; "
                 f"p-value of the power law {cmp_['p_value_power']['rate']:.3f}, of sqrtlog "
                 f"{cmp_['p_value_sqrtlog']['rate']:.3f} ({cmp_['draws']} draws per model)"
                 + ("" if None in (cmp_.get("fit_p") or {None: 0}).values() else
                    f"; goodness of fit (chi2 p) sqrtlog {cmp_['fit_p']['sqrtlog']:.2g}, "
                    f"power {cmp_['fit_p']['power']:.2g}") + f": {cmp_['verdict']}")
    return lines


def _figure(path, rows, fits, families, eps):
    """β*(n) ± its noise per family and ε, and the two fits (matplotlib object API)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(8, 3.2))
    for j, fam in enumerate(families):
        ax = fig.add_subplot(1, len(families), j + 1)
        for e in eps:
            sel = [r for r in rows if r["family"] == fam and r["epsilon"] == e and math.isfinite(r["beta_high"])
                   and r["beta_low"]]
            if not sel:
                continue
            ns = np.array([r["n"] for r in sel], float)
            bs = np.array([r["beta_star"] for r in sel])
            # ± the noise of β* (frontier_sigma) where measured, else the bisection interval
            err = np.array([[r["beta_sigma"] if math.isfinite(r.get("beta_sigma", math.nan)) else
                             r["beta_star"] - r["beta_low"] for r in sel],
                            [r["beta_sigma"] if math.isfinite(r.get("beta_sigma", math.nan)) else
                             r["beta_high"] - r["beta_star"] for r in sel]])
            line = ax.errorbar(ns, bs, yerr=err, fmt="o", ms=3, label=f"ε={e:g}")
            f = fits.get(f"law/{fam}/{e:g}")
            if f:
                grid = np.geomspace(ns.min(), ns.max(), 50)
                a, b, _ = f["sqrtlog"]
                c, al, _ = f["power"]
                col = line[0].get_color()
                ax.plot(grid, a * np.sqrt(np.log(grid)) + b, "-", color=col, lw=0.8)
                ax.plot(grid, c * grid**al, ":", color=col, lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n")
        ax.set_ylabel("β* (softmax vs GE law)")
        ax.set_title(f"{fam} (— a√log n + b, ··· c n^α)", fontsize=8)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return str(path)
