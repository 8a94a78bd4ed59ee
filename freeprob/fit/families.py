r"""A law family fitted to a sample spectrum by moment matching, with intervals.

``fit_law(eigenvalues, family=…)`` matches the family's first free cumulants to the
sample's (:func:`freeprob.fit.fit_free_cumulants`) and carries their covariance to the
parameters by the delta method.  The families and their parameters as functions of the
free cumulants ``κ_n``:

========================  ===========================================  ====================
family                    law                                          parameters
========================  ===========================================  ====================
``semicircle``            ``Semicircle(mean, variance)``               ``κ_1``, ``κ_2``
``marchenko-pastur``      ``MarchenkoPastur(ratio, scale)``            ``κ_2/κ_1²``, ``κ_1``
``free-poisson``          ``FreePoisson(rate, jump)``                  ``κ_1²/κ_2``, ``κ_2/κ_1``
``shifted-free-poisson``  ``FreePoisson(rate, jump) + shift``          ``κ_2³/κ_3²``,
                                                                       ``κ_3/κ_2``,
                                                                       ``κ_1 − κ_2²/κ_3``
========================  ===========================================  ====================

(free Poisson: ``κ_n = rate·jump^n``, [NS06]_ Prop. 12.11; semicircle: ``κ_1 = mean``,
``κ_2 = variance``, the others 0, [NS06]_ Lecture 11; ``MarchenkoPastur(c, s)`` is
``FreePoisson(1/c, c s)``, mean ``s``, variance ``c s²``.)  The fitted law has the
estimates rounded to 7 significant digits as exact rationals.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sp

from freeprob._checks import check_choice
from freeprob.errors import FreeprobValueError
from freeprob.fit.cumulants import CumulantFit, Estimate, estimates_table, fit_free_cumulants
from freeprob.laws.families import FreePoisson, MarchenkoPastur, Semicircle
from freeprob.laws.law import Law
from freeprob.laws.operations import shift

__all__ = ["FAMILIES", "LawFit", "fit_law"]


def _semicircle(k):
    return np.array([k[0], k[1]])


def _marchenko_pastur(k):
    return np.array([k[1] / k[0] ** 2, k[0]])


def _free_poisson(k):
    return np.array([k[0] ** 2 / k[1], k[1] / k[0]])


def _shifted_free_poisson(k):
    return np.array([k[1] ** 3 / k[2] ** 2, k[2] / k[1], k[0] - k[1] ** 2 / k[2]])


def _r(v) -> sp.Rational:
    return sp.Rational(Fraction(f"{v:.7g}"))


#: family -> (parameter names, number of cumulants used, map κ -> parameters, law builder)
FAMILIES = {
    "semicircle": (("mean", "variance"), 2, _semicircle,
                   lambda p: Semicircle(_r(p[0]), _r(p[1]))),
    "marchenko-pastur": (("ratio", "scale"), 2, _marchenko_pastur,
                         lambda p: MarchenkoPastur(_r(p[0]), _r(p[1]))),
    "free-poisson": (("rate", "jump"), 2, _free_poisson,
                     lambda p: FreePoisson(_r(p[0]), _r(p[1]))),
    "shifted-free-poisson": (("rate", "jump", "shift"), 3, _shifted_free_poisson,
                             lambda p: shift(FreePoisson(_r(p[0]), _r(p[1])), _r(p[2]))),
}


@dataclass(frozen=True)
class LawFit:
    """The result of :func:`fit_law`.

    Attributes
    ----------
    law : Law, the fitted law (exact rational parameters)
    family : str
    parameters : tuple of :class:`~freeprob.fit.cumulants.Estimate`
    cumulants : CumulantFit, the fitted free cumulants the parameters come from
    """

    law: Law
    family: str
    parameters: tuple
    cumulants: CumulantFit

    @property
    def n(self) -> int:
        return self.cumulants.n

    def __str__(self):
        c = self.cumulants
        extra = f", β = {c.beta}" if c.errors == "matrix" else ""
        return estimates_table(list(self.parameters),
                               f"{self.family} fitted to {c.n} eigenvalues by moment matching "
                               f"(errors: {c.errors}{extra}): {self.law!r}")


def fit_law(eigenvalues, family="marchenko-pastur", *, errors="iid", beta=1, level=0.95) -> LawFit:
    r"""Fit a law family to a sample spectrum by moment matching, with intervals.

    The family's parameters are functions of the first two or three free cumulants (table
    in :mod:`freeprob.fit.families`); the sample's free cumulants and their covariance come
    from :func:`~freeprob.fit.cumulants.fit_free_cumulants` (same ``errors``, ``beta`` and
    ``level``, and the same meaning of the intervals: ``"iid"`` is conservative for the
    eigenvalues of one matrix, ``"matrix"`` is calibrated for one-cut β-ensembles), and the
    parameters' standard errors are the delta method through that function.

    Parameters
    ----------
    eigenvalues : real array, shape ``(n,)``, ``n ≥ 10``
    family : one of ``"semicircle"``, ``"marchenko-pastur"``, ``"free-poisson"``,
        ``"shifted-free-poisson"``
    errors, beta, level : as in :func:`~freeprob.fit.cumulants.fit_free_cumulants`

    Returns
    -------
    LawFit
        ``.law`` (exact :class:`~freeprob.laws.law.Law`), ``.parameters``
        (:class:`~freeprob.fit.cumulants.Estimate` each: ``value``, ``se``, ``lo``, ``hi``).

    Raises
    ------
    FreeprobValueError
        Bad eigenvalues (as :func:`fit_free_cumulants`); an unknown family; a sample the
        family cannot have come from (mean ≤ 0 for Marchenko–Pastur or free Poisson,
        third cumulant 0 for the shifted free Poisson law).

    Source: moment matching on free cumulants ([NS06]_ Lectures 11–12); the delta method.

    Examples
    --------
    >>> import numpy as np
    >>> from freeprob.fit import fit_law
    >>> x = 4 * np.random.default_rng(0).beta(1.5, 1.5, 4000) - 2   # i.i.d. semicircle
    >>> fit = fit_law(x, "semicircle")
    >>> [p.contains(t) for p, t in zip(fit.parameters, (0, 1))]
    [True, True]
    """
    who = "fit_law"
    family = check_choice(family, tuple(FAMILIES), who, "family")
    names, order, fn, build = FAMILIES[family]
    cum = fit_free_cumulants(eigenvalues, order, errors=errors, beta=beta, level=level)
    k = cum.values
    if family in ("marchenko-pastur", "free-poisson") and k[0] <= 0:
        raise FreeprobValueError(f"{who}: the sample mean is {k[0]:.6g} ≤ 0; a {family} law has a "
                                 "positive mean (try 'semicircle' or 'shifted-free-poisson')")
    if family == "shifted-free-poisson" and abs(k[2]) <= 1e-12 * k[1] ** 1.5:
        raise FreeprobValueError(f"{who}: the sample's third free cumulant is 0; a shifted free "
                                 "Poisson law needs skew (try 'semicircle')")
    theta = fn(k)
    J = np.empty((len(theta), order))
    for j in range(order):
        kc = k.astype(complex)
        kc[j] += 1e-30j
        J[:, j] = fn(kc).imag / 1e-30
    cov = J @ cum.covariance @ J.T
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    params = tuple(Estimate(nm, float(v), float(e), cum.cumulants[0].level)
                   for nm, v, e in zip(names, theta, se))
    try:
        law = build(theta)
    except FreeprobValueError as exc:  # pragma: no cover - the checks above keep parameters valid
        raise FreeprobValueError(f"{who}: the fitted parameters give no {family} law ({exc})") from exc
    return LawFit(law, family, params, cum)
