r"""The Cauchy transform of a linearized polynomial by operator-valued subordination.

:class:`OperatorValuedCauchy` takes a self-adjoint linearization ``L = b_0 ⊗ 1 + Σ_j b_j ⊗
x_j`` (``k × k``, exact Hermitian matrices) of a polynomial ``p`` in free variables ``x_j``
given by their algebraic Cauchy equations (:class:`~freeprob.numeric.cauchy.AlgebraicCauchy`),
and evaluates ``G_p(z) = [E(Λ(z) − L)^{-1}]_{11}``, ``Λ(z) = diag(z, 0, …, 0)`` ([AND13]_,
[BMS17]_ §4), the density ``−Im G_p(x + i0)/π``, the support, the cdf and quantiles, with the
same methods as :class:`~freeprob.numeric.cauchy.AlgebraicCauchy`.  It knows nothing of laws.

Method
------
* The equation: the subordination system of [BMS17]_ reduced to ``r_j × r_j`` unknowns per
  piece (:mod:`freeprob.numeric.ovsystem`; semicircular pieces as in [HRS07]_), solved by
  Newton's method with the analytic Jacobian.
* The branch: Newton at a point far up (``z = c + iY``, ``Y`` ten times the spectrum's
  extent, started from the series at infinity), then predictor–corrector continuation
  (:mod:`freeprob.numeric.ovpath`) to a horizontal line at height ``h`` above the spectrum
  (the *ceiling*, solutions kept), along it, and vertically down to the target; a real
  target is reached at ``ε = 0`` (the limit ``Λ_ε → Λ`` is analytic where the Jacobian is
  invertible), not at a fixed small ``ε``.
* The bound: the double-precision solution is polished in python-flint ``acb`` arithmetic
  at ``dps + 10`` digits and Krawczyk's test proves the solution of the equation within a
  radius ``r`` ([RUM10]_ §8); the value is returned when ``r ≤ 10^{-dps-1}`` of it (the
  precision is raised twice, then :class:`~freeprob.errors.PrecisionError`).  A density
  whose ball contains 0 is returned as an exact 0 when ``r ≤ 10^{-dps-1}|G|``.  The test
  certifies the equation's solution, not the branch: ``ball=True`` is refused
  (:class:`~freeprob.errors.NotAvailable`).

Sources: [AND13]_, [BMS17]_, [HRS07]_, [RUM10]_, [MS17]_ ch. 9–10.
"""
from __future__ import annotations

import bisect
import math

import flint
import mpmath
import numpy as np

from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.numeric.balls import check_ball, enclose
from freeprob.numeric.ovpath import NO_BALL as _NO_BALL
from freeprob.numeric.ovpath import TrackFailure, arb_mpf as _to_mpf, certify, newton, one_blas_thread, track
from freeprob.numeric.ovquad import _OVQuadrature
from freeprob.numeric.ovsupport import _OVSupport
from freeprob.numeric.ovsystem import OVSystem, ScalarVariable, scalar_variable
from freeprob.numeric.rootkernel import GUARD_DPS, _bits, _check_dps, _complex_point, _is_nonreal_input, _real_point

__all__ = ["OperatorValuedCauchy"]

_WHO = "OperatorValuedCauchy"
#: extra guard digits tried after GUARD_DPS when the Krawczyk radius is too wide
_MORE_GUARDS = (2 * GUARD_DPS, 4 * GUARD_DPS)
#: most continuation steps along the real axis from one point to the next
_AXIS_STEPS = 12
#: ceiling solutions kept (a sorted list)
_MAX_CEILING = 20000


class OperatorValuedCauchy(_OVSupport, _OVQuadrature):
    r"""Numeric Cauchy transform, density, support, cdf and quantiles of a polynomial in
    free variables from its linearization (module docstring).

    Parameters
    ----------
    b0 : sympy Matrix
        ``k × k`` Hermitian (exact), the constant part of ``L``.
    bs : sequence of sympy Matrix
        ``b_j``, ``k × k`` Hermitian (exact), one per variable.
    variables : sequence of AlgebraicCauchy or ScalarVariable
        The laws of the ``x_j`` by their Cauchy equations.
    bounds : (float, float)
        An interval known to contain the spectrum of ``p`` (support and atoms), e.g. from
        ``|p| ≤ Σ_w |c_w| Π ‖x‖``: the range of the support scan, and ``F = 0`` / ``1``
        outside it.
    scale : (float, float), optional
        ``(mean, standard deviation)`` of ``μ_p`` (from its exact moments): the height of
        the ceiling (one standard deviation) and of the far start.  Default: from
        ``bounds``.

    Raises
    ------
    FreeprobValueError
        Bad matrices, ``bounds`` not an interval of finite numbers.
    PrecisionError
        Newton's method does not converge at the far start (a degenerate linearization).

    Notes
    -----
    Every numeric method takes a keyword-only ``dps`` (int >= 1, default 15) and returns
    mpmath numbers correct to ``dps`` digits within the a-posteriori bound of the module
    docstring, or raises :class:`PrecisionError`.  ``ball=True`` raises
    :class:`NotAvailable`.
    """

    @one_blas_thread
    def __init__(self, b0, bs, variables, *, bounds, scale=None):
        vs = [v if isinstance(v, ScalarVariable) else scalar_variable(v) for v in variables]
        try:
            lo, hi = (float(b) for b in bounds)
        except (TypeError, ValueError) as exc:
            raise FreeprobValueError(f"{_WHO}: `bounds` must be two real numbers; got {bounds!r}") from exc
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise FreeprobValueError(f"{_WHO}: `bounds` must be a finite interval lo < hi; got {bounds!r}")
        self.S = OVSystem(b0, bs, vs)
        self.variables = vs
        self.lo, self.hi = lo, hi
        self.width = hi - lo
        self.center = (lo + hi) / 2
        if scale is None:
            mean, sd = self.center, self.width / 4
        else:
            mean, sd = (float(v) for v in scale)
            if not (math.isfinite(mean) and math.isfinite(sd) and sd > 0):
                raise FreeprobValueError(f"{_WHO}: `scale` must be (mean, standard deviation > 0); got {scale!r}")
        self.center, self.ceiling = min(max(mean, lo), hi), sd
        self._zfar = complex(self.center, 10 * (self.width + abs(self.center)) + 1)
        try:
            u, J, _ = newton(self.S, self.S.far_start(self._zfar), self._zfar, maxit=40)
        except TrackFailure as exc:
            raise PrecisionError(f"{_WHO}: Newton's method does not converge far from the "
                                 f"spectrum ({exc})") from None
        g = u[0] * self._zfar
        if abs(g - 1) > 0.5:                                  # G(z) ≈ 1/z far away
            raise PrecisionError(f"{_WHO}: the far start is not on the branch G ~ 1/z")
        self._far = (u, J)
        self._ceil_x = []                 # sorted x of the ceiling solutions
        self._ceil_uj = []
        self._cache = {}
        self._last = None

    def __repr__(self):
        return f"OperatorValuedCauchy(k={self.S.k}, pieces={len(self.variables)})"

    # -- paths ---------------------------------------------------------------------------
    def _ceiling_at(self, x):
        """The solution at ``x + i·ceiling`` (tracked along the ceiling, kept)."""
        xs = self._ceil_x
        i = bisect.bisect_left(xs, x)
        if i < len(xs) and xs[i] == x:
            return self._ceil_uj[i]
        if not xs:
            u, J = track(self.S, *self._far, self._zfar, complex(self.center, self.ceiling))
            self._insert(self.center, u, J)
            if x == self.center:
                return u, J
            i = bisect.bisect_left(xs, x)
        j = min((c for c in (i - 1, i) if 0 <= c < len(xs)), key=lambda c: abs(xs[c] - x))
        u, J = track(self.S, *self._ceil_uj[j], complex(xs[j], self.ceiling), complex(x, self.ceiling),
                     hmax=0.5 * self.ceiling)
        self._insert(x, u, J)
        return u, J

    def _insert(self, x, u, J):
        if len(self._ceil_x) >= _MAX_CEILING:
            del self._ceil_x[::2], self._ceil_uj[::2]
        i = bisect.bisect_left(self._ceil_x, x)
        self._ceil_x.insert(i, x)
        self._ceil_uj.insert(i, (u, J))

    def _double(self, z, axis=True):
        """``(u, J)`` in doubles at ``z`` (``Im z ≥ 0``).  From the last point: along the
        real axis between real points (at most :data:`_AXIS_STEPS` steps: a support edge
        between them stops it), straight down, or within its height of it; else from the
        ceiling, vertically."""
        z = complex(z)
        last = self._last
        if last is not None:
            zl, ul, Jl = last
            axis = axis and zl.imag == 0 and z.imag == 0
            if axis or (zl.imag > 0 and ((z.real == zl.real and z.imag < zl.imag)
                                         or abs(z - zl) <= min(zl.imag, max(z.imag, 0.5 * zl.imag)))):
                try:
                    u, J = track(self.S, ul, Jl, zl, z, max_steps=_AXIS_STEPS if axis else 1000)
                    self._last = (z, u, J)
                    return u, J
                except TrackFailure:
                    pass
        try:
            u, J = self._ceiling_at(z.real)
            u, J = track(self.S, u, J, complex(z.real, self.ceiling), z)
        except TrackFailure as exc:
            where = f"x = {z.real:.17g}" if z.imag == 0 else f"z = {z}"
            raise PrecisionError(
                f"{_WHO}: the continuation to {where} failed ({exc}): the equation is singular "
                "there or within rounding of it (a support edge, an atom, or another branch "
                "point; the numeric path does not evaluate the absolutely continuous part at an "
                "atom): move the point off it") from None
        self._last = (z, u, J)
        return u, J

    def _certified(self, re, im, dps, need, krawczyk=True):
        """``(G_11 as acb midpoint, r)`` at the exact point ``re + i·im`` (:func:`_real_point`
        values; ``im`` None for a real point) with ``need(g, r)`` true, escalating the guard."""
        z0 = complex(re.xf, 0.0 if im is None else im.xf)
        u, J = self._double(z0)
        last = None
        for guard in (GUARD_DPS, *_MORE_GUARDS):
            prec = _bits(dps + guard)
            with flint.ctx.workprec(prec):
                zr = enclose(re, prec)
                zb = flint.acb(zr, 0 if im is None else enclose(im, prec))
                v, r = certify(self.S, u, J, zb, prec, krawczyk=krawczyk)
                g = v[0]
                if need(g, r):
                    return g, r, prec
                last = r
        raise PrecisionError(f"{_WHO}: at z = {z0} the a-posteriori bound {last:.3g} does not "
                             f"reach {dps} digits")

    # -- public API ----------------------------------------------------------------------
    @one_blas_thread
    def cauchy(self, z, *, dps=15, ball=False):
        r"""``G_p(z) = ∫ dμ_p(t)/(z − t)``: ``[E(Λ(z) − L)^{-1}]_{11}`` ([AND13]_, [BMS17]_).

        ``z`` complex with ``Im z ≠ 0`` (``G(z̄) = \overline{G(z)}``), or real outside the
        support.  Returns ``mpmath.mpc`` (``mpf`` for real ``z``).

        Raises
        ------
        FreeprobValueError
            Bad ``z`` or ``dps``; real ``z`` in the support.
        NotAvailable
            ``ball=True`` (the module docstring says why).
        PrecisionError
            The bound does not reach ``dps`` digits.
        """
        dps = _check_dps(dps, "cauchy")
        if check_ball(ball, "cauchy"):
            raise NotAvailable(f"{_WHO}.cauchy: {_NO_BALL}")
        if _is_nonreal_input(z):                # (the parts read as AlgebraicCauchy.cauchy reads them)
            re, im = _complex_point(z, "cauchy")
        else:
            try:
                import sympy as sp
                zz = sp.sympify(z)
                re, im = _real_point(sp.re(zz), "cauchy", "z"), _real_point(sp.im(zz), "cauchy", "z")
            except (TypeError, ValueError, AttributeError) as exc:
                raise FreeprobValueError(f"{_WHO}.cauchy: `z` must be a number; got {z!r}") from exc
        flip = im.xf < 0
        if flip:
            im = _real_point(-im.expr, "cauchy", "z")
        real = im.xf == 0 and im.expr == 0

        def need(g, r):
            return r <= 10.0 ** (-dps - 1) * float(abs(g).upper())

        g, r, _ = self._certified(re, None if real else im, dps, need)
        with mpmath.workdps(dps):
            if real:
                if float(abs(g.imag).upper()) > r:
                    raise FreeprobValueError(f"{_WHO}.cauchy: z = {re} is real and in the support "
                                             "(branch cut); pass a non-real z or use density")
                return +_to_mpf(g.real)
            out = mpmath.mpc(_to_mpf(g.real), _to_mpf(g.imag))
            return +(out.conjugate() if flip else out)

    def _density_at(self, pt, dps):
        def need(g, r):
            im = float(abs(g.imag).upper())
            if im <= r:                                          # 0 within the bound
                return r <= 10.0 ** (-dps - 1) * float(abs(g).upper())
            return r <= 10.0 ** (-dps - 1) * im
        g, r, prec = self._certified(pt, None, dps, need)
        if float(abs(g.imag).upper()) <= r:
            return mpmath.mpf(0)
        with mpmath.workprec(prec):
            val = -_to_mpf(g.imag) / mpmath.pi
        with mpmath.workdps(dps):
            return +val

    @one_blas_thread
    def density(self, x, *, dps=15, ball=False):
        r"""Density ``−Im G_p(x + i0)/π`` ([MS17]_ §2.1) at a real ``x`` (``mpf``; an exact
        ``0`` where the bound contains 0: outside the support).

        Raises
        ------
        FreeprobValueError
            ``x`` not a finite real number, bad ``dps``.
        NotAvailable
            ``ball=True``.
        PrecisionError
            The bound does not reach ``dps`` digits (e.g. ``x`` at a support edge or an
            atom, where the equation is singular).
        """
        dps = _check_dps(dps, "density")
        if check_ball(ball, "density"):
            raise NotAvailable(f"{_WHO}.density: {_NO_BALL}")
        return self._density_at(_real_point(x, "density"), dps)

    @one_blas_thread
    def density_grid(self, xs, *, dps=15, ball=False):
        r"""The density at each point of a sorted sequence ``xs`` (as :meth:`density`); the
        ceiling solutions are reused from one point to the next.

        Raises as :meth:`density`; ``xs`` not sorted: ``FreeprobValueError``.
        """
        dps = _check_dps(dps, "density_grid")
        if check_ball(ball, "density_grid"):
            raise NotAvailable(f"{_WHO}.density_grid: {_NO_BALL}")
        pts = [_real_point(x, "density_grid", "xs") for x in xs]
        fl = [p.xf for p in pts]
        if any(b < a for a, b in zip(fl, fl[1:])):
            raise FreeprobValueError(f"{_WHO}.density_grid: `xs` must be sorted (non-decreasing)")
        return [self._density_at(p, dps) for p in pts]

    @one_blas_thread
    def density_float(self, xs, axis=True):
        r"""The density at the points ``xs`` in double precision only (no bound): the
        support scan's and plots' fast path.  Returns a numpy array; points where the
        continuation fails are ``nan``.  ``axis=False``: each point from the ceiling (not
        along the real axis from the previous one)."""
        out = np.full(len(xs), np.nan)
        for i, x in enumerate(xs):
            try:
                u, _ = self._double(complex(float(x), 0.0), axis=axis)
            except PrecisionError:
                continue
            out[i] = -u[0].imag / math.pi
        return out

    def atoms(self, *, dps=15, ball=False):
        r"""Atoms of ``μ_p``: none when no variable has an atom (a non-constant
        self-adjoint polynomial in free variables without atoms has no atoms: [MSW17]_,
        [CS16]_, full free entropy dimension).

        Raises
        ------
        NotAvailable
            Some variable has an atom (the numeric path does not locate atoms of ``p``), or
            ``ball=True``.
        """
        _check_dps(dps, "atoms")
        if check_ball(ball, "atoms"):
            raise NotAvailable(f"{_WHO}.atoms: {_NO_BALL}")
        if any(v.atomic for v in self.variables):
            raise NotAvailable(
                f"{_WHO}.atoms: a variable has atoms, so p may have some; the numeric path does "
                "not locate them (the exact Cauchy equation does, where it can be derived)")
        return ()

    def cut_points(self, *, dps=15):
        """Not available on the numeric path (they come from the exact equation's branch
        points): :class:`NotAvailable`."""
        raise NotAvailable(f"{_WHO}.cut_points: the cut points are the branch points of the exact "
                           "Cauchy equation; the numeric path has none")
