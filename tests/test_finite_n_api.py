"""FiniteNLaw's API edges: model sizes of free powers that stay in their family, ball=True
refused, Law methods a finite-n law does not have, and error messages naming the public
method (freeprob.laws.finite_n, freeprob.laws.finite_n_rules)."""
import pytest
import sympy as sp

import freeprob as fp
from freeprob.errors import FreeprobValueError, NotAvailable

R = sp.Rational


# -- free powers that stay in their family get that family's model and sizes --------------
@pytest.mark.parametrize("power, family, n", [
    (fp.free_power(fp.FreePoisson(1), R(3, 2)), fp.FreePoisson(R(3, 2)), 10),
    (fp.free_power(fp.FreePoisson(R(1, 2)), R(2, 3)), fp.FreePoisson(R(1, 3)), 9),
    (fp.free_power(fp.FreePoisson(R(1, 2)), 2), fp.FreePoisson(1), 11),     # copies would need 11/2
    (fp.free_power(fp.free_add(fp.Semicircle(), fp.FreePoisson(1)), R(1, 2)),
     fp.free_add(fp.Semicircle(0, R(1, 2)), fp.FreePoisson(R(1, 2))), 8),
])
def test_a_non_integer_power_is_its_family_member_at_the_same_sizes(power, family, n):
    assert power.finite_n(n).moments(4) == family.finite_n(n).moments(4)
    nn = sp.Symbol("n", positive=True)
    assert power.finite_n(nn).moments(3) == family.finite_n(nn).moments(3)


@pytest.mark.parametrize("make", [
    lambda: fp.free_power(fp.FreePoisson(1), R(3, 2)).finite_n(11),       # 33/2 columns
    lambda: fp.FreePoisson(R(3, 2)).finite_n(11),
    lambda: fp.free_power(fp.FreePoisson(R(1, 2)), R(2, 3)).finite_n(10),   # 10/3 columns
    lambda: fp.free_power(fp.free_power(fp.FreePoisson(1), R(1, 2)), R(2, 3)).finite_n(10),
    lambda: fp.free_power(fp.FreePoisson(1) + 1, R(1, 2)).finite_n(7),
])
def test_a_non_integer_power_with_a_fractional_size_is_refused(make):
    with pytest.raises(FreeprobValueError, match="columns rate·n .* to be a whole number"):
        make()


def test_an_integer_power_outside_the_families_is_the_sum_of_copies():
    law = fp.free_power(fp.Bernoulli(), 2)
    assert "sum of 2 independent copies" in law.finite_n(10).model
    with pytest.raises(FreeprobValueError, match="multiplicity"):
        law.finite_n(11)


def test_a_non_integer_power_outside_the_families_has_no_model():
    with pytest.raises(NotAvailable, match="same family.*semicircle, free Poisson"):
        fp.free_power(fp.Bernoulli(), R(3, 2)).finite_n(10)


# -- the Law keywords and methods on a FiniteNLaw --------------------------------------------
FL = fp.Semicircle().finite_n(10)


@pytest.mark.parametrize("call", [
    lambda f: f.density(0.3, dps=20, ball=True), lambda f: f.cdf(0.3, ball=True),
    lambda f: f.cauchy(1j, ball=True), lambda f: f.support(ball=True), lambda f: f.atoms(ball=True),
    lambda f: f.correction_density(0.3, ball=True), lambda f: f.correction_cdf(0.3, ball=True),
])
def test_ball_true_is_refused_and_ball_false_accepted(call):
    with pytest.raises(NotAvailable, match=r"ball=True is not available: .*not certified"):
        call(FL)
    assert FL.density(0.3, ball=False) == FL.density(0.3)


@pytest.mark.parametrize("name, match", [
    ("finite_n", "already a finite-n law.*limit.finite_n"),
    ("free_cumulants", "signed measure.*limit.free_cumulants"),
    ("boolean_cumulants", "not a Law"), ("jacobi_parameters", "not a Law"), ("r_transform", "not a Law"),
    ("quantile", "not monotone"),
])
def test_law_methods_a_finite_n_law_lacks_say_why(name, match):
    with pytest.raises(NotAvailable, match=match + ".*offers moments"):
        getattr(FL, name)
    assert not hasattr(FL, name)                      # also an AttributeError
    with pytest.raises(AttributeError, match="no attribute 'no_such'"):
        FL.no_such


@pytest.mark.parametrize("call, who", [
    (lambda f: f.density(float("nan")), "FiniteNLaw.density: x must be finite"),
    (lambda f: f.cdf(float("nan")), "FiniteNLaw.cdf: x must be finite"),
    (lambda f: f.cauchy(0.5), "FiniteNLaw.cauchy: z = 1/2 is real and in the support"),
    (lambda f: f.cauchy("abc"), "FiniteNLaw.cauchy: `z` must be"),
    (lambda f: f.atoms(dps=0), "FiniteNLaw.atoms: dps"),
])
def test_errors_name_the_public_method(call, who):
    with pytest.raises(FreeprobValueError) as info:
        call(FL)
    assert str(info.value).startswith(who)


def test_law_errors_name_the_method_not_the_evaluator():
    with pytest.raises(FreeprobValueError) as info:
        fp.Semicircle().cauchy(0.5)
    assert str(info.value).startswith("cauchy: z = 1/2 is real and in the support")


def test_density_at_an_exact_irrational_edge_is_the_edge_value():
    # FreePoisson(2)'s edges are 3 ∓ 2√2: given exactly, the corrected density there is 0 (as
    # at the GOE's edge 2), not G₁'s singularity at the edge's mpf rounding (it was −1.4·10⁶)
    fl = fp.FreePoisson(2).finite_n(50)
    lo, hi = 3 - 2 * sp.sqrt(2), 3 + 2 * sp.sqrt(2)
    assert fl.density(lo) == 0 and fl.density(hi) == 0 and fl.correction_density(lo) == 0
    assert fp.Semicircle(0, 1).finite_n(100).density(2) == 0
    # inside, the list call and the scalar call agree, and the value is ρ + ρ₁/n
    inside = fl.density([sp.Rational(1, 2), hi])
    assert inside[1] == 0
    assert abs(inside[0] - fl.density(0.5)) < 1e-14
    assert abs(inside[0] - (fp.FreePoisson(2).density(0.5) + fl.correction_density(0.5) / 50)) < 1e-14
