r"""Finite free probability: the finite free convolutions ``⊞_d``, ``⊠_d`` of real-rooted
polynomials, finite free cumulants, expected characteristic polynomials of random matrices
and their certified roots (the public module; a module of the laws layer,
docs/architecture.md).

A monic polynomial ``p`` of degree ``d`` stands for the ``d × d`` Hermitian matrices with
characteristic polynomial ``p``.  If ``Q`` is Haar orthogonal or unitary,
``E det(x − A − QBQ*) = p ⊞_d q`` and ``E det(x − A QBQ*) = p ⊠_d q``
([MSS22]_ Theorems 1.1 and 1.5; [MAR21]_).  The finite free cumulants ([AP18]_) add under
``⊞_d`` and tend to the free cumulants of the limit root distribution as ``d → ∞``;
:func:`expected_characteristic_polynomial` gives the degree-``d`` polynomial of a
:class:`~freeprob.laws.law.Law` built from Hermite (semicircle) and Laguerre (free Poisson)
polynomials, atoms, ``⊞``, ``⊠``, shifts and dilations, whose roots approximate the law.

Everything is exact: rational coefficients in FLINT, symbolic ones (sympy symbols as
parameters) in the rings of :mod:`freeprob.core.coefficients`.  The algebra is
:mod:`freeprob.core.finite_free`, the certified roots :mod:`freeprob.numeric.realroots`;
this module adds the real-rootedness checks and the link to laws.

Examples
--------
>>> from freeprob.finite import finite_free_add, from_roots, real_roots
>>> p = finite_free_add(from_roots([-1, 1]), from_roots([-1, 1]))    # E det(x − A − QAQ*)
>>> p
Poly(x**2 - 2, x, domain='QQ')
>>> [float(r) for r in real_roots(p)]
[-1.4142135623730951, 1.4142135623730951]

References: [MSS22]_, [MAR21]_, [AP18]_, [AGP23]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

import functools

import sympy as sp

from freeprob.core import finite_free as _ff
from freeprob.core.finite_free import (MAX_DEGREE, check_degree, finite_free_cumulants,
                                       from_finite_free_cumulants, from_normalized_coefficients,
                                       from_roots, monic_polynomial, normalized_coefficients)
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.numeric.realroots import is_real_rooted, real_roots

__all__ = [
    "MAX_DEGREE",
    "finite_free_add",
    "finite_free_mul",
    "finite_free_cumulants",
    "from_finite_free_cumulants",
    "normalized_coefficients",
    "from_normalized_coefficients",
    "from_roots",
    "expected_characteristic_polynomial",
    "is_real_rooted",
    "real_roots",
]


def _checked_real_rooted(p, who, name):
    """``p`` as a monic Poly, proven real-rooted when its coefficients are rational
    (symbolic coefficients are taken as they are).  Returns ``(poly, rational)``."""
    poly = monic_polynomial(p, who, name)
    rational = poly.domain.is_ZZ or poly.domain.is_QQ
    if rational and not is_real_rooted(poly):
        raise FreeprobValueError(
            f"{who}: {name} = {poly.as_expr()} is not real-rooted (Sturm's theorem, exact); "
            "the finite free convolutions are taken of real-rooted polynomials (check=False, or "
            "--no-check on the command line, gives the formal convolution of any monic polynomials)")
    return poly, rational


def _nonnegative_roots(poly) -> bool:
    """A real-rooted monic ``poly`` has all roots ``≥ 0`` iff its coefficients alternate in
    sign: ``(−1)^k [x^{d−k}] p ≥ 0`` (Descartes; ``e_k(roots) ≥ 0``)."""
    return all((-1) ** k * c >= 0 for k, c in enumerate(poly.all_coeffs()))


def finite_free_add(p, q, *, check=True) -> sp.Poly:
    r"""The finite free additive convolution ``p ⊞_d q`` of two monic real-rooted polynomials of
    degree ``d``: ``E det(x − A − QBQ*)`` over Haar orthogonal or unitary ``Q`` when ``p, q``
    are the characteristic polynomials of ``A, B`` ([MSS22]_ Theorem 1.1).

    ``[x^{d−k}](p ⊞_d q) = (−1)^k Σ_{i+j=k} (d−i)!(d−j)!/(d!(d−k)!) a_i b_j`` for
    ``p = Σ_i (−1)^i a_i x^{d−i}``, ``q = Σ_j (−1)^j b_j x^{d−j}`` ([MSS22]_ §1), computed
    exactly as one product of exponential generating functions
    (:func:`freeprob.core.finite_free.finite_free_add`).  The result is real-rooted; its
    finite free cumulants are the sums of those of ``p`` and ``q`` ([AP18]_).

    Parameters
    ----------
    p, q : sympy.Poly, expression in ``x`` or coefficient list (highest degree first)
        Monic, of the same degree ``1 ≤ d ≤`` :data:`MAX_DEGREE`, exact real coefficients
        (rational, or symbolic: sympy expressions with symbols as parameters).
    check : bool, default True
        Prove that rational inputs are real-rooted (Sturm's theorem,
        :func:`is_real_rooted`); symbolic inputs are not checked.  ``False`` gives the formal
        convolution of any monic polynomials.

    Returns
    -------
    sympy.Poly
        Monic of degree ``d``, in the variable of ``p``; domain ``QQ`` for rational inputs.

    Raises
    ------
    FreeprobValueError
        Not a polynomial, degree 0 or above :data:`MAX_DEGREE`, not monic, non-real or
        floating-point coefficients (:func:`freeprob.core.finite_free.monic_polynomial`);
        different degrees or variables; with ``check``, an input that is not real-rooted.

    Examples
    --------
    >>> from freeprob.finite import finite_free_add
    >>> from freeprob.core.symbols import x
    >>> finite_free_add(x**3 - 3*x, x**3 - 3*x)          # Hermite ⊞_3 Hermite: Hermite
    Poly(x**3 - 6*x, x, domain='QQ')
    >>> finite_free_add(x**2 + 1, x**2 - 1)
    Traceback (most recent call last):
    ...
    freeprob.errors.FreeprobValueError: finite_free_add: p = x**2 + 1 is not real-rooted (Sturm's theorem, exact); the finite free convolutions are taken of real-rooted polynomials (check=False, or --no-check on the command line, gives the formal convolution of any monic polynomials)
    """
    if check:
        p, _ = _checked_real_rooted(p, "finite_free_add", "p")
        q, _ = _checked_real_rooted(q, "finite_free_add", "q")
    return _ff.finite_free_add(p, q)


def finite_free_mul(p, q, *, check=True) -> sp.Poly:
    r"""The finite free multiplicative convolution ``p ⊠_d q`` of two monic real-rooted
    polynomials of degree ``d``, one with non-negative roots: ``E det(x − A QBQ*)``
    ([MSS22]_ Theorem 1.5).

    ``[x^{d−k}](p ⊠_d q) = (−1)^k a_k b_k / C(d, k)`` (notation of :func:`finite_free_add`):
    the normalized coefficients multiply.  The result is real-rooted, with non-negative
    roots when both inputs have them ([MSS22]_).

    Parameters
    ----------
    p, q : sympy.Poly, expression in ``x`` or coefficient list (highest degree first)
        Monic, of the same degree ``d`` (as in :func:`finite_free_add`).
    check : bool, default True
        For rational inputs, prove both real-rooted and one of them with roots ``≥ 0`` (the
        condition under which ``⊠_d`` preserves real roots); symbolic inputs are not checked.

    Returns
    -------
    sympy.Poly

    Raises
    ------
    FreeprobValueError
        As :func:`finite_free_add`; with ``check``, rational inputs both with a negative
        root.

    Examples
    --------
    >>> from freeprob.finite import finite_free_mul, from_roots
    >>> finite_free_mul(from_roots([0, 1]), from_roots([1, 3]))   # a rank-one projection
    Poly(x**2 - 2*x, x, domain='QQ')
    """
    who = "finite_free_mul"
    if check:
        p, rp = _checked_real_rooted(p, who, "p")
        q, rq = _checked_real_rooted(q, who, "q")
        if rp and rq and not (_nonnegative_roots(p) or _nonnegative_roots(q)):
            raise FreeprobValueError(
                f"{who}: p and q both have negative roots; ⊠_d preserves real roots when one of "
                "them has all its roots ≥ 0 (check=False, or --no-check on the command line, gives the "
                "formal convolution)")
    return _ff.finite_free_mul(p, q)


# -- expected characteristic polynomials of laws ------------------------------------------------
def expected_characteristic_polynomial(law, d) -> sp.Poly:
    r"""The degree-``d`` expected characteristic polynomial of a law: the polynomial whose
    root distribution is the finite-``d`` counterpart of ``law``.

    Defined for

    * ``Semicircle(m, v)``: ``E det(x − m − W)`` for a ``d × d`` Wigner (GOE/GUE) matrix
      ``W`` of entry variance ``v/d``; the Hermite polynomial
      ``(v/d)^{d/2} He_d((x − m)√(d/v))``, finite free cumulants ``κ_1 = m``, ``κ_2 = v``, the
      rest 0 ([MSS22]_ §6, [AP18]_);
    * ``FreePoisson(t, α)``: the Laguerre polynomial with ``κ_n = t α^n`` (``n ≤ d``), which
      for ``t d`` an integer is ``E det(x − (α/d) G Gᵀ)`` with ``G`` a ``d × td`` standard
      Gaussian matrix ([MSS22]_ §6; [AP18]_);
    * ``Atomic`` laws whose weights times ``d`` are integers: the characteristic polynomial
      of the diagonal matrix with those multiplicities;
    * ``free_add``, ``free_mul`` of these (``⊞_d``, ``⊠_d``), ``shift`` and ``dilate``.

    For laws built from semicircles and free Poisson laws by ``⊞`` the finite free cumulants
    equal the free cumulants up to order ``d``; with atoms or ``⊠`` they converge to them as
    ``d → ∞`` ([AP18]_, [AGP23]_).

    Parameters
    ----------
    law : Law
        As above; parameters may be symbolic.
    d : int
        The degree, from 1 to :data:`MAX_DEGREE`.

    Returns
    -------
    sympy.Poly
        Monic of degree ``d`` in ``x``.

    Raises
    ------
    FreeprobValueError
        ``law`` not a :class:`~freeprob.laws.law.Law`; ``d`` out of range; an atom weight
        times ``d`` not an integer; a rational free Poisson rate ``t`` with ``t d`` not an
        integer and ``t ≤ 1 − 1/d`` (no real-rooted Laguerre polynomial).
    NotAvailable
        A law outside the list above (e.g. a push-forward, a mixture, a free power).

    Examples
    --------
    >>> from freeprob import Semicircle, FreePoisson, free_add
    >>> from freeprob.finite import expected_characteristic_polynomial
    >>> expected_characteristic_polynomial(Semicircle(0, 1), 3)    # He_3(√3 x)/√27
    Poly(x**3 - x, x, domain='QQ')
    >>> expected_characteristic_polynomial(free_add(Semicircle(0, 1), FreePoisson(2)), 2)
    Poly(x**2 - 4*x + 5/2, x, domain='QQ')
    """
    from freeprob.laws.law import Law
    who = "expected_characteristic_polynomial"
    d = check_degree(d, who)
    if not isinstance(law, Law):
        raise FreeprobValueError(f"{who}: law must be a freeprob Law (e.g. Semicircle(0, 1)); "
                                 f"got {type(law).__name__} {law!r}")
    return _ecp(law, d, who)


def _ecp(law, d, who):
    from freeprob.laws import families as fam
    from freeprob.laws import operations as ops
    if isinstance(law, fam.Semicircle):
        return from_finite_free_cumulants([0, law.mean, law.variance][:d + 1], d)
    if isinstance(law, fam.FreePoisson):
        t = sp.sympify(law.rate)
        if t.is_Rational and not (t * d).is_integer and t <= 1 - sp.Rational(1, d):
            raise FreeprobValueError(
                f"{who}: FreePoisson({law.rate}) at degree d = {d}: t·d = {t * d} is not an integer and "
                f"t ≤ 1 − 1/d, where the Laguerre polynomial is not real-rooted (it is the expected "
                "characteristic polynomial of (α/d)·G Gᵀ, G a d × td Gaussian matrix, when t·d is an "
                "integer); choose d with t·d an integer")
        return from_finite_free_cumulants([0] + [law.rate * law.jump ** n for n in range(1, d + 1)], d)
    if isinstance(law, fam.Atomic):
        roots = []
        for point, w in zip(law.points, law.weights):
            m = sp.nsimplify(w) * d
            if m.is_integer is not True:
                raise FreeprobValueError(
                    f"{who}: the atom at {point} has weight {w}, and {w}·d = {m} is not an integer "
                    f"(d = {d}); an atomic law is the spectrum of a d × d matrix only when every "
                    "weight times d is an integer")
            roots += [point] * int(m)
        return from_roots(roots)
    if isinstance(law, ops.FreeAdd):
        return functools.reduce(_ff.finite_free_add, [_ecp(part, d, who) for part in law.laws])
    if isinstance(law, ops.FreeMul):
        return _ff.finite_free_mul(_ecp(law.left, d, who), _ecp(law.right, d, who))
    if isinstance(law, ops.Shift):
        return _ff.finite_free_add(_ecp(law.law, d, who), from_roots([law.a] * d))
    if isinstance(law, ops.Dilate):
        return _ff.finite_free_mul(_ecp(law.law, d, who), from_roots([law.c] * d))
    raise NotAvailable(
        f"{who}: no expected characteristic polynomial for {type(law).__name__} laws; defined for "
        "Semicircle (Hermite), FreePoisson (Laguerre), Atomic laws with weights in (1/d)ℤ, and "
        "free_add, free_mul, shift, dilate of these")
