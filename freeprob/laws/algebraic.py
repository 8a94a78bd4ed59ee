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
``boolean_add`` (⊎)            ``F = 1/G``: ``F_μ + F_ν − z = 1/G``, ``F_μ``, ``F_ν``
                               eliminated by resultants
``monotone_add`` (▷)           ``G = G_μ(Y)``, ``Y = F_ν(z)``: ``Res_Y(P_μ(G, Y), Φ_ν(Y, z))``
=============================  ==========================================================

The conversions between the G-, R- and S-polynomials use ``z = R(G) + 1/G`` and
``G = u S(u)`` with ``u = zG − 1`` (theory.md §1; [MS17] §2.4–2.6).

The result is made irreducible by one function for every law (:func:`_irreducible_equation`,
through :func:`cauchy_equation`), and every operation starts from the irreducible equations
of its operands: the eliminant is factored (FLINT, parameters and constants such as ``e``
and ``√2`` as variables: :mod:`freeprob.core.exactpoly`) and the unique irreducible factor that
the Cauchy series ``Σ m_n z^{−n−1}`` satisfies is kept (checked exactly on enough terms to
exclude every other factor), irreducible over the algebraic extension of the constants.

References: [RE08]_, [MS17]_, [TRA76]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

import math
from functools import singledispatch

import sympy as sp

from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.laws.families import Atomic, CompoundFreePoisson, FreePoisson, Semicircle
from freeprob.laws.independences import BooleanAdd, MonotoneAdd
from freeprob.laws.law import Law, register
from freeprob.laws.operations import (
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
from freeprob.core.series import TruncatedSeries
from freeprob.core.symbols import G, w, z

__all__ = ["cauchy_equation", "raw_cauchy_equation", "r_equation", "s_equation"]

_Y = sp.Dummy("Y")
_R = sp.Dummy("R")
_S = sp.Dummy("S")
_U = sp.Dummy("u")
_EPS = sp.Dummy("epsilon")
_F = sp.Dummy("F")
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


def _subs(P, images, gens, shift=None):
    """The numerator of ``P`` (a Poly in two generators) with its generators replaced by
    ``num/den`` (``images``, in order), as a primitive Poly in ``gens``: in polynomial
    arithmetic (:func:`freeprob.core.substitution.substitute`), or through sympy
    expressions for coefficients it does not handle (``EX``).  ``shift``: as there."""
    from freeprob.core.substitution import substitute     # here: exact moments need no FLINT contexts
    out = substitute(P, images, gens, shift=shift)
    if out is not None:
        return out
    expr = _expr(P)
    if shift is not None:
        k, j = shift
        low = min(m[j] - m[k] for m in P.monoms())
        expr = expr.subs(P.gens[k], P.gens[k] / P.gens[j], simultaneous=True) * P.gens[j] ** max(0, -low)
    return _numer(expr.subs({g: n / d for g, (n, d) in zip(P.gens, images)}, simultaneous=True), *gens)


# -- conversions between G-, R- and S-equations ------------------------------------------
def g_to_r(P):
    """``Q(R, w)`` with ``Q(R(w), w) = 0`` from ``P(G, z)``: substitute ``G = w``, ``z = R + 1/w``."""
    return _subs(P, [(w, 1), (_R * w + 1, w)], (_R, w))


def r_to_g(Q):
    """``P(G, z)`` from ``Q(R, w)``: ``w = G``, ``R = z − 1/G``."""
    return _subs(_gens(Q, _R, w), [(z * G - 1, G), (G, 1)], (G, z))


def g_to_s(P):
    """``L(S, u)`` with ``L(S(u), u) = 0``: ``G = uS``, ``z = (1 + u)/(uS)`` (needs m_1 ≠ 0)."""
    return _subs(P, [(_U * _S, 1), (1 + _U, _U * _S)], (_S, _U))


def s_to_g(L):
    """``P(G, z)`` from ``L(S, u)``: ``u = zG − 1``, ``S = G/u``."""
    return _subs(_gens(L, _S, _U), [(G, 1), (z * G - 1, 1)], (G, z), shift=(0, 1))


def _composed(P, images, gens):
    """``P`` (two generators) with its generators replaced by the polynomials ``images``
    (``(num, 1)`` pairs) as a Poly in ``gens`` (up to a constant and a monomial factor,
    :func:`freeprob.core.substitution.substitute`), or the expression for an ``EX`` domain."""
    from freeprob.core.substitution import substitute
    out = substitute(P, images, gens)
    return out if out is not None else _expr(P).subs({g: n for g, (n, _) in zip(P.gens, images)},
                                                     simultaneous=True)


def _gens(P, *gens):
    """``P`` as a Poly in exactly ``gens`` (in this order)."""
    return P if P.gens == gens else sp.Poly(_expr(P), *gens)


# -- elimination: FLINT multivariate integer polynomials when possible ------------------
_SYMPY_ERRORS = (sp.polys.polyerrors.PolynomialError, sp.polys.polyerrors.CoercionFailed,
                 sp.polys.polyerrors.DomainError, NotImplementedError, ZeroDivisionError)


def _eliminate(first, steps, gens):
    """Eliminate variables by successive resultants: ``first``, then ``Res_v(·, q)`` for
    each ``(q, v)`` in ``steps``; the result is a ``Poly`` in ``gens``.

    Uses FLINT's multivariate resultants over ℤ, parameters and constants (``e``, ``√2``:
    :func:`freeprob.core.exactpoly.freeze_constants`) as extra variables, after each step
    keeping the square-free product of the factors that involve ``gens[0]``; sympy's
    resultants only for coefficients FLINT cannot hold (``log(8)``, ``sqrt(t)``).

    Raises
    ------
    NotAvailable
        If the eliminant vanishes (degenerate law) or sympy cannot form it.
    """
    from freeprob.core.exactpoly import flint_context, from_flint  # here: moments need neither
    exprs = [first] + [q for q, _ in steps]
    elim = [v for _, v in steps]
    fd = flint_context(exprs, tuple(gens) + tuple(elim))
    if fd is not None:
        ctx, acc = fd.ctx, fd.polys[0]
        for q, v in zip(fd.polys[1:], elim):
            acc = acc.resultant(q, fd.name(v))
            if acc.is_zero():
                raise NotAvailable("elimination produced the zero polynomial (degenerate law)")
            # Only the zero set matters: drop repeated factors, and factors free of the
            # unknown gens[0] (they stay free of it through later eliminations).
            _, parts = acc.factor_squarefree()
            acc = ctx.constant(1)
            for f, _ in parts:
                if f.degrees()[0] > 0:
                    acc = acc * f
        return from_flint(acc, fd.variables, gens, fd.back)
    first = _expr(first) if isinstance(first, sp.Poly) else first
    steps = [(_expr(q) if isinstance(q, sp.Poly) else q, v) for q, v in steps]
    try:
        acc = sp.expand(first)
        for q, v in steps:
            res = sp.resultant(sp.Poly(acc, v, *gens), sp.Poly(sp.expand(q), v, *gens), v)
            acc = sp.expand(res.as_expr() if isinstance(res, sp.Poly) else res)
        return _numer(acc, *gens)
    except _SYMPY_ERRORS as exc:
        consts = sorted({str(a) for e in exprs for a in sp.sympify(_expr(e) if isinstance(
            e, sp.Poly) else e).atoms(sp.Function, sp.NumberSymbol, sp.Pow) if a.is_number})
        raise NotAvailable(
            "the Cauchy equation cannot be eliminated with these coefficients "
            f"({type(exc).__name__} in sympy; constants {', '.join(consts) or 'none'}): exact "
            "equations need rational numbers, symbols, e, exp(rational) and radicals such as "
            "sqrt(2); moments, cumulants and transforms of this law are available") from None


def _resultant(p, q, var, gens):
    return _eliminate(p, [(q, var)], gens)


def _branch_at_infinity(f):
    """True if the ``fmpz_mpoly`` ``f`` in ``(G, z, …)`` has a branch ``G ~ c/z`` at ∞:
    with ``D = max(j − k)`` over its terms ``G^k z^j``, the terms with ``j − k = D`` sum to
    zero at ``G = 1/z`` (every Cauchy transform has ``G ~ 1/z``, for every parameter)."""
    terms = f.to_dict()
    D = max(m[1] - m[0] for m in terms)
    q0 = {}
    for m, c in terms.items():
        if m[1] - m[0] == D:
            q0[m[2:]] = q0.get(m[2:], 0) + int(c)
    return not any(q0.values())


def _irreducible_equation(P, law):
    r"""The irreducible, square-free factor of ``P(G, z)`` satisfied by the Cauchy
    transform of ``law``: the one reduction step of every equation (families and
    operations alike, through :func:`cauchy_equation`).

    ``P`` is factored in FLINT with parameters and constants as variables; factors free of
    ``G`` or without a branch ``G ~ 1/z`` at infinity are dropped, and among the others the
    one the Cauchy series satisfies is kept (:func:`_select_by_series`).  With algebraic
    constants (``√2``) the kept factor is checked to be irreducible over ``ℚ(√2)`` by its
    norm ([TRA76]_); if the norm does not prove it, it is factored over the extension by
    sympy and the selection repeated.  Coefficients FLINT cannot hold (``log(8)``,
    ``sqrt(t)``) are factored by sympy.
    """
    from freeprob.core.exactpoly import flint_context, from_flint
    fd = flint_context([P], (G, z))
    if fd is None:
        try:
            factors = [sp.Poly(f, G, z) for f, _ in sp.factor_list(_expr(P), G, z)[1]]
        except _SYMPY_ERRORS:
            factors = [P]
        return _select_by_series([f for f in factors if sp.degree(f, G) >= 1], law)
    gens = [g for g, _ in fd.polys[0].factor()[1]
            if g.degrees()[0] > 0 and _branch_at_infinity(g)]
    if not gens:
        raise NotAvailable(  # pragma: no cover - would be a bug in an elimination rule
            f"{type(law).__name__}: no factor of the eliminant has a branch G ~ 1/z at infinity")
    polys = [from_flint(g, fd.variables, (G, z), fd.back) for g in gens]
    best = _select_by_series(polys, law)
    if not fd.relations:
        return best
    g = gens[[id(p) for p in polys].index(id(best))]
    if _irreducible_by_norm(g, fd.relations):
        return best
    # the norm does not prove irreducibility over the extension: factor there (sympy; a
    # small polynomial), constants other than the algebraic ones staying variables
    alg = {v: fd.back[v] for v, _ in _relations_syms(fd)}
    expr = from_flint(g, fd.variables, (G, z), alg).as_expr()
    others = sorted(expr.free_symbols - {G, z}, key=sp.default_sort_key)
    rest = {v: a for v, a in fd.back.items() if v not in alg}
    try:
        factors = sp.factor_list(expr, G, z, *others, extension=list(alg.values()))[1]
    except _SYMPY_ERRORS:
        return best
    polys = [sp.Poly(f.xreplace(rest), G, z) for f, _ in factors]
    polys = [f for f in polys if f.degree(G) >= 1]
    return best if len(polys) == 1 else _select_by_series(polys, law)


def _relations_syms(fd):
    """``[(sympy variable, FLINT name)]`` of the algebraic relations of ``fd``."""
    names = fd.ctx.names()
    return [(fd.variables[names.index(n)], n) for n, _ in fd.relations]


def _irreducible_by_norm(g, relations):
    """True if the norm of ``g`` over the algebraic variables ([TRA76]_) is a square-free
    irreducible polynomial in ``(G, z)``: then ``g`` is irreducible over the extension
    (a factorization of ``g`` there would factor its norm).  ``False`` means unknown (e.g.
    ``g`` free of the algebraic variables has the norm ``g^k``)."""
    names = g.context().names()
    if not any(g.degrees()[names.index(n)] > 0 for n, _ in relations):
        return False
    from freeprob.core.exactpoly import norm
    N = norm(g, relations)
    try:
        factors = N.factor()[1]
    except OverflowError:        # FLINT's mpoly factoriser: exponents/degrees beyond a machine word
        return False             # unknown: the caller factors over the extension in sympy
    parts = [(f, e) for f, e in factors if f.degrees()[0] > 0 or f.degrees()[1] > 0]
    return len(parts) == 1 and parts[0][1] == 1


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
    Pnu = _operand_equation(law.jump_law)
    # R(w) = (t/w)(G_ν(1/w)/w − 1)  ⇔  G_ν(1/w) = w + w² R / t
    Q = _subs(_gens(Pnu, G, z), [(t * w + w**2 * _R, t), (1, w)], (_R, w))
    return r_to_g(Q)


def _operand_equation(law) -> sp.Poly:
    """The equation an operation starts from for its operand ``law``: the irreducible one
    (:meth:`~freeprob.laws.law.Law.cauchy_equation`, cached on the law), so that no operation
    carries squared or spurious factors of its operands into its eliminant."""
    return law.cauchy_equation()


def r_equation(law) -> sp.Poly:
    """``Q(R, w)`` satisfied by the R-transform of ``law`` (from its irreducible Cauchy
    equation ``P(G, z)`` by ``G = w``, ``z = R + 1/w``)."""
    return g_to_r(_operand_equation(law))


def s_equation(law) -> sp.Poly:
    """``L(S, u)`` satisfied by the S-transform of ``law`` (needs a non-zero mean; from its
    irreducible Cauchy equation by ``G = uS``, ``z = (1 + u)/(uS)``)."""
    return g_to_s(_operand_equation(law))


@raw_cauchy_equation.register
def _(law: FreeAdd):
    Q = r_equation(law.laws[0])
    for other in law.laws[1:]:
        Qb = r_equation(other)
        Q = _resultant(Q.replace(_R, _Y), _composed(Qb, [(_R - _Y, 1), (w, 1)], (_R, _Y, w)), _Y, (_R, w))
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
    Lb = _gens(Lb, _S, _U)
    Lb_sub = sp.Poly.from_dict({(i, j, d - i): c for (i, j), c in Lb.as_dict(native=True).items()},
                               _S, _U, _Y, domain=Lb.domain)       # Lb(S/Y, u) Y^d
    L = _resultant(_gens(La, _S, _U).replace(_S, _Y), Lb_sub, _Y, (_S, _U))
    return s_to_g(L)


@raw_cauchy_equation.register
def _(law: FreePower):
    Q = r_equation(law.law)
    return r_to_g(_subs(Q, [(_R, law.t), (w, 1)], (_R, w)))


@raw_cauchy_equation.register
def _(law: Shift):
    P = _operand_equation(law.law)
    return _subs(_gens(P, G, z), [(G, 1), (z - law.a, 1)], (G, z))


@raw_cauchy_equation.register
def _(law: Dilate):
    P = _operand_equation(law.law)
    c = law.c
    return _subs(_gens(P, G, z), [(c * G, 1), (z, c)], (G, z))


@raw_cauchy_equation.register
def _(law: Mixture):
    pairs = []
    for wt, law_i in zip(law.weights, law.laws):
        if sp.simplify(wt) == 0:
            continue
        # equal components (e.g. h independent blocks of one law) share one equation: their
        # weights are added, so the equation keeps the degree of one component's
        same = next((j for j, (_, other) in enumerate(pairs) if other is law_i or other == law_i), None)
        if same is None:
            pairs.append((wt, law_i))
        else:
            pairs[same] = (pairs[same][0] + wt, law_i)
    wt0, law0 = pairs[0]
    # H = w_0 G_0: P_0(H / w_0, z)
    P = _subs(_gens(_operand_equation(law0), G, z), [(G, wt0), (z, 1)], (G, z))
    for wt, law_i in pairs[1:]:
        Pi = _operand_equation(law_i)
        # H_new = H_old + wt * Y with P_i(Y, z) = 0
        P = _resultant(_composed(_gens(P, G, z), [(G - wt * _Y, 1), (z, 1)], (G, z, _Y)),
                       _gens(Pi, G, z).replace(G, _Y), _Y, (G, z))
    return P


@raw_cauchy_equation.register
def _(law: RectangularCompanion):
    P = _operand_equation(law.law)
    c = law.ratio
    return _subs(_gens(P, G, z), [(z * G - (1 - c), c * z), (z, 1)], (G, z))


@raw_cauchy_equation.register
def _(law: Pushforward):
    # G_p(ζ) = Σ_{i=1}^{d} G(r_i)/p'(r_i) over the roots r_i of p(r) = ζ.  The roots are
    # generated by the tower q_1 = p(r_1) − ζ, q_{k+1} = divided difference of q_k in its
    # last variable; y_i = G(r_i)/p'(r_i) satisfy F(y_i, r_i) = P(y_i p'(r_i), r_i) = 0.
    # The eliminant is (true equation)^{d!} times spurious factors; cauchy_equation
    # factors it and keeps the factor satisfied by the Cauchy series.
    coeffs = law.coefficients
    d = len(coeffs) - 1
    P = _operand_equation(law.law)
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


def _f_equation(law):
    """``Φ(F, z)`` with ``Φ(F_μ(z), z) = 0`` for ``F_μ = 1/G_μ``: the numerator of ``P(1/F, z)``."""
    return _numer(_expr(_operand_equation(law)).subs(G, 1 / _F), _F, z)


def _polynomial(expr):
    """The numerator of a rational expression, expanded."""
    return sp.expand(sp.fraction(sp.together(expr))[0])


@raw_cauchy_equation.register
def _(law: BooleanAdd):
    # F_1 + … + F_n − (n − 1) z = 1/G ([SW97]): F_1 = 1/G + (n − 1) z − Σ_{i≥2} Y_i with
    # Φ_i(Y_i, z) = 0, the Y_i eliminated one by one
    n = len(law.laws)
    ys = sp.symbols(f"y2:{n + 1}", cls=sp.Dummy)
    first = _polynomial(_expr(_f_equation(law.laws[0])).subs(
        _F, 1 / G + (n - 1) * z - sp.Add(*ys)))
    steps = [(_expr(_f_equation(other)).subs(_F, y), y) for other, y in zip(law.laws[1:], ys)]
    return _eliminate(first, steps, (G, z))


@raw_cauchy_equation.register
def _(law: MonotoneAdd):
    # G_{μ▷ν}(z) = G_μ(F_ν(z)) ([MUR01]): P_μ(G, Y) = 0 with Φ_ν(Y, z) = 0, Y eliminated
    first = _expr(_operand_equation(law.left)).subs(z, _Y)
    return _eliminate(first, [(_expr(_f_equation(law.right)).subs(_F, _Y), _Y)], (G, z))


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


@register("cauchy_equation")
def cauchy_equation(law: Law) -> sp.Poly:
    r"""The irreducible algebraic Cauchy equation ``P(G, z)`` of ``law``.

    ``P`` is a sympy ``Poly`` in ``(G, z)`` (:mod:`freeprob.core.symbols`) with exact or
    symbolic coefficients, square-free and irreducible over its coefficient field (the
    rationals or rational functions of the parameters, extended by the constants: ``e``,
    and algebraic numbers such as ``√2``), with ``P(G(z), z) = 0`` for
    ``G(z) = ∫ dμ(x)/(z − x)``.  It is determined up to a constant factor; here it is
    primitive over ℤ[parameters] with a leading coefficient that is not negative.

    Raises
    ------
    NotAvailable
        If the law has no algebraic equation the library can derive (the message
        says which component is the obstacle).

    Notes
    -----
    Every operation builds its eliminant from the irreducible equations of its operands,
    and every eliminant goes through the same reduction (:func:`_irreducible_equation`):
    FLINT factorization, the factors with a branch ``G ~ 1/z`` at infinity, the one the
    Cauchy series ``Σ m_n z^{−n−1}`` satisfies (checked exactly on more terms than a
    wrong factor could match, a resultant-degree bound), and with algebraic constants a
    proof of irreducibility over their extension (Trager's norm, [TRA76]_) or a
    factorization there.
    Elimination and factoring run in FLINT's multivariate integer polynomials, parameters
    and constants as extra variables (:mod:`freeprob.core.exactpoly`).
    """
    return _normalize(_irreducible_equation(raw_cauchy_equation(law), law))


def _select_by_series(candidates, law):
    """The candidate ``P(G, z)`` (Polys of degree ≥ 1 in G) that the Cauchy series of ``law``
    satisfies."""
    if len(candidates) == 1:
        return candidates[0]
    # A wrong irreducible factor f (degrees a_f, b_f) and the true one F (degrees ≤ A, B)
    # have a non-zero resultant of degree ≤ a_f B + b_f A in z, so f(G(z), z) cannot vanish
    # to more than b_f + a_f B + b_f A orders at infinity.
    degs = [(sp.degree(f, G), sp.degree(f, z)) for f in candidates]
    A, B = max(a for a, _ in degs), max(b for _, b in degs)
    order = max(b + a * B + b * A for a, b in degs) + 2
    candidates = sorted(candidates, key=lambda f: (sp.degree(f, G), sp.degree(f, z)))
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
                return survivors[0]
    for f in candidates:
        if _series_residual_is_zero(f, law, order):
            return f
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
