"""Density grids for :class:`freeprob.numeric.AlgebraicCauchy`: the root continued from
one point of a sorted grid to the next.

The mixin :class:`_Grid`: :meth:`~_Grid.density_grid` (certified values, as
:meth:`AlgebraicCauchy.density` pointwise) and :meth:`~_Grid.density_float` (float64
values to a stated relative accuracy, for tabulations), and the continuation along the real
axis at more than double precision (:meth:`~_Grid._march_mp`, on python-flint ``acb``
midpoints, mpmath as the fallback).  It relies on the host class for the kernels, the
special points, the path tracking and the certified boundary values
(:class:`~freeprob.numeric.boundary._BoundaryValues`, :class:`~freeprob.numeric.exact._ExactData`).

A grid is split into *runs* at the special points (the real roots of the discriminant and
of the leading coefficient, where branches collide or escape): the boundary root is
continued only within a run.  In each run the root is first selected (tracked from far
up) at the point where doubles suffice that lies farthest from the special points (or
continued from the previous grid's last point, :meth:`~_Grid._grid_carry`) and continued
forward from there, then backward to the points before it, so that the points next to the
special point at either end of a run, where doubles do not resolve the roots, are reached
by continuation from inside the run (in ``acb`` at the bits they need) rather than tracked
from far up one by one.  Source: this project's design; [RE08]_ §4–5 (continuation of the branch).
"""
from __future__ import annotations

import bisect
import math

import flint
import mpmath
import sympy as sp

from freeprob.core.coefficients import flint_precision
from freeprob.numeric.acbkernel import _acb_exact, _acb_to_mpc, _arb_mid_mpf
from freeprob.numeric.balls import shows_proven
from freeprob.numeric.rootkernel import _Fail, _pvals, _real_point, _separation, _taylor, _to_mpf
from freeprob.errors import FreeprobValueError

#: default relative accuracy of :meth:`_Grid.density_float`
FLOAT_RTOL = 1e-10
#: bits of :meth:`_Grid._wide_density`, the step between doubles and the certified path
WIDE_PREC = 128


def _abs_sum(K, ax, ag):
    """``Σ_k (Σ_j |c_kj| |x|^j) |g|^k`` by Horner on the double kernel ``K``'s ``abs_desc``
    (``|x| = ax``, ``|g| = ag``): the scale of the rounding error of evaluating ``P(g, x)``."""
    total = 0.0
    for row in K.abs_desc:
        acc = 0.0
        for c in row:
            acc = acc * ax + c
        total = total * ag + acc
    return total


class _Grid:
    """Mixin of :class:`~freeprob.numeric.AlgebraicCauchy`: density grids (see the
    module docstring)."""

    @shows_proven
    def density_grid(self, xs, *, dps=15, ball=False):
        r"""The density at each point of a sorted sequence ``xs`` (same values as
        :meth:`density` pointwise).

        The root is continued along the real axis from each point to the next (within an
        interval free of discriminant and leading-coefficient roots), so that a typical
        point costs one continuation step and two Newton polishes.

        Parameters
        ----------
        xs : sequence of real numbers, non-decreasing
        dps : int >= 1, keyword-only

        ball : bool, keyword-only
            Return python-flint ``arb`` enclosures (as :meth:`density` with ``ball=True``).

        Returns
        -------
        list of mpmath.mpf (list of arb with ``ball=True``)

        Raises
        ------
        FreeprobValueError
            A point is not a finite real number, ``xs`` is not sorted, ``dps`` invalid.
        PrecisionError
            If ``dps`` digits cannot be certified at some point.
        """
        from freeprob.numeric.balls import check_ball
        from freeprob.numeric.rootkernel import _check_dps
        dps = _check_dps(dps, "density_grid")
        ball = check_ball(ball, "density_grid")
        return self._grid(xs, dps, ball, None, "density_grid")

    def density_float(self, xs, *, rtol=FLOAT_RTOL):
        r"""The density at each point of a sorted sequence ``xs`` as floats, each to a
        relative accuracy of about ``rtol`` (for tabulations; :meth:`density_grid` gives
        certified digits).

        The root is continued along the grid in doubles as in :meth:`density_grid`; at a
        point where the continued double root is accurate to ``rtol`` (a first-order bound
        on the rounding error of the polynomial's values, from the absolute values of its
        coefficients, below ``rtol`` times the imaginary part) the density is taken from it
        (one Newton polish in doubles), a real root giving 0.  Every other point (next to a
        support edge or another special point, next to an atom, where doubles do not
        separate the roots or the bound is not met) is evaluated by the certified path of
        :meth:`density_grid` at 15 digits.

        Parameters
        ----------
        xs : sequence of real numbers (floats), non-decreasing
        rtol : float in ``[1e-14, 1e-3]``, keyword-only

        Returns
        -------
        list of float

        Raises
        ------
        FreeprobValueError
            A point is not a finite real number, ``xs`` is not sorted, ``rtol`` outside its
            range.
        PrecisionError
            If a point evaluated by the certified path cannot be certified.

        Source: this module's docstring; the rounding-error bound of Horner's rule
        (Higham, *Accuracy and Stability of Numerical Algorithms*, §5.1) divided by
        ``|∂_G P|`` (first-order perturbation of a simple root).
        """
        if isinstance(rtol, bool) or not isinstance(rtol, int | float) or not 1e-14 <= rtol <= 1e-3:
            raise FreeprobValueError(f"AlgebraicCauchy.density_float: rtol must be a float in [1e-14, 1e-3]; "
                                     f"got {rtol!r}")
        return [float(v) for v in self._grid(xs, 15, False, float(rtol), "density_float")]

    def _grid(self, xs, dps, ball, rtol, who):
        """:meth:`density_grid` (``rtol`` None) or :meth:`density_float` (``rtol``)."""
        pts = [_real_point(x, who, "xs") for x in xs]
        fl = [p.xf for p in pts]
        if any(b < a for a, b in zip(fl, fl[1:])):
            raise FreeprobValueError(f"AlgebraicCauchy.{who}: `xs` must be sorted (non-decreasing)")
        K = self._fkernel()
        special = self._special_floats()
        n = len(pts)
        out = [None] * n
        start = 0
        carry = self._grid_carry(pts, fl, special)
        for i in range(1, n):
            # a special point between two points (decided exactly when doubles cannot)
            if fl[i] != fl[i - 1] and self._crosses(special, fl[i - 1], fl[i]) \
                    and self._mp_crosses(pts[i - 1], pts[i], 256):
                self._grid_run(pts, fl, start, i, out, dps, ball, rtol, K, special, carry)
                start, carry = i, None
        if n:
            # the last point's root: the next grid (the next chunk of a tabulation) starts from it
            self._cache["grid_tail"] = self._grid_run(pts, fl, start, n, out, dps, ball, rtol, K, special, carry)
        return out

    def _grid_carry(self, pts, fl, special):
        """The root at the last point of the previous grid (``(point, float, sel, is_mp)``,
        kept by :meth:`_grid`) as the start of this grid's first run, when it lies just below
        the first point (at most 4 of this grid's largest steps away) with no special point
        in between (decided in doubles and at 256 bits): a tabulation in chunks then
        continues the root from chunk to chunk instead of tracking it from far up at each
        chunk's first point.  ``None`` otherwise."""
        tail = self._cache.get("grid_tail")
        if tail is None or len(fl) < 2 or tail[3]:
            return None
        step = max(b - a for a, b in zip(fl, fl[1:]))
        if not 0 < fl[0] - tail[1] <= 4 * step or self._crosses(special, tail[1], fl[0]) \
                or self._mp_crosses(tail[0], pts[0], 256):
            return None
        return tail

    def _grid_run(self, pts, fl, lo, hi, out, dps, ball, rtol, K, special, carry=None):
        """Evaluate the points ``lo .. hi − 1`` of a grid (no special point between them)
        into ``out``; ``carry``: the selected root at a point just below ``lo``
        (:meth:`_grid_carry`), the start of the forward sweep when the point ``lo`` is
        resolved by doubles.  Returns the ``(point, float, sel, is_mp)`` of the point
        ``hi − 1`` (``None`` if its root was not selected)."""
        # Points at which doubles do not resolve the distance to a special point (the
        # clusters at the ends of the run) need the root at more bits.  Rather than tracking
        # it from far up for each of them, it is continued along the real axis in acb (or
        # mpmath) from the neighbouring point (no special point in between, see
        # _mp_crosses).  So that the points before the first one where doubles suffice
        # also have a neighbour, they are visited backwards from it.
        first = lo
        while first < hi and not self._plan(pts[first])[1]:
            first += 1
        start = None
        if first == hi:
            first = lo
            # no point of the run resolved by doubles (all next to one special point): a
            # start on the same side of it, far enough for doubles, selected in doubles
            start = self._side_start(pts[lo], K)
        elif first == lo and carry is not None:
            start = carry
        else:
            first = self._run_start(pts, fl, first, hi)
        order = list(range(first, hi)) + list(range(first - 1, lo - 1, -1))

        def prev_missing_ok(xe):
            # continuing from afar is worth it where tracking from far up is costly:
            # the point is near a special point (doubles may not suffice)
            return self._nearest_special_gap(xe.xf)[0] <= 1e-6 * (1 + abs(xe.xf))
        prev = start    # (point, float, sel, is_mp) of the last point with a selected root
        anchor = None   # the same for the point ``first`` (restart of the backward sweep)
        tail = None     # the same for the point ``hi − 1`` (the forward sweep's last)
        for k, i in enumerate(order):
            if k == hi - first:
                tail, prev = prev, anchor
            xe, xf = pts[i], fl[i]
            sel = None
            if self._near_atom(xf) is not None:       # the continuous part is evaluated
                prev = None
                out[i] = self._density_exact_point(xe, dps, ball=ball)
                continue
            plan = self._plan(xe)
            cur = None
            if plan[1]:
                # (the run holds no special point, decided exactly in _grid; a neighbour
                # within 1e-12 of a special point in doubles is decided again exactly here,
                # rather than tracked from far up: next to a special point that is 4-30 ms.
                # Only from a root continued in doubles, i.e. at a point that doubles
                # resolve: not from a root at more bits right next to the special point)
                if prev is not None and (not self._crosses(special, prev[1], xf) or (
                        not prev[3] and not self._mp_crosses(prev[0], xe, 256))):
                    try:
                        psel = prev[2]
                        if prev[3]:     # from a root in mpmath
                            psel = (psel[0], complex(psel[1]), float(psel[2]))
                        sel = psel if xf == prev[1] else self._march(K, prev[1], xf, psel)
                    except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                        sel = None
                if sel is None and not self._is_special(xe):
                    try:
                        sel = self._select_boundary(K, xf)
                    except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                        sel = None
                if sel is not None and isinstance(sel[1], complex):
                    cur = (xe, xf, sel, False)
                    if rtol is not None and plan[0] == 0:
                        value = self._float_density(K, xf, sel, rtol)
                        if value is None:
                            value = self._wide_density(K, xe, sel, rtol)
                        if value is not None:
                            out[i] = value
                            prev = cur
                            if i == first:
                                anchor = cur
                            continue
            resel = None
            got = []
            if not self._is_special(xe):
                # if doubles do not suffice here (or the double root is not accurate
                # enough to be certified), the root continued in acb/mpmath from ``prev``,
                # or else from the nearest point selected earlier (e.g. by support())
                starts = [(prev[0], prev[2])] if prev is not None else []
                if prev_missing_ok(xe):
                    starts += sorted(self._cache.get("anchors", ()),
                                     key=lambda a, xf=xf: abs(a[0].xf - xf))[:2]
                if starts:
                    def resel(p1, starts=starts, xe=xe, got=got):
                        for x0, sel0 in starts:
                            r = self._march_mp(x0, sel0, xe, p1)
                            if r is not None:
                                got.append(r)
                                return r
                        return None
            if rtol is not None and resel is not None:
                # doubles do not resolve the point: its root continued at more bits from
                # the neighbour, then the density as at a point doubles do not certify
                wide = max(WIDE_PREC, -(-(plan[0] + 128) // 64) * 64)
                r = resel(wide)
                value = None if r is None else self._wide_density(K, xe, r, rtol, wide)
                if value is not None:
                    out[i] = value
                    prev = cur = (xe, xf, r, True)
                    if i == first:
                        anchor = cur
                    continue
                got.clear()
            out[i] = self._density_exact_point(xe, dps, sel, resel, ball=ball)
            if resel is not None and got:
                cur = (xe, xf, got[-1], True)
            prev = cur
            if i == first:
                anchor = cur
        return prev if first == lo else tail

    def _run_start(self, pts, fl, first, hi):
        """The point of ``first .. hi − 1`` at which a run's root is selected from far up
        (the sweeps start there): the one farthest (relative to ``1 + |x|``) from the special
        points, where the landing on the real axis takes a few steps, rather than ``first``,
        next to a special point, where it takes many (10–30 ms); ``first`` if that point is
        not resolved by doubles or is next to an atom.  Both sweeps continue the root with
        the same checks, so the values are those of a start at ``first`` (within the
        rounding of the double root, far below ``rtol``)."""
        best, gap = first, -1.0
        for i in range(first, hi):
            g = self._nearest_special_gap(fl[i])[0] / (1 + abs(fl[i]))
            if g > gap:
                best, gap = i, g
        if best == first or self._near_atom(fl[best]) is not None or not self._plan(pts[best])[1]:
            return first
        return best

    def _side_start(self, pt, K):
        """``(point, float, sel, False)``: the root selected in doubles at a point on the
        same side of the special point nearest to ``pt`` as ``pt``, ``10⁻⁹``–``10⁻⁵``
        (relative) away from it, with no special point between it and ``pt``; ``None`` if
        there is none (the caller tracks from far up)."""
        special = self._special_floats()
        _, j = self._nearest_special_gap(pt.xf)
        if j is None:
            return None
        spm = self._special_mp()
        with mpmath.workprec(256):
            x = mpmath.mpf(pt.mpf(256))
            if x == spm[j]:
                return None
            side = 1 if x > spm[j] else -1
        for scale in (1e-9, 1e-7, 1e-5):
            y = special[j] + side * scale * (1 + abs(special[j]))
            ypt = _real_point(y, "density_grid")
            if not self._plan(ypt)[1] or self._mp_crosses(ypt, pt, 256):
                continue
            try:
                return ypt, y, self._select_boundary(K, y), False
            except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                continue
        return None

    def _float_density(self, K, xf, sel, rtol):
        """The density at the float ``xf`` from the root ``sel = (kind, g, ρ)`` continued
        in doubles, polished by Newton's method in doubles; ``None`` unless its estimated
        rounding error is below ``rtol`` times ``|Im g|`` (see :meth:`density_float`)."""
        kind, g, rho = sel
        if kind == "real":
            return 0.0          # decided with a margin (|Im g| ≤ ρ/4 − err, ρ > 64 err)
        if kind != "complex":
            return None
        # the values at xf of the march that ended there (the same Horner sums), if any
        mv = getattr(self, "_march_values", None)
        A = mv[2] if mv is not None and mv[0] is K and mv[1] == xf else K.values(xf)
        g1 = K.newton(A, g, abs(g))
        if g1 is None or not abs(g1 - g) <= rho / 8 or not g1.imag < 0:
            return None
        _, q = _pvals(A, g1)
        if not q:
            return None
        # Horner in z then in G: at most (deg_z + deg_G + 2) roundings of relative size eps
        err = 2 * K.horner_steps * K.eps * _abs_sum(K, abs(xf), abs(g1)) / abs(q)
        if not err <= rtol * -g1.imag:
            return None
        return -g1.imag / math.pi

    def _wide_density(self, K, xe, sel, rtol, prec=WIDE_PREC):
        """:meth:`_float_density` at ``prec`` bits (a multiple of 64; default
        :data:`WIDE_PREC`) where doubles do not give the density to ``rtol``: next to an
        edge or a cut point ``|∂_G P|`` and ``Im g`` are both small, and within 10⁻¹² of a
        special point doubles do not resolve the point.  The root ``sel`` (doubles, or
        continued at more bits from a neighbour: :meth:`_march_mp`) is polished by Newton's
        method at the exact point ``xe`` on the acb kernel, with the same checks (the
        polished root within ``ρ/8`` of ``sel``, in the lower half-plane) and the same
        rounding-error bound with ``eps = 2^-prec``; ``None`` when they fail (the certified
        path then evaluates the point).  A fifth to a tenth of that path's cost at such
        points, and the same float (its error is far below an ulp)."""
        kind, g, rho = sel
        if kind == "real":
            return 0.0          # decided with a margin by the continuation (as in _float_density)
        if kind != "complex":
            return None
        try:
            with mpmath.workprec(prec):
                x = mpmath.mpf(xe.mpf(prec))
                W = self._akernel(prec)
                with flint_precision(flint.ctx.cap, prec):
                    g0 = _acb_exact(g)
                    A = W.values(_acb_exact(x))
                    g1 = W.newton(A, g0, abs(complex(g0)))
                    if g1 is None:
                        return None
                    q = abs(complex(_pvals(A, g1)[1]))
                    step = abs(complex(g1 - g0))
                    gc = complex(g1)
                    value = float((-g1.imag / flint.arb.pi()).mid())
        except (_Fail, OverflowError, ZeroDivisionError, ValueError, TypeError):
            return None
        if not step <= float(rho) / 8 or not gc.imag < 0 or not q > 0:
            return None
        # as in _float_density; the double kernel's |c| are within a relative 2^-52 of the
        # exact ones: a factor 2 covers it
        err = 4 * K.horner_steps * 2.0 ** -prec * _abs_sum(K, abs(xe.xf), abs(gc)) / q
        if not err <= rtol * -gc.imag:
            return None
        return value

    def _march_mp(self, x0, sel0, x1, p1):
        """The selected root at the exact point ``x1``, continued at ``p1`` bits along the
        real axis from the selected root ``sel0`` at ``x0`` (doubles or mpmath); ``None``
        if a special point may lie between ``x0`` and ``x1`` or the continuation fails.
        On python-flint ``acb`` midpoints (:meth:`_march_acb`; the same steps and tests,
        several times faster), mpmath when that fails.  :meth:`_boundary_value`
        polishes and certifies it."""
        if self._mp_crosses(x0, x1, p1):
            return None
        with mpmath.workprec(max(p1, 256)):
            if mpmath.mpf(x0.mpf(max(p1, 256))) == mpmath.mpf(x1.mpf(max(p1, 256))):
                # the same point (a node repeated in the grid): its root, certified again
                kind, g, rho = sel0
                return kind, mpmath.mpc(g), mpmath.mpf(rho)
        out = self._march_acb(x0, sel0, x1, p1)
        return out if out is not None else self._march_mpmath(x0, sel0, x1, p1)

    def _stages(self, a, b):
        """The points ``a = c_0, c_1, …, b`` (mpf) of a continuation from ``a`` to ``b``:
        the tracker gives up on steps below 1e-13 of the span, so a point much nearer to a
        special point than to ``a`` is approached in stages, each 1e-6 of the previous
        distance.  Call under ``mpmath.workprec``."""
        dist = min([abs(b - sv) for sv in self._special_mp()] + [abs(b - a)])
        out, c = [a], a
        while abs(c - b) > 1e4 * dist:
            c = b + (c - b) * mpmath.mpf(10) ** -6
            out.append(c)
        out.append(b)
        return out

    def _march_acb(self, x0, sel0, x1, p1):
        """:meth:`_march_mp` on the acb kernel at ``p1`` bits rounded up to a multiple of 64
        (one kernel per 64 bits); ``(kind, mpc g, mpf ρ)`` or ``None``.  Sets
        python-flint's precision for the duration only."""
        tp = -(-p1 // 64) * 64
        try:
            with mpmath.workprec(tp):
                a, b = mpmath.mpf(x0.mpf(tp)), mpmath.mpf(x1.mpf(tp))
                if a == b:
                    return None
                stages = self._stages(a, b)
                K = self._akernel(tp)
                with flint_precision(flint.ctx.cap, tp):
                    kind, g, rho = sel0
                    g = _acb_exact(g)
                    A = K.values(_acb_exact(a))
                    rho = flint.arb(_acb_exact(mpmath.mpf(rho)).real)
                    g = K.newton(A, g, max(abs(g), rho))
                    if g is None:
                        return None
                    sel = (kind, g, _separation(_taylor(A, g)))
                    for u, v in zip(stages, stages[1:]):
                        ua, va = _acb_exact(u), _acb_exact(v)
                        sel = self._march(K, 0.0, 1.0, sel,
                                          lambda t, ua=ua, va=va: va if t == 1.0 else (ua + (va - ua) * t).mid())
                    kind, g, rho = sel
                    rho = mpmath.mpf(rho) if isinstance(rho, float | int) else _arb_mid_mpf(rho)
                    return kind, _acb_to_mpc(g), rho
        except (_Fail, OverflowError, ZeroDivisionError, ValueError):
            return None

    def _march_mpmath(self, x0, sel0, x1, p1):
        """:meth:`_march_mp` in mpmath at ``p1`` bits; ``(kind, mpc g, mpf ρ)`` or ``None``."""
        try:
            with mpmath.workprec(p1):
                K = self._mkernel(p1)
                a, b = mpmath.mpf(x0.mpf(p1)), mpmath.mpf(x1.mpf(p1))
                if a == b:
                    return None
                kind, g, rho = sel0
                g = mpmath.mpc(g)
                A = K.values(a)
                g = K.newton(A, g, max(abs(g), mpmath.mpf(rho)))
                if g is None:
                    return None
                sel = (kind, g, _separation(_taylor(A, g)))
                stages = self._stages(a, b)
                for u, v in zip(stages, stages[1:]):
                    sel = self._march(K, u, v, sel)
                return sel
        except (_Fail, OverflowError, ZeroDivisionError, ValueError):
            return None

    def _special_mp(self):
        """The special points as mpf at 200 bits (sorted, as :meth:`_special_points`)."""
        def fn():
            with mpmath.workprec(200):      # (mpf() rounds to the working precision)
                return [mpmath.mpf(_to_mpf(p, 200)) if isinstance(p, sp.Basic) else +p
                        for p in self._special_points()]
        return self._memo("pointsmp", fn)

    def _mp_crosses(self, x0, x1, prec):
        """True unless no special point is within ``2^-100`` (relative) of the real segment
        between the exact points ``x0`` and ``x1`` (special points at 200 bits or exact)."""
        spm = self._special_mp()
        wp = max(prec, 256)
        with mpmath.workprec(wp):
            a, b = mpmath.mpf(x0.mpf(wp)), mpmath.mpf(x1.mpf(wp))
            lo, hi = min(a, b), max(a, b)
            for s in spm:
                tol = mpmath.mpf(2) ** -100 * (1 + abs(s))
                if lo - tol <= s <= hi + tol:
                    return True
        return False

    @staticmethod
    def _crosses(special, a, b):
        i = bisect.bisect_left(special, min(a, b) - 1e-12 * (1 + abs(a)))
        return i < len(special) and special[i] <= max(a, b) + 1e-12 * (1 + abs(b))
