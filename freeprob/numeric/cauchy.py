r"""Arbitrary-precision evaluation of an algebraic Cauchy transform, on the right branch.

:class:`AlgebraicCauchy` takes an exact polynomial ``P(G, z)`` (a sympy ``Poly`` in
the generators ``(G, z)`` of :mod:`freeprob.core.symbols`, real exact coefficients) such
that the Cauchy transform ``G(z) = ∫ dμ(x)/(z − x)`` of a probability law ``μ``
satisfies ``P(G(z), z) = 0`` (conventions: :mod:`freeprob.core.conventions`), and
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
  ``c_j`` of ``P(g + h, z)`` at the root: Fujiwara's bound [FUJ16]_ applied to the deflated,
  reversed polynomial, which is also Smale's γ (Newton from any point closer than
  ``0.177/γ`` converges quadratically to that root, [BCSS98]_ Ch. 8, Thm. 2);
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

Off-axis values (:meth:`AlgebraicCauchy.cauchy` at a non-real point): the double root is
continued along the segment from the last point whose value was accepted, when it is
within a few step limits of it (both in the upper half-plane after conjugation: the
contour nodes of :mod:`freeprob.attention.readout` come in sequence), else tracked from
far up; it is polished at both precisions on the python-flint kernel
(:mod:`freeprob.numeric.acbkernel`), the mpmath kernel when that fails, and accepted as
above (within ``ρ/8`` of the double root, the two precisions agreeing).

Layout: :class:`AlgebraicCauchy` (the Cauchy transform, density, grids and support) is
assembled from mixins: :class:`~freeprob.numeric.exact._ExactData` (discriminant, special
points, expansion at infinity), :class:`~freeprob.numeric.atoms._Atoms` (atoms and the
deflated law next to them), :class:`~freeprob.numeric.boundary._BoundaryValues` (kernels,
path tracking, certified boundary values) and
:class:`~freeprob.numeric.quadrature._Quadrature` (moments, expectations of a weight, cdf,
quantiles); :func:`freeprob.numeric.precision.escalate` is the guard doubling above.

References: [MS17]_ §2.1 (Cauchy transform, Stieltjes inversion), §3.1 (atoms from
``lim (z−a)G(z)``); [RE08]_ §4–5; [FUJ16]_; [BCSS98]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

import cmath
import math

import flint
import mpmath
import sympy as sp
from mpmath import libmp

from freeprob.core.coefficients import flint_precision
from freeprob.numeric.acbkernel import _acb_exact, _acb_to_mpc, _arb_exact
from freeprob.numeric.atoms import _Atoms
from freeprob.numeric.boundary import _BoundaryValues
from freeprob.numeric.enclosure import _Enclosures, _prec, _width, ball_around, enclose, meets
from freeprob.numeric.exact import _ExactData
from freeprob.numeric.grid import _Grid
from freeprob.numeric.precision import escalate
from freeprob.numeric.quadrature import _Quadrature
from freeprob.numeric.balls import check_ball, shows_proven
from freeprob.numeric.roots import _num_real_roots
from freeprob.numeric.rootkernel import (
    GUARD_DPS,
    MAX_GUARD_DPS,
    _bits,
    _check_dps,
    _complex_point,
    _density_from_fixed,
    _Fail,
    _Pt,
    _is_nonreal_input,
    _mpf,
    _real_point,
    _to_mpf,
)
from freeprob.numeric.exactroots import _select_factor
from freeprob.errors import FreeprobValueError, PrecisionError
from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z

__all__ = ["AlgebraicCauchy", "GUARD_DPS", "MAX_GUARD_DPS"]

#: :meth:`AlgebraicCauchy._cauchy_continue` continues from the last point when it is at most
#: this many step limits away (else the root is tracked from far up)
CONTINUE_REACH = 8


class AlgebraicCauchy(_ExactData, _Atoms, _BoundaryValues, _Grid, _Quadrature, _Enclosures):
    r"""Numeric Cauchy transform, density, support, atoms, cdf and quantiles of the law
    whose Cauchy transform solves ``P(G, z) = 0``.

    Parameters
    ----------
    poly : sympy.Poly
        In the generators ``(G, z)`` of :mod:`freeprob.core.symbols` (in this order or the
        reverse), with exact real coefficients (rationals or exact constants such as
        ``sqrt(2)`` or ``E``) and degree ``>= 1`` in ``G``.  Reducible polynomials and
        spurious factors are allowed: the factor with a branch ``G ~ 1/z`` is used.
    known_atoms : sequence of (location, mass), optional
        Atoms the caller knows exactly (sympy numbers; a mass ``0`` says that there is no
        atom at that location), e.g. from the law's structure.  Each is checked, not
        trusted: the location must be a real root of the leading coefficient of ``P`` in
        ``G`` and the mass one of the candidate masses there (the roots of the mass
        polynomial, exact where they can be); the mass is then not re-derived by
        continuing ``G`` to the atom.  Atoms not listed are found as usual.  An
        inconsistent entry raises :class:`~freeprob.errors.FreeprobValueError` when the
        atoms are first needed (:meth:`atoms`).
    known_levels : sequence of (point, level), or a function returning one, optional
        Values ``F(point) = level`` of the distribution function the caller knows exactly
        (sympy numbers), at points inside a flat stretch of ``F`` (a gap between support
        intervals or next to an atom), e.g. the weights of a mixture of laws with disjoint
        supports.  A function is called once, when a quantile first needs a level.  Each
        is checked, not trusted: the point must lie in a gap and the level agree with the
        computed one within its error bound, else
        :class:`~freeprob.errors.FreeprobValueError`; :meth:`quantile` then decides on
        which side of that level ``p`` lies exactly.
    irreducible : bool, optional
        The caller guarantees that ``poly`` is irreducible (e.g.
        :meth:`freeprob.laws.law.Law.cauchy_equation`): it is not factored again (sympy
        took up to a second for a degree-15 equation over ℤ[e]); its branch ``G ~ 1/z`` at
        infinity is still checked.

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
    >>> from freeprob.core.symbols import G, z
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

    #: :meth:`cauchy` takes an exact point as its two parts (:class:`~freeprob.numeric.rootkernel._CPt`)
    takes_exact_parts = True

    def __init__(self, poly, *, known_atoms=None, known_levels=None, irreducible=False):
        if not isinstance(poly, sp.Poly):
            raise FreeprobValueError(
                "AlgebraicCauchy: `poly` must be a sympy Poly in the generators (G, z) of "
                f"freeprob.core.symbols; got {type(poly).__name__} {poly!r}")
        if set(poly.gens) != {_G, _z} or len(poly.gens) != 2:
            raise FreeprobValueError(
                "AlgebraicCauchy: `poly` must be a Poly in exactly the generators (G, z) of "
                f"freeprob.core.symbols; got generators {poly.gens}")
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
        # irreducible over ℚ(constants) need not be so over an algebraic extension: factored there
        self._P = _select_factor(poly, factored=irreducible is True and not (
            poly.domain.is_EX or poly.domain.is_AlgebraicField))
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
        self._march_values = None     # (kernel, point, values) of the last _march
        self._ev_at = None            # (kernel, point, values, z-derivative values): a track's end
        self._cpx_last = None         # (point, double root, ρ) of the last value of _cauchy_complex
        self._known = self._check_known_atoms(known_atoms)
        self._known_levels_arg = known_levels

    def __repr__(self):
        return f"AlgebraicCauchy({self.poly!r})"

    @staticmethod
    def _trim(row):
        row = list(row)
        while len(row) > 1 and row[-1] == 0:
            row.pop()
        return row

    # -- public API -------------------------------------------------------------------
    @shows_proven
    def cauchy(self, z, *, dps=15, ball=False):
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

        With ``ball=True``: a python-flint ``acb`` (``arb`` for real ``z``) that provably
        contains ``G(z)``, radius ``≤ 10^{-dps}·|G(z)|``, midpoint the plain value
        (:mod:`freeprob.numeric.enclosure`).
        """
        dps = _check_dps(dps, "cauchy")
        ball = check_ball(ball, "cauchy")
        if ball:
            return self._ball_cauchy(z, dps)
        if _is_nonreal_input(z):
            try:
                re, im = _complex_point(z, "cauchy")
            except FreeprobValueError:
                raise                               # (a part out of range: its own message)
            except (TypeError, ValueError) as exc:
                raise FreeprobValueError(f"AlgebraicCauchy.cauchy: `z` must be a number; got {z!r}") from exc
            if im.nonzero:
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

    @staticmethod
    def _ball_checked(plain, b, dps, where):
        """The ball ``b`` re-centred on the plain value; :class:`PrecisionError` if it is
        wider than ``dps`` digits (the plain value and the enclosure disagree)."""
        if b.is_exact() and b == 0 and plain == 0:
            return b
        out = ball_around(plain, b)
        if not meets(out, dps):
            raise PrecisionError(f"AlgebraicCauchy.density: the enclosure at x = {where} reached "
                                 f"relative width {_width(out)}, not 10^-{dps}")
        return out

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
        (the point rounded to doubles), or ``None``.  Continued instead from the last point
        whose value was accepted (:meth:`_cauchy_continue`) when that point is near."""
        xf, yf = re.xf, im.xf
        if not (1e-280 < yf < 1e280 and abs(xf) < 1e280):
            return None
        K = self._fkernel()
        got = self._cauchy_continue(K, complex(xf, yf))
        if got is not None:
            return got
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

    def _cauchy_continue(self, K, zt):
        """``(g, ρ)``: the root at the double point ``zt`` (``Im zt > 0``) continued in
        doubles along the segment from the last point of the upper half-plane at which
        :meth:`_cauchy_complex` accepted the double root (``self._cpx_last``), or ``None``
        (no such point, the segment longer than :data:`CONTINUE_REACH` step limits at its
        start, or the continuation fails; the caller then tracks from far up).

        The segment lies in the open upper half-plane (convex), where ``G`` is analytic, and
        the tracker takes the same steps with the same tests as from far up (each step
        within half the distance to the nearest singular point or ``Im z``, Newton
        correction and predictor error within ``ρ/8`` of the separation bound): the root
        it lands on is the Cauchy transform's for the same reason.  A sequence of nearby
        points (the nodes of a contour rule, :mod:`freeprob.attention.readout`) then costs
        one or two steps a point instead of a track from far up.  Source: this project's
        design; [RE08]_ §4–5 (continuation of the branch)."""
        last = self._cpx_last
        if last is None:
            return None
        z0, g0, rho0 = last
        if z0 == zt:
            return g0, rho0
        dz = zt - z0
        if not abs(dz) <= CONTINUE_REACH * self._step_limit(K, z0):
            return None
        try:
            _, g, rho = self._track(K, lambda t: zt if t == 1.0 else z0 + t * dz, 0.0, 1.0, g0, rho0)
        except (_Fail, OverflowError, ZeroDivisionError, ValueError):
            return None
        if not (cmath.isfinite(g) and g.imag < 0 and math.isfinite(rho) and rho > 0):
            return None             # (Im G < 0 in the upper half-plane: a cheap sanity check)
        return g, rho

    def _polish_acb(self, x, y, g, prec):
        """The double root ``g`` at ``x + i·y`` (mpf at ``prec`` bits) polished by Newton's
        method at ``prec`` bits on the python-flint kernel (:meth:`_akernel`; the steps of
        the mpmath kernel's Newton, several times faster), as an exact mpc; ``None`` if it
        does not converge (the caller then polishes on the mpmath kernel).  The caller
        checks the distance to ``g`` against the separation bound, as for the mpmath
        polish.  Not above 1000 bits (the kernel's tolerance ``16·2^-prec`` is a double)."""
        if prec > 1000:
            return None
        try:
            W = self._akernel(prec)
            with flint_precision(flint.ctx.cap, prec):
                zt = flint.acb(_arb_exact(x._mpf_), _arb_exact(y._mpf_))
                gm = W.newton(W.values(zt), _acb_exact(g), abs(g), maxit=100)
                if gm is None:
                    return None
                return _acb_to_mpc(gm)
        except (_Fail, OverflowError, ZeroDivisionError, ValueError, TypeError):
            return None

    def _cauchy_complex(self, re, im, dps):
        if im.num is not None:              # a rational part: no sympy (~0.1 ms a point)
            flip = im.num < 0
            if flip:
                im = _Pt(-im.num, im.den)
        else:
            flip = im.expr < 0
            im = _real_point(-im.expr, "cauchy", "z") if flip else im
        # the path tracked in doubles (as for boundary values), the root polished at both
        # precisions from it (accepted within a quarter of the separation bound ρ/2, where
        # Newton converges to the tracked root); otherwise tracked in mpmath
        fast = self._cauchy_track_float(re, im)

        def attempt(p1, p2):
            nonlocal fast
            vals = []
            polished = 0                    # values polished from the double root
            for prec in (p1, p2):
                with mpmath.workprec(prec):
                    x, y = mpmath.mpf(_to_mpf(re, prec)), mpmath.mpf(_to_mpf(im, prec))
                    K = None
                    if fast is not None:
                        gf, rf = fast
                        gm = self._polish_acb(x, y, gf, prec)
                        if gm is None:
                            K = self._mkernel(prec)
                            gm = K.newton(K.values(x + K.I * y), mpmath.mpc(gf), abs(gf), maxit=100)
                        if gm is not None and abs(gm - gf) <= rf / 8:
                            vals.append(gm)
                            polished += 1
                            continue
                    if K is None:
                        K = self._mkernel(prec)
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
                        if polished == 2:   # a start for the next point (_cauchy_continue)
                            self._cpx_last = (complex(re.xf, im.xf), fast[0], fast[1])
                        return out.conjugate() if flip else out     # (rounds to p2 bits)
            fast = None                     # at higher guards: tracked in mpmath only
            return None

        return escalate(dps, attempt,
                        lambda: f"AlgebraicCauchy.cauchy: no agreement to {dps} digits at z = {re} + {im}*I")

    @shows_proven
    def density(self, x, *, dps=15, ball=False):
        r"""Density of the absolutely continuous part, ``−Im G(x + i0)/π`` ([MS17]_ §2.1,
        Stieltjes inversion).

        Parameters
        ----------
        x : real number
            Floats are read as the rational they print as (:mod:`freeprob.core.params`),
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
            If ``dps`` digits cannot be certified (or, with ``ball=True``, the enclosure
            cannot be made that narrow).

        With ``ball=True``: a python-flint ``arb`` that provably contains the density (an
        exact ``0`` outside the support), radius ``≤ 10^{-dps}·|value|``, midpoint the
        plain value (:mod:`freeprob.numeric.enclosure`).
        """
        dps = _check_dps(dps, "density")
        ball = check_ball(ball, "density")
        xe = _real_point(x, "density")
        return self._density_exact_point(xe, dps, ball=bool(ball))

    def _density_exact_point(self, xe, dps, sel=None, resel=None, ball=False):
        if self._is_special(xe):
            plain = self._density_special(xe, dps)
            return self._ball_special_density(xe, dps, plain) if ball else plain
        near = self._near_atom(xe.xf)
        if near is not None:
            loc, mass = near
            inner = self._deflated(_real_point(loc, "density"), mass)
            prec = _bits(dps + 10)
            if ball:
                ib = inner._density_exact_point(xe, dps + 5, ball=True)
                with mpmath.workdps(dps):
                    plain = +(mpmath.mpf(ib.mid()) * mpmath.mpf(_to_mpf(1 - mass, prec)))
                with _prec(prec):
                    prod = ib * enclose(1 - mass, prec)
                return self._ball_checked(plain, prod, dps, xe)
            with mpmath.workdps(dps):
                return +(inner.density(xe, dps=dps + 5) * mpmath.mpf(_to_mpf(1 - mass, prec)))
        found = self._boundary_value(xe, dps, sel, resel=resel, need="value" if ball else "density")
        kind, v, prec = found
        if kind == "real":
            plain = mpmath.mpf(0)
        else:
            plain = _density_from_fixed(v, libmp.dps_to_prec(dps))
        if not ball:
            return plain
        return self._ball_checked(plain, self._ball_density_value(xe, dps, found), dps, xe)

    @shows_proven
    def support(self, *, dps=15, ball=False):
        r"""Intervals ``(a, b)`` carrying the absolutely continuous part.

        Candidate edges are the real roots of the discriminant of ``P`` in ``G`` and of its
        leading coefficient ([RE08]_ §5); the density is tested between consecutive
        candidates, and adjacent intervals are merged.

        Returns
        -------
        tuple of (a, b)
            Exact sympy algebraic numbers (rationals, radicals or ``CRootOf``) when the
            coefficients of ``P`` are rational, else mpf at ``dps`` digits; unbounded ends
            are ``±oo`` (sympy) or ``±inf`` (mpmath).  With ``ball=True``: python-flint
            ``arb`` balls certified to contain each edge (a real root of the square-free
            special polynomial, :mod:`freeprob.numeric.enclosure`), radius
            ``≤ 10^{-dps}·|edge|``; unbounded ends ``arb('±inf')``.
        """
        dps = _check_dps(dps, "support")
        ball = check_ball(ball, "support")
        if ball:
            return self._ball_support(dps)
        return self._memo(("support", None if self._rational else dps), lambda: self._support(dps))

    def cut_points(self, *, dps=15):
        r"""Points strictly inside the support intervals at which the density is not
        analytic or varies on a much shorter scale than the interval: where :meth:`cdf`,
        :meth:`moments`, :meth:`quantile` and :meth:`expectation` cut their quadrature.

        These are the special points inside the support (e.g. where a gap has just closed:
        the density vanishes there like ``|x − x₀|^{1/3}``), the atoms inside it, and the
        real parts of the non-real roots ``c`` of the discriminant and of the leading
        coefficient with ``|Im c|`` below the length of the piece they fall in (just after
        a gap closed: a dip of width ``|Im c|``).  A tabulation of the density (e.g.
        ``TabulatedLaw.from_law``) should cluster its nodes there as at the edges.

        Parameters
        ----------
        dps : int >= 1, keyword-only

        Returns
        -------
        tuple of mpmath.mpf
            Sorted, at ``dps`` digits (none in an unbounded interval).

        Raises
        ------
        FreeprobValueError
            ``dps`` invalid.
        PrecisionError
            If the support or the atoms cannot be certified.

        Source: this project's design (:meth:`_BoundaryValues._near_axis_cuts`).
        """
        dps = _check_dps(dps, "cut_points")
        prec = _bits(dps + GUARD_DPS)
        sup = self.support(dps=dps + GUARD_DPS)
        ats = self.atoms(dps=dps + GUARD_DPS)
        out = []
        with mpmath.workprec(prec):
            for a, b in sup:
                if not (mpmath.isfinite(self._num(a, prec)) and mpmath.isfinite(self._num(b, prec))):
                    continue
                out += [self._num(hi, prec) for _, hi in self._split(a, b, ats, prec)[:-1]]
        with mpmath.workdps(dps):
            return tuple(sorted(+v for v in out))

    def _test_point(self, a, b):
        """The point (mpf) between the consecutive special points ``a < b`` (mpf)
        at which :meth:`_support` tests the density: the midpoint, unless its nearest
        special point is an atom (the density there is that of the deflated law,
        :meth:`_near_atom`, a second instance to set up); then the point a quarter of the
        gap from the other end, if that end is no atom.  The density has one sign on the
        whole open gap (its edges are special points), so any point decides it.  Source:
        this project's design."""
        for x in ((a + b) / 2, b - (b - a) / 4, a + (b - a) / 4):
            if self._near_atom(float(x)) is None:
                return x
        return (a + b) / 2

    def _support_tests(self):
        """``(pts, num, tests)``: the special points (exact or mpf), their 200-bit values,
        and one test point ``(i, j, x)`` in each gap between consecutive special points
        ``i < j`` (``None``: unbounded), where the density decides the gap."""
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
                tests.append((i, i + 1, _real_point(self._test_point(num[i], num[i + 1]), "support")))
            tests.append((len(pts) - 1, None, sp.Rational(sp.ceiling(num[-1] + width + 1))))
        return pts, num, tests

    def _support_signs(self, tests):
        """Whether the density is positive at each test point of :meth:`_support_tests`
        (at 15 digits; the sign decides the gap whatever digits its edges are asked at),
        memoized: :meth:`support` at another ``dps`` (e.g. :meth:`cut_points` asks for
        more) reuses the decisions instead of evaluating the test points again."""
        return self._memo("supportsigns", lambda: [
            self._density_exact_point(_real_point(xm, "support"), 15) > 0 for _, _, xm in tests])

    def _support(self, dps):
        pts, num, tests = self._support_tests()
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
        for (i, j, xm), inside in zip(tests, self._support_signs(tests)):
            if inside:
                a, b = edge(i, lo_inf), edge(j, hi_inf)
                if out and i is not None and out[-1][1] == a:
                    out[-1] = (out[-1][0], b)
                else:
                    out.append((a, b))
        return tuple(out)
