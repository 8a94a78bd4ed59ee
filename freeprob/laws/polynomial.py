r"""Laws of self-adjoint polynomials in free variables: :func:`polynomial_law`.

``polynomial_law("x*y + y*x", {"x": Semicircle(0, 1), "y": FreePoisson(1/2)})`` is the
law of ``p(x_1, …, x_s)`` for free ``x_j`` of the given laws.  The polynomial is
linearized (:mod:`freeprob.core.linearization`, [AND13]_), and its moments are read off the
M_k-valued Cauchy transform of the linearization, a power series in ``1/z`` solved order by
order over the exact ring of the parameters (:mod:`freeprob.core.opvalued`; [MS17]_ ch.
9–10, [BMS17]_).  The independent check is the sum over non-crossing partitions
(:mod:`freeprob.core.ncmoments`).  Everything of :class:`~freeprob.laws.law.Law` derives
from the moments; the algebraic Cauchy equation, where it can be eliminated, is in
:mod:`freeprob.laws.polynomial_equation`.

Source: [AND13]_, [BMS17]_, [HRS07]_, [MS17]_ ch. 9–10, [NS06]_ Lecture 11.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

import sympy as sp

from freeprob.core.params import as_exact
from freeprob.errors import FreeprobValueError
from freeprob.laws.law import Law
from freeprob.laws.operations import dilate, free_add, pushforward, shift
from freeprob.laws.polynomial_numeric import PolynomialNumeric

if TYPE_CHECKING:                      # the polynomial modules load on first use (startup)
    from freeprob.core.ncpoly import NCPoly

__all__ = ["PolynomialLaw", "PolynomialLinearization", "polynomial_law"]

_WHO = "polynomial_law"


class PolynomialLinearization(NamedTuple):
    r"""The interface of a polynomial law for the M_k-valued (numeric) route.

    ``L = b0 ⊗ 1 + Σ_j bs[j] ⊗ x_j`` is self-adjoint ``k × k`` with ``x_j ~ laws[j]`` free
    (names ``names[j]``), and for ``Λ(z) = diag(z, 0, …, 0)``

    .. math::  G(z) := E[(Λ(z) − L)^{-1}],\qquad G_{11}(z) = ∫ \frac{dμ_p(t)}{z − t},

    ``G`` the solution of ``G = (Λ(z) − b0 − Σ_j R_j(G))^{-1}``, ``R_j(B) = Σ_n κ_n(x_j)
    b_j (B b_j)^{n−1}`` (the R-transform of ``b_j ⊗ x_j`` over ``M_k``), equivalently the
    subordination system of the pieces ``b_j ⊗ x_j`` ([BMS17]_ §4).  In the upper
    half-plane use ``Λ_ε(z) = diag(z, iε, …, iε)``, ``ε → 0`` ([BMS17]_ §4).

    Fields: ``b0``, ``bs`` (sympy ``ImmutableMatrix``, exact, Hermitian), ``laws``,
    ``names``, ``depth`` (nilpotency depth of ``(0 ⊕ −Q_0^{-1}) Σ b_j``: the fixed-point
    steps that settle one order of the series at ``z = ∞``).
    """

    b0: sp.ImmutableMatrix
    bs: tuple
    laws: tuple
    names: tuple
    depth: int


def _check_variables(variables):
    if not isinstance(variables, dict) or not variables:
        raise FreeprobValueError(
            f"{_WHO}: variables must be a non-empty dict name -> Law, e.g. "
            "{'x': Semicircle(0, 1), 'y': FreePoisson(1)}; got " + repr(variables))
    for name, law in variables.items():
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise FreeprobValueError(f"{_WHO}: variable names must be identifiers not starting with '_'; got {name!r}")
        if not isinstance(law, Law):
            raise FreeprobValueError(f"{_WHO}: variables[{name!r}] must be a Law; got {type(law).__name__} {law!r}")
    return variables


def _check_clash(names, symbols):
    clash = sorted(set(names) & {s.name for s in symbols})
    if clash:
        raise FreeprobValueError(
            f"{_WHO}: {clash[0]!r} is both a variable and a parameter symbol; rename the variable")


@dataclass(frozen=True)
class PolynomialLaw(PolynomialNumeric, Law):
    r"""The law of a self-adjoint polynomial in free variables (build it with :func:`polynomial_law`).

    The numeric methods (``density``, ``cdf``, ``quantile``, ``support``, ``atoms``,
    ``cauchy``) use the exact Cauchy equation where it is derived and M_k-valued
    subordination otherwise; ``method="exact"`` / ``"numeric"`` picks one
    (:mod:`freeprob.laws.polynomial_numeric`).

    Fields: ``terms`` (``((word, coefficient), …)``, a word a tuple of variable names) and
    ``variables`` (``((name, Law), …)``, the variables occurring in the polynomial).

    Raises
    ------
    FreeprobValueError
        As :func:`polynomial_law` (the fields are re-checked after :meth:`subs`).
    """

    terms: tuple
    variables: tuple

    def __post_init__(self):
        from freeprob.core.linearization import linearize
        from freeprob.core.ncpoly import NCPoly
        names = [n for n, _ in self.variables]
        _check_variables(dict(self.variables))
        poly = NCPoly({tuple(w): as_exact(c, _WHO, "coefficient") for w, c in self.terms})
        symbols = set().union(poly.free_symbols(), *[law.free_symbols for _, law in self.variables])
        _check_clash(names, symbols)
        lin = linearize(poly, names, who=_WHO)          # self-adjoint and not constant
        object.__setattr__(self, "terms", tuple(poly.items()))
        self._cache["linearization"] = lin

    @cached_property
    def polynomial(self) -> NCPoly:
        """The polynomial ``p`` (:class:`~freeprob.core.ncpoly.NCPoly`)."""
        from freeprob.core.ncpoly import NCPoly
        return NCPoly(dict(self.terms))

    def _lin(self):
        from freeprob.core.linearization import linearize
        lin = self._cache.get("linearization")
        if lin is None:
            lin = self._cache["linearization"] = linearize(self.polynomial, [n for n, _ in self.variables])
        return lin

    def linearization(self) -> PolynomialLinearization:
        r"""The linearization of ``p`` with the laws of its variables: the interface of the
        M_k-valued routes (:class:`PolynomialLinearization`; [AND13]_, [BMS17]_ §4)."""
        lin = self._lin()
        return PolynomialLinearization(lin.b0, lin.bs, tuple(law for _, law in self.variables),
                                       lin.names, lin.depth)

    def _parameters(self):
        from freeprob.core.ncpoly import re_im
        out = []
        for _, law in self.variables:
            out.extend(law.parameters())
        for _, c in self.terms:
            out.extend(re_im(c))
        return tuple(out)

    def _moment_formula(self, ring, k):
        from freeprob.core.opvalued import OVSeries, cumulants_needed
        lin = self._lin()
        need = cumulants_needed(lin, k)
        kappas = [law._kappa(ring, need) for _, law in self.variables]
        m = OVSeries(lin, kappas, ring, k).moments()
        c0 = self.polynomial.constant()
        if c0 == 0:
            return m
        c = ring.convert(c0)
        out = []
        binom = [ring.one]
        for n in range(k + 1):                       # m_n(p) = Σ_i C(n, i) c^{n−i} m_i(p − c)
            if n:
                binom = [ring.one] + [binom[i - 1] + binom[i] for i in range(1, n)] + [ring.one]
            total, cp = ring.zero, ring.one
            for i in range(n, -1, -1):
                total = total + binom[i] * cp * m[i]
                cp = cp * c
            out.append(total)
        return out

    def __str__(self):
        laws = ", ".join(f"{n}={law!r}" for n, law in self.variables)
        return f"polynomial_law({str(self.polynomial)!r}, {laws})"


def polynomial_law(expr, variables, parameters=()) -> Law:
    r"""The law of a self-adjoint polynomial ``p(x_1, …, x_s)`` in free variables.

    Parameters
    ----------
    expr : str, sympy expression or NCPoly
        The polynomial: a string such as ``"x*y + y*x"``, ``"I*(x*y - y*x)"``,
        ``"x*y*x + t*y"`` (read, never evaluated: :func:`freeprob.core.ncpoly.parse_ncpoly`),
        or a sympy expression in non-commutative symbols named as the variables
        (``sympy.symbols("x y", commutative=False)``), commutative symbols being real
        parameters.  Coefficients: rationals, algebraic numbers (``sqrt(2)``), symbols,
        the complex unit ``I``; ``p`` must be self-adjoint (the variables are).
    variables : dict
        ``name -> Law``; the variables are free from each other (one law may serve
        several names: free copies).  Names not in ``expr`` are ignored.
    parameters : iterable of str or sympy.Symbol, optional
        Further names a string ``expr`` may use as symbolic coefficients (the symbols of
        the laws are always allowed, as the same symbols).

    Returns
    -------
    Law
        A :class:`PolynomialLaw`; a polynomial in one variable gives
        :func:`~freeprob.laws.operations.pushforward`, an affine one
        :func:`~freeprob.laws.operations.free_add` / ``dilate`` / ``shift`` (the same law,
        with their exact equations).

    Raises
    ------
    FreeprobValueError
        ``variables`` not a non-empty dict of laws, bad names, an unknown name in ``expr``,
        a variable name equal to a parameter symbol, ``p`` not self-adjoint (the message
        names the offending term), constant or zero.

    Examples
    --------
    >>> import freeprob as fp
    >>> s = fp.Semicircle(0, 1)
    >>> fp.polynomial_law("x*y + y*x", {"x": s, "y": s}).moments(6)
    (1, 0, 2, 0, 10, 0, 66)

    Source: [AND13]_ (linearization), [BMS17]_ §4 and [MS17]_ ch. 9–10 (operator-valued
    free probability), [NS06]_ Lecture 11 (the check by non-crossing partitions).
    """
    from freeprob.core.ncpoly import NCPoly, from_sympy, parse_ncpoly
    variables = _check_variables(variables)
    names = list(variables)
    law_symbols = set().union(*[law.free_symbols for law in variables.values()])
    _check_clash(names, law_symbols)
    if isinstance(expr, NCPoly):
        poly = expr
        unknown = sorted(poly.letters() - set(names))
        if unknown:
            raise FreeprobValueError(f"{_WHO}: unknown variable {unknown[0]!r} (variables: {', '.join(names)})")
    elif isinstance(expr, str):
        params = sorted(law_symbols, key=str) + [sp.Symbol(p) if isinstance(p, str) else p for p in parameters]
        names_of = {}
        for s in params:
            if not isinstance(s, sp.Symbol):
                raise FreeprobValueError(f"{_WHO}: parameters must be names or sympy symbols; got {s!r}")
            names_of.setdefault(s.name, s)
        poly = parse_ncpoly(expr, names, list(names_of.values()), who=_WHO)
    elif isinstance(expr, sp.Expr):
        poly = from_sympy(expr, names, who=_WHO)
    else:
        raise FreeprobValueError(
            f"{_WHO}: the polynomial must be a string, a sympy expression or an NCPoly; got {type(expr).__name__}")
    if not poly.terms:
        raise FreeprobValueError(f"{_WHO}: the polynomial is zero; its law is the point mass Dirac(0)")
    _check_clash(names, poly.free_symbols())
    used = [n for n in names if n in poly.letters()]
    if not used:
        raise FreeprobValueError(f"{_WHO}: the polynomial {poly} is constant; its law is a point mass (use Dirac)")
    defect = poly.self_adjoint_defect()
    if defect:
        raise FreeprobValueError(f"{_WHO}: the polynomial is not self-adjoint: {defect}")
    if poly.degree == 1:
        parts = [dilate(variables[n], poly.terms[(n,)]) for n in used]
        out = parts[0] if len(parts) == 1 else free_add(*parts)
        return shift(out, poly.constant()) if poly.constant() != 0 else out
    if len(used) == 1:
        n = used[0]
        coeffs = [poly.terms.get((n,) * i, 0) for i in range(poly.degree + 1)]
        return pushforward(variables[n], coeffs)
    return PolynomialLaw(tuple(poly.items()), tuple((n, variables[n]) for n in used))
