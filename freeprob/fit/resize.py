r"""Free compression and decompression: a spectrum's law at another matrix size.

If an ``N × N`` matrix ``A`` is unitarily invariant (or free from the projection) with
spectral law ``μ``, its top-left ``n × n`` corner has, as ``n, N → ∞`` with ``n/N = α``,
the law ``D_α(μ^{⊞1/α})`` ([NS06]_ Lecture 14, Thm. 14.10: free compression): free
cumulants ``κ_k ↦ α^{k−1} κ_k``.  So with ``r`` = new size / old size, the law at the
new size is

``resize(μ, r) = D_r(μ^{⊞ 1/r})``,  ``κ_k ↦ r^{k−1} κ_k``,  ``R(w) ↦ R(r w)``.

``r < 1`` compresses (always a law); ``r > 1`` decompresses: the law of the larger matrix
whose compression the sample is ("free decompression", as freealg calls it).  That is a
law for every ``r`` when ``μ`` is ⊞-infinitely divisible (semicircle, free Poisson: the
family fits of :func:`freeprob.fit.fit_law`); otherwise only up to some ``r``, so the
decompressed equation is checked (:func:`~freeprob.fit.equation.check_law`) and refused
when it defines no law.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from freeprob.core.params import as_exact, check
from freeprob.core.symbols import w as _w
from freeprob.errors import FreeprobValueError
from freeprob.fit.equation import NotALaw, check_law
from freeprob.laws.algebraic import r_equation, r_to_g, raw_cauchy_equation
from freeprob.laws.law import Law
from freeprob.laws.operations import dilate, free_power

__all__ = ["FreeResize", "decompress", "compress"]


@dataclass(frozen=True)
class FreeResize(Law):
    r"""``D_r(μ^{⊞1/r})`` for any ``r > 0``: free cumulants ``r^{k−1} κ_k(μ)``.

    Unlike :func:`~freeprob.laws.operations.free_power` (which refuses ``t < 1`` for a law
    not known to be infinitely divisible), this takes any ``r``; whether the result is a
    law is for :func:`~freeprob.fit.equation.check_law` to decide (:func:`decompress` does).
    Its Cauchy equation comes from the R-equation by ``w ↦ r w``.  Source: [NS06]_ Lecture
    14 (free compression).

    Raises
    ------
    FreeprobValueError
        ``law`` not a Law; ``ratio`` not provably positive.
    """

    law: Law
    ratio: object

    def __post_init__(self):
        if not isinstance(self.law, Law):
            raise FreeprobValueError(f"FreeResize: law must be a Law; got {self.law!r}")
        object.__setattr__(self, "ratio", check(as_exact(self.ratio, "FreeResize", "ratio"),
                                                "positive", "FreeResize", "ratio"))

    def _parameters(self):
        return self.law.parameters() + (self.ratio,)

    def _cumulant_formula(self, ring, k):
        r = ring.convert(self.ratio)
        kappa = self.law._kappa(ring, k)
        out, p = [ring.zero], ring.one
        for n in range(1, k + 1):
            out.append(kappa[n] * p)
            p = p * r
        return out


@raw_cauchy_equation.register
def _(law: FreeResize):
    Q = r_equation(law.law)
    Qn = sp.Poly(sp.expand(Q.as_expr().xreplace({_w: law.ratio * _w})), *Q.gens)
    return r_to_g(Qn)


def _as_law(sample, who, family, degrees, errors, beta):
    if isinstance(sample, Law):
        return sample
    if family is not None:
        from freeprob.fit.families import fit_law
        return fit_law(sample, family, errors=errors, beta=beta).law
    from freeprob.fit.algebraic import fit_algebraic
    return fit_algebraic(sample, degrees).law


def _factor(factor, who):
    r = as_exact(factor, who, "factor")
    if not (r.is_number and r.is_real and r.is_positive):
        raise FreeprobValueError(f"{who}: factor must be a finite real number > 0 (new size / old "
                                 f"size); got {factor!r}")
    return r


def decompress(sample, factor, *, family=None, degrees=(2, 1), errors="iid", beta=1, check_result=True) -> Law:
    r"""The law of a matrix ``factor`` times larger whose compression the sample is.

    ``D_r(μ^{⊞1/r})`` with ``r = factor`` (module docstring), ``μ`` the sample's law: the
    given :class:`~freeprob.laws.law.Law`, or one fitted to the eigenvalues —
    :func:`~freeprob.fit.fit_law` with ``family`` if given, else
    :func:`~freeprob.fit.fit_algebraic` with ``degrees``.  ``factor < 1`` compresses.

    Normalization: eigenvalues of the ``n × n`` and the ``factor·n × factor·n`` matrices on
    the same scale (a Wigner matrix with entries of variance ``1/N`` has, as its ``n × n``
    corner, the semicircle of variance ``n/N``; decompressing that by ``N/n`` gives variance
    1 back).

    Parameters
    ----------
    sample : real array of eigenvalues, shape ``(n,)``, or a Law
    factor : real > 0 (new size / old size): an int, a rational string ``"3/2"``, a sympy
        number or a float (taken as the rational it prints as)
    family, degrees, errors, beta : how to fit the sample (ignored for a Law)
    check_result : bool
        Check that a decompressed law not known to be infinitely divisible is a law (with
        ``False`` the unchecked :class:`FreeResize` is returned).

    Returns
    -------
    Law
        ``dilate(free_power(μ, 1/r), r)`` for ``r ≤ 1`` or an infinitely divisible ``μ``
        (exact), else a checked :class:`FreeResize`.

    Raises
    ------
    FreeprobValueError
        ``factor`` not a finite number > 0; bad eigenvalues or fit (as the fit functions);
        a decompression that is no law (the message says which check failed: decompress
        by less, or fit a family).

    Source: [NS06]_ Lecture 14, Thm. 14.10 (free compression); [NS96]_.
    """
    who = "decompress"
    r = _factor(factor, who)
    law = _as_law(sample, who, family, degrees, errors, beta)
    if r == 1:
        return law
    if r < 1 or law._infinitely_divisible():
        return dilate(free_power(law, 1 / r), r)
    out = FreeResize(law, r)
    if check_result:
        try:
            check_law(out)
        except NotALaw as exc:
            raise FreeprobValueError(
                f"{who}: decompressing by {factor} gives no law: {exc}. The fitted law is not "
                "known to be ⊞-infinitely divisible, so it decompresses only up to some factor; "
                "decompress by less, or fit a family (family='marchenko-pastur', …)") from exc
    return out


def compress(sample, factor, **kwargs) -> Law:
    r"""The law of the ``n/factor × n/factor`` corner: :func:`decompress` by ``1/factor``.

    Parameters as :func:`decompress` (``factor > 0``: old size / new size); always a law
    for ``factor ≥ 1``.  Raises as :func:`decompress`.  Source: [NS06]_ Thm. 14.10.
    """
    return decompress(sample, 1 / _factor(factor, "compress"), **kwargs)
