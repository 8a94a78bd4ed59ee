r"""Exact polynomials with irrational constants, in FLINT's multivariate integer polynomials.

Cauchy equations have coefficients in ``ℚ``, in ``ℚ(t_1, …)`` (symbolic parameters) and
in extensions of these by constants: ``e`` and ``exp(r)`` (the GE constants), and
algebraic irrationals such as ``√2`` or ``3^{1/3}`` (a rate, a variance, a width ratio).
sympy computes over such coefficients in its ``EX`` domain, minutes where FLINT takes
milliseconds, and it does not factor over the algebraic extension there (a squared
spurious factor then survives).  This module gives every caller one way through FLINT:

* :func:`freeze_constants` makes each constant a polynomial variable: ``exp(1/L)`` (a
  transcendental number, so nothing is lost) and each algebraic atom ``a``, with its
  minimal polynomial ``m_a`` kept as a relation;
* :func:`flint_context` / :func:`from_flint` convert to and from ``fmpz_mpoly``;
* :func:`norm` takes the norm ``Res_a(f, m_a)`` ([TRA76]_), a polynomial over ℤ whose roots
  contain those of ``f`` at ``a``, used for square-free parts, root isolation and
  irreducibility over ``ℚ(a)``;
* :func:`norm_special_polynomials`, :func:`factor_univariate` and
  :func:`frozen_field_terms` serve :class:`~freeprob.numeric.AlgebraicCauchy` when
  sympy can hold the coefficients only in ``EX`` (``√2`` with ``e``: an attention law
  with an irrational width ratio took minutes there, and lost its atom).

Eliminations with ``a`` a free variable are exact: every rule of the polynomial method
is a polynomial identity in the parameters, so its eliminant at ``a`` annihilates the
Cauchy transform at ``a`` whenever it does not vanish there (its factors free of the
unknown are dropped, so it does not).  Only irreducibility can change at ``a``, which
:func:`norm` detects.

References: [TRA76]_ (the norm of a polynomial over ``ℚ(a)``); [BES40]_, [MOR53]_
(:mod:`freeprob.references`).
"""
from __future__ import annotations

import functools

import flint
import sympy as sp

from freeprob.core.symbols import ExpConstant

__all__ = ["freeze_constants", "flint_context", "from_flint", "norm", "is_algebraic_atom",
           "algebraic_relations", "norm_special_polynomials", "flint_discriminant", "factor_univariate",
           "frozen_field_terms", "mpoly_discriminant", "mpoly_resultant"]

_EXP_GEN = sp.Dummy("T")
_ERRORS = (sp.polys.polyerrors.PolynomialError, sp.polys.polyerrors.CoercionFailed)


def is_algebraic_atom(a) -> bool:
    """True for an irrational radical ``b^{p/q}`` of an algebraic number ``b`` (``sqrt(2)``,
    ``2**(1/3)``, ``sqrt(1 + sqrt(2))``) and an algebraic named constant (``GoldenRatio``)."""
    if isinstance(a, sp.NumberSymbol):
        return a.is_algebraic is True
    return (isinstance(a, sp.Pow) and a.exp.is_Rational and not a.exp.is_Integer
            and (a.base.is_Rational or (a.base.is_number and a.base.is_algebraic is True)))


def _is_algebraic_number(x) -> bool:
    """True for an irrational algebraic number (an atom or a combination of atoms)."""
    return is_algebraic_atom(x) or (isinstance(x, sp.Expr) and x.is_number and not x.is_Rational
                                    and x.is_algebraic is True)


def algebraic_relations(forward):
    """``[(symbol, minimal polynomial of the atom in symbol)]`` for the algebraic atoms of a
    replacement ``{atom: symbol}``."""
    return [(s, sp.minimal_polynomial(a, s)) for a, s in forward.items() if is_algebraic_atom(a)]


def _factor_rational(b):
    """``{prime: exponent}`` of a positive rational (negative exponents for the
    denominator)."""
    out = dict(sp.factorint(b.p))
    for q, e in sp.factorint(b.q).items():
        out[q] = out.get(q, 0) - e
    return out


def _freeze_algebraic(algs):
    r"""Variables for the algebraic atoms ``algs``, with the relations they satisfy.

    Independent variables for dependent numbers lose relations (``2^{1/3}`` and
    ``4^{1/3} = (2^{1/3})²`` as two variables: the norm then runs over a degree-9 product
    instead of the degree-3 field, factors spuriously, and factoring over the extension
    in sympy took minutes).  So:

    * radicals of positive rationals only: one variable ``a_p = p^{1/L_p}`` per prime
      ``p``, ``L_p`` the least common denominator of the exponents of ``p`` over all atoms,
      relation ``a_p^{L_p} = p``; each atom ``∏ p^{E_p}`` is a rational times a monomial in
      the ``a_p``.  These relations are independent: for real radicals of positive
      rationals, ``[ℚ(p_1^{1/L_1}, …) : ℚ] = ∏ L_i`` ([BES40]_; [MOR53]_);
    * otherwise (nested radicals such as ``sqrt(1 + sqrt(2))``, ``GoldenRatio``, negative
      radicands): one primitive element ``θ`` of the field they generate (sympy's
      :func:`~sympy.polys.numberfields.subfield.primitive_element`, an atom itself when
      one generates the others), each atom a polynomial in ``θ``, relation the minimal
      polynomial of ``θ``.

    Returns ``(forward, back, relations)``: ``{atom: expression in the variables}``,
    ``{variable: number}`` and ``[(variable, relation polynomial)]``.
    """
    algs = sorted(algs, key=sp.default_sort_key)
    if all(isinstance(a, sp.Pow) and a.base.is_Rational and a.base > 0 for a in algs):
        expo = {}
        facts = {}
        for a in algs:
            facts[a] = {p: e * a.exp for p, e in _factor_rational(a.base).items()}
            for p, E in facts[a].items():
                expo.setdefault(p, []).append(E)
        L = {p: sp.ilcm(1, *[E.q for E in Es]) for p, Es in expo.items()}
        gens = {p: sp.Dummy(f"a{p}") for p in sorted(L) if L[p] > 1}
        forward = {}
        for a in algs:
            coef, mono = sp.Integer(1), sp.Integer(1)
            for p, E in facts[a].items():
                k = int(E * L[p])
                f, m = divmod(k, L[p])
                coef *= sp.Integer(p) ** f
                if m:
                    mono *= gens[p] ** m
            forward[a] = coef * mono
        back = {g: sp.Integer(p) ** sp.Rational(1, L[p]) for p, g in gens.items()}
        relations = [(g, g ** L[p] - p) for p, g in gens.items()]
        return forward, back, relations
    theta = sp.Dummy("theta")
    if len(algs) == 1:
        return {algs[0]: theta}, {theta: algs[0]}, [(theta, sp.minimal_polynomial(algs[0], theta))]
    mp, cs = sp.primitive_element(algs, theta)
    value = sp.Add(*[c * a for c, a in zip(cs, algs)])
    th = sp.AlgebraicNumber(value)
    forward = {}
    for a in algs:
        rep = sp.to_number_field(a, th).rep
        coeffs = rep.to_list() if hasattr(rep, "to_list") else list(rep)
        forward[a] = sp.Add(*[sp.Rational(c) * theta ** i for i, c in
                              enumerate(reversed(coeffs))])
    return forward, {theta: value}, [(theta, mp.as_expr())]


def _plain(e):
    """A Poly over ℤ, ℚ or ℤ/ℚ[symbols]: no constants to freeze."""
    d = e.domain
    return d.is_ZZ or d.is_QQ or ((d.is_PolynomialRing or d.is_FractionField) and (
        d.domain.is_ZZ or d.domain.is_QQ) and all(g.is_Symbol for g in d.symbols))


def freeze_constants(exprs):
    """Replace the irrational constants of ``exprs`` (expressions or Polys) by variables.

    ``e = exp(1)`` and ``exp(r)`` (``r`` rational; sympy's ``exp`` or
    :class:`~freeprob.core.symbols.ExpConstant`) become powers of one variable ``T``
    standing for ``exp(g)``, ``g`` the greatest common divisor of the exponents (``49/100``
    for ``exp(49/100)`` alone, ``1/4`` for ``e`` and ``exp(1/4)``): ``exp(g)`` is
    transcendental (Lindemann), so ``ℚ(T) ≅ ℚ(exp(g))`` and nothing is lost.  The
    algebraic atoms (:func:`is_algebraic_atom`) become polynomials in variables that carry
    their relations (:func:`_freeze_algebraic`: dependent radicals share one); other named constants (``pi``) become free variables, as
    sympy's domains ``ℤ[pi]`` treat them.

    Returns
    -------
    (exprs, back, relations)
        The new expressions, the back substitution ``{variable: constant}`` (``None`` if
        nothing was replaced) and ``[(variable, minimal polynomial)]``.
    """
    exps, algs, others = set(), set(), set()
    for e in exprs:
        if isinstance(e, sp.Poly) and _plain(e):
            continue
        e = e.as_expr() if isinstance(e, sp.Poly) else e
        if e.has(sp.E):
            exps.add(sp.Integer(1))
        exps.update(a.args[0] for a in e.atoms(sp.exp, ExpConstant) if a.args[0].is_Rational)
        algs.update(a for a in e.atoms(sp.Pow) if is_algebraic_atom(a))
        algs.update(a for a in e.atoms(sp.NumberSymbol) if is_algebraic_atom(a))
        others.update(a for a in e.atoms(sp.NumberSymbol) if a is not sp.E and not is_algebraic_atom(a))
    if not exps and not algs and not others:
        return exprs, None, []
    forward, back = {}, {}
    if exps:
        g = abs(functools.reduce(sp.gcd, sorted(exps)))        # exp(r) = T^(r/g), T = exp(g)
        forward = {sp.exp(r): _EXP_GEN ** (r / g) for r in exps}
        forward.update({ExpConstant(r): _EXP_GEN ** (r / g) for r in exps if r != 1})
        if 1 in exps:
            forward[sp.E] = _EXP_GEN ** (1 / g)
        # one generator back (ExpConstant: sympy would fold exp(1/4)**2 into exp(1/2))
        back[_EXP_GEN] = ExpConstant(g)
    named = {a: sp.Dummy(f"c{i}") for i, a in enumerate(sorted(others, key=sp.default_sort_key))}
    forward.update(named)
    back.update({s: a for a, s in named.items()})
    relations = []
    if algs:
        alg_forward, alg_back, relations = _freeze_algebraic(algs)
        forward.update(alg_forward)
        back.update(alg_back)
    out = [e if isinstance(e, sp.Poly) and _plain(e) else
           (e.as_expr() if isinstance(e, sp.Poly) else e).xreplace(forward) for e in exprs]
    return out, back, relations


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
    if isinstance(expr, sp.Poly):
        direct = _poly_to_rational(expr, variables)
        if direct is not None:
            return direct
        expr = expr.as_expr()
    try:
        return sp.Poly(expr, *variables, domain=sp.QQ)
    except _ERRORS:
        pass
    try:
        return sp.Poly(sp.fraction(sp.together(expr))[0], *variables, domain=sp.QQ)
    except _ERRORS:
        return None


class FlintData:
    """Result of :func:`flint_context`: ``ctx``, ``variables`` (sympy), ``polys``
    (``fmpz_mpoly``), ``back`` (undoes :func:`freeze_constants`) and ``relations``
    ``[(variable name in ctx, minimal polynomial as fmpz_mpoly)]``."""

    __slots__ = ("ctx", "variables", "polys", "back", "relations")

    def __init__(self, ctx, variables, polys, back, relations):
        self.ctx, self.variables, self.polys = ctx, variables, polys
        self.back, self.relations = back, relations

    def name(self, v):
        """The FLINT name of the sympy variable ``v``."""
        return self.ctx.names()[self.variables.index(v)]


def flint_context(exprs, gens):
    """``exprs`` (expressions or Polys) as ``fmpz_mpoly`` in ``gens`` followed by their
    parameters (free symbols) and frozen constants (:func:`freeze_constants`), lex order.

    Each polynomial is the numerator of its expression, scaled to integer coefficients
    (the zero set in ``gens`` is unchanged).  Returns a :class:`FlintData`, or ``None``
    when a coefficient is neither rational in these variables (e.g. ``log(8)``, ``pi``,
    ``sqrt(t)``) nor non-zero.
    """
    exprs = [e if isinstance(e, sp.Poly) else sp.sympify(e) for e in exprs]
    direct = _direct_context(exprs, gens)
    if direct is not None:
        return direct
    exprs, back, relations = freeze_constants(exprs)
    params = sorted(set().union(*[e.free_symbols for e in exprs]) - set(gens),
                    key=sp.default_sort_key)
    variables = tuple(gens) + tuple(params)
    polys = [_rational_poly(e, variables) for e in exprs]
    if any(p is None or p.is_zero for p in polys):
        return None
    ctx = flint.fmpz_mpoly_ctx.get(tuple(f"v{i}" for i in range(len(variables))), "lex")

    def to_flint(poly):
        terms = poly.terms()
        den = sp.ilcm(1, *[c.q for _, c in terms])     # 1: a single term is allowed
        return ctx.from_dict({m: int(c * den) for m, c in terms})

    rel = []
    for s, m in relations:
        if s in variables:
            rel.append((ctx.names()[variables.index(s)],
                        to_flint(sp.Poly(m, *variables, domain=sp.QQ))))
    return FlintData(ctx, variables, [to_flint(p) for p in polys], back, rel)


def _exp_exponent(c):
    """``r`` for the constant ``e^r`` (``E`` or :class:`ExpConstant`), else ``None``."""
    if c is sp.E:
        return sp.Integer(1)
    if isinstance(c, ExpConstant) and c.args[0].is_Rational:
        return c.args[0]
    return None


def _direct_context(exprs, gens):
    """:func:`flint_context` for Polys in (a subset of) ``gens`` over ℤ, ℚ or ℤ/ℚ[…] whose
    ring generators are symbols (parameters) and constants ``e^r`` only: the same
    :class:`FlintData` (the constants frozen to powers of ``T`` as by
    :func:`freeze_constants`, the same variable order, the same integer polynomials), built
    from the Polys' terms instead of through sympy expressions (which took most of the
    time of an attention law's Cauchy equation); ``None`` for anything else."""
    exps, params = set(), set()
    for e in exprs:
        if not isinstance(e, sp.Poly) or not set(e.gens) <= set(gens):
            return None
        d = e.domain
        if d.is_ZZ or d.is_QQ:
            continue
        if not (d.is_PolynomialRing and (d.domain.is_ZZ or d.domain.is_QQ)):
            return None
        for c in d.symbols:
            r = _exp_exponent(c)
            if r is not None:
                exps.add(r)
            elif isinstance(c, sp.Symbol) and c not in gens:
                params.add(c)
            else:
                return None
    back, power = None, {}
    if exps:
        g = abs(functools.reduce(sp.gcd, sorted(exps)))
        back = {_EXP_GEN: ExpConstant(g)}
        power = {r: r / g for r in exps}
        if any(not v.is_Integer for v in power.values()):     # (cannot happen: g divides r)
            return None
        params.add(_EXP_GEN)
    variables = tuple(gens) + tuple(sorted(params, key=sp.default_sort_key))
    index = {v: i for i, v in enumerate(variables)}
    ctx = flint.fmpz_mpoly_ctx.get(tuple(f"v{i}" for i in range(len(variables))), "lex")
    polys = []
    for e in exprs:
        gi = [index[g] for g in e.gens]
        d = e.domain
        terms = {}
        if d.is_ZZ or d.is_QQ:
            for m, c in e.rep.to_dict().items():
                key = [0] * len(variables)
                for i, k in zip(gi, m):
                    key[i] = k
                terms[tuple(key)] = d.to_sympy(c)
        else:
            slots = []
            for c in d.symbols:
                r = _exp_exponent(c)
                slots.append((index[_EXP_GEN], int(power[r])) if r is not None else (index[c], 1))
            for m, cpoly in e.rep.to_dict().items():
                for pm, pc in cpoly.items():
                    key = [0] * len(variables)
                    for i, k in zip(gi, m):
                        key[i] = k
                    for (i, mult), k in zip(slots, pm):
                        key[i] += mult * k
                    key = tuple(key)
                    terms[key] = terms.get(key, 0) + d.domain.to_sympy(pc)
        terms = {k: sp.Rational(v) for k, v in terms.items() if v != 0}
        if not terms:
            return None
        den = sp.ilcm(1, *[c.q for c in terms.values()])
        polys.append(ctx.from_dict({k: int(c * den) for k, c in terms.items()}))
    return FlintData(ctx, variables, polys, back, [])


def _content_removed(f, gi):
    """The ``fmpz_mpoly`` ``f`` divided by its content as a polynomial in the variables at
    the indices ``gi``, with coefficients in ℤ[the others]: FLINT's gcd of those
    coefficients (leading coefficient > 0 in lex order, as sympy normalises the content
    of ``Poly.primitive``: the same quotient), instead of sympy's ``primitive`` on the
    Poly (its gcds over ℤ[e], row by row, were half the time of an attention law's Cauchy
    equation, issue 27).  Source: this project's design."""
    if f.is_zero():
        return f
    ctx, keep = f.context(), set(gi)
    groups = {}
    for m, c in f.to_dict().items():
        groups.setdefault(tuple(m[i] for i in gi), {})[
            tuple(0 if i in keep else k for i, k in enumerate(m))] = c
    cont = ctx.constant(0)
    for d in groups.values():
        cont = cont.gcd(ctx.from_dict(d))
        if cont == 1:
            return f
    return f / cont


def from_flint(f, variables, gens, back=None):
    """The sympy ``Poly`` in ``gens`` (content removed) of an ``fmpz_mpoly`` over ``variables``.

    Variables other than ``gens`` that still occur become the coefficient domain ℤ[...];
    eliminated variables (degree 0 everywhere) are dropped; ``back`` substitutes the
    frozen constants back (algebraic atoms are then reduced by sympy: ``sqrt(2)**2 = 2``).
    """
    return _from_flint(f, variables, gens, back)[0]


def _from_flint(f, variables, gens, back=None):
    """:func:`from_flint` and whether the Poly is primitive (its content over ℤ[...] is 1;
    ``False`` when algebraic constants were substituted back, which sympy then reduces)."""
    gi = [variables.index(g) for g in gens]
    f = _content_removed(f, gi)
    terms = {m: int(c) for m, c in f.to_dict().items()}
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
    # (primitive already: _content_removed; sympy's primitive() of it returns it unchanged)
    if back and used and all(variables[i] in back and not _is_algebraic_number(back[variables[i]])
                             for i in used):
        # only transcendental constants left: the same Poly over ℤ[constants], built
        # directly (the expression route costs a second per large polynomial)
        dom = sp.ZZ[tuple(back[variables[i]] for i in used)]
        poly = sp.Poly.from_dict({k: dom.ring.from_dict(v) for k, v in grouped.items()},
                                 *gens, domain=dom)
    elif back:
        return sp.Poly(poly.as_expr().xreplace(back), *gens), False
    return poly, True


def _at_last(f, x, sub):
    """The ``fmpz_mpoly`` ``f`` with its last variable set to the integer ``x``, in ``sub``
    (the context of the other variables)."""
    out = {}
    for m, c in f.to_dict().items():
        k = m[:-1]
        out[k] = out.get(k, 0) + int(c) * x ** m[-1]
    return sub.from_dict({k: v for k, v in out.items() if v})


def _interpolate_last(points, values, ctx):
    """The ``fmpz_mpoly`` in ``ctx`` whose last variable takes ``points[i]`` (distinct
    integers) with the value ``values[i]`` (in the context of the other variables), of
    degree ``< len(points)`` in it; ``None`` if the interpolant is not integral."""
    monos = sorted({m for v in values for m in v.to_dict()})
    if not monos:
        return ctx.from_dict({})
    col = {m: i for i, m in enumerate(monos)}
    k = len(points)
    Y = flint.fmpq_mat(k, len(monos))
    for j, v in enumerate(values):
        for m, c in v.to_dict().items():
            Y[j, col[m]] = c
    V = flint.fmpq_mat([[flint.fmpq(x) ** i for i in range(k)] for x in points])
    A = V.solve(Y)
    out = {}
    for m, i in col.items():
        for p in range(k):
            c = A[p, i]
            if c != 0:
                if c.q != 1:
                    return None
                out[m + (p,)] = int(c.p)
    return ctx.from_dict(out)


def _specialised(op, polys, var, keep, bound):
    """``op(*polys)`` for ``fmpz_mpoly`` polynomials in one context, with the variables after
    the first ``keep`` set to integers and interpolated back (evaluation–interpolation).

    ``op`` is a resultant-like operation in the variable at index ``var < keep`` that
    commutes with setting a variable to a number as long as every polynomial keeps its
    degree in ``var``; ``bound(polys, j)`` bounds the degree of the result in variable
    ``j``.  Exact: each of ``bound + 1`` integer points where the degrees are kept gives
    the result there, and the interpolant of degree ``≤ bound`` is the result.  FLINT's
    multivariate resultants grow fast with the number of variables (the discriminant of
    a degree-15 Cauchy equation over ℤ[e]: 4.3 s; with ``e`` set to 28 integers and
    interpolated: 0.4 s)."""
    ctx = polys[0].context()
    n = ctx.nvars()
    if not 0 <= var < keep:
        raise ValueError("_specialised: the variable of the operation must be among the kept ones")
    if n <= keep:
        return op(*polys)
    sub = flint.fmpz_mpoly_ctx.get(ctx.names()[:-1], "lex")
    if not any(p.degrees()[-1] for p in polys):
        res = _specialised(op, [_at_last(p, 0, sub) for p in polys], var, keep, bound)
        return None if res is None else ctx.from_dict({m + (0,): c for m, c in res.to_dict().items()})
    top = bound(polys, n - 1)
    degs = [p.degrees()[var] for p in polys]
    points, values, x = [], [], 0
    while len(points) <= top:
        at = [_at_last(p, x, sub) for p in polys]
        if all(not q.is_zero() and q.degrees()[var] == d for q, d in zip(at, degs)):
            res = _specialised(op, at, var, keep, bound)
            if res is None:
                return None
            points.append(x)
            values.append(res)
        x = -x if x > 0 else 1 - x          # 0, 1, −1, 2, −2, …
    return _interpolate_last(points, values, ctx)


def mpoly_discriminant(f, var=0, keep=2):
    """The discriminant of the ``fmpz_mpoly`` ``f`` in its variable ``var``, computed with
    the variables from index ``keep`` on (parameters, frozen constants such as ``e``) set
    to integers and interpolated (:func:`_specialised`): the same polynomial as FLINT's
    ``f.discriminant``, several times faster when such variables occur.  The degree in a
    variable ``c`` is at most ``(2d − 1)·deg_c f − deg_c lc`` (``d = deg_var f``: the
    Sylvester determinant ``Res(f, ∂f)``, of degree ``≤ (d − 1)·deg_c f + d·deg_c ∂f``, is
    ``± lc·disc``, and degrees add in a product).  Source: the
    evaluation–interpolation method for resultants (e.g. Collins 1971)."""
    name = f.context().names()[var]

    def bound(polys, j):
        g = polys[0]
        d = g.degrees()[var]
        lc = max(m[j] for m in g.to_dict() if m[var] == d)
        return (2 * d - 1) * g.degrees()[j] - lc
    out = _specialised(lambda p: p.discriminant(p.context().names()[var]), [f], var, keep, bound)
    return f.discriminant(name) if out is None else out


def mpoly_resultant(f, g, var, keep):
    """The resultant in the variable at index ``var`` of two ``fmpz_mpoly`` of one context,
    computed as :func:`mpoly_discriminant` (variables from ``keep`` on set to integers and
    interpolated; degree bound ``deg_var(g)·deg_c f + deg_var(f)·deg_c g``): the same
    polynomial as ``f.resultant(g, name)``.  Source: evaluation–interpolation (Collins 1971)."""
    name = f.context().names()[var]

    def bound(polys, j):
        a, b = polys
        return b.degrees()[var] * a.degrees()[j] + a.degrees()[var] * b.degrees()[j]
    out = _specialised(lambda a, b: a.resultant(b, a.context().names()[var]), [f, g], var, keep, bound)
    return f.resultant(g, name) if out is None else out


def norm(f, relations):
    """``Res_a(f, m_a)`` successively for every relation ``(a, m_a)`` that ``f`` involves:
    a polynomial free of the algebraic variables whose zero set contains that of ``f`` at
    every root of the ``m_a`` (Trager's norm, [TRA76]_)."""
    names = f.context().names()
    for name, m in relations:
        if f.degrees()[names.index(name)] > 0:
            f = f.resultant(m, name)
    return f


def norm_special_polynomials(P, G, z):
    """For a ``Poly`` ``P(G, z)`` with number coefficients (``√2``, ``e``): the square-free
    parts of the norms (:func:`norm`) of its discriminant in ``G``, and of that times its
    leading coefficient in ``G``, as ``Poly`` in ``z`` over ℤ or ℤ[e] (only transcendental
    constants left); ``None`` if FLINT cannot hold the coefficients.

    Their real roots contain every point where branches of ``P = 0`` collide or escape
    (and those of the conjugate equations, harmless extra break points); over ℤ[e] the
    square-free part is exact, so numeric root isolation is reliable.
    """
    fd = flint_context([P], (G, z))
    if fd is None:
        return None
    f = fd.polys[0]
    ctx = fd.ctx
    d = f.degrees()[0]
    disc = norm(mpoly_discriminant(f) if d > 1 else ctx.constant(1), fd.relations)
    lc = norm(ctx.from_dict({(0,) + m[1:]: c for m, c in f.to_dict().items() if m[0] == d}),
              fd.relations)

    def sqf(p):
        out = ctx.constant(1)
        for g, _ in p.factor_squarefree()[1]:
            if g.degrees()[1] > 0:
                out = out * g
        return from_flint(out, fd.variables, (z,), fd.back)

    return sqf(disc), sqf(disc * lc)


def flint_discriminant(P, G, z):
    """The discriminant in ``G`` of a ``Poly`` ``P(G, z)`` with number coefficients
    (``√2``), computed in FLINT with the constants as variables (a polynomial identity in
    the coefficients, so exact once they are substituted back), as a ``Poly`` in ``z``
    (up to a non-zero constant factor); ``None`` if FLINT cannot hold the coefficients.
    sympy's own discriminant over ``ℚ(√2)[z]`` took seconds to minutes."""
    fd = flint_context([P], (G, z))
    if fd is None or fd.polys[0].degrees()[0] < 2:
        return None
    return from_flint(mpoly_discriminant(fd.polys[0]), fd.variables, (z,), fd.back)


def factor_univariate(poly, gen):
    """The distinct factors of positive degree of a univariate ``Poly`` with number
    coefficients (``√2``, ``e``), factored with the constants as FLINT variables, as sympy
    Polys in ``gen``; ``None`` if FLINT cannot hold the coefficients."""
    fd = flint_context([poly], (gen,))
    if fd is None:
        return None
    return [from_flint(g, fd.variables, (gen,), fd.back)
            for g, _ in fd.polys[0].factor()[1] if g.degrees()[0] > 0]


class _Fraction:
    """``num / d^e`` in a :class:`_LazyField`: numerator reduced modulo the minimal
    polynomials, one fixed denominator ``d`` (no gcds: sympy's fraction fields spent
    seconds in them for a 12-term series)."""

    __slots__ = ("F", "num", "e")

    def __init__(self, F, num, e=0):
        self.F, self.num, self.e = F, num, e

    def _lift(self, e):
        return self.num * self.F.den_power(e - self.e)

    def __add__(self, other):
        if isinstance(other, int):
            other = self.F(other)
        e = max(self.e, other.e)
        return _Fraction(self.F, self.F.reduce(self._lift(e) + other._lift(e)), e)

    __radd__ = __add__

    def __neg__(self):
        return _Fraction(self.F, -self.num, self.e)

    def __sub__(self, other):
        return self + (-other)

    def __mul__(self, other):
        if isinstance(other, int):
            return _Fraction(self.F, self.num * other, self.e)
        return _Fraction(self.F, self.F.reduce(self.num * other.num), self.e + other.e)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if other.e != 0:
            raise ZeroDivisionError("_LazyField: only its fixed denominator divides")
        self.F.set_den(other.num)
        return _Fraction(self.F, self.num, self.e + 1)


class _LazyField:
    """Exact arithmetic in ``ℚ[constants]/(minimal polynomials)`` localized at one
    denominator ``d`` (the only divisor of the series recurrence at infinity)."""

    def __init__(self, R, mins, back):
        self.R, self.mins, self.back = R, mins, back
        self.den, self._pows = None, None
        self.zero, self.one = self(0), self(1)

    def __call__(self, value):
        return _Fraction(self, self.R.ring(value) if isinstance(value, int) else value)

    def reduce(self, num):
        for m in self.mins:
            num = num.rem(m)
        return num

    def set_den(self, d):
        if self.den is None:
            if not self.reduce(d):
                raise ZeroDivisionError("_LazyField: division by zero")
            self.den, self._pows = d, [self.R.ring(1)]
        elif d != self.den:
            raise ZeroDivisionError("_LazyField: only its fixed denominator divides")

    def den_power(self, k):
        if k == 0:
            return self.R.ring(1)
        while len(self._pows) <= k:
            self._pows.append(self.reduce(self._pows[-1] * self.den))
        return self._pows[k]

    def to_sympy(self, a):
        num = self.R.to_sympy(a.num)
        den = self.R.to_sympy(self.reduce(self.den_power(a.e))) if a.e else 1
        return (num / den).xreplace(self.back)


def frozen_field_terms(P, G, z):
    """``P(G, z)`` with number coefficients (``√2`` with ``e``) as polynomials in its frozen
    constants (:func:`freeze_constants`) modulo their minimal polynomials, for fast exact
    arithmetic where sympy's ``EX`` recomputes a ``cancel`` at every product.

    Returns ``(K, terms, to_sympy)``: ``K`` has ``zero``, ``one`` and elements with ``+``,
    ``−``, ``*`` and division by one fixed non-zero element (``num / d^e``, no gcds);
    ``terms`` maps ``(k, j)`` to the coefficient of ``G^k z^j`` (``P`` up to a non-zero
    constant factor); ``to_sympy`` maps an element back to a sympy number.  ``None`` if
    FLINT cannot hold the coefficients.
    """
    fd = flint_context([P], (G, z))
    if fd is None:
        return None
    consts = fd.variables[2:]
    R = sp.QQ[consts] if consts else sp.QQ[sp.Dummy()]
    grouped = {}
    for m, c in fd.polys[0].to_dict().items():
        key = m[2:] if consts else (0,)
        grouped.setdefault((int(m[0]), int(m[1])), {})[tuple(map(int, key))] = R.domain(int(c))
    mins = [R.ring.from_dict({m[2:]: R.domain(int(c)) for m, c in f.to_dict().items()})
            for _, f in fd.relations]
    K = _LazyField(R, mins, fd.back or {})
    terms = {kj: K(K.reduce(R.ring.from_dict(d))) for kj, d in grouped.items()}
    return K, terms, K.to_sympy


# -- the fast path for Polys over ℤ or ℤ[c_1, …] (no constants to freeze), used by the
# numeric layer's discriminants and square-free parts (one home of sympy ↔ FLINT).
# The constants of a domain ℤ[c_1, …] (``E``, ``exp(1/2)``, …) are indeterminates for sympy's
# polynomial ring; as extra variables of an ``fmpz_mpoly`` they are treated the same way, so
# the discriminant and the square-free part below are exactly sympy's (same normalization),
# computed by FLINT instead of sympy's dense subresultants over ℤ[c] (seconds per law).
def _flint_domain_ok(dom):
    return dom.is_ZZ or (dom.is_PolynomialRing and dom.domain.is_ZZ)


def _to_flint(poly):
    """``(ctx, f, ngens)``: ``poly`` (a Poly over ℤ or ℤ[c_1, …]) as an ``fmpz_mpoly`` in its
    generators followed by the constants ``c_i`` (lex order), or ``None``."""
    dom = poly.domain
    if not _flint_domain_ok(dom):
        return None
    ng = len(poly.gens)
    ns = 0 if dom.is_ZZ else len(dom.symbols)
    ctx = flint.fmpz_mpoly_ctx.get(tuple(f"v{i}" for i in range(ng + ns)), "lex")
    d = {}
    for m, c in poly.rep.to_dict().items():
        if ns:
            for em, ec in c.items():
                d[tuple(m) + tuple(em)] = int(ec)
        else:
            d[tuple(m)] = int(c)
    return ctx, ctx.from_dict(d), ng


def _from_flint_univariate(f, idx, ng, gen, dom):
    """The ``fmpz_mpoly`` ``f`` (of :func:`_to_flint`, free of every generator but the one at
    ``idx``) as a sympy Poly in ``gen`` over ``dom``."""
    out = {}
    for m, c in f.to_dict().items():
        if any(m[i] for i in range(ng) if i != idx):
            raise ValueError("not univariate")
        if dom.is_ZZ:
            out[(m[idx],)] = out.get((m[idx],), 0) + int(c)
        else:
            out.setdefault((m[idx],), {})[tuple(m[ng:])] = dom.domain(int(c))
    if not dom.is_ZZ:
        out = {k: dom.ring.from_dict(v) for k, v in out.items()}
    if not out:
        return sp.Poly(0, gen, domain=dom)
    return sp.Poly.from_dict(out, gen, domain=dom)


def _flint_sqf_part(f, idx, ng):
    """Square-free part of the ``fmpz_mpoly`` ``f`` in the generator at ``idx`` (the only
    generator it involves), normalized as sympy's ``Poly.sqf_part`` over ℤ[c]: primitive
    over ℤ[c] (factors free of the generator dropped) with a leading coefficient whose
    leading term is positive."""
    ctx = f.context()
    _, parts = f.factor()
    out = ctx.constant(1)
    for g, _ in parts:
        if g.degrees()[idx] > 0:
            out = out * g
    # the leading term in the lex order (generator first, then c_1, …) carries the sign
    terms = out.to_dict()
    lead = max(terms, key=lambda m: (m[idx],) + tuple(m[ng:]))
    if int(terms[lead]) < 0:
        out = -out
    return out
