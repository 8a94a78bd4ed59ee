r"""The key-norm spike of softmax attention and the predicted top eigenvalue of every
object (issue 18; theory.md §7 F2).

Given the keys the rows of ``n A⊥`` have the common mean ``μ``,
``μ_b ∝ e^{t|k_b|²/d_K} − mean``, ``t = β²d_K/(2(d_K + β²))`` (the Gaussian average over
the query), of squared norm
``‖μ‖² = n[((d_K − β²)/(d_K + β²))^{−d_K/2}(d_K/(d_K + β²))^{d_K} − 1] ≈ nβ⁴/(2d_K)``
(:func:`key_norm_spike`), an ``O(1)`` rank-one term in the ``√n A⊥`` scaling that the GE
drops.  Every object is ``F = M B`` with ``M`` the stacked ``√n A_i⊥`` and ``B`` its right
factor (values, ``W_O``); the term is ``u mᵀB`` with ``u = 1/√n`` and ``m`` the stacked
``μ_i``, of mean strength ``θ²`` (:func:`spike_strength`: heads add incoherently except
for the head sum with shared keys).  The top eigenvalue solves
``θ²(1 + u)G_ν(λ) = s(u)``, ``u = (λG_ν(λ) − 1)/t``, with ``s`` the normalised
S-transform of ``C = BBᵀ`` (:func:`direction_s_transform`): for ``C = I`` the rectangular
BBP-type equation of [BGN12]_, otherwise the direction ``Bᵀm`` is aligned with ``B`` and
the outlier is higher; below the threshold the top eigenvalue sticks to the bulk edge
(:func:`predicted_top_eigenvalue`).  The realised strength of one draw
(:func:`realised_spike_strength`) scatters around ``θ²`` by a χ² law over the value and
output weights (:func:`spike_strength_variance`; ±18 % for multi-query Falcon-7B at
``n = 2048``), and so does the top eigenvalue (:func:`predicted_top_spread`).

References: [THEORY]_ §7; [BGN12]_; [NS06]_; [HK26]_.
"""
from __future__ import annotations

import sympy as sp

from freeprob.attention.architecture import Architecture
from freeprob.attention.finite_width import _sized
from freeprob.errors import FreeprobValueError
from freeprob.laws.law import Law

__all__ = ["SPIKE_OBJECTS", "key_norm_spike", "spike_strength", "direction_s_transform",
           "predicted_top_eigenvalue", "spike_strength_variance", "predicted_top_spread",
           "realised_spike_strength"]

#: the objects of :func:`predicted_top_eigenvalue` (theory.md §1)
SPIKE_OBJECTS = ("single", "concat", "sum", "head_out", "stack", "out")


def key_norm_spike(arch: Architecture):
    r"""``‖μ‖²``: the squared norm of the common row mean ``μ`` of one head's ``n A⊥``
    given its keys (theory.md §7 F2), in the ``√n A⊥`` scaling (an ``O(1)`` number).

    Given the keys, ``n A_ab = e^{βq_a·k_b/√d_K}/mean_c e^{βq_a·k_c/√d_K}``; with the
    normaliser replaced by its mean over the keys, ``e^{β²|q_a|²/(2d_K)}`` (an ``O(n^{-1/2})``
    error per row), the Gaussian average over ``q_a`` is
    ``E_q e^{βq·k_b/√d_K − β²|q|²/(2d_K)} = (1 + β²/d_K)^{−d_K/2} e^{t s_b}`` with
    ``s_b = |k_b|²/d_K`` and ``t = β²d_K/(2(d_K + β²))``.  So
    ``μ_b = e^{t s_b}/mean_c e^{t s_c} − 1`` and, every expectation a χ² moment
    generating function,

    ``‖μ‖²/n → E e^{2ts}/(E e^{ts})² − 1 = ((d_K − β²)/(d_K + β²))^{−d_K/2}(d_K/(d_K + β²))^{d_K} − 1``
    ``≈ β⁴/(2d_K)``.

    Exact (sympy).  Measured (the softmax row mean projected on ``μ̂``, six key draws,
    paired): ``0.967 ‖μ_{t=β²/2}‖²`` at ``n = 2048``, ``d_K = 64``, ``β = 1``, against
    ``0.969`` for this ``t``; the exponent ``t = β²/2`` (the normaliser not averaged
    over ``q``; :func:`freeprob.sampler.key_norm_mean` up to version 2467f78, now this
    ``t``) gives a ``‖μ‖²`` larger by ``≈ 2β²/d_K`` (3 % at ``d_K = 64``).

    Raises ``FreeprobValueError`` for a layer without sizes or ``beta``, or
    ``d_K ≤ 2β²``.  Source: theory.md §7 F2.
    """
    own = "key_norm_spike"
    b = _sized(arch, own)
    dk = arch.d_k
    b2 = b**2
    if b2.is_number and sp.sympify(dk).is_number and not 2 * b2 < dk:
        raise FreeprobValueError(f"{own}: needs d_K > 2 beta^2; got d_K={dk}, beta={arch.beta}")
    return arch.n * (((dk - b2) / (dk + b2)) ** (-sp.sympify(dk) / 2) * (dk / (dk + b2)) ** dk - 1)


def _other_side(arch, obj):
    """``p``: the number of columns of the object's matrix (theory.md §1 table)."""
    h, n = arch.heads, arch.n
    return {"single": n, "concat": h * n, "sum": n, "head_out": arch.d_v, "stack": h * arch.d_v,
            "out": arch.d_o}[obj]


def spike_strength(arch: Architecture, obj="out"):
    r"""``θ²``: the squared norm of the rank-one key-norm term ``θ u vᵀ`` of an object
    (``u = 1/√n``), as a multiple of :func:`key_norm_spike` ``‖μ‖²``.

    ``single``, ``concat`` (``1 [μ_1 … μ_h]ᵀ/√(hn)``): ``‖μ‖²``; ``sum``
    (``1 (Σ_i μ_i)ᵀ/√(hn)``): ``‖μ‖²`` for independent keys (incoherent), ``(h/g)‖μ‖²``
    for ``g`` key matrices (``g = 1`` shared keys or MQA: coherent); ``head_out``
    (``1 μᵀV/n``): ``c_V ‖μ‖²``; ``stack``: ``γ_V ‖μ‖²``; ``out``
    (``1 μᵀ[V_i]W_O/n``): ``γ_O ‖μ‖²``, every scheme (``W_O`` makes the heads add
    incoherently).  Tied values (``V = K``) use the same factors.

    Raises ``FreeprobValueError`` for an unknown ``obj`` or a layer without sizes or
    ``beta``.  Source: theory.md §7 F2.
    """
    own = "spike_strength"
    if obj not in SPIKE_OBJECTS:
        raise FreeprobValueError(f"{own}: obj must be one of {', '.join(SPIKE_OBJECTS)}; got {obj!r}")
    mu2 = key_norm_spike(arch)
    if obj in ("single", "concat"):
        f = sp.Integer(1)
    elif obj == "sum":
        f = sp.Integer(1) if arch.key_groups == arch.heads else sp.Rational(arch.heads, arch.key_groups)
    else:
        f = {"head_out": arch.c_v, "stack": arch.gamma_v, "out": arch.gamma_o}[obj]
    return sp.sympify(f) * mu2


def realised_spike_strength(k, v, w_o, beta, obj="out"):
    r"""``θ̂²``: the key-norm spike strength of one draw of the weights, the quantity
    whose mean is :func:`spike_strength` and whose relative variance is
    :func:`spike_strength_variance`; ``predicted_top_eigenvalue(…, theta_sq=θ̂²)`` is the
    prediction conditional on the draw (its softmax top eigenvalue within ±4 % at
    the 7B configurations, theory.md §7 F2).

    ``μ_i`` = ``e^{t s_b}/mean_c e^{t s_c} − 1`` per head (``s_b = |k_b|²/d_K``,
    ``t = β²d_K/(2(d_K + β²))``, :func:`key_norm_spike`); ``single``: ``‖μ_1‖²``;
    ``concat``: ``mean_i ‖μ_i‖²``; ``sum``: ``|Σ_i μ_i|²/h``; ``head_out``:
    ``|V_1ᵀμ_1|²/n``; ``stack``: ``Σ_i |V_iᵀμ_i|²/n``; ``out``:
    ``n|Σ_i W_O^{iᵀ}V_iᵀμ_i/n|²``.

    Parameters
    ----------
    k : array_like, shape ``(h, n, d_K)``
        Keys (heads sharing keys hold equal copies, as in
        :func:`freeprob.sampler.draw_weights`).
    v : array_like, shape ``(h, n, d_V)``
    w_o : array_like, shape ``(h d_V, d_O)``
    beta : float, ``≥ 0``
    obj : one of :data:`SPIKE_OBJECTS`

    Returns
    -------
    float

    Raises
    ------
    FreeprobValueError
        Unknown ``obj``; arrays of the wrong shapes or with non-finite entries; a
        ``beta`` that is not a finite real number ``≥ 0``.

    Source: theory.md §7 F2.
    """
    import numpy as np
    own = "realised_spike_strength"
    if obj not in SPIKE_OBJECTS:
        raise FreeprobValueError(f"{own}: obj must be one of {', '.join(SPIKE_OBJECTS)}; got {obj!r}")
    b2 = _nonnegative(beta, own, "beta") ** 2
    try:
        k, v, w_o = (np.asarray(a, dtype=float) for a in (k, v, w_o))
    except (TypeError, ValueError) as exc:
        raise FreeprobValueError(f"{own}: k, v, w_o must be real arrays") from exc
    if (k.ndim != 3 or v.ndim != 3 or w_o.ndim != 2 or k.shape[:2] != v.shape[:2]
            or w_o.shape[0] != v.shape[0] * v.shape[2] or k.shape[1] < 2):
        raise FreeprobValueError(f"{own}: expected k (h, n, d_K), v (h, n, d_V), w_o (h d_V, d_O); "
                                 f"got {k.shape}, {v.shape}, {w_o.shape}")
    if not all(np.isfinite(a).all() for a in (k, v, w_o)):
        raise FreeprobValueError(f"{own}: k, v, w_o must have finite entries")
    h, n, dk = k.shape
    s = np.einsum("hbj,hbj->hb", k, k) / dk
    log_e = b2 * dk / (2 * (dk + b2)) * s
    e = np.exp(log_e - log_e.max(axis=1, keepdims=True))
    mu = e / e.mean(axis=1, keepdims=True) - 1
    if obj == "single":
        return float(mu[0] @ mu[0])
    if obj == "concat":
        return float(np.mean(np.sum(mu**2, axis=1)))
    if obj == "sum":
        tot = mu.sum(axis=0)
        return float(tot @ tot) / h
    z = np.einsum("hb,hbv->hv", mu, v)
    if obj == "head_out":
        return float(z[0] @ z[0]) / n
    if obj == "stack":
        return float(np.sum(z**2)) / n
    row = z.reshape(-1) @ w_o / n
    return n * float(row @ row)


def _nonnegative(x, owner, name):
    import math
    try:
        v = float(x)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(x, bool) or not math.isfinite(v) or v < 0:
        raise FreeprobValueError(f"{owner}: {name} must be a finite real number >= 0; got {x!r}")
    return v


def spike_strength_variance(arch: Architecture, obj="out"):
    r"""The relative variance ``Var θ̂²/(E θ̂²)²`` of the realised spike strength over
    initialisations (keys, values, ``W_O``), to first order in ``1/n``, ``1/d_V``,
    ``1/d_O``.

    Given the keys, ``Σ_i W_O^{iᵀ}V_iᵀμ_i`` is Gaussian in ``W_O`` with covariance
    ``Σ_i|V_iᵀμ_i|²/(h d_V)``, so the realised ``out`` strength is
    ``θ̂² = (Σ_i |V_iᵀμ_i|²/(h d_V)) χ²_{d_O}/n`` exactly, and ``|V_gᵀμ_g|²`` is
    ``‖μ_g‖² χ²_{d_V}`` for each of the ``g_V`` distinct value matrices.  Hence

    * ``out``: ``(1 + v_μ/g_K)(1 + 2/(g_V d_V))(1 + 2/d_O) − 1``;
    * ``head_out``, ``stack``: ``(1 + v_μ/g_K)(1 + 2/(g_V d_V)) − 1`` (``g = 1`` for
      ``head_out``);
    * ``single``, ``concat``: ``v_μ/g_K``; ``sum``: ``v_μ/g_K + 2(g_K − 1)/(g_K n)``
      (the cross terms ``μ_i·μ_j`` of independent key matrices);

    ``g_K``, ``g_V`` the numbers of distinct key and value matrices (``h``
    independent; ``h_KV`` for GQA; 1 for MQA).  ``v_μ`` is the relative variance of
    one head's ``‖μ‖²`` (:func:`key_norm_spike`) by the delta method on
    ``‖μ‖²/n = mean(x²)/mean(x)² − 1``, ``x_b = e^{t s_b}`` (raw moments ``M_k`` of
    ``x/E x`` from the χ² moment generating function):
    ``v_μ = [M_4 − M_2² + 4M_2²(M_2 − 1) − 4M_2(M_3 − M_2)]/(n(M_2 − 1)²)``.

    The top eigenvalue inherits it: :func:`predicted_top_spread`.  For MQA
    (Falcon-7B, ``d_V = 64``, ``n = 2048``) ``√v ≈ 0.18``: one initialisation's
    outlier scatters by ±18 % of ``θ²`` around the prediction.

    Returns a float.  Raises ``FreeprobValueError`` for an unknown ``obj``, a layer
    without sizes or a numeric ``beta``, or ``d_K ≤ 4β²`` (the fourth moment of ``x``
    is infinite).  Source: theory.md §7 F2; χ² moments.
    """
    own = "spike_strength_variance"
    if obj not in SPIKE_OBJECTS:
        raise FreeprobValueError(f"{own}: obj must be one of {', '.join(SPIKE_OBJECTS)}; got {obj!r}")
    b = _sized(arch, own, numeric=True)
    if not b.is_number:
        raise FreeprobValueError(f"{own}: needs a numeric beta; got {arch.beta!r}")
    b2, dk, n = float(b) ** 2, arch.d_k, arch.n
    if not 4 * b2 < dk:
        raise FreeprobValueError(f"{own}: needs d_K > 4 beta^2; got d_K={dk}, beta={arch.beta}")
    t = b2 * dk / (2 * (dk + b2))

    def mgf(k):                                   # E e^{k t s}, s ~ χ²_{d_K}/d_K
        return (1 - 2 * k * t / dk) ** (-dk / 2)

    m = {k: mgf(k) / mgf(1) ** k for k in (2, 3, 4)}
    var = m[4] - m[2] ** 2 + 4 * m[2] ** 2 * (m[2] - 1) - 4 * m[2] * (m[3] - m[2])
    v_mu = var / (n * (m[2] - 1) ** 2) if m[2] > 1 else 0.0
    gk, gv = arch.key_groups, arch.value_groups
    keys = 1 + v_mu / (1 if obj in ("single", "head_out") else gk)
    if obj in ("single", "concat"):
        return keys - 1
    if obj == "sum":
        return keys - 1 + 2 * (gk - 1) / (gk * n)
    vals = 1 + 2 / ((1 if obj == "head_out" else gv) * arch.d_v)
    outs = 1 + 2 / arch.d_o if obj == "out" else 1
    return keys * vals * outs - 1


def predicted_top_spread(arch: Architecture, obj="out", finite_width=True, *, dps=15, bulk_law=None):
    r"""The standard deviation of the top eigenvalue over initialisations that the
    spike's own fluctuation causes: ``(λ(θ²(1 + σ)) − λ(θ²(1 − σ)))/2`` with
    ``σ² =`` :func:`spike_strength_variance` and ``λ(·)`` =
    :func:`predicted_top_eigenvalue` at that ``θ²`` (first order in ``σ``).

    The mean of ``λ`` over initialisations differs from ``λ(E θ²)`` by
    ``½ λ''σ²θ⁴``, at most 0.13 % for the public configurations (Falcon-7B at
    ``n = 1024``; ``λ`` is nearly linear in ``θ²`` above the threshold), so
    :func:`predicted_top_eigenvalue` is the prediction of the mean.  A mean over ``s`` initialisations scatters by
    ``spread/√s``: compare it with the prediction within that band.

    Returns a float (0 below the threshold).  Raises as
    :func:`predicted_top_eigenvalue` and :func:`spike_strength_variance`.
    Source: theory.md §7 F2.
    """
    from freeprob.attention.finite_width import _sized as _check
    _check(arch, "predicted_top_spread")
    sigma = spike_strength_variance(arch, obj) ** 0.5
    theta_sq = float(spike_strength(arch, obj))
    law = _bulk_law(arch, obj, finite_width) if bulk_law is None else bulk_law
    hi, lo = (predicted_top_eigenvalue(arch, obj, finite_width, dps=dps, bulk_law=law,
                                       theta_sq=theta_sq * (1 + e * sigma)) for e in (1, -1))
    return 0.5 * (hi - lo)


def _bulk_law(arch, obj, finite_width):
    from freeprob.attention import laws
    fn = {"single": laws.attention_law, "concat": laws.concatenated_attention_law,
          "sum": laws.head_sum_law, "head_out": laws.head_output_law,
          "stack": laws.stacked_output_law, "out": laws.output_law}[obj]
    return fn(arch, finite_width=finite_width)


def direction_s_transform(arch: Architecture, obj="out"):
    r"""``(t, s)``: the spike direction's term of the outlier equation of an object.

    Write the object as ``F = M B`` with ``M = [M_1, …, M_h]`` (``n × N``, ``N = tn``;
    rows i.i.d. given the keys) and ``B`` the fixed right factor (values, ``W_O``,
    head averaging), ``C = B Bᵀ`` (``N × N``).  The key-norm term is ``u mᵀ`` in ``M``
    (``u = 1/√n``, ``m = [μ_1; …; μ_h]``), generic with respect to ``C`` and the row
    covariance (``μ`` is even in the keys, ``V`` and ``W_O`` are independent of them).
    ``s(u) = S_C(u)/S_C(0)`` is the normalised S-transform of the law of ``C``:

    * ``single``, ``concat`` (``C = I/h``), ``sum``: ``s = 1``; ``t = 1, h, 1``;
    * ``head_out`` (``C = V_c V_cᵀ/n``), ``stack`` (block diagonal of those):
      ``s(u) = c_V/(c_V + u)``; ``t = 1, h``;
    * ``out`` (``C = D W_O W_Oᵀ Dᵀ``, ``D = diag(V_i/√n)``; ``MP(c_V) ⊠ (γ_O/γ_V)MP(γ_V/γ_O)``
      on the ``h d_V`` columns, mixed with ``δ_0`` to ``N = hn``):
      ``s(u) = c_V γ_O/((c_V + u)(γ_O + h u))``; ``t = h``.

    Returns ``(t, s)`` with ``t`` a float and ``s`` a function of a float ``u ≥ 0``
    (``s(0) = 1``).  Raises ``FreeprobValueError`` for an unknown ``obj`` or a layer
    without sizes or ``beta``.  Source: theory.md §7 F2 (the direction term);
    [NS06]_ Lecture 18 (S-transforms of free products, of MP, and of a mixture with
    ``δ_0``).
    """
    own = "direction_s_transform"
    if obj not in SPIKE_OBJECTS:
        raise FreeprobValueError(f"{own}: obj must be one of {', '.join(SPIKE_OBJECTS)}; got {obj!r}")
    _sized(arch, own, numeric=True)
    h = arch.heads
    if obj in ("single", "concat", "sum"):
        return float({"single": 1, "concat": h, "sum": 1}[obj]), (lambda u: 1.0)
    cv = float(arch.c_v)
    if obj in ("head_out", "stack"):
        return float(1 if obj == "head_out" else h), (lambda u: cv / (cv + u))
    go = float(arch.gamma_o)
    return float(h), (lambda u: cv * go / ((cv + u) * (go + h * u)))


def predicted_top_eigenvalue(arch: Architecture, obj="out", finite_width=True, *, dps=15, bulk_law=None,
                             theta_sq=None):
    r"""The predicted top eigenvalue of an object's Gram: the key-norm outlier, or the
    right edge of the bulk below the threshold.

    **Equation.**  Write the object as ``F = M B`` (:func:`direction_s_transform`:
    ``M`` the stacked ``√n A_i⊥``, ``n × N``, ``N = tn``; ``B`` the values, ``W_O`` or
    head averaging; ``C = BBᵀ``) and ``M = u mᵀ + Y`` (``u = 1/√n``, ``m`` the key-norm
    means ``μ_i`` stacked, ``Y`` the bulk, rows i.i.d. with covariance ``Σ/n`` given the
    keys).  Rotate ``u`` to ``e_1``: the Gram differs from the bulk Gram in row 1 only,
    and its top eigenvalue ``λ`` solves
    ``1 = (y_1 + m)ᵀB(λ − A)^{-1}Bᵀ(y_1 + m)`` with ``A = BᵀY₋ᵀY₋B``.  The Schur
    complement of ``(λ − FFᵀ)^{-1}_{11} → G_ν(λ)`` gives
    ``τ = y_1ᵀB(λ − A)^{-1}Bᵀy_1 → 1 − 1/(λG_ν(λ))``; the deterministic equivalent
    ``(λ − A)^{-1} ≈ (λ − λG_ν BᵀΣB)^{-1}``, the push-through identity and the
    multiplicative subordination of the free pair ``(C, Σ)``
    (``E_C[(1 − wCΣ)^{-1}] = (1 − ω(w)C)^{-1}``, ``ψ_{CΣ} = ψ_C ∘ ω``) give, for ``m``
    generic, ``ψ_C(ω) = u := (λG_ν − 1)/t`` and
    ``mᵀB(λ − A)^{-1}Bᵀm = |m|²(1 + u)/(λ S_C(u))``, whence (``1 − τ = 1/(λG_ν)``)

    ``θ² (1 + u) G_ν(λ) = s(u)``,   ``u = (λ G_ν(λ) − 1)/t``,

    with ``s = S_C/S_C(0)`` and ``θ² = |m|²/S_C(0)`` (:func:`spike_strength`,
    :func:`direction_s_transform`).  The covariance ``Σ`` drops out.  For ``C = I``
    (single, concat, sum) this is the rectangular BBP equation ``λ G_ν G_ν̃ = 1/θ²`` of
    Benaych-Georges & Nadakuditi (2012, Thm. 2.9) (``G_ν̃ = G_ν/t + (1 − 1/t)/λ``); for
    ``head_out``, ``stack`` and ``out`` the spike direction ``Bᵀm`` lies along ``B`` and
    ``s(u) < 1`` raises the outlier (the generic-direction equation, used up to
    version 600cb39 with a first-order ``W_O`` alignment term, predicted 23.8 instead of
    24.6 for LLaMA-2-7B at ``n = 2048``; softmax 25.2).  The left side ``θ²(1 + u)G/s``
    decreases in ``λ``; if at the edge ``E`` of ``ν`` it is already ``≤ 1`` there is no
    outlier and the answer is ``E``.

    ``θ²`` is :func:`spike_strength` (its mean over initialisations); the bulk law ``ν``
    the finite-width law (``finite_width=True``) or the GE law.

    Parameters
    ----------
    arch : Architecture
        From :meth:`Architecture.from_dimensions`, with a numeric ``beta``.
    obj : {"single", "concat", "sum", "head_out", "stack", "out"}
    finite_width : bool
    dps : int
        Digits of the Cauchy-transform evaluations.
    bulk_law : Law, optional
        The bulk law ``ν`` when the caller has already built it (the law of ``obj`` at
        ``arch`` with this ``finite_width``; not rebuilt, and its cached support and
        Cauchy equation are reused: ``freeprob verify`` tabulates the law first).  It is
        not checked to be that law.
    theta_sq : float, optional
        The spike strength ``θ²`` (default :func:`spike_strength`, its mean over
        initialisations); e.g. the realised ``n|v|²`` of one draw, or the points of
        :func:`predicted_top_spread`.

    Returns
    -------
    float
        In the unnormalised units of theory.md §1 (the Gram ``F Fᵀ``, ``n × n``).

    Raises
    ------
    FreeprobValueError
        Unknown ``obj``; a layer without sizes or ``beta``; a symbolic ``beta``;
        a ``bulk_law`` that is not a :class:`~freeprob.laws.law.Law`; a ``theta_sq``
        that is not a finite real number ``≥ 0``.

    Source: theory.md §7 F2; [BGN12]_; [NS06]_ Lecture 18; this module's docstring.
    """
    import mpmath
    own = "predicted_top_eigenvalue"
    if obj not in SPIKE_OBJECTS:
        raise FreeprobValueError(f"{own}: obj must be one of {', '.join(SPIKE_OBJECTS)}; got {obj!r}")
    if not isinstance(finite_width, bool):
        raise FreeprobValueError(f"{own}: finite_width must be a bool; got {finite_width!r}")
    b = _sized(arch, own, numeric=True)
    if not b.is_number:
        raise FreeprobValueError(f"{own}: needs a numeric beta; got {arch.beta!r}")
    if theta_sq is None:
        theta_sq = float(spike_strength(arch, obj))
    else:
        theta_sq = _nonnegative(theta_sq, own, "theta_sq")
    if bulk_law is not None and not isinstance(bulk_law, Law):
        raise FreeprobValueError(f"{own}: bulk_law must be a Law; got {type(bulk_law).__name__}")
    law = _bulk_law(arch, obj, finite_width) if bulk_law is None else bulk_law
    tops = [float(hi) for _, hi in law.support(dps=dps)]
    if not tops:        # no continuous part (β = 0: every row is the uniform average, a point mass)
        return max(float(loc) for loc, _ in law.atoms(dps=dps))
    edge = max(tops)
    t, s = direction_s_transform(arch, obj)

    # G at the points already evaluated for this law (the bracket's first points, edge·(1 + 1e-9)
    # and its doublings, are the same for every θ²: the spread and each draw's prediction reuse them)
    known = law._cache.setdefault(("top_cauchy", dps), {})

    def lhs(lam):
        g = known.get(lam)
        if g is None:
            g = known[lam] = float(law.cauchy(mpmath.mpf(lam), dps=dps).real)
        u = max((lam * g - 1) / t, 0.0)
        return theta_sq * (1 + u) * g / s(u)

    if theta_sq <= 0:
        return edge
    lo = edge * (1 + 1e-9) + 1e-12
    f_lo = lhs(lo) - 1
    if f_lo <= 0:
        return edge
    hi = 2 * lo
    f_hi = lhs(hi) - 1
    while f_hi > 0:
        lo, f_lo = hi, f_hi
        hi *= 2
        f_hi = lhs(hi) - 1
    # the root of lhs − 1 (decreasing) in the bracket [lo, hi], to 1e-10 relative: regula
    # falsi with the Illinois step (the stale end's value halved), ~10 evaluations where
    # bisection took ~35, each a certified Cauchy transform (Dowell & Jarratt 1971)
    stale = 0
    for _ in range(200):
        if hi - lo <= 1e-10 * hi:
            break
        mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo) if f_hi != f_lo else 0.5 * (lo + hi)
        if not lo < mid < hi:
            mid = 0.5 * (lo + hi)
        f_mid = lhs(mid) - 1
        if f_mid > 0:
            lo, f_lo = mid, f_mid
            f_hi, stale = (f_hi / 2, stale) if stale == 1 else (f_hi, 1)
        else:
            hi, f_hi = mid, f_mid
            f_lo, stale = (f_lo / 2, stale) if stale == -1 else (f_lo, -1)
    return 0.5 * (lo + hi)
