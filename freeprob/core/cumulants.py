r"""Moments ↔ free, boolean, classical and monotone cumulants by the generating-function route.

Conventions (see :mod:`freeprob.core.conventions`): sequences are indexed by order,
``m = (m_0 = 1, m_1, …, m_k)`` and ``κ = (κ_0 = 0, κ_1, …, κ_k)``, with

* free cumulants: ``M(z) = C(z M(z))``, where ``M(z) = Σ_{n≥0} m_n z^n`` and
  ``C(w) = 1 + Σ_{n≥1} κ_n w^n`` ([NS06]_, Lecture 16, Thm. 16.15 / Remark 16.18).
  Writing ``f(z) = z M(z)``, the relation reads ``f^{<-1>}(w) = w / C(w)``, so both
  directions are one series reversion (FLINT's fast kernel for rationals);
* boolean cumulants: ``η(z) = Σ_{n≥1} b_n z^n = 1 − 1/M(z)`` ([SW97]_);
* classical cumulants: ``Σ_{n≥1} c_n z^n/n! = log Σ_{n≥0} m_n z^n/n!``;
* monotone cumulants ([HS11]_): ``h_n = d/dt m_n(μ^{▷t})|_{t=0}``, where the monotone
  convolution powers ``μ^{▷t}`` have ``h_t(z) = z M_t(z)`` with ``h_{s+t} = h_s ∘ h_t``.
  ``h_t`` is the flow of the vector field ``V(z) = Σ_n h_n z^{n+1}``, so
  ``∂_t h_t = V ∂_z h_t`` and, coefficient by coefficient,
  ``m_n(t) = t h_n + ∫_0^t Σ_{j=1}^{n−1} (n − j + 1) h_j m_{n−j}(s) ds``: the moment
  polynomials ``m_n(t)`` are built degree by degree, and ``h_n = m_n − (the integral at
  t = 1)`` (the moment polynomials of [HS11]_ §4; FriCAS's ``Distribution`` domain runs
  the same recursion).

The independent, combinatorial route (sums over non-crossing, interval and all set
partitions) is in :mod:`freeprob.core.partitions`; the tests check that both agree.

Examples
--------
>>> from freeprob import moments_to_free_cumulants, free_cumulants_to_moments
>>> free_cumulants_to_moments([0, 0, 1, 0, 0, 0, 0])      # semicircle: Catalan numbers
(1, 0, 1, 0, 2, 0, 5)
>>> moments_to_free_cumulants([1, 1, 2, 5, 14])          # free Poisson(1): all κ_n = 1
(0, 1, 1, 1, 1)
>>> from freeprob import moments_to_classical_cumulants
>>> moments_to_classical_cumulants([1, 0, 1, 0, 3, 0, 15])  # standard Gaussian
(0, 0, 1, 0, 0, 0, 0)

The combinatorial route of the monotone case (non-crossing partitions weighted by the
inverse tree factorial of their nesting forest, [HS11]_ §4, [AHLV15]_) is checked in the tests.

References: [NS06]_, [SW97]_, [HS11]_, [AHLV15]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

import math

import flint

from freeprob.core.coefficients import QQ, CoefficientRing
from freeprob.errors import FreeprobValueError
from freeprob.core.series import TruncatedSeries, _infer_ring

__all__ = [
    "moments_to_free_cumulants",
    "free_cumulants_to_moments",
    "moments_to_boolean_cumulants",
    "boolean_cumulants_to_moments",
    "moments_to_classical_cumulants",
    "classical_cumulants_to_moments",
    "moments_to_monotone_cumulants",
    "monotone_cumulants_to_moments",
]


# -- ring-level kernels (lists of ring elements, index = order) ------------------
def free_cumulants_from_moments(ring: CoefficientRing, m: list) -> list:
    """κ_0..κ_k from m_0..m_k (``m[0] == 1``), all in ``ring``."""
    k = len(m) - 1
    if k == 0:
        return [ring.zero]
    f = TruncatedSeries._raw([ring.zero] + list(m), k + 2, ring)      # z M(z)
    g = f.reversion()                                                 # w / C(w)
    C = g.shift(-1).inverse()
    return [ring.zero] + list(C._c[1:k + 1])


def moments_from_free_cumulants(ring: CoefficientRing, kappa: list) -> list:
    """m_0..m_k from κ_0..κ_k (``κ_0`` ignored), all in ``ring``."""
    k = len(kappa) - 1
    if k == 0:
        return [ring.one]
    C = TruncatedSeries._raw([ring.one] + list(kappa[1:]), k + 1, ring)
    g = C.inverse().shift(1)                                          # w / C(w)
    f = g.reversion()                                                 # z M(z)
    return list(f._c[1:k + 2])


def moments_from_s_transform(ring: CoefficientRing, s: list, k: int) -> list:
    """m_0..m_k from the S-transform ``S(u) = s_0 + s_1 u + … + s_{k-1} u^{k-1} + O(u^k)``
    (``s_0 = 1/m_1 ≠ 0``), all in ``ring``: one reversion, ``ψ = χ^{<-1>}`` with
    ``χ(u) = u S(u)/(1 + u)`` ([NS06] Lecture 18, Def. 18.15; [MS17] §2.6).

    Raises :class:`~freeprob.errors.SeriesValuationError` if ``s_0`` is zero."""
    if k == 0:
        return [ring.one]
    S = TruncatedSeries._raw(list(s[:k]), k, ring)
    one_plus_u = TruncatedSeries._raw([ring.one, ring.one], k, ring)
    psi = (S / one_plus_u).shift(1).reversion()                       # order k + 1
    return [ring.one] + list(psi._c[1:k + 1])


def free_cumulants_from_s_transform(ring: CoefficientRing, s: list, k: int) -> list:
    """κ_0..κ_k from the S-transform (as in :func:`moments_from_s_transform`), all in
    ``ring``: one reversion, ``Σ_{n≥1} κ_n w^n = (u S(u))^{<-1>}(w)`` ([NS06] Lecture 18,
    Remark 18.16: ``S(z) = z^{-1} R^{<-1>}(z)`` for the cumulant series ``R``).

    Raises :class:`~freeprob.errors.SeriesValuationError` if ``s_0`` is zero."""
    if k == 0:
        return [ring.zero]
    r = TruncatedSeries._raw(list(s[:k]), k, ring).shift(1).reversion()   # order k + 1
    return [ring.zero] + list(r._c[1:k + 1])


def boolean_cumulants_from_moments(ring: CoefficientRing, m: list) -> list:
    k = len(m) - 1
    M = TruncatedSeries._raw(list(m), k + 1, ring)
    eta = 1 - M.inverse()
    return [ring.zero] + list(eta._c[1:])


def moments_from_boolean_cumulants(ring: CoefficientRing, b: list) -> list:
    k = len(b) - 1
    eta = TruncatedSeries._raw([ring.zero] + list(b[1:]), k + 1, ring)
    return list((1 - eta).inverse()._c)


def classical_cumulants_from_moments(ring: CoefficientRing, m: list) -> list:
    k = len(m) - 1
    with ring.context():
        egf = [m[n] / ring.convert(math.factorial(n)) for n in range(k + 1)]
    L = TruncatedSeries._raw(egf, k + 1, ring).log()
    with ring.context():
        return [ring.zero] + [L._c[n] * ring.convert(math.factorial(n)) for n in range(1, k + 1)]


def moments_from_classical_cumulants(ring: CoefficientRing, c: list) -> list:
    k = len(c) - 1
    with ring.context():
        egf = [ring.zero] + [c[n] / ring.convert(math.factorial(n)) for n in range(1, k + 1)]
    E = TruncatedSeries._raw(egf, k + 1, ring).exp()
    with ring.context():
        return [E._c[n] * ring.convert(math.factorial(n)) for n in range(k + 1)]


def _monotone(ring, x, to_cumulants):
    """The moment polynomials ``m_n(t)`` of the monotone semigroup, ``n = 0..k``, built
    from ``x`` (moments when ``to_cumulants``, else monotone cumulants); returns the other
    sequence.  ``O(k^3)`` ring operations (FLINT ``fmpq_poly`` over the rationals)."""
    k = len(x) - 1
    h = [ring.zero] * (k + 1) if to_cumulants else list(x)    # the monotone cumulants
    out = list(h) if to_cumulants else [ring.one] + [ring.zero] * k
    if ring == QQ:
        polys = [flint.fmpq_poly([1])]
        for n in range(1, k + 1):
            acc = flint.fmpq_poly()
            for j in range(1, n):
                if h[j] != 0:
                    acc += h[j] * (n - j + 1) * polys[n - j]
            integral = acc.integral()
            value = integral(1) if n > 1 else ring.zero
            if to_cumulants:
                h[n] = out[n] = x[n] - value
            else:
                out[n] = x[n] + value
            polys.append(integral + flint.fmpq_poly([0, h[n]]))
        return out
    inverse = [ring.one / ring.convert(p + 1) for p in range(k + 1)]
    polys = [[ring.one]]
    for n in range(1, k + 1):
        acc = [ring.zero] * n              # Σ_j (n − j + 1) h_j m_{n−j}(t), degree <= n − 1
        for j in range(1, n):
            if ring.is_zero(h[j]):
                continue
            c = h[j] * ring.convert(n - j + 1)
            for p, a in enumerate(polys[n - j]):
                acc[p] = acc[p] + c * a
        integral = [ring.zero] + [acc[p] * inverse[p] for p in range(n)]
        value = ring.zero
        for a in integral:
            value = value + a
        if to_cumulants:
            h[n] = out[n] = x[n] - value
        else:
            out[n] = x[n] + value
        integral[1] = integral[1] + h[n]
        polys.append(integral)
    return out


def monotone_cumulants_from_moments(ring: CoefficientRing, m: list) -> list:
    """h_0..h_k (``h_0 = 0``) from m_0..m_k, all in ``ring`` (a field of characteristic 0)."""
    with ring.context():
        return _monotone(ring, list(m), True)


def moments_from_monotone_cumulants(ring: CoefficientRing, h: list) -> list:
    """m_0..m_k from h_0..h_k (``h_0`` ignored), all in ``ring``."""
    with ring.context():
        return _monotone(ring, [ring.zero] + list(h[1:]), False)


# -- public functions on plain sequences -----------------------------------------
def _prepare(seq, who, first, first_name):
    if isinstance(seq, str | bytes):
        raise FreeprobValueError(f"{who}: expected a sequence of numbers indexed by order; got the string {seq!r}")
    try:
        seq = list(seq)
    except TypeError as exc:
        raise FreeprobValueError(f"{who}: expected a sequence indexed by order; got {seq!r}") from exc
    if not seq:
        raise FreeprobValueError(f"{who}: the sequence is empty; it must start with {first_name}")
    try:
        ring = _infer_ring(seq)
        vals = [ring.convert(v) for v in seq]
    except FreeprobValueError as exc:
        raise FreeprobValueError(f"{who}: {exc}") from exc
    if not ring.is_zero(vals[0] - ring.convert(first)):
        raise FreeprobValueError(
            f"{who}: entry 0 must be {first_name} = {first} (sequences are indexed by "
            f"order); got {seq[0]!r}"
        )
    return ring, vals


def _output(ring, vals):
    if ring.exact:
        return tuple(ring.to_sympy(v) for v in vals)
    return tuple(vals)


def _public(kernel, who, first, first_name, doc):
    def fn(seq):
        ring, vals = _prepare(seq, who, first, first_name)
        with ring.context():
            return _output(ring, kernel(ring, vals))

    fn.__name__ = who
    fn.__qualname__ = who
    fn.__doc__ = doc
    return fn


_DOC = r"""Convert {src} to {dst} ({route}).

Parameters
----------
seq : sequence
    ``({s0}, {s}_1, …, {s}_k)``, indexed by order; exact numbers (int, Fraction,
    sympy Rational or expressions with symbols) or mpmath numbers.

Returns
-------
tuple
    ``({d0}, {d}_1, …, {d}_k)``: sympy numbers/expressions for exact input, mpmath
    numbers (at the current ``mp.dps``) for mpmath input.

Raises
------
FreeprobValueError
    If ``seq`` is empty, entry 0 is not {s0}, or an entry is a float.

Notes
-----
{note}  Source: {source}.
"""

_FREE_NOTE = ("Generating functions: ``M(z) = C(z M(z))``; computed by one series "
              "reversion of ``z M(z)``.")
_BOOL_NOTE = "Generating functions: ``1 − 1/M(z) = Σ b_n z^n``."
_MONO_NOTE = ("Monotone convolution semigroup: ``h_n = d/dt m_n(μ^{▷t})|_{t=0}``; the moment "
              "polynomials ``m_n(t)`` are built degree by degree (``O(k^3)``).")
_CLASS_NOTE = "Exponential generating functions: ``log Σ m_n z^n/n! = Σ c_n z^n/n!``."

moments_to_free_cumulants = _public(
    free_cumulants_from_moments, "moments_to_free_cumulants", 1, "m_0",
    _DOC.format(src="moments", dst="free cumulants", route="free moment–cumulant formula",
                s0="m_0 = 1", s="m", d0="κ_0 = 0", d="κ", note=_FREE_NOTE,
                source="[NS06] Lecture 11 (Def. 11.3) and Thm. 16.15"))
free_cumulants_to_moments = _public(
    moments_from_free_cumulants, "free_cumulants_to_moments", 0, "κ_0",
    _DOC.format(src="free cumulants", dst="moments", route="free moment–cumulant formula",
                s0="κ_0 = 0", s="κ", d0="m_0 = 1", d="m", note=_FREE_NOTE,
                source="[NS06] Lecture 11 (Def. 11.3) and Thm. 16.15"))
moments_to_boolean_cumulants = _public(
    boolean_cumulants_from_moments, "moments_to_boolean_cumulants", 1, "m_0",
    _DOC.format(src="moments", dst="boolean cumulants", route="interval partitions",
                s0="m_0 = 1", s="m", d0="b_0 = 0", d="b", note=_BOOL_NOTE,
                source="Speicher & Woroudi 1997 [SW97]"))
boolean_cumulants_to_moments = _public(
    moments_from_boolean_cumulants, "boolean_cumulants_to_moments", 0, "b_0",
    _DOC.format(src="boolean cumulants", dst="moments", route="interval partitions",
                s0="b_0 = 0", s="b", d0="m_0 = 1", d="m", note=_BOOL_NOTE,
                source="Speicher & Woroudi 1997 [SW97]"))
moments_to_classical_cumulants = _public(
    classical_cumulants_from_moments, "moments_to_classical_cumulants", 1, "m_0",
    _DOC.format(src="moments", dst="classical cumulants", route="all set partitions",
                s0="m_0 = 1", s="m", d0="c_0 = 0", d="c", note=_CLASS_NOTE,
                source="[NS06] Lecture 11, Remark 11.9 (classical case)"))
classical_cumulants_to_moments = _public(
    moments_from_classical_cumulants, "classical_cumulants_to_moments", 0, "c_0",
    _DOC.format(src="classical cumulants", dst="moments", route="all set partitions",
                s0="c_0 = 0", s="c", d0="m_0 = 1", d="m", note=_CLASS_NOTE,
                source="[NS06] Lecture 11, Remark 11.9 (classical case)"))
moments_to_monotone_cumulants = _public(
    monotone_cumulants_from_moments, "moments_to_monotone_cumulants", 1, "m_0",
    _DOC.format(src="moments", dst="monotone cumulants", route="monotone moment polynomials",
                s0="m_0 = 1", s="m", d0="h_0 = 0", d="h", note=_MONO_NOTE,
                source="Hasebe & Saigo 2011 [HS11] §4"))
monotone_cumulants_to_moments = _public(
    moments_from_monotone_cumulants, "monotone_cumulants_to_moments", 0, "h_0",
    _DOC.format(src="monotone cumulants", dst="moments", route="monotone moment polynomials",
                s0="h_0 = 0", s="h", d0="m_0 = 1", d="m", note=_MONO_NOTE,
                source="Hasebe & Saigo 2011 [HS11] §4"))
