r"""Finite-n samplers for multi-head softmax attention and its Gaussian equivalent (GE).

This is the only float64 layer of freeprob: numpy and scipy, a seeded
``numpy.random.Generator`` passed as the keyword-only ``rng``, and nothing from the
exact layer (sympy, mpmath, python-flint are never imported here).  Sampler results
never flow back into the exact path.

The model (theory.md §1–2; paper: [HK26]_)
------------------------------------------
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
  ``μ_b = d_b/mean(d) − 1``, ``d_b = exp(t(|k_b|²/d_K − 1))``,
  ``t = β²d_K/(2(d_K + β²))`` (:func:`key_norm_mean`), the conditional row mean of
  ``n A⊥`` given the keys.  It restores the softmax outlier of concat, sum and
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

Fast routes (``freeprob.sampler.heads``).  When no requested object needs ``M_i``
itself (objects ``⊆ {head_out, stack, out, out_full}``), softmax and GE head outputs
are computed without the ``n × n`` centred matrices:

* softmax: ``H_i = A_i V_c = diag(1/r) exp(S_i) V_c`` with ``V_c = (I − P) V_i`` and the
  row sums ``r`` from the same product.  The same matrix as the definition, up to
  float64 rounding (an identity).
* GE: ``n H_i = (β/√d_K) Q_i (K_iᵀ V_c) + σ G_i L_iᵀ [+ 1 μᵀ V_c]`` with ``L_i L_iᵀ =
  V_cᵀ V_c`` and ``G_i`` an ``n × d_V`` standard normal matrix.  **Exact in law**
  (``Z_i V_c`` has, given ``V``, iid rows ``N(0, V_cᵀ V_c)``), but a different sample
  for a given seed than the full route, which draws ``Z_i`` (``n × n``).
* GE2 always takes the full route.

Any other object set (e.g. ``("single", "out")``) takes the full route for all objects.

References: [THEORY]_ (sections cited as theory.md §k), [HK26]_
(:mod:`freeprob.references`).
"""
from __future__ import annotations

import math

import numpy as np

from freeprob.sampler.heads import (
    ge_head_outputs,
    softmax_head_outputs,
    softmax_head_outputs_pipelined,
)
from freeprob.sampler.model import INPUTS  # noqa: F401  (re-exported, as before the split)
from freeprob.sampler.model import (
    MODELS,
    OBJECTS,
    SCHEMES,
    WEIGHT_KINDS,
    Dimensions,
    Weights,
    _beta,
    _child_generators,
    _choice,
    _layer,
    _names,
    _noise_std,
    _parallel_draw,
    _positive_int,
    _rng,
    draw_weights,
    ge_constants,
    key_norm_mean,
    softmax_attention,
)
from freeprob.errors import FreeprobValueError
from freeprob._extras import require
from freeprob.sampler.arrays import real_array



def _scipy(*modules):
    """The scipy package with ``modules`` loaded (through the ``sampler`` extra: a missing
    scipy is named in one line); imported on first use, so that importing the sampler loads
    numpy only."""
    for m in modules:
        require(m, "sampler")
    import scipy
    return scipy

__all__ = [
    "SCHEMES", "MODELS", "OBJECTS", "WEIGHT_KINDS",
    "Dimensions", "Weights", "ge_constants", "draw_weights", "softmax_attention",
    "key_norm_mean", "attention_matrices", "sample_objects", "spectra", "gram_spectrum",
    "top_eigenvalue", "gram_moments", "empirical_moments", "relative_w1",
]


# at most this many attention entries (heads × n × n) are held at once
_MAX_BLOCK_ELEMENTS = 2**24
# overlap the softmax exponentials with the BLAS products in a helper thread (fast route)
_PIPELINE = True


# --------------------------------------------------------------------------- attention

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

_M_OBJECTS = frozenset({"single", "concat", "sum"})
_H_OBJECTS = frozenset({"head_out", "stack", "out", "out_full"})


def _fast_route(model, objects):
    """True if the head outputs can skip ``M_i`` (see :mod:`freeprob.sampler.heads`)."""
    return model != "ge2" and not (set(objects) & _M_OBJECTS)


def _head_output_stack(weights, beta, model, key_norm_term, rng, noise_std):
    """``[H_1, …, H_h]`` (``n × h d_V``) by the fast kernels of ``_sampler_heads``."""
    dm = weights.dims
    n, h, dv = dm.n, dm.heads, dm.d_v
    hstack = np.empty((n, h * dv))

    def sink(start, stop):
        """Heads ``start … stop − 1`` of ``hstack`` as a ``(c, n, d_V)`` view."""
        return hstack[:, start * dv:stop * dv].reshape(n, stop - start, dv).transpose(1, 0, 2)

    if model == "softmax":
        block = max(1, min(h, _MAX_BLOCK_ELEMENTS // (n * n)))
        if _PIPELINE and h > 1:
            # two work buffers of half a block each: same memory as one full block
            softmax_head_outputs_pipelined(weights.q, weights.k, weights.v, beta, max(1, block // 2), sink)
            return hstack
        buf = np.empty((block, n, n))
    else:
        block = max(1, min(h, _MAX_BLOCK_ELEMENTS // (n * max(dv, dm.d_k, min(n, dv)))))
        # large GE noise draws: two child generators of rng (two 64-bit words of rng), two
        # threads; small ones straight from rng (the numbers of earlier versions)
        children = _child_generators(rng, 2) if _parallel_draw(h * n * min(n, dv)) else None
    for start in range(0, h, block):
        sl = slice(start, min(h, start + block))
        if model == "softmax":
            hb = softmax_head_outputs(weights.q[sl], weights.k[sl], weights.v[sl], beta, buf)
        else:
            hb = ge_head_outputs(weights.q[sl], weights.k[sl], weights.v[sl], beta, noise_std, rng,
                                 key_norm_term, children)
        sink(sl.start, sl.stop)[...] = hb
    return hstack


def _build(weights, beta, model, key_norm_term, rng, objects, noise_std, concat_as_gram, fast=True):
    """Accumulate the requested objects head block by head block.

    ``fast`` (default) takes the routes of :mod:`freeprob.sampler.heads` when no object
    needs ``M_i``: identical up to rounding for softmax, exact in law for GE.
    """
    dm = weights.dims
    n, h, dv = dm.n, dm.heads, dm.d_v
    want = set(objects)
    need_h = bool(want & _H_OBJECTS)
    res = {}
    if fast and _fast_route(model, want):
        hstack = _head_output_stack(weights, beta, model, key_norm_term, rng, noise_std)
    else:
        hstack = np.empty((n, h * dv)) if need_h else None
        block = max(1, min(h, _MAX_BLOCK_ELEMENTS // (n * n)))
        if "concat" in want:
            res["concat"] = np.zeros((n, n)) if concat_as_gram else np.empty((n, h * n))
        if "sum" in want:
            res["sum"] = np.zeros((n, n))
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
                hstack[:, sl.start * dv:sl.stop * dv] = hb.transpose(1, 0, 2).reshape(n, c * dv)
        if "sum" in want:
            res["sum"] /= math.sqrt(h)
    if "head_out" in want:
        res["head_out"] = hstack[:, :dv].copy()
    if "stack" in want:
        res["stack"] = hstack
    if want & {"out", "out_full"}:
        o = hstack @ weights.w_o                          # one product, k = h d_V
        if "out" in want:
            res["out"] = o
        if "out_full" in want:
            vflat = weights.v.transpose(1, 0, 2).reshape(n, h * dv)
            b = vflat.mean(axis=0) @ weights.w_o          # bᵀ = 1ᵀ[V_1,…,V_h] W_O / n
            res["out_full"] = o + b[None, :] if "out" in want else np.add(o, b[None, :], out=o)
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

    Notes
    -----
    If ``objects ⊆ {head_out, stack, out, out_full}`` and ``model`` is softmax or GE, the
    fast routes of the module docstring are used (no ``n × n`` matrix is formed for GE).
    For GE this is exact in law but draws a different noise sample than a call that also
    requests ``single``, ``concat`` or ``sum`` (full route) with the same seed.

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
    _layer(dims, owner)
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

    Notes
    -----
    Head outputs take the fast routes of the module docstring when ``objects ⊆
    {head_out, stack, out, out_full}``.  Each Gram is formed on the smaller side with one
    symmetric product (numpy's ``F Fᵀ``/``Fᵀ F`` uses BLAS ``syrk``) and diagonalised by
    LAPACK ``eigvalsh`` (values only).  At n = 2048, h = 32, d_K = d_V = 128, d_O = 4096,
    one coupled softmax + GE ``out`` cell costs about the BLAS/LAPACK calls it needs
    (``benchmarks/bench_sampler.py``).

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
    _layer(dims, owner)
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
    return real_array(matrix, f"`matrix` of `{owner}`", ndim=2)


def _small_gram(a):
    n, p = a.shape
    return (a.T @ a) if p < n else (a @ a.T)


def _gram_eigvals(a, is_gram=False):
    scipy = _scipy("scipy.linalg")          # here, so that importing the sampler loads numpy only
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
    scipy = _scipy("scipy.linalg", "scipy.sparse.linalg")   # here, so that importing the sampler loads numpy only
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
    ev = real_array(eigenvalues, "`eigenvalues` of `empirical_moments`", ndim=1)
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
    a = np.sort(real_array(a, "`a` of `relative_w1`").ravel())
    b = np.sort(real_array(b, "`b` of `relative_w1`").ravel())
    mb = float(b.mean())
    if mb <= 0:
        raise FreeprobValueError(f"`b` of `relative_w1` must have a positive mean; got {mb}")
    if a.size == b.size:
        w1 = float(np.mean(np.abs(a - b)))
    else:
        wasserstein_distance = _scipy("scipy.stats").stats.wasserstein_distance
        w1 = float(wasserstein_distance(a, b))
    return w1 / mb
