r"""Numeric values of the ``1/n`` term ``G₁(z)`` of a finite-n law (mpmath).

``G₁`` is evaluated at ``z`` in the closed upper half-plane from the value ``G = G(z)`` of
the limit law (certified by :mod:`freeprob.numeric`), recursively through the operations
(docs/theory.md §"The 1/n term"):

* families: ``M⁺(z) = G'/G − G''/(2G')`` (``= −F''/(2F')``, ``F = 1/G``), with ``G'`` and
  ``G''`` from the Cauchy equation ``P(G, z) = 0`` by implicit differentiation;
* ``⊞``: ``M⁺(z) + G'(z) Σ_i ρ_i(ω_i)/G_i'(ω_i)``, ``ρ_i = G₁^{(i)} − M⁺_i``, with the
  subordination points ``G_i(ω_i) = G``, ``Σ_i ω_i = z + (k − 1)/G`` ([MS17]_ §3.4);
* ``⊠``: ``M^×(z) + (zG)'(z) Σ_X ρ^×_X(ω_X)/(ωG_X)'(ω_X)``, ``ρ^× = G₁ − M^×``,
  ``M^×(z) = ½ d/dz log[G(zG − 1)/(zG)']``, ``ω_X G_X(ω_X) = zG``, ``ω_A ω_B = z²G/(zG − 1)``;
* shift, dilation, the rectangular companion and block mixtures map ``G₁`` like a measure;
* compound free Poisson with a random population: ``−G'(z) G₁^ν(1/G)/G²`` is added.

A subordination point is a root of the operand's Cauchy equation ``P_i(G, ω) = 0`` in
``ω``; the root is chosen by the constraint that ties the points together and ``Im ω ≥
Im z``, and confirmed by the operand's certified Cauchy transform when several roots
qualify.  Accuracy: the values are computed at ``dps + 10`` digits from certified inputs
and are not themselves certified (the expansion is asymptotic in ``n`` anyway).

Boundary values ``G(x + i0)`` inside the support are the root of ``P(·, x)`` whose
imaginary part is ``−π`` times the certified density there.

References: [MS17]_ §3.4 (subordination), [BS12]_; the rules are derived in
docs/theory.md.
"""
from __future__ import annotations

from functools import singledispatch

import mpmath
import numpy as np
import sympy as sp

from freeprob.core.symbols import G as _Gs
from freeprob.core.symbols import z as _zs
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.laws.families import Atomic, CompoundFreePoisson, FreePoisson, Semicircle
from freeprob.laws.finite_n_rules import COVERED, is_canonical
from freeprob.laws.operations import (
    Dilate,
    FreeAdd,
    FreeMul,
    FreePower,
    Mixture,
    Pushforward,
    RectangularCompanion,
    Shift,
)

__all__ = ["g1_value", "boundary_G", "limit_G", "derivatives"]


# -- the Cauchy equation as numbers ---------------------------------------------------
def _terms(law):
    """``[(i, j, c)]`` with ``P = Σ c G^i z^j`` (c an mpf at the current precision)."""
    key = ("finite_n_terms", mpmath.mp.prec)
    hit = law._cache.get(key)
    if hit is None:
        P = law.cauchy_equation().as_poly(_Gs, _zs)
        hit = [(i, j, mpmath.mpf(sp.N(c, mpmath.mp.dps + 5))) for (i, j), c in P.terms()]
        law._cache[key] = hit
    return hit


def _parts(law, G, z):
    """``(P, P_G, P_z, P_GG, P_Gz, P_zz)`` at ``(G, z)`` (the sparse terms of ``P``)."""
    terms = _terms(law)
    dg = max(i for i, _, _ in terms)
    dz = max(j for _, j, _ in terms)
    gp, zp = [mpmath.mpc(1)], [mpmath.mpc(1)]
    for _ in range(dg):
        gp.append(gp[-1] * G)
    for _ in range(dz):
        zp.append(zp[-1] * z)
    p = pg = pz = pgg = pgz = pzz = mpmath.mpc(0)
    for i, j, c in terms:
        p += c * gp[i] * zp[j]
        if i:
            ci = c * i
            pg += ci * gp[i - 1] * zp[j]
            if i > 1:
                pgg += ci * (i - 1) * gp[i - 2] * zp[j]
            if j:
                pgz += ci * j * gp[i - 1] * zp[j - 1]
        if j:
            cj = c * j
            pz += cj * gp[i] * zp[j - 1]
            if j > 1:
                pzz += cj * (j - 1) * gp[i] * zp[j - 2]
    return [p, pg, pz, pgg, pgz, pzz]


def derivatives(law, z, G):
    """``(G'(z), G''(z))`` from ``P(G, z) = 0`` (implicit differentiation)."""
    _, pg, pz, pgg, pgz, pzz = _parts(law, G, z)
    if pg == 0:
        raise PrecisionError(f"finite_n: z = {z} is a branch point of {type(law).__name__}'s Cauchy equation")
    d1 = -pz / pg
    d2 = -(pzz + 2 * pgz * d1 + pgg * d1 * d1) / pg
    return d1, d2


def _m_plus(law, z, G):
    d1, d2 = derivatives(law, z, G)
    return d1 / G - d2 / (2 * d1)


def _m_times(law, z, G):
    d1, d2 = derivatives(law, z, G)
    zg1 = G + z * d1
    zg2 = 2 * d1 + z * d2
    return (d1 / G + zg1 / (z * G - 1) - zg2 / zg1) / 2


# -- limit values -------------------------------------------------------------------
def _coefficients_at(law, x):
    """The coefficients of ``P(·, x)`` (highest power of ``G`` first) at the working precision."""
    coeffs = {}
    for i, j, c in _terms(law):
        coeffs[i] = coeffs.get(i, 0) + c * x ** j
    return [coeffs.get(i, 0) for i in range(max(coeffs), -1, -1)]


def _boundary_near_atom(law, x, d, scale):
    r"""``G(x + i0)`` where the roots of ``P(·, x)`` are huge (``x`` next to an atom ``a``:
    ``G ≈ w/(x − a)``).  There the roots come in clusters around ``w/(x − a)`` (``m`` roots
    within ``O(|x − a|^{1/2})`` of it at a hard edge), so a coefficient error ``δ`` moves them by
    ``δ^{1/m}``: float64 roots, or roots from coefficients at 20 digits, cannot tell the
    boundary value (imaginary part ``−πρ(x)``, small against ``w/(x − a)``) from its
    neighbours.  The roots are found from coefficients at ``4·log10(scale) + 20`` extra
    digits (``scale`` = the largest root), and the one whose imaginary part is nearest
    ``−πρ(x)`` is taken (not polished at the lower precision, which would move it back into
    the cluster's error)."""
    extra = 4 * int(np.log10(scale)) + 20
    target = -mpmath.pi * d
    with mpmath.workdps(mpmath.mp.dps + extra):
        cs = _coefficients_at(law, mpmath.mpf(x))
        roots = mpmath.polyroots(cs, maxsteps=4000, extraprec=4 * extra)
        g = min(roots, key=lambda r: abs(mpmath.im(r) - target))
    return mpmath.mpc(mpmath.re(g), target)


def boundary_G(law, x, density=None):
    r"""``G(x + i0)`` at a real ``x`` (mpc): the root of ``P(·, x)`` with imaginary part
    ``−π ρ(x)`` (``ρ`` the certified density, passed as ``density`` if known); outside the
    support the real value of :meth:`Law.cauchy`."""
    x = mpmath.mpf(x)
    d = law.density(x) if density is None else mpmath.mpf(density)
    if d == 0:
        return mpmath.mpc(law.cauchy(x))
    cs = _coefficients_at(law, x)
    roots = np.roots([complex(c) for c in cs])
    target = -float(mpmath.pi * d)
    scale = max(1.0, float(np.max(np.abs(roots))))
    if scale > 1e6:
        return _boundary_near_atom(law, x, d, scale)
    cand = sorted(roots, key=lambda r: abs(r.imag - target))
    if len(cand) > 1 and abs(cand[1].imag - target) < 1e-6 * scale and abs(cand[1] - cand[0]) > 1e-6 * scale:
        # two roots with the same imaginary part: decide by the value just above the axis
        near = complex(law.cauchy(mpmath.mpc(x, 1e-9 * scale)))
        cand = sorted(cand[:2], key=lambda r: abs(r - near))
    g = mpmath.mpc(cand[0])
    for _ in range(40):                       # polish in mpmath
        p, pg = _parts(law, g, x)[:2]
        if pg == 0:
            break
        step = p / pg
        g -= step
        if abs(step) <= mpmath.eps * 16 * abs(g):
            break
    return mpmath.mpc(g.real, -mpmath.pi * d)


def limit_G(law, z):
    """``G(z)`` of ``law`` at ``z`` in the closed upper half-plane (mpc)."""
    z = mpmath.mpc(z)
    if z.imag > 0:
        # exact identities first: a mixture, an atomic law, a shift or a positive dilation
        # never goes through the certified (atom-deflated) evaluation of its whole equation,
        # which costs ~1 s per point for a law with atoms (a block mixture with a zero block)
        if isinstance(law, Atomic):
            return mpmath.fsum(mpmath.mpf(sp.N(w, mpmath.mp.dps)) / (z - mpmath.mpf(sp.N(p, mpmath.mp.dps)))
                               for p, w in zip(law.points, law.weights))
        if isinstance(law, Mixture):
            return mpmath.fsum(mpmath.mpf(sp.N(w, mpmath.mp.dps)) * limit_G(sub, z) for sub, _, w in _distinct(law))
        if isinstance(law, Shift):
            return limit_G(law.law, z - mpmath.mpf(sp.N(law.a, mpmath.mp.dps)))
        if isinstance(law, Dilate) and sp.sympify(law.c).is_positive:
            c = mpmath.mpf(sp.N(law.c, mpmath.mp.dps))
            return limit_G(law.law, z / c) / c
        return mpmath.mpc(law.cauchy(z))
    if z.imag < 0:
        raise FreeprobValueError(f"finite_n: z = {z} is below the real axis; G₁ is evaluated for Im z ≥ 0")
    return boundary_G(law, z.real)


# -- subordination points -------------------------------------------------------------
def _roots_in_omega(law, coeff_of):
    """Roots ω of ``Σ c_ij coeff_of(i, j) ω^j``-type polynomials: ``coeff_of(i, j, c)``
    returns ``(power of ω, coefficient)``; polished in mpmath."""
    poly = {}
    for i, j, c in _terms(law):
        pw, val = coeff_of(i, j, c)
        poly[pw] = poly.get(pw, 0) + val
    deg = max(k for k, v in poly.items() if v != 0)
    low = min(k for k, v in poly.items() if v != 0)
    cs = [complex(poly.get(k, 0)) for k in range(deg, low - 1, -1)]
    if len(cs) < 2:
        return []
    out = []
    for r in np.roots(cs):
        w = mpmath.mpc(r)
        for _ in range(60):
            f = df = mpmath.mpc(0)
            for k, v in poly.items():
                f += v * w ** k
                if k:
                    df += k * v * w ** (k - 1)
            if df == 0:
                break
            step = f / df
            w -= step
            if abs(step) <= mpmath.eps * 64 * (1 + abs(w)):
                break
        out.append(w)
    return out


def _check_branch(law, omega, value):
    """``law.cauchy(ω) ≈ value`` (certified; ``G(ω̄) = conj G(ω)`` below the axis)."""
    try:
        if omega.imag < 0:
            got = mpmath.conj(mpmath.mpc(law.cauchy(mpmath.conj(omega))))
        else:
            got = mpmath.mpc(law.cauchy(omega))
    except (FreeprobValueError, PrecisionError, NotAvailable):
        return False
    return abs(got - value) <= mpmath.mpf(10) ** (-8) * (1 + abs(value))


def _choose(cands, residual, z, checks, upper=True):
    """The candidate tuple with the smallest constraint residual (and, for ``⊞``
    (``upper``), ``Im ω ≥ Im z``), confirmed by ``checks`` (a function of a tuple) when
    several qualify."""
    tol = mpmath.mpf(10) ** (-6) * (1 + abs(z))
    good = [(residual(c), c) for c in cands if not upper or all(w.imag >= z.imag - tol for w in c)]
    good.sort(key=lambda rc: rc[0])
    good = [rc for rc in good if rc[0] <= mpmath.mpf(10) ** (-8) * (1 + abs(z))]
    if len(good) == 1:
        return good[0][1]
    for _, c in good:
        if checks(c):
            return c
    raise PrecisionError(f"finite_n: no subordination point found at z = {mpmath.nstr(z, 8)}")


def _add_points(laws, z, G):
    k = len(laws)
    target = z + (k - 1) / G
    lists = [_roots_in_omega(sub, lambda i, j, c: (j, c * G ** i)) for sub in laws]
    cands = []

    def rec(i, acc):
        if i == k - 1:
            cands.append(tuple(acc) + (target - sum(acc),))
            return
        for w in lists[i]:
            rec(i + 1, acc + [w])
    rec(0, [])

    def residual(c):
        w = c[-1]
        p = sum(cc * G ** i * w ** j for i, j, cc in _terms(laws[-1]))
        scale = sum(abs(cc) * abs(G) ** i * abs(w) ** j for i, j, cc in _terms(laws[-1]))
        return abs(p) / (scale or 1)

    def checks(c):
        return all(_check_branch(sub, w, G) for sub, w in zip(laws, c))
    return _choose(cands, residual, z, checks)


def _mul_points(a, b, z, G):
    zg = z * G
    target = z * zg / (zg - 1)

    def coeff(i, j, c):          # P(zG/ω, ω) ω^d: G^i → (zG)^i ω^{-i}
        return (j - i, c * zg ** i)
    cands = [(w, target / w) for w in _roots_in_omega(a, coeff) if w != 0]

    def residual(c):
        w = c[1]
        p = sum(cc * (zg / w) ** i * w ** j for i, j, cc in _terms(b))
        scale = sum(abs(cc) * abs(zg / w) ** i * abs(w) ** j for i, j, cc in _terms(b))
        return abs(p) / (scale or 1)

    def checks(c):
        return all(_check_branch(sub, w, zg / w) for sub, w in zip((a, b), c))
    return _choose(cands, residual, z, checks, upper=False)


# -- G₁ ------------------------------------------------------------------------------
@singledispatch
def g1_value(law, z, G):
    r"""``G₁(z)`` of the real finite-n model of ``law`` at ``z`` (``Im z ≥ 0``), given the
    limit value ``G = G(z)`` (mpc).

    Raises
    ------
    NotAvailable
        No numeric rule for this law (e.g. ⊠ with a zero-mean factor;
        the exact moments are still available).
    """
    raise NotAvailable(f"finite_n: no numeric G₁ for {type(law).__name__}; covered: {COVERED}")


@g1_value.register
def _(law: Semicircle, z, G):
    return _m_plus(law, z, G)


@g1_value.register
def _(law: FreePoisson, z, G):
    return _m_plus(law, z, G)


@g1_value.register
def _(law: Atomic, z, G):
    return mpmath.mpc(0)


@g1_value.register
def _(law: CompoundFreePoisson, z, G):
    out = _m_plus(law, z, G)
    if isinstance(law.jump_law, Atomic):
        return out
    d1, _ = derivatives(law, z, G)
    w = 1 / G
    gnu = limit_G(law.jump_law, w)
    return out - d1 * g1_value(law.jump_law, w, gnu) * w * w


@g1_value.register
def _(law: Shift, z, G):
    return g1_value(law.law, z - mpmath.mpf(sp.N(law.a, mpmath.mp.dps)), G)


@g1_value.register
def _(law: Dilate, z, G):
    c = mpmath.mpf(sp.N(law.c, mpmath.mp.dps))
    zz = z / c
    if c < 0:       # the child is evaluated in the upper half-plane: G_X(w̄) = conj G_X(w)
        zc = mpmath.conj(zz)
        return mpmath.conj(g1_value(law.law, zc, mpmath.conj(c * G))) / c
    return g1_value(law.law, zz, c * G) / c


@g1_value.register
def _(law: RectangularCompanion, z, G):
    r = mpmath.mpf(sp.N(law.ratio, mpmath.mp.dps))
    return g1_value(law.law, z, (G - (1 - r) / z) / r)


def _distinct(law):
    """``[(sub, copies, total weight)]`` of a mixture's non-zero parts, one entry per distinct
    operand object (``mixture([μ] * h)``, h blocks of one law, is evaluated once)."""
    parts = {}
    for sub, wt in zip(law.laws, law.weights):
        if wt != 0:
            _, count, total = parts.get(id(sub), (sub, 0, 0))
            parts[id(sub)] = (sub, count + 1, total + wt)
    return list(parts.values())


@g1_value.register
def _(law: Mixture, z, G):
    out = mpmath.mpc(0)
    for sub, copies, _ in _distinct(law):
        out += copies * g1_value(sub, z, limit_G(sub, z))
    return out


def _rho_plus(law, w, G):
    return g1_value(law, w, G) - _m_plus(law, w, G)


@g1_value.register
def _(law: FreeAdd, z, G):
    out = _m_plus(law, z, G)
    if all(is_canonical(sub) for sub in law.laws):
        return out
    d1, _ = derivatives(law, z, G)
    points = _add_points(law.laws, z, G)
    for sub, w in zip(law.laws, points):
        if not is_canonical(sub):
            out += d1 * _rho_plus(sub, w, G) / derivatives(sub, w, G)[0]
    return out


@g1_value.register
def _(law: FreePower, z, G):
    out = _m_plus(law, z, G)
    if is_canonical(law.law):
        return out
    t = mpmath.mpf(sp.N(law.t, mpmath.mp.dps))
    w = (z + (t - 1) / G) / t
    d1, _ = derivatives(law, z, G)
    return out + d1 * t * _rho_plus(law.law, w, G) / derivatives(law.law, w, G)[0]


@g1_value.register
def _(law: FreeMul, z, G):
    if any(law._zero_mean):
        raise NotAvailable("finite_n: numeric G₁ of ⊠ with a zero-mean factor is not implemented "
                           "(its exact moments are: moments(k), moment_corrections(k))")
    out = _m_times(law, z, G)
    d1, _ = derivatives(law, z, G)
    zg1 = G + z * d1
    points = _mul_points(law.left, law.right, z, G)
    for sub, w in zip((law.left, law.right), points):
        gx = z * G / w
        rho = g1_value(sub, w, gx) - _m_times(sub, w, gx)
        out += zg1 * rho / (gx + w * derivatives(sub, w, gx)[0])
    return out


def _pushforward_roots(law, z):
    """The roots ``r`` of ``p(r) = z`` with ``p'(r)``, ``p`` the push-forward's polynomial, at
    the working precision; a root within ``10^{-(dps − 5)}`` of the axis counts as real."""
    coeffs = [mpmath.mpf(sp.N(c, mpmath.mp.dps + 5)) for c in law.coefficients]
    while len(coeffs) > 1 and coeffs[-1] == 0:
        coeffs.pop()
    shifted = [coeffs[0] - z] + coeffs[1:]
    roots = mpmath.polyroots(shifted[::-1], maxsteps=200, extraprec=2 * mpmath.mp.prec)
    tol = mpmath.mpf(10) ** (5 - mpmath.mp.dps)
    out = []
    for r in roots:
        r = mpmath.mpc(r)
        if abs(r.imag) <= tol * (1 + abs(r)):
            r = mpmath.mpc(r.real, 0)
        dp = mpmath.fsum(i * c * r ** (i - 1) for i, c in enumerate(coeffs) if i)
        out.append((r, dp if r.imag else mpmath.mpc(dp).real))
    return out


def _g1_upper(law, r):
    """``G₁(r)`` of ``law`` at any non-real ``r`` (``G₁(r̄) = conj G₁(r)``: a real signed measure)."""
    if r.imag < 0:
        return mpmath.conj(_g1_upper(law, mpmath.conj(r)))
    return g1_value(law, r, limit_G(law, r))


@g1_value.register
def _(law: Pushforward, z, G):
    r"""``G₁`` of ``p(X)``: the expected spectral measure of ``p(X_n)`` is the image of X's, so
    ``ρ₁`` is mapped like a measure (docs/theory.md §13.4) and, by partial fractions,
    ``G₁^{p(X)}(z) = Σ_j G₁^X(r_j)/p'(r_j)`` over the roots of ``p(r) = z`` (as for ``G``
    itself).  Off the axis every root is non-real; on it (boundary values) a real root is
    approached from ``z + i0``, i.e. from above where ``p'(r) > 0`` and from below where
    ``p'(r) < 0``."""
    z = mpmath.mpc(z)
    out = mpmath.mpc(0)
    for r, dp in _pushforward_roots(law, z):
        if dp == 0:
            raise PrecisionError(f"finite_n: z = {mpmath.nstr(z, 8)} is a critical value of the push-forward's "
                                 "polynomial (p'(r) = 0 at a root of p(r) = z)")
        if r.imag != 0:
            val = _g1_upper(law.law, r)
            dp = mpmath.mpc(dp)
        elif z.imag != 0:
            raise PrecisionError(f"finite_n: a real root of p(r) = z at non-real z = {mpmath.nstr(z, 8)}")
        else:
            val = g1_value(law.law, r, limit_G(law.law, r))          # r + i0
            if dp.real < 0:
                val = mpmath.conj(val)                                # r − i0
        out += val / dp
    return out
