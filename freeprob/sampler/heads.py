r"""Fast head-output kernels of :mod:`freeprob.sampler` (private).

When no requested object needs the ``n × n`` centred attention ``M_i`` itself (objects
``⊆ {head_out, stack, out, out_full}``), the head outputs ``H_i = M_i V_i/√n`` are
computed without the full-matrix route of ``sampler._centred_block``:

* **softmax** (:func:`softmax_head_outputs`): ``H_i = (A_i − P) V_i = A_i V_c`` with
  ``V_c = (I − P) V_i``, since ``A_i 1 = 1``.  With ``E = exp(S_i − c)`` (a row shift
  ``c``, see below) and ``r = E 1``, ``A_i V_c = diag(1/r) E V_c``; one product
  ``E [V_c, 1]`` gives both ``E V_c`` and ``r``.  So the ``n × n`` block is written once
  by the score product, exponentiated in place and read once by the value product:
  no centring, scaling or normalising pass over ``n × n`` entries.  This is the same
  matrix as the full route (an algebraic identity), up to float64 rounding.
* **GE** (:func:`ge_head_outputs`): ``n H_i = S_i V_c + σ Z_i V_c (+ 1 μᵀ V_c)``,
  ``σ = √(θ1 − θ2)``.  By reassociation ``S_i V_c = (β/√d_K) Q_i (K_iᵀ V_c)``
  (``S_i`` is never formed; identical up to rounding).  Conditionally on ``V_i``,
  ``Z_i V_c`` has iid rows ``N(0, V_cᵀ V_c)``, independent across heads and of
  ``Q, K, W_O``; it is drawn as ``G Lᵀ`` with ``G`` an ``n × d_V`` standard normal
  matrix and ``L Lᵀ = V_cᵀ V_c`` (Cholesky; QR ``V_c = Q R``, ``Rᵀ R = V_cᵀ V_c``, if
  Cholesky fails), or literally as ``Z_i V_c`` when ``d_V ≥ n``.  This is **exact in
  law** (the conditional law of ``H`` given ``Q, K, V, W_O`` is the same matrix
  normal), but not the same sample as the full route for a given seed: the noise
  stream is ``n d_V`` instead of ``n²`` normals per head.  The key-norm term
  ``1 μᵀ/√n`` contributes ``1 (μᵀ V_c)/n`` exactly (``Σ μ = 0``).
* **GE2** has no such shortcut (the second chaos ``(β²/2)(g² − 1)`` has rank up to
  ``d_K(d_K+1)/2``, not ``d_K``); it always takes the full route.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from freeprob.sampler.model import _fill_two, key_norm_mean

# the softmax row shift is skipped when every score is at most this in modulus (then
# e^{±300} neither overflows nor underflows, and the row sums stay finite for any n)
_NO_SHIFT_LIMIT = 300.0


def _centred_values(v):
    """``V_c = (I − P) V`` for a stack ``(c, n, d_V)``."""
    return v - v.mean(axis=-2, keepdims=True)


def softmax_scores(q, k, beta, out):
    r"""Stage 1 of the fused softmax route: ``out[:c] = β Q Kᵀ/√d_K``; returns ``(s, shift)``.

    ``shift`` is False when the Cauchy–Schwarz bound ``β |q_a| max_b |k_b|/√d_K`` of every
    score is at most 300: softmax is invariant under row shifts and ``e^{±300}`` neither
    overflows nor underflows, so the row-max pass is skipped.  Otherwise the row maximum
    is subtracted in :func:`softmax_exp`, as in :func:`softmax_attention`.
    """
    c, n, dk = q.shape
    qs = q * (beta / math.sqrt(dk))
    s = out[:c]
    np.matmul(qs, np.swapaxes(k, -1, -2), out=s)
    qn = np.einsum("hak,hak->ha", qs, qs).max(axis=-1)              # max_a |q_a|² β²/d_K
    kn = np.einsum("hbk,hbk->hb", k, k).max(axis=-1)                # max_b |k_b|²
    return s, not float(np.max(np.sqrt(qn * kn))) <= _NO_SHIFT_LIMIT


def softmax_exp(s, shift):
    """Stage 2: ``s ← exp(s − rowmax)`` (or ``exp(s)``) in place; elementwise only."""
    if shift:
        s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    return s


def softmax_values(e, v, out=None):
    """Stage 3: ``diag(1/r) e V_c`` with ``r = e 1``, both from one product ``e [V_c, 1]``.

    ``out`` (shape ``(c, n, d_V)``, any strides) receives the result if given.
    """
    c, n, dv = v.shape
    va = np.empty((c, n, dv + 1))
    va[..., :dv] = _centred_values(v)
    va[..., dv] = 1.0
    ev = np.matmul(e, va)
    return np.divide(ev[..., :dv], ev[..., dv:], out=out)


def softmax_head_outputs(q, k, v, beta, buf=None):
    r"""``H_i = (A_i − P) V_i = A_i V_c`` for a block of heads, shape ``(c, n, d_V)``.

    ``q, k`` have shape ``(c, n, d_K)``, ``v`` ``(c, n, d_V)``; ``buf`` is an optional
    ``(≥ c, n, n)`` float64 work array (overwritten).  Stages :func:`softmax_scores`,
    :func:`softmax_exp`, :func:`softmax_values`.
    """
    c, n, _ = q.shape
    s, shift = softmax_scores(q, k, beta, np.empty((c, n, n)) if buf is None else buf)
    return softmax_values(softmax_exp(s, shift), v)


def softmax_head_outputs_pipelined(q, k, v, beta, block, sink):
    r"""All heads through the three stages, the exponentials of one block overlapping the
    score and value products of its neighbours (one helper thread; numpy releases the GIL
    in ``exp`` and in BLAS).  The outputs are written in head order into
    ``sink(start, stop)``, a ``(stop − start, n, d_V)`` array or view.  Same arithmetic
    as :func:`softmax_head_outputs`, so the same numbers.
    """
    h, n, _ = q.shape
    slices = [slice(i, min(h, i + block)) for i in range(0, h, block)]
    bufs = [np.empty((min(block, h), n, n)) for _ in range(min(2, len(slices)))]
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = None                                   # (slice, future of exp)
        for j, sl in enumerate(slices):
            s, shift = softmax_scores(q[sl], k[sl], beta, bufs[j % 2])
            if pending is not None:
                prev_sl, fut = pending
                e = fut.result()
                nxt = pool.submit(softmax_exp, s, shift)
                softmax_values(e, v[prev_sl], out=sink(prev_sl.start, prev_sl.stop))
            else:
                nxt = pool.submit(softmax_exp, s, shift)
            pending = (sl, nxt)
        sl, fut = pending
        softmax_values(fut.result(), v[sl], out=sink(sl.start, sl.stop))


def noise_factor(vc):
    r"""A factor ``F`` with ``Fᵀ F = V_cᵀ V_c`` per head, shape ``(c, r, d_V)``.

    ``G F`` with ``G`` an ``n × r`` standard normal matrix then has iid rows
    ``N(0, V_cᵀ V_c)``, the conditional law of the rows of ``Z V_c``.  ``r = d_V`` and
    ``F = Lᵀ`` (Cholesky) or ``F = R`` (QR of ``V_c``) when ``d_V < n``; ``F = V_c``
    itself (``r = n``) otherwise.
    """
    n, dv = vc.shape[-2:]
    if dv >= n:
        return vc
    gram = np.matmul(np.swapaxes(vc, -1, -2), vc)
    try:
        return np.swapaxes(np.linalg.cholesky(gram), -1, -2)
    except np.linalg.LinAlgError:
        return np.linalg.qr(vc, mode="r")


def ge_noise(shape, rng, children=None):
    r"""``shape = (c, n, r)`` iid standard normals: ``rng.standard_normal(shape)``, or, with
    ``children`` (two Generators, :func:`freeprob.sampler.model._child_generators`),
    rows ``0 … ⌈n/2⌉ − 1`` of each head from child 0 and the other rows from child 1, in
    head order and in two threads.  Either way a split into head blocks does not change
    the numbers.
    """
    if children is None:
        return rng.standard_normal(shape)
    g = np.empty(shape)
    half = (shape[1] + 1) // 2
    _fill_two(children, ([g[i, :half] for i in range(shape[0])], [g[i, half:] for i in range(shape[0])]))
    return g


def ge_head_outputs(q, k, v, beta, noise_std, rng, key_norm_term, children=None):
    r"""GE ``H_i = M_i^GE V_i/√n`` for a block of heads without forming ``n × n`` arrays.

    Exact in law (module docstring); consumes ``c · n · min(n, d_V)`` standard normals
    (:func:`ge_noise`: from ``rng``, or from the two ``children`` generators) in head
    order, so a split into blocks does not change the result.
    """
    c, n, dk = q.shape
    vc = _centred_values(v)
    # the scalars β/√d_K, σ and 1/n go on the small d_K × d_V and r × d_V factors
    ktv = np.matmul(np.swapaxes(k, -1, -2), vc)
    ktv *= beta / (math.sqrt(dk) * n)
    f = noise_factor(vc) * (noise_std / n)
    g = ge_noise((c, n, f.shape[-2]), rng, children)
    out = np.matmul(g, f)
    out += np.matmul(q, ktv)
    if key_norm_term:
        mu = key_norm_mean(k, beta)                                  # (c, n), rows sum to 0
        out += np.einsum("hb,hbv->hv", mu, vc)[:, None, :] / n
    return out
