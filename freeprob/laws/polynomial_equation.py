r"""The algebraic Cauchy equation of a polynomial in free variables, by elimination.

For ``L = b_0 + Σ_j b_j ⊗ x_j`` (the linearization of ``p``, :mod:`freeprob.core.linearization`)
the M_k-valued Cauchy transform ``G = E[(Λ(z) − L)^{-1}]`` solves

.. math::  G = F^{-1},\qquad F = Λ(z) − b_0 − Σ_j R_j(G),\qquad
           R_j(G) = V_j\, ρ_j(M_j)\, Y_j V_j^*,\quad M_j = Y_j V_j^* G V_j

(``b_j = V_j Y_j V_j^*``, ``ρ_j`` the scalar R-transform of ``x_j`` applied to the
``r_j × r_j`` matrix ``M_j``; [MS17]_ ch. 9–10, [BMS17]_ §4).  When every ``x_j`` has an
algebraic Cauchy equation this is a polynomial system:

* a variable with an affine R-transform ``a + σ² w`` (semicircle, point mass):
  ``ρ_j(M) = a + σ² M``, no new unknown (the quadratic matrix equation of [HRS07]_);
* ``rank b_j = 1``: one unknown ``ρ_j`` with ``Q_j(ρ_j, M_j) = 0``, ``Q_j(R, w)`` the
  R-equation of ``x_j`` (:func:`freeprob.laws.algebraic.r_equation`);
* ``rank b_j = 2``: ``ρ_j(M) = α_j I + β_j M`` (Cayley–Hamilton), with the two equations
  ``Q_j(α_j + β_j μ, μ) ≡ 0 mod μ² − tr(M_j) μ + det M_j``;
* a larger rank with a non-affine R-transform: :class:`~freeprob.errors.NotAvailable`.

The unknowns are the entries ``g_{ab}`` of ``G`` the ``M_j`` read (``G`` is symmetric when the
coefficients are real) and ``g_{11}``, each with ``det(F) g_{ab} − adj(F)_{ab} = 0``; ``i``
becomes an unknown with ``ι² + 1 = 0``.  They are eliminated by FLINT resultants one at a
time; after each step the resultant is factored and a factor is dropped only when it does
not vanish on the exact series of the unknowns (:class:`~freeprob.core.opvalued.OVSeries`,
at a rational point of the parameters), so the true ``P(g_{11}, z)`` divides the result.
:func:`freeprob.laws.algebraic.cauchy_equation` then keeps its irreducible factor that the
moment series satisfies (a proven order).  A degree guard (:data:`MAX_DEGREE`) refuses
eliminations whose resultants would be too large, with the advice to use the numeric path.

Source: [HRS07]_, [BMS17]_ §4, [MS17]_ ch. 9–10, [RE08]_ (the polynomial method).
"""
from __future__ import annotations

import flint
import sympy as sp

from freeprob.core.coefficients import QQ, flint_precision
from freeprob.core.symbols import G, z
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.laws.algebraic import r_equation, raw_cauchy_equation
from freeprob.laws.polynomial import PolynomialLaw

__all__ = ["MAX_DEGREE", "SERIES_TERMS", "eliminate", "polynomial_system"]

#: largest total degree of a resultant the elimination attempts (a Bézout bound)
MAX_DEGREE = 90
#: terms of the series on which a factor must vanish to be kept
SERIES_TERMS = 40
_R = sp.Dummy("R")
_W = sp.Dummy("w")
_IOTA = sp.Symbol("iota_")
_NUMERIC = "; moments and cumulants are exact, and the M_k-valued numeric path needs no equation"


def _kind(law):
    """``("affine", a, s2)`` for ``R(w) = a + s2 w``, else ``("algebraic", Q(R, w))``."""
    Q = r_equation(law)
    R, w = Q.gens
    if Q.degree(R) == 1:
        c1, c0 = Q.as_expr().coeff(R, 1), Q.as_expr().coeff(R, 0)
        rw = sp.cancel(-c0 / c1)
        if rw.is_polynomial(w) and sp.degree(rw, w) <= 1:
            return ("affine", sp.expand(rw).coeff(w, 0), sp.expand(rw).coeff(w, 1))
    return ("algebraic", Q.as_expr().subs({R: _R, w: _W}, simultaneous=True))


def polynomial_system(law: PolynomialLaw):
    r"""The polynomial system of the module docstring for ``law``.

    Returns ``(equations, unknowns, series)``: sympy expressions (``= 0``) in the unknowns,
    :data:`~freeprob.core.symbols.G` (``g_{11}``), :data:`~freeprob.core.symbols.z` and the
    parameters; the unknowns other than ``G`` (to eliminate); ``series(point)`` → a dict
    unknown → exact series coefficients (``G`` included) at a rational parameter point.

    Raises
    ------
    NotAvailable
        A coefficient or parameter that is not rational, a symbol or ``I``; a variable
        without an algebraic equation; a rank ≥ 3 piece with a non-affine R-transform.
    """
    from freeprob.core.opvalued import OVSeries, cumulants_needed, factor_hermitian
    lin = law._lin()
    for c in law.parameters():
        c = sp.sympify(c)
        if (c.atoms(sp.NumberSymbol, sp.Function) or not all(a.is_Rational for a in c.atoms(sp.Number))
                or not all(a.exp.is_Integer for a in c.atoms(sp.Pow))):
            raise NotAvailable(f"polynomial_law: the exact equation needs rational or symbolic "
                               f"coefficients and parameters; got {c}{_NUMERIC}")
    k, real = lin.k, lin.is_real
    b0 = sp.Matrix(lin.b0)
    b0[0, 0] = 0                                    # the constant of p: a shift of z at the end
    g = {}

    def gsym(a, b):
        if real and a > b:
            a, b = b, a
        return g.setdefault((a, b), sp.Symbol(f"g_{a}_{b}") if (a, b) != (0, 0) else G)

    pieces = []
    for bj, (_, xlaw) in zip(lin.bs, law.variables):
        V, Y = factor_hermitian(bj)
        pieces.append((_kind(xlaw), V, Y, xlaw.moments(1)[1] != 0))
    zero = _structural_zeros(lin, pieces)
    Gm = sp.Matrix(k, k, lambda a, b: 0 if (a, b) in zero else gsym(a, b))
    F = sp.diag(z, *([0] * (k - 1))) - b0
    extra, extra_eqs, kinds = [], [], []
    for j, (kind, V, Y, _) in enumerate(pieces):
        M = Y * V.H * Gm * V
        kinds.append((kind, V, Y))
        r = V.cols
        if kind[0] == "affine":
            rho = kind[1] * sp.eye(r) + kind[2] * M
        elif r == 1:
            rho_s = sp.Symbol(f"rho_{j}")
            extra.append(rho_s)
            extra_eqs.append(kind[1].subs({_R: rho_s, _W: M[0, 0]}, simultaneous=True))
            rho = sp.Matrix([[rho_s]])
        elif r == 2:
            al, be, mu = sp.Symbol(f"alpha_{j}"), sp.Symbol(f"beta_{j}"), sp.Dummy("mu")
            extra += [al, be]
            rem = sp.rem(sp.expand(kind[1].subs({_R: al + be * mu, _W: mu}, simultaneous=True)),
                         mu**2 - M.trace() * mu + M.det(), mu)
            extra_eqs += [sp.expand(rem).coeff(mu, 1), sp.expand(rem).coeff(mu, 0)]
            rho = al * sp.eye(r) + be * M
        else:
            raise NotAvailable(f"polynomial_law: the variable {lin.names[j]!r} enters the linearization "
                               f"with rank {r} and its R-transform is not affine: no exact equation is "
                               f"derived{_NUMERIC}")
        F = F - V * rho * Y * V.H
    seen = F.free_symbols.union(*[sp.sympify(e).free_symbols for e in extra_eqs])
    used = sorted({s for s in seen if s in g.values()} | {G}, key=str)
    det = F.det(method="berkowitz")
    adj = F.adjugate(method="berkowitz")
    inv = {v: k_ for k_, v in g.items()}
    eqs = [sp.expand(det * s - adj[inv[s]]) for s in used] + [sp.expand(e) for e in extra_eqs]
    unknowns = [s for s in used if s != G] + extra
    if not real:
        eqs = [e.subs(sp.I, _IOTA) for e in eqs] + [_IOTA**2 + 1]
        unknowns.append(_IOTA)

    def series(point):
        """Exact series (Gaussian pairs when complex) of every unknown at ``point``."""
        special = law.subs(point) if point else law
        lsp = special._lin()
        order = SERIES_TERMS
        kap = [v._kappa(QQ, cumulants_needed(lsp, order) + 2) for _, v in special.variables]
        ov = OVSeries(lsp, kap, QQ, order)
        out = {s: [ov.entry(Gd, *inv[s]) for Gd in ov.G] for s in used}
        for j, (kind, V, Y) in enumerate(kinds):
            if kind[0] == "affine":
                continue
            if V.cols == 1:
                out[sp.Symbol(f"rho_{j}")] = [ov.entry(m, 0, 0) for m in ov.rho[j]]
            else:
                al, be = _alpha_beta(ov, j, kap[j])
                out[sp.Symbol(f"alpha_{j}")], out[sp.Symbol(f"beta_{j}")] = al, be
        return out

    return eqs, unknowns, series


def _bool_mul(A, B):
    return [[any(A[i][t] and B[t][j] for t in range(len(B))) for j in range(len(B[0]))]
            for i in range(len(A))]


def _bool_or(A, B):
    return [[a or b for a, b in zip(r, q)] for r, q in zip(A, B)]


def _structural_zeros(lin, pieces):
    r"""Entries of ``G`` that vanish identically: the complement of the least pattern ``P``
    (boolean, no cancellation) containing ``K + E_{11}`` and closed under
    ``P ↦ (K + E_{11}) Φ(P) P``, with ``Φ``'s pattern from ``V_j ρ_j(M_j) Y_j V_j^*``
    (``ρ_j``: ``I`` if ``κ_1 ≠ 0``, ``M`` for an affine law, all powers ``M^m, m ≥ 1``
    otherwise).  The Picard iterates from ``K`` stay inside ``P``, so the solution does
    ([MS17]_ ch. 9: the series is their limit).  Parity zeros (an odd polynomial of
    centred variables) are the typical case; left as unknowns they make the resultants
    vanish identically."""
    k = lin.k
    pat = lambda A: [[A[i, j] != 0 for j in range(A.cols)] for i in range(A.rows)]  # noqa: E731
    K = lin.K()
    base = pat(K)
    base[0][0] = True
    P = [row[:] for row in base]
    while True:
        Phi = [[False] * k for _ in range(k)]
        for kind, V, Y, mean in pieces:
            r = V.cols
            M = _bool_mul(_bool_mul(pat(Y * V.H), P), pat(V))
            rho = [[mean and i == j for j in range(r)] for i in range(r)]
            if kind[0] == "affine":
                if kind[2] != 0:
                    rho = _bool_or(rho, M)
            else:
                power = M
                for _ in range(r * r + 1):
                    rho = _bool_or(rho, power)
                    power = _bool_mul(power, M)
            Phi = _bool_or(Phi, _bool_mul(_bool_mul(pat(V), rho), pat(Y * V.H)))
        new = _bool_or(P, _bool_mul(_bool_mul(base, Phi), P))
        if new == P:
            return {(i, j) for i in range(k) for j in range(k) if not P[i][j]}
        P = new


def _alpha_beta(ov, j, kappa):
    """Series of ``α, β`` with ``ρ(M) = α I + β M`` for a 2 × 2 series ``M``: with
    ``h_0 = 1``, ``h_1 = t``, ``h_m = t h_{m−1} − d h_{m−2}`` (``t = tr M``, ``d = det M``),
    ``M^m = h_{m−1} M − d h_{m−2} I``, so ``β = Σ_{n≥2} κ_n h_{n−2}`` and
    ``α = κ_1 − d Σ_{n≥3} κ_n h_{n−3}``."""
    T = len(ov.M[j])
    e = ov.entry
    m = [[[e(Md, a, b) for Md in ov.M[j]] for b in range(2)] for a in range(2)]
    zero = ov.ar.zero
    mul = lambda p, q: [sum((p[i] * q[n - i] for i in range(n + 1)), zero) for n in range(T)]  # noqa: E731
    t = [x + y for x, y in zip(m[0][0], m[1][1])]
    d = [x - y for x, y in zip(mul(m[0][0], m[1][1]), mul(m[0][1], m[1][0]))]
    one = [ov.ar.one] + [zero] * (T - 1)
    h = [one, t]
    while len(h) < len(kappa) - 2:
        h.append([x - y for x, y in zip(mul(t, h[-1]), mul(d, h[-2]))])
    lift = ov.ar.lift
    beta = [zero] * T
    tail = [zero] * T
    for n in range(2, len(kappa)):
        if n - 2 < len(h):
            beta = [x + lift(kappa[n]) * y for x, y in zip(beta, h[n - 2])]
        if 3 <= n and n - 3 < len(h):
            tail = [x + lift(kappa[n]) * y for x, y in zip(tail, h[n - 3])]
    alpha = [x - y for x, y in zip([lift(kappa[1])] + [zero] * (T - 1), mul(d, tail))]
    return alpha, beta


class _Residual:
    """``f(series…, z = 1/w) · w^{deg_z f}`` modulo ``w^T`` for FLINT polynomials."""

    def __init__(self, variables, names, series, point, complex_):
        from freeprob.core.opvalued import Gaussian     # here, not at import: the law commands' startup
        self.names, self.complex = names, complex_
        self.T = min(len(v) for v in series.values())
        self.qctx = flint.fmpq_mpoly_ctx.get(names, "lex")
        self.subs = {names[i]: flint.fmpq(int(point[v].p), int(point[v].q))
                     for i, v in enumerate(variables) if v in point}
        self.zi = variables.index(z)
        self.series = {}
        for i, v in enumerate(variables):
            if v in series:
                self.series[i] = self._pair(series[v][:self.T])
            elif v == _IOTA:
                self.series[i] = self._pair([Gaussian(flint.fmpq(0), flint.fmpq(1))] + [0] * (self.T - 1))
        self._pow = {}

    def _pair(self, coeffs):
        from freeprob.core.opvalued import Gaussian
        if not self.complex:
            return (flint.fmpq_series([flint.fmpq(c) for c in coeffs]), None)
        return (flint.fmpq_series([c.re if isinstance(c, Gaussian) else c for c in coeffs]),
                flint.fmpq_series([c.im if isinstance(c, Gaussian) else 0 for c in coeffs]))

    def _mul(self, a, b):
        if not self.complex:
            return (a[0] * b[0], None)
        return (a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])

    def power(self, i, e):
        key = (i, e)
        if key not in self._pow:
            self._pow[key] = self.series[i] if e == 1 else self._mul(self.power(i, e - 1), self.series[i])
        return self._pow[key]

    def vanishes(self, f):
        with flint_precision(self.T):
            q = self.qctx.from_dict({m: int(c) for m, c in f.to_dict().items()})
            if self.subs:
                q = q.subs(self.subs)
            terms = q.to_dict()
            D = max(m[self.zi] for m in terms)
            zero = flint.fmpq_series([0])
            total = (zero, zero if self.complex else None)
            for m, c in terms.items():
                acc = (flint.fmpq_series([c]), zero if self.complex else None)
                acc = self._mul(acc, (flint.fmpq_series([0] * (D - m[self.zi]) + [1]),
                                      zero if self.complex else None))
                for i, e in enumerate(m):
                    if e and i != self.zi:
                        acc = self._mul(acc, self.power(i, e))
                total = (total[0] + acc[0], total[1] + acc[1] if self.complex else None)
            parts = [total[0]] + ([total[1]] if self.complex else [])
            return all(all(c == 0 for c in s.coeffs()[:self.T]) for s in parts)


def _point(law):
    """A rational point of the parameters where the law is valid (for the factor selection):
    generic values above 1, then their reciprocals (rates, probabilities in (0, 1))."""
    symbols = sorted(law.free_symbols, key=sp.default_sort_key)
    base = [(7, 3), (11, 5), (13, 7), (17, 4), (19, 6), (23, 9), (29, 8)] * 4
    for attempt in range(8):
        values = [sp.Rational(p + attempt // 2, q) for p, q in base]
        if attempt % 2:
            values = [1 / v for v in values]
        point = dict(zip(symbols, values))
        try:
            law.subs(point).moments(1)
            return point
        except FreeprobValueError:
            continue
    raise NotAvailable("polynomial_law: no rational parameter point found for the factor selection")


def eliminate(law: PolynomialLaw) -> sp.Poly:
    r"""``P(G, z)`` (possibly reducible) with ``P(G_p(z), z) = 0`` by the elimination of the
    module docstring.

    Raises
    ------
    NotAvailable
        As :func:`polynomial_system`; a resultant above :data:`MAX_DEGREE` (the message
        says to use the numeric path); a degenerate system.
    """
    from freeprob.core.exactpoly import flint_context, from_flint
    eqs, unknowns, series_of = polynomial_system(law)
    point = _point(law) if law.free_symbols else {}
    fd = flint_context(eqs, tuple(unknowns) + (G, z))
    if fd is None:                                               # pragma: no cover - rational input
        raise NotAvailable(f"polynomial_law: FLINT cannot hold the system{_NUMERIC}")
    res = _Residual(fd.variables, fd.ctx.names(), series_of(point), point, not law._lin().is_real)
    names = fd.ctx.names()
    idx = {v: i for i, v in enumerate(fd.variables)}
    live = [idx[v] for v in unknowns]
    target = [idx[G]] + live

    def prune(f):
        out = fd.ctx.constant(1)
        kept = False
        for h, _ in f.factor()[1]:
            if not any(h.degrees()[i] for i in target):
                continue
            if res.vanishes(h):
                out, kept = out * h, True
        if not kept:                                            # pragma: no cover - a bug
            raise NotAvailable("polynomial_law: no factor of an eliminant vanishes on the series")
        return out

    polys = [prune(f) for f in fd.polys]
    while live:
        best = None
        for i in live:
            having = [f for f in polys if f.degrees()[i] > 0]
            if not having:
                continue
            piv = min(having, key=lambda f: (f.degrees()[i], f.total_degree(), len(f.to_dict())))
            cost = max(piv.total_degree() * f.total_degree() for f in having if f is not piv) if len(having) > 1 else 0
            if best is None or cost < best[0]:
                best = (cost, i, piv, having)
        if best is None:
            live = []
            break
        cost, i, piv, having = best
        if cost > MAX_DEGREE:
            raise NotAvailable(
                f"polynomial_law: eliminating the M_k-valued system needs resultants of total "
                f"degree up to {cost}, above freeprob.laws.polynomial_equation.MAX_DEGREE = "
                f"{MAX_DEGREE}: use the numeric path{_NUMERIC}")
        nxt = [f for f in polys if f.degrees()[i] == 0]
        for f in having:
            if f is piv:
                continue
            r = piv.resultant(f, names[i])
            if not r.is_zero():
                nxt.append(prune(r))
        polys, live = nxt, [j for j in live if j != i]
    finals = [f for f in polys if f.degrees()[idx[G]] > 0]
    if not finals:
        raise NotAvailable(f"polynomial_law: the elimination lost the unknown G (degenerate system){_NUMERIC}")
    best = min(finals, key=lambda f: (f.degrees()[idx[G]], f.total_degree()))
    if not res.vanishes(best):                                  # pragma: no cover - a bug
        raise NotAvailable("polynomial_law: the eliminant does not vanish on the moment series")
    P = from_flint(best, fd.variables, (G, z), fd.back)
    c0 = law.polynomial.constant()
    if c0 != 0:
        P = sp.Poly(P.as_expr().subs(z, z - c0), G, z)
    return P


@raw_cauchy_equation.register
def _(law: PolynomialLaw):
    from freeprob.core.linearization import Linearization
    if not isinstance(law._lin(), Linearization):       # pragma: no cover
        raise NotAvailable("polynomial_law: no linearization")
    return eliminate(law)
