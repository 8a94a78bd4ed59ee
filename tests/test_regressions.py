"""Regression tests for problems found by review (each asserts the correct value)."""
import mpmath
import pytest
import sympy as sp

import freeprob as fp
from freeprob.errors import FreeprobValueError
from freeprob.numeric import AlgebraicCauchy

t = sp.Symbol("t")
R = sp.Rational


def test_subs_never_evaluates_strings():
    with pytest.raises(FreeprobValueError, match="strings must be exact rational literals"):
        fp.FreePoisson(t).subs({t: "__import__('os').getpid()"})
    assert fp.FreePoisson(t).subs({t: "1/3"}) == fp.FreePoisson(sp.Rational(1, 3))
    assert fp.FreePoisson(t).subs(t, 2).moments(2) == (1, 2, 6)
    with pytest.raises(FreeprobValueError, match="keys must be sympy symbols"):
        fp.FreePoisson(t).subs({"t": 2})


def test_mixed_algebraic_and_symbolic_parameters_give_clean_exact_values():
    law = fp.Semicircle(t, sp.sqrt(2))
    assert law.free_cumulants(3) == (0, t, sp.sqrt(2), 0)
    # boolean cumulants of a semicircle: b_3 = κ_1 κ_2 (interval partitions, [SW97])
    assert sp.expand(law.boolean_cumulants(3)[3] - sp.sqrt(2) * t) == 0
    assert law.classical_cumulants(3) == (0, t, sp.sqrt(2), 0)


def test_log_of_composite_numbers_as_parameters():
    m = fp.FreePoisson(sp.log(8)).moments(2)
    assert sp.simplify(m[2] - (sp.log(8) ** 2 + sp.log(8))) == 0


def test_ball_path_keeps_m0_exactly_one():
    law = fp.mixture([fp.Dirac(1), fp.Dirac(2)], [sp.pi / 4, 1 - sp.pi / 4])
    c = law.classical_cumulants(2, dps=30)
    with mpmath.workdps(40):
        assert abs(c[1] - (2 - mpmath.pi / 4)) < mpmath.mpf(10) ** -28
        # variance of a two-point law: p(1-p)(b-a)^2 with p = π/4
        p = mpmath.pi / 4
        assert abs(c[2] - p * (1 - p)) < mpmath.mpf(10) ** -28


def test_cancelling_ratio_is_decided_quickly():
    ratio = 2 + sp.log(6) - sp.log(2) - sp.log(3) + sp.Rational(1, 10**20)
    with pytest.raises(FreeprobValueError, match="needs an atom"):
        fp.rectangular_companion(fp.FreePoisson(sp.Rational(1, 2)), ratio)


def test_free_mul_accepts_a_nonpositive_factor():
    # −1 · S for a semicircle S is again a standard semicircle (Catalan moments)
    assert fp.free_mul(fp.Dirac(-1), fp.Semicircle()).moments(6) == (1, 0, 1, 0, 2, 0, 5)
    # (−P) ⊠ (−Q) has the moments of P ⊠ Q (Fuss–Catalan, [NS06] Lecture 18)
    neg = fp.FreePoisson(1, -1)
    assert fp.free_mul(neg, neg).moments(5) == (1, 1, 3, 12, 55, 273)


@pytest.mark.parametrize("bad", [
    lambda: fp.Atomic(b"12"), lambda: fp.Atomic("12"), lambda: fp.Atomic({1: 2}),
    lambda: fp.moments_to_free_cumulants([1, True]), lambda: fp.moments_to_free_cumulants([1, 1j]),
    lambda: fp.mixture(None), lambda: fp.mixture(fp.Semicircle()),
    lambda: fp.pushforward(fp.Semicircle(), sp.Eq(sp.Symbol("x"), 1)),
    lambda: fp.pushforward(fp.Semicircle(), sp.Symbol("x") ** 2, var="x"),
    lambda: fp.TruncatedSeries(None), lambda: fp.TruncatedSeries([1, 2], var="q"),
    lambda: fp.TruncatedSeries([1, 2], ring="foo"), lambda: fp.TruncatedSeries([1, 2]).shift(2.5),
    lambda: fp.TruncatedSeries([mpmath.mpf("nan"), 1]),
    lambda: fp.FreePoisson(1).moments(10**6), lambda: fp.FreePoisson(1).moments(3, dps=10**7),
    lambda: fp.TruncatedSeries([1, 1], order=10**9),
])
def test_bad_input_gives_freeprob_value_error(bad):
    with pytest.raises(FreeprobValueError):
        bad()


@pytest.mark.parametrize("edge,mass", [(2, R(2, 3)), (-2, R(1, 2))])
def test_atom_exactly_on_a_support_edge(edge, mass):
    # G = (1−m)·G_sc + m/(z − a) with a = ±2: a pole on the square-root edge (the mass
    # identification used to track G itself down to a + iη and never finished)
    law = fp.mixture([fp.Semicircle(0, 1), fp.Dirac(edge)], [1 - mass, mass])
    assert law.atoms() == ((edge, mass),)
    assert law.support() == ((-2, 2),)
    # independent route: quadrature of density + atom against the exact moments
    quad = AlgebraicCauchy(law.cauchy_equation()).moments(4, dps=12)
    exact = law.moments(4)
    with mpmath.workdps(20):
        for q, e in zip(quad, exact):
            assert abs(q - mpmath.mpf(sp.Rational(e).p) / sp.Rational(e).q) < 1e-10


def test_atom_of_a_law_whose_discriminant_overflows_doubles():
    # (d_K, d_V) = (64, 192), n = 512 at θ1 = 1, θ2 = κ(1.5) rounded: the discriminant's
    # coefficients exceed 1e308, the Fujiwara radius came out infinite and every atom
    # search failed.  Rank: mass 1 − d_V/n = 5/8 at 0 (docs/theory.md §2).
    from freeprob.attention import Architecture, mean_normalized, output_law, theta1, theta2
    law = output_law(Architecture.from_dimensions(n=512, heads=1, d_k=64, d_v=192, d_o=512))
    law = mean_normalized(law.subs({theta1: 1, theta2: R("0.265088363184")}))
    assert law.atoms() == ((0, R(5, 8)),)
    lo, hi = law.support()[0]
    assert 0 < float(lo) < float(hi)


@pytest.mark.parametrize("expr,atoms", [
    # an atom at an irrational point (sympy left the discriminant over EX as a fraction)
    ("mixture([Semicircle(0,1), Dirac(sqrt(2))], [1/2, 1/2])", [(sp.sqrt(2), R(1, 2))]),
    # on the upper / lower edge of MP(2)'s support [3 − 2√2, 3 + 2√2] (a double root of the
    # mass polynomial that sympy could not factor over EX: the atom was silently missed)
    ("mixture([MarchenkoPastur(2), Dirac(3+2*sqrt(2))], [1/2, 1/2])", [(0, R(1, 4)), (3 + 2 * sp.sqrt(2), R(1, 2))]),
    ("mixture([MarchenkoPastur(2), Dirac(3-2*sqrt(2))], [1/3, 2/3])", [(0, R(1, 6)), (3 - 2 * sp.sqrt(2), R(2, 3))]),
    # two atoms 1e-9 / 1e-12 apart at irrational points: the coefficients of P (~1e9) cancel
    # near the atoms and a track in doubles read rounding noise as "mass 0" (both atoms vanished)
    ("mixture([Dirac(sqrt(2)), Dirac(sqrt(2)+1/10**9)], [1/2, 1/2])",
     [(sp.sqrt(2), R(1, 2)), (sp.sqrt(2) + R(1, 10**9), R(1, 2))]),
    ("mixture([Dirac(sqrt(2)), Dirac(sqrt(2)+1/10**12)], [1/3, 2/3])",
     [(sp.sqrt(2), R(1, 3)), (sp.sqrt(2) + R(1, 10**12), R(2, 3))]),
    # FLINT's factorisation overflowed on these coefficients (now falls back to sympy)
    ("mixture([Dirac(pi), Dirac(pi+1/10**12)], [1/2, 1/2])", [(sp.pi, R(1, 2)), (sp.pi + R(1, 10**12), R(1, 2))]),
])
def test_atoms_at_irrational_points(expr, atoms):
    from freeprob.cli.expr import parse_law
    got = parse_law(expr).atoms()
    assert len(got) == len(atoms)
    for (a, m), (a0, m0) in zip(got, atoms):
        assert sp.simplify(a - a0) == 0 and sp.simplify(m - m0) == 0


def test_numeric_mass_candidates_keep_a_split_double_root():
    from freeprob.numeric.roots import _num_real_polyroots
    with mpmath.workprec(120):
        split = [mpmath.mpf(1), mpmath.mpf(-1), mpmath.mpf(1) / 4 + mpmath.mpf(2) ** -118]   # (H − 1/2)² + tiny
        assert _num_real_polyroots(split, 120) == []
        (r,) = _num_real_polyroots(split, 120, clusters=True)
        assert abs(r - mpmath.mpf(1) / 2) < mpmath.mpf(2) ** -50
        assert _num_real_polyroots([mpmath.mpf(1), mpmath.mpf(0), mpmath.mpf(1)], 120, clusters=True) == []


def test_close_atoms_resolved_or_fail_cleanly():
    from freeprob.errors import PrecisionError
    from freeprob.cli.expr import parse_law
    # residues are read down to heights ~1e-32: atoms 1e-20 apart are resolved exactly
    assert parse_law("mixture([Dirac(1), Dirac(1+1/10**20)], [1/3, 2/3])").atoms() == (
        (1, sp.Rational(1, 3)), (1 + sp.Rational(1, 10**20), sp.Rational(2, 3)))
    # closer than that: a clean refusal, never a wrong mass
    with pytest.raises(PrecisionError, match="cannot identify the mass"):
        parse_law("mixture([Dirac(1), Dirac(1+1/10**40)], [1/3, 2/3])").atoms()


def test_edges_with_irrational_coefficients_have_all_their_digits():
    # the special polynomial's coefficients were rounded to doubles before root finding:
    # edges 1 + √2, 1 + √3 came out wrong from the 10th digit (printed to 30)
    from freeprob.cli.expr import parse_law
    x = "mixture([Dirac(1), Dirac(sqrt(2))], [1/4, 3/4])"
    y = "mixture([Dirac(1), Dirac(sqrt(3))], [1/4, 3/4])"
    (a, b), (c, d) = parse_law(f"free_add({x}, {y})").support(dps=30)
    with mpmath.workdps(40):
        assert abs(b - (1 + mpmath.sqrt(2))) < mpmath.mpf(10) ** -28
        assert abs(c - (1 + mpmath.sqrt(3))) < mpmath.mpf(10) ** -28
    (lo, hi), = parse_law("free_add(Semicircle(0,1), Dirac(sqrt(2)))").support(dps=30)
    with mpmath.workdps(40):
        assert abs(hi - (2 + mpmath.sqrt(2))) < mpmath.mpf(10) ** -28
        assert abs(lo - (mpmath.sqrt(2) - 2)) < mpmath.mpf(10) ** -28
