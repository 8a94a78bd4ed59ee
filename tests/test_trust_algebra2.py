"""Regression tests (issue 15, third review): algebraic parameters of every kind.

Each test compares an irrational parameter with a closed form or with the same law at a
20-digit rational stand-in (an independent route: rational coefficients never go through
the frozen algebraic constants).
"""
import mpmath
import pytest
import sympy as sp
from sympy import Rational as R, sqrt

import freeprob as fp
from freeprob.core.exactpoly import freeze_constants
from freeprob.numeric.roots import _num_real_polyroots
from freeprob.attention import Architecture, head_output_law, mean_normalized, output_law
from freeprob.errors import PrecisionError

SQRT3 = R(17320508075688772935, 10**19)


def _close(a, b, tol=1e-12):
    return all(abs(float(x) - float(y)) <= tol * max(1, abs(float(y))) for x, y in zip(a, b))


def test_dependent_radicals_share_one_generator():
    # 2^(1/3) and 4^(1/3) = (2^(1/3))^2 share one variable (were two, a degree-9
    # "field" whose norm factored spuriously; output_law then ran for minutes)
    (e,), back, rel = freeze_constants([2 ** R(1, 3) + 4 ** R(1, 3) + sqrt(6) - sqrt(2)])
    # primes 2 (exponents 1/3, 2/3, 1/2: 2^(1/6), degree 6) and 3 (degree 2): ℚ-degree 12
    assert sorted(sp.degree(m, v) for v, m in rel) == [2, 6]
    assert sp.simplify(e.xreplace(back) - (2 ** R(1, 3) + 4 ** R(1, 3) + sqrt(6) - sqrt(2))) == 0


def test_nested_radical_is_one_field():
    (e,), back, rel = freeze_constants([sqrt(1 + sqrt(2)) + sqrt(2)])
    assert len(rel) == 1 and sp.degree(rel[0][1], rel[0][0]) == 4
    assert sp.simplify(e.xreplace(back) - sqrt(1 + sqrt(2)) - sqrt(2)) == 0


def test_exact_zero_root_is_not_a_cluster():
    with mpmath.workprec(200):
        cs = [mpmath.mpf(c) for c in (1, 1, -2, 0, 0, 0, 0)]      # x^4 (x - 1)(x + 2)
        roots = sorted(_num_real_polyroots(cs, 200, clusters=True))
    assert roots == [-2, 0, 1]


def test_irrational_value_width_no_atom():
    # mass at 0 was "cannot identify": the mass polynomial H^4·q(H) gave tiny spurious roots
    arch = dict(heads=2, gamma_k=1, gamma_o=1, beta=1)
    law = output_law(Architecture(gamma_v=sqrt(3), **arch))
    ref = output_law(Architecture(gamma_v=SQRT3, **arch))
    assert law.atoms() == ref.atoms() == ()
    assert _close(law.support()[0], ref.support()[0])


def test_irrational_value_width_exact_atom():
    law = head_output_law(Architecture(heads=1, gamma_k=1, gamma_v=sqrt(2) / 3, gamma_o=1, beta=R(1, 2)))
    (loc, mass), = law.atoms()
    assert loc == 0 and sp.simplify(mass - (1 - sqrt(2) / 3)) == 0


def test_two_radicals_equation_is_irreducible_and_fast():
    arch = dict(heads=2, gamma_k=1, beta=1)
    eq = output_law(Architecture(gamma_v=sqrt(3), gamma_o=2 ** R(1, 3), **arch)).cauchy_equation()
    ref = output_law(Architecture(gamma_v=SQRT3, gamma_o=R(12599210498948731648, 10**19), **arch))
    assert sp.degree(eq, eq.gens[0]) == sp.degree(ref.cauchy_equation(), eq.gens[0])


def test_nested_radical_free_mul():
    law = fp.free_mul(fp.FreePoisson(sqrt(1 + sqrt(2))), fp.FreePoisson(2))
    ref = fp.free_mul(fp.FreePoisson(R(15537739740300373073, 10**19)), fp.FreePoisson(2))
    eq = law.cauchy_equation()
    assert sp.degree(eq, eq.gens[0]) == 3
    assert _close(law.support()[0], ref.support()[0])


def test_irrational_atom_inside_the_support_cdf():
    law = fp.mixture([fp.Dirac(sqrt(2)), fp.Semicircle(0, 1)], [R(1, 3), R(2, 3)])

    def F(x):   # closed form: 1/3·[x ≥ √2] + 2/3·semicircle cdf
        x = mpmath.mpf(x)
        sc = mpmath.mpf(1) / 2 + x * mpmath.sqrt(4 - x ** 2) / (4 * mpmath.pi) + mpmath.asin(x / 2) / mpmath.pi
        return (x >= mpmath.sqrt(2)) / mpmath.mpf(3) + 2 * sc / 3
    for x in (R(7, 5), R(3, 2), R(19, 10)):
        assert abs(law.cdf(x) - F(x)) < 1e-13
    assert law.cdf(3) == pytest.approx(1, abs=1e-14)


def test_irrational_atom_quantile():
    law = fp.mixture([fp.Dirac(sqrt(2)), fp.FreePoisson(1)], [R(1, 2), R(1, 2)])
    ref = fp.mixture([fp.Dirac(R(14142135623730950488, 10**19)), fp.FreePoisson(1)], [R(1, 2), R(1, 2)])
    assert abs(law.quantile(R(9, 10)) - ref.quantile(R(9, 10))) < 1e-12
    assert abs(law.quantile(R(1, 2)) - mpmath.sqrt(2)) < 1e-14


def test_density_at_an_atom_with_irrational_width():
    # "P(G, 0) vanishes identically": the deflated equation kept a factor z
    law = output_law(Architecture(heads=4, gamma_k=sqrt(2), gamma_v=R(1, 2), gamma_o=1, beta=1))
    assert law.atoms() == ((0, R(1, 2)),)
    assert law.support()[0][0] > 0 and law.density(0) == 0
    assert law.density(R(1, 2)) > 0


def test_tiny_beta_atom():
    # continuous part of width 1e-17 next to the atom: residues at heights below 1e-17
    law = output_law(Architecture(heads=4, gamma_k=R(1, 2), gamma_v=R(1, 2), gamma_o=1, beta=R(1, 10**9)))
    assert law.atoms() == ((0, R(1, 2)),)


def test_badly_scaled_message_does_not_send_the_user_round():
    # β = 15 (θ1 = e^225): the roots of its Cauchy equation cannot be isolated (at β = 10
    # they can since python-flint isolates them, issue 27: support ≈ (0.0477, 9.63))
    law = mean_normalized(output_law(Architecture(heads=4, gamma_k=R(1, 2), gamma_v=R(1, 2), gamma_o=1, beta=15)))
    with pytest.raises(PrecisionError) as info:
        law.support()
    assert "mean_normalized" not in str(info.value) and "Dilate" not in str(info.value)
    assert "support" in str(info.value)
