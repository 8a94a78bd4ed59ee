r"""Finite-n readout measurements on sampled features (numpy float64; sampler layer).

The measured counterparts of :mod:`freeprob.attention.readout` on a feature matrix ``F``
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

from freeprob._checks import check_real
from freeprob.errors import FreeprobValueError
from freeprob.sampler.arrays import real_array

__all__ = ["measured_loss_curve", "measured_ridge_error", "measured_effective_dof"]


def _features(f, who):
    a = real_array(f, f"{who}: features", ndim=2, layout="(n × d_O)")
    # Gram entries must stay finite in float64 (|F|² ≤ 1e300)
    if float(np.max(np.abs(a))) > math.sqrt(1e300 / max(a.shape)):
        raise FreeprobValueError(f"{who}: features are too large for a float64 Gram matrix "
                                 f"(max |F_ij| = {float(np.max(np.abs(a))):.3g}); rescale them")
    return a


def _positive(v, who, name, allow_zero=False):
    return check_real(v, who, f"`{name}`", minimum=0, strict=not allow_zero)


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
    y = real_array(target, f"{who}: target (a vector of length n = {f.shape[0]})", shape=(f.shape[0],))
    ny = np.linalg.norm(y)
    if ny == 0:
        raise FreeprobValueError(f"{who}: target must be non-zero")
    cos = abs(y.sum()) / (np.sqrt(y.size) * ny)
    if cos > orthogonality_tol:
        raise FreeprobValueError(
            f"{who}: target is not orthogonal to the all-ones vector (|1ᵀy|/(√n|y|) = {cos:.3g}); the laws "
            "predict the loss of centred targets: use y − y.mean()")
    ts = real_array(t, f"{who}: times (real numbers ≥ 0)", nonempty=False, finite=False)
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
