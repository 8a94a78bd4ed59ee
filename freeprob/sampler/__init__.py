"""Finite-n sampling of softmax attention and its Gaussian equivalent, in float64 (numpy
and scipy only: importing it loads numpy, not scipy, sympy nor python-flint).  The layer
class :class:`Dimensions` is :mod:`freeprob.attention.architecture`'s (no sympy).

:mod:`~freeprob.sampler.model` (dimensions, weights, attention), :mod:`~freeprob.sampler.heads`
(per-head noise), :mod:`~freeprob.sampler.spectra` (objects and their spectra),
:mod:`~freeprob.sampler.readout` (sampled readouts).
"""
from freeprob.sampler.spectra import *  # noqa: F401,F403
from freeprob.sampler.spectra import __all__
