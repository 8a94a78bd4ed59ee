"""Laws: the :class:`~freeprob.laws.law.Law` base class, the families, the operations
(free convolutions, push-forwards, mixtures) and their algebraic Cauchy equations;
numbers are evaluated through :mod:`freeprob.numeric`."""

# algebraic and operations register the functions Law calls back (Law.cauchy_equation,
# law + a, c * law) with freeprob.laws.law.register; importing them here makes those
# hooks exist as soon as any freeprob.laws module is imported.
from freeprob.laws import law, families, operations, independences, algebraic, polynomial, polynomial_equation  # noqa: F401
from freeprob.laws import finite_n  # noqa: F401  (registers Law.finite_n)
