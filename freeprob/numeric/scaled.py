r"""Numerics of a law dilated by a constant ``c > 0`` through the evaluator of the law itself.

If ``X`` has Cauchy transform ``G_X``, then ``cX`` (``c > 0``) has

.. math:: G_{cX}(z) = G_X(z/c)/c,\quad f_{cX}(x) = f_X(x/c)/c,\quad F_{cX}(x) = F_X(x/c),
          \quad Q_{cX}(p) = c\,Q_X(p),

support edges ``c·e``, atoms ``(c·a, m)`` with the masses unchanged, moments
``c^k m_k`` ([MS17]_ §2.4).  :class:`ScaledCauchy` wraps the numeric evaluator of ``X`` (an
:class:`~freeprob.numeric.cauchy.AlgebraicCauchy` or anything with its methods) and
answers for ``cX``: the Cauchy equation of ``cX``, ``P(cG, z/c)``, has the same degree but
coefficients with powers of ``c`` (a bulk scale with four digits made the finite-width
attention laws' exact set-up and float tabulation markedly slower, issue 27), and when ``c``
is irrational its discriminant is no longer rational (the edges were mpf; here they are the
exact ``c·e``).

Points are divided by ``c`` exactly when ``c`` is rational (a rational point stays rational)
or the point is irrational (a sympy expression), so the inner evaluator sees the same exact
point the equation of ``cX`` would; a rational point and an irrational ``c`` give the binary
rational nearest to ``x/c`` at ``dps + 40`` digits (at least 256 bits: exact sympy quotients
made ``mean_normalized`` laws, ``c = 1/m1``, several times slower); values are computed by the inner evaluator at ``dps +``
:data:`SCALE_GUARD_DPS` digits and multiplied by ``c`` at that precision, then rounded to
``dps`` digits.  With ``ball=True`` the inner enclosures are multiplied by a ball that
provably contains ``c`` (python-flint ``arb``), so the results still provably contain the
values.  This module knows nothing of laws: :meth:`freeprob.laws.law.Law._evaluator` uses it
for a law ``Dilate(X, c)`` with a number ``c > 0``.

Source: [MS17]_ §2.4 (dilations); this project's design (issue 27).
"""
from __future__ import annotations

import re as re_
from fractions import Fraction

import mpmath
import sympy as sp
from flint import acb, arb

from freeprob.errors import FreeprobValueError
from freeprob.numeric.balls import _prec, check_ball, enclose, shows_proven
from freeprob.numeric.rootkernel import (
    _bits,
    _check_dps,
    _complex_point,
    _CPt,
    _exact_point,
    _is_nonreal_input,
    _Pt,
    _real_point,
    _to_mpf,
)

__all__ = ["ScaledCauchy", "SCALE_GUARD_DPS"]

#: extra digits of the inner evaluation (the product with ``c`` is then rounded to ``dps``)
SCALE_GUARD_DPS = 5


def _positive_scale(c):
    """``c`` as a sympy number, checked ``> 0`` (real, finite)."""
    if isinstance(c, bool) or not isinstance(c, int | Fraction | sp.Basic):
        raise FreeprobValueError(f"ScaledCauchy: c must be an exact real number > 0 (int, Fraction or sympy); "
                                 f"got {type(c).__name__} {c!r}")
    e = sp.Rational(c.numerator, c.denominator) if isinstance(c, Fraction) else sp.sympify(c)
    if not (isinstance(e, sp.Expr) and e.is_number and not e.has(sp.Float) and e.is_extended_real
            and e.is_finite and e.is_positive):
        raise FreeprobValueError(f"ScaledCauchy: c must be an exact finite real number > 0; got {c!r}")
    return e


class ScaledCauchy:
    r"""The numeric evaluator of ``cX`` (``c > 0``) from the evaluator ``inner`` of ``X``.

    Parameters
    ----------
    inner : AlgebraicCauchy or an object with its numeric methods
        The evaluator of ``X``.
    c : int, Fraction or exact sympy number > 0
        The dilation (rationals keep every point rational; ``sqrt(2)``, ``E`` … are used
        through exact expressions and rigorous balls).
    atoms : callable ``(dps, ball) -> ((location, mass), …)``, optional
        The atoms of ``X`` (default ``inner.atoms``), e.g. from the law's structure.

    Every method has the signature and the return types of the same method of
    :class:`~freeprob.numeric.cauchy.AlgebraicCauchy` and returns the value for ``cX``
    (module docstring): :meth:`cauchy`, :meth:`density`, :meth:`density_grid`,
    :meth:`density_float`, :meth:`cdf`, :meth:`quantile`, :meth:`flat_levels`,
    :meth:`support`, :meth:`cut_points`, :meth:`atoms`, :meth:`moments`, :meth:`extent`,
    :meth:`expectation`; :meth:`exact_state` and :meth:`adopt_state` are the inner
    evaluator's.

    Raises
    ------
    FreeprobValueError
        ``c`` not an exact real number > 0 (``c ≤ 0``, a float, a symbol, ``oo``).

    Source: [MS17]_ §2.4; the module docstring.
    """

    #: :meth:`cauchy` takes an exact point as its two parts (:class:`~freeprob.numeric.rootkernel._CPt`)
    takes_exact_parts = True

    def __init__(self, inner, c, *, atoms=None):
        self.inner = inner
        self.c = _positive_scale(c)
        self._cq = Fraction(int(self.c.p), int(self.c.q)) if self.c.is_Rational else None
        self._atoms = atoms if atoms is not None else (lambda dps, ball: inner.atoms(dps=dps, ball=ball))
        self._c_at = {}         # (kind, prec) -> c as an mpf / an arb ball: once per precision

    def __repr__(self):
        return f"ScaledCauchy({self.inner!r}, {self.c})"

    # -- numbers --------------------------------------------------------------------------
    def _c_mpf(self, prec):
        hit = self._c_at.get(("mpf", prec))
        if hit is None:
            hit = self._c_at[("mpf", prec)] = mpmath.mpf(_to_mpf(self.c, prec))
        return hit

    def _c_ball(self, prec):
        hit = self._c_at.get(("arb", prec))
        if hit is None:
            hit = self._c_at[("arb", prec)] = enclose(self.c, prec)
        return hit

    def _divide(self, pt, dps=15):
        """The point ``x/c`` of an exact point ``x`` (a :class:`_Pt`): exact for a rational ``c``
        (a rational point for a rational ``x``) and for an irrational ``x``; for a rational ``x``
        and an irrational ``c``, the binary rational nearest to ``x/c`` at
        ``max(256, bits(dps + 40))`` bits (a sympy expression as the point made every evaluation
        several times slower: ``mean_normalized`` laws, whose ``c = 1/m1`` is irrational)."""
        if self._cq is not None and pt.num is not None:
            return _Pt(Fraction(pt.num, pt.den) / self._cq)
        if pt.num is None:
            return _Pt(expr=pt.expr / self.c)
        prec = max(256, _bits(dps + 40))
        with mpmath.workprec(prec):
            v = mpmath.mpf(pt.num) / pt.den / self._c_mpf(prec + 20)
        return _exact_point(v, "ScaledCauchy", "x")

    def _point(self, x, who, name="x", dps=15):
        return self._divide(_real_point(x, who, name), dps)

    def _times(self, v, dps, power=1):
        """``c^power · v`` for a value ``v`` of the inner evaluator: exact sympy for exact ``v``,
        an mpf rounded to ``dps`` digits for an mpf, a ball for a ball."""
        if isinstance(v, arb | acb):
            prec = _bits(dps + 2 * SCALE_GUARD_DPS)
            with _prec(prec):
                cb = self._c_ball(prec)
                return v * cb ** power if power >= 0 else v / cb ** (-power)
        if isinstance(v, mpmath.mpf | mpmath.mpc):
            if not mpmath.isfinite(v) or v == 0:
                return v
            prec = _bits(dps + 2 * SCALE_GUARD_DPS)
            with mpmath.workprec(prec):
                cm = self._c_mpf(prec)
                r = v * cm ** power
            with mpmath.workdps(dps):
                return +r
        if isinstance(v, float):
            return v * float(self.c) ** power
        if isinstance(v, int | Fraction | sp.Basic):
            if v == 0:
                return v
            e = sp.sympify(v) if not isinstance(v, Fraction) else sp.Rational(v.numerator, v.denominator)
            return e * self.c ** power
        raise TypeError(f"ScaledCauchy: cannot scale a {type(v).__name__}")

    def _inner_dps(self, dps, who):
        return _check_dps(dps, who) + SCALE_GUARD_DPS

    # -- transforms ------------------------------------------------------------------------
    @shows_proven
    def cauchy(self, z, *, dps=15, ball=False):
        """``G(z) = G_X(z/c)/c``: as :meth:`AlgebraicCauchy.cauchy` (``z`` divided by ``c``
        exactly).  Raises as that method."""
        ball = check_ball(ball, "cauchy")
        idps = self._inner_dps(dps, "cauchy")
        if _is_nonreal_input(z):
            try:
                re, im = _complex_point(z, "cauchy")
            except FreeprobValueError:
                raise                               # (a part out of range: its own message)
            except (TypeError, ValueError) as exc:
                raise FreeprobValueError(f"AlgebraicCauchy.cauchy: `z` must be a number; got {z!r}") from exc
            re, im = self._divide(re, idps), self._divide(im, idps)
            # exact parts handed on as they are to an evaluator that takes them
            zc = _CPt(re, im) if getattr(self.inner, "takes_exact_parts", False) else re.expr + sp.I * im.expr
        else:
            zc = self._point(z, "cauchy", "z", idps).expr
        try:
            v = self.inner.cauchy(zc, dps=idps, ball=ball)
        except FreeprobValueError as exc:
            # a real z on the cut or at a pole: the message names the user's z, not z/c
            inner_z = re_.escape("z = " + repr(zc.re if isinstance(zc, _CPt) else _shown_point(zc)))
            msg, hits = re_.subn(inner_z + r"(?=\s|$)", lambda _: f"z = {z}", str(exc))
            if hits:
                raise FreeprobValueError(msg) from None
            raise
        return self._times(v, dps, -1)

    @shows_proven
    def density(self, x, *, dps=15, ball=False):
        """``f(x) = f_X(x/c)/c``: as :meth:`AlgebraicCauchy.density`.  Raises as that method."""
        ball = check_ball(ball, "density")
        idps = self._inner_dps(dps, "density")
        return self._times(self.inner.density(self._point(x, "density", "x", idps), dps=idps, ball=ball), dps, -1)

    @shows_proven
    def density_grid(self, xs, *, dps=15, ball=False):
        """The density at each point of the sorted ``xs``: as
        :meth:`AlgebraicCauchy.density_grid`.  Raises as that method."""
        ball = check_ball(ball, "density_grid")
        idps = self._inner_dps(dps, "density_grid")
        pts = [self._point(x, "density_grid", "xs", idps) for x in xs]
        vals = self.inner.density_grid(pts, dps=idps, ball=ball)
        return [self._times(v, dps, -1) for v in vals]

    def density_float(self, xs, **kwargs):
        """Floats to about ``rtol`` (:meth:`AlgebraicCauchy.density_float`): ``f_X(x/c)/c`` at
        the exact points ``x/c``.  Raises as that method."""
        cf = float(self.c)
        vals = self.inner.density_float([self._point(x, "density_float", "xs") for x in xs], **kwargs)
        return [v / cf for v in vals]

    @shows_proven
    def cdf(self, x, *, dps=15, ball=False):
        """``F(x) = F_X(x/c)``: as :meth:`AlgebraicCauchy.cdf`.  Raises as that method."""
        ball = check_ball(ball, "cdf")
        dps = _check_dps(dps, "cdf")
        return self.inner.cdf(self._point(x, "cdf", "x", dps + SCALE_GUARD_DPS), dps=dps, ball=ball)

    @shows_proven
    def quantile(self, p, *, dps=15, ball=False):
        """``Q(p) = c Q_X(p)``: as :meth:`AlgebraicCauchy.quantile`.  Raises as that method."""
        ball = check_ball(ball, "quantile")
        return self._times(self.inner.quantile(p, dps=self._inner_dps(dps, "quantile"), ball=ball), dps)

    def flat_levels(self, *, dps=15):
        """``((c x0, c x1, level), …)``: as :meth:`AlgebraicCauchy.flat_levels`."""
        idps = self._inner_dps(dps, "flat_levels")
        return tuple((self._times(a, dps), self._times(b, dps), lev)
                     for a, b, lev in self.inner.flat_levels(dps=idps))

    @shows_proven
    def support(self, *, dps=15, ball=False):
        """``((c a, c b), …)``: as :meth:`AlgebraicCauchy.support` (exact edges stay exact:
        ``c·e``, also for an irrational ``c``).  Raises as that method."""
        ball = check_ball(ball, "support")
        sup = self.inner.support(dps=self._inner_dps(dps, "support"), ball=ball)
        return tuple((self._times(a, dps), self._times(b, dps)) for a, b in sup)

    def cut_points(self, *, dps=15):
        """``c·x`` for the cut points ``x`` of ``X`` (:meth:`AlgebraicCauchy.cut_points`)."""
        pts = self.inner.cut_points(dps=self._inner_dps(dps, "cut_points"))
        return type(pts)(self._times(v, dps) for v in pts)

    @shows_proven
    def atoms(self, *, dps=15, ball=False):
        """``((c a, m), …)``: as :meth:`AlgebraicCauchy.atoms` (the masses unchanged)."""
        ball = check_ball(ball, "atoms")
        ats = self._atoms(self._inner_dps(dps, "atoms"), ball)
        return tuple((self._times(a, dps), m if not isinstance(m, mpmath.mpf) else self._round(m, dps))
                     for a, m in ats)

    @staticmethod
    def _round(v, dps):
        with mpmath.workdps(dps):
            return +v

    # -- quadrature ------------------------------------------------------------------------
    def moments(self, k, *, dps=15):
        """``(c^j m_j(X))_{j ≤ k}``: as :meth:`AlgebraicCauchy.moments`."""
        ms = self.inner.moments(k, dps=self._inner_dps(dps, "moments"))
        return tuple(self._times(m, dps, j) for j, m in enumerate(ms))

    @staticmethod
    def working_prec(dps):
        """As :meth:`AlgebraicCauchy.working_prec` (the inner evaluator's)."""
        from freeprob.numeric.quadrature import _Quadrature
        return _Quadrature.working_prec(dps)

    def extent(self, *, dps=15):
        """``(c lo, c hi)`` of :meth:`AlgebraicCauchy.extent`, at :meth:`working_prec` bits."""
        lo, hi = self.inner.extent(dps=self._inner_dps(dps, "extent"))
        prec = self.working_prec(dps)
        with mpmath.workprec(prec + 20):
            cm = self._c_mpf(prec + 20)
            lo, hi = lo * cm, hi * cm
        with mpmath.workprec(prec):
            return +lo, +hi

    def expectation(self, weight, *, dps=15, tol, cuts=(), tail=None):
        """``∫ weight dμ_{cX} = ∫ weight(c y) dμ_X(y)``: as :meth:`AlgebraicCauchy.expectation`
        (cuts and tail divided by ``c``).  Raises as that method."""
        if not callable(weight):
            raise FreeprobValueError("AlgebraicCauchy.expectation: `weight` must be a function of an "
                                     f"mpf x; got {type(weight).__name__}")
        def scaled(y):
            return weight(y * self._c_mpf(mpmath.mp.prec))

        cuts = [self._divide(_exact_point(v, "expectation", "cuts")).expr for v in cuts]
        if tail is not None:
            tail = self._divide(_exact_point(tail, "expectation", "tail")).expr
        return self.inner.expectation(scaled, dps=dps, tol=tol, cuts=cuts, tail=tail)

    # -- exact set-up (handed between processes) -------------------------------------------
    def exact_state(self):
        """The inner evaluator's :meth:`AlgebraicCauchy.exact_state`."""
        return self.inner.exact_state()

    def adopt_state(self, state):
        """The inner evaluator's :meth:`AlgebraicCauchy.adopt_state`.  Raises as that method."""
        self.inner.adopt_state(state)


def _shown_point(zc):
    """``zc`` as the evaluator's messages print it (its exact point, short: ``_Pt``'s repr)."""
    try:
        return _real_point(zc, "cauchy", "z")
    except (FreeprobValueError, TypeError, ValueError):
        return zc
