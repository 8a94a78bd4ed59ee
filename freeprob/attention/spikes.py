r"""The key-norm spike of softmax attention and the predicted top eigenvalue of every
object (issue 18; theory.md §7 F2).

Given the keys the rows of ``n A⊥`` have the common mean ``μ``,
``μ_b ∝ e^{β²|k_b|²/(2d_K)} − mean``, of squared norm
``‖μ‖² = n[(1 − 2β²/d_K)^{−d_K/2}(1 − β²/d_K)^{d_K} − 1] ≈ nβ⁴/(2d_K)``
(:func:`key_norm_spike`), an ``O(1)`` rank-one term in the ``√n A⊥`` scaling that the GE
drops.  Every object is ``X + θ u vᵀ`` with ``X`` its bulk (law ``ν``, rows i.i.d. given
the keys, values and ``W_O``), ``u = 1/√n`` and ``θ²`` = ``‖μ‖²`` times the coherence of
the object (:func:`spike_strength`: heads add incoherently except for the head sum with
shared keys).  The top eigenvalue solves ``θ² Q(λ) = 1/(λ G_ν(λ))`` (a rank-one change of
one row of a left-invariant matrix); for a generic direction ``Q = G_ν̃`` and this is the
rectangular BBP-type equation ``λ G_ν(λ) G_ν̃(λ) = 1/θ²`` of [BGN12]_; below the threshold
the top eigenvalue sticks to the bulk edge (:func:`predicted_top_eigenvalue`).

References: [THEORY]_ §7; [BGN12]_; [HK26]_.
"""
from __future__ import annotations

import sympy as sp

from freeprob.attention.architecture import Architecture
from freeprob.attention.finite_width import _sized
from freeprob.errors import FreeprobValueError
from freeprob.laws.law import Law

__all__ = ["SPIKE_OBJECTS", "key_norm_spike", "spike_strength", "predicted_top_eigenvalue"]

#: the objects of :func:`predicted_top_eigenvalue` (theory.md §1)
SPIKE_OBJECTS = ("single", "concat", "sum", "head_out", "stack", "out")


def key_norm_spike(arch: Architecture):
    r"""``‖μ‖²``: the squared norm of the common row mean ``μ`` of one head's ``n A⊥``
    given its keys (theory.md §7 F2), in the ``√n A⊥`` scaling (an ``O(1)`` number).

    ``μ_b = e^{t s_b}/mean_c e^{t s_c} − 1``, ``s_b = |k_b|²/d_K``, ``t = β²/2`` (as
    :func:`freeprob.sampler.key_norm_mean`), so
    ``‖μ‖²/n → E e^{2ts}/(E e^{ts})² − 1 = (1 − 2β²/d_K)^{−d_K/2}(1 − β²/d_K)^{d_K} − 1``
    ``≈ β⁴/(2d_K)``, every expectation a χ² moment generating function.  Exact (sympy).
    With ``t = β²/2`` this reproduces the softmax value measured in theory.md §7 (16.22 at
    ``n = 2000``, ``d_K = 64``, ``β = 1``; formula 16.25); the Gaussian average over
    ``q`` with the expected normaliser, ``t = β²d_K/(2(d_K + β²))``, gives 15.70.

    Raises ``FreeprobValueError`` for a layer without sizes or ``beta``, or
    ``d_K ≤ 2β²``.  Source: theory.md §7 F2.
    """
    own = "key_norm_spike"
    b = _sized(arch, own)
    dk = arch.d_k
    b2 = b**2
    if b2.is_number and not 2 * b2 < dk:
        raise FreeprobValueError(f"{own}: needs d_K > 2 beta^2; got d_K={dk}, beta={arch.beta}")
    return arch.n * ((1 - 2 * b2 / dk) ** (-sp.Rational(dk, 2)) * (1 - b2 / dk) ** dk - 1)


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


def _bulk_law(arch, obj, finite_width):
    from freeprob.attention import laws
    fn = {"single": laws.attention_law, "concat": laws.concatenated_attention_law,
          "sum": laws.head_sum_law, "head_out": laws.head_output_law,
          "stack": laws.stacked_output_law, "out": laws.output_law}[obj]
    return fn(arch, finite_width=finite_width)


def predicted_top_eigenvalue(arch: Architecture, obj="out", finite_width=True, *, dps=15, bulk_law=None):
    r"""The predicted top eigenvalue of an object's Gram: the key-norm outlier, or the
    right edge of the bulk below the threshold.

    **Equation.**  Rotate ``u = 1/√n`` to ``e_1`` (the rows are i.i.d. given the keys,
    values and ``W_O``, so the bulk ``X`` is left-invariant): the perturbed matrix differs
    from ``X`` in row 1 only, ``x_1 → x_1 + θ v``.  With ``A = X₋ᵀX₋`` (the other rows,
    ``p × p``), the top eigenvalue ``λ`` of the Gram solves
    ``1 = (x_1 + θv)ᵀ(λ − A)^{-1}(x_1 + θv) ≈ θ² vᵀ(λ − A)^{-1}v + x_1ᵀ(λ − A)^{-1}x_1``,
    and the Schur complement of ``(λ − XXᵀ)^{-1}_{11}`` gives
    ``x_1ᵀ(λ − A)^{-1}x_1 → 1 − 1/(λ G_ν(λ))``.  Hence

    ``θ² Q(λ) = 1/(λ G_ν(λ))``,   ``Q(λ) = vᵀ(λ − A)^{-1} v``.

    For ``v`` in generic position ``Q = G_ν̃``, ``G_ν̃(λ) = (n/p)G_ν(λ) + (1 − n/p)/λ``,
    which is the rectangular BBP equation ``λ G_ν G_ν̃ = 1/θ²`` of Benaych-Georges &
    Nadakuditi (2012, Thm. 2.9).  For ``out`` the direction ``v ∝ W_Oᵀ x`` lies along
    ``W_O``: ``vᵀAv = |O v|² → m1(1/γ_O + 1/γ_V)`` instead of the generic
    ``(n/p) m1 = m1/γ_O`` (the same alignment as
    :func:`freeprob.attention.common_row_spike`), and ``Q`` gets the first-order term
    ``Q = G_ν̃ + (m1/γ_V)/λ²``.  The left side decreases in ``λ``; if at the edge ``E``
    of ``ν`` it is already ``≤ 1/θ²`` there is no outlier and the answer is ``E``.

    ``θ²`` is :func:`spike_strength`; the bulk law ``ν`` the finite-width law
    (``finite_width=True``) or the GE law.

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

    Returns
    -------
    float
        In the unnormalised units of theory.md §1 (the Gram ``F Fᵀ``, ``n × n``).

    Raises
    ------
    FreeprobValueError
        Unknown ``obj``; a layer without sizes or ``beta``; a symbolic ``beta``;
        a ``bulk_law`` that is not a :class:`~freeprob.laws.law.Law`.

    Source: theory.md §7 F2; [BGN12]_; this module's docstring.
    """
    import mpmath
    own = "predicted_top_eigenvalue"
    if obj not in SPIKE_OBJECTS:
        raise FreeprobValueError(f"{own}: obj must be one of {', '.join(SPIKE_OBJECTS)}; got {obj!r}")
    if not isinstance(finite_width, bool):
        raise FreeprobValueError(f"{own}: finite_width must be a bool; got {finite_width!r}")
    b = _sized(arch, own)
    if not b.is_number:
        raise FreeprobValueError(f"{own}: needs a numeric beta; got {arch.beta!r}")
    theta_sq = float(spike_strength(arch, obj))
    if bulk_law is not None and not isinstance(bulk_law, Law):
        raise FreeprobValueError(f"{own}: bulk_law must be a Law; got {type(bulk_law).__name__}")
    law = _bulk_law(arch, obj, finite_width) if bulk_law is None else bulk_law
    edge = max(float(hi) for _, hi in law.support(dps=dps))
    ratio = arch.n / _other_side(arch, obj)
    align = 0.0
    if obj == "out":
        align = float(law.moments(1, dps=dps)[1]) / float(arch.gamma_v)

    def lhs(lam):
        g = float(law.cauchy(mpmath.mpf(lam), dps=dps).real)
        return lam * g * (ratio * g + (1 - ratio) / lam + align / lam**2)

    if theta_sq <= 0:
        return edge
    target = 1.0 / theta_sq
    lo = edge * (1 + 1e-9) + 1e-12
    if lhs(lo) <= target:
        return edge
    hi = 2 * lo
    while lhs(hi) > target:
        hi *= 2
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if lhs(mid) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-10 * hi:
            break
    return 0.5 * (lo + hi)
