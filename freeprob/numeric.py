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
  *Complexity and Real Computation*, 1998, Ch. 8, Thm. 2).

Boundary values: from ``x + iy`` the path jumps to the real axis as soon as the jump
passes the same test, where on the axis the conjugate ``ḡ`` (also a root: ``P`` is
real) is excluded from ``ρ`` — ``g`` and ``ḡ`` give the same density, and the value
from the upper half-plane is the one with ``Im ≤ 0``.  A root with
``|Im g| ≤ ρ/4`` is real (its conjugate would be a second root closer than ``ρ``), so
points outside the support give the density ``0`` exactly.

Precision (python-flint ``good()``): the path is tracked in double precision (falling
back to mpmath when the roots are too close for doubles), the selected root is polished
by Newton's method at ``dps + GUARD_DPS`` digits and again at ``dps + 2·GUARD_DPS``;
the two must agree to ``dps`` digits (else the guard is doubled, up to
``MAX_GUARD_DPS``, then :class:`~freeprob.errors.PrecisionError`).  Polishing uses a
fixed-point complex Newton kernel on Python integers with a shared exponent (the
technique of mpmath's own fixed-point kernels).  The global mpmath precision is never
changed: everything runs under ``mpmath.workprec``.

Exact parts: the discriminant of ``P`` in ``G`` (support edges), the leading
coefficient (atoms) and the atom masses are computed with sympy; with rational
coefficients, edges and masses are exact sympy algebraic numbers.

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
from fractions import Fraction

import mpmath
import sympy as sp
from mpmath import libmp

from ._params import as_exact
from .errors import FreeprobValueError, NotAvailable, PrecisionError
from .symbols import G as _G
from .symbols import z as _z

__all__ = ["AlgebraicCauchy", "GUARD_DPS", "MAX_GUARD_DPS"]

#: guard digits of the first evaluation; the check runs at twice as many
GUARD_DPS = 10
#: the guard is doubled on disagreement up to this many digits, then PrecisionError
MAX_GUARD_DPS = 320

_LOG2_10 = 3.321928094887362
_SERIES_TERMS = 12          # terms of the expansion at infinity used for the start
_MAX_STEPS = 6000           # continuation steps per path
_FLOAT_EPS = 2.0 ** -52
_H = sp.Symbol("H")


class _Fail(Exception):
    """Internal: this numeric route cannot decide (the caller switches route)."""


def _bits(dps):
    return int(dps * _LOG2_10) + 8


def _check_dps(dps, who):
    if isinstance(dps, bool) or not isinstance(dps, numbers.Integral) or dps < 1:
        raise FreeprobValueError(f"AlgebraicCauchy.{who}: dps must be an integer >= 1; got {dps!r}")
    return int(dps)


# ---------------------------------------------------------------------------------------
# exact real points
# ---------------------------------------------------------------------------------------
class _Pt:
    """An exact real point: a rational ``num/den`` (fast path) or a sympy expression."""

    __slots__ = ("num", "den", "_expr", "xf")

    def __init__(self, num=None, den=1, expr=None):
        if num is not None:
            f = Fraction(num, den)
            self.num, self.den, self._expr = f.numerator, f.denominator, None
            self.xf = float(f)
        else:
            self.num = self.den = None
            self._expr = expr
            self.xf = float(sp.N(expr, 20))

    @property
    def expr(self):
        if self._expr is None:
            self._expr = sp.Rational(self.num, self.den)
        return self._expr

    def mpf(self, prec):
        if self.num is not None:
            return libmp.from_rational(self.num, self.den, prec, "n")
        return _to_mpf(self._expr, prec)

    def __repr__(self):
        return str(self.expr)


def _real_point(x, who, name="x"):
    """``x`` as an exact real :class:`_Pt` (floats as the rational they print as, as in
    :mod:`freeprob._params`; mpmath numbers by their exact binary value)."""
    owner = f"AlgebraicCauchy.{who}"
    if isinstance(x, _Pt):
        return x
    if isinstance(x, bool):
        raise FreeprobValueError(f"{owner}: `{name}` must be a real number; got {x!r}")
    if isinstance(x, float):
        if not math.isfinite(x):
            raise FreeprobValueError(f"{owner}: `{name}` must be finite; got {x!r}")
        f = Fraction(repr(x))
        pt = _Pt.__new__(_Pt)
        pt.num, pt.den, pt._expr, pt.xf = f.numerator, f.denominator, None, x
        return pt
    if isinstance(x, numbers.Integral):
        return _Pt(int(x))
    if isinstance(x, Fraction):
        return _Pt(x)
    if isinstance(x, complex | mpmath.mpc):
        raise FreeprobValueError(f"{owner}: `{name}` must be a real number; got the complex {x!r}")
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            raise FreeprobValueError(f"{owner}: `{name}` must be finite; got {x!r}")
        sign, man, exp, _ = x._mpf_
        man = -man if sign else man
        return _Pt(man << exp if exp >= 0 else man, 1 if exp >= 0 else 1 << -exp)
    if isinstance(x, sp.Basic) and not isinstance(x, sp.Expr):
        raise FreeprobValueError(f"{owner}: `{name}` must be a real number; got {x!r}")
    if not isinstance(x, numbers.Number | sp.Basic | str):
        raise FreeprobValueError(
            f"{owner}: `{name}` must be a real number; got {type(x).__name__} {x!r}")
    value = as_exact(x, owner, name)
    if value.free_symbols:
        raise FreeprobValueError(f"{owner}: `{name}` must be a number; got {value}")
    if value.is_real is not True or value.is_finite is False:
        raise FreeprobValueError(f"{owner}: `{name}` must be a finite real number; got {value}")
    if isinstance(value, sp.Rational):
        return _Pt(int(value.p), int(value.q))
    return _Pt(expr=value)


def _to_mpf(value, prec):
    """Exact real (sympy number or :class:`_Pt`) -> mpf tuple rounded to ``prec`` bits."""
    if isinstance(value, _Pt):
        return value.mpf(prec)
    if isinstance(value, sp.Rational):
        return libmp.from_rational(int(value.p), int(value.q), prec, "n")
    f = sp.N(value, int(prec / _LOG2_10) + 6)
    return libmp.normalize(*f._mpf_, prec, "n") if f._mpf_[1] else libmp.fzero


# ---------------------------------------------------------------------------------------
# generic numeric kernels (Python complex or mpmath mpc, same code)
# ---------------------------------------------------------------------------------------
def _horner(row, z):
    acc = row[-1]
    for c in row[-2::-1]:
        acc = acc * z + c
    return acc


def _pvals(A, g):
    """``p(g), p'(g)`` for ``p = Σ A_k G^k``."""
    p = A[-1]
    q = 0 * p
    for a in A[-2::-1]:
        q = q * g + p
        p = p * g + a
    return p, q


def _newton(A, g, tol, scale, maxit=40, atol=0):
    """Newton's method from ``g``; the root, or ``None`` without convergence.

    Stops when the correction is below ``tol·max(|g|, scale)`` or ``atol``, or when it
    stagnates at the rounding level of an ill-conditioned root (below ``√tol``)."""
    prev = None
    for i in range(maxit):
        p, q = _pvals(A, g)
        if not q:
            return None
        d = p / q
        g = g - d
        ad = abs(d)
        ref = max(abs(g), scale)
        if ad <= tol * ref or ad <= atol:
            return g
        if prev is not None and i > 2 and ad >= prev / 2 and ad <= tol ** 0.5 * ref:
            return g
        prev = ad
    return None


def _taylor(A, g):
    """Coefficients ``c_0..c_d`` of ``p(g + h)`` (Taylor shift)."""
    desc = list(A[::-1])
    n = len(desc) - 1
    for i in range(n):
        for j in range(1, n - i + 1):
            desc[j] = desc[j] + g * desc[j - 1]
    return desc[::-1]


def _log2abs(v):
    """``log2 |v|`` as a float (``-inf`` for 0), for Python or mpmath numbers."""
    if isinstance(v, complex | float | int):
        a = abs(v)
        return math.log2(a) if a else -math.inf
    parts = (v.real._mpf_, v.imag._mpf_) if isinstance(v, mpmath.mpc) else (v._mpf_,)
    best = -math.inf
    for sign, man, exp, bc in parts:
        if man:
            best = max(best, exp + bc + math.log2(man / (1 << bc)) if bc < 1000 else exp + bc)
    return best + (0.5 if len(parts) == 2 and parts[0][1] and parts[1][1] else 0)


def _fujiwara_lower(c):
    """Lower bound on ``|h|`` over the roots of ``c[0] + c[1] h + …`` (0 if ``c[0] = 0``).

    Computed on ``log2`` magnitudes (mpmath values may exceed the float range); the
    ``+0.5`` bit over-estimate of complex moduli only makes the bound more conservative."""
    if isinstance(c[0], complex | float):
        c0 = abs(c[0])
        if not c0:
            return 0.0
        gam = 0.0
        for j in range(1, len(c)):
            cj = abs(c[j])
            if cj:
                r = (cj / c0) ** (1.0 / j)
                if r > gam:
                    gam = r
        return 1 / (2 * 2 ** (0.5 / len(c)) * gam) if gam else math.inf
    l0 = _log2abs(c[0])
    if l0 == -math.inf:
        return 0 * abs(c[0])
    lg = -math.inf
    for j in range(1, len(c)):
        lj = _log2abs(c[j])
        if lj > -math.inf:
            lg = max(lg, (lj - l0 + 0.5) / j)
    if lg == -math.inf:
        return math.inf
    if isinstance(c[0], complex | float | int):
        return 2.0 ** (-lg - 1)
    return mpmath.ldexp(mpmath.mpf(2.0 ** (-(lg % 1))), -int(lg // 1) - 1)


def _separation(c):
    """Lower bound on the distance from the root (``c_0 ≈ 0``) to every other root."""
    return _fujiwara_lower(c[1:])


def _separation_pair(c, g):
    """Same, excluding the conjugate root ``ḡ`` (for real ``z``)."""
    hc = g.conjugate() - g
    desc = list(c[:0:-1])        # q(h) = c_1 + c_2 h + …, descending
    b = [desc[0]]
    for a in desc[1:]:
        b.append(a + hc * b[-1])
    rest = b[:-1][::-1]          # ascending coefficients of q / (h − hc)
    if len(rest) <= 1:
        return math.inf
    return _fujiwara_lower(rest)


def _root_error(A, g, q, eps):
    """Estimated error of a computed root (backward error / |p'|)."""
    s = 0 * abs(g)
    ag = abs(g)
    for a in A[::-1]:
        s = s * ag + abs(a)
    return 4 * eps * s / abs(q) if q else math.inf


class _Kernel:
    """Coefficient rows of ``P`` and its z-derivative in one arithmetic."""

    def __init__(self, rows, drows, eps, unit, exp, log):
        self.rows, self.drows, self.eps = rows, drows, eps
        self.tol = 16 * eps
        self.I, self.exp, self.log = unit, exp, log

    def ev(self, z):
        return [_horner(r, z) for r in self.rows], [_horner(r, z) for r in self.drows]

    def values(self, z):
        return [_horner(r, z) for r in self.rows]

    def dgdz(self, A, dA, g):
        p, q = _pvals(A, g)
        return -_horner(dA, g) / q if q else None

    def newton(self, A, g, scale, maxit=40, atol=0):
        return _newton(A, g, self.tol, scale, maxit, atol)


# ---------------------------------------------------------------------------------------
# fixed-point Newton polishing (Python integers, shared exponent)
# ---------------------------------------------------------------------------------------
def _shift(v, s):
    return v << s if s >= 0 else v >> -s


def _bitlen(v):
    return v.bit_length() if v >= 0 else (-v).bit_length()


def _scaled_pair(tr, ti):
    """mpf tuples ``(re, im)`` -> ``(re, im, exp)`` integers, value ``(re + i·im)·2^exp``."""
    sr, mr, er, _ = tr
    si, mi, ei, _ = ti
    mr = -mr if sr else mr
    mi = -mi if si else mi
    if not mr:
        return (0, mi, ei if mi else 0)
    if not mi:
        return (mr, 0, er)
    ex = min(er, ei)
    return (mr << (er - ex), mi << (ei - ex), ex)


def _scaled_start(g):
    if isinstance(g, tuple):
        return g
    if isinstance(g, complex | float):
        mr, er = math.frexp(g.real)
        mi, ei = math.frexp(g.imag)
        ex = min(er, ei) - 53
        return int(mr * 9007199254740992.0) << (er - 53 - ex), \
            int(mi * 9007199254740992.0) << (ei - 53 - ex), ex
    return _scaled_pair(g.real._mpf_, g.imag._mpf_)


def _polish(C, g0, prec, rho_rel, real=False, maxit=90):
    """Newton's method at ``prec`` bits on ``Σ C_k G^k`` from ``g0``, in fixed point.

    ``C``: coefficients as integer triples ``(re, im, exp)`` (value ``(re + i·im)·2^exp``);
    ``g0``: such a triple, a Python complex or an mpc; ``rho_rel``: separation of the root
    divided by ``|g0|`` (stopping rule: the next correction would be below ``2^−prec``).
    The polynomial is rescaled (``G = 2^e u`` with ``|u| ≈ 1``, coefficients divided by
    the largest) so that fixed point loses nothing against floating point.  Returns the
    root as a triple, or ``None`` without convergence.
    """
    ur, ui, sh = _scaled_start(g0)
    e = max(_bitlen(ur), _bitlen(ui)) + sh if (ur or ui) else 0
    top = None
    for k, (cr, ci, ex) in enumerate(C):
        if cr or ci:
            m = max(_bitlen(cr), _bitlen(ci)) + ex + k * e
            top = m if top is None or m > top else top
    if top is None:
        return None
    W = prec + 24
    Br = [_shift(cr, W + k * e - top + ex) for k, (cr, _, ex) in enumerate(C)]
    Bi = [_shift(ci, W + k * e - top + ex) if ci else 0 for k, (_, ci, ex) in enumerate(C)]
    ur, ui = _shift(ur, W - e + sh), (0 if real else _shift(ui, W - e + sh))
    rho = min(max(float(rho_rel), 1e-300), 1.0)
    thr = 1 << max(6, W - (prec + 4) // 2 + int(math.log2(rho)) // 2 - 1)
    d = len(C) - 1
    cplx = not real or any(Bi)
    for _ in range(maxit):
        pr, pi = Br[d], Bi[d]
        qr = qi = 0
        if cplx:
            for k in range(d - 1, -1, -1):
                qr, qi = ((qr * ur - qi * ui) >> W) + pr, ((qr * ui + qi * ur) >> W) + pi
                pr, pi = ((pr * ur - pi * ui) >> W) + Br[k], ((pr * ui + pi * ur) >> W) + Bi[k]
            den = qr * qr + qi * qi
            if not den:
                return None
            dr = ((pr * qr + pi * qi) << W) // den
            di = ((pi * qr - pr * qi) << W) // den
        else:
            for k in range(d - 1, -1, -1):
                qr = ((qr * ur) >> W) + pr
                pr = ((pr * ur) >> W) + Br[k]
            if not qr:
                return None
            dr, di = (pr << W) // qr, 0
        ur -= dr
        ui -= di
        if abs(dr) <= thr and abs(di) <= thr:
            return ur, ui, e - W
    return None


def _fixed_float(v):
    """Complex float of a fixed-point value ``(re, im, shift)``."""
    def f(m, sh):
        n = m.bit_length() if m >= 0 else (-m).bit_length()
        if n > 60:
            m, sh = m >> (n - 60), sh + n - 60
        return math.ldexp(m, sh)
    return complex(f(v[0], v[2]), f(v[1], v[2]))


def _fixed_tuples(v):
    return libmp.from_man_exp(v[0], v[2]), libmp.from_man_exp(v[1], v[2])


def _fixed_mpc(v):
    return mpmath.mp.make_mpc(_fixed_tuples(v))


def _agree(a, b, sa, sb, dps, ref=None):
    """``|a·2^sa − b·2^sb| ≤ 10^{−dps−1}·|ref or b|·2^sb`` exactly in integers."""
    s = min(sa, sb)
    a, b = a << (sa - s), b << (sb - s)
    ref = abs(b) if ref is None else ref << (sb - s)
    return abs(a - b) * 10 ** (dps + 1) <= ref


def _mpf(t):
    return mpmath.mp.make_mpf(t)


def _mp_close(v, w, rho, prec):
    with mpmath.workprec(prec):
        return abs(_fixed_mpc(v) - w) <= rho / 8


def _density_from_fixed(v, prec):
    """``−Im g/π`` rounded to ``prec`` bits, ``g`` fixed-point."""
    im = libmp.from_man_exp(-v[1], v[2])
    pi = libmp.mpf_pi(prec + 20 + max(0, (abs(v[1]).bit_length())))
    return _mpf(libmp.mpf_div(im, pi, prec, "n"))


# ---------------------------------------------------------------------------------------
# exact algebra
# ---------------------------------------------------------------------------------------
def _infinity_data(poly):
    """``(D, q0, q1)``: with ``G = ζH``, ``z = 1/ζ``, ``ζ^D P = Q(H, ζ)``; ``q0 = Q(1, 0)``,
    ``q1 = ∂_H Q(1, 0)`` (domain elements)."""
    terms = poly.as_dict(native=True)
    D = max(j - k for (k, j) in terms)
    K = poly.domain
    q0, q1 = K.zero, K.zero
    for (k, j), c in terms.items():
        if j - k == D:
            q0 += c
            q1 += k * c
    return D, q0, q1


def _select_factor(poly):
    """The square-free factor of ``poly`` carrying the branch ``G ~ 1/z``."""
    try:
        factors = [f for f, _ in poly.factor_list()[1]]
    except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
        factors = [poly.sqf_part()]
    found = []
    for f in factors:
        if f.degree(_G) < 1:
            continue
        _, q0, q1 = _infinity_data(f)
        if poly.domain.is_zero(q0) if hasattr(poly.domain, "is_zero") else q0 == 0:
            found.append((f, q1))
    if not found:
        raise FreeprobValueError(
            "AlgebraicCauchy: no branch of P(G, z) = 0 behaves like G ~ 1/z at infinity, so "
            f"P is not the Cauchy equation of a probability law; got P = {poly.as_expr()}")
    if len(found) > 1:
        raise FreeprobValueError(
            "AlgebraicCauchy: several factors of P have a branch G ~ 1/z at infinity "
            f"({', '.join(str(f.as_expr()) for f, _ in found)}); pass the factor of the law")
    f, q1 = found[0]
    if q1 == 0:
        raise NotAvailable(
            "AlgebraicCauchy: several branches of P tend to 1/z at infinity (G = 1/z is a "
            f"multiple root at infinity of {f.as_expr()}); cannot select the Cauchy transform")
    return f


def _sym_real_roots(poly, who):
    """Distinct real roots of a univariate Poly: exact (sympy) over QQ, else ``None``."""
    if poly.degree() < 1:
        return []
    if poly.domain.is_ZZ or poly.domain.is_QQ:
        return sorted(set(sp.real_roots(poly.sqf_part())), key=lambda r: sp.N(r, 30))
    return None


def _num_real_roots(poly, prec):
    """Distinct real roots (mpf) of a univariate Poly with real coefficients, numerically,
    realness certified by separation."""
    try:
        poly = poly.sqf_part()
    except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
        pass
    if poly.degree() < 1:
        return []
    coeffs = [mpmath.mpf(_to_mpf(sp.sympify(c), prec + 20)) for c in poly.all_coeffs()]
    with mpmath.workprec(prec + 20):
        while coeffs and not coeffs[0]:
            coeffs.pop(0)
        if len(coeffs) < 2:
            return []
        roots = mpmath.polyroots(coeffs, maxsteps=400, extraprec=2 * prec + 60)
        out = []
        for r in roots:
            others = [abs(r - s) for s in roots if s is not r]
            sep = min(others) if others else mpmath.inf
            r = mpmath.mpc(r)
            if abs(r.imag) <= sep / 4:
                out.append(+r.real)
        return sorted(out)


# ---------------------------------------------------------------------------------------
# the class
# ---------------------------------------------------------------------------------------
class AlgebraicCauchy:
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
        return self._memo("lc", lambda: sp.Poly(self._P.as_expr().coeff(_G, self._d), _z,
                                                domain=self._P.domain))

    def _disc(self):
        def fn():
            expr = sp.discriminant(self._P, _G) if self._d > 1 else sp.Integer(1)
            return sp.Poly(expr.as_expr() if isinstance(expr, sp.Poly) else expr, _z,
                           domain=self._P.domain)
        return self._memo("disc", fn)

    def _special_poly(self):
        """Square-free product of the discriminant and the leading coefficient."""
        def fn():
            p = self._disc() * self._lc()
            try:
                return p.sqf_part()
            except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
                return p
        return self._memo("special", fn)

    def _special_points(self):
        """Sorted real points where roots collide or escape: exact (sympy) or mpf."""
        def fn():
            p = self._special_poly()
            exact = _sym_real_roots(p, "support")
            if exact is not None:
                return exact
            return _num_real_roots(p, 200)
        return self._memo("points", fn)

    def _special_floats(self):
        return self._memo("pointsf", lambda: [float(sp.N(c, 20)) if isinstance(c, sp.Basic)
                                              else float(c) for c in self._special_points()])

    def _radius(self):
        """A bound on the modulus of every finite singular point (Fujiwara)."""
        def fn():
            r = 0.0
            for p in (self._disc(), self._lc()):
                cs = [abs(complex(sp.N(c, 20))) for c in p.all_coeffs()]
                if len(cs) > 1 and cs[0]:
                    r = max(r, 2 * max((cs[i] / cs[0]) ** (1.0 / i) for i in range(1, len(cs))))
            return r
        return self._memo("radius", fn)

    def _series(self):
        """Coefficients ``m_0 = 1, m_1, …`` of ``G = Σ m_n z^{−n−1}`` (sympy, exact)."""
        def fn():
            P = self._P
            D, _, q1 = _infinity_data(P)
            K = P.domain.get_field()
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
                h[n] = -r / q1
            return [K.to_sympy(v) for v in h]
        return self._memo("series", fn)

    # -- numeric kernels ----------------------------------------------------------------
    def _fkernel(self):
        def fn():
            conv = [[float(sp.N(c, 20)) for c in r] for r in self._rows]
            dconv = [[float(sp.N(c, 20)) for c in r] for r in self._drows]
            k = _Kernel(conv, dconv, _FLOAT_EPS, 1j, math.exp, math.log)
            k.series = [float(sp.N(c, 20)) for c in self._series()]
            k.is_mp = False
            return k
        return self._memo("fkernel", fn)

    def _coeff_tuples(self, prec):
        key = ("rows", prec)
        if key not in self._cache:
            self._cache[key] = ([[_to_mpf(c, prec) for c in r] for r in self._rows],
                                [[_to_mpf(c, prec) for c in r] for r in self._drows])
        return self._cache[key]

    def _mkernel(self, prec):
        """mpmath kernel at ``prec`` bits (use inside ``mpmath.workprec(prec)``)."""
        key = ("mkernel", prec)
        if key not in self._cache:
            rows, drows = self._coeff_tuples(prec)
            mk = mpmath.mpf
            k = _Kernel([[mk(c) for c in r] for r in rows], [[mk(c) for c in r] for r in drows],
                        mpmath.mpf(2) ** (-prec), mpmath.mpc(0, 1), mpmath.exp, mpmath.log)
            k.series = [mk(_to_mpf(c, prec)) for c in self._series()]
            k.is_mp = True
            self._cache[key] = k
        return self._cache[key]

    def _int_rows(self):
        """Rows as ``(D, [[(j, n_kj)]])`` with ``c_kj = n_kj / D`` (rational mode)."""
        def fn():
            D = sp.ilcm(*[sp.Rational(c).q for r in self._rows for c in r]) if self._rational else None
            if D is None:
                return None
            return int(D), [[(j, int(c * D)) for j, c in enumerate(r) if c != 0] for r in self._rows]
        return self._memo("introws", fn)

    def _values(self, pt, prec):
        """``A_k(x)`` as integer triples (exact and precision-free for a rational point of
        a rational polynomial, up to a common positive factor), else rounded at ``prec``."""
        ir = self._int_rows() if pt.num is not None else None
        if ir is not None:
            J = max(len(r) for r in self._rows) - 1
            num, den = pt.num, pt.den
            pn = [1]
            for _ in range(J):
                pn.append(pn[-1] * num)
            pd = [1]
            for _ in range(J):
                pd.append(pd[-1] * den)
            return [(sum(n * pn[j] * pd[J - j] for j, n in row), 0, 0) for row in ir[1]]
        x = pt.mpf(prec)
        rows, _ = self._coeff_tuples(prec)
        out = []
        for r in rows:
            acc = r[-1]
            for c in r[-2::-1]:
                acc = libmp.mpf_add(libmp.mpf_mul(acc, x, prec, "n"), c, prec, "n")
            out.append(_scaled_pair(acc, libmp.fzero))
        return out

    # -- path tracking --------------------------------------------------------------------
    def _track(self, K, zf, t0, t1, g, rho, finish=None, h0=None):
        """Continue the root ``g`` of ``P(·, zf(t0))`` to ``t = t1``."""
        t, z = t0, zf(t0)
        A, dA = K.ev(z)
        if finish is not None:
            r = finish(z, g, rho, A, dA)
            if r is not None:
                return r
        h = (t1 - t0) if h0 is None else h0
        span = abs(t1 - t0)
        steps = 0
        v = K.dgdz(A, dA, g)
        while t != t1:
            steps += 1
            if steps > _MAX_STEPS or abs(h) < 1e-13 * span or v is None:
                raise _Fail("step size underflow")
            tn = t1 if abs(t1 - t) <= abs(h) * 1.000001 else t + h
            zn = zf(tn)
            dz = zn - z
            pred = g + v * dz
            An, dAn = K.ev(zn)
            gn = K.newton(An, pred, max(abs(g), rho), atol=rho * 2.0 ** -40)
            if gn is None:
                h /= 2
                continue
            c = _taylor(An, gn)
            rn = _separation(c)
            vn = K.dgdz(An, dAn, gn)
            # predictor error estimate (second-order term) and Newton correction, both
            # small against the separation at both ends
            e2 = abs(vn - v) * abs(dz) / 2 if vn is not None else math.inf
            if not (abs(gn - pred) <= rn / 8 and e2 <= rn / 8 and e2 <= rho / 8):
                h /= 2
                continue
            if not K.is_mp and not cmath.isfinite(gn):
                raise _Fail("overflow")
            if rn < 64 * _root_error(An, gn, c[1], K.eps):
                raise _Fail("roots too close for this precision")
            t, z, g, rho, A, dA, v = tn, zn, gn, rn, An, dAn, vn
            self._last = (A, c)
            h *= 2
            if finish is not None:
                r = finish(z, g, rho, A, dA)
                if r is not None:
                    return r
        if finish is not None:
            raise _Fail("no landing")
        return z, g, rho

    def _start(self, K, x):
        """Root at ``x + iY`` far up, from the expansion at infinity."""
        Y = 2 * self._radius() + 2 + abs(float(x))
        if K.is_mp:
            Y = mpmath.mpf(Y)
        for _ in range(16):
            zs = x + K.I * Y
            w = 1 / zs
            gs = 0 * w
            for m in reversed(K.series):
                gs = (gs + m) * w
            A = K.values(zs)
            g = K.newton(A, gs, abs(gs))
            if g is not None:
                rho = _separation(_taylor(A, g))
                if abs(g - gs) <= rho / 8:
                    return Y, g, rho
            Y *= 4
        raise _Fail("no start")

    def _land_fn(self, K, x, Ax):
        """The jump test from ``x + iy`` to the real axis (see the module docstring)."""
        def finish(z, g, rho, A, dA):
            v = K.dgdz(A, dA, g)
            if v is None:
                return None
            mov = v * (x - z)
            if not abs(mov) <= rho:          # cheap pre-test: clearly too far up
                return None
            pred = g + mov
            gs = K.newton(Ax, pred, max(abs(g), rho), maxit=120)
            if gs is None or (not K.is_mp and not cmath.isfinite(gs)):
                return None
            c = _taylor(Ax, gs)
            rf = _separation(c)
            err = _root_error(Ax, gs, c[1], K.eps)
            corr = abs(gs - pred)
            if abs(gs.imag) <= rf / 4 - err and rf > 64 * err:
                if corr <= rf / 8 and abs(mov) <= rf / 4:
                    return ("real", gs, rf)
                return None
            rr = _separation_pair(c, gs)
            if corr <= rr / 8 and abs(mov) <= rr / 4:
                if abs(gs.imag) > 64 * err and rf > 64 * err:
                    return ("complex", gs.conjugate() if gs.imag > 0 else gs, rf)
                return ("unsure", gs.conjugate() if gs.imag > 0 else gs, rf)
            return None
        return finish

    def _select_boundary(self, K, x):
        """Selected root at the real point ``x`` (float or mpf): ``(kind, g, rho)``."""
        Y, g, rho = self._start(K, x)
        Ax = K.values(x)
        t0 = K.log(Y)
        zf = (lambda t: x + K.I * K.exp(t))
        floor = t0 - (700 if not K.is_mp else 1.5 * mpmath.mp.prec + 60)
        return self._track(K, zf, t0, floor, g, rho, finish=self._land_fn(K, x, Ax), h0=-1)

    def _march(self, K, x0, x1, sel, zf=None):
        """Continue a selected boundary root along the real axis from ``x0`` to ``x1``
        (or along ``zf(t)``, ``t`` from ``x0`` to ``x1``)."""
        kind, g, rho = sel
        self._last = None
        z, g1, rho1 = self._track(K, zf or (lambda t: t), x0, x1, g, rho)
        if self._last is not None:
            A, c = self._last
        else:
            A = K.values(z)
            c = _taylor(A, g1)
        err = _root_error(A, g1, c[1], K.eps)
        if abs(g1.imag) <= rho1 / 4 - err and rho1 > 64 * err:
            return ("real", g1, rho1)
        if abs(g1.imag) > 64 * err and rho1 > 64 * err:
            return ("complex", g1.conjugate() if g1.imag > 0 else g1, rho1)
        raise _Fail("undecided")

    # -- boundary values, certified --------------------------------------------------------
    def _nearest_special_gap(self, xv):
        """``(distance, point)`` from the float ``xv`` to the nearest special point."""
        pts = self._special_floats()
        if not pts:
            return math.inf, None
        i = bisect.bisect_left(pts, xv)
        best = (math.inf, None)
        for j in (i - 1, i):
            if 0 <= j < len(pts):
                best = min(best, (abs(xv - pts[j]), j))
        return best

    def _rational_specials(self):
        return self._memo("ratspecial", lambda: {(int(p.p), int(p.q)) for p in self._special_points()
                                                  if isinstance(p, sp.Rational)})

    def _is_special(self, pt):
        """True if the exact point is a root of the discriminant or leading coefficient."""
        if self._rational:
            if pt.num is not None:
                return (pt.num, pt.den) in self._rational_specials()
            return any(sp.simplify(pt.expr - p) == 0 for p in self._special_points()
                       if abs(float(sp.N(pt.expr - p, 20))) < 1e-10)
        if self._nearest_special_gap(pt.xf)[0] > 1e-8 * (1 + abs(pt.xf)):
            return False
        val = self._special_poly().as_expr().subs(_z, pt.expr)
        if abs(complex(sp.N(val, 30))) > 1e-20:
            return False
        return sp.simplify(val) == 0

    def _plan(self, pt):
        """``(extra_bits, float_ok)``: extra working bits when the point is closer to a
        special point than its own magnitude resolves, and whether doubles can be used."""
        xf = pt.xf
        tiny = not (1e-280 < abs(xf) < 1e280) and xf != 0 or (xf == 0 and pt.expr != 0)
        dist, _ = self._nearest_special_gap(xf)
        if tiny or dist <= 1e-12 * abs(xf):
            near = min(self._special_points(), key=lambda p: abs(sp.N(p - pt.expr, 30)),
                       default=None)
            if near is None:
                return 0, not tiny
            d = abs(sp.N(pt.expr - near, 30))
            ax = abs(sp.N(pt.expr, 30))
            if d == 0 or ax == 0:
                return 0, not tiny
            ratio = float(sp.log(ax / d, 2).evalf(15))
            if ratio > 20:
                return int(ratio) + 16, False
        return 0, not tiny

    def _boundary_value(self, pt, dps, sel=None, need="density", plan=None):
        """Certified boundary root ``G(x + i0)`` at a non-special exact point.

        Returns ``("real", fixed or None, prec)`` or ``("complex", fixed, prec)``, where
        ``fixed = (re, im, shift)`` is the root at ``prec`` bits (``None``: real root, not
        computed, when ``need == "density"``)."""
        extra, float_ok = plan or self._plan(pt)
        guard = GUARD_DPS
        if sel is None and float_ok:
            try:
                sel = self._select_boundary(self._fkernel(), pt.xf)
            except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                sel = None
        while guard <= MAX_GUARD_DPS:
            p1, p2 = _bits(dps + guard) + extra, _bits(dps + 2 * guard) + extra
            if sel is None:
                with mpmath.workprec(p1):
                    try:
                        sel = self._select_boundary(self._mkernel(p1), mpmath.mpf(pt.mpf(p1)))
                    except _Fail:
                        sel = None
            if sel is not None:
                out = self._certify(pt, sel, dps, p1, p2, need)
                if out is not None:
                    return out
            guard *= 2
            sel = None
        raise PrecisionError(
            f"AlgebraicCauchy: no agreement to {dps} digits up to {dps + 2 * MAX_GUARD_DPS} "
            f"digits at x = {pt}")

    def _certify(self, pt, sel, dps, p1, p2, need):
        """Polish the selected root at ``p1`` and ``p2`` bits and check agreement."""
        kind, g, rho = sel
        fast = isinstance(g, complex)
        if fast:
            ag = abs(g)
            rho_rel = rho / ag if ag else 1.0
        else:
            with mpmath.workprec(64):
                rho_rel = float(rho / abs(g)) if g else 1.0

        def close(v, w):
            if fast:
                return abs(_fixed_float(v) - w) <= rho / 8
            return _mp_close(v, w, rho, p1)
        A1 = self._values(pt, p1)
        A2 = A1 if pt.num is not None and self._rational else None     # exact: no precision
        if kind == "real":
            r1 = _polish(A1, g, p1, rho_rel, real=True)
            if r1 is None or not close(r1, g.real):
                return None
            if need == "density":
                return ("real", None, p1)
            r2 = _polish(A2 or self._values(pt, p2), r1, p2, rho_rel, real=True)
            if r2 is None or not _agree(r1[0], r2[0], r1[2], r2[2], dps):
                return None
            return ("real", r2, p2)
        g1 = _polish(A1, g, p1, rho_rel)
        if g1 is None or not close(g1, g):
            return None
        if kind == "unsure":
            with mpmath.workprec(p1):
                K = self._mkernel(p1)
                A = K.values(mpmath.mpf(pt.mpf(p1)))
                m1 = _fixed_mpc(g1)
                c = _taylor(A, m1)
                rf = _separation(c)
                err = _root_error(A, m1, c[1], K.eps)
                if abs(m1.imag) <= rf / 4 - err and rf > 64 * err:
                    return self._certify(pt, ("real", g, rho), dps, p1, p2, need)
                if not (abs(m1.imag) > 64 * err and rf > 64 * err):
                    return None
        if g1[1] > 0:
            g1 = (g1[0], -g1[1], g1[2])
        g2 = _polish(A2 or self._values(pt, p2), g1, p2, rho_rel)
        if g2 is None or not _agree(g1[1], g2[1], g1[2], g2[2], dps):
            return None
        if need != "density" and not _agree(g1[0], g2[0], g1[2], g2[2], dps,
                                            max(abs(g2[0]), abs(g2[1]))):
            return None
        return ("complex", g2, p2)

    # -- special points ---------------------------------------------------------------
    def _limit_at_special(self, xe, dps):
        """Boundary behaviour at a special point: ``("inf", None)`` or ``("finite", mpc)``."""
        with sp.evaluate(True):
            px = sp.Poly(self._P.as_expr().subs(_z, xe.expr), _G)
        if px.is_zero:
            raise NotAvailable(f"AlgebraicCauchy: P(G, {xe}) vanishes identically")
        dfin = px.degree()
        guard = GUARD_DPS
        while guard <= MAX_GUARD_DPS:
            results = []
            for prec in (_bits(dps + guard), _bits(dps + 2 * guard)):
                with mpmath.workprec(prec):
                    results.append(self._limit_once(px, dfin, xe, prec))
            (k1, v1), (k2, v2) = results
            if k1 == k2 == "inf":
                return ("inf", None)
            if k1 == k2 == "finite":
                with mpmath.workprec(_bits(dps + 2 * guard)):
                    if abs(v1 - v2) <= mpmath.mpf(10) ** (-dps - 1) * max(abs(v2), abs(v2.imag)):
                        return ("finite", v2)
            guard *= 2
        raise PrecisionError(f"AlgebraicCauchy: no agreement to {dps} digits at the special point {xe}")

    def _limit_once(self, px, dfin, xe, prec):
        K = self._mkernel(prec)
        x = mpmath.mpf(_to_mpf(xe, prec))
        finite = []
        if dfin >= 1:
            sq = px.sqf_part()
            cs = [mpmath.mpf(_to_mpf(sp.sympify(c), prec)) for c in sq.all_coeffs()]
            finite = [mpmath.mpc(r) for r in
                      mpmath.polyroots(cs, maxsteps=400, extraprec=2 * prec + 60)]
        mult = {}
        for r in finite:
            mult[id(r)] = sum(1 for s in px.sqf_list()[1] for _ in range(s[1])
                              if s[0].degree() > 0 and abs(mpmath.polyval(
                                  [mpmath.mpf(_to_mpf(sp.sympify(c), prec)) for c in s[0].all_coeffs()],
                                  r)) <= mpmath.mpf(2) ** (-prec // 2) * (1 + abs(r)) ** s[0].degree())
        Y, g, rho = self._start(K, x)
        eta = Y
        z = x + K.I * eta
        scale = max([abs(r) for r in finite] + [mpmath.mpf(1)])
        seps = {}
        for r in finite:
            others = [abs(r - s) for s in finite if s is not r]
            seps[id(r)] = min(others) if others else scale
        for _ in range(200):
            eta_new = eta / 16
            zf = (lambda t: x + K.I * mpmath.exp(t))
            z, g, rho = self._track(K, zf, mpmath.log(eta), mpmath.log(eta_new), g, rho, h0=-1)
            eta = eta_new
            allr = [mpmath.mpc(r) for r in mpmath.polyroots(
                [c for c in K.values(z)][::-1] if K.values(z)[-1] else K.values(z)[-2::-1],
                maxsteps=400, extraprec=2 * prec + 60)] if self._d > 1 else [g]
            big = sorted(allr, key=abs)[dfin:]
            small = sorted(allr, key=abs)[:dfin]
            if big and min(abs(b) for b in big) > 4 * (scale + max([abs(s) for s in small] + [0])) \
                    and abs(g) >= min(abs(b) for b in big) * (1 - mpmath.mpf(2) ** (-20)):
                return ("inf", None)
            for r in finite:
                s = seps[id(r)]
                near = [a for a in allr if abs(a - r) <= s / 4]
                if abs(g - r) <= s / 8 and len(near) == mult[id(r)]:
                    return ("finite", r)
        raise _Fail("special point undecided")

    def _deflated(self, xe, mass):
        """The normalized continuous part ``(G − m/(z − a))/(1 − m)`` as an AlgebraicCauchy."""
        xe = xe.expr
        key = ("deflated", xe)
        if key not in self._cache:
            expr = self._P.as_expr().subs(_G, (1 - mass) * _G + mass / (_z - xe))
            num = sp.numer(sp.together(expr))
            self._cache[key] = AlgebraicCauchy(sp.Poly(sp.expand(num), _G, _z))
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
                return self._cauchy_complex(re, im, dps)
            z = re
        xe = _real_point(z, "cauchy", "z")
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

    def _cauchy_complex(self, re, im, dps):
        flip = im.expr < 0
        im = _real_point(-im.expr, "cauchy", "z") if flip else im
        guard = GUARD_DPS
        while guard <= MAX_GUARD_DPS:
            p1, p2 = _bits(dps + guard), _bits(dps + 2 * guard)
            vals = []
            for prec in (p1, p2):
                with mpmath.workprec(prec):
                    K = self._mkernel(prec)
                    x, y = mpmath.mpf(_to_mpf(re, prec)), mpmath.mpf(_to_mpf(im, prec))
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

    def _density_exact_point(self, xe, dps, sel=None):
        if self._is_special(xe):
            return self._density_special(xe, dps)
        kind, v, prec = self._boundary_value(xe, dps, sel)
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
        out = []
        prev = None     # (xf, sel) of the last float-selected point
        for xe, xf in zip(pts, fl):
            sel = None
            if prev is not None and not self._crosses(special, prev[0], xf):
                try:
                    sel = prev[1] if xf == prev[0] else self._march(K, prev[0], xf, prev[1])
                except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                    sel = None
            if sel is None and self._plan(xe)[1] and not self._is_special(xe):
                try:
                    sel = self._select_boundary(K, xf)
                except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                    sel = None
            prev = (xf, sel) if sel is not None and isinstance(sel[1], complex) else None
            out.append(self._density_exact_point(xe, dps, sel))
        return out

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

        def edge(i, default):
            if i is None:
                return default
            if self._rational:
                return pts[i]
            with mpmath.workdps(dps):
                return +num[i]
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
        return self._memo(("atoms", None if self._rational else dps), lambda: self._atoms(dps))

    def _atoms(self, dps):
        lc = self._lc()
        if lc.degree() < 1:
            return ()
        try:
            factors = [f for f, _ in lc.factor_list()[1]]
        except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
            factors = [lc.sqf_part()]
        dom = self._P.domain
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
            locs = exact_roots if exact_roots is not None else _num_real_roots(f, _bits(dps + 20))
            for a in locs:
                m = self._atom_mass(a, f, qexpr, dps)
                if m is not None:
                    out.append((a if self._rational else +a, m))
        return tuple(sorted(out, key=lambda t: float(sp.N(t[0], 20)) if isinstance(t[0], sp.Basic)
                            else float(t[0])))

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
                qa = sp.Poly(qexpr, _H, _z)
                cs = [sum(mpmath.mpf(_to_mpf(sp.sympify(c), prec)) * an ** j
                          for (j,), c in sp.Poly(qa.as_expr().coeff(_H, k), _z).terms())
                      if qa.as_expr().coeff(_H, k) != 0 else mpmath.mpf(0)
                      for k in range(sp.degree(qexpr, _H) + 1)]
                cands = [mpmath.mpf(r) for r in _num_real_polyroots(cs[::-1], prec) if r]
            if not cands:
                return None
            cn = [mpmath.mpf(_to_mpf(c, prec)) if isinstance(c, sp.Basic) else c for c in cands]
            allc = cn + [mpmath.mpf(0)]
            gap = min([abs(u - v) for i, u in enumerate(allc) for v in allc[i + 1:]] + [mpmath.mpf(1)])
            eta = mpmath.mpf(2) ** -12 * max(1, abs(an))
            for _ in range(12):
                est = mpmath.mpc(0, eta) * self.cauchy(mpmath.mpc(an, eta), dps=12)
                best = min(range(len(allc)), key=lambda i: abs(allc[i] - est))
                if abs(allc[best] - est) <= gap / 4:
                    if best == len(cn):
                        return None
                    m = cands[best]
                    if cn[best] <= 0:
                        return None
                    if isinstance(m, sp.Basic):
                        return m
                    with mpmath.workdps(dps):
                        return +m
                eta = eta / 16
            raise PrecisionError(f"AlgebraicCauchy.atoms: cannot identify the mass at {a}")

    # -- distribution function and quantiles -------------------------------------------
    def _substitution(self):
        """Exponent ``k`` of ``s = u^k``: the density near an edge is ``s^{p/q}`` times a
        series in ``s^{1/q}`` with ``q <= deg_G P`` (Puiseux), analytic in ``u`` once ``q | k``."""
        return {1: 1, 2: 2, 3: 6}.get(self._d, 12)

    def _integrate(self, a, b, prec, tol, power=0):
        """``(∫_a^b x^power density(x) dx, error bound)`` for ``a < b`` (exact endpoints)
        inside one support interval, to absolute error about ``tol``.

        Split at the midpoint; each half is integrated from its end in the distance ``s``.
        From a special end (an edge) the variable is ``u = s^{1/k}`` (tanh-sinh; the density
        is ``s^{p/q}`` times a series in ``s^{1/q}``, analytic in ``u`` when ``q | k``), and
        the last piece ``[0, ε]`` is dropped with the rigorous bound
        ``μ_c([a, a + 2ε]) ≤ 2ε |Im G_c(a + ε + iε)|`` (``G_c``: ``G`` minus the atom at
        ``a``), which is added to the error.  From an ordinary end: Gauss–Legendre in ``s``.
        """
        with mpmath.workprec(prec):
            an, bn = self._num(a, prec), self._num(b, prec)
            mid = (an + bn) / 2
            total, err = mpmath.mpf(0), mpmath.mpf(0)
            for base, sign, length in ((a, 1, mid - an), (b, -1, bn - mid)):
                edge = self._edge(base, sign)
                bw = self._num(base, prec)
                if edge.special:
                    k = self._substitution()
                    eps, bound = edge.tail(length, prec, tol / (8 * max(1, abs(bw) + length) ** power))
                    f = (lambda u, e=edge, k=k, bw=bw, sg=sign:
                         k * u ** (k - 1) * e.density(u ** k, prec) * (bw + sg * u ** k) ** power)
                    v, e = mpmath.quad(f, [mpmath.root(eps, k), mpmath.root(length, k)], error=True)
                    err += bound * max(abs(bw), abs(bw) + 2 * eps) ** power
                else:
                    v, e = mpmath.quad(lambda t, e=edge, bw=bw, sg=sign:
                                       e.density(t, prec) * (bw + sg * t) ** power,
                                       [0, length], error=True, method="gauss-legendre")
                total += v
                err += e
            return total, err

    def _edge(self, base, sign):
        key = ("edge", str(base.expr if isinstance(base, _Pt) else base), sign)
        if key not in self._cache:
            self._cache[key] = _Edge(self, base, sign)
        return self._cache[key]

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

    def _cdf(self, xe, dps):
        prec = _bits(dps + GUARD_DPS)
        sup = self.support(dps=dps + GUARD_DPS)
        ats = self.atoms(dps=dps + GUARD_DPS)
        with mpmath.workprec(prec):
            xn = mpmath.mpf(_to_mpf(xe, prec))
            total, err = mpmath.mpf(0), mpmath.mpf(0)
            for loc, m in ats:
                ln = mpmath.mpf(_to_mpf(loc, prec)) if isinstance(loc, sp.Basic) else loc
                if ln < xn or (ln == xn and (not isinstance(loc, sp.Basic) or sp.simplify(loc - xe.expr) <= 0)):
                    total += mpmath.mpf(_to_mpf(m, prec)) if isinstance(m, sp.Basic) else m
            for a, b in sup:
                an = self._num(a, prec)
                bn = self._num(b, prec)
                if not mpmath.isfinite(an) or not mpmath.isfinite(bn):
                    raise NotAvailable("AlgebraicCauchy.cdf: unbounded support is not supported")
                if xn <= an:
                    continue
                hi = b if xn >= bn else xe
                for lo2, hi2 in self._split(a, hi, ats, prec):
                    v, e = self._integrate(lo2, hi2, prec, mpmath.mpf(10) ** (-dps - 2))
                    total += v
                    err += e
            if err > mpmath.mpf(10) ** (-dps) * max(abs(total), mpmath.mpf(10) ** (-dps)):
                raise PrecisionError(
                    f"AlgebraicCauchy.cdf: quadrature error {mpmath.nstr(err, 3)} exceeds 10^-{dps}")
        with mpmath.workdps(dps):
            return +total

    @staticmethod
    def _num(v, prec):
        if isinstance(v, _Pt):
            return mpmath.mpf(v.mpf(prec))
        if isinstance(v, sp.Basic):
            if v in (sp.oo, -sp.oo):
                return mpmath.inf if v > 0 else -mpmath.inf
            return mpmath.mpf(_to_mpf(v, prec))
        return mpmath.mpf(v)

    def _split(self, a, b, ats, prec):
        """``[a, b]`` split at the atoms and special points strictly inside."""
        an, bn = self._num(a, prec), self._num(b, prec)
        cuts = []
        for p in list(self._special_points()) + [loc for loc, _ in ats]:
            pn = self._num(p, prec)
            if an < pn < bn:
                cuts.append((pn, p))
        cuts.sort(key=lambda t: t[0])
        ends = [a] + [p for _, p in cuts] + [b]
        return [(ends[i], ends[i + 1]) for i in range(len(ends) - 1)
                if self._num(ends[i], prec) < self._num(ends[i + 1], prec)]

    def quantile(self, p, *, dps=15):
        r"""Quantile ``inf{x : F(x) ≥ p}`` for ``p`` in ``[0, 1]``; a ``p`` inside the jump of
        an atom gives the atom's location; ``p = 0`` and ``p = 1`` give the ends of the
        support.

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
            for c in comps:
                if c[0] == "atom":
                    mass = self._num(c[2], prec)
                    if cum + mass >= target:
                        with mpmath.workdps(dps):
                            return +self._num(c[1], prec)
                    cum += mass
                    last = self._num(c[1], prec)
                    continue
                mass, _ = self._integrate(c[1], c[2], prec, mpmath.mpf(10) ** (-dps - 2))
                if cum + mass >= target:
                    x = self._invert(c[1], c[2], target - cum, mass, prec, dps)
                    with mpmath.workdps(dps):
                        return +x
                cum += mass
                last = self._num(c[2], prec)
            with mpmath.workdps(dps):
                return +last

    def _invert(self, a, b, want, mass, prec, dps):
        """Solve ``∫_a^x density = want`` on ``[a, b]`` (bracketed secant/bisection)."""
        lo, hi = self._num(a, prec), self._num(b, prec)
        flo, fhi = -want, mass - want
        tol = mpmath.mpf(10) ** (-dps - 2)
        x = lo + (hi - lo) * want / mass
        for _ in range(200):
            if not lo < x < hi:
                x = (lo + hi) / 2
            v, _ = self._integrate(a, _real_point(x, "quantile"), prec, mpmath.mpf(10) ** (-dps - 2))
            fx = v - want
            if fx == 0:
                return x
            if fx < 0:
                lo, flo = x, fx
            else:
                hi, fhi = x, fx
            if hi - lo <= tol * max(abs(lo), abs(hi), tol):
                return (lo + hi) / 2
            xs = lo - flo * (hi - lo) / (fhi - flo)
            mid = (lo + hi) / 2
            # secant, but fall back to bisection when the secant creeps along one end
            x = xs if abs(xs - mid) < (hi - lo) / 4 else (xs + mid) / 2
        raise PrecisionError("AlgebraicCauchy.quantile: no convergence")


class _Edge:
    """Boundary values along the real axis on one side of a point ``base``, at
    ``x = base + sign·s``: each new point is continued along the axis from the nearest
    point already solved (in ``log s``), in doubles when they resolve the point, else in
    mpmath at a precision that resolves ``s`` relative to ``base``."""

    def __init__(self, owner, base, sign):
        self.A, self.base, self.sign = owner, base, sign
        bn = owner._num(base, 64)
        self.bmag = int(mpmath.mag(bn)) if bn else None
        self.bf = float(bn)
        pt = base if isinstance(base, _Pt) else _real_point(base, "cdf")
        self.special = owner._is_special(pt)
        self.mass = 0
        if self.special:
            for loc, m in owner.atoms(dps=20):
                if abs(float(sp.N(loc, 20) if isinstance(loc, sp.Basic) else loc) - self.bf) <= \
                        1e-12 * (1 + abs(self.bf)) and (not isinstance(loc, sp.Basic)
                                                         or sp.simplify(loc - pt.expr) == 0):
                    self.mass = m
        self.nodes = {False: ([], []), True: ([], [])}    # is_mp -> (sorted log s, sels)
        self.values = {}
        self.inner = None
        if self.mass and isinstance(self.mass, sp.Basic) and self.mass != 1:
            # an atom at the edge: work with the continuous part (G − m/(z − a))/(1 − m)
            self.inner = owner._deflated(pt, self.mass)._edge(base, sign)
            self.scale = 1 - self.mass

    def _at(self, s, prec):
        extra = max(0, self.bmag - int(mpmath.mag(s))) if self.bmag is not None else 0
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
                    sel = A._march(K, keys[j], ls, sels[j], zf)
                except catch:
                    sel = None
            if sel is None:
                try:
                    sel = A._select_boundary(K, pt.xf)
                except catch:
                    sel = None
        else:
            tp = 64 + extra + 16
            fk, fs = self.nodes[False]
            fi = bisect.bisect_left(fk, ls)
            cands = [(abs(keys[j] - ls), keys[j], sels[j]) for j in nbs[:1]]
            cands += [(abs(fk[j] - ls), fk[j], fs[j]) for j in (fi - 1, fi) if 0 <= j < len(fk)]
            with mpmath.workprec(tp):
                K = A._mkernel(tp)
                bw, sg = A._num(self.base, tp), self.sign
                xw, lw = mpmath.mpf(pt.mpf(tp)), mpmath.log(s)
                zf = (lambda t, t1=lw: xw if t == t1 else bw + sg * mpmath.exp(t))
                for _, t0, nsel in sorted(cands, key=lambda c: c[0])[:1]:
                    nsel = (nsel[0], mpmath.mpc(nsel[1]), mpmath.mpf(nsel[2]))
                    try:
                        sel = A._march(K, mpmath.mpf(t0), lw, nsel, zf)
                    except _Fail:
                        sel = None
                if sel is None:
                    try:
                        sel = A._select_boundary(K, xw)
                    except _Fail:
                        sel = None
        if sel is not None and sel[0] != "unsure":
            keys.insert(i, ls)
            sels.insert(i, sel)
        return pt, sel, (extra + 16 if not use_float else 0, use_float)

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
        """``(ε, bound)``: the continuous mass within ``2ε`` of ``base`` is below ``bound``,
        ``bound ≤ tol``."""
        if self.inner is not None:
            sc = self.A._num(self.scale, prec)
            eps, bound = self.inner.tail(length, prec, tol / sc)
            return eps, bound * sc
        eps = length / 4
        prev = None
        for _ in range(200):
            bound = self._bound(eps)
            if bound is not None and bound <= tol:
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
        with mpmath.workprec(max(64, plan[0] + 80)):
            K = A._mkernel(mpmath.mp.prec) if is_mp else A._fkernel()
            x = mpmath.mpf(pt.mpf(mpmath.mp.prec)) if is_mp else pt.xf
            e = mpmath.mpf(eps) if is_mp else float(eps)
            if not is_mp and not e:
                return None
            try:
                z, g1, _ = A._track(K, lambda t: x + K.I * t, 0 * e, e, g, rho)
            except (_Fail, OverflowError, ZeroDivisionError, ValueError):
                return None
            gz = mpmath.mpc(g1)
            if self.mass:
                m = mpmath.mpf(_to_mpf(self.mass, 64)) if isinstance(self.mass, sp.Basic) else self.mass
                gz -= m / (mpmath.mpc(z) - A._num(self.base, mpmath.mp.prec))
            return 2.5 * mpmath.mpf(eps) * abs(gz.imag)


def _num_real_polyroots(cs, prec):
    """Real roots of a numeric polynomial (descending coefficients), by separation."""
    while cs and not cs[0]:
        cs = cs[1:]
    if len(cs) < 2:
        return []
    roots = [mpmath.mpc(r) for r in mpmath.polyroots(cs, maxsteps=400, extraprec=2 * prec + 60)]
    out = []
    for r in roots:
        others = [abs(r - s) for s in roots if s is not r]
        sep = min(others) if others else mpmath.inf
        if abs(r.imag) <= sep / 4:
            out.append(r.real)
    return out
