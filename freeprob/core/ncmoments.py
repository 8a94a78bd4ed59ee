r"""Mixed moments of free variables by non-crossing partitions (the direct route).

For free ``x_1, …, x_s`` with free cumulants ``κ_n(x_c)``,

.. math::  φ(x_{c_1} ⋯ x_{c_m}) = Σ_{π ∈ NC(m),\ π ≤ \ker c}\ Π_{B ∈ π} κ_{|B|}(x_{c_B})

(mixed cumulants of free variables vanish: [NS06]_ Thm. 11.16 and Lecture 11–12).  The
block of the first letter, positions ``1 = i_1 < ⋯ < i_t`` of one colour, cuts the word
into closed gaps between consecutive ``i``'s (each partitioned on its own, by
non-crossing) and a tail after ``i_t``; :func:`mixed_moment` runs that recursion memoised on
contiguous subwords, ``O(m^3)`` states per word.  :func:`polynomial_moments` expands
``p^n`` into words, fine for small ``n`` (the number of words grows like ``(#terms)^n``):
the independent check of :mod:`freeprob.core.opvalued`.

Source: [NS06]_ Lecture 11 (Thm. 11.16, vanishing of mixed cumulants), Lecture 9
(the recursion on the block of the first element).
"""
from __future__ import annotations

from functools import lru_cache

__all__ = ["mixed_moment", "polynomial_moments"]


def mixed_moment(word, kappa, ring):
    r"""``φ(x_{c_1} ⋯ x_{c_m})`` for free variables.

    Parameters
    ----------
    word : tuple
        The colours ``c_1 … c_m`` (hashable keys of ``kappa``).
    kappa : dict
        ``colour -> [κ_0, κ_1, …]`` ring elements, at least ``m + 1`` long for each colour
        of the word.
    ring : CoefficientRing

    Returns the moment as a ring element.  Source: module docstring.
    """
    word = tuple(word)

    @lru_cache(maxsize=None)
    def phi(i, j):                       # φ(word[i:j])
        if i >= j:
            return ring.one
        return block(word[i], 1, i + 1, j)

    @lru_cache(maxsize=None)
    def block(c, t, i, j):
        # the block of colour c has t elements so far; the rest of it lies in word[i:j]
        total = kappa[c][t] * phi(i, j)
        for p in range(i, j):
            if word[p] == c:
                total = total + phi(i, p) * block(c, t + 1, p + 1, j)
        return total

    return phi(0, len(word))


def polynomial_moments(poly, kappa, ring, order, convert=None):
    r"""``[m_0, …, m_order]`` of the polynomial ``poly`` (an :class:`~freeprob.core.ncpoly.NCPoly`)
    in free variables by expanding ``p^n`` into words.

    ``kappa``: name -> cumulant list (at least ``order · deg p + 1`` long);
    ``convert``: coefficient (sympy) -> ring element (default ``ring.convert``).
    Exponential in ``order``: for tests and small orders.  Source: module docstring.
    """
    convert = convert or ring.convert
    terms = [(w, convert(c)) for w, c in poly.items()]
    memo = {}
    out = [ring.one]
    power = {(): ring.one}
    for _ in range(order):
        nxt = {}
        for w1, c1 in power.items():
            for w2, c2 in terms:
                w = w1 + w2
                nxt[w] = nxt[w] + c1 * c2 if w in nxt else c1 * c2
        power = nxt
        total = ring.zero
        for w, c in power.items():
            key = _canonical(w)
            if key not in memo:
                memo[key] = mixed_moment(key, kappa, ring)
            total = total + c * memo[key]
        out.append(total)
    return out


def _canonical(word):
    """The least rotation of ``word`` (the state is tracial: cyclic words share a moment)."""
    if not word:
        return word
    return min(word[i:] + word[:i] for i in range(len(word)))
