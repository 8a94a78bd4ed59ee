r"""Invalid input raises :class:`freeprob.FreeprobValueError` naming the culprit.

freeprob.errors: "a parameter or argument is provably outside its domain.  The
message names the function or class, the argument, the rule and the offending
value."  Each test asserts the exception type *and* (with ``match=``) that the
message names the parameter or argument.  Valid neighbours of invalid inputs are
checked against exact values so that the checks are not over-eager.
"""
import math
import os
import re
from fractions import Fraction

import pytest
import sympy as sp

import freeprob as fp
from freeprob.core.symbols import x

R = sp.Rational
E = fp.FreeprobValueError


def test_error_hierarchy():
    assert issubclass(fp.FreeprobValueError, ValueError)
    assert issubclass(fp.SeriesValuationError, fp.FreeprobValueError)


# ------------------------------------------------------------------ family parameters
@pytest.mark.parametrize("rate", [0, -1])
def test_free_poisson_rate_not_positive(rate):
    with pytest.raises(E, match=r"`rate` of `FreePoisson`.*positive"):
        fp.FreePoisson(rate)


@pytest.mark.parametrize("rate", [0, -1])
def test_compound_free_poisson_rate_not_positive(rate):
    with pytest.raises(E, match=r"`rate` of `CompoundFreePoisson`.*positive"):
        fp.CompoundFreePoisson(rate, fp.Dirac(1))


@pytest.mark.parametrize("variance", [-1, 0])
def test_semicircle_variance_not_positive(variance):
    with pytest.raises(E, match=r"`variance` of `Semicircle`.*positive"):
        fp.Semicircle(0, variance)


def test_atomic_weights_not_summing_to_one():
    with pytest.raises(E, match=r"`weights`.*sum to 1.*5/6"):
        fp.Atomic([1, 2], [R(1, 2), R(1, 3)])


def test_atomic_negative_weight():
    with pytest.raises(E, match=r"`weights\[0\]`.*non-negative"):
        fp.Atomic([1, 2], [R(-1, 2), R(3, 2)])


def test_atomic_length_mismatch():
    with pytest.raises(E, match=r"2 points but 1 weights"):
        fp.Atomic([1, 2], [1])


def test_atomic_empty_points():
    with pytest.raises(E, match=r"`points`"):
        fp.Atomic([])


def test_mixture_weights_not_summing_to_one():
    with pytest.raises(E, match=r"mixture.*weights.*sum to 1"):
        fp.mixture([fp.Dirac(0), fp.Dirac(1)], [R(1, 2), R(1, 3)])


def test_free_poisson_jump_zero():
    with pytest.raises(E, match=r"`jump` of `FreePoisson`"):
        fp.FreePoisson(1, 0)


def test_bernoulli_bad_p_names_p():
    # Bernoulli(p) = (1-p) δ_low + p δ_high needs 0 <= p <= 1; the message should name
    # the argument the caller passed (`p` of `Bernoulli`), not an internal Atomic weight.
    with pytest.raises(E, match=r"`p`"):
        fp.Bernoulli(p=2)


# ------------------------------------------------------------------ operations
def test_free_mul_two_zero_means():
    with pytest.raises(E, match=r"free_mul.*zero mean"):
        fp.free_mul(fp.Semicircle(0, 1), fp.Semicircle(0, 2))


@pytest.mark.parametrize("t", [0, -1])
def test_free_power_t_not_positive(t):
    with pytest.raises(E, match=r"`t` of `free_power`.*positive"):
        fp.free_power(fp.Semicircle(0, 1), t)


def test_free_power_below_one_needs_infinite_divisibility():
    # A two-point law is not ⊞-infinitely divisible, so μ^{⊞1/2} is not a law
    # ([NS06] Lecture 14, Cor. 14.13 covers t >= 1 only).
    with pytest.raises(E, match=r"free_power.*t = 1/2.*infinitely divisible"):
        fp.free_power(fp.Atomic([0, 1]), R(1, 2))


def test_free_power_below_one_of_semicircle_is_fine():
    # The semicircle is ⊞-infinitely divisible: μ^{⊞1/2} is the semicircle of variance 1/2.
    assert fp.free_power(fp.Semicircle(0, 1), R(1, 2)).moments(6) == fp.Semicircle(0, R(1, 2)).moments(6)


def test_rectangular_companion_ratio_above_one_needs_atom():
    with pytest.raises(E, match=r"rectangular_companion.*ratio.*atom"):
        fp.rectangular_companion(fp.Semicircle(3, 1), 2)
    with pytest.raises(E, match=r"rectangular_companion.*ratio.*2/3"):
        fp.rectangular_companion(fp.FreePoisson(R(1, 2)), 3)


def test_rectangular_companion_with_enough_atom_is_fine():
    # FreePoisson(1/2) has an atom 1/2 at 0; 2·π_{1/2} − δ_0 is the law of its non-zero
    # part, the free Poisson law of rate 2 dilated by 1/2 ([NS06] Prop. 12.11: the
    # continuous part of π_λ, λ < 1, is λ·D_λ(π_{1/λ})).
    law = fp.rectangular_companion(fp.FreePoisson(R(1, 2)), 2)
    assert law.moments(10) == fp.dilate(fp.FreePoisson(2), R(1, 2)).moments(10)


def test_moments_to_free_cumulants_needs_m0_one():
    with pytest.raises(E, match=r"m_0"):
        fp.moments_to_free_cumulants([2, 1])
    with pytest.raises(E, match=r"κ_0"):
        fp.free_cumulants_to_moments([1, 2])


@pytest.mark.parametrize("poly", [x * 0 + 3, sp.Integer(3), [3], [3, 0, 0]])
def test_pushforward_constant_polynomial(poly):
    with pytest.raises(E, match=r"pushforward.*polynomial.*degree"):
        fp.pushforward(fp.Semicircle(0, 1), poly)


def test_pushforward_not_a_polynomial():
    with pytest.raises(E, match=r"pushforward.*not a polynomial"):
        fp.pushforward(fp.Semicircle(0, 1), sp.sin(x))


# ------------------------------------------------------------------ orders and dps
@pytest.mark.parametrize("k", [-1, 2.5, True])
def test_bad_order(k):
    with pytest.raises(E, match=r"moments.*order must be an integer from 0 to"):
        fp.Semicircle(0, 1).moments(k)


@pytest.mark.parametrize("dps", [0, -3, 2.5])
def test_bad_dps(dps):
    with pytest.raises(E, match=r"dps"):
        fp.Semicircle(0, 1).moments(3, dps=dps)


# ------------------------------------------------------------------ series valuations
def test_reversion_needs_zero_constant_term():
    with pytest.raises(fp.SeriesValuationError, match=r"reversion.*constant term"):
        fp.TruncatedSeries([1, 1]).reversion()


def test_reversion_needs_nonzero_linear_term():
    with pytest.raises(fp.SeriesValuationError, match=r"reversion.*linear"):
        fp.TruncatedSeries([0, 0, 1]).reversion()


def test_inverse_needs_nonzero_constant_term():
    with pytest.raises(fp.SeriesValuationError, match=r"inverse.*constant term"):
        fp.TruncatedSeries([0, 1]).inverse()


# ------------------------------------------------------------------ number conversion
def test_floats_become_the_rational_they_print_as():
    # freeprob.core.params: "Floats are converted to the exact rational they print as".
    assert fp.FreePoisson(0.1).rate == R(1, 10)
    assert fp.Semicircle(0, 2.5).variance == R(5, 2)
    assert fp.Semicircle(-0.3, 1).mean == R(-3, 10)
    assert fp.FreePoisson(0.1).moments(3) == fp.FreePoisson(R(1, 10)).moments(3)


def test_rational_strings_are_accepted():
    assert fp.FreePoisson("1/3").rate == R(1, 3)
    assert fp.FreePoisson(" 0.25 ").rate == R(1, 4)
    assert fp.FreePoisson(Fraction(2, 7)).rate == R(2, 7)


@pytest.mark.parametrize("text", ["__import__('os')", "pi", "t", "oo", "nan", "1/3 + x"])
def test_non_literal_strings_are_rejected(text):
    with pytest.raises(E, match=r"`rate` of `FreePoisson`.*strings"):
        fp.FreePoisson(text)


def test_division_by_zero_string_is_rejected():
    # "1/0" is a malformed rational literal: FreeprobValueError, not ZeroDivisionError.
    with pytest.raises(E, match=r"`rate` of `FreePoisson`"):
        fp.FreePoisson("1/0")


@pytest.mark.parametrize("rate", [1 + 2j, complex(1, 0), 1 + 2 * sp.I])
def test_complex_rate(rate):
    with pytest.raises(E, match=r"`rate` of `FreePoisson`.*real"):
        fp.FreePoisson(rate)


@pytest.mark.parametrize("rate", [math.nan, math.inf, -math.inf, sp.nan, sp.oo, sp.zoo])
def test_non_finite_rate(rate):
    with pytest.raises(E, match=r"`rate` of `FreePoisson`.*finite"):
        fp.FreePoisson(rate)


def test_boolean_parameter_rejected():
    with pytest.raises(E, match=r"`rate` of `FreePoisson`.*boolean"):
        fp.FreePoisson(True)


# ------------------------------------------------------------------ strings are never code
# freeprob.core.params: strings "are never evaluated as code".  The payload would set an
# environment variable if some code path handed it to eval/sympify.
PAYLOAD = "__import__('os').environ.__setitem__('FREEPROB_PWNED', '1') or 1"


def call_with_payload(fn):
    """Run ``fn``; return (payload executed?, exception raised or None)."""
    os.environ.pop("FREEPROB_PWNED", None)
    try:
        fn()
        outcome = None
    except Exception as exc:  # noqa: BLE001 - the type is asserted by the caller
        outcome = exc
    finally:
        executed = os.environ.pop("FREEPROB_PWNED", None) is not None
    return executed, outcome


def assert_rejected_without_eval(fn, pattern):
    executed, outcome = call_with_payload(fn)
    assert not executed, "a string argument was evaluated as Python code"
    assert isinstance(outcome, E), f"expected FreeprobValueError, got {outcome!r}"
    assert re.search(pattern, str(outcome)), str(outcome)


def test_shift_by_code_string_is_rejected():
    assert_rejected_without_eval(lambda: fp.Semicircle(0, 1) + PAYLOAD, r"`a` of `shift`.*strings")


def test_subtracting_code_string_is_rejected():
    # law - s must treat s like law + s: only rational literals, never evaluated.
    assert_rejected_without_eval(lambda: fp.Semicircle(0, 1) - PAYLOAD, r"strings")


def test_subtracting_non_literal_string_is_rejected():
    with pytest.raises(E, match=r"strings"):
        fp.Semicircle(0, 1) - "x + 1"


def test_subtracting_rational_string_is_a_shift():
    assert (fp.Semicircle(0, 1) - "1/3").moments(4) == fp.shift(fp.Semicircle(0, 1), R(-1, 3)).moments(4)


@pytest.mark.parametrize("convert", [fp.moments_to_free_cumulants, fp.moments_to_boolean_cumulants,
                                     fp.moments_to_classical_cumulants])
def test_conversion_with_code_string_entry_is_rejected(convert):
    assert_rejected_without_eval(lambda: convert([1, PAYLOAD]), convert.__name__)


def test_conversion_of_a_string_is_rejected():
    # A str is not a sequence of moments ("1234" must not be read as (1, 2, 3, 4)).
    with pytest.raises(E, match=r"moments_to_free_cumulants"):
        fp.moments_to_free_cumulants("1234")


def test_truncated_series_with_code_string_is_rejected():
    assert_rejected_without_eval(lambda: fp.TruncatedSeries([0, PAYLOAD]), r"TruncatedSeries")
