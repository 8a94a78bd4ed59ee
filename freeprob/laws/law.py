r"""The :class:`Law` base class: exact moments, cumulants and transforms of a law.

A law is an immutable value object (a frozen dataclass) whose parameters are exact
sympy expressions (numbers or symbols).  A family or operation implements **one**
of two small formulas, and the base class derives everything else:

* ``_cumulant_formula(ring, k)`` → free cumulants ``[κ_0 = 0, κ_1, …, κ_k]``, or
* ``_moment_formula(ring, k)`` → moments ``[m_0 = 1, m_1, …, m_k]``,

as lists of elements of a :mod:`~freeprob.core.coefficients` ring (the same code runs
over exact rationals, a sympy field of symbolic parameters, or ``arb`` balls).  The
conversion between the two is :mod:`freeprob.core.cumulants` (series reversion).  The
method-dispatch pattern is that of scipy's new random-variable infrastructure.

How to add a family
-------------------
Write a frozen dataclass subclass of :class:`Law` with its parameters as fields, a
``__post_init__`` that converts them with :func:`freeprob.core.params.as_exact` and
checks their domains with :func:`freeprob.core.params.check`, a ``_parameters()``
returning the tuple of sympy parameters (recursively, for laws built from laws), and
one of the two formulas.  Optional closed forms: ``_r_closed()``, ``_s_closed()``,
``_cauchy_closed()`` (sympy expressions in :mod:`freeprob.core.symbols`), returning
``None`` when unknown.

Precision
---------
``dps=None`` (default) returns exact sympy values.  ``dps=N`` returns mpmath
numbers correct to ``N`` significant digits: laws with rational parameters are
computed exactly and rounded once; others are computed in ball arithmetic
(python-flint ``arb_series``) at increasing precision until every returned digit is
certified, else :class:`~freeprob.errors.PrecisionError`.  Entries whose ball
contains 0 and is narrower than ``10**-(N+3)`` times the largest entry of the same
sequence are returned as exact zeros.
"""
from __future__ import annotations

import dataclasses
import functools
import sys
import types
from functools import cached_property

import mpmath
import sympy as sp

from freeprob.core import cumulants as _cum
from freeprob.core.coefficients import QQ, BallRing, MPRing, exact_ring_for
from freeprob.core import params as _params
from freeprob.core.params import as_exact, check_dps, check_order, dps_or_default, sign  # noqa: F401 (re-exported)
from freeprob.core.series import TruncatedSeries
from freeprob.core.symbols import u as _u
from freeprob.core.symbols import w as _w
from freeprob.core.symbols import z as _z
from freeprob.laws import closed_forms as _closed
from freeprob.laws import jacobi as _jacobi
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError

__all__ = ["Law", "check_order", "check_dps"]

#: name -> function, filled by the modules built on this one (:func:`register`)
_HOOKS = {}


def register(name: str):
    """Decorator: make a function of a module above this one callable from :class:`Law`.

    :class:`Law` needs a few functions defined by modules that import it
    (``cauchy_equation`` from :mod:`freeprob.laws.algebraic`, ``shift`` and ``dilate``
    from :mod:`freeprob.laws.operations`); they register themselves here instead of
    being imported back, so the import graph has no cycle.  ``freeprob.laws`` imports
    every such module, so the hooks exist once any ``freeprob.laws`` module is loaded.
    """
    def deco(func):
        _HOOKS[name] = func
        return func
    return deco


#: hooks whose module is imported on first use (it loads numpy: not at startup)
_LAZY_HOOKS = {"finite_n": "freeprob.laws.finite_n"}


def _hook(name: str):
    """The function registered under ``name``, or :class:`NotAvailable` if none is."""
    if name not in _HOOKS and name in _LAZY_HOOKS:
        import importlib
        importlib.import_module(_LAZY_HOOKS[name])
    try:
        return _HOOKS[name]
    except KeyError:
        raise NotAvailable(
            f"freeprob.laws.law: no {name!r} registered; import freeprob.laws (which loads "
            "freeprob.laws.operations and freeprob.laws.algebraic) before using it"
        ) from None


#: extra bits carried by the ball computation beyond the requested digits
GUARD_BITS = 32
#: the ball computation gives up (PrecisionError) above this many bits
MAX_PREC_BITS = 1 << 18


# ``check_order``, ``check_dps`` and the limits ``MAX_ORDER``, ``MAX_DPS`` live in
# :mod:`freeprob.core.params` (one home); ``freeprob.laws.law.MAX_ORDER`` and ``MAX_DPS`` stay the
# public names: reading or setting them here reads or sets the constants there.
def _limit(name):
    return property(lambda module: getattr(_params, name),
                    lambda module, value: setattr(_params, name, value),
                    doc=f"freeprob.core.params.{name} (read and set there)")


class _LawModule(types.ModuleType):
    MAX_ORDER = _limit("MAX_ORDER")
    MAX_DPS = _limit("MAX_DPS")


sys.modules[__name__].__class__ = _LawModule


def _no_raw_convergence_errors(method):
    """Turn mpmath's ``NoConvergence`` (root isolation of badly scaled equations, e.g. the
    attention laws at β ≳ 20 with θ1 = e^{β²} − 1) into a :class:`PrecisionError`, and name
    the method called in the evaluator's errors (``AlgebraicCauchy.cauchy: …`` → ``cauchy: …``)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (FreeprobValueError, NotAvailable, PrecisionError) as exc:
            head, sep, rest = str(exc).partition(": ")
            if sep and head.startswith("AlgebraicCauchy."):     # an internal name: the user's instead
                exc.args = (f"{method.__name__}: {rest}",) + exc.args[1:]
            raise
        except mpmath.libmp.libhyper.NoConvergence as exc:
            # mean_normalized gives a Dilate: advising it again would send the user round
            hint = ("" if type(self).__name__ == "Dilate" else
                    "; the law rescaled to mean 1 (freeprob.attention.mean_normalized) often "
                    "evaluates where this one does not")
            raise PrecisionError(
                f"{method.__name__}: the roots of this law's Cauchy equation could not be "
                f"isolated ({exc}): its coefficients span too many orders of magnitude (e.g. "
                f"θ1 = e^(β²) − 1 at large β){hint}. Moments, cumulants and transforms are "
                "exact and still available"
            ) from exc
    return wrapper


class Law:
    """Base class of all laws (probability measures on the real line).

    Public methods (all exact by default, ``dps=N`` for mpmath numbers at ``N``
    digits; ``k`` is a non-negative integer order):

    ============================  ===============================================
    ``moments(k)``                ``(m_0 = 1, m_1, …, m_k)``
    ``free_cumulants(k)``         ``(κ_0 = 0, κ_1, …, κ_k)``
    ``boolean_cumulants(k)``      ``(b_0 = 0, b_1, …, b_k)``
    ``classical_cumulants(k)``    ``(c_0 = 0, c_1, …, c_k)``
    ``monotone_cumulants(k)``     ``(h_0 = 0, h_1, …, h_k)`` (:mod:`~freeprob.laws.jacobi`)
    ``jacobi_parameters(k)``      ``((α_0..α_{k−1}), (β_1..β_k))``; also
                                  ``orthogonal_polynomials(k)``, ``hankel_determinants(k)``
    ``r_series(order)`` etc.      transforms as :class:`TruncatedSeries`
    ``r_transform()`` etc.        closed forms (sympy) where the family has one
    ``subs(mapping)``             the same law with parameters substituted
    ============================  ===============================================

    Conventions: :mod:`freeprob.core.conventions`.  Laws are compared and hashed by value.
    ``law + a`` is :func:`~freeprob.laws.operations.shift` and ``c * law`` is
    :func:`~freeprob.laws.operations.dilate`; there is deliberately no ``law + law``
    (use :func:`~freeprob.laws.operations.free_add`).
    """

    symbol = None  # short name used in docs

    # -- hooks for subclasses -------------------------------------------------
    def _parameters(self) -> tuple:
        return ()

    def _cumulant_formula(self, ring, k):
        return None

    def _moment_formula(self, ring, k):
        return None

    def _r_closed(self):
        return None

    def _s_closed(self):
        return None

    def _cauchy_closed(self):
        return None

    def _zero_mass(self):
        """Exact mass of the atom at 0 if known (sympy), else ``None``."""
        return None

    def _infinitely_divisible(self) -> bool:
        """True if the law is known to be ⊞-infinitely divisible."""
        return False

    def _nonnegative(self):
        """True/False if the support is provably (not) in [0, ∞); None if unknown."""
        return None

    def _nonpositive(self):
        """True/False if the support is provably (not) in (−∞, 0]; None if unknown."""
        return None

    # -- parameters -------------------------------------------------------------
    def parameters(self) -> tuple:
        """All sympy parameters of the law, recursively through the laws it is built from."""
        return tuple(self._parameters())

    @property
    def free_symbols(self) -> set:
        """The sympy symbols among the parameters."""
        out = set()
        for p in self.parameters():
            out |= p.free_symbols
        return out

    def subs(self, *args):
        """Return the law with symbols replaced in every parameter.

        ``law.subs({t: 2, s: 3})``, ``law.subs([(t, 2)])`` or ``law.subs(t, 2)``.

        Parameters
        ----------
        mapping : dict or sequence of (symbol, value) pairs, or ``symbol, value``
            Keys are sympy symbols; values are numbers or sympy expressions, converted
            like any parameter (floats to the rational they print as; strings only as
            rational literals, never evaluated).  Domain checks are re-run.

        Raises
        ------
        FreeprobValueError
            If ``mapping`` is not a dict/sequence of pairs, a key is not a sympy
            symbol, or a value is not an exact number or expression.
        """
        if len(args) == 2:
            mapping = [args]
        elif len(args) == 1:
            mapping = args[0]
        else:
            raise FreeprobValueError(
                f"subs: expected a mapping or (symbol, value); got {len(args)} arguments"
            )
        if isinstance(mapping, dict):
            pairs = list(mapping.items())
        else:
            try:
                pairs = [tuple(pair) for pair in mapping]
            except TypeError as exc:
                raise FreeprobValueError(
                    f"subs: expected a dict {{symbol: value}} or (symbol, value) pairs; got {mapping!r}"
                ) from exc
        clean = {}
        for pair in pairs:
            if len(pair) != 2 or not isinstance(pair[0], sp.Symbol):
                raise FreeprobValueError(f"subs: keys must be sympy symbols; got {pair!r}")
            clean[pair[0]] = as_exact(pair[1], "subs", str(pair[0]))

        def sub(v):
            if isinstance(v, Law):
                return v.subs(clean)
            if isinstance(v, sp.Basic):
                return v.xreplace(clean)
            if isinstance(v, tuple):
                return tuple(sub(x) for x in v)
            return v

        fields = {f.name: sub(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return type(self)(**fields)

    # -- cached ring-level sequences ---------------------------------------------
    @cached_property
    def _cache(self):
        return {}

    def _kappa(self, ring, k):
        """``[κ_0, …, κ_k]`` in ``ring`` (cached; may compute a longer list once)."""
        key = (ring, "kappa")
        hit = self._cache.get(key)
        if hit is not None and len(hit) > k:
            return hit[:k + 1]
        with ring.context():
            vals = self._cumulant_formula(ring, k)
            if vals is None:
                m = self._m(ring, k)
                vals = _cum.free_cumulants_from_moments(ring, m)
            vals = [ring.zero] + list(vals[1:])
        self._cache[key] = vals
        return vals[:k + 1]

    def _m(self, ring, k):
        """``[m_0, …, m_k]`` in ``ring`` (cached)."""
        key = (ring, "m")
        hit = self._cache.get(key)
        if hit is not None and len(hit) > k:
            return hit[:k + 1]
        with ring.context():
            vals = self._moment_formula(ring, k)
            if vals is None:
                kappa = self._cumulant_formula(ring, k)
                if kappa is None:
                    raise NotAvailable(f"{type(self).__name__} defines neither moments nor cumulants")
                self._cache[(ring, "kappa")] = kappa
                vals = _cum.moments_from_free_cumulants(ring, kappa)
            vals = [ring.one] + list(vals[1:])     # m_0 = 1 exactly (a probability law)
        self._cache[key] = vals
        return vals[:k + 1]

    # -- evaluation driver --------------------------------------------------------
    def _exact_ring(self):
        return exact_ring_for(self.parameters())

    def _evaluate(self, fn, dps, who):
        """Run ``fn(ring) -> list`` exactly (sympy out) or certified at ``dps`` (mpf out)."""
        dps = check_dps(dps, who)
        ring = self._exact_ring()
        if dps is None:
            vals = fn(ring)
            return tuple(ring.to_sympy(v) for v in vals)
        self.check_numeric(who, "numeric evaluation (dps=)")
        if ring == QQ:
            vals = fn(ring)
            with mpmath.workdps(dps):
                prec = mpmath.mp.prec
                return tuple(
                    mpmath.mpf(mpmath.libmp.from_rational(int(v.p), int(v.q), prec, "n"))
                    for v in vals
                )
        from freeprob.numeric.balls import certified_values
        prec = int(dps * 3.3219280948873626) + GUARD_BITS
        while prec <= MAX_PREC_BITS:
            ball = BallRing(prec)
            with ball.context():
                vals = fn(ball)
                out = certified_values(vals, dps)
            if out is not None:
                return tuple(out)
            prec *= 2
        raise PrecisionError(
            f"{who}: no agreement to {dps} digits up to {MAX_PREC_BITS} bits of working precision"
        )

    # -- public sequences ---------------------------------------------------------
    def moments(self, k, *, dps=None):
        r"""Moments ``(m_0 = 1, m_1, …, m_k)``, ``m_n = ∫ x^n dμ(x)``.

        Parameters
        ----------
        k : int >= 0
            Highest order.
        dps : int >= 1, optional
            Return mpmath numbers correct to ``dps`` significant digits instead of
            exact sympy values.

        Raises
        ------
        FreeprobValueError
            Negative or non-integer ``k``; ``dps < 1``; ``dps`` given for a law with
            free symbols.
        PrecisionError
            If ``dps`` digits cannot be certified.
        """
        k = check_order(k, f"{type(self).__name__}.moments")
        return self._evaluate(lambda r: self._m(r, k), dps, f"{type(self).__name__}.moments")

    def free_cumulants(self, k, *, dps=None):
        r"""Free cumulants ``(κ_0 = 0, κ_1, …, κ_k)`` ([NS06] Lecture 11, Def. 11.3).

        Same parameters and errors as :meth:`moments`.
        """
        k = check_order(k, f"{type(self).__name__}.free_cumulants")
        return self._evaluate(lambda r: self._kappa(r, k), dps,
                              f"{type(self).__name__}.free_cumulants")

    def boolean_cumulants(self, k, *, dps=None):
        r"""Boolean cumulants ``(b_0 = 0, b_1, …, b_k)``, ``1 − 1/M(z) = Σ b_n z^n``
        ([SW97]_).  Same parameters and errors as :meth:`moments`."""
        k = check_order(k, f"{type(self).__name__}.boolean_cumulants")
        return self._evaluate(
            lambda r: _cum.boolean_cumulants_from_moments(r, self._m(r, k)), dps,
            f"{type(self).__name__}.boolean_cumulants")

    def classical_cumulants(self, k, *, dps=None):
        r"""Classical cumulants ``(c_0 = 0, c_1, …, c_k)``,
        ``log Σ m_n z^n/n! = Σ c_n z^n/n!``.  Same parameters and errors as :meth:`moments`."""
        k = check_order(k, f"{type(self).__name__}.classical_cumulants")
        return self._evaluate(
            lambda r: _cum.classical_cumulants_from_moments(r, self._m(r, k)), dps,
            f"{type(self).__name__}.classical_cumulants")

    monotone_cumulants = _jacobi.monotone_cumulants       # these four: freeprob.laws.jacobi
    jacobi_parameters = _jacobi.jacobi_parameters
    orthogonal_polynomials = _jacobi.orthogonal_polynomials
    hankel_determinants = _jacobi.hankel_determinants

    def _mean_exact(self):
        # not a public ``mean()``: families such as Semicircle have a ``mean`` field
        return self.moments(1)[1]

    # -- transforms as series -------------------------------------------------------
    def _series(self, fn, order, dps, who, var):
        order = check_order(order, who)
        if check_dps(dps, who) is None:
            ring = self._exact_ring()
            return TruncatedSeries._raw(fn(ring), order, ring, var)
        coeffs = self._evaluate(fn, dps, who)
        return TruncatedSeries._raw(list(coeffs), order, MPRing(dps), var)

    def _psi(self, ring, order):
        m = self._m(ring, max(order - 1, 0))
        return TruncatedSeries._raw([ring.zero] + m[1:], order, ring)

    def _chi(self, ring, order):
        if order < 2:
            return TruncatedSeries._raw([ring.zero] * order, order, ring)
        psi = self._psi(ring, order)
        if ring.is_zero(psi[1]):
            raise NotAvailable(
                f"{type(self).__name__}: the χ- and S-transforms need a non-zero mean "
                "(ψ has no compositional inverse when m_1 = 0)"
            )
        return psi.reversion()

    def _s_formula(self, ring, order):
        """Optional hook: the S-transform coefficients ``[s_0, …, s_{order-1}]``."""
        return None

    def _s(self, ring, order):
        key = (ring, "S")
        hit = self._cache.get(key)
        if hit is not None and hit.order >= order:
            return hit.truncate(order)
        coeffs = self._s_formula(ring, order)
        if coeffs is not None:
            out = TruncatedSeries._raw(coeffs, order, ring)
        else:
            out = self._s_from_moments(ring, order)
        self._cache[key] = out
        return out

    def _s_from_moments(self, ring, order):
        chi = self._chi(ring, order + 1)
        one_plus_u = TruncatedSeries._raw([ring.one, ring.one], order + 1, ring)
        return (chi.shift(-1) * one_plus_u).truncate(order)

    def psi_series(self, order, *, dps=None):
        r"""Moment series ``ψ(z) = Σ_{n≥1} m_n z^n + O(z^order)``.

        Returns a :class:`TruncatedSeries` in ``z`` (exact ring, or mpmath numbers at
        ``dps`` digits).  Errors as in :meth:`moments`.
        """
        return self._series(lambda r: self._psi(r, order)._c, order, dps, "psi_series", _z)

    def cauchy_series(self, order, *, dps=None):
        r"""Cauchy transform at infinity, ``G(z) = Σ_{n≥0} m_n z^{-n-1}``, as a series in
        ``ζ = 1/z``: coefficients ``(0, m_0, m_1, …)``, exact modulo ``ζ^order``.

        Convention: ``G(z) = ∫ dμ(x)/(z − x)`` ([MS17] §2.1).
        """
        def fn(r):
            m = self._m(r, max(order - 2, 0))
            return ([r.zero] + m)[:order]

        return self._series(fn, order, dps, "cauchy_series", sp.Symbol("zeta"))

    def eta_series(self, order, *, dps=None):
        r"""η-transform ``η(z) = ψ(z)/(1 + ψ(z)) = Σ_{n≥1} b_n z^n`` (boolean cumulants)."""
        def fn(r):
            b = _cum.boolean_cumulants_from_moments(r, self._m(r, max(order - 1, 0)))
            return b[:order]

        return self._series(fn, order, dps, "eta_series", _z)

    def chi_series(self, order, *, dps=None):
        r"""χ = ψ^{<−1>}, the compositional inverse of the moment series (needs m_1 ≠ 0).

        Raises
        ------
        NotAvailable
            If the mean is zero ([MS17] §2.6: the S-transform needs a non-zero mean).
        """
        return self._series(lambda r: self._chi(r, order)._c, order, dps, "chi_series", _u)

    def s_series(self, order, *, dps=None):
        r"""S-transform ``S(u) = χ(u)(1+u)/u`` as a series in ``u`` (order ``order``).

        Free Poisson of rate t, jump 1: ``S(u) = 1/(u + t)``.  ``S_{μ⊠ν} = S_μ S_ν``
        ([NS06] Lecture 18, Thm. 18.17; [MS17] §2.6).

        Raises
        ------
        NotAvailable
            If the mean is zero.
        """
        return self._series(lambda r: self._s(r, order)._c, order, dps, "s_series", _u)

    def r_series(self, order, *, dps=None):
        r"""Voiculescu's R-transform ``R(w) = Σ_{n≥0} κ_{n+1} w^n + O(w^order)``, defined by
        ``G(R(w) + 1/w) = w`` ([NS06] Lecture 16, Remark 16.18; [MS17] §2.4)."""
        return self._series(lambda r: self._kappa(r, order)[1:], order, dps, "r_series", _w)

    def cumulant_series(self, order, *, dps=None):
        r"""The cumulant series ``w R(w) = Σ_{n≥1} κ_n w^n + O(w^order)`` (not the R-transform)."""
        return self._series(lambda r: self._kappa(r, max(order - 1, 0))[:order], order, dps,
                            "cumulant_series", _w)

    # -- algebraic equation --------------------------------------------------------------
    def cauchy_equation(self):
        r"""The irreducible algebraic Cauchy equation ``P(G, z)`` with ``P(G(z), z) = 0``.

        A sympy ``Poly`` in ``(G, z)`` (:mod:`freeprob.core.symbols`) with exact or symbolic
        coefficients, derived by the polynomial method ([RE08]; see
        :mod:`freeprob.laws.algebraic`).

        Raises
        ------
        NotAvailable
            If the law has no algebraic equation the library can derive.
        """
        hit = self._cache.get("cauchy_equation")
        if hit is None:
            hit = self._cache["cauchy_equation"] = _hook("cauchy_equation")(self)
        return hit

    # -- numeric evaluation through the Cauchy equation ---------------------------------
    def check_numeric(self, who, needs="numeric evaluation"):
        """Refuse a law with free symbols where numbers are needed (the one check).

        Raises
        ------
        FreeprobValueError
            ``<who>: the law has free symbols (s, t); <needs> needs numbers: use
            law.subs({...}) first``.
        """
        if self.free_symbols:
            names = ", ".join(sorted(map(str, self.free_symbols)))
            raise FreeprobValueError(
                f"{who}: the law has free symbols ({names}); {needs} needs numbers: "
                "use law.subs({...}) first"
            )

    def _dilation(self):
        """``(X, c)`` when this law is ``cX`` with a number ``c > 0``, else ``None`` (:class:`Dilate`)."""
        return None

    def _evaluator(self, who):
        self.check_numeric(who)
        hit = self._cache.get("evaluator")
        if hit is None:         # cX, c > 0: through X's evaluator (no equation of cX; issue 27)
            from freeprob.numeric.scaled import ScaledCauchy
            d = self._dilation()
            hit = self._cache["evaluator"] = self._algebraic_evaluator() if d is None else ScaledCauchy(
                d[0]._evaluator(who), d[1], atoms=lambda dps, ball: d[0].atoms(dps=dps, ball=ball))
        return hit

    def _algebraic_evaluator(self):
        # imported here: exact moments and cumulants need no numeric layer (CLI startup)
        from freeprob.numeric.cauchy import AlgebraicCauchy
        return AlgebraicCauchy(self.cauchy_equation(), irreducible=True, known_atoms=self._known_atoms(),
                               known_levels=self._known_levels)

    def _known_atoms(self):
        """Atoms the law knows exactly, handed to the numeric layer (which checks them
        against the Cauchy equation instead of re-deriving their masses by continuing
        ``G``): ``((0, mass),)`` from :meth:`_zero_mass` (mass ``0``: no atom at 0), else
        ``()``.  Subclasses that know more may extend it."""
        zm = self._zero_mass()
        if zm is None:
            return ()
        zm = sp.sympify(zm)
        if not zm.is_number or zm.has(sp.Float) or not zm.is_real:
            return ()
        return ((sp.Integer(0), zm),)

    def _known_levels(self):
        """``((point, level), …)``: exact cdf values in flat stretches known from the structure."""
        return ()

    _dps = staticmethod(dps_or_default)     # the one dps policy (freeprob.core.params)

    @_no_raw_convergence_errors
    def cauchy(self, z, *, dps=None, ball=False):
        r"""Cauchy transform ``G(z) = ∫ dμ(x)/(z − x)`` at a complex point off the support.

        The branch is the one continued from ``G(z) ~ 1/z`` at infinity, certified at a
        higher precision (:mod:`freeprob.numeric`).

        Parameters
        ----------
        z : complex number (Python, mpmath or sympy)
        dps : int >= 1, optional
            Significant digits (default: the current ``mpmath.mp.dps``).

        Returns
        -------
        mpmath.mpc

        Raises
        ------
        FreeprobValueError
            Bad ``dps``; the law has free symbols.
        NotAvailable
            The law has no algebraic Cauchy equation.
        PrecisionError
            The digits could not be certified.

        With ``ball=True`` the result is a python-flint ``acb`` (``arb`` for real ``z``)
        that provably contains ``G(z)``, radius ``≤ 10^{-dps}·|G(z)|``, midpoint the plain
        value (:mod:`freeprob.numeric.enclosure`).
        """
        dps = self._dps(dps, "cauchy")
        return self._evaluator("cauchy").cauchy(z, dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def density(self, x, *, dps=None, ball=False, rtol=None):
        r"""Density ``−Im G(x + i0)/π`` of the absolutely continuous part.

        ``x`` is a real number, or a sorted sequence of real numbers (evaluated together,
        reusing work between neighbouring points).  Exactly 0 outside the support.

        With ``ball=True``: python-flint ``arb`` balls that provably contain the density
        (an exact ``0`` outside the support), radius ``≤ 10^{-dps}·value``, midpoint the
        plain value (:mod:`freeprob.numeric.enclosure`).  With ``rtol`` (a sorted sequence
        only; ``dps`` unused): floats, each to about that relative accuracy, for
        tabulations (:meth:`freeprob.numeric.AlgebraicCauchy.density_float`).

        Raises
        ------
        FreeprobValueError
            Complex ``x``; bad ``dps`` or ``rtol``; free symbols.
        PrecisionError
            The digits could not be certified (with ``ball=True``: the enclosure could not
            be made that narrow; the message gives the width reached).
        """
        dps = self._dps(dps, "density")
        ev = self._evaluator("density")
        if getattr(x, "ndim", None) == 1 and hasattr(x, "tolist"):
            x = x.tolist()          # a 1-D array (numpy's): the sequence of its points
        if rtol is not None:
            if not isinstance(x, list | tuple) or ball is not False:
                raise FreeprobValueError("density: rtol= takes a sorted sequence of points, without ball=True")
            return ev.density_float(list(x), rtol=rtol)
        if isinstance(x, list | tuple):
            return ev.density_grid(list(x), dps=dps, ball=ball)
        return ev.density(x, dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def cdf(self, x, *, dps=None, ball=False):
        r"""Distribution function ``μ((−∞, x])`` (density integral plus atoms ≤ x).

        With ``ball=True``: a python-flint ``arb`` that provably contains ``F(x)``
        (rigorous quadrature of ``G`` along a path in the upper half-plane, Cauchy's
        theorem), radius ``≤ 10^{-dps}·F(x)``, midpoint the plain value.

        Raises
        ------
        FreeprobValueError
            Bad ``x`` or ``dps``; free symbols.
        PrecisionError
            The quadrature (or the enclosure) could not reach ``dps`` digits.
        """
        dps = self._dps(dps, "cdf")
        return self._evaluator("cdf").cdf(x, dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def quantile(self, p, *, dps=None, ball=False):
        r"""Quantile ``Q(p) = inf{x : cdf(x) ≥ p}`` (the generalized inverse, as scipy's
        ``ppf``), for ``p`` in [0, 1], to ``dps`` significant digits of ``x``.

        An atom is returned for every ``p`` in its jump; at a flat stretch of the cdf ``p``
        equal to its level gives the left end, any ``p`` above it a point past the right end
        (the side decided exactly, :meth:`flat_levels`, or from the level computed to below
        ``|p − level|``, or refused).  Next to a support edge the digits are those of ``x``
        (``quantile(1e-30)`` of the semicircle is ``−2 + 2.8e-20``).  ``p = 0`` gives the
        lowest point (exact ``0`` where the support or an atom starts at 0); ``p`` is used
        exactly.  Source: :meth:`freeprob.numeric.AlgebraicCauchy.quantile`.

        Raises
        ------
        FreeprobValueError
            ``p`` outside [0, 1]; bad ``dps``; free symbols.
        PrecisionError
            The quadratures cannot be certified, or ``p`` is within ``10^{-(2·dps + 25)}``
            of the level of a flat stretch known only numerically.
        """
        dps = self._dps(dps, "quantile")
        return self._evaluator("quantile").quantile(p, dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def flat_levels(self, *, dps=None):
        r"""Flat stretches of the cdf, ``((x0, x1, level), …)``, ``cdf = level`` on ``[x0, x1)``, the
        level exact where the structure gives it; raises as :meth:`quantile`.  Source:
        :meth:`freeprob.numeric.AlgebraicCauchy.flat_levels`."""
        return self._evaluator("flat_levels").flat_levels(dps=self._dps(dps, "flat_levels"))

    @_no_raw_convergence_errors
    def support(self, *, dps=None, ball=False):
        r"""Support of the absolutely continuous part: a tuple of intervals ``(a, b)``.

        Edges are exact (sympy algebraic numbers) where they are roots of the discriminant of the
        Cauchy equation with rational coefficients, else mpmath numbers to ``dps`` digits; ``cX``
        (``c > 0``) has the edges ``c·e`` of ``X`` (exact also for irrational ``c``).  ``ball=True``:
        python-flint ``arb`` balls proven to contain each edge (radius ``≤ 10^{-dps}·|edge|``).
        """
        dps = self._dps(dps, "support")
        return self._evaluator("support").support(dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def cut_points(self, *, dps=None):
        r"""Points inside the support where the density is not analytic or has a feature
        far narrower than its interval (a closed gap, an atom, a dip next to a near-real
        branch point), mpf, sorted: :meth:`freeprob.numeric.AlgebraicCauchy.cut_points`.

        Raises ``FreeprobValueError`` (bad ``dps``, free symbols) or ``PrecisionError``.
        Source: the branch points of the Cauchy equation (the special polynomial's roots)."""
        dps = self._dps(dps, "cut_points")
        return self._evaluator("cut_points").cut_points(dps=dps)

    @_no_raw_convergence_errors
    def atoms(self, *, dps=None, ball=False):
        r"""Atoms: a tuple of ``(location, mass)`` pairs, exact where possible.

        Candidate locations are the real zeros of the leading coefficient of the Cauchy
        equation; the mass is ``lim (z − a) G(z)`` on the continued branch.  With
        ``ball=True``: pairs of python-flint ``arb`` balls containing location and mass.
        """
        dps = self._dps(dps, "atoms")
        ev = self._evaluator("atoms")
        if ball is not False or self._dilation() is not None:      # cX: the atoms of X, scaled
            return ev.atoms(dps=dps, ball=ball)
        known = self._zero_mass()
        if known is not None:
            # Atoms sit at real zeros of the leading coefficient of P in G; when it is c·z^k (read
            # from P's terms: via expressions it took 0.25 s for a finite-width law), 0 is the only
            # candidate and the structurally known exact mass at 0 is the answer.
            P = self.cauchy_equation()
            top = P.degree(P.gens[0])
            iz = P.gens.index(_z) if _z in P.gens else None
            if len({m[iz] if iz is not None else 0 for m, _ in P.terms() if m[0] == top}) == 1:
                return ((sp.Integer(0), known),) if sign(known) == 1 else ()
        return ev.atoms(dps=dps)

    # -- closed forms: freeprob.laws.closed_forms -------------------------------------
    r_transform = _closed.r_transform
    s_transform = _closed.s_transform
    chi_transform = _closed.chi_transform
    cauchy_transform = _closed.cauchy_transform

    def finite_n(self, n, field="real"):
        r"""The expected spectral law of this law's finite-n matrix model to order ``1/n``
        (``field="real"``; ``"complex"``: no ``1/n`` term): a
        :class:`freeprob.laws.finite_n.FiniteNLaw`.  Raises as that class."""
        return _hook("finite_n")(self, n, field)

    # -- scalar sugar -----------------------------------------------------------------
    def __add__(self, other):
        if isinstance(other, Law):
            raise TypeError(
                "law + law is ambiguous (classical or free convolution?); use "
                "freeprob.free_add(a, b) for the free additive convolution"
            )
        return _hook("shift")(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Law):
            raise TypeError("law - law is not defined; use freeprob.free_add and freeprob.dilate")
        return _hook("shift")(self, -as_exact(other, "shift", "a"))

    def __mul__(self, other):
        if isinstance(other, Law):
            raise TypeError(
                "law * law is ambiguous; use freeprob.free_mul(a, b) for the free "
                "multiplicative convolution"
            )
        return _hook("dilate")(self, other)

    __rmul__ = __mul__

    def __neg__(self):
        return _hook("dilate")(self, -1)
