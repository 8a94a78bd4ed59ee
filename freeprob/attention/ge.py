r"""The Gaussian-equivalence constants ``θ1 = e^{β²} − 1``, ``θ2 = β²`` of [HK26] §3.

A small module of its own: :mod:`freeprob.attention.laws` imports it, and
:class:`freeprob.attention.architecture.Architecture` imports it lazily (only when
``theta1``/``theta2`` are asked for), so the layer class itself needs no sympy.
"""
from __future__ import annotations

import mpmath
import sympy as sp

from freeprob.core.params import as_exact, check_dps, sign
from freeprob.core.symbols import ExpConstant
from freeprob.errors import FreeprobValueError

__all__ = ["ge_coefficients", "theta1", "theta2"]

#: symbols used when the architecture leaves θ1, θ2 free (``beta=None``)
theta1, theta2 = sp.symbols("theta1 theta2", positive=True)


def ge_coefficients(beta, *, dps=None):
    r"""The Gaussian-equivalence constants ``(θ1, θ2) = (e^{β²} − 1, β²)``.

    Parameters
    ----------
    beta : number, str or sympy expression
        Inverse temperature ``β ≥ 0`` of the softmax scores ``β q·k/√d_K``.  Floats are
        read as the decimal they print as; a sympy symbol gives symbolic constants.
    dps : int, optional
        If given, return ``mpmath.mpf`` values to ``dps`` significant digits instead of
        exact sympy expressions.

    Returns
    -------
    (theta1, theta2)
        ``θ1`` is the variance of ``n A_ab − 1`` (the coordinate variance) and ``θ2``
        the coefficient of its linear (first Hermite) part.

    Raises
    ------
    FreeprobValueError
        If ``β`` is negative, not real, or ``dps < 1``.

    Source: [HK26]_ §3 (GE theorem); theory.md §2 (Hermite expansion of ``e^{βg−β²/2}``).

    >>> ge_coefficients(1)
    (-1 + E, 1)
    >>> t1, t2 = ge_coefficients("0.5", dps=20)
    >>> print(mpmath.nstr(t1, 20), t2)
    0.28402541668774148407 0.25
    """
    b = as_exact(beta, "ge_coefficients", "beta")
    if b.is_real is False or (b.is_number and not b.is_real):
        raise FreeprobValueError(f"ge_coefficients: beta must be real and >= 0, got {beta!r}")
    if b.is_number and sign(b) < 0:
        raise FreeprobValueError(f"ge_coefficients: beta must be >= 0, got {beta!r}")
    if b.is_negative:
        raise FreeprobValueError(f"ge_coefficients: beta must be >= 0, got {beta!r}")
    b2 = b**2
    # a rational β² ≠ 1 as one generator (see ExpConstant); β = 1 keeps sympy's E
    t1 = (ExpConstant(b2) if b2.is_Rational else sp.exp(b2)) - 1
    t2 = b2
    if dps is None:
        return t1, t2
    dps = check_dps(dps, "ge_coefficients")
    if not b.is_number:
        raise FreeprobValueError("ge_coefficients: dps needs a numeric beta, got a symbol")
    with mpmath.workdps(dps + 10):
        bb = mpmath.mpf(sp.N(b, dps + 10))
        v1, v2 = mpmath.expm1(bb**2), bb**2
    with mpmath.workdps(dps):
        return +v1, +v2
