r"""A finite-n law moved onto another base law: ``base + (finite-n law − reference)``.

A :class:`~freeprob.laws.finite_n.FiniteNLaw` ``F`` is the expected law of a finite-n matrix
model to order ``1/n``; its shift away from the model's large-n limit ``R`` (the
``reference``) is the signed measure ``F − R`` of total mass 0, of order ``1/n``.  When another
law ``B`` (the ``base``) is a better large-n description than ``R`` for some other reason
(the finite-width law of an attention layer, docs/theory.md §7), the two corrections add to
first order:

.. math::  E\,G_n(z) \approx G_B(z) + \bigl(G_F(z) − G_R(z)\bigr)
           = G_B(z) + \bigl(G_{F,\infty}(z) − G_R(z)\bigr) + G_1(z)/n,

where ``G_{F,∞}`` is the Cauchy transform of ``F.limit`` (the model at its exact sizes) and
``G₁`` the fluctuation term.  The neglected cross term is of order ``(B − R)·(1/n)``: the
``1/n`` term is computed for the model of ``R``, not for that of ``B`` (docs/theory.md §13.8).

:class:`CombinedFiniteNLaw` is that signed measure.  It **is** a ``FiniteNLaw`` (a subclass
that keeps ``F``'s ``limit``, ``n`` and ``field``), so every consumer of finite-n laws takes it
(:meth:`freeprob.experiments.compare.TabulatedLaw.from_law` tabulates it as a signed table,
:func:`freeprob.experiments.compare.law_distances` measures against that table); the
``1/n``-term methods (``moment_corrections``, ``g1_expression``, ``correction_*``) are ``F``'s
own, and the law's own values (``moments``, ``cauchy``, ``density``, ``cdf``, ``atoms``) add
``B − R`` to ``F``'s.  ``support`` is the union of the three supports, ``cut_points`` the
three laws' cut points plus every edge of one support inside the union (where the sum's
density has a square-root or inverse-square-root point).

Source: docs/theory.md §13.8; issue 29.
"""
from __future__ import annotations

import mpmath
import sympy as sp

from freeprob.core.params import check_order, dps_or_default
from freeprob.errors import FreeprobValueError
from freeprob.laws.finite_n import FiniteNLaw, _no_ball, _public
from freeprob.laws.law import Law

__all__ = ["CombinedFiniteNLaw"]

#: atoms of the sum whose masses cancel below this are dropped
_ZERO_MASS = mpmath.mpf("1e-14")


def _mpf(v):
    return mpmath.mpf(sp.N(v, mpmath.mp.dps + 5)) if isinstance(v, sp.Basic) else mpmath.mpf(v)


class CombinedFiniteNLaw(FiniteNLaw):
    r"""The signed measure ``base + (finite_n − reference)`` (module docstring).

    Parameters
    ----------
    base : Law
        The law the shift is added to (e.g. the finite-width attention law).
    finite_n : FiniteNLaw
        The finite-n law whose shift is taken (``field="real"``; its ``limit``, ``n`` and
        ``field`` become this law's).
    reference : Law
        The large-n limit ``finite_n`` is compared with (e.g. the GE limit law, or that law
        dilated by the mean factor the base already carries,
        :func:`freeprob.attention.finite_n_width.finite_width_mean_factor`; not necessarily
        ``finite_n.limit``, which is at the exact sizes).

    Raises
    ------
    FreeprobValueError
        ``base`` or ``reference`` not a :class:`Law`; ``finite_n`` not a ``FiniteNLaw`` (or
        itself combined).
    NotAvailable
        As ``finite_n``'s numeric methods (e.g. ⊠ with a zero-mean factor has no numeric
        ``G₁``); the exact ones (moments) always work.

    Source: docs/theory.md §13.8 (this module's docstring).
    """

    def __init__(self, base, finite_n, reference):
        if not isinstance(base, Law) or not isinstance(reference, Law):
            raise FreeprobValueError(
                f"CombinedFiniteNLaw: base and reference must be Laws; got {type(base).__name__}, "
                f"{type(reference).__name__}")
        if type(finite_n) is not FiniteNLaw:
            raise FreeprobValueError(
                f"CombinedFiniteNLaw: finite_n must be a FiniteNLaw (law.finite_n(n)); got {type(finite_n).__name__}")
        super().__init__(finite_n.limit, finite_n.n, finite_n.field)
        self.base, self.reference, self.finite_n_law = base, reference, finite_n

    def __repr__(self):
        return (f"CombinedFiniteNLaw(base={self.base!r}, finite_n={self.finite_n_law!r}, "
                f"reference={self.reference!r})")

    @property
    def free_symbols(self) -> set:
        """The symbols of the three laws and of ``n``."""
        return super().free_symbols | set(self.base.free_symbols) | set(self.reference.free_symbols)

    def _parts(self):
        return ((self.base, 1), (self.reference, -1))

    # -- exact --------------------------------------------------------------------
    @_public
    def moments(self, k, *, dps=None):
        r"""``(m_0, …, m_k)``: ``m_j(base) + m_j(finite_n) − m_j(reference)`` exactly, where
        ``m_j(finite_n) = m_j(finite_n.limit) + c_j/n`` (:meth:`moment_corrections` are the
        ``c_j``).  Raises ``FreeprobValueError`` (bad ``k`` or ``dps``)."""
        k = check_order(k, "CombinedFiniteNLaw.moments")
        own = FiniteNLaw.moments(self, k)
        b, r = self.base.moments(k), self.reference.moments(k)
        return self._out([f + x - y for f, x, y in zip(own, b, r)], dps, "moments")

    # -- numeric ---------------------------------------------------------------------
    @_public
    def cauchy(self, z, *, dps=None, ball=False):
        """``G_F(z) + G_base(z) − G_reference(z)`` (mpc), ``Im z > 0``.  Errors as
        :meth:`FiniteNLaw.cauchy` and :meth:`Law.cauchy`."""
        _no_ball(ball, "cauchy")
        dps = dps_or_default(dps, "cauchy")
        val = FiniteNLaw.cauchy(self, z, dps=dps + 5)
        with mpmath.workdps(dps + 5):
            for law, sgn in self._parts():
                val += sgn * mpmath.mpc(law.cauchy(z, dps=dps + 5))
        with mpmath.workdps(dps):
            return +val

    @_public
    def support(self, *, dps=None, ball=False):
        """The union of the supports of ``finite_n.limit``, ``base`` and ``reference``
        (intervals that overlap or touch merged), mpf."""
        _no_ball(ball, "support")
        ivs = sorted((_mpf(a), _mpf(b)) for law in (self.limit, self.base, self.reference)
                     for a, b in law.support(dps=dps))
        out = []
        for a, b in ivs:
            if out and a <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], b))
            else:
                out.append((a, b))
        return tuple(out)

    @_public
    def cut_points(self, *, dps=None):
        """The three laws' cut points, and every edge of one of their supports that lies
        inside the union (sorted mpf, duplicates within ``1e-12`` relative removed)."""
        union = self.support(dps=dps)
        pts = [_mpf(c) for law in (self.limit, self.base, self.reference) for c in law.cut_points(dps=dps)]
        pts += [_mpf(e) for law in (self.limit, self.base, self.reference)
                for ab in law.support(dps=dps) for e in ab]
        out = []
        for p in sorted(pts):
            inside = any(a < p < b for a, b in union)
            if inside and (not out or abs(p - out[-1]) > mpmath.mpf(10) ** -12 * (1 + abs(p))):
                out.append(p)
        return tuple(out)

    @_public
    def density(self, x, *, dps=None, ball=False, rtol=None):
        r"""The density of the sum: ``finite_n``'s corrected density plus ``base``'s minus
        ``reference``'s (signed), scalar or sorted list; ``rtol`` as :meth:`FiniteNLaw.density`
        (floats to that accuracy from the two ordinary laws)."""
        _no_ball(ball, "density")
        own = FiniteNLaw.density(self, x, dps=dps, rtol=rtol)
        many = isinstance(x, list | tuple)
        if rtol is not None and many:
            extra = [law.density(list(x), rtol=rtol) for law, _ in self._parts()]
        else:
            d = 15 if rtol is not None and dps is None else dps_or_default(dps, "density")
            extra = [law.density(list(x) if many else x, dps=d + 5) for law, _ in self._parts()]
        if not many:
            own, extra = [own], [[e] for e in extra]
        vals = [o + sum(sgn * _mpf(e[i]) for e, (_, sgn) in zip(extra, self._parts())) for i, o in enumerate(own)]
        return vals if many else vals[0]

    @_public
    def atoms(self, *, dps=None, ball=False):
        r"""Atoms of the sum: ``finite_n``'s (its limit's and ``ρ₁``'s over ``n``) plus
        ``base``'s minus ``reference``'s, merged by location; masses that cancel (below
        ``1e-14``) are dropped."""
        _no_ball(ball, "atoms")
        dps = dps_or_default(dps, "atoms")
        merged = [[_mpf(a), _mpf(m)] for a, m in FiniteNLaw.atoms(self, dps=dps)]
        for law, sgn in self._parts():
            for a, m in law.atoms(dps=dps):
                a, m = _mpf(a), sgn * _mpf(m)
                for row in merged:
                    if abs(row[0] - a) <= mpmath.mpf(10) ** (-dps + 2) * (1 + abs(a)):
                        row[1] += m
                        break
                else:
                    merged.append([a, m])
        with mpmath.workdps(dps):
            return tuple((+a, +m) for a, m in sorted(merged) if abs(m) > _ZERO_MASS)

    @_public
    def cdf(self, x, *, dps=None, ball=False):
        r"""``F_F(x) + F_base(x) − F_reference(x)`` (not clipped: the sum is signed)."""
        _no_ball(ball, "cdf")
        dps = dps_or_default(dps, "cdf")
        val = FiniteNLaw.cdf(self, x, dps=dps + 5)
        with mpmath.workdps(dps + 5):
            for law, sgn in self._parts():
                val += sgn * _mpf(law.cdf(x, dps=dps + 5))
        with mpmath.workdps(dps):
            return +val
