r"""Finite free probability on polynomials: the finite free convolutions ``⊞_d`` and ``⊠_d``
and the finite free cumulants, exact (rationals in FLINT, symbolic coefficients in the
rings of :mod:`freeprob.core.coefficients`).

Conventions
-----------
A monic polynomial of degree ``d`` is written with its *normalized coefficients*
``ã_k = e_k(roots) / C(d, k)``:

    p(x) = Σ_{k=0}^{d} (−1)^k C(d, k) ã_k x^{d−k},        ã_0 = 1,

so that ``(x − a)^d`` has ``ã_k = a^k``.  Its generating function is the polynomial
``E_p(t) = Σ_k ã_k t^k / k!`` (the "EGF" below).  In these coordinates ([MSS22]_ §1;
[MAR21]_; [AP18]_ §3):

* ``p ⊞_d q``: ``E_{p ⊞_d q} = E_p E_q mod t^{d+1}``, which is Marcus–Spielman–Srivastava's
  ``[x^{d−k}] (p ⊞_d q) = (−1)^k Σ_{i+j=k} (d−i)!(d−j)!/(d!(d−k)!) a_i b_j`` for
  ``p = Σ_i (−1)^i a_i x^{d−i}``, ``q = Σ_j (−1)^j b_j x^{d−j}``;
* ``p ⊠_d q``: ``ã_k(p ⊠_d q) = ã_k(p) ã_k(q)``, i.e. ``[x^{d−k}] = (−1)^k a_k b_k / C(d, k)``;
* the finite free cumulants ``κ_1, …, κ_d`` of Arizmendi–Perales ([AP18]_ §3, from Marcus's
  finite R-transform [MAR21]_): ``κ_n = (−d)^{n−1} n [t^n] log E_p(t)``,
  equivalently ``κ_n = (−d)^{n−1}/(n−1)! Σ_{π ∈ P(n)} (−1)^{|π|−1} (|π|−1)! Π_{V∈π} ã_{|V|}``.
  They add under ``⊞_d``, ``κ_1`` is the mean of the roots, ``κ_2 = d/(d−1)`` times their
  variance, and they tend to the free cumulants of the limit root distribution as
  ``d → ∞`` ([AP18]_; [AGP23]_ for ``⊠_d``).

If ``A`` and ``B`` are ``d × d`` Hermitian (or real symmetric) with characteristic
polynomials ``p`` and ``q`` and ``Q`` is Haar unitary (or orthogonal), then
``E det(x − A − Q B Q*) = p ⊞_d q`` and ``E det(x − A Q B Q*) = p ⊠_d q`` ([MSS22]_ §1); both preserve real-rootedness (``⊠_d`` when one factor has non-negative roots).
Nothing here checks real-rootedness: the algebra is defined for every monic polynomial
(:func:`freeprob.numeric.realroots.is_real_rooted` decides it).

Every function here takes and returns sympy :class:`~sympy.Poly` objects (or accepts an
expression in ``x``, or a list of coefficients, highest degree first); the ring-level
kernels (``egf_*``, ``cumulants_from_egf``) work on coefficient lists of a
:class:`~freeprob.core.coefficients.CoefficientRing` with ``d`` an integer or a ring
element (a symbol).  The public entry point is :mod:`freeprob.finite`, which adds the
real-rootedness checks and the expected characteristic polynomials of laws.

Examples
--------
>>> from freeprob.core.finite_free import finite_free_add, finite_free_cumulants, from_roots
>>> p = from_roots([-1, 1]); q = from_roots([0, 2])
>>> finite_free_add(p, q)
Poly(x**2 - 2*x - 1, x, domain='QQ')
>>> finite_free_cumulants(p)
(0, 0, 2)

References: [MSS22]_, [MAR21]_, [AP18]_, [AGP23]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

import numbers

import flint
import sympy as sp

from freeprob._checks import check_int
from freeprob.core.coefficients import QQ, exact_ring_for, flint_precision
from freeprob.core.params import as_exact
from freeprob.core.symbols import x as _x
from freeprob.errors import FreeprobValueError

__all__ = [
    "MAX_DEGREE",
    "monic_polynomial",
    "rational_fmpq_poly",
    "from_roots",
    "normalized_coefficients",
    "from_normalized_coefficients",
    "finite_free_add",
    "finite_free_mul",
    "finite_free_cumulants",
    "from_finite_free_cumulants",
]

#: largest degree accepted by the constructors (an exact polynomial of degree 5000 has
#: coefficients of tens of thousands of bits each)
MAX_DEGREE = 5000


# -- input -----------------------------------------------------------------------------------
def check_degree(d, who: str, name: str = "d") -> int:
    """``d`` as an integer from 1 to :data:`MAX_DEGREE` (bool refused).

    Raises :class:`~freeprob.errors.FreeprobValueError` otherwise.  Source: this module.
    """
    return check_int(d, who, name, minimum=1, maximum=MAX_DEGREE,
                     limit="freeprob.core.finite_free.MAX_DEGREE")


def _rational_poly(poly):
    """The ascending ``fmpq_poly`` of a sympy Poly over ZZ or QQ (sympy's own FLINT
    representation when it runs on FLINT ground types: nothing is converted)."""
    rep = getattr(poly.rep, "_rep", None)
    if isinstance(rep, flint.fmpq_poly):
        return rep
    if isinstance(rep, flint.fmpz_poly):
        return flint.fmpq_poly(rep)
    K = poly.domain
    return flint.fmpq_poly([flint.fmpq(int(K.numer(c)), int(K.denom(c))) for c in reversed(poly.rep.to_list())])


def _coefficients(p, who, name):
    """``(gen, descending coefficients)`` of ``p``: fmpq for rationals, else sympy values."""
    if isinstance(p, sp.Poly):
        if len(p.gens) != 1:
            raise FreeprobValueError(f"{who}: {name} must be a polynomial in one variable; "
                                     f"got a Poly in {p.gens}")
        if p.domain.is_ZZ or p.domain.is_QQ:
            return p.gen, _rational_poly(p)
        if not p.domain.is_Exact:
            raise FreeprobValueError(f"{who}: {name} has floating-point coefficients ({p.domain}); "
                                     "give exact ones (rationals such as 1/3, or sympy expressions)")
        return p.gen, list(p.all_coeffs())
    if isinstance(p, sp.Basic):
        if not isinstance(p, sp.Expr):
            raise FreeprobValueError(f"{who}: {name} must be a polynomial; got {p!r}")
        expr = as_exact(p, who, name)
        if _x not in expr.free_symbols:
            raise FreeprobValueError(
                f"{who}: {name} must be a polynomial in x (freeprob.core.symbols.x, i.e. "
                f"sympy.Symbol('x')); got {p} (a sympy Poly names its own variable)")
        try:
            poly = sp.Poly(expr, _x)
        except sp.PolynomialError as exc:
            raise FreeprobValueError(f"{who}: {name} is not a polynomial in x: {p}") from exc
        if poly.domain.is_ZZ or poly.domain.is_QQ:
            return _x, _rational_poly(poly)
        return _x, list(poly.all_coeffs())
    if isinstance(p, str | bytes | dict | set) or not hasattr(p, "__iter__"):
        raise FreeprobValueError(
            f"{who}: {name} must be a sympy Poly, an expression in x or a list of coefficients "
            f"(highest degree first, as numpy.poly1d and sympy.Poly take them); got "
            f"{type(p).__name__} {p!r} (roots: use freeprob.finite.from_roots)")
    coeffs = []
    for i, c in enumerate(p):
        if isinstance(c, flint.fmpq):
            coeffs.append(c)
        elif isinstance(c, numbers.Integral) and not isinstance(c, bool):
            coeffs.append(flint.fmpq(int(c)))
        else:
            v = as_exact(c, who, f"{name}[{i}]")
            coeffs.append(flint.fmpq(int(v.p), int(v.q)) if v.is_Rational else v)
    while coeffs and coeffs[0] == 0:
        coeffs.pop(0)
    if all(isinstance(c, flint.fmpq) for c in coeffs):
        return _x, flint.fmpq_poly(coeffs[::-1])
    return _x, coeffs


class _P:
    """A checked monic polynomial: its variable and degree, and either ``f`` (an ascending
    ``fmpq_poly``, rational coefficients) or ``coeffs`` (descending sympy values)."""

    __slots__ = ("gen", "d", "f", "coeffs")

    def __init__(self, gen, d, f=None, coeffs=None):
        self.gen, self.d, self.f, self.coeffs = gen, d, f, coeffs

    @property
    def rational(self):
        return self.f is not None

    def values(self):
        """Descending coefficients as sympy values."""
        if self.coeffs is None:
            return [sp.Rational(int(c.p), int(c.q)) for c in map(flint.fmpq, reversed(self.f.coeffs()))]
        return self.coeffs


def _checked(p, who, name) -> _P:
    gen, coeffs = _coefficients(p, who, name)
    rational = isinstance(coeffs, flint.fmpq_poly)
    d = coeffs.degree() if rational else len(coeffs) - 1
    if d < 1:
        raise FreeprobValueError(f"{who}: {name} must have degree ≥ 1; got {p!r}")
    d = check_degree(d, who, f"the degree of {name}")
    if not rational:
        coeffs = [sp.Rational(int(c.p), int(c.q)) if isinstance(c, flint.fmpq) else c for c in coeffs]
        for c in coeffs:
            if c.is_real is False:
                raise FreeprobValueError(f"{who}: the coefficients of {name} must be real; got {c}")
    lead = coeffs[d] if rational else coeffs[0]
    if (lead != 1) if rational else (sp.simplify(lead - 1) != 0):
        raise FreeprobValueError(
            f"{who}: {name} must be monic (leading coefficient 1); got leading coefficient {lead} "
            "(divide the polynomial by it: the roots stay the same)")
    return _P(gen, d, f=coeffs) if rational else _P(gen, d, coeffs=coeffs)


def monic_polynomial(p, who: str = "monic_polynomial", name: str = "p") -> sp.Poly:
    r"""``p`` as a monic sympy :class:`~sympy.Poly` of degree ``1 ≤ d ≤`` :data:`MAX_DEGREE`.

    Parameters
    ----------
    p : sympy.Poly, sympy expression in ``x``, or sequence of coefficients
        A univariate Poly (its own variable), an expression in ``x``
        (:data:`freeprob.core.symbols.x`, possibly with other symbols as parameters) or the
        coefficients, highest degree first (``[1, 0, -1]`` is ``x² − 1``; floats are read as
        the decimal they print as).  Coefficients must be real and exact.
    who, name : str
        The function and argument the error messages name.

    Returns
    -------
    sympy.Poly

    Raises
    ------
    FreeprobValueError
        A string or other non-polynomial, several variables, degree 0 or above
        :data:`MAX_DEGREE`, floating-point Poly domains, non-real coefficients, a leading
        coefficient other than 1.

    Source: this module.
    """
    return _to_poly(_checked(p, who, name))


def rational_fmpq_poly(p, who: str = "rational_fmpq_poly", name: str = "p"):
    r"""``p``, a polynomial of degree ``1 ≤ d ≤`` :data:`MAX_DEGREE` with rational
    coefficients (any leading coefficient), as an ascending python-flint ``fmpq_poly``.

    Parameters
    ----------
    p : sympy.Poly, sympy expression in ``x``, or sequence of coefficients
        As in :func:`monic_polynomial`, without the monic rule.
    who, name : str
        The function and argument the error messages name.

    Returns
    -------
    flint.fmpq_poly

    Raises
    ------
    FreeprobValueError
        As :func:`monic_polynomial`; a coefficient that is not a rational number (symbols,
        ``sqrt(2)``).

    Source: this module.
    """
    _, coeffs = _coefficients(p, who, name)
    if not isinstance(coeffs, flint.fmpq_poly):
        bad = next(c for c in coeffs if not isinstance(c, flint.fmpq))
        raise FreeprobValueError(
            f"{who}: {name} must have rational coefficients; got {bad} (substitute numbers for the "
            "symbols first, e.g. Poly.subs)")
    if coeffs.degree() < 1:
        raise FreeprobValueError(f"{who}: {name} must have degree ≥ 1; got {p!r}")
    check_degree(coeffs.degree(), who, f"the degree of {name}")
    return coeffs


def _poly_qq(f, gen) -> sp.Poly:
    """The sympy Poly over ``QQ`` of an ``fmpq_poly`` (ascending), without rebuilding it
    coefficient by coefficient when sympy runs on FLINT ground types."""
    if isinstance(sp.QQ.one, flint.fmpq):
        try:
            from sympy.polys.polyclasses import DUP_Flint
            return sp.Poly.new(DUP_Flint.from_rep(f, sp.QQ), gen)
        except (ImportError, AttributeError, AssertionError):      # another sympy layout
            pass
    return sp.Poly.from_list([sp.QQ(int(c.p), int(c.q)) for c in map(flint.fmpq, reversed(f.coeffs()))],
                             gen, domain=sp.QQ)


def _to_poly(P: _P) -> sp.Poly:
    return _poly_qq(P.f, P.gen) if P.rational else sp.Poly(P.coeffs, P.gen)


def _ring_for(*polys):
    if all(P.rational for P in polys):
        return QQ
    return exact_ring_for([c for P in polys for c in P.values()])


def _falling(d):
    """``[(d)_0, (d)_1, …, (d)_d]`` (falling factorials d!/(d−k)!) as fmpz."""
    out = [flint.fmpz(1)]
    for k in range(d):
        out.append(out[-1] * (d - k))
    return out


def _factorials(d):
    """``[0!, 1!, …, d!]`` as fmpz."""
    out = [flint.fmpz(1)]
    for j in range(1, d + 1):
        out.append(out[-1] * j)
    return out


# -- the rational fast path: whole polynomials in FLINT, one common denominator each ----------------
def _numerators(f, n):
    """The ``n`` ascending integer numerators of the ``fmpq_poly`` ``f`` (over ``f.denom()``)."""
    c = f.numer().coeffs()
    return c + [flint.fmpz(0)] * (n - len(c))


def _qq_egf(f, d):
    """The EGF ``Σ_k E_k t^k`` (an fmpq_poly) of the monic ``f`` of degree ``d``."""
    N, fact = _numerators(f, d + 1), _factorials(d)
    return flint.fmpq_poly(flint.fmpz_poly([-N[d - k] * fact[d - k] if k % 2 else N[d - k] * fact[d - k]
                                            for k in range(d + 1)]), f.denom() * fact[d])


def _qq_from_egf(E, d):
    """The monic ``fmpq_poly`` of degree ``d`` whose EGF is the fmpq_poly ``E``."""
    M, fall = _numerators(E, d + 1), _falling(d)
    return flint.fmpq_poly(flint.fmpz_poly([-M[d - j] * fall[d - j] if (d - j) % 2 else M[d - j] * fall[d - j]
                                            for j in range(d + 1)]), E.denom())


def _qq_mul(f, g, d):
    """``f ⊠_d g`` for monic fmpq_polys: ``[x^{d−k}] = (−1)^k a_k b_k k!(d−k)!/d!``."""
    A, B, fact = _numerators(f, d + 1), _numerators(g, d + 1), _factorials(d)
    nums = []
    for j in range(d + 1):                          # j = d − k
        v = A[j] * B[j] * fact[d - j] * fact[j]
        nums.append(-v if (d - j) % 2 else v)
    return flint.fmpq_poly(flint.fmpz_poly(nums), f.denom() * g.denom() * fact[d])


def _qq_log(E, n):
    """``[L_0, …, L_{n−1}]`` (fmpq), ``log E mod t^n`` of the fmpq_poly ``E`` (``E(0) = 1``)."""
    with flint_precision(n):
        c = flint.fmpq_series(E.truncate(n) if E.degree() >= n else E, prec=n).log().coeffs()
    return [flint.fmpq(v) for v in c[:n]] + [flint.fmpq(0)] * (n - len(c))


# -- polynomial <-> EGF ------------------------------------------------------------------------
def _int(ring, n):
    """The integer ``n`` (an fmpz) as an element of ``ring``."""
    return ring.convert(n) if ring is QQ else ring.convert(int(n))


def egf_of(ring, P: _P) -> list:
    """``[E_0, …, E_d]``, ``E_k = ã_k/k! = (−1)^k [x^{d−k}]p · (d−k)!/d!``, in ``ring``."""
    if ring is QQ and P.rational:
        E = _qq_egf(P.f, P.d)
        return [flint.fmpq(c) for c in E.coeffs()] + [QQ.zero] * (P.d + 1 - len(E.coeffs()))
    f = _falling(P.d)
    out = []
    for k, c in enumerate(P.values()):
        v = ring.convert(c) / _int(ring, f[k])
        out.append(-v if k % 2 else v)
    return out


def poly_from_egf(ring, E, gen) -> sp.Poly:
    """The monic polynomial of degree ``len(E) − 1`` whose EGF is ``E`` (``E[0] = 1``)."""
    d = len(E) - 1
    if ring is QQ:
        return _poly_qq(_qq_from_egf(flint.fmpq_poly(list(E)), d), gen)
    f = _falling(d)
    coeffs = []
    for k, e in enumerate(E):
        v = e * _int(ring, f[k])
        coeffs.append(-v if k % 2 else v)
    return sp.Poly([ring.to_sympy(c) for c in coeffs], gen)


def egf_mul(ring, E1, E2) -> list:
    """The EGF of ``⊠_d``: ``ã_k ã'_k``, i.e. ``k! E1_k E2_k`` (same length)."""
    out, fact = [], flint.fmpz(1)
    for k, (a, b) in enumerate(zip(E1, E2)):
        if k:
            fact *= k
        out.append(a * b * _int(ring, fact))
    return out


def cumulants_from_egf(ring, E, d, k) -> list:
    """``[κ_0 = 0, κ_1, …, κ_k]`` from the EGF ``E`` (at least ``k + 1`` terms, ``E[0] = 1``):
    ``κ_n = (−d)^{n−1} n [t^n] log E`` ([AP18]_ §3); ``d`` an integer or a ring element."""
    if k == 0:
        return [ring.zero]
    L = ring.log(list(E[:k + 1]), k + 1)
    md = ring.convert(-d)
    out, power = [ring.zero], ring.one
    for n in range(1, k + 1):
        out.append(L[n] * power * ring.convert(n))
        power = power * md
    return out


def egf_from_cumulants(ring, kappa, d, n) -> list:
    """The first ``n`` EGF terms of the polynomial with finite free cumulants ``kappa``
    (``[κ_0, κ_1, …]``, ``κ_0`` ignored, missing ones zero) at dimension ``d``:
    ``log E = Σ_m κ_m t^m / (m (−d)^{m−1})``."""
    md = ring.convert(-d)
    L, power = [ring.zero] * n, ring.one
    for m in range(1, n):
        if m < len(kappa):
            L[m] = ring.convert(kappa[m]) / (power * ring.convert(m))
        power = power * md
    return ring.exp(L, n)


# -- public functions ------------------------------------------------------------------------------
def _pair(p, q, who):
    P, Q = _checked(p, who, "p"), _checked(q, who, "q")
    if P.d != Q.d:
        lo, hi = sorted((P.d, Q.d))
        raise FreeprobValueError(
            f"{who}: p has degree {P.d} and q degree {Q.d}; both must have the same degree d "
            f"(for a d × d matrix of rank {lo}, multiply the other polynomial by x**{hi - lo})")
    if P.gen != Q.gen:
        raise FreeprobValueError(f"{who}: p is a polynomial in {P.gen} and q in {Q.gen}; use one variable")
    return P, Q


def finite_free_add(p, q) -> sp.Poly:
    r"""The finite free additive convolution ``p ⊞_d q`` of two monic polynomials of degree ``d``.

    ``[x^{d−k}](p ⊞_d q) = (−1)^k Σ_{i+j=k} (d−i)!(d−j)!/(d!(d−k)!) a_i b_j`` for
    ``p = Σ_i (−1)^i a_i x^{d−i}``, ``q = Σ_j (−1)^j b_j x^{d−j}`` ([MSS22]_ §1:
    ``E det(x − A − Q B Q*)`` over Haar unitary or orthogonal ``Q``); computed as one
    product of the generating functions ``E_p E_q`` (module docstring).  Real-rooted inputs
    give a real-rooted result ([MSS22]_); finite free cumulants add ([AP18]_).

    Parameters
    ----------
    p, q : sympy.Poly, expression in ``x`` or coefficient list (highest degree first)
        Monic, of the same degree ``d``, exact real coefficients (rational or symbolic);
        see :func:`monic_polynomial`.

    Returns
    -------
    sympy.Poly
        Monic of degree ``d`` in the variable of ``p``; domain ``QQ`` for rational inputs.

    Raises
    ------
    FreeprobValueError
        Bad polynomials (:func:`monic_polynomial`); different degrees or variables.

    Examples
    --------
    >>> from freeprob.core.finite_free import finite_free_add
    >>> from freeprob.core.symbols import x
    >>> finite_free_add(x**2 - 1, x**2 - 1)         # two rank-one ±1 matrices: roots ±√2
    Poly(x**2 - 2, x, domain='QQ')
    """
    P, Q = _pair(p, q, "finite_free_add")
    if P.rational and Q.rational:
        E = _qq_egf(P.f, P.d).mul_low(_qq_egf(Q.f, Q.d), P.d + 1)
        return _poly_qq(_qq_from_egf(E, P.d), P.gen)
    ring = _ring_for(P, Q)
    E = ring.mul(egf_of(ring, P), egf_of(ring, Q), P.d + 1)
    return poly_from_egf(ring, E, P.gen)


def finite_free_mul(p, q) -> sp.Poly:
    r"""The finite free multiplicative convolution ``p ⊠_d q`` of two monic polynomials of
    degree ``d``.

    ``[x^{d−k}](p ⊠_d q) = (−1)^k a_k b_k / C(d, k)`` ([MSS22]_ §1:
    ``E det(x − A Q B Q*)``); the normalized coefficients multiply, ``ã_k(p ⊠_d q) =
    ã_k(p) ã_k(q)``.  Real-rooted inputs, one with non-negative roots, give a real-rooted
    result ([MSS22]_).

    Parameters
    ----------
    p, q : sympy.Poly, expression in ``x`` or coefficient list (highest degree first)
        Monic, of the same degree ``d`` (:func:`monic_polynomial`).

    Returns
    -------
    sympy.Poly

    Raises
    ------
    FreeprobValueError
        As :func:`finite_free_add`.

    Examples
    --------
    >>> from freeprob.core.finite_free import finite_free_mul, from_roots
    >>> finite_free_mul(from_roots([0, 1]), from_roots([1, 3]))   # a rank-one projection: 0 and 2
    Poly(x**2 - 2*x, x, domain='QQ')
    """
    P, Q = _pair(p, q, "finite_free_mul")
    if P.rational and Q.rational:
        return _poly_qq(_qq_mul(P.f, Q.f, P.d), P.gen)
    ring = _ring_for(P, Q)
    return poly_from_egf(ring, egf_mul(ring, egf_of(ring, P), egf_of(ring, Q)), P.gen)


def finite_free_cumulants(p, k=None) -> tuple:
    r"""The finite free cumulants ``(κ_0 = 0, κ_1, …, κ_k)`` of a monic polynomial of degree
    ``d`` (Arizmendi–Perales).

    ``κ_n = (−d)^{n−1}/(n−1)! Σ_{π ∈ P(n)} (−1)^{|π|−1} (|π|−1)! Π_{V∈π} ã_{|V|}`` with the
    normalized coefficients ``ã_j = e_j(roots)/C(d, j)`` ([AP18]_ §3, from [MAR21]_'s finite
    R-transform), computed as ``(−d)^{n−1} n [t^n] log Σ_j ã_j t^j/j!``.
    They are additive under ``⊞_d``; ``κ_1`` is the mean of the roots and ``κ_2 = d/(d−1)``
    times their variance; as ``d → ∞`` they tend to the free cumulants of the limit root
    distribution ([AP18]_).  Same indexing as
    :meth:`freeprob.laws.law.Law.free_cumulants`.

    Parameters
    ----------
    p : sympy.Poly, expression in ``x`` or coefficient list (highest degree first)
        Monic of degree ``d`` (:func:`monic_polynomial`).
    k : int, optional
        Highest order, ``0 ≤ k ≤ d`` (default ``d``: the cumulants beyond ``d`` are not
        defined).

    Returns
    -------
    tuple
        ``k + 1`` exact sympy values.

    Raises
    ------
    FreeprobValueError
        Bad polynomial; ``k`` not an integer from 0 to ``d``.

    Examples
    --------
    >>> from freeprob.core.finite_free import finite_free_cumulants
    >>> from freeprob.core.symbols import x
    >>> finite_free_cumulants(x**3 - 3*x**2 + 3*x - 1)     # (x − 1)³: κ_1 = 1, the rest 0
    (0, 1, 0, 0)
    """
    P = _checked(p, "finite_free_cumulants", "p")
    k = P.d if k is None else check_int(k, "finite_free_cumulants", "k", minimum=0, maximum=P.d,
                                         limit="the degree of p")
    if P.rational:
        return _qq_cumulants(_qq_log(_qq_egf(P.f, P.d), k + 1), P.d, k)
    ring = _ring_for(P)
    return tuple(ring.to_sympy(c) for c in cumulants_from_egf(ring, egf_of(ring, P), P.d, k))


def _qq_cumulants(L, d, k):
    """``(κ_0 = 0, κ_1, …, κ_k)`` as sympy Rationals from ``L = log E`` (fmpq list)."""
    out, power = [sp.Integer(0)], flint.fmpz(1)
    for n in range(1, k + 1):
        v = L[n] * power * n
        out.append(sp.Rational(int(v.p), int(v.q)))
        power *= -d
    return tuple(out)


def from_finite_free_cumulants(cumulants, d, gen=None) -> sp.Poly:
    r"""The monic polynomial of degree ``d`` with the given finite free cumulants (the inverse
    of :func:`finite_free_cumulants`; [AP18]_ §3).

    Parameters
    ----------
    cumulants : sequence
        ``(κ_0, κ_1, …, κ_m)`` with ``m ≤ d`` (``κ_0`` ignored, the cumulants of orders
        ``m+1 … d`` are 0); exact numbers or sympy expressions.
    d : int
        The degree, from 1 to :data:`MAX_DEGREE`.
    gen : sympy.Symbol, optional
        The variable (default ``x``).

    Returns
    -------
    sympy.Poly

    Raises
    ------
    FreeprobValueError
        ``d`` out of range; more than ``d + 1`` cumulants; a value that is not exact.

    Examples
    --------
    >>> from freeprob.core.finite_free import from_finite_free_cumulants
    >>> from_finite_free_cumulants([0, 0, 1], 3)      # κ_2 = 1: the Hermite polynomial He_3(√3 x)/√27
    Poly(x**3 - x, x, domain='QQ')
    """
    who = "from_finite_free_cumulants"
    d = check_degree(d, who)
    if isinstance(cumulants, str | bytes | dict | set) or not hasattr(cumulants, "__iter__"):
        raise FreeprobValueError(f"{who}: cumulants must be a sequence (κ_0, κ_1, …); got {cumulants!r}")
    kappa = [as_exact(c, who, f"cumulants[{i}]") for i, c in enumerate(cumulants)]
    if len(kappa) > d + 1:
        raise FreeprobValueError(f"{who}: got {len(kappa) - 1} cumulants for degree d = {d}; "
                                 f"at most d (finite free cumulants are defined up to order d)")
    ring = exact_ring_for(kappa or [sp.Integer(0)])
    return poly_from_egf(ring, egf_from_cumulants(ring, kappa, d, d + 1), gen if gen is not None else _x)


def normalized_coefficients(p) -> tuple:
    r"""The normalized coefficients ``(ã_0 = 1, ã_1, …, ã_d)`` of a monic polynomial of
    degree ``d``: ``p(x) = Σ_k (−1)^k C(d, k) ã_k x^{d−k}``, so ``ã_k = e_k(roots)/C(d, k)``
    ([MSS22]_ §1.1; [AP18]_ §3).

    Parameters
    ----------
    p : sympy.Poly, expression in ``x`` or coefficient list (highest degree first)

    Returns
    -------
    tuple of sympy values

    Raises
    ------
    FreeprobValueError
        Bad polynomial (:func:`monic_polynomial`).

    Examples
    --------
    >>> from freeprob.core.finite_free import normalized_coefficients, from_roots
    >>> normalized_coefficients(from_roots([2, 2, 2]))
    (1, 2, 4, 8)
    """
    P = _checked(p, "normalized_coefficients", "p")
    ring = _ring_for(P)
    out, fact = [], flint.fmpz(1)
    for k, e in enumerate(egf_of(ring, P)):
        if k:
            fact *= k
        out.append(ring.to_sympy(e * _int(ring, fact)))
    return tuple(out)


def from_normalized_coefficients(coefficients, gen=None) -> sp.Poly:
    r"""The monic polynomial ``Σ_k (−1)^k C(d, k) ã_k x^{d−k}`` of the normalized coefficients
    ``(ã_0 = 1, ã_1, …, ã_d)`` (the inverse of :func:`normalized_coefficients`).

    Parameters
    ----------
    coefficients : sequence
        ``ã_0 = 1, ã_1, …, ã_d`` (``d ≥ 1``), exact numbers or sympy expressions.
    gen : sympy.Symbol, optional
        The variable (default ``x``).

    Returns
    -------
    sympy.Poly

    Raises
    ------
    FreeprobValueError
        Fewer than two values, ``ã_0 ≠ 1``, a value that is not exact, ``d`` above
        :data:`MAX_DEGREE`.

    Examples
    --------
    >>> from freeprob.core.finite_free import from_normalized_coefficients
    >>> from_normalized_coefficients([1, 2, 4])
    Poly(x**2 - 4*x + 4, x, domain='QQ')
    """
    who = "from_normalized_coefficients"
    if isinstance(coefficients, str | bytes | dict | set) or not hasattr(coefficients, "__iter__"):
        raise FreeprobValueError(f"{who}: coefficients must be a sequence (ã_0 = 1, ã_1, …); got {coefficients!r}")
    vals = [as_exact(c, who, f"coefficients[{i}]") for i, c in enumerate(coefficients)]
    if len(vals) < 2 or vals[0] != 1:
        raise FreeprobValueError(f"{who}: need ã_0 = 1 followed by ã_1, …, ã_d (d ≥ 1); got {coefficients!r}")
    check_degree(len(vals) - 1, who, "the degree")
    ring = exact_ring_for(vals)
    E, fact = [], flint.fmpz(1)
    for k, v in enumerate(vals):
        if k:
            fact *= k
        E.append(ring.convert(v) / _int(ring, fact))
    return poly_from_egf(ring, E, gen if gen is not None else _x)


def from_roots(roots, gen=None) -> sp.Poly:
    r"""The monic polynomial ``Π_i (x − r_i)`` with the given roots (with multiplicity).

    Parameters
    ----------
    roots : sequence
        At least one exact real number or sympy expression (floats are read as the decimal
        they print as: ``0.1`` is ``1/10``).
    gen : sympy.Symbol, optional
        The variable (default ``x``).

    Returns
    -------
    sympy.Poly

    Raises
    ------
    FreeprobValueError
        No roots, more than :data:`MAX_DEGREE`, a value that is not an exact real number.

    Examples
    --------
    >>> from freeprob.core.finite_free import from_roots
    >>> from_roots([1, 2, 2])
    Poly(x**3 - 5*x**2 + 8*x - 4, x, domain='QQ')
    """
    who = "from_roots"
    if isinstance(roots, str | bytes | dict | set) or not hasattr(roots, "__iter__"):
        raise FreeprobValueError(f"{who}: roots must be a sequence of numbers; got {roots!r}")
    vals = [as_exact(r, who, f"roots[{i}]") for i, r in enumerate(roots)]
    if not vals:
        raise FreeprobValueError(f"{who}: need at least one root")
    check_degree(len(vals), who, "the number of roots")
    for i, v in enumerate(vals):
        if v.is_real is False:
            raise FreeprobValueError(f"{who}: roots[{i}] must be real; got {v}")
    gen = gen if gen is not None else _x
    if all(v.is_Rational for v in vals):
        factors = [flint.fmpq_poly([flint.fmpq(-int(v.p), int(v.q)), 1]) for v in vals]
        while len(factors) > 1:                          # balanced product tree
            factors = [factors[i] * factors[i + 1] if i + 1 < len(factors) else factors[i]
                       for i in range(0, len(factors), 2)]
        return _poly_qq(factors[0], gen)
    return sp.Poly(sp.Mul(*[gen - v for v in vals]), gen)
