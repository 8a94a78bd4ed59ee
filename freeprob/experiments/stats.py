r"""Statistics over repeated measurements (one per seed/initialisation) for the
experiments: the sample mean and its Student-t confidence interval
(:func:`mean_interval`), a paired comparison over seeds with its t-interval, p-value and
verdict (:func:`paired_comparison`), a rate with its binomial interval and the per-draw and
mean-of-draws forms of "within X %" (:func:`rate_interval`, :func:`within_band`), and the
comparison of two fitted models under known noise by a parametric bootstrap
(:func:`compare_models`).  Every comparative claim printed by verify, readout and explore
goes through these (issue 26).

Moved here from the sampler's readout module (the sampler measures one draw; summarising
draws is the experiments' business).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from freeprob._extras import require

stats = require("scipy.stats", "sampler")

from freeprob._checks import check_real
from freeprob.errors import FreeprobValueError
from freeprob.sampler.arrays import real_array

__all__ = ["mean_interval", "finite_mean_interval", "MeanInterval", "paired_comparison", "PairedComparison",
           "rate_interval", "RateInterval", "within_band", "compare_models", "ModelChoice"]


@dataclass(frozen=True)
class MeanInterval:
    """Sample mean of ``n`` values and the half-width of its confidence interval
    (``half`` is ``None`` for ``n = 1``).  ``lo``/``hi`` are the interval ends.

    Source: the Student-t interval of :func:`mean_interval`.
    """

    mean: float
    half: float | None
    n: int
    level: float = 0.95

    @property
    def lo(self):
        return None if self.half is None else self.mean - self.half

    @property
    def hi(self):
        return None if self.half is None else self.mean + self.half

    def contains(self, value, slack=0.0):
        """``|value − mean| ≤ half + slack`` (``False`` without an interval).

        Raises nothing.
        """
        return self.half is not None and abs(float(value) - self.mean) <= self.half + slack

    def __format__(self, spec):
        spec = spec or ".4f"
        if self.half is None:
            return format(self.mean, spec)
        return f"{format(self.mean, spec)} ± {format(self.half, spec)}"


def mean_interval(values, level=0.95):
    r"""Mean and Student-t confidence interval ``x̄ ± t_{(1+level)/2, k−1} s/√k`` of ``k``
    independent measurements (e.g. one per initialisation).

    Parameters
    ----------
    values : 1-d sequence of finite reals, at least one
    level : float in ``(0, 1)``

    Returns
    -------
    MeanInterval

    Raises
    ------
    FreeprobValueError
        Empty or not 1-d input, non-finite values (or a mean that overflows), a level
        outside ``(0, 1)``.

    Source: the t-interval for a normal mean (any statistics text; scipy.stats.t).
    """
    who = "mean_interval"
    v = real_array(values, f"{who}: values", ndim=1, layout="(at least one value)")
    if not np.isfinite(v.mean()):
        raise FreeprobValueError(f"{who}: the mean of the values is not finite (float64 overflow); "
                                 f"got {v.tolist()!r}")
    lv = check_real(level, who, "level")
    if not 0 < lv < 1:
        raise FreeprobValueError(f"{who}: level must lie in (0, 1); got {level!r}")
    m = float(v.mean())
    if v.size < 2:
        return MeanInterval(m, None, 1, lv)
    half = float(stats.t.ppf((1 + lv) / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return MeanInterval(m, half, int(v.size), lv)



def finite_mean_interval(values, level=0.95):
    """:func:`mean_interval` of the finite values among ``values`` (``None`` and NaN, e.g.
    missing or failed seeds, dropped); ``None`` when no value is left.

    Raises ``FreeprobValueError`` as :func:`mean_interval`.  Source: :func:`mean_interval`.
    """
    v = [float(x) for x in values if x is not None and math.isfinite(x)]
    return mean_interval(v, level) if v else None


# ---------------------------------------------------------------------- paired comparisons

@dataclass(frozen=True)
class PairedComparison:
    r"""A paired comparison of two quantities measured on the same ``n`` seeds: the mean
    difference ``a − b`` with its Student-t interval (``half`` is ``None`` for ``n = 1``),
    the two-sided p-value of the paired t-test (``None`` for ``n = 1``), the level, and the
    mean of ``b`` (for relative statements).

    ``significant``: the interval excludes 0 (the same as ``p < 1 − level``).  ``verdict``:
    ``"<lower> (significant)"`` when ``a`` is significantly smaller, ``"<higher>
    (significant)"`` when larger, else ``"not significant"``.

    Source: :func:`paired_comparison`.
    """

    mean: float
    half: float | None
    n: int
    p: float | None
    level: float
    base: float
    lower: str = "smaller"
    higher: str = "larger"

    @property
    def lo(self):
        return None if self.half is None else self.mean - self.half

    @property
    def hi(self):
        return None if self.half is None else self.mean + self.half

    @property
    def significant(self) -> bool:
        return self.half is not None and (self.lo > 0 or self.hi < 0)

    @property
    def verdict(self) -> str:
        if not self.significant:
            return "not significant"
        return f"{self.lower if self.mean < 0 else self.higher} (significant)"

    def as_dict(self):
        """``{mean, lo, hi, n, p, verdict, relative}`` (JSON-able; the interval ends ``None``
        for one pair; ``relative`` the mean difference over the mean of ``b``, ``None`` when
        that is 0).  Raises nothing."""
        return dict(mean=self.mean, lo=self.lo, hi=self.hi, n=self.n, p=self.p, verdict=self.verdict,
                    relative=self.mean / self.base if self.base else None)

    def __format__(self, spec):
        spec = spec or ".4f"
        if self.half is None:
            return f"{format(self.mean, spec)} (one pair: no interval)"
        return f"{format(self.mean, spec)} ± {format(self.half, spec)} (p = {self.p:.2g})"


def paired_comparison(a, b, level=0.95, *, lower="smaller", higher="larger"):
    r"""Paired comparison of ``a`` and ``b`` measured on the same seeds: the mean of
    ``d = a − b``, its Student-t interval ``d̄ ± t_{(1+level)/2, k−1} s_d/√k`` and the
    two-sided p-value of the paired t-test (:func:`scipy.stats.ttest_rel`).

    Pairs where either value is ``None`` or NaN (a missing or failed seed) are dropped.

    Parameters
    ----------
    a, b : 1-d sequences of equal length (one value per seed)
    level : float in ``(0, 1)``
    lower, higher : str
        The words of :attr:`PairedComparison.verdict` (``"closer"``, ``"farther"``).

    Returns
    -------
    PairedComparison
        With identical differences (``s_d = 0``) the interval has half-width 0 and ``p``
        is 1 for a zero difference and 0 otherwise.

    Raises
    ------
    FreeprobValueError
        Lengths differ, no complete pair, a level outside ``(0, 1)``.

    Source: the paired t-test and its interval (any statistics text; scipy.stats.ttest_rel).
    """
    who = "paired_comparison"
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise FreeprobValueError(f"{who}: a and b must have one value per seed each; got {len(a)} and {len(b)}")
    ok = lambda x: x is not None and math.isfinite(float(x))  # noqa: E731
    pairs = [(float(x), float(y)) for x, y in zip(a, b) if ok(x) and ok(y)]
    if not pairs:
        raise FreeprobValueError(f"{who}: no seed has both values (finite); got a={a!r}, b={b!r}")
    d = mean_interval([x - y for x, y in pairs], level)
    base = float(np.mean([y for _, y in pairs]))
    p = None
    if d.n >= 2:
        if d.half == 0:
            p = 1.0 if d.mean == 0 else 0.0
        else:
            p = float(stats.ttest_rel([x for x, _ in pairs], [y for _, y in pairs]).pvalue)
    return PairedComparison(d.mean, d.half, d.n, p, d.level, base, lower, higher)


# ---------------------------------------------------------------------- rates

@dataclass(frozen=True)
class RateInterval:
    r"""``k`` successes in ``n`` trials, the rate ``k/n`` and its binomial confidence
    interval ``[lo, hi]`` (method ``"wilson"`` or ``"clopper-pearson"``).

    Source: :func:`rate_interval`.
    """

    k: int
    n: int
    lo: float
    hi: float
    level: float = 0.95
    method: str = "wilson"

    @property
    def rate(self) -> float:
        return self.k / self.n

    def as_dict(self):
        """``{mean, lo, hi, n, k}`` (the rate as ``mean``: the shape of a verify metric).
        Raises nothing."""
        return dict(mean=self.rate, lo=self.lo, hi=self.hi, n=self.n, k=self.k)

    def __format__(self, spec):
        return (f"{self.k} of {self.n} ({100 * self.rate:.0f}%, {100 * self.level:.0f}% interval "
                f"{100 * self.lo:.0f}–{100 * self.hi:.0f}%)")


def rate_interval(k, n, level=0.95, method="wilson"):
    r"""The rate ``k/n`` of ``k`` successes in ``n`` independent trials with its binomial
    confidence interval: Wilson's score interval (default) or the exact Clopper–Pearson one
    (:meth:`scipy.stats.binomtest` ``.proportion_ci``).

    Parameters
    ----------
    k, n : int, ``0 ≤ k ≤ n``, ``n ≥ 1``
    level : float in ``(0, 1)``
    method : {"wilson", "clopper-pearson"}

    Returns
    -------
    RateInterval

    Raises
    ------
    FreeprobValueError
        ``k`` or ``n`` not integers in range, a level outside ``(0, 1)``, an unknown method.

    Source: Wilson (1927); Clopper & Pearson (1934); scipy.stats.binomtest.
    """
    who = "rate_interval"
    if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in (k, n)) or not 0 <= k <= n or n < 1:
        raise FreeprobValueError(f"{who}: need integers 0 ≤ k ≤ n with n ≥ 1; got k={k!r}, n={n!r}")
    lv = check_real(level, who, "level")
    if not 0 < lv < 1:
        raise FreeprobValueError(f"{who}: level must lie in (0, 1); got {level!r}")
    methods = {"wilson": "wilson", "clopper-pearson": "exact"}
    if method not in methods:
        raise FreeprobValueError(f"{who}: method must be one of {', '.join(methods)}; got {method!r}")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=lv, method=methods[method])
    return RateInterval(int(k), int(n), float(ci.low), float(ci.high), lv, method)


def within_band(values, references, band, level=0.95):
    r"""Per-draw and mean-of-draws versions of "``values`` within ``band`` of ``references``".

    ``r_i = values_i/references_i − 1`` per draw (pairs with a missing, NaN or zero
    reference dropped).

    Parameters
    ----------
    values, references : 1-d sequences of equal length (one per draw; a constant
        reference repeated)
    band : float > 0 (``0.05`` for 5 %)
    level : float in ``(0, 1)``

    Returns
    -------
    dict
        ``per_draw``: :class:`RateInterval` of the draws with ``|r_i| ≤ band`` (Wilson);
        ``mean``: :class:`MeanInterval` of ``r_i`` (the mean-of-draws relative
        difference); ``verdict`` of the mean: ``"within"`` (its interval inside
        ``±band``), ``"outside"`` (its interval outside), ``"not significant"`` (the
        interval straddles ``±band``; one draw: by the point value).

    Raises
    ------
    FreeprobValueError
        Lengths differ, no usable pair, ``band ≤ 0``.

    Source: :func:`rate_interval`, :func:`mean_interval`.
    """
    who = "within_band"
    band = check_real(band, who, "band", minimum=0, strict=True)
    values, references = list(values), list(references)
    if len(values) != len(references):
        raise FreeprobValueError(f"{who}: values and references must have one entry per draw each; got "
                                 f"{len(values)} and {len(references)}")
    ok = lambda x: x is not None and math.isfinite(float(x))  # noqa: E731
    rel = [float(v) / float(r) - 1 for v, r in zip(values, references) if ok(v) and ok(r) and float(r) != 0]
    if not rel:
        raise FreeprobValueError(f"{who}: no draw has a value and a non-zero reference")
    m = mean_interval(rel, level)
    inside = [abs(r) <= band for r in rel]
    if m.half is None:
        verdict = "within" if abs(m.mean) <= band else "outside"
    elif -band <= m.lo and m.hi <= band:
        verdict = "within"
    elif m.lo > band or m.hi < -band:
        verdict = "outside"
    else:
        verdict = "not significant"
    return dict(per_draw=rate_interval(sum(inside), len(rel), level), mean=m, verdict=verdict)


# ---------------------------------------------------------------------- model comparison

@dataclass(frozen=True)
class ModelChoice:
    r"""Two fitted models of the same data with known noise: their ``chi2``
    ``Σ((y − fit)/σ)²``, ``delta = chi2[second] − chi2[first]`` (positive favours the
    first), the likelihood ratio ``exp(delta/2)`` of the two best fits (Gaussian noise;
    with equal parameter counts ``delta`` is also the AIC difference), and from a
    parametric bootstrap (``draws`` data sets ``y* = fit(x) + σ ε`` under each fitted
    model):

    * ``first_wins``: ``{model: RateInterval}``, how often the first model fits better when
      the data come from ``model``'s fit;
    * ``delta_range``: the central ``level`` range of ``delta`` over the draws from the
      first model's fit (the uncertainty of the observed ``delta``);
    * ``p_second``: the share of draws from the second model's fit with ``delta*`` at
      least the observed one (the p-value of the second model: how often it produces as
      strong a preference for the first); ``p_first``: the share of draws from the first
      model's fit with ``delta*`` at most the observed one (the p-value of the first).

    ``fit_p``: ``{model: p}``, the goodness of fit of each model on its own, the χ² tail
    probability of its ``chi2`` with ``k − params`` degrees of freedom (``None`` without a
    degree of freedom).

    ``verdict``: a model is rejected when its bootstrap p-value or its ``fit_p`` is below
    ``1 − level``; ``"<first> preferred"`` when only the second is rejected,
    ``"<second> preferred"`` the other way round, ``"neither fits"`` when both are, else
    ``"not significant"``.

    Source: :func:`compare_models`.
    """

    names: tuple
    chi2: dict
    delta: float
    delta_range: tuple
    first_wins: dict
    p_first: RateInterval
    p_second: RateInterval
    draws: int
    level: float = 0.95
    fit_p: dict = None

    @property
    def likelihood_ratio(self) -> float:
        return math.exp(max(min(self.delta / 2, 700.0), -700.0))

    @property
    def verdict(self) -> str:
        a, b = self.names
        alpha = 1 - self.level
        bad = lambda m: (self.fit_p or {}).get(m) is not None and self.fit_p[m] < alpha  # noqa: E731
        ra, rb = self.p_first.rate < alpha or bad(a), self.p_second.rate < alpha or bad(b)
        return ("neither fits" if ra and rb else f"{a} preferred" if rb else f"{b} preferred" if ra
                else "not significant")

    def as_dict(self):
        """JSON-able record.  Raises nothing."""
        a, b = self.names
        rate = lambda r: dict(rate=r.rate, lo=r.lo, hi=r.hi)  # noqa: E731
        return dict(models=list(self.names), chi2=self.chi2, delta_chi2=self.delta,
                    likelihood_ratio=self.likelihood_ratio, delta_chi2_range=list(self.delta_range),
                    level=self.level, draws=self.draws, verdict=self.verdict, fit_p=self.fit_p,
                    **{f"p_{a}_wins_if_{m}": rate(r) for m, r in self.first_wins.items()},
                    **{f"p_value_{a}": rate(self.p_first), f"p_value_{b}": rate(self.p_second)})

    def summary(self) -> str:
        """One line: Δχ² and the likelihood ratio with the range, the bootstrap rates, the
        p-values and the verdict.  Raises nothing."""
        a, b = self.names
        lo, hi = self.delta_range
        wins_b = self.first_wins[b]
        return (f"Δχ²({b} − {a}) = {self.delta:.2f} (likelihood ratio {self.likelihood_ratio:.3g}; "
                f"{100 * self.level:.0f}% range over redraws under {a}: {lo:.2f} to {hi:.2f}); "
                f"{a} fits better in {100 * self.first_wins[a].rate:.0f}% of draws if {a} is true and in "
                f"{100 * wins_b.rate:.0f}% ({100 * wins_b.lo:.0f}–{100 * wins_b.hi:.0f}%) if {b} is true; "
                f"p-value of {b} {self.p_second.rate:.3f}, of {a} {self.p_first.rate:.3f} "
                f"({self.draws} draws per model)"
                + ("" if not self.fit_p or None in self.fit_p.values() else
                   f"; goodness of fit χ² p {a} {self.fit_p[a]:.2g}, {b} {self.fit_p[b]:.2g}")
                + f": {self.verdict}")


def compare_models(x, y, sigma, fits, *, draws=2000, seed=0, level=0.95, params=2):
    r"""Compare two fitted models of ``y(x)`` measured with known Gaussian noise ``sigma``
    by their χ² and a parametric bootstrap (:class:`ModelChoice`).

    Parameters
    ----------
    x, y : 1-d sequences of finite reals, equal length ``k``
    sigma : positive float or 1-d sequence of ``k`` positive floats
        Standard deviation of each ``y`` (measured separately; the comparison is only as
        good as this estimate).
    fits : mapping of two names to callables
        ``fit(x, y, sigma) → fitted values at x`` (an array of length ``k``), the model's
        best (weighted least-squares) fit; the first name is the model the statements are
        about.
    draws : int ≥ 10
        Bootstrap data sets per model.
    seed : int
        Seed of the bootstrap noise (``numpy.random.default_rng(seed)``).
    level : float in ``(0, 1)``
    params : int or mapping of the two names to ints
        Fitted parameters of each model (for the goodness of fit, ``k − params`` degrees of
        freedom; default 2).

    Returns
    -------
    ModelChoice

    Raises
    ------
    FreeprobValueError
        Not two models, lengths that differ, non-finite data, ``sigma ≤ 0``, ``draws < 10``.
    Whatever a fit raises (a fit that fails on a bootstrap draw is a failed comparison).

    Source: parametric bootstrap of a likelihood-ratio statistic (Efron & Tibshirani 1993,
    ch. 16; Cox 1962 for non-nested models).
    """
    who = "compare_models"
    names = tuple(fits)
    if len(names) != 2:
        raise FreeprobValueError(f"{who}: give exactly two models; got {list(names)}")
    xv = real_array(x, f"{who}: x", ndim=1)
    yv = real_array(y, f"{who}: y", ndim=1)
    sv = real_array(sigma, f"{who}: sigma")
    if sv.ndim == 0:
        sv = np.full(yv.shape, float(sv))
    elif sv.ndim != 1:
        raise FreeprobValueError(f"{who}: sigma must be a number or one value per point; got shape {sv.shape}")
    if not (xv.size == yv.size == sv.size):
        raise FreeprobValueError(f"{who}: x, y and sigma must have the same length; got {xv.size}, {yv.size}, "
                                 f"{sv.size}")
    if np.any(sv <= 0):
        raise FreeprobValueError(f"{who}: sigma must be positive; got {sv.tolist()!r}")
    if isinstance(draws, bool) or not isinstance(draws, numbers.Integral) or draws < 10:
        raise FreeprobValueError(f"{who}: draws must be an integer ≥ 10; got {draws!r}")
    lv = check_real(level, who, "level")
    if not 0 < lv < 1:
        raise FreeprobValueError(f"{who}: level must lie in (0, 1); got {level!r}")

    def chi2(yy):
        return {m: float(np.sum(((yy - np.asarray(fits[m](xv, yy, sv), float)) / sv) ** 2)) for m in names}

    a, b = names
    c0 = chi2(yv)
    delta = c0[b] - c0[a]
    rng = np.random.default_rng(seed)
    truth = {m: np.asarray(fits[m](xv, yv, sv), float) for m in names}
    sims = {}
    for m in names:
        d = np.empty(draws)
        for i in range(draws):
            c = chi2(truth[m] + sv * rng.standard_normal(yv.size))
            d[i] = c[b] - c[a]
        sims[m] = d
    q = (1 - lv) / 2
    rng_a = (float(np.quantile(sims[a], q)), float(np.quantile(sims[a], 1 - q)))
    wins = {m: rate_interval(int(np.sum(sims[m] > 0)), draws, lv) for m in names}
    p_first = rate_interval(int(np.sum(sims[a] <= delta)), draws, lv)
    p_second = rate_interval(int(np.sum(sims[b] >= delta)), draws, lv)
    counts = {m: int(params if isinstance(params, numbers.Integral) else params[m]) for m in names}
    fit_p = {m: (float(stats.chi2.sf(c0[m], yv.size - counts[m])) if yv.size > counts[m] else None)
             for m in names}
    return ModelChoice(names, c0, float(delta), rng_a, wins, p_first, p_second, int(draws), lv, fit_p)
