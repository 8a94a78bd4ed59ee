"""Low-level numerics behind :mod:`freeprob.numeric` (the method is described in its
module docstring).

Precision helpers and constants, exact real points (:class:`_Pt`), polynomial
evaluation, Newton's method and Taylor shifts in Python complex or mpmath arithmetic,
Fujiwara separation bounds ([FUJ16]_), the :class:`_Kernel` of coefficient rows (its
python-flint ``acb`` twin is in :mod:`freeprob.numeric.acbkernel`), the fixed-point
Newton polisher (:func:`_polish`) and its helpers, the bracketed root finder
(:func:`_bracketed_root`, ``mpmath.findroot``), and the exact algebra on ``P``
(branch factor at infinity, real roots of univariate polynomials).
"""
from __future__ import annotations

import cmath
import math
import numbers
import sys
from fractions import Fraction

import flint
import mpmath
import sympy as sp
from mpmath import libmp

from freeprob.core.params import as_exact, check_dps
from freeprob.errors import FreeprobValueError
from freeprob.core.symbols import ExpConstant

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
    """``dps`` of the numeric entry points: an integer from 1 to ``MAX_DPS``
    (:func:`freeprob.core.params.check_dps`, the one check)."""
    if dps is None:
        raise FreeprobValueError(f"AlgebraicCauchy.{who}: dps must be an integer >= 1; got None")
    return check_dps(dps, f"AlgebraicCauchy.{who}")


# ---------------------------------------------------------------------------------------
# exact real points
# ---------------------------------------------------------------------------------------
class _Pt:
    """An exact real point: a rational ``num/den`` (fast path) or a sympy expression."""

    __slots__ = ("num", "den", "_expr", "xf")

    def __init__(self, num=None, den=1, expr=None):
        if num is not None:
            f = Fraction(num, den)      # (int: mpmath's mantissas are gmpy2 mpz under gmpy)
            self.num, self.den, self._expr = int(f.numerator), int(f.denominator), None
            self.xf = float(f)
        else:
            self.num = self.den = None
            self._expr = expr
            self.xf = float(sp.N(expr, 20))

    @property
    def nonzero(self):
        """Whether the point is not 0 (exactly; no sympy for a rational)."""
        return self.num != 0 if self.num is not None else self._expr != 0

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
        """The exact value if short, else ``≈`` and 17 digits (``mpf('1e-5000')``: ~5000 digits)."""
        if self.num is not None and max(self.num.bit_length(), self.den.bit_length()) <= 128:
            return str(self.expr)
        if self.num is not None:
            return "≈" + mpmath.nstr(mpmath.mpf(libmp.from_rational(self.num, self.den, 64, "n")), 17)
        return _short(self._expr, self.xf)


def _real_point(x, who, name="x"):
    """``x`` as an exact real :class:`_Pt` (floats as the rational they print as, as in
    :mod:`freeprob.core.params`; mpmath numbers by their exact binary value); a point beyond
    the double-precision range (which the root isolation works in) is refused."""
    try:
        pt = _exact_point(x, who, name)
        finite = math.isfinite(pt.xf)
    except OverflowError:
        finite = False
    if not finite:
        raise FreeprobValueError(f"AlgebraicCauchy.{who}: `{name}` must lie within the double-precision "
                                 f"range ±{sys.float_info.max:.4g}; got {_short(x)}")
    return pt


class _CPt:
    """An exact non-real point ``re + i·im`` as two :class:`_Pt` parts: how a wrapper
    (:class:`~freeprob.numeric.scaled.ScaledCauchy`) hands an exact point it computed to the
    evaluator it wraps (a sympy ``re + I·im`` cost about 1 ms a point to build and to take
    apart again; issue 27)."""

    __slots__ = ("im", "re")

    def __init__(self, re, im):
        self.re, self.im = re, im

    def __repr__(self):
        return f"{self.re} + {self.im}*I"


def _is_nonreal_input(z):
    """Whether ``z`` takes the complex branch of ``cauchy``: a :class:`_CPt`, a ``complex`` or
    ``mpc``, or a sympy number not known to be real."""
    return isinstance(z, _CPt | complex | mpmath.mpc) or (isinstance(z, sp.Basic) and z.is_real is not True)


def _complex_point(z, who, name="z"):
    """The exact parts ``(re, im)`` (:class:`_Pt`) of a point on the complex branch of
    ``cauchy``: each part of a ``complex`` as the decimal it prints as, of an ``mpc`` by its
    exact binary value, of a sympy number exactly.  Raises :class:`FreeprobValueError` as
    :func:`_real_point`; TypeError or ValueError for what is not a number."""
    if isinstance(z, _CPt):
        return z.re, z.im
    # (an mpc's parts by themselves: mpmath.mpf(z.real) rounded them to the working precision)
    parts = (sp.re(z), sp.im(z)) if isinstance(z, sp.Basic) else (
        (float(z.real), float(z.imag)) if isinstance(z, complex) else (z.real, z.imag))
    re, im = (_real_point(v, who, name) for v in parts)
    if abs(im.xf) < sys.float_info.min and im.nonzero:
        raise FreeprobValueError(      # (tracked in log Im z: 1e-350 failed after seconds)
            f"AlgebraicCauchy.{who}: `Im {name}` must be 0 or at least {sys.float_info.min:.3g} in absolute "
            f"value (the double-precision range the root tracking works in); got {im!r}; on the real "
            "axis pass a real point off the support, or use density (Im G(x + i0) = −π·density(x))")
    return re, im


def _short(x, approx=None):
    """``x`` printed, its middle cut when long; ``≈approx`` if its integers exceed Python's
    int-to-str limit."""
    try:
        text = str(x)
    except ValueError:
        return "≈" + mpmath.nstr(mpmath.mpf(approx), 17) if approx is not None else "(too long to print)"
    return text if len(text) <= 40 else f"{text[:20]}...{text[-12:]} ({len(text)} characters)"


def _shortest_decimal(text):
    """``(numerator, denominator)`` in lowest terms of the decimal ``repr`` of a finite float
    (``Fraction(text)``'s, parsed directly: 2.6 against 7.8 µs, one per grid point)."""
    mant, _, exp = text.partition("e")
    ip, _, fp = mant.partition(".")
    num, e = int(ip + fp), (int(exp) if exp else 0) - len(fp)
    if e >= 0:
        return num * 10 ** e, 1
    g = math.gcd(num, 10 ** -e)
    return num // g, 10 ** -e // g


def _exact_point(x, who, name):
    owner = f"AlgebraicCauchy.{who}"
    if isinstance(x, _Pt):
        return x
    if isinstance(x, bool):
        raise FreeprobValueError(f"{owner}: `{name}` must be a real number; got {x!r}")
    if isinstance(x, float):
        if not math.isfinite(x):
            raise FreeprobValueError(f"{owner}: `{name}` must be finite; got {x!r}")
        x = float(x)                     # numpy.float64 reprs as 'np.float64(...)'
        pt = _Pt.__new__(_Pt)
        (pt.num, pt.den), pt._expr, pt.xf = _shortest_decimal(repr(x)), None, x
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
        man = -int(man) if sign else int(man)       # int: gmpy2.mpz under the gmpy backend
        return _Pt(man << exp if exp >= 0 else man, 1 if exp >= 0 else 1 << -exp)
    if isinstance(x, sp.Basic) and not isinstance(x, sp.Expr):
        raise FreeprobValueError(f"{owner}: `{name}` must be a real number; got {x!r}")
    if not isinstance(x, numbers.Number | sp.Basic | str):
        kind = "a number (complex, or real off the support)" if who == "cauchy" else "a real number"
        raise FreeprobValueError(f"{owner}: `{name}` must be {kind}; got {type(x).__name__} {x!r}")
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
    key = (value, prec)
    hit = _TO_MPF_CACHE.get(key)
    if hit is None:
        hit = _arb_to_mpf(value, prec)
        if hit is None:
            f = sp.N(value, int(prec / _LOG2_10) + 6)
            hit = libmp.normalize(*f._mpf_, prec, "n") if f._mpf_[1] else libmp.fzero
        if len(_TO_MPF_CACHE) > 20000:
            _TO_MPF_CACHE.clear()
        _TO_MPF_CACHE[key] = hit
    return hit


#: (sympy number, prec) -> mpf tuple: the coefficients of P are converted once per precision
_TO_MPF_CACHE = {}


def _arb(v):
    """The sympy number ``v`` (built from rationals, e, π, ``exp`` (and
    :class:`~freeprob.core.symbols.ExpConstant`), ``log`` of positive
    numbers, rational powers and real ``CRootOf``, with ``+`` and ``·``) as a python-flint
    ``arb`` at the current ``flint.ctx.prec`` that provably contains it; ``None`` for
    anything else (callers then evaluate it otherwise or refuse).  Source: python-flint
    (Arb) ball arithmetic [JOH17]_."""
    arb = flint.arb
    if isinstance(v, sp.Integer):
        return arb(int(v))
    if isinstance(v, sp.Rational):
        return arb(int(v.p)) / int(v.q)
    if v is sp.E:
        return arb.const_e()
    if v is sp.pi:
        return arb.pi()
    if isinstance(v, sp.exp | ExpConstant):     # (ExpConstant: e^r kept as one atom)
        a = _arb(v.args[0])
        return None if a is None else a.exp()
    if isinstance(v, sp.log):
        a = _arb(v.args[0])
        return None if a is None or not a > 0 else a.log()
    if isinstance(v, sp.Add | sp.Mul):
        parts = [_arb(a) for a in v.args]
        if any(p is None for p in parts):
            return None
        out = parts[0]
        for p in parts[1:]:
            out = out + p if isinstance(v, sp.Add) else out * p
        return out
    if isinstance(v, sp.Pow) and isinstance(v.exp, sp.Rational):
        b = _arb(v.base)
        if b is None:
            return None
        p, q = int(v.exp.p), int(v.exp.q)
        if q != 1:
            if b > 0:
                b = b.root(q)
            elif b < 0 and q % 2 == 1:
                b = -((-b).root(q))
            else:
                return None
        return b ** p if p >= 0 else 1 / b ** (-p)
    if isinstance(v, sp.CRootOf):
        return _enclose_rootof(v)
    return None


def _enclose_rootof(r):
    """The ``r.index``-th real root of ``r.poly`` (sympy's order: real roots ascending)."""
    poly = r.poly
    if not (poly.domain.is_ZZ or poly.domain.is_QQ):
        return None
    cs = poly.all_coeffs()[::-1]
    den = sp.ilcm(*[sp.Rational(c).q for c in cs])
    fp = flint.fmpz_poly([int(sp.Rational(c) * den) for c in cs])
    roots = sorted((c.real for c, _ in fp.complex_roots() if c.imag == 0 and c.imag.is_exact()),
                   key=lambda b: b.mid())
    return roots[r.index] if r.index < len(roots) else None


def _constant_arb(c):
    """A ring generator of a coefficient domain as an ``arb`` (``e``, ``exp(r)``), or ``None``."""
    if c is sp.E:
        return flint.arb.const_e()
    if isinstance(c, sp.exp | ExpConstant) and c.args[0].is_Rational:
        return (flint.arb(int(c.args[0].p)) / int(c.args[0].q)).exp()
    return None


def _coeff_arbs(poly, prec):
    """The coefficients of a univariate ``Poly`` (highest degree first) as ``arb`` balls at
    ``prec`` bits that contain them, from the domain's own representation for ℤ, ℚ and
    ℤ/ℚ[e, exp(r)] (converting a coefficient over ℤ[e] to a sympy expression first took
    ~30 ms each); ``None`` for other domains.  Sets python-flint's precision for the
    duration only."""
    dom = poly.domain
    ground = dom.domain if dom.is_PolynomialRing else dom
    if not (ground.is_ZZ or ground.is_QQ):
        return None
    old = flint.ctx.prec
    try:
        flint.ctx.prec = prec
        gens = [_constant_arb(c) for c in dom.symbols] if dom.is_PolynomialRing else None
        if gens is not None and any(g is None for g in gens):
            return None
        out = []
        for c in poly.rep.to_list():
            if gens is None:
                out.append(flint.arb(int(ground.numer(c))) / int(ground.denom(c)))
                continue
            b = flint.arb(0)
            for mono, q in c.items():
                t = flint.arb(int(ground.numer(q))) / int(ground.denom(q))
                for g, e in zip(gens, mono):
                    if e:
                        t *= g ** e
                b += t
            out.append(b)
        return out
    finally:
        flint.ctx.prec = old


def _coeff_mpfs(poly, prec):
    """The coefficients of a univariate ``Poly`` (highest degree first) as mpf tuples
    rounded to ``prec`` bits (through :func:`_coeff_arbs`, else as :func:`_to_mpf` of the
    sympy coefficients)."""
    for wp in (prec + 30, 2 * prec + 60):
        balls = _coeff_arbs(poly, wp)
        if balls is None:
            break
        out = []
        for b in balls:
            if not (b.rad() == 0 or (not b.contains(0) and b.rad() < abs(b.mid()) * flint.arb(2) ** -(prec + 8))):
                break
            man, exp = b.mid().man_exp()
            out.append(libmp.from_man_exp(int(man), int(exp), prec, "n"))
        else:
            return out
    return [_to_mpf(sp.sympify(c), prec) for c in poly.all_coeffs()]


def _arb_to_mpf(value, prec):
    """``value`` rounded to ``prec`` bits through ``arb`` (much faster than sympy's evalf
    for coefficients in ℤ[e] or ℤ[exp(r)]), or ``None`` if the ball cannot certify the
    rounding to within the last bit or the expression is not of that kind."""
    old = flint.ctx.prec
    try:
        for wp in (prec + 30, 2 * prec + 60):
            flint.ctx.prec = wp
            b = _arb(value)
            if b is None:
                return None
            if b.rad() == 0 or (not b.contains(0) and b.rad() < abs(b.mid()) * flint.arb(2) ** -(prec + 8)):
                man, exp = b.mid().man_exp()
                return libmp.from_man_exp(int(man), int(exp), prec, "n")
            if b.mid() == 0 and b.rad() < flint.arb(2) ** -(wp - 10) and value.is_zero:
                return libmp.fzero
    except (TypeError, ValueError, ZeroDivisionError, AttributeError):
        return None
    finally:
        flint.ctx.prec = old
    return None


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


def _newton(A, g, tol, scale, maxit=40, atol=0, mid=None):
    """Newton's method from ``g``; the root, or ``None`` without convergence.

    Stops when the correction is below ``tol·max(|g|, scale)`` or ``atol``, or when it
    stagnates at the rounding level of an ill-conditioned root (below ``√tol``).  ``mid``
    (for python-flint balls: ``lambda v: v.mid()``) is applied to each correction before
    it is used and measured (the midpoint of ``|d|`` would count the radius of ``d``, which
    at an ill-conditioned root far exceeds its midpoint) and to each iterate; ``q == 0``
    (for a ball: certainly zero) stops without a step."""
    prev = None
    for i in range(maxit):
        p, q = _pvals(A, g)
        if q == 0:
            return None
        d = p / q
        if mid is not None:
            d = mid(d)
            g = mid(g - d)
        else:
            g = g - d
        ad = abs(d)
        if mid is not None:
            ad = mid(ad)
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
    if isinstance(v, flint.acb | flint.arb):       # as for mpc, from the midpoints
        best, n = -math.inf, 0
        for part in ((v.real, v.imag) if isinstance(v, flint.acb) else (v,)):
            man, exp = part.mid().man_exp()
            if man:
                man = abs(int(man))
                bc, n = man.bit_length(), n + 1
                best = max(best, int(exp) + bc + math.log2(man / (1 << bc)) if bc < 1000
                           else int(exp) + bc)
        return best + (0.5 if n == 2 else 0)
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
    if isinstance(c[0], flint.acb):
        return flint.arb((int(2.0 ** (53 - (lg % 1))), -int(lg // 1) - 1 - 53))
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



class _PoleKernel(_Kernel):
    """The kernel of ``Q(H, z) = (z − a)^d · P(H/(z − a), z)``, whose roots are
    ``H = (z − a)·G`` for the roots ``G`` of ``P(·, z)``.

    Near a pole ``G ≈ m/(z − a)`` the linear predictor of a tracking step is poor for
    ``G`` (its second-order error grows like ``1/(z − a)`` against a separation that
    does not), so the steps shrink with the height and the path never reaches small
    heights; ``H`` stays bounded (``H → m``) and the same steps stay long.  Used to
    identify the mass of an atom (:meth:`AlgebraicCauchy.atoms`)."""

    def __init__(self, base, a):
        super().__init__(base.rows, base.drows, base.eps, base.I, base.exp, base.log)
        self.a = a
        self.is_mp = base.is_mp
        self.sigma = base.sigma

    def _scale(self, A, dA, z):
        d = len(A) - 1
        u = z - self.a
        pw = [1 + 0 * u]
        for _ in range(d):
            pw.append(pw[-1] * u)
        B = [A[k] * pw[d - k] for k in range(d + 1)]
        if dA is None:
            return B, None
        dB = [dA[k] * pw[d - k] + ((d - k) * A[k] * pw[d - k - 1] if k < d else 0)
              for k in range(d + 1)]
        return B, dB

    def ev(self, z):
        A, dA = super().ev(z)
        return self._scale(A, dA, z)

    def values(self, z):
        return self._scale(super().values(z), None, z)[0]


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


def _bracketed_root(f, lo, hi, tol, maxsteps=200, known=()):
    """A root of the real function ``f`` in the bracket ``[lo, hi]`` (``f(lo)``, ``f(hi)``
    of opposite signs, mpf ends) by ``mpmath.findroot`` with the Illinois solver (regula
    falsi halving the value kept at a stale end: a bracket is kept at every step).

    Stops when the last bracket is shorter than ``tol·max(1, |x|)`` or when
    ``|f(x)| < tol`` (mpmath's rules; ``verify=False``: the value of ``f`` at the root is
    the caller's to judge), at the working precision (findroot adds 20 bits).  Returns the
    mpf root, or ``None`` when ``maxsteps`` steps did not converge (the caller raises its
    own error).  ``known``: pairs ``(x, f(x))`` already computed (e.g. at the bracket ends), not
    evaluated again.  Exceptions raised by ``f`` propagate.

    Source: mpmath's ``findroot`` (``solver='illinois'``), Dowell & Jarratt (1971).
    """
    calls = [0]
    seen = dict(known)

    def g(x):
        """``f``, or the value already known at ``x``."""
        if x in seen:
            return seen[x]
        calls[0] += 1                   # one new evaluation per step
        return f(x)
    x = mpmath.findroot(g, (lo, hi), solver="illinois", tol=tol, maxsteps=maxsteps,
                        verify=False)
    return None if calls[0] >= maxsteps else x


def _sorted_by_real(sig):
    """``(real parts, points)`` of ``sig`` sorted by real part (``_sing_dist`` of :mod:`freeprob.numeric.boundary`
    in doubles); ``None`` (its plain loop) unless every point is a finite Python complex or float."""
    if not all((type(s) is complex or type(s) is float) and cmath.isfinite(s) for s in sig):
        return None
    pts = sorted(sig, key=lambda s: s.real)
    return [s.real for s in pts], pts
