r"""Truncated power series that carry their order.

A :class:`TruncatedSeries` is ``c_0 + c_1 x + … + c_{n-1} x^{n-1} + O(x^n)``: the
coefficients are known exactly (in the ring's sense) up to, not including, the
*order* ``n`` (python-flint's ``prec``).  Every operation computes the order of its
result from the orders and valuations of its operands, so a result never claims
more terms than its inputs determine.

Coefficients live in a :mod:`~freeprob.core.coefficients` ring: exact rationals (FLINT
``fmpq_series`` kernels), a sympy field such as ``QQ(t1, t2)`` (symbolic
parameters), mpmath numbers at a given precision, or ``arb`` balls.  The ring is
inferred from the coefficients when not given.

Examples
--------
>>> from freeprob.core.series import TruncatedSeries
>>> f = TruncatedSeries([0, 1, 1], order=6)        # x + x^2 + O(x^6)
>>> f.reversion()                                  # Catalan numbers with signs
x - x**2 + 2*x**3 - 5*x**4 + 14*x**5 + O(x**6)
>>> (1 - TruncatedSeries([0, 1], order=5)).inverse().coefficients()
(1, 1, 1, 1, 1)

References: [KNU97]_ §4.7 (manipulation of power series; :mod:`freeprob.references`);
python-flint ``fmpq_series`` (``reversion``, ``inv``) for the exact kernels.
"""
from __future__ import annotations

import numbers
from fractions import Fraction

import flint
import mpmath
import sympy as sp

from freeprob.core.coefficients import QQ, CoefficientRing, MpolyRing, MPRing, SymbolicRing, _sympify
from freeprob._checks import check_int
from freeprob.errors import FreeprobValueError, SeriesValuationError

__all__ = ["TruncatedSeries"]


def _infer_ring(values) -> CoefficientRing:
    for v in values:
        if isinstance(v, bool):
            raise FreeprobValueError(f"boolean coefficient {v!r}; pass numbers")
        if isinstance(v, complex | mpmath.mpc) or (isinstance(v, sp.Basic) and v.is_real is False):
            raise FreeprobValueError(f"coefficient {v!r} is not real; freeprob series are real")
        if isinstance(v, mpmath.mpf) and not mpmath.isfinite(v):
            raise FreeprobValueError(f"coefficient {v!r} is not finite")
    if all(isinstance(v, flint.fmpq | flint.fmpz | Fraction) or
           (isinstance(v, numbers.Integral) and not isinstance(v, bool)) for v in values):
        return QQ
    if any(isinstance(v, mpmath.mpf | mpmath.mpc) for v in values):
        return MPRing(mpmath.mp.dps)
    exprs = []
    for v in values:
        if isinstance(v, float):
            raise FreeprobValueError(
                f"TruncatedSeries: float coefficient {v!r}; pass an exact number "
                "(e.g. sympy.Rational) or an mpmath mpf for numeric series"
            )
        exprs.append(_sympify(v))
    if all(e.is_Rational for e in exprs):
        return QQ
    ring = SymbolicRing.for_expressions(exprs)
    return MpolyRing(ring.domain) if MpolyRing.eligible(ring) else ring


#: largest series order accepted (memory guard; raise it explicitly if needed)
MAX_SERIES_ORDER = 1_000_000


def _check_order(order, who="TruncatedSeries"):
    """``order`` as an int in ``[0, MAX_SERIES_ORDER]`` (:func:`freeprob._checks.check_int`)."""
    return check_int(order, who, "order", minimum=0, maximum=MAX_SERIES_ORDER,
                     limit="freeprob.core.series.MAX_SERIES_ORDER")


class TruncatedSeries:
    r"""A power series ``Σ_{k<order} c_k x^k + O(x^order)`` over a coefficient ring.

    Parameters
    ----------
    coefficients : sequence
        ``c_0, c_1, …``; entries beyond ``order`` are dropped, missing ones are 0.
        Exact numbers (int, Fraction, sympy Rational/expressions) or mpmath numbers.
    order : int >= 0
        The series is exact modulo ``x**order``.  Defaults to ``len(coefficients)``.
    ring : CoefficientRing, optional
        Coefficient ring; inferred when omitted (rationals → FLINT ``QQ``, sympy
        expressions → the smallest sympy field containing them, mpmath → ``MPRing``
        at the current ``mp.dps``).
    var : sympy.Symbol, optional
        Name of the variable, used for printing and :meth:`to_sympy` only.

    Raises
    ------
    FreeprobValueError
        Negative or non-integer order, float coefficients, coefficients not in ``ring``.
    """

    __slots__ = ("_c", "order", "ring", "var")

    def __init__(self, coefficients, order=None, ring=None, var=None):
        if isinstance(coefficients, str | bytes | dict) or not hasattr(coefficients, "__iter__"):
            raise FreeprobValueError(
                f"TruncatedSeries: coefficients must be a sequence of numbers; got {coefficients!r}"
            )
        if ring is not None and not isinstance(ring, CoefficientRing):
            raise FreeprobValueError(f"TruncatedSeries: ring must be a CoefficientRing; got {ring!r}")
        if var is not None and not isinstance(var, sp.Symbol):
            raise FreeprobValueError(f"TruncatedSeries: var must be a sympy Symbol; got {var!r}")
        coefficients = list(coefficients)
        order = len(coefficients) if order is None else _check_order(order)
        try:
            if ring is None:
                ring = _infer_ring(coefficients[:order])
            c = [ring.convert(v) for v in coefficients[:order]]
        except FreeprobValueError as exc:
            raise FreeprobValueError(f"TruncatedSeries: {exc}") from exc
        c += [ring.zero] * (order - len(c))
        self._c = c
        self.order = order
        self.ring = ring
        self.var = var if var is not None else sp.Symbol("x")

    @classmethod
    def _raw(cls, coeffs, order, ring, var=None):
        """Build from a list already in ``ring`` (internal, no conversion)."""
        s = object.__new__(cls)
        c = list(coeffs[:order])
        c += [ring.zero] * (order - len(c))
        s._c, s.order, s.ring = c, order, ring
        s.var = var if var is not None else sp.Symbol("x")
        return s

    @classmethod
    def generator(cls, order, ring=QQ, var=None):
        """The series ``x + O(x^order)``."""
        return cls._raw([ring.zero, ring.one], _check_order(order), ring, var)

    # -- access --------------------------------------------------------------
    def __len__(self):
        return self.order

    def __getitem__(self, k):
        return self._c[k]

    def coefficients(self, *, to_sympy: bool = True):
        """Tuple of the ``order`` known coefficients.

        Exact rings give sympy numbers/expressions (``to_sympy=True``) or raw ring
        elements; numeric rings give their own elements.
        """
        if to_sympy and self.ring.exact:
            return tuple(self.ring.to_sympy(a) for a in self._c)
        return tuple(self._c)

    def valuation(self):
        """Index of the first non-zero coefficient (``order`` if all known ones vanish)."""
        for k, a in enumerate(self._c):
            if not self.ring.is_zero(a):
                return k
        return self.order

    def to_sympy(self, var=None):
        """The known part as a sympy expression plus ``O(var**order)``."""
        v = var if var is not None else self.var
        poly = sp.Add(*[c * v**k for k, c in enumerate(self.coefficients())])
        return poly + sp.Order(v**self.order, v)

    def __repr__(self):
        return str(self.to_sympy())

    def __eq__(self, other):
        if not isinstance(other, TruncatedSeries):
            return NotImplemented
        if self.order != other.order:
            return False
        return all(self.ring.is_zero(a - b) for a, b in zip(self._c, self._unify(other)._c))

    __hash__ = None

    # -- helpers -------------------------------------------------------------
    def _unify(self, other):
        if other.ring == self.ring:
            return other
        if other.ring == QQ:
            return TruncatedSeries._raw([self.ring.convert(a) for a in other._c],
                                        other.order, self.ring, other.var)
        raise FreeprobValueError(
            f"TruncatedSeries: cannot combine coefficient rings {self.ring!r} and {other.ring!r}"
        )

    def _coerce(self, other):
        if isinstance(other, TruncatedSeries):
            if self.ring != other.ring and self.ring == QQ:
                return other._unify(self), other
            return self, self._unify(other)
        return self, TruncatedSeries._raw([self.ring.convert(other)], max(self.order, 1),
                                          self.ring, self.var)

    def truncate(self, order):
        """The same series known only modulo ``x**order`` (``order <= self.order``)."""
        order = _check_order(order)
        if order > self.order:
            raise FreeprobValueError(
                f"truncate: cannot raise the order from {self.order} to {order}"
            )
        return TruncatedSeries._raw(self._c, order, self.ring, self.var)

    # -- arithmetic ----------------------------------------------------------
    def __add__(self, other):
        a, b = self._coerce(other)
        n = min(a.order, b.order)
        with a.ring.context():
            c = [x + y for x, y in zip(a._c[:n], b._c[:n])]
        return TruncatedSeries._raw(c, n, a.ring, self.var)

    __radd__ = __add__

    def __neg__(self):
        with self.ring.context():
            return TruncatedSeries._raw([-x for x in self._c], self.order, self.ring, self.var)

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if not isinstance(other, TruncatedSeries):
            c = self.ring.convert(other)
            with self.ring.context():
                return TruncatedSeries._raw([x * c for x in self._c], self.order, self.ring, self.var)
        a, b = self._coerce(other)
        n = min(a.order + b.valuation(), b.order + a.valuation())
        if n == 0:
            return TruncatedSeries._raw([], 0, a.ring, self.var)
        c = a.ring.mul(_pad(a._c, n, a.ring), _pad(b._c, n, a.ring), n)
        return TruncatedSeries._raw(c, n, a.ring, self.var)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if not isinstance(other, TruncatedSeries):
            c = self.ring.convert(other)
            if self.ring.is_zero(c):
                raise ZeroDivisionError("TruncatedSeries: division by zero")
            with self.ring.context():
                inv = self.ring.one / c
            return self * inv
        a, b = self._coerce(other)
        v = b.valuation()
        if v >= b.order:
            raise SeriesValuationError("division by a series whose known coefficients all vanish")
        if a.valuation() < v:
            raise SeriesValuationError(
                f"division: numerator valuation {a.valuation()} is below the divisor's {v}"
            )
        return a.shift(-v) * b.shift(-v).inverse()

    def __rtruediv__(self, other):
        return self.inverse() * other

    def __pow__(self, k):
        k = check_int(k, "TruncatedSeries", "power")
        if k < 0:
            return self.inverse() ** (-k)
        result = TruncatedSeries._raw([self.ring.one], self.order, self.ring, self.var)
        base = self
        while k:
            if k & 1:
                result = result * base
            k >>= 1
            if k:
                base = base * base
        return result

    def shift(self, k):
        """Multiply by ``x**k`` (``k`` may be negative if the low coefficients vanish)."""
        k = check_int(k, "shift", "k")
        if k >= 0:
            return TruncatedSeries._raw([self.ring.zero] * k + self._c, self.order + k,
                                        self.ring, self.var)
        if self.valuation() < -k:
            raise SeriesValuationError(
                f"shift by {k}: the series has a non-zero coefficient below x^{-k}"
            )
        return TruncatedSeries._raw(self._c[-k:], self.order + k, self.ring, self.var)

    def inverse(self):
        """Multiplicative inverse ``1/f``; needs a non-zero constant term.

        Raises
        ------
        SeriesValuationError
            If the constant term is zero (or the series has order 0).
        """
        if self.order == 0 or self.ring.is_zero(self._c[0]):
            raise SeriesValuationError(
                "inverse: the constant term is zero; 1/f is not a power series "
                "(divide by a power of x first)"
            )
        return TruncatedSeries._raw(self.ring.inv(self._c, self.order), self.order,
                                    self.ring, self.var)

    def compose(self, g):
        """Composition ``f(g(x))``; ``g`` must have zero constant term.

        The result is exact modulo ``x**min(f.order * val(g), g.order)``.
        """
        f, g = self._coerce(g) if isinstance(g, TruncatedSeries) else (self, None)
        if g is None:
            raise FreeprobValueError("compose: the argument must be a TruncatedSeries")
        v = g.valuation()
        if v == 0:
            raise SeriesValuationError(
                "compose: the inner series has a non-zero constant term; f(g) is not "
                "a formal power series"
            )
        n = min(f.order * v, g.order)
        c = f.ring.compose(_pad(f._c, n, f.ring), _pad(g._c, n, f.ring), n)
        return TruncatedSeries._raw(c, n, f.ring, self.var)

    __call__ = compose

    def reversion(self):
        """Compositional inverse ``f^{<-1>}`` (``f(f^{<-1>}(x)) = x``).

        Needs ``c_0 = 0`` and ``c_1 != 0``; the result has the same order.

        Raises
        ------
        SeriesValuationError
            If the constant term is non-zero or the linear term vanishes.
        """
        if self.order < 2:
            raise SeriesValuationError("reversion: need at least the coefficients of x^0 and x^1")
        if not self.ring.is_zero(self._c[0]):
            raise SeriesValuationError(
                "reversion: the constant term must be zero (got "
                f"{self.coefficients()[0]}); shift the series first"
            )
        if self.ring.is_zero(self._c[1]):
            raise SeriesValuationError(
                "reversion: the linear coefficient is zero, so the series has no "
                "compositional inverse (valuation must be exactly 1)"
            )
        return TruncatedSeries._raw(self.ring.reversion(self._c, self.order), self.order,
                                    self.ring, self.var)

    def derivative(self):
        """Formal derivative (order decreases by one)."""
        with self.ring.context():
            c = [self._c[k] * k for k in range(1, self.order)]
        return TruncatedSeries._raw(c, max(self.order - 1, 0), self.ring, self.var)

    def integral(self):
        """Formal antiderivative with zero constant term (order increases by one)."""
        with self.ring.context():
            c = [self.ring.zero] + [self._c[k] / (k + 1) for k in range(self.order)]
        return TruncatedSeries._raw(c, self.order + 1, self.ring, self.var)

    def log(self):
        """``log f`` for a series with constant term 1."""
        if self.order == 0 or self.ring.is_zero(self._c[0] - self.ring.one):
            return TruncatedSeries._raw(self.ring.log(self._c, self.order), self.order,
                                        self.ring, self.var)
        raise SeriesValuationError("log: the constant term must be 1")

    def exp(self):
        """``exp f`` for a series with constant term 0."""
        if self.order and not self.ring.is_zero(self._c[0]):
            raise SeriesValuationError("exp: the constant term must be 0")
        return TruncatedSeries._raw(self.ring.exp(self._c, self.order), self.order,
                                    self.ring, self.var)


def _pad(c, n, ring):
    c = list(c[:n])
    return c + [ring.zero] * (n - len(c))
