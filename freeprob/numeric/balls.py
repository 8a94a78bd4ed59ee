"""Ball primitives for the enclosures of :mod:`freeprob.numeric.enclosure`: exact numbers
as python-flint ``arb`` balls, widths, re-centring on a plain value, and Krawczyk's test.

Knows nothing of Cauchy transforms: every function takes numbers, balls or coefficient
lists.  Sources: python-flint / Arb [JOH17]_; Krawczyk's operator [RUM10]_ §8; centred
forms [NEU90]_ §2.3 (:mod:`freeprob.references`).
"""
from __future__ import annotations

import flint
import mpmath
import sympy as sp

from freeprob.errors import NotAvailable
from freeprob.numeric.rootkernel import _arb, _Pt

__all__ = ["Ball", "certified_values", "ComplexBall", "check_ball", "enclose", "exact_arb", "meets", "ball_around", "acb_around",
           "krawczyk", "krawczyk_taylor", "proven", "shows_proven"]

arb, acb = flint.arb, flint.acb


class _prec:
    """``flint.ctx.prec`` set for a block and restored after it."""

    def __init__(self, bits):
        self.bits = int(bits)

    def __enter__(self):
        self.old = flint.ctx.prec
        flint.ctx.prec = self.bits

    def __exit__(self, *exc):
        flint.ctx.prec = self.old


# ---------------------------------------------------------------------------------------
# exact numbers -> balls
# ---------------------------------------------------------------------------------------
def enclose(value, prec):
    r"""An ``arb`` ball (at ``prec`` bits) that provably contains the exact real ``value``.

    ``value``: an int, Fraction, mpmath ``mpf`` (exact binary value), a :class:`_Pt`, or a
    sympy number built from rationals, ``e``, ``π``, ``exp``, ``log`` of positive numbers,
    rational powers (radicals) and ``CRootOf`` (real roots of integer polynomials), with
    ``+``, ``·``.

    Raises :class:`NotAvailable` for other numbers (say which), :class:`FreeprobValueError`
    for non-real ones.  Source: python-flint's ``arb`` (Johansson's Arb).
    """
    with _prec(prec):
        out = _enclose(value)
    if out is None:
        raise NotAvailable(f"ball enclosures: cannot enclose the number {value} rigorously "
                           "(supported: rationals, e, π, exp, log, radicals, CRootOf)")
    return out


def _enclose(v):
    if isinstance(v, _Pt):
        if v.num is not None:
            if v.den & (v.den - 1) == 0:      # dyadic: exact, whatever the precision
                return exact_arb(mpmath.mp.make_mpf(
                    mpmath.libmp.from_man_exp(v.num, -(v.den.bit_length() - 1))))
            return arb(v.num) / v.den
        v = v.expr
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return arb(v)
    if isinstance(v, mpmath.mpf):
        return arb(v) if mpmath.isfinite(v) else None
    if not isinstance(v, sp.Basic):
        try:
            v = sp.nsimplify(v, rational=True) if isinstance(v, float) else sp.sympify(v)
        except (sp.SympifyError, TypeError):
            return None
    return _arb(v)


def _arb_point(b):
    """The midpoint of the arb ``b`` as an exact :class:`_Pt`."""
    m = b.mid()
    if m == 0:
        return _Pt(0)
    man, exp = m.man_exp()
    man, exp = int(man), int(exp)
    return _Pt(man << exp) if exp >= 0 else _Pt(man, 1 << -exp)


def meets(b, dps):
    """True if the ball ``b`` (arb or acb) has radius ``≤ 10^{-dps}·|mid|`` (each part of an
    acb against the modulus), or is an exact number.  Raises nothing.  Source: the width
    rule of :mod:`freeprob.numeric.enclosure`."""
    if isinstance(b, acb):
        if b.real.is_exact() and b.imag.is_exact():
            return True
        scale = abs(acb(b.mid()))
        tol = scale * arb(10) ** (-dps)
        return bool(b.real.rad() <= tol and b.imag.rad() <= tol)
    if b.is_exact():
        return True
    return bool(b.rad() <= abs(arb(b.mid())) * arb(10) ** (-dps))


def exact_arb(v):
    """The mpf ``v`` (any precision; other numbers are read by ``mpmath.mpf``) as an exact
    ``arb``, whatever ``flint.ctx.prec`` is.  Raises nothing.  Source: python-flint [JOH17]_."""
    if not isinstance(v, mpmath.mpf):
        v = mpmath.mpf(v)
    if not mpmath.isfinite(v):
        return arb(v)
    man = int(v._mpf_[1])
    with _prec(max(man.bit_length() + 8, 64)):
        out = arb(v)
    return out


def ball_around(mid, b, dps=None):
    """An ``arb`` with midpoint ``mid`` (an mpf, e.g. the plain result) containing the ball
    ``b``: the radius is ``|mid − b|`` rounded up.  Raises nothing.  Source: python-flint [JOH17]_."""
    m = exact_arb(mid)
    if b.is_exact() and b == m:
        return m
    bits = int(mid._mpf_[1]).bit_length() if isinstance(mid, mpmath.mpf) and mpmath.isfinite(mid) else 0
    with _prec(max(flint.ctx.prec, bits + 16, 64)):
        r = (b - m).abs_upper()
        out = arb(m, r)
    return out


def acb_around(mid, b):
    """``acb`` version of :func:`ball_around` (``mid`` an mpc or a complex), part by part.
    Raises nothing.  Source: python-flint [JOH17]_."""
    mid = mpmath.mpc(mid) if not isinstance(mid, mpmath.mpc) else mid
    return acb(ball_around(mid.real, b.real), ball_around(mid.imag, b.imag))


def _width(b):
    """Relative radius of an arb/acb, as a short string (for error messages)."""
    if isinstance(b, acb):
        s, r = abs(acb(b.mid())), max(b.real.rad(), b.imag.rad())
    else:
        s, r = abs(arb(b.mid())), b.rad()
    try:
        return f"{float(r / s) if s != 0 else float(r):.2e}"
    except (ValueError, ZeroDivisionError, OverflowError):
        return "inf"


# ---------------------------------------------------------------------------------------
# Krawczyk's test
# ---------------------------------------------------------------------------------------
#: radii of the boxes tried by Krawczyk's test, in units of the Newton correction
_RADII = (1.25, 1.6, 2, 2.5, 3.2, 4, 6, 10, 20, 50, 200)


def _no_contraction(K, delta, r):
    """True when a failed Krawczyk box of radius ``r`` (arb) shows that no larger box of
    the list can pass: the part of ``K``'s radius beyond the Newton step ``delta``, i.e.
    the contraction ``|1 − Y·f'(B)|·r``, already reaches ``r`` (or ``K`` is not finite),
    and it only grows with the box (inclusion isotony).  Speed only: the callers then give
    up (``None``) instead of trying the larger boxes, which never proves a root that the
    test would not prove.  Source: this project's design."""
    if not K.is_finite():
        return True
    rk = max(arb(K.real.rad()), arb(K.imag.rad()))
    rd = max(arb(delta.real.rad()), arb(delta.imag.rad()))
    return bool(rk - rd >= r)


def krawczyk_taylor(Pi, d, c):
    r"""Krawczyk's test over a parameter ball ``t = m + δ``, ``δ ∈ d``, with the polynomial
    expanded exactly in ``δ``: ``f(g; m + δ) = Σ_i δ^i P_i(g)``, ``Pi[i]`` the coefficient
    lists of ``P_i`` (point coefficients: exact Taylor shifts of the rows to ``m``).

    ``f(c; t) ∈ Σ_i d^i P_i(c)`` and ``f'(B; t) ∈ Σ_i d^i q_i'(B − c)``, ``q_i(h) = P_i(c + h)``
    (each ``P_i`` expanded at ``c`` by ball composition, so that ``q_i'`` is evaluated on a
    ball centred at 0: tighter than ``P_i'(c) + (B − c)·P_i''(B)`` with ``P_i''`` on ``B``
    by Horner): the widths are those of the true terms, not of coefficient balls added up.  Returns the
    enclosure ``K ⊂ int B`` of the unique root in ``B`` of every ``f(·; t)``, or ``None``;
    ``c`` must be an accurate root of ``P_0``.  Source: Rump, Acta Numerica 19 (2010) §8;
    Neumaier, *Interval Methods for Systems of Equations* (1990) §2.3 (centred forms).
    """
    c = acb(c.mid())
    # each P_i expanded at c (python-flint acb_poly composition with c + h, ball
    # coefficients): q_i(h) = P_i(c + h), so that f(c; t) = Σ d^i q_i(0) and
    # f'(B; t) ⊂ Σ d^i q_i'(B − c), q_i' evaluated on a ball centred at 0
    shift = flint.acb_poly([c, 1])
    qs = [flint.acb_poly(list(P))(shift) for P in Pi]
    dq = [q.derivative() for q in qs]
    vals = [(q[0], q[1]) for q in qs]
    fc = acb(0)
    for i in range(len(Pi) - 1, -1, -1):
        fc = fc * d + vals[i][0]
    dfm = vals[0][1]

    def deriv(B):
        hB = B - c
        dB = acb(0)
        for i in range(len(Pi) - 1, -1, -1):
            dB = dB * d + dq[i](hB)
        return dB
    return _boxes(c, fc, dfm, deriv)


def krawczyk(A, c, *, newton=True):
    r"""Enclosure of the unique root of ``f(g) = Σ_k A[k] g^k`` next to ``c``, or ``None``.

    ``A``: ``acb`` coefficients (balls: every polynomial with coefficients in them has the
    property proven), ``c``: an approximate root (acb, its midpoint is used).  With
    ``newton`` the centre is first refined by Newton steps at the current precision.
    With real coefficients (imaginary parts exactly 0) a centre on the real axis gives a
    box symmetric about it, so that a success also proves the root real (the conjugate of
    a root is a root, and there is only one in the box).

    Returns the ``acb`` ``K`` with ``K ⊂ int B``, or ``None`` if the test fails for every box
    tried.  Source: Rump, Acta Numerica 19 (2010) §8 (Krawczyk operator).
    """
    c = acb(c.mid()) if isinstance(c, acb) else acb(c)
    real = c.imag == 0 and all(a.imag == 0 and a.imag.is_exact() for a in A)
    prec = flint.ctx.prec
    # f and f' by python-flint's acb_poly evaluation (ball Horner in C)
    pA = flint.acb_poly(list(A))
    dA = pA.derivative()
    if newton:
        pm = flint.acb_poly([acb(a.mid()) for a in A])
        dpm = pm.derivative()
        for _ in range(60):
            fc, dfc = pm(c), dpm(c)
            if not dfc.is_finite() or dfc == 0:
                break
            step = acb((fc / dfc).mid())
            if real:
                step = acb(step.real.mid())
            c = acb((c - step).mid())
            if step == 0 or abs(step.mid()) <= abs(c.mid()) * arb(2) ** (4 - prec):
                break
    return _boxes(c, pA(c), dA(c), dA, real=real)


def _boxes(c, fc, dfc, deriv, real=False):
    """Krawczyk's operator ``K = c − Y·f(c) + (1 − Y·f'(B))·(B − c)`` on boxes ``B`` about
    the centre ``c`` of radius :data:`_RADII` × the Newton correction (at least
    ``2^{8−prec}·max(|c|, 1)``); ``fc ∋ f(c)``, ``dfc ∋ f'(c)``, ``deriv(B) ∋ f'(B)``.
    Returns the first ``K ⊂ int B`` (with ``real``: boxes symmetric about the real axis,
    ``K`` real), or ``None``.  Source: [RUM10]_ §8."""
    if not (fc.is_finite() and dfc.is_finite()):
        return None
    dm = acb(dfc.mid())
    if dm == 0:
        return None
    Y = acb((1 / dm).mid())
    delta = Y * fc
    r0 = max(arb(delta.real.abs_upper()), arb(delta.imag.abs_upper()))
    scale = max(arb(abs(c.mid()).upper()), arb(1))
    floor = scale * arb(2) ** (8 - flint.ctx.prec)
    for factor in _RADII:
        r = max(factor * r0, floor)
        ra = arb(r.upper() if not r.is_exact() else r)
        B = acb(arb(c.real, ra), arb(0, ra) if real else arb(c.imag, ra))
        K = c - delta + (1 - Y * deriv(B)) * (B - c)
        if K.is_finite() and B.contains_interior(K):
            return acb(K.real, 0) if real else K
        if _no_contraction(K, delta, ra):
            return None
    return None


# ---------------------------------------------------------------------------------------
# what the user sees: the digits the radius proves
# ---------------------------------------------------------------------------------------
_LOG10_2 = 0.30102999566398120


def _exact_decimal(x):
    """The exact value of an exact ``arb`` as a plain decimal (``2``, ``-0.75``), or ``None``
    when that would be longer than 40 characters (or the ball is not finite)."""
    m = x.mid()
    if not m.is_finite():
        return None
    man, exp = (int(v) for v in m.man_exp())
    if exp >= 0:
        text = str(man << exp)
    else:                                        # man·2^exp = man·5^-exp / 10^-exp
        digits = str(abs(man) * 5 ** -exp).rjust(-exp + 1, "0")
        text = ("-" if man < 0 else "") + (digits[:exp] + "." + digits[exp:]).rstrip("0").rstrip(".")
    return text if len(text) <= 40 else None


def _show(x):
    """``str`` of the ``arb`` ``x`` with the digits its radius proves (``arb.str`` drops
    any it cannot vouch for); an exact ball as its exact decimal when that is short."""
    accuracy = x.rel_accuracy_bits()
    if accuracy >= 2 ** 60:                      # exact (Arb reports ~2^63)
        text = _exact_decimal(x)
        if text is not None:
            return text
        return x.str(40, radius=True)            # rounded: the radius says by how much
    return x.str(max(1, int(accuracy * _LOG10_2) + 2), radius=True)


class Ball(arb):
    r"""A python-flint ``arb`` that prints what is proven: ``str`` and ``repr`` show the
    midpoint to the digits its radius allows and the radius itself (``arb.str(n,
    radius=True)``), whatever ``flint.ctx.dps`` is.  A plain ``arb`` prints at python-flint's
    global precision (15 digits), so a 30-digit ball showed 15 digits with a radius of
    ``3e-16``.

    Everything else is ``arb``'s (``mid``, ``rad``, ``contains``, arithmetic, which returns
    plain ``arb``).  Returned by every ``ball=True`` method (:func:`shows_proven`).

    Raises nothing.  Source: python-flint / Arb [JOH17]_ (``arb_get_str``).

    >>> import flint
    >>> old = flint.ctx.prec; flint.ctx.prec = 120
    >>> third = flint.arb(1) / 3
    >>> flint.ctx.prec = old
    >>> print(third)                       # python-flint's global 15 digits
    [0.333333333333333 +/- 3.34e-16]
    >>> print(Ball(third))                 # what the 120-bit ball proves
    [0.333333333333333333333333333333333333 +/- 4.59e-37]
    >>> print(Ball(flint.arb(-3) / 4), Ball(flint.arb(0)))     # exact balls: their exact value
    -0.75 0
    """

    __slots__ = ()

    def __repr__(self):
        return _show(self)

    __str__ = __repr__


class ComplexBall(acb):
    r"""A python-flint ``acb`` that prints what is proven (as :class:`Ball`: real and
    imaginary parts to the digits the radii allow).

    Raises nothing.  Source: python-flint / Arb [JOH17]_.
    """

    __slots__ = ()

    def __repr__(self):
        re_, im = self.real, self.imag          # exact copies (no arithmetic: it would round)
        if im.is_exact() and im == 0:
            return _show(re_)
        text = _show(im)
        sign, text = ("-", text[1:]) if text.startswith("-") else \
            ("-", "[" + text[2:]) if text.startswith("[-") else ("+", text)
        return f"{_show(re_)} {sign} {text}j"

    __str__ = __repr__


def proven(value):
    r"""``value`` with every ``arb`` made a :class:`Ball` and every ``acb`` a
    :class:`ComplexBall` (the same balls, copied exactly), inside tuples and lists too;
    anything else unchanged.

    Raises nothing.  Source: this module.
    """
    if isinstance(value, Ball | ComplexBall):
        return value
    if isinstance(value, arb):
        return Ball(value)
    if isinstance(value, acb):
        return ComplexBall(value)
    if isinstance(value, tuple | list):
        return type(value)(proven(v) for v in value)
    return value


def shows_proven(method):
    r"""Decorator of the public ``ball=True`` methods (``cauchy``, ``density``,
    ``density_grid``, ``support``, ``atoms``, ``cdf``, ``quantile``): their balls come back
    as :class:`Ball`/:class:`ComplexBall`, which print the digits they prove.

    Raises what ``method`` raises.  Source: this module.
    """
    import functools

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        out = method(*args, **kwargs)
        return proven(out) if kwargs.get("ball") is True else out

    return wrapper


def check_ball(ball, who):
    """``ball`` if it is a bool, else :class:`~freeprob.errors.FreeprobValueError` (a truthy
    string such as ``'no'`` must not switch the enclosures on)."""
    if not isinstance(ball, bool):
        from freeprob.errors import FreeprobValueError
        raise FreeprobValueError(f"AlgebraicCauchy.{who}: `ball` must be True or False; got {ball!r}")
    return ball


def _ball_to_mpf(x):
    man, exp = x.mid().man_exp()
    return mpmath.mpf((int(man), int(exp)))


def certified_values(balls, dps):
    """mpf values of the real balls ``balls`` (``flint.arb``) correct to ``dps`` digits: each
    midpoint rounded once when its radius is within ``10^-(dps+3)`` of its size (or of the
    largest, for a ball around 0, which becomes 0); ``None`` if any ball is wider.  Raises
    nothing.  Source: docs/guide/cauchy.md (``ball=True``)."""
    tol = flint.arb(10) ** (-(dps + 3))
    scale = max([abs(b.mid()) for b in balls] + [flint.arb(1)])
    out = []
    with mpmath.workdps(dps):
        for b in balls:
            if b.rad() == 0 or (not b.contains(0) and b.rad() <= tol * abs(b.mid())):
                out.append(_ball_to_mpf(b))      # rounded once, to dps digits
            elif b.contains(0) and b.rad() <= tol * scale:
                out.append(mpmath.mpf(0))
            else:
                return None
    return out
