r"""The attention laws with both finite-size effects: finite width and the ``1/n`` term.

``law(arch, finite_width=True, finite_n=True)`` (every law of :mod:`freeprob.attention.laws`)
is, to first order in both effects,

.. math::  E\,G_n \approx G_{fw} + (G_{fn} − G_{lim})
           = G_{fw} + (G_{tree} − G_{lim}) + G_1/n,

with ``G_fw`` the finite-width law at the layer's ``n`` and widths (theory.md §7),
``G_fn`` the GE model's expected law at the layer's sizes to order ``1/n``
(:func:`freeprob.attention.finite_n.finite_n_law`: its exact-size tree ``G_tree`` and the
fluctuation term ``G₁/n``, theory.md §13.7) and ``G_lim`` the GE limit law.  The finite-width
law moves the limit by chaos pieces and norm factors that are ``O(1)`` at fixed ``d_K`` (they
vanish as ``d_K → ∞``); the GE model's finite-n shift ``G_fn − G_lim`` is ``O(1/n)``.  The
cross term (the ``1/n`` term of the finite-width model itself, which has no finite-n
Gaussian model: its chaos pieces are Wishart matrices of non-integer size) is
``O(finite-width effect × 1/n)`` and is left out (theory.md §13.8).

The result is a :class:`freeprob.laws.finite_n_combined.CombinedFiniteNLaw`: a
:class:`~freeprob.laws.finite_n.FiniteNLaw` (the GE model's ``1/n`` coefficients) whose
moments, density, cdf and atoms are the finite-width law's plus the GE model's finite-n
shift.  Tied values included (the push-forward ``φ_KV`` inside the compound steps maps
``G₁`` like a measure, :func:`freeprob.laws.finite_n_eval.g1_value`).

Source: docs/theory.md §7, §13.7, §13.8; issue 29.
"""
from __future__ import annotations

from freeprob.attention.finite_n import finite_n_law
from freeprob.laws.finite_n_combined import CombinedFiniteNLaw

__all__ = ["finite_n_finite_width_law"]


def finite_n_finite_width_law(arch, obj, law_function):
    r"""``law_function(arch, finite_width=True) + (finite_n_law(arch, obj) − law_function(arch))``
    as a :class:`~freeprob.laws.finite_n_combined.CombinedFiniteNLaw` (module docstring).

    ``arch`` an :class:`~freeprob.attention.architecture.Architecture` from
    ``from_dimensions`` with integer sizes and ``beta``; ``obj`` one of
    :data:`freeprob.attention.finite_n.OBJECTS`; ``law_function`` the matching law of
    :mod:`freeprob.attention.laws` (``output_law`` for ``"out"``, …).

    Raises ``FreeprobValueError`` as :func:`~freeprob.attention.finite_n.finite_n_law` and the
    finite-width law (no sizes, no ``beta``).  Source: module docstring."""
    return CombinedFiniteNLaw(law_function(arch, finite_width=True), finite_n_law(arch, obj), law_function(arch))
