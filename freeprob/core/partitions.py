r"""Set partitions, non-crossing partitions and the partition route for cumulants.

This module is the *independent combinatorial route* of freeprob: it enumerates
partitions of ``{1, ..., n}`` and evaluates moment-cumulant formulas as literal sums
over partitions, with no generating functions.  Tests use it to check the
generating-function (series) route of the library.

Pure Python, standard library only.  The arithmetic is generic: sequence entries may
be any objects supporting ``+``, ``-``, ``*`` (also by a Python ``int``) and ``==``,
e.g. ``int``, :class:`fractions.Fraction`, sympy expressions or python-flint ``fmpq``.
No division is ever performed, so the conversions are exact over any commutative ring.

The lattices themselves (enumeration, :func:`is_noncrossing`, :func:`kreweras_complement`
and the block-size types summed over) live in :mod:`freeprob.core.lattices`; every public
name of it is re-exported here, so ``from freeprob.core.partitions import set_partitions`` works.

Conventions
-----------
* A partition of ``{1, ..., n}`` is a tuple of blocks; each block is a sorted tuple of
  ``int``; blocks are sorted by their minimum.  ``n = 0`` has exactly one partition,
  the empty tuple ``()``.
* Enumerations run in the lexicographic order of restricted growth strings (element
  ``i`` joins the existing blocks in order of their minima before opening a new
  block), so ``noncrossing_partitions(n)`` and ``interval_partitions(n)`` are
  subsequences of ``set_partitions(n)``.
* Sequences are indexed by order: ``(x_0, x_1, ..., x_k)``.  For cumulants ``x_0`` is
  ignored and returned as ``0``; for moments ``x_0`` is ignored (assumed to be
  ``m_0 = 1``) and returned as ``1``.  Products over a partition are
  multiplicative: ``x_pi = prod_{V in pi} x_{|V|}``.

Three partition lattices give three cumulant notions:

=============  ===========================  ============================================
cumulants      partitions summed over       source
=============  ===========================  ============================================
free           non-crossing ``NC(n)``       [NS06]_ Lecture 11, Def. 11.3 / Prop. 11.4
boolean        interval ``I(n)``            [SW97]_
classical      all set partitions ``P(n)``  [LS59]_
=============  ===========================  ============================================

References: [NS06]_, [SW97]_, [LS59]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

from freeprob.core.lattices import (
    MAX_PARTITION_ORDER,
    Block,  # noqa: F401 (the type aliases, re-exported)
    Partition,  # noqa: F401
    Type,
    _check_order,
    _classical_types,
    _interval_types,
    _nc_pair_types,
    _nc_types,
    interval_partitions,
    is_noncrossing,
    kreweras_complement,
    noncrossing_partitions,
    set_partitions,
)
from freeprob.errors import FreeprobValueError

__all__ = [
    "MAX_PARTITION_ORDER",
    "DEFAULT_MAX_ORDER",
    "set_partitions",
    "noncrossing_partitions",
    "interval_partitions",
    "is_noncrossing",
    "kreweras_complement",
    "free_cumulants_to_moments_nc",
    "moments_to_free_cumulants_nc",
    "boolean_cumulants_to_moments_interval",
    "moments_to_boolean_cumulants_interval",
    "classical_cumulants_to_moments_partitions",
    "moments_to_classical_cumulants_partitions",
    "free_mul_moments_nc",
    "free_mul_cumulants_nc",
]

#: Default largest order accepted by the conversions (``max_order`` keyword).
DEFAULT_MAX_ORDER = 10


# ------------------------------------------------------------------ generic algebra
def _prepare(seqs, names, func, max_order, zero, one):
    """Validate sequences and max_order; return (tuples, k, zero, one)."""
    max_order = _check_order(max_order, func, name="max_order")
    tuples = []
    for seq, name in zip(seqs, names):
        if isinstance(seq, (str, bytes)):
            raise FreeprobValueError(
                f"Argument `{name}` of `{func}` must be a sequence (x_0, ..., x_k); "
                f"got the string {seq!r}."
            )
        try:
            t = tuple(seq)
        except TypeError:
            raise FreeprobValueError(
                f"Argument `{name}` of `{func}` must be a sequence (x_0, ..., x_k); "
                f"got {seq!r}."
            ) from None
        if not t:
            raise FreeprobValueError(
                f"Argument `{name}` of `{func}` must have length >= 1 (index 0 is the "
                f"order-0 placeholder); got an empty sequence."
            )
        tuples.append(t)
    lengths = {len(t) for t in tuples}
    if len(lengths) != 1:
        raise FreeprobValueError(
            f"Arguments {', '.join('`' + s + '`' for s in names)} of `{func}` must have "
            f"equal lengths; got lengths {[len(t) for t in tuples]}."
        )
    k = len(tuples[0]) - 1
    if k > max_order:
        raise FreeprobValueError(
            f"Order of the input of `{func}` must be <= max_order = {max_order} "
            f"(max_order itself at most {MAX_PARTITION_ORDER}); got order {k}."
        )
    if zero is None:
        zero = tuples[0][1] * 0 if k >= 1 else 0
    if one is None:
        one = zero + 1
    return tuples, k, zero, one


def _term(x, t: Type, count: int):
    """count * prod_{s in t} x[s] for a non-empty type t."""
    p = x[t[0]]
    for s in t[1:]:
        p = p * x[s]
    return p * count if count != 1 else p


def _cumulants_to_moments(x, k, zero, one, types_of):
    out = [one]
    for n in range(1, k + 1):
        total = zero
        for t, c in types_of(n):
            total = total + _term(x, t, c)
        out.append(total)
    return tuple(out)


def _moments_to_cumulants(m, k, zero, types_of):
    kappa = [zero]
    for n in range(1, k + 1):
        # kappa_n = m_n - sum over partitions other than 1_n (the only type (n,)).
        total = m[n]
        for t, c in types_of(n):
            if t != (n,):
                total = total - _term(kappa, t, c)
        kappa.append(total)
    return tuple(kappa)


# ------------------------------------------------------------------------ free (NC)
def free_cumulants_to_moments_nc(kappa, *, max_order: int = DEFAULT_MAX_ORDER,
                                 zero=None, one=None) -> tuple:
    r"""Moments from free cumulants by the moment-cumulant formula over ``NC(n)``.

    Computes ``m_n = sum_{pi in NC(n)} kappa_pi`` with
    ``kappa_pi = prod_{V in pi} kappa_{|V|}``, summing over the enumerated non-crossing
    partitions grouped by block-size type.

    Parameters
    ----------
    kappa : sequence
        ``(kappa_0, kappa_1, ..., kappa_k)``; ``kappa_0`` is ignored.  Entries support
        ``+``, ``*`` and multiplication by ``int`` (exact or symbolic).
    max_order : int, keyword-only
        Largest accepted order ``k`` (default 10, at most 12).
    zero, one : optional, keyword-only
        The ring's 0 and 1; default ``kappa[1] * 0`` and ``zero + 1`` (``int`` 0, 1
        when ``k = 0``).

    Returns
    -------
    tuple
        ``(1, m_1, ..., m_k)`` (``out[0]`` is ``one``).

    Raises
    ------
    FreeprobValueError
        If ``kappa`` is not a non-empty sequence, its order ``k = len - 1`` exceeds
        ``max_order``, or ``max_order`` is not an integer in ``[0, 12]``.

    References
    ----------
    [NS06]_ Lecture 11, Def. 11.3 and Prop. 11.4 (moment-cumulant formula).

    Examples
    --------
    >>> free_cumulants_to_moments_nc((0, 0, 1, 0, 0, 0, 0))  # standard semicircle
    (1, 0, 1, 0, 2, 0, 5)
    """
    (x,), k, zero, one = _prepare((kappa,), ("kappa",), "free_cumulants_to_moments_nc",
                                  max_order, zero, one)
    return _cumulants_to_moments(x, k, zero, one, _nc_types)


def moments_to_free_cumulants_nc(m, *, max_order: int = DEFAULT_MAX_ORDER,
                                 zero=None, one=None) -> tuple:
    r"""Free cumulants from moments by inverting the moment-cumulant formula.

    Solves the triangular system ``kappa_n = m_n - sum_{pi in NC(n), pi != 1_n}
    kappa_pi`` recursively in ``n`` (no generating functions, no division).

    Parameters
    ----------
    m : sequence
        ``(m_0, m_1, ..., m_k)``; ``m_0`` is ignored (assumed to be 1).
    max_order : int, keyword-only
        Largest accepted order ``k`` (default 10, at most 12).
    zero, one : optional, keyword-only
        The ring's 0 and 1; default ``m[1] * 0`` and ``zero + 1``.

    Returns
    -------
    tuple
        ``(0, kappa_1, ..., kappa_k)`` (``out[0]`` is ``zero``).

    Raises
    ------
    FreeprobValueError
        If ``m`` is not a non-empty sequence, its order ``k = len - 1`` exceeds
        ``max_order``, or ``max_order`` is not an integer in ``[0, 12]``.

    References
    ----------
    [NS06]_ Lecture 11, Def. 11.3 and Prop. 11.4.

    Examples
    --------
    >>> moments_to_free_cumulants_nc((1, 1, 2, 5, 14))  # free Poisson(1): Catalan
    (0, 1, 1, 1, 1)
    """
    (x,), k, zero, _ = _prepare((m,), ("m",), "moments_to_free_cumulants_nc",
                                max_order, zero, one)
    return _moments_to_cumulants(x, k, zero, _nc_types)


# ------------------------------------------------------------------- boolean (I(n))
def boolean_cumulants_to_moments_interval(b, *, max_order: int = DEFAULT_MAX_ORDER,
                                          zero=None, one=None) -> tuple:
    r"""Moments from boolean cumulants: ``m_n = sum_{pi in I(n)} b_pi``.

    The sum runs over the interval partitions of ``{1, ..., n}``.

    Parameters
    ----------
    b : sequence
        ``(b_0, b_1, ..., b_k)``; ``b_0`` is ignored.
    max_order : int, keyword-only
        Largest accepted order ``k`` (default 10, at most 12).
    zero, one : optional, keyword-only
        The ring's 0 and 1; default ``b[1] * 0`` and ``zero + 1``.

    Returns
    -------
    tuple
        ``(1, m_1, ..., m_k)``.

    Raises
    ------
    FreeprobValueError
        If ``b`` is not a non-empty sequence, its order ``k = len - 1`` exceeds
        ``max_order``, or ``max_order`` is not an integer in ``[0, 12]``.

    References
    ----------
    [SW97]_ (boolean cumulants over interval partitions).

    Examples
    --------
    >>> boolean_cumulants_to_moments_interval((0, 0, 1, 0, 0))  # symmetric Bernoulli
    (1, 0, 1, 0, 1)
    """
    (x,), k, zero, one = _prepare((b,), ("b",), "boolean_cumulants_to_moments_interval",
                                  max_order, zero, one)
    return _cumulants_to_moments(x, k, zero, one, _interval_types)


def moments_to_boolean_cumulants_interval(m, *, max_order: int = DEFAULT_MAX_ORDER,
                                          zero=None, one=None) -> tuple:
    r"""Boolean cumulants from moments: ``b_n = m_n - sum_{pi in I(n), pi != 1_n} b_pi``.

    Parameters
    ----------
    m : sequence
        ``(m_0, m_1, ..., m_k)``; ``m_0`` is ignored (assumed to be 1).
    max_order : int, keyword-only
        Largest accepted order ``k`` (default 10, at most 12).
    zero, one : optional, keyword-only
        The ring's 0 and 1; default ``m[1] * 0`` and ``zero + 1``.

    Returns
    -------
    tuple
        ``(0, b_1, ..., b_k)``.

    Raises
    ------
    FreeprobValueError
        If ``m`` is not a non-empty sequence, its order ``k = len - 1`` exceeds
        ``max_order``, or ``max_order`` is not an integer in ``[0, 12]``.

    References
    ----------
    [SW97]_.

    Examples
    --------
    >>> moments_to_boolean_cumulants_interval((1, 0, 1, 0, 1, 0, 1))
    (0, 0, 1, 0, 0, 0, 0)
    """
    (x,), k, zero, _ = _prepare((m,), ("m",), "moments_to_boolean_cumulants_interval",
                                max_order, zero, one)
    return _moments_to_cumulants(x, k, zero, _interval_types)


# ----------------------------------------------------------------- classical (P(n))
def classical_cumulants_to_moments_partitions(c, *, max_order: int = DEFAULT_MAX_ORDER,
                                              zero=None, one=None) -> tuple:
    r"""Moments from classical cumulants: ``m_n = sum_{pi in P(n)} c_pi``.

    The sum runs over all set partitions, grouped by block-size type; the number of
    partitions of each type is counted by the first-block decomposition (the block
    of ``1`` with size ``j`` is chosen in ``C(n-1, j-1)`` ways).

    Parameters
    ----------
    c : sequence
        ``(c_0, c_1, ..., c_k)``; ``c_0`` is ignored.
    max_order : int, keyword-only
        Largest accepted order ``k`` (default 10, at most 12).
    zero, one : optional, keyword-only
        The ring's 0 and 1; default ``c[1] * 0`` and ``zero + 1``.

    Returns
    -------
    tuple
        ``(1, m_1, ..., m_k)``.

    Raises
    ------
    FreeprobValueError
        If ``c`` is not a non-empty sequence, its order ``k = len - 1`` exceeds
        ``max_order``, or ``max_order`` is not an integer in ``[0, 12]``.

    References
    ----------
    [LS59]_ (moment-cumulant formula over set partitions).

    Examples
    --------
    >>> classical_cumulants_to_moments_partitions((0, 0, 1, 0, 0, 0, 0))  # N(0, 1)
    (1, 0, 1, 0, 3, 0, 15)
    """
    (x,), k, zero, one = _prepare((c,), ("c",),
                                  "classical_cumulants_to_moments_partitions",
                                  max_order, zero, one)
    return _cumulants_to_moments(x, k, zero, one, _classical_types)


def moments_to_classical_cumulants_partitions(m, *, max_order: int = DEFAULT_MAX_ORDER,
                                              zero=None, one=None) -> tuple:
    r"""Classical cumulants from moments: ``c_n = m_n - sum_{pi in P(n), pi != 1_n} c_pi``.

    Parameters
    ----------
    m : sequence
        ``(m_0, m_1, ..., m_k)``; ``m_0`` is ignored (assumed to be 1).
    max_order : int, keyword-only
        Largest accepted order ``k`` (default 10, at most 12).
    zero, one : optional, keyword-only
        The ring's 0 and 1; default ``m[1] * 0`` and ``zero + 1``.

    Returns
    -------
    tuple
        ``(0, c_1, ..., c_k)``.

    Raises
    ------
    FreeprobValueError
        If ``m`` is not a non-empty sequence, its order ``k = len - 1`` exceeds
        ``max_order``, or ``max_order`` is not an integer in ``[0, 12]``.

    References
    ----------
    [LS59]_.

    Examples
    --------
    >>> moments_to_classical_cumulants_partitions((1, 1, 2, 5, 15))  # Poisson(1): Bell
    (0, 1, 1, 1, 1)
    """
    (x,), k, zero, _ = _prepare((m,), ("m",), "moments_to_classical_cumulants_partitions",
                                max_order, zero, one)
    return _moments_to_cumulants(x, k, zero, _classical_types)


# ------------------------------------------------------- free multiplicative (K(pi))
def _free_mul(xa, xb, k, zero, first):
    out = [first]
    for n in range(1, k + 1):
        total = zero
        for ta, tb, c in _nc_pair_types(n):
            p = xa[ta[0]]
            for s in ta[1:]:
                p = p * xa[s]
            for s in tb:
                p = p * xb[s]
            total = total + (p * c if c != 1 else p)
        out.append(total)
    return tuple(out)


def free_mul_moments_nc(kappa_a, m_b, *, max_order: int = DEFAULT_MAX_ORDER,
                        zero=None, one=None) -> tuple:
    r"""Moments of the free multiplicative convolution ``a ⊠ b`` over ``NC(n)``.

    For ``a`` and ``b`` free, ``m_n(ab) = sum_{pi in NC(n)} kappa_pi[a] m_{K(pi)}[b]``
    with ``K`` the Kreweras complement (:func:`kreweras_complement`).

    Parameters
    ----------
    kappa_a : sequence
        Free cumulants ``(kappa_0, kappa_1(a), ..., kappa_k(a))``; index 0 ignored.
    m_b : sequence
        Moments ``(m_0, m_1(b), ..., m_k(b))`` of the same length; index 0 ignored.
    max_order : int, keyword-only
        Largest accepted order ``k`` (default 10, at most 12).
    zero, one : optional, keyword-only
        The ring's 0 and 1; default ``kappa_a[1] * 0`` and ``zero + 1``.

    Returns
    -------
    tuple
        ``(1, m_1(ab), ..., m_k(ab))``.

    Raises
    ------
    FreeprobValueError
        If an input is not a non-empty sequence, the lengths differ, the order
        ``k = len - 1`` exceeds ``max_order``, or ``max_order`` is not an integer in
        ``[0, 12]``.

    References
    ----------
    [NS06]_ Theorem 14.4 and Remark 14.5 (Eq. (14.4)).

    Examples
    --------
    >>> # free Poisson(1) ⊠ free Poisson(1): Fuss-Catalan numbers C(3n, n)/(2n + 1)
    >>> free_mul_moments_nc((0, 1, 1, 1, 1), (1, 1, 2, 5, 14))
    (1, 1, 3, 12, 55)
    """
    (xa, xb), k, zero, one = _prepare((kappa_a, m_b), ("kappa_a", "m_b"),
                                      "free_mul_moments_nc", max_order, zero, one)
    return _free_mul(xa, xb, k, zero, one)


def free_mul_cumulants_nc(kappa_a, kappa_b, *, max_order: int = DEFAULT_MAX_ORDER,
                          zero=None, one=None) -> tuple:
    r"""Free cumulants of the free multiplicative convolution ``a ⊠ b`` over ``NC(n)``.

    For ``a`` and ``b`` free,
    ``kappa_n(ab) = sum_{pi in NC(n)} kappa_pi[a] kappa_{K(pi)}[b]``.

    Parameters
    ----------
    kappa_a, kappa_b : sequence
        Free cumulants ``(kappa_0, kappa_1, ..., kappa_k)`` of ``a`` and ``b``, of equal
        length; index 0 ignored.
    max_order : int, keyword-only
        Largest accepted order ``k`` (default 10, at most 12).
    zero, one : optional, keyword-only
        The ring's 0 and 1; default ``kappa_a[1] * 0`` and ``zero + 1``.

    Returns
    -------
    tuple
        ``(0, kappa_1(ab), ..., kappa_k(ab))``.

    Raises
    ------
    FreeprobValueError
        If an input is not a non-empty sequence, the lengths differ, the order
        ``k = len - 1`` exceeds ``max_order``, or ``max_order`` is not an integer in
        ``[0, 12]``.

    References
    ----------
    [NS06]_ Theorem 14.4.

    Examples
    --------
    >>> free_mul_cumulants_nc((0, 1, 1, 1, 1), (0, 1, 1, 1, 1))
    (0, 1, 2, 5, 14)
    """
    (xa, xb), k, zero, _ = _prepare((kappa_a, kappa_b), ("kappa_a", "kappa_b"),
                                    "free_mul_cumulants_nc", max_order, zero, one)
    return _free_mul(xa, xb, k, zero, zero)
