r"""The limiting spectral laws of multi-head softmax attention (Gaussian equivalence).

Hayase & Karakida [HK26]_ replace the centred softmax attention of a head by its
Gaussian equivalent (GE)

.. math:: M_i^{GE} = n^{-1/2}\,(S_i + \sqrt{\theta_1-\theta_2}\,Z_i)(I - P),\qquad
          \theta_1 = e^{\beta^2}-1,\quad \theta_2 = \beta^2,

with ``S_i = β Q_i K_iᵀ/√d_K`` and ``Z_i`` i.i.d. standard Gaussian.  Every object of the
network is then a free-probability law built from a few primitives
(theory.md §3, our reconstruction; all normalizations there):

* the row covariance law of one head, ``ρ_c = θ2·MP(1/c) + (θ1 − θ2)``
  (:func:`row_covariance_law`), ``c`` the key ratio;
* compound free Poisson steps ``π(ν, t)`` for each sample-covariance stage
  (values, output weights), [MS17]_ §4.4, [NS06]_ Lecture 12;
* for within-head tied keys and values (``W_V = W_K``), the pushforward of the key
  spectrum ``MP(c_K)`` by ``φ_KV(x) = (θ2/c_K) x² + (θ1 − θ2) x`` (theory.md §3.4).

All laws are **token-side** ``n × n`` Gram spectra (atoms at 0 included), unnormalised;
:func:`mean_normalized` divides by the mean (the paper's "average squared row norm
one").  Every law is a :class:`~freeprob.laws.law.Law` of the exact core: exact moments (as
rational functions of θ1, θ2, h and the width ratios when these are symbols), an
algebraic Cauchy equation and certified densities.

====================================  ===========================================================
law                                   construction (``c_K = γ_K/h``, ``c_V = γ_V/h``)
====================================  ===========================================================
:func:`attention_law`                 ``π(ρ_{c_K}, 1)``
:func:`concatenated_attention_law`    ``h⁻¹ π(ρ_{c_K}, h)`` (= ``ρ_{γ_K} ⊠ MP(1/h)``)
:func:`head_sum_law`                  ``π(ρ_γ, 1)``, ``γ = γ_K`` (independent keys), ``c_K``
                                      (one shared key), ``h_KV c_K`` (grouped queries)
:func:`head_output_law`               ``π(μ_B, c_V)``
:func:`stacked_output_law`            ``π(μ_B, γ_V)``
:func:`output_law`                    ``π(μ_VO, γ_O)``, ``μ_VO = t⁻¹ π(μ_B, t)``, ``t = γ_V/γ_O``
====================================  ===========================================================

Here ``μ_B = c_V π(ρ_{c_K}, 1/c_V)`` is the law of a head's value covariance
``B_i = V_iᵀ Σ_i V_i / n`` (untied), and ``μ_B = φ_KV # MP(c_K)`` for tied values.
Across-head K/V sharing (GQA, MQA, a shared key matrix) leaves every law except the
head-sum unchanged at fixed ``h`` and widths (theory.md §3.5): the stacked covariance is
block diagonal, and its law is the average of its blocks' laws, repeated or not.

Weights other than Gaussian: the laws hold unchanged for value and output weights with
i.i.d. entries of the same variance and finite moments (e.g. Rademacher), by the
universality of sample-covariance limits ([BS10]_ Thm. 4.3).  Haar-orthogonal output
weights change the output stage (a free compression instead of a compound free Poisson
step); they are not covered by :func:`output_law`.

References: [HK26]_, [MS17]_, [NS06]_, [BS10]_, [THEORY]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

import sympy as sp

from freeprob.attention.architecture import SCHEMES, Architecture
from freeprob.attention.finite_n import check_finite_n as _finite_n
from freeprob.attention.finite_n import finite_n_law as _finite_n_law
from freeprob.attention.finite_n_width import finite_n_finite_width_law as _finite_n_finite_width_law
from freeprob.attention.ge import ge_coefficients, theta1, theta2
from freeprob.core.params import as_exact, sign
from freeprob.errors import FreeprobValueError
from freeprob.laws.families import CompoundFreePoisson, Dirac, MarchenkoPastur
from freeprob.laws.law import Law
from freeprob.laws.operations import dilate, pushforward, shift
from freeprob.core.symbols import x

__all__ = [
    "ge_coefficients", "Architecture", "SCHEMES", "theta1", "theta2",
    "row_covariance_law", "value_covariance_law", "tied_value_covariance_law",
    "attention_law", "concatenated_attention_law", "head_sum_law", "head_sum_ratio", "head_output_law",
    "stacked_output_law", "output_law", "mean_normalized", "common_row_spike",
]


def _positive(value, owner, name, *, integer=False):
    v = as_exact(value, owner, name)
    if integer:
        if v.is_number and not (v.is_Integer and v > 0):
            raise FreeprobValueError(f"{owner}: {name} must be a positive integer, got {value!r}")
        if not v.is_number and v.is_positive is not True:
            raise FreeprobValueError(
                f"{owner}: a symbolic {name} must be declared positive, e.g. "
                f"sympy.Symbol('{name}', positive=True); got {value!r}")
        return v
    if v.is_number:
        if not v.is_real or sign(v) <= 0:
            raise FreeprobValueError(f"{owner}: {name} must be a real number > 0, got {value!r}")
    elif v.is_positive is not True:
        raise FreeprobValueError(
            f"{owner}: a symbolic {name} must be declared positive, e.g. "
            f"sympy.Symbol('{name}', positive=True); got {value!r}")
    return v


def _check_arch(arch, owner):
    if not isinstance(arch, Architecture):
        raise FreeprobValueError(
            f"{owner}: expected an Architecture, got {type(arch).__name__}")


def _s(value):
    """A layer's number (``int``, ``Fraction`` or sympy) as a sympy expression: the laws
    compute in sympy, the layer class stores rationals without it."""
    return sp.sympify(value)


# -- primitives --------------------------------------------------------------------------
def row_covariance_law(ratio, theta1_=theta1, theta2_=theta2) -> Law:
    r"""``ρ_c = θ2·MP(1/c) + (θ1 − θ2)``: the law of one head's row covariance
    ``Σ = θ2 K Kᵀ/d_K + (θ1 − θ2) I_n`` (``n × n``, ``K ∈ ℝ^{n×cn}``).

    Mean ``θ1``, variance ``θ2²/c``; ``S_{ρ_c}(u) = F(u/c)`` with
    ``s θ2 v F² − (θ1 + θ2 v) F + 1 = 0`` (theory.md §3.1).

    Raises ``FreeprobValueError`` for a non-positive ratio.
    Source: theory.md §2 item 3 (El Karoui's kernel expansion), §3.1.
    """
    c = _positive(ratio, "row_covariance_law", "ratio")
    if sp.sympify(theta2_).is_zero:
        # β = 0: uniform attention, Σ = θ1 I = 0 (the centred attention vanishes)
        return Dirac(theta1_ - theta2_)
    return shift(dilate(MarchenkoPastur(1 / c), theta2_), theta1_ - theta2_)


def value_covariance_law(arch: Architecture, finite_width=False) -> Law:
    r"""``μ_B``: the law of a head's value covariance ``B_i = V_iᵀ Σ_i V_i / n``
    (``d_V × d_V``), the jump law of the head output's compound free Poisson law.

    Untied: ``μ_B = c_V · π(ρ_{c_K}, 1/c_V)``, free cumulants ``c_V^{k−1} m_k(ρ_{c_K})``;
    tied (``V_i = K_i``): :func:`tied_value_covariance_law`.
    Mean ``θ1`` (untied) or ``θ1 + θ2/c_K`` (tied).  ``finite_width=True``: ``ρ_{c_K}``
    replaced by the finite-width ``ρ^{fw}`` (:mod:`freeprob.attention.finite_width`;
    needs a layer from :meth:`Architecture.from_dimensions` with ``beta``, else
    ``FreeprobValueError``).

    Source: theory.md §3.1 (untied), §3.4 (tied), §7 (finite width).
    """
    _check_arch(arch, "value_covariance_law")
    if arch.scheme == "tied":
        return tied_value_covariance_law(arch, finite_width=finite_width)
    return _scaled(*_value_parts(arch, "value_covariance_law", finite_width))


def _value_parts(arch, owner, finite_width):
    """``(μ_B1, c)`` with ``μ_B = c·μ_B1`` (:func:`_head_rho`)."""
    if arch.scheme == "tied":
        return tied_value_covariance_law(arch, finite_width=finite_width), 1
    rho, c = _head_rho(arch, owner, finite_width)
    return dilate(CompoundFreePoisson(1 / _s(arch.c_v), rho), _s(arch.c_v)), c


def tied_value_covariance_law(arch: Architecture, finite_width=False) -> Law:
    r"""``μ_B = φ_KV # MP(c_K)`` for within-head tied values ``V_i = K_i``, with
    ``φ_KV(x) = (θ2/c_K) x² + (θ1 − θ2) x`` and ``MP(c_K)`` the law of ``K_iᵀK_i/n``.

    It holds because ``Σ_i`` is a polynomial in ``K_i K_iᵀ`` (theory.md §3.4; the paper's
    "pushforward of π_{γ_K/h} under φ_KV").  Mean ``θ1 + θ2/c_K``.

    ``finite_width=True`` (a layer from :meth:`Architecture.from_dimensions` with
    ``beta``): the same pushforward, the chaoses ``k ≥ 2`` of ``Σ_i`` kept white.  With
    ``K_i = U Λ^{1/2} Oᵀ`` and ``Σ_i = θ2 K_iK_iᵀ/d_K + R`` (``R`` the chaoses ``≥ 2`` and the
    noise, free from ``K_iK_iᵀ``), ``B_i = O D^{1/2}((θ2/c_K) D + UᵀRU) D^{1/2} Oᵀ``,
    ``D = Λ/n``: ``R`` enters only through its free compression to a ``d_K``-dimensional
    subspace, whose variance is ``c_K Var(R)`` (``≈ 0.013`` against ``θ2/c_K = 12`` at GPT-2
    small widths, β = 1), so the chaos structure is negligible here and the finite-width
    correction of tied layers is the (weighted) row-norm factor of the objects
    (:func:`freeprob.attention.finite_width.with_row_factor`).  Using the finite-``d_K``
    coordinate variance ``θ1^{fw}`` here was measured to fit worse (GPT-2 small widths,
    β = 1: relW1 1.16 % → 1.43 %).  Raises ``FreeprobValueError`` for a layer without
    sizes or ``beta``.
    """
    _check_arch(arch, "tied_value_covariance_law")
    ck, t1, t2 = _s(arch.c_k), arch.theta1, arch.theta2
    if _check_flag(finite_width, "tied_value_covariance_law"):
        from freeprob.attention.finite_width import _sized
        _sized(arch, "tied_value_covariance_law")
    if sp.sympify(t2).is_zero and sp.sympify(t1).is_zero:
        return Dirac(0)          # β = 0: Σ = 0
    return pushforward(MarchenkoPastur(ck), (t2 / ck) * x**2 + (t1 - t2) * x)


def _finite_rho(arch, owner, *, keys=1, rows=1):
    """``(ρ_1, c)``: the finite-width row covariance law is ``c·ρ_1``
    (:func:`freeprob.attention.finite_width.finite_width_rho_parts`)."""
    from freeprob.attention.finite_width import finite_width_rho_parts
    return finite_width_rho_parts(arch, keys=keys, rows=rows, owner=owner)


def _scaled(law, c):
    """``c·law`` (``law`` itself for ``c = 1``)."""
    return law if sp.sympify(c) == 1 else dilate(law, c)


def _rows(law, arch, finite_width, heads_averaged, c=1):
    """The finite-width row-norm factor (F3) on an object's law, then the bulk scale ``c``
    applied once, outside (every object is linear in the dilation of ``ρ``:
    :func:`freeprob.attention.finite_width.finite_width_rho_parts`)."""
    if not finite_width:
        return law
    from freeprob.attention.finite_width import with_row_factor
    return _scaled(with_row_factor(law, arch, heads_averaged), c)


def _with_finite_n(arch, obj, finite_width, law_function):
    """The finite-n law of ``obj`` (:mod:`freeprob.attention.finite_n`); with
    ``finite_width`` its first-order combination with the finite-width law
    (:mod:`freeprob.attention.finite_n_width`)."""
    if not _check_flag(finite_width, law_function.__name__):
        return _finite_n_law(arch, obj)
    return _finite_n_finite_width_law(arch, obj, law_function)


def _check_flag(finite_width, owner):
    if not isinstance(finite_width, bool):
        raise FreeprobValueError(f"{owner}: finite_width must be a bool; got {finite_width!r}")
    return finite_width


def _head_rho(arch, owner, finite_width):
    """``(ρ, c)``: ``ρ_{c_K}`` and 1 (limit), or ``ρ_1`` and ``c`` with ``ρ^{fw} = c·ρ_1``
    (finite width) of one head."""
    if _check_flag(finite_width, owner):
        return _finite_rho(arch, owner)
    return row_covariance_law(_s(arch.c_k), arch.theta1, arch.theta2), 1


# -- the laws of the paper ---------------------------------------------------------------
def attention_law(arch: Architecture, finite_width=False, finite_n=False):
    r"""The centred attention of one head: the law of ``M_1 M_1ᵀ``, ``M_1 = √n A_1 (I − P)``.

    ``π(ρ_{c_K}, 1) = ρ_{c_K} ⊠ π_1``; mean ``θ1``, ``m2 = 2θ1² + θ2²/c_K``.
    The same for every scheme.  Source: theory.md §3.2 (table, "single").

    >>> arch = Architecture(heads=1, gamma_k=sp.Rational(1, 2), gamma_v=1, gamma_o=1)
    >>> attention_law(arch).moments(2)
    (1, theta1, 2*theta1**2 + 2*theta2**2)

    ``finite_width=True``: the finite-width law at the layer's own ``n`` and widths
    (:mod:`freeprob.attention.finite_width`: Hermite chaoses as Wishart pieces of ratio
    ``n/C(d_K+k−1, k)``, their norm factors, the row-norm factor, the bulk scale ``θ1^{emp}`` of
    the empirical softmax normaliser; theory.md §7).  Needs
    a layer from :meth:`Architecture.from_dimensions` with ``beta``; otherwise, or for a
    non-bool flag, ``FreeprobValueError``.

    ``finite_n=True`` (a layer with integer sizes): the GE model's expected law at the
    layer's ``n`` to order ``1/n``, a :class:`~freeprob.laws.finite_n.FiniteNLaw`
    (:mod:`freeprob.attention.finite_n`); with ``finite_width=True`` too, the finite-width
    law plus the GE model's finite-n shift, to first order in both
    (:mod:`freeprob.attention.finite_n_width`).
    """
    _check_arch(arch, "attention_law")
    if _finite_n(arch, finite_n, finite_width, "attention_law"):
        return _with_finite_n(arch, "single", finite_width, attention_law)
    rho, c = _head_rho(arch, "attention_law", finite_width)
    return _rows(CompoundFreePoisson(1, rho), arch, finite_width, 1, c)


def concatenated_attention_law(arch: Architecture, finite_width=False, finite_n=False):
    r"""The concatenated attention of ``h`` heads: ``(1/h) Σ_i M_i M_iᵀ``.

    ``h⁻¹ π(ρ_{c_K}, h)``, which equals ``ρ_{γ_K} ⊠ MP(1/h)`` (theory.md §3.1 corollary:
    the paper's attention identity).  Unchanged by key sharing (shared keys, GQA, MQA)
    and by tying.  Mean ``θ1``, ``m2 = θ1²(1 + 1/h) + θ2²/γ_K``.

    ``finite_width=True``: the finite-width law at the layer's own ``n`` and widths
    (:mod:`freeprob.attention.finite_width`: Hermite chaoses as Wishart pieces of ratio
    ``n/C(d_K+k−1, k)``, their norm factors, the row-norm factor, the bulk scale ``θ1^{emp}`` of
    the empirical softmax normaliser; theory.md §7).  Needs
    a layer from :meth:`Architecture.from_dimensions` with ``beta``; otherwise, or for a
    non-bool flag, ``FreeprobValueError``.

    ``finite_n=True`` (a layer with integer sizes): the GE model's expected law at the
    layer's ``n`` to order ``1/n``, a :class:`~freeprob.laws.finite_n.FiniteNLaw`
    (:mod:`freeprob.attention.finite_n`); with ``finite_width=True`` too, the finite-width
    law plus the GE model's finite-n shift, to first order in both
    (:mod:`freeprob.attention.finite_n_width`).
    """
    _check_arch(arch, "concatenated_attention_law")
    if _finite_n(arch, finite_n, finite_width, "concatenated_attention_law"):
        return _with_finite_n(arch, "concat", finite_width, concatenated_attention_law)
    rho, c = _head_rho(arch, "concatenated_attention_law", finite_width)
    return _rows(dilate(CompoundFreePoisson(_s(arch.heads), rho), 1 / _s(arch.heads)), arch, finite_width, arch.heads,
                 c)


def head_sum_ratio(arch: Architecture):
    """The key ratio of the head-sum law: ``γ_K`` (independent keys, tied), ``c_K`` (one
    shared key matrix), ``h_KV c_K`` (grouped queries).

    Raises ``FreeprobValueError`` if ``arch`` is not an :class:`Architecture`.
    Source: theory.md §3.2, §3.5."""
    _check_arch(arch, "head_sum_ratio")
    if arch.scheme == "shared_keys":
        return _s(arch.c_k)
    if arch.scheme == "gqa":
        return sp.simplify(_s(arch.kv_groups) * _s(arch.c_k))
    return _s(arch.gamma_k)


def head_sum_law(arch: Architecture, finite_width=False, finite_n=False):
    r"""The head sum: ``(1/h)(Σ_i M_i)(Σ_i M_i)ᵀ``, the output with structured
    ``W_O = [I; …; I]``.

    ``ρ_γ ⊠ π_1`` with ``γ`` = :func:`head_sum_ratio` (``γ_K``, ``γ_K/h`` for one shared
    key matrix, ``h_KV γ_K/h`` for grouped queries): unlike the other laws, sharing
    changes it.  Mean ``θ1``.  Source: theory.md §3.2 (table), §3.5.

    ``finite_width=True``: the finite-width law at the layer's own ``n`` and widths
    (:mod:`freeprob.attention.finite_width`: Hermite chaoses as Wishart pieces of ratio
    ``n/C(d_K+k−1, k)``, their norm factors, the row-norm factor, the bulk scale ``θ1^{emp}`` of
    the empirical softmax normaliser; theory.md §7).  Needs
    a layer from :meth:`Architecture.from_dimensions` with ``beta``; otherwise, or for a
    non-bool flag, ``FreeprobValueError``.

    ``finite_n=True`` (a layer with integer sizes): the GE model's expected law at the
    layer's ``n`` to order ``1/n``, a :class:`~freeprob.laws.finite_n.FiniteNLaw`
    (:mod:`freeprob.attention.finite_n`); with ``finite_width=True`` too, the finite-width
    law plus the GE model's finite-n shift, to first order in both
    (:mod:`freeprob.attention.finite_n_width`).
    """
    _check_arch(arch, "head_sum_law")
    if _finite_n(arch, finite_n, finite_width, "head_sum_law"):
        return _with_finite_n(arch, "sum", finite_width, head_sum_law)
    if _check_flag(finite_width, "head_sum_law"):
        rho, c = _finite_rho(arch, "head_sum_law", keys=arch.key_groups, rows=arch.heads)
    else:
        rho, c = row_covariance_law(head_sum_ratio(arch), arch.theta1, arch.theta2), 1
    return _rows(CompoundFreePoisson(1, rho), arch, finite_width, arch.heads if finite_width else 1, c)


def head_output_law(arch: Architecture, finite_width=False, finite_n=False):
    r"""One head's output ``H_1 H_1ᵀ``, ``H_1 = A_1(I − P) V_1`` (``n × d_V``).

    ``π(μ_B, c_V)`` with ``μ_B`` the value covariance law (:func:`value_covariance_law`):
    ``ρ_{c_K} ⊠ π_1 ⊠ π_{c_V}`` untied, mean ``θ1 c_V``; tied, mean ``θ1 c_K + θ2``.
    Atom ``1 − c_V`` at 0 when ``c_V < 1``.  Source: theory.md §3.2, §3.4.

    ``finite_width=True``: the finite-width law at the layer's own ``n`` and widths
    (:mod:`freeprob.attention.finite_width`: Hermite chaoses as Wishart pieces of ratio
    ``n/C(d_K+k−1, k)``, their norm factors, the row-norm factor, the bulk scale ``θ1^{emp}`` of
    the empirical softmax normaliser; theory.md §7).  Needs
    a layer from :meth:`Architecture.from_dimensions` with ``beta``; otherwise, or for a
    non-bool flag, ``FreeprobValueError``.

    ``finite_n=True`` (a layer with integer sizes): the GE model's expected law at the
    layer's ``n`` to order ``1/n``, a :class:`~freeprob.laws.finite_n.FiniteNLaw`
    (:mod:`freeprob.attention.finite_n`); with ``finite_width=True`` too, the finite-width
    law plus the GE model's finite-n shift, to first order in both
    (:mod:`freeprob.attention.finite_n_width`).
    """
    _check_arch(arch, "head_output_law")
    if _finite_n(arch, finite_n, finite_width, "head_output_law"):
        return _with_finite_n(arch, "head_out", finite_width, head_output_law)
    mu_b, c = _value_parts(arch, "head_output_law", finite_width)
    return _rows(CompoundFreePoisson(_s(arch.c_v), mu_b), arch, finite_width, 1, c)


def stacked_output_law(arch: Architecture, finite_width=False, finite_n=False):
    r"""The stacked head outputs ``Σ_i H_i H_iᵀ`` (``[H_1, …, H_h]``, ``n × h d_V``).

    ``π(μ_B, γ_V)`` (= ``ρ_{γ_K} ⊠ MP(1/h) ⊠ π_{γ_V}`` untied, the paper's
    ``ν_{∞,h} ⊠ π_{γ_V}``); mean ``θ1 γ_V`` untied, ``θ1 γ_K + h θ2`` tied.
    Unchanged by across-head sharing.  Source: theory.md §3.2, §3.4, §3.5.

    ``finite_width=True``: the finite-width law at the layer's own ``n`` and widths
    (:mod:`freeprob.attention.finite_width`: Hermite chaoses as Wishart pieces of ratio
    ``n/C(d_K+k−1, k)``, their norm factors, the row-norm factor, the bulk scale ``θ1^{emp}`` of
    the empirical softmax normaliser; theory.md §7).  Needs
    a layer from :meth:`Architecture.from_dimensions` with ``beta``; otherwise, or for a
    non-bool flag, ``FreeprobValueError``.

    ``finite_n=True`` (a layer with integer sizes): the GE model's expected law at the
    layer's ``n`` to order ``1/n``, a :class:`~freeprob.laws.finite_n.FiniteNLaw`
    (:mod:`freeprob.attention.finite_n`); with ``finite_width=True`` too, the finite-width
    law plus the GE model's finite-n shift, to first order in both
    (:mod:`freeprob.attention.finite_n_width`).
    """
    _check_arch(arch, "stacked_output_law")
    if _finite_n(arch, finite_n, finite_width, "stacked_output_law"):
        return _with_finite_n(arch, "stack", finite_width, stacked_output_law)
    mu_b, c = _value_parts(arch, "stacked_output_law", finite_width)
    return _rows(CompoundFreePoisson(_s(arch.gamma_v), mu_b), arch, finite_width, arch.heads if finite_width else 1, c)


def output_law(arch: Architecture, finite_width=False, finite_n=False):
    r"""The centred multi-head output ``O Oᵀ``, ``O = [H_1, …, H_h] W_O`` (``n × d_O``),
    ``W_O`` with i.i.d. entries of variance ``1/(h d_V)``.

    ``π(μ_VO, γ_O)`` with ``μ_VO = t⁻¹ π(μ_B, t)``, ``t = γ_V/γ_O`` (the law of
    ``W_Oᵀ B_⊕ W_O``); untied this is ``ρ_{γ_K} ⊠ MP(1/h) ⊠ MP(1/γ_V) ⊠ π_{γ_O}``.
    Mean ``θ1 γ_O`` (untied), ``(θ1 + θ2/c_K) γ_O`` (tied).  Atom at 0 of mass
    ``max(0, 1 − γ_V, 1 − γ_O)``.  Unchanged by across-head sharing (GQA, MQA, shared
    keys).  Source: theory.md §2 item 4 and §3.2 (the paper's compound free Poisson
    statement π(μ_VO, γ_O)).

    ``finite_width=True``: the finite-width law at the layer's own ``n`` and widths
    (:mod:`freeprob.attention.finite_width`: Hermite chaoses as Wishart pieces of ratio
    ``n/C(d_K+k−1, k)``, their norm factors, the row-norm factor, the bulk scale ``θ1^{emp}`` of
    the empirical softmax normaliser; theory.md §7).  Needs
    a layer from :meth:`Architecture.from_dimensions` with ``beta``; otherwise, or for a
    non-bool flag, ``FreeprobValueError``.

    ``finite_n=True`` (a layer with integer sizes): the GE model's expected law at the
    layer's ``n`` to order ``1/n``, a :class:`~freeprob.laws.finite_n.FiniteNLaw`
    (:mod:`freeprob.attention.finite_n`); with ``finite_width=True`` too, the finite-width
    law plus the GE model's finite-n shift, to first order in both
    (:mod:`freeprob.attention.finite_n_width`).
    """
    _check_arch(arch, "output_law")
    if _finite_n(arch, finite_n, finite_width, "output_law"):
        return _with_finite_n(arch, "out", finite_width, output_law)
    t = _s(arch.gamma_v) / _s(arch.gamma_o)
    mu_b, c = _value_parts(arch, "output_law", finite_width)
    mu_vo = dilate(CompoundFreePoisson(t, mu_b), 1 / t)
    return _rows(CompoundFreePoisson(_s(arch.gamma_o), mu_vo), arch, finite_width, arch.heads if finite_width else 1, c)


def mean_normalized(law: Law) -> Law:
    r"""``law`` divided by its mean (mean one; the paper's "average squared row norm one",
    its C.5/C.6).  For untied laws the result depends on β only through ``κ = θ2/θ1``.

    Raises ``FreeprobValueError`` if ``law`` is not a law or its mean is zero.  Source:
    theory.md §1.
    """
    if not isinstance(law, Law):
        raise FreeprobValueError(f"mean_normalized: expected a law (a freeprob Law, e.g. output_law(arch)); "
                                 f"got {type(law).__name__} {law!r}")
    m1 = law.moments(1)[1]
    if sp.simplify(m1) == 0:
        raise FreeprobValueError("mean_normalized: the law has mean 0")
    return dilate(law, 1 / m1)


def common_row_spike(arch: Architecture, n):
    r"""The top eigenvalue of the uncentred output Gram ``O_full O_fullᵀ`` carried by the
    common-row component ``1 bᵀ`` (``b = W_Oᵀ v̄``, ``v̄`` the column means of the values,
    ``b_j ~ N(0, 1/n)``).

    ``O_full = O + 1bᵀ`` is a rank-one perturbation of squared norm ``θ² = n‖b‖²``, mean
    ``n γ_O``, far above the ``O(1)`` bulk.  Expanding the top eigenvalue in ``1/θ``,
    ``λ = θ² + |Oᵀ1|²/n + |O b̂|² + O(θ⁻¹)``; with ``b̂ = b/‖b‖`` lying along ``W_O``,
    ``|O b̂|² → m1/γ_O + m1/γ_V`` and ``|Oᵀ1|²/n → m1``, so

    ``λ ≈ n γ_O + m1 (1 + 1/γ_O + 1/γ_V)``,  ``m1`` the mean of :func:`output_law`.

    ``n`` (tokens) must be a positive integer.  The leading term ``n‖b‖²`` fluctuates by
    a relative ``√(2/(h d_V) + 2/d_O)`` from draw to draw; the ``O(1)`` correction is the
    average.  Source: theory.md §1 ("The uncentred output adds B = 1bᵀ");
    ``derivations/common_row.py`` checks each term against the sampler.
    """
    _check_arch(arch, "common_row_spike")
    nn = _positive(n, "common_row_spike", "n", integer=True)
    m1 = output_law(arch).moments(1)[1]
    return sp.simplify(nn * _s(arch.gamma_o) + m1 * (1 + 1 / _s(arch.gamma_o) + 1 / _s(arch.gamma_v)))
