"""Numerics of a dilated law ``cX`` (``c > 0``) through the evaluator of ``X``
(freeprob.numeric.scaled.ScaledCauchy; issue 27).

Every value is compared with the evaluator of the dilated law's own Cauchy equation (the
path before, ``Law._algebraic_evaluator``): Cauchy transform, density, cdf, quantile,
support, atoms, moments, flat levels, extent, expectation; the balls contain the values of
both; an irrational ``c`` gives exact edges ``c·e``; bad ``c`` is refused.
"""
import re

import mpmath
import pytest
import sympy as sp
from flint import arb

from freeprob.attention import Architecture, attention_law
from freeprob.errors import FreeprobValueError
from freeprob.laws.families import FreePoisson, MarchenkoPastur, Semicircle
from freeprob.laws.numeric_state import adopt_numeric_state, numeric_state
from freeprob.laws.operations import dilate, shift
from freeprob.numeric.balls import enclose
from freeprob.numeric.scaled import ScaledCauchy

DPS = 20


def _close(a, b, dps=DPS):
    with mpmath.workdps(50):
        a, b = _num(a), _num(b)
        return abs(a - b) <= mpmath.mpf(10) ** (-dps + 1) * max(abs(a), abs(b), mpmath.mpf(1e-300))


def _num(v):
    with mpmath.workdps(50):
        return mpmath.mpf(str(sp.N(v, 50))) if isinstance(v, sp.Basic) else mpmath.mpmathify(v)


@pytest.fixture(scope="module")
def atom_law():
    """``√2 (MP(2) + 1)``: an atom of mass 1/2 at ``√2``, an irrational scale."""
    law = dilate(shift(MarchenkoPastur(2), 1), sp.sqrt(2))
    return law, law._algebraic_evaluator(), law._evaluator("test")


def test_irrational_scale_with_an_atom(atom_law):
    law, old, new = atom_law
    assert isinstance(new, ScaledCauchy) and new.c == sp.sqrt(2)
    (a, b), = law.support()
    assert sp.simplify(a - (4 * sp.sqrt(2) - 4)) == 0 and sp.simplify(b - (4 * sp.sqrt(2) + 4)) == 0   # exact c·e
    (oa, ob), = old.support(dps=DPS)                   # the old path: mpf (coefficients with √2)
    assert _close(_num(a), oa) and _close(_num(b), ob)
    assert law.atoms() == ((sp.sqrt(2), sp.Rational(1, 2)),) == old.atoms(dps=DPS)
    for x in (2, 3, sp.Rational(17, 2), 9.5):
        assert _close(new.density(x, dps=DPS), old.density(x, dps=DPS))
    for x in (1, 3, 7.25, 12):
        assert _close(new.cdf(x, dps=DPS), old.cdf(x, dps=DPS))
    for p in (0.55, 0.7, 0.99):
        assert _close(_num(new.quantile(p, dps=DPS)), _num(old.quantile(p, dps=DPS)))
    # in the atom: √2 to 20 digits (the old path returns it to 16 only, a double)
    assert _close(new.quantile(0.1, dps=DPS), sp.sqrt(2)) and _close(old.quantile(0.1, dps=DPS), sp.sqrt(2), 15)
    for z in (1 + 2j, -1, 11, mpmath.mpc(3, 0.01), sp.Rational(1, 3) + sp.I):
        assert _close(new.cauchy(z, dps=DPS), old.cauchy(z, dps=DPS))
    assert all(_close(u, v, 15) for u, v in zip(new.moments(3, dps=15), old.moments(3, dps=15)))
    assert all(_close(u, v) for u, v in zip(new.extent(dps=DPS), old.extent(dps=DPS)))
    (x0, x1, lev), = new.flat_levels(dps=DPS)
    (y0, y1, lev_old), = old.flat_levels(dps=DPS)
    assert x0 == y0 == sp.sqrt(2) and _close(_num(x1), _num(y1)) and lev == lev_old == sp.Rational(1, 2)
    w = lambda x: mpmath.exp(-x / 4)        # noqa: E731
    (v1, e1), (v2, e2) = (ev.expectation(w, dps=15, tol=1e-18, cuts=(5,)) for ev in (new, old))
    assert abs(v1 - v2) <= e1 + e2 + 1e-15


def test_balls_contain_the_values(atom_law):
    # two rigorous enclosures of one number overlap; the new ones are as narrow as asked
    law, old, new = atom_law
    for x in (2, 7.25):
        b = law.density(x, dps=DPS, ball=True)
        assert isinstance(b, arb) and b.rad() <= 10.0 ** -DPS * abs(b.mid())
        assert b.overlaps(old.density(x, dps=DPS, ball=True))
    assert law.cdf(7.25, dps=DPS, ball=True).overlaps(old.cdf(7.25, dps=DPS, ball=True))
    c = law.cauchy(1 + 2j, dps=DPS, ball=True)
    assert c.overlaps(old.cauchy(1 + 2j, dps=DPS, ball=True)) and c.rad() <= 10.0 ** -DPS * abs(c.mid())
    (ba, bb), = law.support(dps=DPS, ball=True)
    assert ba.contains(enclose(4 * sp.sqrt(2) - 4, 200)) and bb.contains(enclose(4 * sp.sqrt(2) + 4, 200))
    (loc, m), = law.atoms(dps=DPS, ball=True)
    assert loc.contains(enclose(sp.sqrt(2), 200)) and arb(m).contains(arb(0.5))
    q = law.quantile(0.7, dps=DPS, ball=True)          # the old value carries 10^-20 relative error
    ref = enclose(old.quantile(0.7, dps=DPS), 200) + arb(0, 4 * 10.0 ** -DPS)
    assert q.overlaps(ref) and q.rad() <= 10.0 ** -DPS * abs(q.mid())


def test_rational_scale_semicircle_grid_and_float_path():
    law = dilate(Semicircle(0, 1), sp.Rational(3, 2))
    old = law._algebraic_evaluator()
    assert law.support() == ((-3, 3),) == old.support()
    xs = [-2.9, -1.0, 0.0, 0.5, 2.999]
    for u, v in zip(law.density(xs, dps=DPS), old.density_grid(xs, dps=DPS)):
        assert _close(u, v)
    for u, v in zip(law.density(xs, rtol=1e-12), old.density_float(xs, rtol=1e-12)):
        assert abs(u - v) <= 1e-11 * v
    assert law.cut_points() == old.cut_points()


def test_finite_width_law_values_and_state():
    # a finite-width law is c·X with c the bulk scale (issue 27): the same numbers as the
    # equation of c·X; its set-up travels as X's
    arch = Architecture.from_dimensions(n=32, heads=2, d_k=8, d_v=8, d_o=16, beta=1)
    law = attention_law(arch, finite_width=True)
    old = law._algebraic_evaluator()
    sup, osup = law.support(dps=15), old.support(dps=15)
    assert len(sup) == len(osup) and all(_close(a, b, 15) for ab, cd in zip(sup, osup) for a, b in zip(ab, cd))
    mid = (sup[0][0] + sup[0][1]) / 2
    assert _close(law.density(mid, dps=15), old.density(mid, dps=15), 15)
    assert _close(law.cdf(mid, dps=15), old.cdf(mid, dps=15), 15)
    state = numeric_state(law)
    assert set(state) == {"dilated"}
    again = adopt_numeric_state(attention_law(arch, finite_width=True), state)
    assert again.density(mid, dps=15) == law.density(mid, dps=15)


@pytest.mark.parametrize("c", [0, -1, sp.Rational(-1, 2), 1.5, sp.Symbol("c"), sp.oo, sp.I, "2", True])
def test_bad_scale_refused(c):
    inner = Semicircle(0, 1)._evaluator("test")
    with pytest.raises(FreeprobValueError, match="c must be"):
        ScaledCauchy(inner, c)


def test_negative_dilation_keeps_its_own_equation():
    law = dilate(shift(MarchenkoPastur(2), 1), -2)
    assert law._dilation() is None and not isinstance(law._evaluator("test"), ScaledCauchy)
    assert law.atoms() == ((-2, sp.Rational(1, 2)),)


def test_a_real_point_on_the_cut_is_named_as_given():
    # the refusal names the user's z, not the inner point z/c (a 77-digit rational for c = √2)
    law = dilate(FreePoisson(1), sp.sqrt(2))
    for z, shown in ((2, "z = 2 is real"), (2 + 0j, "z = (2+0j) is real"), (sp.Rational(1, 3), "z = 1/3 is real")):
        with pytest.raises(FreeprobValueError, match=re.escape(shown)):
            law.cauchy(z)
    assert abs(law.cauchy(20) - (20 / sp.sqrt(2) - sp.sqrt(20 / sp.sqrt(2) * (20 / sp.sqrt(2) - 4))).evalf()
               / (2 * 20 / sp.sqrt(2)) / sp.sqrt(2)) < 1e-14
    for bad in (None, [1j]):                            # complex z is allowed: the refusal says so
        with pytest.raises(FreeprobValueError, match=r"must be a number \(complex, or real off the support\)"):
            law.cauchy(bad)
