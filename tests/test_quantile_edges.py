r"""Issue 26, "wrong quantiles on the plain path": ``quantile(p) = inf{x : F(x) ≥ p}`` to
``dps`` relative digits of ``x`` next to support edges and just past flat stretches, or a
refusal; the far-tail cdf; the cdf of the non-monotone pushforward ``x³ − x``.

Reference values come from independent routes, at 60 digits:

* semicircle (radius 2): ``F(−2 cos θ) = (θ − sin 2θ / 2)/π``, solved for ``θ`` with
  ``mpmath.findroot`` (no cancellation next to the edge);
* ``MarchenkoPastur(2)`` (atom 1/2 at 0, density ``√((b − x)(x − a))/(4πx)`` on
  ``[(1 − √2)², (1 + √2)²]``) and ``free_power(Bernoulli(), 3/2)`` (atoms 1/4 at ±3/2,
  density ``3√(2 − x²)/(4π(9/4 − x²))`` on ``[−√2, √2]``, from ``R = t·R_Bernoulli``):
  the mass past the edge, ``∫_0^r ρ(a + u²)·2u du`` (smooth in ``u``), by ``mpmath.quad``,
  solved for ``r`` by ``mpmath.findroot``;
* ``x³ − x`` of the semicircle: ``P(X³ − X ≤ t)`` as the semicircle cdf summed over the
  preimage intervals (the real roots of ``x³ − x − t`` by ``mpmath.polyroots``).
"""
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

import freeprob as fp
from freeprob.core.symbols import G, z
from freeprob.errors import FreeprobValueError, PrecisionError
from freeprob.experiments.compare import TabulatedLaw
from freeprob.numeric import AlgebraicCauchy

R = sp.Rational
mpf = mpmath.mpf


def _rel(q, ref):
    with mpmath.workdps(80):
        return abs(mpf(q) - ref) / abs(ref)


# -- references -------------------------------------------------------------------------
def _sc_theta(p):
    """``θ`` with ``F(−2 cos θ) = p`` for the standard semicircle (60 digits)."""
    p = mpf(p)
    t0 = (3 * mpmath.pi * p / 2) ** (mpf(1) / 3)
    return mpmath.findroot(lambda t: mpmath.log(t - mpmath.sin(2 * t) / 2) - mpmath.log(mpmath.pi * p),
                           (t0, t0 * mpf("1.01")), tol=mpf(10) ** -55)


def _sc_quantile(p):
    return -2 + 4 * mpmath.sin(_sc_theta(p) / 2) ** 2


def _past_edge(f_u, edge, d):
    """The point ``edge + r²`` where ``∫_0^r f_u = d`` (``f_u(u) = ρ(edge + u²)·2u``)."""
    r0 = mpmath.cbrt(d)
    r = mpmath.findroot(lambda r: mpmath.log(mpmath.quad(f_u, [0, r])) - mpmath.log(d),
                        (r0, r0 * mpf("1.1")), tol=mpf(10) ** -50)
    return edge + r * r


def _sc_cdf(x):
    if x <= -2:
        return mpf(0)
    if x >= 2:
        return mpf(1)
    return mpf(1) / 2 + (x * mpmath.sqrt(4 - x * x) / 4 + mpmath.asin(x / 2)) / mpmath.pi


def _cubic_cdf(t):
    """``P(X³ − X ≤ t)``, ``X`` standard semicircle: over the preimage intervals."""
    roots = sorted(r.real for r in mpmath.polyroots([1, 0, -1, -t], maxsteps=200, extraprec=300)
                   if abs(r.imag) < mpf(10) ** -40)
    if len(roots) == 1:
        return _sc_cdf(roots[0])
    r1, r2, r3 = roots
    return _sc_cdf(r1) + _sc_cdf(r3) - _sc_cdf(r2)


def semicircle():
    # a fresh evaluator each time (no state from another test)
    return AlgebraicCauchy(sp.Poly(G**2 - z * G + 1, G, z))


# -- next to a support edge: the digits are those of x ---------------------------------------
@pytest.mark.parametrize("p,dps", [(R(1, 10**20), 15), (R(1, 10**30), 30)])
def test_semicircle_quantile_next_to_the_edge(p, dps):
    # F grows like s^{3/2}: at p = 1e-20 the point is −2 + 1.3e-13 (the old code gave −2.0,
    # 13 digits), at 1e-30 −2 + 2.8e-20 (22 digits at dps 30)
    with mpmath.workdps(60):
        ref = _sc_quantile(p)
        top = -ref                                           # the upper tail: Q(1 − p) = −Q(p)
    law = semicircle()
    assert _rel(law.quantile(p, dps=dps), ref) <= mpf(10) ** -dps
    assert _rel(law.quantile(1 - p, dps=dps), top) <= mpf(10) ** -dps


def test_tiny_exact_p_in_a_fresh_evaluator():
    # Rational(1, 10**30) raised a bare "cannot convert inf or nan to int" (an interval of
    # length 0 next to the edge); at dps 15 the answer is −2 to 15 digits
    with mpmath.workdps(60):
        ref = _sc_quantile(R(1, 10**30))
    assert _rel(semicircle().quantile(R(1, 10**30), dps=15), ref) <= mpf(10) ** -15


def test_cdf_in_the_far_tail_has_relative_digits():
    # F(−2 + 10^-30) = 2.1e-46: the cdf was 0.0 (x rounded onto the edge) and is now to
    # 15 significant digits (F(−2 + s) from the θ form: s = 2 − 2 cos θ)
    law = semicircle()
    with mpmath.workdps(80):
        s = mpf(10) ** -30
        th = 2 * mpmath.asin(mpmath.sqrt(s) / 2)
        ref = (th - mpmath.sin(2 * th) / 2) / mpmath.pi
    assert _rel(law.cdf(-2 + R(1, 10**30), dps=15), ref) <= mpf(10) ** -15


# -- just past a flat stretch ----------------------------------------------------------------
def test_marchenko_pastur_just_past_the_atom():
    law = fp.MarchenkoPastur(2)
    with mpmath.workdps(60):
        a, b = 3 - 2 * mpmath.sqrt(2), 3 + 2 * mpmath.sqrt(2)
        ref = _past_edge(lambda u: mpmath.sqrt(b - a - u * u) * u * 2 * u / (4 * mpmath.pi * (a + u * u)),
                         a, mpf(10) ** -20)
    # the flat stretch [0, a) has the level 1/2 exactly (the atom's mass): p above it by
    # 1e-20 is past its right end (the old code returned 0, where F = 1/2 < p)
    assert _rel(law.quantile(R(1, 2) + R(1, 10**20), dps=20), ref) <= mpf(10) ** -20
    assert law.quantile(R(1, 2), dps=20) == 0               # the level itself: the left end


def test_bernoulli_power_just_past_the_atom_and_at_the_levels():
    law = fp.free_power(fp.Bernoulli(), R(3, 2))
    with mpmath.workdps(60):
        r2 = mpmath.sqrt(2)
        ref = _past_edge(lambda u: 3 * u * mpmath.sqrt(2 * r2 - u * u) * 2 * u /
                         (4 * mpmath.pi * (mpf(9) / 4 - (u * u - r2) ** 2)), -r2, mpf(10) ** -20)
    assert _rel(law.quantile(R(1, 4) + R(1, 10**20), dps=15), ref) <= mpf(10) ** -15
    assert law.quantile(R(1, 4), dps=15) == mpf(-1.5)         # in the atom's jump
    # the level 3/4 = 1 − (atom above) is exact: p = 3/4 is the flat's left end √2, just
    # above it the atom at 3/2
    with mpmath.workdps(15):
        assert law.quantile(R(3, 4), dps=15) == +mpmath.sqrt(2)
    assert law.quantile(R(3, 4) + R(1, 10**40), dps=15) == mpf(1.5)


def test_a_level_known_only_numerically():
    # two intervals, symmetric: the level of the gap is 1/2 but the numeric layer only
    # computes it; p = 1/2 ± 1e-20 is decided by refining it, p = 1/2 itself is refused
    law = fp.free_add(fp.Bernoulli(), fp.Semicircle(0, R(1, 16)))
    (_, b), (c, _) = law.support()
    lo = law.quantile(R(1, 2) - R(1, 10**20), dps=15)
    hi = law.quantile(R(1, 2) + R(1, 10**20), dps=15)
    with mpmath.workdps(30):
        assert abs(lo + hi) <= mpf(10) ** -15 * abs(hi)              # the symmetry
        assert mpf(sp.N(c, 30)) < hi < mpf(sp.N(c, 30)) + mpf(10) ** -10
        assert lo < mpf(sp.N(b, 30))
        # inf{x : F(x) ≥ p} to 15 digits: F below p at hi·(1 − 10^-15), not below it at
        # hi·(1 + 10^-15) (the cdf: a route without inversion, to 25 digits)
        p = mpf(1) / 2 + mpf(10) ** -20
        assert law.cdf(hi * (1 - mpf(10) ** -15), dps=25) < p <= law.cdf(hi * (1 + mpf(10) ** -15), dps=25)
    with pytest.raises(PrecisionError, match="cannot be told apart"):
        law.quantile(R(1, 2), dps=15)


def test_mixture_levels_are_known_exactly():
    # a mixture of laws with separated supports knows the level of its gap (the weight
    # below): p = 1/2 is the left end −1, p = 1/2 + 1e-30 the point past 1 where the upper
    # component (2 + X/2, X standard) has 2e-30 of its mass
    law = fp.mixture([fp.Semicircle(-2, R(1, 4)), fp.Semicircle(2, R(1, 4))], [R(1, 2), R(1, 2)])
    assert law.flat_levels() == ((-1, 1, R(1, 2)),)
    assert law.quantile(R(1, 2), dps=15) == -1
    with mpmath.workdps(60):
        ref = 2 + _sc_quantile(2 * mpf(10) ** -30) / 2
    assert _rel(law.quantile(R(1, 2) + R(1, 10**30), dps=15), ref) <= mpf(10) ** -15
    # a handed level is checked against the computed one
    wrong = AlgebraicCauchy(law.cauchy_equation(), known_levels=[(0, R(1, 3))])
    with pytest.raises(FreeprobValueError, match="disagrees"):
        wrong.quantile(R(1, 2), dps=15)


# -- the tabulated law ----------------------------------------------------------------------
def test_tabulated_quantile_decides_against_the_law_level():
    # semicircle(−2, 1/4) on [−3, −1] with weight 1/3, then the gap to 3 − 2√2
    law = fp.mixture([fp.Semicircle(-2, R(1, 4)), fp.FreePoisson(2)], [R(1, 3), R(2, 3)])
    t = TabulatedLaw.from_law(law, points=60)
    c = 3 - 2 * math.sqrt(2)
    [(x0, x1, level, exact)] = t.flat_levels
    assert (x0, level, exact) == (-1.0, "1/3", True) and x1 == pytest.approx(c, rel=1e-15)
    p_below = 1 / 3                                          # the double just below 1/3
    p_above = float(Fraction(1, 3) + Fraction(1, 10**13))    # within the table's tolerance
    assert Fraction(p_below) < Fraction(1, 3) < Fraction(p_above)
    assert abs(p_above - t.cdf(np.array([-1.0]))[0]) <= t.cdf_tolerance
    q = t.quantile([p_below, p_above])
    assert q[0] == -1.0                                      # the flat's left end
    assert c <= q[1] < c + 1e-6                              # past its right end (was −1)
    # a table that does not know the level refuses rather than guess
    data = t.to_dict()
    data["flat_levels"] = []
    with pytest.raises(PrecisionError, match="cannot be decided"):
        TabulatedLaw.from_dict(data).quantile([p_above])


# -- the cubic pushforward -------------------------------------------------------------------
def test_cubic_pushforward_cdf_and_quantile_against_the_preimages():
    # x³ − x folds at ±1/√3 (critical values ∓2√3/9, where the leading coefficient of the
    # Cauchy equation has a double root and G ~ (z − t_c)^{-1/2}): the cdf took minutes
    law = fp.pushforward(fp.Semicircle(0, 1), sp.Symbol("x") ** 3 - sp.Symbol("x"))
    with mpmath.workdps(40):
        ref = _cubic_cdf(mpf(1) / 10)
        qref = mpmath.findroot(lambda t: _cubic_cdf(t) - mpf(3) / 10, (mpf(-0.4), mpf(-0.2)),
                               solver="anderson", tol=mpf(10) ** -35)
    assert _rel(law.cdf(R(1, 10), dps=15), ref) <= mpf(10) ** -15
    assert _rel(law.quantile(R(3, 10), dps=15), qref) <= mpf(10) ** -15


def test_median_of_a_symmetric_law_at_zero():
    """F(0) = 1/2 exactly with a positive density at 0 (no flat stretch): the quantile is 0
    (it was refused as 'cannot be told apart from the level 0.5': no relative digits at 0)."""
    import sympy as sp
    import freeprob as fp
    s = fp.Semicircle(0, 1)
    assert fp.Semicircle(0, 1).quantile(sp.Rational(1, 2)) == 0
    assert fp.polynomial_law("x*y + y*x", {"x": s, "y": s}).quantile(sp.Rational(1, 2)) == 0
    assert fp.shift(s, 1).quantile(sp.Rational(1, 2)) == 1
