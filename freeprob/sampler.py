r"""Finite-n samplers for multi-head softmax attention and its Gaussian equivalent (GE).

This is the only float64 layer of freeprob: numpy and scipy, a seeded
``numpy.random.Generator`` passed as the keyword-only ``rng``, and nothing from the
exact layer (sympy, mpmath, python-flint are never imported here).  Sampler results
never flow back into the exact path.

The model (theory.md §1–2; paper: Hayase & Karakida, "Gaussian Equivalence for
Multi-Head Self-Attention", 2026)
-------------------------------------------------------------------------------------
``n`` tokens, input width ``d ≥ n``, ``h`` heads of key/query width ``d_K`` and value
width ``d_V``, output width ``d_O``.  With inputs ``X`` (``n × d``, ``X Xᵀ = d I``) and
fan-in weights ``W ~ N(0, 1/d)``, the projections ``Q_i = X W_Q^i``, ``K_i = X W_K^i``,
``V_i = X W_V^i`` have iid ``N(0, 1)`` entries exactly, so the sampler may draw them
directly (``input="qkv"``) or build ``X`` and the weights (``input="explicit"``).
``W_O`` (``h d_V × d_O``) has entries of variance ``1/(h d_V)``.

* Scores and attention: ``S_i = β Q_i K_iᵀ/√d_K``, ``A_i = rowsoftmax(S_i)``.
* Centred attention in the bulk scaling: ``M_i = √n A_i (I − P) = √n (A_i − P)``,
  ``P = 11ᵀ/n``; every row of ``M_i`` sums to zero.
* GE (theory.md §2): ``M_i^GE = n^{-1/2} (S_i + √(θ1 − θ2) Z_i)(I − P)`` with
  ``θ1 = e^{β²} − 1``, ``θ2 = β²`` and ``Z_i`` iid ``N(0, 1)``; same ``Q, K, V, W_O``.
* GE2 (theory.md §7, F1): the exact second Hermite chaos is kept,
  ``Y = S + (β²/2)(g² − 1) + √(θ1 − θ2 − β⁴/2) Z`` with ``g = S/β``, and
  ``M^GE2 = n^{-1/2} Y (I − P)``.
* Key-norm term (theory.md §7, F2): optionally ``M^GE += 1 μᵀ/√n`` with
  ``μ_b = d_b/mean(d) − 1``, ``d_b = exp(β²(|k_b|²/d_K − 1)/2)``, the conditional row
  mean of ``n A⊥`` given the keys.  It restores the softmax outlier of concat, sum and
  out (``‖μ‖² ≈ nβ⁴/(2 d_K)``) and does not change the bulk.  The second chaos of GE2
  already has the conditional row mean ``(β²/2)(|k_b|²/d_K − 1)`` (centred), which is
  ``μ`` to leading order; for GE2 the option adds only the remainder, so that the total
  row mean is ``μ`` and the outlier is not counted twice.

Head schemes (theory.md §3.4–3.5): ``"independent"``; ``"gqa"`` with ``kv_groups``
groups of consecutive heads sharing ``K`` and ``V`` (MQA is ``kv_groups=1``);
``"shared_keys"`` (one ``K`` for all heads, values independent); ``"tied"``
(``V_i = K_i``, needs ``d_V = d_K``).

Objects (theory.md §1 table).  Each is a matrix ``F`` with ``n`` rows whose token-side
Gram ``F Fᵀ`` (``n × n``) is the object; its spectrum has ``n`` eigenvalues, zeros
included.

* ``single``: ``M_1`` (``n × n``).
* ``concat``: ``[M_1, …, M_h]/√h`` (``n × hn``).
* ``sum``: ``(Σ_i M_i)/√h`` (``n × n``).
* ``head_out``: ``H_1 = A_1⊥ V_1 = M_1 V_1/√n`` (``n × d_V``).
* ``stack``: ``[H_1, …, H_h]`` (``n × h d_V``).
* ``out``: ``O = [H_1, …, H_h] W_O`` (``n × d_O``), the centred MHA output.
* ``out_full``: ``O + 1 bᵀ`` with ``bᵀ = 1ᵀ [V_1, …, V_h] W_O / n`` (``n × d_O``).

``out_full`` is the uncentred output ``[A_1 V_1, …, A_h V_h] W_O``: the common row
``1bᵀ = [P V_1, …, P V_h] W_O`` is rank one and carries an ``O(n)`` spike.
Note that ``O`` is centred on the right of the attention (``M_i 1 = 0``), not on the
token side: ``1ᵀ O`` is not zero in general.

Spectra are computed on the smaller side of ``F`` and padded with zeros; heads are
processed in batched blocks so that no more than about ``2**24`` attention entries are
held at once.

References
----------
theory.md: ``/work/shared/docs/theory.md`` (sections cited as theory.md §k).
Hayase & Karakida (2026), Gaussian Equivalence for Multi-Head Self-Attention.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from .errors import FreeprobValueError

__all__ = [
    "SCHEMES", "MODELS", "OBJECTS", "WEIGHT_KINDS",
    "Dimensions", "Weights", "ge_constants", "draw_weights", "softmax_attention",
    "key_norm_mean", "attention_matrices", "sample_objects", "spectra", "gram_spectrum",
    "top_eigenvalue", "gram_moments", "empirical_moments", "relative_w1",
]

SCHEMES = ("independent", "gqa", "shared_keys", "tied")
MODELS = ("softmax", "ge", "ge2")
OBJECTS = ("single", "concat", "sum", "head_out", "stack", "out", "out_full")
WEIGHT_KINDS = ("gaussian", "rademacher", "orthogonal")
INPUTS = ("qkv", "explicit")

# at most this many attention entries (heads × n × n) are held at once
_MAX_BLOCK_ELEMENTS = 2**24


# --------------------------------------------------------------------------- validation

def _positive_int(value, owner, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise FreeprobValueError(f"`{name}` of `{owner}` must be a positive integer; got {value!r}")
    return int(value)


def _choice(value, allowed, owner, name):
    if not isinstance(value, str) or value not in allowed:
        raise FreeprobValueError(f"`{name}` of `{owner}` must be one of {allowed}; got {value!r}")
    return value


def _beta(beta, owner):
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise FreeprobValueError(f"`beta` of `{owner}` must be a real number; got {beta!r}")
    beta = float(beta)
    if not math.isfinite(beta) or beta < 0:
        raise FreeprobValueError(f"`beta` of `{owner}` must be finite and >= 0; got {beta!r}")
    return beta


def _rng(rng, owner):
    if not isinstance(rng, np.random.Generator):
        raise FreeprobValueError(
            f"`rng` of `{owner}` must be a numpy.random.Generator "
            f"(e.g. numpy.random.default_rng(0)); got {type(rng).__name__}")
    return rng


def _names(values, allowed, owner, name):
    if isinstance(values, str):
        values = (values,)
    try:
        values = tuple(values)
    except TypeError as exc:
        raise FreeprobValueError(
            f"`{name}` of `{owner}` must be a sequence of names; got {values!r}") from exc
    if not values:
        raise FreeprobValueError(f"`{name}` of `{owner}` must not be empty")
    for v in values:
        _choice(v, allowed, owner, name)
    return tuple(dict.fromkeys(values))


# --------------------------------------------------------------------------- dimensions

@dataclass(frozen=True)
class Dimensions:
    r"""Sizes and head-sharing scheme of one multi-head attention layer.

    Parameters
    ----------
    n : int
        Number of tokens, ``n ≥ 1``.
    heads : int
        Number of heads ``h``.
    d_k, d_v, d_o : int
        Per-head key/query width ``d_K``, per-head value width ``d_V``, output width
        ``d_O``.
    d : int, optional
        Input width, ``d ≥ n`` (orthogonal token rows need ``n ≤ d``); defaults to ``n``.
        Only the ``input="explicit"`` route of :func:`draw_weights` uses it.
    scheme : {"independent", "gqa", "shared_keys", "tied"}
        Head sharing (theory.md §3.4–3.5).
    kv_groups : int, optional
        Number of key/value groups for ``scheme="gqa"`` (``heads % kv_groups == 0``;
        MQA is ``kv_groups=1``; consecutive heads form a group).  Must be omitted (or
        equal to the implied value) for the other schemes.

    Attributes
    ----------
    gamma_k, gamma_v, gamma_o : fractions.Fraction
        ``h d_K/n``, ``h d_V/n``, ``d_O/n`` (theory.md §1).
    c_k, c_v : fractions.Fraction
        ``d_K/n``, ``d_V/n``.
    key_groups, value_groups : int
        Number of distinct key / value matrices.

    Raises
    ------
    FreeprobValueError
        A size is not a positive integer; ``n > d``; unknown scheme; ``kv_groups``
        missing, not dividing ``heads``, or given for a scheme other than GQA;
        ``scheme="tied"`` with ``d_v != d_k``.

    Examples
    --------
    >>> dims = Dimensions(n=64, heads=4, d_k=8, d_v=8, d_o=32, scheme="gqa", kv_groups=2)
    >>> dims.gamma_k, dims.gamma_o, dims.key_groups
    (Fraction(1, 2), Fraction(1, 2), 2)
    """

    n: int
    heads: int
    d_k: int
    d_v: int
    d_o: int
    d: int = None
    scheme: str = "independent"
    kv_groups: int = None

    def __post_init__(self):
        owner = "Dimensions"
        for name in ("n", "heads", "d_k", "d_v", "d_o"):
            object.__setattr__(self, name, _positive_int(getattr(self, name), owner, name))
        d = self.n if self.d is None else _positive_int(self.d, owner, "d")
        if d < self.n:
            raise FreeprobValueError(
                f"`d` of `Dimensions` must be >= n (X has n orthogonal rows in R^d); got d={d}, n={self.n}")
        object.__setattr__(self, "d", d)
        _choice(self.scheme, SCHEMES, owner, "scheme")
        implied = {"independent": self.heads, "shared_keys": None, "tied": self.heads}
        if self.scheme == "gqa":
            if self.kv_groups is None:
                raise FreeprobValueError("`kv_groups` of `Dimensions` is required for scheme 'gqa' "
                                         "(kv_groups=1 is MQA)")
            g = _positive_int(self.kv_groups, owner, "kv_groups")
            if self.heads % g:
                raise FreeprobValueError(
                    f"`kv_groups` of `Dimensions` must divide heads={self.heads}; got {g}")
            object.__setattr__(self, "kv_groups", g)
        elif self.kv_groups is not None and self.kv_groups != implied[self.scheme]:
            raise FreeprobValueError(
                f"`kv_groups` of `Dimensions` is only for scheme 'gqa'; got kv_groups={self.kv_groups!r} "
                f"with scheme {self.scheme!r}")
        else:
            object.__setattr__(self, "kv_groups", None)
        if self.scheme == "tied" and self.d_v != self.d_k:
            raise FreeprobValueError(
                f"scheme 'tied' of `Dimensions` sets V_i = K_i and needs d_v == d_k; got d_v={self.d_v}, "
                f"d_k={self.d_k}")

    @property
    def gamma_k(self):
        return Fraction(self.heads * self.d_k, self.n)

    @property
    def gamma_v(self):
        return Fraction(self.heads * self.d_v, self.n)

    @property
    def gamma_o(self):
        return Fraction(self.d_o, self.n)

    @property
    def c_k(self):
        return Fraction(self.d_k, self.n)

    @property
    def c_v(self):
        return Fraction(self.d_v, self.n)

    @property
    def key_groups(self):
        return {"independent": self.heads, "gqa": self.kv_groups, "shared_keys": 1,
                "tied": self.heads}[self.scheme]

    @property
    def value_groups(self):
        return {"independent": self.heads, "gqa": self.kv_groups, "shared_keys": self.heads,
                "tied": self.heads}[self.scheme]

    def key_group_of_head(self):
        """Index of the key matrix used by each head (``numpy`` int array of length ``h``)."""
        return np.arange(self.heads) * self.key_groups // self.heads

    def value_group_of_head(self):
        """Index of the value matrix used by each head (``numpy`` int array of length ``h``)."""
        return np.arange(self.heads) * self.value_groups // self.heads


# --------------------------------------------------------------------------- constants

def _expm1_minus_taylor(x, order):
    """``e^x − Σ_{k≤order} x^k/k!`` for ``x ≥ 0`` without cancellation."""
    if x < 1.0:
        term, total, k = 1.0, 0.0, 0
        while True:
            k += 1
            term *= x / k
            if k > order:
                total += term
                if term <= 1e-17 * total:
                    return total
    return math.expm1(x) - sum(x**k / math.factorial(k) for k in range(1, order + 1))


def ge_constants(beta):
    r"""The GE constants ``(θ1, θ2) = (e^{β²} − 1, β²)`` as floats (theory.md §1–2).

    ``θ1`` is the coordinate variance of ``√n A⊥`` and ``θ2`` its linear (score) part;
    ``θ1 − θ2`` is the variance of the GE noise.

    Parameters
    ----------
    beta : float
        Inverse temperature, finite, ``β ≥ 0``.

    Returns
    -------
    (float, float)

    Raises
    ------
    FreeprobValueError
        ``beta`` negative, non-finite or not real, or so large that ``e^{β²}``
        overflows float64 (``β > 26.6``).

    Examples
    --------
    >>> ge_constants(1.0)
    (1.718281828459045, 1.0)
    """
    beta = _beta(beta, "ge_constants")
    x = beta * beta
    try:
        theta1 = math.expm1(x)
    except OverflowError:
        theta1 = math.inf
    if not math.isfinite(theta1):
        raise FreeprobValueError(
            f"`beta` of `ge_constants`: theta1 = exp(beta**2) - 1 overflows float64 at beta={beta!r}; "
            "use the mean-normalised laws of the exact layer")
    return theta1, x


def _noise_std(beta, model):
    """Standard deviation of the GE noise: √(θ1−θ2) (ge) or √(θ1−θ2−β⁴/2) (ge2), stable."""
    x = beta * beta
    return math.sqrt(_expm1_minus_taylor(x, 1 if model == "ge" else 2))


# --------------------------------------------------------------------------- weights

@dataclass(frozen=True, eq=False)
class Weights:
    r"""Per-head projections and output weights of one draw.

    Attributes
    ----------
    dims : Dimensions
    q, k : ndarray, shape ``(h, n, d_k)``
        Queries and keys, entries of variance 1.  Heads sharing a key matrix
        (GQA, shared keys) hold equal copies.
    v : ndarray, shape ``(h, n, d_v)``
        Values (for ``scheme="tied"``, ``v`` equals ``k``).
    w_o : ndarray, shape ``(h d_v, d_o)``
        Output weights, entries of variance ``1/(h d_v)``; rows ``i d_v … (i+1) d_v − 1``
        act on head ``i``.
    x : ndarray or None, shape ``(n, d)``
        The inputs (``X Xᵀ = d I``) when drawn with ``input="explicit"``.

    Raises
    ------
    FreeprobValueError
        An array has the wrong shape or non-finite entries.
    """

    dims: Dimensions
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    w_o: np.ndarray
    x: np.ndarray = field(default=None)

    def __post_init__(self):
        if not isinstance(self.dims, Dimensions):
            raise FreeprobValueError(f"`dims` of `Weights` must be a Dimensions; got {self.dims!r}")
        dm = self.dims
        shapes = {"q": (dm.heads, dm.n, dm.d_k), "k": (dm.heads, dm.n, dm.d_k),
                  "v": (dm.heads, dm.n, dm.d_v), "w_o": (dm.heads * dm.d_v, dm.d_o)}
        for name, shape in shapes.items():
            arr = np.asarray(getattr(self, name), dtype=np.float64)
            if arr.shape != shape:
                raise FreeprobValueError(f"`{name}` of `Weights` must have shape {shape}; got {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise FreeprobValueError(f"`{name}` of `Weights` has non-finite entries")
            object.__setattr__(self, name, arr)


def _haar_columns(rows, cols, rng):
    """``rows × cols`` matrix with orthonormal columns (rows ≥ cols), Haar distributed."""
    g = rng.standard_normal((rows, cols))
    qm, r = np.linalg.qr(g)
    return qm * np.where(np.diag(r) < 0, -1.0, 1.0)


def _draw_matrix(kind, shape, std, rng):
    """A ``shape`` matrix with entry variance ``std**2``: Gaussian, Rademacher or orthogonal.

    Orthogonal: Haar with orthonormal columns (tall) or rows (wide), scaled by
    ``std·√max(shape)`` so that the mean squared entry is ``std**2``.
    """
    p, q = shape
    if kind == "gaussian":
        return std * rng.standard_normal(shape)
    if kind == "rademacher":
        return std * (2.0 * rng.integers(0, 2, size=shape) - 1.0)
    base = _haar_columns(p, q, rng) if p >= q else _haar_columns(q, p, rng).T
    return std * math.sqrt(max(p, q)) * base


def draw_weights(dims, *, rng, input="qkv", value_weights="gaussian", output_weights="gaussian"):
    r"""Draw ``Q, K, V`` for every head and ``W_O`` (theory.md §1, "Inputs and weights").

    Parameters
    ----------
    dims : Dimensions
    rng : numpy.random.Generator
        Keyword-only; the only source of randomness.
    input : {"qkv", "explicit"}
        ``"qkv"`` draws ``Q_i, K_i`` with iid ``N(0, 1)`` entries (and ``V_i`` with unit
        variance entries) directly.  ``"explicit"`` builds Haar inputs ``X``
        (``n × d``, ``X Xᵀ = d I``) and fan-in weights of variance ``1/d``
        (``W_Q, W_K ~ N(0, 1/d)``; ``W_V`` of kind ``value_weights``) and forms
        ``Q = X W_Q`` etc.; the two routes agree in law for Gaussian weights.
    value_weights : {"gaussian", "rademacher", "orthogonal"}
        Law of the value projection, always of unit entry variance for ``V`` (``qkv``)
        or ``1/d`` for ``W_V`` (``explicit``).  ``"orthogonal"`` makes the joint
        ``[V_1, …, V_g]`` (``qkv``) or ``[W_V^1, …, W_V^g]`` (``explicit``) Haar over the
        ``g = dims.value_groups`` distinct value matrices.  Must be ``"gaussian"`` for
        ``scheme="tied"`` (where ``V_i = K_i``).
    output_weights : {"gaussian", "rademacher", "orthogonal"}
        Law of ``W_O`` (``h d_v × d_o``), entry variance ``1/(h d_v)``.

    Returns
    -------
    Weights

    Raises
    ------
    FreeprobValueError
        ``dims`` not a :class:`Dimensions`; ``rng`` not a Generator; an unknown option;
        non-Gaussian ``value_weights`` with ``scheme="tied"``.

    Examples
    --------
    >>> import numpy as np
    >>> dims = Dimensions(n=16, heads=4, d_k=4, d_v=4, d_o=8, scheme="gqa", kv_groups=2)
    >>> w = draw_weights(dims, rng=np.random.default_rng(0))
    >>> w.q.shape, w.w_o.shape, bool(np.array_equal(w.k[0], w.k[1]))
    ((4, 16, 4), (16, 8), True)
    """
    owner = "draw_weights"
    if not isinstance(dims, Dimensions):
        raise FreeprobValueError(f"`dims` of `{owner}` must be a Dimensions; got {dims!r}")
    rng = _rng(rng, owner)
    _choice(input, INPUTS, owner, "input")
    _choice(value_weights, WEIGHT_KINDS, owner, "value_weights")
    _choice(output_weights, WEIGHT_KINDS, owner, "output_weights")
    if dims.scheme == "tied" and value_weights != "gaussian":
        raise FreeprobValueError(
            f"`value_weights` of `{owner}` must be 'gaussian' for scheme 'tied' (V_i = K_i); "
            f"got {value_weights!r}")
    n, d, h = dims.n, dims.d, dims.heads
    gk, gv = dims.key_groups, dims.value_groups
    x = None
    if input == "qkv":
        q = rng.standard_normal((h, n, dims.d_k))
        k = rng.standard_normal((gk, n, dims.d_k))
        if dims.scheme != "tied":
            joint = _draw_matrix(value_weights, (n, gv * dims.d_v), 1.0, rng)
            v = joint.reshape(n, gv, dims.d_v).transpose(1, 0, 2)
    else:
        x = math.sqrt(d) * _haar_columns(d, n, rng).T
        std = 1.0 / math.sqrt(d)
        q = x @ (std * rng.standard_normal((h, d, dims.d_k)))
        k = x @ (std * rng.standard_normal((gk, d, dims.d_k)))
        if dims.scheme != "tied":
            w_v = _draw_matrix(value_weights, (d, gv * dims.d_v), std, rng)
            v = (x @ w_v).reshape(n, gv, dims.d_v).transpose(1, 0, 2)
    k = k[dims.key_group_of_head()]
    v = k.copy() if dims.scheme == "tied" else v[dims.value_group_of_head()]
    w_o = _draw_matrix(output_weights, (h * dims.d_v, dims.d_o), 1.0 / math.sqrt(h * dims.d_v), rng)
    return Weights(dims=dims, q=q, k=k, v=v, w_o=w_o, x=x)


# --------------------------------------------------------------------------- attention

def softmax_attention(q, k, beta):
    r"""Row-softmax attention ``A = rowsoftmax(β q kᵀ/√d_K)`` (theory.md §1).

    Stable for any finite ``β``: the row maximum is subtracted before exponentiating,
    so no entry overflows and every row sums to one.

    Parameters
    ----------
    q : array_like, shape ``(..., n, d_k)``
    k : array_like, shape ``(..., m, d_k)`` (broadcast against ``q``)
    beta : float
        Inverse temperature, finite, ``β ≥ 0``.

    Returns
    -------
    ndarray, shape ``(..., n, m)``, float64, rows summing to one.

    Raises
    ------
    FreeprobValueError
        ``beta`` invalid; ``q``/``k`` of dimension < 2, with different last axes, or
        non-finite.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> a = softmax_attention(rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), 50.0)
    >>> bool(np.allclose(a.sum(axis=-1), 1.0)), bool(np.isfinite(a).all())
    (True, True)
    """
    beta = _beta(beta, "softmax_attention")
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise FreeprobValueError(
            "`q`, `k` of `softmax_attention` must be (..., n, d_k) and (..., m, d_k); "
            f"got {q.shape}, {k.shape}")
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(k))):
        raise FreeprobValueError("`q`, `k` of `softmax_attention` must be finite")
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    s *= beta / math.sqrt(q.shape[-1])
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    return s


def key_norm_mean(k, beta):
    r"""The key-norm row mean ``μ`` of ``n A⊥`` given the keys (theory.md §7, F2).

    ``μ_b = d_b/mean(d) − 1`` with ``d_b = exp(β²(|k_b|²/d_K − 1)/2)`` (computed in
    log space, stable for large ``β``); ``Σ_b μ_b = 0`` and
    ``‖μ‖² ≈ nβ⁴/(2 d_K)``.  The GE with the key-norm term adds ``1 μᵀ/√n`` to ``M^GE``.

    Parameters
    ----------
    k : array_like, shape ``(..., n, d_k)``
    beta : float, finite, ``≥ 0``

    Returns
    -------
    ndarray, shape ``(..., n)``

    Raises
    ------
    FreeprobValueError
        ``beta`` invalid; ``k`` of dimension < 2.
    """
    beta = _beta(beta, "key_norm_mean")
    k = np.asarray(k, dtype=np.float64)
    if k.ndim < 2:
        raise FreeprobValueError(f"`k` of `key_norm_mean` must be (..., n, d_k); got shape {k.shape}")
    log_d = 0.5 * beta * beta * (np.einsum("...bj,...bj->...b", k, k) / k.shape[-1] - 1.0)
    log_d -= log_d.max(axis=-1, keepdims=True)
    dvals = np.exp(log_d)
    return dvals / dvals.mean(axis=-1, keepdims=True) - 1.0


def _centred_block(weights, beta, heads, model, key_norm_term, rng, noise_std):
    """``M_i`` for the heads in ``heads`` (a slice), shape ``(len, n, n)``."""
    n = weights.dims.n
    q, k = weights.q[heads], weights.k[heads]
    if model == "softmax":
        m = softmax_attention(q, k, beta)
        m -= 1.0 / n
        m *= math.sqrt(n)
        return m
    y = np.matmul(q, np.swapaxes(k, -1, -2))
    y *= beta / math.sqrt(weights.dims.d_k)
    if model == "ge2":
        y += 0.5 * (y * y - beta * beta)      # (β²/2)(g² − 1), g = S/β
    y += noise_std * rng.standard_normal(y.shape)
    y -= y.mean(axis=-1, keepdims=True)       # right factor (I − P)
    if key_norm_term:
        mu = key_norm_mean(k, beta)
        if model == "ge2":
            # the second chaos already has the conditional row mean (β²/2)(|k_b|²/d_K − 1),
            # centred; add only the remainder so that the total row mean is μ
            c = 0.5 * beta * beta * (np.einsum("hbj,hbj->hb", k, k) / weights.dims.d_k - 1.0)
            mu = mu - (c - c.mean(axis=-1, keepdims=True))
        y += mu[:, None, :]
    y /= math.sqrt(n)
    return y


def _check_model(model, key_norm_term, beta, n, owner):
    _choice(model, MODELS, owner, "model")
    if not isinstance(key_norm_term, bool):
        raise FreeprobValueError(f"`key_norm_term` of `{owner}` must be a bool; got {key_norm_term!r}")
    if model == "softmax":
        if key_norm_term:
            raise FreeprobValueError(f"`key_norm_term` of `{owner}` applies to the GE models only; "
                                     "softmax has it already")
        return None
    theta1, _ = ge_constants(beta)
    if not math.isfinite(theta1 * n * n):
        raise FreeprobValueError(
            f"`beta` of `{owner}`: GE Gram entries of size theta1*n overflow float64 at beta={beta!r}, n={n}")
    return _noise_std(beta, model)


def _check_weights(weights, dims, owner):
    if not isinstance(weights, Weights):
        raise FreeprobValueError(f"`weights` of `{owner}` must be a Weights (from draw_weights); got "
                                 f"{type(weights).__name__}")
    if dims is not None and weights.dims != dims:
        raise FreeprobValueError(f"`weights` of `{owner}` were drawn for {weights.dims}, not {dims}")
    return weights


def attention_matrices(weights, beta, *, model="softmax", rng=None, key_norm_term=False, heads=None):
    r"""The centred attention matrices ``M_i = √n A_i⊥`` (or ``M_i^GE``), stacked.

    Parameters
    ----------
    weights : Weights
    beta : float, finite, ``≥ 0``
    model : {"softmax", "ge", "ge2"}
        Softmax ``√n (A_i − P)``; GE ``n^{-1/2}(S_i + √(θ1−θ2) Z_i)(I − P)``; GE2 keeps the
        exact second Hermite chaos (theory.md §2, §7 F1).
    rng : numpy.random.Generator, optional
        Keyword-only; required for the GE models (the noise ``Z``).
    key_norm_term : bool
        GE models only: add ``1μᵀ/√n`` (theory.md §7 F2, :func:`key_norm_mean`).
    heads : sequence of int, optional
        Which heads (default all).

    Returns
    -------
    ndarray, shape ``(len(heads), n, n)``; each row sums to zero (``M_i 1 = 0``).

    Raises
    ------
    FreeprobValueError
        Bad ``weights``, ``beta``, ``model``, ``heads``; missing ``rng`` for a GE model;
        ``key_norm_term`` with softmax; ``θ1`` too large for float64 (GE).

    Examples
    --------
    >>> import numpy as np
    >>> dims = Dimensions(n=32, heads=2, d_k=8, d_v=8, d_o=16)
    >>> w = draw_weights(dims, rng=np.random.default_rng(0))
    >>> m = attention_matrices(w, 1.0)
    >>> m.shape, bool(np.allclose(m.sum(axis=-1), 0.0))
    ((2, 32, 32), True)
    """
    owner = "attention_matrices"
    weights = _check_weights(weights, None, owner)
    beta = _beta(beta, owner)
    noise_std = _check_model(model, key_norm_term, beta, weights.dims.n, owner)
    if model != "softmax":
        rng = _rng(rng, owner)
    idx = np.arange(weights.dims.heads)
    if heads is not None:
        try:
            idx = idx[np.asarray(heads, dtype=np.intp)]
        except (IndexError, ValueError, TypeError) as exc:
            raise FreeprobValueError(f"`heads` of `{owner}` must be head indices < {weights.dims.heads}; "
                                     f"got {heads!r}") from exc
    return _centred_block(weights, beta, idx, model, key_norm_term, rng, noise_std)


# --------------------------------------------------------------------------- objects

def _build(weights, beta, model, key_norm_term, rng, objects, noise_std, concat_as_gram):
    """Accumulate the requested objects head block by head block."""
    dm = weights.dims
    n, h, dv = dm.n, dm.heads, dm.d_v
    block = max(1, min(h, _MAX_BLOCK_ELEMENTS // (n * n)))
    want = set(objects)
    need_h = bool(want & {"head_out", "stack", "out", "out_full"})
    res = {}
    if "concat" in want:
        res["concat"] = np.zeros((n, n)) if concat_as_gram else np.empty((n, h * n))
    if "sum" in want:
        res["sum"] = np.zeros((n, n))
    if "stack" in want:
        res["stack"] = np.empty((n, h * dv))
    if want & {"out", "out_full"}:
        o = np.zeros((n, dm.d_o))
    for start in range(0, h, block):
        sl = slice(start, min(h, start + block))
        c = sl.stop - sl.start
        m = _centred_block(weights, beta, sl, model, key_norm_term, rng, noise_std)
        if start == 0 and "single" in want:
            res["single"] = m[0].copy()
        if "concat" in want:
            flat = m.transpose(1, 0, 2).reshape(n, c * n) / math.sqrt(h)
            if concat_as_gram:
                res["concat"] += flat @ flat.T
            else:
                res["concat"][:, sl.start * n:sl.stop * n] = flat
        if "sum" in want:
            res["sum"] += m.sum(axis=0)
        if need_h:
            hb = np.matmul(m, weights.v[sl])
            hb /= math.sqrt(n)
            del m
            hflat = hb.transpose(1, 0, 2).reshape(n, c * dv)
            if start == 0 and "head_out" in want:
                res["head_out"] = hb[0].copy()
            if "stack" in want:
                res["stack"][:, sl.start * dv:sl.stop * dv] = hflat
            if want & {"out", "out_full"}:
                o += hflat @ weights.w_o[sl.start * dv:sl.stop * dv]
    if "sum" in want:
        res["sum"] /= math.sqrt(h)
    if "out" in want:
        res["out"] = o
    if "out_full" in want:
        vflat = weights.v.transpose(1, 0, 2).reshape(n, h * dv)
        b = vflat.mean(axis=0) @ weights.w_o          # bᵀ = 1ᵀ[V_1,…,V_h] W_O / n
        res["out_full"] = o + b[None, :]
    return {name: res[name] for name in objects}


def sample_objects(dims, beta, *, rng, model="softmax", key_norm_term=False, weights=None,
                   objects=("out",), input="qkv", value_weights="gaussian", output_weights="gaussian"):
    r"""Sample the objects of theory.md §1 for one model and return their factors.

    Parameters
    ----------
    dims : Dimensions
    beta : float, finite, ``≥ 0``
    rng : numpy.random.Generator
        Keyword-only; draws the weights (unless given) and the GE noise.
    model : {"softmax", "ge", "ge2"}
    key_norm_term : bool
        GE models only: add the rank-one key-norm term (theory.md §7 F2).
    weights : Weights, optional
        Reuse a draw (e.g. to couple softmax and GE); drawn with ``input``,
        ``value_weights``, ``output_weights`` otherwise.
    objects : sequence of str
        Names from :data:`OBJECTS`.
    input, value_weights, output_weights : str
        Passed to :func:`draw_weights` when ``weights`` is None.

    Returns
    -------
    dict
        name → ``F`` (``n × p`` float64) whose Gram ``F Fᵀ`` is the object; shapes in
        the module table (``concat`` is ``n × hn``).  Use :func:`gram_spectrum`.

    Raises
    ------
    FreeprobValueError
        Any invalid argument (see :func:`draw_weights`, :func:`attention_matrices`);
        ``weights`` drawn for other dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> dims = Dimensions(n=32, heads=2, d_k=8, d_v=8, d_o=16)
    >>> f = sample_objects(dims, 0.5, rng=np.random.default_rng(0), objects=("concat", "out"))
    >>> f["concat"].shape, f["out"].shape
    ((32, 64), (32, 16))
    """
    owner = "sample_objects"
    if not isinstance(dims, Dimensions):
        raise FreeprobValueError(f"`dims` of `{owner}` must be a Dimensions; got {dims!r}")
    beta = _beta(beta, owner)
    rng = _rng(rng, owner)
    objects = _names(objects, OBJECTS, owner, "objects")
    noise_std = _check_model(model, key_norm_term, beta, dims.n, owner)
    if weights is None:
        weights = draw_weights(dims, rng=rng, input=input, value_weights=value_weights,
                               output_weights=output_weights)
    _check_weights(weights, dims, owner)
    return _build(weights, beta, model, key_norm_term, rng, objects, noise_std, concat_as_gram=False)


def spectra(dims, beta, *, rng, models=("softmax", "ge"), objects=("out",), coupled=True,
            key_norm_term=False, weights=None, input="qkv", value_weights="gaussian",
            output_weights="gaussian"):
    r"""Gram spectra (all ``n`` eigenvalues, ascending) of each object under each model.

    Parameters
    ----------
    dims : Dimensions
    beta : float, finite, ``≥ 0``
    rng : numpy.random.Generator
        Keyword-only.
    models : sequence of {"softmax", "ge", "ge2"}
    objects : sequence of names from :data:`OBJECTS`
    coupled : bool
        True: every model is driven by the same ``Q, K, V, W_O`` (a coupled
        comparison, theory.md §5).  False: each model gets its own independent draw.
    key_norm_term : bool
        Add the key-norm term (theory.md §7 F2) to the GE models (softmax unaffected).
    weights : Weights, optional
        Use this draw for every model (requires ``coupled=True``).
    input, value_weights, output_weights : str
        See :func:`draw_weights`.

    Returns
    -------
    dict
        ``(model, object)`` → float64 array of the ``n`` Gram eigenvalues, ascending,
        zeros included; the top eigenvalue is the last entry.

    Raises
    ------
    FreeprobValueError
        Any invalid argument; ``weights`` given with ``coupled=False``; a GE model at a
        ``β`` where ``θ1`` overflows float64.

    Examples
    --------
    >>> import numpy as np
    >>> dims = Dimensions(n=64, heads=4, d_k=8, d_v=8, d_o=32)
    >>> sp = spectra(dims, 0.5, rng=np.random.default_rng(0), objects=("out", "out_full"))
    >>> sorted(sp), sp["softmax", "out"].shape
    ([('ge', 'out'), ('ge', 'out_full'), ('softmax', 'out'), ('softmax', 'out_full')], (64,))
    >>> bool(sp["softmax", "out_full"][-1] > 5 * sp["softmax", "out"][-1])   # the O(n) common-row spike
    True
    """
    owner = "spectra"
    if not isinstance(dims, Dimensions):
        raise FreeprobValueError(f"`dims` of `{owner}` must be a Dimensions; got {dims!r}")
    beta = _beta(beta, owner)
    rng = _rng(rng, owner)
    models = _names(models, MODELS, owner, "models")
    objects = _names(objects, OBJECTS, owner, "objects")
    if not isinstance(coupled, bool):
        raise FreeprobValueError(f"`coupled` of `{owner}` must be a bool; got {coupled!r}")
    if weights is not None and not coupled:
        raise FreeprobValueError(f"`weights` of `{owner}` fixes one draw for all models; needs coupled=True")
    stds = {m: _check_model(m, key_norm_term and m != "softmax", beta, dims.n, owner) for m in models}
    draw = dict(rng=rng, input=input, value_weights=value_weights, output_weights=output_weights)
    if weights is None and coupled:
        weights = draw_weights(dims, **draw)
    elif weights is not None:
        _check_weights(weights, dims, owner)
    out = {}
    for model in models:
        w = weights if coupled else draw_weights(dims, **draw)
        facs = _build(w, beta, model, key_norm_term and model != "softmax", rng, objects, stds[model],
                      concat_as_gram=True)
        for name, f in facs.items():
            out[model, name] = _gram_eigvals(f, is_gram=(name == "concat"))
    return out


# --------------------------------------------------------------------------- spectra

def _as_matrix(matrix, owner):
    a = np.asarray(matrix, dtype=np.float64)
    if a.ndim != 2 or 0 in a.shape:
        raise FreeprobValueError(f"`matrix` of `{owner}` must be a non-empty 2-d array; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise FreeprobValueError(f"`matrix` of `{owner}` has non-finite entries")
    return a


def _small_gram(a):
    n, p = a.shape
    return (a.T @ a) if p < n else (a @ a.T)


def _gram_eigvals(a, is_gram=False):
    n = a.shape[0]
    g = a if is_gram else _small_gram(a)
    ev = scipy.linalg.eigvalsh(g, check_finite=False)
    ev = np.clip(ev, 0.0, None)
    if ev.size < n:
        ev = np.concatenate([np.zeros(n - ev.size), ev])
    return ev


def gram_spectrum(matrix):
    r"""All ``n`` eigenvalues of the Gram ``F Fᵀ`` of an ``n × p`` matrix, ascending.

    Computed on the smaller side (``Fᵀ F`` when ``p < n``, padded with ``n − p`` zeros)
    with a symmetric eigensolver; round-off negatives are clipped to 0 (theory.md §9).

    Parameters
    ----------
    matrix : array_like, shape ``(n, p)``, finite

    Returns
    -------
    ndarray, shape ``(n,)``

    Raises
    ------
    FreeprobValueError
        Not a non-empty 2-d finite array.

    Examples
    --------
    >>> gram_spectrum([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    array([0., 1., 9.])
    """
    return _gram_eigvals(_as_matrix(matrix, "gram_spectrum"))


def top_eigenvalue(matrix):
    r"""The largest eigenvalue of the Gram ``F Fᵀ`` of an ``n × p`` matrix (smaller side).

    Lanczos (ARPACK ``eigsh``, tolerance 0, i.e. machine precision, fixed start vector)
    on the smaller-side Gram; the dense symmetric solver for Grams of size < 64 or if
    ARPACK does not converge.

    Parameters
    ----------
    matrix : array_like, shape ``(n, p)``, finite

    Returns
    -------
    float, ``≥ 0``

    Raises
    ------
    FreeprobValueError
        Not a non-empty 2-d finite array.

    Examples
    --------
    >>> float(top_eigenvalue([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))
    9.0
    """
    g = _small_gram(_as_matrix(matrix, "top_eigenvalue"))
    m = g.shape[0]
    if m >= 64:
        v0 = np.random.default_rng(20260101).standard_normal(m)
        try:
            top = scipy.sparse.linalg.eigsh(g, k=1, which="LA", tol=0, v0=v0, return_eigenvectors=False)
            return max(0.0, float(top[0]))
        except scipy.sparse.linalg.ArpackNoConvergence:
            pass
    top = scipy.linalg.eigvalsh(g, subset_by_index=[m - 1, m - 1], check_finite=False)
    return max(0.0, float(top[0]))


def gram_moments(matrix, order):
    r"""Moments ``m_j = (1/n) tr (F Fᵀ)^j``, ``j = 1 … order``, of an ``n × p`` matrix.

    The spectral moments of :func:`gram_spectrum` without an eigensolver:
    ``(1/n) tr (Fᵀ F)^j`` on the smaller side (theory.md §5, "m_k err").

    Parameters
    ----------
    matrix : array_like, shape ``(n, p)``, finite
    order : int, ``≥ 1``

    Returns
    -------
    ndarray, shape ``(order,)``

    Raises
    ------
    FreeprobValueError
        Bad ``order``; ``matrix`` not a non-empty 2-d finite array.

    Examples
    --------
    >>> gram_moments([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]], 2)
    array([ 3.33333333, 27.33333333])
    """
    order = _positive_int(order, "gram_moments", "order")
    a = _as_matrix(matrix, "gram_moments")
    n = a.shape[0]
    g = _small_gram(a)
    out = [np.trace(g) / n]
    if order >= 2:
        out.append(float(np.sum(g * g)) / n)
    power = g
    for j in range(3, order + 1):
        power = power @ g
        out.append(float(np.sum(power * g)) / n)   # tr(g^{j-1} g), g symmetric
    return np.array(out, dtype=np.float64)


def empirical_moments(eigenvalues, order):
    r"""Spectral moments ``m_j = (1/n) Σ λ^j``, ``j = 1 … order`` (theory.md §5 "m_k err").

    Parameters
    ----------
    eigenvalues : array_like, 1-d, finite
    order : int, ``≥ 1``

    Returns
    -------
    ndarray, shape ``(order,)``

    Raises
    ------
    FreeprobValueError
        Bad ``order``; ``eigenvalues`` not a non-empty finite 1-d array.

    Examples
    --------
    >>> empirical_moments([0.0, 1.0, 2.0], 2)
    array([1.        , 1.66666667])
    """
    order = _positive_int(order, "empirical_moments", "order")
    ev = np.asarray(eigenvalues, dtype=np.float64)
    if ev.ndim != 1 or ev.size == 0 or not np.all(np.isfinite(ev)):
        raise FreeprobValueError("`eigenvalues` of `empirical_moments` must be a non-empty finite 1-d array")
    return np.array([np.mean(ev**j) for j in range(1, order + 1)])


def relative_w1(a, b):
    r"""``relW1 = W1(a, b)/mean(b)`` between two samples of eigenvalues (theory.md §5).

    For equal sizes ``W1 = mean|sort(a) − sort(b)|``; otherwise
    :func:`scipy.stats.wasserstein_distance`.

    Raises
    ------
    FreeprobValueError
        Empty or non-finite samples, or ``mean(b) <= 0``.

    Examples
    --------
    >>> relative_w1([1.0, 2.0], [1.0, 3.0])
    0.25
    """
    a = np.sort(np.asarray(a, dtype=np.float64).ravel())
    b = np.sort(np.asarray(b, dtype=np.float64).ravel())
    if a.size == 0 or b.size == 0 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise FreeprobValueError("`a`, `b` of `relative_w1` must be non-empty finite samples")
    mb = float(b.mean())
    if mb <= 0:
        raise FreeprobValueError(f"`b` of `relative_w1` must have a positive mean; got {mb}")
    if a.size == b.size:
        w1 = float(np.mean(np.abs(a - b)))
    else:
        from scipy.stats import wasserstein_distance
        w1 = float(wasserstein_distance(a, b))
    return w1 / mb
