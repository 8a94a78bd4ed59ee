"""Exact algebra of a Cauchy equation ``P(G, z) = 0`` (sympy ``Poly``): the square-free
factor carrying the branch ``G ~ 1/z`` at infinity, its leading data there, and the exact
real roots of a univariate polynomial over ℚ.  Used by :class:`~freeprob.numeric.AlgebraicCauchy`
and its support and atom analyses.  Source: [MS17]_ §2 (the Cauchy transform's behaviour
at infinity)."""
from __future__ import annotations

import sympy as sp

from freeprob.core.symbols import G as _G
from freeprob.errors import FreeprobValueError, NotAvailable

__all__: list[str] = []


def _infinity_data(poly):
    """``(D, q0, q1)``: with ``G = ζH``, ``z = 1/ζ``, ``ζ^D P = Q(H, ζ)``; ``q0 = Q(1, 0)``,
    ``q1 = ∂_H Q(1, 0)`` (domain elements)."""
    terms = poly.as_dict(native=True)
    D = max(j - k for (k, j) in terms)
    K = poly.domain
    q0, q1 = K.zero, K.zero
    for (k, j), c in terms.items():
        if j - k == D:
            q0 += c
            q1 += k * c
    return D, q0, q1


def _select_factor(poly, factored=False):
    """The square-free factor of ``poly`` carrying the branch ``G ~ 1/z`` (``factored``:
    ``poly`` is known irreducible, only its branch is checked)."""
    if factored:
        factors = [poly]
    else:
        try:
            factors = [f for f, _ in poly.factor_list()[1]]
        except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
            factors = [poly.sqf_part()]
    found = []
    for f in factors:
        if f.degree(_G) < 1:
            continue
        _, q0, q1 = _infinity_data(f)
        if poly.domain.is_zero(q0) if hasattr(poly.domain, "is_zero") else q0 == 0:
            found.append((f, q1))
    if not found:
        raise FreeprobValueError(
            "AlgebraicCauchy: no branch of P(G, z) = 0 behaves like G ~ 1/z at infinity, so "
            f"P is not the Cauchy equation of a probability law; got P = {poly.as_expr()}")
    if len(found) > 1:
        raise FreeprobValueError(
            "AlgebraicCauchy: several factors of P have a branch G ~ 1/z at infinity "
            f"({', '.join(str(f.as_expr()) for f, _ in found)}); pass the factor of the law")
    f, q1 = found[0]
    if q1 == 0:
        raise NotAvailable(
            "AlgebraicCauchy: several branches of P tend to 1/z at infinity (G = 1/z is a "
            f"multiple root at infinity of {f.as_expr()}); cannot select the Cauchy transform")
    return f


def _sym_real_roots(poly, who):
    """Distinct real roots of a univariate Poly: exact (sympy) over QQ, else ``None``."""
    if poly.degree() < 1:
        return []
    if poly.domain.is_ZZ or poly.domain.is_QQ:
        return sorted(set(sp.real_roots(poly.sqf_part())), key=lambda r: sp.N(r, 30))
    return None
