r"""The top-eigenvalue columns of ``freeprob verify`` (issue 18; docs/theory.md §7 F2).

Three predictions of the softmax top eigenvalue of an object, from
:mod:`freeprob.attention.spikes` on the finite-width bulk law at the cell's own ``n`` and
widths:

* ``top_pred_fw``: the unconditional prediction
  (:func:`~freeprob.attention.spikes.predicted_top_eigenvalue` at the mean spike strength
  ``θ² =`` :func:`~freeprob.attention.spikes.spike_strength`);
* ``top_spread_fw``: the standard deviation of one initialisation's top eigenvalue that
  the spike's own scatter causes (:func:`~freeprob.attention.spikes.predicted_top_spread`,
  with the row's own sharing scheme: :meth:`ConditionalTop.spread`);
  a mean over ``s`` seeds is known to ``top_spread_fw/√s`` (the row metric
  ``top_pred_fw_se``);
* ``top_pred_fw_draw``: the prediction conditional on the draw, at the realised strength
  ``θ̂² =`` :func:`~freeprob.attention.spikes.realised_spike_strength` of the cell's own
  ``K, V, W_O`` (stored by the cell as ``theta_sq_draw``).

The sampler layer is numpy-only, so the realised strength is computed here, in the
experiments layer, from the :class:`freeprob.sampler.Weights` the cell drew.

Source: docs/theory.md §7 F2; :mod:`freeprob.attention.spikes`.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction

__all__ = ["SPREAD_KEY", "realised_strengths", "fw_top_prediction", "ConditionalTop", "spread_of_mean"]

#: the key of the one-initialisation spread in older finite-width theory entries (read, never written)
SPREAD_KEY = "predicted_top_spread"
#: keys of a finite-width theory entry that are not part of the tabulated law
THEORY_EXTRAS = ("outlier", "predicted_top", SPREAD_KEY)


def realised_strengths(weights, beta, objects) -> dict:
    r"""``{"<obj>/theta_sq_draw": θ̂²}``: the realised key-norm spike strength of one draw
    for every object that has a spike prediction (``out_full`` has none).

    Parameters
    ----------
    weights : freeprob.sampler.Weights
        The draw (``k``, ``v`` of shape ``(h, n, d_K)``, ``(h, n, d_V)``; ``w_o`` of shape
        ``(h d_V, d_O)``).
    beta : number or str
        Inverse temperature (``"1/2"`` accepted, as verify stores it).
    objects : sequence of str

    Returns
    -------
    dict
        Floats ``θ̂² ≥ 0`` in the normalisation of
        :func:`freeprob.attention.spikes.spike_strength`.

    Raises
    ------
    FreeprobValueError
        As :func:`freeprob.attention.spikes.realised_spike_strength`.

    Source: docs/theory.md §7 F2.
    """
    from freeprob.attention.spikes import SPIKE_OBJECTS, realised_spike_strength
    b = float(Fraction(str(beta)))
    return {f"{o}/theta_sq_draw": realised_spike_strength(weights.k, weights.v, weights.w_o, b, o)
            for o in objects if o in SPIKE_OBJECTS}


def _arch_and_law(dims, beta, constructor):
    from freeprob.attention import laws as attention
    arch = attention.Architecture.from_dict(dims).with_beta(beta)
    return arch, getattr(attention, constructor)(arch, finite_width=True)


def fw_top_prediction(arch, obj, law) -> dict:
    r"""The finite-width top-eigenvalue entry of a theory entry: ``predicted_top``
    (unconditional; ``None`` for ``out_full``, whose top eigenvalue is the common-row spike).

    The mean spike strength, hence this prediction, is the same under every across-head
    sharing scheme of the objects other than the head sum (so verify shares the entry, as
    the law, between LLaMA-2 and Mistral); the spread of one initialisation is not (a
    shared key and value matrix makes the heads' spikes coherent: ±18 % for multi-query
    Falcon), so it is computed per row with the row's own scheme
    (:meth:`ConditionalTop.spread`), never stored in a shared entry.

    Parameters
    ----------
    arch : Architecture
        With sizes and a numeric ``beta``.
    obj : str
        A verify object.
    law : Law
        The finite-width law of ``obj`` at ``arch`` (its support and Cauchy equation are
        reused).

    Returns
    -------
    dict
        ``{"predicted_top": float or None}`` in the unnormalised units of docs/theory.md §1.

    Raises
    ------
    FreeprobValueError
        As :func:`freeprob.attention.spikes.predicted_top_eigenvalue`.

    Source: docs/theory.md §7 F2.
    """
    from freeprob.attention.spikes import predicted_top_eigenvalue
    if obj == "out_full":
        return {"predicted_top": None}
    return {"predicted_top": predicted_top_eigenvalue(arch, obj, True, bulk_law=law)}


class ConditionalTop:
    r"""The prediction conditional on a draw,
    ``predicted_top_eigenvalue(arch, obj, True, theta_sq=θ̂², bulk_law=law)``, with the
    finite-width law of each ``(dims, β, obj)`` built once (its first evaluation finds the
    support, 1–10 s; later ones take milliseconds), or set up from a worker's
    (:meth:`adopt`).

    ``object_laws`` maps an object to the name of its law constructor in
    :mod:`freeprob.attention` (:data:`freeprob.experiments.verify.OBJECT_LAWS`);
    ``law_dims(dims, obj)``, if given, the dimensions the law of ``obj`` depends on
    (:func:`freeprob.experiments.verify_laws.law_dims`: rows whose laws are one law share
    it; the arch of the prediction stays the row's own).
    Call with ``(dims, beta, obj, theta_sq)``: ``dims`` a dict
    (:meth:`freeprob.sampler.Dimensions.to_dict`), ``beta`` a number or text, ``obj`` one
    of :data:`freeprob.attention.spikes.SPIKE_OBJECTS`, ``theta_sq`` a finite float
    ``≥ 0``; returns a float (unnormalised units, docs/theory.md §1), or ``None`` when
    the law or the prediction cannot be evaluated (``ValueError``, ``ArithmeticError``
    such as :class:`freeprob.errors.PrecisionError`, ``NotImplementedError``): the cell's
    column is then empty, as a missing finite-width law leaves ``top pred fw`` empty.
    Source: docs/theory.md §7 F2.
    """

    def __init__(self, object_laws, law_dims=None):
        self._laws, self._names, self._law_dims, self._archs = {}, dict(object_laws), law_dims, {}
        self._spreads = {}      # (row dims, β, obj) → spread: one per row, not per seed

    def _key(self, dims, beta, obj):
        ld = dims if self._law_dims is None else self._law_dims(dims, obj)
        return (json.dumps(ld, sort_keys=True, default=str), str(beta), obj), ld

    def _law(self, dims, beta, obj):
        key, ld = self._key(dims, beta, obj)
        if key not in self._laws:
            self._laws[key] = _arch_and_law(ld, str(beta), self._names[obj])[1]
        akey = (json.dumps(dims, sort_keys=True, default=str), str(beta))
        if akey not in self._archs:         # the row's own layer (its sharing scheme)
            from freeprob.attention import laws as attention
            self._archs[akey] = attention.Architecture.from_dict(dims).with_beta(str(beta))
        return self._archs[akey], self._laws[key]

    def adopt(self, dims, beta, obj, state, top_cauchy=None):
        """Set up the finite-width law of ``(dims, β, obj)`` from ``state``
        (:func:`freeprob.laws.numeric_state.numeric_state` of that law, computed by a
        worker of this run) unless it is set up already; ``top_cauchy``: the worker's values
        ``{λ: G(λ)}`` (floats, 15 certified digits) at the points of its top-eigenvalue
        search, kept for this law's searches
        (:func:`~freeprob.attention.spikes.predicted_top_eigenvalue` evaluates ``G`` at the
        same bracket points for every ``θ²``).  Raises ``FreeprobValueError`` for a state of
        the wrong form.  Source: :mod:`freeprob.laws.numeric_state`."""
        from freeprob.laws.numeric_state import adopt_numeric_state
        key, ld = self._key(dims, beta, obj)
        if key not in self._laws:
            law = _arch_and_law(ld, str(beta), self._names[obj])[1]
            self._laws[key] = adopt_numeric_state(law, state)
            if top_cauchy:
                known = self._laws[key]._cache.setdefault(("top_cauchy", 15), {})
                for lam, g in top_cauchy.items():
                    if isinstance(lam, float) and isinstance(g, float):
                        known.setdefault(lam, g)

    def __call__(self, dims, beta, obj, theta_sq):
        from freeprob.attention.spikes import predicted_top_eigenvalue
        try:
            arch, law = self._law(dims, beta, obj)
            return predicted_top_eigenvalue(arch, obj, True, theta_sq=theta_sq, bulk_law=law)
        except (ValueError, ArithmeticError, NotImplementedError):
            return None

    def spread(self, dims, beta, obj):
        r"""``top_spread_fw``: :func:`~freeprob.attention.spikes.predicted_top_spread` of one
        initialisation for the row's own ``dims`` (its sharing scheme included), or ``None``
        (``out_full``; ``d_K ≤ 4β²``, where the spike's variance is infinite; numerics that
        fail as in ``__call__``), computed once per row (its seeds share it).
        Source: docs/theory.md §7 F2."""
        from freeprob.attention.spikes import SPIKE_OBJECTS, predicted_top_spread
        if obj not in SPIKE_OBJECTS:
            return None
        key = (json.dumps(dims, sort_keys=True, default=str), str(beta), obj)
        if key not in self._spreads:        # the same for every seed of the row
            try:
                arch, law = self._law(dims, beta, obj)
                self._spreads[key] = predicted_top_spread(arch, obj, True, bulk_law=law)
            except (ValueError, ArithmeticError, NotImplementedError):
                self._spreads[key] = None
        return self._spreads[key]


def spread_of_mean(recs):
    r"""The row metric ``top_pred_fw_se``: the predicted standard error of the mean top
    eigenvalue over the row's seeds, ``top_spread_fw/√s`` (``s`` the seeds with a stored
    spread), as ``{mean, lo, hi, n}`` with no interval; ``None`` without a spread.
    Raises nothing (records without a finite spread are skipped).

    Source: :func:`freeprob.attention.spikes.predicted_top_spread` (a mean over ``s``
    initialisations scatters by ``spread/√s``).
    """
    vals = [r["top_spread_fw"] for r in recs
            if r.get("top_spread_fw") is not None and math.isfinite(r["top_spread_fw"])]
    if not vals:
        return None
    return dict(mean=sum(vals) / len(vals) / math.sqrt(len(vals)), lo=None, hi=None, n=len(vals))
