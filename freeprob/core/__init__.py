"""Exact algebra: coefficient rings (FLINT), truncated series, cumulants and moments,
partition lattices, conventions, symbols, exact polynomials with algebraic constants.

Imports only :mod:`freeprob.errors` from the rest of the package (docs/architecture.md).
"""
