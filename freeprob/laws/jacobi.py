r"""Monotone cumulants, Jacobi parameters, orthogonal polynomials and Hankel determinants of a law.

The four functions here are methods of :class:`~freeprob.laws.law.Law` (``law.py`` binds
them in its class body; this module imports only the core, so there is no cycle): each
reads the law's exact moments ``law._m(ring, n)`` in its exact ring (FLINT rationals,
rational functions of the symbolic parameters, algebraic numbers) and runs an exact kernel:

* :meth:`Law.monotone_cumulants`: the monotone moment polynomials
  (:func:`freeprob.core.cumulants.monotone_cumulants_from_moments`, [HS11]_);
* :meth:`Law.jacobi_parameters`, :meth:`Law.orthogonal_polynomials`: Chebyshev's algorithm
  (:func:`freeprob.core.orthogonal.jacobi_from_moments`, [GAU04]_ §2.1.7);
* :meth:`Law.hankel_determinants`: a fraction-free recurrence or elimination of the Hankel
  matrix (:func:`freeprob.core.orthogonal.hankel_from_moments`, [BAR68]_).

With ``dps=N`` the exact values are rounded once to ``N`` significant digits (mpmath).
"""
from __future__ import annotations

import mpmath
import sympy as sp

from freeprob.core import cumulants as _cum
from freeprob.core import orthogonal as _orth
from freeprob.core.params import check_dps, check_order
from freeprob.core.symbols import x as _x

__all__ = []          # the functions are documented as methods of freeprob.laws.law.Law


def _rounded(values, dps):
    """Exact sympy ``values`` as mpmath numbers correct to ``dps`` significant digits."""
    out = []
    with mpmath.workdps(dps):
        prec = mpmath.mp.prec
        for v in values:
            if v.is_Rational:
                out.append(mpmath.mpf(mpmath.libmp.from_rational(int(v.p), int(v.q), prec, "n")))
            else:                       # sympy's evalf certifies the digits it returns
                out.append(mpmath.mpf(sp.Float(sp.N(v, dps + 5), dps + 5)._mpf_))
    return tuple(out)


def _exact(law, who, dps):
    """The law's exact ring, after the checks of ``dps`` (numbers need a law without symbols)."""
    if check_dps(dps, who) is not None:
        law.check_numeric(who, "numeric evaluation (dps=)")
    return law._exact_ring()


def monotone_cumulants(self, k, *, dps=None):
    r"""Monotone cumulants ``(h_0 = 0, h_1, …, h_k)``: ``h_n = d/dt m_n(μ^{▷t})|_{t=0}`` for the
    monotone convolution powers ``μ^{▷t}`` ([HS11]_ §4; [MUR01]_ for ``▷``).

    They add along a monotone semigroup (``h_n(μ ▷ μ) = 2 h_n(μ)``), not for two different
    laws (``▷`` is not commutative).  The arcsine law of variance ``s`` (the monotone central
    limit, [MUR01]_) has ``h = (0, 0, s, 0, 0, …)``.  Exact (the moment polynomials
    ``m_n(t)``, :func:`freeprob.core.cumulants.monotone_cumulants_from_moments`; ``O(k^3)``
    field operations), or ``dps=N`` certified digits.

    Parameters
    ----------
    k : int >= 0
    dps : int >= 1, optional

    Raises
    ------
    FreeprobValueError
        Bad ``k`` or ``dps``; ``dps`` for a law with free symbols.
    PrecisionError
        If ``dps`` digits cannot be certified.

    Examples
    --------
    >>> import freeprob as fp
    >>> fp.Semicircle(0, 1).monotone_cumulants(8)
    (0, 0, 1, 0, 1/2, 0, 1/2, 0, 7/12)
    """
    who = f"{type(self).__name__}.monotone_cumulants"
    k = check_order(k, who)
    return self._evaluate(lambda r: _cum.monotone_cumulants_from_moments(r, self._m(r, k)), dps, who)


def _jacobi(law, ring, k):
    key = (ring, "jacobi")
    hit = law._cache.get(key)
    if hit is not None and (hit[0] >= k or len(hit[2]) < hit[0]):   # enough, or a finite law
        alpha, beta = hit[1][:k], hit[2][:k]
        return alpha, beta
    alpha, beta = _orth.jacobi_from_moments(ring, law._m(ring, 2 * k), k)
    law._cache[key] = (k, alpha, beta)
    return alpha, beta


def jacobi_parameters(self, k, *, dps=None):
    r"""Jacobi parameters ``((α_0, …, α_{k−1}), (β_1, …, β_k))`` of the law: the
    coefficients of the continued fraction

    ``G(z) = 1/(z − α_0 − β_1/(z − α_1 − β_2/(z − α_2 − …)))``

    and of the three-term recurrence of its monic orthogonal polynomials
    (:meth:`orthogonal_polynomials`).  Exact (rational, algebraic or rational functions of
    the parameters), from the moments ``m_0..m_{2k}`` by Chebyshev's algorithm ([GAU04]_
    §2.1.7, :func:`freeprob.core.orthogonal.jacobi_from_moments`: ``O(k²)`` field
    operations, no determinants); ``dps=N`` rounds them once to ``N`` significant digits.

    A law with exactly ``n ≤ k`` support points (``n`` atoms) has ``β_n = 0`` and the
    continued fraction ends there: the tuples stop at ``(α_0, …, α_{n−1})`` and
    ``(β_1, …, β_n = 0)``.

    Closed forms: the semicircle of mean ``a`` and variance ``σ²`` has ``α_n = a``,
    ``β_n = σ²``; the free Poisson law of rate ``t`` has ``α_0 = t``, ``α_n = t + 1``,
    ``β_n = t``.

    Parameters
    ----------
    k : int >= 0
        Number of ``α`` (and of ``β``).
    dps : int >= 1, optional

    Returns
    -------
    (tuple, tuple)

    Raises
    ------
    FreeprobValueError
        Bad ``k`` or ``dps``; ``dps`` for a law with free symbols.

    Examples
    --------
    >>> import freeprob as fp
    >>> fp.FreePoisson(fp.Symbol("t")).jacobi_parameters(3)
    ((t, t + 1, t + 1), (t, t, t))
    >>> fp.Bernoulli().jacobi_parameters(4)              # two atoms: β_2 = 0 ends it
    ((0, 0), (1, 0))
    """
    who = f"{type(self).__name__}.jacobi_parameters"
    k = check_order(k, who)
    ring = _exact(self, who, dps)
    alpha, beta = _jacobi(self, ring, k)
    alpha = tuple(ring.to_sympy(v) for v in alpha)
    beta = tuple(ring.to_sympy(v) for v in beta)
    if dps is None:
        return alpha, beta
    return _rounded(alpha, dps), _rounded(beta, dps)


def orthogonal_polynomials(self, k):
    r"""The monic orthogonal polynomials ``(P_0 = 1, P_1, …, P_k)`` of the law, as sympy
    ``Poly`` in :data:`freeprob.core.symbols.x`: ``∫ P_m P_n dμ = 0`` for ``m ≠ n``, from
    ``P_{n+1} = (x − α_n) P_n − β_n P_{n−1}`` with the exact :meth:`jacobi_parameters`
    ([GAU04]_ Thm. 1.27).

    A law with exactly ``n < k`` support points stops at ``P_n``, the monic polynomial whose
    roots are its atoms (``‖P_n‖ = 0``: no further polynomial is determined).

    Raises
    ------
    FreeprobValueError
        Bad ``k``.

    Examples
    --------
    >>> import freeprob as fp
    >>> [p.as_expr() for p in fp.Semicircle(0, 1).orthogonal_polynomials(3)]   # Chebyshev U_n(x/2)
    [1, x, x**2 - 1, x**3 - 2*x]
    """
    who = f"{type(self).__name__}.orthogonal_polynomials"
    k = check_order(k, who)
    ring = self._exact_ring()
    alpha, beta = _jacobi(self, ring, k)
    n = len(alpha) if len(alpha) < k else k
    polys = _orth.polynomials_from_jacobi(ring, alpha, beta, n)
    return tuple(sp.Poly.from_list([ring.to_sympy(c) for c in reversed(p)], _x) for p in polys)


def hankel_determinants(self, k, *, dps=None):
    r"""Hankel determinants ``(Δ_0 = 1, Δ_1, …, Δ_k)``, ``Δ_n = det(m_{i+j})_{0≤i,j<n}``.

    Exact and fraction-free from the moments ``m_0..m_{2k−2}``
    (:func:`freeprob.core.orthogonal.hankel_from_moments`, [BAR68]_): for rational laws an
    integer recurrence of the bordered Hankel determinants in FLINT (``O(k²)``), otherwise one
    Bareiss elimination; never a symbolic ``det``.  ``Δ_n = Π_{i=1}^{n−1} β_i^{n−i}`` with the
    :meth:`jacobi_parameters`.
    ``Δ_n > 0`` exactly while ``n`` is at most the number of support points, and ``0`` after.
    ``dps=N`` rounds them once to ``N`` significant digits.

    Raises
    ------
    FreeprobValueError
        Bad ``k`` or ``dps``; ``dps`` for a law with free symbols.

    Examples
    --------
    >>> import freeprob as fp
    >>> fp.FreePoisson(fp.Symbol("t")).hankel_determinants(4)
    (1, 1, t, t**3, t**6)
    """
    who = f"{type(self).__name__}.hankel_determinants"
    k = check_order(k, who)
    ring = _exact(self, who, dps)
    vals = _orth.hankel_from_moments(ring, self._m(ring, max(2 * k - 2, 0)), k)
    vals = tuple(ring.to_sympy(v) for v in vals)
    return vals if dps is None else _rounded(vals, dps)
