"""Laws: the :class:`~freeprob.laws.law.Law` base class, the families, the operations
(free convolutions, push-forwards, mixtures) and their algebraic Cauchy equations;
numbers are evaluated through :mod:`freeprob.numeric`."""

# algebraic and operations register the functions Law calls back (Law.cauchy_equation,
# law + a, c * law) with freeprob.laws.law.register; importing them here makes those
# hooks exist as soon as any freeprob.laws module is imported.
from freeprob.laws import law, families, operations, independences, algebraic, polynomial, polynomial_equation  # noqa: F401
# freeprob.laws.finite_n (Law.finite_n) is imported on first use: it loads numpy (law._LAZY_HOOKS)
