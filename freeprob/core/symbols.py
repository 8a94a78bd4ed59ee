r"""Canonical sympy symbols, defined once (style note §2.2).

* ``z``: argument of the Cauchy transform G and of the moment series ψ;
* ``w``: argument of the R-transform and of the cumulant series;
* ``u``: argument of the χ- and S-transforms;
* ``G``: the unknown in algebraic (Cauchy) equations;
* ``x``: the variable of polynomials used in pushforwards.
"""
import sympy as sp

__all__ = ["z", "w", "u", "G", "x", "ExpConstant"]

z, w, u, G, x = sp.symbols("z w u G x")


class ExpConstant(sp.Function):
    r"""``e^r`` for a rational ``r``, kept as one atom.

    sympy folds ``exp(r)**k`` into ``exp(k r)`` and then builds polynomial domains such as
    ``ZZ[exp(1/100), exp(1/50)]`` from which ``exp(49/100)`` can no longer be converted
    back; the Gaussian-equivalence constant ``θ1 = e^{β²} − 1`` at ``β = 0.7`` broke the
    numerics of every attention law that way.  As an unevaluated function of its exponent,
    ``ExpConstant(49/100)**2`` stays a power of one generator.  It prints as ``exp(r)``
    (``e^{r}`` in LaTeX) and evaluates like :func:`sympy.exp`.

    >>> c = ExpConstant(sp.Rational(49, 100))
    >>> sp.Poly(c**2 * x + c - 1, x).domain
    ZZ[exp(49/100)]
    >>> sp.N(c, 15)
    1.63231621995538
    """

    nargs = 1
    is_real = True
    is_positive = True
    is_finite = True
    is_algebraic = False

    @classmethod
    def eval(cls, r):
        if r.is_zero:
            return sp.Integer(1)
        if r == 1:
            return sp.E
        return None

    def _eval_evalf(self, prec):
        return sp.exp(self.args[0])._eval_evalf(prec)

    def _sympystr(self, printer):
        return f"exp({printer._print(self.args[0])})"

    def _latex(self, printer):
        return r"e^{%s}" % printer._print(self.args[0])

    def rewrite_as_exp(self):
        """The same number as a plain :func:`sympy.exp`."""
        return sp.exp(self.args[0])
