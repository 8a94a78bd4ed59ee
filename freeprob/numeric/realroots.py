r"""Certified real roots of polynomials with rational coefficients (the roots of the finite
free convolutions, :mod:`freeprob.core.finite_free`).

Method, for each square-free factor ``g`` of degree ``n`` (FLINT's square-free
factorization):

1. **Real-rootedness, proven.**  The Euclidean remainder sequence of ``g`` and ``g'/n``,
   made monic, reads ``r_{k−1} = (x − α_k) r_k − β_{k+1} r_{k+1}`` (a Sturm sequence up to
   the signs of the ``β``).  ``g`` has ``n`` distinct real roots if and only if every
   ``β_k > 0`` (Sturm's theorem, [BPR06]_ §2.2).  The recurrence runs in ball arithmetic
   (``arb``) at doubling precision until every sign is proven (exact rationals would grow
   to ``O(n²)`` bits per coefficient).
2. **Approximations.**  Then ``g`` is the characteristic polynomial of the symmetric
   tridiagonal (Jacobi) matrix with diagonal ``α`` and off-diagonal ``√β`` (the continued
   fraction of ``g'/g``, [GAU04]_ §1.3 and §3.1); its eigenvalues in double precision
   (LAPACK, ``scipy.linalg.eigvalsh_tridiagonal``) approximate the roots, a well-conditioned
   problem where the monomial coefficients are not.
3. **Isolation, proven.**  ``g`` is evaluated in ball arithmetic (python-flint ``arb_poly``,
   [JOH17]_) at ``n + 1`` points separating the approximations; ``n`` sign changes prove
   one root in each of the ``n`` intervals.
4. **Refinement.**  Newton steps in ``arb`` to the requested digits, then a sign change of
   ``g`` at ``x ± ε`` proves the ball ``[x ± ε]``.

If a step fails (roots closer than double precision can separate, values out of the
double range), Arb's own certified isolation of all complex roots
(``fmpq_poly.complex_roots``, much slower for large degrees) takes over.  A root 0 is an exact
ball; the root of a linear factor is one rounded division.

Knows nothing of laws.  References: [BPR06]_, [GAU04]_, [JOH17]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

import math

import flint
import mpmath
import numpy as np

from freeprob._progress import report
from freeprob.core.finite_free import rational_fmpq_poly
from freeprob.core.params import check_dps
from freeprob.errors import FreeprobValueError, PrecisionError
from freeprob.numeric.balls import Ball, _prec

__all__ = ["is_real_rooted", "real_roots"]

arb = flint.arb
_LOG2_10 = 3.321928094887362
#: the precision doubling of the sign tests gives up above this many bits (then the fallback)
_MAX_SIGN_BITS = 1 << 17


# -- the Jacobi (Sturm) sequence, in ball arithmetic ------------------------------------------------
def _jacobi_balls(g, prec, who):
    """``(α, β)`` (arb lists) of the monic square-free ``g`` at ``prec`` bits, or None if a
    ``β`` ball contains 0 (more precision needed, or a defective sequence)."""
    n = g.degree()
    with _prec(prec):
        prev = [arb(c) for c in g.coeffs()]                      # ascending, monic
        cur = [arb(c) / n for c in g.derivative().coeffs()]      # g'/n, monic
        cur[-1] = arb(1)
        alphas, betas = [], []
        for step in range(n):
            m = len(cur) - 1
            a = (cur[m - 1] if m >= 1 else arb(0)) - prev[m]
            alphas.append(a)
            if m == 0:
                break
            # rem = (x − a) cur − prev; its x^{m+1} and x^m coefficients vanish exactly
            rem = [(cur[i - 1] if i else arb(0)) - a * cur[i] - prev[i] for i in range(m)]
            b = rem[m - 1]
            if 0 in b:
                return None
            betas.append(b)
            prev, cur = cur, [c / b for c in rem]
            cur[-1] = arb(1)
            if step % 16 == 0:
                report(step, n, f"{who}: Sturm sequence of a factor of degree {n}")
    return alphas, betas


def jacobi_sequence(g, *, who="real_roots"):
    r"""``(α, β, ok)`` of the monic square-free ``fmpq_poly`` ``g`` of degree ``n``:
    ``r_{−1} = g``, ``r_0 = g'/n``, ``r_{k−1} = (x − α_k) r_k − β_{k+1} r_{k+1}`` with monic
    ``r_k`` (the Euclidean remainder sequence made monic: a Sturm sequence up to the signs of
    the ``β``).  ``ok`` is True if and only if all ``n − 1`` values ``β_k`` are positive,
    i.e. ``g`` has ``n`` distinct real roots (Sturm's theorem, [BPR06]_ §2.2); then ``g`` is
    the characteristic polynomial of the Jacobi matrix ``tridiag(√β, α, √β)`` ([GAU04]_ §1.3).

    The recurrence runs in ball arithmetic (python-flint ``arb``, [JOH17]_) at doubling
    precision until the sign of every ``β`` is proven (an exact rational recurrence has
    coefficients of ``O(n²)`` bits: 26 s at ``n = 100``); ``α, β`` are arb balls.  Returns
    ``ok = None`` if no precision up to 2^17 bits decides (a defective sequence: the caller
    falls back).  Reports its progress (:func:`freeprob._progress.report`).  Raises nothing.
    """
    n = g.degree()
    height = max((max(abs(c.p).bit_length(), c.q.bit_length()) for c in map(flint.fmpq, g.coeffs())),
                 default=1)
    prec = 64 + 2 * height + 2 * n
    while prec <= _MAX_SIGN_BITS:
        got = _jacobi_balls(g, prec, who)
        if got is not None:
            alphas, betas = got
            return alphas, betas, all(b > 0 for b in betas)
        prec *= 2
    return [], [], None


def _sturm_real_count(g, betas):
    """The number of distinct real roots of the square-free monic ``g`` from the signs of its
    (complete, non-defective) ``β`` sequence: the Sturm sequence ``s_{−1} = g``,
    ``s_0 = g'``, ``s_{k+1} = −rem(s_{k−1}, s_k)`` is ``s_k = c_k r_k`` with
    ``c_{−1} = 1``, ``c_0 = n``, ``c_{k+1} = β_{k+1} c_{k−1}`` and ``deg r_k = n − 1 − k``
    ([BPR06]_ §2.2).
    Without ``betas`` (a defective sequence) the exact rational Sturm sequence is used."""
    n = g.degree()
    if betas is None:
        seq = [g, g.derivative()]
        while seq[-1].degree() > 0:
            seq.append(-(seq[-2] % seq[-1]))
            if seq[-1].is_zero():
                seq.pop()
                break
        lead = [1 if f[f.degree()] > 0 else -1 for f in seq]
        degs = [f.degree() for f in seq]
    else:
        lead = [1, 1]
        for b in betas:
            lead.append(lead[-2] if b > 0 else -lead[-2])
        degs = [n - k for k in range(len(lead))]

    def changes(signs):
        return sum(1 for a, b in zip(signs, signs[1:]) if a != b)

    at_minus = [s if deg % 2 == 0 else -s for s, deg in zip(lead, degs)]
    return changes(at_minus) - changes(lead)


# -- numeric: approximations, isolation, refinement ----------------------------------------------------
def _approximations(alphas, betas):
    """Eigenvalues of the Jacobi matrix in double precision, or None (out of range)."""
    from scipy.linalg import eigvalsh_tridiagonal
    try:
        diag = np.array([float(a) for a in alphas])
        off = np.sqrt(np.array([float(b) for b in betas]))
    except OverflowError:
        return None
    if not (np.all(np.isfinite(diag)) and np.all(np.isfinite(off))):
        return None
    if len(diag) == 1:
        return diag
    ev = eigvalsh_tridiagonal(diag, off)
    return np.sort(ev) if np.all(np.isfinite(ev)) else None


def _separators(ev):
    """``n + 1`` floats strictly separating the sorted approximations, or None."""
    n = len(ev)
    if n > 1 and not np.all(np.diff(ev) > 0):
        return None
    ys = [0.0] * (n + 1)
    for i in range(1, n):
        ys[i] = ev[i - 1] + (ev[i] - ev[i - 1]) / 2
    left = ev[1] - ev[0] if n > 1 else max(abs(ev[0]), 1.0)
    right = ev[-1] - ev[-2] if n > 1 else max(abs(ev[-1]), 1.0)
    ys[0], ys[n] = ev[0] - left, ev[-1] + right
    if not all(math.isfinite(y) for y in ys) or any(b <= a for a, b in zip(ys, ys[1:])):
        return None
    return ys


def _signs(g, points, prec):
    """Signs (+1, −1, or 0 if undecided) of ``g`` at the exact arb ``points`` at ``prec`` bits."""
    with _prec(prec):
        vals = flint.arb_poly([arb(c) for c in g.coeffs()]).evaluate(points, algorithm="iter")
    return [1 if v > 0 else -1 if v < 0 else 0 for v in vals]


def _decided_signs(g, points, start):
    """``(signs, prec)`` with every sign decided, doubling the precision from ``start``, or
    ``(None, prec)`` above :data:`_MAX_SIGN_BITS`."""
    prec = start
    while prec <= _MAX_SIGN_BITS:
        s = _signs(g, points, prec)
        if 0 not in s:
            return s, prec
        prec *= 2
    return None, prec


def _isolate_and_refine(g, alphas, betas, bits):
    """Balls (arb) of the ``n`` real roots of the real-rooted square-free monic ``g``, each of
    relative radius ``≤ 2^−bits``, or None (the caller falls back)."""
    n = g.degree()
    ev = _approximations(alphas, betas)
    ys = None if ev is None else _separators(ev)
    if ys is None:
        return None
    signs, prec = _decided_signs(g, [arb(y) for y in ys], 64)
    if signs is None or any(a == b for a, b in zip(signs, signs[1:])):
        return None
    lo, hi = [arb(y) for y in ys[:-1]], [arb(y) for y in ys[1:]]
    xs = [arb(float(v)) for v in ev]
    work = prec + bits + 32
    dg = g.derivative()
    for _ in range(int(math.log2(max(bits, 53) / 40)) + 6):      # Newton: digits double per step
        with _prec(work):
            G = flint.arb_poly([arb(c) for c in g.coeffs()])
            D = flint.arb_poly([arb(c) for c in dg.coeffs()])
            vals, ders = G.evaluate(xs, algorithm="iter"), D.evaluate(xs, algorithm="iter")
            new = []
            for x, v, dv, a, b in zip(xs, vals, ders, lo, hi):
                step = (v / dv).mid() if dv != 0 else arb(0)
                y = arb((x - step).mid())
                new.append(y if a < y < b else x)
            done = all(abs((y - x).mid()) <= abs(y.mid()) * arb(2) ** (-bits - 8) for x, y in zip(xs, new))
        xs = new
        if done:
            break
    with _prec(work):
        radii = [abs(x.mid()) * arb(2) ** (-bits) for x in xs]
        left = [arb((x - r).mid()) for x, r in zip(xs, radii)]
        right = [arb((x + r).mid()) for x, r in zip(xs, radii)]
    if any(not (a < l and r < b) for a, l, r, b in zip(lo, left, right, hi)):
        return None
    s_left, _ = _decided_signs(g, left, work)
    s_right, _ = _decided_signs(g, right, work)
    if s_left is None or s_right is None or any(a == b for a, b in zip(s_left, s_right)):
        return None
    out = []
    with _prec(work):
        for l, r in zip(left, right):
            out.append(arb((l + r) / 2, (r - l).abs_upper() / 2 + ((l + r) / 2).rad()))
    return out


def _fallback(g, bits):
    """``(balls, 0)``: the real roots of the square-free ``g`` by Arb's certified isolation of
    all complex roots (``fmpq_poly.complex_roots``) at increasing precision, or
    ``(None, k)`` when ``k > 0`` roots are proven non-real; else :class:`PrecisionError`."""
    prec = max(64, bits + 32)
    while prec <= _MAX_SIGN_BITS:
        with _prec(prec):
            roots = g.complex_roots()
        nonreal = sum(1 for r, _ in roots if 0 not in r.imag)
        if nonreal:
            return None, nonreal
        re = [r.real for r, _ in roots]
        if all(r.imag.is_exact() and r.imag == 0 for r, _ in roots) and all(
                x.rad() <= abs(x.mid()) * arb(2) ** (-bits) or x.is_exact() for x in re):
            return sorted(re, key=lambda b: b.mid()), 0
        prec *= 2
    raise PrecisionError(f"real_roots: the roots of a factor of degree {g.degree()} could not be "
                         f"certified to {bits} bits")


def _factor_roots(g, bits, who):
    """``(balls, 0)``: balls of the real roots of the monic square-free ``g`` (one per
    root), or ``(None, k)`` if ``k > 0`` of its roots are not real."""
    out = []
    if g[0] == 0:                                # the root 0, exactly
        out.append(arb(0))
        g = g.right_shift(1)
    n = g.degree()
    if n == 0:
        return out, 0
    if n == 1:
        with _prec(bits + 64):
            out.append(arb(-g[0]))
        return out, 0
    alphas, betas, ok = jacobi_sequence(g, who=who)
    if ok is False:
        return None, n - _sturm_real_count(g, betas)
    balls = None if ok is None else _isolate_and_refine(g, alphas, betas, bits)
    if balls is None:
        balls, nonreal = _fallback(g, bits)
        if nonreal:
            return None, nonreal
    return out + balls, 0


def _squarefree_monic(f):
    _, factors = f.factor_squarefree()
    return [(g / g[g.degree()], m) for g, m in factors if g.degree() >= 1]


def is_real_rooted(p) -> bool:
    r"""Whether the polynomial ``p`` with rational coefficients has only real roots, decided
    exactly (square-free factorization and Sturm's theorem on each factor, [BPR06]_ §2.2).

    Parameters
    ----------
    p : sympy.Poly, expression in ``x`` or coefficient list (highest degree first)
        Degree ≥ 1, rational coefficients, any leading coefficient
        (:func:`freeprob.core.finite_free.rational_fmpq_poly`).

    Returns
    -------
    bool

    Raises
    ------
    FreeprobValueError
        Not a polynomial, degree 0, coefficients that are not rational numbers.

    Examples
    --------
    >>> from freeprob.numeric.realroots import is_real_rooted
    >>> is_real_rooted([1, 0, -2]), is_real_rooted([1, 0, 2])
    (True, False)
    """
    f = rational_fmpq_poly(p, "is_real_rooted", "p")
    for g, _ in _squarefree_monic(f):
        if g.degree() > 1:
            ok = jacobi_sequence(g, who="is_real_rooted")[2]
            if ok is None:
                ok = _sturm_real_count(g, None) == g.degree()
            if not ok:
                return False
    return True


def real_roots(p, *, dps=15, ball=False) -> tuple:
    r"""All roots of a real-rooted polynomial with rational coefficients, certified: sorted,
    repeated by multiplicity.

    Real-rootedness is proven exactly (Sturm's theorem on each square-free factor); the roots
    are isolated and refined in ball arithmetic (module docstring: eigenvalues of the Jacobi
    matrix, sign changes, Newton steps; [BPR06]_, [GAU04]_, [JOH17]_).

    Parameters
    ----------
    p : sympy.Poly, expression in ``x`` or coefficient list (highest degree first)
        Degree ≥ 1, rational coefficients (any leading coefficient).
    dps : int, default 15
        Correct significant digits of every root (1 to ``freeprob.laws.law.MAX_DPS``).
    ball : bool, default False
        Return :class:`~freeprob.numeric.balls.Ball` s (python-flint ``arb``) proven to contain
        the roots, of relative radius at most ``10^−(dps+3)`` (a root 0 is an exact ball);
        else ``mpmath.mpf`` values rounded to
        ``dps`` digits from those balls.

    Returns
    -------
    tuple
        ``d`` values, ascending.

    Raises
    ------
    FreeprobValueError
        ``p`` is not real-rooted (the message gives the number of non-real roots); not a
        polynomial with rational coefficients; bad ``dps``.
    PrecisionError
        A root could not be certified (not observed: the fallback is Arb's own isolation).

    Examples
    --------
    >>> from freeprob.numeric.realroots import real_roots
    >>> import mpmath
    >>> [mpmath.nstr(r, 20) for r in real_roots([1, 0, -2], dps=20)]
    ['-1.4142135623730950488', '1.4142135623730950488']
    >>> one, two = real_roots([1, -3, 2], ball=True)
    >>> one.contains(1) and two.contains(2), float(two.rad()) <= 2e-18
    (True, True)
    """
    who = "real_roots"
    dps = check_dps(15 if dps is None else dps, who)
    f = rational_fmpq_poly(p, who, "p")
    d = f.degree()
    bits = math.ceil((dps + 3) * _LOG2_10) + 1
    balls, bad = [], 0
    for g, mult in _squarefree_monic(f):
        got, nonreal = _factor_roots(g, bits, who)
        if got is None:
            bad += nonreal * mult
            continue
        balls += [b for b in got for _ in range(mult)]
    if bad:
        raise FreeprobValueError(
            f"{who}: p is not real-rooted: {bad} of its {d} roots (with multiplicity) are not real "
            "(Sturm's theorem, exact); the finite free convolutions of real-rooted polynomials are "
            "real-rooted, so an input is not")
    balls.sort(key=lambda b: b.mid())
    if ball:
        return tuple(Ball(b) for b in balls)
    with mpmath.workdps(dps):
        return tuple(+_mpf(b) for b in balls)


def _mpf(b):
    m = b.mid()
    if m == 0:
        return mpmath.mpf(0)
    man, exp = m.man_exp()
    return mpmath.mpf((int(man), int(exp)))
