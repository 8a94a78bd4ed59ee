r"""Model layer of :mod:`freeprob.sampler`: sizes, GE constants, weight draws, softmax.

Private module; the public names are re-exported by :mod:`freeprob.sampler` (import
them from there).  numpy/stdlib only, like the whole sampler layer; the layer class
:class:`Dimensions` is :mod:`freeprob.attention.architecture`'s (no sympy).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from freeprob.attention.architecture import SCHEMES, Architecture, Dimensions  # noqa: F401
from freeprob._checks import check_beta, check_choice, check_int
from freeprob.errors import FreeprobValueError
from freeprob.sampler.arrays import real_array

MODELS = ("softmax", "ge", "ge2")
OBJECTS = ("single", "concat", "sum", "head_out", "stack", "out", "out_full")
WEIGHT_KINDS = ("gaussian", "rademacher", "orthogonal")
INPUTS = ("qkv", "explicit")




# --------------------------------------------------------------------------- validation

# (the checks of freeprob._checks, worded "`name` of `owner`" as the sampler's messages are)

def _positive_int(value, owner, name):
    return check_int(value, None, f"`{name}` of `{owner}`", minimum=1)


def _choice(value, allowed, owner, name):
    return check_choice(value, allowed, None, f"`{name}` of `{owner}`")


def _beta(beta, owner):
    if isinstance(beta, str):                 # the sampler takes numbers, not text
        raise FreeprobValueError(f"`beta` of `{owner}` must be a finite real number ≥ 0; got {beta!r}")
    return check_beta(beta, None, f"`beta` of `{owner}`")


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

def _layer(dims, owner, name="dims"):
    """``dims`` if it is a layer built from sizes (a :class:`Dimensions`, or an
    :class:`~freeprob.attention.architecture.Architecture` from ``from_dimensions``)."""
    if not (isinstance(dims, Architecture) and dims.sized):
        raise FreeprobValueError(f"`{name}` of `{owner}` must be a Dimensions (or an Architecture built "
                                 f"from sizes); got {dims!r}")
    return dims


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
        _layer(self.dims, "Weights")
        dm = self.dims
        shapes = {"q": (dm.heads, dm.n, dm.d_k), "k": (dm.heads, dm.n, dm.d_k),
                  "v": (dm.heads, dm.n, dm.d_v), "w_o": (dm.heads * dm.d_v, dm.d_o)}
        for name, shape in shapes.items():
            arr = real_array(getattr(self, name), f"`{name}` of `Weights`", shape=shape, nonempty=False)
            object.__setattr__(self, name, arr)

    @classmethod
    def _unchecked(cls, dims, q, k, v, w_o, x=None):
        """A Weights of arrays known to be float64, of the right shapes and finite (a fresh
        draw), without the O(size) validation of ``__post_init__``."""
        self = object.__new__(cls)
        for name, value in (("dims", dims), ("q", q), ("k", k), ("v", v), ("w_o", w_o), ("x", x)):
            object.__setattr__(self, name, value)
        return self


# draw_weights calls needing fewer Gaussian entries than this use the single stream of rng
# (the numbers of earlier versions); larger ones the two-thread draw of _standard_normals
_PARALLEL_DRAW_MIN = 2**22


def _parallel_draw(count):
    """True if a draw of ``count`` standard normals takes the two-thread route."""
    return count >= _PARALLEL_DRAW_MIN


def _child_generators(rng, count=2):
    """``count`` independent Generators derived deterministically from ``rng``.

    Consumes two 64-bit words of ``rng`` (the entropy of a fresh ``SeedSequence``, whose
    spawned children seed bit generators of the same type as ``rng``'s).
    """
    entropy = rng.integers(0, 2**64, size=2, dtype=np.uint64)
    make = type(rng.bit_generator)
    children = []
    for seq in np.random.SeedSequence(entropy).spawn(count):
        try:
            bitgen = make(seq)
        except TypeError:                       # a bit generator that takes no SeedSequence
            bitgen = np.random.PCG64(seq)
        children.append(np.random.Generator(bitgen))
    return children


def _standard_normals(shapes, rng):
    """New float64 arrays of the given shapes with iid ``N(0, 1)`` entries.

    Every array is split in two halves of its flat (C-order) entries; child generator 0
    of :func:`_child_generators` fills the first halves, child 1 the second halves, each
    in array order, in two threads (the caller's and one helper; numpy releases the GIL
    inside ``standard_normal(out=...)``).  The numbers depend only on ``rng``'s state,
    not on the thread timing.
    """
    arrays = [np.empty(shape) for shape in shapes]
    flats = [a.reshape(-1) for a in arrays]
    halves = [(f.size + 1) // 2 for f in flats]
    _fill_two(_child_generators(rng, 2), ([f[:m] for f, m in zip(flats, halves)],
                                          [f[m:] for f, m in zip(flats, halves)]))
    return arrays


def _fill_two(children, segments):
    """Child ``p`` fills the contiguous float64 arrays ``segments[p]`` with standard
    normals, in order; child 1 in one helper thread, child 0 in the caller's."""
    def fill(part):
        gen = children[part]
        for seg in segments[part]:
            if seg.size:
                gen.standard_normal(out=seg)

    with ThreadPoolExecutor(max_workers=1) as pool:
        fut = pool.submit(fill, 1)
        fill(0)
        fut.result()


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
        out = rng.standard_normal(shape)
        if std != 1.0:
            out *= std                                  # in place: same numbers as std * out
        return out
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

    Notes
    -----
    Random stream: draws of fewer than ``2**22`` Gaussian entries in total take every
    array from ``rng`` itself, in the order ``Q, K, V, W_O`` (``input="qkv"``) or
    ``X, W_Q, W_K, W_V, W_O`` (``"explicit"``), the numbers of earlier versions.  Larger
    draws fill all Gaussian arrays (``Q, K, V`` or ``W_Q, W_K, W_V``, and ``W_O``,
    whichever are Gaussian) by two child generators derived from ``rng``
    (two 64-bit words of ``rng`` seed a ``numpy.random.SeedSequence``, whose two spawned
    children seed bit generators of ``rng``'s type).  Child 0 fills the first half of the
    flat entries of each array, child 1 the second half, in two threads (the caller's and
    one helper).  Then ``X`` (``input="explicit"``) and the non-Gaussian
    ``V``/``W_V`` and ``W_O`` are drawn from ``rng`` itself.  The law is unchanged (iid
    ``N(0, 1)`` entries, scaled) and the result depends only on the state of ``rng``,
    not on the threads; for these large draws the numbers differ from earlier versions
    (which called ``rng.standard_normal`` once per array at every size).

    Examples
    --------
    >>> import numpy as np
    >>> dims = Dimensions(n=16, heads=4, d_k=4, d_v=4, d_o=8, scheme="gqa", kv_groups=2)
    >>> w = draw_weights(dims, rng=np.random.default_rng(0))
    >>> w.q.shape, w.w_o.shape, bool(np.array_equal(w.k[0], w.k[1]))
    ((4, 16, 4), (16, 8), True)
    """
    owner = "draw_weights"
    _layer(dims, owner)
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
    rows = n if input == "qkv" else d               # Q, K, V directly, or W_Q, W_K, W_V
    std = 1.0 if input == "qkv" else 1.0 / math.sqrt(d)
    std_o = 1.0 / math.sqrt(h * dims.d_v)
    gauss_v = dims.scheme != "tied" and value_weights == "gaussian"
    gauss_o = output_weights == "gaussian"
    shapes = [(h, rows, dims.d_k), (gk, rows, dims.d_k)]
    if gauss_v:                                     # iid: drawn in (group, row, column) order
        shapes.append((gv, rows, dims.d_v))
    if gauss_o:
        shapes.append((h * dims.d_v, dims.d_o))
    if not _parallel_draw(sum(math.prod(shape) for shape in shapes)):
        return _draw_weights_single_stream(dims, rng, input, value_weights, output_weights)
    # every Gaussian array in one parallel draw (two child generators of rng, two threads)
    normals = _standard_normals(shapes, rng)
    q, k = normals[0], normals[1]
    joint = normals[2] if gauss_v else None
    w_o = normals[-1] if gauss_o else None
    for arr, scale in ((q, std), (k, std), (joint, std), (w_o, std_o)):
        if arr is not None and scale != 1.0:
            arr *= scale                                 # in place
    # then the non-Gaussian parts from rng itself, in this order: X, W_V / V, W_O
    x = None
    if input == "explicit":
        x = math.sqrt(d) * _haar_columns(d, n, rng).T
        q = x @ q
        k = x @ k
    if dims.scheme != "tied":
        if joint is None:                            # non-Gaussian: the joint n × g d_V law
            joint = _draw_matrix(value_weights, (rows, gv * dims.d_v), std, rng)
            joint = joint.reshape(rows, gv, dims.d_v).transpose(1, 0, 2)
        v = joint if x is None else x @ joint
    if gk != h:                                   # shared keys: one copy per head
        k = k[dims.key_group_of_head()]
    if dims.scheme == "tied":
        v = k.copy()
    elif gv != h:
        v = v[dims.value_group_of_head()]
    else:
        v = np.ascontiguousarray(v)
    if w_o is None:
        w_o = _draw_matrix(output_weights, (h * dims.d_v, dims.d_o), std_o, rng)
    return Weights._unchecked(dims, q, k, v, w_o, x)


def _draw_weights_single_stream(dims, rng, input, value_weights, output_weights):
    """:func:`draw_weights` for small draws: every array from ``rng`` itself, in order."""
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
    if gk != h:                                   # shared keys: one copy per head
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
    q = real_array(q, "`q` of `softmax_attention`", nonempty=False, finite=False)
    k = real_array(k, "`k` of `softmax_attention`", nonempty=False, finite=False)
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise FreeprobValueError(
            "`q`, `k` of `softmax_attention` must be (..., n, d_k) and (..., m, d_k); "
            f"got {q.shape}, {k.shape}")
    real_array(q, "`q` of `softmax_attention`", nonempty=False)          # finite entries
    real_array(k, "`k` of `softmax_attention`", nonempty=False)
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    s *= beta / math.sqrt(q.shape[-1])
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    return s


def key_norm_mean(k, beta):
    r"""The key-norm row mean ``μ`` of ``n A⊥`` given the keys (theory.md §7, F2).

    ``μ_b = d_b/mean(d) − 1`` with ``d_b = exp(t(|k_b|²/d_K − 1))``,
    ``t = β²d_K/(2(d_K + β²))`` (computed in log space, stable for large ``β``);
    ``Σ_b μ_b = 0`` and ``‖μ‖² ≈ nβ⁴/(2 d_K)``.  The GE with the key-norm term adds
    ``1 μᵀ/√n`` to ``M^GE``.

    Derivation: given the keys, ``n A_ab = e^{βq_a·k_b/√d_K}/mean_c e^{βq_a·k_c/√d_K}``;
    the normaliser is its mean over the keys, ``e^{β²|q_a|²/(2d_K)}``, up to an
    ``O(n^{-1/2})`` error, and the Gaussian average over the query, coordinate by
    coordinate ``E e^{aq − cq²} = (1 + 2c)^{-1/2} e^{a²/(2(1 + 2c))}`` with
    ``a = βk_bj/√d_K``, ``c = β²/(2d_K)``, gives
    ``E_q n A_ab ∝ e^{t|k_b|²/d_K}``.  The exponent ``β²/2`` (the normaliser not averaged
    over ``q``, used up to version 2467f78) overstates ``‖μ‖²`` by ``≈ 2β²/d_K``.  The same
    formula is :func:`freeprob.attention.spikes.key_norm_spike`'s (``‖μ‖²`` in closed form;
    the sampler cannot import it, and ``tests/test_finite_width.py`` checks that the two
    agree and that ``μ`` is the softmax row mean of a sampled draw).

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
    k = real_array(k, "`k` of `key_norm_mean`", nonempty=False, finite=False)
    if k.ndim < 2:
        raise FreeprobValueError(f"`k` of `key_norm_mean` must be (..., n, d_k); got shape {k.shape}")
    dk = k.shape[-1]
    b2 = beta * beta
    t = 0.5 * b2 * dk / (dk + b2) if b2 > 0 else 0.0
    log_d = t * (np.einsum("...bj,...bj->...b", k, k) / dk - 1.0)
    log_d -= log_d.max(axis=-1, keepdims=True)
    dvals = np.exp(log_d)
    return dvals / dvals.mean(axis=-1, keepdims=True) - 1.0
