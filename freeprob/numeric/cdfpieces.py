"""The plain distribution function of :class:`freeprob.numeric.AlgebraicCauchy`, with the
quadrature shared between calls.

The mixin :class:`_CdfPieces` (base of :class:`~freeprob.numeric.quadrature._Quadrature`):
``_cdf`` (behind the public ``cdf``) and ``_piece``, the integral of the density over
``[lo, t]`` inside one piece of the support (between consecutive support edges, atoms
and special points, as cut by ``_split``).  Every such integral computed is kept with its
error bound, per piece, working precision and tolerance; a later ``t`` in the same piece
is reached from the nearest point already integrated to, so that ``cdf(2)`` after
``cdf(0.5)`` integrates only ``[0.5, 2]`` (two ordinary ends: Gauss–Legendre, no edge
work) and the edge of the piece is integrated once.  The error bounds add up along such a
chain; a chain whose bound exceeds the tolerance of one quadrature is not extended (the
integral is then taken from the end of the piece again).

Source: this project's design (issue 17: "use what the law knows").
"""
from __future__ import annotations

import mpmath
import sympy as sp

from freeprob.numeric.rootkernel import GUARD_DPS, _bits, _Pt, _to_mpf
from freeprob.errors import NotAvailable, PrecisionError


def _point_key(v):
    """Dictionary key of an end or cut point (exact sympy number, :class:`_Pt` or mpf)."""
    return str(v.expr if isinstance(v, _Pt) else v)


class _CdfPieces:
    """Mixin: :meth:`_cdf` and the memoized piece integrals :meth:`_piece`.  Needs
    ``_integrate``, ``_split``, ``_num``, ``support``, ``atoms`` and ``_cache`` of the host
    class."""

    def _cdf(self, xe, dps):
        """``F(x)`` at the exact point ``xe`` to ``dps`` digits (see the public ``cdf``):
        the atoms ``≤ x`` plus the integrals of the density over the support pieces below
        ``x`` (:meth:`_piece`).  The tolerance is relative to ``F(x)`` once known (a far left
        tail is computed to ``dps`` significant digits, not to ``10^{-dps}``), and ``x`` is
        compared with the support edges exactly (a point ``10^{-30}`` past an edge is not
        that edge).  Raises :class:`NotAvailable` for an unbounded support and
        :class:`PrecisionError` when the summed error bounds exceed ``10^{-dps}·F(x)``."""
        prec0 = _bits(dps + GUARD_DPS)
        sup = self.support(dps=dps + GUARD_DPS)
        ats = self.atoms(dps=dps + GUARD_DPS)
        tol = mpmath.mpf(10) ** (-dps - 2)
        for _ in range(8):
            # bits for the tolerance (mpmath.quad works to the working epsilon: _quad_prec)
            prec = max(prec0, int(-mpmath.log(tol, 2)) + 24)
            with mpmath.workprec(prec):
                total, err = mpmath.mpf(0), mpmath.mpf(0)
                for loc, m in ats:
                    if self._compare(loc, xe, prec) <= 0:
                        total += mpmath.mpf(_to_mpf(m, prec)) if isinstance(m, sp.Basic) else m
                for a, b in sup:
                    an = self._num(a, prec)
                    bn = self._num(b, prec)
                    if not mpmath.isfinite(an) or not mpmath.isfinite(bn):
                        raise NotAvailable("AlgebraicCauchy.cdf: unbounded support is not supported")
                    if self._compare(xe, a, prec) <= 0:
                        continue
                    inside = self._compare(xe, b, prec) < 0
                    pieces = self._split(a, b, ats, prec)
                    for lo2, hi2 in pieces:
                        if self._compare(lo2, xe, prec) >= 0:
                            break
                        if inside and self._compare(xe, hi2, prec) < 0:
                            # the piece holding x: from lo2 to x
                            v, e = self._piece(lo2, hi2, xe, prec, tol)
                        else:
                            v, e = self._piece(lo2, hi2, hi2, prec, tol)
                        total += v
                        err += e
                bound = mpmath.mpf(10) ** (-dps) * abs(total)
                if err <= bound:
                    break
                # a small value (left tail): the tolerance is relative to it, once known
                new = mpmath.mpf(10) ** (-dps - 2) * abs(total)
                if not new < tol / 4:
                    break
                tol = new
        if err > bound:
            raise PrecisionError(
                f"AlgebraicCauchy.cdf: quadrature error {mpmath.nstr(err, 3)} exceeds 10^-{dps}·F(x) "
                f"(F ≈ {mpmath.nstr(total, 3)})")
        with mpmath.workdps(dps):
            return +total

    def _compare(self, u, v, prec):
        """Sign of ``u − v`` for exact points (sympy numbers, :class:`_Pt`; mpf ends of laws
        with irrational coefficients are taken as they are): at ``prec`` bits, then at
        more bits while the two round alike, then exactly (sympy) for sympy numbers; ``0``
        when nothing tells them apart."""
        for wide in (prec, 4 * prec, 16 * prec):
            with mpmath.workprec(wide):
                un, vn = self._num(u, wide), self._num(v, wide)
                if un != vn:
                    return 1 if un > vn else -1
        ue = u.expr if isinstance(u, _Pt) else u
        ve = v.expr if isinstance(v, _Pt) else v
        if isinstance(ue, sp.Basic) and isinstance(ve, sp.Basic):
            d = sp.simplify(ue - ve)
            if d.is_positive:
                return 1
            if d.is_negative:
                return -1
        return 0

    def _piece(self, lo, hi, t, prec, tol):
        """``(∫_lo^t density, error bound)`` for ``lo < t ≤ hi``, ``[lo, hi]`` one piece of
        :meth:`_split` (``t = hi`` or an ordinary point inside), at ``prec`` bits, each
        quadrature to ``tol`` (:meth:`_integrate`).

        The integrals already computed in the piece (same ``prec`` and ``tol``) are points
        ``c`` with ``∫_lo^c`` and its bound: ``t`` is reached from the nearest ordinary such
        ``c`` (an earlier ``t``: ``[c, t]`` has no special end, hence no edge work), else
        from the nearest of ``lo`` and the known special ends, adding (or subtracting) one
        quadrature and adding its error bound.  Only points whose bound is at most ``tol``
        are continued from.  Errors: those of :meth:`_integrate`."""
        store = self._cache.setdefault(("cdf pieces", prec, tol, _point_key(lo), _point_key(hi)), {})
        key = _point_key(t)
        if key in store:
            return store[key][3:]
        tn, lon = self._num(t, prec), self._num(lo, prec)
        ordinary = t is not hi
        best = None     # (ordinary, distance, c, cn, v, e) of the point to start from
        for c, cn, ord_c, v, e in store.values():
            if e > tol:
                continue
            cand = (ord_c, -abs(cn - tn), c, cn, v, e)
            if best is None or cand[:2] > best[:2]:
                best = cand
        if best is None or (not best[0] and abs(best[3] - tn) >= tn - lon):
            v, e = self._integrate(lo, t, prec, tol)
        else:
            _, _, c, cn, cv, ce = best
            if cn < tn:
                d, de = self._integrate(c, t, prec, tol)
                v = cv + d
            else:
                d, de = self._integrate(t, c, prec, tol)
                v = cv - d
            e = ce + de
        store[key] = (t, tn, ordinary, v, e)
        return v, e
