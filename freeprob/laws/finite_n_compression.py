r"""A random hyperplane compression at finite n: ``Uᵀ A U`` (``U`` an ``N × (N − 1)`` isometry
onto ``u^⊥``, ``u`` uniform on the sphere and independent of ``A``).

Its limit law is ``A``'s; its ``1/n`` term (the compression has ``N − 1 = n`` eigenvalues)
follows from the rank-one determinant identity
``det(z − UᵀAU) = det(z − A)·uᵀ(z − A)^{-1}u``:

.. math::  \sum_j (z − μ_j)^{-1} = \mathrm{tr}(z − A)^{-1} + \frac{d}{dz}\log s(z),
           \qquad s(z) = uᵀ(z − A)^{-1}u → G_A(z),

so ``E tr_{N−1}(z − UᵀAU)^{-1} = G_A + (G₁^A + G_A + G_A'/G_A)/n + O(n^{-2})``: the operand's
own correction plus the signed measure of Cauchy transform ``G + G'/G`` (total mass 0; moment
corrections ``m_k − k ℓ_k``, ``log Σ m_k w^k = Σ ℓ_k w^k``: the mean is kept, the variance
drops by ``Var/n``).  Its atoms sit at the real zeros of ``G_A`` (in the gaps of the support:
the interlacing eigenvalue of each gap), registered through
:func:`freeprob.laws.finite_n_measure.extra_poles`.

The model of the bulk of the uncentred attention output (docs/theory.md §13.10): the common
row removes the direction ``ū`` of the stacked value space.

Source: docs/theory.md §13.10; the rank-one identity (e.g. [MS17]_ §1, Cauchy interlacing).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from freeprob.core.series import TruncatedSeries
from freeprob.core.symbols import G as _Gs
from freeprob.core.symbols import z as _zs
from freeprob.laws import algebraic as _alg
from freeprob.laws import finite_n_eval as _eval
from freeprob.laws import finite_n_measure as _measure
from freeprob.laws import finite_n_rules as _rules
from freeprob.laws.law import Law

__all__ = ["HyperplaneCompression"]


@dataclass(frozen=True)
class HyperplaneCompression(Law):
    r"""``Uᵀ A U``: the compression of the model of ``law`` (size ``n + 1``) to a uniformly random
    hyperplane (size ``n``).  As a limit law it is ``law`` itself (moments, Cauchy equation,
    density); :meth:`~freeprob.laws.law.Law.finite_n` adds the compression's ``1/n`` term.

    Raises as the operand's methods.  Source: module docstring."""

    law: Law

    def _parameters(self):
        return self.law.parameters()

    def _moment_formula(self, ring, k):
        return self.law._m(ring, k)

    def _zero_mass(self):
        return self.law._zero_mass()

    def _nonnegative(self):
        return self.law._nonnegative()

    def _nonpositive(self):
        return self.law._nonpositive()


@_alg.raw_cauchy_equation.register
def _(law: HyperplaneCompression):
    return _alg._operand_equation(law.law)


@_rules._rule.register
def _(law: HyperplaneCompression, ring, k):
    op = _rules.corrections(law.law, ring, k)
    m = law.law._m(ring, k)
    if k == 0:
        return [ring.zero]
    with ring.context():
        logm = TruncatedSeries._raw(list(m[:k + 1]), k + 1, ring).log()._c
        return [ring.zero] + [op[j] + m[j] - ring.convert(j) * logm[j] for j in range(1, k + 1)]


@_eval.g1_value.register
def _(law: HyperplaneCompression, z, G):
    d1, _ = _eval.derivatives(law, z, G)
    return _eval.g1_value(law.law, z, G) + G + d1 / G


@_measure.extra_poles.register
def _(law: HyperplaneCompression):
    # the real zeros of G (gaps of the support), and the operand's own
    P = law.cauchy_equation().as_expr()
    q = sp.Poly(P.subs(_Gs, 0), _zs)
    pts = [r for r in q.nroots(n=30) if abs(sp.im(r)) < 1e-20] if q.degree() > 0 else []
    return tuple(sp.re(r) for r in pts) + tuple(_measure.extra_poles(law.law))

