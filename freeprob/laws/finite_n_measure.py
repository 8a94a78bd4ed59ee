r"""The signed correction measure ``ρ₁`` of a finite-n law: density, atoms, cdf.

``ρ₁`` is the measure whose Cauchy transform is ``G₁`` (:mod:`freeprob.laws.finite_n_eval`):

* its **density** is ``−Im G₁(x + i0)/π`` on the support of the limit law (zero outside),
  from the boundary value ``G(x + i0)`` of the limit law;
* its **atoms** are the real poles of ``G₁``: at each candidate point (the support
  edges, the limit's atoms and cut points) the residue ``lim_{η→0} iη G₁(a + iη)`` is
  extrapolated from ``η = η₀ 4^{-j}`` by Richardson's rule in powers of ``η^{1/2}`` (near a
  square-root edge ``G₁ = r/(z − a) + b (z − a)^{-1/2} + …``); residues below
  ``10⁻⁹`` (relative) are no atom;
* its **cdf** ``F₁(x) = ρ₁((−∞, x])`` is ``−Im ∫_γ G₁(ζ) dζ/π`` along the path ``γ`` from a
  point ``L`` left of everything up to ``L + iH``, across to ``x + iH`` and down to ``x``
  (Cauchy's theorem; ``G₁`` is real left of everything, and the path picks up every atom
  left of ``x`` as ``−iπ·residue``), Gauss–Legendre on pieces refined geometrically
  towards the nearest pole.  At the location of an atom the value is taken from the side
  without density (``F₁`` is right-continuous).

A push-forward ``p(X)`` at the top is handled through its operand: density
``Σ ρ₁(r)/|p'(r)|`` over the real roots of ``p(r) = y``, atoms moved to ``p(a)``, cdf summed
over the intervals of ``{p ≤ y}``.

References: [MS17]_ §2.1 (Stieltjes inversion); docs/theory.md §"The 1/n term".
"""
from __future__ import annotations

from functools import singledispatch

import mpmath
import sympy as sp

from freeprob._checks import as_fraction
from freeprob.core.params import dps_or_default
from freeprob.errors import FreeprobValueError, PrecisionError
from freeprob.laws.finite_n_eval import boundary_G, g1_value, limit_G
from freeprob.laws.operations import Pushforward

__all__ = ["correction_density", "density", "correction_atoms", "atoms", "correction_cdf", "extra_poles"]

#: residues below this (times the scale) are not atoms
ATOM_TOL = mpmath.mpf("1e-9")


def _mp(v):
    """An mpf from a number or an exact sympy value (edges are often algebraic numbers)."""
    return mpmath.mpf(sp.N(v, mpmath.mp.dps + 5)) if isinstance(v, sp.Basic) else mpmath.mpf(v)


def _is_list(x):
    return isinstance(x, list | tuple)


def _real(x, who):
    if isinstance(x, float):
        # the one float rule (freeprob.core.params): the decimal it prints as, as Law.density reads it
        f = as_fraction(x)
        if f is None:
            raise FreeprobValueError(f"FiniteNLaw.{who}: x must be finite; got {x!r}")
        return mpmath.mpf(f.numerator) / f.denominator
    try:
        v = mpmath.mpf(x) if not isinstance(x, sp.Basic) else mpmath.mpf(sp.N(x, mpmath.mp.dps))
    except (TypeError, ValueError) as exc:
        raise FreeprobValueError(f"FiniteNLaw.{who}: x must be a real number; got {x!r}") from exc
    if not mpmath.isfinite(v):
        raise FreeprobValueError(f"FiniteNLaw.{who}: x must be finite; got {x!r}")
    return v


def _operand(fl):
    return fl.limit.law.finite_n(fl.n, fl.field)


def _poly(fl):
    return [mpmath.mpf(sp.N(c, mpmath.mp.dps)) for c in fl.limit.coefficients]


def _preimages(coeffs, y):
    """Real roots of ``p(r) = y``, sorted, with ``p'(r)``."""
    c = list(coeffs)
    c[0] -= y
    roots = [r for r in mpmath.polyroots(list(reversed(c)), maxsteps=200, extraprec=60)
             if abs(mpmath.im(r)) <= mpmath.mpf(10) ** (-mpmath.mp.dps // 2) * (1 + abs(r))]
    out = []
    for r in sorted(mpmath.re(r) for r in roots):
        d = sum(k * c[k] * r ** (k - 1) for k in range(1, len(c)))
        out.append((r, d))
    return out


# -- density ---------------------------------------------------------------------------
def correction_density(fl, x, dps):
    dps = dps_or_default(dps, "correction_density")
    fl.check_numeric("FiniteNLaw.correction_density")
    xs = list(x) if _is_list(x) else [x]
    if fl.field == "complex":
        vals = [mpmath.mpf(0)] * len(xs)
    elif isinstance(fl.limit, Pushforward):
        op = _operand(fl)
        vals = []
        with mpmath.workdps(dps + 10):
            coeffs = _poly(fl)
            for y in xs:
                acc = mpmath.mpf(0)
                for r, d in _preimages(coeffs, _real(y, "correction_density")):
                    if d != 0:
                        acc += op.correction_density(r, dps=dps + 5) / abs(d)
                vals.append(acc)
    else:
        pts = [_real(v, "correction_density") for v in xs]
        with mpmath.workdps(dps + 5):
            # the limit's density at the points as given: an exact edge (3 − 2√2) is 0 there,
            # where its mpf rounding would sit inside the support next to G₁'s edge singularity
            dens = fl.limit.density(xs) if len(xs) > 1 else [fl.limit.density(xs[0])]
            vals = []
            for p, d in zip(pts, dens):
                if d == 0:
                    vals.append(mpmath.mpf(0))
                    continue
                G = boundary_G(fl.limit, p, d)
                big = abs(G) * (1 + abs(p))
                if big > 1e6:
                    # next to an atom (G ≈ w/(x − a)): G₁ cancels ~2·log10|G| digits (its
                    # derivatives of P at a clustered root); evaluate it with those digits more
                    with mpmath.workdps(mpmath.mp.dps + 2 * int(mpmath.log10(big)) + 10):
                        G = boundary_G(fl.limit, p, d)
                        v = -mpmath.im(g1_value(fl.limit, mpmath.mpc(p), G)) / mpmath.pi
                    vals.append(v)
                    continue
                vals.append(-mpmath.im(g1_value(fl.limit, mpmath.mpc(p), G)) / mpmath.pi)
    with mpmath.workdps(dps):
        vals = [+v for v in vals]
    return vals if _is_list(x) else vals[0]


def density(fl, x, dps):
    dps = dps_or_default(dps, "density")
    corr = correction_density(fl, x, dps + 5)
    base = fl.limit.density(list(x) if _is_list(x) else x, dps=dps + 5)
    n = fl._scalar()
    with mpmath.workdps(dps):
        if _is_list(x):
            return [+(mpmath.mpf(a) + b / n) for a, b in zip(base, corr)]
        return +(mpmath.mpf(base) + corr / n)


# -- atoms -----------------------------------------------------------------------------
@singledispatch
def extra_poles(law):
    r"""Real points where ``G₁`` of ``law`` may have a pole besides the limit law's edges,
    atoms and cut points (e.g. the outlier of a finite-rank perturbation: an atom of mass
    ``k/n`` away from the support).  The extension point for models with outliers: register
    ``extra_poles.register(MyLaw)`` next to their rules in :mod:`freeprob.laws.finite_n_rules`
    and :mod:`freeprob.laws.finite_n_eval`.  Default: none."""
    return ()


def _candidates(law):
    pts = [_mp(p) for p in extra_poles(law)]
    for a, b in law.support(dps=20):
        pts += [_mp(a), _mp(b)]
    pts += [_mp(a) for a, _ in law.atoms(dps=20)]
    pts += [_mp(c) for c in law.cut_points(dps=20)]
    out = []
    for p in sorted(pts):
        if not out or abs(p - out[-1]) > mpmath.mpf(10) ** -12 * (1 + abs(p)):
            out.append(p)
    return out


def _scale(law):
    pts = [p for ab in law.support(dps=15) for p in ab] + [a for a, _ in law.atoms(dps=15)]
    pts = [_mp(p) for p in pts]
    return max(mpmath.mpf(1), max(pts) - min(pts)) if pts else mpmath.mpf(1)


#: the exponent classes of ``iη G₁(a + iη) = r + Σ_k b_k η^{p_k}``: square-root edges
#: (``p = 1/2, 1, 3/2, …``) and cusps or the hard edges of products (``p = 1/3, 2/3, …``)
_CLASSES = ([mpmath.mpf(k) / 2 for k in range(1, 9)], [mpmath.mpf(k) / 3 for k in range(1, 9)])


def _residue(law, a, eta0):
    """``lim iη G₁(a + iη)`` by Richardson extrapolation (ratio 2 in ``η``) in each exponent
    class; the class whose last two diagonal values agree best wins, and their difference
    is the error estimate."""
    vals = []
    for j in range(9):
        eta = eta0 / mpmath.mpf(2) ** j
        z = mpmath.mpc(a, eta)
        vals.append(mpmath.mpc(0, eta) * g1_value(law, z, limit_G(law, z)))
    best = None
    for exps in _CLASSES:
        prev_row = None
        diag = []
        for j, v in enumerate(vals):
            row = [v]
            for m in range(1, j + 1):
                q = mpmath.mpf(2) ** exps[m - 1]
                row.append((q * row[m - 1] - prev_row[m - 1]) / (q - 1))
            prev_row = row
            diag.append(row[-1])
        est = (diag[-1], abs(diag[-1] - diag[-2]))
        if best is None or est[1] < best[1]:
            best = est
    return best


def correction_atoms(fl, dps):
    dps = dps_or_default(dps, "correction_atoms")
    fl.check_numeric("FiniteNLaw.correction_atoms")
    if fl.field == "complex":
        return ()
    if isinstance(fl.limit, Pushforward):
        with mpmath.workdps(dps + 10):
            coeffs = _poly(fl)
            merged = {}
            for a, m in _operand(fl).correction_atoms(dps=dps + 5):
                y = sum(c * a ** k for k, c in enumerate(coeffs))
                key = mpmath.nstr(y, dps)
                merged[key] = (y, merged.get(key, (y, 0))[1] + m)
            out = sorted(merged.values())
        with mpmath.workdps(dps):
            return tuple((+a, +m) for a, m in out if m != 0)
    law = fl.limit
    hit = law._cache.get(("finite_n_atoms", dps))
    if hit is not None:
        return hit
    out = []
    with mpmath.workdps(dps + 10):
        scale = _scale(law)
        cands = _candidates(law)
        for a in cands:
            gap = min([abs(a - b) for b in cands if b != a] + [scale])
            r, err = _residue(law, a, min(mpmath.mpf(10) ** -3 * scale, gap / 10))
            if abs(r) <= max(ATOM_TOL * scale, 100 * err):
                continue
            if abs(mpmath.im(r)) > max(1e3 * err, mpmath.mpf(10) ** -6 * abs(r)):
                raise PrecisionError(f"FiniteNLaw.correction_atoms: the residue of G₁ at {mpmath.nstr(a, 10)} "
                                     f"is not real ({mpmath.nstr(r, 8)}): not a simple pole")
            out.append((a, mpmath.re(r)))
    with mpmath.workdps(dps):
        res = tuple((+a, +m) for a, m in out)
    law._cache[("finite_n_atoms", dps)] = res
    return res


def atoms(fl, dps):
    dps = dps_or_default(dps, "atoms")
    fl.check_numeric("FiniteNLaw.atoms")
    n = fl._scalar()
    merged = [[_mp(a), _mp(m)] for a, m in fl.limit.atoms(dps=dps)]
    for a, m in correction_atoms(fl, dps):
        for row in merged:
            if abs(row[0] - a) <= mpmath.mpf(10) ** (-dps + 2) * (1 + abs(a)):
                row[1] += m / n
                break
        else:
            merged.append([a, m / n])
    with mpmath.workdps(dps):
        return tuple((+a, +m) for a, m in sorted(merged))


# -- cdf -------------------------------------------------------------------------------
def _path_integral(law, x, lo, scale, poles):
    """``∫ G₁`` from ``L = lo − scale`` up, across and down to ``x``."""
    L, H = lo - scale, scale

    def f(zeta):
        return g1_value(law, zeta, limit_G(law, zeta))
    dist = min([abs(x - p) for p in poles] + [H])
    ys = [mpmath.mpf(0)]
    d = max(dist, H * mpmath.mpf(10) ** -8)
    while d < H:
        ys.append(d)
        d *= 4
    ys.append(H)
    i = mpmath.mpc(0, 1)
    opts = dict(method="gauss-legendre", maxdegree=8)
    up = mpmath.quad(lambda y: f(L + i * y) * i, [0, H], **opts)
    xs = [L] + sorted({p for p in poles if L < p < x}) + [x]
    across = mpmath.quad(lambda s: f(s + i * H), xs, **opts)
    down = -mpmath.quad(lambda y: f(x + i * y) * i, ys, **opts)
    return up + across + down


def correction_cdf(fl, x, dps):
    dps = dps_or_default(dps, "correction_cdf")
    fl.check_numeric("FiniteNLaw.correction_cdf")
    if fl.field == "complex":
        return mpmath.mpf(0)
    if isinstance(fl.limit, Pushforward):
        return _pushforward_cdf(fl, x, dps)
    law = fl.limit
    with mpmath.workdps(dps + 5):
        x = _real(x, "correction_cdf")
        atoms_ = correction_atoms(fl, dps + 5)
        support = [(_mp(a), _mp(b)) for a, b in law.support(dps=dps + 5)]
        ends = [p for ab in support for p in ab] + [_mp(a) for a, _ in law.atoms(dps=dps + 5)]
        ends += [a for a, _ in atoms_]
        lo, hi = min(ends), max(ends)
        if x < lo or x >= hi:
            return mpmath.mpf(0)
        scale = _scale(law)
        poles = [a for a, _ in atoms_]
        tol = mpmath.mpf(10) ** (-dps) * scale
        at = [(a, m) for a, m in atoms_ if abs(a - x) <= tol]
        if at:
            a, m = at[0]
            delta = mpmath.mpf(10) ** -8 * scale
            inside_left = any(s < a - delta / 2 and a - delta / 2 < t for s, t in support)
            if not inside_left:       # no density just left of a: F₁(a) = F₁(a−) + mass
                x_eval, add = a - delta, m
            else:                     # no density just right of a (a right edge)
                x_eval, add = a + delta, mpmath.mpf(0)
            val = -mpmath.im(_path_integral(law, x_eval, lo, scale, poles)) / mpmath.pi + add
        else:
            val = -mpmath.im(_path_integral(law, x, lo, scale, poles)) / mpmath.pi
    with mpmath.workdps(dps):
        return +val


def _pushforward_cdf(fl, y, dps):
    op = _operand(fl)
    with mpmath.workdps(dps + 5):
        y = _real(y, "correction_cdf")
        coeffs = _poly(fl)
        roots = [r for r, _ in _preimages(coeffs, y)]
        # {x : p(x) ≤ y} is a union of closed intervals between consecutive roots
        edges = [-mpmath.inf] + roots + [mpmath.inf]
        total = mpmath.mpf(0)
        for a, b in zip(edges, edges[1:]):
            mid = (a + b) / 2 if mpmath.isfinite(a) and mpmath.isfinite(b) else (
                b - 1 if mpmath.isfinite(b) else (a + 1 if mpmath.isfinite(a) else 0))
            if sum(c * mid ** k for k, c in enumerate(coeffs)) > y:
                continue
            fb = op.correction_cdf(b, dps=dps + 5) if mpmath.isfinite(b) else 0
            fa = op.correction_cdf(a, dps=dps + 5) if mpmath.isfinite(a) else 0
            left_atom = sum((m for loc, m in op.correction_atoms(dps=dps + 5)
                             if mpmath.isfinite(a) and abs(loc - a) <= 1e-12 * (1 + abs(a))), mpmath.mpf(0))
            total += fb - fa + left_atom
    with mpmath.workdps(dps):
        return +total

