r"""Midpoint–radius complex interval arrays in double precision, for the Jacobian enclosure
of Krawczyk's test in :func:`freeprob.numeric.ovpath.certify`.

:class:`IA` holds a ``complex128`` midpoint array and a ``float64`` radius array: the set of
arrays whose entries lie in the discs ``|x − mid| ≤ rad``.  Sums, products, matrix products
and Kronecker products are vectorised numpy operations; each result's radius covers the
inputs' radii (the standard midpoint–radius rules, [RUM10]_ §10) and the rounding of the
midpoint, by the a-priori bound ``|fl(a∘b) − a∘b| ≤ γ·|a||b|`` with ``γ = (m + 2)·4u`` for an
inner dimension ``m`` and ``u = 2^{-53}`` (doubled for complex products).  The radii are
themselves computed in round-to-nearest and multiplied by ``1 + 2^{-40}`` at the end of each
operation: a bound up to that margin, not a directed-rounding proof.  Used only for the
contraction factor ``‖I − C J(X)‖`` (which must be below 1, by any margin); the residual of
the test is enclosed in python-flint balls.

Source: [RUM10]_ §10 (midpoint–radius interval arithmetic); the rounding constants are the
standard a-priori bounds of floating-point dot products (Higham, *Accuracy and Stability of
Numerical Algorithms*, §3.1).
"""
from __future__ import annotations

import numpy as np

__all__ = ["IA", "ia_const"]

_U = 2.0 ** -53
_GROW = 1.0 + 2.0 ** -40


def _abs(x):
    return np.abs(x)


class IA:
    """A complex midpoint–radius interval array (module docstring)."""

    __array_priority__ = 1000
    __slots__ = ("mid", "rad")

    def __init__(self, mid, rad=None):
        self.mid = np.asarray(mid, dtype=complex)
        self.rad = np.zeros(self.mid.shape) if rad is None else np.asarray(rad, dtype=float)

    # -- shape ---------------------------------------------------------------------------
    @property
    def shape(self):
        return self.mid.shape

    @property
    def T(self):
        return IA(self.mid.T, self.rad.T)

    def reshape(self, *shape):
        return IA(self.mid.reshape(*shape), self.rad.reshape(*shape))

    def ravel(self):
        return IA(self.mid.ravel(), self.rad.ravel())

    def copy(self):
        return IA(self.mid.copy(), self.rad.copy())

    def __len__(self):
        return len(self.mid)

    def __getitem__(self, key):
        return IA(self.mid[key], self.rad[key])

    def __setitem__(self, key, value):
        value = _lift(value)
        self.mid[key] = value.mid
        self.rad[key] = value.rad

    # -- arithmetic ----------------------------------------------------------------------
    def __add__(self, other):
        o = _lift(other)
        mid = self.mid + o.mid
        return IA(mid, (self.rad + o.rad + 2 * _U * _abs(mid)) * _GROW)

    __radd__ = __add__

    def __neg__(self):
        return IA(-self.mid, self.rad)

    def __sub__(self, other):
        return self + (-_lift(other))

    def __rsub__(self, other):
        return _lift(other) + (-self)

    def __mul__(self, other):
        o = _lift(other)
        a, b = self.mid, o.mid
        mid = a * b
        rad = _abs(a) * o.rad + self.rad * _abs(b) + self.rad * o.rad + 8 * _U * _abs(a) * _abs(b)
        return IA(mid, rad * _GROW)

    __rmul__ = __mul__

    def __matmul__(self, other):
        o = _lift(other)
        A, B = self.mid, o.mid
        m = A.shape[-1]
        aA, aB = _abs(A), _abs(B)
        rad = aA @ o.rad + self.rad @ aB + self.rad @ o.rad + (m + 2) * 8 * _U * (aA @ aB)
        return IA(A @ B, rad * _GROW)

    def __rmatmul__(self, other):
        return _lift(other) @ self

    def kron(self, other):
        """``self ⊗ other`` for 2-d arrays."""
        o = _lift(other)
        (a, b), (c, d) = self.shape, o.shape

        def k(x, y):
            return (x[:, None, :, None] * y[None, :, None, :]).reshape(a * c, b * d)
        aA, aB = _abs(self.mid), _abs(o.mid)
        rad = k(aA, o.rad) + k(self.rad, aB) + k(self.rad, o.rad) + 8 * _U * k(aA, aB)
        return IA(k(self.mid, o.mid), rad * _GROW)


def _lift(x):
    if isinstance(x, IA):
        return x
    return IA(np.asarray(x, dtype=complex))


def ia_const(values):
    """An exact array (complex numbers from exact sympy values) as an :class:`IA` whose
    radius covers the rounding to doubles."""
    mid = np.asarray(values, dtype=complex)
    return IA(mid, 2 * _U * _abs(mid))
