r"""The M_k-valued equation of a linearization: residual and analytic Jacobian.

For a self-adjoint ``L = b_0 ⊗ 1 + Σ_j b_j ⊗ x_j`` (``k × k``) with free ``x_j``, the pieces
``X_j = b_j ⊗ x_j`` are free with amalgamation over ``M_k``, and ``G = E[(Λ − L)^{-1}]``
(``Λ = diag(z, 0, …, 0)``) solves the subordination system of [BMS17]_ §2–4.  Written for
the pieces as ``b_j = V_j Y_j V_j^*`` (``V_j``: ``k × r_j``), the subordination function
``ω_j`` of piece ``j`` enters only through the ``r_j × r_j`` matrix
``W_j = (Y_j V_j^* ω_j^{-1} V_j)^{-1}``: by Woodbury's identity

.. math::  h_{X_j}(ω) = G_{X_j}(ω)^{-1} − ω = V_j\, (F_{x_j}(W_j) − W_j)\, Y_j V_j^*,
           \qquad Y_j V_j^* G V_j = G_{x_j}(W_j),

``F = G^{-1}`` and ``G_x(W)`` the scalar Cauchy transform as a matrix function of ``W``.  With
``ρ_j = W_j − G_{x_j}(W_j)^{-1}`` (the scalar R-transform at the matrix ``M_j``) the system
``F = Λ + Σ_j h_{X_j}(ω_j)`` of the subordination functions becomes

.. math::  G\,\bigl(Λ − b_0 − Σ_j V_j ρ_j Y_j V_j^*\bigr) = I,\qquad
           Q_j(ρ_j, M_j) = 0,\quad M_j = Y_j V_j^* G V_j,

with ``Q_j(R, w)`` the (polynomial) R-equation of ``x_j``: ``Q_j(R_{x_j}(w), w) = 0``.  The
unknowns are ``u = (G, ρ_j)``: ``k² + Σ_j r_j²`` complex numbers; ``ρ_j`` and ``M_j`` commute on
the solution (``ρ_j`` is a matrix function of ``M_j``), and ``Q_j(ρ, M) = Σ q_{ab} ρ^a M^b``.
A variable with an affine R-transform ``a + σ² w`` (semicircle, point mass) needs no
unknown: ``V_j ρ_j Y_j V_j^* = a b_j + σ² b_j G b_j``, the quadratic matrix equation of
[HRS07]_.

The Jacobian is analytic (the Fréchet derivatives of the products, vectorised row-major:
``vec(A X B) = (A ⊗ B^T) vec X``), and so is ``∂/∂z``; the same code runs in numpy
``complex128`` and on numpy object arrays of python-flint ``acb`` balls (for the polishing and
the Krawczyk test of :mod:`freeprob.numeric.ovpath`).

Source: [BMS17]_ (subordination, §2–4), [HRS07]_ (the semicircular case), [MS17]_ ch. 9–10
(operator-valued R-transforms).
"""
from __future__ import annotations

from dataclasses import dataclass

import flint
import numpy as np
import sympy as sp

from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.numeric.ovinterval import IA, ia_const

__all__ = ["OVSystem", "ScalarVariable", "scalar_variable"]

_R = sp.Dummy("R")
_W = sp.Dummy("w")


@dataclass(frozen=True)
class ScalarVariable:
    r"""A free variable of the numeric path, from its algebraic Cauchy equation.

    Fields: ``affine`` (``(mean, variance)`` when the R-transform is ``a + σ² w``, else
    ``None``); ``q`` (``((a, b), coefficient)`` pairs of the R-equation ``Σ q_{ab} R^a w^b``,
    exact sympy numbers, largest coefficient 1); ``kappas`` (complex ``κ_1, κ_2, κ_3``: the
    start at infinity); ``extent`` (``(lo, hi)`` floats containing the support and atoms);
    ``atomic`` (True if the law has atoms).
    """

    affine: tuple | None
    q: tuple
    kappas: tuple
    extent: tuple
    atomic: bool


def scalar_variable(ev) -> ScalarVariable:
    r"""The :class:`ScalarVariable` of a law given by its
    :class:`~freeprob.numeric.cauchy.AlgebraicCauchy` ``ev``: the R-equation
    ``Q(R, w) = numerator P(w, R + 1/w)`` of the selected factor ``P`` ([MS17]_ §2.4), with
    its factor ``w^m`` removed (``w = 0`` is no branch of the R-transform, and the factor
    would make the Jacobian singular at infinity) and scaled to largest coefficient 1; the
    first free cumulants from the exact moments; the extent and the atoms.

    Raises
    ------
    PrecisionError
        As :meth:`AlgebraicCauchy.extent` and :meth:`AlgebraicCauchy.atoms`.
    """
    from freeprob.core.symbols import G, z
    P = ev._P
    expr = sp.together(P.as_expr().subs({G: _W, z: _R + 1 / _W}, simultaneous=True))
    num = sp.Poly(sp.expand(sp.fraction(expr)[0]), _R, _W)
    low = min(b for (_, b) in num.monoms())         # a factor w^low (w = 0 is no branch)
    terms = {(a, b - low): c for (a, b), c in num.terms()}
    big = max(terms.values(), key=lambda c: abs(sp.N(c, 30)))
    m = [complex(sp.N(v, 20)) for v in ev._series()[:4]]
    kap = (m[1], m[2] - m[1] ** 2, m[3] - 3 * m[1] * m[2] + 2 * m[1] ** 3)
    affine = None
    if num.degree(_R) == 1:
        c1 = num.as_expr().coeff(_R, 1)
        c0 = num.as_expr().coeff(_R, 0)
        rw = sp.cancel(-c0 / c1)
        if rw.is_polynomial(_W) and sp.degree(rw, _W) <= 1:
            rw = sp.expand(rw)
            affine = (rw.coeff(_W, 0), rw.coeff(_W, 1))
    lo, hi = ev.extent(dps=15)
    atomic = bool(ev.atoms(dps=15))
    q = tuple(sorted(((int(a), int(b)), sp.simplify(c / big)) for (a, b), c in terms.items()))
    return ScalarVariable(affine, q, kap, (float(lo), float(hi)), atomic)


# ---------------------------------------------------------------------------------------
# backends: numpy complex128, or object arrays of acb balls at the current flint precision
# ---------------------------------------------------------------------------------------
def _acb_const(c):
    """An exact sympy number as an acb ball (rational parts exactly; others to the
    working precision plus a radius covering the rounding)."""
    c = sp.sympify(c)
    re, im = c.as_real_imag()
    parts = []
    for v in (re, im):
        if v.is_Rational:
            parts.append(flint.arb(flint.fmpq(int(v.p), int(v.q))))
        else:
            digits = int(flint.ctx.prec * 0.30103) + 10
            s = str(sp.N(v, digits))
            parts.append(flint.arb(s) + flint.arb(0, flint.arb(10) ** (-(digits - 3)) * (1 + abs(flint.arb(s)))))
    return flint.acb(parts[0], parts[1])


class _Backend:
    """numpy arrays of complex128 (``"np"``), of python-flint ``acb`` (``"acb"``), or
    midpoint–radius intervals (``"ia"``, :mod:`freeprob.numeric.ovinterval`)."""

    def __init__(self, mode):
        self.mode = mode

    def _complex(self, M):
        return np.array([[complex(sp.N(M[i, j], 20)) for j in range(M.cols)] for i in range(M.rows)],
                        dtype=complex)

    def const(self, M):
        M = sp.Matrix(M)
        if self.mode == "np":
            return self._complex(M)
        if self.mode == "ia":
            return ia_const(self._complex(M))
        out = np.empty((M.rows, M.cols), dtype=object)
        for i in range(M.rows):
            for j in range(M.cols):
                out[i, j] = _acb_const(M[i, j])
        return out

    def scalar(self, c):
        if self.mode == "acb":
            return _acb_const(c)
        v = complex(sp.N(c, 20))
        return ia_const(v) if self.mode == "ia" else v

    def eye(self, n):
        if self.mode == "np":
            return np.eye(n, dtype=complex)
        if self.mode == "ia":
            return IA(np.eye(n, dtype=complex))
        out = np.empty((n, n), dtype=object)
        for i in range(n):
            for j in range(n):
                out[i, j] = flint.acb(1 if i == j else 0)
        return out

    def zeros(self, n, m):
        if self.mode == "np":
            return np.zeros((n, m), dtype=complex)
        if self.mode == "ia":
            return IA(np.zeros((n, m), dtype=complex))
        out = np.empty((n, m), dtype=object)
        for i in range(n):
            for j in range(m):
                out[i, j] = flint.acb(0)
        return out


def _mode(u):
    if isinstance(u, IA):
        return "ia"
    return "acb" if u.dtype == object else "np"


def _kron(A, B):
    """``A ⊗ B`` for 2-d arrays (numpy's ``kron`` without its generic overhead)."""
    if isinstance(A, IA) or isinstance(B, IA):
        return (A if isinstance(A, IA) else IA(A)).kron(B)
    (a, b), (c, d) = A.shape, B.shape
    return (A[:, None, :, None] * B[None, :, None, :]).reshape(a * c, b * d)


class OVSystem:
    r"""The system of the module docstring for ``L = b0 + Σ_j bs[j] ⊗ x_j``.

    Parameters
    ----------
    b0 : sympy Matrix
        ``k × k`` Hermitian, exact.  ``b0[0, j] = 0`` is not required.
    bs : sequence of sympy Matrix
        ``b_j`` (``k × k`` Hermitian, exact, non-zero).
    variables : sequence of ScalarVariable
        The laws of the ``x_j`` (:func:`scalar_variable`).

    The unknown vector ``u`` (numpy, row-major) is ``vec G`` followed by ``vec ρ_j`` for each
    non-affine variable.  ``residual(u, z)``, ``jacobian(u, z)`` (``n × n``) and ``dz(u)``
    (``∂F/∂z``) work on ``complex128`` arrays and on object arrays of ``acb`` (then
    ``z`` is an ``acb`` and the constants are balls at the current flint precision);
    ``jacobian`` also on :class:`~freeprob.numeric.ovinterval.IA` intervals (Krawczyk's
    test).

    Raises
    ------
    FreeprobValueError
        Matrices of the wrong shape or not Hermitian; as many variables as matrices.

    Source: module docstring ([BMS17]_, [HRS07]_).
    """

    def __init__(self, b0, bs, variables):
        b0 = sp.Matrix(b0)
        k = b0.rows
        if b0.cols != k or len(bs) != len(variables) or not bs:
            raise FreeprobValueError("OVSystem: b0 must be square and bs, variables non-empty of one length")
        for b in [b0, *bs]:
            b = sp.Matrix(b)
            if b.shape != (k, k) or (b - b.H).applyfunc(sp.simplify) != sp.zeros(k):
                raise FreeprobValueError("OVSystem: b0 and every b_j must be k × k Hermitian matrices")
        self.k = k
        self.b0 = b0
        self.pieces = []
        for b, var in zip(bs, variables):
            b = sp.Matrix(b)
            if var.affine is not None:
                self.pieces.append(("affine", b, var))
                continue
            V, Y = _factor(b)
            self.pieces.append(("algebraic", (V, Y, b), var))
        self.sizes = [k * k] + [p[1][0].cols ** 2 for p in self.pieces if p[0] == "algebraic"]
        self.n = sum(self.sizes)
        self._const = {}

    # -- constants per backend ---------------------------------------------------------
    def _c(self, mode):
        key = (mode, flint.ctx.prec if mode == "acb" else 0)
        hit = self._const.get(key)
        if hit is not None:
            return hit
        bk = _Backend(mode)
        k = self.k
        c = {"bk": bk, "b0": bk.const(self.b0), "I": bk.eye(k), "pieces": []}
        for kind, data, var in self.pieces:
            if kind == "affine":
                b = data
                c["pieces"].append(("affine", bk.const(b), bk.scalar(var.affine[0]), bk.scalar(var.affine[1])))
            else:
                V, Y, b = data
                r = V.cols
                q = [(a, e, bk.scalar(v)) for (a, e), v in var.q]
                c["pieces"].append(("algebraic", bk.const(V), bk.const(Y * V.H), bk.const(V.H),
                                    q, bk.eye(r), r))
        self._const[key] = c
        return c

    def split(self, u):
        """``(G, [ρ_j])`` as matrices (views of ``u``)."""
        k = self.k
        G = u[:k * k].reshape(k, k)
        out, o = [], k * k
        for p in self.pieces:
            if p[0] == "algebraic":
                r = p[1][0].cols
                out.append(u[o:o + r * r].reshape(r, r))
                o += r * r
        return G, out

    def _B(self, c, z):
        B = -c["b0"].copy()
        B[0, 0] = B[0, 0] + z
        return B

    def _parts(self, u, z):
        """Shared pieces of the residual and the Jacobian."""
        c = self._c(_mode(u))
        G, rhos = self.split(u)
        D = self._B(c, z)
        alg = []
        it = iter(rhos)
        for piece in c["pieces"]:
            if piece[0] == "affine":
                _, b, a, s2 = piece
                D = D - (a * b + s2 * (b @ G @ b))
            else:
                _, V, P, Vh, q, Ir, r = piece
                rho = next(it)
                D = D - V @ rho @ P
                M = P @ G @ V
                da = max(a for a, _, _ in q)
                db = max(e for _, e, _ in q)
                rp, mp_ = [Ir], [Ir]
                for _ in range(da):
                    rp.append(rp[-1] @ rho)
                for _ in range(db):
                    mp_.append(mp_[-1] @ M)
                alg.append((V, P, q, rp, mp_, Ir, r))
        return c, G, D, alg

    def residual(self, u, z):
        """``F(u, z)``: ``vec(G D − I)`` and ``vec Q_j(ρ_j, M_j)``."""
        c, G, D, alg = self._parts(u, z)
        out = [(G @ D - c["I"]).ravel()]
        for V, P, q, rp, mp_, Ir, r in alg:
            E = None
            for a, e, v in q:
                t = v * (rp[a] @ mp_[e])
                E = t if E is None else E + t
            out.append(E.ravel())
        return np.concatenate(out)

    def jacobian(self, u, z):
        """``∂F/∂u`` (``n × n``, analytic: module docstring)."""
        c, G, D, alg = self._parts(u, z)
        bk = c["bk"]
        k, n = self.k, self.n
        J = bk.zeros(n, n)
        kk = k * k
        J[:kk, :kk] = _kron(c["I"], D.T)
        for piece in c["pieces"]:
            if piece[0] == "affine":
                _, b, a, s2 = piece
                J[:kk, :kk] = J[:kk, :kk] - s2 * _kron(G @ b, b.T)
        o = kk
        for V, P, q, rp, mp_, Ir, r in alg:
            rr = r * r
            J[:kk, o:o + rr] = -_kron(G @ V, P.T)
            dM = None
            drho = None
            for a, e, v in q:
                for i in range(e):
                    t = v * _kron(rp[a] @ mp_[i], mp_[e - 1 - i].T)
                    dM = t if dM is None else dM + t
                for i in range(a):
                    t = v * _kron(rp[i], (rp[a - 1 - i] @ mp_[e]).T)
                    drho = t if drho is None else drho + t
            if dM is not None:
                J[o:o + rr, :kk] = dM @ _kron(P, V.T)
            if drho is not None:
                J[o:o + rr, o:o + rr] = drho
            o += rr
        return J

    def dz(self, u):
        """``∂F/∂z``: ``vec(G E_11)``, zero in the ``Q_j`` rows."""
        k = self.k
        c = self._c(_mode(u))
        G, _ = self.split(u)
        E = c["bk"].zeros(k, k)
        E[:, 0] = G[:, 0]
        out = c["bk"].zeros(1, self.n)[0]
        out[:k * k] = E.ravel()
        return out

    def far_start(self, z):
        r"""An approximate solution at a point ``z`` far from the support (complex128): the
        Picard iteration ``G ← (Λ − b_0 − Σ R_j(G))^{-1}`` with ``R_j`` truncated after
        ``κ_3`` ([MS17]_ ch. 9: the series at infinity), ``k + 2`` steps."""
        c = self._c("np")
        k = self.k
        B = self._B(c, z)
        G = np.linalg.inv(B)
        rhos = []
        for _ in range(k + 2):
            D = B.copy()
            rhos = []
            for piece, (_, _, var) in zip(c["pieces"], self.pieces):
                if piece[0] == "affine":
                    _, b, a, s2 = piece
                    D = D - (a * b + s2 * (b @ G @ b))
                else:
                    _, V, P, Vh, q, Ir, r = piece
                    M = P @ G @ V
                    k1, k2, k3 = var.kappas
                    rho = k1 * Ir + k2 * M + k3 * (M @ M)
                    rhos.append(rho)
                    D = D - V @ rho @ P
            G = np.linalg.inv(D)
        return np.concatenate([G.ravel()] + [r.ravel() for r in rhos])


def _factor(b):
    r"""``b = V Y V^*`` with ``V`` the pivot columns of ``b`` (exact; ``Y`` Hermitian
    invertible ``r × r``) — :func:`freeprob.core.opvalued.factor_hermitian`."""
    from freeprob.core.opvalued import factor_hermitian
    V, Y = factor_hermitian(b)
    if V.cols == 0:
        raise NotAvailable("OVSystem: a zero coefficient matrix b_j")
    return sp.Matrix(V), sp.Matrix(Y)
