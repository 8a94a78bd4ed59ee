"""Boundary values next to one end of a quadrature piece, for :mod:`freeprob.numeric.quadrature`.

:class:`_Edge`: the density along the real axis on one side of a point (a support edge,
an atom, a cut), each node continued from its neighbours and certified at the exact point,
and the rigorous bound on the continuous mass left out next to the point (the tail of the
edge rule of :meth:`_Quadrature._integrate <freeprob.numeric.quadrature._Quadrature._integrate>`).

Cost: the quadrature nodes next to an edge dominate (hundreds per piece, most of them at
distances from the edge that doubles do not resolve in ``x``).  They are continued from
their neighbours in doubles in the shifted variable where the roots stay apart, else on
acb midpoints (about 5–7× cheaper per step than mpmath at 128–256 bits).
"""
from __future__ import annotations

import bisect
import cmath
import math

import flint
import mpmath
import sympy as sp

from freeprob.core.coefficients import flint_precision
from freeprob.numeric.acbkernel import _acb_exact, _acb_to_mpc, _arb_mid_mpf
from freeprob.numeric.rootkernel import (
    _FLOAT_EPS,
    _LOG2_10,
    GUARD_DPS,
    _density_from_fixed,
    _Fail,
    _Kernel,
    _Pt,
    _real_point,
    _taylor,
    _to_mpf,
)
from freeprob.errors import PrecisionError


class _Edge:
    """Boundary values along the real axis on one side of a point ``base``, at
    ``x = base + sign·s``: each new point is continued along the axis from the nearest
    point already solved (in ``log s``), in doubles when they resolve the point; else in
    doubles in the shifted variable ``w = x − base`` (:meth:`_skernel`: the rows
    Taylor-shifted at ``base``, so that ``s`` is resolved whatever ``s/|base|``) when the
    roots are far enough apart for doubles; else on python-flint acb midpoints
    (:meth:`_march_acb`) and last in mpmath, at a precision that resolves ``s`` relative
    to ``base`` and the roots meeting there (:meth:`_at`).  Every root found is certified
    at the exact point (:meth:`AlgebraicCauchy._boundary_value`)."""

    def __init__(self, owner, base, sign):
        self.A, self.base, self.sign = owner, base, sign
        bn = owner._num(base, 64)
        self.bf = float(bn)
        pt = base if isinstance(base, _Pt) else _real_point(base, "cdf")
        # irrational coefficients: the edges (and cuts) are mpf approximations of special
        # points, never exactly special, yet the density has its edge singularity there
        self.special = owner._is_special(pt) or owner._numeric_special(base)
        self.bmag = int(mpmath.mag(bn)) if bn else None
        # r/2 for r roots meeting at the base: see _at
        self.cluster = owner._cluster_size(base) / 2 if self.special else 0
        self.mass = 0
        atom_pt = pt
        numeric_base = not isinstance(base, sp.Basic | _Pt)
        if self.special:
            for loc, m in owner._atoms_at_least(20):
                if abs(float(sp.N(loc, 20) if isinstance(loc, sp.Basic) else loc) - self.bf) > \
                        1e-12 * (1 + abs(self.bf)):
                    continue
                if not isinstance(loc, sp.Basic) or sp.simplify(loc - pt.expr) == 0:
                    self.mass = m
                elif numeric_base:
                    # an exact atom (√2) at an mpf edge or cut (its approximation, for
                    # irrational coefficients): deflate at the exact atom.  Subtracting
                    # m/(z − a) at an atom a is exact wherever the edge is; missed, the
                    # pole was left in the tail bound, which then never fell below the
                    # tolerance (cdf ran for minutes)
                    self.mass = m
                    atom_pt = _real_point(loc, "cdf")
        self.mult = self._row_multiplicity(base) if self.special else 0
        self.nodes = {False: ([], []), True: ([], [])}    # is_mp -> (sorted log s, sels)
        self.values = {}
        self.tails = {}                         # (length, prec, tol) -> tail's (ε, bound)
        self.node_pts = {False: [], True: []}   # is_mp -> the exact point of each node
        self.shift_fail = -math.inf     # log s below which shifted doubles failed
        self.inner = None
        if self.mass and isinstance(self.mass, sp.Basic) and self.mass != 1:
            # an atom at the edge: work with the continuous part (G − m/(z − a))/(1 − m)
            self.inner = owner._deflated(atom_pt, self.mass)._edge(base, sign)
            self.scale = 1 - self.mass
        elif not self.special and (near := owner._near_atom(self.bf)) is not None:
            # an ordinary end next to an atom: the same (see AlgebraicCauchy._near_atom)
            loc, m = near
            self.inner = owner._deflated(_real_point(loc, "cdf"), m)._edge(base, sign)
            self.scale = 1 - m

    def _row_multiplicity(self, base):
        """The largest multiplicity of ``base`` as a root of a coefficient ``A_k(z)`` of
        ``P`` (its leading coefficient at a fold of a pushforward: a double root).  At
        ``base + s`` such a coefficient is ``O(s^m)`` while its terms are ``O(1)``: its
        evaluation from the rows loses ``m·log2(1/s)`` bits more than ``base + s`` does,
        and the roots it gives are wrong by far more than their separation unless the
        working precision grows by as much (:meth:`_at`).  Numeric: the Taylor
        coefficients of each row at ``base`` at 512 bits, those below ``2^{-200}`` of the
        largest (``10^{-12}`` for an mpf base, known to its digits only) counted as 0."""
        W = 512
        with mpmath.workprec(W):
            b = self.A._num(base, W)
            rows, _ = self.A._coeff_tuples(W)
            small = mpmath.mpf(2) ** -200 if isinstance(base, sp.Basic | _Pt) else mpmath.mpf(10) ** -12
            best = 0
            for r in rows:
                c = _taylor([mpmath.mpf(v) for v in r], b)
                top = max(abs(v) for v in c)
                m = 0
                while m < len(c) - 1 and abs(c[m]) <= small * top:
                    m += 1
                best = max(best, m)
        return best

    def _at(self, s, prec):
        extra = max(0, self.bmag - int(mpmath.mag(s))) if self.bmag is not None else 0
        # r roots meeting at a special base, ~s^{1/2} apart, need (r/2)·log2(1/s) bits to
        # be told apart whatever |base| (an edge at 0 had none; edges shared by k parts of
        # a mixture: r = 2^k)
        extra = max(extra, math.ceil(self.cluster * -int(mpmath.mag(s))))
        # a coefficient with an m-fold root at the base loses m·log2(1/s) more bits
        extra += self.mult * max(0, -int(mpmath.mag(s)))
        wp = prec + extra + 8
        with mpmath.workprec(wp):
            x = self.A._num(self.base, wp) + self.sign * s
        pt = _real_point(x, "cdf")
        J = max(len(r) for r in self.A._rows) - 1
        ax = abs(pt.xf)
        use_float = extra <= 30 and (ax == 0 or 1e-290 < ax ** max(J, 1) < 1e290) and ax < 1e100
        return pt, extra, wp, use_float

    def select(self, s, prec):
        """``(pt, sel, plan)`` for the point at distance ``s``."""
        A = self.A
        pt, extra, wp, use_float = self._at(s, prec)
        ls = float(mpmath.log(s))
        keys, sels = self.nodes[not use_float]
        i = bisect.bisect_left(keys, ls)
        nbs = sorted((j for j in (i - 1, i) if 0 <= j < len(keys)), key=lambda j: abs(keys[j] - ls))
        sel = None
        catch = (_Fail, OverflowError, ZeroDivisionError, ValueError)
        if use_float:
            K, bf, sg = A._fkernel(), self.bf, self.sign
            zf = (lambda t, t1=ls, xf=pt.xf: xf if t == t1 else bf + sg * math.exp(t))
            for j in nbs[:1]:
                try:
                    sel = A._march(K, keys[j], ls, sels[j], zf, center=complex(bf))
                except catch:
                    sel = None
            if sel is None:
                try:
                    sel = A._select_boundary(K, pt.xf)
                except catch:
                    sel = None
        else:
            sel = self._select_shifted(s, ls, i, keys, sels)
        if sel is None:
            # also where doubles resolve the point but not its roots (a cluster of several
            # roots at a coincident edge): continued on acb/mpmath, not tracked from far up
            tp = 64 + extra + 16
            cands = []
            for mp in (True, False):            # the nearest node of either kind
                ks, ss, ps = *self.nodes[mp], self.node_pts[mp]
                j0 = bisect.bisect_left(ks, ls)
                cands += [(abs(ks[j] - ls), ks[j], ss[j], ps[j]) for j in (j0 - 1, j0) if 0 <= j < len(ks)]
            with mpmath.workprec(tp):
                K = A._mkernel(tp)
                bw, sg = A._num(self.base, tp), self.sign
                xw, lw = mpmath.mpf(pt.mpf(tp)), mpmath.log(s)
                for _, t0, nsel, p0 in sorted(cands, key=lambda c: c[0])[:1]:
                    nsel = (nsel[0], mpmath.mpc(nsel[1]), mpmath.mpf(nsel[2]))
                    # the path starts at the node's own point, not at base + sign·e^{t0} with
                    # t0 its rounded log: next to a pole-like special point the root moves
                    # by more than its separation over that rounding
                    x0 = mpmath.mpf(p0.mpf(tp))
                    sel = self._march_acb(tp, bw, xw, float(t0), ls, nsel, x0)
                    if sel is not None:
                        break
                    t0w, t1w = mpmath.mpf(t0), lw
                    if float(t0) == ls:     # the same rounded log s: along the segment instead
                        t0w, t1w = mpmath.mpf(0), mpmath.mpf(1)
                        zf = (lambda t, x0=x0: xw if t == 1 else x0 + t * (xw - x0))
                    else:
                        zf = (lambda t, t1=lw, t0w=t0w, x0=x0: xw if t == t1 else
                              (x0 if t == t0w else bw + sg * mpmath.exp(t)))
                    try:
                        sel = A._march(K, t0w, t1w, nsel, zf, center=mpmath.mpc(bw))
                    except _Fail:
                        sel = None
                if sel is None:
                    try:
                        sel = A._select_boundary(K, xw)
                    except _Fail:
                        sel = None
        if sel is not None and sel[0] != "unsure":
            mp = not use_float or not isinstance(sel[1], complex)   # the list it continues in
            keys, sels = self.nodes[mp]
            i = bisect.bisect_left(keys, ls)
            keys.insert(i, ls)
            sels.insert(i, sel)
            self.node_pts[mp].insert(i, pt)
        return pt, sel, (extra + 16 if not use_float else 0, use_float)

    def _skernel(self):
        """Double-precision kernel of ``P`` in the shifted variable ``w = x − base``
        (:class:`~freeprob.numeric.rootkernel._Kernel`, memoized per edge): each row
        ``A_k(base + w)`` Taylor-shifted at 256 bits (:func:`_taylor`), then rounded to
        doubles, so that a point at distance ``s`` from ``base`` is ``w = sign·s`` exactly
        enough whatever ``s/|base|`` (``base + s`` itself is not a double when
        ``s < 2^{-52}|base|``).  ``sigma`` (the singular points, for the step limit) is
        shifted the same way; ``series`` is ``None``: the kernel only continues roots from
        neighbouring nodes, never from infinity.  Its roots are the roots of ``P(·, x)``
        (no change of the unknown ``G``); ``None`` when a shifted coefficient overflows the
        double range.  Source: this project's design."""
        if getattr(self, "_sk", None) is None:
            A, W = self.A, 256
            with mpmath.workprec(W):
                b = A._num(self.base, W)
                rows, drows = A._coeff_tuples(W)

                def shift(r):
                    """The row ``r`` (mpf tuples, ascending) as a polynomial in ``w``."""
                    return [complex(c) for c in _taylor([mpmath.mpf(c) for c in r], b)]
                k = _Kernel([shift(r) for r in rows], [shift(r) for r in drows], _FLOAT_EPS,
                            1j, math.exp, math.log)
                real, nonreal = A._singular_points()
                k.sigma = [complex(mpmath.mpf(_to_mpf(r, W)) - b if isinstance(r, sp.Basic)
                                   else mpmath.mpf(r) - b) for r in real]
                k.sigma += [complex(mpmath.mpc(c) - b) for c in nonreal]
            k.series = None
            k.is_mp = False
            ok = all(cmath.isfinite(c) for r in k.rows + k.drows for c in r) and \
                all(cmath.isfinite(c) for c in k.sigma)
            self._sk = k if ok else False
        return self._sk or None

    def _select_shifted(self, s, ls, i, keys, sels):
        """The selected root at ``base + sign·s`` (a point that doubles do not resolve in
        ``x``), continued in doubles in the shifted variable (:meth:`_skernel`) along
        ``w = sign·e^t`` from the nearest node already solved (either kind; the roots do
        not depend on the coordinate); ``(kind, complex g, float rho)`` or ``None`` when
        doubles cannot follow the root (roots too close, no neighbour).  The root is then
        certified at the exact point as every other (:meth:`_boundary_value`).  After a
        failure for roots too close at ``s``, points nearer to the edge than ``e·s``
        (``log s ≤`` :attr:`shift_fail`), or continued from such a point, are left to the
        acb/mpmath route (speed only)."""
        if ls <= self.shift_fail:
            return None
        fk, fs = self.nodes[False]
        fi = bisect.bisect_left(fk, ls)
        cands = [(abs(keys[j] - ls), keys[j], sels[j]) for j in (i - 1, i) if 0 <= j < len(keys)]
        cands += [(abs(fk[j] - ls), fk[j], fs[j]) for j in (fi - 1, fi) if 0 <= j < len(fk)]
        if not cands:
            return None
        _, t0, nsel = min(cands, key=lambda c: c[0])
        if t0 <= self.shift_fail:
            return None
        K, sg, wf = self._skernel(), self.sign, float(s)
        if K is None or not (wf > 0 and math.isfinite(wf)):
            return None
        try:
            start = (nsel[0], complex(nsel[1]), float(nsel[2]))
            zf = (lambda t, t1=ls: sg * wf if t == t1 else sg * math.exp(t))
            return self.A._march(K, float(t0), ls, start, zf, center=0j)
        except _Fail as exc:
            if "too close" in str(exc):
                # the roots close in toward the edge: points nearer than e·s are not tried
                # again (most nodes of a tanh-sinh rule cluster there)
                self.shift_fail = max(self.shift_fail, ls + 1)
            return None
        except (OverflowError, ZeroDivisionError, ValueError):
            return None

    def _march_acb(self, tp, bw, xw, t0, t1, nsel, x0=None):
        """The root ``nsel = (kind, mpc g, mpf rho)`` at ``base + sign·e^{t0}`` continued
        along the axis to the exact point ``xw = base + sign·e^{t1}`` (``t0``, ``t1``
        floats; the path ``bw + sign·e^t``, ``bw`` the base at ``tp`` bits, starting at the
        node's own point ``x0`` (mpf) when given) by
        :meth:`AlgebraicCauchy._march` on the acb kernel at ``tp`` bits (the mpmath kernel's
        steps and tests, about ten times faster); ``(kind, mpc g, mpf rho)`` or ``None``
        when the continuation fails (the caller falls back to mpmath).  ``tp`` is rounded up
        to a multiple of 64 bits (one kernel per 64 bits).  Sets python-flint's
        precision for the duration only.  Call under ``mpmath.workprec(tp)``."""
        A = self.A
        tp = -(-tp // 64) * 64      # a few kernels (one per 64 bits), not one per node
        K = A._akernel(tp)
        sg = self.sign
        try:
            with flint_precision(flint.ctx.cap, tp):
                bwa, xwa = _acb_exact(bw), _acb_exact(xw)
                x0a = _acb_exact(x0) if x0 is not None else None
                if t0 == t1 and x0a is not None:
                    # two points with the same rounded log s (a quadrature rule's nodes
                    # crowd at its end): along the segment between them
                    t0, t1 = 0.0, 1.0
                    zf = (lambda t: xwa if t == 1.0 else (x0a + t * (xwa - x0a)).mid())
                else:
                    zf = (lambda t: xwa if t == t1 else (x0a if t == t0 and x0a is not None else
                                                         (bwa + sg * flint.arb(math.exp(t))).mid()))
                start = (nsel[0], _acb_exact(nsel[1]), flint.arb(_acb_exact(nsel[2]).real))
                kind, g, rho = A._march(K, t0, t1, start, zf, center=bwa)
                rho = mpmath.mpf(rho) if isinstance(rho, float | int) else _arb_mid_mpf(rho)
                return kind, _acb_to_mpc(g), rho
        except (_Fail, OverflowError, ZeroDivisionError, ValueError):
            return None

    def density(self, s, prec):
        """The density at ``base + sign·s`` (``s > 0``) to about ``prec`` bits."""
        if s <= 0:
            return mpmath.mpf(0)
        if self.inner is not None:
            return self.inner.density(s, prec) * self.A._num(self.scale, prec)
        key = (s, prec)
        if key in self.values:
            return self.values[key]
        A = self.A
        dps = max(5, int(prec / _LOG2_10) - GUARD_DPS + 2)
        pt, sel, plan = self.select(s, prec)
        if A._is_special(pt):
            v = A._density_exact_point(pt, dps)
            v = mpmath.mpf(0) if mpmath.isinf(v) else v
        else:
            kind, g, _ = A._boundary_value(pt, dps, sel, plan=plan)
            v = mpmath.mpf(0) if kind == "real" else _density_from_fixed(g, mpmath.mp.prec)
        self.values[key] = v
        return v

    def tail(self, length, prec, tol):
        """``(ε, bound)``: the continuous mass within ``2ε`` of ``base`` is below ``bound ≤ tol``."""
        if self.inner is not None:
            sc = self.A._num(self.scale, prec)
            eps, bound = self.inner.tail(length, prec, tol / sc)
            return eps, bound * sc
        key = (length, prec, tol)           # (the same piece asked again: one Laplace time each)
        if key in self.tails:
            return self.tails[key]
        eps = length / 4
        prev = None
        for _ in range(200):
            bound = self._bound(eps)
            if bound is not None and bound <= tol:
                self.tails[key] = (eps, bound)
                return eps, bound
            if bound is None or not bound or prev is None:
                new = eps / 256
            else:          # local exponent of the bound, extrapolated with a margin
                beta = min(max(mpmath.log(prev[1] / bound) / mpmath.log(prev[0] / eps), 0.05), 2)
                new = max(min(eps / 4, eps * (tol / (4 * bound)) ** (1 / beta)), eps * 2 ** -64)
            if bound:
                prev = (eps, bound)
            eps = new
        raise PrecisionError("AlgebraicCauchy.cdf: cannot bound the mass near the edge "
                             f"{self.base}")

    def _bound(self, eps):
        """``2ε |Im G_c(base + sign·ε + iε)|`` (a slight over-estimate), or ``None``."""
        A = self.A
        pt, sel, plan = self.select(eps, 64)
        if sel is None:
            return None
        kind, g, rho = sel
        is_mp = not isinstance(g, complex)
        if not is_mp and not plan[1]:
            if not self.mass:
                return self._bound_shifted(eps, g, rho)
            # next to an atom G ≈ m/w: subtracting it needs the mpmath route below
            g, rho, is_mp = mpmath.mpc(g), mpmath.mpf(rho), True
        with mpmath.workprec(max(64, plan[0] + 80)):
            K = A._mkernel(mpmath.mp.prec) if is_mp else A._fkernel()
            x = mpmath.mpf(pt.mpf(mpmath.mp.prec)) if is_mp else pt.xf
            e = mpmath.mpf(eps) if is_mp else float(eps)
            if not is_mp and not e:
                return None
            try:
                z, g1, _ = A._track(K, lambda t: x + K.I * t, 0 * e, e, g, rho,
                                    center=mpmath.mpc(A._num(self.base, mpmath.mp.prec)) if is_mp
                                    else complex(self.bf))
            except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                return None
            gz = mpmath.mpc(g1)
            if self.mass:
                m = mpmath.mpf(_to_mpf(self.mass, 64)) if isinstance(self.mass, sp.Basic) else self.mass
                gz -= m / (mpmath.mpc(z) - A._num(self.base, mpmath.mp.prec))
            return 2.5 * mpmath.mpf(eps) * abs(gz.imag)

    def _bound_shifted(self, eps, g, rho):
        """:meth:`_bound` for a root found in the shifted variable (:meth:`_select_shifted`)
        at an edge without an atom: ``G`` tracked in doubles from ``w = sign·ε`` up to
        ``w = sign·ε + iε``; ``None`` when doubles cannot follow it."""
        K, e = self._skernel(), float(eps)
        if K is None or not (e > 0 and math.isfinite(e)):
            return None
        x = self.sign * e
        try:
            z, g1, _ = self.A._track(K, lambda t: x + 1j * t, 0.0, e, g, rho, center=0j)
        except (_Fail, OverflowError, ZeroDivisionError, ValueError):
            return None
        return 2.5 * mpmath.mpf(eps) * abs(mpmath.mpc(g1).imag)
