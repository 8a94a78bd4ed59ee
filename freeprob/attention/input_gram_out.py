r"""Input-Gram laws of the head output, the stacked output and the output (theory.md §10;
issue 19): ``head_out``, ``stack`` and ``out`` of the GE attention with general inputs.

Model (theory.md §1, §10).  Inputs with Gram ``C = XXᵀ/d`` (limiting law ``ν_X``, mean
one); ``Q_i = C^{1/2}G_i``, ``K_i = C^{1/2}H_i``, ``V_i = C^{1/2}F_i`` in law (``G_i, H_i``
``n × d_K``, ``F_i`` ``n × d_V``, iid ``N(0, 1)``); the GE head output is
``Y_i = n^{-1}(S_i + σZ_i)(I − P)V_i`` with ``S_i = β C^{1/2}G_iH_iᵀC^{1/2}/√d_K``,
``σ² = s = θ1 − θ2``; ``stack = [Y_1 … Y_h]``, ``out = Σ_i Y_i W_O^i`` (``W_O`` iid
``N(0, 1/(h d_V))``).  The centring ``(I − P)`` is a rank-one change and is dropped.

**Derivation.**  Conditionally on ``(C, H, F, W_O)`` the object ``Y`` (``n × p``) is Gaussian
in ``(G, Z)`` with ``E[Y_{ab}Y_{cd}] = n^{-1} Σ_j L_j[a,c] R_j[b,d]``: ``L_1 = C``,
``L_2 = I`` (they commute) and the right factors

* ``head_out``: ``R_j = Fᵀ K_j F/n``, ``K_1 = β² C H Hᵀ C/d_K``, ``K_2 = s C``;
* ``stack``: ``⊕_i R_j^{(i)}``;  ``out``: ``W_Oᵀ (⊕_i R_j^{(i)}) W_O``,

which do not commute.  The Gaussian deterministic equivalent (the matrix Dyson equation
with the self-energy ``E[Y A Yᵀ] = n^{-1} Σ_j L_j tr(R_j A)``; Hachem–Loubaton–Najim 2007
for the separable case) is

.. math:: T = \frac{-1}{z(1 + \tilde δ_1 C + \tilde δ_0)},\qquad
          \tilde δ_j = \frac{-1}{nz}\,\mathrm{tr}\,R_j (I + aR_1 + bR_2)^{-1},\qquad
          a = ∫ c\,T\,dν_X,\ b = ∫ T\,dν_X,

and ``m(z) = ∫ dμ(x)/(x − z) = b``.  The right traces are Gaussian Grams again; one lemma
is used three times: for ``F`` (``n × p``) iid and ``K`` independent of ``F``,
``F (I_p + FᵀKF/N)^{-1} Fᵀ/N ≈ u (I + uK)^{-1}`` with ``u = p/N − 1 + tr(I + uK)^{-1}/n``
(``n`` the rows of ``F``) and ``tr(I_p + FᵀKF/N)^{-1}/p ≈ uN/p``.

1. ``F`` level (``N = n``, ``p = d_V``): ``u = c_V − 1 + φ_0``,
   ``φ_0 = tr(I + uK)^{-1}/n``, ``K = a'K_1 + b'K_2``; ``tr(R_j X^{-1}) = n u ψ_j``,
   ``ψ_j = tr(K_j (I + uK)^{-1})/n``.
2. ``H`` level: ``I + uK = A_0^{1/2}(I + g E H Hᵀ E/d_K)A_0^{1/2}`` with ``A_0 = 1 + u b' s C``,
   ``E² = C²/A_0``, ``g = u a' β²``; the lemma with ``p = N = d_K`` gives ``τ`` from
   ``τ (1 + c_K^{-1} ∫ γ/(1 + τγ) dν_X) = 1``, ``γ(c) = u a' β² c²/A_0(c)``, and
   ``φ_0 = ∫ 1/D``, ``ψ_1 = β² τ ∫ c²/D``, ``ψ_2 = s ∫ c/D``, ``D = A_0 (1 + τγ)``.
3. ``W_O`` level (``out`` only; ``N = h d_V``, ``p = d_O``): ``u_O = γ_O/γ_V − 1 + u/c_V``
   and the ``F`` level is taken at the pencil ``(a', b') = u_O (a, b)``.

Hence ``δ̃_j = −h_e u_O u ψ_j / z`` with ``h_e = 1`` (head_out) or ``h`` (stack, out),
``u_O = 1`` and ``(a', b') = (a, b)`` except for ``out``: four scalar unknowns
``(δ̃_1, δ̃_0, u, τ)`` per ``z``, every trace an integral over the discretised ``ν_X``.
With ``ν_X = δ_1`` these are the compound free Poisson laws of
:func:`freeprob.attention.head_output_law`, :func:`~freeprob.attention.stacked_output_law`,
:func:`~freeprob.attention.output_law` (checked in derivations/input_gram.py and
tests/test_input_gram_out.py).  Mean: ``m_1 = (p_e/n)(θ2 m_2(ν_X) + s)``, ``p_e = d_V, h d_V,
d_O``: the values ``V = C^{1/2}F`` carry ``C`` a second time.

Solved by Newton with the analytic Jacobian (:func:`_system`: with ``D = 1 + h c + τ g c²``
every trace is ``∫ c^k/D``, every derivative ``∫ c^k/D²``), steps kept where ``δ̃_0``, ``δ̃_1``
stay Stieltjes transforms (``Im δ̃_j ≥ 0``, ``Im z δ̃_j ≥ 0``); moments by the Cauchy
integral on a circle outside the support; the law tabulated by
:func:`freeprob.attention.input_gram_table.tabulate` and checked against those moments.

Source: docs/theory.md §10; Hachem, Loubaton & Najim, Ann. Appl. Probab. 17 (2007); [THEORY]_ §10.
"""
from __future__ import annotations

import math

import numpy as np

from freeprob.errors import FreeprobValueError

__all__ = ["OUTPUT_OBJECTS", "output_gram_stieltjes", "output_gram_moments", "input_gram_output_law"]

#: objects of this module
OUTPUT_OBJECTS = ("head_out", "stack", "out")


class _Params:
    """The scalar parameters of the equations of one object (module docstring)."""

    def __init__(self, obj, beta, c_k, c_v, heads, gamma_o):
        if obj not in OUTPUT_OBJECTS:
            raise FreeprobValueError(f"output_gram_stieltjes: obj must be one of {OUTPUT_OBJECTS}; got {obj!r}")
        for name, v in (("beta", beta), ("c_k", c_k), ("c_v", c_v), ("gamma_o", gamma_o)):
            if not (isinstance(v, (int, float)) and math.isfinite(v)) or isinstance(v, bool):
                raise FreeprobValueError(f"output_gram_stieltjes: {name} must be a finite number; got {v!r}")
        if not (beta >= 0 and c_k > 0 and c_v > 0 and gamma_o > 0):
            raise FreeprobValueError("output_gram_stieltjes: needs beta ≥ 0 and c_k, c_v, gamma_o > 0; got "
                                     f"beta={beta!r}, c_k={c_k!r}, c_v={c_v!r}, gamma_o={gamma_o!r}")
        if isinstance(heads, bool) or not isinstance(heads, (int, np.integer)) or heads < 1:
            raise FreeprobValueError(f"output_gram_stieltjes: heads must be an integer ≥ 1; got {heads!r}")
        self.obj, self.b2 = obj, float(beta) ** 2
        self.s = math.expm1(self.b2) - self.b2
        self.c_k, self.c_v, self.h = float(c_k), float(c_v), int(heads)
        self.h_e = 1 if obj == "head_out" else self.h
        self.ratio_o = float(gamma_o) / (self.h * self.c_v)          # γ_O/γ_V

    def p_over_n(self):
        """The rank of the object over ``n``: ``c_V``, ``γ_V`` or ``min(γ_V, γ_O)``."""
        if self.obj == "out":
            return min(self.ratio_o, 1.0) * self.h * self.c_v
        return self.h_e * self.c_v

    def u_o(self, u):
        return self.ratio_o - 1 + u / self.c_v if self.obj == "out" else 1.0


def _weights(cx, cw):
    """``cw · c^k`` for ``k = 0 … 4``, shape ``(N, 5)``: every integral over ``ν_X`` below."""
    return np.stack([cw * cx**k for k in range(5)], axis=1)


def _system(x, z, cx, w, p, jac=False):
    r"""Residuals of the four equations at unknowns ``x = (δ̃_1, δ̃_0, u, τ)`` (shape (4, M)),
    ``m(z) = b``, and with ``jac`` the analytic Jacobian (shape (4, 4, M)).

    With ``a = ∫ c T``, ``b = ∫ T``, ``T = −1/(z(1 + δ̃_1 c + δ̃_0))``, ``g = u a′ β²``,
    ``h = u b′ s`` the ``H``-level denominator is ``D = A_0(1 + τγ) = 1 + h c + τ g c²``
    and every trace is ``I_k = ∫ c^k/D``: ``τ(1 + g I_2/c_K) = 1``, ``u = c_V − 1 + I_0``,
    ``ψ_1 = β²τ I_2``, ``ψ_2 = s I_1`` (module docstring)."""
    e1, e0, u, tau = x
    zz = z[:, None]
    t = -1.0 / (zz * (1 + e1[:, None] * cx + e0[:, None]))
    tw = t @ w[:, :3]
    b, a = tw[:, 0], tw[:, 1]
    uo = p.u_o(u)
    g, h = u * uo * a * p.b2, u * uo * b * p.s
    inv = 1.0 / (1 + h[:, None] * cx + (tau * g)[:, None] * (cx * cx))
    i0, i1, i2 = (inv @ w[:, :3]).T
    f = -p.h_e * uo * u / z
    psi1, psi2 = p.b2 * tau * i2, p.s * i1
    r = np.array([e1 - f * psi1, e0 - f * psi2, u - (p.c_v - 1 + i0), tau * (1 + g * i2 / p.c_k) - 1])
    if not jac:
        return r, b
    zt2 = (zz * t * t) @ w[:, :3]                       # ∂T/∂δ̃_1 = z T² c, ∂T/∂δ̃_0 = z T²
    # J_k = ∫ c^k/D²: ∂I_k/∂h = −J_{k+1}, ∂I_k/∂(τg) = −J_{k+2}
    j1, j2, j3, j4 = ((inv * inv) @ w[:, 1:]).T
    zero, one = np.zeros_like(z), np.ones_like(z)
    d = lambda v1, v0, vu, vt: np.array([v1, v0, vu, vt])        # noqa: E731  (∂/∂(δ̃_1, δ̃_0, u, τ))
    da, db = d(zt2[:, 2], zt2[:, 1], zero, zero), d(zt2[:, 1], zt2[:, 0], zero, zero)
    duo = d(zero, zero, (one / p.c_v) if p.obj == "out" else zero, zero)
    du, dt = d(zero, zero, one, zero), d(zero, zero, zero, one)
    dg = p.b2 * (uo * a * du + u * a * duo + u * uo * da)
    dh = p.s * (uo * b * du + u * b * duo + u * uo * db)
    dG = g * dt + tau * dg
    di0, di1, di2 = -j1 * dh - j2 * dG, -j2 * dh - j3 * dG, -j3 * dh - j4 * dG
    df = -p.h_e * (duo * u + uo * du) / z
    jm = np.array([d(one, zero, zero, zero) - (df * psi1 + f * p.b2 * (dt * i2 + tau * di2)),
                   d(zero, one, zero, zero) - (df * psi2 + f * p.s * di1),
                   du - di0,
                   dt * (1 + g * i2 / p.c_k) + tau * (dg * i2 + g * di2) / p.c_k])
    return r, b, jm


def _residual(x, z, cx, cw, p):
    """Residuals of the four equations at unknowns ``x = (δ̃_1, δ̃_0, u, τ)``, shape (4, M), and ``m(z)``."""
    return _system(x, z, cx, _weights(cx, cw), p)


def _start(z, cx, cw, p):
    """The large-``|z|`` values of the unknowns (the ``1/z`` term of each)."""
    m2 = float(np.sum(cw * cx * cx))
    uo = p.u_o(p.c_v)
    f = -p.h_e * uo * p.c_v / z
    one = np.ones_like(z)
    return np.array([f * p.b2 * m2, f * p.s, p.c_v * one, one])


def _physical(x, z):
    """``δ̃_0``, ``δ̃_1`` are Stieltjes transforms of positive measures on ``[0, ∞)`` (traces
    of ``R_j`` against a resolvent): ``Im δ̃_j ≥ 0`` and ``Im z δ̃_j ≥ 0`` (up to rounding).
    A Newton step that leaves this region is heading for an unphysical root."""
    e = x[:2]
    tol = -1e-9 * np.abs(e)
    return np.all((e.imag >= tol) & ((z * e).imag >= tol * np.abs(z)), axis=0)


def _newton(x, z, cx, cw, p, *, tol, max_iter):
    """Damped Newton with the analytic Jacobian of :func:`_system`, iterating only on the
    points not yet converged (residual below ``tol`` relative to ``1 + |unknown|``)."""
    x, w = x.copy(), _weights(cx, cw)
    act = np.arange(z.size)
    ok = np.zeros(z.size, dtype=bool)
    for _ in range(max_iter):
        xa, za = x[:, act], z[act]
        with np.errstate(all="ignore"):
            r, _b, jm = _system(xa, za, cx, w, p, jac=True)
        norm = np.max(np.abs(r) / (1 + np.abs(xa)), axis=0)
        keep = ~(norm < tol)
        ok[act[~keep]] = True
        if not np.any(keep):
            break
        act, xa, za, r, jm, norm = act[keep], xa[:, keep], za[keep], r[:, keep], jm[:, :, keep], norm[keep]
        with np.errstate(all="ignore"):
            dx = np.linalg.solve(jm.transpose(2, 0, 1), -r.T[:, :, None])[:, :, 0].T
        dx = np.where(np.isfinite(dx), dx, 0.0)
        lam = np.ones(za.size)
        for _ in range(8):        # backtracking, point by point: decrease the residual, stay physical
            xn = xa + lam * dx
            with np.errstate(all="ignore"):
                rn = np.max(np.abs(_system(xn, za, cx, w, p)[0]) / (1 + np.abs(xa)), axis=0)
            worse = ~(rn < norm) | ~_physical(xn, za)
            if not np.any(worse):
                break
            lam = np.where(worse, lam / 2, lam)
        x[:, act] = np.where(np.isfinite(xn), xn, xa)
    return x, ok


def _measure(m, who):
    """``(points, weights)`` of a discrete measure ``m``, checked: finite, non-empty, equal
    lengths, weights ≥ 0 summing to 1, points ≥ 0 (``FreeprobValueError`` otherwise); every
    input-Gram measure (here and in :mod:`freeprob.attention.input_gram`) is checked so."""
    try:
        x, w = (np.asarray(v, dtype=float).ravel() for v in m)
    except (TypeError, ValueError):
        raise FreeprobValueError(f"{who}: a measure is a pair (points, weights) of real arrays") from None
    if x.size == 0 or x.shape != w.shape or not (np.all(np.isfinite(x)) and np.all(np.isfinite(w))):
        raise FreeprobValueError(f"{who}: points and weights must be finite, non-empty and of equal length")
    if np.any(w < 0) or abs(w.sum() - 1) > 1e-6 or np.any(x < 0):
        raise FreeprobValueError(f"{who}: weights must be ≥ 0 and sum to 1, points ≥ 0")
    return x, w


def _check_measure(nu_x, who):
    return _measure(nu_x, f"{who}: nu_x")


def output_gram_stieltjes(z, nu_x, *, obj, beta, c_k, c_v, heads=1, gamma_o=1.0, start=None,
                          tol=1e-13, max_iter=60):
    r"""Stieltjes transform ``m(z) = ∫ dμ(x)/(x − z)`` of the input-Gram law of ``head_out``,
    ``stack`` or ``out`` (token-side ``n × n`` Grams, theory.md §1), module docstring.

    Parameters
    ----------
    z : array_like of complex, shape ``(M,)``, ``Im z > 0``
    nu_x : (points, weights)
        The input Gram law ``ν_X`` (mean one, theory.md §10), e.g. from
        :func:`freeprob.attention.input_gram.input_gram_measure`.
    obj : {"head_out", "stack", "out"}
    beta : float ≥ 0
    c_k, c_v : float > 0
        ``d_K/n`` and ``d_V/n`` (per head).
    heads : int ≥ 1
    gamma_o : float > 0
        ``d_O/n`` (``out`` only).
    start : optional array ``(4, M)``
        Unknowns ``(δ̃_1, δ̃_0, u, τ)`` to start Newton from (continuation); by default
        their large-``|z|`` values.

    Returns
    -------
    (m, state) : ``m`` shape ``(M,)``; ``state`` the unknowns, shape ``(4, M)``.

    Raises
    ------
    FreeprobValueError
        ``Im z ≤ 0``; bad ``nu_x``, object or sizes.

    Source: module docstring (matrix Dyson equation for Gaussian matrices with
    Kronecker-sum covariance, Hachem–Loubaton–Najim 2007; [THEORY]_ §10).
    """
    z = np.atleast_1d(np.asarray(z, dtype=complex))
    if z.ndim != 1 or np.any(~np.isfinite(z)) or np.any(z.imag <= 0):
        raise FreeprobValueError("output_gram_stieltjes: z must be a 1-d array of finite numbers with Im z > 0")
    cx, cw = _check_measure(nu_x, "output_gram_stieltjes")
    p = _Params(obj, beta, c_k, c_v, heads, gamma_o)
    x = _start(z, cx, cw, p) if start is None else np.array(start, dtype=complex)
    x, _ok = _newton(x, z, cx, cw, p, tol=tol, max_iter=max_iter)
    return _residual(x, z, cx, cw, p)[1], x


def _solve_path(z_path, cx, cw, p, tol):
    """Continuation: solve along ``z_path`` (shape ``(L, M)``, ``|z|`` from large to small)."""
    x = _start(z_path[0], cx, cw, p)
    for z in z_path:
        x, _ok = _newton(x, z, cx, cw, p, tol=tol, max_iter=40)
    r, b = _residual(x, z_path[-1], cx, cw, p)
    return b, x, float(np.max(np.abs(r)))


def output_gram_moments(nu_x, *, obj, beta, c_k, c_v, heads=1, gamma_o=1.0, order=4, nodes=128,
                        radius=None):
    r"""Moments ``m_1 … m_order`` of the input-Gram law of ``head_out``/``stack``/``out`` by
    the Cauchy integral ``m_k = −(1/2πi) ∮ m(z) z^k dz`` on the circle ``|z| = radius``
    (trapezoidal rule with ``nodes`` points; lower half-plane by ``m(z̄) = conj m(z)``).

    ``radius`` (default: found by :func:`_moment_radius`, about 3 edges, from a first pass far
    outside a norm bound) must lie outside the support; the aliasing error is
    ``(edge/radius)^{nodes}``, the rounding error ``≈ 10⁻¹⁵ (radius/m_1)^k``.  Each node is
    reached by continuation along its ray from ``|z| = 10⁴ radius``.

    Parameters
    ----------
    nu_x, obj, beta, c_k, c_v, heads, gamma_o : as :func:`output_gram_stieltjes`
    order : int in 1 … 8
    nodes : int ≥ 16
    radius : float > 0, optional

    Returns
    -------
    ndarray, shape ``(order,)``
        ``[m_1, …, m_order]`` of the token-side law (atom at 0 included), float64.

    Raises ``FreeprobValueError`` for bad inputs (as :func:`output_gram_stieltjes`), ``order``
    outside ``1 … 8`` or ``nodes < 16``, and when Newton does not converge on the circle.
    Source: module docstring; Cauchy's formula for the Laurent coefficients of ``m`` at ∞.
    """
    cx, cw = _check_measure(nu_x, "output_gram_moments")
    p = _Params(obj, beta, c_k, c_v, heads, gamma_o)
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= 8:
        raise FreeprobValueError(f"output_gram_moments: order must be an integer in 1…8; got {order!r}")
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 16:
        raise FreeprobValueError(f"output_gram_moments: nodes must be an integer ≥ 16; got {nodes!r}")
    if radius is None:
        radius = _moment_radius(cx, cw, p, nodes)
    elif not (isinstance(radius, (int, float)) and math.isfinite(radius) and radius > 0):
        raise FreeprobValueError(f"output_gram_moments: radius must be a finite number > 0; got {radius!r}")
    return _circle_moments(radius, cx, cw, p, order, nodes)


def _moment_radius(cx, cw, p, nodes):
    """A circle outside the support, not too far for float64: from a circle far outside the
    norm bound, shrunk by 20 while ``m_4`` is lost in rounding (``m_4 < 10⁻¹⁰ R⁴``), then
    ``6 (m_4/q)^{1/4}`` (``q`` the mass off 0): a square-root edge ``E`` has
    ``E ≤ 2.3 (m_4/q)^{1/4}``."""
    radius = 12 * _edge_bound(cx, p)
    q = min(1.0, p.p_over_n())
    for _ in range(12):
        m4 = _circle_moments(radius, cx, cw, p, 4, 64)[3]
        if math.isfinite(m4) and m4 > 1e-10 * radius**4:
            return min(radius, 6 * (m4 / q) ** 0.25)
        radius /= 20
    raise FreeprobValueError("output_gram_moments: no circle found outside the support")


def _circle_moments(radius, cx, cw, p, order, nodes):
    th = np.pi * (2 * np.arange(nodes // 2) + 1) / nodes                 # upper half of the circle
    scales = np.geomspace(1e4, 1.0, 25)
    path = radius * scales[:, None] * np.exp(1j * th)[None, :]
    m, _x, res = _solve_path(path, cx, cw, p, 1e-14)
    if not res < 1e-10:
        raise FreeprobValueError(f"output_gram_moments: the equations did not converge on |z| = {radius:g} "
                                 f"(residual {res:.1e})")
    return _moments_on_circle(m, path[-1], order)


def _moments_on_circle(m, z, order):
    """``m_1 … m_order`` from the Stieltjes transform ``m`` at the upper-half nodes ``z`` of a
    circle outside the support: ``m_k = −(1/2πi)∮ m z^k dz = −(1/N) Σ_j m(z_j) z_j^{k+1}``
    over the whole circle, the lower half being the conjugates (the trapezoid rule)."""
    return np.array([float(-2 * np.real(np.sum(m * z ** (k + 1))) / (2 * len(z)))
                     for k in range(1, order + 1)])


def _edge_bound(cx, p):
    """A rough upper bound of the support edge: ``‖Y‖² ≤ 2(‖C‖‖R_1‖ + ‖R_2‖)‖G‖²/n`` with the
    Marchenko–Pastur norms ``(1 + √ratio)²`` of the Gaussian factors ``G, H, F, W_O``, and
    ``‖stack‖² ≤ h ‖head_out‖²``."""
    cmax = float(cx.max())
    k_norm = p.b2 * cmax * cmax * (1 + 1 / math.sqrt(p.c_k)) ** 2 + p.s * cmax
    r_norm = k_norm * (1 + math.sqrt(p.c_v)) ** 2 * (1 if p.obj == "head_out" else p.h)
    if p.obj == "out":
        r_norm *= (1 + math.sqrt(p.ratio_o)) ** 2 / p.h
    return 2 * (cmax + 1) * r_norm * (1 + math.sqrt(max(p.p_over_n(), p.c_v))) ** 2 + 1e-12


class _Solver:
    """The equations of one object as a solver for
    :func:`freeprob.attention.input_gram_table.tabulate` (start, Newton from a state)."""

    levels = 21                 # continuation steps in η (fewer let Newton leave the physical branch)

    def __init__(self, cx, cw, p):
        self.cx, self.cw, self.p = cx, cw, p

    def start(self, z):
        return _start(z, self.cx, self.cw, self.p)

    def solve(self, z, state, tol=None):
        x, ok = _newton(np.asarray(state, dtype=complex), z, self.cx, self.cw, self.p,
                        tol=1e-12 if tol is None else tol, max_iter=40)
        return _residual(x, z, self.cx, self.cw, self.p)[1], x, ok


def input_gram_output_law(obj, nu_x, *, n, heads, d_k, beta, d_v=None, d_o=None, grid=400):
    r"""The limiting law of ``head_out``, ``stack`` or ``out`` of the GE with general inputs,
    tabulated (the analogue of :func:`freeprob.attention.input_gram.input_gram_law`).

    Parameters
    ----------
    obj : {"head_out", "stack", "out"}
    nu_x : (points, weights)
        The input Gram law ``ν_X`` (e.g. :func:`freeprob.attention.input_gram.input_gram_measure`,
        through which :func:`freeprob.attention.input_gram.input_gram_law` calls this).
    n, heads, d_k : int ≥ 1
        Tokens, heads, key width (``c_K = d_K/n``).
    beta : float > 0
    d_v, d_o : int ≥ 1, optional
        Value and output widths (default ``d_k`` and ``n``).
    grid : int ≥ 20
        Density nodes (:func:`freeprob.attention.input_gram_table.tabulate`).

    Returns
    -------
    dict
        As :func:`freeprob.attention.input_gram.input_gram_law`: ``x``, ``density`` (of the
        continuous part), ``knots`` and ``cdf`` (continuous part, ending at ``1 − atom0``),
        ``support``, ``atom0`` (``1 − min(1, p/n)``, ``p = d_V, h d_V, min(h d_V, d_O)``: the
        rank), ``moments`` (``m_0 … m_4`` by :func:`output_gram_moments`), ``moment_error``,
        ``mass_defect`` (continuous mass before renormalisation + atom − 1), ``upper``,
        ``alpha`` (``p/n``).

    Raises
    ------
    FreeprobValueError
        Unknown object; bad ``nu_x``; sizes not integers ≥ 1; bad ``beta`` (> 0) or
        ``grid``; the equations do not converge; the tabulated law disagrees with its moments.

    Source: module docstring; theory.md §10.
    """
    from freeprob.attention.input_gram_table import law_result, tabulate
    if obj not in OUTPUT_OBJECTS:
        raise FreeprobValueError(f"input_gram_output_law: obj must be one of {OUTPUT_OBJECTS}; got {obj!r}")
    d_v = d_k if d_v is None else d_v
    d_o = n if d_o is None else d_o
    for name, v in (("n", n), ("heads", heads), ("d_k", d_k), ("d_v", d_v), ("d_o", d_o)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise FreeprobValueError(f"input_gram_output_law: {name} must be an integer ≥ 1; got {v!r}")
    if isinstance(beta, bool) or not (isinstance(beta, (int, float)) and math.isfinite(beta) and beta > 0):
        raise FreeprobValueError(f"input_gram_output_law: beta must be a finite number > 0 (at beta = 0 "
                                 f"the GE is zero); got {beta!r}")
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 20:
        raise FreeprobValueError(f"input_gram_output_law: grid must be an integer ≥ 20; got {grid!r}")
    cx, cw = _check_measure(nu_x, "input_gram_output_law")
    kw = dict(obj=obj, beta=float(beta), c_k=d_k / n, c_v=d_v / n, heads=int(heads), gamma_o=d_o / n)
    p = _Params(**kw)
    atom0 = 1.0 - min(1.0, p.p_over_n())
    mom = [1.0] + list(output_gram_moments((cx, cw), order=6, **kw))
    who = f"input_gram_output_law({obj!r})"
    tab = tabulate(_Solver(cx, cw, p), float(_edge_bound(cx, p)), atom0=atom0, grid=grid,
                   top=4.0 * (mom[6] / (1.0 - atom0)) ** (1 / 6), moments=mom, who=who)
    return law_result(tab, mom, p.p_over_n())


def output_gram_m2(nu_moments, *, obj, beta, c_k, c_v, heads=1, gamma_o=1.0):
    r"""``m_2`` of the input-Gram law of ``head_out``/``stack``/``out`` in closed form, by
    Wick's formula (a route independent of the equations of :func:`output_gram_stieltjes`).

    With ``κ = m_1(θ2 m_2 + s)`` and ``k_2 = m_1²θ2²(m_4 + m_2²/c_K) + 2m_1 sθ2 m_3 + s² m_2``
    (``tr K/n`` and ``tr K²/n`` for ``K = m_1 K_1 + K_2``)
    (``m_j`` the moments of ``ν_X``; ``m_1 = 1`` in the mean-one convention, ``1 − s`` for the
    bulk of low-rank inputs) and ``P = c_V, γ_V, γ_O``:

    ``m_2 = P²(θ2² m_2³ + 2θ2 s m_1² m_2 + s² m_1²) + E``, ``E = c_V κ² + c_V² k_2`` (head_out),
    ``γ_V κ² + γ_V² k_2/h`` (stack), ``γ_O κ² + γ_O²(κ²/γ_V + k_2/h)`` (out): the two
    non-crossing pairings of ``tr (YYᵀ)²`` (``L``-side and ``R``-side), then Wick in ``F``,
    ``H`` and ``W_O``.  With ``ν_X = δ_1`` this is theory.md §3.3.

    Parameters
    ----------
    nu_moments : sequence ``[m_1, m_2, m_3, m_4]`` of ``ν_X``
    obj, beta, c_k, c_v, heads, gamma_o : as :func:`output_gram_stieltjes`

    Raises ``FreeprobValueError`` for fewer than four finite moments or bad parameters.
    Source: Wick's formula (Gaussian moments, [MS17]_ ch. 1); theory.md §10.
    """
    p = _Params(obj, beta, c_k, c_v, heads, gamma_o)
    try:
        m1, m2, m3, m4 = (float(v) for v in list(nu_moments)[:4])
    except (TypeError, ValueError):
        raise FreeprobValueError("output_gram_m2: nu_moments must be four numbers [m1, m2, m3, m4]") from None
    if not all(math.isfinite(v) for v in (m1, m2, m3, m4)):
        raise FreeprobValueError("output_gram_m2: the moments of nu_X must be finite")
    t2, s = p.b2, p.s
    kap = m1 * (t2 * m2 + s)
    k2 = m1 * m1 * t2 * t2 * (m4 + m2 * m2 / p.c_k) + 2 * m1 * s * t2 * m3 + s * s * m2
    gv = p.h * p.c_v
    if p.obj == "head_out":
        big, extra = p.c_v, p.c_v * kap**2 + p.c_v**2 * k2
    elif p.obj == "stack":
        big, extra = gv, gv * kap**2 + gv**2 * k2 / p.h
    else:
        go = p.ratio_o * gv
        big, extra = go, go * kap**2 + go**2 * (kap**2 / gv + k2 / p.h)
    return big**2 * (t2 * t2 * m2**3 + 2 * t2 * s * m1 * m1 * m2 + s * s * m1 * m1) + extra
