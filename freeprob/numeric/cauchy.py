r"""Arbitrary-precision evaluation of an algebraic Cauchy transform, on the right branch.

:class:`AlgebraicCauchy` takes an exact polynomial ``P(G, z)`` (a sympy ``Poly`` in
the generators ``(G, z)`` of :mod:`freeprob.symbols`, real exact coefficients) such
that the Cauchy transform ``G(z) = ∫ dμ(x)/(z − x)`` of a probability law ``μ``
satisfies ``P(G(z), z) = 0`` (conventions: :mod:`freeprob.conventions`), and
evaluates ``G``, the density ``−Im G(x + i0)/π``, the support, the atoms, the
distribution function and the quantiles at any number of digits.

Branch rule
-----------
``P(·, z)`` has ``deg_G P`` roots; the Cauchy transform is the one continued from
``G(z) ≈ Σ m_n z^{−n−1}`` at infinity ([MS17]_ §2.1) along a path that stays in the
open upper half-plane, where ``G`` is analytic.  The path is tracked by a
predictor–corrector with step halving ([RE08]_ uses the same selection rule):

* the predictor is the tangent ``g + G'(z)·Δz``; a step is accepted only if the Newton
  correction from the predictor and the estimated predictor error
  ``|G'(z_new) − G'(z)|·|Δz|/2`` are both at most ``ρ/8``, where ``ρ`` is a lower bound
  on the distance from the tracked root to every other root (at both ends);
* ``ρ = 1/(2γ)``, ``γ = max_{j≥2} |c_j/c_1|^{1/(j−1)}`` from the Taylor coefficients
  ``c_j`` of ``P(g + h, z)`` at the root: Fujiwara's bound applied to the deflated,
  reversed polynomial, which is also Smale's γ (Newton from any point closer than
  ``0.177/γ`` converges quadratically to that root, Blum–Cucker–Shub–Smale,
  *Complexity and Real Computation*, 1998, Ch. 8, Thm. 2);
* a step from ``z`` is at most half the radius of a disk about ``z`` in which the tracked
  root is analytic: the distance ``R(z)`` from ``z`` to the nearest (complex) root of the
  discriminant or of the leading coefficient, or ``Im z`` (``G`` is analytic in the upper
  half-plane) if larger.  The two tests above are two-point estimates of the Taylor
  remainder; beyond the radius of convergence they can be passed by a jump to another
  branch.

Boundary values: from ``x + iy`` the path jumps to the real axis as soon as the jump
passes the same test (``y ≤ R(x + iy)/2``: ``Im z`` does not count here, the jump leaves
the half-plane; the predictor error uses the derivative at the landing root), where on
the axis the conjugate ``ḡ`` (also a root: ``P`` is real) is excluded from ``ρ`` —
``g`` and ``ḡ`` give the same density, and the value from the upper half-plane is the
one with ``Im ≤ 0``.  A root with
``|Im g| ≤ ρ/4`` is real (its conjugate would be a second root closer than ``ρ``), so
points outside the support give the density ``0`` exactly.  (Without the bound on the
jump, the x³ pushforward of the semicircle, whose discriminant has a 20-fold root at
``0``, landed from ``y ≈ 29`` at ``x = 0.5`` on the root ``−i/8`` of another sheet.)

Precision (python-flint ``good()``): the path is tracked in double precision (falling
back to mpmath when the roots are too close for doubles), the selected root is polished
by Newton's method at ``dps + GUARD_DPS`` digits and again at ``dps + 2·GUARD_DPS``;
the two must agree to ``dps`` digits (else the guard is doubled, up to
``MAX_GUARD_DPS``, then :class:`~freeprob.errors.PrecisionError`).  Polishing uses a
fixed-point complex Newton kernel on Python integers with a shared exponent (the
technique of mpmath's own fixed-point kernels).  The global mpmath precision is never
changed: everything runs under ``mpmath.workprec``.

Exact parts: the discriminant of ``P`` in ``G`` (support edges), the leading
coefficient (atoms) and the atom masses are computed with sympy (the discriminant and
the square-free part of its product with the leading coefficient by FLINT when the
coefficients are in ℤ or ℤ[e], with the constants as extra variables: the same
polynomials); with rational coefficients, edges and masses are exact sympy algebraic
numbers.

Grids and off-axis values: a density grid continues the root along the real axis from
one point to the next (in mpmath next to the support edges, where doubles do not resolve
the distance to the edge), and only where no special point lies in between; the
off-axis values of the atom masses are tracked in doubles and polished at both
precisions.  Either way the root is certified as above, and the mpmath tracking from far
up remains the fallback.

References
----------
.. [MS17] Mingo & Speicher, *Free Probability and Random Matrices*, 2017, §2.1
   (Cauchy transform, Stieltjes inversion), §3.1 (atoms from ``lim (z−a)G(z)``).
.. [RE08] Rao & Edelman, The polynomial method for random matrices, 2008, §4–5.
"""
from __future__ import annotations

import bisect
import cmath
import math
import numbers

import mpmath
import sympy as sp
from mpmath import libmp

from freeprob.numeric.boundary import _BoundaryValues
from freeprob.numeric.quadrature import _Quadrature
from freeprob.numeric.rootkernel import (
    _H,
    _SERIES_TERMS,
    GUARD_DPS,
    MAX_GUARD_DPS,
    _bits,
    _check_dps,
    _density_from_fixed,
    _Fail,
    _from_flint_univariate,
    _infinity_data,
    _flint_sqf_part,
    _mpf,
    _num_real_polyroots,
    _num_real_roots,
    _PoleKernel,
    _real_point,
    _select_factor,
    _separation,
    _sym_real_roots,
    _taylor,
    _to_flint,
    _to_mpf,
)
from freeprob.core.exactpoly import factor_univariate, flint_discriminant, frozen_field_terms, norm_special_polynomials
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z

__all__ = ["AlgebraicCauchy", "GUARD_DPS", "MAX_GUARD_DPS"]


class AlgebraicCauchy(_BoundaryValues, _Quadrature):
    r"""Numeric Cauchy transform, density, support, atoms, cdf and quantiles of the law
    whose Cauchy transform solves ``P(G, z) = 0``.

    Parameters
    ----------
    poly : sympy.Poly
        In the generators ``(G, z)`` of :mod:`freeprob.symbols` (in this order or the
        reverse), with exact real coefficients (rationals or exact constants such as
        ``sqrt(2)`` or ``E``) and degree ``>= 1`` in ``G``.  Reducible polynomials and
        spurious factors are allowed: the factor with a branch ``G ~ 1/z`` is used.

    Raises
    ------
    FreeprobValueError
        If ``poly`` is not such a polynomial, or no factor (or more than one) has a
        branch ``G ~ 1/z`` at infinity.
    NotAvailable
        If several branches of the same factor tend to ``1/z``.

    Notes
    -----
    Every numeric method takes a keyword-only ``dps`` (int >= 1, default 15) and
    returns mpmath numbers correct to ``dps`` significant digits (densities and
    distribution functions: the value, rounded once), else raises
    :class:`~freeprob.errors.PrecisionError`.  Module docstring: the branch rule.

    Examples
    --------
    >>> import mpmath, sympy as sp
    >>> from freeprob.symbols import G, z
    >>> semicircle = AlgebraicCauchy(sp.Poly(G**2 - z*G + 1, G, z))
    >>> semicircle.support()
    ((-2, 2),)
    >>> mpmath.nstr(semicircle.density(0, dps=20), 20)          # 1/π
    '0.31830988618379067154'
    >>> mpmath.nstr(semicircle.cauchy(1j, dps=15), 15)           # (i − i√5)/2
    '(0.0 - 0.618033988749895j)'
    >>> semicircle.density(3, dps=50)                               # outside: exactly 0
    mpf('0.0')
    """

    def __init__(self, poly):
        if not isinstance(poly, sp.Poly):
            raise FreeprobValueError(
                "AlgebraicCauchy: `poly` must be a sympy Poly in the generators (G, z) of "
                f"freeprob.symbols; got {type(poly).__name__} {poly!r}")
        if set(poly.gens) != {_G, _z} or len(poly.gens) != 2:
            raise FreeprobValueError(
                "AlgebraicCauchy: `poly` must be a Poly in exactly the generators (G, z) of "
                f"freeprob.symbols; got generators {poly.gens}")
        if poly.gens != (_G, _z):
            poly = poly.reorder(_G, _z)
        for c in poly.coeffs():
            c = sp.sympify(c)
            if c.free_symbols:
                raise FreeprobValueError(
                    f"AlgebraicCauchy: the coefficients of `poly` must be numbers; got {c}")
            if c.has(sp.Float):
                raise FreeprobValueError(
                    "AlgebraicCauchy: the coefficients of `poly` must be exact (rationals or "
                    f"exact constants such as sqrt(2)); got the float {c}")
            if c.is_real is False or c.is_finite is False:
                raise FreeprobValueError(
                    f"AlgebraicCauchy: the coefficients of `poly` must be finite real numbers; got {c}")
        if poly.degree(_G) < 1:
            raise FreeprobValueError(
                f"AlgebraicCauchy: `poly` must have degree >= 1 in G; got {poly.as_expr()}")
        if poly.domain.is_EX:
            try:
                poly = sp.Poly(poly.as_expr(), _G, _z, extension=True)
            except (sp.PolynomialError, NotImplementedError, ValueError):
                pass
        self.poly = poly
        self._P = _select_factor(poly)
        self._rational = self._P.domain.is_ZZ or self._P.domain.is_QQ
        self._d = self._P.degree(_G)
        rows = [[sp.Integer(0)] * (self._P.degree(_z) + 1) for _ in range(self._d + 1)]
        for (k, j), c in self._P.terms():
            rows[k][j] = sp.sympify(c)
        self._rows = [self._trim(r) for r in rows]
        self._drows = [self._trim([j * c for j, c in enumerate(r)][1:] or [sp.Integer(0)])
                       for r in self._rows]
        self._cache = {}
        self._last = None

    def __repr__(self):
        return f"AlgebraicCauchy({self.poly!r})"

    @staticmethod
    def _trim(row):
        row = list(row)
        while len(row) > 1 and row[-1] == 0:
            row.pop()
        return row

    # -- cached exact data -------------------------------------------------------------
    def _memo(self, key, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def _lc(self):
        def fn():       # from the terms, not via as_expr (exp(1/100)**49 would become exp(49/100))
            iz = self._P.gens.index(_z)
            ig = self._P.gens.index(_G)
            terms = {(m[iz],): c for m, c in self._P.as_dict(native=True).items() if m[ig] == self._d}
            return sp.Poly.from_dict(terms, _z, domain=self._P.domain)
        return self._memo("lc", fn)

    def _flint_P(self):
        """``P`` as an ``fmpz_mpoly`` in ``(G, z, c_1, …)`` when its coefficients are in ℤ or
        ℤ[c_1, …] (e.g. ℤ[e]), else ``None`` (see :func:`_to_flint`)."""
        return self._memo("flintP", lambda: _to_flint(self._P))

    def _norm_special(self, leading):
        """For coefficients that sympy holds only in ``EX`` (algebraic numbers with e, e.g.
        an attention law with an irrational width ratio): the square-free norm of the
        discriminant (times the leading coefficient if ``leading``) over ℤ[e], computed in
        FLINT (:func:`freeprob._exactpoly.norm_special_polynomials`); its roots contain the
        special points (and the conjugate equations' ones).  ``None`` for other domains
        (ℚ, ℤ[e] and algebraic fields ℚ(√2) have fast exact paths): sympy's discriminant
        over ``EX`` took minutes."""
        if not self._P.domain.is_EX:
            return None
        both = self._memo("norm", lambda: norm_special_polynomials(self._P, _G, _z))
        return None if both is None else both[leading]

    def _disc(self):
        def fn():
            normed = self._norm_special(False)
            if normed is not None:
                return normed
            if self._d > 1 and self._P.domain.is_AlgebraicField:
                # ℚ(√2): FLINT with √2 as a variable, then back into the field
                d = flint_discriminant(self._P, _G, _z)
                if d is not None:
                    return sp.Poly(d.as_expr(), _z, domain=self._P.domain)
            fl = self._flint_P() if self._d > 1 else None
            if fl is not None:      # FLINT: the same polynomial as sympy's discriminant
                ctx, f, ng = fl
                try:
                    return _from_flint_univariate(f.discriminant(ctx.names()[0]), 1, ng, _z,
                                                  self._P.domain)
                except (ValueError, OverflowError):
                    pass
            expr = sp.discriminant(self._P, _G) if self._d > 1 else sp.Integer(1)
            expr = expr.as_expr() if isinstance(expr, sp.Poly) else expr
            try:
                return sp.Poly(expr, _z, domain=self._P.domain)
            except sp.PolynomialError:
                pass
            # over EX (e.g. coefficients in √2) sympy leaves the division by the leading
            # coefficient undone: redo it over the algebraic extension, else keep the
            # numerator (the denominator's roots are roots of the leading coefficient,
            # which the special points include anyway)
            errors = (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError,
                      sp.polys.polyerrors.CoercionFailed)
            pe = None
            try:
                pe = sp.Poly(self._P.as_expr(), _G, _z, extension=True)
                return sp.Poly(sp.discriminant(pe, _G).as_expr(), _z, domain=self._P.domain)
            except errors:
                pass
            try:       # Res_G(P, ∂P/∂G) = ± lc · disc: the same roots plus the leading coefficient's
                pe = pe if pe is not None else self._P
                return sp.Poly(sp.resultant(pe, pe.diff(_G), _G).as_expr(), _z, domain=self._P.domain)
            except errors:
                pass
            try:
                num, _ = sp.fraction(sp.cancel(sp.together(expr)))
                return sp.Poly(sp.expand(num), _z, domain=self._P.domain)
            except errors as exc:
                raise NotAvailable(f"AlgebraicCauchy: the discriminant of P over {self._P.domain} could not "
                                   f"be formed ({type(exc).__name__}); give the law with rational or "
                                   "simpler coefficients") from None
        return self._memo("disc", fn)

    def _special_poly(self):
        """Square-free product of the discriminant and the leading coefficient (of their
        norm for algebraic coefficients: :meth:`_norm_special`)."""
        def fn():
            normed = self._norm_special(True)
            if normed is not None:
                return normed
            p = self._disc() * self._lc()
            if p.degree() >= 1 and not p.domain.is_ZZ:
                # FLINT (ℤ[c] coefficients): the same polynomial as sympy's sqf_part
                fl = _to_flint(p)
                if fl is not None:
                    _, f, ng = fl
                    try:
                        return _from_flint_univariate(_flint_sqf_part(f, 0, ng), 0, ng, _z,
                                                      p.domain)
                    except (ValueError, OverflowError):     # FLINT's factor sort key overflows
                        pass
            try:
                return p.sqf_part()
            except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
                return p
        return self._memo("special", fn)

    def _special_points(self):
        """Sorted real points where roots collide or escape: exact (sympy) or mpf."""
        def fn():
            p = self._special_poly()
            # exact points only for rational P (a norm over ℤ of an irrational P keeps its
            # points numeric, like every other number of such a law)
            exact = _sym_real_roots(p, "support") if self._rational else None
            if exact is not None:
                return exact
            return _num_real_roots(p, 200, squarefree=True)
        return self._memo("points", fn)

    def _special_floats(self):
        return self._memo("pointsf", lambda: [float(sp.N(c, 20)) if isinstance(c, sp.Basic)
                                              else float(c) for c in self._special_points()])

    def _radius(self):
        """A bound on the modulus of every finite singular point (Fujiwara)."""
        def fn():
            # in mpmath: the coefficients of the discriminant can exceed the double range
            # (the bound itself does not)
            r = mpmath.mpf(0)
            for p in (self._disc(), self._lc()):
                cs = [abs(mpmath.mpmathify(sp.N(c, 20))) for c in p.all_coeffs()]
                if len(cs) > 1 and cs[0]:
                    r = max(r, 2 * max((cs[i] / cs[0]) ** (mpmath.mpf(1) / i)
                                       for i in range(1, len(cs))))
            return float(r)
        return self._memo("radius", fn)

    def _series(self):
        """Coefficients ``m_0 = 1, m_1, …`` of ``G = Σ m_n z^{−n−1}`` (sympy, exact)."""
        def fn():
            P = self._P
            frozen = None
            if P.domain.is_EX:
                # algebraic numbers with e (√2, e): over ℚ(constants) with the minimal
                # polynomials applied at the end, not over sympy's slow EX
                frozen = frozen_field_terms(P, _G, _z)
            qinv = None
            if frozen is not None:
                K, raw, to_sympy = frozen
                D = max(j - k for (k, j) in raw)
                q1 = sum((k * c for (k, j), c in raw.items() if j - k == D), K.zero)
                terms = {(k, k - j + D): c for (k, j), c in raw.items()}
            else:
                D, _, q1 = _infinity_data(P)
                K = P.domain.get_field()
                to_sympy = K.to_sympy
                dom = P.domain
                if dom.is_PolynomialRing and dom.domain.is_ZZ and all(not any(m) for m in dict(q1)):
                    # ℤ[c] with a constant q1: the series lies in ℚ[c] (much faster than ℤ(c))
                    K = sp.QQ[dom.symbols]
                    to_sympy = K.to_sympy
                    qinv = K.domain.one / K.domain.convert(dom.domain.to_sympy(dict(q1)[
                        (0,) * len(dom.symbols)]))
                terms = {}
                for (k, j), c in P.as_dict(native=True).items():
                    terms[(k, k - j + D)] = K.convert(c, P.domain)
                q1 = K.convert(q1, P.domain)
            N = _SERIES_TERMS
            h = [K.one] + [K.zero] * (N - 1)
            for n in range(1, N):
                powers = [[K.one] + [K.zero] * n]
                for _ in range(self._d):
                    prev = powers[-1]
                    powers.append([sum((prev[i] * h[m - i] for i in range(m + 1)), K.zero)
                                   for m in range(n + 1)])
                r = K.zero
                for (k, e), c in terms.items():
                    if e <= n:
                        r += c * powers[k][n - e]
                h[n] = -r / q1 if qinv is None else -r * qinv
            return [to_sympy(v) for v in h]
        return self._memo("series", fn)

    # -- special points ---------------------------------------------------------------
    def _deflated(self, xe, mass):
        """The normalized continuous part ``(G − m/(z − a))/(1 − m)`` as an AlgebraicCauchy."""
        xe = xe.expr
        key = ("deflated", xe)
        if key not in self._cache:
            expr = self._P.as_expr().subs(_G, (1 - mass) * _G + mass / (_z - xe))
            num = sp.Poly(sp.expand(sp.numer(sp.together(expr))), _G, _z)
            # the numerator can keep factors (z − a) common to every coefficient in G
            # (sympy's EX domain does not cancel them: with √2 in the coefficients
            # P(G, a) then vanished identically at the atom); divide them out
            lin = sp.Poly(_z - xe, _G, _z)
            for _ in range(num.degree(_z)):
                at = [sp.expand(num.as_expr().coeff(_G, k).subs(_z, xe))
                      for k in range(num.degree(_G) + 1)]
                if any(c != 0 and sp.simplify(c) != 0 for c in at):
                    break
                num = num.div(lin)[0]
            self._cache[key] = AlgebraicCauchy(num)
        return self._cache[key]

    def _density_special(self, xe, dps):
        mass = sp.Integer(0)
        for loc, m in self.atoms(dps=dps):
            if isinstance(loc, sp.Basic) and sp.simplify(loc - xe.expr) == 0:
                mass = m
        if mass != 0:
            if not isinstance(mass, sp.Basic):
                raise NotAvailable("AlgebraicCauchy.density: the density at an atom needs "
                                   "rational coefficients (exact masses)")
            if mass == 1:
                return mpmath.mpf(0)
            inner = self._deflated(xe, mass).density(xe, dps=dps + 2)
            with mpmath.workdps(dps):
                return +(inner * mpmath.mpf(_to_mpf(1 - mass, _bits(dps + 10))))
        kind, r = self._limit_at_special(xe, dps)
        if kind == "inf":
            return mpmath.inf
        with mpmath.workdps(dps):
            return +abs(r.imag) / mpmath.pi

    # -- public API -------------------------------------------------------------------
    def cauchy(self, z, *, dps=15):
        r"""The Cauchy transform ``G(z) = ∫ dμ(x)/(z − x)`` ([MS17]_ §2.1).

        Parameters
        ----------
        z : complex number
            ``Im z ≠ 0``, or a real point outside the support and off the atoms.
        dps : int >= 1, keyword-only
            Significant digits of the result (of its modulus, for complex values).

        Returns
        -------
        mpmath.mpc, or mpmath.mpf for real ``z``

        Raises
        ------
        FreeprobValueError
            ``dps`` invalid; ``z`` not a number; ``z`` real in the support or at an atom
            (``G`` has a cut or a pole there: use :meth:`density`).
        PrecisionError
            If ``dps`` digits cannot be certified.
        """
        dps = _check_dps(dps, "cauchy")
        if isinstance(z, complex | mpmath.mpc) or (isinstance(z, sp.Basic) and z.is_real is not True):
            try:
                zc = mpmath.mpc(complex(z)) if not isinstance(z, mpmath.mpc | sp.Basic) else z
                if isinstance(z, sp.Basic):
                    re, im = _real_point(sp.re(z), "cauchy", "z"), _real_point(sp.im(z), "cauchy", "z")
                else:
                    re = _real_point(mpmath.mpf(zc.real), "cauchy", "z")
                    im = _real_point(mpmath.mpf(zc.imag), "cauchy", "z")
            except (TypeError, ValueError) as exc:
                raise FreeprobValueError(f"AlgebraicCauchy.cauchy: `z` must be a number; got {z!r}") from exc
            if im.expr != 0:
                near = self._near_atom(re.xf)
                if near is not None:
                    return self._cauchy_deflated(re, im, near, dps)
                return self._cauchy_complex(re, im, dps)
            z = re
        xe = _real_point(z, "cauchy", "z")
        if not self._is_special(xe) and (near := self._near_atom(xe.xf)) is not None:
            return self._cauchy_deflated(xe, None, near, dps)
        if self._is_special(xe):
            kind, r = self._limit_at_special(xe, dps)
            if kind == "inf":
                raise FreeprobValueError(f"AlgebraicCauchy.cauchy: G has a pole at z = {xe}")
            if abs(r.imag) > 0:
                raise FreeprobValueError(
                    f"AlgebraicCauchy.cauchy: z = {xe} is real and in the support (branch cut); "
                    "pass a non-real z or use density")
            with mpmath.workdps(dps):
                return +r.real
        kind, v, prec = self._boundary_value(xe, dps, need="value")
        if kind != "real":
            raise FreeprobValueError(
                f"AlgebraicCauchy.cauchy: z = {xe} is real and in the support (branch cut); "
                "pass a non-real z or use density")
        return _mpf(libmp.from_man_exp(v[0], v[2], libmp.dps_to_prec(dps), "n"))

    def _cauchy_deflated(self, re, im, near, dps):
        """``G(z) = m/(z − a) + (1 − m) G_c(z)`` next to the atom ``(a, m) = near``, ``G_c``
        from :meth:`_deflated` (see :meth:`_near_atom`); ``im`` is ``None`` for real ``z``.
        Digits lost to cancellation in the sum are recovered by raising the precision."""
        loc, mass = near
        if im is not None and im.expr < 0:       # G(z̄) is the conjugate, exactly
            out = self._cauchy_deflated(re, _real_point(-im.expr, "cauchy", "z"), near, dps)
            re_t, im_t = out._mpc_
            return mpmath.mp.make_mpc((re_t, libmp.mpf_neg(im_t)))   # exact (no rounding)
        inner = self._deflated(_real_point(loc, "cauchy"), mass)
        zin = re if im is None else re.expr + sp.I * im.expr
        extra = 5
        for _ in range(6):
            gc = inner.cauchy(zin, dps=dps + extra)
            prec = _bits(dps + extra + 5)
            with mpmath.workprec(prec):
                d = mpmath.mpf(_to_mpf(re.expr - loc, prec))
                if im is not None:
                    d = mpmath.mpc(d, mpmath.mpf(_to_mpf(im.expr, prec)))
                a = mpmath.mpf(_to_mpf(mass, prec)) / d
                b = mpmath.mpf(_to_mpf(1 - mass, prec)) * gc
                total = a + b
                scale = abs(a) + abs(b)
                if abs(total) * mpmath.mpf(10) ** (extra - 3) >= scale:
                    with mpmath.workdps(dps):
                        return +total
                lost = int(mpmath.log10(scale / abs(total))) + 1 if total else 2 * extra
                extra = max(2 * extra, lost + 5)
        raise PrecisionError(f"AlgebraicCauchy.cauchy: no agreement to {dps} digits at z = {zin}")

    def _cauchy_track_float(self, re, im):
        """``(g, ρ)``: the root at ``re + i·im`` (``im > 0``) tracked in doubles from far up
        (the point rounded to doubles), or ``None``."""
        xf, yf = re.xf, im.xf
        if not (1e-280 < yf < 1e280 and abs(xf) < 1e280):
            return None
        K = self._fkernel()
        try:
            Y, g, rho = self._start(K, xf)
            zt = complex(xf, yf)
            if yf >= Y:
                g = K.newton(K.values(zt), g, abs(g))
                if g is None:
                    return None
                Y = yf
            ty = math.log(yf)
            _, g, rho = self._track(K, lambda t: zt if t == ty else complex(xf, math.exp(t)),
                                    math.log(Y), ty, g, rho, h0=-1)
        except (_Fail, OverflowError, ZeroDivisionError, ValueError):
            return None
        if not (cmath.isfinite(g) and math.isfinite(rho) and rho > 0):
            return None
        return g, rho

    def _cauchy_complex(self, re, im, dps):
        flip = im.expr < 0
        im = _real_point(-im.expr, "cauchy", "z") if flip else im
        guard = GUARD_DPS
        # the path tracked in doubles (as for boundary values), the root polished at both
        # precisions from it (accepted within a quarter of the separation bound ρ/2, where
        # Newton converges to the tracked root); otherwise tracked in mpmath
        fast = self._cauchy_track_float(re, im)
        while guard <= MAX_GUARD_DPS:
            p1, p2 = _bits(dps + guard), _bits(dps + 2 * guard)
            vals = []
            for prec in (p1, p2):
                with mpmath.workprec(prec):
                    K = self._mkernel(prec)
                    x, y = mpmath.mpf(_to_mpf(re, prec)), mpmath.mpf(_to_mpf(im, prec))
                    if fast is not None:
                        gf, rf = fast
                        gm = K.newton(K.values(x + K.I * y), mpmath.mpc(gf), abs(gf), maxit=100)
                        if gm is not None and abs(gm - gf) <= rf / 8:
                            vals.append(gm)
                            continue
                    try:
                        Y, g, rho = self._start(K, x)
                        if y >= Y:
                            A = K.values(x + K.I * y)
                            g = K.newton(A, g, abs(g))
                            Y = y
                        ty = mpmath.log(y)
                        zt = x + K.I * y
                        _, g, _ = self._track(K, lambda t: zt if t == ty else x + K.I * mpmath.exp(t),
                                              mpmath.log(Y), ty, g, rho, h0=-1)
                        # the tracker stops Newton early (relative to the separation):
                        # converge fully at this precision
                        vals.append(K.newton(K.values(zt), g, abs(g), maxit=100))
                    except _Fail:
                        vals.append(None)
            a, b = vals
            if a is not None and b is not None:
                with mpmath.workprec(p2):
                    if abs(a - b) <= mpmath.mpf(10) ** (-dps - 1) * abs(b):
                        with mpmath.workdps(dps):
                            out = +b
                        return out.conjugate() if flip else out
            guard *= 2
            fast = None
        raise PrecisionError(f"AlgebraicCauchy.cauchy: no agreement to {dps} digits at z = {re} + {im}*I")

    def density(self, x, *, dps=15):
        r"""Density of the absolutely continuous part, ``−Im G(x + i0)/π`` ([MS17]_ §2.1,
        Stieltjes inversion).

        Parameters
        ----------
        x : real number
            Floats are read as the rational they print as (:mod:`freeprob._params`),
            mpmath numbers by their exact value.
        dps : int >= 1, keyword-only

        Returns
        -------
        mpmath.mpf
            Exactly ``0`` outside the support; at an atom, the continuous part only;
            ``mpmath.inf`` at a hard edge where the density is unbounded.

        Raises
        ------
        FreeprobValueError
            ``x`` not a finite real number; ``dps`` invalid.
        PrecisionError
            If ``dps`` digits cannot be certified.
        """
        dps = _check_dps(dps, "density")
        xe = _real_point(x, "density")
        return self._density_exact_point(xe, dps)

    def _near_atom(self, xf):
        """``(location, mass)`` of an atom with exact mass in ``(0, 1)`` when it is the
        special point nearest to the float ``xf``, else ``None``.

        Next to an atom ``G ≈ m/(z − a)`` dominates, and where the leading coefficient has
        a multiple root at ``a`` other roots escape at the same rate, so that ``G`` is
        separated from them by ``O(1)`` only while the continuation steps change it by
        ``O(m/|z − a|)``: the continuous part ``(G − m/(z − a))/(1 − m)``
        (:meth:`_deflated`) has no pole there and is evaluated instead."""
        if self._lc().degree() < 1:
            return None
        _, j = self._nearest_special_gap(xf)
        if j is None:
            return None

        def fn():
            pts, pfl = self._special_points(), self._special_floats()
            out = {}
            for loc, m in self.atoms():
                if not (isinstance(m, sp.Basic) and isinstance(loc, sp.Basic) and 0 < m < 1):
                    continue
                lf = float(sp.N(loc, 20))
                i = min(range(len(pts)), key=lambda k: abs(pfl[k] - lf))
                if self._rational:
                    close = abs(sp.N(pts[i] - loc, 50)) < sp.Float(10) ** -40
                else:   # special points of irrational equations are mpf at 200 bits
                    with mpmath.workprec(200):
                        pv, lv = mpmath.mpmathify(pts[i]), mpmath.mpf(sp.N(loc, 60))
                        close = abs(pv - lv) <= mpmath.mpf(10) ** -40 * max(1, abs(lv))
                if close:
                    out[i] = (loc, m)
            return out
        return self._memo("atom_index", fn).get(j)

    def _density_exact_point(self, xe, dps, sel=None, resel=None):
        if self._is_special(xe):
            return self._density_special(xe, dps)
        near = self._near_atom(xe.xf)
        if near is not None:
            loc, mass = near
            inner = self._deflated(_real_point(loc, "density"), mass).density(xe, dps=dps + 5)
            with mpmath.workdps(dps):
                return +(inner * mpmath.mpf(_to_mpf(1 - mass, _bits(dps + 10))))
        kind, v, prec = self._boundary_value(xe, dps, sel, resel=resel)
        if kind == "real":
            return mpmath.mpf(0)
        return _density_from_fixed(v, libmp.dps_to_prec(dps))

    def density_grid(self, xs, *, dps=15):
        r"""The density at each point of a sorted sequence ``xs`` (same values as
        :meth:`density` pointwise).

        The root is continued along the real axis from each point to the next (within an
        interval free of discriminant and leading-coefficient roots), so that a typical
        point costs one continuation step and two Newton polishes.

        Parameters
        ----------
        xs : sequence of real numbers, non-decreasing
        dps : int >= 1, keyword-only

        Returns
        -------
        list of mpmath.mpf

        Raises
        ------
        FreeprobValueError
            A point is not a finite real number, ``xs`` is not sorted, ``dps`` invalid.
        PrecisionError
            If ``dps`` digits cannot be certified at some point.
        """
        dps = _check_dps(dps, "density_grid")
        pts = [_real_point(x, "density_grid", "xs") for x in xs]
        fl = [p.xf for p in pts]
        if any(b < a for a, b in zip(fl, fl[1:])):
            raise FreeprobValueError("AlgebraicCauchy.density_grid: `xs` must be sorted (non-decreasing)")
        K = self._fkernel()
        special = self._special_floats()
        n = len(pts)
        out = [None] * n
        # Points at which doubles do not resolve the distance to a special point (the
        # clusters at the support edges) need the root at more bits.  Rather than tracking
        # it from far up for each of them, it is continued along the real axis in mpmath
        # from the neighbouring point (same rule as for doubles: no special point in
        # between, see _mp_crosses).  So that the points before the first one where
        # doubles suffice also have a neighbour, they are visited backwards from it.
        first = 0
        while first < n and not self._plan(pts[first])[1]:
            first += 1
        if first == n:
            first = 0
        order = list(range(first, n)) + list(range(first - 1, -1, -1))

        def prev_missing_ok(xe):
            # continuing from afar is worth it where tracking from far up is costly:
            # the point is near a special point (doubles may not suffice)
            return self._nearest_special_gap(xe.xf)[0] <= 1e-6 * (1 + abs(xe.xf))
        prev = None     # (index, sel, is_mp) of the last point with a selected root
        anchor = None   # the same for the point ``first`` (restart of the backward sweep)
        for k, i in enumerate(order):
            if k == n - first:
                prev = anchor
            xe, xf = pts[i], fl[i]
            sel = None
            if self._near_atom(xf) is not None:       # the continuous part is evaluated
                prev = None
                out[i] = self._density_exact_point(xe, dps)
                continue
            plan = self._plan(xe)
            cur = None
            if plan[1]:
                if prev is not None and not self._crosses(special, fl[prev[0]], xf):
                    try:
                        psel = prev[1]
                        if prev[2]:     # from a root in mpmath
                            psel = (psel[0], complex(psel[1]), float(psel[2]))
                        sel = psel if xf == fl[prev[0]] else self._march(K, fl[prev[0]], xf, psel)
                    except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                        sel = None
                if sel is None and not self._is_special(xe):
                    try:
                        sel = self._select_boundary(K, xf)
                    except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                        sel = None
                if sel is not None and isinstance(sel[1], complex):
                    cur = (i, sel, False)
            resel = None
            got = []
            if not self._is_special(xe):
                # if doubles do not suffice here (or the double root is not accurate
                # enough to be certified), the root continued in mpmath from ``prev``, or
                # else from the nearest point selected earlier (e.g. by support())
                starts = [(pts[prev[0]], prev[1])] if prev is not None else []
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
            out[i] = self._density_exact_point(xe, dps, sel, resel)
            if resel is not None and got:
                cur = (i, got[-1], True)
            prev = cur
            if i == first:
                anchor = cur
        return out

    def _march_mp(self, x0, sel0, x1, p1):
        """The selected root at the exact point ``x1``, continued in mpmath at ``p1`` bits
        along the real axis from the selected root ``sel0`` at ``x0`` (doubles or mpmath);
        ``None`` if a special point may lie between ``x0`` and ``x1`` or the continuation
        fails.  :meth:`_boundary_value` polishes and certifies it."""
        if self._mp_crosses(x0, x1, p1):
            return None
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
                # the tracker gives up on steps below 1e-13 of the span: approach a point
                # next to a special point in stages, each 1e-6 of the previous distance
                dist = min([abs(b - sv) for sv in self._cache["pointsmp"]] + [abs(b - a)])
                c = a
                while abs(c - b) > 1e4 * dist:
                    c = b + (c - b) * mpmath.mpf(10) ** -6
                    sel = self._march(K, a, c, sel)
                    a = c
                return self._march(K, a, b, sel)
        except (_Fail, OverflowError, ZeroDivisionError, ValueError):
            return None

    def _mp_crosses(self, x0, x1, prec):
        """True unless no special point is within ``2^-100`` (relative) of the real segment
        between the exact points ``x0`` and ``x1`` (special points at 200 bits or exact)."""
        def fn():
            with mpmath.workprec(200):      # (mpf() rounds to the working precision)
                return [mpmath.mpf(_to_mpf(p, 200)) if isinstance(p, sp.Basic) else +p
                        for p in self._special_points()]
        spm = self._memo("pointsmp", fn)
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

    def support(self, *, dps=15):
        r"""Intervals ``(a, b)`` carrying the absolutely continuous part.

        Candidate edges are the real roots of the discriminant of ``P`` in ``G`` and of its
        leading coefficient ([RE08]_ §5); the density is tested between consecutive
        candidates, and adjacent intervals are merged.

        Returns
        -------
        tuple of (a, b)
            Exact sympy algebraic numbers (rationals, radicals or ``CRootOf``) when the
            coefficients of ``P`` are rational, else mpf at ``dps`` digits; unbounded ends
            are ``±oo`` (sympy) or ``±inf`` (mpmath).
        """
        dps = _check_dps(dps, "support")
        return self._memo(("support", None if self._rational else dps), lambda: self._support(dps))

    def _support(self, dps):
        pts = self._special_points()
        with mpmath.workprec(200):          # mpf() rounds to the working precision
            num = [mpmath.mpf(_to_mpf(p, 200)) if isinstance(p, sp.Basic) else p for p in pts]
        tests = []
        if not pts:
            tests.append((None, None, sp.Integer(0)))
        else:
            width = max(1, float(num[-1] - num[0]))
            tests.append((None, 0, sp.Rational(sp.floor(num[0] - width - 1))))
            for i in range(len(pts) - 1):
                mid = (num[i] + num[i + 1]) / 2
                tests.append((i, i + 1, _real_point(mid, "support")))
            tests.append((len(pts) - 1, None, sp.Rational(sp.ceiling(num[-1] + width + 1))))
        lo_inf = -sp.oo if self._rational else -mpmath.inf
        hi_inf = sp.oo if self._rational else mpmath.inf

        fine = num
        if not self._rational and _bits(dps + 10) > 200:
            # the special points are isolated at 200 bits (~60 digits): an edge asked for at
            # more digits is the same root isolated again at the requested precision (it was
            # the 200-bit value re-rounded, right to ~67 digits whatever dps said)
            fine = self._memo(("points", dps), lambda: _num_real_roots(
                self._special_poly(), _bits(dps + 10), squarefree=True))
            if len(fine) != len(num):
                raise PrecisionError(f"support: the {len(num)} special points at 200 bits and the "
                                     f"{len(fine)} at {dps} digits differ; try another dps")

        def edge(i, default):
            if i is None:
                return default
            if self._rational:
                return pts[i]
            with mpmath.workdps(dps):
                return +fine[i]
        out = []
        for i, j, xm in tests:
            if self._density_exact_point(_real_point(xm, "support"), 15) > 0:
                a, b = edge(i, lo_inf), edge(j, hi_inf)
                if out and i is not None and out[-1][1] == a:
                    out[-1] = (out[-1][0], b)
                else:
                    out.append((a, b))
        return tuple(out)

    def atoms(self, *, dps=15):
        r"""Atoms ``(location, mass)`` of the law, ``mass = lim_{z→a} (z − a) G(z)``
        ([MS17]_ §3.1).

        Candidate locations are the real roots of the leading coefficient of ``P`` in
        ``G``; substituting ``G = H/(z − a)`` and keeping the lowest power of ``z − a``
        gives a polynomial whose roots are the candidate masses; the one matching
        ``iη G(a + iη)`` on the continued branch is kept when positive.

        Returns
        -------
        tuple of (location, mass)
            Exact sympy numbers when the coefficients of ``P`` are rational, else mpf at
            ``dps`` digits; sorted by location.
        """
        dps = _check_dps(dps, "atoms")
        if not self._rational:
            # exact locations and masses (e.g. in ℤ[e]) do not depend on dps: reuse them
            # rather than continuing G to each atom again at every precision
            for key, val in list(self._cache.items()):
                if isinstance(key, tuple) and len(key) == 2 and key[0] == "atoms" and \
                        all(isinstance(v, sp.Basic) for t in val for v in t):
                    return val
        return self._memo(("atoms", None if self._rational else dps), lambda: self._atoms(dps))

    def _atoms_at_least(self, dps):
        """Atoms to at least ``dps`` digits: for irrational coefficients (atoms memoized per
        ``dps``, each costing a continuation) any already computed to ``dps`` or more."""
        if not self._rational:
            have = [k[1] for k in self._cache if isinstance(k, tuple) and len(k) == 2
                    and k[0] == "atoms" and isinstance(k[1], int) and k[1] >= dps]
            if have:
                return self._cache[("atoms", min(have))]
        return self.atoms(dps=dps)

    def _atoms(self, dps):
        lc = self._lc()
        if lc.degree() < 1:
            return ()
        dom = self._P.domain
        # over EX sympy does not factor (c·z⁶ stayed one factor, its atom at 0 was lost):
        # factor with the constants as FLINT variables
        factors = factor_univariate(lc, _z) if dom.is_EX else None
        if factors is not None:
            factors = [sp.Poly(f.as_expr(), _z, domain=dom) for f in factors]
        else:
            try:
                factors = [f for f, _ in lc.factor_list()[1]]
            except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
                factors = [lc.sqf_part()]
        rows = [sp.Poly(self._P.as_expr().coeff(_G, k), _z, domain=dom) for k in range(self._d + 1)]
        out = []
        for f in factors:
            if f.degree() < 1:
                continue
            nu = []
            for r in rows:
                if r.is_zero:
                    nu.append(None)
                    continue
                n, b = 0, r
                while True:
                    q, rem = b.div(f)
                    if not rem.is_zero:
                        break
                    n, b = n + 1, q
                nu.append((n, b))
            orders = [None if v is None else v[0] + self._d - k for k, v in enumerate(nu)]
            mu = min(o for o in orders if o is not None)
            fprime = f.diff(_z)
            qexpr = sum(fprime.as_expr() ** nu[k][0] * nu[k][1].as_expr() * _H ** k
                        for k in range(self._d + 1) if orders[k] == mu)
            exact_roots = _sym_real_roots(f, "atoms")
            if exact_roots is None and f.degree() == 1:
                c1, c0 = f.all_coeffs()
                root = sp.simplify(-c0 / c1)
                exact_roots = [root] if root.is_real else []
            locs = exact_roots if exact_roots is not None else _num_real_roots(f, _bits(dps + 20))
            for a in locs:
                m = self._atom_mass(a, f, qexpr, dps)
                if m is not None:
                    out.append((a if self._rational else +a, m))
        return tuple(sorted(out, key=lambda t: float(sp.N(t[0], 20)) if isinstance(t[0], sp.Basic)
                            else float(t[0])))

    def _exact_mass_candidates(self, a, qexpr):
        """Exact candidate masses at an exact location ``a`` when the coefficients are
        irrational (e.g. ``e``): the linear factors in ``H`` of the mass polynomial over its
        coefficient domain (``ℤ[e]``) give them exactly; ``None`` if some factor is not
        linear or the location is not exact."""
        if not isinstance(a, sp.Basic):
            return None
        try:
            expr = sp.expand(qexpr.subs(_z, a))
            qa = sp.Poly(expr, _H)
            factors = qa.factor_list()[1]
            if any(g.degree() > 1 for g, _ in factors) and qa.domain.is_EX:
                # over EX sympy does not factor; with algebraic coefficients (e.g. an atom
                # at 3 + 2√2) the algebraic extension does (a double root is common: two
                # branches with the same residue)
                factors = sp.factor_list(expr, _H, extension=True)[1]
                factors = [(sp.Poly(g, _H), k) for g, k in factors]
        except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError,
                sp.polys.polyerrors.CoercionFailed):
            return None
        out = []
        for g, _ in factors:
            if g.degree() == 0:
                continue
            if g.degree() != 1:
                return None
            c1, c0 = g.all_coeffs()
            root = sp.simplify(-c0 / c1)
            if root != 0 and root.is_real is not False:
                out.append(root)
        return out

    def _pole_residue(self, a, prec, accept):
        """First ``accept(est)`` that is not ``None``, over estimates ``est`` of
        ``lim_{η→0} iη·G(a + iη)`` (the mass at ``a``) at heights
        ``η = 2^{-12}·max(1, |a|)·16^{-j}``, ``j = 0, …, 23`` (down to ``~10⁻³²``: a law with a
        continuous part of width ``10⁻¹⁷`` next to its atom, β = 10⁻⁹, needs it); raises
        :class:`PrecisionError` when none is accepted.

        The root followed from far up is ``H = (z − a)·G`` (:class:`_PoleKernel`), which
        stays bounded at a pole of ``G``.  It is continued twice, in mpmath at ``prec`` and
        at ``2·prec`` bits, and a height counts only where ``accept`` gives the same answer
        for both: the coefficients of ``P`` can cancel near ``a`` (two atoms ``10⁻⁹`` apart:
        coefficients ``~10⁹``), and a track in doubles then followed rounding noise that
        looked like a converged mass of 0."""
        tiers = []
        try:
            for p in (prec, 2 * prec):
                with mpmath.workprec(p):
                    x = mpmath.mpf(_to_mpf(a, p)) if isinstance(a, sp.Basic) else mpmath.mpf(a)
                    base = self._mkernel(p)
                    K = _PoleKernel(base, x)
                    Y, g, rho = self._start(base, x)
                    # the same branch, scaled: the roots of Q are (z − a)·(roots of P)
                    tiers.append([p, K, x, g * K.I * Y, rho * Y, K.log(Y)])
            eta0 = mpmath.mpf(2) ** -12 * max(1, abs(tiers[0][2]))
            for j in range(24):
                ests = []
                for st in tiers:
                    p, K, x, h, rho, t = st
                    with mpmath.workprec(p):
                        ty = K.log(eta0 / 16 ** j)
                        if ty < t:
                            _, h, rho = self._track(K, lambda u, K=K, x=x: x + K.I * K.exp(u), t, ty, h, rho,
                                                    h0=-1)
                            st[3:6] = [h, rho, ty]
                    ests.append(h)
                with mpmath.workprec(prec):
                    out = accept(mpmath.mpc(ests[0]))
                    if out is not None and accept(mpmath.mpc(ests[1])) == out:
                        return out
        except (_Fail, OverflowError, ZeroDivisionError, ValueError) as exc:
            raise PrecisionError(f"AlgebraicCauchy.atoms: cannot identify the mass at {a} ({exc})") from None
        raise PrecisionError(f"AlgebraicCauchy.atoms: cannot identify the mass at {a}")

    def _atom_mass(self, a, f, qexpr, dps):
        prec = _bits(dps + 20)
        with mpmath.workprec(prec):
            an = mpmath.mpf(_to_mpf(a, prec)) if isinstance(a, sp.Basic) else a
            if self._rational and f.degree() == 1:
                qa = sp.Poly(qexpr.subs(_z, a), _H)
                cands = [r for r in _sym_real_roots(qa, "atoms") if r != 0]
            elif self._rational:
                res = sp.Poly(sp.resultant(f.as_expr(), qexpr, _z), _H)
                cands = [r for r in _sym_real_roots(res, "atoms") if r != 0]
            else:
                cands = self._exact_mass_candidates(a, qexpr)
                if cands is None:
                    qa = sp.Poly(qexpr, _H, _z)
                    cs = [sum(mpmath.mpf(_to_mpf(sp.sympify(c), prec)) * an ** j
                              for (j,), c in sp.Poly(qa.as_expr().coeff(_H, k), _z).terms())
                          if qa.as_expr().coeff(_H, k) != 0 else mpmath.mpf(0)
                          for k in range(sp.degree(qexpr, _H) + 1)]
                    try:
                        cands = [mpmath.mpf(r) for r in _num_real_polyroots(cs[::-1], prec, clusters=True)
                                 if r]
                    except mpmath.libmp.libhyper.NoConvergence as exc:
                        raise PrecisionError(
                            f"AlgebraicCauchy.atoms: the candidate masses at {a} could not be "
                            f"isolated ({exc})") from exc
            if not cands:
                return None
            cn = [mpmath.mpf(_to_mpf(c, prec)) if isinstance(c, sp.Basic) else c for c in cands]
            allc = cn + [mpmath.mpf(0)]
            gap = min([abs(u - v) for i, u in enumerate(allc) for v in allc[i + 1:]] + [mpmath.mpf(1)])

            def accept(est):
                best = min(range(len(allc)), key=lambda i: abs(allc[i] - est))
                if abs(allc[best] - est) > gap / 4:
                    return None
                return (best,)

            best, = self._pole_residue(a, prec, accept)
            if best == len(cn) or cn[best] <= 0:
                return None
            m = cands[best]
            if isinstance(m, sp.Basic):
                return m
            with mpmath.workdps(dps):
                return +m

    # -- distribution function and quantiles -------------------------------------------
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

    def laplace(self, ts, *, dps=15):
        r"""``[∫ e^{−2tx} dμ(x) for t in ts]`` (``t ≥ 0``) by integrating the density as in
        :meth:`moments`, the atoms exactly.

        For large ``t`` the weight lives within ``~1/t`` of the left end ``x_0`` of the
        support: each support interval is cut at ``x_0 + c/(2t)``, ``c = 1, 8, 64, …``, and
        the pieces where ``e^{−2t(x − x_0)} < 10^{−dps−4}`` are left out (their mass times
        that weight is added to the error).  The cost grows like ``log t`` (a contour
        integral needs ``~t·width`` nodes).

        Raises
        ------
        PrecisionError
            If the error estimate exceeds ``10^{−dps}`` relative to ``e^{−2t x_0}``.
        NotAvailable
            If the support is unbounded.

        Source: docs/theory.md §4 (gradient-flow loss as a Laplace transform of the law).
        """
        dps = _check_dps(dps, "laplace")
        prec = _bits(dps + GUARD_DPS)
        sup = self.support(dps=dps + GUARD_DPS)
        ats = self.atoms(dps=dps + GUARD_DPS)
        out = []
        with mpmath.workprec(prec):
            ends = [self._num(v, prec) for ab in sup for v in ab] + [self._num(a, prec) for a, _ in ats]
            if not all(mpmath.isfinite(v) for v in ends):
                raise NotAvailable("AlgebraicCauchy.laplace: unbounded support")
            x0 = min(ends)
            width = max(max(ends) - x0, mpmath.mpf(10) ** -6)
            for t in ts:
                t = mpmath.mpf(t)
                ref = mpmath.exp(-2 * t * x0)
                tol = mpmath.mpf(10) ** (-dps - 3) * ref
                w = (lambda x, t=t: mpmath.exp(-2 * t * x))
                total = mpmath.fsum(w(self._num(a, prec)) * self._num(m, prec) for a, m in ats)
                err = mpmath.mpf(0)
                # cuts on one grid x0 + width·8^{−j} for every t (shared edges and cached
                # density values across t, e.g. in a root finder), finest just below 1/(2t)
                far = mpmath.inf
                grid = []
                if t > 0:
                    need = x0 + (dps + 4) * mpmath.log(10) / (2 * t)
                    j = 0
                    while width * mpmath.mpf(8) ** (-j) > 1 / (16 * t) and j < 60:
                        g = x0 + width * mpmath.mpf(8) ** (-j)
                        if g >= need:
                            far = g
                        grid.append(g)
                        j += 1
                    grid = sorted(g for g in grid if g <= far)
                for a, b in sup:
                    for lo, hi in self._split(a, b, ats, prec):
                        lon, hin = self._num(lo, prec), self._num(hi, prec)
                        if lon >= far:
                            err += w(lon)              # mass ≤ 1 times the largest weight
                            continue
                        cuts = [lo] + [_real_point(g, "laplace") for g in grid if lon < g < hin]
                        if far < hin:
                            err += w(far)
                        else:
                            cuts.append(hi)
                        for p, q in zip(cuts, cuts[1:]):
                            v, e = self._integrate(p, q, prec, tol, weight=w)
                            total += v
                            err += e
                if err > 10 * mpmath.mpf(10) ** (-dps) * ref:
                    raise PrecisionError(f"AlgebraicCauchy.laplace: quadrature error {mpmath.nstr(err, 3)} "
                                         f"exceeds 10^-{dps} at t = {mpmath.nstr(t, 6)}")
                with mpmath.workdps(dps):
                    out.append(+total)
        return out

    def cdf(self, x, *, dps=15):
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
            If the quadrature error estimate exceeds ``10^{-dps}``.
        """
        dps = _check_dps(dps, "cdf")
        xe = _real_point(x, "cdf")
        return self._cdf(xe, dps)

    def quantile(self, p, *, dps=15):
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
        """
        dps = _check_dps(dps, "quantile")
        pe = _real_point(p, "quantile", "p")
        if not (0 <= pe.expr <= 1):
            raise FreeprobValueError(f"AlgebraicCauchy.quantile: `p` must be in [0, 1]; got {p!r}")
        prec = _bits(dps + GUARD_DPS)
        sup = self.support(dps=dps + GUARD_DPS)
        ats = self.atoms(dps=dps + GUARD_DPS)
        # ordered components: ("atom", loc, mass) and ("ac", lo, hi, mass)
        comps = [("atom", loc, m) for loc, m in ats]
        for a, b in sup:
            for lo, hi in self._split(a, b, ats, prec):
                comps.append(("ac", lo, hi, None))
        with mpmath.workprec(prec):
            comps.sort(key=lambda c: (self._num(c[1], prec), 0 if c[0] == "atom" else 1))
            target = mpmath.mpf(_to_mpf(pe, prec))
            if target == 0:
                with mpmath.workdps(dps):
                    return +self._num(comps[0][1], prec)
            cum = mpmath.mpf(0)
            last = None
            tau = mpmath.mpf(10) ** (-dps)
            for i, c in enumerate(comps):
                # F at the end of this component is known to τ: p up to F + τ stops here
                slack = tau if i + 1 < len(comps) else 0
                if c[0] == "atom":
                    mass = self._num(c[2], prec)
                    if cum + mass + slack >= target:
                        with mpmath.workdps(dps):
                            return +self._num(c[1], prec)
                    cum += mass
                    last = self._num(c[1], prec)
                    continue
                mass, _ = self._integrate(c[1], c[2], prec, mpmath.mpf(10) ** (-dps - 2))
                if cum + mass > target:
                    x = self._invert(c[1], c[2], target - cum, mass, prec, dps)
                    with mpmath.workdps(dps):
                        return +x
                if cum + mass + slack >= target:
                    with mpmath.workdps(dps):
                        return +self._num(c[2], prec)
                cum += mass
                last = self._num(c[2], prec)
            with mpmath.workdps(dps):
                return +last
