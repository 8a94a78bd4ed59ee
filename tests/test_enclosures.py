"""Ball enclosures (issue 17): every ``ball=True`` result contains a reference computed at
twice the digits, meets its width, and has the plain result as its midpoint.

Laws: the families, every operation, and the attention laws (ℤ[e] coefficients, an atom
at 0).  Source of the method: freeprob/numeric/enclosure.py (Krawczyk's test, rigorous
quadrature along a path in the upper half-plane).
"""
from fractions import Fraction

import flint
import mpmath
import pytest
import sympy as sp

from freeprob import (
    Bernoulli,
    CompoundFreePoisson,
    Dirac,
    FreePoisson,
    MarchenkoPastur,
    Semicircle,
    dilate,
    free_add,
    free_mul,
    free_power,
    mixture,
    pushforward,
    rectangular_companion,
    shift,
)
from freeprob.attention import Architecture, head_output_law, output_law
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.numeric import enclosure
from freeprob.numeric.enclosure import exact_arb, meets
from freeprob.core.symbols import x as X

arb, acb = flint.arb, flint.acb


def _laws():
    sc = Semicircle(0, 1)
    return {
        "semicircle": sc,
        "marchenko_pastur": MarchenkoPastur(Fraction(1, 2)),
        "free_poisson_atom": FreePoisson(Fraction(1, 2)),
        "compound": CompoundFreePoisson(2, MarchenkoPastur(1)),
        "free_add": free_add(sc, MarchenkoPastur(1)),
        "free_mul": free_mul(FreePoisson(2), FreePoisson(3)),
        "dilate_shift": shift(dilate(MarchenkoPastur(Fraction(1, 3)), 2), -1),
        "mixture_irrational_atom": mixture([Dirac(sp.sqrt(2)), sc], [Fraction(1, 3), Fraction(2, 3)]),
        "pushforward": pushforward(sc, X**2 + X),
        "free_power": free_power(MarchenkoPastur(1), Fraction(3, 2)),
        "rectangular_companion": rectangular_companion(MarchenkoPastur(Fraction(1, 2)), Fraction(1, 3)),
        "head_output_e": head_output_law(Architecture(heads=2, gamma_k=Fraction(1, 2),
                                                      gamma_v=Fraction(1, 2), gamma_o=1, beta=1)),
        "output_law_e": output_law(Architecture(heads=4, gamma_k=Fraction(1, 2),
                                                gamma_v=Fraction(1, 2), gamma_o=1, beta=1)),
    }


LAWS = _laws()
DPS = 20


def _ref_ball(value, dps):
    """The reference (an mpf at ``dps`` digits, or an exact sympy number) as a ball of its
    own accuracy."""
    if isinstance(value, sp.Basic):
        return enclosure.enclose(value, 4 * dps + 40)
    with enclosure._prec(4 * dps + 40):
        m = exact_arb(value)
        return arb(m, abs(m) * arb(10) ** (-dps) + arb(10) ** (-2 * dps - 5))


def _points(law):
    a, b = law.support(dps=40)[0]
    a, b = float(sp.N(a, 30)), float(sp.N(b, 30))
    return [Fraction(a + (b - a) * k / 7).limit_denominator(10**6) for k in (1, 3)]


@pytest.mark.parametrize("name", sorted(LAWS))
def test_density_enclosure_contains_reference_and_meets_width(name):
    law = LAWS[name]
    for x in _points(law):
        b = law.density(x, dps=DPS, ball=True)
        assert isinstance(b, arb)
        assert meets(b, DPS), (name, x, b)
        ref = law.density(x, dps=2 * DPS)
        assert b.contains(_ref_ball(ref, 2 * DPS)), (name, x, b, ref)
        # the plain value is the midpoint
        assert exact_arb(law.density(x, dps=DPS)) == arb(b.mid())


@pytest.mark.parametrize("name", sorted(LAWS))
def test_cauchy_and_support_enclosures(name):
    law = LAWS[name]
    z = sp.Rational(1, 2) + sp.I / 3
    b = law.cauchy(z, dps=DPS, ball=True)
    assert isinstance(b, acb) and meets(b, DPS)
    ref = law.cauchy(z, dps=2 * DPS)
    assert b.real.contains(_ref_ball(ref.real, 2 * DPS)) and b.imag.contains(_ref_ball(ref.imag, 2 * DPS))
    sup = law.support(dps=DPS, ball=True)
    ref_sup = law.support(dps=2 * DPS)
    assert len(sup) == len(ref_sup)
    for (a, c), (ra, rc) in zip(sup, ref_sup):
        for e, r in ((a, ra), (c, rc)):
            if isinstance(r, sp.Basic) and r.is_infinite or not isinstance(r, sp.Basic) and not mpmath.isfinite(r):
                assert not e.is_finite()
                continue
            assert meets(e, DPS) and e.contains(_ref_ball(r, 2 * DPS)), (name, e, r)
    for (loc, m), (rl, rm) in zip(law.atoms(dps=DPS, ball=True), law.atoms(dps=2 * DPS)):
        assert loc.contains(_ref_ball(rl, 2 * DPS)) and m.contains(_ref_ball(rm, 2 * DPS))


def test_atoms_only_law_has_enclosed_atoms_and_no_support():
    law = free_add(Bernoulli(Fraction(1, 3)), Bernoulli(Fraction(1, 3)))   # a density and atoms
    exact = law.atoms()
    balls = law.atoms(dps=30, ball=True)
    assert len(balls) == len(exact) >= 1
    for (loc, m), (bl, bm) in zip(exact, balls):
        assert bl.contains(enclosure.enclose(loc, 300)) and bm.contains(enclosure.enclose(m, 300))
        assert meets(bl, 30) and meets(bm, 30)


def test_density_outside_the_support_is_an_exact_zero_ball():
    law = LAWS["semicircle"]
    b = law.density(3, dps=50, ball=True)
    assert b.is_exact() and b == 0
    assert law.density(Fraction(1, 3), dps=60, ball=True).rad() < arb(10) ** -60


def test_density_grid_with_balls_matches_pointwise():
    law = LAWS["output_law_e"]
    xs = [Fraction(k, 4) for k in range(1, 12)]
    grid = law.density(xs, dps=DPS, ball=True)
    for x, b in zip(xs, grid):
        ref = law.density(x, dps=2 * DPS)
        assert meets(b, DPS) and b.contains(_ref_ball(ref, 2 * DPS)), (x, b, ref)


@pytest.mark.parametrize("name,x", [
    ("semicircle", Fraction(1, 2)),
    ("mixture_irrational_atom", Fraction(3, 2)),       # the atom √2 lies on the way
    ("free_poisson_atom", Fraction(1, 2)),             # an atom at 0
    ("dilate_shift", Fraction(1, 5)),
])
def test_cdf_enclosure_contains_reference(name, x):
    law = LAWS[name]
    b = law.cdf(x, dps=15, ball=True)
    assert meets(b, 15)
    ref = law.cdf(x, dps=30)
    assert b.contains(_ref_ball(ref, 30)), (name, b, ref)
    assert exact_arb(law.cdf(x, dps=15)) == arb(b.mid())


def test_cdf_enclosure_matches_the_semicircle_closed_form_at_40_digits():
    b = LAWS["semicircle"].cdf(Fraction(1, 2), dps=40, ball=True)
    with mpmath.workdps(60):
        x = mpmath.mpf(1) / 2
        exact = (x * mpmath.sqrt(4 - x * x) / 2 + 2 * mpmath.asin(x / 2)) / (2 * mpmath.pi) + mpmath.mpf(1) / 2
    assert b.contains(_ref_ball(exact, 55)) and meets(b, 40)


def test_quantile_enclosure_brackets_the_closed_form():
    law = LAWS["semicircle"]
    b = law.quantile(Fraction(1, 2), dps=15, ball=True)       # the median is 0
    assert b.contains(0) and b.rad() <= 2 * arb(10) ** -15    # digits against the extent 2
    q = law.quantile(Fraction(3, 4), dps=15, ball=True)
    ref = law.quantile(Fraction(3, 4), dps=30)
    assert q.contains(_ref_ball(ref, 30)) and meets(q, 15)


def test_krawczyk_proves_realness_and_refuses_a_double_root():
    # x^2 - 2: a real root next to 1.4, enclosed with imaginary part exactly 0
    with enclosure._prec(200):
        A = [acb(-2), acb(0), acb(1)]
        K = enclosure.krawczyk(A, acb(1.4))
        assert K.imag == 0 and K.real.contains(arb(2).sqrt())
        # (x - 1)^2: no box holds exactly one root, the test fails
        assert enclosure.krawczyk([acb(1), acb(-2), acb(1)], acb(1.01)) is None


def test_an_enclosure_that_cannot_be_narrowed_raises_precision_error(monkeypatch):
    law = Semicircle(0, 1)
    ev = law._evaluator("density")

    def wide(A, c, **kw):       # a root enclosure that never gets narrower than 1e-10
        with enclosure._prec(64):
            return acb(arb(acb(c).real.mid(), 1e-10), arb(acb(c).imag.mid(), 1e-10))
    monkeypatch.setattr(enclosure, "krawczyk", wide)
    with pytest.raises(PrecisionError, match="width reached"):
        ev.density(Fraction(1, 3), dps=30, ball=True)


def test_ball_results_refuse_what_they_cannot_prove():
    law = LAWS["semicircle"]
    with pytest.raises(NotAvailable, match="cannot enclose"):
        enclosure.enclose(sp.zeta(3), 100)
    with pytest.raises(NotAvailable, match="non-real z|special point"):
        law.cauchy(2, ball=True)


def test_review_regressions_exact_cases_refusals_and_inputs():
    sc, mp2 = Semicircle(0, 1), MarchenkoPastur(2)
    # p = 1: the top edge 3 + 2√2, midpoint the plain value
    b = mp2.quantile(1, dps=30, ball=True)
    assert exact_arb(mp2.quantile(1, dps=30)) == arb(b.mid())
    assert b.contains(enclosure.enclose(3 + 2 * sp.sqrt(2), 200))
    # atoms only, and a gap with the whole continuous part on one side: exact values
    for law, x, value in ((Dirac(1), 1, Fraction(1)), (Dirac(1), Fraction(1, 2), Fraction(0)),
                          (mp2, Fraction(1, 10), Fraction(1, 2))):
        c = law.cdf(x, ball=True)
        assert c.is_exact() and c == arb(value.numerator) / value.denominator, (law, x, c)
    # p in the atom's jump at 0: Q = 0 exactly
    assert mp2.quantile(Fraction(1, 4), dps=30, ball=True) == 0
    # next to an edge: a quick refusal, not a long integration
    with pytest.raises(NotAvailable, match="within"):
        sc.cdf(2 - sp.Rational(1, 10**13), ball=True)
    # p at the level of a flat stretch: undecidable by balls
    mix = mixture([shift(sc, -3), shift(sc, 3)], [Fraction(1, 2)] * 2)
    with pytest.raises(PrecisionError, match="cannot decide"):
        mix.quantile(Fraction(1, 2), dps=20, ball=True)
    # `ball` must be a bool; a complex float is read part by part as printed
    with pytest.raises(FreeprobValueError, match="ball"):
        sc.support(ball="no")
    assert sc.cauchy(3.1 + 0j, dps=30).real == sc.cauchy(3.1, dps=30)


def test_cli_ball_prints_digits_whose_radius_covers_the_truth(capsys):
    from freeprob.cli import main
    assert main(["density", "Semicircle(0,1)", "--grid=0:1:2", "--dps", "30", "--ball"]) == 0
    out = capsys.readouterr().out
    row = [line.split() for line in out.splitlines() if line.strip().startswith("0 ")][0]
    value, radius = row[1], float(row[2])
    with mpmath.workdps(50):
        assert abs(mpmath.mpf(value) - 1 / mpmath.pi) <= radius
        assert radius < 1e-30


def _digits(value, dps):
    """A plain result (mpmath or sympy, real or complex) as (real, imag) decimal strings."""
    with mpmath.workdps(dps + 5):
        value = mpmath.mpc(mpmath.mpmathify(sp.N(value, dps + 5)) if isinstance(value, sp.Basic) else value)
        return mpmath.nstr(value.real, dps), mpmath.nstr(value.imag, dps)


@pytest.mark.parametrize("what", ["density", "density_grid", "cdf", "quantile", "cauchy_real", "cauchy",
                                  "support", "atoms"])
def test_a_printed_ball_shows_what_is_proven(what):
    """Issue 26: ``print(law.density(0, dps=30, ball=True))`` showed python-flint's global 15
    digits with a radius of 3e-16.  Every ``ball=True`` result prints the digits it proves:
    read back from its text, it contains the ball itself and a value computed at 45 digits,
    and is as narrow as ``dps`` asks; python-flint's global precision is left alone."""
    dps = 30
    law = MarchenkoPastur(2)                               # an atom at 0 (mass 1/2), irrational edges
    get = {
        "density": lambda d, b: law.density(1, dps=d, ball=b),
        "density_grid": lambda d, b: law.density([0.5, 1, 2], dps=d, ball=b)[1],
        "cdf": lambda d, b: law.cdf(1, dps=d, ball=b),
        "quantile": lambda d, b: law.quantile(Fraction(3, 4), dps=d, ball=b),
        "cauchy_real": lambda d, b: law.cauchy(-1, dps=d, ball=b),
        "cauchy": lambda d, b: law.cauchy(1 + 1j, dps=d, ball=b),
        "support": lambda d, b: law.support(dps=d, ball=b)[0][1],
        "atoms": lambda d, b: law.atoms(dps=d, ball=b)[0][1],
    }[what]
    ball, ref = get(dps, True), _digits(get(dps + 15, False), dps + 15)
    text = str(ball)
    assert repr(ball) == text and flint.ctx.dps == 15
    if isinstance(ball, acb):                              # "[re +/- r] - [im +/- r]j" (Im G < 0 above)
        re_text, im_text = text.removesuffix("j").split(" - ")
        pieces = [(ball.real, re_text, ref[0], 1), (ball.imag, im_text, ref[1], -1)]
    else:
        pieces = [(ball, text, ref[0], 1)]
    flint.ctx.prec = 400                                   # reading and comparing: no rounding
    try:
        for b, piece, r, sign in pieces:
            shown = sign * arb(piece)
            assert shown.contains(b)                       # nothing of the proven ball is lost
            assert shown.contains(arb(r))
            assert shown.rad() <= arb(10) ** (1 - dps) * abs(arb(r))
    finally:
        flint.ctx.prec = 53
