r"""Numeric (``dps=``) evaluation: digits are correct, stable and side-effect free.

Contract (freeprob.laws.law, "Precision"): ``law.moments(k, dps=N)`` returns mpmath numbers
correct to ``N`` significant digits -- rational laws are computed exactly and
rounded once, others in certified ball arithmetic.  The reference values here are
the exact sympy results evaluated by ``sympy.N`` with 10 extra digits, i.e. an
independent evaluation of the same exact quantity.
"""
import flint
import mpmath
import pytest
import sympy as sp

import freeprob as fp

R = sp.Rational


def _ref(exact, dps):
    """The exact value as an mpf with ``dps + 10`` correct digits (sympy evalf)."""
    return mpmath.mpf(str(sp.N(exact, dps + 10)))


def agrees(value, exact, dps):
    """``value`` equals ``exact`` to relative 10^-(dps-1) (exact zeros must be zeros)."""
    if exact == 0:
        return value == 0
    with mpmath.workdps(dps + 30):
        ref = _ref(exact, dps)
        return abs(value - ref) <= mpmath.mpf(10) ** (-(dps - 1)) * abs(ref)


RATIONAL_LAWS = {
    "free_poisson_1/3": fp.FreePoisson(R(1, 3)),
    "semicircle": fp.Semicircle(R(1, 2), R(2, 3)),
    "free_mul": fp.free_mul(fp.FreePoisson(R(1, 2)), fp.Atomic([1, 3], [R(1, 3), R(2, 3)])),
    "free_mul_zero_mean": fp.free_mul(fp.FreePoisson(R(1, 7)), fp.Semicircle(0, R(1, 3))),
}

IRRATIONAL_LAWS = {
    "semicircle_e-1": fp.Semicircle(sp.E - 1, 2),
    "free_poisson_pi": fp.FreePoisson(sp.pi),
    "free_poisson_sqrt2": fp.FreePoisson(sp.sqrt(2), R(1, 3)),
    "dilate_sqrt2": fp.dilate(fp.Semicircle(1, 1), sp.sqrt(2)),
    "free_mul_zero_mean_e": fp.free_mul(fp.FreePoisson(sp.E - 1), fp.Semicircle(0, 1)),
}

ALL_LAWS = {**RATIONAL_LAWS, **IRRATIONAL_LAWS}
K = 8


@pytest.mark.parametrize("dps", [15, 30, 50])
@pytest.mark.parametrize("law", list(ALL_LAWS.values()), ids=list(ALL_LAWS))
def test_moments_at_dps_are_the_rounded_exact_values(law, dps):
    exact = law.moments(K)
    num = law.moments(K, dps=dps)
    assert len(num) == K + 1
    assert all(isinstance(v, mpmath.mpf) for v in num)
    bad = [(n, mpmath.nstr(v, dps + 5), sp.N(e, dps + 5))
           for n, (v, e) in enumerate(zip(num, exact)) if not agrees(v, e, dps)]
    assert bad == []


@pytest.mark.parametrize("law", list(IRRATIONAL_LAWS.values()), ids=list(IRRATIONAL_LAWS))
def test_cumulants_at_dps_are_the_rounded_exact_values(law):
    dps = 40
    for method in ("free_cumulants", "boolean_cumulants", "classical_cumulants"):
        exact = getattr(law, method)(6)
        num = getattr(law, method)(6, dps=dps)
        assert all(agrees(v, e, dps) for v, e in zip(num, exact)), method


def test_free_poisson_pi_first_moment_has_thirty_digits():
    # m_1 of the free Poisson law of rate π is π ([NS06] Prop. 12.11): the 30-digit
    # answer must carry 30 correct digits of π, not a double-precision approximation.
    v = fp.FreePoisson(sp.pi).moments(1, dps=30)[1]
    with mpmath.workdps(60):
        assert abs(v - mpmath.pi) <= mpmath.mpf(10) ** -29 * mpmath.pi


def assert_agree_to_29_digits(lo, hi):
    with mpmath.workdps(80):
        for a, b in zip(lo, hi):
            if b == 0:
                assert a == 0
            else:
                assert abs(a - b) < mpmath.mpf(10) ** -29 * abs(b)


@pytest.mark.parametrize("law", list(ALL_LAWS.values()), ids=list(ALL_LAWS))
def test_raising_dps_changes_no_digit(law):
    assert_agree_to_29_digits(law.moments(K, dps=30), law.moments(K, dps=60))


@pytest.mark.parametrize("law", list(IRRATIONAL_LAWS.values()), ids=list(IRRATIONAL_LAWS))
def test_result_does_not_depend_on_ambient_mpmath_precision(law):
    # dps= fixes the precision of the answer; the caller's mp.dps must not matter.
    default = law.moments(K, dps=30)
    with mpmath.workdps(100):
        high = law.moments(K, dps=30)
    assert_agree_to_29_digits(default, high)


def test_free_symbols_with_dps_raise_naming_the_symbol():
    theta = sp.Symbol("theta")
    with pytest.raises(fp.FreeprobValueError, match="theta"):
        fp.FreePoisson(theta).moments(3, dps=20)
    with pytest.raises(fp.FreeprobValueError, match="theta"):
        fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(2, theta)).free_cumulants(3, dps=20)
    with pytest.raises(fp.FreeprobValueError, match="theta"):
        fp.Semicircle(theta, 1).r_series(3, dps=20)


def _calls():
    yield lambda: fp.FreePoisson(R(1, 3)).moments(10, dps=40)
    yield lambda: fp.FreePoisson(sp.pi).moments(10, dps=40)
    yield lambda: fp.free_mul(fp.FreePoisson(sp.E - 1), fp.Semicircle(0, 1)).moments(6, dps=25)
    yield lambda: fp.Semicircle(sp.sqrt(2), 1).classical_cumulants(8, dps=33)
    yield lambda: fp.FreePoisson(sp.pi).s_series(6, dps=20)
    yield lambda: fp.FreePoisson(sp.Symbol("t")).moments(3, dps=20)       # raises
    yield lambda: fp.FreePoisson(R(1, 3)).moments(3, dps=0)               # raises


def test_global_precision_is_restored():
    old_dps, old_prec, old_cap = mpmath.mp.dps, flint.ctx.prec, flint.ctx.cap
    try:
        mpmath.mp.dps = 23
        flint.ctx.prec = 97
        flint.ctx.cap = 13
        for call in _calls():
            try:
                call()
            except fp.FreeprobValueError:
                pass
            assert mpmath.mp.dps == 23
            assert flint.ctx.prec == 97
            assert flint.ctx.cap == 13
    finally:
        mpmath.mp.dps, flint.ctx.prec, flint.ctx.cap = old_dps, old_prec, old_cap


def test_two_hundred_moments_at_fifty_digits():
    # Fresh law objects so that the numeric call cannot reuse the exact cache.
    exact = fp.free_mul(fp.FreePoisson(R(1, 2)), fp.FreePoisson(R(1, 3))).moments(200)
    num = fp.free_mul(fp.FreePoisson(R(1, 2)), fp.FreePoisson(R(1, 3))).moments(200, dps=50)
    assert len(num) == 201
    with mpmath.workdps(80):
        for e, v in zip(exact, num):
            ref = mpmath.mpf(int(e.p)) / int(e.q)
            assert abs(v - ref) <= mpmath.mpf(10) ** -49 * abs(ref)


def test_numeric_zero_mean_factor_after_irrational_cancellation():
    # shift(Semicircle(√2, 1), -√2) is the standard semicircle: its mean is exactly 0,
    # which the exact route knows (and uses the zero-mean branch of free_mul).  The
    # numeric route must give the same numbers as the exact one, (1, 0, 4, 0, 48)
    # = free Poisson(2) ⊠ semicircle, by the Kreweras formula [NS06] Thm. 14.4.
    r2 = sp.sqrt(2)
    law = fp.free_mul(fp.FreePoisson(2), fp.shift(fp.Semicircle(r2, 1), -r2))
    exact = law.moments(4)
    assert exact == (1, 0, 4, 0, 48)
    num = law.moments(4, dps=20)
    assert all(agrees(v, e, 20) for v, e in zip(num, exact))

