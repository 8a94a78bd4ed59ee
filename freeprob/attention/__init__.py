"""The attention layer of [HK26] (theory.md §1–§4): its architecture, the Gaussian
equivalent spectral laws (:mod:`freeprob.attention.laws`) and the readout predictions
(:mod:`freeprob.attention.readout`)."""
from freeprob.attention.laws import *  # noqa: F401,F403
from freeprob.attention.laws import __all__
