"""Cached exact data of the Cauchy equation for :class:`freeprob.numeric.AlgebraicCauchy`.

The mixin :class:`_ExactData`: the memo, the leading coefficient and the discriminant of
``P`` in ``G`` (FLINT when the coefficients are in ℤ or ℤ[c], sympy otherwise), their
square-free product and its real roots (the special points), a bound on the finite
singular points, and the expansion ``G = Σ m_n z^{−n−1}`` at infinity.  It relies on the
host class for ``_P``, ``_d``, ``_rational`` and ``_cache``.
"""
from __future__ import annotations

import math

import flint
import mpmath
import sympy as sp

from freeprob.core.exactpoly import (
    _flint_sqf_part,
    _from_flint_univariate,
    _to_flint,
    flint_discriminant,
    frozen_field_terms,
    mpoly_discriminant,
    norm_special_polynomials,
)
from freeprob.numeric.rootkernel import (
    _SERIES_TERMS,
    _coeff_mpfs,
    _Pt,
    _to_mpf,
)
from freeprob.numeric.exactroots import _infinity_data, _sym_real_roots
from freeprob.numeric.roots import _num_real_roots
from freeprob.errors import NotAvailable
from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z


class _ExactData:
    """Mixin of :class:`~freeprob.numeric.AlgebraicCauchy`: exact polynomials derived from
    ``P`` and their real roots, memoized in ``self._cache``."""

    def _memo(self, key, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    #: memo keys (or first elements of tuple keys) of exact data and numbers that
    #: :meth:`exact_state` hands on: sympy polynomials and numbers, mpmath numbers, floats
    #: (the kernels, FLINT objects and the discriminant itself are rebuilt or not needed:
    #: the special polynomial and the root bound derived from it are included)
    _PORTABLE = frozenset({"lc", "special", "norm", "points", "pointsf", "pointsmp", "ratspecial",
                           "singular", "radius", "series", "seriesnum", "introws", "atom_index",
                           "anchors", "support", "supportsigns", "atoms"})

    def exact_state(self):
        """The exact set-up computed so far (special polynomial and points, singular points,
        the expansion at infinity, support, atoms, …) as a picklable dict, for
        :meth:`adopt_state` on an instance of the same polynomial in another process (the
        set-up of a degree-15 equation over ℤ[e] took seconds; with it the other instance
        starts where this one is).  Source: this project's design."""
        return {k: v for k, v in self._cache.items()
                if (k[0] if isinstance(k, tuple) else k) in self._PORTABLE}

    def adopt_state(self, state):
        """Take over the entries of :meth:`exact_state` of an instance of the same
        polynomial (entries already computed here are kept).  The caller guarantees that
        the state comes from the same polynomial and code (e.g. a worker of this run).
        Raises ``FreeprobValueError`` for a state that is not such a dict."""
        from freeprob.errors import FreeprobValueError
        if not isinstance(state, dict) or any(
                (k[0] if isinstance(k, tuple) else k) not in self._PORTABLE for k in state):
            raise FreeprobValueError("AlgebraicCauchy.adopt_state: expected a dict from exact_state()")
        for k, v in state.items():
            self._cache.setdefault(k, v)

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
        both √2 and e in the coefficients): the square-free norm of the
        discriminant (times the leading coefficient if ``leading``) over ℤ[e], computed in
        FLINT (:func:`freeprob.core.exactpoly.norm_special_polynomials`); its roots contain the
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
                    return _from_flint_univariate(mpoly_discriminant(f, 0, ng), 1, ng, _z,
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

    def _cluster_size(self, base):
        """An upper bound ``r ≥ 2`` on the number of roots of ``P(·, z)`` that meet at the
        point ``base`` (a sympy number, a :class:`~freeprob.numeric.rootkernel._Pt` or an
        mpf) as ``z → base``: ``r`` roots meeting pairwise like ``|z − base|^{1/2}`` or
        faster give the discriminant a root of multiplicity ``e ≥ r(r − 1)/2`` there, so
        ``r ≤ (1 + √(1 + 8e))/2``.  ``e`` from the square-free factorization of the
        discriminant (FLINT), the factor vanishing at ``base`` found at 256 bits (relative
        ``2^{-40}`` for an mpf base, known to its digits only); ``2`` (a plain edge) when
        the discriminant is not over ℤ or ℚ or no factor vanishes.  Two edges meeting
        (a mixture whose parts share an edge) give ``r = 4``, three give ``8``.  Source:
        this project's design."""
        def fn():
            d = self._disc() if self._d > 1 else None
            if d is None or d.degree() < 1 or not (d.domain.is_ZZ or d.domain.is_QQ):
                return []
            _, dz = d.clear_denoms()
            _, parts = flint.fmpz_poly([int(c) for c in reversed(dz.all_coeffs())]).factor_squarefree()
            return [([int(c) for c in f.coeffs()], m) for f, m in parts]
        facs = self._memo("discsqf", fn)
        e = 0
        with mpmath.workprec(256):
            b = mpmath.mpf(base.mpf(256) if isinstance(base, _Pt) else
                           _to_mpf(base, 256) if isinstance(base, sp.Basic) else base)
            rel = mpmath.mpf(2) ** (-200 if isinstance(base, _Pt | sp.Basic) else -40)
            for cs, m in facs:
                val = mpmath.polyval(cs[::-1], b)
                scale = mpmath.polyval([abs(c) for c in cs[::-1]], abs(b))
                if abs(val) <= rel * scale:
                    e += m
        return max(2, int((1 + math.isqrt(1 + 8 * e)) // 2))

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
        """A bound on the modulus of every finite singular point ([FUJ16]_): of the roots
        of the special polynomial, which are those of the discriminant and the leading
        coefficient (and, for a norm, more)."""
        def fn():
            # in mpmath: the coefficients can exceed the double range (the bound does not)
            p = self._special_poly()
            with mpmath.workprec(64):
                cs = [abs(mpmath.mpf(c)) for c in _coeff_mpfs(p, 64)]
                r = mpmath.mpf(0)
                if len(cs) > 1 and cs[0]:
                    r = 2 * max((cs[i] / cs[0]) ** (mpmath.mpf(1) / i) for i in range(1, len(cs)))
                return float(r * (1 + mpmath.mpf(2) ** -40))     # (rounding of the coefficients)
        return self._memo("radius", fn)

    def _series_num(self, prec):
        """The coefficients ``m_0 = 1, m_1, …`` of ``G = Σ m_n z^{−n−1}`` (as :meth:`_series`)
        as mpf at ``prec`` bits, computed from the coefficients of ``P`` rounded to
        ``prec + 64`` bits: only the start of path tracking uses them (the root there is
        found by Newton's method and checked against the separation), and the exact
        series cost ~0.3 s for a degree-15 equation over ℤ[e]."""
        def fn():
            wp = prec + 64
            rows, _ = self._coeff_tuples(wp)
            with mpmath.workprec(wp):
                nz = [(k, j) for k, r in enumerate(self._rows) for j, c in enumerate(r) if c != 0]
                D = max(j - k for k, j in nz)
                terms, q1 = {}, mpmath.mpf(0)
                for k, j in nz:
                    v = mpmath.mpf(rows[k][j])
                    terms[(k, k - j + D)] = v
                    if j - k == D:
                        q1 += k * v
                N = _SERIES_TERMS
                h = [mpmath.mpf(1)] + [mpmath.mpf(0)] * (N - 1)
                # powers[p][m]: coefficient m of h(w)^p; entries m < n involve h[0..m] only,
                # which are final, so each pass adds entry n (with h[n] = 0 for the
                # residual r, then again with h[n]): the same sums as recomputing all
                powers = [[mpmath.mpf(1)] + [mpmath.mpf(0)] * (N - 1)]
                for p in range(1, self._d + 1):
                    powers.append([mpmath.fsum([powers[p - 1][0] * h[0]])])
                for n in range(1, N):
                    for p in range(1, self._d + 1):
                        prev = powers[p - 1]
                        powers[p].append(mpmath.fsum(prev[i] * h[n - i] for i in range(n + 1)))
                    r = mpmath.fsum(c * powers[k][n - e] for (k, e), c in terms.items() if e <= n)
                    h[n] = -r / q1
                    for p in range(1, self._d + 1):
                        prev = powers[p - 1]
                        powers[p][n] = mpmath.fsum(prev[i] * h[n - i] for i in range(n + 1))
            with mpmath.workprec(prec):
                return [+v for v in h]
        return self._memo(("seriesnum", prec), fn)

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
