"""TruncatedSeries and the coefficient rings: FLINT kernels vs the generic kernels.

Two independent implementations of every kernel (python-flint ``fmpq_series`` /
``arb_series`` and the generic Python recurrences of ``CoefficientRing``) must agree
exactly, and classical series identities must hold (Knuth, TAOCP vol. 2, §4.7).
"""
from fractions import Fraction
from math import comb

import flint
import mpmath
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from freeprob.core.coefficients import QQ, BallRing, CoefficientRing, MPRing, SymbolicRing
from freeprob.errors import FreeprobValueError, SeriesValuationError
from freeprob.core.series import TruncatedSeries as T

rationals = st.fractions(min_value=-5, max_value=5, max_denominator=7)


def generic(name, ring, *args):
    return getattr(CoefficientRing, name)(ring, *args)


@given(st.lists(rationals, min_size=2, max_size=9), st.lists(rationals, min_size=2, max_size=9))
def test_flint_kernels_equal_generic_kernels(a, b):
    n = 9
    A = [QQ.convert(v) for v in a] + [QQ.zero] * (n - len(a))
    B = [QQ.convert(v) for v in b] + [QQ.zero] * (n - len(b))
    assert QQ.mul(A, B, n) == generic("mul", QQ, A, B, n)
    B0 = [QQ.zero] + B[1:]
    assert QQ.compose(A, B0, n) == generic("compose", QQ, A, B0, n)
    if A[0] != 0:
        assert QQ.inv(A, n) == generic("inv", QQ, A, n)
    if A[1] != 0:
        A0 = [QQ.zero] + A[1:]
        assert QQ.reversion(A0, n) == generic("reversion", QQ, A0, n)
    A1 = [QQ.one] + A[1:]
    assert QQ.log(A1, n) == generic("log", QQ, A1, n)
    assert QQ.exp(B0, n) == generic("exp", QQ, B0, n)


@given(st.lists(rationals, min_size=3, max_size=8).filter(lambda c: c[1] != 0))
def test_reversion_is_a_compositional_inverse(c):
    f = T([0] + c[1:], order=8)
    g = f.reversion()
    x = T([0, 1], order=8)
    assert f.compose(g) == x
    assert g.compose(f) == x


def test_reversion_catalan():
    # x - x^2 has reversion sum C_{n-1} x^n (Catalan numbers, OEIS A000108)
    g = T([0, 1, -1], order=12).reversion()
    assert g.coefficients() == tuple([0] + [comb(2 * n - 2, n - 1) // n for n in range(1, 12)])


def test_log_exp_inverse_and_geometric_series():
    x = T([0, 1], order=10)
    assert (1 - x).inverse().coefficients() == (1,) * 10
    assert (1 + x).log().exp() == 1 + x
    # log(1+x) = sum (-1)^{n+1} x^n / n
    assert (1 + x).log().coefficients() == tuple([0] + [sp.Rational((-1) ** (n + 1), n) for n in range(1, 10)])


def test_orders_are_tracked():
    f = T([0, 1, 1], order=6)
    assert (f * f).order == 7          # valuation 1 gains one known term
    assert (f + T([1], order=3)).order == 3
    assert f.derivative().order == 5 and f.integral().order == 7
    assert T([1, 2, 3], order=5).compose(T([0, 0, 1], order=4)).order == 4


def test_symbolic_ring_reversion():
    t = sp.Symbol("t")
    g = T([0, t, 1], order=5).reversion()
    assert [sp.simplify(a - b) for a, b in zip(g.coefficients(), [0, 1 / t, -1 / t**3, 2 / t**5, -5 / t**7])] == [0] * 5
    assert isinstance(g.ring, SymbolicRing)


def test_mpmath_and_ball_rings_agree_with_exact():
    exact = [sp.Rational(v) for v in T([0, 1, Fraction(1, 3), Fraction(-2, 7)], order=12).reversion().coefficients()]
    with mpmath.workdps(40):
        m = T([mpmath.mpf(0), 1, mpmath.mpf(1) / 3, -mpmath.mpf(2) / 7], order=12).reversion()
        for a, b in zip(m.coefficients(), exact):
            assert abs(a - mpmath.mpf(b.p) / b.q) <= mpmath.mpf(10) ** -35 * max(1, abs(a))
    B = BallRing(200)
    with B.context():
        c = [B.zero, B.one, B.convert(sp.Rational(1, 3)), B.convert(sp.Rational(-2, 7))] + [B.zero] * 8
        r = B.reversion(c, 12)
        for a, b in zip(r, exact):
            assert a.contains(flint.arb(flint.fmpq(int(b.p), int(b.q))))


def test_bad_valuations_raise():
    with pytest.raises(SeriesValuationError, match="constant term"):
        T([1, 1], order=4).reversion()
    with pytest.raises(SeriesValuationError, match="linear coefficient is zero"):
        T([0, 0, 1], order=4).reversion()
    with pytest.raises(SeriesValuationError, match="constant term is zero"):
        T([0, 1], order=4).inverse()
    with pytest.raises(SeriesValuationError, match="non-zero constant term"):
        T([1, 1], order=4).compose(T([1, 1], order=4))
    with pytest.raises(FreeprobValueError, match="order must be an integer from 0 to"):
        T([1, 2], order=-1)
    with pytest.raises(FreeprobValueError, match="float coefficient"):
        T([0.5, 1])
    assert issubclass(SeriesValuationError, ValueError)


def test_mpring_context_restores_precision():
    before = mpmath.mp.dps
    MPRing(50).reversion([mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(1)], 6)
    assert mpmath.mp.dps == before
