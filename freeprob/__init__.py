r"""freeprob: an exact and arbitrary-precision free-probability engine.

Quick start::

    >>> import freeprob as fp
    >>> t = fp.Symbol("t")
    >>> fp.FreePoisson(t).moments(3)                     # Narayana polynomials
    (1, t, t**2 + t, t**3 + 3*t**2 + t)
    >>> fp.free_mul(fp.FreePoisson(1), fp.Semicircle(0, 1)).moments(4)
    (1, 0, 1, 0, 4)

Conventions: :mod:`freeprob.conventions`.  References: README, "References".
"""
from sympy import Rational, Symbol

from .cumulants import (
    boolean_cumulants_to_moments,
    classical_cumulants_to_moments,
    free_cumulants_to_moments,
    moments_to_boolean_cumulants,
    moments_to_classical_cumulants,
    moments_to_free_cumulants,
)
from .errors import FreeprobValueError, NotAvailable, PrecisionError, SeriesValuationError
from .families import (
    Atomic,
    Bernoulli,
    CompoundFreePoisson,
    Dirac,
    FreePoisson,
    MarchenkoPastur,
    Semicircle,
)
from .law import Law
from .operations import (
    dilate,
    free_add,
    free_mul,
    free_power,
    mixture,
    pushforward,
    rectangular_companion,
    shift,
)
from .series import TruncatedSeries

__version__ = "0.1.0"

__all__ = [
    "Law", "Atomic", "Dirac", "Bernoulli", "Semicircle", "FreePoisson", "MarchenkoPastur",
    "CompoundFreePoisson",
    "free_add", "free_mul", "free_power", "pushforward", "shift", "dilate", "mixture",
    "rectangular_companion",
    "moments_to_free_cumulants", "free_cumulants_to_moments",
    "moments_to_boolean_cumulants", "boolean_cumulants_to_moments",
    "moments_to_classical_cumulants", "classical_cumulants_to_moments",
    "TruncatedSeries",
    "FreeprobValueError", "SeriesValuationError", "NotAvailable", "PrecisionError",
    "Rational", "Symbol",
]
