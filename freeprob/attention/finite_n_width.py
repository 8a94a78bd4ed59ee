r"""The attention laws with both finite-size effects: finite width and the ``1/n`` term.

``law(arch, finite_width=True, finite_n=True)`` (every law of :mod:`freeprob.attention.laws`)
is, to first order in both effects,

.. math::  E\,G_n \approx G_{fw} + (G_{fn} − G_{s·lim})
           = G_{fw} + (G_{tree} − G_{s·lim}) + G_1/n,

with ``G_fw`` the finite-width law at the layer's ``n`` and widths (theory.md §7),
``G_fn`` the GE model's expected law at the layer's sizes to order ``1/n``
(:func:`freeprob.attention.finite_n.finite_n_law`: its exact-size tree ``G_tree`` and the
fluctuation term ``G₁/n``, theory.md §13.7) and ``G_{s·lim}`` the GE limit law dilated by the
**mean factor** ``s`` (:func:`finite_width_mean_factor`).  The finite-width law moves the
limit by chaos pieces and norm factors that are ``O(1)`` at fixed ``d_K`` (they vanish as
``d_K → ∞``); the GE model's finite-n shift is ``O(1/n)``.  The cross term (the ``1/n`` term
of the finite-width model itself, which has no finite-n Gaussian model: its chaos pieces are
Wishart matrices of non-integer size) is ``O(finite-width effect × 1/n)`` and is left out
(theory.md §13.8).

The mean factor: the finite-width law's bulk scale ``θ1^{emp}`` (the default
``variance="empirical"``, :func:`freeprob.attention.normaliser.empirical_theta1`) is the
second moment of the softmax entries ``nA_ab − 1``, whose rows sum to zero exactly: it
already contains the centring, the factor ``(n − 1)/n`` by which the GE model's finite-n mean
sits below the limit's.  Subtracting the undilated limit would count that shift twice;
subtracting ``dilate(lim, (n − 1)/n)`` keeps the finite-n shape change and leaves the mean
to the finite-width law (the combined ``m1`` is the finite-width law's exactly wherever the
GE model's finite-n mean is ``(n − 1)/n`` times the limit's: every centred object).

The result is a :class:`freeprob.laws.finite_n_combined.CombinedFiniteNLaw`: a
:class:`~freeprob.laws.finite_n.FiniteNLaw` (the GE model's ``1/n`` coefficients) whose
moments, density, cdf and atoms are the finite-width law's plus that shift.  Tied values
included (the push-forward ``φ_KV`` inside the compound steps maps ``G₁`` like a measure,
:func:`freeprob.laws.finite_n_eval.g1_value`).

Source: docs/theory.md §7, §13.7, §13.8; issue 29.
"""
from __future__ import annotations

import sympy as sp

from freeprob.attention import finite_width as _fw
from freeprob.attention.architecture import Architecture
from freeprob.attention.finite_n import BULK_OBJECTS, OBJECTS, finite_n_law
from freeprob.errors import FreeprobValueError
from freeprob.laws.finite_n_combined import CombinedFiniteNLaw
from freeprob.laws.operations import dilate

__all__ = ["finite_n_finite_width_law", "finite_width_mean_factor"]

#: the objects whose tied-values (``V_i = K_i``) finite-width law keeps the limit construction
#: (:func:`freeprob.attention.laws.tied_value_covariance_law`: no empirical bulk scale)
_TIED_LIMIT_OBJECTS = ("head_out", "stack", "out", "out_full")


def finite_width_mean_factor(arch, obj, *, variance=None):
    r"""``s``: the factor such that the finite-width law of ``obj`` already contains the
    mean shift of ``dilate(limit, s)`` away from the GE limit law (exact sympy number).

    * ``s = (n − 1)/n`` where the finite-width law's bulk scale is the empirical one
      (``variance="empirical"``, the default :data:`freeprob.attention.finite_width.DEFAULT_VARIANCE`):
      ``θ1^{emp}`` is the second moment of the exactly centred softmax entries, so it carries
      the centring, the factor ``(n − 1)/n`` of the GE model's finite-n mean (the zero
      eigenvalue of ``T_i = (I − P)Σ_i(I − P)``, theory.md §13.7).  Checked exactly at
      ``n = 32``, ``h = 2``, ``d_K = d_V = 8``, ``β = 1``: ``m1(finite_n_law)/m1(limit) = 31/32``
      for single, concat, sum, head_out, stack, out (independent, shared keys and tied values);
      ``out_full`` (the bulk below the common-row spike): ``(n − 1)/n · (h d_V − 1)/(h d_V) ·
      (d_O − 1)/d_O``, of which the finite-width law (the centred output's) carries the
      centring only, ``s = (n − 1)/n``.
    * ``s = 1`` for tied values (``V_i = K_i``) and ``obj`` in head_out, stack, out, out_full:
      their finite-width law keeps the limit construction (the push-forward of ``MP(c_K)``,
      :func:`freeprob.attention.laws.tied_value_covariance_law`; mean the limit's), so the
      whole finite-n mean shift is added; and for every object when the variance is not
      ``"empirical"`` (``"limit"``: mean ``θ1``; ``"expected"``: ``θ1^{fw}``, the uncentred
      variance under the expected normaliser).

    Parameters
    ----------
    arch : Architecture
        From :meth:`Architecture.from_dimensions` (sizes; ``n`` an integer ≥ 2 or a positive
        sympy symbol).
    obj : str
        One of :data:`freeprob.attention.finite_n.OBJECTS` or ``"out_full"``.
    variance : {"empirical", "limit", "expected"}, optional
        The finite-width law's total variance (:func:`freeprob.attention.finite_width.chaos_weights`);
        default :data:`freeprob.attention.finite_width.DEFAULT_VARIANCE` read at call time.

    Raises
    ------
    FreeprobValueError
        ``arch`` not an Architecture or without sizes (no ``n``); ``n`` not an integer ≥ 2 or a
        positive symbol; unknown ``obj`` or ``variance``.

    Source: docs/theory.md §7 ("the finite-d_K bulk scale"), §13.7, §13.8; issue 29.
    """
    own = "finite_width_mean_factor"
    if not isinstance(arch, Architecture):
        raise FreeprobValueError(f"{own}: expected an Architecture, got {type(arch).__name__}")
    allowed = OBJECTS + BULK_OBJECTS
    if obj not in allowed:
        raise FreeprobValueError(f"{own}: object must be one of {', '.join(allowed)}; got {obj!r}")
    variance = _fw.DEFAULT_VARIANCE if variance is None else variance
    if variance not in _fw.VARIANCES:
        raise FreeprobValueError(
            f"{own}: variance must be one of {', '.join(_fw.VARIANCES)}; got {variance!r}")
    if not arch.sized:
        raise FreeprobValueError(
            f"{own}: needs the number of tokens n: build the layer with Architecture.from_dimensions("
            f"n=..., heads=..., d_k=..., d_v=..., d_o=..., beta=...); got {arch!r}")
    n = sp.sympify(arch.n)
    if n.is_number:
        if not (n.is_Integer and n >= 2):
            raise FreeprobValueError(
                f"{own}: n must be an integer >= 2 (the centring removes one direction); got n = {arch.n}")
    elif n.is_positive is not True:
        raise FreeprobValueError(f"{own}: a symbolic n must be declared positive; got {arch.n!r}")
    if variance != "empirical" or (arch.scheme == "tied" and obj in _TIED_LIMIT_OBJECTS):
        return sp.Integer(1)
    return (n - 1) / n


def finite_n_finite_width_law(arch, obj, law_function):
    r"""``law_function(arch, finite_width=True)
    + (finite_n_law(arch, obj) − dilate(law_function(arch), s))``,
    ``s`` = :func:`finite_width_mean_factor` ``(arch, obj)``, as a
    :class:`~freeprob.laws.finite_n_combined.CombinedFiniteNLaw` (module docstring).

    ``arch`` an :class:`~freeprob.attention.architecture.Architecture` from
    ``from_dimensions`` with integer sizes and ``beta``; ``obj`` one of
    :data:`freeprob.attention.finite_n.OBJECTS`; ``law_function`` the matching law of
    :mod:`freeprob.attention.laws` (``output_law`` for ``"out"``, …).  The combined mean is the
    finite-width law's plus ``m1(finite_n) − s·m1(limit)`` (0 for every centred object with the
    empirical bulk scale).

    Raises ``FreeprobValueError`` as :func:`~freeprob.attention.finite_n.finite_n_law`, the
    finite-width law (no sizes, no ``beta``) and :func:`finite_width_mean_factor`.
    Source: module docstring."""
    s = finite_width_mean_factor(arch, obj)
    lim = law_function(arch)
    reference = lim if s == 1 else dilate(lim, s)
    return CombinedFiniteNLaw(law_function(arch, finite_width=True), finite_n_law(arch, obj), reference)
