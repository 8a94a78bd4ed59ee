"""Regression (issue 15 class "wrong numbers"): the gradient-flow loss at large t.

The value ∫ e^{−2tx} dμ is of the order e^{−2t·a} (a the left end of the support); the
contour route measured its agreement against 1, so at t = 400 it printed 4.27e-46 for a
true 2.10e-64 (and the density route falls back to it).  Checked against an independent
mpmath quadrature of the closed-form Marchenko–Pastur density.
"""
import mpmath
import pytest

import freeprob as fp
from freeprob.readout import gradient_flow_loss


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
