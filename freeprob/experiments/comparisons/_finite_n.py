r"""The finite-n prediction of the readout comparisons (issue 29).

The readout comparisons measure ridge errors and gradient-flow losses on the **uncentred**
features ``F = O_full/√m1`` (``O_full = O + 1bᵀ``, :mod:`freeprob.sampler.spectra`) of one
sampled layer.  The finite-n law of :mod:`freeprob.attention.finite_n` is the GE model's
expected spectral law of ``O O ᵀ`` at the layer's own sizes to order ``1/n`` (``G_c + G₁/n``,
exact-size limit tree plus the fluctuation term).  The common row ``1bᵀ`` changes the
spectrum at the same order, ``1/n``, which this module adds:

* given the values and ``W_O``, the rows of ``O`` are i.i.d. ``N(0, Σ_O)`` (the GE rows of
  ``M`` are, and ``O = MVW_O/√n``), and ``b = W_Oᵀ Vᵀ1/n`` depends on the values only through
  ``Vᵀ1``, which is independent of ``M V = M(I − P)V``.  Rotating the tokens so that
  ``1/√n`` is the first basis vector leaves the rows of ``O`` i.i.d.: ``FᵀF = (W + vvᵀ)/m1``
  with ``W`` the sample covariance of ``n − 1`` rows and ``v = o_1 + √n b`` (``o_1`` one more
  row), ``|v|² ≈ d_O`` far above the ``O(1)`` bulk;
* removing one row from ``n`` changes ``n G`` by ``−∂_z log(1 − oᵀ(z − W)⁻¹o) → 1/z +
  G'(z)/G(z)`` (Schur complement: the diagonal resolvent entry is ``1/(z(1 − oᵀ(z − W)⁻¹o))``
  and averages to ``G``), ``G`` the token-side limit law of ``OOᵀ/m1``;
* adding the outlier ``vvᵀ`` changes it by ``∂_z log(1 − |v|² q(z)) → q'(z)/q(z)`` near the
  bulk (one eigenvalue's worth of mass leaves it) plus the outlier's pole, ``q(z) =
  b̂ᵀ(z − W)⁻¹b̂``.  ``Vᵀ1`` is isotropic for independent heads, so with ``C`` the value-side
  Gram of ``MV`` and ``D = W_O W_Oᵀ`` (``H × H``, ``H = h d_V``, Wishart of ratio
  ``c = d_O/H``, free from ``C``), ``q(z) → tr_H[D(z − CD)⁻¹]/tr_H D``; multiplicative
  subordination with the S-transform ``1/(x + c)`` of ``D`` gives

  .. math::  q(z) = G_K(z)\,(z G_K(z) − 1 + c)/c,\qquad
             G_K(z) = (n/H)\,G(z) + (1 − n/H)/z

  (``K = CD`` has the non-zero spectrum of ``OOᵀ``).  Hence, to order ``1/n``,

  .. math::  G_F(z) = G_c(z) + \frac{G_1(z)}{n} + \frac1n\Big[\frac1z + \frac{G'(z)}{G(z)}
             + \frac{q'(z)}{q(z)} + \frac1{z − s}\Big],

  ``s`` the outlier (:func:`freeprob.attention.laws.common_row_spike`, in feature units).
  The bracket is checked against GE-sampled features (``err(F) − err(O)``) in
  ``tests/test_readout_finite_n.py``; the sampled ``q(−λ)`` matches the closed form, a
  generic direction's ``tr_{d_O}(z − FᵀF)⁻¹`` does not.

The readout quantities follow as in :mod:`freeprob.attention.readout`: ridge from ``G_F``
and ``G_F'`` at ``z = −λ`` (off the support, where the expansion is uniform; ``G_F'`` by the
complex step ``Im G_F(−λ + ih)/h``, ``h = 10⁻⁹λ``), the gradient-flow loss as
``(2πi)⁻¹∮ e^{−2tz} G_F(z) dz`` on an ellipse around the support (the contour rule of
:mod:`freeprob.attention.readout`) plus the outlier's ``e^{−2ts}/n``.

Covered: independent heads (``scheme="independent"``), untied (the finite-n law's numerics).
Not modelled: softmax itself (this is the GE model's expected law).

Source: docs/theory.md §13 (the 1/n term), §1 (the common row), §4 (readout);
Bai–Silverstein / Benaych-Georges–Nadakuditi for the rank-one perturbation; [MS17]_ §3.6
(multiplicative subordination).
"""
from __future__ import annotations

import functools
import math

import mpmath
import sympy as sp

from freeprob.attention.architecture import Architecture
from freeprob.errors import FreeprobValueError, NotAvailable

__all__ = ["FiniteNFeatures", "finite_n_features", "predicted_ridge_error_fn", "predicted_loss_fn"]


class FiniteNFeatures:
    r"""The expected token-side law of ``FFᵀ`` (``F = O_full/√m1``) of the GE model at the
    layer's sizes, to order ``1/n``, as a Cauchy transform (module docstring).

    Parameters
    ----------
    dims : freeprob.sampler.Dimensions
        Sized layer (integer ``n, d_K, d_V, d_O``), ``scheme="independent"``.
    beta : number or str
        Inverse temperature (exact).

    Attributes
    ----------
    n, gamma_o : int, sympy Rational
    m1 : float
        The feature scale (limit mean of ``out``), as :func:`_common.feature_law`.
    centred : freeprob.laws.finite_n.FiniteNLaw
        The GE model's finite-n law of ``O Oᵀ`` (unnormalised units).
    spike : mpf
        The outlier ``s`` in feature units.

    Raises
    ------
    FreeprobValueError
        Not a sized layer.
    NotAvailable
        A sharing scheme other than independent heads (the values' column means are not
        isotropic there, and tied values have no numeric finite-n law).

    Source: module docstring.
    """

    def __init__(self, dims, beta):
        from freeprob.attention.finite_n import finite_n_law
        from freeprob.attention.laws import common_row_spike
        from freeprob.experiments.comparisons._common import feature_law
        if not (isinstance(dims, Architecture) and dims.sized):
            raise FreeprobValueError(f"finite-n features: expected freeprob.sampler.Dimensions, got {dims!r}")
        if dims.scheme != "independent":
            raise NotAvailable(f"finite-n features: only independent heads are covered; got scheme={dims.scheme!r} "
                               "(shared or tied values make the common row's direction non-isotropic, and tied "
                               "values have no numeric finite-n law)")
        arch = dims.with_beta(str(beta))
        self.dims, self.n = dims, dims.n
        self.gamma_o = sp.Rational(dims.d_o, dims.n)
        self.limit, self.m1 = feature_law(dims, beta)          # the ratio limit in feature units
        self.centred = finite_n_law(arch, "out")
        self._h_over_n = mpmath.mpf(dims.heads * dims.d_v) / dims.n
        self._c = mpmath.mpf(dims.d_o) / (dims.heads * dims.d_v)
        self.spike = mpmath.mpf(sp.N(common_row_spike(arch.ratios(), dims.n), 30)) / self.m1

    # -- pieces ---------------------------------------------------------------------
    def centred_cauchy(self, z, dps):
        """``G_c(z) + G₁(z)/n`` of ``OOᵀ/m1`` (mpc; ``Im z > 0``)."""
        m1 = mpmath.mpf(self.m1)
        return m1 * self.centred.cauchy(m1 * mpmath.mpc(z), dps=dps)

    def common_row_term(self, z, dps):
        r"""``1/z + G'(z)/G(z) + q'(z)/q(z)`` (mpc; ``Im z > 0``) from the ratio limit law
        (module docstring)."""
        from freeprob.laws.finite_n_eval import derivatives
        with mpmath.workdps(dps + 10):
            z = mpmath.mpc(z)
            g = mpmath.mpc(self.limit.cauchy(z, dps=dps + 10))
            dg, _ = derivatives(self.limit, z, g)
            r = 1 / self._h_over_n                          # n/H
            gk = r * g + (1 - r) / z
            dgk = r * dg - (1 - r) / z ** 2
            # the first row (along 1) leaves the (n − 1)-row sample covariance: 1/z + G'/G;
            # the outlier takes one eigenvalue's worth of it: q'/q
            return 1 / z + dg / g + dgk / gk + (gk + z * dgk) / (z * gk - 1 + self._c)

    def cauchy(self, z, *, dps=None):
        r"""``G_F(z)`` without the outlier's pole: the bulk part (mpc; ``z`` off the support,
        ``G(z̄) = conj G(z)`` below the real axis)."""
        dps = dps or 15
        z = mpmath.mpc(z)
        if z.imag < 0:
            return mpmath.conj(self.cauchy(mpmath.conj(z), dps=dps))
        with mpmath.workdps(dps + 10):
            return self.centred_cauchy(z, dps + 10) + self.common_row_term(z, dps + 10) / self.n

    # -- hull for the contour rule --------------------------------------------------------
    def hull(self):
        """``[a, b]`` (mpf) containing the supports and atoms of the centred finite-n law (feature units)
        and of the ratio limit law (where ``q`` is singular)."""
        pts = []
        m1 = mpmath.mpf(self.m1)
        for law, scale in ((self.centred, 1 / m1), (self.limit, mpmath.mpf(1))):
            for a, b in law.support(dps=20):
                pts += [mpmath.mpf(sp.N(a, 20)) * scale, mpmath.mpf(sp.N(b, 20)) * scale]
            pts += [mpmath.mpf(sp.N(x, 20)) * scale for x, _ in law.atoms(dps=20)]
        return min(pts), max(pts)


@functools.lru_cache(maxsize=64)
def _cached(dims, beta):
    return FiniteNFeatures(dims, beta)


def finite_n_features(dims, beta) -> FiniteNFeatures:
    """:class:`FiniteNFeatures` of ``dims`` at ``β``, cached by the sizes, scheme and ``β``
    (its exact-size law tree's Cauchy equation costs seconds to minutes once).  Raises as the class.
    Source: docs/theory.md §13.7, §13.9."""
    return _cached(dims, str(beta))


def predicted_ridge_error_fn(dims, beta, penalty, noise, *, dps=8):
    r"""``E|ŵ − w*|²/d_O`` predicted from the finite-n law of the features
    (:class:`FiniteNFeatures`): ``∫ (λ² + σ²x)/(x+λ)² dμ_feat`` with the token-side
    ``G_F(−λ)``, ``G_F'(−λ)`` (complex step) and the feature-side conversion of
    :func:`freeprob.attention.readout.ridge_error_terms` (exact at finite sizes: the non-zero
    spectra of ``FFᵀ`` and ``FᵀF`` agree).  Returns a float.

    Raises ``FreeprobValueError`` (``λ ≤ 0``, ``σ < 0``) and as :class:`FiniteNFeatures`.
    Source: module docstring; docs/theory.md §4."""
    lam, sig = float(penalty), float(noise)
    if not (lam > 0 and math.isfinite(lam)) or not (sig >= 0 and math.isfinite(sig)):
        raise FreeprobValueError(f"predicted_ridge_error_fn: need penalty > 0 and noise ≥ 0; got {penalty!r}, "
                                 f"{noise!r}")
    feats = finite_n_features(dims, beta)
    work = dps + 25 + max(0, int(math.ceil(-math.log10(lam))))
    with mpmath.workdps(work):
        lam_m = mpmath.mpf(penalty)
        h = lam_m * mpmath.mpf(10) ** -9
        val = feats.cauchy(mpmath.mpc(-lam_m, h), dps=work)
        s = feats.spike
        g = mpmath.re(val) + 1 / (feats.n * (-lam_m - s))            # the outlier's atom 1/n at s
        dg = mpmath.im(val) / h - 1 / (feats.n * (lam_m + s) ** 2)
        i1_tok, i2_tok = -g, -dg
        w = 1 / mpmath.mpf(sp.N(feats.gamma_o, work))
        i1 = w * i1_tok + (1 - w) / lam_m
        i2 = w * i2_tok + (1 - w) / lam_m ** 2
        err = lam_m ** 2 * i2 + mpmath.mpf(noise) ** 2 * (i1 - lam_m * i2)
    return float(err)


def predicted_loss_fn(dims, beta, times, *, dps=8):
    r"""``E tr e^{−2tFFᵀ}/n`` (the spectral average of the gradient-flow loss) predicted from
    the finite-n law of the features, at each ``t`` in ``times`` (list of float): the contour
    integral ``(2πi)⁻¹∮ e^{−2tz} G_F(z) dz`` around the bulk plus the outlier's ``e^{−2ts}/n``;
    and the loss of a target ``y ⟂ 1`` averaged over its direction,
    ``tr[(I − P)e^{−2tFFᵀ}]/(n − 1)``, which is ``n/(n − 1)`` times the spectral average without
    the outlier's term to order ``1/n`` (the direction ``1`` is the outlier's eigenvector up to
    ``O(1/d_O)``, so ``1ᵀe^{−2tFFᵀ}1/n = O(1/n)``).  Returns ``{"spectral": [...], "centred":
    [...]}`` (floats), both from one contour rule.

    Raises as :class:`FiniteNFeatures`; :class:`freeprob.errors.PrecisionError` if the
    contour rule does not converge.  Source: module docstring; docs/theory.md §4."""
    from freeprob.attention.readout import _ContourRule
    feats = finite_n_features(dims, beta)
    ts = [mpmath.mpf(t) for t in times]
    if any(not t > 0 for t in ts):
        raise FreeprobValueError(f"predicted_loss_fn: times must be > 0; got {times!r}")
    rule = _ContourRule(feats, max(ts), dps, feats.hull())
    vals = rule.laplace(ts)
    with mpmath.workdps(dps + 10):
        return dict(spectral=[float(v + mpmath.exp(-2 * t * feats.spike) / feats.n) for v, t in zip(vals, ts)],
                    centred=[float(v * feats.n / (feats.n - 1)) for v in vals])
