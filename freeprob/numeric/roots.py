"""Numeric roots of univariate polynomials for :mod:`freeprob.numeric`: all complex roots
(:func:`polyroots`, python-flint's certified isolation with mpmath's Durand–Kerner as the
fallback), the real ones (:func:`_num_real_roots`, :func:`_num_real_polyroots`).
Source: [JOH17]_ (Arb); mpmath's ``polyroots``.
"""
from __future__ import annotations

import flint
import mpmath
import sympy as sp
from mpmath import libmp

from freeprob.numeric.rootkernel import _coeff_mpfs


def _num_real_roots(poly, prec, squarefree=False):
    """Distinct real roots (mpf) of a univariate Poly with real coefficients, numerically,
    realness certified by separation (``squarefree``: ``poly`` is known square-free, as
    returned by :func:`_flint_sqf_part` or ``Poly.sqf_part``)."""
    if not squarefree:
        try:
            poly = poly.sqf_part()
        except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
            pass
    if poly.degree() < 1:
        return []
    with mpmath.workprec(prec + 20):
        # converted inside workprec: mpmath.mpf(tuple) rounds to the working precision (it
        # used to be the ambient 53 bits, so irrational coefficients lost all but ~16 digits
        # and the edges of e.g. free_add of atoms at √2, √3 were wrong from the 10th digit)
        coeffs = [mpmath.mpf(c) for c in _coeff_mpfs(poly, prec + 20)]
        while coeffs and not coeffs[0]:
            coeffs.pop(0)
        if len(coeffs) < 2:
            return []
        roots = polyroots(coeffs, prec)
        out = []
        for r in roots:
            others = [abs(r - s) for s in roots if s is not r]
            sep = min(others) if others else mpmath.inf
            r = mpmath.mpc(r)
            if abs(r.imag) <= sep / 4:
                out.append(+r.real)
        return sorted(out)


def polyroots(cs, prec, maxsteps=400):
    """All complex roots of a numeric polynomial (descending mpf/mpc coefficients, leading
    one non-zero) to about ``prec`` bits: the one root finder of the numeric layer.

    The roots of the polynomial with exactly these coefficients are isolated by
    python-flint (``acb_poly.roots``: certified disks, refined until each midpoint is
    within ``2^-prec`` of its root, relative), tens of times faster than mpmath; when that
    does not converge (a cluster of roots that rounding split, a non-square-free input)
    mpmath's Durand–Kerner (:func:`mpmath.polyroots`, ``maxsteps`` steps) is used.

    Raises
    ------
    mpmath.libmp.NoConvergence
        when mpmath does not isolate the roots in ``maxsteps`` steps (badly scaled
        coefficients).

    Source: [JOH17]_ (Arb's root isolation); mpmath's ``polyroots``.
    """
    flint_roots = _flint_polyroots(cs, prec)
    if flint_roots is not None:
        return flint_roots
    return [mpmath.mpc(r) for r in mpmath.polyroots(cs, maxsteps=maxsteps,
                                                   extraprec=2 * prec + 60)]


def _arb_of(v):
    """An mpf (or number) as an exact ``arb`` midpoint."""
    sign, man, exp, _ = mpmath.mpf(v)._mpf_ if not isinstance(v, tuple) else v
    return flint.arb((-int(man) if sign else int(man), int(exp))) if man else flint.arb(0)


def _flint_polyroots(cs, prec):
    """:func:`polyroots` by python-flint, or ``None`` when it does not converge.  As
    mpmath's: parts below the working precision's ``eps`` are cleaned up (a real root is
    returned real), sorted by ``(|Im|, Re)``."""
    tol = +mpmath.eps
    zeros = 0
    while len(cs) > 1 and not cs[-1]:       # exact roots at 0
        cs, zeros = cs[:-1], zeros + 1
    try:
        acbs = []
        for c in reversed(cs):
            c = mpmath.mpmathify(c)
            if isinstance(c, mpmath.mpc):
                acbs.append(flint.acb(_arb_of(c.real), _arb_of(c.imag)))
            else:
                acbs.append(flint.acb(_arb_of(c)))
        old = flint.ctx.prec
        try:
            flint.ctx.prec = prec + 30
            want = min(flint.arb(2) ** -(prec + 8), _arb_of(tol) / 16)
            roots = (flint.acb_poly(acbs).roots(tol=want, maxprec=8 * prec + 256)
                     if len(acbs) > 1 else [])
        finally:
            flint.ctx.prec = old
    except (ValueError, ZeroDivisionError):
        return None
    out = [mpmath.mpc(0)] * zeros
    for r in roots:
        if not (r.mid() == 0 or r.rad() <= abs(r.mid()) * flint.arb(2) ** -prec):
            return None         # not relatively accurate (a root near 0): mpmath
        re, im = r.real.mid().man_exp(), r.imag.mid().man_exp()
        v = mpmath.mp.make_mpc((libmp.from_man_exp(int(re[0]), int(re[1])),
                                libmp.from_man_exp(int(im[0]), int(im[1]))))
        if abs(v) < tol:
            v = mpmath.mpc(0)
        elif abs(v.imag) < tol:
            v = mpmath.mpc(v.real)
        elif abs(v.real) < tol:
            v = mpmath.mpc(0, v.imag)
        out.append(v)
    return sorted(out, key=lambda x: (abs(x.imag), x.real))


def _num_real_polyroots(cs, prec, clusters=False):
    """Real roots of a numeric polynomial (descending coefficients), by separation.

    ``clusters=True`` also returns, once, the real part of a conjugate pair closer than
    ``2^{−prec/3}`` (relative) to the axis and to each other: a real double root of the
    exact polynomial that rounding of the coefficients split (each cluster counted once)."""
    while cs and not cs[0]:
        cs = cs[1:]
    # an exact root at 0 (trailing zero coefficients, e.g. H⁴·q(H)) is returned once and
    # divided out: left in, rounding splits it into a cluster of tiny nonzero "roots"
    # around 0 that look like candidates 10⁻³⁰ apart
    out = []
    while len(cs) > 1 and not cs[-1]:
        cs = cs[:-1]
        out = [mpmath.mpf(0)]
    if len(cs) < 2:
        return out
    roots = polyroots(cs, prec)
    tol = mpmath.mpf(2) ** (-prec // 3)
    for r in roots:
        others = [abs(r - s) for s in roots if s is not r]
        sep = min(others) if others else mpmath.inf
        if abs(r.imag) <= sep / 4:
            out.append(r.real)
        elif clusters and abs(r.imag) <= tol * max(1, abs(r)) and r.imag > 0:
            out.append(r.real)
    if clusters:
        merged = []
        for x in sorted(out):
            if merged and abs(x - merged[-1]) <= tol * max(1, abs(x)):
                continue
            merged.append(x)
        out = merged
    return out
