r"""``freeprob explore beta-growth``: the largest inverse temperature ``β*(n, ε)`` at which
softmax attention stays within ``ε`` (relative W1) of its Gaussian equivalent, and how
``β*`` grows with ``n`` (paper §6.2: the admissible growth of ``β``; candidate
``β = Θ(√log n)``).

Object: the concatenated attention Gram (theory.md §1, ``concat``) of two width
families at ``γ_K = h d_K/n = 1/2``:

* ``proportional``: ``h = 4``, ``d_K = n/8`` (every width ∝ n);
* ``fixed_head``: ``d_K = 64``, ``h = n/128`` heads (at least 1).

For each ``(family, n)`` one sweep cell evaluates ``β ↦ relW1`` (mean over ``seeds``
initialisations) of softmax against the GE law (exact core, tabulated) and against the GE
sample (coupled, same Q, K), on a coarse geometric grid of ``β``, then bisects inside the
bracketing grid interval for every ``ε`` (``steps`` halvings): ``β*`` is the midpoint of
the final interval ``[beta_low, beta_high]`` (``beta_low`` within ``ε``, ``beta_high``
not; a frontier below or above the grid is reported as ``[0, β_min]`` with ``β*`` NaN, or
``[β_max, inf]``).  Diagnostics at ``beta_low``: top eigenvalue (softmax, GE sample, law
edge), relative error of ``m4``, KS.

Source: docs/theory.md §11, §7 (F1–F3); paper §6.2.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np

from freeprob._checks import check_ints, check_reals
from freeprob._progress import report, within
from freeprob.errors import FreeprobValueError
from freeprob.experiments.compare import TabulatedLaw, law_distances, two_sample_distances

__all__ = ["FAMILIES", "family_dims", "frontier_job", "fit_frontier", "run_beta_growth"]

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
    out["edge_law"] = float(law.upper_edge)
    return out


def frontier_job(family, n, epsilons, seeds, steps, betas, entropy, points=500):
    r"""Worker: the frontier ``β*`` of one ``(family, n)`` for every ``ε`` and both
    references (module docstring).

    Returns ``{"quantities": {...}}`` with ``{target}/{ε}/beta_low|beta_high|beta_star``
    and the diagnostics ``{target}/{ε}/{name}`` at ``beta_low``, and the evaluations
    ``eval/{β}/{name}``; ``shifted_evaluations``: how many bisection points were moved.

    A β at which the GE law cannot be tabulated to its mass tolerance (a
    :class:`~freeprob.errors.PrecisionError`, e.g. where two support intervals merge) is
    replaced by the nearest of ``β(1 ± 10⁻³)``, ``β(1 ± 4·10⁻³)`` that can: the bisection
    only needs a point inside its interval, and ``beta_low``/``beta_high`` are always
    points actually evaluated.  If none can, the error is raised (the cell fails and is
    reported).

    Progress: every evaluation (the tabulation of the GE law at that β, then each draw) is
    reported with :func:`freeprob._progress.report` (the sweep's bar moves within the cell).

    Raises ``FreeprobValueError`` for bad family/n.  Source: theory.md §11.
    """
    from freeprob.errors import PrecisionError
    cache, shifted, count = {}, [], [0]
    # sub-steps (freeprob._progress, shown by the sweep's bar): the evaluations at most
    # (the grid, then `steps` bisections per target and ε; fewer when bisections are skipped)
    total = len(betas) + 2 * len(epsilons) * steps

    def evaluate(b):
        """(β actually evaluated, its values)."""
        b = float(round(b, 6))
        if b not in cache:
            for rel in (0.0, 1e-3, -1e-3, 4e-3, -4e-3):
                c = float(round(b * (1 + rel), 6))
                try:
                    k = min(count[0], total - 1)
                    with within(k, 1, total, f"evaluation {count[0] + 1} of ≤ {total}"):
                        cache[b] = (c, _evaluate(family, n, c, seeds, entropy, points))
                    count[0] += 1
                    break
                except PrecisionError:
                    if rel == -4e-3:
                        raise
            if cache[b][0] != b:
                shifted.append(b)
                cache[cache[b][0]] = cache[b]       # the point evaluated, when it is a bound later
        return cache[b]

    def ev(b):
        return evaluate(b)[1]

    grid = [float(b) for b in betas]
    for b in grid:
        ev(b)
    q = {}
    for target in ("law", "sample"):
        for eps in epsilons:
            # the first grid point out of tolerance brackets the frontier with its predecessor
            fail = [i for i, b in enumerate(grid) if ev(b)[target] > eps]
            if not fail:
                lo, hi = grid[-1], math.inf
            elif fail[0] == 0:
                lo, hi = 0.0, grid[0]
            else:
                lo, hi = grid[fail[0] - 1], grid[fail[0]]
                for _ in range(steps):
                    mid, val = evaluate(0.5 * (lo + hi))
                    if val[target] <= eps:
                        lo = mid
                    else:
                        hi = mid
            tag = f"{target}/{eps:g}"
            q[f"{tag}/beta_low"], q[f"{tag}/beta_high"] = lo, hi
            q[f"{tag}/beta_star"] = (0.5 * (lo + hi) if math.isfinite(hi) else lo) if lo > 0 else math.nan
            if lo > 0:
                for k, v in ev(lo).items():
                    q[f"{tag}/at_low/{k}"] = v
    for b, vals in dict(cache.values()).items():
        for k, v in vals.items():
            q[f"eval/{b:g}/{k}"] = v
    q["shifted_evaluations"] = len(shifted)
    return dict(quantities={k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                            for k, v in q.items()})


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


def run_beta_growth(out, *, quick=False, ns=None, epsilons=(0.01, 0.02, 0.05), families=FAMILIES,
                    seeds=None, steps=None, workers=None, scheduler=None, figures=True, progress=False):
    r"""``freeprob explore beta-growth``: the frontier ``β*(n, ε)``, fits and figure.

    Defaults: ``ns`` 256, 512, 1024, 2048 (``quick``: 128, 256, 512), ``seeds`` 3 (quick 2),
    ``steps`` 4 (quick 2), β grid geometric 0.1 … 2.4 (9 points; quick 6).

    Writes ``beta_frontier.csv`` (``family,n,epsilon,beta_star,beta_low,beta_high`` against
    the GE law), ``beta_frontier_sample.csv`` (the same against the GE sample),
    ``beta_diagnostics.csv`` (top eigenvalues, m4 error, KS at ``beta_low``),
    ``beta_fits.json`` and ``beta_frontier.png``.  Cells are stored in
    ``out/results.sqlite`` (resumable).  An earlier ``beta_frontier.png`` or
    ``beta_diagnostics.csv`` this run does not rewrite is moved aside, not removed
    (:func:`freeprob.experiments.explore.set_aside`; the result's ``set_aside`` says so).

    Raises
    ------
    FreeprobValueError
        Bad ``ns``, ``epsilons`` (in (0, 1)), ``families``, ``seeds`` or ``steps``.
    """
    from freeprob.experiments.explore import _write_csv, cell_key, run_sweep, set_aside
    from freeprob.experiments.sweep import SweepCell, cell_seed
    from freeprob.experiments.store import ResultStore
    who = "explore beta-growth"
    ns = check_ints(ns, who, "ns", minimum=64) if ns is not None else ((128, 256, 512) if quick else
                                                                       (256, 512, 1024, 2048))
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
    betas = tuple(float(b) for b in np.round(np.geomspace(0.1, 2.4, 6 if quick else 9), 4))
    cells, keys = [], {}
    for fam in families:
        for n in ns:
            key = cell_key(f"frontier/{fam}/n{n}", family=fam, n=n, epsilons=eps, seeds=seeds, steps=steps,
                           betas=betas)
            keys[fam, n] = key
            cells.append(SweepCell(key=key, params=dict(config=fam, n=n),
                                   fn=frontier_job, kwargs=dict(family=fam, n=n, epsilons=eps, seeds=seeds,
                                                                steps=steps, betas=betas,
                                                                entropy=cell_seed(2026, f"frontier/{fam}/n{n}"))))
    settings = dict(ns=list(ns), epsilons=list(eps), families=list(families), seeds=seeds, steps=steps,
                    betas=list(betas))
    name = "explore-beta-" + hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]
    path, stats = run_sweep(cells, out, name, settings, workers=workers, scheduler=scheduler, progress=progress)
    rows = {"law": [], "sample": []}
    diag = []
    with ResultStore(path, readonly=True) as store:
        for fam in families:
            for n in ns:
                q = store.cell_quantities(keys[fam, n])
                if not q:           # a failed cell: no row (listed in ``failed``), never a made-up interval
                    continue
                for target in rows:
                    for e in eps:
                        tag = f"{target}/{e:g}"
                        hi = q.get(f"{tag}/beta_high")
                        lo = q.get(f"{tag}/beta_low")
                        star = q.get(f"{tag}/beta_star") if lo else math.nan     # below the grid: unknown
                        rows[target].append(dict(family=fam, n=n, epsilon=e, beta_star=star,
                                                 beta_low=q.get(f"{tag}/beta_low"),
                                                 beta_high=math.inf if hi is None else hi))
                        if target == "law" and q.get(f"{tag}/at_low/law") is not None:
                            diag.append(dict(family=fam, n=n, epsilon=e, beta_low=q[f"{tag}/beta_low"],
                                             **{k: q[f"{tag}/at_low/{k}"] for k in
                                                ("law", "KS_law", "sample", "KS_sample", "top_sm", "top_ge",
                                                 "edge_law", "m4_err")}))
    out = Path(out)
    fields = ("family", "n", "epsilon", "beta_star", "beta_low", "beta_high")
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
                    fits[f"{target}/{fam}/{e:g}"] = fit_frontier([r["n"] for r in sel], [r["beta_star"] for r in sel])
    (out / "beta_fits.json").write_text(json.dumps(fits, indent=1))
    files.append(str(out / "beta_fits.json"))
    if figures:
        files.append(_figure(out / "beta_frontier.png", rows["law"], fits, families, eps))
    aside = set_aside(out, ("beta_diagnostics.csv", "beta_frontier.png"), files)
    return dict(rows=rows["law"], rows_sample=rows["sample"], diagnostics=diag, fits=fits, files=files,
                set_aside=aside, computed=stats.computed, resumed=stats.resumed, failed=stats.failed)


def _figure(path, rows, fits, families, eps):
    """β*(n) with its interval per family and ε, and the two fits (matplotlib object API)."""
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
            err = np.array([[r["beta_star"] - r["beta_low"] for r in sel], [r["beta_high"] - r["beta_star"] for r in sel]])
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
