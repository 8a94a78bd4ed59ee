r"""freeprob: an exact and arbitrary-precision free-probability engine.

Quick start::

    >>> import freeprob as fp
    >>> t = fp.Symbol("t")
    >>> fp.FreePoisson(t).moments(3)                     # Narayana polynomials
    (1, t, t**2 + t, t**3 + 3*t**2 + t)
    >>> fp.free_mul(fp.FreePoisson(1), fp.Semicircle(0, 1)).moments(4)
    (1, 0, 1, 0, 4)

The package is layered (docs/architecture.md): :mod:`freeprob.core` (exact algebra),
:mod:`freeprob.numeric` (evaluation of a Cauchy equation), :mod:`freeprob.laws`,
:mod:`freeprob.attention`, :mod:`freeprob.sampler` (numpy only),
:mod:`freeprob.experiments` and :mod:`freeprob.cli`; finite free probability (``⊞_d``,
``⊠_d`` of polynomials) is :mod:`freeprob.finite`.  The names below are loaded on first
use (PEP 562), so ``import freeprob.sampler`` does not import sympy or python-flint.

Conventions: :mod:`freeprob.core.conventions`.  References: :mod:`freeprob.references`.
"""
import importlib

from .errors import FreeprobValueError, NotAvailable, PrecisionError, SeriesValuationError

__version__ = "0.1.0"

_FAMILIES = ("Atomic", "Dirac", "Bernoulli", "Semicircle", "FreePoisson", "MarchenkoPastur",
             "CompoundFreePoisson")
_OPERATIONS = ("free_add", "free_mul", "free_power", "pushforward", "shift", "dilate", "mixture",
               "rectangular_companion")
_INDEPENDENCES = ("boolean_add", "monotone_add")
_CUMULANTS = ("moments_to_free_cumulants", "free_cumulants_to_moments",
              "moments_to_boolean_cumulants", "boolean_cumulants_to_moments",
              "moments_to_classical_cumulants", "classical_cumulants_to_moments",
              "moments_to_monotone_cumulants", "monotone_cumulants_to_moments")

#: public name -> module that defines it (imported on first access)
_EXPORTS = {
    "Law": "freeprob.laws.law",
    **dict.fromkeys(_FAMILIES, "freeprob.laws.families"),
    **dict.fromkeys(_OPERATIONS, "freeprob.laws.operations"),
    **dict.fromkeys(_INDEPENDENCES, "freeprob.laws.independences"),
    **dict.fromkeys(_CUMULANTS, "freeprob.core.cumulants"),
    "polynomial_law": "freeprob.laws.polynomial",
    "FiniteNLaw": "freeprob.laws.finite_n",
    "TruncatedSeries": "freeprob.core.series",
    "interruptible": "freeprob._interruptible",
    "Rational": "sympy",
    "Symbol": "sympy",
}

__all__ = [
    "Law", *_FAMILIES, *_OPERATIONS, *_INDEPENDENCES, "polynomial_law", "FiniteNLaw", *_CUMULANTS, "TruncatedSeries",
    "interruptible",
    "FreeprobValueError", "SeriesValuationError", "NotAvailable", "PrecisionError",
    "Rational", "Symbol",
]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'freeprob' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
