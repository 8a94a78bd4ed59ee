r"""Exact moments, cumulants and transforms of freeprob laws against closed forms.

Every expected value is either a closed form from the literature (source cited next
to it) or an identity between two independent computations (e.g. the S-transform
product against the Kreweras-complement sum over non-crossing partitions of
:mod:`freeprob.core.partitions`).  Exact values are compared with ``==`` or with
``sympy.expand``/``sympy.simplify`` of the difference, never approximately.

Keys: [NS06] Nica & Speicher, *Lectures on the Combinatorics of Free Probability*
(2006); [MS17] Mingo & Speicher, *Free Probability and Random Matrices* (2017);
OEIS sequence numbers.
"""
from math import comb

import pytest
import sympy as sp

import freeprob as fp
from freeprob.core import partitions as P
from freeprob.core.series import TruncatedSeries
from freeprob.core.symbols import u, w, x, z

R = sp.Rational


# ------------------------------------------------------------------ helpers
def catalan(n):
    # OEIS A000108.
    return comb(2 * n, n) // (n + 1)


def narayana(n, j):
    # N(n, j) = C(n, j) C(n, j-1)/n, OEIS A001263.
    return comb(n, j) * comb(n, j - 1) // n


def narayana_poly(n, t):
    """Σ_{j=1}^n N(n, j) t^j (and 1 for n = 0): moments of the free Poisson law of rate t
    ([NS06] Lecture 12, Prop. 12.11, with the moment-cumulant formula)."""
    if n == 0:
        return sp.Integer(1)
    return sp.Add(*[narayana(n, j) * t**j for j in range(1, n + 1)])


def same(a, b):
    """Exact equality of two sequences of polynomials (expanded difference is 0)."""
    a, b = tuple(a), tuple(b)
    return len(a) == len(b) and all(sp.expand(sp.sympify(p) - sp.sympify(q)) == 0
                                    for p, q in zip(a, b))


def same_rational(a, b):
    """Exact equality of two sequences of rational functions."""
    a, b = tuple(a), tuple(b)
    return len(a) == len(b) and all(sp.simplify(sp.sympify(p) - sp.sympify(q)) == 0
                                    for p, q in zip(a, b))


# ------------------------------------------------------------------ semicircle
def test_standard_semicircle_moments_are_catalan_numbers():
    # [NS06] Lecture 2 (Def. 2.15 and the Catalan moments): m_{2k} = Catalan(k)
    # (OEIS A000108), odd moments vanish.
    expected = tuple(catalan(n // 2) if n % 2 == 0 else 0 for n in range(21))
    assert fp.Semicircle(0, 1).moments(20) == expected


def test_semicircle_free_cumulants_symbolic():
    # [NS06] Lecture 11, Example 11.21: κ_1 = mean, κ_2 = variance, κ_n = 0 for n >= 3.
    a, s = sp.symbols("a s")
    assert fp.Semicircle(a, s).free_cumulants(8) == (0, a, s, 0, 0, 0, 0, 0, 0)


# ------------------------------------------------------------------ free Poisson
def test_free_poisson_moments_are_narayana_polynomials():
    # [NS06] Prop. 12.11 (free cumulants κ_n = t) + the moment-cumulant formula:
    # m_n = Σ_{π∈NC(n)} t^{|π|} = Σ_j N(n, j) t^j (Narayana numbers, OEIS A001263).
    t = sp.Symbol("t")
    expected = tuple(narayana_poly(n, t) for n in range(13))
    assert same(fp.FreePoisson(t).moments(12), expected)


def test_free_poisson_free_cumulants_symbolic():
    # [NS06] Prop. 12.11: κ_n(free Poisson of rate t, jump a) = t a^n.
    t, a = sp.symbols("t a")
    assert same(fp.FreePoisson(t).free_cumulants(10), (0,) + (t,) * 10)
    assert same(fp.FreePoisson(t, a).free_cumulants(10), (0,) + tuple(t * a**n for n in range(1, 11)))


def test_marchenko_pastur_moments():
    # MP(c) = FreePoisson(1/c, jump c): m_n = c^n Σ_j N(n, j) c^{-j} = Σ_j N(n, j) c^{n-j},
    # and by the symmetry N(n, j) = N(n, n+1-j) this is Σ_j N(n, j) c^{j-1}
    # ([MS17] §2.2; OEIS A001263).
    c = sp.Symbol("c")
    expected = (1,) + tuple(sp.Add(*[narayana(n, j) * c ** (j - 1) for j in range(1, n + 1)])
                            for n in range(1, 11))
    got = fp.MarchenkoPastur(c).moments(10)
    assert same_rational(got, expected)
    # mean 1 and variance c, as documented
    assert got[1] == 1
    assert sp.expand(got[2] - got[1] ** 2 - c) == 0


# ------------------------------------------------------------------ Fuss–Catalan
@pytest.mark.parametrize("s, oeis", [(2, "A001764"), (3, "A002293"), (4, "A002294")])
def test_fuss_catalan_free_poisson_powers(s, oeis):
    # π_1^{⊠s} has moments C((s+1)n, n)/(s n + 1): Mlotkowski, "Fuss-Catalan numbers in
    # noncommutative probability", Doc. Math. 15 (2010); Penson & Życzkowski, Phys. Rev.
    # E 83, 061118 (2011).  OEIS A001764 (s=2), A002293 (s=3), A002294 (s=4).
    law = fp.free_mul(*[fp.FreePoisson(1)] * s)
    expected = tuple(comb((s + 1) * n, n) // (s * n + 1) for n in range(16))
    assert law.moments(15) == expected


# ------------------------------------------------------------------ arcsine
def test_two_free_symmetric_bernoullis_give_arcsine():
    # [NS06] Example 12.8: the free convolution of two symmetric Bernoulli laws is the
    # arcsine law on [-2, 2], m_{2k} = C(2k, k) (OEIS A000984).
    law = fp.free_add(fp.Bernoulli(), fp.Bernoulli())
    expected = tuple(comb(n, n // 2) if n % 2 == 0 else 0 for n in range(17))
    assert law.moments(16) == expected


# ------------------------------------------------------------------ S-transform
def test_free_poisson_s_transform_symbolic():
    # [NS06] Lecture 18 / [MS17] §2.6: S(u) = 1/(u + t) for rate t, jump 1
    # (also freeprob.core.conventions).
    t = sp.Symbol("t")
    law = fp.FreePoisson(t)
    assert law.s_transform() == 1 / (t + u)
    expected = sp.series(1 / (u + t), u, 0, 8).removeO()
    got = law.s_series(8).coefficients()
    assert len(got) == 8
    assert all(sp.simplify(got[k] - expected.coeff(u, k)) == 0 for k in range(8))


S_PAIRS = [
    (fp.FreePoisson(R(1, 2)), fp.Atomic([1, 3], [R(1, 3), R(2, 3)])),
    (fp.Semicircle(2, 1), fp.FreePoisson(3, R(1, 2))),
    (fp.FreePoisson(2), fp.FreePoisson(R(1, 3), 5)),
]


@pytest.mark.parametrize("a, b", S_PAIRS)
def test_s_transform_is_multiplicative(a, b):
    # S_{μ⊠ν} = S_μ S_ν ([NS06] Thm. 18.17; [MS17] §2.6).
    assert fp.free_mul(a, b).s_series(8) == a.s_series(8) * b.s_series(8)


@pytest.mark.parametrize("a, b", S_PAIRS)
def test_free_mul_moments_match_kreweras_route(a, b):
    # Independent route: m_n(ab) = Σ_{π∈NC(n)} κ_π[a] m_{K(π)}[b] ([NS06] Thm. 14.4,
    # Remark 14.5), evaluated by enumeration in freeprob.core.partitions.
    expected = P.free_mul_moments_nc(a.free_cumulants(10), b.moments(10))
    assert fp.free_mul(a, b).moments(10) == expected


def test_free_mul_zero_mean_factor_matches_kreweras_route():
    # A centred semicircle has no S-transform; the Kreweras formula ([NS06] Thm. 14.4)
    # does not need one.  Both orders of the factors must agree with it.
    t = sp.Symbol("t")
    a, b = fp.FreePoisson(t), fp.Semicircle(0, 1)
    got = fp.free_mul(a, b).moments(10)
    assert same(got, P.free_mul_moments_nc(a.free_cumulants(10), b.moments(10)))
    assert same(got, P.free_mul_moments_nc(b.free_cumulants(10), a.moments(10)))
    assert same(fp.free_mul(b, a).moments(10), got)


def test_free_mul_two_free_poissons_symbolic():
    # Kreweras route with κ_n(a) = t1 for all n and the Narayana moments of b
    # ([NS06] Prop. 12.11, Thm. 14.4); ⊠ is commutative, so the result is symmetric.
    t1, t2 = sp.symbols("t1 t2")
    got = fp.free_mul(fp.FreePoisson(t1), fp.FreePoisson(t2)).moments(10)
    kappa = (0,) + (t1,) * 10
    m_b = tuple(narayana_poly(n, t2) for n in range(11))
    assert same(got, P.free_mul_moments_nc(kappa, m_b))
    assert all(sp.expand(p).is_polynomial(t1, t2) for p in got)
    swapped = tuple(p.subs({t1: t2, t2: t1}, simultaneous=True) for p in got)
    assert same(got, swapped)


# ------------------------------------------------------------------ R-transform
R_PAIRS = [
    (fp.Semicircle(1, 2), fp.FreePoisson(R(1, 2), 3)),
    (fp.Atomic([-1, 2], [R(1, 3), R(2, 3)]), fp.Bernoulli()),
    (fp.FreePoisson(2), fp.CompoundFreePoisson(3, fp.Atomic([1, -2]))),
]


@pytest.mark.parametrize("a, b", R_PAIRS)
def test_r_transform_is_additive(a, b):
    # R_{μ⊞ν} = R_μ + R_ν ([NS06] Thm. 16.15 / Prop. 12.3; [MS17] §2.4).
    assert fp.free_add(a, b).r_series(9) == a.r_series(9) + b.r_series(9)


def test_free_add_of_semicircles_is_semicircle():
    # Semicircle R(w) = σ² w, so σ1² ⊞ σ2² is the semicircle of variance σ1² + σ2²
    # ([NS06] Lecture 12; [MS17] §2.4).
    s1, s2 = sp.symbols("s1 s2")
    law = fp.free_add(fp.Semicircle(0, s1), fp.Semicircle(0, s2))
    assert sp.expand(law.r_transform() - (s1 + s2) * w) == 0
    assert same(law.moments(10), fp.Semicircle(0, s1 + s2).moments(10))
    # and the sum of the variances is what the moments of order 2 say
    assert sp.expand(law.moments(2)[2] - s1 - s2) == 0


@pytest.mark.parametrize("law", [fp.FreePoisson(2), fp.Semicircle(1, 3),
                                 fp.Atomic([0, 1, 3], [R(1, 2), R(1, 4), R(1, 4)])])
def test_r_transform_defining_identity(law):
    # G(R(w) + 1/w) = w ([NS06] Thm. 16.15/Remark 16.18; [MS17] §2.4).  With ζ = 1/z,
    # ζ = 1/(R(w) + 1/w) = w/(1 + w R(w)), so G_ζ(w/(1 + w R(w))) = w + O(w^n).
    n = 12
    g = law.cauchy_series(n)                      # Σ m_k ζ^{k+1}
    r = law.r_series(n)
    wser = TruncatedSeries.generator(n)
    inner = wser / (1 + wser * r)
    comp = g.compose(inner)
    assert comp.order == n
    assert comp.coefficients() == (0, 1) + (0,) * (n - 2)


# ------------------------------------------------------------------ classical cumulants
# OEIS A180874 (Lassalle's sequence), a(1..6) = 1, 1, 5, 56, 1092, 32670: the classical
# cumulants of the standard semicircle are c_{2n} = (-1)^{n-1} a(n) (M. Lassalle, "Two
# integer sequences related to Catalan numbers", JCTA 119 (2012); M. Josuat-Vergès,
# "Cumulants of the q-semicircular law, Tutte polynomials, and heaps", Canad. J. Math.
# 65 (2013), q = 0).
LASSALLE = (1, 1, 5, 56, 1092, 32670)


def test_semicircle_classical_cumulants_are_signed_lassalle_numbers():
    expected = [0] * 13
    for n, a in enumerate(LASSALLE, start=1):
        expected[2 * n] = (-1) ** (n - 1) * a
    assert fp.Semicircle(0, 1).classical_cumulants(12) == tuple(expected)


def test_semicircle_classical_cumulants_partition_route():
    # Independent route: Möbius inversion over all set partitions ([LS59] Leonov &
    # Shiryaev), by enumeration in freeprob.core.partitions.
    m = fp.Semicircle(0, 1).moments(10)
    assert P.moments_to_classical_cumulants_partitions(m) == fp.Semicircle(0, 1).classical_cumulants(10)


def test_lassalle_recurrence():
    # The defining recurrence of A180874 (R. J. Mathar's form on the OEIS page):
    # a(n) = (-1)^{n-1} (C_n + Σ_{j=1}^{n-1} (-1)^j C(2n-1, 2j-1) a(j) C_{n-j}),
    # checked against the library's values.
    c = fp.Semicircle(0, 1).classical_cumulants(12)
    a = {}
    for n in range(1, 7):
        a[n] = (-1) ** (n - 1) * (catalan(n) + sum((-1) ** j * comb(2 * n - 1, 2 * j - 1) * a[j]
                                                   * catalan(n - j) for j in range(1, n)))
        assert c[2 * n] == (-1) ** (n - 1) * a[n]
    assert tuple(a.values()) == LASSALLE


# ------------------------------------------------------------------ closed-form transforms
def test_semicircle_r_transform_closed_form():
    # [NS06] Lecture 16 / [MS17] §2.4: R(w) = Σ κ_{n+1} w^n = mean + variance w.
    a, s = sp.symbols("a s")
    assert sp.expand(fp.Semicircle(a, s).r_transform() - (a + s * w)) == 0


def test_free_poisson_r_transform_closed_form():
    # [NS06] Prop. 12.11 / [MS17] §2.4: R(w) = t a/(1 - a w), i.e. κ_{n+1} = t a^{n+1}.
    t, a = sp.symbols("t a")
    law = fp.FreePoisson(t, a)
    assert sp.simplify(law.r_transform() - t * a / (1 - a * w)) == 0
    ser = sp.series(law.r_transform(), w, 0, 8).removeO()
    assert same([ser.coeff(w, k) for k in range(8)], law.r_series(8).coefficients())


@pytest.mark.parametrize("law", [
    fp.Semicircle(1, 2),
    fp.FreePoisson(3),
    fp.FreePoisson(R(1, 2), 2),
    fp.Atomic([1, 2, 5], [R(1, 2), R(1, 4), R(1, 4)]),
    fp.dilate(fp.FreePoisson(2), -3),
])
def test_cauchy_transform_expansion_at_infinity(law):
    # G(z) = Σ_{n≥0} m_n z^{-n-1} at z = ∞ ([MS17] §2.1, freeprob.core.conventions): the
    # closed form, expanded in ζ = 1/z, must reproduce cauchy_series term by term.
    n = 7
    zeta = sp.Symbol("zeta", positive=True)
    ser = sp.series(law.cauchy_transform().subs(z, 1 / zeta), zeta, 0, n).removeO()
    expected = law.cauchy_series(n).coefficients()
    assert all(sp.simplify(ser.coeff(zeta, k) - expected[k]) == 0 for k in range(n))


@pytest.mark.parametrize("law, x0, density", [
    # semicircle of mean a, variance σ²: sqrt(4σ² - (x-a)²)/(2πσ²) ([NS06] Def. 2.15)
    (fp.Semicircle(1, 2), 1, sp.sqrt(8) / (4 * sp.pi)),
    (fp.Semicircle(1, 2), 2, sp.sqrt(7) / (4 * sp.pi)),
    # free Poisson rate λ: sqrt((b - x)(x - a))/(2πx), a,b = (1 ∓ √λ)² ([NS06] Prop. 12.11)
    (fp.FreePoisson(3), 4, sp.sqrt(12) / (8 * sp.pi)),
])
def test_cauchy_transform_stieltjes_inversion_sign(law, x0, density):
    # Convention G(z) = ∫ dμ/(z - x): the density is -Im G(x + i0)/π; the principal
    # branch of the documented closed form gives the boundary value from above.
    g = law.cauchy_transform().subs(z, x0)
    assert sp.simplify(-sp.im(g) / sp.pi - density) == 0


# ------------------------------------------------------------------ dilate / shift
def test_dilate_moments():
    # m_n(cX) = c^n m_n(X).
    c = sp.Symbol("c")
    base = fp.FreePoisson(R(1, 2), 3)
    assert same(fp.dilate(base, c).moments(8), tuple(c**n * m for n, m in enumerate(base.moments(8))))
    assert fp.dilate(base, -2).moments(8) == tuple((-2) ** n * m for n, m in enumerate(base.moments(8)))


def test_shift_moments_binomial():
    # m_n(X + a) = Σ_k C(n, k) a^{n-k} m_k(X).
    a = sp.Symbol("a")
    base = fp.Atomic([-1, R(1, 2), 2], [R(1, 6), R(1, 3), R(1, 2)])
    m = base.moments(8)
    expected = tuple(sp.Add(*[comb(n, k) * a ** (n - k) * m[k] for k in range(n + 1)]) for n in range(9))
    assert same(fp.shift(base, a).moments(8), expected)


def test_scalar_sugar_matches_dilate_and_shift():
    law = fp.FreePoisson(R(1, 2), 3)
    assert (2 * law).moments(8) == fp.dilate(law, 2).moments(8)
    assert (law * 2).moments(8) == fp.dilate(law, 2).moments(8)
    assert (law + 1).moments(8) == fp.shift(law, 1).moments(8)
    assert (1 + law).moments(8) == fp.shift(law, 1).moments(8)
    assert (law - R(1, 3)).moments(8) == fp.shift(law, R(-1, 3)).moments(8)
    assert (-law).moments(8) == fp.dilate(law, -1).moments(8)
    with pytest.raises(TypeError, match="free_add"):
        law + law
    with pytest.raises(TypeError, match="free_mul"):
        law * law


# ------------------------------------------------------------------ pushforward
def test_square_of_semicircle_is_free_poisson():
    # [NS06] Lecture 12: s² for a standard semicircular s is free Poisson of rate 1
    # (m_n(s²) = m_{2n}(s) = Catalan(n) = Σ_j N(n, j), OEIS A000108).
    assert fp.pushforward(fp.Semicircle(0, 1), x**2).moments(12) == fp.FreePoisson(1).moments(12)


def test_pushforward_symbolic_coefficients():
    # m_n(p_# μ) = ∫ p(x)^n dμ(x): expand p^n and replace x^j by m_j(μ).
    a, b = sp.symbols("a b")
    base = fp.Semicircle(1, 2)
    p = a * x**2 + b * x + 1
    n = 5
    m = base.moments(2 * n)
    expected = []
    for k in range(n + 1):
        poly = sp.Poly(sp.expand(p**k), x)
        expected.append(sp.Add(*[c * m[j] for (j,), c in poly.terms()]))
    assert same(fp.pushforward(base, p).moments(n), expected)


# ------------------------------------------------------------------ mixture / companion
def test_mixture_moments_weighted_sum():
    q = sp.Symbol("q")
    A, B = fp.Semicircle(1, 2), fp.FreePoisson(3)
    got = fp.mixture([A, B], [q, 1 - q]).moments(8)
    expected = tuple(q * ma + (1 - q) * mb for ma, mb in zip(A.moments(8), B.moments(8)))
    assert same(got, expected)


def test_rectangular_companion_of_marchenko_pastur():
    # XᵀX/n vs XXᵀ/n share their non-zero eigenvalues: c·MP(c) + (1-c)δ_0 is the free
    # Poisson law of rate c ([MS17] §4.5; freeprob.core.conventions, "Marchenko–Pastur").
    c = sp.Symbol("c")
    assert same_rational(fp.rectangular_companion(fp.MarchenkoPastur(c), c).moments(10),
                         fp.FreePoisson(c).moments(10))


# ------------------------------------------------------------------ compound free Poisson
def test_compound_free_poisson_with_dirac_jump_is_free_poisson():
    # [NS06] Lecture 12 (Prop. 12.16): κ_n(π(ν, t)) = t m_n(ν); ν = δ_a gives t a^n.
    t, a = sp.symbols("t a")
    assert same(fp.CompoundFreePoisson(t, fp.Dirac(a)).moments(8), fp.FreePoisson(t, a).moments(8))


def test_compound_free_poisson_rate_one_is_free_mul():
    # For rate 1, κ_n(π_1 ⊠ ν) = Σ_{π∈NC(n)} κ_π(π_1) κ_{K(π)}(ν) = Σ_σ κ_σ(ν) = m_n(ν)
    # ([NS06] Thm. 14.4 with κ(π_1) ≡ 1), the cumulants of π(ν, 1) ([NS06] Prop. 12.16).
    nu = fp.Atomic([1, 2], [R(1, 2), R(1, 2)])
    cfp = fp.CompoundFreePoisson(1, nu)
    assert cfp.moments(10) == fp.free_mul(fp.FreePoisson(1), nu).moments(10)
    assert P.free_mul_cumulants_nc((0,) + (1,) * 10, nu.free_cumulants(10)) == (0,) + nu.moments(10)[1:]
    assert cfp.free_cumulants(10) == (0,) + nu.moments(10)[1:]


# ------------------------------------------------------------------ free powers
def test_free_power_of_semicircle_has_variance_t():
    # μ^{⊞t} has free cumulants t κ_n ([NS06] Cor. 14.13); for the standard semicircle
    # this is the semicircle of variance t.
    t = sp.Symbol("t")
    law = fp.free_power(fp.Semicircle(0, 1), t)
    m = law.moments(8)
    assert m[1] == 0
    assert sp.expand(m[2] - t) == 0
    assert same(m, fp.Semicircle(0, t).moments(8))


def test_free_power_of_free_poisson():
    # π_1^{⊞3} = π_3 (rates add, [NS06] Prop. 12.11).
    assert fp.free_power(fp.FreePoisson(1), 3).moments(12) == fp.FreePoisson(3).moments(12)


# ------------------------------------------------------------------ closed forms vs series
_AT = fp.Atomic([1, 3], [R(1, 3), R(2, 3)])
CLOSED = {
    "dirac": fp.Dirac(R(3, 2)),
    "semicircle": fp.Semicircle(1, 2),
    "free_poisson": fp.FreePoisson(R(1, 2), 3),
    "free_poisson_negative_jump": fp.FreePoisson(2, -1),
    "compound_atomic": fp.CompoundFreePoisson(2, _AT),
    "compound_free_poisson_jump": fp.CompoundFreePoisson(2, fp.FreePoisson(3)),
    "free_add": fp.free_add(fp.Semicircle(1, 2), fp.FreePoisson(R(1, 2), 3)),
    "free_mul": fp.free_mul(fp.FreePoisson(R(1, 2)), fp.FreePoisson(3, 2)),
    "free_power": fp.free_power(fp.FreePoisson(2), R(1, 3)),
    "shift": fp.shift(fp.FreePoisson(3), R(-3, 2)),
    "dilate": fp.dilate(fp.FreePoisson(R(1, 2), 3), R(-2, 3)),
    "companion": fp.rectangular_companion(fp.FreePoisson(R(1, 2)), 2),
    "companion_small": fp.rectangular_companion(fp.FreePoisson(3), R(1, 2)),
}


def _series_coeffs(expr, var, n):
    ser = sp.series(expr, var, 0, n).removeO()
    return [ser.coeff(var, k) for k in range(n)]


@pytest.mark.parametrize("law", list(CLOSED.values()), ids=list(CLOSED))
def test_closed_r_and_s_transforms_match_series(law):
    # Every available closed form (R: [NS06] Lecture 16; S: [NS06] Lecture 18, with
    # S_{cX} = S_X/c, S of a compound free Poisson law S_ν(u/t)/(t + u), and of
    # cμ + (1-c)δ_0: (1+u)/(c+u) S_μ(u/c)) must expand to the series computed from the
    # cumulants/moments.
    n = 6
    checked = 0
    for closed, series, var in (("r_transform", "r_series", w), ("s_transform", "s_series", u)):
        try:
            expr = getattr(law, closed)()
        except fp.NotAvailable:
            continue
        got = getattr(law, series)(n).coefficients()
        assert all(sp.simplify(a - b) == 0 for a, b in zip(_series_coeffs(expr, var, n), got)), closed
        checked += 1
    assert checked >= 1
