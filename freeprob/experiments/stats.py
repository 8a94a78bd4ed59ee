r"""Statistics over repeated measurements (one per seed/initialisation) for the
experiments: the sample mean and its Student-t confidence interval.

Moved here from the sampler's readout module (the sampler measures one draw; summarising
draws is the experiments' business).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from freeprob._extras import require

stats = require("scipy.stats", "sampler")

from freeprob._checks import check_real
from freeprob.errors import FreeprobValueError
from freeprob.sampler.arrays import real_array

__all__ = ["mean_interval", "finite_mean_interval", "MeanInterval"]


@dataclass(frozen=True)
class MeanInterval:
    """Sample mean of ``n`` values and the half-width of its confidence interval
    (``half`` is ``None`` for ``n = 1``).  ``lo``/``hi`` are the interval ends.

    Source: the Student-t interval of :func:`mean_interval`.
    """

    mean: float
    half: float | None
    n: int
    level: float = 0.95

    @property
    def lo(self):
        return None if self.half is None else self.mean - self.half

    @property
    def hi(self):
        return None if self.half is None else self.mean + self.half

    def contains(self, value, slack=0.0):
        """``|value − mean| ≤ half + slack`` (``False`` without an interval).

        Raises nothing.
        """
        return self.half is not None and abs(float(value) - self.mean) <= self.half + slack

    def __format__(self, spec):
        spec = spec or ".4f"
        if self.half is None:
            return format(self.mean, spec)
        return f"{format(self.mean, spec)} ± {format(self.half, spec)}"


def mean_interval(values, level=0.95):
    r"""Mean and Student-t confidence interval ``x̄ ± t_{(1+level)/2, k−1} s/√k`` of ``k``
    independent measurements (e.g. one per initialisation).

    Parameters
    ----------
    values : 1-d sequence of finite reals, at least one
    level : float in ``(0, 1)``

    Returns
    -------
    MeanInterval

    Raises
    ------
    FreeprobValueError
        Empty or not 1-d input, non-finite values (or a mean that overflows), a level
        outside ``(0, 1)``.

    Source: the t-interval for a normal mean (any statistics text; scipy.stats.t).
    """
    who = "mean_interval"
    v = real_array(values, f"{who}: values", ndim=1, layout="(at least one value)")
    if not np.isfinite(v.mean()):
        raise FreeprobValueError(f"{who}: the mean of the values is not finite (float64 overflow); "
                                 f"got {v.tolist()!r}")
    lv = check_real(level, who, "level")
    if not 0 < lv < 1:
        raise FreeprobValueError(f"{who}: level must lie in (0, 1); got {level!r}")
    m = float(v.mean())
    if v.size < 2:
        return MeanInterval(m, None, 1, lv)
    half = float(stats.t.ppf((1 + lv) / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return MeanInterval(m, half, int(v.size), lv)



def finite_mean_interval(values, level=0.95):
    """:func:`mean_interval` of the finite values among ``values`` (``None`` and NaN, e.g.
    missing or failed seeds, dropped); ``None`` when no value is left.

    Raises ``FreeprobValueError`` as :func:`mean_interval`.  Source: :func:`mean_interval`.
    """
    v = [float(x) for x in values if x is not None and math.isfinite(x)]
    return mean_interval(v, level) if v else None
