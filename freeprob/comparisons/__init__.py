r"""The paper's readout comparisons (Hayase & Karakida 2026, §5 and appendix D), one module
each, every one predicting from the exact laws and measuring on finite-n softmax features.

========================  ==================================================  ============
key                       comparison                                          module
========================  ==================================================  ============
``head-count``            loss plateau = zero mass; slow vs rapid decay       head_count
``width-allocation``      coefficient-error peaks at a 6n² budget             width_allocation
``temperature``           (64,192) vs (128,128) error ratio across β          temperature
``sharing``               across-head K/V sharing; time to loss 0.1           sharing
``gqa-vs-tying``          GQA vs within-head K/V tying, h = 2..32             gqa_tying
========================  ==================================================  ============

Each module has ``run(*, quick=False, n=None, seeds=None, progress=None) -> Comparison``
(:class:`freeprob.comparisons._common.Comparison`: ``.table()``, ``.to_dict()``,
``.save_figure(path)``, ``.write(dir)``); ``freeprob readout KEY`` runs it from the shell.
"""
from __future__ import annotations

import importlib

from ..errors import FreeprobValueError
from ._common import Comparison

__all__ = ["COMPARISONS", "run_comparison", "Comparison"]

#: key -> (module name, one-line description)
COMPARISONS = {
    "head-count": ("head_count", "loss plateau set by the zero mass; slow vs rapid decay (§5.1, D.2)"),
    "width-allocation": ("width_allocation", "coefficient-error peaks at a fixed 6n² projection budget (§5.2, D.3)"),
    "temperature": ("temperature", "(d_QK, d_V) = (64,192) vs (128,128) error ratio across β (§5.2, D.4)"),
    "sharing": ("sharing", "across-head K/V sharing and the time to relative loss 0.1 (§5.3, D.5)"),
    "gqa-vs-tying": ("gqa_tying", "GQA vs within-head K/V tying at equal widths and budget (§5.3, D.6)"),
}


def run_comparison(key, **kwargs) -> Comparison:
    """Run the comparison named ``key`` (see :data:`COMPARISONS`) with the keyword
    arguments of its module's ``run``.  Raises ``FreeprobValueError`` for an unknown key
    (the message lists the known ones)."""
    if key not in COMPARISONS:
        raise FreeprobValueError(f"unknown comparison {key!r}; known: {', '.join(COMPARISONS)}")
    mod = importlib.import_module(f".{COMPARISONS[key][0]}", __name__)
    return mod.run(**kwargs)
