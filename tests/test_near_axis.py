"""Laws just after a gap in the support closed: the two edges of the gap became a pair of
non-real roots ``c, c̄`` of the discriminant close to the axis, and the density has a dip
of width ``|Im c|`` at ``Re c``.  The plain cdf (tanh-sinh from the far edges) and
``TabulatedLaw.from_law`` (nodes clustered at the support edges only) both failed there;
both now cut at ``Re c`` (``AlgebraicCauchy.cut_points``).

Independent checks: the total mass (the cdf at the right edge, the tabulated mass), the
mean and second moment by quadrature against the exact moments (the expansion of ``G``
at infinity), the tabulated cdf against the plain cdf at the cut.
"""
import mpmath
import pytest
import sympy as sp

from freeprob.experiments.compare import TabulatedLaw
from freeprob.laws.families import Bernoulli, Semicircle
from freeprob.laws.operations import free_add
from freeprob.numeric import AlgebraicCauchy


def _bernoulli_plus_semicircle(v):
    """Bernoulli(1/3) on {−1, 1} ⊞ semicircle of variance ``v``: two support intervals
    for ``v < v_c ≈ 1.0396842``, one beyond (the gap closes near ``x ≈ 0.345``)."""
    return free_add(Bernoulli(sp.Rational(1, 3)), Semicircle(0, v))


@pytest.mark.parametrize("v", [sp.Rational(21, 20), sp.Rational(11, 10)])
def test_closed_gap_cdf_moments_and_tabulation(v):
    law = _bernoulli_plus_semicircle(v)
    (a, b), = law.support(dps=15)                   # the gap has closed
    cuts = law.cut_points()
    assert len(cuts) == 1 and a < cuts[0] < b
    x0 = cuts[0]
    # a dip at the cut: the density there is below its values 0.05 to either side
    d = [law.density(x, dps=15) for x in (x0 - mpmath.mpf("0.05"), x0, x0 + mpmath.mpf("0.05"))]
    assert d[1] < d[0] and d[1] < d[2]
    # total mass: the cdf at the right edge (failed with a quadrature error 1e-3 before)
    assert abs(law.cdf(b, dps=15) - 1) <= mpmath.mpf(10) ** -15
    # quadrature moments against the exact ones (series route); m2 = 1 + v in closed form
    exact = law.moments(2)
    assert sp.simplify(sp.sympify(exact[2]) - (1 + v)) == 0
    quad = AlgebraicCauchy(law.cauchy_equation()).moments(2, dps=15)
    for m, q in zip(exact, quad):
        assert abs(q - mpmath.mpf(sp.N(m, 30))) <= mpmath.mpf(10) ** -14
    # the tabulation (mass defect 1.2e-4 with 2000 and 8000 points before)
    tab = TabulatedLaw.from_law(law, points=500)
    assert abs(tab.mass_defect) <= 1e-12
    assert abs(float(tab.cdf(float(x0))) - float(law.cdf(x0, dps=15))) <= 1e-10


def test_closed_gap_cut_points_before_and_after():
    # before the closure the gap edges are support edges: nothing to cut
    before = _bernoulli_plus_semicircle(sp.Rational(101, 100))
    assert len(before.support()) == 2 and before.cut_points() == ()
    # farther from the closure the pair moves off the axis (|Im c| grows): the cut stays,
    # harmless, and the mass is still 1
    law = _bernoulli_plus_semicircle(sp.Integer(2))
    (a, b), = law.support(dps=15)
    x0, = law.cut_points()
    assert a < x0 < b and abs(law.cdf(b, dps=15) - 1) <= mpmath.mpf(10) ** -15


def test_attention_layer_after_gap_closure():
    """The layer of the defect report (``freeprob explore beta-growth``): β = 0.698937."""
    from freeprob.attention import laws as attention
    arch = attention.Architecture.from_dimensions(n=512, heads=4, d_k=64, d_v=64,
                                                  d_o=512).with_beta("0.698937")
    law = attention.concatenated_attention_law(arch)
    (a, b), = law.support(dps=15)
    cuts = law.cut_points()
    assert len(cuts) == 1 and abs(cuts[0] - mpmath.mpf("0.2202112538")) < 1e-9
    assert abs(law.cdf(b, dps=15) - 1) <= mpmath.mpf(10) ** -15
    tab = TabulatedLaw.from_law(law, points=500)
    assert abs(tab.mass_defect) <= 1e-12
    m1 = AlgebraicCauchy(law.cauchy_equation()).moments(1, dps=15)[1]
    assert abs(m1 - mpmath.mpf(sp.N(law.moments(1)[1], 30))) <= mpmath.mpf(10) ** -14 * abs(m1)
    assert abs(tab.mean - float(m1)) <= 1e-14 * abs(float(m1))
