r"""Coefficient rings for truncated power series.

A :class:`~freeprob.core.series.TruncatedSeries` stores its coefficients as a list of
elements of one *coefficient ring*.  Five rings exist; the algorithms are written
once against the small interface of :class:`CoefficientRing` (``convert``,
``to_sympy``, ``is_zero`` and the series kernels ``mul``, ``inv``, ``compose``,
``reversion``, ``log``, ``exp``), and each ring supplies either the generic
Python kernels or a fast FLINT kernel.

=====================  =========================================  =====================
ring                   elements                                   series kernels
=====================  =========================================  =====================
:class:`RationalRing`  python-flint ``fmpq`` (exact rationals)    FLINT ``fmpq_series``
:class:`SymbolicRing`  elements of a sympy domain, e.g.           generic (this module)
                       ``QQ<sqrt(2)>`` or ``ZZ(c0)``, c0² = 2
:class:`MpolyRing`     rational functions of symbols (``ZZ(t1,      FLINT ``fmpq_mpoly``,
                       t2)``, ``ZZ(t, E)``) as fractions of         composition, Lagrange
                       python-flint ``fmpq_mpoly``                  inversion (:mod:`.mpolyseries`)
:class:`MPRing`        mpmath ``mpf``/``mpc`` at ``dps`` digits   generic, under
                                                                  ``mp.workdps``
:class:`BallRing`      python-flint ``arb`` balls at ``prec``     FLINT ``arb_series``
                       bits (rigorous error bounds)
=====================  =========================================  =====================

Conversion into a ring goes through :meth:`CoefficientRing.convert`, which accepts
exact sympy numbers/expressions (and elements already in the ring); the way back is
:meth:`CoefficientRing.to_sympy` for the exact rings.  Exact and numeric rings are
kept apart: nothing converts a numeric ring element back into an exact one (the
"one-way door" of python-flint's ``arb``).

How to add a ring: subclass :class:`CoefficientRing`, implement ``convert``,
``is_zero`` and ``key``; the generic kernels of the base class then work for any
field whose elements support ``+ - * /``.  Override a kernel only with a faster one.

References: the kernels are the classical truncated power-series algorithms, e.g.
[KNU97]_ §4.7 (reversion, composition, log/exp recurrences; :mod:`freeprob.references`).
"""
from __future__ import annotations

import contextlib
import math
from fractions import Fraction

import flint
import mpmath
import sympy as sp
from sympy.polys.constructor import construct_domain

from freeprob.core import mpolyseries as _mp
from freeprob.errors import FreeprobValueError, SeriesValuationError


def _sympify(value):
    """sympify that never parses strings (no code is evaluated)."""
    if isinstance(value, str | bytes):
        raise FreeprobValueError(
            f"strings are not accepted as coefficients ({value!r}); pass numbers or sympy "
            "expressions"
        )
    try:
        return sp.sympify(value, strict=True)
    except sp.SympifyError as exc:
        raise FreeprobValueError(f"cannot use {value!r} as an exact number or expression") from exc


__all__ = [
    "CoefficientRing",
    "RationalRing",
    "SymbolicRing",
    "MpolyRing",
    "MPRing",
    "BallRing",
    "QQ",
    "exact_ring_for",
]


@contextlib.contextmanager
def flint_precision(cap: int, prec: int | None = None):
    """Temporarily set python-flint's series length cap (and working precision).

    python-flint truncates every series operation at the global ``ctx.cap``; we set
    it for the duration of one kernel and restore it in ``finally`` (the scoped
    precision pattern of mpmath's ``workdps``).
    """
    old_cap, old_prec = flint.ctx.cap, flint.ctx.prec
    try:
        flint.ctx.cap = max(int(cap), 1)
        if prec is not None:
            flint.ctx.prec = int(prec)
        yield
    finally:
        flint.ctx.cap = old_cap
        flint.ctx.prec = old_prec


class CoefficientRing:
    """Interface of a coefficient field for truncated power series.

    Subclasses define ``zero``, ``one``, :meth:`convert`, :meth:`is_zero` and
    :attr:`key`.  The series kernels below take coefficient lists ``a`` (index =
    power) and a length ``n`` and return a list of exactly ``n`` coefficients; they
    assume the preconditions checked by :class:`~freeprob.core.series.TruncatedSeries`.
    """

    exact = True

    # -- element level -------------------------------------------------------
    def convert(self, value):  # pragma: no cover - abstract
        raise NotImplementedError

    def is_zero(self, a) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_sympy(self, a):
        """Return ``a`` as a sympy expression (exact rings only)."""
        raise FreeprobValueError(f"{type(self).__name__} elements have no exact sympy form")

    @property
    def key(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def __eq__(self, other):
        return type(self) is type(other) and self.key == other.key

    def __hash__(self):
        return hash((type(self).__name__, self.key))

    def context(self):
        """Context manager in which element arithmetic has this ring's precision."""
        return contextlib.nullcontext()

    # -- generic O(n^2)/O(n^3) kernels ------------------------------------------
    def mul(self, a, b, n):
        zero = self.zero
        out = [zero] * n
        for i, ai in enumerate(a[:n]):
            if self.is_zero(ai):
                continue
            for j in range(min(len(b), n - i)):
                out[i + j] = out[i + j] + ai * b[j]
        return out

    def inv(self, a, n):
        a0inv = self.one / a[0]
        out = [self.zero] * n
        out[0] = a0inv
        for k in range(1, n):
            s = self.zero
            for j in range(1, min(k, len(a) - 1) + 1):
                s = s + a[j] * out[k - j]
            out[k] = -s * a0inv
        return out

    def compose(self, f, g, n):
        # Horner: f(g) = f0 + g (f1 + g (f2 + ...)), g has zero constant term.
        out = [self.zero] * n
        for c in reversed(list(f[:n])):
            out = self.mul(out, g, n)
            out[0] = out[0] + c
        return out

    def reversion(self, f, n):
        # Solve f(g(x)) = x coefficient by coefficient, keeping the table of
        # powers P[j] = g^j ([KNU97] §4.7, "reversion of power series").
        g = [self.zero] * n
        if n <= 1:
            return g
        a1inv = self.one / f[1]
        g[1] = a1inv
        # P[j][m] = [x^m] g^j; column m is final once g_1..g_{m-1} are known
        P = [None, [self.zero] * n]
        P[1][1] = a1inv
        for m in range(2, n):
            # extend P[j] tables for j = 2..m at index m-1 .. compute needed [x^m] g^j
            while len(P) <= m:
                P.append([self.zero] * n)
            # compute [x^m] g^j for j >= 2 using g known up to index m-1
            for j in range(2, m + 1):
                s = self.zero
                prev = P[j - 1]
                for i in range(1, m - j + 2):
                    if not self.is_zero(g[i]):
                        s = s + g[i] * prev[m - i]
                P[j][m] = s
            s = self.zero
            for j in range(2, min(m, len(f) - 1) + 1):
                s = s + f[j] * P[j][m]
            g[m] = -s * a1inv
            P[1][m] = g[m]
        return g

    def log(self, a, n):
        # log a = integral(a' / a), a[0] == 1
        da = [a[k] * k for k in range(1, min(len(a), n))]
        q = self.mul(da, self.inv(a, n), n - 1) if n > 1 else []
        return [self.zero] + [q[k] / (k + 1) for k in range(n - 1)]

    def exp(self, a, n):
        # e = exp(a), a[0] == 0: k e_k = sum_{j=1}^k j a_j e_{k-j}
        out = [self.zero] * n
        if n == 0:
            return out
        out[0] = self.one
        for k in range(1, n):
            s = self.zero
            for j in range(1, min(k, len(a) - 1) + 1):
                if not self.is_zero(a[j]):
                    s = s + a[j] * out[k - j] * j
            out[k] = s / k
        return out


class RationalRing(CoefficientRing):
    """Exact rationals as python-flint ``fmpq``; FLINT ``fmpq_series`` kernels.

    The fast path for laws whose parameters are all rational (FLINT: reversion of a
    100-term series in about 2 ms).
    """

    zero = flint.fmpq(0)
    one = flint.fmpq(1)

    @property
    def key(self):
        return "QQ"

    def __repr__(self):
        return "QQ"

    def convert(self, value):
        if isinstance(value, flint.fmpq):
            return value
        if isinstance(value, (flint.fmpz, int)) and not isinstance(value, bool):
            return flint.fmpq(value)
        if isinstance(value, Fraction):
            return flint.fmpq(value.numerator, value.denominator)
        v = _sympify(value)
        if v.is_Rational:
            return flint.fmpq(int(v.p), int(v.q))
        raise FreeprobValueError(f"QQ: {value!r} is not an exact rational number")

    def is_zero(self, a):
        return a == 0

    def to_sympy(self, a):
        return sp.Rational(int(a.p), int(a.q))

    def _series(self, a, n):
        return flint.fmpq_series(list(a[:n]), prec=n)

    def _list(self, s, n):
        c = s.coeffs()
        return [flint.fmpq(x) for x in c[:n]] + [self.zero] * (n - len(c))

    def mul(self, a, b, n):
        with flint_precision(n):
            return self._list(self._series(a, n) * self._series(b, n), n)

    def inv(self, a, n):
        with flint_precision(n):
            return self._list(self._series(a, n).inv(), n)

    def compose(self, f, g, n):
        if all(v == 0 for v in g[:n]):
            return ([f[0]] if f else [self.zero])[:n] + [self.zero] * (n - 1)
        with flint_precision(n):
            return self._list(self._series(f, n)(self._series(g, n)), n)

    def reversion(self, f, n):
        with flint_precision(n):
            return self._list(self._series(f, n).reversion(), n)

    def log(self, a, n):
        with flint_precision(n):
            return self._list(self._series(a, n).log(), n)

    def exp(self, a, n):
        with flint_precision(n):
            return self._list(self._series(a, n).exp(), n)


QQ = RationalRing()


class SymbolicRing(CoefficientRing):
    """Elements of a sympy domain (a field), e.g. ``QQ(t1, t2)`` or ``ZZ(E)``.

    Used for symbolic parameters (θ1, θ2, width ratios) and for exact irrational
    constants.  The domain is a field so that divisions by the constant or linear
    coefficient (inverse, reversion) stay exact.

    Parameters
    ----------
    domain : sympy.polys.domains.Domain
        The coefficient domain; it is replaced by its field of fractions.
    """

    def __init__(self, domain, replacements=None):
        if not domain.is_Field:
            domain = domain.get_field()
        self.domain = domain
        self.zero = domain.zero
        self.one = domain.one
        self._forward = dict(replacements or {})
        self._backward = {v: k for k, v in self._forward.items()}
        # algebraic numbers standing as generators (√2 as c0) satisfy their minimal
        # polynomials (c0² = 2), which the domain does not know: is_zero reduces by them
        self._minpolys = []
        if self._forward:
            from freeprob.core.exactpoly import algebraic_relations   # only with generators
            ring = domain.get_ring()
            for _, m in algebraic_relations(self._forward):
                with contextlib.suppress(sp.CoercionFailed):   # a generator the domain lacks
                    self._minpolys.append(ring.from_sympy(m))

    @property
    def key(self):
        return (str(self.domain), tuple(sorted(map(str, self._forward))))

    def __repr__(self):
        return f"SymbolicRing({self.domain})"

    @classmethod
    def for_expressions(cls, exprs):
        """The smallest sympy field containing every expression of ``exprs``."""
        exprs = [_sympify(e) for e in exprs] or [sp.Integer(0)]
        K, _ = construct_domain(exprs, field=True)
        return cls(K)

    def convert(self, value):
        if isinstance(value, flint.fmpq):
            value = sp.Rational(int(value.p), int(value.q))
        elif isinstance(value, Fraction):
            value = sp.Rational(value.numerator, value.denominator)
        try:
            if self.domain.of_type(value):
                return value
        except TypeError:
            pass
        try:
            return self.domain.from_sympy(_sympify(value).xreplace(self._forward))
        except (sp.CoercionFailed, TypeError, ValueError) as exc:
            raise FreeprobValueError(
                f"{self.domain}: cannot represent {value!r} in this coefficient domain"
            ) from exc

    def is_zero(self, a):
        """Exact zero test; with algebraic generators (√2 as ``c0``) modulo their minimal
        polynomials (``c0² − 2`` is zero), confirmed by sympy for several generators
        (``√6 − √2·√3``: dependent radicals)."""
        if self.domain.is_zero(a):
            return True
        if not self._minpolys:
            return False
        num = self.domain.numer(a)
        for m in self._minpolys:
            num = num.rem(m)
        if not num:
            return True
        return len(self._minpolys) > 1 and sp.expand(
            self.domain.get_ring().to_sympy(num).xreplace(self._backward)) == 0

    def to_sympy(self, a):
        out = self.domain.to_sympy(a)
        return out.xreplace(self._backward) if self._backward else out


class MpolyRing(SymbolicRing):
    """A rational function field ``ZZ(t1, …)`` / ``QQ(t1, …)`` in FLINT (issue 17).

    The same field as :class:`SymbolicRing` (same ``domain``, same sympy output), with
    elements :class:`freeprob.core.mpolyseries.Frac` (``fmpq_mpoly`` fractions in lowest
    terms) and packed FLINT kernels for ``mul``, ``inv``, ``compose`` (the packed powers of
    the inner series) and ``reversion`` (Lagrange inversion, see
    :mod:`freeprob.core.mpolyseries`); ``log`` and ``exp`` are the generic kernels over
    these elements.  :func:`exact_ring_for` chooses it for
    every field of fractions over ℤ or ℚ without algebraic relations among its generators.
    """

    def __init__(self, domain, replacements=None):
        super().__init__(domain, replacements)
        self._alg = _mp.MpolyAlgebra(len(self.domain.symbols))
        # the direct construction of sympy expressions is for generators that are symbols
        self._plain = all(isinstance(g, sp.Symbol) for g in self.domain.symbols)
        self.zero, self.one = self._alg.zero, self._alg.one

    @classmethod
    def eligible(cls, ring):
        """Whether the :class:`SymbolicRing` ``ring`` can run in FLINT polynomials."""
        from freeprob.core.exactpoly import algebraic_relations
        K = ring.domain
        return (type(ring) is SymbolicRing and K.is_FractionField and not ring._minpolys
                and (K.dom.is_ZZ or K.dom.is_QQ) and len(K.symbols) > 0
                and not list(algebraic_relations(ring._forward)))

    @property
    def key(self):
        return ("mpoly",) + super().key

    def __repr__(self):
        return f"MpolyRing({self.domain})"

    def convert(self, value):
        if isinstance(value, _mp.Frac):
            return value
        if isinstance(value, (int, flint.fmpz, flint.fmpq)) and not isinstance(value, bool):
            return self.one * value
        return _mp.from_domain(self._alg, self.domain, super().convert(value))

    def is_zero(self, a):
        return a.num.is_zero()

    def to_sympy(self, a):
        if self._plain and a.den.is_one():
            out = _mp.poly_expr(a.num, self.domain.symbols)
            if out is not None:
                return out.xreplace(self._backward) if self._backward else out
        return super().to_sympy(_mp.to_domain(self._alg, self.domain, a))

    def mul(self, a, b, n):
        return self._alg.mul(a, b, n)

    def inv(self, a, n):
        return self._alg.inv(a, n)

    def reversion(self, f, n):
        return self._alg.reversion(f, n)

    def compose(self, f, g, n):
        return self._alg.compose(f, g, n)


def symbolic_ring(domain, replacements=None) -> SymbolicRing:
    """The ring of the sympy field ``domain``: :class:`MpolyRing` when it qualifies
    (:meth:`MpolyRing.eligible`), else :class:`SymbolicRing`."""
    ring = SymbolicRing(domain, replacements)
    if MpolyRing.eligible(ring):
        return MpolyRing(ring.domain, replacements)
    return ring


class MPRing(CoefficientRing):
    """mpmath numbers (``mpf``/``mpc``) at ``dps`` decimal digits; generic kernels.

    Every kernel runs under ``mpmath.mp.workdps(dps)``; the global precision is
    never assigned.  Rounding errors are not tracked: for certified digits the laws
    use :class:`BallRing` instead.
    """

    exact = False

    def __init__(self, dps: int):
        self.dps = int(dps)
        self.zero = mpmath.mpf(0)
        self.one = mpmath.mpf(1)

    @property
    def key(self):
        return self.dps

    def __repr__(self):
        return f"MPRing(dps={self.dps})"

    def convert(self, value):
        with mpmath.workdps(self.dps):
            if isinstance(value, (mpmath.mpf, mpmath.mpc)):
                return +value
            if isinstance(value, flint.fmpq):
                return mpmath.mpf(int(value.p)) / int(value.q)
            if isinstance(value, Fraction):
                return mpmath.mpf(value.numerator) / value.denominator
            v = _sympify(value)
            if v.free_symbols:
                raise FreeprobValueError(
                    f"MPRing: {value!r} has free symbols {sorted(map(str, v.free_symbols))}; "
                    "substitute numbers before numeric evaluation"
                )
            num = sp.N(v, self.dps + 10)
            re, im = num.as_real_imag()
            if im == 0:
                return mpmath.mpf(str(re))
            return mpmath.mpc(str(re), str(im))

    def is_zero(self, a):
        return a == 0

    def context(self):
        return mpmath.workdps(self.dps)

    def _wrap(name):  # noqa: N805 - helper to run a generic kernel at self.dps
        def kernel(self, *args):
            with mpmath.workdps(self.dps):
                return getattr(CoefficientRing, name)(self, *args)

        kernel.__name__ = name
        return kernel

    mul = _wrap("mul")
    inv = _wrap("inv")
    compose = _wrap("compose")
    reversion = _wrap("reversion")
    log = _wrap("log")
    exp = _wrap("exp")
    del _wrap


class BallRing(CoefficientRing):
    """Real balls (python-flint ``arb``) at ``prec`` bits; FLINT ``arb_series`` kernels.

    Each coefficient carries a rigorous error bound, which the laws use to certify
    the digits they return (``dps=`` requests, see :meth:`certify`).
    """

    exact = False

    def __init__(self, prec: int):
        self.prec = int(prec)
        with flint_precision(1, self.prec):
            self.zero = flint.arb(0)
            self.one = flint.arb(1)

    @property
    def key(self):
        return self.prec

    def __repr__(self):
        return f"BallRing(prec={self.prec})"

    def convert(self, value):
        with flint_precision(1, self.prec):
            if isinstance(value, flint.arb):
                return +value
            if isinstance(value, flint.fmpq):
                return flint.arb(value)
            if isinstance(value, Fraction):
                return flint.arb(flint.fmpq(value.numerator, value.denominator))
            v = _sympify(value)
            if v.is_Rational:
                return flint.arb(flint.fmpq(int(v.p), int(v.q)))
            if v.free_symbols:
                raise FreeprobValueError(
                    f"BallRing: {value!r} has free symbols {sorted(map(str, v.free_symbols))}; "
                    "substitute numbers before numeric evaluation"
                )
            if not v.is_real and v.is_real is not None:
                raise FreeprobValueError(f"BallRing: {value!r} is not real")
            # sympy's evalf guarantees the digits it returns; widen by a safety radius
            digits = int(self.prec * 0.30103) + 20
            num = sp.N(v, digits)
            if num.as_real_imag()[1] != 0:
                raise FreeprobValueError(f"BallRing: {value!r} is not real")
            mid = flint.arb(str(sp.Float(num, digits)))
            rad = abs(mid) * flint.arb(10) ** (-(digits - 5)) + flint.arb(2) ** (-(2 * self.prec))
            return flint.arb(mid.mid(), rad.upper() + mid.rad())

    def is_zero(self, a):
        return a.is_zero()

    def context(self):
        return flint_precision(flint.ctx.cap, self.prec)

    def _series(self, a, n):
        return flint.arb_series(list(a[:n]), prec=n)

    def _list(self, s, n):
        c = s.coeffs()
        return list(c[:n]) + [self.zero] * (n - len(c))

    def _kernel(self, op, *args):
        n = args[-1]
        with flint_precision(n, self.prec):
            series = [self._series(a, n) for a in args[:-1]]
            return self._list(op(*series), n)

    def mul(self, a, b, n):
        return self._kernel(lambda x, y: x * y, a, b, n)

    def inv(self, a, n):
        return self._kernel(lambda x: x.inv(), a, n)

    def compose(self, f, g, n):
        if all(v.is_zero() for v in g[:n]):
            return ([f[0]] if f else [self.zero])[:n] + [self.zero] * (n - 1)
        return self._kernel(lambda x, y: x(y), f, g, n)

    def reversion(self, f, n):
        return self._kernel(lambda x: x.reversion(), f, n)

    def log(self, a, n):
        return self._kernel(lambda x: x.log(), a, n)

    def exp(self, a, n):
        return self._kernel(lambda x: x.exp(), a, n)


def exact_ring_for(exprs) -> CoefficientRing:
    """Choose the exact ring for a set of parameter expressions.

    * All rational → :data:`QQ` (FLINT fast path).
    * Algebraic numbers only → the algebraic number field, e.g. ``QQ<sqrt(2)>``.
    * Symbols and transcendental constants → the rational function field over them,
      e.g. ``ZZ(t, E)`` (constants such as E, π, exp(1/4) act as generators), computed in
      FLINT polynomials (:class:`MpolyRing`; issue 17).
    * Both mixed (where sympy would fall back to its slow ``EX`` domain) → every
      irrational algebraic number (``sqrt(2)``, ``3**(1/3)``) also becomes a generator
      of a rational function field over QQ, and is substituted back on output.  The
      algebraic relations (``sqrt(2)**2 = 2``) are then applied by sympy when the result
      is converted back; all values stay exact.
    * Transcendental functions of the symbols (a power with a symbolic exponent such as
      ``(1 − 2β²/d_K)^{−d_K/2}``, or a sympy function class marked
      ``_freeprob_generator = True``) → generators as well, when no two such powers share
      a base (the finite-width laws at a symbolic ``d_K``, theory.md §7); exponentials
      ``exp(f)`` of polynomials without constant term as integer powers of one generator per
      ℚ-line of exponents (``exp(β²)``, ``exp(6β²)``: the attention laws at a symbolic β;
      :func:`_exp_generators`).
    """
    exprs = [_sympify(e) for e in exprs]
    if all(e.is_Rational for e in exprs):
        return QQ
    K, _ = construct_domain(exprs, field=True, extension=True)
    if not K.is_EX and _represents(K, exprs):
        return symbolic_ring(K)
    # Replace the irrational algebraic numbers (sqrt(2), 3**(1/3)) and, if needed, the
    # transcendental constants (log(8), exp(1/4)) by generators with fixed names.
    for kinds in ((sp.Pow,), (sp.Pow, sp.Function, sp.NumberSymbol)):
        atoms = set()
        for e in exprs:
            for a in e.atoms(*kinds):
                if a.is_number and not a.is_Rational and (
                        not isinstance(a, sp.Pow) or (a.exp.is_Rational and a.base.is_Rational)):
                    atoms.add(a)
        forward = {a: sp.Symbol(f"_freeprob_c{i}") for i, a in
                   enumerate(sorted(atoms, key=sp.default_sort_key))}
        replaced = [e.xreplace(forward) for e in exprs]
        K, _ = construct_domain(replaced, field=True)
        if not K.is_EX and _represents(K, replaced):
            return symbolic_ring(K, replacements=forward)
    # Transcendental functions of the symbols (the finite-width laws at a symbolic d_K:
    # (1 - 2b/d_K)**(-d_K/2), and functions marked ``_freeprob_generator``) become
    # generators too: each is transcendental over the rational functions of the symbols,
    # so the field they generate is the rational function field over them.  Only when no
    # two such powers share a base (x**(-d), x**(-d/2) are not independent).
    funcs = set()
    for e in exprs:
        for a in e.atoms(sp.Pow, sp.Function):
            if a.is_number:
                continue
            if isinstance(a, sp.Pow) and not a.exp.is_number and a.base.is_rational_function():
                funcs.add(a)
            elif getattr(type(a), "_freeprob_generator", False):
                funcs.add(a)
    bases = [a.base for a in funcs if isinstance(a, sp.Pow)]
    exps = _exp_generators(exprs)
    if (funcs or exps) and exps is not None and len(bases) == len(set(bases)):
        more = {a: sp.Symbol(f"_freeprob_f{i}") for i, a in enumerate(sorted(funcs, key=sp.default_sort_key))}
        more.update(exps)
        atoms = set()
        for e in exprs:
            for a in e.xreplace(more).atoms(sp.Pow, sp.Function, sp.NumberSymbol):
                if a.is_number and not a.is_Rational and (
                        not isinstance(a, sp.Pow) or (a.exp.is_Rational and a.base.is_Rational)):
                    atoms.add(a)
        forward = dict(more)
        forward.update({a: sp.Symbol(f"_freeprob_c{i}") for i, a in
                        enumerate(sorted(atoms, key=sp.default_sort_key))})
        replaced = [e.xreplace(forward) for e in exprs]
        K, _ = construct_domain(replaced, field=True)
        if not K.is_EX and _represents(K, replaced):
            return symbolic_ring(K, replacements=forward)
    return SymbolicRing.for_expressions(exprs)


def _exp_generators(exprs):
    r"""Exponentials of the symbols as powers of generators: ``{exp(f): g^k}``.

    Every ``exp(f)`` in ``exprs`` with ``f`` a polynomial in the symbols with rational
    coefficients and no constant term (``exp(β²)``, ``exp(6β²)``, ``exp(−β²/2)``, as the
    attention laws at a symbolic β have) is an integer power of one generator
    ``g = exp(f₀/L)`` per ℚ-line of exponents (``exp(β²) = g``, ``exp(6β²) = g⁶``; the entry
    ``exp(f₀/L): g`` is included so that ``g`` alone converts back).  Exponents on different
    lines must be linearly independent over ℚ: then the generators are algebraically
    independent over ℚ(symbols) (Ax's theorem, the functional Lindemann–Weierstrass), so the
    field they generate is the rational function field over them.  Returns ``{}`` when there
    is no such exponential, ``None`` when one is not of that form or the lines are dependent
    (``exp(β)``, ``exp(β²)``, ``exp(β + β²)``): the caller then keeps the general field.
    """
    atoms = sorted({a for e in exprs for a in e.atoms(sp.exp) if not a.is_number}, key=sp.default_sort_key)
    if not atoms:
        return {}
    syms = sorted(set().union(*(a.free_symbols for a in atoms)), key=sp.default_sort_key)
    lines = []                                  # [exponent of the first member, [(atom, ratio)]]
    for a in atoms:
        arg = sp.expand(a.args[0])
        if not arg.is_polynomial(*syms):
            return None
        v = sp.Poly(arg, *syms).as_dict()
        if v.get((0,) * len(syms), 0) != 0 or not all(c.is_Rational for c in v.values()):
            return None
        for line in lines:
            r = v[next(iter(v))] / line[0].get(next(iter(v)), sp.oo)
            if r != 0 and r.is_Rational and all(line[0].get(m, 0) * r == c for m, c in v.items()) \
                    and len(v) == len(line[0]):
                line[1].append((a, r))
                break
        else:
            lines.append([v, [(a, sp.Integer(1))]])
    monos = sorted(set().union(*(line[0] for line in lines)))
    if sp.Matrix([[line[0].get(m, 0) for m in monos] for line in lines]).rank() < len(lines):
        return None
    out = {}
    for i, (v, members) in enumerate(lines):
        den = math.lcm(*[int(r.q) for _, r in members])
        g = sp.Symbol(f"_freeprob_e{i}")
        out[sp.exp(sp.Poly.from_dict(v, *syms).as_expr() / den)] = g
        out.update({a: g ** int(r * den) for a, r in members})
    return out


def _represents(K, exprs):
    try:
        for e in exprs:
            K.from_sympy(e)
    except (sp.CoercionFailed, sp.polys.polyerrors.PolynomialError, ValueError, TypeError):
        return False
    return True
