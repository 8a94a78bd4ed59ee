"""Exact Cauchy equations (freeprob.laws.algebraic): each equation is checked against the
Cauchy series built from the exact moments (an independent route: moments come from
cumulant/S-transform series, the equation from resultants), is irreducible, and
matches closed forms from the literature where one is known.
"""
import mpmath
import pytest
import sympy as sp

import freeprob as fp
from freeprob.errors import NotAvailable
from freeprob.core.series import TruncatedSeries
from freeprob.core.symbols import G, x, z

half = sp.Rational(1, 2)
t, t1, t2 = sp.symbols("t t1 t2", positive=True)

CATALOGUE = {
    "atomic": fp.Atomic([0, 1, 3], [half, sp.Rational(1, 3), sp.Rational(1, 6)]),
    "dirac": fp.Dirac(2),
    "semicircle": fp.Semicircle(1, 2),
    "free_poisson": fp.FreePoisson(half, 3),
    "mp2": fp.MarchenkoPastur(2),
    "compound_atomic": fp.CompoundFreePoisson(2, fp.Atomic([1, 3])),
    "compound_algebraic": fp.CompoundFreePoisson(half, fp.Semicircle(2, 1)),
    "free_add": fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(half)),
    "free_add3": fp.free_add(fp.Bernoulli(), fp.Bernoulli(), fp.Bernoulli()),
    "free_mul": fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(2)),
    "free_mul_zero_mean": fp.free_mul(fp.FreePoisson(2), fp.Semicircle(0, 1)),
    "fuss_catalan3": fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(1), fp.FreePoisson(1)),
    "free_power": fp.free_power(fp.FreePoisson(half), 3),
    "shift": fp.shift(fp.FreePoisson(2), -1),
    "dilate": fp.dilate(fp.Semicircle(1, 1), -3),
    "mixture": fp.mixture([fp.Semicircle(0, 1), fp.FreePoisson(1)], [sp.Rational(1, 3), sp.Rational(2, 3)]),
    "companion": fp.rectangular_companion(fp.MarchenkoPastur(half), half),
    "pushforward2": fp.pushforward(fp.FreePoisson(half), 2 * x**2 + x),
    "pushforward3": fp.pushforward(fp.Semicircle(0, 1), x**3 + x),
    "pushforward3_mp": fp.pushforward(fp.MarchenkoPastur(half), x**3 - 2 * x),
    "nested": fp.free_mul(fp.shift(fp.dilate(fp.FreePoisson(2), half), 1), fp.FreePoisson(half)),
    "symbolic": fp.free_mul(fp.FreePoisson(t1), fp.FreePoisson(t2)),
}


def residual(P, law, order):
    """P(G(z), z)·z^{-deg_z P} as an exact series in ζ = 1/z (order terms)."""
    ring = law._exact_ring()
    Gs = law.cauchy_series(order + 2)
    dz = sp.degree(P, z)
    total = TruncatedSeries._raw([ring.zero], order, ring)
    for (i, j), c in P.terms():
        term = (Gs ** i).shift(dz - j) * ring.convert(c)
        total = total + term.truncate(order)
    return total.coefficients()


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_equation_is_satisfied_by_the_cauchy_series(name):
    law = CATALOGUE[name]
    P = law.cauchy_equation()
    assert P.gens == (G, z)
    assert sp.degree(P, G) >= 1
    order = 14 if law.free_symbols else 30
    assert all(c == 0 for c in residual(P, law, order))


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_equation_is_irreducible(name):
    P = CATALOGUE[name].cauchy_equation()
    _, factors = sp.factor_list(P)
    assert len(factors) == 1 and factors[0][1] == 1


def test_closed_form_equations():
    # [NS06] Lecture 12: semicircle σ²G² − (z − a)G + 1; free Poisson rate λ: zG² + (λ − 1 − z)G + 1
    assert fp.Semicircle(0, 1).cauchy_equation().as_expr() == G**2 - G * z + 1
    P = fp.FreePoisson(t).cauchy_equation().as_expr()
    assert sp.expand(P - (z * G**2 + (t - 1 - z) * G + 1)) == 0
    # Fuss–Catalan (Mlotkowski 2010): MP(1)^{⊠s} has z^s G^{s+1} − zG + 1 = 0
    assert CATALOGUE["fuss_catalan3"].cauchy_equation().as_expr() == G**4 * z**3 - G * z + 1
    # arcsine law on [−2, 2]: G = 1/sqrt(z² − 4)
    arcsine = fp.free_add(fp.Bernoulli(), fp.Bernoulli()).cauchy_equation().as_expr()
    assert sp.expand(arcsine - ((z**2 - 4) * G**2 - 1)) == 0
    # two free projections of trace 1/2: G = 1/(2z) + 1/(2 sqrt(z(z − 1)))
    pq = fp.free_mul(fp.Bernoulli(half, 0, 1), fp.Bernoulli(half, 0, 1)).cauchy_equation().as_expr()
    Gpq = 1 / (2 * z) + 1 / (2 * sp.sqrt(z * (z - 1)))
    assert sp.simplify(pq.subs(G, Gpq)) == 0
    # the law of X² for a standard semicircle X is free Poisson(1)
    assert fp.pushforward(fp.Semicircle(0, 1), x**2).cauchy_equation().as_expr() == G**2 * z - G * z + 1


def test_symbolic_free_mul_equation_is_symmetric_and_cubic():
    P = CATALOGUE["symbolic"].cauchy_equation()
    assert sp.degree(P, G) == 3
    swapped = sp.Poly(P.as_expr().subs({t1: t2, t2: t1}, simultaneous=True), G, z)
    assert sp.expand(P.as_expr() * swapped.LC() - swapped.as_expr() * P.LC()) == 0


def test_cubic_pushforward_of_semicircle_has_the_degree_of_its_branch_count():
    # X³ for X semicircular: G_Y(ζ) = Σ_j G(r_j)/(3 r_j²) over the three cube roots, whose
    # branches give (deg_G P)^d = 8 conjugates; no smaller equation can hold
    P = fp.pushforward(fp.Semicircle(0, 1), x**3).cauchy_equation()
    assert sp.degree(P, G) == 8


def test_pushforward_beyond_the_elimination_cap_is_not_available():
    cubic_law = fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(1))  # deg_G 3: 3³·3! > 64
    with pytest.raises(NotAvailable, match="beyond the supported"):
        fp.pushforward(cubic_law, x**3).cauchy_equation()


def test_law_without_equation_raises_not_available():
    class Opaque(fp.Law):
        def _cumulant_formula(self, ring, k):
            return [ring.zero] + [ring.one] * k

        def __hash__(self):
            return 0

    with pytest.raises(NotAvailable, match="no algebraic Cauchy equation"):
        Opaque().cauchy_equation()


def test_mixture_of_repeated_blocks_is_the_block_law():
    # mixture([μ] * h) (h blocks of one law, the finite-n models of issue 29) has μ's Cauchy
    # equation: the repeated operands are grouped, not eliminated h − 1 times (which took minutes
    # for the attention laws' exact-size trees); a repeated block beside another law keeps the
    # weighted sum of the two Cauchy transforms
    mu = fp.FreePoisson(sp.Rational(1, 2))
    P = fp.mixture([mu] * 8).cauchy_equation()
    Q = mu.cauchy_equation()
    assert sp.simplify(P.as_expr() * Q.LC() - Q.as_expr() * P.LC()) == 0
    nu = fp.Semicircle(3, 1)
    mix = fp.mixture([mu, mu, nu], [sp.Rational(1, 4), sp.Rational(1, 4), sp.Rational(1, 2)])
    z0 = mpmath.mpc(1, 1)
    want = (mu.cauchy(z0) + nu.cauchy(z0)) / 2
    assert abs(mix.cauchy(z0) - want) < 1e-12
def test_equal_mixture_components_share_one_equation():
    """h blocks of one law (the finite-n attention trees stack h equal heads) are merged into one
    component before the resultants (the resultant of h copies of a nested law's equation costs
    minutes; its irreducible factor is the same): the same equation, and distinct components
    still combine."""
    mu, nu = fp.FreePoisson(half, 3), fp.Semicircle(2, 1)
    four = fp.mixture([mu] * 4)
    assert sp.Poly(four.cauchy_equation(), G, z).degree_list() == sp.Poly(mu.cauchy_equation(), G, z).degree_list()
    q = sp.Rational(1, 4)
    a = fp.mixture([mu, nu, mu], [q, half, q]).cauchy_equation()
    b = fp.mixture([mu, nu], [half, half]).cauchy_equation()
    assert sp.simplify(sp.cancel(a / b)).is_number
    assert fp.mixture([mu] * 4).moments(4) == mu.moments(4)
