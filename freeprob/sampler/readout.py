r"""Finite-n readout measurements on sampled features (numpy float64; sampler layer).

The measured counterparts of :mod:`freeprob.readout` on a feature matrix ``F``
(``n × d_O``, e.g. the ``out`` or ``out_full`` factor of :func:`freeprob.sampler.sample_objects`
divided by ``√m1``), docs/theory.md §4:

* :func:`measured_loss_curve`: gradient flow on ``L(w) = ½|Fw − y|²`` from ``w = 0``,
  ``dw/dt = −∇L``, solved through the eigendecomposition of ``F Fᵀ``:
  ``L(t)/L(0) = Σ_i e^{−2tλ_i} (u_iᵀy)²/|y|²``;
* :func:`measured_ridge_error`: ``E_{w*, ε}|ŵ − w*|²/d_O`` given ``F`` for ridge with an
  isotropic teacher ``y = Fw* + σε`` (closed form ``(λ² tr (S+λ)^{−2} + σ² tr S(S+λ)^{−2})/d_O``,
  ``S = FᵀF``);
* :func:`measured_effective_dof`: ``tr S(S+λ)^{−1}/d_O``.

The mean and confidence interval over initialisations (``mean_interval``) are in
:mod:`freeprob.experiments.stats`.
"""
from __future__ import annotations

import math

import numpy as np

from freeprob.errors import FreeprobValueError

__all__ = ["measured_loss_curve", "measured_ridge_error", "measured_effective_dof"]


def _features(f, who):
    try:
        raw = np.asarray(f)
        a = None if np.iscomplexobj(raw) else np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise FreeprobValueError(f"{who}: features must be a real 2-d array (n × d_O)") from None
    if a is None:
        raise FreeprobValueError(f"{who}: features must be real; got a complex array")
    if a.ndim != 2 or a.size == 0:
        raise FreeprobValueError(f"{who}: features must be a non-empty 2-d array (n × d_O); got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise FreeprobValueError(f"{who}: features contain NaN or infinite entries")
    # Gram entries must stay finite in float64 (|F|² ≤ 1e300)
    if float(np.max(np.abs(a))) > math.sqrt(1e300 / max(a.shape)):
        raise FreeprobValueError(f"{who}: features are too large for a float64 Gram matrix "
                                 f"(max |F_ij| = {float(np.max(np.abs(a))):.3g}); rescale them")
    return a


def _positive(v, who, name, allow_zero=False):
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise FreeprobValueError(f"{who}: `{name}` must be a real number; got {v!r}") from None
    if not np.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        raise FreeprobValueError(f"{who}: `{name}` must be {'≥ 0' if allow_zero else '> 0'} and finite; got {v!r}")
    return x


def measured_loss_curve(features, target, t, *, orthogonality_tol=1e-8):
    r"""``L(t)/L(0)`` of gradient flow on ``½|Fw − y|²`` from ``w = 0`` (unit learning rate).

    Parameters
    ----------
    features : array, shape ``(n, d_O)``
    target : array, shape ``(n,)``, non-zero and orthogonal to the all-ones vector
        (the laws describe the centred directions; the common direction ``1`` carries the
        rank-one spike of the uncentred output, docs/theory.md §1, §4).
    t : real ``≥ 0`` or 1-d array of them
    orthogonality_tol : float
        Largest accepted ``|1ᵀy|/(√n |y|)``.

    Returns
    -------
    float or ndarray like ``t``

    Raises
    ------
    FreeprobValueError
        Bad shapes, a zero target, a target not orthogonal to ``1`` (the message gives
        ``|1ᵀy|/(√n|y|)`` and how to project it out), negative or non-finite ``t``.

    Source: docs/theory.md §4.
    """
    who = "measured_loss_curve"
    f = _features(features, who)
    y = np.asarray(target, dtype=float)
    if y.shape != (f.shape[0],) or not np.all(np.isfinite(y)):
        raise FreeprobValueError(f"{who}: target must be a finite vector of length n = {f.shape[0]}; "
                                 f"got shape {y.shape}")
    ny = np.linalg.norm(y)
    if ny == 0:
        raise FreeprobValueError(f"{who}: target must be non-zero")
    cos = abs(y.sum()) / (np.sqrt(y.size) * ny)
    if cos > orthogonality_tol:
        raise FreeprobValueError(
            f"{who}: target is not orthogonal to the all-ones vector (|1ᵀy|/(√n|y|) = {cos:.3g}); the laws "
            "predict the loss of centred targets: use y − y.mean()")
    try:
        ts = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise FreeprobValueError(f"{who}: times must be real numbers ≥ 0; got {t!r}") from None
    if ts.ndim > 1 or not np.all(np.isfinite(ts)) or np.any(ts < 0):
        raise FreeprobValueError(f"{who}: times must be finite and ≥ 0; got {t!r}")
    lam, u = np.linalg.eigh(f @ f.T)
    w = (u.T @ y) ** 2 / ny ** 2
    lam = np.clip(lam, 0.0, None)
    out = np.exp(-2.0 * np.multiply.outer(ts, lam)) @ w
    return float(out) if np.ndim(t) == 0 else out


def _feature_spectrum(f):
    s = np.linalg.eigvalsh(f.T @ f) if f.shape[1] <= f.shape[0] else np.concatenate(
        [np.linalg.eigvalsh(f @ f.T), np.zeros(f.shape[1] - f.shape[0])])
    return np.clip(s, 0.0, None)


def measured_ridge_error(features, penalty, noise):
    r"""``E_{w*, ε}|ŵ − w*|²/d_O`` given ``F`` for ridge ``ŵ = (FᵀF + λI)^{−1}Fᵀy``,
    ``y = Fw* + σε``, ``w* ~ N(0, I)``, ``ε ~ N(0, I)``.

    Returns ``(λ² tr (S+λ)^{−2} + σ² tr S(S+λ)^{−2})/d_O``, ``S = FᵀF`` (float).

    Raises
    ------
    FreeprobValueError
        Bad features, ``penalty ≤ 0``, ``noise < 0``.

    Source: docs/theory.md §4.
    """
    who = "measured_ridge_error"
    f = _features(features, who)
    lam = _positive(penalty, who, "penalty")
    sig = _positive(noise, who, "noise", allow_zero=True)
    s = _feature_spectrum(f)
    return float(np.mean((lam ** 2 + sig ** 2 * s) / (s + lam) ** 2))


def measured_effective_dof(features, penalty):
    r"""``tr S(S+λ)^{−1}/d_O`` for ``S = FᵀF`` (float in ``[0, 1]``).

    Raises ``FreeprobValueError`` for bad features or ``penalty ≤ 0``.  Source: docs/theory.md §4.
    """
    who = "measured_effective_dof"
    f = _features(features, who)
    lam = _positive(penalty, who, "penalty")
    s = _feature_spectrum(f)
    return float(np.mean(s / (s + lam)))
