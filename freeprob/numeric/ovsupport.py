r"""The support of a linearized polynomial's law on the numeric path (a mixin of
:class:`~freeprob.numeric.ovcauchy.OperatorValuedCauchy`).

1. Scan: the density in double precision at 257 points across the bounds of the spectrum
   (shifted off rational points); the support is where it exceeds ``10^{-8}`` of its
   maximum; around every interior local minimum of the samples, and between neighbours
   whose densities differ by a factor above 1.5, 31 more points look for a gap narrower
   than the spacing.  A component (or a gap away from a local minimum)
   narrower than the spacing (``1/256`` of the bounds) can still be missed; a gap that
   closes under bisection (the density touching 0) is merged.
2. Each edge is bracketed by bisection in doubles (to ``10^{-6}`` of the bounds) and then
   located as the fold of the solution curve: a square-root edge ``e`` is a branch point
   where ``z(s) ≈ e − c(s − s*)²`` along the curve ``F(u, z) = 0`` parametrized by the
   coordinate ``s = u_i`` that the tangent ``du/dz`` favours; ``dz/ds``, from the Jacobian
   with column ``i`` replaced by ``∂F/∂z``, vanishes at ``s*``, and a secant iteration on it
   converges superlinearly; ``e = z(s*)``.  It runs in doubles, then in python-flint ``acb``
   at ``dps + 10`` and ``dps + 20`` digits; the two must agree to ``dps`` digits, else
   :class:`~freeprob.errors.PrecisionError` (an edge that is not a square-root branch
   point: two touching intervals, a cusp, an atom).

Source: [BMS17]_ (the equation), the fold of a parametrized solution curve (standard in
continuation methods); the rules above are the project's design.
"""
from __future__ import annotations

import flint
import mpmath
import numpy as np

from freeprob.errors import NotAvailable, PrecisionError
from freeprob.numeric.balls import check_ball
from freeprob.numeric.ovpath import NO_BALL, TrackFailure, one_blas_thread
from freeprob.numeric.rootkernel import GUARD_DPS, _bits, _check_dps

__all__ = []

_SCAN = 257
_ZOOM = 31
_BISECT = 1e-6


def _solve_lin(A, b):
    """``A^{-1} b`` for numpy complex arrays, or for object arrays of acb (midpoints)."""
    if A.dtype != object:
        return np.linalg.solve(A, b)
    n = A.shape[0]
    M = flint.acb_mat(n, n, list(A.ravel()))
    x = M.solve(flint.acb_mat(n, 1, list(b)), nonstop=True)
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = x[i, 0].mid()
    return out


class _OVSupport:
    """Mixin: :meth:`support` (module docstring)."""

    @one_blas_thread
    def support(self, *, dps=15, ball=False):
        r"""Support of the absolutely continuous part: a tuple of intervals ``(a, b)`` (mpf
        to ``dps`` digits), by the scan and the fold iteration of the module docstring.

        Raises
        ------
        NotAvailable
            ``ball=True``.
        PrecisionError
            An edge that is not located to ``dps`` digits.
        """
        dps = _check_dps(dps, "support")
        if check_ball(ball, "support"):
            raise NotAvailable(f"OperatorValuedCauchy.support: {NO_BALL}")
        key = ("support", dps)
        if key not in self._cache:
            self._cache[key] = tuple(
                tuple(self._edge(xo, xi, dps) for xo, xi in pair) for pair in self._brackets())
        return self._cache[key]

    # -- scan ----------------------------------------------------------------------------
    def _flag(self, x, thr):
        d = self.density_float([x], axis=False)[0]
        if not np.isfinite(d):
            d = self.density_float([x + 1e-7 * self.width], axis=False)[0]
        if not np.isfinite(d):
            raise PrecisionError(f"OperatorValuedCauchy.support: the density at {x} could not be evaluated")
        return d > thr

    def _brackets(self):
        """``[((out, in) of the left edge, (out, in) of the right edge)]`` per interval,
        each pair bisected to ``_BISECT`` of the bounds."""
        hit = self._cache.get("brackets")
        if hit is not None:
            return hit
        pad = 0.02 * self.width
        xs = np.linspace(self.lo - pad, self.hi + pad, _SCAN)
        xs = xs + (xs[1] - xs[0]) * 0.381966           # off rational points (atoms, edges at 0)
        d = self.density_float(xs)
        for i in np.nonzero(~np.isfinite(d))[0]:
            d[i] = self.density_float([xs[i] + 1e-7 * self.width])[0]
        if not np.all(np.isfinite(d)):
            raise PrecisionError("OperatorValuedCauchy.support: the density scan failed at some points")
        thr = 1e-8 * max(float(d.max()), 1e-300)
        self._cache["threshold"] = thr
        # zoom into every interior local minimum: a gap narrower than the spacing shows there
        extra = []
        for i in range(1, len(xs) - 1):
            if d[i] > thr and d[i] <= d[i - 1] and d[i] <= d[i + 1]:
                extra.append(np.linspace(xs[i - 1], xs[i + 1], _ZOOM + 2)[1:-1])
            elif d[i] > thr and d[i + 1] > thr and max(d[i], d[i + 1]) > 1.5 * min(d[i], d[i + 1]):
                extra.append(np.linspace(xs[i], xs[i + 1], _ZOOM + 2)[1:-1])   # a steep step
        if extra:
            ex = np.concatenate(extra)
            de = self.density_float(ex, axis=False)
            ok = np.isfinite(de)
            order = np.argsort(np.concatenate([xs, ex[ok]]), kind="stable")
            xs = np.concatenate([xs, ex[ok]])[order]
            d = np.concatenate([d, de[ok]])[order]
        pos = d > thr
        out = []
        i = 0
        while i < len(xs):
            if not pos[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(xs) and pos[j + 1]:
                j += 1
            if i == 0 or j == len(xs) - 1:
                raise PrecisionError("OperatorValuedCauchy.support: the density is positive at the "
                                     "end of the scan (the bounds do not contain the spectrum)")
            left, right = self._bisect(xs[i - 1], xs[i], thr), self._bisect(xs[j + 1], xs[j], thr)
            if out and left[1] - out[-1][1][1] < 4 * _BISECT * self.width:
                out[-1] = (out[-1][0], right)          # a gap that closes: the density touches 0
            else:
                out.append((left, right))
            i = j + 1
        self._cache["brackets"] = out
        return out

    def _bisect(self, xo, xi, thr):
        while abs(xi - xo) > _BISECT * self.width:
            m = 0.5 * (xo + xi)
            if self._flag(m, thr):
                xi = m
            else:
                xo = m
        return xo, xi

    # -- the fold ------------------------------------------------------------------------
    def _fold_newton(self, u, z, i, prec=None, maxit=30):
        """Solve ``F(u, z) = 0`` with ``u_i`` fixed (unknowns: the other ``u``, and ``z``);
        returns ``(u, z, g = dz/ds)``."""
        S = self.S
        acb = prec is not None
        tol = 2.0 ** (10 - prec) if acb else 1e-14
        for _ in range(maxit):
            J = S.jacobian(u, z)
            A = J.copy()
            A[:, i] = S.dz(u)
            d = _solve_lin(A, S.residual(u, z))
            dz = d[i]
            d[i] = flint.acb(0) if acb else 0
            u = u - d
            z = z - dz
            if acb:
                u = np.array([a.mid() for a in u], dtype=object)
                z = z.mid()
                size = max(float(abs(a).upper()) for a in d)
                ref = 1.0 + max(float(abs(a).upper()) for a in u)
            else:
                size = float(np.max(np.abs(d)))
                ref = 1.0 + float(np.max(np.abs(u)))
            size = max(size, float(abs(dz)))
            if size <= tol * ref:
                break
        else:
            raise TrackFailure("the fold's Newton iteration does not converge")
        J = S.jacobian(u, z)
        A = J.copy()
        A[:, i] = S.dz(u)
        g = -_solve_lin(A, J[:, i])[i]
        return u, z, g

    def _fold(self, u0, u1, i, prec=None, maxit=60):
        """Secant on ``g(s) = dz/ds`` from the points ``u0 = (u, z)``, ``u1`` of the curve;
        returns ``(z*, (u, z) of the last two iterates)``."""
        (ua, za), (ub, zb) = u0, u1
        ua, za, ga = self._fold_newton(ua, za, i, prec)
        ub, zb, gb = self._fold_newton(ub, zb, i, prec)
        acb = prec is not None
        tol = 2.0 ** (12 - prec) if acb else 1e-15
        for _ in range(maxit):
            if gb == ga:
                break
            s = ub[i] - gb * (ub[i] - ua[i]) / (gb - ga)
            step = s - ub[i]
            uc = ub + step * (ub - ua) / (ub[i] - ua[i])       # linear predictor on the curve
            zc = zb + step * (zb - za) / (ub[i] - ua[i])
            uc[i] = s
            if acb:
                uc = np.array([a.mid() for a in uc], dtype=object)
                zc = zc.mid()
            uc, zc, gc = self._fold_newton(uc, zc, i, prec)
            moved = float(abs(zc - zb).upper()) if acb else abs(zc - zb)
            ua, za, ga, ub, zb, gb = ub, zb, gb, uc, zc, gc
            if moved <= tol * (1.0 + abs(self.center) + self.width):
                return zb, ((ua, za), (ub, zb))
        raise TrackFailure("the fold iteration does not converge")

    def _edge(self, xo, xi, dps):
        """The edge between ``xo`` (outside) and ``xi`` (inside), mpf to ``dps`` digits."""
        S = self.S
        try:
            uo, Jo = self._double(complex(xo, 0.0))
            ui, Ji = self._double(complex(xi, 0.0))
            t = -np.linalg.solve(Jo, S.dz(uo))
            i = int(np.argmax(np.abs(t)))
            zf, (pa, pb) = self._fold((uo, complex(xo)), (ui, complex(xi)), i)
        except (TrackFailure, PrecisionError, np.linalg.LinAlgError) as exc:
            raise PrecisionError(
                f"OperatorValuedCauchy.support: the edge between {xo:.17g} and {xi:.17g} is not a "
                f"square-root edge of the equation (the solution is singular there: the density "
                f"may be unbounded, or an atom sits at the edge); the numeric path locates "
                f"square-root edges only ({exc})") from None
        vals = []
        for guard in (GUARD_DPS, 2 * GUARD_DPS):
            prec = _bits(dps + guard)
            with flint.ctx.workprec(prec):
                def lift(u, z):
                    uu = np.empty(len(u), dtype=object)
                    for k, v in enumerate(u):
                        uu[k] = flint.acb(v.real, v.imag)
                    return uu, flint.acb(z.real, z.imag)
                try:
                    e, _ = self._fold(lift(*pa), lift(*pb), i, prec)
                except TrackFailure as exc:
                    raise PrecisionError(f"OperatorValuedCauchy.support: the edge near {zf.real} is not "
                                         f"a square-root branch point of the equation ({exc})") from None
                vals.append((_mid_mpf(e.real, prec), _mid_mpf(e.imag, prec)))
        (a, ia), (b, ib) = vals
        with mpmath.workprec(_bits(dps + 2 * GUARD_DPS)):
            scale = max(abs(b), mpmath.mpf(self.width) * mpmath.mpf(10) ** -6)
            if abs(a - b) > mpmath.mpf(10) ** (-dps - 1) * scale or abs(ib) > mpmath.mpf(10) ** (-dps - 1) * scale:
                raise PrecisionError(f"OperatorValuedCauchy.support: the edge near {float(b)} is not "
                                     f"located to {dps} digits")
        with mpmath.workdps(dps):
            return +b


def _mid_mpf(a, prec):
    man, exp = a.mid().man_exp()
    with mpmath.workprec(prec):
        return mpmath.mpf((int(man), int(exp)))
