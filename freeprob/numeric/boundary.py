"""Boundary values ``G(x + i0)`` for :class:`freeprob.numeric.AlgebraicCauchy`.

The mixin :class:`_BoundaryValues`: the numeric kernels of ``P`` (doubles, mpmath,
exact integer rows), path tracking from ``x + iY`` far up down to the real axis and
along it, the certified boundary root at a non-special point, and the limit of ``G`` at
a special point.  It relies on the exact data of the host class (``_rows``, ``_drows``,
``_rational``, ``_d``, ``_cache``, ``_memo``, ``_series``, ``_radius``,
``_special_points`` ...).
"""
from __future__ import annotations

import bisect
import cmath
import math

import flint
import mpmath
import sympy as sp
from mpmath import libmp

from freeprob.core.coefficients import flint_precision
from freeprob.numeric.acbkernel import _AcbKernel
from freeprob.numeric.precision import escalate
from freeprob.numeric.roots import _num_real_roots, polyroots
from freeprob.numeric.rootkernel import (
    _FLOAT_EPS,
    _MAX_STEPS,
    MAX_GUARD_DPS,
    _agree,
    _arb,
    _coeff_arbs,
    _coeff_mpfs,
    _Fail,
    _fixed_float,
    _fixed_mpc,
    _Kernel,
    _mp_close,
    _polish,
    _root_error,
    _scaled_pair,
    _separation,
    _separation_pair,
    _sorted_by_real,
    _taylor,
    _to_mpf,
)
from freeprob.errors import NotAvailable
from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z


#: :meth:`_BoundaryValues._certify`: the selected root found, not yet to ``dps`` digits
_SHORT = "short"


class _BoundaryValues:
    """Mixin of :class:`~freeprob.numeric.AlgebraicCauchy`: kernels, path tracking and
    certified boundary values (see the module docstring of :mod:`freeprob.numeric`)."""

    # -- numeric kernels ----------------------------------------------------------------
    def _fkernel(self):
        def fn():
            def fl(c):      # through arb (ℤ[e] coefficients), not sympy's evalf
                return libmp.to_float(_to_mpf(sp.sympify(c), 53))
            conv = [[fl(c) for c in r] for r in self._rows]
            dconv = [[fl(c) for c in r] for r in self._drows]
            k = _Kernel(conv, dconv, _FLOAT_EPS, 1j, math.exp, math.log)
            k.series = [float(v) for v in self._series_num(53)]
            k.is_mp = False
            # for rounding-error bounds (density_float): |coefficients|, highest powers first
            k.abs_desc = [[abs(c) for c in reversed(r)] for r in reversed(conv)]
            k.horner_steps = len(conv) + max(len(r) for r in conv) + 2
            real, nonreal = self._singular_points()
            k.sigma = [complex(r) for r in self._special_floats()] + [complex(c) for c in nonreal]
            return k
        return self._memo("fkernel", fn)

    def _singular_points(self):
        """``(real, nonreal)``: every root of the discriminant and of the leading
        coefficient of ``P`` (the only points where branches collide or escape): the real
        ones as in :meth:`_special_points`, the non-real ones as mpc (128 bits)."""
        def fn():
            real = self._special_points()
            p = self._special_poly()
            if p.degree() < 1 or p.degree() == len(real):
                return real, []
            prec = 128
            with mpmath.workprec(prec + 20):
                cs = [mpmath.mpf(c) for c in _coeff_mpfs(p, prec + 20)]
                while cs and not cs[0]:
                    cs.pop(0)
                roots = None
                for steps in (400, 4000):
                    try:
                        roots = polyroots(cs, prec, steps)
                        break
                    except mpmath.libmp.NoConvergence:
                        continue
                if roots is None:
                    raise NotAvailable(
                        "AlgebraicCauchy: cannot locate the complex roots of the discriminant "
                        "(needed to keep every continuation step inside a disk free of "
                        "branch points)")
                # the real roots are the exact ones above: drop the numeric ones nearest
                # to them (one each), keep the others
                rest = list(roots)
                for r in real:
                    rn = mpmath.mpf(_to_mpf(r, prec)) if isinstance(r, sp.Basic) else r
                    if rest:
                        rest.remove(min(rest, key=lambda c: abs(c - rn)))
                return real, rest
        return self._memo("singular", fn)

    def _near_axis_cuts(self, lo, hi):
        """Sorted real parts (mpf, 53 bits, without repeats) of the non-real singular
        points ``c`` (:meth:`_singular_points`) with ``lo < Re c < hi`` and
        ``|Im c| < hi − lo`` (``lo < hi`` mpf, the ends of a piece of the support).

        Such a ``c`` is typically where two support edges went as a gap closed (the pair
        of real roots of the discriminant became a conjugate pair): the density is analytic
        on the axis, but near ``Re c`` it varies on the scale ``|Im c|`` (a near-cusp, a
        dip).  Integrated from the far ends, the tanh-sinh rule (in ``u = s^{1/k}``, which
        shrinks the distance to ``c`` a further ``k``-fold) does not resolve it: the law of
        ``tests/test_near_axis.py`` left quadrature errors from ``10^-2`` (``|Im c|`` at
        ``10^-4`` of the piece) to ``10^-13`` (at ``2·10^-2``).  Cut at ``Re c``, each side
        is integrated from the cut by Gauss–Legendre on pieces graded toward ``c``
        (:meth:`_graded`), which converges geometrically whatever ``|Im c|``; a far ``c``
        costs one or two ordinary Gauss–Legendre pieces.  Source: this project's design."""
        _, nonreal = self._singular_points()
        out = set()
        for c in nonreal:
            if c.imag > 0 and lo < c.real < hi and c.imag < hi - lo:
                r = mpmath.mpf(float(c.real))
                if lo < r < hi:
                    out.add(r)
        return sorted(out)

    @staticmethod
    def _sing_dist(K, z):
        """Distance from ``z`` to the nearest root of the discriminant or of the leading
        coefficient: every branch of ``P(·, w) = 0`` is analytic in the disk of that
        radius about ``z``, so its Taylor series at ``z`` converges there.

        In doubles, outwards from ``Re z`` by real part, a side stopping once ``|Re z − Re s|``
        (a lower bound on ``|z − s|``) exceeds the nearest so far: the plain loop's minimum."""
        sig = K.sigma
        if (type(z) is float or type(z) is complex) and cmath.isfinite(z):
            idx = K.__dict__.get("_sigma_index")
            if idx is None or idx[0] is not sig or idx[1] != len(sig):
                idx = (sig, len(sig), _sorted_by_real(sig))
                K._sigma_index = idx
            srt = idx[2]
            if srt is not None:
                if not srt[0]:
                    return math.inf
                re, pts = srt
                x = z.real
                i = bisect.bisect_left(re, x)
                best = math.inf
                j = i - 1
                while j >= 0 and not x - re[j] > best:
                    d = abs(z - pts[j])
                    if d < best:
                        best = d
                    j -= 1
                j, n = i, len(re)
                while j < n and not re[j] - x > best:
                    d = abs(z - pts[j])
                    if d < best:
                        best = d
                    j += 1
                return best
        best = None
        for s in sig:
            d = abs(z - s)
            if best is None or d < best:
                best = d
        return math.inf if best is None else best

    def _step_limit(self, K, z):
        """Largest continuation step from ``z``: half the radius of a disk about ``z`` in
        which the tracked root is analytic (free of branch points; for ``Im z > 0`` also the
        disk of radius ``Im z``, inside the half-plane where ``G`` is analytic), so that the
        two-point tests of a step (Newton correction and change of ``G'``) measure the
        Taylor remainder of a convergent series rather than a jump to another branch."""
        r = self._sing_dist(K, z)
        im = z.imag
        if im > r:
            r = im
        return r / 2

    def _coeff_tuples(self, prec):
        key = ("rows", prec)
        if key not in self._cache:
            self._cache[key] = ([[_to_mpf(c, prec) for c in r] for r in self._rows],
                                [[_to_mpf(c, prec) for c in r] for r in self._drows])
        return self._cache[key]

    def _mkernel(self, prec):
        """mpmath kernel at ``prec`` bits (use inside ``mpmath.workprec(prec)``)."""
        key = ("mkernel", prec)
        if key not in self._cache:
            rows, drows = self._coeff_tuples(prec)
            mk = mpmath.mpf
            k = _Kernel([[mk(c) for c in r] for r in rows], [[mk(c) for c in r] for r in drows],
                        mpmath.mpf(2) ** (-prec), mpmath.mpc(0, 1), mpmath.exp, mpmath.log)
            k.series = [mk(v) for v in self._series_num(prec)]
            k.is_mp = True
            k.sigma = self._sigma_mp(prec)
            self._cache[key] = k
        return self._cache[key]

    def _sigma_mp(self, prec):
        """The singular points (real, then non-real) as mpf/mpc at ``prec`` bits, as the
        kernels' ``sigma`` (call under ``mpmath.workprec(prec)``)."""
        mk = mpmath.mpf
        real, nonreal = self._singular_points()
        if real and not isinstance(real[0], sp.Basic) and prec > 180:
            real = _num_real_roots(self._special_poly(), prec, squarefree=True)  # as exact as x
        return ([mk(_to_mpf(r, prec)) if isinstance(r, sp.Basic) else mk(r) for r in real]
                + [mpmath.mpc(c) for c in nonreal])

    def _akernel(self, prec):
        """python-flint ``acb`` kernel at ``prec`` bits (:class:`_AcbKernel`: the rows and
        the singular points of :meth:`_mkernel` as exact acb midpoints), memoized per
        precision; use its arithmetic under ``flint_precision(flint.ctx.cap, prec)``."""
        key = ("akernel", prec)
        if key not in self._cache:
            with mpmath.workprec(prec):
                # the mpmath kernel's sigma if it is built, else the same values without it
                # (its series, for starts from far up, costs ~25 ms and is not needed here)
                mk = self._cache.get(("mkernel", prec))
                sigma = mk.sigma if mk is not None else self._sigma_mp(prec)
                rows, drows = self._coeff_tuples(prec)
                self._cache[key] = _AcbKernel(rows, drows, prec, sigma)
        return self._cache[key]

    def _int_rows(self):
        """Rows as ``(D, [[(j, n_kj)]])`` with ``c_kj = n_kj / D`` (rational mode)."""
        def fn():
            D = sp.ilcm(1, *[sp.Rational(c).q for r in self._rows for c in r]) if self._rational else None
            if D is None:
                return None
            return int(D), [[(j, int(c * D)) for j, c in enumerate(r) if c != 0] for r in self._rows]
        return self._memo("introws", fn)

    def _values(self, pt, prec):
        """``A_k(x)`` as integer triples (exact and precision-free for a rational point of
        a rational polynomial, up to a common positive factor), else rounded at ``prec``."""
        ir = self._int_rows() if pt.num is not None else None
        if ir is not None:
            J = max(len(r) for r in self._rows) - 1
            num, den = pt.num, pt.den
            pn = [1]
            for _ in range(J):
                pn.append(pn[-1] * num)
            pd = [1]
            for _ in range(J):
                pd.append(pd[-1] * den)
            return [(sum(n * pn[j] * pd[J - j] for j, n in row), 0, 0) for row in ir[1]]
        x = pt.mpf(prec)
        rows, _ = self._coeff_tuples(prec)
        out = []
        for r in rows:
            acc = r[-1]
            for c in r[-2::-1]:
                acc = libmp.mpf_add(libmp.mpf_mul(acc, x, prec, "n"), c, prec, "n")
            out.append(_scaled_pair(acc, libmp.fzero))
        return out

    # -- path tracking --------------------------------------------------------------------
    def _track(self, K, zf, t0, t1, g, rho, finish=None, h0=None, center=None):
        """Continue the root ``g`` of ``P(·, zf(t0))`` to ``t = t1``.  ``center``: a
        singular point (in the kernel's arithmetic) the path approaches, where roots may
        escape like a power of the distance: steps there use the power-law predictor
        (:func:`_power_step`)."""
        t, z = t0, zf(t0)
        ev = getattr(self, "_ev_at", None)
        if ev is not None and ev[0] is K and type(z) is type(ev[1]) and z == ev[1]:
            A, dA = ev[2], ev[3]        # where the last track ended (a grid's next march)
        else:
            A, dA = K.ev(z)
        if finish is not None:
            r = finish(z, g, rho, A, dA)
            if r is not None:
                return r
        if center is not None and abs(g) > 16 * rho:
            # a start carried over from another kernel (doubles, a lower precision) is only
            # as good as that kernel; where the root is large (near a pole-like point) its
            # derivative, which the power-law predictor extrapolates, is sensitive to it
            gp = K.newton(A, g, max(abs(g), rho), atol=rho * 2.0 ** -40)
            if gp is not None and abs(gp - g) <= rho / 8:
                g = gp
        h = (t1 - t0) if h0 is None else h0
        span = abs(t1 - t0)
        steps = 0
        v = K.dgdz(A, dA, g)
        lim = self._step_limit(K, z)
        while t != t1:
            steps += 1
            if steps > _MAX_STEPS or abs(h) < 1e-13 * span or v is None:
                raise _Fail("step size underflow")
            tn = t1 if abs(t1 - t) <= abs(h) * 1.000001 else t + h
            zn = zf(tn)
            dz = zn - z
            if not abs(dz) <= lim:
                h /= 2
                continue
            power = _power_step(K, center, z, zn, g, v, rho) if center is not None else None
            pred = g + v * dz if power is None else power[0]
            An, dAn = K.ev(zn)
            gn = K.newton(An, pred, max(abs(g), rho), atol=rho * 2.0 ** -40)
            if gn is None:
                h /= 2
                continue
            c = _taylor(An, gn)
            rn = _separation(c)
            vn = K.dgdz(An, dAn, gn)
            # predictor error estimate (second-order term) and Newton correction, both
            # small against the separation at both ends
            if power is not None:
                e2 = power[1](zn, gn, vn) if vn is not None else math.inf
            else:
                e2 = abs(vn - v) * abs(dz) / 2 if vn is not None else math.inf
            if not (abs(gn - pred) <= rn / 8 and e2 <= rn / 8 and e2 <= rho / 8):
                h /= 2
                continue
            if not K.is_mp and not cmath.isfinite(gn):
                raise _Fail("overflow")
            err = _root_error(An, gn, c[1], K.eps)
            if rn < 64 * err:
                raise _Fail("roots too close for this precision")
            t, z, g, rho, A, dA, v = tn, zn, gn, rn, An, dAn, vn
            lim = self._step_limit(K, z)
            self._last = (A, c, err)
            if type(z) is float or type(z) is complex:      # doubles: kept for the next start
                self._ev_at = (K, z, A, dA)
            h *= 2
            if finish is not None:
                r = finish(z, g, rho, A, dA)
                if r is not None:
                    return r
        if finish is not None:
            raise _Fail("no landing")
        return z, g, rho

    def _start(self, K, x):
        """Root at ``x + iY`` far up, from the expansion at infinity."""
        Y = 2 * self._radius() + 2 + abs(float(x))
        if K.is_mp:
            Y = mpmath.mpf(Y)
        for _ in range(16):
            zs = x + K.I * Y
            w = 1 / zs
            gs = 0 * w
            for m in reversed(K.series):
                gs = (gs + m) * w
            A = K.values(zs)
            g = K.newton(A, gs, abs(gs))
            if g is not None:
                rho = _separation(_taylor(A, g))
                if abs(g - gs) <= rho / 8:
                    return Y, g, rho
            Y *= 4
        raise _Fail("no start")

    def _land_fn(self, K, x, Ax, dAx):
        """The jump test from ``x + iy`` to the real axis (see the module docstring)."""
        def finish(z, g, rho, A, dA):
            jump = x - z
            # the jump must stay well inside the disk about z free of branch points
            # (where the tracked branch is one analytic function, continued to x): a
            # jump beyond it may land on another branch that merely passes the tests below
            if not abs(jump) <= self._sing_dist(K, z) / 2:
                return None
            v = K.dgdz(A, dA, g)
            if v is None:
                return None
            mov = v * jump
            if not abs(mov) <= rho:          # cheap pre-test: clearly too far up
                return None
            pred = g + mov
            gs = K.newton(Ax, pred, max(abs(g), rho), maxit=120)
            if gs is None or (not K.is_mp and not cmath.isfinite(gs)):
                return None
            vs = K.dgdz(Ax, dAx, gs)
            if vs is None:
                return None
            c = _taylor(Ax, gs)
            rf = _separation(c)
            err = _root_error(Ax, gs, c[1], K.eps)
            corr = abs(gs - pred)
            # predictor error estimate (second-order term), as for a tracking step
            e2 = abs(vs - v) * abs(jump) / 2
            if not e2 <= rho / 8:
                return None
            if abs(gs.imag) <= rf / 4 - err and rf > 64 * err:
                if corr <= rf / 8 and abs(mov) <= rf / 4 and e2 <= rf / 8:
                    return ("real", gs, rf)
                return None
            rr = _separation_pair(c, gs)
            if corr <= rr / 8 and abs(mov) <= rr / 4 and e2 <= rr / 8:
                if abs(gs.imag) > 64 * err and rf > 64 * err:
                    return ("complex", gs.conjugate() if gs.imag > 0 else gs, rf)
                return ("unsure", gs.conjugate() if gs.imag > 0 else gs, rf)
            return None
        return finish

    def _select_boundary(self, K, x):
        """Selected root at the real point ``x`` (float or mpf): ``(kind, g, rho)``."""
        Y, g, rho = self._start(K, x)
        Ax, dAx = K.ev(x)
        t0 = K.log(Y)
        zf = (lambda t: x + K.I * K.exp(t))
        floor = t0 - (700 if not K.is_mp else 1.5 * mpmath.mp.prec + 60)
        return self._track(K, zf, t0, floor, g, rho, finish=self._land_fn(K, x, Ax, dAx), h0=-1)

    def _march(self, K, x0, x1, sel, zf=None, center=None):
        """Continue a selected boundary root along the real axis from ``x0`` to ``x1``
        (or along ``zf(t)``, ``t`` from ``x0`` to ``x1``; ``center``: see :meth:`_track`)."""
        kind, g, rho = sel
        self._last = None
        z, g1, rho1 = self._track(K, zf or (lambda t: t), x0, x1, g, rho, center=center)
        if self._last is not None:      # the last step's values and root error
            A, c, err = self._last
        else:
            A = K.values(z)
            c = _taylor(A, g1)
            err = _root_error(A, g1, c[1], K.eps)
        self._march_values = (K, z, A)     # for the float density at the same point (grid)
        if abs(g1.imag) <= rho1 / 4 - err and rho1 > 64 * err:
            return ("real", g1, rho1)
        if abs(g1.imag) > 64 * err and rho1 > 64 * err:
            return ("complex", g1.conjugate() if g1.imag > 0 else g1, rho1)
        raise _Fail("undecided")

    # -- boundary values, certified --------------------------------------------------------
    def _nearest_special_gap(self, xv):
        """``(distance, point)`` from the float ``xv`` to the nearest special point."""
        pts = self._special_floats()
        if not pts:
            return math.inf, None
        i = bisect.bisect_left(pts, xv)
        best = (math.inf, None)
        for j in (i - 1, i):
            if 0 <= j < len(pts):
                best = min(best, (abs(xv - pts[j]), j))
        return best

    def _rational_specials(self):
        return self._memo("ratspecial", lambda: {(int(p.p), int(p.q)) for p in self._special_points()
                                                  if isinstance(p, sp.Rational)})

    def _is_special(self, pt):
        """True if the exact point is a root of the discriminant or leading coefficient."""
        if self._rational:
            if pt.num is not None:
                return (pt.num, pt.den) in self._rational_specials()
            return any(sp.simplify(pt.expr - p) == 0 for p in self._special_points()
                       if abs(float(sp.N(pt.expr - p, 20))) < 1e-10)
        if self._nearest_special_gap(pt.xf)[0] > 1e-8 * (1 + abs(pt.xf)):
            return False
        if pt.num is not None:
            if self._special_value_exceeds(pt) or self._special_value_exceeds_arb(pt, 256, 0):
                return False        # |value| > 1e-20, or a ball clear of 0 (no slow sympy eval)
            # a rational point: evaluate exactly in the coefficient domain (ℤ[e], ℚ(√2), …:
            # canonical, so zero only if it is zero), not by a slow sympy ``simplify``
            sp_poly = self._special_poly()
            if not sp_poly.domain.is_EX:
                try:
                    return sp.sympify(sp_poly.eval(sp.Rational(pt.num, pt.den))) == 0
                except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError,
                        sp.polys.polyerrors.CoercionFailed):
                    pass
        val = self._special_poly().as_expr().subs(_z, pt.expr)
        if abs(complex(sp.N(val, 30))) > 1e-20:
            return False
        return sp.simplify(val) == 0

    def _special_value_exceeds(self, pt, wp=256):
        """True if, at the rational point ``pt``, the special polynomial certainly has
        modulus above ``1e-20`` (the threshold of :meth:`_is_special`): Horner in mpmath at
        ``wp`` bits with a bound on the rounding error, instead of a slow sympy
        substitution (irrational coefficients, points near an edge).  Tried first in arb
        ball arithmetic (:meth:`_special_value_exceeds_arb`), the same test, rigorous and
        about a hundred times faster."""
        if pt.num is not None:
            fast = self._special_value_exceeds_arb(pt, wp)
            if fast is not None:
                return fast
        def coeffs():
            with mpmath.workprec(wp):       # mpf() rounds to the working precision
                return [mpmath.mpf(c) for c in _coeff_mpfs(self._special_poly(), wp)]
        cs = self._memo(("specialcoeffs", wp), coeffs)
        with mpmath.workprec(wp):
            x = mpmath.mpf(pt.mpf(wp))          # binary rounding of x: part of the bound
            v, scale = mpmath.mpf(0), mpmath.mpf(0)
            for c in cs:
                v = v * x + c
                scale = scale * abs(x) + abs(c)
            dx = abs(x) * mpmath.mpf(2) ** (-wp + 1)
            dv = 0
            if len(cs) > 1:
                dscale = mpmath.mpf(0)
                for i, c in enumerate(cs[:-1]):
                    dscale = dscale * (abs(x) + dx) + abs(c) * (len(cs) - 1 - i)
                dv = dscale * dx
            err = scale * mpmath.mpf(2) ** (-wp + 8) * len(cs) + dv
            return abs(v) - err > mpmath.mpf(10) ** -20

    def _special_value_exceeds_arb(self, pt, wp, bound=None):
        """:meth:`_special_value_exceeds` in python-flint ``arb`` at ``wp`` bits for the
        rational point ``pt``: the special polynomial's coefficients as balls (``_arb``,
        memoized), evaluated at the ball of ``num/den``; True if ``|value| > bound``
        (``1e-20``; ``0``: not special) certainly, False if not, ``None`` when a
        coefficient has no arb form (the mpmath route then decides).  The global flint
        precision is restored.  Source: Arb's ball arithmetic (Johansson 2017)."""
        def coeffs():
            """The special polynomial as an ``arb_poly`` (balls at ``wp + 30`` bits)."""
            with flint_precision(flint.ctx.cap, wp + 30):
                cs = _coeff_arbs(self._special_poly(), wp + 30)
                if cs is None:
                    cs = [_arb(sp.sympify(c)) for c in self._special_poly().all_coeffs()]
                if any(c is None or not c.is_finite() for c in cs):
                    return None
                return flint.arb_poly(cs[::-1])
        poly = self._memo(("specialarb", wp), coeffs)
        if poly is None:
            return None
        with flint_precision(flint.ctx.cap, wp):
            v = poly(flint.arb(pt.num) / pt.den)
            return bool(abs(v) > (flint.arb(10) ** -20 if bound is None else flint.arb(bound)))

    def _plan(self, pt):
        """``(extra_bits, float_ok)``: extra working bits when the point is closer to a
        special point than its own magnitude resolves, and whether doubles can be used."""
        xf = pt.xf
        tiny = not (1e-280 < abs(xf) < 1e280) and xf != 0 or (xf == 0 and pt.expr != 0)
        dist, _ = self._nearest_special_gap(xf)
        if tiny or dist <= 1e-12 * abs(xf):
            pts = self._special_points()
            if not pts:
                return 0, not tiny
            # at 256 bits (sympy would round an mpf special point to a double first: the
            # distance of a point within an ulp of it came out 0, i.e. "doubles suffice")
            with mpmath.workprec(256):
                x = mpmath.mpf(pt.mpf(256))
                d = min(abs(x - (mpmath.mpf(_to_mpf(p, 256)) if isinstance(p, sp.Basic) else p))
                        for p in pts)
                if d == 0 or x == 0:
                    return 0, not tiny
                ratio = float(mpmath.log(abs(x) / d, 2))
            if ratio > 20:
                return int(ratio) + 16, False
        return 0, not tiny

    def _boundary_value(self, pt, dps, sel=None, need="density", plan=None, resel=None):
        """Certified boundary root ``G(x + i0)`` at a non-special exact point.

        Returns ``("real", fixed or None, prec)`` or ``("complex", fixed, prec)``, where
        ``fixed = (re, im, shift)`` is the root at ``prec`` bits (``None``: real root, not
        computed, when ``need == "density"``).  ``resel(p1)``, if given, is tried once
        before tracking from far up at ``p1`` bits: another route to the selected root at
        that precision (continuation from a neighbouring point), certified the same way."""
        extra, float_ok = plan or self._plan(pt)
        anchor = False
        recent = sel is None            # a point evaluated on its own: kept as a start
        if sel is None and float_ok:
            sel = self._near_recent(pt.xf)
        if sel is None and float_ok:
            try:
                sel = self._select_boundary(self._fkernel(), pt.xf)
                anchor = isinstance(sel[1], complex)
            except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                sel = None

        def attempt(p1, p2):
            nonlocal sel, resel, anchor
            if sel is None and resel is not None:
                sel, resel = resel(p1), None
            if sel is None:
                with mpmath.workprec(p1):
                    try:
                        sel = self._select_boundary(self._mkernel(p1), mpmath.mpf(pt.mpf(p1)))
                    except _Fail:
                        sel = None
            if sel is not None:
                out = self._certify(pt, sel, dps, p1, p2, need)
                if out is _SHORT:
                    # the selected root was found again (within ρ/8 at p1 bits: the same
                    # root), only not to dps digits at p1 and p2 (a cluster of roots at a
                    # coincident edge): kept for the next guard, not tracked from far up
                    return None
                if out is not None:
                    if anchor:      # a certified selection: a start for continuations
                        anchors = self._cache.setdefault("anchors", [])
                        if len(anchors) < 64:
                            anchors.append((pt, sel))
                    if recent and isinstance(sel[1], complex):
                        last = self._cache.setdefault("recent", [])
                        last[:] = last[-7:] + [(pt.xf, sel)]
                    return out
            sel = None                      # at higher guards: selected again in mpmath
            anchor = False
            return None

        return escalate(dps, attempt, lambda: (
            f"AlgebraicCauchy: no agreement to {dps} digits up to {dps + 2 * MAX_GUARD_DPS} "
            f"digits at x = {pt}"), extra_bits=extra)

    def _near_recent(self, xf):
        """The selected root at the float ``xf`` continued in doubles from one of the last
        points evaluated one by one (e.g. the previous step of a root search along the
        axis), when that point is closer to ``xf`` than a quarter of its distance to the
        nearest special point (a step or two: cheaper than tracking from far up), else
        ``None``.  The root is certified by the caller as any other."""
        last = self._cache.get("recent")
        if not last:
            return None
        x0, sel0 = min(last, key=lambda r: abs(r[0] - xf))
        if x0 == xf:
            return sel0
        if not abs(xf - x0) <= self._nearest_special_gap(x0)[0] / 4:
            return None
        try:
            return self._march(self._fkernel(), x0, xf, sel0)
        except (_Fail, OverflowError, ZeroDivisionError, ValueError):
            return None

    def _certify(self, pt, sel, dps, p1, p2, need):
        """Polish the selected root at ``p1`` and ``p2`` bits and check agreement: the
        certified value, ``None`` when the root near ``sel`` is not found (selected again),
        or ``_SHORT`` when it is but the two polishes do not agree to ``dps`` digits."""
        kind, g, rho = sel
        fast = isinstance(g, complex)
        if fast:
            ag = abs(g)
            rho_rel = rho / ag if ag else 1.0
        else:
            with mpmath.workprec(64):
                rho_rel = float(rho / abs(g)) if g else 1.0

        def close(v, w):
            if fast:
                return abs(_fixed_float(v) - w) <= rho / 8
            return _mp_close(v, w, rho, p1)
        A1 = self._values(pt, p1)
        A2 = A1 if pt.num is not None and self._rational else None     # exact: no precision
        if kind == "real":
            r1 = _polish(A1, g, p1, rho_rel, real=True)
            if r1 is None or not close(r1, g.real):
                return None
            if need == "density":
                return ("real", None, p1)
            r2 = _polish(A2 or self._values(pt, p2), r1, p2, rho_rel, real=True)
            if r2 is None or not _agree(r1[0], r2[0], r1[2], r2[2], dps):
                return _SHORT
            return ("real", r2, p2)
        g1 = _polish(A1, g, p1, rho_rel)
        if g1 is None or not close(g1, g):
            return None
        if kind == "unsure":
            with mpmath.workprec(p1):
                K = self._mkernel(p1)
                A = K.values(mpmath.mpf(pt.mpf(p1)))
                m1 = _fixed_mpc(g1)
                c = _taylor(A, m1)
                rf = _separation(c)
                err = _root_error(A, m1, c[1], K.eps)
                if abs(m1.imag) <= rf / 4 - err and rf > 64 * err:
                    return self._certify(pt, ("real", g, rho), dps, p1, p2, need)
                if not (abs(m1.imag) > 64 * err and rf > 64 * err):
                    return None
        if g1[1] > 0:
            g1 = (g1[0], -g1[1], g1[2])
        g2 = _polish(A2 or self._values(pt, p2), g1, p2, rho_rel)
        if g2 is None or not _agree(g1[1], g2[1], g1[2], g2[2], dps):
            return _SHORT
        if need != "density" and not _agree(g1[0], g2[0], g1[2], g2[2], dps,
                                            max(abs(g2[0]), abs(g2[1]))):
            return _SHORT
        return ("complex", g2, p2)

    # -- special points ---------------------------------------------------------------
    def _limit_at_special(self, xe, dps):
        """Boundary behaviour at a special point: ``("inf", None)`` or ``("finite", mpc)``."""
        with sp.evaluate(True):
            px = sp.Poly(self._P.as_expr().subs(_z, xe.expr), _G)
        if px.is_zero:
            raise NotAvailable(f"AlgebraicCauchy: P(G, {xe}) vanishes identically")
        dfin = px.degree()

        def attempt(p1, p2):
            results = []
            for prec in (p1, p2):
                with mpmath.workprec(prec):
                    results.append(self._limit_once(px, dfin, xe, prec))
            (k1, v1), (k2, v2) = results
            if k1 == k2 == "inf":
                return ("inf", None)
            if k1 == k2 == "finite":
                with mpmath.workprec(p2):
                    if abs(v1 - v2) <= mpmath.mpf(10) ** (-dps - 1) * max(abs(v2), abs(v2.imag)):
                        return ("finite", v2)
            return None

        return escalate(dps, attempt,
                        lambda: f"AlgebraicCauchy: no agreement to {dps} digits at the special point {xe}")

    def _limit_once(self, px, dfin, xe, prec):
        K = self._mkernel(prec)
        x = mpmath.mpf(_to_mpf(xe, prec))
        finite = []
        if dfin >= 1:
            sq = px.sqf_part()
            cs = [mpmath.mpf(_to_mpf(sp.sympify(c), prec)) for c in sq.all_coeffs()]
            finite = polyroots(cs, prec)
        mult = {}
        for r in finite:
            mult[id(r)] = sum(1 for s in px.sqf_list()[1] for _ in range(s[1])
                              if s[0].degree() > 0 and abs(mpmath.polyval(
                                  [mpmath.mpf(_to_mpf(sp.sympify(c), prec)) for c in s[0].all_coeffs()],
                                  r)) <= mpmath.mpf(2) ** (-prec // 2) * (1 + abs(r)) ** s[0].degree())
        Y, g, rho = self._start(K, x)
        eta = Y
        z = x + K.I * eta
        scale = max([abs(r) for r in finite] + [mpmath.mpf(1)])
        seps = {}
        for r in finite:
            others = [abs(r - s) for s in finite if s is not r]
            seps[id(r)] = min(others) if others else scale
        for _ in range(200):
            eta_new = eta / 16
            zf = (lambda t: x + K.I * mpmath.exp(t))
            z, g, rho = self._track(K, zf, mpmath.log(eta), mpmath.log(eta_new), g, rho, h0=-1)
            eta = eta_new
            allr = polyroots(
                [c for c in K.values(z)][::-1] if K.values(z)[-1] else K.values(z)[-2::-1],
                prec) if self._d > 1 else [g]
            big = sorted(allr, key=abs)[dfin:]
            small = sorted(allr, key=abs)[:dfin]
            if big and min(abs(b) for b in big) > 4 * (scale + max([abs(s) for s in small] + [0])) \
                    and abs(g) >= min(abs(b) for b in big) * (1 - mpmath.mpf(2) ** (-20)):
                return ("inf", None)
            for r in finite:
                s = seps[id(r)]
                near = [a for a in allr if abs(a - r) <= s / 4]
                if abs(g - r) <= s / 8 and len(near) == mult[id(r)]:
                    return ("finite", r)
        raise _Fail("special point undecided")


def _power_step(K, a, z, zn, g, v, rho):
    """The power-law predictor of a tracking step from ``z`` to ``zn`` near the singular
    point ``a`` where the root is large, or ``None`` (the linear predictor is used).

    Where the leading coefficient of ``P`` vanishes at ``a`` without an atom, roots escape
    like ``(z − a)^α`` (``α = −1/2`` at a fold of a pushforward) while two of them stay
    ``O(1)`` apart: the linear predictor's second-order error ``|G''|·|dz|²/2`` then
    grows like ``|G|·|dz/(z − a)|²`` against that separation, and the steps shrink without
    end (thousands of steps at ``|z − a| = 10^{-10}``, none at ``10^{-20}``).  In the
    coordinates ``(log(z − a), log G)`` the root is a line of slope ``α = G'(z)(z − a)/G``:
    the predictor ``G·((zn − a)/(z − a))^α`` follows the leading power exactly, and its
    error estimate (returned as a function of the landing point ``zn``, root ``gn`` and
    derivative ``vn``) is the same two-point estimate of the second-order term in those
    coordinates, ``|gn|·|α(zn) − α(z)|·|log((zn − a)/(z − a))|/2``.  Used when
    ``|G| > 16ρ`` (``ρ`` the separation: the linear steps would be stiff) on paths that
    approach ``a`` (the continuations next to a support edge, :class:`_Edge
    <freeprob.numeric.edgerule._Edge>`; the step stays in a disk about ``z`` free of
    singular points, so ``log(z − a)`` is analytic along it) and ``G`` far from 0 along
    the step.  Not used on the paths from far up: there several sheets can follow the
    same power (``z^{−2/3}`` times cube roots of unity next to the fold of ``x³``), which
    the estimate in ``α`` does not tell apart, while the linear one does (by ``G'``).
    Source: this project's design (issue 26: the cdf of ``x³ − x`` of the semicircle)."""
    if not abs(g) > 16 * rho:
        return None
    u, un = z - a, zn - a
    if not (abs(u) > 0 and abs(un) > 0):
        return None
    alpha = v * u / g
    ratio = un / u
    if isinstance(ratio, complex):
        lr = cmath.log(ratio)
        pred = g * cmath.exp(alpha * lr)
    elif isinstance(ratio, flint.acb):
        lr = ratio.log().mid()
        pred = (g * (alpha * lr).exp()).mid()
    else:
        lr = mpmath.log(ratio)
        pred = g * mpmath.exp(alpha * lr)
    if not abs(pred - g) <= abs(g) / 2:
        return None         # G may pass near 0 on the way: log G is not analytic there

    def err(zn_, gn, vn):
        """The second-order term of the power-law model over the step."""
        if gn == 0:
            return math.inf
        return abs(gn) * abs(vn * un / gn - alpha) * abs(lr) / 2
    return pred, err

