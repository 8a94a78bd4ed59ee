r"""Jacobi parameters, monic orthogonal polynomials and Hankel determinants of a moment sequence.

A probability law ``μ`` with moments ``m_0 = 1, m_1, …`` has monic orthogonal polynomials
``P_0 = 1``, ``P_1 = x − α_0``, ``P_{n+1} = (x − α_n) P_n − β_n P_{n−1}`` and its Cauchy
transform is the Jacobi continued fraction

.. math::  G(z) = \cfrac{1}{z − α_0 − \cfrac{β_1}{z − α_1 − \cfrac{β_2}{z − α_2 − ⋯}}}

([GAU04]_ §1.3, §2.1; [HS11]_ and [NS06]_ Lecture 2 for the moment-path picture).  With the
Hankel determinants ``Δ_n = det(m_{i+j})_{0≤i,j<n}`` (``Δ_0 = 1``) and the squared norms
``h_n = ‖P_n‖² = Δ_{n+1}/Δ_n``: ``β_n = h_n/h_{n−1}`` and ``Δ_n = Π_{i=1}^{n−1} β_i^{n−i}``.

The routes, all exact over any :mod:`~freeprob.core.coefficients` field (rationals in FLINT,
rational functions of symbolic parameters, algebraic numbers):

* :func:`jacobi_from_moments`: Chebyshev's algorithm on the mixed moments
  ``σ_{j,l} = ⟨P_j, x^l⟩`` ([GAU04]_ §2.1.7, Algorithm 2.1), ``O(k²)`` field operations for
  ``k`` parameters from ``2k + 1`` moments; no determinant is formed;
* :func:`hankel_from_moments`: the leading principal minors of the Hankel matrix,
  fraction-free ([BAR68]_): over the rationals an integer recurrence of the bordered Hankel
  determinants (FLINT ``fmpz``, exact divisions, ``O(k²)``), otherwise one Bareiss
  elimination (``O(k³)``); no ``det`` is called;
* :func:`moments_from_jacobi`: the moments back from ``(α, β)``, ``m_n = (J^n)_{00}`` for the
  tridiagonal ``J`` (diagonal ``α``, ones above, ``β`` below): a third route the tests use.

A law with exactly ``n`` support points (``n`` atoms) has ``Δ_{n+1} = 0``: ``β_n = 0``, the
continued fraction ends, and ``P_n`` (the polynomial with the atoms as roots) is the last
orthogonal polynomial.  The functions here stop there (they never divide by that zero) and
report ``n``.

References: [GAU04]_, [BAR68]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

import flint

from freeprob.core.coefficients import QQ, CoefficientRing
from freeprob.errors import FreeprobValueError

__all__ = ["jacobi_from_moments", "hankel_from_moments", "moments_from_jacobi", "polynomials_from_jacobi"]


def jacobi_from_moments(ring: CoefficientRing, m: list, k: int):
    r"""``(α_0..α_{k−1}, β_1..β_k)`` from ``m_0 = 1, m_1, …, m_{2k}`` (ring elements),
    by Chebyshev's algorithm ([GAU04]_ §2.1.7): with ``σ_{−1,l} = 0``, ``σ_{0,l} = m_l``,

    ``σ_{j,l} = σ_{j−1,l+1} − α_{j−1} σ_{j−1,l} − β_{j−1} σ_{j−2,l}``,
    ``α_j = σ_{j,j+1}/σ_{j,j} − σ_{j−1,j}/σ_{j−1,j−1}``, ``β_j = σ_{j,j}/σ_{j−1,j−1}``.

    Returns
    -------
    (list, list)
        ``alpha`` and ``beta`` (ring elements).  When ``σ_{n,n} = ‖P_n‖² = 0`` for some
        ``n ≤ k`` (the law has exactly ``n`` support points) both lists stop at length
        ``n``, ``beta[-1]`` being that zero ``β_n``.

    Raises :class:`~freeprob.errors.FreeprobValueError` (a ``ValueError``) if fewer than
    ``2k + 1`` moments are given.  ``O(k²)`` operations.
    """
    if len(m) < 2 * k + 1:
        raise FreeprobValueError(f"jacobi_from_moments: need m_0..m_{2 * k}; got {len(m)} moments")
    alpha, beta = [], []
    if k == 0:
        return alpha, beta
    prev = [ring.zero] * (2 * k + 2)           # σ_{j−2, ·}
    cur = list(m[:2 * k + 1]) + [ring.zero]     # σ_{j−1, ·}, index l
    a = cur[1] / cur[0]
    alpha.append(a)
    b = ring.zero                               # β_0 plays no role (σ_{−1,·} = 0)
    for j in range(1, k + 1):
        new = [ring.zero] * (2 * k + 2)
        for l in range(j, 2 * k - j + 1):
            v = cur[l + 1] - a * cur[l]
            if j >= 2:
                v = v - b * prev[l]
            new[l] = v
        if ring.is_zero(new[j]):
            beta.append(ring.zero)              # ‖P_j‖² = 0: exactly j support points
            return alpha, beta
        b = new[j] / cur[j - 1]
        beta.append(b)
        if j == k:
            break
        a = new[j + 1] / new[j] - cur[j] / cur[j - 1]
        alpha.append(a)
        prev, cur = cur, new
    return alpha, beta


def _hankel_integer(m, k):
    r"""``[Δ_0, …, Δ_k]`` of rational moments by the fraction-free recurrence of the bordered
    Hankel determinants ``τ_{j,l} = Δ_j ⟨P_j, x^l⟩`` (the determinant of the Hankel rows
    ``0..j`` and columns ``0..j−1, l``): for the integer moments ``M_l = D m_l`` (``D`` the
    common denominator; the functional scaled by ``D``, so ``Δ_n(M) = D^n Δ_n(m)``),
    ``τ_{0,l} = M_l``, ``Δ_{j+1} = τ_{j,j}`` and

    ``τ_{j+1,l} = (Δ_j (τ_{j,j} τ_{j,l+1} − τ_{j,j+1} τ_{j,l}) + τ_{j,j} (τ_{j−1,j} τ_{j,l} − τ_{j,j} τ_{j−1,l})) / Δ_j²``,

    Chebyshev's recurrence ([GAU04]_ §2.1.7) multiplied through by ``Δ_{j+1}``; the division
    is exact (Sylvester's identity, [BAR68]_), so every step stays in FLINT integers: ``O(k²)``
    operations, against ``O(k³)`` for an elimination of the whole matrix."""
    den = flint.fmpz(1)
    for v in m[:2 * k - 1]:
        den = den * v.q // den.gcd(v.q)
    M = [(v * den).p for v in m[:2 * k - 1]] + [flint.fmpz(0)]
    dets, prev, cur = [flint.fmpz(1)], None, M
    for j in range(k):
        if cur[j] == 0:                       # Δ_{j+1} = 0: so is every larger minor
            break
        dets.append(cur[j])
        if j == k - 1:
            break
        dj, tjj, tj1 = dets[j], cur[j], cur[j + 1]
        new = [flint.fmpz(0)] * (2 * k)
        for l in range(j + 1, 2 * k - j - 2):
            if j == 0:
                new[l] = tjj * cur[l + 1] - tj1 * cur[l]
            else:
                new[l] = (dj * (tjj * cur[l + 1] - tj1 * cur[l])
                          + tjj * (prev[j] * cur[l] - tjj * prev[l])) // (dj * dj)
        prev, cur = cur, new
    out, scale = [QQ.one], flint.fmpq(1)
    for d in dets[1:]:
        scale = scale / den
        out.append(flint.fmpq(d) * scale)
    return out + [QQ.zero] * (k + 1 - len(out))


def hankel_from_moments(ring: CoefficientRing, m: list, k: int) -> list:
    r"""``[Δ_0 = 1, Δ_1, …, Δ_k]``, ``Δ_n = det(m_{i+j})_{0≤i,j<n}``, from ``m_0..m_{2k−2}``.

    Fraction-free routes ([BAR68]_): over the rationals the integer recurrence of the
    bordered Hankel determinants (:func:`_hankel_integer`, FLINT ``fmpz``, ``O(k²)``); over
    other fields one Bareiss elimination of the ``k × k`` Hankel matrix, whose ``n``-th pivot
    is the leading minor ``Δ_{n+1}``: ``a_{ij} ← (a_{pp} a_{ij} − a_{ip} a_{pj})/a_{p−1,p−1}``
    with exact divisions (``O(k³)``).  A law's Hankel matrix is positive semi-definite, so
    after the first vanishing minor every larger one vanishes too (its kernel vector extends
    by zeros): the computation stops there.

    Raises :class:`~freeprob.errors.FreeprobValueError` if fewer than ``2k − 1`` moments are
    given.
    """
    if len(m) < max(2 * k - 1, 1):
        raise FreeprobValueError(f"hankel_from_moments: need m_0..m_{2 * k - 2}; got {len(m)} moments")
    if k == 0:
        return [ring.one]
    if ring == QQ:
        return _hankel_integer(m, k)
    out = [ring.one]
    a = [[m[i + j] for j in range(k)] for i in range(k)]
    last = ring.one
    for p in range(k):
        piv = a[p][p]
        if ring.is_zero(piv):
            return out + [ring.zero] * (k - p)
        out.append(piv)
        for i in range(p + 1, k):
            for j in range(p + 1, k):
                a[i][j] = (piv * a[i][j] - a[i][p] * a[p][j]) / last
        last = piv
    return out


def moments_from_jacobi(ring: CoefficientRing, alpha: list, beta: list, k: int) -> list:
    r"""``[m_0, …, m_k]`` of the Jacobi parameters: ``m_n = (J^n)_{00}`` for the tridiagonal
    ``J`` with diagonal ``α_i``, ones above and ``β_{i+1}`` below (Motzkin paths weighted by
    ``α`` for flat steps and ``β`` for down steps, [GAU04]_ §1.3).  Needs ``α_0..α_{⌈k/2⌉−1}``
    and ``β_1..β_{⌊k/2⌋}``, or fewer with a final ``β_n = 0`` (a finite Jacobi matrix).

    Raises :class:`~freeprob.errors.FreeprobValueError` if fewer parameters are given."""
    if not (beta and ring.is_zero(beta[-1])) and (len(alpha) < (k + 1) // 2 or len(beta) < k // 2):
        raise FreeprobValueError(f"moments_from_jacobi: m_0..m_{k} need α_0..α_{(k + 1) // 2 - 1} and "
                                 f"β_1..β_{k // 2}; got {len(alpha)} α and {len(beta)} β")
    top = len(beta)                              # the highest level a path can climb to
    v = [ring.one] + [ring.zero] * top           # J^n e_0
    out = [ring.one]
    for _ in range(k):
        w = [ring.zero] * (top + 1)
        for i in range(top + 1):
            if ring.is_zero(v[i]):
                continue
            if i < len(alpha):                   # (J v)_i = α_i v_i + v_{i+1} + β_i v_{i−1}
                w[i] = w[i] + alpha[i] * v[i]
            if i < top:
                w[i + 1] = w[i + 1] + beta[i] * v[i]
            if i >= 1:
                w[i - 1] = w[i - 1] + v[i]
        v = w
        out.append(v[0])
    return out


def polynomials_from_jacobi(ring: CoefficientRing, alpha: list, beta: list, k: int) -> list:
    r"""Coefficient lists (ascending, ring elements) of the monic ``P_0, …, P_k``:
    ``P_{n+1} = (x − α_n) P_n − β_n P_{n−1}`` ([GAU04]_ Thm. 1.27); needs ``α_0..α_{k−1}``,
    ``β_1..β_{k−1}``.

    Raises :class:`~freeprob.errors.FreeprobValueError` if fewer parameters are given."""
    if len(alpha) < k or len(beta) < k - 1:
        raise FreeprobValueError(f"polynomials_from_jacobi: P_0..P_{k} need α_0..α_{k - 1} and "
                                 f"β_1..β_{k - 1}; got {len(alpha)} α and {len(beta)} β")
    polys = [[ring.one]]
    if k >= 1:
        polys.append([-alpha[0], ring.one])
    for n in range(1, k):
        p, q = polys[n], polys[n - 1]
        nxt = [ring.zero] + list(p)                           # x P_n
        for i, c in enumerate(p):
            nxt[i] = nxt[i] - alpha[n] * c
        for i, c in enumerate(q):
            nxt[i] = nxt[i] - beta[n - 1] * c
        polys.append(nxt)
    return polys
