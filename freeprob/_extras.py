"""Optional dependencies: one import point that names the pip extra when a module is
missing (``pip install 'freeprob[plot]'``), instead of a bare ``ModuleNotFoundError``.

The extras (pyproject.toml): ``sampler`` (scipy), ``plot`` (matplotlib), ``sweep`` (dask,
distributed, tqdm, threadpoolctl), ``parquet`` (pyarrow); ``all`` is every one of them.
"""
from __future__ import annotations

import importlib

from freeprob.errors import FreeprobValueError

__all__ = ["MissingExtra", "require", "EXTRAS"]

#: extra -> the top-level modules it provides
EXTRAS = {
    "sampler": ("scipy",),
    "plot": ("matplotlib",),
    "sweep": ("dask", "distributed", "tqdm", "threadpoolctl"),
    "parquet": ("pyarrow",),
}


class MissingExtra(FreeprobValueError, ImportError):
    """An optional dependency is not installed; the message names the extra to install.

    Source: this module; pyproject.toml (the extras).
    """


def require(module: str, extra: str):
    """Import ``module`` (e.g. ``"matplotlib.figure"``) or raise :class:`MissingExtra`.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingExtra
        ``freeprob: this needs the optional dependency <top> (pip install 'freeprob[<extra>]')``.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise
        raise MissingExtra(
            f"this needs the optional dependency {top}, which is not installed: "
            f"pip install 'freeprob[{extra}]' (or 'freeprob[all]')") from None
