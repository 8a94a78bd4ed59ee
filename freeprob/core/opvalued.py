r"""The M_k-valued Cauchy transform of a linearization as a power series at infinity.

For ``L = b_0 ⊗ 1 + Σ_j b_j ⊗ x_j`` (:mod:`freeprob.core.linearization`) with ``x_j`` free
with free cumulants ``κ_n(x_j)``, the pieces ``b_j ⊗ x_j`` are free with amalgamation over
``M_k`` and have the operator-valued R-transforms

.. math::  R_j(B) = Σ_{n≥1} κ_n(x_j)\, b_j (B b_j)^{n−1}

(the M_k-valued cumulants of ``b ⊗ x`` are ``κ_n(x) b d_1 b ⋯ d_{n−1} b``; [MS17]_ ch. 9,
[NS06]_ Lecture 9 for the scalar-matrix case), so ``G = E[(Λ(z) − L)^{-1}]`` solves

.. math::  G = D^{-1} + D^{-1} R(G)\, G,   R = Σ_j R_j,  D = Λ(z) − b_0,

and ``G_{11}(z) = Σ_n m_n(p) z^{−n−1}``.  With ``b_0[0,0] = 0`` (the constant of ``p`` is
added back by a binomial shift), ``D^{-1} = K + w E_{11}``, ``w = 1/z``, ``K`` from
:meth:`~freeprob.core.linearization.Linearization.K`.  ``D^{-1}`` is not small at infinity
(``K ≠ 0``), but ``K b_j`` has a nilpotent pattern, so the expansion of ``(D − X)^{-1}`` in
``D^{-1}`` is finite at each order of ``w`` and the moment–cumulant identity behind the
equation holds order by order: a formal identity.

Solution, order by order in ``w``: ``b_j = V_j Y_j V_j^*`` (``V_j`` the pivot columns of
``b_j``, ``r_j = rank b_j``), ``R_j(G) = V_j ρ_j(M_j) Y_j V_j^*`` with the ``r_j × r_j``
series ``M_j = Y_j V_j^* G V_j`` and ``ρ_j(M) = Σ_n κ_n M^{n−1}``; ``M_j``'s constant term is
nilpotent, so ``M_0^{r_j} = 0`` and ``[M^m]_d = 0`` for ``m ≥ r_j (d + 1)``.  Each order's
coefficient ``G_d`` solves a linear equation whose map is nilpotent: ``depth + 1``
fixed-point steps settle it exactly.  The cost is ``O(N^2 k^3 + Σ_j r_j^4 N^3)`` ring
operations for ``N`` moments, over any coefficient ring of :mod:`freeprob.core.coefficients`
(exact rationals, symbolic parameters, balls); complex coefficients run over pairs
(:class:`Gaussian`).

Source: [MS17]_ ch. 9–10; [HRS07]_ (the semicircular case ``R_j(B) = σ_j^2 b_j B b_j``);
[BMS17]_ §4.
"""
from __future__ import annotations

import flint
import sympy as sp

from freeprob.core.coefficients import QQ
from freeprob.core.ncpoly import re_im

__all__ = ["Gaussian", "OVSeries", "cumulants_needed", "factor_hermitian"]


class Gaussian:
    """``re + i·im`` over a real coefficient ring (elements support ``+ − *``)."""

    __slots__ = ("re", "im")

    def __init__(self, re, im):
        self.re, self.im = re, im

    def __add__(self, o):
        return Gaussian(self.re + o.re, self.im + o.im)

    def __sub__(self, o):
        return Gaussian(self.re - o.re, self.im - o.im)

    def __neg__(self):
        return Gaussian(-self.re, -self.im)

    def __mul__(self, o):
        if isinstance(o, _LMat):
            return NotImplemented                 # a scalar times a matrix of Gaussians
        if not isinstance(o, Gaussian):
            return Gaussian(self.re * o, self.im * o)
        return Gaussian(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)

    __rmul__ = __mul__


class _LMat:
    """A dense matrix of ring elements (lists) whose product skips zeros."""

    __slots__ = ("rows", "ar")

    def __init__(self, rows, ar):
        self.rows, self.ar = rows, ar

    def __add__(self, o):
        return _LMat([[a + b for a, b in zip(r, s)] for r, s in zip(self.rows, o.rows)], self.ar)

    def __mul__(self, o):
        ar = self.ar
        if not isinstance(o, _LMat):
            return _LMat([[ar.zero if ar.is_zero(a) else a * o for a in r] for r in self.rows], ar)
        isz, B = ar.is_zero, o.rows
        p = len(B[0]) if B else 0
        out = []
        for Ai in self.rows:
            Oi = [ar.zero] * p
            for t, a in enumerate(Ai):
                if isz(a):
                    continue
                for j, b in enumerate(B[t]):
                    if not isz(b):
                        Oi[j] = Oi[j] + a * b
            out.append(Oi)
        return _LMat(out, ar)

    __rmul__ = __mul__

    def entry(self, i, j):
        return self.rows[i][j]

    def is_zero(self):
        return all(self.ar.is_zero(a) for r in self.rows for a in r)


class _Arith:
    """The scalars and matrices the series runs over: FLINT ``fmpq_mat`` for exact rationals,
    :class:`_LMat` for any other ring; pairs (:class:`Gaussian`) for complex entries."""

    def __init__(self, ring, complex_):
        self.ring, self.complex = ring, complex_
        self.flint = ring == QQ
        z = ring.zero
        self.zero = Gaussian(z, z) if complex_ else z
        self.one = Gaussian(ring.one, z) if complex_ else ring.one

    def conv(self, value):
        """An exact sympy number as a scalar."""
        if not self.complex:
            return self.ring.convert(value)
        re, im = re_im(value)
        return Gaussian(self.ring.convert(re), self.ring.convert(im))

    def lift(self, a):
        """A real ring element as a scalar."""
        return Gaussian(a, self.ring.zero) if self.complex else a

    def is_zero(self, a):
        if self.complex:
            return self.ring.is_zero(a.re) and self.ring.is_zero(a.im)
        return self.ring.is_zero(a)

    def _real_mat(self, M):
        if self.flint:
            return flint.fmpq_mat(M.rows, M.cols, [self.ring.convert(e) for e in M])
        return _LMat([[self.ring.convert(M[i, j]) for j in range(M.cols)] for i in range(M.rows)], self)

    def mat(self, M):
        """A sympy matrix (exact entries) as a matrix."""
        M = sp.Matrix(M)
        if not self.complex:
            return self._real_mat(M)
        if not self.flint:
            return _LMat([[self.conv(M[i, j]) for j in range(M.cols)] for i in range(M.rows)], self)
        parts = [re_im(e) for e in M]
        return Gaussian(self._real_mat(sp.Matrix(M.rows, M.cols, [a for a, _ in parts])),
                        self._real_mat(sp.Matrix(M.rows, M.cols, [b for _, b in parts])))

    def zeros(self, n, m):
        return self.mat(sp.zeros(n, m))

    def eye(self, n):
        return self.mat(sp.eye(n))

    def entry(self, A, i, j):
        if isinstance(A, Gaussian):
            return Gaussian(A.re[i, j], A.im[i, j])
        return A[i, j] if self.flint else A.entry(i, j)

    def mat_is_zero(self, A):
        if isinstance(A, Gaussian):
            return self.mat_is_zero(A.re) and self.mat_is_zero(A.im)
        if self.flint:
            return A == flint.fmpq_mat(A.nrows(), A.ncols())
        return A.is_zero()


def factor_hermitian(b):
    r"""``b = V Y V^*`` for a Hermitian constant matrix: ``V`` the pivot columns of ``b``
    (``k × r``, ``r = rank b``), ``Y = (V^*V)^{-1} V^* b V (V^*V)^{-1}`` (``r × r``), exact."""
    b = sp.Matrix(b)
    _, piv = b.rref()
    V = b[:, list(piv)]
    VhV = (V.H * V).inv()
    Y = (VhV * V.H * b * V * VhV).applyfunc(sp.simplify)
    return V, Y


def cumulants_needed(lin, order) -> int:
    """The highest free-cumulant order of any variable that :class:`OVSeries` reads for the
    moments up to ``order``: ``max_j rank(b_j) · (order + 2)``."""
    return max(sp.Matrix(b).rank() for b in lin.bs) * (order + 2)



def _acc(total, term):
    return term if total is None else total + term


class OVSeries:
    r"""The series ``G(w) = Σ_d G_d w^d`` of ``E[(Λ(1/w) − L + b_0[0,0] E_{11})^{-1}]``.

    Parameters
    ----------
    lin : Linearization
        With ``b_0[0, j] = 0`` for ``j > 0`` (as :func:`~freeprob.core.linearization.linearize`
        builds it).
    kappas : list of lists
        ``kappas[j] = [κ_0, κ_1, …]`` of ``x_j`` as ring elements, at least
        :func:`cumulants_needed` long.
    ring : CoefficientRing
        The (real) ring of the cumulants; complex entries of the ``b_j`` run over pairs.
    order : int
        The moments ``m_0 … m_order`` of ``p − b_0[0,0]`` are computed (``G`` to ``w^{order+1}``).

    Attributes: ``G[d]`` (``k × k`` coefficient of ``w^d``), ``M[j][d]`` (of ``M_j``),
    ``rho[j][d]`` (of ``ρ_j(M_j)``), as FLINT ``fmpq_mat`` over ℚ, else lists
    (:meth:`entry` reads one); ``V[j]``, ``Y[j]`` (exact sympy, ``b_j = V_j Y_j V_j^*``).

    Raises
    ------
    ValueError
        Too few cumulants, or ``b_0`` not of the required form (internal misuse).

    Source: module docstring.
    """

    def __init__(self, lin, kappas, ring, order):
        self.lin, self.ring, self.order = lin, ring, order
        ar = self.ar = _Arith(ring, not lin.is_real)
        k = lin.k
        if any(lin.b0[0, i] != 0 for i in range(1, k)):
            raise ValueError("OVSeries: the first row of b_0 must vanish off the diagonal")
        self.K = ar.mat(lin.K())
        E11 = sp.zeros(k)
        E11[0, 0] = 1
        self.E11 = ar.mat(E11)
        self.V, self.Y, self._V, self._YVt = [], [], [], []
        for b in lin.bs:
            V, Y = factor_hermitian(b)
            self.V.append(V)
            self.Y.append(Y)
            self._V.append(ar.mat(V))
            self._YVt.append(ar.mat(Y * V.H))
        self.r = [V.cols for V in self.V]
        self.kappa = [[ar.lift(c) for c in kap] for kap in kappas]
        for j, kap in enumerate(self.kappa):
            need = self.r[j] * (order + 2) + 1
            if len(kap) < need:
                raise ValueError(f"OVSeries: variable {j} needs {need - 1} cumulants; got {len(kap) - 1}")
        s = len(lin.bs)
        self.G, self.Phi, self.PhiG = [], [], []
        self.M, self.rho = [[] for _ in range(s)], [[] for _ in range(s)]
        self._P = [{} for _ in range(s)]       # (m, d) -> [M_j^m]_d (absent: zero)
        self._pw, self.nu = [None] * s, [None] * s
        self._solve()

    def entry(self, A, i, j):
        """Entry ``(i, j)`` of a coefficient matrix (a ring element, or a :class:`Gaussian`)."""
        return self.ar.entry(A, i, j)

    def _m_of(self, j, G):
        return self._YVt[j] * G * self._V[j]

    def _phi_of(self, rhos):
        out = None
        for j, rho in enumerate(rhos):
            out = _acc(out, self._V[j] * rho * self._YVt[j])
        return out

    def _powers(self, j, M0):
        """``[I, M_0, …, M_0^{ν−1}]`` with ``M_0^ν = 0`` (``ν ≤ r_j``: ``M_0`` is nilpotent)."""
        pw = [self.ar.eye(self.r[j])]
        while len(pw) < self.r[j]:
            nxt = pw[-1] * M0
            if self.ar.mat_is_zero(nxt):
                break
            pw.append(nxt)
        return pw

    def _rho0(self, j, M0):
        pw = self._powers(j, M0)
        rho = None
        for n in range(1, len(pw) + 1):
            rho = _acc(rho, self.kappa[j][n] * pw[n - 1])
        return rho, pw

    def _solve(self):
        K, steps, s = self.K, self.lin.depth + 1, len(self.lin.bs)
        # order 0: G_0 = K + K R(G_0) G_0, settled by depth + 1 fixed-point steps
        G0 = K
        for _ in range(steps):
            Phi0 = self._phi_of([self._rho0(j, self._m_of(j, G0))[0] for j in range(s)])
            G0 = K + K * (Phi0 * G0)
        rhos = []
        for j in range(s):
            M0 = self._m_of(j, G0)
            rho, pw = self._rho0(j, M0)
            self._pw[j], self.nu[j] = pw, len(pw)
            self.M[j].append(M0)
            self.rho[j].append(rho)
            rhos.append(rho)
            for m, P in enumerate(pw):
                self._P[j][(m, 0)] = P
        self.G.append(G0)
        self.Phi.append(self._phi_of(rhos))
        self.PhiG.append(self.Phi[0] * G0)
        for d in range(1, self.order + 2):
            self._order(d, steps)

    def _rho_d(self, j, low, Md):
        pw, kap = self._pw[j], self.kappa[j]
        rho = low
        for a, Pa in enumerate(pw):
            left = Pa * Md
            for b, Pb in enumerate(pw):
                rho = _acc(rho, kap[a + b + 2] * (left * Pb))
        return rho

    def _order(self, d, steps):
        ar, K, s = self.ar, self.K, len(self.lin.bs)
        G0, Phi0 = self.G[0], self.Phi[0]
        acc = None
        for i in range(1, d):
            acc = _acc(acc, self.Phi[i] * self.G[d - i])
        known = self.E11 * self.PhiG[d - 1]
        if acc is not None:
            known = known + K * acc
        if d == 1:
            known = known + self.E11
        # ρ_j's order-d coefficient without the terms in M_{j,d}
        lows = []
        for j in range(s):
            P, Ms, mmax = self._P[j], self.M[j], self.nu[j] * (d + 1) - 1
            low, rho = {0: None}, None
            for m in range(1, mmax + 1):
                t = None if low[m - 1] is None else Ms[0] * low[m - 1]
                for i in range(1, d):
                    Q = P.get((m - 1, d - i))
                    if Q is not None:
                        t = _acc(t, Ms[i] * Q)
                low[m] = t
                if t is not None:
                    rho = _acc(rho, self.kappa[j][m + 1] * t)
            lows.append(rho)
        Gd = known
        for _ in range(steps):
            rhos = [self._rho_d(j, lows[j], self._m_of(j, Gd)) for j in range(s)]
            Gd = known + K * (Phi0 * Gd + self._phi_of(rhos) * G0)
        rhos = []
        for j in range(s):
            Md = self._m_of(j, Gd)
            rho = self._rho_d(j, lows[j], Md)
            self.M[j].append(Md)
            self.rho[j].append(rho)
            rhos.append(rho)
            P, Ms = self._P[j], self.M[j]
            for m in range(1, self.nu[j] * (d + 1)):
                t = None
                for i in range(0, d + 1):
                    Q = P.get((m - 1, d - i))
                    if Q is not None:
                        t = _acc(t, Ms[i] * Q)
                if t is not None and not ar.mat_is_zero(t):
                    P[(m, d)] = t
        self.G.append(Gd)
        self.Phi.append(self._phi_of(rhos))
        acc = None
        for i in range(0, d + 1):
            acc = _acc(acc, self.Phi[i] * self.G[d - i])
        self.PhiG.append(acc)

    # -- results -------------------------------------------------------------------------
    def moments(self):
        """``[m_0, …, m_order]`` of ``p − b_0[0,0]`` (real ring elements)."""
        out = []
        for d in range(1, self.order + 2):
            g = self.entry(self.G[d], 0, 0)
            out.append(g.re if self.ar.complex else g)
        return out
