r"""Numeric properties of the density of every family and operation (issue 3):

* the density integrates to 1 minus the atom masses;
* moments by quadrature of the density plus the atoms (``Σ w_i x_i^k``) equal the exact
  moments (1e-25 at 30 digits);
* the density is non-negative, positive inside the support and exactly 0 outside it;
* raising ``dps`` changes no digit already returned;
* ``cdf(quantile(p)) = p`` in a continuous part.

Two routes to the integrals: the library's certified quadrature
(``AlgebraicCauchy.moments``, reached through ``law._evaluator``: edge-adapted
tanh-sinh with a rigorous tail bound) at 30 digits, and an independent one written
here: Gauss–Legendre on every piece of the support between consecutive atoms and
branch points (real roots of the discriminant and of the leading coefficient of the
public Cauchy equation), after the substitution ``x = a + (b − a)(3t² − 2t³)``, which
makes ``(x − a)^{j/2}`` end behaviour analytic in ``t``; the integrand is the public
``law.density`` on a grid at 15 digits (96 nodes per piece reach 1e-17 on every law below).

The exact moments come from the exact core (free cumulants and series), a route that
never sees the Cauchy equation.

Cost: the certified quadrature dominates (moments 0..2 of every law at 30 digits, about
70 s of the default run); ``-m slow`` adds the certified moments 3..4 and a second quantile
per law.
"""
import functools
import itertools

import mpmath
import pytest
import sympy as sp
from mpmath.calculus.quadrature import GaussLegendre

import freeprob as fp
from freeprob.core.symbols import G, x, z

R = sp.Rational
DPS = 30
TOL = mpmath.mpf(10) ** -25          # at DPS digits
GRID_TOL = mpmath.mpf(10) ** -13     # independent Gauss–Legendre route, density at 15 digits

# name -> (law, highest moment checked by the certified quadrature at 30 digits in the
# default run).  That quadrature costs 1–30 s per law (most of the file's time), growing
# with the number of moments: 2 by default (4 for the cheapest), 4 for all under
# ``-m slow``; the independent route checks moments 0..4 of every law at 1e-13.
CASES = {
    "Atomic(3 points)": (fp.Atomic((-1, R(1, 2), 2), (R(1, 5), R(1, 2), R(3, 10))), 6),
    "Dirac(3/2)": (fp.Dirac(R(3, 2)), 6),
    "Bernoulli(1/3, 0, 2)": (fp.Bernoulli(R(1, 3), 0, 2), 6),
    "Semicircle(1/2, 2)": (fp.Semicircle(R(1, 2), 2), 4),
    "FreePoisson(1/2, 3/2) [atom]": (fp.FreePoisson(R(1, 2), R(3, 2)), 2),
    "FreePoisson(3, 1/2) [no atom]": (fp.FreePoisson(3, R(1, 2)), 2),
    "MarchenkoPastur(1/3, 2)": (fp.MarchenkoPastur(R(1, 3), 2), 2),
    "CompoundFreePoisson(2, atomic -1/2)": (
        fp.CompoundFreePoisson(2, fp.Atomic((-1, 2), (R(1, 3), R(2, 3)))), 2),
    "Semicircle + MP(1/2)": (fp.free_add(fp.Semicircle(0, 1), fp.MarchenkoPastur(R(1, 2))), 2),
    "Bernoulli(1/3) + Bernoulli(1/4)": (
        fp.free_add(fp.Bernoulli(R(1, 3), 0, 1), fp.Bernoulli(R(1, 4), 0, 1)), 2),
    "MP(1/2) x MP(1/3)": (fp.free_mul(fp.MarchenkoPastur(R(1, 2)), fp.MarchenkoPastur(R(1, 3))), 2),
    "Semicircle x FreePoisson(1/2)": (fp.free_mul(fp.Semicircle(0, 1), fp.FreePoisson(R(1, 2))), 2),
    "free_power(Bernoulli(1/2, 0, 1), 3/2)": (fp.free_power(fp.Bernoulli(R(1, 2), 0, 1), R(3, 2)), 2),
    "shift(MP(1/2), -1)": (fp.shift(fp.MarchenkoPastur(R(1, 2)), -1), 2),
    "dilate(MP(2), -3/2)": (fp.dilate(fp.MarchenkoPastur(2), R(-3, 2)), 2),
    "pushforward(Semicircle, x^2)": (fp.pushforward(fp.Semicircle(0, 1), x**2), 4),
    "pushforward(MP(1/2), x^2 + x)": (fp.pushforward(fp.MarchenkoPastur(R(1, 2)), x**2 + x), 2),
    "mixture(Semicircle, MP(1/2))": (
        fp.mixture([fp.Semicircle(0, 1), fp.MarchenkoPastur(R(1, 2))], [R(1, 3), R(2, 3)]), 2),
    "mixture(Semicircle(2, 1/4), Dirac(-1))": (
        fp.mixture([fp.Semicircle(2, R(1, 4)), fp.Dirac(-1)], [R(3, 4), R(1, 4)]), 2),
    "rectangular_companion(MP(1/2, 3), 2/3)": (
        fp.rectangular_companion(fp.MarchenkoPastur(R(1, 2), 3), R(2, 3)), 2),
    # a square-root onset at 0 inside the support of the other part (density positive on
    # both sides, a kink) and an edge at 2 shared by both parts: four roots meet there
    "mixture(Semicircle, Semicircle(1, 1/4)) [shared edge]": (
        fp.mixture([fp.Semicircle(0, 1), fp.Semicircle(1, R(1, 4))]), 4),
    # supports [0, 2] and [0, 1]: an edge at 0 shared by both parts, and the end at 1 of the
    # second inside the support of the first
    "mixture(Semicircle(1, 1/4), Semicircle(1/2, 1/16)) [shared edge at 0]": (
        fp.mixture([fp.Semicircle(1, R(1, 4)), fp.Semicircle(R(1, 2), R(1, 16))]), 4),
}

# (case, test) -> reason: library bugs, reported and kept as strict xfails
KNOWN_BUGS = {}


def cases(test, names=None, extra_marks=()):
    out = []
    for name in CASES if names is None else names:
        reason = KNOWN_BUGS.get((name, test))
        marks = list(extra_marks) + ([pytest.mark.xfail(strict=True, reason=reason)] if reason else [])
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def num(v, dps=60):
    """An exact sympy number or an mpmath number as mpf at the current precision."""
    if isinstance(v, sp.Basic):
        return +mpmath.mpf(sp.N(v, dps))
    return +mpmath.mpf(v)


def law(name):
    return CASES[name][0]


@functools.cache
def atoms(name):
    """``[(location, mass)]`` as mpf at 60 digits (the library's exact atoms)."""
    with mpmath.workdps(60):
        return [(num(a), num(w)) for a, w in law(name).atoms()]


@functools.cache
def support(name):
    with mpmath.workdps(60):
        return [(num(a), num(b)) for a, b in law(name).support()]


@functools.cache
def exact_moments(name, k):
    with mpmath.workdps(60):
        return [num(m) for m in law(name).moments(k)]


def certified_moments(name, k=None):
    """The library's quadrature ``∫ x^n density + Σ a^n mass``, n <= k (default: the
    case's), at 30 digits."""
    return _certified_moments(name, CASES[name][1] if k is None else k)


@functools.cache
def _certified_moments(name, k):
    return law(name)._evaluator("moments").moments(k, dps=DPS)


def atom_moment(name, k):
    with mpmath.workdps(60):
        return mpmath.fsum(w * a**k for a, w in atoms(name))


def interior_points(name, fractions):
    """Rational points at the given fractions of the widest support interval."""
    a, b = max(support(name), key=lambda ab: ab[1] - ab[0])
    with mpmath.workdps(30):
        return [R(mpmath.nstr(a + (b - a) * f, 15)) for f in fractions]


# -- independent quadrature of the public density -------------------------------------
@functools.cache
def _gl_nodes():
    with mpmath.workdps(25):
        nodes = GaussLegendre(mpmath.mp).calc_nodes(6, mpmath.mp.prec)       # 96 nodes
        return tuple(sorted(((u + 1) / 2, w / 2) for u, w in nodes))


@functools.cache
def branch_points(name):
    """Real roots of disc_G P and of lc_G P (candidate edges, cusps and atoms)."""
    e = law(name).cauchy_equation().as_expr()
    out = []
    for q in (sp.Poly(sp.discriminant(e, G), z), sp.Poly(sp.Poly(e, G).LC(), z)):
        if q.degree() > 0:
            for f, _ in q.factor_list()[1]:
                out += [num(r) for r in sp.real_roots(f)]
    return out


def pieces(name):
    """``[(a, b, cluster_a, cluster_b)]``: the support cut at atoms and branch points; the
    ends that are not atoms get clustered nodes."""
    locs = [a for a, _ in atoms(name)]
    cuts = locs + branch_points(name)
    out = []
    eps = mpmath.mpf(10) ** -40
    for a, b in support(name):
        ends = [a] + sorted({c for c in cuts if a + eps < c < b - eps}) + [b]
        for lo, hi in itertools.pairwise(ends):
            out.append((lo, hi, all(abs(lo - c) > eps for c in locs), all(abs(hi - c) > eps for c in locs)))
    return out


def _map(t, left, right):
    """``(φ(t), φ'(t))`` on [0, 1]: ``φ ~ t²`` at a clustered end (``(x − a)^{j/2}`` end
    behaviour becomes analytic in ``t``), linear at the other.  Ends at an atom inside the
    support are not clustered: the continuous part is smooth there for the laws below
    (Semicircle ⊠ FreePoisson(1/2) at 0), and points within 1e-7 of the pole of ``G`` cost
    ten times more (clustered, the result is the same)."""
    if left and right:
        return t * t * (3 - 2 * t), 6 * t * (1 - t)
    if left:
        return t * t, 2 * t
    if right:
        return 1 - (1 - t) ** 2, 2 * (1 - t)
    return t, 1


@functools.cache
def grid_moments(name, k):
    """``[∫ x^n density, n <= k]`` by Gauss–Legendre on the public density grid."""
    total = [mpmath.mpf(0)] * (k + 1)
    with mpmath.workdps(25):
        for a, b, left, right in pieces(name):
            mapped = [(_map(t, left, right), w) for t, w in _gl_nodes()]
            xs = [a + (b - a) * phi for (phi, _), _ in mapped]
            ws = [w * (b - a) * dphi for (_, dphi), w in mapped]
            ds = law(name).density(xs, dps=15)
            for n in range(k + 1):
                total[n] += mpmath.fsum(d * w * xx**n for d, w, xx in zip(ds, ws, xs))
    return total


# -- 1. mass ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", cases("mass"))
def test_density_mass_plus_atoms_is_one(name):
    L = law(name)
    exact_atoms = L.atoms()
    assert sum(w for _, w in exact_atoms) <= 1 and all(w > 0 for _, w in exact_atoms)
    q0 = certified_moments(name)[0]
    with mpmath.workdps(40):
        assert abs(q0 - 1) <= TOL, mpmath.nstr(q0, 35)
        density_mass = q0 - atom_moment(name, 0)
        if not L.support():
            # finitely supported: no density, the atoms carry everything, exactly
            assert sum(w for _, w in exact_atoms) == 1
            assert density_mass == 0
        else:
            assert density_mass > mpmath.mpf(10) ** -3


# -- 2. moments ------------------------------------------------------------------------
def _check_certified_moments(name, k=None):
    got = certified_moments(name, k)
    exact = exact_moments(name, len(got) - 1)
    with mpmath.workdps(40):
        bad = [(n, mpmath.nstr(g, 32), mpmath.nstr(e, 32)) for n, (g, e) in enumerate(zip(got, exact))
               if abs(g - e) > TOL * max(1, abs(e))]
    assert not bad, bad


@pytest.mark.parametrize("name", cases("moments"))
def test_certified_quadrature_moments_equal_exact_moments(name):
    _check_certified_moments(name)


@pytest.mark.parametrize("name", cases("moments_4", [n for n in CASES if CASES[n][1] < 4],
                                       [pytest.mark.slow]))
def test_certified_quadrature_moments_up_to_4(name):
    _check_certified_moments(name, 4)


@pytest.mark.parametrize("name", cases("independent_quadrature"))
def test_public_density_integrates_to_one_minus_atoms_with_exact_moments(name):
    k = 4
    dens = grid_moments(name, k)
    exact = exact_moments(name, k)
    with mpmath.workdps(30):
        bad = [(n, mpmath.nstr(d + atom_moment(name, n), 20), mpmath.nstr(e, 20))
               for n, (d, e) in enumerate(zip(dens, exact))
               if abs(d + atom_moment(name, n) - e) > GRID_TOL * max(1, abs(e))]
    assert not bad, bad


# -- 3. sign and support ---------------------------------------------------------------
@pytest.mark.parametrize("name", cases("sign"))
def test_density_nonnegative_positive_inside_zero_outside(name):
    L = law(name)
    sup = support(name)
    ends = [v for ab in sup for v in ab] + [a for a, _ in atoms(name)]
    lo, hi = min(ends), max(ends)
    with mpmath.workdps(30):
        margin = (hi - lo) / 4 + 1
        lo_r, width = R(mpmath.nstr(lo - margin, 12)), R(mpmath.nstr(hi - lo + 2 * margin, 12))
    pts = [lo_r + width * R(2 * i + 1, 2 * 49 + 2) for i in range(50)]
    pts = sorted(set(pts) | {a for a, _ in L.atoms() if a.is_Rational})
    vals = L.density(pts, dps=DPS)
    assert len(vals) == len(pts)
    inside_count = 0
    for p, v in zip(pts, vals):
        with mpmath.workdps(60):
            pn = num(p)
            inside = any(a < pn < b for a, b in sup)
        assert not mpmath.isnan(v) and v >= 0, (p, v)
        if inside:
            inside_count += 1
            assert v > 0, (p, v)
        elif not any(pn == a or pn == b for a, b in sup):
            assert v == 0, (p, v)              # off the support (atoms included): exactly 0
    assert (inside_count > 0) == bool(sup)


# -- 4. digits are stable under raising dps -----------------------------------------------
@pytest.mark.parametrize("name", cases("dps_stability"))
def test_raising_dps_changes_no_returned_digit(name):
    L = law(name)
    if support(name):
        xs = interior_points(name, (R(23, 100), R(1, 2), R(77, 100)))
        lo, hi = L.density(xs, dps=20), L.density(xs, dps=40)
        for xx, a, b in zip(xs, lo, hi):
            # densities are rounded once from a value certified to more digits (numeric
            # module docstring): the 40-digit value rounds to the 20-digit one
            with mpmath.workdps(20):
                assert +b == a, (xx, a, b)
        cdf_point = xs[0]            # the cdf's cost grows with the pieces left of the point
    else:
        locs = [a for a, _ in L.atoms()]
        cdf_point = (locs[0] + locs[-1]) / 2 + R(1, 7)
    a, b = L.cdf(cdf_point, dps=20), L.cdf(cdf_point, dps=40)
    # "correct to 20 significant digits": within one unit of the 20th digit
    with mpmath.workdps(50):
        assert abs(a - b) <= mpmath.mpf(10) ** -19 * abs(b), (cdf_point, a, b)


# -- 5. quantile inverts cdf -----------------------------------------------------------
QDPS = 4          # quantile costs one quadrature per secant step: 1–4 s at 4 digits


def _quantile_cases():
    finite = [name for name in CASES if isinstance(CASES[name][0], fp.Atomic)]
    out = [pytest.param(name, None, id=name) for name in finite]
    for name in CASES:
        if name not in finite:
            out.append(pytest.param(name, R(3, 10), id=f"{name}-0.3"))
            out.append(pytest.param(name, R(7, 10), id=f"{name}-0.7", marks=pytest.mark.slow))
    return out


@pytest.mark.parametrize("name,fraction", _quantile_cases())
def test_cdf_of_quantile(name, fraction):
    L = law(name)
    if fraction is None:
        # finitely supported: the quantile is the atom where the cumulative mass reaches p
        cum, steps = 0, []
        for a, w in L.atoms():                    # exact
            steps.append((cum, cum + w, a))
            cum += w
        for p in (R(1, 10), R(1, 2), R(9, 10)):
            q = L.quantile(p, dps=20)
            (_, _, a), = [s for s in steps if s[0] < p <= s[1]]
            with mpmath.workdps(20):
                assert q == num(a), (p, q, a)
            assert L.cdf(a, dps=20) >= num(p) - mpmath.mpf(10) ** -20
        return
    xx, = interior_points(name, (fraction,))
    p = R(mpmath.nstr(L.cdf(xx, dps=12), 9))           # a p inside a continuous part
    q = L.quantile(p, dps=QDPS)
    assert any(a < q < b for a, b in support(name)), (p, q)
    c = L.cdf(q, dps=12)
    f = L.density(q, dps=12)
    with mpmath.workdps(30):
        # q correct to QDPS digits: |F(q) − p| <= f(q)·|Δq| with |Δq| <= 10^(1−QDPS)·|q|
        allowed = 2 * f * mpmath.mpf(10) ** (1 - QDPS) * max(abs(q), mpmath.mpf(10) ** -QDPS)
        assert abs(c - num(p)) <= allowed + mpmath.mpf(10) ** -11, (p, q, c)
        assert abs(q - num(xx)) <= 10 * mpmath.mpf(10) ** (1 - QDPS) * max(1, abs(num(xx))), (xx, q)


# -- regression: a wrong root next to an atom inside the support ---------------------------
def test_density_next_to_an_atom_inside_the_support():
    # Semicircle ⊠ FreePoisson(1/2): atom 1/2 at 0 inside the support; two roots of the
    # quartic have Im G < 0 near 0 and both behave like 1/(2z) there.  Reference: the root
    # of 4G⁴z² − 4G³z + G² − 4Gz + 4 = 0 continued from G ~ 1/z at x + 100i down to
    # x + 1e-8 i at 60 digits, then to x (mpmath.polyroots at every step, nearest root, a
    # step taken only if the next root is 8 times farther); the other root gives
    # 0.6366067227… (returned before 4d2f15c)
    L = fp.free_mul(fp.Semicircle(0, 1), fp.FreePoisson(R(1, 2)))     # fresh: no warm start
    with mpmath.workdps(40):
        ref = mpmath.mpf("0.450145104570202428456961251264")
    for xx in (R(1, 1000), R(-1, 1000)):
        for dps in (15, 30):
            v = L.density(xx, dps=dps)
            with mpmath.workdps(40):
                assert abs(v - ref) <= mpmath.mpf(10) ** (1 - dps) * ref, (xx, dps, v)
    grid = L.density([R(-1, 100), R(-1, 1000), R(1, 1000), R(1, 100)], dps=15)
    assert grid[0] == grid[3] and grid[1] == grid[2]                  # symmetric law
    with mpmath.workdps(20):
        assert abs(grid[1] - ref) <= mpmath.mpf(10) ** -14 * ref



def test_density_very_close_to_an_atom_inside_the_support():
    # same law: the density of the continuous part is smooth at the atom,
    # f(0) − f(x) ≈ 1.3e-5·(x/1e-3)² (from f at 1e-3 — the reference above —, 1e-4 and
    # 1e-5), so f(1e-6) − f(1e-5) ≈ 1.3e-9.  Before 4d2f15c: PrecisionError after ~90 s.
    L = fp.free_mul(fp.Semicircle(0, 1), fp.FreePoisson(R(1, 2)))
    at5 = L.density(R(-1, 10**5), dps=15)
    v = L.density(R(-1, 10**6), dps=15)
    assert abs(v - at5) < mpmath.mpf(10) ** -8, (v, at5)


def test_cdf_of_a_mixture_whose_components_share_an_edge():
    # supports [-2, 2] and [0, 2]: a shared edge at 2, disc ∝ z²(z−2)⁶(z+2)²(15z−2)².  Before
    # the fix: PrecisionError 'cannot bound the mass near the edge 0' after ~10 s (the roots
    # clustering at an edge at 0 were given no extra bits); now ~1 s for both points
    L = fp.mixture([fp.Semicircle(0, 1), fp.Semicircle(1, R(1, 4))])
    with mpmath.workdps(30):
        # F_sc(x) = 1/2 + (x sqrt(4 − x²)/4 + asin(x/2))/π; the second component is the
        # standard semicircle at (x − 1)/(1/2)
        def F(t):
            return mpmath.mpf(1) / 2 + (t * mpmath.sqrt(4 - t**2) / 4 + mpmath.asin(t / 2)) / mpmath.pi
        exact = (F(mpmath.mpf(1) / 2) + F(mpmath.mpf(-1))) / 2
        v = L.cdf(R(1, 2), dps=15)
        assert abs(v - exact) <= mpmath.mpf(10) ** -14 * exact, (v, exact)
        # past the inner onset at 0 and the crossing at 2/15, at 20 digits
        exact = (F(mpmath.mpf(3) / 2) + F(mpmath.mpf(1))) / 2
        v = L.cdf(R(3, 2), dps=20)
        assert abs(v - exact) <= mpmath.mpf(10) ** -19 * exact, (v, exact)


def test_moments_of_a_mixture_whose_three_components_share_an_edge():
    # supports [-2, 2], [0, 2] and [1, 2]: eight roots meet at 2 (disc ∝ (z − 2)^28 …), which
    # need four times the bits of a plain edge at a point s from it.  Before the cluster
    # bits (AlgebraicCauchy._cluster_size): no answer after 100 s; now ~3 s
    L = fp.mixture([fp.Semicircle(0, 1), fp.Semicircle(1, R(1, 4)), fp.Semicircle(R(3, 2), R(1, 16))])
    got = L._evaluator("moments").moments(2, dps=15)
    with mpmath.workdps(30):
        exact = [num(m) for m in L.moments(2)]
        assert all(abs(g - e) <= mpmath.mpf(10) ** -14 * max(1, abs(e)) for g, e in zip(got, exact)), (got, exact)
