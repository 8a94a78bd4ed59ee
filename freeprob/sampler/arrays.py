r"""The one check for array arguments: a finite real float64 array of a given shape.

numpy only (the sampler layer), so the sampler and the experiments use the same check and
the same words:

* ``<what> must be real numbers; got …`` (not convertible, or ``got a complex array``);
* ``<what> must be a non-empty 2-d array (n × d_O); got shape (5,)``;
* ``<what> must have shape (3, 4); got (4, 3)``;
* ``<what> must be finite; got non-finite entries (NaN or ±inf)``.

``what`` names the argument and its owner as the caller words it (``"`matrix` of
`gram_spectrum`"``, ``"mean_interval: values"``).

Source: this project's input rules (issue #16: one check per job).
"""
from __future__ import annotations

import numpy as np

from freeprob.errors import FreeprobValueError

__all__ = ["real_array"]


def _short(values, limit=80):
    text = repr(values)
    return text if len(text) <= limit else text[:limit] + "…"


def real_array(values, what, *, ndim=None, shape=None, nonempty=True, finite=True, layout="",
               copy=False) -> np.ndarray:
    r"""``values`` as a float64 array after checking it.

    Parameters
    ----------
    values : array_like
    what : str
        The argument in the message (``"`matrix` of `gram_spectrum`"``).
    ndim : int, optional
        Required number of dimensions.
    shape : tuple, optional
        Required shape (checked after ``ndim``).
    nonempty : bool
        Refuse an array with no entries (default).
    finite : bool
        Refuse NaN and infinite entries (default).
    layout : str
        What the axes are, for the message (``"(n × d_O)"``).
    copy : bool
        Return a new array even when ``values`` already is a float64 array.

    Returns
    -------
    numpy.ndarray of float64

    Raises
    ------
    FreeprobValueError
        Not real numbers (or complex), wrong number of dimensions or shape, empty, or
        non-finite entries; the message names ``what``, the rule and what was given.
    """
    try:
        raw = np.asarray(values)
        complex_ = np.iscomplexobj(raw)
        a = None if complex_ else (np.array(raw, dtype=np.float64) if copy else np.asarray(raw, dtype=np.float64))
    except (TypeError, ValueError, OverflowError):
        raise FreeprobValueError(f"{what} must be real numbers; got {_short(values)}") from None
    if complex_:
        raise FreeprobValueError(f"{what} must be real numbers; got a complex array")
    if ndim is not None and a.ndim != ndim or nonempty and a.size == 0:
        dims = f"{ndim}-d array" if ndim is not None else "array"
        kind = f"a non-empty {dims}" if nonempty else f"a {dims}"
        raise FreeprobValueError(f"{what} must be {kind}{' ' + layout if layout else ''}; "
                                 f"got shape {a.shape}")
    if shape is not None and a.shape != tuple(shape):
        raise FreeprobValueError(f"{what} must have shape {tuple(shape)}; got {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise FreeprobValueError(f"{what} must be finite; got non-finite entries (NaN or ±inf)")
    return a
