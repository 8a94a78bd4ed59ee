r"""Dual numbers over a coefficient ring: first-order perturbations carried exactly.

A :class:`Dual` is ``a + b ε`` with ``ε² = 0``; :class:`DualRing` is a
:class:`~freeprob.core.coefficients.CoefficientRing` of them over any base ring.  Running
an exact algorithm of the library (moments ↔ cumulants, S-transforms, free convolutions)
over dual numbers computes its value (the ``a`` parts) and, in the same pass, its
derivative in the direction of the ``b`` parts of the inputs (forward-mode automatic
differentiation): ``f(a + b ε) = f(a) + f′(a) b ε``.

It is how :mod:`freeprob.laws.finite_n_rules` propagates the ``1/n`` term of a law
through ``⊞``, ``⊠`` and the other operations: the law of the operation evaluated on the
dual laws ``μ + ε μ₁`` of its operands gives the linear response of its moments to the
operands' corrections, exactly (the infinitesimal freeness of Belinschi and Shlyakhtenko,
[BS12]_, is the derivative of free convolution; :mod:`freeprob.references`).

Examples
--------
>>> from freeprob.core.coefficients import QQ
>>> from freeprob.core.dual import DualRing
>>> D = DualRing(QQ)
>>> x = D.make(2, 1)                 # 2 + ε
>>> y = x * x * x                    # (2 + ε)³ = 8 + 12 ε
>>> D.parts(y)
(8, 12)
"""
from __future__ import annotations

from freeprob.core.coefficients import CoefficientRing
from freeprob.errors import FreeprobValueError

__all__ = ["Dual", "DualRing"]


class Dual:
    """``a + b ε`` with ``ε² = 0``; ``a``, ``b`` elements of one base ring (or ints)."""

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __repr__(self):
        return f"Dual({self.a!r}, {self.b!r})"

    def __add__(self, o):
        if isinstance(o, Dual):
            return Dual(self.a + o.a, self.b + o.b)
        return Dual(self.a + o, self.b)

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.a, -self.b)

    def __sub__(self, o):
        if isinstance(o, Dual):
            return Dual(self.a - o.a, self.b - o.b)
        return Dual(self.a - o, self.b)

    def __rsub__(self, o):
        return Dual(o - self.a, -self.b)

    def __mul__(self, o):
        if isinstance(o, Dual):
            return Dual(self.a * o.a, self.a * o.b + self.b * o.a)
        return Dual(self.a * o, self.b * o)

    __rmul__ = __mul__

    def __truediv__(self, o):
        if isinstance(o, Dual):
            inv = 1 / o.a
            q = self.a * inv
            return Dual(q, (self.b - q * o.b) * inv)
        return Dual(self.a / o, self.b / o)

    def __rtruediv__(self, o):
        inv = 1 / self.a
        q = o * inv
        return Dual(q, -(q * self.b) * inv)


class DualRing(CoefficientRing):
    """The ring ``base[ε]/(ε²)`` (generic series kernels of :class:`CoefficientRing`).

    Parameters
    ----------
    base : CoefficientRing
        The ring of both parts (exact or numeric).

    Raises
    ------
    FreeprobValueError
        ``base`` is not a coefficient ring, or is itself a dual ring (second order is
        not supported).
    """

    def __init__(self, base):
        if not isinstance(base, CoefficientRing) or isinstance(base, DualRing):
            raise FreeprobValueError(f"DualRing: the base must be a (non-dual) CoefficientRing; got {base!r}")
        self.base = base
        self.exact = base.exact
        self.zero = Dual(base.zero, base.zero)
        self.one = Dual(base.one, base.zero)

    @property
    def key(self):
        return ("dual", type(self.base).__name__, self.base.key)

    def __repr__(self):
        return f"DualRing({self.base!r})"

    def context(self):
        return self.base.context()

    def convert(self, value):
        """A dual number: itself, or ``value + 0 ε`` (``value`` converted by the base)."""
        if isinstance(value, Dual):
            return value
        return Dual(self.base.convert(value), self.base.zero)

    def make(self, a, b):
        """``a + b ε`` (both converted by the base ring)."""
        return Dual(self.base.convert(a), self.base.convert(b))

    def is_zero(self, x):
        if not isinstance(x, Dual):
            return self.base.is_zero(self.base.convert(x))
        return self.base.is_zero(x.a) and self.base.is_zero(x.b)

    def parts(self, x):
        """``(a, b)`` of ``x = a + b ε``, as sympy values for an exact base ring."""
        x = self.convert(x)
        if self.base.exact:
            return self.base.to_sympy(x.a), self.base.to_sympy(x.b)
        return x.a, x.b

    def to_sympy(self, x):
        raise FreeprobValueError("DualRing: use parts(x) for the two parts of a dual number")
