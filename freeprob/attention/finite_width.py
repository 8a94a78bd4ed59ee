r"""Finite-width laws of multi-head softmax attention (issue 18; theory.md §7 F1–F3).

The Gaussian-equivalent (GE) laws of :mod:`freeprob.attention.laws` are exact in the
proportional limit.  At real head widths (``d_K`` = 32–128, ``n ≤ 2048``) softmax
differs from them by three effects (theory.md §7); this module puts the first and the
third into the laws, :mod:`freeprob.attention.spikes` predicts the second as an outlier.

**Chaos at finite width (F1).**  Given the keys, the rows of ``n A⊥`` are i.i.d. with
covariance ``Σ``.  The centred score nonlinearity ``e^{βg − β²r/2} − 1``
(``g = q·k/√d_K``, ``r = |q|²/d_K``) splits into Hermite chaoses; the ``k``-th is the
Gram of the degree-``k`` symmetric tensors of the keys, of rank
``D_k = C(d_K + k − 1, k)`` (:func:`chaos_dimension`).  In the polynomial-scaling
regime the ``k``-th chaos of an inner-product kernel matrix behaves as an independent
Wishart matrix of aspect ratio ``n/D_k`` ([LY22]_, "An equivalence principle for
the spectrum of random inner-product kernel matrices with polynomial scalings").  The
GE keeps ``k = 1`` and replaces ``k ≥ 2`` by white noise, which is right only when
``D_k ≫ n``.  Here the row covariance law is

.. math:: ρ^{fw} = c\,\Bigl[\boxplus_{k=1}^{L} w_k\,\mathrm{MP}\bigl(n/D_k + ε_k\bigr)
          \;+\; \Bigl(θ_1 − \sum_{k\le L} w_k\Bigr)\Bigr],\qquad c = θ_1^{emp}/θ_1,

the pieces taken free (the freeness hypothesis; checked numerically in
``derivations/finite_width.py``), with

* ``w_k = β^{2k}/k!`` the Hermite variance of the ``k``-th chaos (``w_1 = θ2``), and
  the chaoses above ``L`` (default :data:`DEFAULT_LEVELS` = 2) lumped into the shift
  (white noise, as in the GE), every piece then scaled by ``θ1^{emp}/θ1``: ``θ1^{emp}``
  is the exact bulk coordinate variance at the layer's ``n`` and ``d_K`` under the
  empirical softmax normaliser (:mod:`freeprob.attention.normaliser`, issue 29), so the
  mean of ``ρ^{fw}`` is ``θ1^{emp}`` (:func:`chaos_weights`; ``variance="limit"`` keeps
  ``θ1``; ``variance="expected"``, or ``exact_variance=True``, uses the finite-``d_K``
  variances ``β^{2k} m_k/k!`` and ``θ1^{fw} = (1 − 2β²/d_K)^{−d_K/2} − 1`` of theory.md §7
  F3, the expected normaliser's, which overshoots softmax);
* ``ε_k`` the variance of the norm factors of the tensor features (F3, the
  "elliptical" part): the ``k``-th chaos of row ``a`` and column ``b`` scales with
  ``r_a^{k/2} s_b^{k/2}`` (``r, s ~ χ²_{d_K}/d_K``), a left and a right diagonal factor
  of relative variance ``v_k = m_{2k}/m_k² − 1`` each (``m_k = E r^k``).  A pure chaos
  ``D_r^{1/2} W D_s^{1/2}`` has Gram law ``ν_r ⊠ ν_s ⊠ …``; both factors are moved into
  ``ρ`` as one mean-one factor of variance ``ε_k = (1 + v_k)² − 1``
  (:func:`norm_factor_variance`), and ``MP(ε_k) ⊠ MP(n/D_k)`` is replaced by the
  ``MP(n/D_k + ε_k)`` of the same mean and variance, which keeps the Cauchy equations
  of low degree (the ⊠ form fits ≈ 0.1 point of relW1 better at ``d_K = 32`` but
  doubles the degree).  For ``k = 1`` the factors are those of Gaussian vectors,
  already inside ``MP(n/d_K)``: ``ε_1 = 0``.

**Row-norm factor (F3).**  The row norms of ``√n A⊥`` fluctuate more than the chaos
pieces account for: the same query norm ``r_a`` scales every chaos of row ``a``, and the
entries are heavy-tailed (``E f⁴ ≈ e^{6β²}``).  Both act on the second moment as a left
diagonal factor of relative variance ``v`` (:func:`row_norm_variance`), applied to each
object as ``⊠ MP(v/h')`` with ``h'`` the number of heads whose independent queries mix
in a row (:func:`with_row_factor`; capped at variance 1/2, beyond which heavy tails
dominate and the laws are not claimed, :func:`row_factor_variance`).

Every object (concatenation, head sum, value and output projections, each sharing
scheme) then follows by the free-probability steps of the limit, with ``ρ_{c_K}``
replaced by ``ρ^{fw}``: ``π(ρ^{fw}, 1)``, ``h⁻¹ π(ρ^{fw}, h)``, ``π(μ_B, c_V)`` with
``μ_B = c_V π(ρ^{fw}, 1/c_V)`` …, then the row factor.  The head sum of ``h`` heads with
``g`` distinct key matrices averages ``g`` free copies of each chaos Wishart (ratio
``n/(g D_k)``) and ``h/g`` independent row factors per key
(:func:`finite_width_row_covariance_law`).  Within-head tying (``V_i = K_i``) keeps the
limit construction (the pushforward of ``MP(c_K)`` by ``φ_KV``): its chaoses
``k ≥ 2`` are not functions of ``K_i K_iᵀ`` and are kept as white noise; only the row
factor is added.

The key-norm spike (F2) and the predicted top eigenvalue of each object are in
:mod:`freeprob.attention.spikes`.

**Symbolic sizes.**  ``n``, ``d_K``, ``d_V``, ``d_O`` may be positive sympy symbols
(:meth:`Architecture.from_dimensions`): ``D_k`` is then a polynomial, ``m_k`` and ``ε_k``
rational functions of ``d_K``, ``θ1^{fw}`` a power with a symbolic exponent (a generator of
the exact coefficient field), and the row-factor variance, which needs numbers (truncation,
rounding, cap), the unevaluated :class:`RowFactorVariance` that becomes the integer layer's
rational on substitution: ``law.subs({d_K: 32})`` is exactly the law at ``d_K = 32``.
Moments, cumulants, transforms and Cauchy equations are exact; numerics (density, support,
``dps=``) refuse a law with symbols ("use law.subs({...}) first").  A symbolic ``β`` together
with a symbolic size is refused (the exact series took minutes).

References: theory.md §2, §3, §7 ([THEORY]_); [HK26]_; [LY22]_ (Lu & Yau 2022);
[BGN12]_.
"""
from __future__ import annotations

import math

import sympy as sp

from freeprob.attention.architecture import Architecture
from freeprob.errors import FreeprobValueError
from freeprob.laws.families import Dirac, MarchenkoPastur
from freeprob.laws.law import Law
from freeprob.laws.operations import dilate, free_add, free_mul, shift

__all__ = ["DEFAULT_LEVELS", "chaos_dimension", "norm_moment", "chaos_weights",
           "finite_width_theta1", "norm_factor_variance", "finite_width_row_covariance_law", "finite_width_rho_parts",
           "row_norm_variance", "row_factor_variance", "MAX_ROW_FACTOR_VARIANCE", "with_row_factor",
           "RowFactorVariance", "ROW_FACTOR_DIGITS", "VARIANCES", "DEFAULT_VARIANCE"]

#: chaos levels kept as Wishart pieces by default (the rest is lumped into the shift)
DEFAULT_LEVELS = 2


def _sized(arch, owner, *, numeric=False):
    """``β`` of a layer with sizes and ``beta`` (sympy); ``numeric=True`` also refuses
    symbolic sizes (for results that need numbers, e.g. the top eigenvalue)."""
    if not isinstance(arch, Architecture):
        raise FreeprobValueError(f"{owner}: expected an Architecture, got {type(arch).__name__}")
    if not arch.sized:
        raise FreeprobValueError(
            f"{owner}: the finite-width laws and the key-norm spike need absolute widths (n, d_K, d_V, d_O); "
            f"build the layer "
            f"with Architecture.from_dimensions(n=..., heads=..., d_k=..., d_v=..., d_o=..., beta=...); "
            f"got {arch!r}")
    if arch.beta is None:
        raise FreeprobValueError(
            f"{owner}: the finite-width laws need beta (the chaos weights are powers of beta^2, not "
            f"functions of theta1, theta2); got beta=None in {arch!r}")
    b = sp.sympify(arch.beta)
    symbolic = [k for k in ("n", "d_k", "d_v", "d_o") if _is_symbolic(sp.sympify(getattr(arch, k)))]
    if numeric and (symbolic or not b.is_number):
        raise FreeprobValueError(
            f"{owner}: needs numbers for the sizes and beta; got symbolic {', '.join(symbolic) or 'beta'} in "
            f"{arch!r}; substitute numbers (Architecture.from_dimensions with integers)")
    if not b.is_number and any(_is_symbolic(sp.sympify(v)) for v in (arch.n, arch.d_k, arch.d_v, arch.d_o)):
        # measured: m2 of the single-head law took ~40 s (the row-norm factor's
        # (1 − 4β²/d_K)^(−d_K/2), e^(6β²), … leave the fast exact rings)
        raise FreeprobValueError(
            f"{owner}: the finite-width laws take a symbolic beta or symbolic sizes (n, d_K, ...), not both "
            f"(the exact series would take minutes); substitute numbers for one of them; got {arch!r}")
    return b


def _levels(levels, owner):
    if levels is None:
        return DEFAULT_LEVELS
    if isinstance(levels, bool) or not isinstance(levels, int) or not 1 <= levels <= 4:
        raise FreeprobValueError(f"{owner}: levels must be an integer in 1..4 (chaos levels kept as "
                                 f"Wishart pieces; more make the Cauchy equation of high degree); "
                                 f"got {levels!r}")
    return levels


def _width(d_k, owner, name="d_k", *, symbolic=True):
    if symbolic and isinstance(d_k, sp.Expr) and not d_k.is_number:
        if d_k.is_positive is not True:
            raise FreeprobValueError(f"{owner}: a symbolic {name} must be declared positive, e.g. "
                                     f"sympy.Symbol('{name}', positive=True); got {d_k!r}")
        return d_k
    if isinstance(d_k, sp.Integer):
        d_k = int(d_k)
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
        allowed = " or a positive sympy symbol" if symbolic else ""
        raise FreeprobValueError(f"{owner}: {name} must be a positive integer{allowed}; got {d_k!r}")
    return d_k


def _is_symbolic(v):
    return isinstance(v, sp.Expr) and not v.is_number


def _half(d):
    """``d/2`` exactly (a rational for an integer ``d``)."""
    return d / sp.Integer(2) if _is_symbolic(d) else sp.Rational(d, 2)


def chaos_dimension(d_k, k):
    r"""``D_k = C(d_K + k − 1, k)``: the dimension of the degree-``k`` symmetric tensors
    of ``ℝ^{d_K}``, i.e. the rank of the ``k``-th Hermite chaos of the scores.

    ``D_1 = d_K``, ``D_2 = d_K(d_K + 1)/2``; for a symbolic ``d_K`` (a positive sympy
    symbol) the polynomial ``d_K(d_K + 1)…(d_K + k − 1)/k!``.  Raises
    ``FreeprobValueError`` unless ``d_k`` is a positive integer or positive symbol and
    ``k`` a positive integer.  Source: theory.md §7 F1; [LY22]_.
    """
    own = "chaos_dimension"
    d_k = _width(d_k, own)
    _width(k, own, "k", symbolic=False)
    if _is_symbolic(d_k):
        return sp.expand(sp.prod([d_k + j for j in range(k)]) / sp.factorial(k))
    return sp.binomial(d_k + k - 1, k)


def norm_moment(d_k, k):
    r"""``m_k = E(χ²_{d_K}/d_K)^k = Π_{j<k}(1 + 2j/d_K)`` (exact rational): the mean of
    the ``k``-th power of a squared query (or key) norm ``|q|²/d_K``.

    A rational function of ``d_K`` when ``d_k`` is a positive sympy symbol.  Raises
    ``FreeprobValueError`` unless ``d_k`` is a positive integer (or positive symbol) and
    ``k`` a non-negative integer.  Source: the moments of the χ² law.
    """
    own = "norm_moment"
    d_k = _width(d_k, own)
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise FreeprobValueError(f"{own}: k must be a non-negative integer; got {k!r}")
    return sp.prod([1 + 2 * j / sp.sympify(d_k) for j in range(k)])


def finite_width_theta1(beta, d_k):
    r"""``θ1^{fw} = (1 − 2β²/d_K)^{−d_K/2} − 1 = E_q e^{β²|q|²/d_K} − 1``: the exact
    coordinate variance of ``n A⊥`` at key width ``d_K`` (theory.md §7 F3), which tends
    to ``θ1 = e^{β²} − 1`` as ``d_K → ∞``; ``= Σ_k β^{2k} m_k/k!``.

    Exact (sympy); a symbolic expression for a symbolic ``β`` or ``d_K`` (positive sympy
    symbol; ``d_K > 2β²`` is then assumed).  Raises ``FreeprobValueError`` for ``β < 0``
    or ``d_K ≤ 2β²`` (the expectation diverges).  Source: theory.md §7 F3 (Gaussian
    integral over ``q``).
    """
    own = "finite_width_theta1"
    d_k = _width(d_k, own)
    b = sp.sympify(beta)
    if b.is_number and (not b.is_real or b < 0):
        raise FreeprobValueError(f"{own}: beta must be a real number >= 0; got {beta!r}")
    if b.is_number and not _is_symbolic(d_k) and not 2 * b**2 < d_k:
        raise FreeprobValueError(f"{own}: needs d_K > 2 beta^2 (E e^(beta^2 |q|^2/d_K) is infinite "
                                 f"otherwise); got d_K={d_k}, beta={beta}")
    return (1 - 2 * b**2 / sp.sympify(d_k)) ** (-_half(d_k)) - 1


#: the total variance (mean of ρ^fw) options of :func:`chaos_weights`
VARIANCES = ("empirical", "limit", "expected")

#: the total of the finite-width laws when ``n`` is known (``*_law(arch, finite_width=True)``);
#: ``"limit"`` restores the laws before issue 29 (theory.md §7, the finite-d_K bulk scale)
DEFAULT_VARIANCE = "empirical"


def _variance(variance, exact_variance, n, owner):
    """The total-variance option: ``variance`` if given, else ``"expected"`` for
    ``exact_variance=True``, :data:`DEFAULT_VARIANCE` when ``n`` is known, ``"limit"`` otherwise."""
    if not isinstance(exact_variance, bool):
        raise FreeprobValueError(f"{owner}: exact_variance must be a bool; got {exact_variance!r}")
    if variance is None:
        return "expected" if exact_variance else (DEFAULT_VARIANCE if n is not None else "limit")
    if variance not in VARIANCES:
        raise FreeprobValueError(f"{owner}: variance must be one of {', '.join(VARIANCES)}; got {variance!r}")
    if exact_variance and variance != "expected":
        raise FreeprobValueError(f"{owner}: exact_variance=True is variance='expected'; got variance={variance!r}")
    if variance == "empirical" and n is None:
        raise FreeprobValueError(f"{owner}: variance='empirical' needs the number of tokens n")
    return variance


def chaos_weights(beta, d_k, levels=None, *, exact_variance=False, n=None, variance=None):
    r"""The chaos variances ``(w_1, …, w_L)`` and the remainder (the white-noise part).

    ``w_k = β^{2k}/k!``: the Hermite variances of ``e^{βg − β²/2} − 1`` with
    ``g ~ N(0, 1)``, as in the GE; the remainder is the total variance (the mean of
    ``ρ^{fw}``) minus ``Σ_{k≤L} w_k``.  The total (``variance``):

    * ``"empirical"`` (the default when ``n`` is given, :data:`DEFAULT_VARIANCE`): ``θ1^{emp}`` =
      :func:`freeprob.attention.normaliser.empirical_theta1` ``(β, d_K, n)``, the exact
      expected trace of the row covariance of ``n A⊥`` at ``n`` keys and width ``d_K``
      under the empirical softmax normaliser, without the key-norm mean (the outlier of
      theory.md §7 F2); e.g. 1.921 at ``n = 512``, ``d_K = 8``, ``β = 1`` (sampled
      1.956 ± 0.100; ``θ1 = 1.718``), 1.506 at ``n = 64``, ``d_K = 16``.  The normaliser
      divides a whole row, so every piece is scaled by one factor ``c = θ1^{emp}/θ1``
      (:func:`freeprob.attention.normaliser.empirical_scale`, a 4-digit rational; the mean
      is ``c θ1``): ``w_k = c β^{2k}/k!``, remainder ``c(θ1 − Σ_{k≤L} β^{2k}/k!)`` (measured against
      putting the difference into the white-noise remainder alone, theory.md §7 "the
      finite-d_K bulk scale": relW1 3.4 % against 5.2 % in the head-count setting
      ``n = 512``, ``h = 32``, ``d_K = 8``; the limit total: 10.8 %);
    * ``"limit"`` (the default without ``n``): ``θ1 = e^{β²} − 1``, ``w_k = β^{2k}/k!``;
    * ``"expected"`` (or ``exact_variance=True``): ``w_k = β^{2k} m_k/k!`` (``m_k`` =
      :func:`norm_moment`) and ``θ1^{fw} = (1 − 2β²/d_K)^{−d_K/2} − 1``
      (:func:`finite_width_theta1`, theory.md §7 F3): the variance with the *expected*
      normaliser, above softmax's (2.16 in the example), since the empirical normaliser
      truncates the heavy tail of the query norms.

    Returns ``(tuple_of_w, remainder)``, exact sympy; ``w_1 = θ2 = β²`` (``c θ2`` for
    ``"empirical"``).  For a symbolic
    ``n``, ``d_K`` or ``β`` the scale is the unevaluated
    :class:`~freeprob.attention.normaliser.EmpiricalScale`.  Raises
    ``FreeprobValueError`` for bad ``beta``, ``d_k``, ``n`` or ``levels`` (1..4), an unknown
    ``variance``, ``"empirical"`` without ``n``, ``exact_variance=True`` with another
    ``variance``, or a negative remainder.  Source: theory.md §2 item 2, §7 F1/F3 and
    "the finite-d_K bulk scale".
    """
    own = "chaos_weights"
    w, rest, c = _weights_and_scale(beta, d_k, levels, exact_variance, n, variance, own)
    return tuple(c * wk for wk in w), c * rest


def _weights_and_scale(beta, d_k, levels, exact_variance, n, variance, own):
    """``(w, rest, c)``: the chaos variances and remainder before the bulk scale ``c``
    (``c = θ1^{emp}/θ1`` for ``"empirical"``, else 1); :func:`chaos_weights` is ``c·w, c·rest``."""
    levels = _levels(levels, own)
    variance = _variance(variance, exact_variance, n, own)
    b2 = sp.sympify(beta) ** 2
    if variance == "expected":
        total = finite_width_theta1(beta, d_k)
        w = tuple(b2**k * norm_moment(d_k, k) / sp.factorial(k) for k in range(1, levels + 1))
    else:
        _width(d_k, own)
        from freeprob.attention.ge import ge_coefficients
        theta1 = ge_coefficients(beta)[0]
        w = tuple(b2**k / sp.factorial(k) for k in range(1, levels + 1))
        total = theta1
    rest = total - sp.Add(*w)
    c = sp.Integer(1)
    if variance == "empirical":
        from freeprob.attention.normaliser import empirical_scale
        c = empirical_scale(beta, d_k, _width(n, own, "n"))
    if rest.is_number and rest < 0:
        raise FreeprobValueError(f"{own}: the chaos variances exceed the total ({variance}: {total}) at "
                                 f"beta={beta}, d_K={d_k}, n={n}; use fewer levels or variance='limit'")
    return w, rest, c


def norm_factor_variance(d_k, k, *, rows=1, keys=1):
    r"""``ε_k``: the variance of the mean-one norm factor of the ``k``-th chaos piece.

    A row factor ``r^k`` and a column factor ``s^k`` (``r, s ~ χ²_{d_K}/d_K``), each of
    relative variance ``v_k = m_{2k}/m_k² − 1``; averaged over ``rows`` independent
    query matrices and ``keys`` independent key matrices (head sum):
    ``ε_k = ((1 + v_k keys/rows)(1 + v_k) − 1)/keys``, i.e. ``(1 + v_k)² − 1`` for one
    head.  ``ε_1 = 0`` (Gaussian norms are inside ``MP(n/d_K)``).

    A rational function of ``d_K`` for a symbolic ``d_k``.  Raises ``FreeprobValueError``
    for non-positive integers.  Source: this module's docstring (theory.md §7 F3).
    """
    own = "norm_factor_variance"
    d_k = _width(d_k, own)
    _width(k, own, "k", symbolic=False)
    _width(rows, own, "rows", symbolic=False)
    _width(keys, own, "keys", symbolic=False)
    if k == 1:
        return sp.Integer(0)
    v = norm_moment(d_k, 2 * k) / norm_moment(d_k, k) ** 2 - 1
    eps = ((1 + v * sp.Rational(keys, rows)) * (1 + v) - 1) / keys
    if _is_symbolic(d_k):
        return sp.factor(sp.cancel(eps))
    return eps if eps.is_Rational else sp.nsimplify(eps)     # a rational for integer sizes (nsimplify: 15 ms)


def finite_width_row_covariance_law(arch: Architecture, *, keys=1, rows=1, levels=None,
                                    exact_variance=False, variance=None) -> Law:
    r"""``ρ^{fw}``: the finite-width law of one head's row covariance ``Σ`` (``n × n``),
    or of the average of ``Σ_i`` over the heads of a head sum.

    ``ρ^{fw} = ⊞_{k≤L} w_k MP(n/(keys·D_k) + ε_k) + (θ1 − Σ_{k≤L} w_k)`` (module
    docstring; ``ε_k`` = :func:`norm_factor_variance` with ``rows``, ``keys``).
    ``keys`` is the number of distinct key matrices averaged (1 for one head; ``h`` for
    the head sum with independent keys, ``h_KV`` for GQA, 1 for shared keys), ``rows``
    the number of independent query matrices (``h`` for a head sum).  Mean
    ``θ1^{emp}`` (the bulk coordinate variance under the empirical softmax normaliser at
    the layer's ``n`` and ``d_K``, :func:`freeprob.attention.normaliser.empirical_theta1`;
    ``θ1`` with ``variance="limit"``, ``θ1^{fw}`` with ``variance="expected"``); with
    ``levels = 1`` and ``variance="limit"`` it is exactly the GE law ``ρ_{keys·c_K}``.

    Parameters
    ----------
    arch : Architecture
        Built by :meth:`Architecture.from_dimensions` with ``beta``.
    keys, rows : int ≥ 1
    levels : int in 1..4
        Chaos levels kept as Wishart pieces (default :data:`DEFAULT_LEVELS`).
    exact_variance : bool
        Finite-``d_K`` chaos variances and total with the expected normaliser, the same
        as ``variance="expected"`` (:func:`chaos_weights`).
    variance : {"empirical", "limit", "expected"}, optional
        The total variance (the mean), :func:`chaos_weights`; default ``"empirical"``.

    Raises
    ------
    FreeprobValueError
        ``arch`` without sizes or without ``beta``; ``d_K ≤ 2β²`` (``"expected"``),
        ``d_K ≤ β²`` (``"empirical"``); bad ``keys``, ``rows``, ``levels`` or ``variance``.

    Source: theory.md §2 item 3, §3.1, §7 F1/F3; [LY22]_ (Wishart pieces of ratio ``n/D_k``).
    """
    rho1, c = finite_width_rho_parts(arch, keys=keys, rows=rows, levels=levels, exact_variance=exact_variance,
                                     variance=variance, owner="finite_width_row_covariance_law")
    return rho1 if c == 1 else dilate(rho1, c)


def finite_width_rho_parts(arch: Architecture, *, keys=1, rows=1, levels=None, exact_variance=False,
                           variance=None, owner="finite_width_rho_parts"):
    r"""``(ρ_1, c)`` with ``ρ^{fw} = c·ρ_1`` (the dilation ``c X``): ``ρ_1`` the finite-width row
    covariance law with the unscaled chaos pieces (``w_k = β^{2k}/k!`` …, remainder
    ``θ1 − Σ w_k``), ``c`` the bulk scale ``θ1^{emp}/θ1``
    (:func:`freeprob.attention.normaliser.empirical_scale`; ``1`` for ``variance="limit"`` or
    ``"expected"``, and for ``β = 0``).

    Every object's law is linear in this dilation (``π(cρ, λ) = c·π(ρ, λ)``, ``(cX) ⊠ Y =
    c(X ⊠ Y)``, ``(cX) ⊞ (cY) = c(X ⊞ Y)``), so the attention laws apply ``c`` once,
    outside: the same law (equal moments), whose Cauchy equation is that of the unscaled
    law, of smaller coefficients, and whose numerics go through it
    (:class:`freeprob.numeric.scaled.ScaledCauchy`; issue 27).  Arguments as
    :func:`finite_width_row_covariance_law`; raises ``FreeprobValueError`` as it does (no sizes,
    bad ``levels``, ``keys``, ``rows`` or ``variance``).  Source: theory.md §7 F1/F3, "the finite-d_K bulk
    scale"; [MS17]_ §2.4 (dilations).
    """
    own = owner
    b = _sized(arch, own)
    levels = _levels(levels, own)
    _width(keys, own, "keys", symbolic=False)
    _width(rows, own, "rows", symbolic=False)
    n, dk = arch.n, arch.d_k
    w, rest, c = _weights_and_scale(b, dk, levels, exact_variance, n, variance, own)
    if sp.sympify(b).is_zero:
        return Dirac(0), sp.Integer(1)
    parts = []
    for k in range(1, levels + 1):
        lam = sp.sympify(n) / keys / chaos_dimension(dk, k)
        eps = norm_factor_variance(dk, k, rows=rows, keys=keys)
        ratio = lam + eps
        core = MarchenkoPastur(sp.cancel(ratio) if _is_symbolic(ratio) else ratio)
        parts.append(dilate(core, w[k - 1]))
    core = parts[0] if len(parts) == 1 else free_add(*parts)
    return shift(core, rest), c


# -- the row-norm factor (F3) ------------------------------------------------------------
def row_norm_variance(arch: Architecture, *, levels=None):
    r"""``v``: the relative variance of one head's row norms ``|y_a|²`` (rows of ``√n A⊥``)
    that the chaos pieces of ``ρ^{fw}`` leave out (theory.md §7 F3).  Two parts:

    * query norms, across chaoses: row ``a``'s chaos ``k`` scales with ``r_a^k``
      (``r ~ χ²_{d_K}/d_K``), all ``k`` with the same ``r_a``; ``ρ^{fw}`` has each
      ``Var(r^k)`` for ``k ≤ L`` (chaos 1 inside ``MP(n/d_K)``, ``k ≥ 2`` in ``ε_k``) but
      not the covariances: ``v_q = [Var e^{β² r} − Σ_{k≤L} (β^{2k}/k!)² Var r^k]/θ1²``
      with ``Var e^{β²r} = (1 − 4β²/d_K)^{−d_K/2} − (1 − 2β²/d_K)^{−d_K}``;
    * heavy tails: the entries ``f = e^{βg − β²/2} − 1`` have ``E f⁴ = e^{6β²} − 4e^{3β²}
      + 6e^{β²} − 3`` against ``3θ1²`` for the Gaussian model, so
      ``v_t = (E f⁴ − 3θ1²)/(n θ1²)`` (theory.md §7 F3's ``ε``); for a numeric ``β`` the
      expectation is truncated at the largest of ``n²`` scores,
      ``g < t = √(2 ln n²)`` (``E[e^{aβg}; g < t] = e^{a²β²/2} Φ(t − aβ)``).

    Both enter the second moment of a Gram as a left (row) factor of variance ``v``; the
    objects apply it as ``⊠ MP(v/h')``, ``h'`` the number of heads averaged in a row, the
    variance capped at 1/2 (:func:`row_factor_variance`, :func:`with_row_factor`).

    Returns an exact rational (numeric ``β``, ``n``, ``d_K``), a sympy expression
    (symbolic ``β``; no truncation), or, for a numeric ``β`` with a symbolic ``n`` or
    ``d_K``, :class:`RowFactorVariance` ``(d_K, n, β, levels, 1, 0)``, which becomes that
    rational when numbers are substituted (``law.subs``; the truncation and rounding
    need numbers).  Raises ``FreeprobValueError`` for a layer without sizes or ``beta``,
    or ``d_K ≤ 4β²``.  Source: theory.md §7 F3; this module's docstring.
    """
    own = "row_norm_variance"
    b = _sized(arch, own)
    levels = _levels(levels, own)
    if b.is_number and (_is_symbolic(arch.n) or _is_symbolic(arch.d_k)):
        return RowFactorVariance(arch.d_k, arch.n, b, levels, 1, 0)
    return _row_norm_variance(b, arch.n, arch.d_k, levels, own)


def _row_norm_variance(b, n, dk, levels, own):
    """:func:`row_norm_variance` from the numbers (or expressions) ``β, n, d_K``."""
    b2 = b**2
    if b2.is_number and not _is_symbolic(dk) and not 4 * b2 < dk:
        raise FreeprobValueError(f"{own}: needs d_K > 4 beta^2; got d_K={dk}, beta={b}")
    if b2.is_zero:
        return sp.Integer(0)
    half = _half(dk)
    from freeprob.attention.ge import ge_coefficients
    t1 = ge_coefficients(b)[0]
    var_e = (1 - 4 * b2 / dk) ** (-half) - (1 - 2 * b2 / dk) ** (-dk)
    own_part = sp.Add(*[(b2**k / sp.factorial(k)) ** 2 * (norm_moment(dk, 2 * k) - norm_moment(dk, k) ** 2)
                        for k in range(1, levels + 1)])
    v_q = (var_e - own_part) / t1**2
    if b.is_number and not (_is_symbolic(n) or _is_symbolic(dk)):
        from statistics import NormalDist
        bf = float(b)
        cut = math.sqrt(2 * math.log(n * n))
        phi = NormalDist().cdf
        ey = [math.exp((a * a - a) * bf * bf / 2) * phi(cut - a * bf) for a in range(5)]
        f4 = ey[4] - 4 * ey[3] + 6 * ey[2] - 4 * ey[1] + ey[0]
        v_t = max(0.0, (f4 - 3 * float(t1) ** 2) / (n * float(t1) ** 2))
        v = float(v_q) + v_t
        # a short rational (6 digits): the float inputs carry no more, and long ones make
        # the discriminants of the Cauchy equations (support, density) slow
        return sp.Rational(round(max(v, 0.0) * 10**6), 10**6)
    f4 = sp.exp(6 * b2) - 4 * sp.exp(3 * b2) + 6 * sp.exp(b2) - 3
    return v_q + (f4 - 3 * t1**2) / (n * t1**2)


#: largest variance of the row-norm factor (:func:`row_factor_variance`)
MAX_ROW_FACTOR_VARIANCE = sp.Rational(1, 2)


def row_factor_variance(arch: Architecture, heads_averaged=1, *, levels=None):
    r"""``τ = min(w·v/h', 1/2)``: the variance of the row-norm factor of an object whose
    rows mix ``h' = heads_averaged`` heads with independent queries (``v`` =
    :func:`row_norm_variance`).

    ``w = 1`` for untied values; for tied values (``V_i = K_i``) ``w = (θ1/(θ1 +
    θ2/c_K))²``: only the attention row's own norm (mean ``θ1``) carries the factor, the
    rest of a row of ``H_i`` is the Gaussian linear-score part, inside the law already.
    The cap :data:`MAX_ROW_FACTOR_VARIANCE` = 1/2: the factor is represented by
    ``MP(τ)``, which for ``τ → 1`` grows an edge at 0 (and an atom beyond), far from the
    law of a row-norm factor; ``v/h' > 1/2`` means heavy tails dominate (theory.md §7 F3,
    ``n ≲ e^{4β²}``: e.g. ``v ≈ 4`` at ``n = 512``, ``d_K = 32``, ``β = 3/2``), a regime the
    finite-width laws do not claim.  For numbers, ``τ`` is rounded to three significant
    digits (:data:`ROW_FACTOR_DIGITS`; a relative change ≤ 5·10⁻⁴, far below the accuracy of
    the row-factor model): its digits set the height of the Cauchy equation's
    discriminant, the main cost of the law's support (``freeprob verify --quick``: the
    six-digit τ took ≈ 1.6× as long over the seven finite-width laws).
    Exact rational for a numeric ``β``; for a numeric
    ``β`` with a symbolic ``n`` or ``d_K``, the :class:`RowFactorVariance` that becomes
    it when numbers are substituted; a sympy expression (uncapped) for a symbolic ``β``.

    Raises ``FreeprobValueError`` as :func:`row_norm_variance`, or for ``heads_averaged``
    not a positive integer.  Source: theory.md §7 F3; this module's docstring.
    """
    own = "row_factor_variance"
    _width(heads_averaged, own, "heads_averaged", symbolic=False)
    b = _sized(arch, own)
    levels = _levels(levels, own)
    tied = int(arch.scheme == "tied")
    if b.is_number and (_is_symbolic(arch.n) or _is_symbolic(arch.d_k)):
        return RowFactorVariance(arch.d_k, arch.n, b, levels, heads_averaged, tied)
    return _row_factor_variance(b, arch.n, arch.d_k, levels, heads_averaged, tied, own)


def _row_factor_variance(b, n, dk, levels, heads_averaged, tied, own):
    """:func:`row_factor_variance` from the numbers (or expressions) of the layer."""
    v = _row_norm_variance(b, n, dk, levels, own) / heads_averaged
    if tied:
        from freeprob.attention.ge import ge_coefficients
        t1, t2 = ge_coefficients(b)
        v = v * (t1 / (t1 + t2 / (sp.sympify(dk) / n))) ** 2
    v = sp.sympify(v)
    if v.is_number:
        v = sp.Min(v, MAX_ROW_FACTOR_VARIANCE) if not v.is_Rational else min(v, MAX_ROW_FACTOR_VARIANCE)
        return _short(v)
    return v


#: significant digits of the row-factor variance τ (:func:`row_factor_variance`)
ROW_FACTOR_DIGITS = 3


def _short(v):
    """``v > 0`` rounded to :data:`ROW_FACTOR_DIGITS` significant digits, a short rational."""
    if v.is_zero:
        return sp.Integer(0)
    e = ROW_FACTOR_DIGITS - 1 - math.floor(math.log10(float(v)))
    return sp.Rational(round(float(v) * 10**e), 10**e) if e >= 0 else sp.Integer(round(float(v)))


class RowFactorVariance(sp.Function):
    r"""``RowFactorVariance(d_K, n, β, L, h', tied)``: the row-norm factor variance
    ``τ`` of :func:`row_factor_variance` as a sympy function, for a layer with a numeric
    ``β`` and a symbolic ``n`` or ``d_K``.

    ``τ`` needs numbers: the heavy-tail part truncates at the largest of ``n²`` scores,
    the result is rounded to six digits and capped at 1/2 (:func:`row_norm_variance`).
    This function stays unevaluated while ``n`` or ``d_K`` is a symbol and evaluates to
    exactly the rational of the integer layer once numbers are substituted (e.g. by
    ``law.subs({d_K: 32})``), so a law at a symbolic ``d_K`` and the law at ``d_K = 32``
    agree exactly after substitution.  The exact core treats it as a transcendental
    generator (``_freeprob_generator``).  Arguments: ``L`` = chaos levels, ``h'`` = heads
    averaged, ``tied`` = 1 for ``V_i = K_i``, else 0.  Raises ``FreeprobValueError`` as
    :func:`row_norm_variance` when evaluated.  Source: theory.md §7 F3.
    """

    nargs = 6
    _freeprob_generator = True

    @classmethod
    def eval(cls, d_k, n, beta, levels, heads_averaged, tied):
        """The rational ``τ`` of :func:`row_factor_variance` once ``d_K``, ``n`` are integers
        and ``β`` a number; ``None`` (unevaluated) otherwise.  Raises
        ``FreeprobValueError`` as :func:`row_norm_variance`.  Source: theory.md §7 F3."""
        if all(a.is_Integer for a in (d_k, n, levels, heads_averaged, tied)) and beta.is_number:
            return sp.sympify(_row_factor_variance(beta, int(n), int(d_k), int(levels), int(heads_averaged),
                                                   int(tied), "RowFactorVariance"))
        return None

    def _eval_is_real(self):
        return True

    def _eval_is_nonnegative(self):
        return True


def with_row_factor(law: Law, arch: Architecture, heads_averaged=1, *, levels=None) -> Law:
    r"""``law ⊠ MP(τ)``: a Gram law with the row-norm factor of variance ``τ`` =
    :func:`row_factor_variance` (``v`` of :func:`row_norm_variance` averaged over
    ``h' = heads_averaged`` heads, capped at 1/2).

    ``X = D^{1/2} X̃`` with ``D`` diagonal, independent of the left-invariant ``X̃``, has
    Gram law ``ν_D ⊠ ν_{X̃X̃ᵀ}``; ``ν_D`` is represented by ``MP(τ)`` (mean one,
    variance ``τ``).  ``h' = 1`` for one head (single, head_out), ``h`` for the objects
    whose rows mix ``h`` heads with independent queries (concat, sum, stack, out).
    Returns ``law`` itself when ``τ = 0``.

    Raises ``FreeprobValueError`` as :func:`row_factor_variance`.  Source: theory.md §7
    F3; the ⊠ rule of [NS06]_ Lecture 18.
    """
    tau = row_factor_variance(arch, heads_averaged, levels=levels)
    if sp.sympify(tau).is_zero:
        return law
    return free_mul(law, MarchenkoPastur(tau))
