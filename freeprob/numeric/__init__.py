"""Arbitrary-precision evaluation of an algebraic Cauchy equation ``P(G, z) = 0``: root
isolation, continuation to the real axis, atoms, quadrature.  Knows nothing of laws.

The facade is :class:`AlgebraicCauchy` (:mod:`freeprob.numeric.cauchy`).
"""
from freeprob.numeric.cauchy import GUARD_DPS, MAX_GUARD_DPS, AlgebraicCauchy

__all__ = ["AlgebraicCauchy", "GUARD_DPS", "MAX_GUARD_DPS"]
