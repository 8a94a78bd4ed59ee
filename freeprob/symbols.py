r"""Canonical sympy symbols, defined once (style note §2.2).

* ``z``: argument of the Cauchy transform G and of the moment series ψ;
* ``w``: argument of the R-transform and of the cumulant series;
* ``u``: argument of the χ- and S-transforms;
* ``G``: the unknown in algebraic (Cauchy) equations;
* ``x``: the variable of polynomials used in pushforwards.
"""
import sympy as sp

__all__ = ["z", "w", "u", "G", "x"]

z, w, u, G, x = sp.symbols("z w u G x")
