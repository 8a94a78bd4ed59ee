"""Regression (issue 15 class "wrong numbers"): the gradient-flow loss at large t.

The value ∫ e^{−2tx} dμ is of the order e^{−2t·a} (a the left end of the support); the
contour route measured its agreement against 1, so at t = 400 it printed 4.27e-46 for a
true 2.10e-64 (and the density route falls back to it).  Checked against an independent
mpmath quadrature of the closed-form Marchenko–Pastur density.
"""
import mpmath
import pytest

import freeprob as fp
from freeprob.attention.readout import gradient_flow_loss


def _mp_laplace(t, dps=40):
    with mpmath.workdps(dps):
        a, b = (1 - mpmath.sqrt(2)) ** 2, (1 + mpmath.sqrt(2)) ** 2     # FreePoisson(2), no atom
        f = lambda x: mpmath.sqrt((b - x) * (x - a)) / (2 * mpmath.pi * x) * mpmath.exp(-2 * t * x)  # noqa: E731
        # x = a + u² removes the square-root edge; 200 pieces resolve the e^{−2tx} scale
        return mpmath.quad(lambda u: 2 * u * f(a + u * u), mpmath.linspace(0, mpmath.sqrt(b - a), 200))


@pytest.mark.parametrize("method", ["density", "contour"])
def test_tiny_loss_has_its_digits(method):
    got = gradient_flow_loss(fp.FreePoisson(2), 400, method=method)
    want = _mp_laplace(400)
    assert abs(got - want) <= 1e-12 * want          # ~2.1e-64


def test_exact_arguments_keep_their_digits():
    # penalty, noise, gamma_o, t given exactly were read at the global 15 digits before a
    # dps=40 computation (16 correct digits of 40)
    import sympy as sp
    from freeprob.attention.readout import ridge_error
    law = fp.MarchenkoPastur(sp.Rational(1, 2))
    got = ridge_error(law, sp.Rational(1, 3), sp.Rational(1, 3), gamma_o=sp.Rational(7, 3), dps=40)
    with mpmath.workdps(60):
        assert abs(got - mpmath.mpf(97) / 147) < mpmath.mpf(10) ** -38
        a = gradient_flow_loss(law, sp.Rational(1, 3), dps=40)
    b = gradient_flow_loss(law, sp.Rational(1, 3), dps=40)          # at the global 15 digits
    with mpmath.workdps(60):
        assert abs(a - b) < mpmath.mpf(10) ** -38


def test_mpf_points_under_the_gmpy_backend():
    # with gmpy2 installed, mpf mantissas are gmpy2.mpz: exact points must be plain ints
    from freeprob.numeric.rootkernel import _real_point
    with mpmath.workdps(40):
        pt = _real_point(mpmath.mpf(1) / 3, "cdf")
    assert type(pt.num) is int and type(pt.den) is int
    assert pt.expr == pt.expr.func(pt.num, pt.den)


def test_contour_route_refuses_up_front_at_huge_t():
    # t = 1e5 asked for 26 000 Cauchy values at 2077 digits: an hour with no output
    import sympy as sp
    from freeprob.attention.readout import _ContourRule, _support_hull
    from freeprob.errors import PrecisionError
    law = fp.MarchenkoPastur(sp.Rational(1, 2))
    with pytest.raises(PrecisionError, match="too large for the contour route"):
        _ContourRule(law, mpmath.mpf(10) ** 5, 15, _support_hull(law, "test"))


def test_the_density_route_itself_reaches_the_tiny_loss():
    # the density route summed e^{−2tx} ~ 1e-64 against mpmath.quad's absolute target and
    # stopped at ~1e-5 relative: it failed its check and gradient_flow_loss fell back to the
    # contour route (5 s a call) without saying so; it now integrates e^{−2t(x − x0)} ≤ 1
    from freeprob.attention.readout import _laplace_density
    got, = _laplace_density(fp.FreePoisson(2), [mpmath.mpf(400)], 12, "test")
    want = _mp_laplace(400)
    assert abs(got - want) <= 1e-12 * want


def test_a_cut_within_rounding_of_an_edge_is_that_edge():
    # the Laplace grid's cut x0 + width fell a few ulps inside the right edge, which was then
    # integrated as an ordinary end (Gauss–Legendre on a square root, 10x the nodes): now
    # the cut is the edge, and the pieces, the value and the error bound are those without it
    ev = fp.FreePoisson(2)._evaluator("test")
    prec = ev.working_prec(30)
    with mpmath.workprec(prec):
        x0, x1 = ev.extent(dps=30)
        tol = mpmath.mpf(10) ** -33
        plain = ev.expectation(lambda x: mpmath.exp(-x), dps=30, tol=tol)
        for cut in (x1 * (1 - mpmath.mpf(2) ** (3 - prec)), x0 * (1 + mpmath.mpf(2) ** (3 - prec))):
            assert ev.expectation(lambda x: mpmath.exp(-x), dps=30, tol=tol, cuts=[cut]) == plain


def test_a_float_argument_is_read_as_the_decimal_it_prints():
    # newcomer pass: the readout read 0.3 as its binary value (…125078… at dps 30, against
    # …125073… for 3/10) while the laws read a float as the decimal it prints as
    import sympy as sp
    from freeprob.attention.readout import ridge_error, time_to_loss
    law = fp.FreePoisson(sp.Rational(1, 2))
    assert gradient_flow_loss(law, 0.3, dps=30) == gradient_flow_loss(law, sp.Rational(3, 10), dps=30)
    assert ridge_error(law, 0.1, 0.2, gamma_o=1, dps=30) == ridge_error(
        law, sp.Rational(1, 10), sp.Rational(1, 5), gamma_o=1, dps=30)
    assert time_to_loss(law, 0.6, dps=25) == time_to_loss(law, sp.Rational(3, 5), dps=25)
