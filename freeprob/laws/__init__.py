"""Laws: the :class:`~freeprob.laws.law.Law` base class, the families, the operations
(free convolutions, push-forwards, mixtures) and their algebraic Cauchy equations;
numbers are evaluated through :mod:`freeprob.numeric`."""
