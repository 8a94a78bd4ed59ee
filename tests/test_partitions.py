r"""Tests for freeprob.core.partitions (the combinatorial route).

Sources are named in each test.  Keys: [NS06] Nica & Speicher, *Lectures on the
Combinatorics of Free Probability* (2006); [SW97] Speicher & Woroudi, "Boolean
convolution" (1997); [LS59] Leonov & Shiryaev (1959); OEIS sequence numbers.
"""
from fractions import Fraction
from itertools import combinations
from math import comb, factorial

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from freeprob.errors import FreeprobValueError
from freeprob.core.partitions import (
    boolean_cumulants_to_moments_interval,
    classical_cumulants_to_moments_partitions,
    free_cumulants_to_moments_nc,
    free_mul_cumulants_nc,
    free_mul_moments_nc,
    interval_partitions,
    is_noncrossing,
    kreweras_complement,
    moments_to_boolean_cumulants_interval,
    moments_to_classical_cumulants_partitions,
    moments_to_free_cumulants_nc,
    noncrossing_partitions,
    set_partitions,
)

ENUMERATIONS = (set_partitions, noncrossing_partitions, interval_partitions)


def catalan(n):
    # OEIS A000108: C_n = C(2n, n)/(n+1).
    return comb(2 * n, n) // (n + 1)


# OEIS A000110 (Bell numbers), B_0..B_10.
BELL = (1, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975)


def double_factorial_odd(k):
    """(2k-1)!! = (2k)! / (2^k k!)."""
    return factorial(2 * k) // (2**k * factorial(k))


def crossing_bruteforce(partition):
    """Definition [NS06] Def. 9.1: a < b < c < d, a, c in V, b, d in W, V != W."""
    for V, W in combinations(partition, 2):
        for X, Y in ((V, W), (W, V)):
            for a, c in combinations(X, 2):
                if any(a < b < c for b in Y) and any(d > c for d in Y):
                    return True
    return False


# ---------------------------------------------------------------- enumeration counts
@pytest.mark.parametrize("n", range(1, 11))
def test_noncrossing_count_is_catalan(n):
    # |NC(n)| = Catalan(n), [NS06] Lecture 9; OEIS A000108.
    assert sum(1 for _ in noncrossing_partitions(n)) == catalan(n)


@pytest.mark.parametrize("n", range(1, 11))
def test_set_partition_count_is_bell(n):
    # |P(n)| = Bell(n), OEIS A000110.
    assert sum(1 for _ in set_partitions(n)) == BELL[n]


@pytest.mark.parametrize("n", range(1, 11))
def test_interval_partition_count(n):
    # Interval partitions of [n] <-> compositions of n: 2^(n-1) ([SW97]; OEIS A000079).
    assert sum(1 for _ in interval_partitions(n)) == 2 ** (n - 1)


@pytest.mark.parametrize("enum", ENUMERATIONS)
def test_n_zero_gives_one_empty_partition(enum):
    # Convention: the empty set has exactly one partition (Bell(0) = Catalan(0) = 1).
    assert list(enum(0)) == [()]


def test_small_explicit_lists():
    # Hand enumeration of P(3) (Bell(3) = 5), in restricted-growth-string order.
    assert list(set_partitions(3)) == [
        ((1, 2, 3),), ((1, 2), (3,)), ((1, 3), (2,)), ((1,), (2, 3)), ((1,), (2,), (3,)),
    ]
    # The only crossing partition of [4] is {1,3},{2,4} ([NS06] Lecture 9): 15 - 1 = 14.
    crossing = set(set_partitions(4)) - set(noncrossing_partitions(4))
    assert crossing == {((1, 3), (2, 4))}
    # Compositions of 3: 3, 2+1, 1+2, 1+1+1.
    assert list(interval_partitions(3)) == [
        ((1, 2, 3),), ((1, 2), (3,)), ((1,), (2, 3)), ((1,), (2,), (3,)),
    ]


@pytest.mark.parametrize("enum", ENUMERATIONS)
@pytest.mark.parametrize("n", [1, 4, 7])
def test_canonical_representation_and_determinism(enum, n):
    # Documented format: blocks are sorted tuples, sorted by minimum, partitioning [n];
    # all partitions distinct; repeated calls give the same order.
    parts = list(enum(n))
    assert parts == list(enum(n))
    assert len(set(parts)) == len(parts)
    for p in parts:
        assert all(list(b) == sorted(b) for b in p)
        assert [b[0] for b in p] == sorted(b[0] for b in p)
        assert sorted(x for b in p for x in b) == list(range(1, n + 1))


@pytest.mark.parametrize("n", range(0, 10))
def test_enumerations_cross_check(n):
    # Two enumerations agree: filtering P(n) by the crossing definition ([NS06] Def 9.1)
    # gives exactly NC(n) (same order), and filtering by "every block is an interval"
    # gives exactly the interval partitions.
    all_parts = list(set_partitions(n))
    nc = list(noncrossing_partitions(n))
    assert [p for p in all_parts if is_noncrossing(p)] == nc
    assert [p for p in all_parts if not crossing_bruteforce(p)] == nc
    assert all(is_noncrossing(p) for p in nc)
    intervals = [p for p in all_parts if all(b == tuple(range(b[0], b[-1] + 1)) for b in p)]
    assert intervals == list(interval_partitions(n))


@pytest.mark.parametrize("n", range(1, 8))
def test_is_noncrossing_matches_definition(n):
    # Stack algorithm vs the literal a<b<c<d definition ([NS06] Def. 9.1) on all of P(n).
    for p in set_partitions(n):
        assert is_noncrossing(p) == (not crossing_bruteforce(p))


def test_is_noncrossing_examples_and_arbitrary_ground_set():
    # [NS06] Lecture 9: {1,3},{2,4} crosses; nesting {1,4},{2,3} does not.
    assert is_noncrossing([[1, 3], [2, 4]]) is False
    assert is_noncrossing([[1, 4], [2, 3]]) is True
    # Unordered blocks are accepted; ground set need not be {1..n}.
    assert is_noncrossing([[30, 10], [20]]) is True
    assert is_noncrossing([[10, 30], [20, 40]]) is False
    assert is_noncrossing([]) is True


# ------------------------------------------------------------------------- Kreweras
def test_kreweras_worked_example():
    # Worked from [NS06] Def. 9.21 with 1<1'<2<2'<...: pi = {1,4,8},{2,3},{5,6},{7}
    # gives K(pi) = {1,3},{2},{4,6,7},{5},{8} (each primed block checked by hand).
    pi = ((1, 4, 8), (2, 3), (5, 6), (7,))
    assert kreweras_complement(pi, 8) == ((1, 3), (2,), (4, 6, 7), (5,), (8,))


@pytest.mark.parametrize("n", range(1, 11))
def test_kreweras_extremes(n):
    # [NS06] Lecture 9: K(0_n) = 1_n and K(1_n) = 0_n.
    zero_n = tuple((i,) for i in range(1, n + 1))
    one_n = (tuple(range(1, n + 1)),)
    assert kreweras_complement(zero_n, n) == one_n
    assert kreweras_complement(one_n, n) == zero_n


@pytest.mark.parametrize("n", range(1, 10))
def test_kreweras_block_count_bijection_and_square(n):
    # [NS06] Lecture 9 / Remark 9.23: |pi| + |K(pi)| = n + 1; K is a bijection of NC(n);
    # K(K(pi)) is pi rotated by one step, here: blocks mapped by i -> i-1 (1 -> n).
    nc = list(noncrossing_partitions(n))
    images = []
    for pi in nc:
        k = kreweras_complement(pi, n)
        assert len(pi) + len(k) == n + 1
        assert is_noncrossing(k)
        images.append(k)
        rotated = sorted(tuple(sorted((x - 2) % n + 1 for x in b)) for b in pi)
        assert kreweras_complement(k, n) == tuple(sorted(rotated, key=lambda b: b[0]))
    assert set(images) == set(nc)


def _refines(sigma, tau):
    return all(any(set(b) <= set(c) for c in tau) for b in sigma)


@pytest.mark.parametrize("n", range(1, 7))
def test_kreweras_matches_definition_by_brute_force(n):
    # [NS06] Def. 9.21: K(pi) is the largest sigma in NC(1',...,n') with pi ∪ sigma
    # non-crossing in the interleaving 1 < 1' < 2 < ... (point i -> 2i-1, i' -> 2i).
    nc = list(noncrossing_partitions(n))
    for pi in nc:
        odd = [tuple(2 * x - 1 for x in b) for b in pi]
        admissible = [s for s in nc
                      if is_noncrossing(odd + [tuple(2 * x for x in b) for b in s])]
        k = kreweras_complement(pi, n)
        assert k in admissible
        assert all(_refines(s, k) for s in admissible)


def test_kreweras_rejects_invalid_partitions():
    # K is defined only on NC(n) ([NS06] Def. 9.21).
    with pytest.raises(FreeprobValueError, match="non-crossing"):
        kreweras_complement([[1, 3], [2, 4]], 4)
    with pytest.raises(FreeprobValueError, match="partition of"):
        kreweras_complement([[1, 2]], 3)
    with pytest.raises(FreeprobValueError, match="disjoint"):
        kreweras_complement([[1, 2], [2, 3]], 3)
    with pytest.raises(FreeprobValueError):
        kreweras_complement([[1]], -1)


# --------------------------------------------------------------- known laws: values
def test_semicircle_free_cumulants_give_catalan_moments():
    # Standard semicircle: kappa_2 = 1, others 0 ([NS06] Lecture 11); m_{2k} = C_k,
    # odd moments 0 ([NS06] Lecture 2; OEIS A000108).
    kappa = (0, 0, 1) + (0,) * 8
    m = free_cumulants_to_moments_nc(kappa)
    assert m == tuple(catalan(n // 2) if n % 2 == 0 else 0 for n in range(11))
    assert moments_to_free_cumulants_nc(m) == kappa


def test_free_poisson_gives_narayana_polynomials():
    # Free Poisson with rate t, jump 1: kappa_n = t for all n ([NS06] Prop. 12.11);
    # m_n = sum_{pi in NC(n)} t^{|pi|} = sum_j N(n,j) t^j, N(n,j) = C(n,j)C(n,j-1)/n
    # (Narayana numbers count NC(n) by blocks; OEIS A001263).
    t = sp.Symbol("t")
    kappa = (0,) + (t,) * 10
    m = free_cumulants_to_moments_nc(kappa)
    assert m[0] == 1
    for n in range(1, 11):
        narayana = sum(comb(n, j) * comb(n, j - 1) // n * t**j for j in range(1, n + 1))
        assert sp.expand(m[n] - narayana) == 0
    back = moments_to_free_cumulants_nc(m)
    assert back[0] == 0
    assert all(sp.expand(back[n] - t) == 0 for n in range(1, 11))


def test_catalan_moments_have_free_cumulants_one_and_boolean_cumulants_catalan():
    # Free Poisson(1) = Marchenko-Pastur(1): moments C_n, free cumulants all 1
    # ([NS06] Prop. 12.11).  Boolean: M(z) = 1/(1 - B(z)) ([SW97]) with
    # M(z) = c(z) the Catalan series, c = 1 + z c^2, gives B = 1 - 1/c = z c,
    # so b_n = C_{n-1}.
    m = tuple(catalan(n) for n in range(11))
    assert moments_to_free_cumulants_nc(m) == (0,) + (1,) * 10
    assert moments_to_boolean_cumulants_interval(m) == (0,) + tuple(
        catalan(n - 1) for n in range(1, 11))


def test_gaussian_classical_cumulants_give_double_factorials():
    # Standard Gaussian: c_2 = 1, others 0; m_{2k} = (2k-1)!!, odd 0 ([LS59]; Wick/Isserlis,
    # OEIS A001147).
    c = (0, 0, 1) + (0,) * 8
    m = classical_cumulants_to_moments_partitions(c)
    assert m == tuple(double_factorial_odd(n // 2) if n % 2 == 0 else 0 for n in range(11))
    assert moments_to_classical_cumulants_partitions(m) == c


def test_classical_poisson_gives_bell_moments():
    # Poisson(1): all classical cumulants 1, moments are Bell numbers (Dobinski/Touchard;
    # OEIS A000110).
    assert classical_cumulants_to_moments_partitions((0,) + (1,) * 10) == BELL
    assert moments_to_classical_cumulants_partitions(BELL) == (0,) + (1,) * 10


def test_symmetric_bernoulli_boolean_cumulants():
    # Symmetric Bernoulli ±1: moments 1,0,1,0,... so M(z) = 1/(1-z^2) and
    # B(z) = 1 - 1/M(z) = z^2 ([SW97]): b_2 = 1, all other b_n = 0.
    m = tuple(1 if n % 2 == 0 else 0 for n in range(11))
    assert moments_to_boolean_cumulants_interval(m) == (0, 0, 1) + (0,) * 8
    assert boolean_cumulants_to_moments_interval((0, 0, 1) + (0,) * 8) == m


def test_symmetric_bernoulli_free_cumulants_from_r_transform():
    # G(z) = z/(z^2-1) and G(R(w) + 1/w) = w give R(w) = (sqrt(1+4w^2) - 1)/(2w)
    # (Voiculescu's R-transform, [NS06] Lecture 16); kappa_{n+1} = [w^n] R(w).
    w = sp.Symbol("w")
    R = sp.series((sp.sqrt(1 + 4 * w**2) - 1) / (2 * w), w, 0, 10).removeO()
    expected = (0,) + tuple(int(R.coeff(w, n - 1)) for n in range(1, 11))
    assert expected[:9] == (0, 0, 1, 0, -1, 0, 2, 0, -5)
    m = tuple(1 if n % 2 == 0 else 0 for n in range(11))
    assert moments_to_free_cumulants_nc(m) == expected


# ------------------------------------------------------------------------ round trips
def fraction_sequences(max_order=8):
    frac = st.fractions(min_value=-5, max_value=5, max_denominator=12)
    return st.integers(min_value=0, max_value=max_order).flatmap(
        lambda k: st.lists(frac, min_size=k, max_size=k)).map(lambda xs: tuple(xs))


PAIRS = [
    (free_cumulants_to_moments_nc, moments_to_free_cumulants_nc),
    (boolean_cumulants_to_moments_interval, moments_to_boolean_cumulants_interval),
    (classical_cumulants_to_moments_partitions, moments_to_classical_cumulants_partitions),
]


@pytest.mark.parametrize("to_m, to_k", PAIRS)
@settings(deadline=None, max_examples=40)
@given(xs=fraction_sequences())
def test_round_trips_exact_fractions(to_m, to_k, xs):
    # The moment-cumulant formulas are unitriangular bijections ([NS06] Prop. 11.4,
    # [SW97], [LS59]), so both round trips are the identity over Q.
    kappa = (Fraction(0),) + xs
    m = to_m(kappa)
    assert m[0] == 1 and len(m) == len(kappa)
    assert to_k(m) == kappa
    moments = (Fraction(1),) + xs
    assert to_m(to_k(moments)) == moments


def _literal_sum(x, parts):
    """sum_{pi} prod_{V in pi} x[|V|], straight from the definition."""
    total = 0
    for p in parts:
        term = 1
        for b in p:
            term *= x[len(b)]
        total += term
    return total


@pytest.mark.parametrize("n", range(1, 8))
def test_grouped_sums_equal_literal_partition_sums(n):
    # m_n = sum over the partition lattice of kappa_pi ([NS06] Prop. 11.4, [SW97], [LS59]),
    # computed literally over each enumeration vs the library's grouped-by-type sums.
    x = (Fraction(0),) + tuple(Fraction(j * j + 1, j + 2) for j in range(1, n + 1))
    assert free_cumulants_to_moments_nc(x)[n] == _literal_sum(x, noncrossing_partitions(n))
    assert boolean_cumulants_to_moments_interval(x)[n] == _literal_sum(
        x, interval_partitions(n))
    assert classical_cumulants_to_moments_partitions(x)[n] == _literal_sum(
        x, set_partitions(n))


def test_generic_arithmetic_types_preserved():
    # Generic ring arithmetic: int -> int, Fraction -> Fraction, sympy -> sympy
    # (values: free Poisson(1) has Catalan moments, [NS06] Prop. 12.11).
    catalans = tuple(catalan(n) for n in range(6))
    out_int = free_cumulants_to_moments_nc((0,) + (1,) * 5)
    assert out_int == catalans and all(type(v) is int for v in out_int)
    out_frac = free_cumulants_to_moments_nc((0,) + (Fraction(1),) * 5)
    assert out_frac == catalans and all(isinstance(v, Fraction) for v in out_frac)
    out_sp = free_cumulants_to_moments_nc((0,) + (sp.Integer(1),) * 5)
    assert out_sp == catalans and all(isinstance(v, sp.Basic) for v in out_sp)
    k_sp = moments_to_free_cumulants_nc(tuple(sp.Integer(c) for c in catalans))
    assert k_sp == (0,) + (1,) * 5 and all(isinstance(v, sp.Basic) for v in k_sp)


def test_flint_fmpq_arithmetic():
    # Same Catalan check over python-flint rationals ([NS06] Prop. 12.11).
    flint = pytest.importorskip("flint")
    out = free_cumulants_to_moments_nc((flint.fmpq(0),) + (flint.fmpq(1),) * 6)
    assert out == tuple(flint.fmpq(catalan(n)) for n in range(7))
    assert all(isinstance(v, flint.fmpq) for v in out)
    assert moments_to_free_cumulants_nc(out) == (0,) + (1,) * 6


def test_explicit_zero_and_one_keywords():
    # out[0] is `one` for moments and `zero` for cumulants (documented convention);
    # values: Gaussian moments 1, 0, 1, 0, 3 ([LS59]).
    z, o = Fraction(0), Fraction(1)
    m = classical_cumulants_to_moments_partitions((None, 0, 1, 0, 0), zero=z, one=o)
    assert m == (1, 0, 1, 0, 3) and isinstance(m[0], Fraction)
    k = moments_to_classical_cumulants_partitions((None, 0, 1, 0, 3), zero=z, one=o)
    assert k == (0, 0, 1, 0, 0) and isinstance(k[0], Fraction)
    # Order 0: only the placeholder.
    assert free_cumulants_to_moments_nc((0,)) == (1,)
    assert moments_to_free_cumulants_nc((1,)) == (0,)


# -------------------------------------------------------- free multiplicative ⊠
def test_free_poisson_squared_fuss_catalan():
    # Free Poisson(1) ⊠ free Poisson(1) has moments C(3n, n)/(2n+1) (Fuss-Catalan,
    # OEIS A001764; Mlotkowski 2010, Penson-Zyczkowski 2011), via
    # m_n(ab) = sum_{pi in NC(n)} kappa_pi[a] m_{K(pi)}[b] ([NS06] Thm. 14.4, Rem. 14.5).
    kappa_a = (0,) + (1,) * 10
    m_b = tuple(catalan(n) for n in range(11))
    expected = tuple(comb(3 * n, n) // (2 * n + 1) for n in range(11))
    assert free_mul_moments_nc(kappa_a, m_b) == expected
    # Cumulant route ([NS06] Thm. 14.4) then moment-cumulant formula agrees.
    kappa_ab = free_mul_cumulants_nc(kappa_a, kappa_a)
    assert free_cumulants_to_moments_nc(kappa_ab) == expected
    # For free Poisson(1) ⊠ free Poisson(1): kappa_n = |NC(n)| = C_n (all kappa = 1).
    assert kappa_ab == (0,) + tuple(catalan(n) for n in range(1, 11))


def test_free_mul_by_constant_one_is_identity():
    # The constant 1 has kappa_1 = 1 and kappa_n = 0 for n >= 2 ([NS06] Lecture 11);
    # only pi = 0_n contributes and K(0_n) = 1_n, so m_n(1 * b) = m_n(b).
    m_b = (1, 2, 7, -3, Fraction(5, 2), 11, 0)
    assert free_mul_moments_nc((0, 1, 0, 0, 0, 0, 0), m_b) == m_b


@settings(deadline=None, max_examples=30)
@given(xs=fraction_sequences(max_order=7), data=st.data())
def test_free_mul_cumulant_and_moment_routes_agree(xs, data):
    # [NS06] Thm. 14.4 (cumulants) and Rem. 14.5 (moments) must agree after the
    # moment-cumulant formula; kappa_n(ab) is symmetric in a, b (K is a bijection
    # preserving block types up to rotation, [NS06] Remark 9.23).
    ys = tuple(data.draw(st.lists(st.fractions(min_value=-3, max_value=3,
                                               max_denominator=7),
                                  min_size=len(xs), max_size=len(xs))))
    ka = (Fraction(0),) + xs
    kb = (Fraction(0),) + ys
    kab = free_mul_cumulants_nc(ka, kb)
    assert kab == free_mul_cumulants_nc(kb, ka)
    assert free_cumulants_to_moments_nc(kab) == free_mul_moments_nc(
        ka, free_cumulants_to_moments_nc(kb))


def test_free_mul_by_dirac_is_dilation():
    # A constant c is free from everything, and a ⊠ delta_c is the law of c a, so
    # m_n = c^n m_n(a); with a = free Poisson(1) (Catalan moments, [NS06] Prop. 12.11)
    # and c = 2: m_n = 2^n C_n.  Route: [NS06] Rem. 14.5.
    kappa_a = (0,) + (1,) * 8
    m_b = tuple(2**n for n in range(9))
    assert free_mul_moments_nc(kappa_a, m_b) == tuple(2**n * catalan(n) for n in range(9))


# ----------------------------------------------------------------------- bad input
@pytest.mark.parametrize("enum", ENUMERATIONS)
@pytest.mark.parametrize("bad", [-1, 13, 100, 3.0, "3", None, True, Fraction(3)])
def test_bad_n_raises_with_range(enum, bad):
    # Documented contract: n must be an int with 0 <= n <= 12 (bools rejected).
    with pytest.raises(FreeprobValueError, match=r"`n` of `\w+` must be an integer from 0 to 12"):
        enum(bad)
    assert issubclass(FreeprobValueError, ValueError)


def test_conversion_order_limits():
    # Documented: default max_order 10; max_order itself at most 12.
    with pytest.raises(FreeprobValueError, match="max_order = 10"):
        free_cumulants_to_moments_nc((0,) * 12)
    with pytest.raises(FreeprobValueError, match=r"`max_order` of `\w+` must be an integer from 0 to 12"):
        free_cumulants_to_moments_nc((0, 1), max_order=13)
    with pytest.raises(FreeprobValueError):
        moments_to_free_cumulants_nc(())
    with pytest.raises(FreeprobValueError, match="equal lengths"):
        free_mul_moments_nc((0, 1), (1, 1, 2))
    # Order 12 is allowed when asked for: Bell(12) = 4213597 (OEIS A000110) and
    # boolean cumulants all 1 give m_n = 2^(n-1) (number of compositions).
    assert classical_cumulants_to_moments_partitions((0,) + (1,) * 12, max_order=12)[12] \
        == 4213597
    assert boolean_cumulants_to_moments_interval((0,) + (1,) * 12, max_order=12)[12] \
        == 2**11
