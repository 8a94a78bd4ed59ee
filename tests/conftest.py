"""Test configuration: precision reset before each test, Hypothesis profiles."""
import os

import flint
import mpmath
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, max_examples=50)
settings.register_profile("ci", deadline=None, max_examples=30, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def _reset_precision():
    """Every test starts at mpmath's and python-flint's default precision (mpmath conftest)."""
    mpmath.mp.prec = 53
    flint.ctx.prec = 53
    flint.ctx.cap = 10
    yield
    # the library must restore what it changes: a test that leaves a change fails here
    assert mpmath.mp.prec == 53, "mpmath precision was not restored"
    assert flint.ctx.prec == 53 and flint.ctx.cap == 10, "python-flint context was not restored"
