r"""Exact algebraic Cauchy equations ``P(G, z) = 0`` of laws (the polynomial method).

Every algebraic law of freeprob has a bivariate polynomial ``P`` with exact or
symbolic coefficients such that its Cauchy transform satisfies ``P(G(z), z) = 0``.
The families give theirs in closed form; operations transform or eliminate them by
resultants, following Rao & Edelman's polynomial method ([RE08]_):

=============================  ==========================================================
law                            equation
=============================  ==========================================================
``Atomic``                     ``Π(z − x_i) G − Σ_i w_i Π_{j≠i}(z − x_j)``
``Semicircle(a, σ²)``          ``σ² G² − (z − a) G + 1``
``FreePoisson(λ, α)``          ``α z G² + (αλ − α − z) G + 1``
compound free Poisson π(ν,t)   from ``R(w) = (t/w)(G_ν(1/w)/w − 1)``
``free_add`` (⊞)               ``R``-polynomials: ``Res_Y(Q_a(Y, w), Q_b(R − Y, w))``
``free_mul`` (⊠)               ``S``-polynomials: ``Res_Y(L_a(Y, u), Y^d L_b(S/Y, u))``;
                               a zero-mean factor ``b`` through ``b + ε`` and ``ε → 0``
``free_power``                 ``Q(R/t, w)``
``shift``, ``dilate``          ``P(G, z − a)``; ``P(cG, z/c)``
``mixture``                    ``G = Σ w_i G_i`` eliminated by resultants
``rectangular_companion``      ``G' = c G + (1 − c)/z``
``pushforward`` by ``p``       ``G_p(ζ) = Σ_{p(r)=ζ} G(r)/p′(r)``, roots eliminated by the
                               tower of divided differences of ``p``
=============================  ==========================================================

The conversions between the G-, R- and S-polynomials use ``z = R(G) + 1/G`` and
``G = u S(u)`` with ``u = zG − 1`` (theory.md §1; [MS17] §2.4–2.6).

The result is made irreducible: :func:`cauchy_equation` factors the eliminant and keeps
the unique irreducible factor that the Cauchy series ``Σ m_n z^{−n−1}`` satisfies
(checked exactly on enough terms to exclude every other factor).

References
----------
.. [RE08] N. R. Rao, A. Edelman, The polynomial method for random matrices, Found.
   Comput. Math. 8 (2008) 649–702.
"""
from __future__ import annotations

import math
from functools import singledispatch

import flint
import sympy as sp

from .errors import FreeprobValueError, NotAvailable
from .families import Atomic, CompoundFreePoisson, FreePoisson, Semicircle
from .law import Law
from .operations import (
    Dilate,
    FreeAdd,
    FreeMul,
    FreePower,
    Mixture,
    Pushforward,
    RectangularCompanion,
    Shift,
    shift,
)
from .series import TruncatedSeries
from .symbols import G, w, z

__all__ = ["cauchy_equation", "raw_cauchy_equation", "r_equation", "s_equation"]

_Y = sp.Dummy("Y")
_R = sp.Dummy("R")
_S = sp.Dummy("S")
_U = sp.Dummy("u")
_EPS = sp.Dummy("epsilon")
#: largest G-degree of a pushforward eliminant ((deg_G P)^d · d!) that is attempted
_MAX_PUSHFORWARD_DEGREE = 64


def _numer(expr, *gens):
    """The numerator of a rational expression as a Poly in ``gens`` (content removed)."""
    num, _ = sp.fraction(sp.together(expr))
    poly = sp.Poly(sp.expand(num), *gens)
    if poly.is_zero:
        raise NotAvailable("elimination produced the zero polynomial (degenerate law)")
    return poly.primitive()[1]


def _expr(poly):
    return poly.as_expr()


# -- conversions between G-, R- and S-equations ------------------------------------------
def g_to_r(P):
    """``Q(R, w)`` with ``Q(R(w), w) = 0`` from ``P(G, z)``: substitute ``G = w``, ``z = R + 1/w``."""
    return _numer(_expr(P).subs({G: w, z: _R + 1 / w}, simultaneous=True), _R, w)


def r_to_g(Q):
    """``P(G, z)`` from ``Q(R, w)``: ``w = G``, ``R = z − 1/G``."""
    return _numer(_expr(Q).subs({w: G, _R: z - 1 / G}, simultaneous=True), G, z)


def g_to_s(P):
    """``L(S, u)`` with ``L(S(u), u) = 0``: ``G = uS``, ``z = (1 + u)/(uS)`` (needs m_1 ≠ 0)."""
    return _numer(_expr(P).subs({G: _U * _S, z: (1 + _U) / (_U * _S)}, simultaneous=True), _S, _U)


def s_to_g(L):
    """``P(G, z)`` from ``L(S, u)``: ``u = zG − 1``, ``S = G/u``."""
    return _numer(_expr(L).subs({_S: G / (z * G - 1), _U: z * G - 1}, simultaneous=True), G, z)


# -- elimination: FLINT multivariate integer polynomials when possible ------------------
def _poly_to_rational(poly, variables):
    """Re-express a ``Poly`` over ℤ, ℚ or ℤ[…]/ℚ[…] in ``variables`` without going through
    sympy expressions (which is slow for eliminants with thousands of terms)."""
    dom = poly.domain
    try:
        gi = [variables.index(g) for g in poly.gens]
    except ValueError:
        return None
    n = len(variables)
    out = {}
    if dom.is_ZZ or dom.is_QQ:
        for m, c in poly.rep.to_dict().items():
            key = [0] * n
            for i, e in zip(gi, m):
                key[i] = e
            out[tuple(key)] = dom.to_sympy(c)
    elif dom.is_PolynomialRing and (dom.domain.is_ZZ or dom.domain.is_QQ):
        try:
            pi = [variables.index(s) for s in dom.symbols]
        except ValueError:
            return None
        for m, c in poly.rep.to_dict().items():
            for pm, pc in c.items():
                key = [0] * n
                for i, e in zip(gi, m):
                    key[i] = e
                for i, e in zip(pi, pm):
                    key[i] += e
                out[tuple(key)] = out.get(tuple(key), 0) + dom.domain.to_sympy(pc)
    else:
        return None
    return sp.Poly.from_dict(out, *variables, domain=sp.QQ)


def _rational_poly(expr, variables):
    """``expr`` (or its numerator) as a ``Poly`` over ℚ in ``variables``, or ``None``."""
    errors = (sp.polys.polyerrors.PolynomialError, sp.polys.polyerrors.CoercionFailed)
    if isinstance(expr, sp.Poly):
        direct = _poly_to_rational(expr, variables)
        if direct is not None:
            return direct
        expr = expr.as_expr()
    try:
        return sp.Poly(expr, *variables, domain=sp.QQ)
    except errors:
        pass
    try:
        return sp.Poly(sp.fraction(sp.together(expr))[0], *variables, domain=sp.QQ)
    except errors:
        return None


_EXP_GEN = sp.Dummy("T")


def _freeze_exponentials(exprs):
    """Replace ``e = exp(1)`` and ``exp(r)`` (``r`` rational) by powers of one symbol ``T``
    standing for ``exp(1/L)``, ``L`` the common denominator of the exponents.

    ``exp(1/L)`` is transcendental (Lindemann), so ``ℚ(T) ≅ ℚ(exp(1/L))``: eliminations and
    factorizations over ``ℚ(T)`` are exact for the GE constants ``θ1 = e^{β²} − 1`` with
    rational ``β²``.  Returns the new expressions and the back substitution (or ``None``).
    """
    def plain(e):  # a Poly over ℤ, ℚ or ℤ/ℚ[symbols]: no constants to freeze
        d = e.domain
        return d.is_ZZ or d.is_QQ or ((d.is_PolynomialRing or d.is_FractionField) and (
            d.domain.is_ZZ or d.domain.is_QQ) and all(g.is_Symbol for g in d.symbols))

    exps = set()
    for e in exprs:
        if isinstance(e, sp.Poly) and plain(e):
            continue
        e = e.as_expr() if isinstance(e, sp.Poly) else e
        if e.has(sp.E):
            exps.add(sp.Integer(1))
        exps.update(a.args[0] for a in e.atoms(sp.exp) if a.args[0].is_Rational)
    if not exps:
        return exprs, None
    L = sp.ilcm(1, *[r.q for r in exps])
    forward = {sp.E: _EXP_GEN**L}
    forward.update({sp.exp(r): _EXP_GEN ** (r * L) for r in exps})
    out = [e if isinstance(e, sp.Poly) and plain(e) else
           (e.as_expr() if isinstance(e, sp.Poly) else e).xreplace(forward) for e in exprs]
    return out, {_EXP_GEN: sp.exp(sp.Rational(1, L))}


def _flint_context(exprs, gens):
    """An ``fmpz_mpoly`` context for ``exprs`` and their integer-coefficient numerators.

    Returns ``(ctx, variables, numerators, back)``, where the variables are ``gens`` followed by
    the parameters (free symbols), or ``None`` when a coefficient is not rational (e.g.
    ``sqrt(2)`` or ``log(8)``), in which case sympy's elimination is used instead.
    ``back`` undoes :func:`_freeze_exponentials` (``e``, ``exp(r)`` as a variable).
    """
    exprs = [e if isinstance(e, sp.Poly) else sp.sympify(e) for e in exprs]
    exprs, back = _freeze_exponentials(exprs)
    params = sorted(set().union(*[e.free_symbols for e in exprs]) - set(gens),
                    key=sp.default_sort_key)
    variables = tuple(gens) + tuple(params)
    polys = [_rational_poly(e, variables) for e in exprs]
    if any(p is None or p.is_zero for p in polys):
        return None
    ctx = flint.fmpz_mpoly_ctx.get(tuple(f"v{i}" for i in range(len(variables))), "lex")
    out = []
    for poly in polys:
        terms = poly.terms()
        den = sp.ilcm(*[c.q for _, c in terms])
        out.append(ctx.from_dict({m: int(c * den) for m, c in terms}))
    return ctx, variables, out, back


def _from_flint(f, variables, gens, back=None):
    """The sympy ``Poly`` in ``gens`` (content removed) of an ``fmpz_mpoly`` over ``variables``.

    Variables other than ``gens`` that still occur become the coefficient domain ℤ[...];
    eliminated variables (degree 0 everywhere) are dropped; ``back`` substitutes frozen
    exponentials back.
    """
    terms = {m: int(c) for m, c in f.to_dict().items()}
    gi = [variables.index(g) for g in gens]
    used = [i for i in range(len(variables))
            if i not in gi and any(m[i] for m in terms)]
    if not used:
        poly = sp.Poly.from_dict({tuple(m[i] for i in gi): c for m, c in terms.items()},
                                 *gens, domain=sp.ZZ)
    else:
        domain = sp.ZZ[tuple(variables[i] for i in used)]
        grouped = {}
        for m, c in terms.items():
            grouped.setdefault(tuple(m[i] for i in gi), {})[tuple(m[i] for i in used)] = c
        ring = domain.ring
        poly = sp.Poly.from_dict({k: ring.from_dict(v) for k, v in grouped.items()},
                                 *gens, domain=domain)
    poly = poly.primitive()[1]
    if back:
        poly = sp.Poly(poly.as_expr().xreplace(back), *gens)
    return poly


def _eliminate(first, steps, gens):
    """Eliminate variables by successive resultants: ``first``, then ``Res_v(·, q)`` for
    each ``(q, v)`` in ``steps``; the result is a ``Poly`` in ``gens``.

    Uses FLINT's multivariate resultants over ℤ (parameters as extra variables) when all
    coefficients are rational, sympy's otherwise.
    """
    exprs = [first] + [q for q, _ in steps]
    elim = [v for _, v in steps]
    flint_data = _flint_context(exprs, tuple(gens) + tuple(elim))
    if flint_data is not None:
        ctx, variables, polys, back = flint_data
        acc = polys[0]
        for q, v in zip(polys[1:], elim):
            acc = acc.resultant(q, ctx.names()[variables.index(v)])
            if acc.is_zero():
                raise NotAvailable("elimination produced the zero polynomial (degenerate law)")
            # Only the zero set matters: drop repeated factors, and factors free of the
            # unknown gens[0] (they stay free of it through later eliminations).
            _, parts = acc.factor_squarefree()
            acc = ctx.constant(1)
            for f, _ in parts:
                if f.degrees()[0] > 0:
                    acc = acc * f
        return _from_flint(acc, variables, gens, back)
    acc = sp.expand(first)
    for q, v in steps:
        res = sp.resultant(sp.Poly(acc, v, *gens), sp.Poly(sp.expand(q), v, *gens), v)
        acc = sp.expand(res.as_expr() if isinstance(res, sp.Poly) else res)
    return _numer(acc, *gens)


def _resultant(p, q, var, gens):
    return _eliminate(p, [(q, var)], gens)


def _factor_list(P):
    """The irreducible factors of ``P(G, z)`` (FLINT when the coefficients are rational)."""
    flint_data = _flint_context([P], (G, z))
    if flint_data is None:
        return [f for f, _ in sp.factor_list(P)[1]]
    _, variables, (f,), back = flint_data
    return [_from_flint(g, variables, (G, z), back) for g, _ in f.factor()[1]]


# -- per-law (possibly reducible) equations ----------------------------------------------
@singledispatch
def raw_cauchy_equation(law) -> sp.Poly:
    """A polynomial ``P(G, z)`` (possibly reducible) with ``P(G(z), z) = 0`` for ``law``."""
    raise NotAvailable(
        f"{type(law).__name__}: no algebraic Cauchy equation is known for this law "
        "(it is not built from algebraic laws by the supported operations)"
    )


@raw_cauchy_equation.register
def _(law: Atomic):
    merged = {}
    for x, wt in zip(law.points, law.weights):
        for key in merged:
            if sp.simplify(key - x) == 0:
                merged[key] += wt
                break
        else:
            merged[x] = wt
    merged = {x: wt for x, wt in merged.items() if sp.simplify(wt) != 0}
    pts = list(merged)
    den = sp.Mul(*[z - x for x in pts])
    num = sp.Add(*[merged[x] * sp.Mul(*[z - y for y in pts if y is not x]) for x in pts])
    return _numer(den * G - num, G, z)


@raw_cauchy_equation.register
def _(law: Semicircle):
    return _numer(law.variance * G**2 - (z - law.mean) * G + 1, G, z)


@raw_cauchy_equation.register
def _(law: FreePoisson):
    lam, a = law.rate, law.jump
    return _numer(a * z * G**2 + (a * lam - a - z) * G + 1, G, z)


@raw_cauchy_equation.register
def _(law: CompoundFreePoisson):
    t = law.rate
    Pnu = raw_cauchy_equation(law.jump_law)
    # R(w) = (t/w)(G_ν(1/w)/w − 1)  ⇔  G_ν(1/w) = w + w² R / t
    Q = _numer(_expr(Pnu).subs({G: w + w**2 * _R / t, z: 1 / w}, simultaneous=True), _R, w)
    return r_to_g(Q)


def r_equation(law) -> sp.Poly:
    """``Q(R, w)`` satisfied by the R-transform of ``law``."""
    return g_to_r(raw_cauchy_equation(law))


def s_equation(law) -> sp.Poly:
    """``L(S, u)`` satisfied by the S-transform of ``law`` (needs a non-zero mean)."""
    return g_to_s(raw_cauchy_equation(law))


@raw_cauchy_equation.register
def _(law: FreeAdd):
    Q = r_equation(law.laws[0])
    for other in law.laws[1:]:
        Qb = r_equation(other)
        Q = _resultant(_expr(Q).subs(_R, _Y), _expr(Qb).subs(_R, _R - _Y), _Y, (_R, w))
    return r_to_g(Q)


@raw_cauchy_equation.register
def _(law: FreeMul):
    if any(law._zero_mean):
        # a ⊠ (b + ε) has an equation polynomial in ε; at ε = 0 it holds for a ⊠ b
        a, b = (law.left, law.right) if law._zero_mean[1] else (law.right, law.left)
        P = raw_cauchy_equation(FreeMul(a, shift(b, _EPS)))
        P3 = sp.Poly(_expr(P), G, z, _EPS)
        while all(m[2] > 0 for m in P3.monoms()):
            P3 = sp.Poly(sp.expand(_expr(P3) / _EPS), G, z, _EPS)
        return _numer(_expr(P3).subs(_EPS, 0), G, z)
    La, Lb = s_equation(law.left), s_equation(law.right)
    d = sp.degree(Lb, _S)
    Lb_sub = sp.expand(_expr(Lb).subs(_S, _S / _Y) * _Y**d)
    L = _resultant(_expr(La).subs(_S, _Y), Lb_sub, _Y, (_S, _U))
    return s_to_g(L)


@raw_cauchy_equation.register
def _(law: FreePower):
    Q = r_equation(law.law)
    return r_to_g(_numer(_expr(Q).subs(_R, _R / law.t), _R, w))


@raw_cauchy_equation.register
def _(law: Shift):
    P = raw_cauchy_equation(law.law)
    return _numer(_expr(P).subs(z, z - law.a), G, z)


@raw_cauchy_equation.register
def _(law: Dilate):
    P = raw_cauchy_equation(law.law)
    c = law.c
    return _numer(_expr(P).subs({G: c * G, z: z / c}, simultaneous=True), G, z)


@raw_cauchy_equation.register
def _(law: Mixture):
    pairs = [(wt, law_i) for wt, law_i in zip(law.weights, law.laws) if sp.simplify(wt) != 0]
    wt0, law0 = pairs[0]
    # H = w_0 G_0: P_0(H / w_0, z)
    P = _numer(_expr(raw_cauchy_equation(law0)).subs(G, G / wt0), G, z)
    for wt, law_i in pairs[1:]:
        Pi = raw_cauchy_equation(law_i)
        # H_new = H_old + wt * Y with P_i(Y, z) = 0
        P = _resultant(_expr(P).subs(G, G - wt * _Y), _expr(Pi).subs(G, _Y), _Y, (G, z))
    return P


@raw_cauchy_equation.register
def _(law: RectangularCompanion):
    P = raw_cauchy_equation(law.law)
    c = law.ratio
    return _numer(_expr(P).subs(G, (G - (1 - c) / z) / c), G, z)


@raw_cauchy_equation.register
def _(law: Pushforward):
    # G_p(ζ) = Σ_{i=1}^{d} G(r_i)/p'(r_i) over the roots r_i of p(r) = ζ.  The roots are
    # generated by the tower q_1 = p(r_1) − ζ, q_{k+1} = divided difference of q_k in its
    # last variable; y_i = G(r_i)/p'(r_i) satisfy F(y_i, r_i) = P(y_i p'(r_i), r_i) = 0.
    # The eliminant is (true equation)^{d!} times spurious factors; cauchy_equation
    # factors it and keeps the factor satisfied by the Cauchy series.
    coeffs = law.coefficients
    d = len(coeffs) - 1
    P = raw_cauchy_equation(law.law)
    m = sp.degree(P, G)
    if m**d * math.factorial(d) > _MAX_PUSHFORWARD_DEGREE:
        raise NotAvailable(
            f"pushforward: the elimination for a degree-{d} polynomial of a law whose "
            f"Cauchy equation has degree {m} in G has degree {m**d * math.factorial(d)} in G, "
            f"beyond the supported {_MAX_PUSHFORWARD_DEGREE} (moments, cumulants and "
            "transforms of this law are available)"
        )
    r = sp.symbols(f"r1:{d + 1}", cls=sp.Dummy)
    y = sp.symbols(f"y1:{d + 1}", cls=sp.Dummy)
    tvar = sp.Dummy("t")
    p = sp.Add(*[c * tvar**i for i, c in enumerate(coeffs)])
    dp = sp.diff(p, tvar)

    def branch(yi, ri):  # P(y p'(r), r) = 0
        return _expr(P).subs({G: yi * dp.subs(tvar, ri), z: ri}, simultaneous=True)

    # Σ y_i = G: eliminate y_2 .. y_d, then r_d .. r_1 by the divided-difference tower
    steps = [(branch(y[i], r[i]), y[i]) for i in range(1, d)]
    tower = [sp.expand(p.subs(tvar, r[0]) - z)]
    for k in range(1, d):
        prev = tower[-1]
        tower.append(sp.expand(sp.cancel((prev - prev.subs(r[k - 1], r[k])) / (r[k - 1] - r[k]))))
    steps += [(tower[k], r[k]) for k in reversed(range(d))]
    return _eliminate(branch(G - sp.Add(*y[1:]), r[0]), steps, (G, z))


# -- irreducible equation ---------------------------------------------------------------
def _series_residual_is_zero(F, law, order):
    """True if ``F(G(z), z) = 0`` to ``order`` terms of the Cauchy series at infinity."""
    ring = law._exact_ring()
    Gs = law.cauchy_series(order + 1)
    Gs = TruncatedSeries._raw(Gs._c, order + 1, Gs.ring)
    dz = sp.degree(F, z)
    total = TruncatedSeries._raw([ring.zero], order + 1, ring)
    powers = [TruncatedSeries._raw([ring.one], order + 1, ring)]
    for i in range(1, sp.degree(F, G) + 1):
        powers.append(powers[-1] * Gs)
    for (i, j), c in F.terms():
        # c G^i z^j · ζ^{dz}  =  c G^i ζ^{dz − j}
        term = powers[i].shift(dz - j) * ring.convert(c)
        total = total + term.truncate(min(term.order, order + 1))
    return all(ring.is_zero(v) for v in total._c[:order])


def cauchy_equation(law: Law) -> sp.Poly:
    r"""The irreducible algebraic Cauchy equation ``P(G, z)`` of ``law``.

    ``P`` is a sympy ``Poly`` in ``(G, z)`` (:mod:`freeprob.symbols`) with exact or
    symbolic coefficients, irreducible over its coefficient domain, with
    ``P(G(z), z) = 0`` for ``G(z) = ∫ dμ(x)/(z − x)``.

    Raises
    ------
    NotAvailable
        If the law has no algebraic equation the library can derive (the message
        says which component is the obstacle).

    Notes
    -----
    The eliminant is factored and the factor that the Cauchy series satisfies is
    kept; the series check uses more exact terms than the order to which a wrong
    factor could vanish (a resultant-degree bound).  Elimination and factoring run in
    FLINT's multivariate integer polynomials (parameters as extra variables) when every
    coefficient is rational, in sympy otherwise.
    """
    P = raw_cauchy_equation(law)
    candidates = [f for f in _factor_list(P) if sp.degree(f, G) >= 1]
    if len(candidates) == 1:
        return _normalize(candidates[0])
    # A wrong irreducible factor f (degrees a_f, b_f) and the true one F (degrees ≤ A, B)
    # have a non-zero resultant of degree ≤ a_f B + b_f A in z, so f(G(z), z) cannot vanish
    # to more than b_f + a_f B + b_f A orders at infinity.
    degs = [(sp.degree(f, G), sp.degree(f, z)) for f in candidates]
    A, B = max(a for a, _ in degs), max(b for _, b in degs)
    order = max(b + a * B + b * A for a, b in degs) + 2
    candidates.sort(key=lambda f: (sp.degree(f, G), sp.degree(f, z)))
    symbols = sorted(law.free_symbols, key=sp.default_sort_key)
    if symbols:
        # Screening at a generic rational point: the true factor vanishes on the Cauchy
        # series for every parameter value, so if exactly one factor survives at the
        # point, it is the true one (exact, fast FLINT arithmetic).
        point = {s: sp.Rational(p, q) for s, (p, q) in
                 zip(symbols, [(7, 3), (11, 5), (13, 7), (17, 4), (19, 6), (23, 9), (29, 8)] * 4)}
        try:
            special = law.subs(point)
        except FreeprobValueError:
            special = None
        if special is not None:
            survivors = [f for f in candidates
                         if _series_residual_is_zero(sp.Poly(f.as_expr().subs(point), G, z),
                                                     special, order)]
            if len(survivors) == 1:
                return _normalize(survivors[0])
    for f in candidates:
        if _series_residual_is_zero(f, law, order):
            return _normalize(f)
    raise NotAvailable(  # pragma: no cover - would be a bug in an elimination rule
        f"{type(law).__name__}: no factor of the eliminant is satisfied by the Cauchy series"
    )


def _normalize(f):
    f = sp.Poly(f, G, z)
    lc = f.LC()
    try:
        if sp.sympify(lc).could_extract_minus_sign():
            f = -f
    except AttributeError:  # pragma: no cover
        pass
    return f
