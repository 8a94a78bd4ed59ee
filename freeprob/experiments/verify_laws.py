r"""The exact laws of ``freeprob verify``: one sweep job per distinct (dimensions, β,
object) tabulates the GE-limit law or the finite-width law of the object
(:class:`freeprob.experiments.compare.TabulatedLaw`), and hands the finite-width law's set-up
on to the main process.

The jobs run on the sweep's workers, several at once (:mod:`freeprob.experiments.sweep`:
each law is its own cell, scheduled before the sampling cells).  The main process then
evaluates each finite-width law again, for the top eigenvalue conditional on every draw
(:class:`freeprob.experiments.verify_top.ConditionalTop`); the job returns the law's exact
set-up (Cauchy equation, special points, support: :mod:`freeprob.laws.numeric_state`,
seconds to derive) and the row variances of the softmax normaliser it computed
(:func:`freeprob.attention.normaliser.row_variance_state`, 0.1 s of quadrature each, which
building the same law in the main process needs again) under the sweep's transient key
(:data:`freeprob.experiments.sweep.TRANSIENT`), which reaches the main process with the
result and is never stored, so the set-up is derived once per run (a resumed run, whose
laws come from the store, derives it in the main process as before).

Source: [HK26]_ §5.1 (the laws compared); docs/theory.md §5, §7; this project's design.
"""
from __future__ import annotations

import pickle

from freeprob.experiments.sweep import TRANSIENT

__all__ = ["OBJECT_LAWS", "law_dims", "theory_job", "adopt_transient"]

#: the cache entry of the Cauchy transform's values at the points of the top-eigenvalue
#: searches (:func:`freeprob.attention.spikes.predicted_top_eigenvalue` at its default 15 digits)
TOP_CAUCHY_KEY = ("top_cauchy", 15)

#: Sampler object → law constructor in :mod:`freeprob.attention`.
OBJECT_LAWS = {"single": "attention_law", "concat": "concatenated_attention_law", "sum": "head_sum_law",
               "head_out": "head_output_law", "stack": "stacked_output_law", "out": "output_law",
               "out_full": "output_law"}


def law_dims(dims, obj):
    """``dims`` (a :class:`freeprob.sampler.Dimensions` or its dict) as the law of ``obj``
    sees it: across-head sharing (GQA, MQA, one shared key matrix) changes only the head-sum
    law and its mean spike (theory.md §3.5, §7 F2), so the other objects' laws are keyed and
    tabulated once for these schemes (LLaMA-2 and Mistral share theirs); the spike's spread
    depends on the scheme and is computed per row.  Returns a dict.  Source: theory.md §3.5."""
    d = dict(dims) if isinstance(dims, dict) else dims.to_dict()
    if obj != "sum" and d.get("scheme") in ("gqa", "shared_keys"):
        d = d | {"scheme": "independent", "kv_groups": None}
    return d


def theory_job(dims, beta, obj, points, finite_width=False, finite_n=False):
    """Worker: tabulate the law of ``obj`` for ``dims`` (a dict) at ``beta`` (text); with
    ``finite_width`` the finite-width law and its ``predicted_top`` eigenvalue (``out_full``:
    the bulk law only; :func:`freeprob.experiments.verify_top.fw_top_prediction`), and the
    law's set-up under :data:`~freeprob.experiments.sweep.TRANSIENT` (pickled ``{"law":``
    :func:`freeprob.laws.numeric_state.numeric_state` ``, "normaliser":``
    :func:`freeprob.attention.normaliser.row_variance_state` ``, "top_cauchy":`` the values of
    ``G`` its top search computed, ``{λ: float}``; ``None`` if it cannot be pickled);
    with ``finite_n`` the GE model's expected law at finite n
    (:mod:`freeprob.attention.finite_n`, theory §13); with both, the finite-width law plus the
    GE model's finite-n shift (:mod:`freeprob.attention.finite_n_width`, theory §13.8; no
    top prediction or set-up: those are the finite-width law's).
    Returns the stored entry (a dict of floats and lists).  Raises as the law's
    constructor and :meth:`TabulatedLaw.from_law`.  Source: this module's docstring."""
    from freeprob.attention import laws as attention
    from freeprob.experiments.compare import TabulatedLaw
    from freeprob.experiments.verify_top import fw_top_prediction
    arch = attention.Architecture.from_dict(dims).with_beta(beta)
    law = getattr(attention, OBJECT_LAWS[obj])(arch, finite_width=finite_width, finite_n=finite_n)
    data = TabulatedLaw.from_law(law, points=points, label=f"{obj} {dims}").to_dict()
    if finite_width and not finite_n:     # the law's support and equation are cached: the prediction reuses them
        data.update(fw_top_prediction(arch, obj, law))
        from freeprob.attention.normaliser import row_variance_state
        from freeprob.laws.numeric_state import numeric_state
        try:
            data[TRANSIENT] = pickle.dumps({"law": numeric_state(law), "normaliser": row_variance_state(),
                                            "top_cauchy": dict(law._cache.get(TOP_CAUCHY_KEY, {}))})
        except (pickle.PicklingError, TypeError, AttributeError):     # the main process derives it
            data[TRANSIENT] = None
    elif obj == "out_full":   # bulk = output law; the top eigenvalue is the common-row spike
        data["outlier"] = float(attention.common_row_spike(arch, dims["n"]))
    return data


def adopt_transient(conditional, cell, result):
    """``on_result`` of the sweep (main process): give ``conditional`` (a
    :class:`~freeprob.experiments.verify_top.ConditionalTop`) the set-up of the finite-width
    law a theory job returned (with the values of ``G`` at the points of the job's top
    search: the main process's searches of the same law start at the same points), and the
    normaliser's row variances
    (:func:`freeprob.attention.normaliser.adopt_row_variances`); other cells and results
    without it are ignored.  Raises
    nothing (a set-up that cannot be read is derived again).  Source: this module's docstring."""
    state = result.get(TRANSIENT) if cell.kind == "object" and isinstance(result, dict) else None
    if not state:
        return
    kw = cell.kwargs
    try:
        state = pickle.loads(state)
        from freeprob.attention.normaliser import adopt_row_variances
        adopt_row_variances(state["normaliser"])
        if state["law"] is not None:
            conditional.adopt(kw["dims"], kw["beta"], kw["obj"], state["law"], state.get("top_cauchy"))
    except (ValueError, TypeError, KeyError, pickle.UnpicklingError, ArithmeticError):
        pass
