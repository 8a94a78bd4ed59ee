r"""Expected spectral laws at finite ``n``: the ``1/n`` term (issue 29).

``law.finite_n(n)`` is the expected empirical spectral law of the law's **real** finite-n
matrix model (docs/guide/finite-n.md lists the models: the GOE ``(A + Aᵀ)/√(2n)`` for
``Semicircle(0, 1)``, the real Wishart ``G Gᵀ`` with ``G`` an ``n × tn`` matrix of
N(0, 1/n) entries for ``FreePoisson(t)``, …, and independent orthogonally invariant
matrices for the operations), to first order in ``1/n``:

.. math::  E\,\mathrm{tr}_n (z − X_n)^{-1} = G(z) + G_1(z)/n + O(n^{-2}).

The correction ``G₁`` is the Cauchy transform of a **signed** measure ``ρ₁`` of total
mass 0: a density ``−Im G₁(x + i0)/π`` on the support of the limit law plus atoms at the
real poles of ``G₁`` (usually the square-root edges: the GOE's is
``(δ₂ + δ₋₂)/4 − ½·arcsine``).  Atoms of mass ``O(1/n)`` (edges here; outliers of
finite-rank perturbations) are part of the object.  The corrected law
``μ + ρ₁/n`` is therefore a signed measure whose cdf is monotone only approximately (it dips
within ``O(1/n)`` of an edge, where the expansion is not uniform anyway); nothing is clipped.

With ``field="complex"`` (GUE, complex Wishart, unitary conjugations) the ``1/n`` term
vanishes identically: the first correction is ``O(n^{-2})`` (genus expansion, [HZ86]_), and
this object returns the limit law with that statement.

The exact moment corrections come from :mod:`freeprob.laws.finite_n_rules`, the closed forms
from :mod:`freeprob.laws.finite_n_closed`, the numbers from
:mod:`freeprob.laws.finite_n_eval` and :mod:`freeprob.laws.finite_n_measure`.  A new model
(e.g. a finite-rank spike, whose outlier is an atom of mass ``k/n``) registers its moment
corrections (``finite_n_rules._rule.register``), its ``G₁`` (``finite_n_eval.g1_value.register``)
and the real points where ``G₁`` has poles (``finite_n_measure.extra_poles.register``); the
atoms, the density and the cdf then follow.  Theory and references: docs/theory.md §"The 1/n term";
[BS04]_, [RED14]_, [MP13]_, [MIN19]_, [FMNS19]_, [CM25]_, [BS12]_, [LED09]_, [JOH98]_.
"""
from __future__ import annotations

import functools
import numbers
import re

import mpmath
import sympy as sp

from freeprob._checks import check_choice
from freeprob.core.params import check_dps, check_order, dps_or_default
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.laws import finite_n_measure as _m
from freeprob.laws import finite_n_rules as _rules
from freeprob.laws.finite_n_closed import g1_expression as _g1_expression
from freeprob.laws.finite_n_eval import g1_value, limit_G
from freeprob.laws.law import Law, register

__all__ = ["FiniteNLaw", "finite_n"]

FIELDS = ("real", "complex")


def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral | sp.Basic):
        raise FreeprobValueError(
            f"finite_n: n must be a positive integer or a positive sympy symbol; got {n!r}")
    if isinstance(n, numbers.Integral) or n.is_Integer:
        if int(n) < 1:
            raise FreeprobValueError(f"finite_n: n must be a positive integer; got {n}")
        return sp.Integer(int(n))
    if isinstance(n, sp.Symbol) and n.is_positive:
        return n
    raise FreeprobValueError(
        f"finite_n: n must be a positive integer or a positive sympy symbol "
        f"(sympy.Symbol('n', positive=True)); got {n!r}")


def _finite_z(z, who):
    """``z`` as a finite mpc, or ``FreeprobValueError``."""
    try:
        zz = mpmath.mpc(complex(z) if isinstance(z, sp.Basic) else z)
    except (TypeError, ValueError):
        raise FreeprobValueError(f"{who}: `z` must be a finite complex number; got {z!r}") from None
    if not (mpmath.isfinite(zz.real) and mpmath.isfinite(zz.imag)):
        raise FreeprobValueError(f"{who}: `z` must be a finite complex number; got {z!r}")
    return zz


#: what a finite-n law offers (named by the refusals of the Law methods it does not have)
OFFERS = ("moments, moment_corrections, g1_expression, cauchy, density, cdf, atoms, support, "
          "cut_points and correction_cauchy/density/cdf/atoms")

_PREFIX = re.compile(r"^[A-Za-z_][\w.]*(?:\([^)]*\))?: ")


def _public(method):
    """Name the public method the user called in a freeprob error raised inside it (the
    messages of the helpers and of the limit law's evaluator name ``correction_density``,
    ``AlgebraicCauchy.cauchy``, …): the leading ``name: `` becomes ``FiniteNLaw.<method>: ``
    (the class's own name for a subclass)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        who = f"{type(self).__name__}.{method.__name__}"
        try:
            return method(self, *args, **kwargs)
        except (FreeprobValueError, NotAvailable, PrecisionError) as exc:
            msg = str(exc)
            if msg.startswith(who + ": ") or not _PREFIX.match(msg):
                raise
            try:
                new = type(exc)(_PREFIX.sub(who + ": ", msg, count=1))
            except TypeError:                  # pragma: no cover - an exception class with other arguments
                raise exc from None
            raise new from exc
    return wrapper


def _no_ball(ball, who):
    """Refuse ``ball=True``: finite-n values are not certified."""
    if ball is not False:
        raise NotAvailable(
            f"FiniteNLaw.{who}: ball=True is not available: the finite-n values (limit + 1/n term) "
            "are computed at dps digits of working precision but not certified, and the 1/n "
            f"expansion has an O(1/n²) error; use dps=, or .limit.{who}(..., ball=True) for the "
            "limit law's certified enclosure")


class NotALawMethod(NotAvailable, AttributeError):
    """A :class:`~freeprob.laws.law.Law` method asked of a :class:`FiniteNLaw` (also an
    ``AttributeError``, so ``hasattr`` and ``getattr(x, name, default)`` keep working).
    Source: docs/guide/finite-n.md (a finite-n law is a signed measure, not a Law)."""


class FiniteNLaw:
    r"""The expected spectral law of a law's finite-n matrix model, to order ``1/n``.

    Built by :meth:`freeprob.laws.law.Law.finite_n`.  Attributes: ``limit`` (the
    :class:`~freeprob.laws.law.Law`), ``n`` (sympy integer or positive symbol), ``field``
    (``"real"`` or ``"complex"``), ``model`` (the matrix model in words), ``leading_order``
    (1 for real: the first correction is ``1/n``; 2 for complex: ``1/n²``, not computed).

    Exact: :meth:`moment_corrections`, :meth:`moments`, :meth:`g1_expression`.  Numeric (a
    number ``n`` and no free symbols; mpmath values at ``dps`` digits of working precision,
    not certified): :meth:`cauchy`, :meth:`density`, :meth:`cdf`, :meth:`atoms`,
    and the same for the correction alone (``correction_*``), :meth:`support` and
    :meth:`cut_points` (those of the limit law).  ``ball=True`` (accepted as on
    :class:`~freeprob.laws.law.Law`) raises ``NotAvailable``: the values are not certified.  It
    is a signed measure, not a Law: the Law methods it lacks (``free_cumulants``, ``quantile``,
    ``r_transform``, ``finite_n``, …) raise ``NotAvailable`` (also an ``AttributeError``) saying
    why and pointing at ``.limit``.  Errors name the public method called.

    Raises (at construction)
    ------------------------
    FreeprobValueError
        ``n`` not a positive integer or positive symbol; ``field`` not real/complex; a
        dimension or eigenvalue multiplicity of the model that is not a whole number at
        this ``n``.
    NotAvailable
        The law has no finite-n model here (the message lists the covered laws).
    """

    def __init__(self, limit, n, field="real"):
        if not isinstance(limit, Law):
            raise FreeprobValueError(f"finite_n: expected a Law; got {type(limit).__name__}")
        self.limit = limit
        self.n = _check_n(n)
        self.field = check_choice(field, FIELDS, "finite_n", "field")
        self.model = _rules.model(limit, self.field)
        _rules.check_sizes(limit, self.n)
        self.leading_order = 1 if self.field == "real" else 2

    def __repr__(self):
        return f"FiniteNLaw({self.limit!r}, n={self.n}, field={self.field!r})"

    def __getattr__(self, name):
        """The methods of :class:`~freeprob.laws.law.Law` a finite-n law does not have: a
        :class:`~freeprob.errors.NotAvailable` (also an ``AttributeError``) saying why and
        what it offers."""
        if name.startswith("_") or not hasattr(Law, name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if name == "finite_n":
            why = ("this is already a finite-n law (to order 1/n); take .limit.finite_n(m) for "
                   "another n")
        elif name in ("quantile", "flat_levels"):
            why = ("the corrected cdf F + F₁/n is a signed measure's: it dips within O(1/n) of "
                   "an edge and is not monotone, so it has no inverse; use cdf, or "
                   f".limit.{name}(...) for the limit law's")
        else:
            why = ("a finite-n law is a signed measure (the limit law plus a 1/n correction of "
                   "total mass 0), not a Law: cumulants, transforms, orthogonal polynomials and "
                   f"the operations are defined for the limit law, .limit.{name}(...)")
        raise NotALawMethod(f"FiniteNLaw.{name}: not available: {why}. A FiniteNLaw offers "
                             f"{OFFERS}")

    @property
    def free_symbols(self) -> set:
        """The symbols of the limit law's parameters and of ``n``."""
        return set(self.limit.free_symbols) | set(self.n.free_symbols)

    # -- exact --------------------------------------------------------------------
    @_public
    def moment_corrections(self, k, *, dps=None):
        r"""The exact ``1/n`` coefficients ``(c_0 = 0, c_1, …, c_k)``:
        ``E tr_n X_n^j = m_j + c_j/n + O(n^{-2})``.  All zero for ``field="complex"``.

        Raises ``FreeprobValueError`` (bad ``k`` or ``dps``; ``dps`` with free symbols).
        Source: :func:`freeprob.laws.finite_n_rules.corrections`."""
        k = check_order(k, "FiniteNLaw.moment_corrections")
        if self.field == "complex":
            vals = [sp.Integer(0)] * (k + 1)
        else:
            ring = self.limit._exact_ring()
            vals = [ring.to_sympy(v) for v in _rules.corrections(self.limit, ring, k)]
        return self._out(vals, dps, "moment_corrections")

    @_public
    def moments(self, k, *, dps=None):
        r"""``(m_0, …, m_k)`` with ``m_j = m_j^∞ + c_j/n`` exactly (``n`` may be a symbol).

        Raises ``FreeprobValueError`` (bad ``k`` or ``dps``; ``dps`` with free symbols)."""
        k = check_order(k, "FiniteNLaw.moments")
        m = self.limit.moments(k)
        c = self.moment_corrections(k)
        return self._out([a + b / self.n for a, b in zip(m, c)], dps, "moments")

    def _out(self, vals, dps, who):
        if check_dps(dps, who) is None:
            return tuple(sp.nsimplify(v) if v.is_Float else v for v in vals)
        self.check_numeric(f"FiniteNLaw.{who}", "numeric evaluation (dps=)")
        with mpmath.workdps(dps + 5):
            out = [mpmath.mpf(sp.N(v, dps + 5)) for v in vals]
        with mpmath.workdps(dps):
            return tuple(+v for v in out)

    @_public
    def g1_expression(self):
        r"""``G₁`` as a sympy expression in ``G`` (the limit Cauchy transform) and ``z``
        (:mod:`freeprob.core.symbols`); ``0`` for ``field="complex"``.

        Raises ``NotAvailable`` where no closed form is derived
        (:func:`freeprob.laws.finite_n_closed.g1_expression`)."""
        if self.field == "complex":
            return sp.Integer(0)
        return _g1_expression(self.limit)

    # -- numeric ---------------------------------------------------------------------
    def check_numeric(self, who, needs="numeric evaluation"):
        """Refuse free symbols (in the law or ``n``) where numbers are needed.

        Raises ``FreeprobValueError`` naming the symbols."""
        if self.free_symbols:
            names = ", ".join(sorted(map(str, self.free_symbols)))
            raise FreeprobValueError(
                f"{who}: free symbols ({names}); {needs} needs numbers: substitute them "
                "(law.subs({...}).finite_n(200))")

    def _scalar(self):
        return float(self.n)

    @_public
    def correction_cauchy(self, z, *, dps=None, ball=False):
        """``G₁(z)`` (mpc); a real ``z`` inside the support means ``z + i0``, and
        ``G₁(z̄) = conj G₁(z)`` below the axis (``ρ₁`` is a real measure).

        Raises ``FreeprobValueError`` (free symbols, ``z`` not a finite complex number),
        ``NotAvailable`` (no numeric rule, e.g. ⊠ with a zero-mean factor)."""
        _no_ball(ball, "correction_cauchy")
        dps = dps_or_default(dps, "correction_cauchy")
        self.check_numeric("FiniteNLaw.correction_cauchy")
        z = _finite_z(z, "FiniteNLaw.correction_cauchy")
        if z.imag < 0:
            return mpmath.conj(self.correction_cauchy(mpmath.conj(z), dps=dps))
        if self.field == "complex":
            return mpmath.mpc(0)
        with mpmath.workdps(dps + 10):
            zz = mpmath.mpc(z)
            val = g1_value(self.limit, zz, limit_G(self.limit, zz))
        with mpmath.workdps(dps):
            return +val

    @_public
    def cauchy(self, z, *, dps=None, ball=False):
        """``G(z) + G₁(z)/n`` (mpc), ``z`` off the real axis (``G(z̄) = conj G(z)``).  Errors as
        :meth:`correction_cauchy`; ``ball=True`` is refused (``NotAvailable``: not certified)."""
        _no_ball(ball, "cauchy")
        dps = dps_or_default(dps, "cauchy")
        z = _finite_z(z, "FiniteNLaw.cauchy")
        if z.imag < 0:
            return mpmath.conj(self.cauchy(mpmath.conj(z), dps=dps))
        g1 = self.correction_cauchy(z, dps=dps + 5)
        with mpmath.workdps(dps + 5):
            val = mpmath.mpc(self.limit.cauchy(z, dps=dps + 5)) + g1 / self._scalar()
        with mpmath.workdps(dps):
            return +val

    @_public
    def support(self, *, dps=None, ball=False):
        """The support intervals of the limit law (those of the correction's density);
        ``ball=True``: ``NotAvailable`` (use ``.limit.support(ball=True)``)."""
        _no_ball(ball, "support")
        return self.limit.support(dps=dps)

    @_public
    def cut_points(self, *, dps=None):
        """The cut points of the limit law (:meth:`freeprob.laws.law.Law.cut_points`)."""
        return self.limit.cut_points(dps=dps)

    @_public
    def correction_density(self, x, *, dps=None, ball=False):
        r"""``ρ₁(x) = −Im G₁(x + i0)/π`` (0 outside the support; the atoms are apart), at a
        real ``x`` or a sorted list.  Errors as :meth:`correction_cauchy`."""
        _no_ball(ball, "correction_density")
        return _m.correction_density(self, x, dps)

    @_public
    def density(self, x, *, dps=None, ball=False, rtol=None):
        r"""The corrected density ``ρ(x) + ρ₁(x)/n`` (signed near the edges), scalar or list;
        ``rtol`` (as :meth:`Law.density`'s float fast path) is met by 15 digits.  Errors as
        :meth:`correction_cauchy`; ``ball=True``: ``NotAvailable`` (not certified)."""
        _no_ball(ball, "density")
        return _m.density(self, x, 15 if rtol is not None and dps is None else dps)

    @_public
    def correction_atoms(self, *, dps=None, ball=False):
        r"""The atoms ``(location, mass)`` of ``ρ₁`` (mpf): the real poles of ``G₁`` with their
        residues (at the support edges, the limit's atoms and cut points); the corrected
        law's atoms are ``mass/n``."""
        _no_ball(ball, "correction_atoms")
        return _m.correction_atoms(self, dps)

    @_public
    def atoms(self, *, dps=None, ball=False):
        r"""Atoms of the corrected law: the limit's atoms plus ``ρ₁``'s atoms over ``n``
        (``ball=True``: ``NotAvailable``, not certified)."""
        _no_ball(ball, "atoms")
        return _m.atoms(self, dps)

    @_public
    def correction_cdf(self, x, *, dps=None, ball=False):
        r"""``F₁(x) = ρ₁((−∞, x])`` (total mass 0, so ``F₁ = 0`` left and right of
        everything), by quadrature of ``G₁`` along a path in the upper half-plane (Cauchy's
        theorem: the path passes above the atoms and picks them up)."""
        _no_ball(ball, "correction_cdf")
        return _m.correction_cdf(self, x, dps)

    @_public
    def cdf(self, x, *, dps=None, ball=False):
        r"""The corrected cdf ``F(x) + F₁(x)/n`` (monotone only approximately: it is not
        clipped; ``ball=True``: ``NotAvailable``, not certified)."""
        _no_ball(ball, "cdf")
        dps = dps_or_default(dps, "cdf")
        f1 = self.correction_cdf(x, dps=dps)
        with mpmath.workdps(dps + 5):
            val = mpmath.mpf(self.limit.cdf(x, dps=dps + 5)) + f1 / self._scalar()
        with mpmath.workdps(dps):
            return +val


@register("finite_n")
def finite_n(law, n, field="real") -> FiniteNLaw:
    r"""The expected spectral law of ``law``'s finite-n matrix model to order ``1/n``:
    :class:`FiniteNLaw` (see its docstring and docs/guide/finite-n.md)."""
    return FiniteNLaw(law, n, field)

