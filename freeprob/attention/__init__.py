"""The attention layer of [HK26] (theory.md §1–§4): the layer class
(:mod:`freeprob.attention.architecture`), the Gaussian equivalent spectral laws
(:mod:`freeprob.attention.laws`; each takes ``finite_width=False``, and with ``True``
gives the finite-width law of :mod:`freeprob.attention.finite_width`, and ``finite_n=False``,
and with ``True`` the GE model's expected law at finite ``n`` of
:mod:`freeprob.attention.finite_n`) and the readout
predictions (:mod:`freeprob.attention.readout`).

The names are loaded on first use (PEP 562), so that ``import
freeprob.attention.architecture`` (which the sampler does) loads neither the laws nor
sympy.
"""
from __future__ import annotations

#: the public names, all served by :mod:`freeprob.attention.laws`
__all__ = [
    "ge_coefficients", "Architecture", "SCHEMES", "theta1", "theta2",
    "row_covariance_law", "value_covariance_law", "tied_value_covariance_law",
    "attention_law", "concatenated_attention_law", "head_sum_law", "head_sum_ratio", "head_output_law",
    "stacked_output_law", "output_law", "mean_normalized", "common_row_spike",
    "finite_width_row_covariance_law", "predicted_top_eigenvalue", "key_norm_spike",
    "finite_n_law", "finite_n_tree",
]

#: names served by :mod:`freeprob.attention.finite_width` and :mod:`freeprob.attention.spikes` (issue 18)
_FINITE = ("finite_width_row_covariance_law",)
_SPIKES = ("predicted_top_eigenvalue", "key_norm_spike")
#: names served by :mod:`freeprob.attention.finite_n` (issue 29)
_FINITE_N = ("finite_n_law", "finite_n_tree")

#: names that do not need the laws (nor sympy)
_LIGHT = ("Architecture", "SCHEMES")


def __getattr__(name):
    if name in __all__:
        if name in _LIGHT:
            from freeprob.attention import architecture as module
        elif name in _FINITE:
            from freeprob.attention import finite_width as module
        elif name in _FINITE_N:
            from freeprob.attention import finite_n as module
        elif name in _SPIKES:
            from freeprob.attention import spikes as module
        else:
            from freeprob.attention import laws as module
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'freeprob.attention' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
