r"""Boolean and monotone convolutions and the monotone cumulants (issue 30), each against an
independent route: the partition sums ([SW97] interval partitions; [HS11]/[AHLV15] non-crossing
partitions weighted by the inverse tree factorial of their nesting forest), closed forms, the
semigroup identities ([MUR01], [HS11]) and the densities from the closed-form
``F = 1/G`` of the semicircle evaluated in mpmath."""
from fractions import Fraction
from math import comb

import mpmath
import pytest
import sympy as sp

import freeprob as fp
from freeprob.cli.expr import parse_law
from freeprob.core.lattices import noncrossing_partitions
from freeprob.core.partitions import (
    boolean_cumulants_to_moments_interval,
    moments_to_boolean_cumulants_interval,
)
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.laws.independences import BooleanAdd

HALF, THIRD = sp.Rational(1, 2), sp.Rational(1, 3)


def monotone_moments_nc(h, k):
    """m_n = Σ_{π ∈ NC(n)} Π_V h_{|V|} / τ(π)!, τ(π)! = Π_V (number of blocks nested in V, V
    included) ([AHLV15] §1: monotone partitions counted by the linear extensions of the
    nesting forest); a literal sum, no generating function."""
    out = [sp.Integer(1)]
    for n in range(1, k + 1):
        total = sp.Integer(0)
        for pi in noncrossing_partitions(n):
            weight = sp.Integer(1)
            for V in pi:
                inside = sum(1 for W in pi if min(V) <= min(W) and max(W) <= max(V))
                weight *= h[len(V)] / sp.Integer(inside)
            total += weight
        out.append(sp.expand(total))
    return tuple(out)


# -- monotone cumulants --------------------------------------------------------------------------
def test_monotone_cumulants_against_the_partition_sum_exact_and_symbolic():
    t = sp.Symbol("t")
    for law, k in ((fp.free_mul(fp.FreePoisson(HALF), fp.FreePoisson(THIRD)), 8), (fp.FreePoisson(t), 6)):
        h = law.monotone_cumulants(k)
        assert h[0] == 0
        got = monotone_moments_nc(h, k)
        assert all(sp.simplify(a - b) == 0 for a, b in zip(got, law.moments(k)))
        back = fp.monotone_cumulants_to_moments(h)                   # the inverse recursion
        assert all(sp.simplify(a - b) == 0 for a, b in zip(back, law.moments(k)))


def test_monotone_cumulants_closed_forms():
    # the arcsine law of variance 2 (free_add of two ±1 Bernoulli laws) is the monotone central
    # limit: h = (0, 0, 2, 0, ...) ([MUR01]); the semicircle's agree with FriCAS's Distribution
    arcsine = fp.free_add(fp.Bernoulli(), fp.Bernoulli())
    assert arcsine.monotone_cumulants(12) == (0, 0, 2) + (0,) * 10
    assert fp.Semicircle(0, 1).monotone_cumulants(8) == (0, 0, 1, 0, HALF, 0, HALF, 0, sp.Rational(7, 12))
    # h_1 = mean, h_2 = variance, and h_n(c X) = c^n h_n(X)
    law = fp.FreePoisson(HALF, 3)
    h = law.monotone_cumulants(5)
    assert h[1] == law.moments(1)[1] and h[2] == law.moments(2)[2] - law.moments(1)[1] ** 2
    assert fp.dilate(law, -2).monotone_cumulants(5) == tuple((-2) ** n * v for n, v in enumerate(h))
    dig = law.monotone_cumulants(5, dps=30)
    assert all(abs(a - mpmath.mpf(sp.N(b, 40))) < mpmath.mpf(10) ** -28 for a, b in zip(dig, h))


# -- monotone convolution ------------------------------------------------------------------------
def test_monotone_semigroup_and_dirac_identities():
    mu = fp.FreePoisson(HALF)
    twice = fp.monotone_add(mu, mu)                  # μ ▷ μ = μ^{▷2}: monotone cumulants double
    h = mu.monotone_cumulants(7)
    assert twice.monotone_cumulants(7) == tuple(2 * v for v in h)
    assert twice.moments(7) == monotone_moments_nc([2 * v for v in h], 7)
    a = sp.Rational(3, 2)
    assert fp.monotone_add(mu, fp.Dirac(a)).moments(8) == fp.shift(mu, a).moments(8)       # F_μ(z − a)
    assert fp.monotone_add(fp.Dirac(a), mu).moments(8) == fp.boolean_add(fp.Dirac(a), mu).moments(8)
    # associativity; the semicircle ▷ semicircle moments agree with FriCAS's monotoneConvolution
    s = fp.Semicircle(0, 1)
    assert fp.monotone_add(s, s).moments(8) == (1, 0, 2, 0, 7, 0, 29, 0, 131)
    three = fp.monotone_add(s, mu, s)
    assert three.moments(6) == fp.monotone_add(s, fp.monotone_add(mu, s)).moments(6)
    # the arcsine laws form the monotone semigroup: A_2 ▷ A_2 = A_4 (moments C(2k, k) 2^k)
    arcsine = fp.free_add(fp.Bernoulli(), fp.Bernoulli())
    assert fp.monotone_add(arcsine, arcsine).moments(8) == tuple(
        comb(n, n // 2) * 2 ** (n // 2) if n % 2 == 0 else 0 for n in range(9))


def test_monotone_symbolic_and_its_equation():
    t, s = sp.symbols("t s")
    law = fp.monotone_add(fp.Semicircle(0, t), fp.FreePoisson(HALF))
    at = law.subs({t: 2})
    assert all(sp.expand(a.subs(t, 2) - b) == 0 for a, b in zip(law.moments(6), at.moments(6)))
    # the packed composition of MpolyRing (rational-function coefficients) against FLINT's
    # fmpq_series composition at a rational point
    other = fp.monotone_add(fp.FreePoisson(1 / (1 + t)), fp.dilate(fp.Semicircle(1, s), 1 / (s + 2)))
    point = {t: sp.Rational(2, 3), s: sp.Rational(5, 7)}
    assert [sp.cancel(v.subs(point)) for v in other.moments(7)] == list(other.subs(point).moments(7))
    P, Q = law.cauchy_equation(), at.cauchy_equation()
    ratio = sp.cancel(P.as_expr().subs(t, 2) / Q.as_expr())
    assert ratio.is_number and ratio != 0


# -- boolean convolution -------------------------------------------------------------------------
def test_boolean_cumulants_of_the_semicircle_are_shifted_catalan_numbers():
    # η = 1 − 1/M = z² M for M = 1 + z² M²: b_{2n+2} = C_n ([SW97])
    b = fp.Semicircle(0, 1).boolean_cumulants(14)
    assert b == tuple(comb(n - 2, n // 2 - 1) // (n // 2) if n >= 2 and n % 2 == 0 else 0 for n in range(15))


def test_boolean_add_against_interval_partitions():
    a, b = fp.FreePoisson(HALF), fp.Semicircle(1, THIRD)
    k = 9
    ba = moments_to_boolean_cumulants_interval([Fraction(int(v.p), int(v.q)) for v in a.moments(k)])
    bb = moments_to_boolean_cumulants_interval([Fraction(int(v.p), int(v.q)) for v in b.moments(k)])
    want = boolean_cumulants_to_moments_interval([x + y for x, y in zip(ba, bb)])
    law = fp.boolean_add(a, b)
    assert law.moments(k) == tuple(sp.Rational(v.numerator, v.denominator) for v in want)
    assert fp.boolean_add(a, b, a).boolean_cumulants(6) == tuple(
        2 * x + y for x, y in zip(a.boolean_cumulants(6), b.boolean_cumulants(6)))


def test_boolean_square_of_the_semicircle_is_the_arcsine_law():
    # F = 2 F_s − z = √(z² − 4): the arcsine law on [−2, 2], moments C(2n, n), G² (z² − 4) = 1
    law = fp.boolean_add(fp.Semicircle(0, 1), fp.Semicircle(0, 1))
    assert law.moments(12) == tuple(comb(n, n // 2) if n % 2 == 0 else 0 for n in range(13))
    G, z = sp.symbols("G z")
    assert law.cauchy_equation().as_expr() == G**2 * z**2 - 4 * G**2 - 1
    assert law.support() == ((-2, 2),) and law.atoms() == ()


def test_monotone_atoms_of_two_bernoulli_laws_from_the_definition():
    # F = F_b ∘ F_b with F_b(z) = z − 1/z: atoms at the real zeros of F, masses 1/F′ there
    # (solved here by sympy on the composed rational function, not by the elimination)
    w = sp.Symbol("w")
    Fb = lambda v: v - 1 / v                                           # noqa: E731
    F = sp.together(Fb(Fb(w)))
    roots = sp.solve(sp.numer(F), w)
    want = sorted(((r, sp.nsimplify(sp.simplify(1 / sp.diff(Fb(Fb(w)), w).subs(w, r)))) for r in roots),
                  key=lambda a: float(a[0]))
    got = fp.monotone_add(fp.Bernoulli(), fp.Bernoulli()).atoms()
    assert len(got) == 4 == len(want)
    assert all(sp.simplify(a - c) == 0 and sp.simplify(b - d) == 0 for (a, b), (c, d) in zip(got, want))
    assert sp.simplify(sum(b for _, b in got) - 1) == 0


def test_boolean_atoms_exact():
    # F = (z − 1/z) + (z − 1/z) − z = z − 2/z: the symmetric law on ±√2
    assert fp.boolean_add(fp.Bernoulli(), fp.Bernoulli()).atoms() == ((-sp.sqrt(2), HALF), (sp.sqrt(2), HALF))
    # F = F_s(z) − 2 vanishes at 5/2 (F_s + 1/F_s = z, F_s(5/2) = 2), mass 1/F′ = 1 − 1/F_s² = 3/4
    law = fp.boolean_add(fp.Dirac(2), fp.Semicircle(0, 1))
    assert law.atoms() == ((sp.Rational(5, 2), sp.Rational(3, 4)),)
    assert law.support() == ((-2, 2),)
    assert abs(law.cdf(sp.Rational(12, 5), dps=15) - mpmath.mpf(1) / 4) < 1e-13   # the density's mass


def _G_semicircle(z, a, v):
    s = mpmath.sqrt(v)
    return (z - a - mpmath.sqrt(z - a - 2 * s) * mpmath.sqrt(z - a + 2 * s)) / (2 * v)


@pytest.mark.parametrize("kind", ["boolean", "monotone 12", "monotone 21"])
def test_densities_against_the_defining_formula(kind):
    """The density from the eliminated Cauchy equation and freeprob.numeric against
    −Im G(x + iε)/π with G built from the semicircles' closed forms by the definition."""
    s1, s2 = fp.Semicircle(0, 1), fp.Semicircle(1, sp.Rational(1, 4))
    G1 = lambda z: _G_semicircle(z, 0, 1)                       # noqa: E731
    G2 = lambda z: _G_semicircle(z, 1, mpmath.mpf(1) / 4)       # noqa: E731
    law, G = {
        "boolean": (fp.boolean_add(s1, s2), lambda z: 1 / (1 / G1(z) + 1 / G2(z) - z)),
        "monotone 12": (fp.monotone_add(s1, s2), lambda z: G1(1 / G2(z))),
        "monotone 21": (fp.monotone_add(s2, s1), lambda z: G2(1 / G1(z))),
    }[kind]
    with mpmath.workdps(40):
        for x in (sp.Rational(-1, 2), sp.Rational(3, 2)):
            want = -mpmath.im(G(mpmath.mpf(sp.N(x, 50)) + mpmath.mpf(10) ** -30 * 1j)) / mpmath.pi
            assert abs(law.density(x, dps=25) - want) < mpmath.mpf(10) ** -24 * max(1, abs(want))
    if kind == "boolean":    # F_1 + F_2 − z vanishes at 25/12 (F_1 = 4/3, F_2 = 3/4): an atom
        (atom,) = law.atoms()
        assert atom[0] == sp.Rational(25, 12) and atom[1] == sp.Rational(35, 108)


def test_bad_arguments_and_the_expression_language():
    with pytest.raises(FreeprobValueError, match="at least two laws"):
        fp.boolean_add(fp.Semicircle(0, 1))
    with pytest.raises(FreeprobValueError, match="must be a Law"):
        fp.monotone_add(fp.Semicircle(0, 1), 2)
    with pytest.raises(FreeprobValueError, match="separate arguments"):
        fp.monotone_add([fp.Semicircle(0, 1), fp.Bernoulli()])
    with pytest.raises(FreeprobValueError, match="must be a Law"):               # the class checks too
        BooleanAdd((fp.Semicircle(0, 1), 3))
    with pytest.raises(FreeprobValueError, match="at least two laws"):
        BooleanAdd((fp.Semicircle(0, 1),))

    class NoMoments(fp.Law):                      # a law that defines no moments
        pass

    for op in (fp.boolean_add, fp.monotone_add):
        with pytest.raises(NotAvailable, match="defines neither moments nor cumulants"):
            op(fp.Semicircle(0, 1), NoMoments()).moments(3)
    law = parse_law("monotone_add(Semicircle(0, 1), boolean_add(Bernoulli(), Dirac(1)))")
    assert law == fp.monotone_add(fp.Semicircle(0, 1), fp.boolean_add(fp.Bernoulli(), fp.Dirac(1)))
    with pytest.raises(FreeprobValueError, match="must be a law"):
        parse_law("boolean_add(Bernoulli(), 2)")
