"""Quadrature of the density for :class:`freeprob.numeric.AlgebraicCauchy`.

The mixin :class:`_Quadrature` (the public ``moments``, ``expectation``, ``extent``,
``cdf`` and ``quantile``; edge-adapted integration of the density against a weight,
splitting at atoms and special points, inversion for quantiles).  The boundary values
continued along the axis near one end of an interval, and the bound on the mass left out
next to it: :class:`~freeprob.numeric.edgerule._Edge`.

Cost: the quadrature nodes next to an edge dominate (hundreds per piece, most of them at
distances from the edge that doubles do not resolve in ``x``).  They are continued from
their neighbours in doubles in the shifted variable where the roots stay apart, else on
acb midpoints (about 5–7× cheaper per step than mpmath at 128–256 bits), and the sums
of ``mpmath.quad`` run at the bits the tolerance needs (:meth:`_Quadrature._quad_prec`)
while the integrand is still evaluated at the working precision.
"""
from __future__ import annotations

import numbers

import mpmath
import sympy as sp

from freeprob.numeric.cdfpieces import _CdfPieces
from freeprob.numeric.edgerule import _Edge
from freeprob.numeric.inversion import _Inversion
from freeprob.numeric.balls import check_ball, shows_proven
from freeprob.numeric.rootkernel import GUARD_DPS, _bits, _check_dps, _Pt, _real_point, _to_mpf
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError


#: guard bits of the quadrature sums over the bits of ``ref/tol`` (see ``_quad_prec``)
QUAD_GUARD_BITS = 16


class _Quadrature(_CdfPieces, _Inversion):
    """Mixin of :class:`~freeprob.numeric.AlgebraicCauchy`: :meth:`moments`,
    :meth:`expectation`, :meth:`cdf`, :meth:`quantile` and the integration behind them
    (the plain ``_cdf`` and its shared piece integrals: :mod:`freeprob.numeric.cdfpieces`)."""

    # -- public: moments, expectations, distribution function, quantiles ---------------
    def moments(self, k, *, dps=15):
        r"""Moments ``(m_0, …, m_k)`` by quadrature: ``∫ x^n density + Σ a^n·mass``.

        An independent route to the exact moments of the law (which the expansion of
        ``G`` at infinity also gives): every piece is integrated as in :meth:`cdf`.

        Parameters
        ----------
        k : int >= 0
        dps : int >= 1, keyword-only

        Returns
        -------
        tuple of mpmath.mpf

        Raises
        ------
        FreeprobValueError
            ``k`` or ``dps`` invalid.
        PrecisionError
            If an error estimate exceeds ``10^{-dps}`` (relative to the moment's scale).
        NotAvailable
            If the support is unbounded.
        """
        dps = _check_dps(dps, "moments")
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
            raise FreeprobValueError(f"AlgebraicCauchy.moments: k must be an integer >= 0; got {k!r}")
        prec = _bits(dps + GUARD_DPS)
        sup = self.support(dps=dps + GUARD_DPS)
        ats = self.atoms(dps=dps + GUARD_DPS)
        out = []
        with mpmath.workprec(prec):
            scale = max([abs(self._num(v, prec)) for ab in sup for v in ab] +
                        [abs(self._num(a, prec)) for a, _ in ats] + [mpmath.mpf(1)])
            for n in range(int(k) + 1):
                tol = mpmath.mpf(10) ** (-dps - 2) * scale ** n
                total = mpmath.fsum(self._num(a, prec) ** n * self._num(m, prec) for a, m in ats)
                err = mpmath.mpf(0)
                for a, b in sup:
                    if not (mpmath.isfinite(self._num(a, prec)) and mpmath.isfinite(self._num(b, prec))):
                        raise NotAvailable("AlgebraicCauchy.moments: unbounded support")
                    for lo, hi in self._split(a, b, ats, prec):
                        v, e = self._integrate(lo, hi, prec, tol, power=n)
                        total += v
                        err += e
                if err > 100 * tol:
                    raise PrecisionError(f"AlgebraicCauchy.moments: quadrature error "
                                         f"{mpmath.nstr(err, 3)} exceeds the target for m_{n}")
                with mpmath.workdps(dps):
                    out.append(+total)
        return tuple(out)

    @staticmethod
    def working_prec(dps):
        """Bits of :meth:`expectation` and :meth:`extent` for ``dps`` digits (``dps + GUARD_DPS``)."""
        return _bits(dps + GUARD_DPS)

    def extent(self, *, dps=15):
        r"""``(lo, hi)``: the least and the greatest point of the support and of the atoms,
        mpf at :meth:`working_prec` ``(dps)`` bits.

        Raises
        ------
        FreeprobValueError
            ``dps`` invalid.
        NotAvailable
            If the support is unbounded.
        """
        dps = _check_dps(dps, "extent")
        prec = self.working_prec(dps)
        sup = self.support(dps=dps + GUARD_DPS)
        ats = self.atoms(dps=dps + GUARD_DPS)
        with mpmath.workprec(prec):
            ends = [self._num(v, prec) for ab in sup for v in ab] + [self._num(a, prec) for a, _ in ats]
            if not all(mpmath.isfinite(v) for v in ends):
                raise NotAvailable("AlgebraicCauchy.extent: unbounded support")
            return min(ends), max(ends)

    def expectation(self, weight, *, dps=15, tol, cuts=(), tail=None):
        r"""``(∫ weight dμ, error bound)``: ``Σ weight(a)·m`` over the atoms ``(a, m)``
        (exactly) plus ``∫ weight·density`` over the support, integrated as in
        :meth:`moments` (edge-adapted, split at the atoms and special points).

        Parameters
        ----------
        weight : callable
            Of an mpf ``x``, returning an mpf; called under ``mpmath.workprec`` at
            :meth:`working_prec` ``(dps)`` bits.  At most 1 in modulus on the support (the
            bound on the mass left out next to a support edge is added unweighted).
        dps : int >= 1, keyword-only
            The support and the atoms are taken at ``dps + GUARD_DPS`` digits and the sums
            formed at :meth:`working_prec` ``(dps)`` bits.
        tol : real > 0, keyword-only
            Absolute error target of each quadrature piece.
        cuts : iterable of real numbers, keyword-only
            Further points at which the support intervals are cut (e.g. where the weight
            changes scale); one within rounding of an end is that end (an edge keeps its edge rule).
        tail : real, optional, keyword-only
            The density beyond ``tail`` is left out, each piece left out adding the weight at
            its left end (``tail`` or beyond) to the error: valid for a weight that is
            ``≥ 0`` and non-increasing on ``[tail, ∞)`` (the mass is at most 1).

        Returns
        -------
        (mpmath.mpf, mpmath.mpf)
            The value and the error bound (sum of the quadrature error estimates and of the
            tails left out), at :meth:`working_prec` ``(dps)`` bits, not rounded.

        Raises
        ------
        FreeprobValueError
            ``dps`` invalid, ``weight`` not callable, ``tol`` not a real number > 0.
        NotAvailable
            If the support is unbounded.
        PrecisionError
            If a boundary value of ``G`` cannot be certified.
        """
        dps = _check_dps(dps, "expectation")
        if not callable(weight):
            raise FreeprobValueError("AlgebraicCauchy.expectation: `weight` must be a function of an "
                                     f"mpf x; got {type(weight).__name__}")
        if not (isinstance(tol, int | float | mpmath.mpf) and not isinstance(tol, bool) and tol > 0):
            raise FreeprobValueError(f"AlgebraicCauchy.expectation: `tol` must be a real number > 0; got {tol!r}")
        prec = self.working_prec(dps)
        sup = self.support(dps=dps + GUARD_DPS)
        ats = self.atoms(dps=dps + GUARD_DPS)
        with mpmath.workprec(prec):
            if not all(mpmath.isfinite(self._num(v, prec)) for ab in sup for v in ab):
                raise NotAvailable("AlgebraicCauchy.expectation: unbounded support")
            tol = self._num(tol, prec)
            cuts = sorted(self._num(c, prec) for c in cuts)
            if tail is not None:
                tail = self._num(tail, prec)
                cuts = sorted({c for c in cuts if c <= tail} | {tail})
            total = mpmath.fsum(weight(self._num(a, prec)) * self._num(m, prec) for a, m in ats)
            err = mpmath.mpf(0)
            for a, b in sup:
                for lo, hi in self._split(a, b, ats, prec):
                    lon, hin = self._num(lo, prec), self._num(hi, prec)
                    gap = mpmath.mpf(2) ** (16 - prec) * max(1, abs(lon), abs(hin))    # rounding
                    if tail is not None and lon >= tail - gap:
                        err += weight(lon)              # mass ≤ 1 times the largest weight
                        continue
                    pts = [lo] + [_real_point(c, "expectation", "cuts")
                                  for c in cuts if lon + gap < c < hin - gap]
                    if tail is not None and tail < hin - gap:
                        err += weight(tail)
                    else:
                        pts.append(hi)
                    for p, q in zip(pts, pts[1:]):
                        v, e = self._integrate(p, q, prec, tol, weight=weight)
                        total += v
                        err += e
            return total, err

    @shows_proven
    def cdf(self, x, *, dps=15, ball=False):
        r"""Distribution function ``F(x) = μ((−∞, x])``: the integral of the density
        (``mpmath.quad``, tanh-sinh, split at support edges and atoms, error estimate
        checked) plus the atoms ``≤ x``.

        Parameters
        ----------
        x : real number
        dps : int >= 1, keyword-only

        Returns
        -------
        mpmath.mpf

        Raises
        ------
        FreeprobValueError
            ``x`` not a finite real number; ``dps`` invalid.
        PrecisionError
            If the quadrature error estimate exceeds ``10^{-dps}`` (with ``ball=True``: if
            the enclosure cannot be made that narrow).

        With ``ball=True``: a python-flint ``arb`` that provably contains ``F(x)`` (rigorous
        integration of the certified boundary values, :mod:`freeprob.numeric.enclosure`),
        radius ``≤ 10^{-dps}·F(x)``, midpoint the plain value.
        """
        dps = _check_dps(dps, "cdf")
        ball = check_ball(ball, "cdf")
        xe = _real_point(x, "cdf")
        if ball:
            return self._ball_cdf(xe, dps)
        return self._cdf(xe, dps)

    @shows_proven
    def quantile(self, p, *, dps=15, ball=False):
        r"""Quantile ``Q(p) = inf{x : F(x) ≥ p}`` (the generalized inverse, as scipy's
        ``ppf``) for ``p`` in ``[0, 1]``.

        A ``p`` inside the jump of an atom gives the atom's location; ``p = 0`` and ``p = 1``
        give the lowest and highest point of the support or atoms (exact: ``0`` for a law
        whose support or an atom starts at 0).  Where ``F`` is flat (a gap between support
        intervals, before or after an atom) ``Q`` is the left end ``x₀`` of the flat
        stretch: ``F`` is computed to ``τ = 10^{-dps}``, so every ``p`` in
        ``[F(x₀), F(x₀) + τ]`` at the right end ``x₀`` of a support interval (or of a piece
        of it between atoms) or at an atom, the highest excepted, gives exactly ``x₀``
        (``Q(F(x₀)) = x₀`` whatever the rounding of the quadrature).

        Raises
        ------
        FreeprobValueError
            ``p`` outside ``[0, 1]`` or not a real number; ``dps`` invalid.
        PrecisionError
            If the quadratures cannot be certified.

        With ``ball=True``: a python-flint ``arb`` containing ``Q(p)``, proven by two
        enclosed cdf values ``F(q − δ) < p ≤ F(q + δ)`` about the plain value ``q``
        (its midpoint), ``δ = 10^{-dps-1}·|q|/2``.
        """
        dps = _check_dps(dps, "quantile")
        ball = check_ball(ball, "quantile")
        pe = _real_point(p, "quantile", "p")
        if not (0 <= pe.expr <= 1):
            raise FreeprobValueError(f"AlgebraicCauchy.quantile: `p` must be in [0, 1]; got {p!r}")
        if ball:
            return self._ball_quantile(pe, dps)
        return self._plain_quantile(pe, dps)

    # -- quadrature ----------------------------------------------------------------------
    def _substitution(self):
        """Exponent ``k`` of ``s = u^k``: the density near an edge is ``s^{p/q}`` times a
        series in ``s^{1/q}`` with ``q <= deg_G P`` (Puiseux), analytic in ``u`` once ``q | k``."""
        return {1: 1, 2: 2, 3: 6}.get(self._d, 12)

    def _integrate(self, a, b, prec, tol, power=0, weight=None):
        """``(∫_a^b x^power density(x) dx, error bound)`` for ``a < b`` (exact endpoints)
        inside one support interval, to absolute error about ``tol``; with ``weight`` (a
        function of an mpf ``x`` bounded by 1 in modulus on ``[a, b]``) ``∫ weight·density``.

        Split at the midpoint; each half is integrated from its end in the distance ``s``.
        From a special end (an edge) the variable is ``u = s^{1/k}`` (tanh-sinh; the density
        is ``s^{p/q}`` times a series in ``s^{1/q}``, analytic in ``u`` when ``q | k``), and
        the last piece ``[0, ε]`` is dropped with the rigorous bound
        ``μ_c([a, a + 2ε]) ≤ 2ε |Im G_c(a + ε + iε)|`` (``G_c``: ``G`` minus the atom at
        ``a``), which is added to the error.  From an ordinary end: Gauss–Legendre in ``s``,
        on pieces graded toward the end when a singular point lies close beyond it
        (:meth:`_graded`)."""
        # the half-lengths to the working precision even when b − a is far below |a|·2^-prec
        # (a point next to an edge, as a quantile in the far tail asks): at the rounded
        # ends they vanished, and the tail bound was then asked for a piece of length 0
        wide = prec
        for _ in range(64):
            with mpmath.workprec(wide):
                an, bn = self._num(a, wide), self._num(b, wide)
                if not (an or bn) or bn - an > max(abs(an), abs(bn)) * mpmath.mpf(2) ** (prec - wide - 8):
                    break
            wide += prec
        with mpmath.workprec(wide):
            an, bn = self._num(a, wide), self._num(b, wide)
            mid = (an + bn) / 2
            halves = (mid - an, bn - mid)
        if not halves[0] > 0:
            return mpmath.mpf(0), mpmath.mpf(0)
        with mpmath.workprec(prec):
            total, err = mpmath.mpf(0), mpmath.mpf(0)
            for base, sign, length in ((a, 1, +halves[0]), (b, -1, +halves[1])):
                edge = self._edge(base, sign)
                bw = self._num(base, prec)
                if edge.special:
                    k = self._substitution()
                    eps, bound = edge.tail(length, prec, tol / (8 * max(1, abs(bw) + length) ** power))
                    wf = weight or (lambda x: x ** power)
                    f = (lambda u, e=edge, k=k, bw=bw, sg=sign:
                         k * u ** (k - 1) * e.density(u ** k, prec) * wf(bw + sg * u ** k))
                    with mpmath.workprec(self._quad_prec(prec, tol, bw, length, power, weight)):
                        v, e = mpmath.quad(f, [mpmath.root(eps, k), mpmath.root(length, k)],
                                           error=True)
                    err += bound * (1 if weight else max(abs(bw), abs(bw) + 2 * eps) ** power)
                else:
                    wf = weight or (lambda x: x ** power)
                    nodes = self._graded(self._num(base, wide), length, wide)
                    with mpmath.workprec(self._quad_prec(prec, tol, bw, length, power, weight)):
                        v, e = mpmath.quad(lambda t, e=edge, bw=bw, sg=sign:
                                           e.density(t, prec) * wf(bw + sg * t),
                                           nodes, error=True, method="gauss-legendre")
                total += v
                err += e
            return total, err

    @staticmethod
    def _quad_prec(prec, tol, bw, length, power, weight):
        """Working precision of ``mpmath.quad`` in :meth:`_integrate`: mpmath refines until
        its error estimate is below the working epsilon, so at ``prec`` (``dps + GUARD_DPS``
        digits) it worked to ``2^{−prec}`` where ``tol`` was asked: the bits of
        ``ref/tol`` plus ``QUAD_GUARD_BITS``, ``ref`` a bound on the integral (``1`` for a
        weight bounded by 1, else ``max(1, |x|)^power`` on the piece), at most ``prec``.
        The integrand is still evaluated at ``prec`` bits."""
        ref = 1 if weight else max(1, abs(bw) + abs(length)) ** power
        need = int(mpmath.log(ref / tol, 2)) + QUAD_GUARD_BITS if tol > 0 else prec
        return max(53, min(prec, need))

    def _graded(self, bw, length, prec=None):
        """Nodes ``0 = s_0 < s_1 < … = length`` in the distance from the ordinary end ``bw``:
        pieces of length ``δ, 2δ, 4δ, …``, ``δ`` the distance from ``bw`` to the nearest
        singular point (beyond ``bw``, or off the axis), so that each piece is at most as
        long as its distance to the singularity (geometric convergence of Gauss–Legendre
        even when a special point lies just past the end).  ``prec``: bits at which ``bw``
        and the singular points are compared (default: the working precision)."""
        prec = prec or mpmath.mp.prec
        with mpmath.workprec(prec):
            delta = +self._sing_dist(self._mkernel(prec), bw)
        nodes = [0 * length]
        if not 0 < delta < length:
            return nodes + [length]
        w = delta
        while nodes[-1] + w < length and len(nodes) < 400:
            nodes.append(nodes[-1] + w)
            w *= 2
        return nodes + [length]

    def _edge(self, base, sign):
        key = ("edge", str(base.expr if isinstance(base, _Pt) else base), sign)
        if key not in self._cache:
            self._cache[key] = _Edge(self, base, sign)
        return self._cache[key]

    @staticmethod
    def _num(v, prec):
        if isinstance(v, _Pt):
            return mpmath.mpf(v.mpf(prec))
        if isinstance(v, sp.Basic):
            if v in (sp.oo, -sp.oo):
                return mpmath.inf if v > 0 else -mpmath.inf
            return mpmath.mpf(_to_mpf(v, prec))
        return mpmath.mpf(v)

    def _numeric_special(self, v):
        """True if ``v`` is an mpf approximation of a special point (laws with irrational
        coefficients: their support edges, special points and atom locations are mpf)."""
        if self._rational or isinstance(v, sp.Basic | _Pt):
            return False
        return self._numeric_special_match(v) is not None

    def _numeric_special_match(self, v):
        """The numeric special point within rounding (relative ``1e-9``, far above the
        ``dps + GUARD_DPS`` digits the mpf ends carry) of the mpf ``v``, or ``None``."""
        v = mpmath.mpf(v)
        for p in self._special_points():
            if isinstance(p, sp.Basic):
                continue
            if abs(v - p) <= mpmath.mpf(10) ** -9 * max(1, abs(p)):
                return p
        return None

    def _split(self, a, b, ats, prec):
        """``[a, b]`` split at the atoms and special points strictly inside (an mpf special
        point that only rounds differently from an mpf end is that end, not a cut), and
        each piece again at the real parts of the non-real singular points close to it
        (:meth:`_near_axis_cuts`)."""
        an, bn = self._num(a, prec), self._num(b, prec)
        ends = [(an, v) for v in (a,) if self._numeric_special(v)] + \
            [(bn, v) for v in (b,) if self._numeric_special(v)]
        cuts = []
        for p in list(self._special_points()) + [loc for loc, _ in ats]:
            pn = self._num(p, prec)
            if any(not isinstance(p, sp.Basic | _Pt) and self._numeric_special_match(v) is not None
                   and self._numeric_special_match(v) == self._numeric_special_match(p)
                   for _, v in ends):
                continue
            if an < pn < bn:
                cuts.append((pn, p))
        cuts.sort(key=lambda t: t[0])
        ends = [a] + [p for _, p in cuts] + [b]
        out = []
        for p, q in zip(ends, ends[1:]):
            pn, qn = self._num(p, prec), self._num(q, prec)
            if pn < qn:
                pts = [p] + self._near_axis_cuts(pn, qn) + [q]
                out += zip(pts, pts[1:])
        return out
