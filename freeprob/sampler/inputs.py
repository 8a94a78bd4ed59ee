r"""General (non-orthonormal) inputs for the sampler: token matrices ``X`` (``n × d``) with a
prescribed input Gram ``C = X Xᵀ/d`` and the projections ``Q = X W_Q`` etc. they induce.

numpy only (the sampler layer).  The baseline of the paper (theory.md §1) has
``X Xᵀ = d I``; here the Gram ``C`` is general and normalised to mean one,
``tr C/n = 1`` (the average token has squared norm ``d``), so that the score variance
``β² |q_a|²|k_b|²/d_K²`` averages to ``β²`` as in the baseline.  Kinds
(:data:`INPUT_KINDS`; the limiting Gram law ``ν_X`` of each is in theory.md §10):

* ``"orthonormal"``: ``X = √d U``, ``U`` Haar with orthonormal rows (needs ``n ≤ d``);
  ``ν_X = δ_1``.
* ``"gaussian"``: iid ``N(0, 1)`` tokens, ``C = X Xᵀ/d``; ``n ≤ d`` or ``n > d``
  (rank ``d``); ``ν_X = MP(n/d)``.
* ``"ar1"``: correlated tokens with Toeplitz Gram ``C_ab = ρ^{|a−b|}`` (AR(1) along the
  sequence): ``X = C^{1/2} G`` with ``G`` iid ``N(0, 1)`` (``n × d``), rescaled so that
  ``tr(XXᵀ/d) = n``; ``ν_X`` the Szegő law of the symbol
  ``f(ω) = (1 − ρ²)/(1 − 2ρ cos ω + ρ²)`` composed with ``MP(n/d)``.
* ``"lowrank"``: low-rank-plus-noise tokens ``X = √(1−s) G + √(s/r) A Bᵀ`` with
  ``G`` (``n × d``), ``A`` (``n × r``), ``B`` (``d × r``) iid ``N(0, 1)``: ``r`` shared
  topic directions carrying a fraction ``s`` of every token's energy; ``ν_X`` is
  ``(1 − s) MP(n/d)`` plus ``r`` outliers (of vanishing mass).

Source: docs/theory.md §10 (issue 19; the paper's open question §6.2 on general inputs).
"""
from __future__ import annotations

import math

import numpy as np

from freeprob.errors import FreeprobValueError
from freeprob.sampler.arrays import real_array
from freeprob.sampler.model import Weights, _draw_matrix, _haar_columns, _layer, _rng

__all__ = ["INPUT_KINDS", "input_matrix", "input_from_gram_spectrum", "input_gram_spectrum",
           "weights_from_inputs"]

#: the kinds of :func:`input_matrix`
INPUT_KINDS = ("orthonormal", "gaussian", "ar1", "lowrank")


def _size(value, owner, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise FreeprobValueError(f"`{name}` of `{owner}` must be an integer ≥ 1; got {value!r}")
    return int(value)


def _unit_interval(value, owner, name, *, closed_low=True):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise FreeprobValueError(f"`{name}` of `{owner}` must be a real number; got {value!r}") from None
    ok = (0.0 <= v < 1.0) if closed_low else (0.0 < v < 1.0)
    if not (math.isfinite(v) and ok):
        raise FreeprobValueError(f"`{name}` of `{owner}` must lie in {'[0' if closed_low else '(0'}, 1); "
                                 f"got {value!r}")
    return v


def _mean_one(x):
    """``x`` rescaled so that ``tr(x xᵀ/d)/n = 1``."""
    n, d = x.shape
    return x * math.sqrt(n * d / float(np.einsum("ij,ij->", x, x)))


def toeplitz_ar1(n, rho):
    """The ``n × n`` Toeplitz matrix ``ρ^{|a−b|}`` (the AR(1) correlation)."""
    idx = np.arange(n)
    return rho ** np.abs(idx[:, None] - idx[None, :])


def input_matrix(kind, n, d, *, rng, rho=0.5, rank=4, spike=0.5):
    r"""A token matrix ``X`` (``n × d``) of the given kind, ``tr(X Xᵀ/d) = n``.

    Parameters
    ----------
    kind : {"orthonormal", "gaussian", "ar1", "lowrank"}
        See the module docstring.
    n, d : int ≥ 1
        Tokens and input features; ``"orthonormal"`` needs ``n ≤ d``.
    rng : numpy.random.Generator
        Keyword-only.
    rho : float in [0, 1)
        AR(1) correlation of ``"ar1"``.
    rank : int ≥ 1
        Number of shared directions of ``"lowrank"``.
    spike : float in [0, 1)
        Energy fraction ``s`` of the shared directions of ``"lowrank"``.

    Returns
    -------
    ndarray, shape ``(n, d)``, float64.

    Raises
    ------
    FreeprobValueError
        Unknown kind; sizes not integers ≥ 1; ``n > d`` for ``"orthonormal"``; ``rho`` or
        ``spike`` outside ``[0, 1)``; ``rng`` not a Generator.

    Source: theory.md §10 (input kinds and their Gram laws).

    Examples
    --------
    >>> import numpy as np
    >>> x = input_matrix("ar1", 8, 16, rng=np.random.default_rng(0), rho=0.5)
    >>> x.shape, round(float(np.trace(x @ x.T) / 16), 9)
    ((8, 16), 8.0)
    """
    owner = "input_matrix"
    if kind not in INPUT_KINDS:
        raise FreeprobValueError(f"`kind` of `{owner}` must be one of {', '.join(INPUT_KINDS)}; got {kind!r}")
    n, d = _size(n, owner, "n"), _size(d, owner, "d")
    rng = _rng(rng, owner)
    if kind == "orthonormal":
        if n > d:
            raise FreeprobValueError(f"`{owner}`: orthonormal tokens need n ≤ d; got n={n}, d={d}")
        return math.sqrt(d) * _haar_columns(d, n, rng).T
    if kind == "gaussian":
        return _mean_one(rng.standard_normal((n, d)))
    if kind == "ar1":
        rho = _unit_interval(rho, owner, "rho")
        c = toeplitz_ar1(n, rho)
        lower = np.linalg.cholesky(c)                        # C = L Lᵀ: rows of L G have covariance C
        return _mean_one(lower @ rng.standard_normal((n, d)))
    rank = _size(rank, owner, "rank")
    s = _unit_interval(spike, owner, "spike")
    g = rng.standard_normal((n, d))
    a = rng.standard_normal((n, rank))
    b = rng.standard_normal((d, rank))
    return _mean_one(math.sqrt(1.0 - s) * g + math.sqrt(s / rank) * (a @ b.T) / math.sqrt(1.0))


def input_from_gram_spectrum(eigenvalues, d, *, rng):
    r"""A token matrix ``X`` (``n × d``) whose Gram ``X Xᵀ/d`` has the given spectrum and
    Haar eigenvectors: ``X = √d U diag(√λ) Oᵀ`` (``U`` Haar ``n × n``, ``O`` Haar with
    orthonormal columns, ``d × n``).

    Parameters
    ----------
    eigenvalues : array_like, shape ``(n,)``
        The ``n`` Gram eigenvalues, finite and ``≥ 0``; at most ``d`` of them positive.
        Not rescaled (pass mean-one values for the mean-one convention).
    d : int ≥ 1
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape ``(n, d)``

    Raises
    ------
    FreeprobValueError
        Negative, non-finite or empty eigenvalues; more than ``d`` positive ones.

    Source: theory.md §10 (a Gram with limiting law ν_X and Haar eigenvectors).
    """
    owner = "input_from_gram_spectrum"
    lam = real_array(eigenvalues, f"`eigenvalues` of `{owner}`", ndim=1)
    d = _size(d, owner, "d")
    rng = _rng(rng, owner)
    if np.any(lam < 0):
        raise FreeprobValueError(f"`eigenvalues` of `{owner}` must be ≥ 0; got min {lam.min()!r}")
    n = lam.size
    pos = int(np.count_nonzero(lam > 0))
    if pos > d:
        raise FreeprobValueError(f"`{owner}`: {pos} positive eigenvalues need d ≥ {pos}; got d={d}")
    u = _haar_columns(n, n, rng)
    r = min(n, d)
    order = np.argsort(lam)[::-1][:r]                      # the (at most d) largest carry the rank
    o = _haar_columns(d, r, rng)
    return math.sqrt(d) * (u[:, order] * np.sqrt(lam[order])) @ o.T


def input_gram_spectrum(x):
    r"""The ``n`` eigenvalues (ascending) of the input Gram ``X Xᵀ/d`` of ``x`` (``n × d``).

    Raises ``FreeprobValueError`` for a non-2-d, empty or non-finite ``x``.
    Source: theory.md §10."""
    x = real_array(x, "`x` of `input_gram_spectrum`", ndim=2)
    n, d = x.shape
    if d >= n:
        return np.clip(np.linalg.eigvalsh(x @ x.T / d), 0.0, None)
    small = np.clip(np.linalg.eigvalsh(x.T @ x / d), 0.0, None)
    return np.concatenate([np.zeros(n - d), small])


def weights_from_inputs(dims, x, *, rng, value_weights="gaussian", output_weights="gaussian"):
    r"""Projections of general inputs: ``Q_i = X W_Q^i``, ``K_i = X W_K^i``, ``V_i = X W_V^i``
    with fan-in weights ``W ~ N(0, 1/d)`` (``d = x.shape[1]``), and ``W_O`` as in
    :func:`freeprob.sampler.draw_weights`.

    Given ``X``, the rows of ``Q`` are correlated through the input Gram: ``Q`` has the law
    of ``C^{1/2} G`` (``G`` iid ``N(0, 1)``, ``n × d_K``), ``C = X Xᵀ/d``.  With orthonormal
    inputs this is the baseline (``input="explicit"`` of ``draw_weights``).

    Parameters
    ----------
    dims : Dimensions
        Its ``n`` must be ``x.shape[0]``; its ``d`` is ignored (``x`` fixes the input width,
        which may be below ``n``).
    x : array_like, shape ``(n, d)``
    rng : numpy.random.Generator
    value_weights, output_weights : {"gaussian", "rademacher", "orthogonal"}
        As in :func:`freeprob.sampler.draw_weights`.

    Returns
    -------
    Weights
        With ``x`` set.  Shared keys/values (GQA, shared keys, tied) as in ``draw_weights``.

    Raises
    ------
    FreeprobValueError
        ``dims`` not a layer of sizes; ``x`` not a finite ``n × d`` array; bad ``rng`` or
        weight kinds; non-Gaussian values with ``scheme="tied"``.

    Source: theory.md §1 ("Inputs and weights"), §10.
    """
    owner = "weights_from_inputs"
    _layer(dims, owner)
    rng = _rng(rng, owner)
    x = real_array(x, f"`x` of `{owner}`", ndim=2)
    if x.shape[0] != dims.n:
        raise FreeprobValueError(f"`x` of `{owner}` must have n = {dims.n} rows; got shape {x.shape}")
    for name, kind in (("value_weights", value_weights), ("output_weights", output_weights)):
        if kind not in ("gaussian", "rademacher", "orthogonal"):
            raise FreeprobValueError(f"`{name}` of `{owner}` must be gaussian, rademacher or orthogonal; "
                                     f"got {kind!r}")
    if dims.scheme == "tied" and value_weights != "gaussian":
        raise FreeprobValueError(f"`value_weights` of `{owner}` must be 'gaussian' for scheme 'tied'")
    d = x.shape[1]
    h, gk, gv = dims.heads, dims.key_groups, dims.value_groups
    std = 1.0 / math.sqrt(d)
    q = x @ (std * rng.standard_normal((h, d, dims.d_k)))
    k = x @ (std * rng.standard_normal((gk, d, dims.d_k)))
    if gk != h:
        k = k[dims.key_group_of_head()]
    if dims.scheme == "tied":
        v = k.copy()
    else:
        w_v = _draw_matrix(value_weights, (d, gv * dims.d_v), std, rng)
        v = (x @ w_v).reshape(dims.n, gv, dims.d_v).transpose(1, 0, 2)
        v = np.ascontiguousarray(v[dims.value_group_of_head()]) if gv != h else np.ascontiguousarray(v)
    w_o = _draw_matrix(output_weights, (h * dims.d_v, dims.d_o), 1.0 / math.sqrt(h * dims.d_v), rng)
    return Weights(dims=dims, q=np.ascontiguousarray(q), k=np.ascontiguousarray(k), v=v, w_o=w_o, x=x)
