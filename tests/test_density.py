"""Densities, edges, atoms, cdf and quantiles of laws through their Cauchy equations
(issue 3), against closed forms from the literature.

Sources: Marchenko–Pastur density and edges ([MS17] §2.2; theory.md §1); Fuss–Catalan
densities in the Haagerup–Möller parametrization (U. Haagerup, S. Möller, "The law of
large numbers for the free multiplicative convolution", 2013; checked in this file to
integrate to 1 with Fuss–Catalan moments); the arcsine law as Bernoulli ⊞ Bernoulli
([NS06] Example 12.8); the free product of two projections of trace 1/2 (law of pqp:
½δ_0 + density 1/(2π√(x(1−x))), [NS06] Example 14.? / Voiculescu–Dykema–Nica).
"""
import mpmath
import pytest
import sympy as sp

import freeprob as fp
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.numeric import AlgebraicCauchy
from freeprob.core.symbols import G, x, z

half = sp.Rational(1, 2)


def mpf(v):
    """An exact sympy number or mpmath number as mpf at the current precision."""
    return mpmath.mpf(str(sp.N(v, 60))) if isinstance(v, sp.Basic) else +mpmath.mpf(v)


@pytest.mark.parametrize("c", [half, 2, 1])
def test_marchenko_pastur_density_edges_and_atom(c):
    law = fp.MarchenkoPastur(c)
    a, b = (1 - sp.sqrt(c)) ** 2, (1 + sp.sqrt(c)) ** 2
    (lo, hi), = law.support(dps=30)
    assert sp.simplify(sp.sympify(lo) - a) == 0 and sp.simplify(sp.sympify(hi) - b) == 0
    atoms = law.atoms(dps=30)
    if c > 1:
        assert len(atoms) == 1 and atoms[0][0] == 0 and sp.simplify(sp.sympify(atoms[0][1]) - (1 - 1 / sp.sympify(c))) == 0
    else:
        assert atoms == ()
    with mpmath.workdps(30):
        A, B = mpf(a), mpf(b)
        pts = [A + (B - A) * mpmath.mpf(k) / 7 for k in range(1, 7)]
        got = law.density(pts, dps=30)
        for xx, d in zip(pts, got):
            exact = mpmath.sqrt((B - xx) * (xx - A)) / (2 * mpmath.pi * mpf(c) * xx)
            assert abs(d - exact) < mpmath.mpf(10) ** -27 * exact
        assert law.density(B + 1, dps=30) == 0 and law.density(-1, dps=30) == 0


def _haagerup_moller(s, n, dps):
    """n points (x, density) of MP(1)^{⊠s} from the Haagerup–Möller parametrization."""
    with mpmath.workdps(dps + 10):
        X = lambda p: mpmath.sin((s + 1) * p) ** (s + 1) / (mpmath.sin(p) * mpmath.sin(s * p) ** s)  # noqa: E731
        F = lambda p: mpmath.sin(p) ** 2 * mpmath.sin(s * p) ** (s - 1) / (mpmath.pi * mpmath.sin((s + 1) * p) ** s)  # noqa: E731
        phis = [mpmath.pi / (s + 1) * (k + mpmath.mpf(1) / 2) / n for k in range(n)]
        pts = sorted((X(p), F(p)) for p in phis)
    return pts


def test_haagerup_moller_parametrization_is_a_probability_law_with_fuss_catalan_moments():
    with mpmath.workdps(20):
        for s in (2, 3):
            X = lambda p: mpmath.sin((s + 1) * p) ** (s + 1) / (mpmath.sin(p) * mpmath.sin(s * p) ** s)  # noqa: E731
            F = lambda p: mpmath.sin(p) ** 2 * mpmath.sin(s * p) ** (s - 1) / (mpmath.pi * mpmath.sin((s + 1) * p) ** s)  # noqa: E731
            for k in range(4):
                val = mpmath.quad(lambda p: X(p) ** k * F(p) * abs(mpmath.diff(X, p)), [0, mpmath.pi / (s + 1)])
                assert abs(val - mpmath.binomial((s + 1) * k, k) / (s * k + 1)) < 1e-15


@pytest.mark.parametrize("s", [2, 3])
def test_fuss_catalan_density_at_1000_points_has_no_wrong_branch(s):
    law = fp.free_mul(*[fp.FreePoisson(1)] * s)
    pts = _haagerup_moller(s, 1000, 30)
    got = law.density([p for p, _ in pts], dps=30)
    with mpmath.workdps(40):
        wrong = [p for (p, f), d in zip(pts, got) if abs(d - f) > mpmath.mpf(10) ** -20 * f]
    assert wrong == []
    (lo, hi), = law.support(dps=30)
    assert sp.sympify(lo) == 0 and sp.simplify(sp.sympify(hi) - sp.Rational((s + 1) ** (s + 1), s**s)) == 0


def test_arcsine_law_from_two_bernoullis():
    law = fp.free_add(fp.Bernoulli(), fp.Bernoulli())
    with mpmath.workdps(30):
        for xx in (mpmath.mpf("-1.9"), mpmath.mpf("-0.3"), mpmath.mpf(1) / 3, mpmath.mpf("1.99")):
            exact = 1 / (mpmath.pi * mpmath.sqrt(4 - xx**2))
            assert abs(law.density(xx, dps=30) - exact) < mpmath.mpf(10) ** -27 * exact
    (lo, hi), = law.support(dps=30)
    assert (sp.sympify(lo), sp.sympify(hi)) == (-2, 2)
    assert law.atoms(dps=30) == ()


def test_free_product_of_two_projections_of_trace_one_half():
    p = fp.Bernoulli(half, 0, 1)
    law = fp.free_mul(p, p)
    atoms = law.atoms(dps=30)
    assert len(atoms) == 1 and atoms[0][0] == 0 and sp.sympify(atoms[0][1]) == half
    with mpmath.workdps(30):
        for xx in (mpmath.mpf("0.01"), mpmath.mpf(1) / 3, mpmath.mpf("0.97")):
            exact = 1 / (2 * mpmath.pi * mpmath.sqrt(xx * (1 - xx)))
            assert abs(law.density(xx, dps=30) - exact) < mpmath.mpf(10) ** -27 * exact
        assert abs(law.cdf(half, dps=30) - mpmath.mpf(3) / 4) < mpmath.mpf(10) ** -25
        assert law.quantile(mpmath.mpf("0.25"), dps=30) == 0          # inside the atom's jump


def test_semicircle_plus_free_poisson_edges_are_real_roots_of_the_discriminant():
    law = fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(half))
    P = law.cauchy_equation()
    disc = sp.Poly(sp.discriminant(P, G), z)
    edges = [e for iv in law.support(dps=30) for e in iv]
    assert len(edges) >= 2
    with mpmath.workdps(40):
        roots = [mpmath.mpf(str(sp.N(r, 40))) for r in sp.real_roots(disc)]
        for e in edges:
            assert min(abs(mpf(e) - r) for r in roots) < mpmath.mpf(10) ** -25


@pytest.mark.parametrize("law", [
    fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(half)),
    fp.free_mul(fp.Bernoulli(half, 0, 1), fp.Bernoulli(half, 0, 1)),
], ids=["sc+mp", "projections"])
def test_mass_and_moments_by_quadrature_equal_exact_moments(law):
    # quadrature of the density (edge-adapted, freeprob.numeric) plus the atoms, against
    # the exact moments of the series route
    exact = law.moments(4)
    quad = AlgebraicCauchy(law.cauchy_equation()).moments(4, dps=30)
    with mpmath.workdps(30):
        for k in range(5):
            assert abs(quad[k] - mpf(exact[k])) < mpmath.mpf(10) ** -25 * max(1, abs(mpf(exact[k])))


def test_cubic_pushforward_density_is_the_change_of_variables_of_the_semicircle():
    # Y = X³, X ~ semicircle(0, 1): f_Y(y) = f_X(y^{1/3}) / (3 y^{2/3}) on (−8, 8)
    law = fp.pushforward(fp.Semicircle(0, 1), x**3)
    assert [tuple(map(sp.nsimplify, iv)) for iv in law.support()] == [(-8, 8)]
    with mpmath.workdps(40):
        for y in ["-7.5", "-2", "0.001", "0.5", "3", "7.99"]:
            yv = mpmath.mpf(y)
            r = mpmath.cbrt(abs(yv))
            expect = mpmath.sqrt(4 - r**2) / (2 * mpmath.pi) / (3 * r**2)
            got = law.density(sp.Rational(y), dps=30)
            assert abs(got - expect) <= mpmath.mpf(10) ** -28 * expect, y


def test_density_is_nonnegative_and_stable_in_precision():
    law = fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(half))
    pts = [mpmath.mpf(k) / 10 for k in range(-30, 40)]
    lo = law.density(pts, dps=30)
    hi = law.density(pts, dps=50)
    assert all(v >= 0 for v in lo)
    with mpmath.workdps(60):
        for a, b in zip(lo, hi):
            assert a == b == 0 or abs(a - b) <= mpmath.mpf(10) ** -29 * abs(b)


def test_cauchy_transform_in_the_upper_half_plane():
    law = fp.MarchenkoPastur(half)
    with mpmath.workdps(30):
        for zz in (mpmath.mpc(1, 1), mpmath.mpc(-2, "0.1"), mpmath.mpc(3, 5)):
            g = law.cauchy(zz, dps=30)
            assert g.imag < 0
            # closed form for MP(c): c z G² + (1 − c − z) G + 1 = 0 (theory.md §1)
            assert abs(half * zz * g**2 + (1 - half - zz) * g + 1) < mpmath.mpf(10) ** -25


def test_bad_input():
    law = fp.MarchenkoPastur(half)
    with pytest.raises(FreeprobValueError, match="dps"):
        law.density(1, dps=0)
    with pytest.raises(FreeprobValueError):
        law.density(1 + 1j, dps=15)
    with pytest.raises(FreeprobValueError, match=r"\[0, 1\]"):
        law.quantile(1.5, dps=15)
    with pytest.raises(NotAvailable):
        fp.pushforward(fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(1)), x**3).density(1, dps=15)
    with pytest.raises(FreeprobValueError, match="free symbols"):
        fp.FreePoisson(sp.Symbol("t")).density(1, dps=15)


def test_density_takes_a_numpy_array_as_its_points():
    """The newcomer's report: a sorted numpy array was refused ("rtol= takes a sorted sequence
    of points"; with dps: "`x` must be a real number"); it is the sequence of its points."""
    import numpy as np
    import freeprob as fp
    law, xs = fp.FreePoisson(1), [0.5, 1.0, 3.5]
    assert law.density(np.array(xs), rtol=1e-10) == law.density(xs, rtol=1e-10)
    assert law.density(np.array(xs), dps=20) == law.density(xs, dps=20)
