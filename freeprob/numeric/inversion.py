"""Quantiles of :class:`freeprob.numeric.AlgebraicCauchy`: the plain ``Q(p) = inf{x : F(x) ≥ p}``.

The mixin :class:`_Inversion` (``_plain_quantile``, behind the public ``quantile``).

The law is cut into components in increasing order: the atoms and the pieces of the
support (between edges, atoms and special points, as :meth:`_split` cuts them).  The
*level* ``L_i`` is ``F`` at the top of component ``i``: where ``F`` is flat (a gap, the
stretch before or after an atom) every point of the flat stretch has that value.
``Q(p)`` is the atom ``i`` when ``L_{i−1} < p ≤ L_i``, else the point of the piece ``i``
where the integral of the density from the piece's lower end reaches ``p − L_{i−1}``.

* Where ``p`` sits relative to a level is decided, never assumed: exactly when the level
  is known exactly (a sum of exact atom masses below every piece of the support, or ``1``
  minus such a sum above them; ``p`` is an exact rational), else from the level computed
  with an error bound below ``|p − L|/2``, the bound tightened down to
  ``10^{−(LEVEL_CAP_FACTOR·dps + LEVEL_CAP_EXTRA)}``; a ``p`` still within the bound of the
  level of a flat stretch is refused (:class:`~freeprob.errors.PrecisionError`): on one
  side the answer is the left end of the stretch, on the other its right end.
* Inside a piece the point is found from the end nearer in mass, in the distance ``s``
  from that end, by Newton's method on ``log m(s) = log d`` (``m(s)`` the mass between
  the end and ``x``, ``d`` the mass asked: ``m ≈ c·s^α`` near an edge, a straight line in
  ``(log s, log m)``) inside a bracket.  ``d`` and ``m(s)`` are computed to the accuracy
  that ``10^{−dps}`` in ``x`` needs (``δx ≈ δm/ρ(x)``: absolute ``ρ(x)·10^{−dps}·|x|/4``),
  so that near an edge, where ``F`` grows like ``s^{3/2}``, the digits are those of ``x``,
  not of ``p``.

Accuracy: ``|x̂ − Q(p)| ≤ 10^{−dps}·max(|Q(p)|, s)``, ``s`` the distance from ``Q(p)`` to
the end of its piece it was computed from (this only matters where 0 lies inside that
piece and ``|Q(p)| < s``: there ``F(Q(p)) − F(end)`` is all that is known to relative
accuracy).

Source: this project's design (issue 26); the generalized inverse as scipy's ``ppf``.
"""
from __future__ import annotations

import flint
import mpmath
import sympy as sp

from freeprob.core.coefficients import flint_precision
from freeprob.errors import FreeprobValueError, PrecisionError
from freeprob.numeric.rootkernel import GUARD_DPS, _arb, _bits, _check_dps, _real_point, _to_mpf

#: a level is refined down to an error of 10^-(LEVEL_CAP_FACTOR·dps + LEVEL_CAP_EXTRA) at most
LEVEL_CAP_FACTOR = 2
LEVEL_CAP_EXTRA = 25
#: Newton steps in the distance from a piece's end before giving up
_MAX_NEWTON = 80


def _exact_sign(expr):
    """Sign of the exact real number ``expr`` (sympy): ``+1``, ``−1``, ``0``, or ``None``.

    Rationals exactly; else the arb ball of ``expr`` (:func:`_arb`) at 64 … 8192 bits until
    it excludes 0 (an algebraic irrational number is never 0, so this ends); a ball
    that keeps containing 0 is 0 only if sympy simplifies ``expr`` to 0."""
    expr = sp.nsimplify(expr) if isinstance(expr, sp.Float) else expr
    if expr.is_Rational:
        return 1 if expr > 0 else (-1 if expr < 0 else 0)
    for prec in (64, 256, 1024, 4096, 8192):
        with flint_precision(flint.ctx.cap, prec):
            b = _arb(expr)
            if b is None:
                break
            if b > 0:
                return 1
            if b < 0:
                return -1
    if sp.simplify(expr) == 0:
        return 0
    return None


class _Comp:
    """A component of the law: an atom (``lo == hi``, ``mass`` exact sympy or mpf) or a
    piece ``[lo, hi]`` of the support (``mass`` None: integrated)."""

    __slots__ = ("atom", "lo", "hi", "mass", "index")

    def __init__(self, atom, lo, hi, mass, index):
        self.atom, self.lo, self.hi, self.mass, self.index = atom, lo, hi, mass, index


class _Inversion:
    """Mixin of :class:`~freeprob.numeric.AlgebraicCauchy`: the plain quantile (see the
    module docstring).  Needs ``support``, ``atoms``, ``_split``, ``_piece``,
    ``_integrate``, ``_edge`` and ``_num`` of the host class."""

    def _plain_quantile(self, pe, dps):
        """``Q(p)`` for the exact ``p`` (:class:`_Pt`, ``0 ≤ p ≤ 1``) to ``dps`` digits
        (module docstring).  Raises :class:`PrecisionError` when the side of a level or
        the digits cannot be decided."""
        return _QuantileRun(self, pe, dps).run()

    def flat_levels(self, *, dps=15):
        r"""The flat stretches of the distribution function and its value there:
        ``((x0, x1, level), …)``, ``x0 < x1`` consecutive points of the support or atoms with
        no mass strictly between them (a gap between support intervals, the stretch before or
        after an isolated atom), ``level = F(x0) = F(x)`` for ``x0 ≤ x < x1``.

        ``x0``, ``x1`` as :meth:`support` and :meth:`atoms` give them (exact where they
        can be); ``level`` exact (sympy) where the structure gives it (atoms only below or
        only above; a level handed as ``known_levels``), else an mpf with error below
        ``10^{-dps}``.  :meth:`quantile` decides with these on which side of a stretch ``p``
        lies; :class:`~freeprob.experiments.compare.TabulatedLaw` stores them.

        Raises
        ------
        FreeprobValueError
            ``dps`` invalid; a handed level inconsistent with the computed one.
        PrecisionError
            If a level cannot be computed to ``10^{-dps}``.
        NotAvailable
            If the support is unbounded.
        """
        dps = _check_dps(dps, "flat_levels")
        run = _QuantileRun(self, _real_point(0, "flat_levels"), dps)
        out = []
        tol = mpmath.mpf(10) ** (-dps - 2)
        prec = run.prec_for(tol)
        for i in range(len(run.comps) - 1):
            top, bottom = run.comps[i].hi, run.comps[i + 1].lo
            with mpmath.workprec(prec):
                if not self._compare(top, bottom, prec) < 0:
                    continue
            lev = run.exact_or_known(i)
            if lev is None:
                v, e = run.level(i, tol)
                if e > mpmath.mpf(10) ** -dps:
                    raise PrecisionError(f"AlgebraicCauchy.flat_levels: the level at {top} is known "
                                         f"to ±{mpmath.nstr(e, 3)} only, not 10^-{dps}")
                with mpmath.workdps(dps):
                    lev = +v
            out.append((top, bottom, lev))
        return tuple(out)

    def _known_level_points(self):
        """The ``known_levels`` handed to the constructor as ``[(mpf point, sympy level)]``
        (the function called once), checked to be exact real pairs with levels in
        ``[0, 1]``; memoized."""
        hit = self._cache.get("known levels")
        if hit is not None:
            return hit
        raw = getattr(self, "_known_levels_arg", None)
        if callable(raw):
            raw = raw()
        out = []
        for t in raw or ():
            try:
                x, lev = (sp.sympify(v) for v in t)
            except (TypeError, ValueError, sp.SympifyError):
                raise FreeprobValueError(
                    f"AlgebraicCauchy: `known_levels` must be (point, level) pairs; got {t!r}") from None
            if not (x.is_number and lev.is_number) or x.has(sp.Float) or lev.has(sp.Float) \
                    or x.is_real is False or not (lev.is_real and 0 <= lev <= 1):
                raise FreeprobValueError(
                    "AlgebraicCauchy: `known_levels` needs exact real points and exact levels in "
                    f"[0, 1]; got {t!r}")
            out.append((mpmath.mpf(_to_mpf(x, 128)), lev))
        self._cache["known levels"] = out
        return out


class _QuantileRun:
    """One call of the plain quantile: the components, their levels at the tolerances
    asked so far, the decisions taken."""

    def __init__(self, law, pe, dps):
        self.A, self.dps = law, dps
        self.p = pe.expr if pe.num is None else sp.Rational(pe.num, pe.den)
        self.pe = pe
        self.prec0 = _bits(dps + GUARD_DPS)
        self.cap = mpmath.mpf(10) ** -(LEVEL_CAP_FACTOR * dps + LEVEL_CAP_EXTRA)
        sup = law.support(dps=dps + GUARD_DPS)
        ats = law.atoms(dps=dps + GUARD_DPS)
        self.numeric_atoms = any(not isinstance(m, sp.Basic) for _, m in ats)
        comps = [_Comp(True, loc, loc, m, k) for k, (loc, m) in enumerate(ats)]
        with mpmath.workprec(self.prec0):
            for a, b in sup:
                for lo, hi in law._split(a, b, ats, self.prec0):
                    comps.append(_Comp(False, lo, hi, None, None))
            comps.sort(key=lambda c: (law._num(c.lo, self.prec0), 0 if c.atom else 1))
        if not comps:
            raise PrecisionError("AlgebraicCauchy.quantile: the law has neither atoms nor support")
        self.comps = comps
        self.masses = {}        # tol -> [(value, error)] per component
        self.best = {}          # boundary i -> (value, error, prec) of the sharpest level
        self.sides = {}         # boundary i -> sign of p − L_i
        self.from_end = {}      # (piece, sign) -> [(s, point, mass from the end, error)]

    # -- numbers ------------------------------------------------------------------------
    def prec_for(self, tol):
        """Bits that resolve ``tol`` (and the ``dps`` digits asked) with guard."""
        return max(self.prec0, int(-mpmath.log(tol, 2)) + 24)

    def num(self, v, prec):
        return self.A._num(v, prec)

    def p_mpf(self, prec):
        return mpmath.mpf(self.pe.mpf(prec))

    def out(self, v):
        """``v`` rounded to ``dps`` digits (an exact 0 stays 0)."""
        with mpmath.workdps(self.dps):
            return +v

    # -- levels -------------------------------------------------------------------------
    def mass(self, j, tol):
        """``(mass, error)`` of component ``j``: an exact atom mass, a numeric one (irrational
        coefficients) to ``tol``, or a piece integrated to ``tol`` (:meth:`_piece`, shared
        with :meth:`cdf` at the same precision and tolerance)."""
        key = (j, mpmath.mpf(tol))
        if key in self.masses:
            return self.masses[key]
        c, prec = self.comps[j], self.prec_for(tol)
        with mpmath.workprec(prec):
            if c.atom and isinstance(c.mass, sp.Basic):
                out = (self.num(c.mass, prec), mpmath.mpf(0))
            elif c.atom:
                digits = int(-mpmath.log10(tol)) + 5
                m = mpmath.mpf(self.A.atoms(dps=max(self.dps + GUARD_DPS, digits))[c.index][1])
                out = (m, abs(m) * mpmath.mpf(10) ** -(digits - 2))
            else:
                out = self.A._piece(c.lo, c.hi, c.hi, prec, tol)
        self.masses[key] = out
        return out

    def exact_level(self, i):
        """``L_i`` exactly (sympy) when the structure gives it, else ``None``: ``0`` below
        everything, ``1`` at the top, a sum of exact atom masses below every piece, ``1``
        minus such a sum above every piece."""
        n = len(self.comps)
        if i < 0:
            return sp.Integer(0)
        if i >= n - 1:
            return sp.Integer(1)
        below, above = self.comps[:i + 1], self.comps[i + 1:]
        if all(c.atom and isinstance(c.mass, sp.Basic) for c in below):
            return sp.Add(*[c.mass for c in below])
        if all(c.atom and isinstance(c.mass, sp.Basic) for c in above):
            return 1 - sp.Add(*[c.mass for c in above])
        return None

    def known_level(self, i):
        """A level handed by the caller (``known_levels``) at a point of the flat stretch
        between components ``i`` and ``i + 1``, checked against the computed level; else
        ``None``."""
        with mpmath.workprec(128):
            a, b = self.num(self.comps[i].hi, 128), self.num(self.comps[i + 1].lo, 128)
            margin = mpmath.mpf(10) ** -20 * max(1, abs(a), abs(b))
            hits = [lev for x, lev in self.A._known_level_points() if a + margin < x < b - margin]
        if not hits:
            return None
        lev = hits[0]
        tol = mpmath.mpf(10) ** (-self.dps - 2)
        v, e = self.level(i, tol)
        with mpmath.workprec(self.prec_for(tol)):
            if abs(v - self.num(lev, mpmath.mp.prec)) > 4 * e + tol:
                raise FreeprobValueError(
                    f"AlgebraicCauchy: the handed level {lev} between {mpmath.nstr(a, 10)} and "
                    f"{mpmath.nstr(b, 10)} disagrees with the computed cdf there "
                    f"({mpmath.nstr(v, 15)} ± {mpmath.nstr(e, 3)})")
        return lev

    def level(self, i, tol):
        """``(L_i, error bound)`` at ``tol``: the sum of the masses below, or ``1`` minus the
        sum above when fewer pieces lie above."""
        n = len(self.comps)
        hit = self.best.get(i)
        if hit is not None and hit[1] <= tol:
            return hit
        pieces_below = sum(1 for c in self.comps[:i + 1] if not c.atom)
        pieces_above = sum(1 for c in self.comps[i + 1:] if not c.atom)
        with mpmath.workprec(self.prec_for(tol)):
            if pieces_above < pieces_below:
                ms = [self.mass(j, tol) for j in range(i + 1, n)]
                v = 1 - mpmath.fsum(m for m, _ in ms)
            else:
                ms = [self.mass(j, tol) for j in range(i + 1)]
                v = mpmath.fsum(m for m, _ in ms)
            e = mpmath.fsum(err for _, err in ms)
        if hit is None or e < hit[1]:
            self.best[i] = (v, e)
        return v, e

    def exact_or_known(self, i):
        """:meth:`exact_level`, else a handed level (:meth:`known_level`), else ``None``."""
        ex = self.exact_level(i)
        return ex if ex is not None else self.known_level(i)

    def side(self, i):
        """Sign of ``p − L_i`` (``0``: equal, known exactly), or ``None`` when the level's
        error bound could not be brought below ``|p − L_i|`` above the cap."""
        if i in self.sides:
            return self.sides[i]
        ex = self.exact_level(i)
        out = None
        if ex is not None:
            out = _exact_sign(self.p - ex)
        if out is None:
            tol = mpmath.mpf(10) ** (-self.dps - 2)
            while True:
                v, e = self.level(i, tol)
                with mpmath.workprec(self.prec_for(min(tol, e) if e else tol)):
                    diff = self.p_mpf(mpmath.mp.prec) - v
                    if abs(diff) > 2 * e:
                        out = 1 if diff > 0 else -1
                        break
                    if ex is None:      # undecided: a level the caller knows exactly?
                        ex = self.known_level(i)
                        if ex is not None:
                            out = _exact_sign(self.p - ex)
                            if out is not None:
                                break
                        ex = False
                    if tol <= self.cap:
                        break
                    # the next tolerance: below |p − L| if that is known, else more digits
                    tol = max(self.cap, min(tol * mpmath.mpf(10) ** -(self.dps + 2),
                                            abs(diff) / 16 if diff else tol))
        self.sides[i] = out
        return out

    # -- the search -----------------------------------------------------------------------
    def run(self):
        A, comps = self.A, self.comps
        n = len(comps)
        if self.p == 0:
            return self.out(self.num(comps[0].lo, self.prec0))
        # the first component whose top level is ≥ p, by the plain levels
        tol = mpmath.mpf(10) ** (-self.dps - 2)
        with mpmath.workprec(self.prec0):
            pm, cum, i = self.p_mpf(self.prec0), mpmath.mpf(0), n - 1
            for k in range(n):
                cum += self.mass(k, tol)[0]
                if pm <= cum:
                    i = k
                    break
        for _ in range(4 * n + 4):
            s_hi = self.side(i)
            if s_hi is None:
                return self.undecided(i)
            if s_hi > 0:
                i += 1
                continue
            s_lo = self.side(i - 1) if i > 0 else 1
            if s_lo is None:
                return self.undecided(i - 1)
            if s_lo <= 0:
                i -= 1
                continue
            break
        else:       # pragma: no cover - the sides are memoized, so the search ends
            raise PrecisionError("AlgebraicCauchy.quantile: the levels are inconsistent")
        c = comps[i]
        if c.atom:
            return self.out(self.num(c.lo, self.prec0))
        if s_hi == 0:               # p is the level at the top of the piece, exactly
            return self.out(self.num(c.hi, self.prec0))
        return self.invert(i)

    def undecided(self, i):
        """``p`` within the error bound of ``L_i`` at the cap.  Where the components on
        both sides meet at one point ``b`` (no flat stretch, no jump) and the mass within
        ``10^{−dps}·|b|`` (``10^{−dps}`` at ``b = 0``) of ``b`` on either side exceeds that
        bound, ``Q(p) = b`` to ``dps`` digits; else a :class:`PrecisionError`."""
        left, right = self.comps[i], self.comps[i + 1]
        v, e = self.best.get(i, (None, None))
        prec = self.prec_for(self.cap)
        with mpmath.workprec(prec):
            b, b2 = self.num(left.hi, prec), self.num(right.lo, prec)
            # dps relative digits; at b = 0 (no relative digits exist) dps absolute ones
            tau = mpmath.mpf(10) ** -self.dps * (abs(b) if b != 0 else 1) / 2
            if e is not None and b == b2 and tau > 0:
                ok = True
                for c, sign in ((left, -1), (right, 1)):
                    if c.atom:
                        m = self.num(c.mass, prec) if isinstance(c.mass, sp.Basic) else c.mass
                    else:
                        m = self.mass_near(c, b, sign, tau, max(e / 4, self.cap * mpmath.mpf(10) ** -10))
                    ok = ok and m > 2 * e
                if ok:
                    return self.out(b)
            gap = f"the flat stretch [{mpmath.nstr(b, 12)}, {mpmath.nstr(b2, 12)}]" if b != b2 \
                else f"the point {mpmath.nstr(b, 12)}"
            lv = mpmath.nstr(v, 20) if v is not None else "?"
        raise PrecisionError(
            f"AlgebraicCauchy.quantile: p = {self.p} cannot be told apart from the cdf level "
            f"{lv} at {gap} (known to ±{mpmath.nstr(e, 3) if e is not None else '?'}, "
            f"refined down to 1e-{LEVEL_CAP_FACTOR * self.dps + LEVEL_CAP_EXTRA}): on one "
            "side of the level the quantile is the left end, on the other the right end; pass "
            "a p farther from the level, or fewer digits")

    def mass_near(self, c, b, sign, tau, tol):
        """Mass of the piece ``c`` within ``tau`` of its end ``b`` (``sign``: +1 above)."""
        prec = self.prec_for(tol)
        with mpmath.workprec(prec + 20):
            t = _real_point(b + sign * tau, "quantile")
        end = c.lo if sign > 0 else c.hi
        a, z = (end, t) if sign > 0 else (t, end)
        v, _ = self.A._integrate(a, z, prec, tol)
        return v

    # -- inside a piece -------------------------------------------------------------------
    def invert(self, i):
        """``Q(p)`` inside the piece ``i`` (``L_{i−1} < p < L_i`` decided)."""
        c = self.comps[i]
        tol = mpmath.mpf(10) ** (-self.dps - 2)
        for attempt in range(12):
            prec = self.prec_for(tol)
            with mpmath.workprec(prec):
                lo_v, lo_e = self.level_or_exact(i - 1, tol, known=attempt > 0)
                hi_v, hi_e = self.level_or_exact(i, tol, known=attempt > 0)
                pm = self.p_mpf(prec)
                dlo, dhi = pm - lo_v, hi_v - pm
                lon, hin = self.num(c.lo, prec), self.num(c.hi, prec)
                if dlo <= dhi:
                    end, sign, d, ed = c.lo, 1, dlo, lo_e
                else:
                    end, sign, d, ed = c.hi, -1, dhi, hi_e
                if not d > 0:       # the numeric level contradicts the decided side
                    tol = max(self.cap, tol * mpmath.mpf(10) ** -(self.dps + 2))
                    continue
                x, s, need = self.solve(c, end, sign, d, hin - lon, hi_v - lo_v, tol)
            if ed <= need:
                return self.out(x)
            if tol <= self.cap:
                break
            tol = max(self.cap, need / 4)
        raise PrecisionError(
            f"AlgebraicCauchy.quantile: Q({self.p}) needs the cdf at the end of its support piece "
            f"to better than 1e-{LEVEL_CAP_FACTOR * self.dps + LEVEL_CAP_EXTRA}")

    def level_or_exact(self, i, tol, known=False):
        """``(L_i, error)``: exact where the structure (with ``known``: also a handed
        level) gives it, else computed to ``tol``."""
        ex = self.exact_or_known(i) if known else self.exact_level(i)
        if ex is not None:
            return self.num(ex, mpmath.mp.prec), mpmath.mpf(0)
        return self.level(i, tol)

    def solve(self, c, end, sign, d, length, mass, tol):
        """``(x, s, need)``: the point ``x = end + sign·s`` of the piece ``c`` where the mass
        between ``end`` and ``x`` is ``d`` (``0 < d``, the piece has length ``length`` and
        mass about ``mass``), with ``need`` the accuracy of ``d`` that ``10^{−dps}`` in
        ``x`` needs.  Newton's method on ``log m(s) − log d`` in ``log s`` (safeguarded by
        the bracket), each ``m(s)`` to that accuracy."""
        A, dps = self.A, self.dps
        prec = mpmath.mp.prec
        en = self.num(end, prec)
        edge = A._edge(end, sign)
        sa, sb = mpmath.mpf(0), length            # m(sa) < d ≤ m(sb)
        frac = min(max(d / mass, mpmath.mpf(10) ** -300), 1) if mass > 0 else mpmath.mpf(1) / 2
        s = length * (frac ** (mpmath.mpf(2) / 3) if edge.special else frac)
        s = min(max(s, length * mpmath.mpf(2) ** -(prec + 200)), length / 2 if frac < 1 else length)
        ten = mpmath.mpf(10) ** -dps
        need = None
        for _ in range(_MAX_NEWTON):
            x = en + sign * s
            rho = edge.density(s, prec)
            need = rho * ten * max(abs(x), s) / 4
            qtol = min(d / 1000, need / 2) if need > 0 else d / 1000
            m = self.mass_from(c, end, sign, s, qtol)
            if need > 0 and abs(m - d) <= need / 2:
                break           # m(s) = d within what 10^-dps in x allows
            if m < d:
                sa = s
            else:
                sb = s
            if sb - sa <= ten * max(abs(en + sign * sb), sb) / 8:
                s = sb if m < d else s
                break
            if rho > 0 and m > 0:
                step = (mpmath.log(d) - mpmath.log(m)) * m / (s * rho)
                new = s * mpmath.exp(max(min(step, 8), -8))
            else:
                new = None
            if new is None or not sa < new < sb:
                new = mpmath.sqrt(sa * sb) if sa > 0 else sb / 64
            if abs(new - s) <= ten * max(abs(en + sign * new), new) / 16:
                s = new
                break
            s = new
        else:
            raise PrecisionError(f"AlgebraicCauchy.quantile: no convergence for p = {self.p}")
        with mpmath.workprec(prec + max(0, int(mpmath.mag(en) - mpmath.mag(s))) + 20 if en else prec):
            x = en + sign * s
        rho = edge.density(s, prec)
        need = rho * ten * max(abs(x), s) / 4
        return x, s, need if need > 0 else mpmath.mpf(0)

    def mass_from(self, c, end, sign, s, tol):
        """``∫`` of the density between ``end`` and ``end + sign·s`` inside the piece ``c``,
        to about ``tol``: from the nearest point already integrated to from the same end
        (within a factor 2 in ``s``: an interval with two ordinary ends, Gauss–Legendre)
        when its error leaves room, else from the end."""
        prec = self.prec_for(tol)
        en = self.num(end, prec)
        store = self.from_end.setdefault((id(c), sign), [])
        extra = max(0, int(mpmath.mag(en) - mpmath.mag(s))) if en else 0
        with mpmath.workprec(prec + extra + 20):
            t = _real_point(en + sign * s, "quantile")
        near = [(abs(sk - s), sk, tk, mk, ek) for sk, tk, mk, ek in store
                if ek <= tol / 2 and s / 2 <= sk <= 2 * s]
        if near:
            _, sk, tk, mk, ek = min(near, key=lambda r: r[0])
            if sk == s:
                return mk
            a, b = (tk, t) if (sk < s) == (sign > 0) else (t, tk)
            v, e = self.A._integrate(a, b, prec, tol / 2)
            m = mk + v if sk < s else mk - v
            e = ek + e
        else:
            a, b = (end, t) if sign > 0 else (t, end)
            m, e = self.A._integrate(a, b, prec, tol)
        store.append((s, t, m, e))
        return m
