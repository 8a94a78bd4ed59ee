r"""The distribution function and quantiles on the numeric path (a mixin of
:class:`~freeprob.numeric.ovcauchy.OperatorValuedCauchy`).

``F(b) − F(a) = −(1/π) Im ∫_γ G_p(z) dz`` for real ``a < b`` (neither an atom) and any path
``γ`` from ``a`` to ``b`` through the upper half-plane, where ``G_p`` is analytic and
continuous up to the axis away from atoms (Stieltjes inversion and Cauchy's theorem,
[MS17]_ §2.1): atoms between ``a`` and ``b`` are included.  ``γ`` is the rectangle
``a → a + iH → b + iH → b``; on the vertical sides ``z = x + iHt²`` (a square-root edge at
``x`` becomes analytic in ``t``), each side by Gauss–Legendre rules of 12, 24, 48, … nodes
until two agree to ``10^{-dps-2}``; every value of ``G_p`` is certified to ``dps + 3``
digits (:mod:`freeprob.numeric.ovcauchy`).  ``F(x)`` starts from a point ``L`` left of the
bounds of the spectrum (``F(L) = 0``).  Quantiles: Newton's method on ``F(x) = p`` inside
the support interval that holds ``p``, with the increments of ``F`` between iterates by
short rectangles and the density as the derivative, safeguarded by bisection.

Source: [MS17]_ §2.1 (Stieltjes inversion); Gauss–Legendre nodes from mpmath.
"""
from __future__ import annotations

import mpmath
import numpy as np

from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.numeric.balls import check_ball
from freeprob.numeric.ovpath import NO_BALL, arb_mpf, one_blas_thread
from freeprob.numeric.rootkernel import _bits, _check_dps, _real_point

__all__ = []

#: Gauss–Legendre degrees tried (3·2^(m−1) nodes)
_DEGREES = (3, 4, 5, 6, 7, 8)


class _OVQuadrature:
    """Mixin: :meth:`cdf` and :meth:`quantile` (module docstring)."""

    def _g_at(self, z, dps):
        """``G_p(z)`` (mpc) at an mpc ``z`` with ``Im z > 0``, certified to ``dps`` digits."""
        re = _real_point(z.real, "cdf", "z")     # the exact parts (mpf() would round them)
        im = _real_point(z.imag, "cdf", "z")
        g, _, _ = self._certified(re, im, dps, lambda g, r: r <= 10.0 ** (-dps - 1) * float(abs(g).upper()),
                                  krawczyk=False)
        return mpmath.mpc(arb_mpf(g.real), arb_mpf(g.imag))

    def _segment(self, path, dps):
        """``∫_0^1 G(z(t)) z′(t) dt`` for ``path(t) -> (z, z′)`` by Gauss–Legendre."""
        prec = _bits(dps + 5)
        gl = mpmath.calculus.quadrature.GaussLegendre(mpmath.mp)
        tol = mpmath.mpf(10) ** (-dps - 2)
        last = None
        with mpmath.workprec(prec):
            for m in _DEGREES:
                total = mpmath.mpc(0)
                for x, w in sorted(gl.calc_nodes(m, prec), reverse=True):   # from t = 1 down
                    t = (x + 1) / 2
                    z, dz = path(t)
                    total += w * self._g_at(z, dps + 3) * dz / 2
                if last is not None and abs(total - last) <= tol:
                    return total
                last = total
        raise PrecisionError(f"OperatorValuedCauchy.cdf: the quadrature does not reach {dps} digits "
                             "(a support edge or an atom next to the path)")

    def _increment(self, a, b, H, dps):
        """``F(b) − F(a)`` (mpf) over the rectangle of height ``H`` (module docstring)."""
        with mpmath.workprec(_bits(dps + 5)):
            a, b, H = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(H)
            j = mpmath.mpc(0, 1)
            up = self._segment(lambda t: (a + j * H * t * t, 2 * j * H * t), dps)
            top = self._segment(lambda t: (a + (b - a) * t + j * H, b - a), dps)
            down = self._segment(lambda t: (b + j * H * t * t, 2 * j * H * t), dps)
            return -(up + top - down).imag / mpmath.pi

    @one_blas_thread
    def cdf(self, x, *, dps=15, ball=False):
        r"""``F(x) = μ_p((−∞, x])`` by the contour integral of the module docstring (atoms
        included); exactly 0 left and 1 right of the bounds of the spectrum.

        Raises
        ------
        FreeprobValueError
            ``x`` not a finite real number, bad ``dps``.
        NotAvailable
            ``ball=True``.
        PrecisionError
            The quadrature does not reach ``dps`` digits (e.g. ``x`` at an atom).
        """
        dps = _check_dps(dps, "cdf")
        if check_ball(ball, "cdf"):
            raise NotAvailable(f"OperatorValuedCauchy.cdf: {NO_BALL}")
        xe = _real_point(x, "cdf")
        if xe.xf < self.lo:
            return mpmath.mpf(0)
        if xe.xf >= self.hi:
            return mpmath.mpf(1)
        L = self.lo - 0.05 * self.width
        with mpmath.workprec(_bits(dps + 5)):
            xm = mpmath.mpf(xe.mpf(_bits(dps + 5)))
            out = self._increment(mpmath.mpf(L), xm, 0.5 * self.width, dps)
        with mpmath.workdps(dps):
            return +min(max(out, mpmath.mpf(0)), mpmath.mpf(1))

    @one_blas_thread
    def quantile(self, p, *, dps=15, ball=False):
        r"""``Q(p) = inf{x : F(x) ≥ p}`` for ``p`` in ``[0, 1]``: Newton's method on ``F``
        (module docstring).  ``p = 0``, ``1``: the ends of the support; ``p`` within
        ``10^{-dps}`` above the mass left of a gap: the gap's left end.

        Raises
        ------
        FreeprobValueError
            ``p`` outside ``[0, 1]``; bad ``dps``.
        NotAvailable
            ``ball=True``; a variable with atoms (:meth:`atoms`).
        PrecisionError
            The quadratures or the edges cannot be certified.
        """
        dps = _check_dps(dps, "quantile")
        if check_ball(ball, "quantile"):
            raise NotAvailable(f"OperatorValuedCauchy.quantile: {NO_BALL}")
        pe = _real_point(p, "quantile", "p")
        if not (0 <= pe.expr <= 1):
            raise FreeprobValueError(f"OperatorValuedCauchy.quantile: `p` must be in [0, 1]; got {p!r}")
        self.atoms(dps=dps)
        sup = self.support(dps=dps + 5)
        prec = _bits(dps + 5)
        with mpmath.workprec(prec):
            target = mpmath.mpf(pe.mpf(prec))
            if target == 0:
                with mpmath.workdps(dps):
                    return +sup[0][0]
            tau = mpmath.mpf(10) ** (-dps)
            cum = mpmath.mpf(0)
            for i, (a, b) in enumerate(sup):
                last = i + 1 == len(sup)
                right = mpmath.mpf(1) if last else self.cdf(b + (sup[i + 1][0] - b) / 2, dps=dps + 3)
                if target <= right:
                    x = self._invert(a, b, cum, target, right, dps)
                    with mpmath.workdps(dps):
                        return +x
                if not last and target <= right + tau:
                    with mpmath.workdps(dps):
                        return +b
                cum = right
            with mpmath.workdps(dps):
                return +sup[-1][1]

    def _invert(self, a, b, Fa, target, Fb, dps):
        """``x`` in ``[a, b]`` with ``F(x) = target`` (``F(a) = Fa``, ``F(b) = Fb``)."""
        xs = np.linspace(float(a), float(b), 201)
        d = np.nan_to_num(self.density_float(xs))
        cum = np.concatenate([[0.0], np.cumsum((d[1:] + d[:-1]) / 2 * np.diff(xs))])
        cum = float(Fa) + cum * (float(Fb) - float(Fa)) / max(cum[-1], 1e-300)
        x = mpmath.mpf(float(np.interp(float(target), cum, xs)))
        lo, hi = mpmath.mpf(a), mpmath.mpf(b)
        F = self.cdf(x, dps=dps + 3)
        H = mpmath.mpf(self.width) / 64
        for _ in range(60):
            if F < target:
                lo = max(lo, x)
            else:
                hi = min(hi, x)
            rho = self.density(x, dps=dps + 3)
            step = (target - F) / rho if rho > 0 else None
            nx = x + step if step is not None else None
            if nx is None or not (lo < nx < hi):
                nx = (lo + hi) / 2
            if abs(nx - x) <= mpmath.mpf(10) ** (-dps - 2) * max(abs(nx), mpmath.mpf(self.width) * 1e-3):
                return nx
            F = F + self._increment(x, nx, min(abs(nx - x), H), dps + 3)
            x = nx
        raise PrecisionError(f"OperatorValuedCauchy.quantile: Newton's method did not converge at p = {target}")
