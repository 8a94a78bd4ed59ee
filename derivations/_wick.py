r"""Exact finite-n moments of real Gaussian matrix models by Wick's theorem (symbolic n).

The independent route of ``derivations/finite_n.py`` and ``tests/test_finite_n.py``: it
knows nothing of free probability.  A model is a sum of products of *letters*; a letter is

* ``("g", name, transposed)``: an entry of a real Gaussian matrix ``name`` with i.i.d.
  N(0, 1) entries, of shape ``dims[name] = (rows, cols)`` (each a sympy symbol or
  expression: ``n``, ``t*n``), or its transpose;
* ``("d", name)``: a deterministic diagonal matrix ``name`` (square), whose spectral
  moments are the symbols ``moment(name, j)`` (``Σ_i d_i^j = size · m_j``).

``expected_trace(word, dims)`` is ``E Tr(L_1 L_2 ⋯ L_k)``: the sum over the pairings of
the Gaussian letters of each matrix (Wick: ``E[A_ab A_cd] = δ_ac δ_bd``, real entries,
so a transposed letter pairs with an untransposed one as well) of the product over the
classes of identified indices of ``size · m_j`` (``j`` the number of diagonal letters
in the class, ``m_0 = 1``).  Everything is exact: the result is a polynomial in the
size symbols and the moment symbols.

The models of ``freeprob``'s finite-n conventions (docs/guide/finite-n.md):

* GOE ``(A + Aᵀ)/√(2n)``: :func:`goe_moment`;
* real Wishart ``G Gᵀ`` with ``G`` of size ``n × tn`` and N(0, 1/n) entries:
  :func:`wishart_moment`;
* any word in those and deterministic diagonals: :func:`model_moment`.

Cost: ``(2j − 1)!!`` pairings for ``2j`` letters of one matrix (m6 of a Wishart: 10395).
"""
from __future__ import annotations

import itertools
from collections import defaultdict

import sympy as sp

n = sp.Symbol("n", positive=True)


def moment(name, j):
    """The symbol of the ``j``-th spectral moment of the deterministic diagonal ``name``."""
    return sp.Integer(1) if j == 0 else sp.Symbol(f"m{j}_{name}")


def _pairings(items):
    if not items:
        yield []
        return
    first = items[0]
    for i in range(1, len(items)):
        rest = items[1:i] + items[i + 1:]
        for p in _pairings(rest):
            yield [(first, items[i])] + p


class _UF:
    def __init__(self, size):
        self.p = list(range(size))

    def find(self, a):
        while self.p[a] != a:
            self.p[a] = self.p[self.p[a]]
            a = self.p[a]
        return a

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self.p[a] = b


def expected_trace(word, dims):
    r"""``E Tr(L_1 ⋯ L_k)`` (unnormalized trace) of a word of letters, exactly.

    Index slot ``r`` is the row index of letter ``r`` and the column index of letter
    ``r − 1`` (cyclically); a transposed letter reads its entry with row and column
    swapped.  Returns a sympy expression (polynomial in the dimensions and moments).
    """
    k = len(word)
    if k == 0:
        raise ValueError("empty word")
    # the index type of each slot (for the dimension of its class)
    entries, diag, sizes = [], [], [None] * k
    for r, letter in enumerate(word):
        row, col = r, (r + 1) % k
        if letter[0] == "g":
            _, name, tr = letter
            rows, cols = dims[name]
            a, b = (col, row) if tr else (row, col)     # entry M[a, b]
            for slot, size in ((a, rows), (b, cols)):
                if sizes[slot] is not None and sp.simplify(sizes[slot] - size) != 0:
                    raise ValueError(f"dimension mismatch at letter {r}: {letter}")
                sizes[slot] = size
            entries.append((name, a, b))
        elif letter[0] == "d":
            diag.append((letter[1], row, col))
        else:
            raise ValueError(f"unknown letter {letter!r}")
    for name, a, b in diag:
        size = dims[name][0]
        for slot in (a, b):
            if sizes[slot] is not None and sp.simplify(sizes[slot] - size) != 0:
                raise ValueError(f"dimension mismatch at a diagonal letter {name}")
            sizes[slot] = size
    by_matrix = defaultdict(list)
    for e in entries:
        by_matrix[e[0]].append(e)
    if any(len(v) % 2 for v in by_matrix.values()):
        return sp.Integer(0)
    counts = defaultdict(int)
    groups = list(by_matrix.values())
    labels = [str(v) for v in sizes]
    for combo in itertools.product(*[list(_pairings(g)) for g in groups]):
        uf = _UF(k)
        for pairing in combo:
            for (_, a1, b1), (_, a2, b2) in pairing:
                uf.union(a1, a2)
                uf.union(b1, b2)
        for _, a, b in diag:
            uf.union(a, b)
        mult = defaultdict(lambda: defaultdict(int))     # class -> diagonal name -> count
        for name, a, _ in diag:
            mult[uf.find(a)][name] += 1
        key = []
        for c in {uf.find(s) for s in range(k)}:
            key.append((labels[c], tuple(sorted(mult[c].items())) if c in mult else ()))
        counts[tuple(sorted(key))] += 1
    total = sp.Integer(0)
    size_of = {str(s): s for s in sizes if s is not None}
    for key, count in counts.items():
        term = sp.Integer(count)
        for size, ms in key:
            term *= size_of[size]
            for name, j in ms:
                term *= moment(name, j)
        total += term
    return sp.expand(total)


def goe_moment(k):
    r"""``E tr_n X^k`` (normalized trace) of the GOE ``X = (A + Aᵀ)/√(2n)``, exact in ``n``."""
    dims = {"A": (n, n)}
    total = sum(expected_trace([("g", "A", tr) for tr in trs], dims)
                for trs in itertools.product((False, True), repeat=k))
    return sp.expand(total / ((2 * n) ** sp.Rational(k, 2) * n))


def wishart_moment(k, t):
    r"""``E tr_n W^k`` of the real Wishart ``W = G Gᵀ``, ``G`` of size ``n × tn`` with
    N(0, 1/n) entries, exact in ``n`` (and ``t``, a number or symbol)."""
    dims = {"G": (n, t * n)}
    word = [("g", "G", False), ("g", "G", True)] * k
    return sp.expand(expected_trace(word, dims) / (n ** k * n))


def model_moment(k, terms, dims):
    r"""``E tr_n X^k`` for ``X = Σ_j c_j L_{j,1} ⋯ L_{j,r_j}`` (a sum of scaled words).

    ``terms`` is a list of ``(coefficient, [letters])``; ``X^k`` is expanded into
    ``len(terms)^k`` words.  Example: GOE + Wishart is
    ``[(1/√(2n), [A]), (1/√(2n), [Aᵀ]), (1/n, [G, Gᵀ])]``.
    """
    total = sp.Integer(0)
    for choice in itertools.product(terms, repeat=k):
        coeff = sp.Integer(1)
        word = []
        for c, letters in choice:
            coeff *= c
            word += list(letters)
        total += coeff * expected_trace(word, dims)
    return sp.expand(total / n)


def goe_terms(name="A"):
    """The GOE ``(A + Aᵀ)/√(2n)`` as :func:`model_moment` terms."""
    c = 1 / sp.sqrt(2 * n)
    return [(c, [("g", name, False)]), (c, [("g", name, True)])]


def wishart_terms(name="G"):
    """The Wishart ``G Gᵀ`` (N(0, 1/n) entries) as :func:`model_moment` terms."""
    return [(1 / n, [("g", name, False), ("g", name, True)])]


def coefficients(expr, order=8):
    r"""``[c_0, c_1, …]`` with ``expr = Σ_j c_j n^{−j}`` (an exact polynomial in ``1/n``)."""
    e = sp.expand(expr.subs(n, 1 / sp.Symbol("h")))
    poly = sp.Poly(e, sp.Symbol("h"))
    out = [sp.Integer(0)] * (order + 1)
    for (j,), c in poly.terms():
        if j > order:
            raise ValueError(f"term n^-{j} beyond order {order}")
        out[j] = sp.simplify(c)
    return out
