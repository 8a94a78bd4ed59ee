r"""The two routes of freeprob agree exactly, for every family and operation.

* generating-function route: ``Law.moments``, ``Law.free_cumulants``,
  ``Law.boolean_cumulants``, ``Law.classical_cumulants`` and the public conversions
  ``freeprob.moments_to_free_cumulants`` etc. (series reversion / inversion / log);
* partition route: :mod:`freeprob.core.partitions`, literal sums over non-crossing
  ([NS06] Lecture 11, Def. 11.3 / Prop. 11.4), interval ([SW97] Speicher & Woroudi
  1997) and all set partitions ([LS59] Leonov & Shiryaev 1959), with no generating
  functions and no division.

Both are computed independently, so agreement is a real check of each.
"""
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import freeprob as fp
from freeprob.core import partitions as P
from freeprob.core.symbols import x

R = sp.Rational
ORDER = 10

ATOMIC = fp.Atomic([-1, R(1, 2), 2], [R(1, 6), R(1, 3), R(1, 2)])

CATALOGUE = {
    "atomic3": ATOMIC,
    "dirac": fp.Dirac(R(3, 2)),
    "bernoulli": fp.Bernoulli(),
    "bernoulli_p": fp.Bernoulli(R(1, 3), 0, 2),
    "semicircle": fp.Semicircle(1, 2),
    "free_poisson": fp.FreePoisson(R(1, 2), 3),
    "free_poisson_negative_jump": fp.FreePoisson(2, -1),
    "marchenko_pastur": fp.MarchenkoPastur(2),
    "compound_free_poisson": fp.CompoundFreePoisson(2, ATOMIC),
    "free_add": fp.free_add(fp.Semicircle(1, 2), fp.FreePoisson(R(1, 2), 3), ATOMIC),
    "free_mul": fp.free_mul(fp.FreePoisson(R(1, 2)), fp.Atomic([1, 3], [R(1, 3), R(2, 3)])),
    "free_mul_zero_mean": fp.free_mul(fp.FreePoisson(2), fp.Semicircle(0, 1)),
    "free_mul_zero_mean_atomic": fp.free_mul(fp.Bernoulli(), fp.MarchenkoPastur(R(1, 2))),
    "free_power": fp.free_power(ATOMIC, R(5, 2)),
    "free_power_below_one": fp.free_power(fp.FreePoisson(2), R(1, 3)),
    "pushforward_deg2": fp.pushforward(fp.Semicircle(1, 2), x**2 - x + 1),
    "pushforward_deg3": fp.pushforward(ATOMIC, 2 * x**3 - x),
    "shift": fp.shift(ATOMIC, R(-3, 2)),
    "dilate_negative": fp.dilate(fp.FreePoisson(R(1, 2), 3), R(-2, 3)),
    "mixture": fp.mixture([ATOMIC, fp.Semicircle(1, 2), fp.FreePoisson(3)],
                          [R(1, 2), R(1, 3), R(1, 6)]),
    "rectangular_companion": fp.rectangular_companion(fp.FreePoisson(R(1, 2)), 2),
    "rectangular_companion_mp": fp.rectangular_companion(fp.MarchenkoPastur(R(1, 3)), R(1, 3)),
    "nested_add_mul_dilate_push": fp.free_add(
        fp.dilate(fp.free_mul(fp.FreePoisson(R(1, 2)), fp.shift(ATOMIC, 1)), -1),
        fp.pushforward(fp.Semicircle(0, 1), x**2)),
    "nested_mul_mixture_power": fp.free_mul(
        fp.mixture([fp.FreePoisson(1), fp.Dirac(2)]),
        fp.free_power(fp.free_add(fp.Semicircle(0, 1), fp.Bernoulli()), 2)),
    "nested_companion_of_product": fp.rectangular_companion(
        fp.free_mul(fp.FreePoisson(R(1, 2)), fp.MarchenkoPastur(R(1, 2))), 2),
}

IDS = list(CATALOGUE)
LAWS = [CATALOGUE[k] for k in IDS]


# ------------------------------------------------------------------ free (NC(n))
@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_free_cumulants_partition_route(law):
    m, kappa = law.moments(ORDER), law.free_cumulants(ORDER)
    assert len(m) == len(kappa) == ORDER + 1
    assert m[0] == 1 and kappa[0] == 0
    assert P.free_cumulants_to_moments_nc(kappa) == m
    assert P.moments_to_free_cumulants_nc(m) == kappa


# ------------------------------------------------------------------ boolean (I(n))
@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_boolean_cumulants_partition_route(law):
    m, b = law.moments(ORDER), law.boolean_cumulants(ORDER)
    assert P.moments_to_boolean_cumulants_interval(m) == b
    assert P.boolean_cumulants_to_moments_interval(b) == m


# ------------------------------------------------------------------ classical (P(n))
@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_classical_cumulants_partition_route(law):
    m, c = law.moments(ORDER), law.classical_cumulants(ORDER)
    assert P.moments_to_classical_cumulants_partitions(m) == c
    assert P.classical_cumulants_to_moments_partitions(c) == m


# ------------------------------------------------------------------ public round trips
@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_public_conversions_round_trip(law):
    m = law.moments(ORDER)
    kappa = law.free_cumulants(ORDER)
    b = law.boolean_cumulants(ORDER)
    c = law.classical_cumulants(ORDER)
    assert fp.moments_to_free_cumulants(m) == kappa
    assert fp.free_cumulants_to_moments(kappa) == m
    assert fp.moments_to_boolean_cumulants(m) == b
    assert fp.boolean_cumulants_to_moments(b) == m
    assert fp.moments_to_classical_cumulants(m) == c
    assert fp.classical_cumulants_to_moments(c) == m


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_series_views_agree_with_sequences(law):
    # r_series / cumulant_series / psi_series / eta_series / cauchy_series are views of
    # the same sequences (freeprob.core.conventions).
    n = 8
    m, kappa, b = law.moments(n), law.free_cumulants(n), law.boolean_cumulants(n)
    assert law.r_series(n).coefficients() == kappa[1:n + 1]
    assert law.cumulant_series(n).coefficients() == kappa[:n]
    assert law.psi_series(n).coefficients() == (0,) + m[1:n]
    assert law.eta_series(n).coefficients() == b[:n]
    assert law.cauchy_series(n).coefficients() == (0,) + m[:n - 1]


# ------------------------------------------------------------------ symbolic parameter
def _same(a, b):
    return len(a) == len(b) and all(sp.expand(p - q) == 0 for p, q in zip(a, b))


t = sp.Symbol("t")
SYMBOLIC = {
    "free_poisson_t": fp.FreePoisson(t),
    "free_add_t": fp.free_add(fp.FreePoisson(t), fp.Semicircle(t, 1)),
    "free_mul_t": fp.free_mul(fp.FreePoisson(t), fp.Semicircle(1, 1)),
    "mixture_t": fp.mixture([fp.FreePoisson(t), fp.Dirac(1)]),
}


@pytest.mark.parametrize("law", list(SYMBOLIC.values()), ids=list(SYMBOLIC))
def test_symbolic_routes(law):
    n = 8
    m, kappa = law.moments(n), law.free_cumulants(n)
    b, c = law.boolean_cumulants(n), law.classical_cumulants(n)
    assert _same(P.free_cumulants_to_moments_nc(kappa), m)
    assert _same(P.moments_to_free_cumulants_nc(m), kappa)
    assert _same(P.moments_to_boolean_cumulants_interval(m), b)
    assert _same(P.moments_to_classical_cumulants_partitions(m), c)
    assert _same(fp.moments_to_free_cumulants(m), kappa)
    assert _same(fp.free_cumulants_to_moments(kappa), m)
    assert _same(fp.moments_to_boolean_cumulants(m), b)
    assert _same(fp.moments_to_classical_cumulants(m), c)


def test_symbolic_then_substitute_equals_rational():
    # Specialising t after the symbolic computation equals computing with t = 1/3.
    sym = fp.FreePoisson(t).moments(12)
    assert tuple(p.subs(t, R(1, 3)) for p in sym) == fp.FreePoisson(R(1, 3)).moments(12)
    law = fp.free_mul(fp.FreePoisson(t), fp.Semicircle(1, 1))
    assert (tuple(p.subs(t, R(1, 3)) for p in law.moments(8))
            == fp.free_mul(fp.FreePoisson(R(1, 3)), fp.Semicircle(1, 1)).moments(8))
    assert law.subs(t, R(1, 3)).moments(8) == fp.free_mul(fp.FreePoisson(R(1, 3)),
                                                          fp.Semicircle(1, 1)).moments(8)


# ------------------------------------------------------------------ random sequences
fractions = st.fractions(min_value=-5, max_value=5, max_denominator=12)


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(fractions, min_size=1, max_size=8))
def test_random_free_cumulants_round_trip(tail):
    kappa = [Fraction(0)] + tail
    expected_m = tuple(sp.Rational(v.numerator, v.denominator)
                       for v in P.free_cumulants_to_moments_nc(kappa))
    m = fp.free_cumulants_to_moments(kappa)
    assert m == expected_m
    back = fp.moments_to_free_cumulants(m)
    assert back == tuple(sp.Rational(v.numerator, v.denominator) for v in kappa)
    # the partition route inverts itself too
    assert P.moments_to_free_cumulants_nc([Fraction(int(v.p), int(v.q)) for v in m]) == tuple(kappa)


@settings(max_examples=40, deadline=None, database=None)
@given(st.lists(fractions, min_size=1, max_size=8))
def test_random_boolean_and_classical_round_trip(tail):
    seq = [Fraction(0)] + tail
    as_sympy = tuple(sp.Rational(v.numerator, v.denominator) for v in seq)

    def to_sympy(vals):
        return tuple(sp.Rational(v.numerator, v.denominator) for v in vals)

    m_b = fp.boolean_cumulants_to_moments(seq)
    assert m_b == to_sympy(P.boolean_cumulants_to_moments_interval(seq))
    assert fp.moments_to_boolean_cumulants(m_b) == as_sympy
    m_c = fp.classical_cumulants_to_moments(seq)
    assert m_c == to_sympy(P.classical_cumulants_to_moments_partitions(seq))
    assert fp.moments_to_classical_cumulants(m_c) == as_sympy


# ------------------------------------------------------------------ S-transform
NONZERO_MEAN = [k for k in IDS if CATALOGUE[k].moments(1)[1] != 0]


@pytest.mark.parametrize("name", NONZERO_MEAN)
def test_s_series_from_its_definition(name):
    # freeprob.core.conventions: χ = ψ^{<-1>}, S(u) = χ(u)(1 + u)/u ([NS06] Lecture 18,
    # [MS17] §2.6).  Computed here from the moments alone, against s_series (which may
    # use the families' closed S-formulas and S_{μ⊠ν} = S_μ S_ν, S_{cX} = S_X/c).
    from freeprob.core.series import TruncatedSeries

    law, n = CATALOGUE[name], 8
    m = law.moments(n)
    psi = TruncatedSeries([0] + list(m[1:]), order=n + 1)
    s = (psi.reversion().shift(-1) * TruncatedSeries([1, 1], order=n)).truncate(n)
    assert law.s_series(n) == s
