r"""Ball enclosures (python-flint ``arb``/``acb``) for :class:`~freeprob.numeric.AlgebraicCauchy`.

With ``ball=True`` the public methods ``cauchy``, ``density`` (and density grids),
``support``, ``atoms``, ``cdf`` and ``quantile`` return balls that provably contain the
true value and whose radius meets the requested digits: ``rad ≤ 10^{-dps}·|mid|`` (for a
complex value: each part's radius ``≤ 10^{-dps}·|value|``; an exact ``0`` has radius 0).
The midpoint of each ball is the plain (``ball=False``) result, so the two paths agree by
construction.  When a ball cannot be made that narrow, :class:`PrecisionError` says which
width was reached.

What is proven, and what is not
-------------------------------
* **Which root.** The branch is selected as in the plain path (continuation from
  ``G ~ 1/z`` at infinity, :mod:`freeprob.numeric.cauchy`); that selection is numerical.
  Everything after it is proven.
* **The root.** Krawczyk's test ([RUM10]_ §8) on a box ``B`` about the polished root ``c`` of
  ``f(g) = P(g, t)``, for every ``t`` in a parameter ball ``T``:
  ``K = c − Y·f(c) + (1 − Y·f'(B))·(B − c) ⊂ int B`` (``Y ≈ 1/f'(c)``) proves that each
  ``f(·, t)`` has exactly one root in ``B``, and that it lies in ``K``.  The coefficients of
  ``P`` are enclosed in ``arb`` (rationals exactly; ``e``, ``π``, ``exp``, radicals,
  ``CRootOf`` by python-flint).  A box centred on the real axis that passes the test holds a
  *real* root (its conjugate is a root in the same box, and there is only one): this proves
  a density ``0`` outside the support and the realness of support edges.
* **Edges and atoms.** Exact sympy edges/locations/masses are enclosed directly;
  numerical edges (irrational coefficients) are certified as real roots of the square-free
  special polynomial (discriminant × leading coefficient) by the same test.
* **cdf.** By Cauchy's theorem in the upper half-plane, where ``G`` is analytic,
  ``F(x) = −(1/π)·Im ∫_γ G(w) dw`` along ``γ: a' → a' + iH → x + iH → x`` (``a'`` left of
  every special point and atom, so that ``F(a') = 0``; atoms on the way are included).
  python-flint's rigorous integration (``acb.integral``: Gauss–Legendre with error bounds
  from enclosures of the integrand on ellipses around each subinterval [JOH18]_) takes
  as integrand on a complex ball the Krawczyk enclosure of the root over that ball
  (:func:`~freeprob.numeric.balls.krawczyk_taylor`); where it fails the integrator
  subdivides.  The path keeps away from the complex roots of the discriminant.  An atom
  at ``x`` is split off (``F = m + (1 − m)·F_c``, the deflated law); at a support edge the
  value of the adjacent gap is used.
* **Quantile.** ``Q(p)`` is enclosed by two certified values of the cdf bracketing ``p``.

References: [MS17]_ §2.1 (Stieltjes inversion); [RUM10]_ §8 (Krawczyk's operator);
[NEU90]_ §2.3 (centred forms); [JOH17]_ (arb); [JOH18]_ (rigorous integration)
(:mod:`freeprob.references`).
"""
from __future__ import annotations

import cmath
import math

import flint
import mpmath
import sympy as sp

from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z
from freeprob.errors import NotAvailable, PrecisionError
from freeprob.numeric.balls import (  # noqa: F401  (re-exported: the public ball helpers)
    _arb_point,
    _prec,
    _width,
    acb_around,
    ball_around,
    enclose,
    exact_arb,
    krawczyk,
    krawczyk_taylor,
    meets,
)
from freeprob.numeric.rootkernel import (
    GUARD_DPS,
    MAX_GUARD_DPS,
    _bits,
    _complex_point,
    _CPt,
    _Fail,
    _fixed_mpc,
    _is_nonreal_input,
    _Pt,
    _real_point,
)

__all__ = ["enclose", "exact_arb", "meets", "ball_around", "krawczyk", "krawczyk_taylor"]

arb, acb = flint.arb, flint.acb


# ---------------------------------------------------------------------------------------
# the mixin
# ---------------------------------------------------------------------------------------
class _Enclosures:
    """Mixin of :class:`~freeprob.numeric.AlgebraicCauchy`: the ``ball=True`` results."""

    # -- coefficients -------------------------------------------------------------------
    def _arb_rows(self, prec):
        def fn():
            with _prec(prec):
                return [[enclose(c, prec) for c in row] for row in self._rows]
        return self._memo(("arbrows", prec), fn)

    def _shifted(self, m, prec):
        """``[P_0, P_1, …]`` with ``P(g, m + δ) = Σ_i δ^i P_i(g)`` (coefficient lists in ``g``)
        at the exact point ``m``: Taylor shifts of the rows of ``P`` (python-flint
        ``acb_poly`` composition with ``m + x``)."""
        shift = flint.acb_poly([m, 1])
        rows = [flint.acb_poly(list(r))(shift) for r in self._arb_rows(prec)]
        n = max(r.degree() for r in rows) + 1
        coef = [[r[i] if i <= r.degree() else acb(0) for r in rows] for i in range(max(n, 1))]
        return [c if any(v != 0 for v in c) or i == 0 else c for i, c in enumerate(coef)]

    def _acb_coeffs(self, t, prec):
        """The coefficients ``A_k(t)`` of ``P(·, t)`` for the acb (point or ball) ``t``
        (ball Horner: python-flint ``acb_poly`` evaluation of each row, memoized per
        precision)."""
        polys = self._memo(("acbpolyrows", prec),
                           lambda: [flint.acb_poly([acb(c) for c in row]) for row in self._arb_rows(prec)])
        return [p(t) for p in polys]

    def _point_ball(self, pt, prec):
        """acb of the exact real point ``pt`` (:class:`_Pt`)."""
        return acb(enclose(pt, prec))

    def _root_ball(self, t, g0, dps, who, check):
        """Certified enclosure of the root of ``P(·, t)`` next to ``g0`` (mpc/mpf), at rising
        precision until ``check(K)`` holds.  ``t``: a callable ``prec -> acb``."""
        reached = None
        for extra in (10, 2 * GUARD_DPS, 4 * GUARD_DPS, 2 * MAX_GUARD_DPS):
            prec = _bits(dps + extra)
            with _prec(prec):
                A = self._acb_coeffs(t(prec), prec)
                if isinstance(g0, acb):
                    c = acb(g0.real.mid()) if g0.imag == 0 else acb(g0.mid())
                elif isinstance(g0, mpmath.mpf):
                    c = acb(exact_arb(g0))
                else:
                    c = acb(exact_arb(g0.real), exact_arb(g0.imag))
                K = krawczyk(A, c)
                if K is not None:
                    reached = K
                    if check(K):
                        return K
                    g0 = K
        raise PrecisionError(
            f"AlgebraicCauchy.{who}: the enclosure of the root could not be made narrow enough for "
            f"{dps} digits (relative width reached: {_width(reached) if reached is not None else 'none'})")

    # -- density and Cauchy transform --------------------------------------------------
    def _ball_density_value(self, xe, dps, found):
        """Ball of the density at the non-special exact point ``xe`` from the selected root
        ``found = (kind, fixed, prec)`` of the plain path."""
        kind, v, _ = found
        if kind == "real":
            with mpmath.workprec(_bits(dps + 20)):
                g0 = mpmath.mpf(_fixed_mpc(v).real)
            self._root_ball(lambda p: self._point_ball(xe, p), g0, dps, "density",
                            lambda K: True)
            return arb(0)
        with mpmath.workprec(_bits(dps + 20)):
            g0 = _fixed_mpc(v)
        pi_holder = {}

        def check(K):
            if not K.imag < 0:
                return False
            d = -K.imag / arb.pi()
            pi_holder["d"] = d
            return meets(d, dps + 1)
        self._root_ball(lambda p: self._point_ball(xe, p), g0, dps, "density", check)
        return pi_holder["d"]

    def _ball_cauchy(self, z, dps):
        """Ball (acb, or arb for real z) of ``G(z)``; midpoint = the plain value."""
        plain = self.cauchy(z, dps=dps)
        zz = z if isinstance(z, _CPt | _Pt | complex | mpmath.mpc | mpmath.mpf | float) else sp.sympify(z)
        if _is_nonreal_input(zz):
            re_pt, im_pt = _complex_point(zz, "cauchy")
        else:
            re_pt, im_pt = _real_point(zz, "cauchy", "z"), _Pt(0)
        if im_pt.num == 0 and self._is_special(re_pt):
            raise NotAvailable("AlgebraicCauchy.cauchy(ball=True): a real z at a support edge or an "
                               "atom is not supported; pass a non-real z")

        def tball(prec):
            return acb(enclose(re_pt, prec), enclose(im_pt, prec))
        g0 = mpmath.mpc(plain) if im_pt.num != 0 else mpmath.mpf(plain)
        if self._near_atom(re_pt.xf) is not None:
            # G = m/(z − a) + (1 − m)·G_c: the same sum in balls
            loc, mass = self._near_atom(re_pt.xf)
            inner = self._deflated(_real_point(loc, "cauchy"), mass)
            gc = inner._ball_cauchy(z, dps + 10)
            with _prec(_bits(dps + 20)):
                val = enclose(mass, _bits(dps + 20)) / (tball(_bits(dps + 20)) - enclose(_real_point(loc, "c"), _bits(dps + 20))) \
                    + enclose(1 - mass, _bits(dps + 20)) * gc
            if im_pt.num == 0:                  # real z off the support: a real value
                with _prec(_bits(dps + 20)):
                    out = ball_around(plain, val.real if isinstance(val, acb) else val)
                if not meets(out, dps):
                    raise PrecisionError(f"AlgebraicCauchy.cauchy: the enclosure reached relative "
                                         f"width {_width(out)}, not 10^-{dps}")
                return out
            out = acb_around(plain, val)
        else:
            def check(K):
                return meets(K, dps + 1)
            K = self._root_ball(tball, g0, dps, "cauchy", check)
            if im_pt.num == 0:
                with _prec(_bits(dps + 20)):
                    return ball_around(plain, K.real)
            with _prec(_bits(dps + 20)):
                out = acb_around(plain, K)
        if not meets(out, dps):
            raise PrecisionError(f"AlgebraicCauchy.cauchy: the enclosure reached relative width "
                                 f"{_width(out)}, not 10^-{dps}")
        return out

    def _ball_special_density(self, xe, dps, plain):
        """Ball of the density at a special point (edge, collision): the limit value ``r``
        of the plain path is a root of the exact ``P(·, x₀)``; its square-free part is
        enclosed, the root is certified by Krawczyk (real: density exactly 0)."""
        if plain == mpmath.inf:
            return arb("inf")
        mass = sp.Integer(0)
        for loc, m in self.atoms(dps=dps):
            if isinstance(loc, sp.Basic) and sp.simplify(loc - xe.expr) == 0:
                mass = m
        if mass != 0:           # an atom: the continuous part, as in the plain path
            if mass == 1:
                return arb(0)
            prec = _bits(dps + 10)
            inner = self._deflated(xe, mass)._density_exact_point(xe, dps + 2, ball=True)
            with _prec(prec):
                b = inner * enclose(1 - mass, prec)
                out = ball_around(plain, b)
            if b.is_exact() and b == 0 and plain == 0:
                return arb(0)
            if not meets(out, dps):
                raise PrecisionError(f"AlgebraicCauchy.density: the enclosure at the atom {xe} reached "
                                     f"relative width {_width(out)}, not 10^-{dps}")
            return out
        kind, r = self._limit_at_special(xe, dps)
        if r is None:
            raise NotAvailable(f"AlgebraicCauchy.density(ball=True): no limit value at {xe}")
        with sp.evaluate(True):
            px = sp.Poly(self._P.as_expr().subs(_z, xe.expr), _G)
        try:
            px = px.sqf_part()
        except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
            pass
        coeffs = [sp.sympify(c) for c in px.all_coeffs()[::-1]]
        out = None
        for extra in (10, 2 * GUARD_DPS, 4 * GUARD_DPS):
            prec = _bits(dps + extra)
            with _prec(prec):
                A = [acb(enclose(c, prec)) for c in coeffs]
                real = plain == 0
                c0 = acb(exact_arb(r.real)) if real else acb(exact_arb(r.real), exact_arb(r.imag))
                K = krawczyk(A, c0)
                if K is None:
                    continue
                if real:
                    return arb(0)
                d = abs(K.imag) / arb.pi()
                out = ball_around(plain, d)
                if meets(out, dps):
                    return out
        raise PrecisionError(
            f"AlgebraicCauchy.density: no enclosure at the special point {xe} to {dps} digits"
            + (f" (relative width reached: {_width(out)})" if out is not None else ""))

    # -- support and atoms ----------------------------------------------------------------
    def _edge_ball(self, e, dps):
        """Ball of a support edge or atom location ``e`` (exact sympy or an mpf)."""
        prec = _bits(dps + 10)
        if isinstance(e, sp.Basic):
            if e in (sp.oo, -sp.oo):
                return arb("inf") if e > 0 else arb("-inf")
            b = enclose(e, prec)
            if not meets(b, dps):
                b = enclose(e, _bits(2 * dps + 40))
            return b
        if not mpmath.isfinite(e):
            return arb("inf") if e > 0 else arb("-inf")
        S = self._special_poly()
        coeffs = [sp.sympify(c) for c in S.all_coeffs()[::-1]]
        for extra in (10, 2 * GUARD_DPS, 4 * GUARD_DPS):
            prec = _bits(dps + extra)
            with _prec(prec):
                A = [acb(enclose(c, prec)) for c in coeffs]
                K = krawczyk(A, acb(exact_arb(e)))
                if K is not None:
                    out = ball_around(e, K.real)
                    if meets(out, dps):
                        return out
        raise PrecisionError(f"AlgebraicCauchy.support: the edge {mpmath.nstr(e, 15)} could not be "
                             f"certified as a real root of the special polynomial to {dps} digits")

    def _ball_support(self, dps):
        """Balls of the support edges.  The decision of each gap between consecutive
        special points (the plain path's test points) is re-made with ball densities,
        each exactly 0 or certified > 0; the intervals must come out the same."""
        sup = self.support(dps=dps)
        _, _, tests = self._support_tests()
        carrying = []
        for i, j, xm in tests:
            d = self._density_exact_point(_real_point(xm, "support"), 15, ball=True)
            if d.is_exact() and d == 0:
                carrying.append(False)
            elif d > 0:
                carrying.append(True)
            else:
                raise PrecisionError("AlgebraicCauchy.support: the density at the test point "
                                     f"{xm} is neither certified 0 nor certified positive ({d})")
        # the plain intervals merge adjacent carrying gaps: count the runs
        runs = sum(1 for k, c in enumerate(carrying) if c and (k == 0 or not carrying[k - 1]))
        if runs != len(sup):
            raise PrecisionError(f"AlgebraicCauchy.support: the ball densities give {runs} intervals, "
                                 f"the plain path {len(sup)}")
        return tuple((self._edge_ball(a, dps), self._edge_ball(b, dps)) for a, b in sup)

    def _ball_atoms(self, dps):
        """Balls of the atom locations and masses (the masses must be exact numbers)."""
        out = []
        for loc, m in self.atoms(dps=dps):
            if not isinstance(m, sp.Basic):
                raise NotAvailable(f"AlgebraicCauchy.atoms(ball=True): the mass at {loc} is known only "
                                   "numerically (no exact candidate); no enclosure")
            out.append((self._edge_ball(loc, dps), self._edge_ball(m, dps)))
        return tuple(out)

    # -- cdf and quantile ----------------------------------------------------------------
    def _ball_cdf(self, xe, dps):
        """Ball of ``F(x)``; midpoint = the plain value."""
        plain = self.cdf(xe, dps=dps)
        total = self._cdf_enclosure(xe, dps, scale=plain)
        with _prec(_bits(dps + 20)):
            out = ball_around(plain, total)
        if not meets(out, dps):
            raise PrecisionError(
                f"AlgebraicCauchy.cdf: the enclosure of F({xe}) reached relative width {_width(out)}"
                f" around the plain value {mpmath.nstr(plain, 8)}, not 10^-{dps}")
        return out

    def _cdf_enclosure(self, xe, dps, scale=None):
        r"""Enclosure of ``F(x)`` by Cauchy's theorem in the upper half-plane:
        ``F(x) = −(1/π)·Im ∫_γ G(w) dw`` along ``γ: a' → a' + iH → x + iH → x`` (``a'`` left
        of every special point and atom, so ``F(a') = 0``; ``G`` is analytic in the open
        upper half-plane and the legs reach the axis only at ``a'`` and ``x``).  The atoms on
        the way are counted by the same integral; an atom at ``x`` itself is split off with
        the deflated law, ``F(x) = m + (1 − m)·F_c(x)``; at a support edge ``x`` the value is
        the one in the adjacent gap (no mass in between)."""
        prec = _bits(dps + 12)
        sup = self.support(dps=dps + GUARD_DPS)
        for a, b in sup:
            for e in (a, b):
                if (isinstance(e, sp.Basic) and e.is_infinite) or \
                        (not isinstance(e, sp.Basic) and not mpmath.isfinite(e)):
                    raise NotAvailable("AlgebraicCauchy.cdf(ball=True): unbounded support is not supported")
        exact = self._cdf_exact(xe, sup, dps, prec)
        if exact is not None:
            return exact
        near = self._near_atom(xe.xf)
        if near is not None:
            loc, mass = near
            with _prec(prec):
                lb = self._edge_ball(loc, dps + 5)
                x = enclose(xe, prec)
                if lb < x or lb > x:
                    below = lb < x
                else:
                    below = bool(sp.simplify(sp.sympify(loc) - xe.expr) <= 0)
                inner = self._deflated(_real_point(loc, "cdf"), mass)
                Fc = inner._cdf_enclosure(xe, dps + 2)
                return (enclose(mass, prec) if below else arb(0)) + enclose(1 - mass, prec) * Fc
        pts = self._special_floats()
        ats = self.atoms(dps=dps + GUARD_DPS)
        locs = [float(sp.N(loc, 20)) if isinstance(loc, sp.Basic) else float(loc) for loc, _ in ats]
        allp = sorted(pts + locs)
        if not allp or xe.xf < allp[0] - 1e-9 * (1 + abs(allp[0])):
            if not allp or not self._is_special(xe):
                return arb(0)
        if self._is_special(xe):
            # an edge: F is constant across the adjacent gap; move x into it
            i = min(range(len(pts)), key=lambda k: abs(pts[k] - xe.xf))
            left = pts[i - 1] if i > 0 else pts[i] - 2 * (1 + abs(pts[i]))
            right = pts[i + 1] if i + 1 < len(pts) else pts[i] + 2 * (1 + abs(pts[i]))
            for other in ((left + pts[i]) / 2, (pts[i] + right) / 2):
                op = _real_point(sp.Rational(other), "cdf")
                if self._density_exact_point(op, 15, ball=True) == 0 and not any(
                        min(other, pts[i]) <= v <= max(other, pts[i]) for v in locs):
                    return self._cdf_enclosure(op, dps)
            raise NotAvailable(f"AlgebraicCauchy.cdf(ball=True): x = {xe} is a special point (an "
                               "atom with a numeric mass, or a singular point inside the support) "
                               "where no enclosure is available (the plain cdf is available); pass a "
                               "point at least 1e-11 (relative) away from it")
        gap = min(abs(v - xe.xf) for v in allp)
        if gap <= 1e-11 * (1 + abs(xe.xf)):
            raise NotAvailable(
                f"AlgebraicCauchy.cdf(ball=True): x = {xe} lies within 1e-11 (relative) of a support "
                "edge, atom or singular point, where the enclosure cannot be made narrow (the plain cdf is "
                "available); pass a point at least 1e-11 (relative) away, or an edge of a gap itself")
        lo, H = self._contour(allp, xe.xf)
        with _prec(prec):
            x = enclose(xe, prec)
            slack = arb(0)
            if not x.is_exact():
                # end at the (dyadic) midpoint; F changes by at most rad·max density between
                M = self._root_bound(self._acb_coeffs(acb(x), prec))
                if M is None:
                    raise NotAvailable(f"AlgebraicCauchy.cdf(ball=True): x = {xe} is too close to an atom")
                slack = arb(0, (M * x.rad() / arb.pi()).upper())
                x = arb(x.mid())
            a0, a1 = acb(lo), acb(lo, H)
            b1, b0 = acb(x, H), acb(x)
            tol = arb(2) ** (-_bits(dps + 3))
            if scale is not None and 0 < scale < 1:     # a small F (left tail): relative digits
                tol = tol * exact_arb(mpmath.mpf(scale))
            total = acb(0)
            for u, v in ((a0, a1), (a1, b1), (b1, b0)):
                r = acb.integral(self._contour_integrand(prec), u, v, abs_tol=tol, rel_tol=tol,
                                 eval_limit=30_000)
                if not r.is_finite():
                    raise PrecisionError("AlgebraicCauchy.cdf: the rigorous quadrature did not converge")
                total += r
            return -total.imag / arb.pi() + slack

    def _cdf_exact(self, xe, sup, dps, prec):
        """``F(x)`` as an exact ball where the structure gives it, else ``None``: a law
        without continuous part (``F = Σ_{a ≤ x} m_a``), and ``x`` in a gap with every support
        interval on one side of it (``F = Σ_{a ≤ x} m_a``, plus ``1 − Σ m_a`` when the
        intervals lie to the left).  Needs exact masses and decidable comparisons."""
        ats = self.atoms(dps=dps + GUARD_DPS)
        if not all(isinstance(m, sp.Basic) for _, m in ats):
            return None
        with _prec(prec):
            x = enclose(xe, prec)
            left = right = 0
            for a, b in sup:
                ab, bb = self._edge_ball(a, dps + 5), self._edge_ball(b, dps + 5)
                if bb < x or (bb.is_exact() and x.is_exact() and bb == x):
                    left += 1
                elif ab > x or (ab.is_exact() and x.is_exact() and ab == x):
                    right += 1
                else:
                    return None         # x inside an interval, or undecided
            if left and right:
                return None
            total = arb(0)
            for loc, m in ats:
                lb = self._edge_ball(loc, dps + 5)
                if lb < x:
                    total += enclose(m, prec)
                elif not lb > x:
                    if not isinstance(loc, sp.Basic):
                        return None
                    if sp.simplify(loc - xe.expr) <= 0:
                        total += enclose(m, prec)
            if left:
                total += 1 - sum((enclose(m, prec) for _, m in ats), arb(0))
            return total

    def _contour(self, allp, xf):
        """``(a', H)`` (dyadic) for the path ``a' → a' + iH → x + iH → x``: ``a'`` left of the
        real points ``allp``, chosen with ``H`` among dyadic candidates to keep the path
        farthest from the non-real roots of the discriminant and of the leading coefficient
        (where the selected root can meet another one and the enclosures fail)."""
        _, nonreal = self._singular_points()
        sing = [complex(c) for c in nonreal]
        span = max(1.0, allp[-1] - allp[0])
        top = 2.0 ** math.ceil(math.log2(span))
        base = math.floor(allp[0]) - 1

        def seg_dist(s, p, q):
            d = q - p
            t = max(0.0, min(1.0, ((s - p) * d.conjugate()).real / abs(d) ** 2))
            return abs(s - (p + t * d))

        best = None
        for k in range(0, 12):
            for H in (top * 2.0 ** -k, top * 0.75 * 2.0 ** -k):
                for shift in (0, 0.5, 1, 1.5, 2.5):
                    a = base - shift * span / 4
                    path = [complex(a, 0), complex(a, H), complex(xf, H), complex(xf, 0)]
                    clear = min([seg_dist(c, path[i], path[i + 1]) for c in sing for i in range(3)]
                                + [math.inf])
                    score = min(clear, H)
                    if best is None or score > best[0] * 1.5:
                        best = (score, a, H)
        _, a, H = best
        a = math.floor(a * 1024) / 1024
        return a, H

    def _contour_integrand(self, prec):
        """``f(w, analytic)`` for ``acb.integral``: the Krawczyk enclosure of the selected
        root over the ball ``w`` (closed upper half-plane and its continuation across the
        axis), or a non-finite ball (the integrator then subdivides).  At a node
        (``analytic`` false: a point ball) the test runs first on the coefficients
        ``A_k(w)`` enclosed over ``w`` (:meth:`_acb_coeffs`: proves the root for every
        ``t ∈ w`` without the Taylor shift to the midpoint of ``w``); on the integrator's
        ellipse balls, and where that fails, on the Taylor form
        (:func:`~freeprob.numeric.balls.krawczyk_taylor`)."""
        def f(w, analytic):
            g0 = self._approx_root(w.mid())
            if g0 is not None:
                if not analytic:
                    # a quadrature node (a point ball): Krawczyk's test on the coefficients
                    # enclosed over it (exact for every t in w, no Taylor shift needed)
                    K = krawczyk(self._acb_coeffs(w, prec), g0)
                    if K is not None:
                        return K
                m = acb(w.mid())
                Pi = self._shifted(m, prec)
                K = krawczyk(Pi[0], g0)
                if K is not None:
                    K = krawczyk_taylor(Pi, w - m, K)
                    if K is not None:
                        return K
            if analytic:
                return acb("nan")
            M = self._root_bound(self._acb_coeffs(w, prec))
            if M is None:
                return acb("nan")
            return acb(arb(0, M), arb(0, M))
        return f

    def _approx_root(self, w):
        """The selected root at the exact acb point ``w`` (``Im w ≥ 0``) as an acb in doubles
        (boundary value on the axis), or ``None``."""
        re, im = w.real, w.imag
        if im == 0:
            g = self._approx_boundary_root(re)
            if g is None:
                return None
            return acb(exact_arb(g)) if isinstance(g, mpmath.mpf) else \
                acb(exact_arb(g.real), exact_arb(g.imag))
        if im < 0:
            return None
        import bisect
        key = (float(re), float(im))
        keys, vals = self._cache.setdefault("ballc", ([], {}))
        hit = vals.get(key)
        if hit is None:
            K = self._fkernel()
            w1 = complex(*key)
            i = bisect.bisect_left(keys, key)
            for j in (i - 1, i):
                if 0 <= j < len(keys):
                    w0 = complex(*keys[j])
                    g0, rho0 = vals[keys[j]]
                    try:
                        _, g, rho = self._track(K, lambda t, w0=w0: w0 + t * (w1 - w0), 0.0, 1.0, g0, rho0)
                        if cmath.isfinite(g) and g.imag < 0:
                            hit = (g, rho)
                            break
                    except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                        pass
            if hit is None:
                got = self._cauchy_track_float(_arb_point(re), _arb_point(im))
                if got is None:
                    return None
                hit = got
            if len(keys) < 200_000:
                bisect.insort(keys, key)
                vals[key] = hit
        return acb(hit[0])

    @staticmethod
    def _root_bound(A):
        """Cauchy's bound ``1 + max_k |A_k/A_d|`` on every root of ``Σ A_k g^k`` (balls), or
        ``None`` if the leading coefficient may vanish."""
        lead = A[-1]
        if lead.contains(0):
            return None
        M = arb(1)
        la = abs(lead)
        for a in A[:-1]:
            M = max(M, 1 + arb((abs(a) / la).upper()))
        return arb(M.upper())

    def _approx_boundary_root(self, tm):
        """The selected boundary root ``G(t + i0)`` at the real ``tm`` (an exact arb), in
        doubles: continued along the axis from the nearest point already solved (no special
        point in between, the plain grids' rule), else tracked from far up; mpc (mpf for a
        real root) or ``None`` (the caller then bounds instead of enclosing)."""
        import bisect
        xf = float(tm)
        cache = self._cache.setdefault("ballsel", ([], {}))
        keys, sels = cache
        K = self._fkernel()
        sel = sels.get(xf)
        if sel is None:
            i = bisect.bisect_left(keys, xf)
            special = self._special_floats()
            for j in (i - 1, i):
                if 0 <= j < len(keys) and not self._crosses(special, keys[j], xf):
                    try:
                        sel = self._march(K, keys[j], xf, sels[keys[j]])
                        break
                    except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                        sel = None
            if sel is None:
                try:
                    sel = self._select_boundary(K, xf)
                except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                    sel = None
            if sel is None or not isinstance(sel[1], complex) or sel[0] == "unsure":
                return None
            if len(keys) < 100_000:
                bisect.insort(keys, xf)
                sels[xf] = sel
        kind, g, _ = sel
        if kind == "real":
            return mpmath.mpf(g.real)
        return mpmath.mpc(g.real, -abs(g.imag))

    def _ball_quantile(self, pe, dps):
        """Ball of ``Q(p)``: the plain value ``q`` and certified ``F(q − δ) < p ≤ F(q + δ)``;
        an atom or edge ``s`` exactly when ``F(s⁻) < p ≤ F(s)`` is certified.  Near 0 the
        width is counted against the extent of the law (``rad ≤ 10^{-dps}·max(|q|, extent)``):
        a relative width means nothing for a quantile that is 0."""
        q = self.quantile(pe.expr, dps=dps)
        fine = self.quantile(pe.expr, dps=dps + 4)      # the bracket about a sharper value
        p = enclose(pe, _bits(dps + 20))
        scale = self._quantile_scale(dps)
        lo_pts = self._ball_points_around(fine, dps + 2, scale)
        qlo, qhi = lo_pts
        with _prec(_bits(dps + 20)):
            if pe.num == 0 or pe.num == pe.den:        # p = 0 or 1: an end of the support
                return ball_around(q, self._edge_ball(self._numeric_end(q, dps + 10), dps + 10))
            at = self._quantile_at_point(q, pe, p, dps)
            if at is not None:
                return at
            try:
                Flo = self._cdf_enclosure(qlo, dps + 3)
                Fhi = self._cdf_enclosure(qhi, dps + 3)
            except NotAvailable as exc:
                raise NotAvailable(f"AlgebraicCauchy.quantile(ball=True): Q({pe}) ≈ {mpmath.nstr(q, 12)} "
                                   f"cannot be enclosed: {exc}") from None
            if not (Flo < p and p <= Fhi):
                raise PrecisionError(
                    f"AlgebraicCauchy.quantile: p = {pe} could not be bracketed by certified cdf "
                    f"values around {mpmath.nstr(q, 12)} (F in {Flo}, {Fhi})")
            out = ball_around(q, enclose(qlo, flint.ctx.prec).union(enclose(qhi, flint.ctx.prec)))
        # near 0 the digits are counted against the scale of the law (its extent)
        if not (meets(out, dps) or out.rad() <= scale * arb(10) ** (-dps)):
            raise PrecisionError(f"AlgebraicCauchy.quantile: relative width {_width(out)} reached")
        return out

    def _quantile_at_point(self, q, pe, p, dps):
        """If the plain quantile ``q`` is an atom or a support edge ``s``: the ball of ``s``
        when ``F(s⁻) < p ≤ F(s)`` is certified (``Q(p) = s`` exactly), ``None`` when ``q`` is no
        such point; :class:`PrecisionError` when ``p`` cannot be told apart from ``F(s)`` or
        ``F(s⁻)`` (a flat stretch starting at ``s``, whose level a ball cannot decide)."""
        s = self._numeric_end(q, dps + 10)
        prec = flint.ctx.prec
        sb = self._edge_ball(s, dps + 10)
        if not sb.contains(exact_arb(q)) and not (abs(sb - exact_arb(q)) <= abs(sb) * arb(10) ** (-dps)):
            return None
        mass = arb(0)
        for loc, m in self.atoms(dps=dps + GUARD_DPS):
            lb = self._edge_ball(loc, dps + 10)
            if lb.overlaps(sb):
                if not isinstance(m, sp.Basic):
                    return None
                mass = enclose(m, prec)
        sp_ = _real_point(s, "quantile") if isinstance(s, sp.Basic) or isinstance(s, mpmath.mpf) else None
        if sp_ is None:
            return None
        Fs = self._cdf_enclosure(sp_, dps + 3)
        if Fs - mass < p and p <= Fs:
            return ball_around(q, sb)
        if p > Fs or p < Fs - mass:
            return None                     # the plain q is only near s: bracket as usual
        raise PrecisionError(
            f"AlgebraicCauchy.quantile: p = {pe} equals the cdf at {mpmath.nstr(q, 12)} (an atom or "
            f"edge, F there in {Fs}) to within its enclosure; a ball cannot decide which side of the "
            "jump or flat stretch p is on")

    def _quantile_scale(self, dps):
        """The extent of the law, ``max |end|`` over support edges and atoms (at least 1e-300)."""
        ends = [v for ab in self.support(dps=dps + GUARD_DPS) for v in ab] + \
            [loc for loc, _ in self.atoms(dps=dps + GUARD_DPS)]
        with mpmath.workprec(64):
            vals = [abs(self._num(v, 64)) for v in ends]
            vals = [v for v in vals if mpmath.isfinite(v)]
            return arb(max(vals + [mpmath.mpf(10) ** -300]))

    @staticmethod
    def _ball_points_around(q, dps, scale):
        with mpmath.workprec(_bits(dps + 30)):
            d = mpmath.mpf(10) ** (-dps - 1) * max(abs(q), mpmath.mpf(float(scale.mid()))) / 2
            return _real_point(q - d, "quantile"), _real_point(q + d, "quantile")

    def _numeric_end(self, q, dps):
        """The exact (or certified numeric) end of the support or atom at ``q``."""
        cands = [v for ab in self.support(dps=dps + GUARD_DPS) for v in ab] + \
            [loc for loc, _ in self.atoms(dps=dps + GUARD_DPS)]
        with mpmath.workprec(_bits(dps + 10)):
            best = min(cands, key=lambda v: abs(self._num(v, _bits(dps + 10)) - q))
        return best
