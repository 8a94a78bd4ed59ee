r"""Distances of a fitted law (:mod:`freeprob.fit`) from its sample and from an exact law,
and the ``--fit`` report of ``freeprob verify``.

Definitions (float64, on tabulated laws, :class:`~freeprob.experiments.compare.TabulatedLaw`):

* ``W1(μ, ν) = ∫ |F_μ(x) − F_ν(x)| dx`` (the Wasserstein-1 distance on the line), by the
  trapezoid rule on the union of both tables' fine nodes and 20001 equispaced points;
  **relative W1** divides it by the reference law's mean (as ``freeprob verify`` does) or,
  with ``scale="sd"``, by its standard deviation (for laws centred near 0).
* sample vs law: the same with the sample's empirical distribution function, plus the
  Kolmogorov–Smirnov distance ``sup |F_emp − F|`` at the sample points (both one-sided
  limits).

``verify_fit_rows`` fits the stored softmax spectra of a finished ``freeprob verify`` run
(:func:`freeprob.fit.fit_law` or :func:`freeprob.fit.fit_algebraic`) and measures each fitted
law's relative W1 from the run's GE law: what the softmax spectrum looks like once the
sampling noise of one matrix is smoothed away by a fit.
"""
from __future__ import annotations

import math

import numpy as np

from freeprob._text import text_table
from freeprob.errors import FreeprobValueError
from freeprob.experiments.compare import TabulatedLaw

__all__ = ["tabulated_w1", "sample_distances", "parse_fit_spec", "fit_spectrum",
           "verify_fit_rows", "format_fit_rows"]

#: equispaced points added to the tables' nodes for the W1 integral
GRID = 20001


def _sd(t: TabulatedLaw) -> float:
    m = t.moments
    return math.sqrt(max(float(m[2] - m[1] ** 2), 0.0))


def tabulated_w1(law, reference, *, scale="mean") -> float:
    r"""Relative W1 distance ``∫|F_law − F_reference| dx / s`` between two tabulated laws.

    Parameters
    ----------
    law, reference : TabulatedLaw (with at least 2 moments)
    scale : {"mean", "sd", "none"}
        ``s``: the reference's mean (must be > 0), its standard deviation, or 1.

    Returns
    -------
    float

    Raises
    ------
    FreeprobValueError
        Not TabulatedLaws; ``scale="mean"`` with a reference mean ≤ 0; an unknown scale.

    Source: the definition of W1 on the line (Vallender 1973: ``W1 = ∫|F − G|``).
    """
    if not (isinstance(law, TabulatedLaw) and isinstance(reference, TabulatedLaw)):
        raise FreeprobValueError("tabulated_w1: expected two TabulatedLaw (TabulatedLaw.from_law(law))")
    xs = np.union1d(law.fine_nodes(), reference.fine_nodes())
    for t in (law, reference):
        if t.atoms.size:
            xs = np.union1d(xs, t.atoms[:, 0])
    xs = np.union1d(xs, np.linspace(xs[0] - 1e-9, xs[-1] + 1e-9, GRID))
    d = np.abs(law.cdf(xs) - reference.cdf(xs))
    w1 = float(np.sum((d[1:] + d[:-1]) / 2 * np.diff(xs)))
    return w1 / _scale(reference, scale, "tabulated_w1")


def _scale(t, scale, who):
    if scale == "mean":
        if not t.mean > 0:
            raise FreeprobValueError(f"{who}: the reference mean is {t.mean:.6g} ≤ 0; use scale='sd'")
        return t.mean
    if scale == "sd":
        return _sd(t)
    if scale == "none":
        return 1.0
    raise FreeprobValueError(f"{who}: scale must be 'mean', 'sd' or 'none'; got {scale!r}")


def sample_distances(eigenvalues, law) -> dict:
    r"""W1 (absolute, over the law's standard deviation, and over its mean when that is
    > 0) and KS between a sample spectrum and a tabulated law.

    Parameters
    ----------
    eigenvalues : real array, shape ``(n,)``, finite, non-empty
    law : TabulatedLaw

    Returns
    -------
    dict
        ``W1``, ``W1_sd``, ``relW1`` (``None`` when the mean is ≤ 0), ``KS``.

    Raises
    ------
    FreeprobValueError
        Bad eigenvalues; ``law`` not a TabulatedLaw.

    Source: the definitions in this module's docstring.
    """
    from freeprob.fit.sample import spectrum
    lam = spectrum(eigenvalues, "sample_distances", minimum=1)
    if not isinstance(law, TabulatedLaw):
        raise FreeprobValueError("sample_distances: expected a TabulatedLaw (TabulatedLaw.from_law(law))")
    n = lam.size
    xs = np.union1d(np.union1d(lam, law.fine_nodes()), np.linspace(min(lam[0], law.fine_nodes()[0]) - 1e-9,
                                                                 max(lam[-1], law.fine_nodes()[-1]) + 1e-9, GRID))
    # F_emp is constant on [xs_j, xs_{j+1}) and F is (nearly) linear there
    emp = np.searchsorted(lam, xs[:-1], side="right") / n
    d0, d1 = np.abs(law.cdf(xs[:-1]) - emp), np.abs(law.cdf(xs[1:], left=True) - emp)
    w1 = float(np.sum((d0 + d1) / 2 * np.diff(xs)))
    ks = float(max(np.max(np.abs(np.arange(1, n + 1) / n - law.cdf(lam))),
                   np.max(np.abs(np.arange(n) / n - law.cdf(lam, left=True)))))
    sd = _sd(law)
    return dict(W1=w1, W1_sd=w1 / sd if sd > 0 else None,
                relW1=w1 / law.mean if law.mean > 0 else None, KS=ks)


def parse_fit_spec(spec):
    r"""``"algebraic"``, ``"algebraic:2,1"`` (degrees ``d_G, d_z``) or a family name of
    :data:`freeprob.fit.FAMILIES` → ``(family or None, degrees or None)``.

    Raises
    ------
    FreeprobValueError
        Anything else (the message lists what is allowed).  Source: this module.
    """
    from freeprob.fit.families import FAMILIES
    text = str(spec).strip().lower()
    if text in FAMILIES:
        return text, None
    if text == "algebraic":
        return None, (2, 1)
    if text.startswith("algebraic:"):
        parts = text.split(":", 1)[1].split(",")
        if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
            return None, (int(parts[0]), int(parts[1]))
    raise FreeprobValueError(f"fit: expected one of {', '.join(FAMILIES)}, 'algebraic' or "
                             f"'algebraic:DG,DZ' (e.g. algebraic:2,1); got {spec!r}")


def fit_spectrum(eigenvalues, family=None, degrees=None):
    """The fitted :class:`~freeprob.laws.law.Law` of ``eigenvalues``: ``fit_law(family)``
    if ``family`` is given, else ``fit_algebraic(degrees or (2, 1))``.  Raises as those
    functions.  Source: :mod:`freeprob.fit`."""
    from freeprob.fit import fit_algebraic, fit_law
    if family is not None:
        return fit_law(eigenvalues, family).law
    return fit_algebraic(eigenvalues, degrees or (2, 1)).law


def verify_fit_rows(settings, spec, *, points=300, progress=None):
    r"""For a finished ``freeprob verify`` run: fit each stored softmax spectrum and measure
    the fitted law's relative W1 from the run's GE law.

    Parameters
    ----------
    settings : VerifySettings (the run's; its store must hold the cells)
    spec : str, as :func:`parse_fit_spec`
    points : int, density points per support interval of each fitted law's table
    progress : callable(str) or None, told before each fit

    Returns
    -------
    list of dict
        One per (configuration, object, ``n``, ``β``): ``fit_ge`` (relative W1 of the
        fitted laws from the GE law) and ``sm_ge`` (of the softmax spectra themselves),
        each ``{mean, lo, hi, n}`` over the seeds (95% t-interval), ``refused`` (fits that
        gave no law, with the first reason).

    Raises
    ------
    FreeprobValueError
        A bad ``spec``.  A store without the run's cells gives rows with no seeds.

    Source: this module's definitions; [HK26]_ for the GE law.
    """
    from freeprob.experiments.store import ResultStore
    from freeprob.experiments.verify import _cell_key, _tabulated, _theory_key, plan_cells
    family, degrees = parse_fit_spec(spec)
    rows = []
    with ResultStore(settings.store_path, readonly=True) as store:
        for cell in plan_cells(settings):
            for beta in settings.betas_exact:
                for obj in settings.objects:
                    tdata = store.get_object(_theory_key(cell, beta, obj, settings.points))
                    ge = _tabulated(tdata)
                    fit_ge, sm_ge, refused = [], [], []
                    for seed in range(settings.seeds):
                        lam = store.array(_cell_key(cell, settings, beta, seed), f"softmax/{obj}")
                        if lam is None or ge is None:
                            continue
                        if (tdata or {}).get("outlier") is not None:
                            lam = np.sort(lam)[:-1]            # the bulk: the spike is not in the law
                        if progress is not None:
                            progress(f"{cell.config.name} {obj} n={cell.dims.n} β={beta} seed {seed}")
                        try:
                            fitted = TabulatedLaw.from_law(fit_spectrum(lam, family, degrees), points=points)
                        except FreeprobValueError as exc:
                            refused.append(str(exc))
                            continue
                        fit_ge.append(tabulated_w1(fitted, ge))
                        sm_ge.append(sample_distances(lam, ge)["relW1"])
                    rows.append(dict(config=cell.config.name, object=obj, n=cell.dims.n, beta=str(beta),
                                     fit=spec, fit_ge=_ci(fit_ge), sm_ge=_ci(sm_ge), refused=len(refused),
                                     reason=refused[0] if refused else None))
    return rows


def _ci(values):
    from freeprob.experiments.stats import finite_mean_interval
    r = finite_mean_interval(values)
    return None if r is None else dict(mean=r.mean, lo=r.lo, hi=r.hi, n=r.n)


def format_fit_rows(rows) -> str:
    """The ``--fit`` table of ``freeprob verify``: one line per row of
    :func:`verify_fit_rows`.  Raises nothing.  Source: this module."""
    def fmt(m):
        if m is None:
            return "n/a"
        if m.get("lo") is None or m["n"] < 2:
            return f"{100 * m['mean']:.2f}%"
        return f"{100 * m['mean']:.2f}% [{100 * m['lo']:.2f}, {100 * m['hi']:.2f}]"
    body = [(r["config"], r["object"], r["n"], r["beta"], r["fit"], fmt(r["fit_ge"]), fmt(r["sm_ge"]),
             r["refused"]) for r in rows]
    table = text_table(["config", "object", "n", "β", "fit", "fit–GE relW1 (95% CI)",
                        "SM–GE relW1 (95% CI)", "refused"], body)
    notes = [f"  refused ({r['config']} {r['object']}): {r['reason']}" for r in rows if r["reason"]]
    return ("fitted laws of the softmax spectra against the GE law (relative W1 = W1/GE mean; "
            "SM–GE: the sample itself)\n" + table + ("\n" + "\n".join(notes) if notes else ""))
