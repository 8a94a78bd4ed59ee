r"""The attention laws at finite ``n``: the GE model's expected spectral law to order ``1/n``.

The GE model (docs/theory.md §2) at finite sizes is, given the keys, values and output
weights, a chain of **real Gaussian sample covariances** with exact sizes:

* the rows of ``√n M_i = (S_i + √s Z_i)(I − P)`` are i.i.d. ``N(0, T_i)`` given ``K_i``,
  ``T_i = (I − P) Σ_i (I − P)``, ``Σ_i = θ2 K_iK_iᵀ/d_K + s I_n``.  On ``1^⊥``
  (dimension ``n − 1``) ``(I − P)K_i`` is an ``(n − 1) × d_K`` standard Gaussian matrix, and
  ``T_i 1 = 0``; so the law of ``T_i`` is **exactly** the block mixture
  ``(1/n) δ_0 + ((n − 1)/n) ρ_{d_K/(n−1)}`` of a zero block of size 1 and the row-covariance
  model ``s + θ2 K̃K̃ᵀ/d_K`` of size ``n − 1`` (:func:`centred_row_covariance`);
* a head's value covariance ``B_i = V_iᵀ T_i V_i/n`` (``d_V × d_V``) is a real sample
  covariance with population ``T_i``; tied values (``V_i = K_i``) give
  ``B_i = φ_KV(K̃ᵀK̃/n)`` with ``K̃ᵀK̃`` a Wishart matrix of ``n − 1`` degrees of freedom;
* the stacked covariance ``⊕_i B_i`` (or ``⊕_i T_i``) is **block diagonal** with ``h``
  independent blocks of size ``d_V`` (or ``n``): a block mixture, not one matrix of size
  ``h d_V`` (the ``1/n`` term of a block is ``1/d_V``, not ``1/(h d_V)``).  Repeated blocks
  (shared keys, GQA) have the same expected spectral law as independent ones, and the ``1/n``
  term of a sample covariance depends on its population only through that expected law
  (the fluctuation of the population's spectrum enters at ``1/n²``);
* the Grams are compound Wishart matrices ``G D Gᵀ`` in that population ``D``.

:func:`finite_n_law` builds this tree with the exact sizes (so the limit part carries the
``(n−1)/n`` and the atom of mass ``1/n`` at 0 exactly; the zero block of ``T_i`` leaves each
population as a rate ``(n − 1)/n`` of the compound step over the ``n − 1`` block, the same
matrix, so that the tree's Cauchy equation keeps the degree of the limit law's) and hands it to
:meth:`freeprob.laws.law.Law.finite_n`, which adds the fluctuation term ``G₁/n`` of every
real Gaussian stage, propagated through the compound free Poisson steps (Bai–Silverstein's
mean with the population's own correction; docs/theory.md §13).  The result is a
:class:`freeprob.laws.finite_n.FiniteNLaw`: exact ``1/n`` moment coefficients, the signed
corrected density, cdf and atoms, and it tabulates with
:meth:`freeprob.experiments.compare.TabulatedLaw.from_law`.

Covered: every object (single, concat, head sum, head output, stack, out) under every
scheme with Gaussian weights, numerics (density, cdf) included (tied values: the push-forward
``φ_KV`` inside the compound steps maps ``G₁`` like a measure,
:func:`freeprob.laws.finite_n_eval.g1_value`); the combination
with the finite-width law to first order (``finite_width=True`` too:
:mod:`freeprob.attention.finite_n_width`).  Not modelled: softmax itself (the GE model only) and the common-row spike
of the uncentred output (a rank-one outlier far from the bulk, whose location fluctuates by
≈ 18% from draw to draw); the ``n − 1`` eigenvalues below it have their own law,
``finite_n_law(arch, "out_full")`` (:func:`_out_full_bulk`: one row, one output column and one
stacked value direction fewer; docs/theory.md §13.10).

Source: docs/theory.md §2 (the GE model), §13 (the 1/n term); [BS04]_ (the real sample
covariance mean), [HK26]_.
"""
from __future__ import annotations

import sympy as sp

from freeprob.attention.architecture import Architecture
from freeprob.errors import FreeprobValueError
from freeprob.laws.families import CompoundFreePoisson, Dirac, FreePoisson
from freeprob.laws.operations import dilate, mixture, pushforward, shift
from freeprob.core.symbols import x

__all__ = ["OBJECTS", "centred_body", "centred_row_covariance", "finite_n_tree", "finite_n_law", "check_finite_n"]

#: the objects (names of :mod:`freeprob.sampler`) and their law constructors
OBJECTS = ("single", "concat", "sum", "head_out", "stack", "out")
#: and the bulk of the uncentred output (its n − 1 eigenvalues below the common-row spike)
BULK_OBJECTS = ("out_full",)


def check_finite_n(arch, finite_n, finite_width, owner):
    """Validate the ``finite_n`` flag of an attention law: a bool; with ``True`` a layer with
    integer sizes (:meth:`Architecture.from_dimensions`); ``finite_width`` a bool (with it
    the law is the first-order combination of :mod:`freeprob.attention.finite_n_width`).

    Raises ``FreeprobValueError`` (a flag not a bool; no sizes; symbolic sizes; n < 2)."""
    if not isinstance(finite_width, bool):
        raise FreeprobValueError(f"{owner}: finite_width must be a bool; got {finite_width!r}")
    if not isinstance(finite_n, bool):
        raise FreeprobValueError(f"{owner}: finite_n must be a bool; got {finite_n!r}")
    if not finite_n:
        return False
    if not isinstance(arch, Architecture):
        raise FreeprobValueError(f"{owner}: expected an Architecture, got {type(arch).__name__}")
    if not arch.sized:
        raise FreeprobValueError(
            f"{owner}: finite_n=True needs the layer's sizes (n, d_K, d_V, d_O): build it with "
            f"Architecture.from_dimensions(n=..., heads=..., d_k=..., d_v=..., d_o=...); got {arch!r}")
    bad = [k for k in ("n", "d_k", "d_v", "d_o") if not isinstance(getattr(arch, k), int)]
    if bad:
        raise FreeprobValueError(
            f"{owner}: finite_n=True needs integer sizes; got symbolic {', '.join(bad)} in {arch!r} "
            "(a symbolic n is available on a law itself: law.finite_n(sympy.Symbol('n', positive=True)))")
    if arch.n < 2:
        raise FreeprobValueError(f"{owner}: finite_n=True needs n >= 2 tokens (the centring removes one "
                                 f"direction); got n = {arch.n}")
    return True


def centred_body(n, keys, theta1, theta2):
    r"""The law of ``T = (I − P)(θ2 K Kᵀ/k + s I_n)(I − P)`` on ``1^⊥`` (size ``n − 1``,
    ``K`` an ``n × k`` standard Gaussian matrix, ``k = keys``, ``s = θ1 − θ2``):
    ``s + θ2·FreePoisson(k/(n − 1), (n − 1)/k)``, the real Wishart model of size ``n − 1``.

    Raises ``FreeprobValueError`` for ``n < 2`` or ``keys < 1``.  Source: module docstring."""
    if not (isinstance(n, int) and n >= 2 and isinstance(keys, int) and keys >= 1):
        raise FreeprobValueError(f"centred_body: needs integers n >= 2, keys >= 1; got {n!r}, {keys!r}")
    c = sp.Rational(keys, n - 1)
    if sp.sympify(theta2).is_zero:
        return Dirac(theta1 - theta2)
    # θ2·K̃K̃ᵀ/k = θ2·(1/c)·G Gᵀ, G (n−1) × k of N(0, 1/(n−1)): FreePoisson(c, θ2/c)
    return shift(FreePoisson(c, theta2 / c), theta1 - theta2)


def centred_row_covariance(n, keys, theta1, theta2):
    r"""The law of ``T = (I − P)(θ2 K Kᵀ/k + s I_n)(I − P)`` (``n × n``, ``K`` an ``n × k``
    standard Gaussian matrix, ``k = keys``, ``s = θ1 − θ2``), exactly:
    ``(1/n) δ_0 + ((n − 1)/n) (s + θ2·FreePoisson(k/(n − 1), (n − 1)/k))``, a block mixture whose
    finite-n model is the matrix itself (the ``n − 1`` block a real Wishart, the zero block
    deterministic; :func:`centred_body` is that block).

    Raises ``FreeprobValueError`` for ``n < 2`` or ``keys < 1``.  Source: module docstring."""
    if not (isinstance(n, int) and n >= 2 and isinstance(keys, int) and keys >= 1):
        raise FreeprobValueError(f"centred_row_covariance: needs integers n >= 2, keys >= 1; got {n!r}, {keys!r}")
    body = centred_body(n, keys, theta1, theta2)
    return mixture([Dirac(0), body], [sp.Rational(1, n), sp.Rational(n - 1, n)])


def _blocks(law, copies):
    """``copies`` independent blocks of ``law`` (block diagonal; one block when ``copies = 1``)."""
    return law if copies == 1 else mixture([law] * copies)


def _value_covariance(arch, body):
    """``B_i`` (``d_V × d_V``): ``V_iᵀ T_i V_i/n = Ṽ_iᵀ T̃_i Ṽ_i/n`` untied (population the
    ``n − 1`` block ``body``); ``φ_KV(K̃ᵀK̃/n)`` tied."""
    n, dk, dv = arch.n, arch.d_k, arch.d_v
    if arch.scheme == "tied":
        t1, t2 = arch.theta1, arch.theta2
        # K̃ᵀK̃/n (d_K × d_K), K̃ (n−1) × d_K: jump·G Gᵀ with G d_K × (n−1) of N(0, 1/d_K)
        w = FreePoisson(sp.Rational(n - 1, dk), sp.Rational(dk, n))
        return pushforward(w, (t2 * n / dk) * x**2 + (t1 - t2) * x)
    cv = sp.Rational(dv, n)
    return dilate(CompoundFreePoisson(sp.Rational(n - 1, dv), body), cv)


def finite_n_tree(arch: Architecture, obj: str):
    r"""The law tree of the GE model of ``obj`` at the layer's exact sizes (its limit part;
    :func:`finite_n_law` adds the ``1/n`` term).  ``obj`` one of :data:`OBJECTS`.

    The zero eigenvalue of every ``T_i`` (``T_i 1 = 0``) is taken out of the populations:
    ``G D Gᵀ`` with ``D = 0 ⊕ T̃`` is ``G̃ T̃ G̃ᵀ`` with one column of ``G`` fewer, so a
    compound step of rate ``t`` over ``(1/N) δ_0 + ((N − 1)/N) ν`` is the step of rate
    ``t (N − 1)/N`` over ``ν`` (the same matrix; the same law, since the free cumulants of
    ``π(ν, t)`` are ``t`` times the moments of ``ν``), and the law's equation keeps the degree
    of the limit law's.

    Raises ``FreeprobValueError`` (unknown object, a layer without integer sizes).
    Source: module docstring; docs/theory.md §2, §3.2, §13.7."""
    if obj not in OBJECTS + BULK_OBJECTS:
        raise FreeprobValueError(f"finite_n_tree: object must be one of {', '.join(OBJECTS + BULK_OBJECTS)}; "
                                 f"got {obj!r}")
    check_finite_n(arch, True, False, "finite_n_tree")
    n, h = arch.n, int(arch.heads)
    t1, t2 = arch.theta1, arch.theta2
    f = sp.Rational(n - 1, n)           # the population T_i without its zero block
    if obj == "sum":
        keys = {"shared_keys": 1, "gqa": arch.kv_groups or 1}.get(arch.scheme, h)
        return CompoundFreePoisson(f, centred_body(n, keys * arch.d_k, t1, t2))
    body = centred_body(n, arch.d_k, t1, t2)
    if obj == "single":
        return CompoundFreePoisson(f, body)
    if obj == "concat":
        return dilate(CompoundFreePoisson(h * f, _blocks(body, h)), sp.Rational(1, h))
    B = _value_covariance(arch, body)
    if obj == "head_out":
        return CompoundFreePoisson(sp.Rational(arch.d_v, n), B)
    stacked = _blocks(B, h)
    if obj == "stack":
        return CompoundFreePoisson(sp.Rational(h * arch.d_v, n), stacked)
    if obj == "out_full":
        return _out_full_bulk(arch, stacked)
    t = sp.Rational(h * arch.d_v, arch.d_o)
    mu_vo = dilate(CompoundFreePoisson(t, stacked), 1 / t)
    return CompoundFreePoisson(sp.Rational(arch.d_o, n), mu_vo)


def _out_full_bulk(arch, stacked):
    r"""The bulk (``n − 1`` eigenvalues) of the uncentred output ``O + 1bᵀ``, ``b = W_Oᵀ v̄``:
    as the spike grows, the spectrum of ``(I − P) H (I − ūūᵀ) W_O (I − b̂b̂ᵀ)`` (``ū = v̄/|v̄|``,
    independent of ``H``; ``ūᵀW_O ∝ b̂ᵀ``), i.e. ``n − 1`` rows, ``d_O − 1`` columns and the
    stacked population compressed to the hyperplane ``ū^⊥`` (size ``h d_V − 1``,
    :class:`~freeprob.laws.finite_n_compression.HyperplaneCompression`).  A law at size
    ``n − 1``.  Raises ``FreeprobValueError`` for ``h d_V < 2`` or ``d_O < 2``.
    Source: docs/theory.md §13.10."""
    from freeprob.laws.finite_n_compression import HyperplaneCompression
    n, N, do = arch.n, int(arch.heads) * arch.d_v, arch.d_o
    if N < 2 or do < 2:
        raise FreeprobValueError(f"finite_n_tree: the out_full bulk needs h·d_V >= 2 and d_O >= 2 (the common "
                                 f"row takes one of each); got h·d_V = {N}, d_O = {do}")
    # W̃ᵀ (P B⊕ P) W̃ ((d_O − 1) square), W̃ entries of variance 1/(h d_V): CFP at size d_O − 1
    mu_vo = dilate(CompoundFreePoisson(sp.Rational(N - 1, do - 1), HyperplaneCompression(stacked)),
                   sp.Rational(do - 1, N))
    # n − 1 independent rows of covariance W̃ᵀ P B⊕ P W̃/n: CFP at size n − 1, entries 1/(n − 1)
    return dilate(CompoundFreePoisson(sp.Rational(do - 1, n - 1), mu_vo), sp.Rational(n - 1, n))


def finite_n_law(arch: Architecture, obj: str):
    r"""The expected spectral law of the GE model of ``obj`` at the layer's sizes, to order
    ``1/n``: ``finite_n_tree(arch, obj).finite_n(arch.n)``
    (:class:`freeprob.laws.finite_n.FiniteNLaw`; its ``limit`` is the exact-size tree).

    ``obj = "out_full"``: the law of the ``n − 1`` eigenvalues below the common-row spike, a
    law at size ``n − 1``.

    Raises as :func:`finite_n_tree`.  Source: module docstring."""
    return finite_n_tree(arch, obj).finite_n(arch.n - 1 if obj in BULK_OBJECTS else arch.n)
