r"""The numerator of a bivariate polynomial under a rational substitution, in polynomial
arithmetic.

The polynomial method ([RE08]_) moves between the G-, R- and S-equations of a law and
shifts or dilates them by substitutions such as ``G = w``, ``z = R + 1/w`` followed by
taking the numerator.  Done on sympy expressions (``subs``, ``together``, ``expand``) this
took about a second for a degree-15 equation with coefficients in ℤ[e] (most of the time
of an attention law's Cauchy equation at finite width); :func:`substitute` does the same
in sympy's dense polynomial arithmetic over the coefficient domain, a few times to tens of
times faster.  Source: this project's design; [RE08]_ (the substitutions).
"""
from __future__ import annotations

import sympy as sp

from freeprob.errors import NotAvailable

__all__ = ["substitute"]


def _ring_form(poly):
    """``poly`` times a positive rational constant, over a ring: ℚ → ℤ, ℚ[c] → ℤ[c],
    ``K(t)`` → ``K[t]`` (denominators cleared); other domains unchanged."""
    K = poly.domain
    if K.is_QQ or K.is_FractionField:
        return poly.clear_denoms(convert=True)[1]
    if K.is_PolynomialRing and K.domain.is_QQ:
        den = 1
        for c in poly.rep.to_dict().values():
            for q in c.values():
                den = sp.ilcm(den, K.domain.denom(q))
        R = sp.ZZ[K.symbols]
        terms = {m: R.ring.from_dict({k: sp.ZZ(int(K.domain.numer(q * den))) for k, q in c.items()})
                 for m, c in poly.rep.to_dict().items()}
        return sp.Poly.from_dict(terms, *poly.gens, domain=R)
    return poly


def substitute(P, images, gens, *, shift=None):
    r"""The numerator of ``P(num_1/den_1, num_2/den_2)`` as a primitive ``Poly`` in ``gens``.

    Parameters
    ----------
    P : sympy.Poly
        In two generators ``(x_1, x_2)`` over ℤ, ℚ, ℤ/ℚ[constants] or a field of rational
        functions of parameters (not ``EX``).
    images : sequence of two (num, den) pairs
        sympy expressions, polynomial in ``gens`` with coefficients the domain can hold.
    gens : tuple of sympy symbols
    shift : (k, j), optional
        ``x_k`` stands for ``x_k'/x_j`` before the substitution: each term
        ``c x_k^a x_j^b`` becomes ``c x_k^a x_j^{b − a + M}`` with the least ``M ≥ 0`` that
        makes every exponent non-negative (the S-equation's ``S = G/u``, whose ``u`` is
        itself substituted).

    Returns
    -------
    sympy.Poly
        ``Σ c_{ab} num_1^a den_1^{D_1 − a} num_2^b den_2^{D_2 − b}`` (``D_i`` the degree of
        ``P`` in ``x_i``) with its monomial content removed (the powers of the monomial
        denominators that ``sympy.together`` would not have introduced, and any other
        common monomial factor), denominators of the coefficient domain cleared, content
        removed; ``None`` for a domain this does not handle (the caller then takes the
        expression route).  Its zero set is that of the substituted equation.

    Raises
    ------
    NotAvailable
        The result is the zero polynomial (a degenerate law).
    """
    if P.domain.is_EX or len(P.gens) != 2:
        return None
    terms = P.as_dict(native=True)
    if shift is not None:
        k, j = shift
        low = min(m[j] - m[k] for m in terms)
        M = max(0, -low)
        moved = {}
        for m, c in terms.items():
            m2 = list(m)
            m2[j] = m[j] - m[k] + M
            moved[tuple(m2)] = c
        terms = moved
    fast = _substitute_flint(P, terms, images, gens)
    if fast is not None:
        return fast
    try:
        parts = [(sp.Poly(n, *gens), sp.Poly(d, *gens)) for n, d in images]
        K = P.domain
        for n, d in parts:
            K = K.unify(n.domain).unify(d.domain)
        if K.is_EX:
            return None
        degs = [max(m[i] for m in terms) for i in range(2)]
        one = sp.Poly(1, *gens, domain=K)
        factors = []
        for (n, d), D in zip(parts, degs):
            n, d = n.set_domain(K), d.set_domain(K)
            pn, pd = [one], [one]
            for _ in range(D):
                pn.append(pn[-1] * n)
                if not d.is_one:
                    pd.append(pd[-1] * d)
            factors.append([pn[e] * pd[D - e] if not d.is_one else pn[e] for e in range(D + 1)])
        rows = {}
        for (a, b), c in terms.items():
            rows.setdefault(a, []).append((b, K.convert(c, P.domain)))
        total = sp.Poly(0, *gens, domain=K)
        for a, row in rows.items():
            inner = sp.Poly(0, *gens, domain=K)
            for b, c in row:
                inner += factors[1][b].mul_ground(c)
            total += factors[0][a] * inner
    except (sp.polys.polyerrors.PolynomialError, sp.polys.polyerrors.CoercionFailed,
            sp.polys.polyerrors.DomainError, NotImplementedError):
        return None
    if total.is_zero:
        raise NotAvailable("elimination produced the zero polynomial (degenerate law)")
    return _ring_form(_without_monomial(total)).primitive()[1]


_X = (sp.Dummy("x1"), sp.Dummy("x2"))


def _substitute_flint(P, terms, images, gens):
    """:func:`substitute` in FLINT's multivariate integer polynomials (constants such as
    ``e`` as variables, :func:`freeprob.core.exactpoly._direct_context`), for Polys over
    ℤ, ℚ or ℤ/ℚ[parameters, e^r]; ``None`` for others (the caller takes sympy's polynomial
    arithmetic).  ``terms``: the terms of ``P`` (shifted as asked)."""
    from freeprob.core.exactpoly import _direct_context, _from_flint
    try:
        src = sp.Poly.from_dict(terms, *_X, domain=P.domain)
        parts = []
        for n, d in images:         # num and den scaled alike (to integer coefficients)
            pn, pd = sp.Poly(n, *gens), sp.Poly(d, *gens)
            den = sp.ilcm(_denominator(pn), _denominator(pd))
            parts += [pn * den, pd * den]
    except (sp.polys.polyerrors.PolynomialError, sp.polys.polyerrors.CoercionFailed,
            sp.polys.polyerrors.DomainError, NotImplementedError):
        return None
    fd = _direct_context([src] + parts, _X + tuple(gens))
    if fd is None:
        return None
    f, (n1, d1, n2, d2) = fd.polys[0], fd.polys[1:]
    degs = f.degrees()[:2]
    ctx = fd.ctx
    one = ctx.constant(1)

    def row(n, d, D):
        pn, pd = [one], [one]
        for _ in range(D):
            pn.append(pn[-1] * n)
            pd.append(pd[-1] * d)
        return [pn[e] * pd[D - e] for e in range(D + 1)]
    F1, F2 = row(n1, d1, degs[0]), row(n2, d2, degs[1])
    coeffs = {}
    for m, c in f.to_dict().items():
        coeffs.setdefault(m[0], {}).setdefault(m[1], {})[(0, 0) + tuple(m[2:])] = c
    total = ctx.constant(0)
    for i, by_j in coeffs.items():
        inner = ctx.constant(0)
        for j, cd in by_j.items():
            inner += ctx.from_dict(cd) * F2[j]
        total += F1[i] * inner
    if total.is_zero():
        raise NotAvailable("elimination produced the zero polynomial (degenerate law)")
    out, primitive = _from_flint(total, fd.variables, tuple(gens), fd.back)
    out = _ring_form(_without_monomial(out))
    # (a monomial divided out leaves the coefficients, and so the content 1, as they were)
    return out if primitive and out.domain.is_Ring else out.primitive()[1]


def _without_monomial(poly):
    """``poly`` divided by its monomial content, except that one power of the first
    generator (the unknown: ``G``, ``R`` or ``S``) stays when nothing else would depend on
    it: ``R·w²`` is the R-equation ``R = 0`` of a point mass at 0, not the constant 1."""
    exps, reduced = poly.terms_gcd()
    if exps[0] > 0 and reduced.degree(poly.gens[0]) <= 0:
        reduced = reduced * sp.Poly(poly.gens[0], *poly.gens, domain=reduced.domain)
    return reduced


def _denominator(poly):
    """The least common denominator of the rational numbers in ``poly``'s coefficients
    (over ℚ or ℚ[…]; 1 over ℤ, ℤ[…] and other domains)."""
    K = poly.domain
    den = 1
    if K.is_QQ:
        for c in poly.rep.to_dict().values():
            den = sp.ilcm(den, K.denom(c))
    elif K.is_PolynomialRing and K.domain.is_QQ:
        for c in poly.rep.to_dict().values():
            for q in c.values():
                den = sp.ilcm(den, K.domain.denom(q))
    return int(den)
