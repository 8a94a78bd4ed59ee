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
exact law, else by the same equations (``s = 0``, ``α = c``, ``ν_D = δ_1``), tabulated by
:func:`freeprob.attention.input_gram_table.tabulate` and checked against its exact
plane-tree moments (so is ``ν_X`` of AR(1) tokens, ``Szegő ⊠ MP(n/d)``).

Every law is tabulated by :func:`~freeprob.attention.input_gram_table.tabulate` (no
smoothing: support, density and cdf at ``η = 10⁻¹⁰`` of the scale) and returned only when
the moments of its tabulated distribution equal its plane-tree moments to
:data:`~freeprob.attention.input_gram_table.MOMENT_RTOL` (issue 26: the AR(1) law printed
``m_4 = 33.9`` while its own density integrated to 24 — a ``ν_D`` tabulated with a relative
``η`` had Lorentzian tails out to 5 times its edge, which the trees counted and the density
grid cut off; the law is now ``m_4 = 14.7``, GE_X samples ``14.8 ± 2.4`` at ``n = 512``).

Moments (second route): ``m_k = Σ_T α^{1−#rows(T)} E Π_{edges (a,b)} (c_a d_b + s)`` over
plane trees ``T`` with ``k`` edges rooted at a row vertex (rows at even depth), the ``c``
iid ``ν_X`` and ``d`` iid ``ν_D`` (:func:`variance_profile_moments`).

Source: docs/theory.md §10; Hachem, Loubaton, Najim, Ann. Appl. Probab. 17 (2007);
derivations/input_gram.py (both routes).
"""
from __future__ import annotations

import functools
import itertools
import math
import threading

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


#: discrete measures kept per process (ν_X, ν_D: pure functions of their arguments, asked for
#: again for every object, head count and β of one input kind; ~0.1–0.5 s of CPU each)
_MEASURES_KEPT = 64


def _frozen(measure):
    """A read-only copy of ``(x, w)`` for a cache (callers get copies of it: :func:`_thawed`)."""
    out = tuple(np.array(v) for v in measure)
    for v in out:
        v.flags.writeable = False
    return out


def _thawed(measure):
    return tuple(v.copy() for v in measure)


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
    try:
        hash(law)
    except TypeError:                   # a law holding unhashable data: not kept
        return _discretise(law, points)
    return _thawed(_discretise_kept(law, points))


@functools.lru_cache(maxsize=_MEASURES_KEPT)
def _discretise_kept(law, points):
    """:func:`discretise`, computed once per (equal) law and ``points`` in this process."""
    return _frozen(_discretise(law, points))


def _discretise(law, points):
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
    solver = _Profile(rows, cols, s, alpha, tol=tol, max_iter=max_iter)
    state = solver.start(z) if start is None else np.array(start, dtype=complex)
    m, state, _ok = solver.solve(z, state)
    return m, (state[0], state[1])


class _Profile:
    """The variance-profile equations (module docstring) as a solver for
    :func:`freeprob.attention.input_gram_table.tabulate`: unknowns ``(δ̃_0, δ̃_1)`` per point,
    Newton with the analytic Jacobian, iterating only on the points not yet converged."""

    def __init__(self, rows, cols, s, alpha, *, tol=1e-11, max_iter=40):
        self.cx, self.cw = _measure(rows, "variance_profile_stieltjes")
        self.dx, self.dw = _measure(cols, "variance_profile_stieltjes")
        if not (s >= 0 and alpha > 0):
            raise FreeprobValueError("variance_profile_stieltjes: needs s ≥ 0 and alpha > 0")
        self.s, self.alpha, self.tol, self.max_iter = float(s), float(alpha), tol, max_iter
        cx, cw, dx, dw = self.cx, self.cw, self.dx, self.dw
        self.rw = np.stack([cw, cw * cx, cw * cx * cx], axis=1)          # (Nx, 3): ∫ c^j
        self.cwk = np.stack([dw, dw * dx, dw * dx * dx], axis=1)

    def start(self, z):
        return np.array([-np.sum(self.dw) / z, -np.sum(self.dw * self.dx) / z])

    def _step(self, z, e0, e1):
        s, alpha = self.s, self.alpha
        zz = z[:, None]
        t = -1.0 / (zz * (1 + self.cx[None, :] * e1[:, None] + s * e0[:, None]))
        r = t @ self.rw                                    # ∫ t, ∫ c t, ∫ c² t
        rt2 = (zz * t * t) @ self.rw                       # ∫ z t², ∫ c z t², ∫ c² z t²
        d0, d1 = r[:, 0], r[:, 1]
        a00, a01, a10, a11 = s * rt2[:, 0], rt2[:, 1], s * rt2[:, 1], rt2[:, 2]
        tt = -1.0 / (zz * (1 + (self.dx[None, :] * d1[:, None] + s * d0[:, None]) / alpha))
        n = tt @ self.cwk
        nt2 = ((zz / alpha) * tt * tt) @ self.cwk
        n0, n1 = n[:, 0], n[:, 1]
        b00, b01, b10, b11 = s * nt2[:, 0], nt2[:, 1], s * nt2[:, 1], nt2[:, 2]
        j00, j01 = b00 * a00 + b01 * a10, b00 * a01 + b01 * a11
        j10, j11 = b10 * a00 + b11 * a10, b10 * a01 + b11 * a11
        return n0, n1, j00, j01, j10, j11

    def solve(self, z, state, tol=None):
        tol = self.tol if tol is None else tol
        e0, e1 = (np.array(v, dtype=complex) for v in state)
        act = np.arange(z.size)
        ok = np.zeros(z.size, dtype=bool)
        for _ in range(self.max_iter):
            za, a0, a1 = z[act], e0[act], e1[act]
            n0, n1, j00, j01, j10, j11 = self._step(za, a0, a1)
            r0, r1 = n0 - a0, n1 - a1
            keep = ~(np.maximum(np.abs(r0), np.abs(r1)) < tol * (np.abs(a0) + np.abs(a1) + 1e-300))
            ok[act[~keep]] = True
            if not np.any(keep):
                break
            act, a0, a1, r0, r1 = act[keep], a0[keep], a1[keep], r0[keep], r1[keep]
            n0, n1 = n0[keep], n1[keep]
            m00, m01, m10, m11 = 1 - j00[keep], -j01[keep], -j10[keep], 1 - j11[keep]
            det = m00 * m11 - m01 * m10
            inv = np.abs(det) > 1e-14
            det = np.where(inv, det, 1.0)
            f0 = a0 + np.where(inv, (m11 * r0 - m01 * r1) / det, 0.5 * r0)
            f1 = a1 + np.where(inv, (m00 * r1 - m10 * r0) / det, 0.5 * r1)
            # a step leaving the closed upper half-plane (beyond rounding) or overflowing: damped fixed point
            bad = (~(np.isfinite(f0) & np.isfinite(f1)) | (f0.imag < -1e-8 * np.abs(f0))
                   | (f1.imag < -1e-8 * np.abs(f1)))
            e0[act] = np.where(bad, 0.5 * (a0 + n0), f0)
            e1[act] = np.where(bad, 0.5 * (a1 + n1), f1)
        zz = z[:, None]
        t = -1.0 / (zz * (1 + self.cx[None, :] * e1[:, None] + self.s * e0[:, None]))
        return t @ self.cw, np.array([e0, e1]), ok


def profile_bound(rows, cols, s, alpha):
    r"""A bound of the support of the variance-profile law (module docstring):
    ``4 max(max_c c m_1(ν_D) + s, (max_d d m_1(ν_X) + s)/α)``, the norm bound
    ``‖x‖ ≤ 2‖η(1)‖^{1/2}`` of an operator-valued semicircular element (Mingo & Speicher,
    ch. 9) for the Hermitisation of ``Y/√N``, whose covariance map at 1 holds the row sums
    ``c m_1(ν_D) + s`` and the column sums ``(d m_1(ν_X) + s)/α`` of the profile.

    Raises ``FreeprobValueError`` for bad measures.  Source: as stated."""
    cx, cw = _measure(rows, "profile_bound")
    dx, dw = _measure(cols, "profile_bound")
    m1x, m1d = float(np.sum(cw * cx)), float(np.sum(dw * dx))
    return 4.0 * max(float(cx.max()) * m1d + s, (float(dx.max()) * m1x + s) / alpha) * 1.02


def _top(moments, atom0):
    """Where the search for the support starts: ``4 (m_6/(1 − atom0))^{1/6}`` (a law with a
    square-root edge ``E`` has ``E < 2 (m_6/q)^{1/6}``; the search widens to the norm bound
    when the density does not vanish there)."""
    return 4.0 * (float(moments[6]) / (1.0 - atom0)) ** (1 / 6)


def _moments_of(nu, order=6):
    return [float(np.sum(nu[1] * nu[0] ** j)) for j in range(order + 1)]


def _product_with_mp(rows, ratio, points, who):
    """:func:`_product_uncached`, computed once per measure ``rows`` (by value), ``ratio`` and
    ``points`` in this process (``who`` names the caller in errors only)."""
    cx, cw = _measure(rows, who)
    key = (cx.tobytes(), cw.tobytes(), float(ratio), points)
    with _PRODUCTS_LOCK:
        hit = _PRODUCTS.get(key)
    if hit is None:
        hit = _frozen(_product_uncached((cx, cw), ratio, points, who))
        with _PRODUCTS_LOCK:
            if len(_PRODUCTS) >= _MEASURES_KEPT:
                _PRODUCTS.pop(next(iter(_PRODUCTS)))
            _PRODUCTS[key] = hit
    return _thawed(hit)


_PRODUCTS = {}
_PRODUCTS_LOCK = threading.Lock()


def _product_uncached(rows, ratio, points, who):
    r"""``ν ⊠ MP(1/ratio)`` as a discrete measure: the law of ``C^{1/2} H Hᵀ C^{1/2}/N``
    (``C`` of law ``ν = rows``, ``H`` ``n × N``, ``N = ratio·n``), i.e. the variance profile
    with rows ``ν``, one column class ``δ_1``, ``s = 0`` and ``α = ratio``, tabulated
    (:func:`freeprob.attention.input_gram_table.tabulate`; ``points`` nodes per support
    interval) with its atom ``1 − min(1 − ν({0}), ratio)`` at 0, and its moments checked
    against the plane-tree moments (the exact ones of ``ν ⊠ MP``)."""
    from freeprob.attention.input_gram_table import tabulate
    cx, cw = _measure(rows, who)
    cols = (np.array([1.0]), np.array([1.0]))
    atom0 = max(0.0, 1.0 - min(1.0 - float(cw[cx == 0].sum()), ratio))
    exact = [1.0] + variance_profile_moments(_moments_of(rows), [1.0] * 7, 0, ratio, 6)
    tab = tabulate(_Profile(rows, cols, 0.0, ratio), profile_bound(rows, cols, 0.0, ratio), atom0=atom0,
                   grid=points, top=_top(exact, atom0), moments=exact, who=who)
    x, w = tab["x"], tab["weights"]
    if atom0 > 0:
        x, w = np.concatenate([[0.0], x]), np.concatenate([[atom0], w])
    return x, w / w.sum()


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
        ``Szegő(f_ρ) ⊠ MP(n/d)`` (ar1: the Szegő law at ``points`` equispaced
        frequencies, then the variance-profile equations with ``s = 0``, tabulated and
        checked as in :func:`score_measure`).

    Raises
    ------
    FreeprobValueError
        Unknown kind, ``ratio ≤ 0``, ``rho``/``spike`` outside ``[0, 1)``; only one of
        ``n``, ``rank``, or ``rank`` not an integer in ``1 … n − 1``.

    Source: theory.md §10 (Marchenko–Pastur; Szegő's theorem for Toeplitz spectra).
    """
    if kind not in ("orthonormal", "gaussian", "ar1", "lowrank"):
        raise FreeprobValueError(f"input_gram_measure: unknown kind {kind!r}")
    if not (isinstance(ratio, (int, float)) and ratio > 0 and math.isfinite(ratio)):
        raise FreeprobValueError(f"input_gram_measure: ratio n/d must be a finite number > 0; got {ratio!r}")
    for name, v in (("rho", rho), ("spike", spike)):
        if not (0 <= v < 1):
            raise FreeprobValueError(f"input_gram_measure: {name} must lie in [0, 1); got {v!r}")
    if kind == "lowrank" and not (n is None and rank is None) and (
            isinstance(n, bool) or isinstance(rank, bool) or not isinstance(n, int) or not isinstance(rank, int)
            or not 1 <= rank < n):
        raise FreeprobValueError(f"input_gram_measure: n and rank must be integers with 1 ≤ rank < n; "
                                 f"got n={n!r}, rank={rank!r}")
    args = (kind, ratio, rho, spike, points, n, rank)
    try:
        hash(args)
    except TypeError:                   # e.g. points given as an array: not kept (refused below)
        return _thawed(_input_gram_measure(*args))
    return _thawed(_input_gram_measure_kept(*args))


def _input_gram_measure(kind, ratio, rho, spike, points, n, rank):
    """:func:`input_gram_measure` with its arguments checked (a read-only measure)."""
    from freeprob.laws.families import MarchenkoPastur
    from freeprob.laws.operations import dilate
    import sympy as sp
    q = sp.nsimplify(ratio, rational=True)
    if kind == "orthonormal":
        return _frozen((np.array([1.0]), np.array([1.0])))
    if kind == "gaussian":
        return _frozen(discretise(MarchenkoPastur(q), points))
    if kind == "lowrank":
        x, w = discretise(dilate(MarchenkoPastur(q), sp.nsimplify(1 - spike, rational=True)), points)
        if n is None and rank is None:
            return _frozen((x, w))
        loc = spike * n / rank + 1 - spike                # (1 − r/n)(1 − s) + (r/n) loc = 1
        return _frozen((np.append(x, loc), np.append(w * (1 - rank / n), rank / n)))
    x, w = _product_with_mp(_szego_ar1(rho, points), 1.0 / ratio, points, "input_gram_measure")
    return _frozen((x / float(np.sum(w * x)), w))          # mean one (Szegő: ∫f = 1; MP: mean 1)


_input_gram_measure_kept = functools.lru_cache(maxsize=_MEASURES_KEPT)(_input_gram_measure)


def score_measure(nu_x, ratio, theta2, *, kind=None, n_over_d=None, spike=0.5, points=1500):
    r"""``ν_D = θ2 · ν_X ⊠ MP(1/ratio)``: the law of ``β² C^{1/2} H Hᵀ C^{1/2}/d_K``
    (``H`` is ``n × ratio·n``), the column profile of the score's linear part.

    For ``kind`` ``"orthonormal"``, ``"gaussian"`` or ``"lowrank"`` (with ``n_over_d``) the
    free product is taken by the exact core (``free_mul`` of Marchenko–Pastur laws), else
    from ``nu_x`` by the variance-profile equations (``s = 0``, ``α = ratio``), tabulated
    (``points`` nodes per support interval) with its moments checked against the exact
    plane-tree moments of ``ν_X ⊠ MP`` (``FreeprobValueError`` beyond
    :data:`~freeprob.attention.input_gram_table.MOMENT_RTOL`).

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
    x, w = _product_with_mp(nu_x, ratio, points, "score_measure")
    return theta2 * x, w


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
        for (rows, s_power, row_deg, col_deg), count in _tree_terms(k).items():
            term = count * s ** s_power * alpha ** (1 - rows)
            for j in row_deg:
                term = term * row_moments[j]
            for j in col_deg:
                term = term * col_moments[j]
            total = total + term
        out.append(total)
    return out


@functools.lru_cache(maxsize=None)
def _tree_terms(k):
    """The terms of :func:`variance_profile_moments` at order ``k``, collected:
    ``{(#rows, power of s, row degrees, column degrees): count}`` (degrees sorted, zeros
    dropped: ``m_0 = 1``)."""
    terms = {}
    for parent in _plane_trees(k):
        depth = [0] * len(parent)
        for v in range(1, len(parent)):
            depth[v] = depth[parent[v]] + 1
        n_rows = sum(1 for dd in depth if dd % 2 == 0)
        for mask in range(1 << k):
            deg = [0] * len(parent)
            for j, v in enumerate(range(1, len(parent))):     # edge v: (parent[v], v)
                if mask >> j & 1:
                    deg[v] += 1
                    deg[parent[v]] += 1
            key = (n_rows, k - bin(mask).count("1"),
                   tuple(sorted(d for v, d in enumerate(deg) if d and depth[v] % 2 == 0)),
                   tuple(sorted(d for v, d in enumerate(deg) if d and depth[v] % 2 == 1)))
            terms[key] = terms.get(key, 0) + 1
    return terms


def input_gram_law(obj, *, n, heads, d_k, beta, kind="gaussian", d=None, rho=0.5, spike=0.5,
                   points=200, grid=400, d_v=None, d_o=None, rank=None, nu_x=None):
    r"""The limiting law of an attention object of the GE with general inputs, tabulated.

    Parameters
    ----------
    obj : {"single", "concat", "sum", "head_out", "stack", "out"}
        The last three are delegated to
        :func:`freeprob.attention.input_gram_out.input_gram_output_law` (with ``d_v``,
        ``d_o``: value and output widths, default ``d_k`` and ``n``).
    n, heads, d_k : int ≥ 1
        Tokens, heads, key width (``c_K = d_K/n``, ``γ_K = h d_K/n``).
    beta : float > 0
    kind : input kind (:func:`input_gram_measure`); ``d`` the input width (``n/d``).
    points, grid : int
        Nodes per support interval of the tabulated ``ν_X``, ``ν_D`` (≥ 10); density nodes
        of the law (≥ 20), shared among its support intervals.
    rank : int, optional
        ``kind="lowrank"``: keep the ``r = rank`` input outliers at this ``n``
        (:func:`input_gram_measure`; ``ν_D`` then by the equations, not the exact core).
        They carry ``m_2(C) ≈ s² n/r``, which grows with ``n``: without them the law misses
        the outliers that dominate W1 (theory.md §10).
    nu_x : (points, weights), optional
        Any input Gram law ``ν_X`` as a discrete measure (e.g. the eigenvalues of a Gram
        with weights ``1/n``, :func:`freeprob.sampler.inputs.input_gram_spectrum`, the
        inputs of :func:`freeprob.sampler.inputs.input_from_gram_spectrum`); replaces
        ``kind``, ``d``, ``rho``, ``spike`` and ``rank`` (``ν_D`` by the equations).

    Returns
    -------
    dict
        ``x`` (density nodes), ``density`` (continuous part), ``knots`` and ``cdf`` (the
        continuous part's cdf at the cell boundaries), ``support`` (intervals), ``atom0``
        (the mass at 0), ``moments`` (``m_0 … m_4``: plane trees on ``ν_X``, ``ν_D`` for
        single/concat/sum, the Cauchy integral of the transform for head_out/stack/out),
        ``moment_error`` (the largest relative difference between ``moments`` and the
        moments of the tabulated density and atom: at most
        :data:`~freeprob.attention.input_gram_table.MOMENT_RTOL`, else the law is refused),
        ``mass_defect`` (tabulated continuous mass + atom − 1, before renormalisation),
        ``upper`` (the top of the support), ``alpha``.

    Raises
    ------
    FreeprobValueError
        Unknown object or kind; bad sizes, ``beta`` (at ``β = 0`` the GE vanishes: the law
        is the point mass at 0) or ``nu_x``; ``d``, ``points`` or ``grid`` not integers
        (≥ 1, ≥ 10, ≥ 20); ``rank`` with a kind other than ``"lowrank"``; the tabulated law
        disagrees with its moments.

    Source: theory.md §10 (derivation; the single/concat/sum steps carry over from the
    paper's §C.1 with the variance-profile theorem in place of the compound Poisson law).
    """
    from freeprob.attention.input_gram_table import law_result, tabulate
    if obj not in INPUT_LAW_OBJECTS:
        raise FreeprobValueError(f"input_gram_law: obj must be one of {INPUT_LAW_OBJECTS}; got {obj!r}")
    for name, v in (("n", n), ("heads", heads), ("d_k", d_k)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise FreeprobValueError(f"input_gram_law: {name} must be an integer ≥ 1; got {v!r}")
    if isinstance(beta, bool) or not (isinstance(beta, (int, float)) and math.isfinite(beta) and beta > 0):
        raise FreeprobValueError(f"input_gram_law: beta must be a finite number > 0 (at beta = 0 the GE is "
                                 f"zero); got {beta!r}")
    d = n if d is None else d
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise FreeprobValueError(f"input_gram_law: d (input features) must be an integer ≥ 1; got {d!r}")
    for name, v, low in (("points", points, 10), ("grid", grid, 20)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise FreeprobValueError(f"input_gram_law: {name} must be an integer ≥ {low}; got {v!r}")
    if rank is not None and kind != "lowrank":
        raise FreeprobValueError(f"input_gram_law: rank is for kind='lowrank' only; got rank={rank!r} with "
                                 f"kind={kind!r}")
    extra = dict(n=n, rank=rank) if (kind == "lowrank" and rank is not None) else {}
    if nu_x is None:
        nu_x = input_gram_measure(kind, n / d, rho=rho, spike=spike, points=points, **extra)
        exact_kind = None if extra else kind
    else:
        nu_x, exact_kind = _measure(nu_x, "input_gram_law: nu_x"), None
    if obj in ("head_out", "stack", "out"):
        from freeprob.attention.input_gram_out import input_gram_output_law
        return input_gram_output_law(obj, nu_x, n=n, heads=heads, d_k=d_k, beta=beta, d_v=d_v, d_o=d_o,
                                     grid=grid)
    theta2 = float(beta) ** 2
    s = math.expm1(theta2) - theta2
    ratio = d_k / n if obj != "sum" else heads * d_k / n
    alpha = float(heads) if obj == "concat" else 1.0
    nu_d = score_measure(nu_x, ratio, theta2, kind=exact_kind, n_over_d=n / d, spike=spike, points=points)
    mom = [1.0] + variance_profile_moments(_moments_of(nu_x), _moments_of(nu_d), s, alpha, 6)
    tab = tabulate(_Profile(nu_x, nu_d, s, alpha), profile_bound(nu_x, nu_d, s, alpha), grid=grid,
                   top=_top(mom, 0.0), moments=mom, who=f"input_gram_law({obj!r})")
    return law_result(tab, mom, alpha)
