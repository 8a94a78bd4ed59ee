r"""Exceptions raised by freeprob.

Three kinds, following the conventions of ``../shared/docs/style.md`` §2.6:

* :class:`FreeprobValueError` (a :class:`ValueError`): a parameter or argument is
  provably outside its domain.  The message names the function or class, the
  argument, the rule and the offending value.
* :class:`NotAvailable` (a :class:`NotImplementedError`): no formula or method
  exists for the request (e.g. a closed-form S-transform of a law that has none).
* :class:`PrecisionError` (an :class:`ArithmeticError`): a numeric target precision
  could not be certified.
"""

__all__ = ["FreeprobValueError", "SeriesValuationError", "NotAvailable", "PrecisionError"]


class FreeprobValueError(ValueError):
    """A parameter or argument is provably outside its allowed domain."""


class SeriesValuationError(FreeprobValueError):
    """A power-series operation needs a valuation the series does not have.

    Raised e.g. by reversion of a series whose constant term is non-zero or whose
    linear term vanishes, or by the inverse of a series with zero constant term.
    """


class NotAvailable(NotImplementedError):
    """No formula or method is available for this request; the message says why."""


class PrecisionError(ArithmeticError):
    """The requested number of digits could not be certified."""
