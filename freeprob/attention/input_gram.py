r"""Limiting laws of the GE attention with general inputs (theory.md §10; issue 19).

With inputs ``X`` whose Gram ``C = X Xᵀ/d`` has limiting law ``ν_X`` (mean one), the
score's linear part is ``S = β X W_Q W_Kᵀ Xᵀ/√d_K = β C^{1/2} G Hᵀ C^{1/2}/√d_K`` in law
(``G, H`` iid ``N(0, 1)``, ``n × d_K``), and the GE of one head is
``Y = S + σ Z`` (``σ² = s = θ1 − θ2``, ``Z`` white).  Given ``H``, ``vec Y`` is Gaussian
with covariance ``C ⊗ D + s I ⊗ I``, ``D = β² C^{1/2} H Hᵀ C^{1/2}/d_K``: in the
eigenbases of ``C`` and ``D`` the entries of ``Y`` are independent with **variance
profile** ``c_a d_b + s``.  The Gram ``Y Yᵀ/N`` (``N`` columns, ``α = N/n``) then has the
deterministic equivalent of Hachem–Loubaton–Najim (2007, variance profiles; also Girko):

.. math::  t(c) = \frac{-1}{z(1 + c\,\tilde δ_1 + s\,\tilde δ_0)},\quad
           \tilde t(d) = \frac{-1}{z(1 + (d\,δ_1 + s\,δ_0)/α)},

``δ_j = ∫ c^j t(c) dν_X``, ``δ̃_j = ∫ d^j t̃(d) dν_D`` and Stieltjes transform
``m(z) = ∫ dμ(x)/(x − z) = δ_0``.  Objects (token-side Grams as theory.md §1):

* ``single``: ``α = 1``, ``ν_D = θ2 · ν_X ⊠ MP(1/c_K)``;
* ``concat``: ``α = h`` (heads are column blocks, each rotated by its own ``D_i``);
  ``ν_D`` as single; unchanged by key sharing;
* ``sum`` (independent keys): ``α = 1``, ``ν_D = θ2 · ν_X ⊠ MP(1/γ_K)``.

``head_out``, ``stack``, ``out`` (non-commuting right factors ``Fᵀ K F``): the nested scalar
equations of :mod:`freeprob.attention.input_gram_out`, reached through :func:`input_gram_law`.

With ``ν_X = δ_1`` these are the laws of :mod:`freeprob.attention.laws` (``t`` constant:
the compound free Poisson equation of ``ρ = law of d + s``).  ``ν_X ⊠ MP(1/c)`` is
computed by the exact core (:func:`freeprob.laws.operations.free_mul`) when ``ν_X`` is an
exact law, else by the same equations (``s = 0``, ``α = c``, ``ν_D = δ_1``).

Moments (second route): ``m_k = Σ_T α^{1−#rows(T)} E Π_{edges (a,b)} (c_a d_b + s)`` over
plane trees ``T`` with ``k`` edges rooted at a row vertex (rows at even depth), the ``c``
iid ``ν_X`` and ``d`` iid ``ν_D`` (:func:`variance_profile_moments`).

Source: docs/theory.md §10; Hachem, Loubaton, Najim, Ann. Appl. Probab. 17 (2007);
derivations/input_gram.py (both routes).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from freeprob.attention.input_gram_out import _measure
from freeprob.errors import FreeprobValueError

__all__ = ["discretise", "input_gram_measure", "score_measure", "variance_profile_stieltjes",
           "variance_profile_moments", "input_gram_law", "INPUT_LAW_OBJECTS"]

#: objects with an input-Gram law (head_out, stack, out: :mod:`freeprob.attention.input_gram_out`)
INPUT_LAW_OBJECTS = ("single", "concat", "sum", "head_out", "stack", "out")


def _edge_nodes(points):
    t = (np.arange(points) + 0.5) / points
    p = 4.0
    u = t**p / (t**p + (1 - t)**p)
    du = p * (t * (1 - t))**(p - 1) / (t**p + (1 - t)**p)**2
    return u, du / points


def discretise(law, points=1500):
    r"""An exact-core law as a discrete measure ``(x, w)``: its atoms, and on each support
    interval (cut at :meth:`~freeprob.laws.law.Law.cut_points`, where the density has a
    narrow feature inside) ``points`` edge-clustered nodes weighted by density × cell
    width; the weights are renormalised to sum 1.

    Raises ``FreeprobValueError`` for a law with symbols, an unbounded support or
    ``points < 10``.  Source: quadrature of :meth:`freeprob.laws.law.Law.density` (as
    :class:`freeprob.experiments.compare.TabulatedLaw`)."""
    if not isinstance(points, int) or points < 10:
        raise FreeprobValueError(f"discretise: points must be an integer ≥ 10; got {points!r}")
    law.check_numeric("discretise", "discretising")
    xs, ws = [], []
    for loc, mass in law.atoms(dps=15):
        if float(mass) > 0:
            xs.append(np.array([float(loc)]))
            ws.append(np.array([float(mass)]))
    pieces, cuts = [], [float(c) for c in law.cut_points(dps=15)]
    for a, b in law.support(dps=15):
        a, b = float(a), float(b)
        if not (math.isfinite(a) and math.isfinite(b)):
            raise FreeprobValueError("discretise: unbounded support")
        ends = [a] + sorted(c for c in cuts if a + 1e-9 * (b - a) < c < b - 1e-9 * (b - a)) + [b]
        pieces += [(p, q) for p, q in zip(ends, ends[1:]) if q - p > 1e-9 * (b - a)]
    for a, b in pieces:
        u, du = _edge_nodes(points)
        x = a + (b - a) * u
        dens = np.array([float(v) for v in law.density(list(map(float, x)), dps=15)])
        xs.append(x)
        ws.append(dens * (b - a) * du)
    x, w = np.concatenate(xs), np.concatenate(ws)
    return x, w / w.sum()


def _szego_ar1(rho, points):
    """The limiting spectrum of the Toeplitz matrix ``ρ^{|a−b|}``: ``f(ω)``, ω uniform."""
    om = np.pi * (np.arange(points) + 0.5) / points
    return (1 - rho**2) / (1 - 2 * rho * np.cos(om) + rho**2), np.full(points, 1.0 / points)


def variance_profile_stieltjes(z, rows, cols, s, alpha, *, tol=1e-12, max_iter=200, start=None):
    r"""Stieltjes transform ``m(z) = ∫ dμ(x)/(x − z)`` of the Gram ``Y Yᵀ/N`` of an
    ``n × N`` Gaussian matrix with variance profile ``c_a d_b + s`` (module docstring).

    Parameters
    ----------
    z : array_like of complex, ``Im z > 0``
    rows, cols : (points, weights)
        Discrete measures ``ν_X`` (rows) and ``ν_D`` (columns), points ``≥ 0``.
    s : float ≥ 0
        The white part of the profile (``θ1 − θ2`` for the GE).
    alpha : float > 0
        ``N/n``.
    start : optional ``(δ̃_0, δ̃_1)`` arrays to start the iteration from.

    Returns
    -------
    (m, state) : the transform at ``z`` and the final ``(δ̃_0, δ̃_1)``.

    Raises
    ------
    FreeprobValueError
        ``Im z ≤ 0``; bad measures, ``s < 0`` or ``alpha ≤ 0``.

    Source: Hachem, Loubaton & Najim (2007), Thm 2.3 (variance profiles), with the profile
    ``σ²(a, b) = c_a d_b + s``; theory.md §10.
    """
    z = np.atleast_1d(np.asarray(z, dtype=complex))
    if np.any(z.imag <= 0):
        raise FreeprobValueError("variance_profile_stieltjes: needs Im z > 0")
    cx, cw = _measure(rows, "variance_profile_stieltjes")
    dx, dw = _measure(cols, "variance_profile_stieltjes")
    if not (s >= 0 and alpha > 0):
        raise FreeprobValueError("variance_profile_stieltjes: needs s ≥ 0 and alpha > 0")
    zz = z[:, None]
    if start is None:
        e0 = -np.sum(dw) / z
        e1 = -np.sum(dw * dx) / z
    else:
        e0, e1 = (np.array(v, dtype=complex) for v in start)

    def step(e0, e1):
        t = -1.0 / (zz * (1 + cx[None, :] * e1[:, None] + s * e0[:, None]))
        zt2 = zz * t * t
        d0, d1 = t @ cw, t @ (cw * cx)
        # derivatives of (d0, d1) in (e0, e1)
        a00, a01 = s * (zt2 @ cw), zt2 @ (cw * cx)
        a10, a11 = s * (zt2 @ (cw * cx)), zt2 @ (cw * cx * cx)
        tt = -1.0 / (zz * (1 + (dx[None, :] * d1[:, None] + s * d0[:, None]) / alpha))
        ztt2 = zz * tt * tt / alpha
        n0, n1 = tt @ dw, tt @ (dw * dx)
        b00, b01 = s * (ztt2 @ dw), ztt2 @ (dw * dx)
        b10, b11 = s * (ztt2 @ (dw * dx)), ztt2 @ (dw * dx * dx)
        # Jacobian of T(e) = (n0, n1) by the chain rule
        j00, j01 = b00 * a00 + b01 * a10, b00 * a01 + b01 * a11
        j10, j11 = b10 * a00 + b11 * a10, b10 * a01 + b11 * a11
        return n0, n1, j00, j01, j10, j11

    for _ in range(max_iter):
        n0, n1, j00, j01, j10, j11 = step(e0, e1)
        r0, r1 = n0 - e0, n1 - e1
        diff = max(np.max(np.abs(r0)), np.max(np.abs(r1)))
        if diff < tol:
            break
        # Newton on e − T(e) = 0: (I − J) Δ = T(e) − e
        m00, m01, m10, m11 = 1 - j00, -j01, -j10, 1 - j11
        det = m00 * m11 - m01 * m10
        ok = np.abs(det) > 1e-14
        det = np.where(ok, det, 1.0)
        s0 = np.where(ok, (m11 * r0 - m01 * r1) / det, 0.5 * r0)
        s1 = np.where(ok, (m00 * r1 - m10 * r0) / det, 0.5 * r1)
        f0, f1 = e0 + s0, e1 + s1
        bad = ~(np.isfinite(f0) & np.isfinite(f1)) | (f0.imag < 0) | (f1.imag < 0)
        e0, e1 = np.where(bad, 0.5 * (e0 + n0), f0), np.where(bad, 0.5 * (e1 + n1), f1)
    t = -1.0 / (zz * (1 + cx[None, :] * e1[:, None] + s * e0[:, None]))
    return t @ cw, (e0, e1)


def _density_on_grid(rows, cols, s, alpha, upper, grid, eta_rel, atom0=0.0):
    """Density of the variance-profile Gram on ``[0, upper]`` (nodes clustered at 0) by
    continuation in ``η`` from ``upper`` down to ``eta_rel·upper``."""
    u = (np.arange(grid) + 0.5) / grid
    x = upper * u**2
    eta_final = np.maximum(eta_rel * x, 1e-9 * upper)     # relative: resolves a hard edge at 0
    state = None
    for f in np.geomspace(1.0, 1e-9, 28):
        eta = np.maximum(eta_final, f * upper)
        m, state = variance_profile_stieltjes(x + 1j * eta, rows, cols, s, alpha, start=state,
                                              tol=1e-10, max_iter=30)
    dens = m.imag / np.pi - atom0 * eta_final / (np.pi * (x**2 + eta_final**2))
    return x, np.clip(dens, 0.0, None)


def _to_measure(x, dens, atom0):
    """A discrete measure from a density on nodes ``x`` and an atom at 0."""
    dxs = np.gradient(x)
    w = dens * dxs
    w = w / w.sum() * (1 - atom0)
    if atom0 > 0:
        return np.concatenate([[0.0], x]), np.concatenate([[atom0], w])
    return x, w


def input_gram_measure(kind, ratio, *, rho=0.5, spike=0.5, points=1500, n=None, rank=None):
    r"""The limiting input Gram law ``ν_X`` (mean-one convention) as a discrete measure.

    Parameters
    ----------
    kind : {"orthonormal", "gaussian", "ar1", "lowrank"}
        As :func:`freeprob.sampler.inputs.input_matrix`.
    ratio : float > 0
        ``n/d``.
    rho, spike : float in [0, 1)
        AR(1) correlation; low-rank energy fraction.
    points : int
        Nodes per support interval.
    n, rank : int, optional
        ``"lowrank"`` only, both or neither: keep the ``r = rank`` outliers at the finite
        ``n`` as an atom of mass ``r/n`` at ``s n/r + 1 − s`` (the bulk weighted ``1 − r/n``;
        the mean stays one), a finite-``n`` deterministic equivalent.

    Returns
    -------
    (points, weights)
        ``δ_1`` (orthonormal); ``MP(n/d)`` (gaussian, exact core); ``(1 − s) MP(n/d)``
        (lowrank: the ``r`` outliers have mass → 0, unless ``n`` and ``rank`` are given);
        ``Szegő(f_ρ) ⊠ MP(n/d)`` (ar1, by the variance-profile equations with ``s = 0``).

    Raises
    ------
    FreeprobValueError
        Unknown kind, ``ratio ≤ 0``, ``rho``/``spike`` outside ``[0, 1)``; only one of
        ``n``, ``rank``, or ``rank`` not an integer in ``1 … n − 1``.

    Source: theory.md §10 (Marchenko–Pastur; Szegő's theorem for Toeplitz spectra).
    """
    from freeprob.laws.families import MarchenkoPastur
    from freeprob.laws.operations import dilate
    import sympy as sp
    if kind not in ("orthonormal", "gaussian", "ar1", "lowrank"):
        raise FreeprobValueError(f"input_gram_measure: unknown kind {kind!r}")
    if not (isinstance(ratio, (int, float)) and ratio > 0 and math.isfinite(ratio)):
        raise FreeprobValueError(f"input_gram_measure: ratio n/d must be a finite number > 0; got {ratio!r}")
    for name, v in (("rho", rho), ("spike", spike)):
        if not (0 <= v < 1):
            raise FreeprobValueError(f"input_gram_measure: {name} must lie in [0, 1); got {v!r}")
    q = sp.nsimplify(ratio, rational=True)
    if kind == "orthonormal":
        return np.array([1.0]), np.array([1.0])
    if kind == "gaussian":
        return discretise(MarchenkoPastur(q), points)
    if kind == "lowrank":
        x, w = discretise(dilate(MarchenkoPastur(q), sp.nsimplify(1 - spike, rational=True)), points)
        if n is None and rank is None:
            return x, w
        if (isinstance(n, bool) or isinstance(rank, bool) or not isinstance(n, int) or not isinstance(rank, int)
                or not 1 <= rank < n):
            raise FreeprobValueError(f"input_gram_measure: n and rank must be integers with 1 ≤ rank < n; "
                                     f"got n={n!r}, rank={rank!r}")
        loc = spike * n / rank + 1 - spike                # (1 − r/n)(1 − s) + (r/n) loc = 1
        return np.append(x, loc), np.append(w * (1 - rank / n), rank / n)
    sym = _szego_ar1(rho, points)
    upper = float(sym[0].max()) * (1 + math.sqrt(ratio))**2 * 1.05
    atom0 = max(0.0, 1 - 1 / ratio)
    x, dens = _density_on_grid(sym, (np.array([1.0]), np.array([1.0])), 0.0, 1.0 / ratio, upper,
                               points, 1e-3, atom0)
    x, w = _to_measure(x, dens, atom0)
    return x / float(np.sum(w * x)), w                     # exact mean one (Szegő: ∫f = 1; MP: mean 1)


def score_measure(nu_x, ratio, theta2, *, kind=None, n_over_d=None, spike=0.5, points=1500):
    r"""``ν_D = θ2 · ν_X ⊠ MP(1/ratio)``: the law of ``β² C^{1/2} H Hᵀ C^{1/2}/d_K``
    (``H`` is ``n × ratio·n``), the column profile of the score's linear part.

    For ``kind`` ``"orthonormal"``, ``"gaussian"`` or ``"lowrank"`` (with ``n_over_d``) the
    free product is taken by the exact core (``free_mul`` of Marchenko–Pastur laws), else
    from ``nu_x`` by the variance-profile equations (``s = 0``, ``α = ratio``).

    Raises ``FreeprobValueError`` for ``ratio ≤ 0`` or ``theta2 < 0``.
    Source: theory.md §10.
    """
    from freeprob.laws.families import MarchenkoPastur
    from freeprob.laws.operations import dilate, free_mul
    import sympy as sp
    if not (ratio > 0 and theta2 >= 0):
        raise FreeprobValueError("score_measure: needs ratio > 0 and theta2 ≥ 0")
    if theta2 == 0:
        return np.array([0.0]), np.array([1.0])
    r = sp.nsimplify(1 / ratio, rational=True)
    if kind in ("orthonormal", "gaussian", "lowrank"):
        base = MarchenkoPastur(r)
        if kind != "orthonormal":
            if n_over_d is None:
                raise FreeprobValueError("score_measure: kind needs n_over_d")
            mx = MarchenkoPastur(sp.nsimplify(n_over_d, rational=True))
            if kind == "lowrank":
                mx = dilate(mx, sp.nsimplify(1 - spike, rational=True))
            base = free_mul(mx, base)
        x, w = discretise(base, points)
        return theta2 * x, w
    cx, cw = _measure(nu_x, "score_measure")
    atom0 = 1 - min(1 - float(cw[cx == 0].sum()), ratio)
    upper = float(cx.max()) * (1 + math.sqrt(1 / ratio))**2 * 1.05
    x, dens = _density_on_grid((cx, cw), (np.array([1.0]), np.array([1.0])), 0.0, ratio, upper, points,
                               1e-3, max(atom0, 0.0))
    x, w = _to_measure(x, dens, max(atom0, 0.0))
    # exact mean: m1(ν_X ⊠ MP) = m1(ν_X)
    return theta2 * x * float(np.sum(cw * cx)) / float(np.sum(w * x)), w


def _plane_trees(k):
    """Plane trees with ``k`` edges as parent lists (vertex 0 the root), from Dyck words."""
    for word in itertools.product((1, -1), repeat=2 * k):
        if sum(word) != 0 or any(v < 0 for v in itertools.accumulate(word)):
            continue
        parent, stack = [-1], [0]
        for step in word:
            if step == 1:
                parent.append(stack[-1])
                stack.append(len(parent) - 1)
            else:
                stack.pop()
        yield parent


def variance_profile_moments(row_moments, col_moments, s, alpha, order):
    r"""Moments ``m_1 … m_order`` of the variance-profile Gram by plane trees (the second
    route to the laws of this module).

    ``m_k = Σ_T α^{1−#rows(T)} Σ_{E' ⊆ edges} s^{k−|E'|} Π_rows E c^{deg_{E'}} Π_cols E d^{deg_{E'}}``
    over plane trees ``T`` with ``k`` edges rooted at a row vertex (even depth: rows).

    Parameters
    ----------
    row_moments, col_moments : sequences ``[m_0 = 1, m_1, …, m_order]`` of ``ν_X``, ``ν_D``
        (numbers or sympy expressions).
    s, alpha : numbers or sympy expressions
    order : int, 1 ≤ order ≤ 7

    Raises ``FreeprobValueError`` for ``order`` outside ``1 … 7`` or too few moments.
    Source: the non-crossing pairings of ``tr (YYᵀ)^k`` (Wick's formula), theory.md §10.
    """
    if not isinstance(order, int) or not 1 <= order <= 7:
        raise FreeprobValueError(f"variance_profile_moments: order must be an integer in 1…7; got {order!r}")
    if len(row_moments) <= order or len(col_moments) <= order:
        raise FreeprobValueError("variance_profile_moments: need moments m_0 … m_order of both measures")
    out = []
    for k in range(1, order + 1):
        total = 0
        for parent in _plane_trees(k):
            depth = [0] * len(parent)
            for v in range(1, len(parent)):
                depth[v] = depth[parent[v]] + 1
            n_rows = sum(1 for dd in depth if dd % 2 == 0)
            edges = list(range(1, len(parent)))            # edge v: (parent[v], v)
            tree = 0
            for mask in range(1 << k):
                deg = [0] * len(parent)
                for j, v in enumerate(edges):
                    if mask >> j & 1:
                        deg[v] += 1
                        deg[parent[v]] += 1
                term = s ** (k - bin(mask).count("1"))
                for v, dd in enumerate(depth):
                    term = term * (row_moments if dd % 2 == 0 else col_moments)[deg[v]]
                tree = tree + term
            total = total + tree * alpha ** (1 - n_rows)
        out.append(total)
    return out


def input_gram_law(obj, *, n, heads, d_k, beta, kind="gaussian", d=None, rho=0.5, spike=0.5,
                   points=400, grid=800, eta_rel=2e-3, d_v=None, d_o=None, rank=None):
    r"""The limiting law of an attention object of the GE with general inputs, tabulated.

    Parameters
    ----------
    obj : {"single", "concat", "sum", "head_out", "stack", "out"}
        The last three are delegated to
        :func:`freeprob.attention.input_gram_out.input_gram_output_law` (with ``d_v``,
        ``d_o``: value and output widths, default ``d_k`` and ``n``; its dict has also
        ``atom0``, the mass at 0, and ``cdf`` is then the continuous part only).
    n, heads, d_k : int ≥ 1
        Tokens, heads, key width (``c_K = d_K/n``, ``γ_K = h d_K/n``).
    beta : float ≥ 0
    kind : input kind (:func:`input_gram_measure`); ``d`` the input width (``n/d``).
    points, grid, eta_rel : discretisation of ``ν_X``, ``ν_D``; density nodes; ``η/upper``.
    rank : int, optional
        ``kind="lowrank"``: keep the ``r = rank`` input outliers at this ``n``
        (:func:`input_gram_measure`; ``ν_D`` then by the equations, not the exact core).
        They carry ``m_2(C) ≈ s² n/r``, which grows with ``n``: without them the law misses
        the outliers that dominate W1 (theory.md §10).

    Returns
    -------
    dict
        ``x`` (nodes), ``density``, ``cdf`` (at the nodes), ``moments`` (``m_0 … m_4``,
        plane trees on the discretised measures; for head_out/stack/out by the Cauchy
        integral of the transform), ``upper`` (grid end), ``alpha``.

    Raises
    ------
    FreeprobValueError
        Unknown object or kind; bad sizes or ``beta``; ``d``, ``points`` or ``grid`` not
        integers (≥ 1, ≥ 2); ``eta_rel`` outside (0, 1); ``rank`` with a kind other than
        ``"lowrank"``.

    Source: theory.md §10 (derivation; the single/concat/sum steps carry over from the
    paper's §C.1 with the variance-profile theorem in place of the compound Poisson law).
    """
    if obj not in INPUT_LAW_OBJECTS:
        raise FreeprobValueError(f"input_gram_law: obj must be one of {INPUT_LAW_OBJECTS}; got {obj!r}")
    for name, v in (("n", n), ("heads", heads), ("d_k", d_k)):
        if not isinstance(v, int) or v < 1:
            raise FreeprobValueError(f"input_gram_law: {name} must be an integer ≥ 1; got {v!r}")
    if not (isinstance(beta, (int, float)) and math.isfinite(beta) and beta >= 0):
        raise FreeprobValueError(f"input_gram_law: beta must be a finite number ≥ 0; got {beta!r}")
    d = n if d is None else d
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise FreeprobValueError(f"input_gram_law: d (input features) must be an integer ≥ 1; got {d!r}")
    for name, v in (("points", points), ("grid", grid)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 2:
            raise FreeprobValueError(f"input_gram_law: {name} must be an integer ≥ 2; got {v!r}")
    if isinstance(eta_rel, bool) or not isinstance(eta_rel, (int, float)) or not 0 < eta_rel < 1:
        raise FreeprobValueError(f"input_gram_law: eta_rel must be a number in (0, 1); got {eta_rel!r}")
    if rank is not None and kind != "lowrank":
        raise FreeprobValueError(f"input_gram_law: rank is for kind='lowrank' only; got rank={rank!r} with "
                                 f"kind={kind!r}")
    extra = dict(n=n, rank=rank) if (kind == "lowrank" and rank is not None) else {}
    if obj in ("head_out", "stack", "out"):
        from freeprob.attention.input_gram_out import input_gram_output_law
        nu_x = input_gram_measure(kind, n / d, rho=rho, spike=spike, points=points, **extra)
        return input_gram_output_law(obj, nu_x, n=n, heads=heads, d_k=d_k, beta=beta, d_v=d_v, d_o=d_o,
                                     grid=grid, eta_rel=eta_rel)
    theta2 = beta * beta
    s = math.expm1(theta2) - theta2
    ratio = d_k / n if obj != "sum" else heads * d_k / n
    alpha = float(heads) if obj == "concat" else 1.0
    nu_x = input_gram_measure(kind, n / d, rho=rho, spike=spike, points=points, **extra)
    nu_d = score_measure(nu_x, ratio, theta2, kind=None if extra else kind, n_over_d=n / d, spike=spike,
                         points=points)
    mom = variance_profile_moments([float(np.sum(nu_x[1] * nu_x[0]**j)) for j in range(7)],
                                   [float(np.sum(nu_d[1] * nu_d[0]**j)) for j in range(7)], s, alpha, 6)
    mx, md = float(nu_x[0].max()), float(nu_d[0].max())
    # the norm bound, capped by 3 m6^{1/6} (≥ 1.6 × the edge of every Marchenko–Pastur law)
    upper = min((mx * md + s) * (1 + 1 / math.sqrt(alpha))**2 * 1.1, 3 * mom[5]**(1 / 6)) + 1e-12
    x, dens = _density_on_grid(nu_x, nu_d, s, alpha, upper, grid, eta_rel)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(x))])
    cdf = cdf + 2 * dens[0] * x[0]                 # ∫_0^{x0} of a x^{-1/2} hard edge
    cdf = cdf / cdf[-1]
    return dict(x=x, density=dens, cdf=cdf, moments=[1.0] + list(mom[:4]), upper=upper, alpha=alpha)
