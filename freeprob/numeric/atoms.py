"""Atoms of the law for :class:`freeprob.numeric.AlgebraicCauchy`.

The mixin :class:`_Atoms`: candidate locations (real roots of the leading coefficient of
``P`` in ``G``), candidate masses (exact roots of the lowest-order polynomial in
``H = (z − a)·G``, or numeric ones), the mass selected by continuing ``H`` towards the atom
(:meth:`_Atoms._pole_residue`), and the continuous part next to an atom
(:meth:`_Atoms._deflated`, a new instance of the host class on the deflated equation).
It relies on the exact data (:class:`~freeprob.numeric.exact._ExactData`) and on the
boundary values (:class:`~freeprob.numeric.boundary._BoundaryValues`) of the host class.
"""
from __future__ import annotations

import mpmath
import sympy as sp

from freeprob.numeric.balls import check_ball, shows_proven
from freeprob.numeric.roots import _num_real_polyroots, _num_real_roots
from freeprob.numeric.rootkernel import (
    _H,
    _bits,
    _check_dps,
    _Fail,
    _PoleKernel,
    _to_mpf,
)
from freeprob.numeric.exactroots import _sym_real_roots
from freeprob.core.exactpoly import factor_univariate
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z


class _Atoms:
    """Mixin of :class:`~freeprob.numeric.AlgebraicCauchy`: :meth:`atoms`, their masses,
    and the deflated law next to an atom."""

    @shows_proven
    def atoms(self, *, dps=15, ball=False):
        r"""Atoms ``(location, mass)`` of the law, ``mass = lim_{z→a} (z − a) G(z)``
        ([MS17]_ §3.1).

        Candidate locations are the real roots of the leading coefficient of ``P`` in
        ``G``; substituting ``G = H/(z − a)`` and keeping the lowest power of ``z − a``
        gives a polynomial whose roots are the candidate masses; the one matching
        ``iη G(a + iη)`` on the continued branch is kept when positive.

        Returns
        -------
        tuple of (location, mass)
            Exact sympy numbers when the coefficients of ``P`` are rational, else mpf at
            ``dps`` digits; sorted by location.  With ``ball=True``: pairs of python-flint
            ``arb`` balls containing the location and the mass (the masses must be exact;
            else :class:`NotAvailable`), radius ``≤ 10^{-dps}·|value|``.
        """
        dps = _check_dps(dps, "atoms")
        ball = check_ball(ball, "atoms")
        if ball:
            return self._ball_atoms(dps)
        if not self._rational:
            # exact locations and masses (e.g. in ℤ[e]) do not depend on dps: reuse them
            # rather than continuing G to each atom again at every precision
            for key, val in list(self._cache.items()):
                if isinstance(key, tuple) and len(key) == 2 and key[0] == "atoms" and \
                        all(isinstance(v, sp.Basic) for t in val for v in t):
                    return val
        return self._memo(("atoms", None if self._rational else dps), lambda: self._atoms(dps))

    @staticmethod
    def _check_known_atoms(known):
        """The ``known_atoms`` argument as a list of exact ``(location, mass)`` pairs."""
        if known is None:
            return []
        out = []
        try:
            pairs = [tuple(t) for t in known]
        except TypeError:
            raise FreeprobValueError(
                f"AlgebraicCauchy: `known_atoms` must be (location, mass) pairs; got {known!r}") from None
        for t in pairs:
            if len(t) != 2:
                raise FreeprobValueError(f"AlgebraicCauchy: `known_atoms`: not a (location, mass) pair: {t!r}")
            loc, m = (sp.sympify(v) for v in t)
            if not (loc.is_number and m.is_number) or loc.has(sp.Float) or m.has(sp.Float) \
                    or loc.is_real is False or not (m.is_real and 0 <= m <= 1):
                raise FreeprobValueError(
                    "AlgebraicCauchy: `known_atoms` needs exact real locations and exact masses "
                    f"in [0, 1]; got {t!r}")
            out.append((loc, m))
        return out

    def _known_mass(self, a, dps):
        """``(index, mass)`` of the handed atom at the candidate location ``a`` (exact or
        mpf), else ``None``."""
        for i, (loc, m) in enumerate(self._known):
            if isinstance(a, sp.Basic):
                if loc == a:
                    return i, m
                if abs(sp.N(loc - a, 30)) < sp.Float(10) ** -25 and sp.simplify(loc - a) == 0:
                    return i, m
            else:
                with mpmath.workprec(_bits(dps + 20)):
                    if abs(mpmath.mpf(_to_mpf(loc, mpmath.mp.prec)) - a) <= \
                            mpmath.mpf(10) ** (-dps - 10) * max(1, abs(a)):
                        return i, m
        return None

    def _check_known_used(self, used):
        """Every handed atom with positive mass sits at a candidate location."""
        for i, (loc, m) in enumerate(self._known):
            if m != 0 and i not in used:
                raise FreeprobValueError(
                    f"AlgebraicCauchy: the handed atom ({loc}, {m}) is inconsistent with the "
                    f"Cauchy equation: {loc} is not a real root of its leading coefficient in G")

    def _atoms_at_least(self, dps):
        """Atoms to at least ``dps`` digits: for irrational coefficients (atoms memoized per
        ``dps``, each costing a continuation) any already computed to ``dps`` or more."""
        if not self._rational:
            have = [k[1] for k in self._cache if isinstance(k, tuple) and len(k) == 2
                    and k[0] == "atoms" and isinstance(k[1], int) and k[1] >= dps]
            if have:
                return self._cache[("atoms", min(have))]
        return self.atoms(dps=dps)

    def _atoms(self, dps):
        lc = self._lc()
        if lc.degree() < 1:
            self._check_known_used(set())
            return ()
        dom = self._P.domain
        # over EX sympy does not factor (c·z⁶ stayed one factor, its atom at 0 was lost):
        # factor with the constants as FLINT variables
        factors = factor_univariate(lc, _z) if dom.is_EX else None
        if factors is not None:
            factors = [sp.Poly(f.as_expr(), _z, domain=dom) for f in factors]
        else:
            try:
                factors = [f for f, _ in lc.factor_list()[1]]
            except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
                factors = [lc.sqf_part()]
        # the coefficients of G^k as Polys in z, from the terms (not through the expression)
        by_k = {}
        for (k, j), c in self._P.as_dict(native=True).items():
            by_k.setdefault(k, {})[(j,)] = c
        rows = [sp.Poly.from_dict(by_k[k], _z, domain=dom) if k in by_k else sp.Poly(0, _z, domain=dom)
                for k in range(self._d + 1)]
        out = []
        used = set()
        for f in factors:
            if f.degree() < 1:
                continue
            nu = []
            is_z = f.as_dict(native=True) == {(1,): dom.one}      # the factor z: orders from the terms
            for r in rows:
                if r.is_zero:
                    nu.append(None)
                    continue
                if is_z:        # r = z^n b with b(0) ≠ 0, as repeated division by z would give
                    terms = r.as_dict(native=True)
                    n = min(j for (j,) in terms)
                    nu.append((n, sp.Poly.from_dict({(j - n,): c for (j,), c in terms.items()}, _z, domain=dom)))
                    continue
                n, b = 0, r
                while True:
                    q, rem = b.div(f)
                    if not rem.is_zero:
                        break
                    n, b = n + 1, q
                nu.append((n, b))
            orders = [None if v is None else v[0] + self._d - k for k, v in enumerate(nu)]
            mu = min(o for o in orders if o is not None)
            fprime = f.diff(_z)
            qexpr = sum(fprime.as_expr() ** nu[k][0] * nu[k][1].as_expr() * _H ** k
                        for k in range(self._d + 1) if orders[k] == mu)
            exact_roots = _sym_real_roots(f, "atoms")
            if exact_roots is None and f.degree() == 1:
                c1, c0 = f.all_coeffs()
                root = sp.simplify(-c0 / c1)
                exact_roots = [root] if root.is_real else []
            locs = exact_roots if exact_roots is not None else _num_real_roots(f, _bits(dps + 20))
            for a in locs:
                known = self._known_mass(a, dps)
                if known is not None:
                    used.add(known[0])
                    known = known[1]
                m = self._atom_mass(a, f, qexpr, dps, known)
                if m is not None:
                    out.append((a if self._rational else +a, m))
        self._check_known_used(used)
        return tuple(sorted(out, key=lambda t: float(sp.N(t[0], 20)) if isinstance(t[0], sp.Basic)
                            else float(t[0])))

    def _exact_mass_candidates(self, a, qexpr):
        """Exact candidate masses at an exact location ``a`` when the coefficients are
        irrational (e.g. ``e``): the linear factors in ``H`` of the mass polynomial over its
        coefficient domain (``ℤ[e]``) give them exactly; ``None`` if some factor is not
        linear or the location is not exact."""
        if not isinstance(a, sp.Basic):
            return None
        try:
            expr = sp.expand(qexpr.subs(_z, a))
            qa = sp.Poly(expr, _H)
            factors = qa.factor_list()[1]
            if any(g.degree() > 1 for g, _ in factors) and qa.domain.is_EX:
                # over EX sympy does not factor; with algebraic coefficients (e.g. an atom
                # at 3 + 2√2) the algebraic extension does (a double root is common: two
                # branches with the same residue)
                factors = sp.factor_list(expr, _H, extension=True)[1]
                factors = [(sp.Poly(g, _H), k) for g, k in factors]
        except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError,
                sp.polys.polyerrors.CoercionFailed):
            return None
        out = []
        for g, _ in factors:
            if g.degree() == 0:
                continue
            if g.degree() != 1:
                return None
            c1, c0 = g.all_coeffs()
            root = sp.simplify(-c0 / c1)
            if root != 0 and root.is_real is not False:
                out.append(root)
        return out

    def _pole_residue(self, a, prec, accept):
        """First ``accept(est)`` that is not ``None``, over estimates ``est`` of
        ``lim_{η→0} iη·G(a + iη)`` (the mass at ``a``) at heights
        ``η = 2^{-12}·max(1, |a|)·16^{-j}``, ``j = 0, …, 23`` (down to ``~10⁻³²``: a law with a
        continuous part of width ``10⁻¹⁷`` next to its atom, β = 10⁻⁹, needs it); raises
        :class:`PrecisionError` when none is accepted.

        The root followed from far up is ``H = (z − a)·G`` (:class:`_PoleKernel`), which
        stays bounded at a pole of ``G``.  It is continued twice, in mpmath at ``prec`` and
        at ``2·prec`` bits, and a height counts only where ``accept`` gives the same answer
        for both: the coefficients of ``P`` can cancel near ``a`` (two atoms ``10⁻⁹`` apart:
        coefficients ``~10⁹``), and a track in doubles then followed rounding noise that
        looked like a converged mass of 0."""
        tiers = []
        try:
            for p in (prec, 2 * prec):
                with mpmath.workprec(p):
                    x = mpmath.mpf(_to_mpf(a, p)) if isinstance(a, sp.Basic) else mpmath.mpf(a)
                    base = self._mkernel(p)
                    K = _PoleKernel(base, x)
                    Y, g, rho = self._start(base, x)
                    # the same branch, scaled: the roots of Q are (z − a)·(roots of P)
                    tiers.append([p, K, x, g * K.I * Y, rho * Y, K.log(Y)])
            eta0 = mpmath.mpf(2) ** -12 * max(1, abs(tiers[0][2]))
            for j in range(24):
                ests = []
                for st in tiers:
                    p, K, x, h, rho, t = st
                    with mpmath.workprec(p):
                        ty = K.log(eta0 / 16 ** j)
                        if ty < t:
                            _, h, rho = self._track(K, lambda u, K=K, x=x: x + K.I * K.exp(u), t, ty, h, rho,
                                                    h0=-1)
                            st[3:6] = [h, rho, ty]
                    ests.append(h)
                with mpmath.workprec(prec):
                    out = accept(mpmath.mpc(ests[0]))
                    if out is not None and accept(mpmath.mpc(ests[1])) == out:
                        return out
        except (_Fail, OverflowError, ZeroDivisionError, ValueError) as exc:
            raise PrecisionError(f"AlgebraicCauchy.atoms: cannot identify the mass at {a} ({exc})") from None
        raise PrecisionError(f"AlgebraicCauchy.atoms: cannot identify the mass at {a}")

    def _atom_mass(self, a, f, qexpr, dps, known=None):
        """The mass at the candidate location ``a`` (a real root of the factor ``f`` of the
        leading coefficient), or ``None``.  With ``known`` (a handed exact mass) the mass is
        checked against the candidates instead of being selected by continuing ``G``."""
        if known == 0:
            return None         # handed: no atom here (0 is always a candidate)
        prec = _bits(dps + 20)
        with mpmath.workprec(prec):
            an = mpmath.mpf(_to_mpf(a, prec)) if isinstance(a, sp.Basic) else a
            if self._rational and f.degree() == 1:
                qa = sp.Poly(qexpr.subs(_z, a), _H)
                cands = [r for r in _sym_real_roots(qa, "atoms") if r != 0]
            elif self._rational:
                res = sp.Poly(sp.resultant(f.as_expr(), qexpr, _z), _H)
                cands = [r for r in _sym_real_roots(res, "atoms") if r != 0]
            else:
                cands = self._exact_mass_candidates(a, qexpr)
                if cands is None:
                    qa = sp.Poly(qexpr, _H, _z)
                    cs = [sum(mpmath.mpf(_to_mpf(sp.sympify(c), prec)) * an ** j
                              for (j,), c in sp.Poly(qa.as_expr().coeff(_H, k), _z).terms())
                          if qa.as_expr().coeff(_H, k) != 0 else mpmath.mpf(0)
                          for k in range(sp.degree(qexpr, _H) + 1)]
                    try:
                        cands = [mpmath.mpf(r) for r in _num_real_polyroots(cs[::-1], prec, clusters=True)
                                 if r]
                    except mpmath.libmp.libhyper.NoConvergence as exc:
                        raise PrecisionError(
                            f"AlgebraicCauchy.atoms: the candidate masses at {a} could not be "
                            f"isolated ({exc})") from exc
            if known is not None:
                return self._verify_known(a, known, cands, prec)
            if not cands:
                return None
            cn = [mpmath.mpf(_to_mpf(c, prec)) if isinstance(c, sp.Basic) else c for c in cands]
            allc = cn + [mpmath.mpf(0)]
            gap = min([abs(u - v) for i, u in enumerate(allc) for v in allc[i + 1:]] + [mpmath.mpf(1)])

            def accept(est):
                best = min(range(len(allc)), key=lambda i: abs(allc[i] - est))
                if abs(allc[best] - est) > gap / 4:
                    return None
                return (best,)

            best, = self._pole_residue(a, prec, accept)
            if best == len(cn) or cn[best] <= 0:
                return None
            m = cands[best]
            if isinstance(m, sp.Basic):
                return m
            with mpmath.workdps(dps):
                return +m

    @staticmethod
    def _verify_known(a, known, cands, prec):
        """``known`` if it is one of the candidate masses ``cands`` (exact or mpf at ``prec``
        bits), else :class:`FreeprobValueError`."""
        kn = mpmath.mpf(_to_mpf(known, prec))
        for c in cands:
            if isinstance(c, sp.Basic):
                if c == known or (abs(mpmath.mpf(_to_mpf(c, prec)) - kn) <= mpmath.mpf(2) ** (20 - prec)
                                  and sp.simplify(c - known) == 0):
                    return known
            elif abs(c - kn) <= mpmath.mpf(2) ** (40 - prec) * max(1, abs(kn)):
                return known
        raise FreeprobValueError(
            f"AlgebraicCauchy: the handed atom ({a}, {known}) is inconsistent with the Cauchy "
            f"equation: its mass is none of the candidate masses {list(cands)} there")

    def _deflated(self, xe, mass):
        """The normalized continuous part ``(G − m/(z − a))/(1 − m)`` as an AlgebraicCauchy."""
        xe = xe.expr
        key = ("deflated", xe)
        if key not in self._cache:
            expr = self._P.as_expr().subs(_G, (1 - mass) * _G + mass / (_z - xe))
            num = sp.Poly(sp.expand(sp.numer(sp.together(expr))), _G, _z)
            # the numerator can keep factors (z − a) common to every coefficient in G
            # (sympy's EX domain does not cancel them: with √2 in the coefficients
            # P(G, a) then vanished identically at the atom); divide them out
            lin = sp.Poly(_z - xe, _G, _z)
            for _ in range(num.degree(_z)):
                at = [sp.expand(num.as_expr().coeff(_G, k).subs(_z, xe))
                      for k in range(num.degree(_G) + 1)]
                if any(c != 0 and sp.simplify(c) != 0 for c in at):
                    break
                num = num.div(lin)[0]
            # its atoms: none at a (m was all of the mass there), the others rescaled
            known = [(xe, sp.Integer(0))] + [
                (loc, m / (1 - mass)) for loc, m in self._known
                if m != 0 and not (loc == xe or sp.simplify(loc - xe) == 0)]
            self._cache[key] = type(self)(num, known_atoms=known)
        return self._cache[key]

    def _near_atom(self, xf):
        """``(location, mass)`` of an atom with exact mass in ``(0, 1)`` when it is the
        special point nearest to the float ``xf``, else ``None``.

        Next to an atom ``G ≈ m/(z − a)`` dominates, and where the leading coefficient has
        a multiple root at ``a`` other roots escape at the same rate, so that ``G`` is
        separated from them by ``O(1)`` only while the continuation steps change it by
        ``O(m/|z − a|)``: the continuous part ``(G − m/(z − a))/(1 − m)``
        (:meth:`_deflated`) has no pole there and is evaluated instead."""
        if self._lc().degree() < 1:
            return None
        _, j = self._nearest_special_gap(xf)
        if j is None:
            return None

        def fn():
            pts, pfl = self._special_points(), self._special_floats()
            out = {}
            for loc, m in self.atoms():
                if not (isinstance(m, sp.Basic) and isinstance(loc, sp.Basic) and 0 < m < 1):
                    continue
                lf = float(sp.N(loc, 20))
                i = min(range(len(pts)), key=lambda k: abs(pfl[k] - lf))
                if self._rational:
                    close = abs(sp.N(pts[i] - loc, 50)) < sp.Float(10) ** -40
                else:   # special points of irrational equations are mpf at 200 bits
                    with mpmath.workprec(200):
                        pv, lv = mpmath.mpmathify(pts[i]), mpmath.mpf(sp.N(loc, 60))
                        close = abs(pv - lv) <= mpmath.mpf(10) ** -40 * max(1, abs(lv))
                if close:
                    out[i] = (loc, m)
            return out
        return self._memo("atom_index", fn).get(j)

    def _outside_support(self, xe, dps):
        """``True`` when the special point ``xe`` lies strictly outside every support interval
        (then the absolutely continuous density is 0 there by definition, and the limit of
        ``G`` along a vertical path, which an atom at ``xe`` makes badly scaled, is not
        needed); ``False`` when it is on or inside one, or the support is not available."""
        try:
            ivs = self.support(dps=dps + 10)
        except (ArithmeticError, ValueError, NotAvailable):
            return False
        with mpmath.workdps(dps + 20):
            x = mpmath.mpf(sp.N(xe.expr, dps + 20)) if isinstance(xe.expr, sp.Basic) else mpmath.mpf(xe.xf)
            tol = mpmath.mpf(10) ** -(dps + 5) * (1 + abs(x))

            def val(e):
                if isinstance(e, sp.Basic):
                    return mpmath.mpf(sp.N(e, dps + 20)) if e.is_finite else (mpmath.inf if e > 0 else -mpmath.inf)
                return mpmath.mpf(e)
            return all(x < val(a) - tol or x > val(b) + tol for a, b in ivs)

    def _density_special(self, xe, dps):
        mass = sp.Integer(0)
        for loc, m in self.atoms(dps=dps):
            if isinstance(loc, sp.Basic) and sp.simplify(loc - xe.expr) == 0:
                mass = m
        if mass != 0:
            if not isinstance(mass, sp.Basic):
                raise NotAvailable("AlgebraicCauchy.density: the density at an atom needs "
                                   "rational coefficients (exact masses)")
            if mass == 1:
                return mpmath.mpf(0)
            inner = self._deflated(xe, mass).density(xe, dps=dps + 2)
            with mpmath.workdps(dps):
                return +(inner * mpmath.mpf(_to_mpf(1 - mass, _bits(dps + 10))))
        if self._outside_support(xe, dps):
            return mpmath.mpf(0)
        kind, r = self._limit_at_special(xe, dps)
        if kind == "inf":
            return mpmath.inf
        with mpmath.workdps(dps):
            return +abs(r.imag) / mpmath.pi
