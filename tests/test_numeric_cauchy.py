r"""Numeric Cauchy transforms of algebraic laws (freeprob.numeric.AlgebraicCauchy).

Every law is given by its Cauchy equation ``P(G, z) = 0``; each value is checked against
an independent source named in a comment: a closed-form density, the Haagerup–Möller
parametrization of the Fuss–Catalan laws (checked here to integrate to 1 with the
Fuss–Catalan moments), or the exact moments computed by the exact core of freeprob
(free cumulants, a route that never sees ``P``).
"""
from math import comb

import mpmath
import pytest
import sympy as sp

import freeprob as fp
from freeprob.errors import FreeprobValueError
from freeprob.numeric import AlgebraicCauchy
from freeprob.core.symbols import G, z

R = sp.Rational
mpf = mpmath.mpf


def law(expr):
    return AlgebraicCauchy(sp.Poly(expr, G, z))


def mp_eq(c):
    # MP(c) = FreePoisson(1/c, c): R(w) = 1/(1 − c w); z = R(G) + 1/G gives
    # c z G² + (1 − c − z) G + 1 = 0
    return c * z * G**2 + (1 - c - z) * G + 1


def mp_density(c):
    def f(x):          # evaluated at the caller's precision
        cc = mpf(sp.N(c, mpmath.mp.dps + 10))
        a, b = (1 - mpmath.sqrt(cc)) ** 2, (1 + mpmath.sqrt(cc)) ** 2
        return mpmath.sqrt((b - x) * (x - a)) / (2 * mpmath.pi * cc * x) if a < x < b else mpf(0)
    return f


# name -> (P, exact density or None, support, atoms, exact moments m_0..m_6, closed-form G)
LAWS = {
    # semicircle of variance σ²: σ²G² − zG + 1 = 0, density sqrt(4σ² − x²)/(2πσ²) [MS17] §2.1
    "semicircle_2": (2 * G**2 - z * G + 1,
                     lambda x: mpmath.sqrt(8 - x**2) / (4 * mpmath.pi) if abs(x) < mpmath.sqrt(8) else mpf(0),
                     ((-2 * sp.sqrt(2), 2 * sp.sqrt(2)),), (),
                     fp.Semicircle(0, 2).moments(6),
                     lambda w: (w - mpmath.sqrt(w - mpmath.sqrt(8)) * mpmath.sqrt(w + mpmath.sqrt(8))) / 4),
    # Marchenko–Pastur MP(c), density sqrt((b−x)(x−a))/(2πcx), atom 1 − 1/c at 0 for c > 1
    "mp_2": (mp_eq(2), mp_density(2), ((3 - 2 * sp.sqrt(2), 3 + 2 * sp.sqrt(2)),), ((0, R(1, 2)),),
             fp.MarchenkoPastur(2).moments(6), None),
    "mp_1/2": (mp_eq(R(1, 2)), mp_density(R(1, 2)),
               ((R(3, 2) - sp.sqrt(2), R(3, 2) + sp.sqrt(2)),), (),
               fp.MarchenkoPastur(R(1, 2)).moments(6), None),
    "mp_1": (mp_eq(1), mp_density(1), ((0, 4),), (), fp.MarchenkoPastur(1).moments(6), None),
    # Fuss–Catalan s = 2, 3: z^s G^{s+1} − zG + 1 = 0 (B = zG solves B = 1 + B^{s+1}/z),
    # moments C((s+1)n, n)/(sn + 1) = free Poisson(1)^{⊠s}
    "fuss_catalan_2": (z**2 * G**3 - z * G + 1, None, ((0, R(27, 4)),), (),
                       fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(1)).moments(6), None),
    "fuss_catalan_3": (z**3 * G**4 - z * G + 1, None, ((0, R(256, 27)),), (),
                       fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(1), fp.FreePoisson(1)).moments(6),
                       None),
    # arcsine = Bernoulli(±1) ⊞ Bernoulli(±1): G = 1/sqrt(z² − 4), density 1/(π sqrt(4 − x²))
    "arcsine": ((z**2 - 4) * G**2 - 1,
                lambda x: 1 / (mpmath.pi * mpmath.sqrt(4 - x**2)) if abs(x) < 2 else mpf(0),
                ((-2, 2),), (),
                fp.free_add(fp.Bernoulli(R(1, 2), -1, 1), fp.Bernoulli(R(1, 2), -1, 1)).moments(6),
                lambda w: 1 / (mpmath.sqrt(w - 2) * mpmath.sqrt(w + 2))),
    # pqp for free projections of trace 1/2: G = 1/(2z) + 1/(2 sqrt(z(z − 1))), so
    # (2zG − 1)²(z − 1) = z, i.e. 4z²(z−1)G² − 4z(z−1)G − 1 = 0; law (1/2)δ_0 + density
    # 1/(2π sqrt(x(1−x))) on [0, 1], moments C(2n, n)/4^n/2 for n ≥ 1
    "pqp": (4 * z**2 * (z - 1) * G**2 - 4 * z * (z - 1) * G - 1,
            lambda x: 1 / (2 * mpmath.pi * mpmath.sqrt(x * (1 - x))) if 0 < x < 1 else mpf(0),
            ((0, 1),), ((0, R(1, 2)),),
            (1,) + tuple(R(comb(2 * n, n), 2 * 4**n) for n in range(1, 7)),
            lambda w: 1 / (2 * w) + 1 / (2 * mpmath.sqrt(w) * mpmath.sqrt(w - 1))),
}

_INSTANCES = {}


def inst(name):
    if name not in _INSTANCES:
        _INSTANCES[name] = law(LAWS[name][0])
    return _INSTANCES[name]


def close(a, b, tol):
    return abs(a - b) <= tol * max(abs(b), mpf(1) if b == 0 else abs(b))


def hm_points(s, n, dps):
    r"""Haagerup–Möller parametrization of the Fuss–Catalan law of order s:
    x(φ) = sin((s+1)φ)^{s+1}/(sin φ sin(sφ)^s), density
    sin(φ)² sin(sφ)^{s−1}/(π sin((s+1)φ)^s), 0 < φ < π/(s+1)."""
    with mpmath.workdps(dps + 20):
        out = []
        for i in range(n):
            f = mpmath.pi / (s + 1) * (i + mpf(1) / 2) / n
            x = mpmath.sin((s + 1) * f) ** (s + 1) / (mpmath.sin(f) * mpmath.sin(s * f) ** s)
            d = mpmath.sin(f) ** 2 * mpmath.sin(s * f) ** (s - 1) / mpmath.sin((s + 1) * f) ** s / mpmath.pi
            out.append((x, d))
        return sorted(out)


@pytest.mark.parametrize("s", [2, 3])
def test_haagerup_moller_reference_is_the_fuss_catalan_law(s):
    # the reference itself: mass 1 and moments C((s+1)n, n)/(sn+1) (Haagerup–Möller 2012)
    with mpmath.workdps(30):
        x = lambda f: mpmath.sin((s + 1) * f) ** (s + 1) / (mpmath.sin(f) * mpmath.sin(s * f) ** s)
        d = lambda f: mpmath.sin(f) ** 2 * mpmath.sin(s * f) ** (s - 1) / mpmath.sin((s + 1) * f) ** s / mpmath.pi
        for n in range(4):
            v = mpmath.quad(lambda f: x(f) ** n * d(f) * -mpmath.diff(x, f), [0, mpmath.pi / (s + 1)])
            assert abs(v - comb((s + 1) * n, n) / mpf(s * n + 1)) < mpf(10) ** -20


@pytest.mark.parametrize("P,s", [(z**2 * G**3 - z * G + 1, 2), (z**3 * G**4 - z * G + 1, 3),
                                 ((z**2 * G**3 - z * G + 1) * (G - 5), 2)],
                         ids=["s=2", "s=3", "s=2 times spurious factor G-5 (wrong-branch trap)"])
def test_fuss_catalan_density_1000_points(P, s):
    # reference: Haagerup–Möller parametrization, 1000 points, 30 digits
    ref = hm_points(s, 1000, 30)
    vals = law(P).density_grid([x for x, _ in ref], dps=30)
    bad = [(mpmath.nstr(x, 10), v, d) for (x, d), v in zip(ref, vals) if not close(v, d, mpf(10) ** -20)]
    assert not bad, bad[:5]


@pytest.mark.parametrize("name", [n for n in LAWS if LAWS[n][1] is not None])
def test_density_matches_closed_form(name):
    A, dens = inst(name), LAWS[name][1]
    lo, hi = [float(sp.N(v)) for v in (LAWS[name][2][0][0], LAWS[name][2][-1][1])]
    lo, hi = sp.Rational(repr(lo)), sp.Rational(repr(hi))
    xs = [lo + (hi - lo) * R(3 * i + 1, 69) for i in range(23)] + [hi + 1, lo - 1]
    for x in xs:
        v = A.density(x, dps=30)                     # exact rational points
        with mpmath.workdps(50):
            ref = dens(mpf(sp.N(x, 60)))
        assert v >= 0
        assert close(v, ref, mpf(10) ** -27), (x, v, ref)


@pytest.mark.parametrize("name", list(LAWS))
def test_support_and_atoms_exact(name):
    A = inst(name)
    sup, ats = A.support(), A.atoms()
    assert len(sup) == len(LAWS[name][2])
    for (a, b), (ea, eb) in zip(sup, LAWS[name][2]):
        assert sp.simplify(a - ea) == 0 and sp.simplify(b - eb) == 0, (sup, LAWS[name][2])
    assert ats == LAWS[name][3]


@pytest.mark.parametrize("name", list(LAWS))
def test_moments_by_quadrature(name):
    # ∫ x^k density + Σ a^k mass = exact moments (exact core of freeprob), k ≤ 6, at 30 digits
    A = inst(name)
    m = A.moments(6, dps=30)
    exact = LAWS[name][4]
    assert all(abs(v - mpf(sp.N(e, 40))) < mpf(10) ** -25 for v, e in zip(m, exact)), (m, exact)


@pytest.mark.parametrize("name", list(LAWS))
def test_grid_equals_pointwise_and_dps_stable(name):
    A = inst(name)
    lo, hi = [float(sp.N(v)) for v in (LAWS[name][2][0][0], LAWS[name][2][-1][1])]
    xs = sorted([lo - 0.5] + [lo + (hi - lo) * (i + 0.37) / 25 for i in range(25)] + [hi + 0.25])
    grid = A.density_grid(xs, dps=30)
    assert grid == [A.density(x, dps=30) for x in xs]
    assert grid[0] == 0 and grid[-1] == 0              # outside the support: exactly 0
    assert all(v >= 0 for v in grid)
    hi50 = A.density_grid(xs, dps=50)
    with mpmath.workdps(30):
        assert [+v for v in hi50] == grid                # 50 digits round to the same 30


@pytest.mark.parametrize("name", list(LAWS))
def test_cauchy_off_axis(name):
    A = inst(name)
    P = sp.lambdify((G, z), LAWS[name][0], "mpmath")
    closed = LAWS[name][5]
    for w in (mpmath.mpc(0.3, 0.7), mpmath.mpc(-1.5, 0.01), mpmath.mpc(4, 2), mpmath.mpc(0.5, -0.2)):
        g = A.cauchy(w, dps=30)
        with mpmath.workdps(40):
            assert abs(P(g, w)) < mpf(10) ** -25 * (1 + abs(g)) ** 4 * (1 + abs(w)) ** 4
        assert (g.imag < 0) == (w.imag > 0)
        if closed is not None:
            with mpmath.workdps(40):
                assert close(g, closed(w), mpf(10) ** -28)


def test_marchenko_pastur_closed_form_cauchy():
    # MP(2): G = (z + c − 1 − sqrt((z − a)(z − b)))/(2cz), principal branches for Im z > 0
    A = inst("mp_2")
    with mpmath.workdps(40):
        c = mpf(2)
        a, b = (1 - mpmath.sqrt(c)) ** 2, (1 + mpmath.sqrt(c)) ** 2
        for w in (mpmath.mpc(1, 1), mpmath.mpc(7, 0.5), mpmath.mpc(-1, 3)):
            ref = (w + c - 1 - mpmath.sqrt(w - a) * mpmath.sqrt(w - b)) / (2 * c * w)
            assert close(A.cauchy(w, dps=30), ref, mpf(10) ** -28)


def test_real_cauchy_outside_support_is_real():
    # semicircle σ² = 1 at x = 3: G = (3 − sqrt 5)/2
    A = law(G**2 - z * G + 1)
    v = A.cauchy(3, dps=40)
    assert isinstance(v, mpmath.mpf)
    with mpmath.workdps(45):
        assert abs(v - (3 - mpmath.sqrt(5)) / 2) < mpf(10) ** -39
    with pytest.raises(FreeprobValueError, match="support"):
        A.cauchy(1, dps=15)


def test_cdf_and_quantile_with_atom():
    # pqp: F(x) = 1/2 + arcsin(sqrt x)/π on [0, 1]; MP(2): atom 1/2 at 0
    A = inst("pqp")
    with mpmath.workdps(30):
        assert close(A.cdf(R(1, 4), dps=20), mpf(1) / 2 + mpmath.asin(mpf(1) / 2) / mpmath.pi, mpf(10) ** -19)
        assert A.cdf(-1, dps=20) == 0
        assert A.quantile(R(1, 4), dps=20) == 0                 # inside the atom's jump
        assert close(A.quantile(R(3, 4), dps=20), mpf(1) / 2, mpf(10) ** -18)
    B = inst("mp_2")
    assert close(B.cdf(0, dps=20), mpf(1) / 2, mpf(10) ** -19)
    assert B.quantile(R(1, 2), dps=15) == 0
    assert B.quantile(0, dps=15) == 0


def test_special_points():
    # semicircle at its edge: 0; MP(1) at its hard edge 0: unbounded; MP(2) at its atom: continuous part 0
    assert law(G**2 - z * G + 1).density(2, dps=20) == 0
    assert inst("mp_1").density(0, dps=20) == mpmath.inf
    assert inst("mp_2").density(0, dps=20) == 0


def test_irrational_coefficients():
    # semicircle of variance sqrt(2) ⇒ sqrt(2) G² − zG + 1 = 0, density sqrt(4√2 − x²)/(2π√2)
    A = law(sp.sqrt(2) * G**2 - z * G + 1)
    with mpmath.workdps(40):
        s2 = mpmath.sqrt(2)
        assert close(A.density(1, dps=30), mpmath.sqrt(4 * s2 - 1) / (2 * mpmath.pi * s2), mpf(10) ** -28)
    (a, b), = A.support(dps=20)
    with mpmath.workdps(25):
        assert close(b, 2 * mpmath.sqrt(mpmath.sqrt(2)), mpf(10) ** -19) and close(a, -b, mpf(10) ** -19)


@pytest.mark.parametrize("bad", [0, -1, 2.5, None, True])
def test_bad_dps(bad):
    A = law(G**2 - z * G + 1)
    for call in (lambda: A.density(0, dps=bad), lambda: A.cauchy(1j, dps=bad),
                 lambda: A.support(dps=bad), lambda: A.cdf(0, dps=bad)):
        with pytest.raises(FreeprobValueError, match="dps.*must be an integer"):
            call()


def test_bad_points_and_polys():
    A = law(G**2 - z * G + 1)
    for x in (1j, mpmath.mpc(1, 1), sp.I, "abc", float("nan")):
        with pytest.raises(FreeprobValueError):
            A.density(x, dps=15)
    with pytest.raises(FreeprobValueError, match="real"):
        A.density(complex(1, 0.5), dps=15)
    for p in (-0.1, 1.5, 2):
        with pytest.raises(FreeprobValueError, match=r"\[0, 1\]"):
            A.quantile(p, dps=15)
    x = sp.Symbol("x")
    with pytest.raises(FreeprobValueError, match="generators"):
        AlgebraicCauchy(sp.Poly(x * G**2 - G + 1, G, x))
    with pytest.raises(FreeprobValueError, match="sympy Poly"):
        AlgebraicCauchy(G**2 - z * G + 1)
    with pytest.raises(FreeprobValueError, match="degree >= 1 in G"):
        AlgebraicCauchy(sp.Poly(z + 0 * G, G, z))
    with pytest.raises(FreeprobValueError, match="exact"):
        AlgebraicCauchy(sp.Poly(sp.Float(0.5) * G**2 - z * G + 1, G, z))
    with pytest.raises(FreeprobValueError, match="real"):
        AlgebraicCauchy(sp.Poly(sp.I * G**2 - z * G + 1, G, z))
    with pytest.raises(FreeprobValueError, match="1/z"):
        AlgebraicCauchy(sp.Poly(G - 5, G, z))
    with pytest.raises(FreeprobValueError, match="sorted"):
        A.density_grid([1, 0], dps=15)


# -- branch selection next to a high-multiplicity interior special point ---------------
# The pushforward of the standard semicircle by x³: Cauchy equation (irreducible)
# 729 G⁸z⁴ − 54 G⁴z² − G²z² + 64 G² + 1, discriminant roots ±8 (mult. 4), 0 (mult. 20),
# ±8i.  Closed form by change of variables: f(y) = sqrt(4 − r²)/(2π)/(3r²), r = |y|^{1/3},
# unbounded like |y|^{−2/3} at 0.  The jump from x + iy to the real axis used to be
# taken from y ≈ 29 at x = 0.5 (far outside the disk about x + iy free of branch points)
# and landed on the root −i/8 of another sheet: density 1/(8π) near 0 instead of
# 0.155 … 10.6.
CUBE_P = 729 * G**8 * z**4 - 54 * G**4 * z**2 - G**2 * z**2 + 64 * G**2 + 1


def cube_density(y):
    r = mpmath.cbrt(abs(y))
    return mpmath.sqrt(4 - r * r) / (2 * mpmath.pi) / (3 * r * r) if 0 < r < 2 else mpf(0)


def semicircle_cdf(t):
    return mpf(1) / 2 + (t * mpmath.sqrt(4 - t * t) / 4 + mpmath.asin(t / 2)) / mpmath.pi


def exact_mpf(q):
    q = R(q)
    return mpf(q.p) / q.q


CUBE_POINTS = ["-7.9999", "-7.5", "-3", "-0.5", "-0.001", "-1e-9", "1e-12", "0.001", "0.01",
               "0.1", "0.5", "2", "7.99", "7.999999"]


def test_cube_pushforward_equation():
    law = fp.pushforward(fp.Semicircle(0, 1), sp.Symbol("x") ** 3)
    assert law.cauchy_equation().as_expr().expand() == sp.expand(CUBE_P)


@pytest.mark.parametrize("y", CUBE_POINTS)
def test_cube_pushforward_density(y):
    A = law(CUBE_P)
    v = A.density(R(y), dps=30)
    with mpmath.workdps(60):
        assert close(v, cube_density(exact_mpf(y)), mpf(10) ** -25)


def test_cube_pushforward_density_grid_and_special_points():
    A = law(CUBE_P)
    xs = sorted([R(-8) + R(16) * (2 * i + 1) / 400 for i in range(200)]
                + [R(-1, 10**6), R(1, 10**6), R(-799, 100), R(799, 100)])
    vals = A.density_grid(xs, dps=30)
    with mpmath.workdps(60):
        for x, v in zip(xs, vals):
            assert close(v, cube_density(exact_mpf(x)), mpf(10) ** -25), x
    # the pointwise route agrees with the grid
    for i in (0, 60, 99, 100, 101, 150, 203):
        assert A.density(xs[i], dps=30) == vals[i]
    assert A.support() == ((-8, 8),)
    assert A.atoms() == ()
    assert A.density(0, dps=20) == mpmath.inf
    assert A.density(8, dps=20) == 0 and A.density(-8, dps=20) == 0
    assert A.density(R(801, 100), dps=20) == 0 and A.density(-9, dps=20) == 0
    # off the axis just above 0.5: −Im G/π is the density there
    g = A.cauchy(mpmath.mpc(0.5, 1e-12), dps=20)
    assert abs(-g.imag / mpmath.pi - cube_density(mpf(0.5))) < 1e-10


def test_cube_pushforward_law_cdf_and_atoms():
    law3 = fp.pushforward(fp.Semicircle(0, 1), sp.Symbol("x") ** 3)
    assert law3.atoms() == ()
    assert close(law3.cdf(0, dps=20), mpf(1) / 2, mpf(10) ** -19)           # symmetry
    for y in ("-7.99", "-0.001", "0.5", "7"):
        with mpmath.workdps(40):
            yv = exact_mpf(y)
            ref = semicircle_cdf(mpmath.sign(yv) * mpmath.cbrt(abs(yv)))
        assert close(law3.cdf(R(y), dps=20), ref, mpf(10) ** -19), y


def test_cubic_plus_linear_pushforward_density():
    # y = r³ + r is increasing: one real root r, f(y) = f_sc(r)/(3r² + 1)
    law3 = fp.pushforward(fp.Semicircle(0, 1), sp.Symbol("x") ** 3 + sp.Symbol("x"))
    assert law3.support() == ((-10, 10),)
    for y in ("-9.99", "-5", "-0.01", "0", "0.3", "2", "7", "9.999"):
        with mpmath.workdps(60):
            yv = exact_mpf(y)
            r = mpmath.findroot(lambda t: t**3 + t - yv, mpmath.sign(yv) * mpmath.cbrt(abs(yv)))
            ref = mpmath.sqrt(4 - r * r) / (2 * mpmath.pi) / (3 * r * r + 1)
        assert close(law3.density(R(y), dps=30), ref, mpf(10) ** -25), y


def test_quadratic_pushforward_hard_edge():
    # y = r² + r: roots r± = (−1 ± s)/2, s = sqrt(1 + 4y), |p'(r±)| = s; both in (−2, 2)
    # for −1/4 < y < 2, only r+ for 2 < y < 6.  The density blows up at the hard edge
    # −1/4 and is 0 to its left (which used to come out as 0.041: a wrong landing).
    law2 = fp.pushforward(fp.Semicircle(0, 1), sp.Symbol("x") ** 2 + sp.Symbol("x"))
    A = AlgebraicCauchy(law2.cauchy_equation())
    assert A.support() == ((R(-1, 4), 6),)
    pts = ["-0.3", "-0.251", "-0.2500001", "-0.250000000001", "-0.249", "0", "1.999", "2.001",
           "5.9", "6.5"]
    for y in pts:
        with mpmath.workdps(60):
            yv = exact_mpf(y)
            ref = mpf(0)
            if yv > mpf(-1) / 4:
                s = mpmath.sqrt(1 + 4 * yv)
                ref = sum((mpmath.sqrt(4 - r * r) / (2 * mpmath.pi) for r in ((-1 + s) / 2, (-1 - s) / 2)
                           if abs(r) < 2), mpf(0)) / s
        v = A.density(R(y), dps=25)
        assert (v == 0 and ref == 0) or close(v, ref, mpf(10) ** -22), y


def test_cdf_left_tail_relative_precision():
    # semicircle: F(x) = 1/2 + (x sqrt(4 − x²)/4 + asin(x/2))/π; tiny values near −2 are
    # still given to dps significant digits
    A = law(G**2 - z * G + 1)
    for y in ("-1.99", "-1.999999"):
        with mpmath.workdps(40):
            ref = semicircle_cdf(exact_mpf(y))
        assert close(A.cdf(R(y), dps=20), ref, mpf(10) ** -19), y


# -- next to an atom --------------------------------------------------------------------
# Semicircle ⊠ FreePoisson(1/2): atom 1/2 at 0 inside the support; the leading
# coefficient 4z² has a double root there (two roots escape like 1/(2z), only O(1)
# apart), so the full G is evaluated there through its continuous part
# (G − m/z)/(1 − m).  The old landing gave 2/π for the density near 0 (mass 1.36).
SCFP_P = 4 * G**4 * z**2 - 4 * G**3 * z + G**2 - 4 * G * z + 4


def test_semicircle_times_free_poisson_near_its_atom():
    L = fp.free_mul(fp.Semicircle(0, 1), fp.FreePoisson(R(1, 2)))
    assert L.cauchy_equation().as_expr().expand() == sp.expand(SCFP_P)
    A = law(SCFP_P)
    assert A.atoms() == ((0, R(1, 2)),)
    # the full G (no continuous-part route) and the continuous part agree where both work
    B = law(SCFP_P)
    B._near_atom = lambda xf: None
    for x in ("-0.001", "0.001", "0.1", "-1.5"):
        assert close(A.density(R(x), dps=30), B.density(R(x), dps=30), mpf(10) ** -25), x
    # the continuous part is smooth at 0: 0.45015815807855…, symmetric
    d0 = A.density(0, dps=20)
    assert abs(d0 - mpf("0.4501581580785")) < 1e-12
    for x in (R(1, 10**6), R(-27, 2 * 10**8), R(1, 10**12)):
        v = A.density(x, dps=20)
        assert v == A.density(-x, dps=20) and abs(v - d0) < abs(x), x
    assert A.density_grid([R(-1, 10**6), R(1, 10**6)], dps=20) == \
        [A.density(R(-1, 10**6), dps=20), A.density(R(1, 10**6), dps=20)]
    w = mpmath.mpc(1e-6, 1e-6)
    g = A.cauchy(w, dps=20)
    assert abs(g - mpf(1) / 2 / w) < 3
    h = A.cauchy(w.conjugate(), dps=20)
    with mpmath.workprec(400):
        assert h.real == g.real and h.imag == -g.imag              # G(z̄) = conj G(z), exactly
    with mpmath.workdps(30):
        cdf_jump = A.cdf(R(1, 10**6), dps=20) - A.cdf(R(-1, 10**6), dps=20)
        assert abs(cdf_jump - mpf(1) / 2 - 2 * mpf(10) ** -6 * d0) < 1e-15
    assert A.moments(2, dps=15) == tuple(mpf(m) for m in L.moments(2))


def test_marchenko_pastur_cauchy_next_to_its_atom():
    # MP(2): 2zG² − (1 + z)G + 1 = 0, atom 1/2 at 0 outside the support [3 − 2√2, 3 + 2√2];
    # near 0, G(x) = ((1 + x) + sqrt((1 + x)² − 8x))/(4x) ≈ 1/(2x) − 1/2 (the old landing
    # returned the other root, ≈ 1)
    A = law(mp_eq(2))
    B = law(mp_eq(2))
    B._near_atom = lambda xf: None          # the full G as well
    for x in ("-0.1", "-0.001", "-1e-8", "1e-8", "0.001", "0.1"):
        with mpmath.workdps(60):
            xv = exact_mpf(x)
            ref = ((1 + xv) + mpmath.sqrt((1 + xv) ** 2 - 8 * xv)) / (4 * xv)
        for C in (A, B):
            assert close(C.cauchy(R(x), dps=30), ref, mpf(10) ** -25), x


def test_cdf_with_transcendental_coefficients_numeric_edges():
    # attention law at β = 1: the Cauchy equation has coefficients in ℤ[e], so the support
    # edges are mpf approximations of special points, never exactly special.  They used to
    # be integrated as ordinary ends (Gauss–Legendre across the s^{1/2} edge: error 1e-9,
    # PrecisionError); they are edges now, as for the same law at rational θ.
    from freeprob.attention import Architecture, output_law
    B = Architecture(heads=8, gamma_k=R(1, 2), gamma_v=R(1, 2), gamma_o=2, beta=1)
    L = output_law(B)
    assert L.atoms() == ((0, R(1, 2)),)
    ((a, b),) = L.support(dps=20)
    assert abs(a - mpf("0.24251069911664933")) < 1e-15 and abs(b - mpf("34.97363289870593")) < 1e-13
    assert L.cdf(a - mpf(10) ** -10, dps=15) == mpf(1) / 2          # the atom at 0 only
    vals = [L.cdf(x, dps=15) for x in (R(1, 2), 1, 5)]
    assert mpf(1) / 2 < vals[0] < vals[1] < vals[2] < 1
    assert abs(vals[1] - mpf("0.587728051569954")) < 1e-14
    assert L.cdf(b + 1, dps=15) == 1
    ex = L.moments(2)
    qm = L._evaluator("x").moments(2, dps=20)
    with mpmath.workdps(40):
        for q, m in zip(qm, ex):
            assert abs(q - mpf(sp.N(m, 40))) < mpf(10) ** -18, (q, m)


def test_density_next_to_an_exact_atom_with_transcendental_coefficients():
    # Semicircle ⊠ FreePoisson(e/6): atom 1 − e/6 at 0 inside the support, coefficients in ℤ[e];
    # the continuous part is smooth at 0, so 1e-6 and 1e-4 agree to O(1e-8)
    law = fp.free_mul(fp.Semicircle(0, 1), fp.FreePoisson(sp.E / 6))
    assert law.atoms() == ((0, 1 - sp.E / 6),)
    a, b = law.density(sp.Rational(1, 10**6), dps=15), law.density(sp.Rational(1, 10**4), dps=15)
    assert a > 0.3 and abs(a - b) < 1e-6


def test_support_at_more_digits_reuses_the_test_points(monkeypatch):
    # coefficients in ℤ[e]: the support is computed per dps, its gaps decided once (the
    # density's sign at each test point does not depend on the digits asked of the edges)
    law = fp.free_mul(fp.Semicircle(0, 1), fp.FreePoisson(sp.E / 6))
    ev = law._evaluator("test")
    s15 = law.support(dps=15)
    calls = []
    real = type(ev)._density_exact_point
    monkeypatch.setattr(type(ev), "_density_exact_point", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
    s40 = law.support(dps=40)
    assert calls == [] and len(s15) == len(s40) == 1
    for (a15, b15), (a40, b40) in zip(s15, s40):
        assert abs(a15 - a40) < 1e-14 * abs(a40) and abs(b15 - b40) < 1e-14 * abs(b40)
    # the edges are ±√(2e/6·(…)): a root of the special polynomial, to 40 digits
    assert abs(float(b40) + float(a40)) < 1e-14


def test_density_float_in_chunks_continues_the_root():
    """A tabulation in chunks (``TabulatedLaw.from_law``: 8 sorted ``density_float`` calls)
    continues the root from the previous chunk's last point (``_grid_carry``) instead of
    tracking it from far up: the values agree with one call over the whole grid and with the
    closed form (Fuss–Catalan s = 2 on (0, 27/4): MP(1)⊠MP(1); MP(1/2) closed form)."""
    for P, (lo, hi) in ((z**2 * G**3 - z * G + 1, (0.0, 6.75)), (mp_eq(R(1, 2)), (1.5 - 2 ** 0.5, 1.5 + 2 ** 0.5))):
        xs = [lo + (hi - lo) * (i + 0.5) / 64 for i in range(64)]
        whole = law(P).density_float(xs)
        A, calls = law(P), []
        track = A._select_boundary
        A._select_boundary = lambda K, x: calls.append(x) or track(K, x)
        chunks = [A.density_float(xs[j:j + 8]) for j in range(0, 64, 8)]
        assert len(calls) == 1          # the first chunk's first point only
        assert A._cache["grid_tail"] is not None and A._cache["grid_tail"][1] == xs[-1]
        assert A._grid_carry([A._cache["grid_tail"][0]] * 2, [xs[-1]] * 2, A._special_floats()) is None
        flat = [v for c in chunks for v in c]
        assert all(abs(a - b) <= 1e-12 * abs(a) for a, b in zip(whole, flat))
    f = mp_density(R(1, 2))
    assert all(abs(v - float(f(mpf(x)))) <= 1e-9 * float(f(mpf(x))) for x, v in zip(xs, flat))


def test_density_float_next_to_special_points_continues_the_root():
    """Grid points that doubles put within 1e-12 of a special point (MP(1): the edge 0, a
    root of the leading coefficient, and the edge 4) are reached by continuation within
    their run, whose root is selected from far up once, at its point farthest from the
    special points (``_run_start``; it was once per point next to 0, 10–30 ms each): the
    values agree with the closed form ``√((4 − x)/x)/(2π)`` and with the pointwise
    certified density to 1e-12."""
    xs = [1e-18, 3e-17, 1e-15, 2e-14, 5e-13, 3e-12, 1e-9, 1e-6, 0.1, 1.0, 2.0, 3.9,
          4 - 1e-9, 4 - 1e-12, 4 - 4e-15]
    A, calls = law(mp_eq(1)), []
    track = A._select_boundary
    A._select_boundary = lambda K, x: calls.append(x) or track(K, x)
    vals = A.density_float(xs)
    assert calls == [2.0]
    with mpmath.workdps(40):        # (a float point is the decimal it prints as)
        exact = [float(mpmath.sqrt((4 - mpf(repr(x))) / mpf(repr(x))) / (2 * mpmath.pi)) for x in xs]
    pointwise = [float(law(mp_eq(1)).density(x)) for x in xs]
    assert all(abs(v - e) <= 1e-12 * e and abs(v - p) <= 1e-12 * p for v, e, p in zip(vals, exact, pointwise))


def test_density_float_next_to_edges_on_the_wide_path():
    """Next to an edge doubles do not give the density to ``rtol`` (``|∂_G P|`` and ``Im g``
    both small) and within 10⁻¹² of it they do not resolve the point: those points are
    polished at 128+ bits on the acb kernel (``_wide_density``) instead of the certified
    path, with the same floats as that path (MP(1/2): edges 3/2 ± √2, closed form)."""
    lo, hi = 1.5 - 2 ** 0.5, 1.5 + 2 ** 0.5
    xs = sorted([lo * (1 + 10.0 ** -k) for k in range(2, 16)] + [1.0, 2.0]
                + [hi * (1 - 10.0 ** -k) for k in range(2, 16)])
    A, certified = law(mp_eq(R(1, 2))), []
    exact_point = A._density_exact_point
    A._density_exact_point = lambda *a, **k: certified.append(a[0]) or exact_point(*a, **k)
    vals = A.density_float(xs)
    assert certified == []
    f = mp_density(R(1, 2))
    pointwise = [float(law(mp_eq(R(1, 2))).density(x)) for x in xs]
    with mpmath.workdps(40):        # (a float point is the decimal it prints as)
        exact = [float(f(mpf(repr(x)))) for x in xs]
    assert vals[0] == exact[0] == 0.0       # lo·(1 + 10⁻¹⁵) rounds onto the edge's far side
    assert all(abs(v - e) <= 1e-12 * e and abs(v - p) <= 1e-12 * p for v, e, p in zip(vals, exact, pointwise))


def test_cauchy_along_a_contour_continues_the_root():
    """Complex points in sequence (the nodes of an ellipse around the support, as the
    readout contour rule asks for them) continue the double root from the previous point
    (``_cauchy_continue``) and polish it on the acb kernel (``_polish_acb``) instead of
    tracking from far up and polishing with mpmath: the values equal the semicircle's
    closed form ``(z − √(z−2)√(z+2))/2`` and, for Free Poisson(1)⊠Free Poisson(1) (no
    closed form), the values of the old route (a fresh instance per point, tracked from
    far up, polished on the mpmath kernel), to the last digit."""
    semi = law(G**2 - z * G + 1)
    starts = []
    start = semi._start
    semi._start = lambda K, x: starts.append(x) or start(K, x)
    with mpmath.workdps(30):
        nodes = [mpmath.mpc(0.1, 0) + 2.2 * (1.3 * w + 1 / (1.3 * w)) / 2
                 for w in (mpmath.expj(2 * mpmath.pi * (k + 0.25) / 24) for k in range(24))]
        nodes += [2 + mpf(10) ** -6 * mpmath.expj(k) for k in range(1, 5)]      # round the edge
    vals = [semi.cauchy(w, dps=25) for w in nodes]
    assert len(starts) <= 2                         # the first point, and the jump to the edge
    with mpmath.workdps(40):
        for w, g in zip(nodes, vals):
            assert close(g, (w - mpmath.sqrt(w - 2) * mpmath.sqrt(w + 2)) / 2, mpf(10) ** -25)
    fc = z**2 * G**3 - z * G + 1                    # Fuss–Catalan s = 2, support [0, 27/4]
    A = law(fc)
    with mpmath.workdps(30):
        nodes = [mpmath.mpc(3.4, 0) + 3.5 * (1.2 * w + 1 / (1.2 * w)) / 2
                 for w in (mpmath.expj(2 * mpmath.pi * (k + 0.5) / 16) for k in range(16))]
    B = law(fc)
    B._polish_acb = lambda *a: None
    for dps in (15, 40):
        got = [A.cauchy(w, dps=dps) for w in nodes]
        for w, g in zip(nodes, got):
            B._cpx_last = None                      # no continuation: tracked from far up
            assert g == B.cauchy(w, dps=dps)
    # irrational coefficients (ℤ[e]: the acb rows are their rounded midpoints), round an edge
    fe = 2 * z * G**2 + (sp.E - 2 - 2 * z) * G + 2
    A, B = law(fe), law(fe)
    B._polish_acb = lambda *a: None
    with mpmath.workdps(30):                        # right edge (e + 2)/2 + √(2e): discriminant
        edge = (mpmath.e + 2) / 2 + mpmath.sqrt(2 * mpmath.e)
        nodes = [edge + mpf(10) ** -4 * mpmath.expj(2 * mpmath.pi * (k + 0.5) / 8) for k in range(8)]
    for w in nodes:
        B._cpx_last = None
        assert A.cauchy(w, dps=30) == B.cauchy(w, dps=30)


def test_an_imaginary_part_below_the_double_range_is_refused_in_one_short_line():
    # newcomer pass: Im z = 1e-350 failed after seconds with a 460-character exact rational in
    # the message; 1e-5000 raised Python's ValueError for converting a 5000-digit int to str
    for im in ("1e-350", "1e-5000"):
        for law in (fp.Semicircle(0, 1), fp.FreePoisson(1)):
            for ball in (False, True):
                with pytest.raises(fp.FreeprobValueError, match=r"`Im z` must be 0 or at least 2\.23e-308") as info:
                    law.cauchy(mpmath.mpc(2, mpmath.mpf(im)), dps=15, ball=ball)
                assert len(str(info.value)) < 300 and f"≈1.0e-{im[3:]}" in str(info.value)
    # within the double range it is computed: the semicircle at its edge, against its closed form
    w = mpmath.mpc(2, mpmath.mpf("1e-300"))
    g = fp.Semicircle(0, 1).cauchy(w, dps=15)
    with mpmath.workdps(40):
        want = (w - mpmath.sqrt(w - 2) * mpmath.sqrt(w + 2)) / 2
        assert abs(g - want) < 1e-14 and abs(g.imag - want.imag) < 1e-14 * abs(want.imag)


def test_a_long_exact_point_is_printed_short():
    from freeprob.numeric.rootkernel import _real_point
    assert repr(_real_point(sp.Rational(1, 3), "t")) == "1/3"
    assert repr(_real_point(mpmath.mpf("1e-5000"), "t")) == "≈1.0e-5000"
