"""Old path of the flat layout: the sampled readouts (:mod:`freeprob.sampler.readout`) and
the mean and t-interval over seeds (:mod:`freeprob.experiments.stats`), which used to live
together.  A compatibility shim (``freeprob._compat.SHIMS``): import from the new modules.
"""
from freeprob.experiments.stats import MeanInterval, mean_interval
from freeprob.sampler.readout import (
    measured_effective_dof,
    measured_loss_curve,
    measured_ridge_error,
)

__all__ = ["measured_loss_curve", "measured_ridge_error", "measured_effective_dof",
           "mean_interval", "MeanInterval"]
