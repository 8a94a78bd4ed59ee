r"""Self-adjoint linearization of a self-adjoint non-commutative polynomial (Anderson's trick).

For a self-adjoint ``p`` in ``x_1, …, x_s`` (:class:`~freeprob.core.ncpoly.NCPoly`),
:func:`linearize` builds a self-adjoint

.. math::  L = b_0 ⊗ 1 + Σ_j b_j ⊗ x_j = \begin{pmatrix} ℓ & u^* \\ u & Q \end{pmatrix}
           ∈ M_k(ℂ) ⊗ ℂ⟨x⟩,   p = ℓ − u^* Q^{-1} u,

with ``ℓ`` the affine part of ``p``, ``u`` linear and ``Q`` affine with a polynomial
inverse, so that by the Schur complement, for ``Λ(z) = diag(z, 0, …, 0)``,

.. math::  [(Λ(z) − L)^{-1}]_{11} = (z − p)^{-1}

([AND13]_ Prop. 3; [BMS17]_ §4; [MS17]_ ch. 10).  Construction (``k`` kept small):

* degree 2 and 3 words: ``Σ c_w w = a^* S a`` with ``a`` the column of the letters that
  begin such words and ``S_{ij} = Σ_{w = x_i m x_j} c_w m`` an affine self-adjoint
  matrix; then ``Q = −S^{-1}`` when ``S`` is a numeric invertible matrix, else
  ``Q = [[0, −I], [−I, S]]`` (``Q^{-1} = [[−S, −I], [−I, 0]]``) and ``u = (a, 0)``;
* degree ≥ 4 words: ``q + q^*`` with ``q`` one word of each adjoint pair (half of each
  palindrome), ``q = −u_r C^{-1} v`` by a chain over the prefix tree of ``q``'s words
  (``C = −I + N``, ``N`` the letters along the tree's edges, shared prefixes give shared
  rows), and the block ``Q = [[0, C^*], [C, 0]]``, ``u = (u_r^*, v)``.

Every block's ``Q_0^{-1} b_j`` pattern is nilpotent (:attr:`Linearization.depth`), which
makes the M_k-valued series of :mod:`freeprob.core.opvalued` finite at each order.
:meth:`Linearization.schur_complement` recomputes ``ℓ − u^* Q^{-1} u`` as a polynomial
(the check of the tests).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from freeprob.core.ncpoly import NCPoly, conjugate
from freeprob.errors import FreeprobValueError

__all__ = ["Linearization", "linearize"]


@dataclass(frozen=True)
class Linearization:
    r"""``L = b_0 ⊗ 1 + Σ_j b_j ⊗ x_j`` (k × k, self-adjoint) with ``[(Λ(z) − L)^{-1}]_{11} = (z − p)^{-1}``.

    Attributes
    ----------
    names : tuple of str
        The variables ``x_1, …, x_s`` in the order of :attr:`bs`.
    b0 : sympy.ImmutableMatrix
        The constant part (``k × k``, Hermitian); ``b0[0, 0]`` is the constant term of ``p``.
    bs : tuple of sympy.ImmutableMatrix
        ``b_j``, the coefficient matrix of ``x_j`` (Hermitian; real symmetric when ``p``
        has real coefficients).
    depth : int
        The least ``ℓ`` with ``(K B)^ℓ = 0`` for the supports of ``K = 0 ⊕ (−Q_0^{-1})``
        and ``B = Σ_j |b_j|``: the number of fixed-point steps that settle one order of
        the M_k-valued series (:mod:`freeprob.core.opvalued`).

    Source: [AND13]_, [BMS17]_ §4, [MS17]_ ch. 10.
    """

    names: tuple
    b0: sp.ImmutableMatrix
    bs: tuple
    depth: int

    @property
    def k(self) -> int:
        """The matrix size."""
        return self.b0.shape[0]

    @property
    def is_real(self) -> bool:
        """True if every entry of ``b_0`` and the ``b_j`` is real (symbols count as real)."""
        return all(conjugate(e) == e for m in (self.b0, *self.bs) for e in m)

    def K(self) -> sp.ImmutableMatrix:
        r"""``K = 0 ⊕ (−Q_0^{-1})``: ``(Λ(z) − b_0)^{-1} = K + E_{11}/(z − b_0[0,0])``."""
        return _K(self.b0)

    def matrix(self, symbols=None) -> sp.Matrix:
        """``L`` as a sympy matrix in non-commutative symbols (``symbols``: name -> symbol)."""
        symbols = dict(symbols or {})
        for n in self.names:
            symbols.setdefault(n, sp.Symbol(n, commutative=False))
        return sp.Matrix(self.b0) + sum((self.bs[j] * symbols[n] for j, n in enumerate(self.names)),
                                        sp.zeros(self.k))

    def entries(self):
        """``L`` as a ``k × k`` list of affine :class:`NCPoly` entries."""
        out = [[NCPoly.scalar(self.b0[i, j]) for j in range(self.k)] for i in range(self.k)]
        for bj, n in zip(self.bs, self.names):
            for (i, j), c in bj.todok().items():
                out[i][j] = out[i][j] + NCPoly({(n,): c})
        return out

    def schur_complement(self) -> NCPoly:
        r"""``ℓ − u^* Q^{-1} u`` as a polynomial, ``Q^{-1} = Σ_n (−Q_0^{-1} Q_1)^n Q_0^{-1}``
        (a finite sum: ``Q_0^{-1} Q_1`` is nilpotent).  Equals ``p`` (the tests check it)."""
        E = self.entries()
        k = self.k
        Q0 = sp.Matrix(self.b0[1:, 1:])
        Q0inv = Q0.inv()
        Q1 = [[E[i][j] - NCPoly.scalar(self.b0[i, j]) for j in range(1, k)] for i in range(1, k)]
        neg = [[NCPoly.scalar(-Q0inv[i, j]) for j in range(k - 1)] for i in range(k - 1)]
        step = _mat_mul(neg, Q1)
        term = [[NCPoly.scalar(Q0inv[i, j]) for j in range(k - 1)] for i in range(k - 1)]
        inv = term
        for _ in range(2 * k + 2):
            term = _mat_mul(step, term)
            if all(not e.terms for row in term for e in row):
                break
            inv = [[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(inv, term)]
        else:                                                   # pragma: no cover
            raise FreeprobValueError("schur_complement: Q_0^{-1} Q_1 is not nilpotent")
        u = [E[i][0] for i in range(1, k)]
        ustar = [E[0][j] for j in range(1, k)]
        out = E[0][0]
        for i in range(k - 1):
            for j in range(k - 1):
                if inv[i][j].terms:
                    out = out - ustar[i] * inv[i][j] * u[j]
        return out


def _mat_mul(A, B):
    n, m, p = len(A), len(B), len(B[0])
    out = []
    for i in range(n):
        row = []
        for j in range(p):
            s = NCPoly()
            for t in range(m):
                if A[i][t].terms and B[t][j].terms:
                    s = s + A[i][t] * B[t][j]
            row.append(s)
        out.append(row)
    return out


def _K(b0):
    k = b0.shape[0]
    K = sp.zeros(k)
    if k > 1:
        K[1:, 1:] = -sp.Matrix(b0[1:, 1:]).inv()
    return sp.ImmutableMatrix(K)


def _depth(b0, bs):
    """Least ``ℓ`` with ``(supp K · supp B)^ℓ = 0``, or ``None`` if there is none ≤ k + 1."""
    k = b0.shape[0]
    K = _K(b0)
    Ks = [[K[i, j] != 0 for j in range(k)] for i in range(k)]
    Bs = [[any(b[i, j] != 0 for b in bs) for j in range(k)] for i in range(k)]
    A = [[any(Ks[i][t] and Bs[t][j] for t in range(k)) for j in range(k)] for i in range(k)]
    P = A
    for n in range(1, k + 2):
        if not any(any(r) for r in P):
            return n
        P = [[any(P[i][t] and A[t][j] for t in range(k)) for j in range(k)] for i in range(k)]
    return None


def linearize(p: NCPoly, names=None, who="linearize") -> Linearization:
    r"""A self-adjoint linearization of the self-adjoint polynomial ``p`` (module docstring).

    Parameters
    ----------
    p : NCPoly
        Self-adjoint, of degree ≥ 1.
    names : sequence of str, optional
        The variables in the order of ``b_1, …, b_s`` (default: the sorted letters of
        ``p``); must contain every letter of ``p``.

    Returns
    -------
    Linearization

    Raises
    ------
    FreeprobValueError
        ``p`` not self-adjoint (the reason names the offending term), constant, or with a
        letter missing from ``names``.

    Source: [AND13]_ Prop. 3, [BMS17]_ §4, [MS17]_ ch. 10.
    """
    if not isinstance(p, NCPoly):
        raise FreeprobValueError(f"{who}: expected an NCPoly; got {type(p).__name__}")
    defect = p.self_adjoint_defect()
    if defect:
        raise FreeprobValueError(f"{who}: the polynomial is not self-adjoint: {defect}")
    if p.degree < 1:
        raise FreeprobValueError(f"{who}: the polynomial {p} is constant; its law is a point mass (use Dirac)")
    names = tuple(sorted(p.letters())) if names is None else tuple(names)
    missing = sorted(p.letters() - set(names))
    if missing:
        raise FreeprobValueError(f"{who}: the letter(s) {', '.join(missing)} are not among the variables")
    terms = p.terms
    entries = {}                                  # (i, j) -> NCPoly (affine)

    def put(i, j, value):
        entries[(i, j)] = entries.get((i, j), NCPoly()) + value

    put(0, 0, NCPoly({w: c for w, c in terms.items() if len(w) <= 1}))
    size = 1
    # degree 2 and 3: a* S a
    mid = {w: c for w, c in terms.items() if 2 <= len(w) <= 3}
    if mid:
        order = {n: i for i, n in enumerate(names)}
        bound = sorted({w[0] for w in mid} | {w[-1] for w in mid}, key=order.get)
        pos = {n: i for i, n in enumerate(bound)}
        m = len(bound)
        S = [[NCPoly() for _ in range(m)] for _ in range(m)]
        for w, c in mid.items():
            S[pos[w[0]]][pos[w[-1]]] = S[pos[w[0]]][pos[w[-1]]] + NCPoly({w[1:-1]: c})
        numeric = all(e.is_scalar() and not e.free_symbols() for row in S for e in row)
        Sm = sp.Matrix(m, m, lambda i, j: S[i][j].constant()) if numeric else None
        if numeric and Sm.det() != 0:
            Q = -Sm.inv()
            for i, n in enumerate(bound):
                put(0, size + i, NCPoly.letter(n))
                put(size + i, 0, NCPoly.letter(n))
                for j in range(m):
                    put(size + i, size + j, NCPoly.scalar(Q[i, j]))
            size += m
        else:
            for i, n in enumerate(bound):
                put(0, size + i, NCPoly.letter(n))
                put(size + i, 0, NCPoly.letter(n))
                put(size + i, size + m + i, NCPoly.scalar(-1))
                put(size + m + i, size + i, NCPoly.scalar(-1))
                for j in range(m):
                    put(size + m + i, size + m + j, S[i][j])
            size += 2 * m
    # degree >= 4: q + q* by a chain over the prefix tree of q
    high = {w: c for w, c in terms.items() if len(w) >= 4}
    if high:
        q = {}
        for w, c in high.items():
            r = tuple(reversed(w))
            if r == w:
                q[w] = c / 2
            elif w < r:
                q[w] = c
        nodes = {}
        for w in q:
            for t in range(1, len(w)):
                nodes.setdefault(w[:t], len(nodes))
        n = len(nodes)
        a0, b0_ = size, size + n                  # the α and β blocks
        for P, i in nodes.items():
            if len(P) == 1:
                put(0, a0 + i, NCPoly.letter(P[0]))
                put(a0 + i, 0, NCPoly.letter(P[0]))
            put(b0_ + i, a0 + i, NCPoly.scalar(-1))       # C = −I + N
            put(a0 + i, b0_ + i, NCPoly.scalar(-1))       # C*
        for P, i in nodes.items():
            if len(P) >= 2 and P[:-1] in nodes:
                j = nodes[P[:-1]]
                put(b0_ + j, a0 + i, NCPoly.letter(P[-1]))   # N[P', P' y] = x_y
                put(a0 + i, b0_ + j, NCPoly.letter(P[-1]))
        for w, c in q.items():
            i = nodes[w[:-1]]
            v = NCPoly({(w[-1],): c})
            put(b0_ + i, 0, v)
            put(0, b0_ + i, v.adjoint())
        size += 2 * n
    k = size
    b0 = sp.zeros(k)
    bs = [sp.zeros(k) for _ in names]
    idx = {nm: j for j, nm in enumerate(names)}
    for (i, j), e in entries.items():
        for w, c in e.terms.items():
            if not w:
                b0[i, j] += c
            elif len(w) == 1:
                bs[idx[w[0]]][i, j] += c
            else:                                                        # pragma: no cover
                raise AssertionError("linearization entry of degree > 1")
    b0 = sp.ImmutableMatrix(b0)
    bs = tuple(sp.ImmutableMatrix(b) for b in bs)
    depth = _depth(b0, bs)
    if depth is None:                                                    # pragma: no cover
        raise AssertionError("linearize: the linearization is not nilpotent at infinity")
    return Linearization(names, b0, bs, depth)
