r"""Input-Gram laws of the **tied** layer ``V_i = K_i`` (``d_V = d_K``) with general inputs:
``head_out``, ``stack`` and ``out`` (theory.md §10 items 5–6; issue 28).

Model (theory.md §1, §10).  Inputs with Gram ``C = XXᵀ/d`` (limiting law ``ν_X``, mean one);
``Q_i = C^{1/2}G_i`` and ``K_i = V_i = C^{1/2}H_i`` in law (``G_i, H_i`` ``n × d_K`` iid
``N(0, 1)``); the GE head output is ``Y_i = n^{-1}(S_i + σZ_i)(I − P)V_i`` with
``S_i = β C^{1/2}G_iH_iᵀC^{1/2}/√d_K`` and ``σ² = s = θ1 − θ2``; ``stack = [Y_1 … Y_h]``,
``out = [Y_1 … Y_h] W_O`` (``W_O`` iid ``N(0, 1/(h d_K))``).  ``(I − P)`` is a rank-one change
and is dropped.

**Derivation.**  With ``W_i = H_iᵀCH_i/n`` (``d_K × d_K``),
``Y_i = β C^{1/2}G_i W_i/√d_K + σ n^{-1} Z_i C^{1/2}H_i``, Gaussian in ``(G_i, Z_i)`` given
``(C, H_i)``, with

.. math:: E[Y_{ab}Y_{cd}] = n^{-1}\bigl(C_{ac}\,r_1(W)_{bd} + δ_{ac}\,r_2(W)_{bd}\bigr),\qquad
          r_1(w) = θ_2 w^2/c_K,\quad r_2(w) = s\,w.

Left factors ``C, I`` commute, and so do the right factors (functions of the **one**
matrix ``W``): in the eigenbases of ``C`` and ``W`` the entries are independent with the
separable-in-rows variance profile ``c_a r_1(w_b) + r_2(w_b)``, so the Gram has the
deterministic equivalent of Hachem–Loubaton–Najim (2007):

.. math:: t(c) = \frac{-1}{z(1 + c\,\tilde δ_1 + \tilde δ_0)},\qquad
          \tilde δ_j = -\frac{h_e u_O}{z} ∫ \frac{r_j(w)}{1 + u_O(a r_1(w) + b r_2(w))}\,dν_n(w),

``a = ∫ c\,t\,dν_X``, ``b = ∫ t\,dν_X = m(z)``.  Here ``ν_n`` is the law of the ``n × n``
matrix ``C^{1/2}HHᵀC^{1/2}/n`` (``= c_K ν_W + (1 − c_K)δ_0``, ``ν_W`` the law of ``W``; the
atom adds nothing since ``r_j(0) = 0``), the free product ``ν_X ⊠ π_{c_K}``
(Marchenko–Pastur–Silverstein).  ``h_e = 1`` (head_out) or ``h`` (stack, out: heads are
column blocks with independent ``H_i``); ``u_O = 1`` except for ``out``, where the lemma
``W_O(I + W_OᵀKW_O)^{-1}W_Oᵀ ≈ u_O(I + u_O K)^{-1}`` of
:mod:`freeprob.attention.input_gram_out` (``K = ⊕_i a r_1(W_i) + b r_2(W_i)``, ``N = h d_K``
rows, ``d_O`` columns) gives the third unknown

.. math:: u_O = γ_O/γ_K − c_K^{-1} ∫ \frac{u_O k(w)}{1 + u_O k(w)}\,dν_n(w),\qquad
          k = a r_1 + b r_2.

So three scalar unknowns ``(δ̃_1, δ̃_0, u_O)`` per ``z`` (two for head_out and stack), the
integrals sums over the discretised ``ν_X`` and ``ν_n``.  These are the matrix Dyson
equations over the diagonal algebra (operator-valued over ``D_n ⊗ D_{d_K}``; theory.md §12).
With ``ν_X = δ_1``, ``ν_n = π_{c_K}`` and ``t = m`` is constant: the laws are
``π(φ_#π_{c_K}, h_e)``-type compound free Poisson laws of theory.md §3.4
(:func:`freeprob.attention.head_output_law` etc. with ``scheme="tied"``; checked in
tests/test_input_gram_tied.py).

**m2 by Wick** (:func:`tied_output_gram_m2`, an independent route): with
``ρ_j = tr r_j/n``, ``ρ_{jk} = tr r_j r_k/n`` (from the moments ``w_k`` of ``ν_n``,
``w_k = Σ_{σ ∈ NC(k)} c_K^{k+1−|σ|} m_σ(ν_X)``) and ``ℓ_{11} = m_2(ν_X)``, ``ℓ_{jk} = 1``
otherwise, ``m_2 = Σ_{jk} ℓ_{jk} ρ_j^e ρ_k^e + Σ_{jk} ρ_{jk}^e`` with ``ρ^e = h_e ρ`` (head_out,
stack) and for out ``ρ_j^e = (γ_O/c_K) ρ_j``, ``ρ_{jk}^e = (γ_O/γ_K)² h ρ_{jk} +
(γ_O/γ_K²) h² ρ_j ρ_k`` (Wick in ``W_O``).  Mean:
``m_1(out) = γ_O(θ2(m_2(ν_X) + 1/c_K) + s)``: ``C`` enters twice through ``V = K``.

GQA/MQA under general inputs need no new law: given ``(C, H, F)`` the stacked conditional
covariance is ``Σ_j L_j ⊗ (⊕_i R_j^{(g(i))})`` with blocks repeated inside groups (queries and
noise are independent across heads), the traces of the equations are averages over the
blocks, and ``W_O`` is Gaussian and independent: stack and out are the untied laws of
:mod:`freeprob.attention.input_gram_out` (theory.md §3.5, §10).

Source: docs/theory.md §3.4, §10; Hachem, Loubaton & Najim, Ann. Appl. Probab. 17 (2007);
Silverstein (1995); Wick's formula ([MS17]_ ch. 1).
"""
from __future__ import annotations

import math

import numpy as np

from freeprob.attention.input_gram_out import _measure, _moments_on_circle
from freeprob.errors import FreeprobValueError

__all__ = ["TIED_OBJECTS", "key_gram_measure", "key_gram_moments", "tied_output_gram_stieltjes",
           "tied_output_gram_moments", "tied_output_gram_m2", "tied_input_gram_output_law"]

#: objects of this module
TIED_OBJECTS = ("head_out", "stack", "out")


class _Params:
    """The scalar parameters of the tied equations of one object (module docstring)."""

    def __init__(self, obj, beta, c_k, heads, gamma_o, who):
        if obj not in TIED_OBJECTS:
            raise FreeprobValueError(f"{who}: obj must be one of {TIED_OBJECTS}; got {obj!r}")
        for name, v in (("beta", beta), ("c_k", c_k), ("gamma_o", gamma_o)):
            if isinstance(v, bool) or not (isinstance(v, (int, float, np.floating)) and math.isfinite(v)):
                raise FreeprobValueError(f"{who}: {name} must be a finite number; got {v!r}")
        if not (beta > 0 and c_k > 0 and gamma_o > 0):
            raise FreeprobValueError(f"{who}: needs beta > 0 and c_k, gamma_o > 0; got beta={beta!r}, "
                                     f"c_k={c_k!r}, gamma_o={gamma_o!r}")
        if isinstance(heads, bool) or not isinstance(heads, (int, np.integer)) or heads < 1:
            raise FreeprobValueError(f"{who}: heads must be an integer ≥ 1; got {heads!r}")
        self.obj, self.b2 = obj, float(beta) ** 2
        self.s = math.expm1(self.b2) - self.b2
        self.c_k, self.h = float(c_k), int(heads)
        self.h_e = 1 if obj == "head_out" else self.h
        self.ratio_o = float(gamma_o) / (self.h * self.c_k)          # γ_O/γ_K
        self.out = obj == "out"

    def r1(self, w):
        return self.b2 * w * w / self.c_k

    def r2(self, w):
        return self.s * w


def _moments_from_cumulants(kappa):
    """Moments ``m_1 … m_K`` from free cumulants ``κ_1 … κ_K`` (floats):
    ``m_n = Σ_s κ_s [z^{n−s}] M(z)^s``, ``M = Σ_{k≥0} m_k z^k`` ([NS06]_ Lecture 11)."""
    order = len(kappa)
    m = [1.0] + [0.0] * order
    for n in range(1, order + 1):
        total, power = 0.0, [1.0] + [0.0] * order          # power = M^s truncated, s = 0, 1, …
        for s in range(1, n + 1):
            power = [sum(power[i] * m[j - i] for i in range(j + 1)) for j in range(order + 1)]
            total += kappa[s - 1] * power[n - s]
        m[n] = total
    return m[1:]


def key_gram_moments(nu_moments, c_k):
    r"""Moments ``w_1 … w_K`` of ``ν_n = ν_X ⊠ π_{c_K}`` from those of ``ν_X``: ``W = HᵀCH/n``
    is the compound free Poisson law of rate ``1/c_K`` and jump law ``c_K ν_X``, free
    cumulants ``κ_k(W) = c_K^{k−1} m_k(ν_X)``, and ``w_k = c_K m_k(W)`` (e.g.
    ``w_2 = c_K² m_2 + c_K m_1²``).  Source: [NS06]_ Lectures 11–12; theory.md §10."""
    kappa = [c_k ** (k - 1) * float(v) for k, v in enumerate(nu_moments, start=1)]
    return [c_k * v for v in _moments_from_cumulants(kappa)]


def key_gram_measure(nu_x, c_k, *, kind=None, n_over_d=None, spike=0.5, points=400):
    r"""``ν_n``: the law of the ``n × n`` matrix ``C^{1/2}HHᵀC^{1/2}/n`` (``H`` ``n × c_K n``
    iid ``N(0, 1)``), i.e. ``ν_X ⊠ π_{c_K}``, as a discrete measure ``(points, weights)``
    (atom at 0 included): ``c_K`` times the column law of
    :func:`freeprob.attention.input_gram.score_measure` at ``θ2 = 1`` (exact core for
    ``kind`` orthonormal, gaussian or lowrank with ``n_over_d``; otherwise the tabulated
    variance-profile law, its moments checked against the exact ones).

    Raises ``FreeprobValueError`` for ``c_k ≤ 0`` or a bad ``nu_x``.
    Source: Marchenko–Pastur–Silverstein; theory.md §10."""
    from freeprob.attention.input_gram import score_measure
    who = "key_gram_measure"
    if isinstance(c_k, bool) or not (isinstance(c_k, (int, float)) and math.isfinite(c_k) and c_k > 0):
        raise FreeprobValueError(f"{who}: c_k must be a finite number > 0; got {c_k!r}")
    cx, cw = _measure(nu_x, f"{who}: nu_x")
    x, w = score_measure((cx, cw), c_k, 1.0, kind=kind, n_over_d=n_over_d, spike=spike, points=points)
    return c_k * np.asarray(x, dtype=float), np.asarray(w, dtype=float)


def _dot(a, v):
    """``a @ v`` without BLAS (``(M, K) × (K,)``): on a loaded machine the threaded complex
    matrix–vector product was measured 40 × slower than this loop (0.79 ms against 34 ms)."""
    return (a * v).sum(axis=1)


def _residual(x, z, cx, cw, nx, nw, p):
    """Residuals at unknowns ``x = (δ̃_1, δ̃_0, u_O)``, shape (3, M), and ``m = b``."""
    e1, e0, uo = x
    zz = z[:, None]
    t = -1.0 / (zz * (1 + e1[:, None] * cx + e0[:, None]))
    a, b = _dot(t, cw * cx), _dot(t, cw)
    r1, r2 = p.r1(nx), p.r2(nx)
    k = uo[:, None] * (a[:, None] * r1 + b[:, None] * r2)
    inv = 1.0 / (1 + k)
    f = -p.h_e * uo / z
    res = [e1 - f * _dot(inv, nw * r1), e0 - f * _dot(inv, nw * r2)]
    if p.out:
        res.append(uo - (p.ratio_o - _dot(k * inv, nw) / p.c_k))
    else:
        res.append(uo - 1.0)
    return np.array(res), b


def _start(z, nx, nw, p):
    """The large-``|z|`` values of the unknowns (the ``1/z`` term of each)."""
    uo = p.ratio_o if p.out else 1.0
    f = -p.h_e * uo / z
    return np.array([f * float(nw @ p.r1(nx)), f * float(nw @ p.r2(nx)), np.full(z.shape, uo, dtype=complex)])


def _physical(x, z):
    """``δ̃_1``, ``δ̃_0`` are (``u_O``-weighted) traces of ``r_j ≥ 0`` against a resolvent,
    Stieltjes transforms of positive measures: ``Im δ̃_j ≥ 0`` and ``Im z δ̃_j ≥ 0`` up to
    rounding; a Newton step leaving this region heads for an unphysical root (as
    :mod:`freeprob.attention.input_gram_out`)."""
    e = x[:2]
    tol = -1e-9 * np.abs(e)
    return np.all((e.imag >= tol) & ((z * e).imag >= tol * np.abs(z)), axis=0)


def _newton(x, z, meas, p, *, tol, max_iter):
    """Damped Newton (Jacobian by complex differences: the equations are holomorphic) on the
    points not yet converged (residual below ``tol`` relative to ``1 + |unknown|``); returns
    the unknowns and the mask of converged points."""
    x = x.copy()
    act = np.arange(z.size)
    ok = np.zeros(z.size, dtype=bool)
    for _ in range(max_iter):
        xa, za = x[:, act], z[act]
        with np.errstate(all="ignore"):
            r, _b = _residual(xa, za, *meas, p)
        norm = np.max(np.abs(r) / (1 + np.abs(xa)), axis=0)
        keep = ~(norm < tol)
        ok[act[~keep]] = True
        if not np.any(keep):
            break
        act, xa, za, r, norm = act[keep], xa[:, keep], za[keep], r[:, keep], norm[keep]
        jac = np.empty((3, 3, za.size), dtype=complex)
        for k in range(3):
            step = 1e-7 * (1 + np.abs(xa[k]))
            xk = xa.copy()
            xk[k] = xk[k] + step
            with np.errstate(all="ignore"):
                jac[:, k, :] = (_residual(xk, za, *meas, p)[0] - r) / step
        with np.errstate(all="ignore"):
            dx = np.linalg.solve(jac.transpose(2, 0, 1), -r.T[:, :, None])[:, :, 0].T
        dx = np.where(np.isfinite(dx), dx, 0.0)
        lam = np.ones(za.size)
        for _ in range(8):                  # backtracking, point by point: decrease the residual, stay physical
            xn = xa + lam * dx
            with np.errstate(all="ignore"):
                rn = np.max(np.abs(_residual(xn, za, *meas, p)[0]) / (1 + np.abs(xa)), axis=0)
            worse = ~(rn < norm) | ~_physical(xn, za)
            if not np.any(worse):
                break
            lam = np.where(worse, lam / 2, lam)
        x[:, act] = np.where(np.isfinite(xn), xn, xa)
    return x, ok


def _prepare(nu_x, nu_n, who, obj, beta, c_k, heads, gamma_o):
    cx, cw = _measure(nu_x, f"{who}: nu_x")
    nx, nw = _measure(nu_n, f"{who}: nu_n")
    return (cx, cw, nx, nw), _Params(obj, beta, c_k, heads, gamma_o, who)


def tied_output_gram_stieltjes(z, nu_x, nu_n, *, obj, beta, c_k, heads=1, gamma_o=1.0, start=None, tol=1e-13,
                               max_iter=60):
    r"""Stieltjes transform ``m(z) = ∫ dμ(x)/(x − z)`` of the tied input-Gram law of
    ``head_out``, ``stack`` or ``out`` (token-side ``n × n`` Grams; module docstring).

    Parameters
    ----------
    z : array_like of complex, shape ``(M,)``, ``Im z > 0``
    nu_x : (points, weights)
        The input Gram law ``ν_X`` (mean one).
    nu_n : (points, weights)
        ``ν_X ⊠ π_{c_K}`` (:func:`key_gram_measure`).
    obj : {"head_out", "stack", "out"}
    beta : float > 0
    c_k : float > 0
        ``d_K/n`` (``= d_V/n``).
    heads : int ≥ 1
    gamma_o : float > 0
        ``d_O/n`` (``out`` only).
    start : optional array ``(3, M)``
        Unknowns ``(δ̃_1, δ̃_0, u_O)`` to start Newton from.

    Returns
    -------
    (m, state) : ``m`` shape ``(M,)``, ``state`` shape ``(3, M)``.

    Raises
    ------
    FreeprobValueError
        ``Im z ≤ 0``; bad measures, object or sizes.

    Source: module docstring (Hachem–Loubaton–Najim 2007; theory.md §10).
    """
    z = np.atleast_1d(np.asarray(z, dtype=complex))
    if z.ndim != 1 or np.any(~np.isfinite(z)) or np.any(z.imag <= 0):
        raise FreeprobValueError("tied_output_gram_stieltjes: z must be a 1-d array of finite numbers with Im z > 0")
    meas, p = _prepare(nu_x, nu_n, "tied_output_gram_stieltjes", obj, beta, c_k, heads, gamma_o)
    x = _start(z, meas[2], meas[3], p) if start is None else np.array(start, dtype=complex)
    x, _ok = _newton(x, z, meas, p, tol=tol, max_iter=max_iter)
    return _residual(x, z, *meas, p)[1], x


def _circle_moments(radius, meas, p, order, nodes):
    th = np.pi * (2 * np.arange(nodes // 2) + 1) / nodes
    path = radius * np.geomspace(1e4, 1.0, 25)[:, None] * np.exp(1j * th)[None, :]
    x = _start(path[0], meas[2], meas[3], p)
    for z in path:
        x, _ok = _newton(x, z, meas, p, tol=1e-14, max_iter=40)
    r, m = _residual(x, path[-1], *meas, p)
    res = float(np.max(np.abs(r)))
    if not res < 1e-10:
        raise FreeprobValueError(f"tied_output_gram_moments: the equations did not converge on |z| = {radius:g} "
                                 f"(residual {res:.1e})")
    return _moments_on_circle(m, path[-1], order)


def _rank(meas, p):
    """The rank of the object over ``n`` (the mass off the atom at 0)."""
    nx, nw = meas[2], meas[3]
    per_head = float(nw[nx > 0].sum())                # rank of W_i over n: min(c_K, rank C/n)
    q = p.h_e * per_head
    if p.out:
        q = min(q, p.ratio_o * p.h * p.c_k)
    return min(1.0, q)


def _norm_bound(meas, p):
    """A bound of the support: ``4 max(h_e(max c · ρ_1 + ρ_2), max_w (r_1(w) m_1(ν_X) + r_2(w)))``,
    the norm bound ``‖x‖ ≤ 2‖η(1)‖^{1/2}`` of an operator-valued semicircular element (as
    :func:`freeprob.attention.input_gram.profile_bound`) with the row sums
    ``h_e ∫ (c r_1 + r_2) dν_n`` and the column sums ``r_1(w) m_1 + r_2(w)`` of the profile;
    for out times ``‖W_O‖² ≤ (1 + √(γ_O/γ_K))²``."""
    cx, cw, nx, nw = meas
    rows = p.h_e * (float(cx.max()) * float(nw @ p.r1(nx)) + float(nw @ p.r2(nx)))
    wmax = float(nx.max())
    cols = p.r1(wmax) * float(cw @ cx) + p.r2(wmax)
    bound = 4.0 * max(rows, cols) * 1.02
    if p.out:
        bound *= (1 + math.sqrt(p.ratio_o)) ** 2
    return bound + 1e-12


def tied_output_gram_moments(nu_x, nu_n, *, obj, beta, c_k, heads=1, gamma_o=1.0, order=4, nodes=128,
                             radius=None):
    r"""Moments ``m_1 … m_order`` of the tied input-Gram law by the Cauchy integral
    ``m_k = −(1/2πi)∮ m(z) z^k dz`` on ``|z| = radius`` (trapezoidal rule, ``nodes`` points),
    each node reached by continuation along its ray from ``10⁴ radius``.

    ``radius`` (default: shrunk from a norm bound while ``m_4`` is resolved, then about 3
    edges) must lie outside the support.

    Parameters
    ----------
    nu_x, nu_n, obj, beta, c_k, heads, gamma_o : as :func:`tied_output_gram_stieltjes`
    order : int in 1 … 8
    nodes : int ≥ 16
    radius : float > 0, optional

    Returns
    -------
    ndarray, shape ``(order,)``: ``[m_1 … m_order]`` (token side, atom at 0 included).

    Raises ``FreeprobValueError`` for bad inputs, ``order`` outside ``1 … 8``, ``nodes < 16``,
    and when Newton does not converge on the circle.
    Source: Cauchy's formula for the Laurent coefficients of ``m`` at ∞; module docstring.
    """
    who = "tied_output_gram_moments"
    meas, p = _prepare(nu_x, nu_n, who, obj, beta, c_k, heads, gamma_o)
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= 8:
        raise FreeprobValueError(f"{who}: order must be an integer in 1…8; got {order!r}")
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 16:
        raise FreeprobValueError(f"{who}: nodes must be an integer ≥ 16; got {nodes!r}")
    if radius is None:
        radius = 3 * _norm_bound(meas, p)
        q = _rank(meas, p)
        for _ in range(12):
            m4 = _circle_moments(radius, meas, p, 4, 64)[3]
            if math.isfinite(m4) and m4 > 1e-10 * radius**4:
                radius = min(radius, 6 * (m4 / q) ** 0.25)
                break
            radius /= 20
        else:
            raise FreeprobValueError(f"{who}: no circle found outside the support")
    elif isinstance(radius, bool) or not (isinstance(radius, (int, float)) and math.isfinite(radius) and radius > 0):
        raise FreeprobValueError(f"{who}: radius must be a finite number > 0; got {radius!r}")
    return _circle_moments(radius, meas, p, order, nodes)


def tied_output_gram_m2(nu_moments, *, obj, beta, c_k, heads=1, gamma_o=1.0):
    r"""``[m_1, m_2]`` of the tied input-Gram law of ``head_out``/``stack``/``out`` in closed
    form by Wick's formula (independent of the equations; module docstring).

    Parameters
    ----------
    nu_moments : sequence ``[m_1, m_2, m_3, m_4]`` of ``ν_X``
    obj, beta, c_k, heads, gamma_o : as :func:`tied_output_gram_stieltjes`

    Returns ``(m1, m2)`` (floats).  With ``ν_X = δ_1`` this is theory.md §3.4.

    Raises ``FreeprobValueError`` for fewer than four finite moments or bad parameters.
    Source: Wick's formula (the two non-crossing pairings of ``tr(YYᵀ)²``, then Wick in
    ``W_O``), [MS17]_ ch. 1; free multiplicative convolution with ``π_{c_K}``
    ([NS06]_ Lecture 14); theory.md §10.
    """
    p = _Params(obj, beta, c_k, heads, gamma_o, "tied_output_gram_m2")
    try:
        mx = [float(v) for v in list(nu_moments)[:4]]
    except (TypeError, ValueError):
        raise FreeprobValueError("tied_output_gram_m2: nu_moments must be four numbers [m1, m2, m3, m4]") from None
    if len(mx) < 4 or not all(math.isfinite(v) for v in mx):
        raise FreeprobValueError("tied_output_gram_m2: nu_moments must be four finite numbers [m1, m2, m3, m4]")
    w1, w2, w3, w4 = key_gram_moments(mx, p.c_k)
    a1 = p.b2 / p.c_k                                  # r_1 = a1 w², r_2 = s w
    rho = [a1 * w2, p.s * w1]                          # tr r_j / n
    rho2 = [[a1 * a1 * w4, a1 * p.s * w3], [a1 * p.s * w3, p.s * p.s * w2]]   # tr r_j r_k / n
    ell = [[mx[1], mx[0]], [mx[0], 1.0]]               # tr L_j L_k / n (L_1 = C, L_2 = I)
    tl = [mx[0], 1.0]                                  # tr L_j / n
    if p.out:
        g = p.ratio_o                                  # γ_O/γ_K
        re = [g * p.h * r for r in rho]
        re2 = [[g * g * p.h * rho2[j][k] + g / (p.h * p.c_k) * p.h * p.h * rho[j] * rho[k] for k in (0, 1)]
               for j in (0, 1)]
    else:
        re = [p.h_e * r for r in rho]
        re2 = [[p.h_e * rho2[j][k] for k in (0, 1)] for j in (0, 1)]
    m1 = sum(tl[j] * re[j] for j in (0, 1))
    m2 = sum(ell[j][k] * re[j] * re[k] + tl[j] * tl[k] * re2[j][k] for j in (0, 1) for k in (0, 1))
    return m1, m2


class _Solver:
    """The tied equations of one object as a solver for
    :func:`freeprob.attention.input_gram_table.tabulate` (start, Newton from a state)."""

    levels = 21                 # continuation steps in η (as input_gram_out)

    def __init__(self, meas, p):
        self.meas, self.p = meas, p

    def start(self, z):
        return _start(z, self.meas[2], self.meas[3], self.p)

    def solve(self, z, state, tol=None):
        x, ok = _newton(np.asarray(state, dtype=complex), z, self.meas, self.p,
                        tol=1e-12 if tol is None else tol, max_iter=40)
        return _residual(x, z, *self.meas, self.p)[1], x, ok


def tied_input_gram_output_law(obj, nu_x, *, n, heads, d_k, beta, d_o=None, nu_n=None, grid=400, kind=None,
                               n_over_d=None, spike=0.5, points=400):
    r"""The limiting law of the tied (``V_i = K_i``) ``head_out``, ``stack`` or ``out`` with
    general inputs, tabulated as one object by
    :func:`freeprob.attention.input_gram_table.tabulate` (the dict of
    :func:`freeprob.attention.input_gram_out.input_gram_output_law`).

    Parameters
    ----------
    obj : {"head_out", "stack", "out"}
    nu_x : (points, weights)
        ``ν_X`` (:func:`freeprob.attention.input_gram.input_gram_measure`).
    n, heads, d_k : int ≥ 1
        Tokens, heads, key = value width.
    beta : float > 0
    d_o : int ≥ 1, optional
        Output width (default ``n``).
    nu_n : (points, weights), optional
        ``ν_X ⊠ π_{c_K}``; by default :func:`key_gram_measure` with ``kind``,
        ``n_over_d``, ``spike``, ``points``.
    grid : int ≥ 20
        Density nodes.

    Returns
    -------
    dict
        ``x``, ``density`` (continuous part), ``knots`` and ``cdf`` (continuous part, ending
        at ``1 − atom0``), ``support``, ``atom0`` (``1 −`` the rank over ``n``), ``moments``
        (``m_0 … m_4`` by :func:`tied_output_gram_moments`), ``moment_error``,
        ``mass_defect``, ``upper``, ``alpha`` (the rank over ``n``).

    Raises
    ------
    FreeprobValueError
        Unknown object; bad measures, sizes, ``beta`` or ``grid``; the equations do not
        converge; the tabulated law disagrees with its moments.

    Source: module docstring; theory.md §10.
    """
    from freeprob.attention.input_gram_table import law_result, tabulate
    who = "tied_input_gram_output_law"
    d_o = n if d_o is None else d_o
    for name, v in (("n", n), ("heads", heads), ("d_k", d_k), ("d_o", d_o)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise FreeprobValueError(f"{who}: {name} must be an integer ≥ 1; got {v!r}")
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 20:
        raise FreeprobValueError(f"{who}: grid must be an integer ≥ 20; got {grid!r}")
    if nu_n is None:
        nu_n = key_gram_measure(nu_x, d_k / n, kind=kind, n_over_d=n_over_d, spike=spike, points=points)
    kw = dict(obj=obj, beta=beta, c_k=d_k / n, heads=int(heads), gamma_o=d_o / n)
    meas, p = _prepare(nu_x, nu_n, who, **kw)
    q = _rank(meas, p)
    atom0 = 1.0 - q
    mom = [1.0] + list(tied_output_gram_moments(nu_x, nu_n, order=6, **kw))
    tab = tabulate(_Solver(meas, p), float(_norm_bound(meas, p)), atom0=atom0, grid=grid,
                   top=4.0 * (mom[6] / q) ** (1 / 6), moments=mom, who=f"{who}({obj!r})")
    return law_result(tab, mom, q)
