r"""Set partitions, non-crossing partitions and the partition route for cumulants.

This module is the *independent combinatorial route* of freeprob: it enumerates
partitions of ``{1, ..., n}`` and evaluates moment-cumulant formulas as literal sums
over partitions, with no generating functions.  Tests use it to check the
generating-function (series) route of the library.

Pure Python, standard library only.  The arithmetic is generic: sequence entries may
be any objects supporting ``+``, ``-``, ``*`` (also by a Python ``int``) and ``==``,
e.g. ``int``, :class:`fractions.Fraction`, sympy expressions or python-flint ``fmpq``.
No division is ever performed, so the conversions are exact over any commutative ring.

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

=============  ==========================  ============================================
cumulants      partitions summed over      source
=============  ==========================  ============================================
free           non-crossing ``NC(n)``      [NS06]_ Lecture 11, Def. 11.3 / Prop. 11.4
boolean        interval ``I(n)``           [SW97]_
classical      all set partitions ``P(n)``  [LS59]_
=============  ==========================  ============================================

References
----------
.. [NS06] A. Nica, R. Speicher, *Lectures on the Combinatorics of Free Probability*,
   LMS Lecture Note Series 335, Cambridge University Press, 2006.
.. [SW97] R. Speicher, R. Woroudi, "Boolean convolution", in *Free Probability
   Theory* (D. Voiculescu, ed.), Fields Inst. Commun. 12, AMS, 1997, pp. 267-279.
.. [LS59] V. P. Leonov, A. N. Shiryaev, "On a method of calculation of
   semi-invariants", *Theory Probab. Appl.* 4 (1959), 319-329.
"""
from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from math import comb

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

#: Largest ``n`` accepted by the enumerations and the conversions (Bell(12) = 4213597).
MAX_PARTITION_ORDER = 12
#: Default largest order accepted by the conversions (``max_order`` keyword).
DEFAULT_MAX_ORDER = 10

Block = tuple[int, ...]
Partition = tuple[Block, ...]
Type = tuple[int, ...]  # block sizes, sorted decreasingly


# --------------------------------------------------------------------------- checks
def _check_order(n, func: str, name: str = "n", upper: int = MAX_PARTITION_ORDER) -> int:
    """Return ``n`` as an int if it is an integer in ``[0, upper]``, else raise."""
    if isinstance(n, bool):
        raise FreeprobValueError(
            f"Argument `{name}` of `{func}` must be an integer with 0 <= {name} <= "
            f"{upper}; got the bool {n!r}."
        )
    try:
        k = operator.index(n)
    except TypeError:
        raise FreeprobValueError(
            f"Argument `{name}` of `{func}` must be an integer with 0 <= {name} <= "
            f"{upper}; got {n!r} of type {type(n).__name__}."
        ) from None
    if not 0 <= k <= upper:
        raise FreeprobValueError(
            f"Argument `{name}` of `{func}` must satisfy 0 <= {name} <= {upper}; got {k}."
        )
    return k


def _normalize_partition(partition, func: str) -> Partition:
    """Canonical form of a partition given as an iterable of iterables of ints."""
    try:
        raw_blocks = [list(block) for block in partition]
    except TypeError:
        raise FreeprobValueError(
            f"Argument `partition` of `{func}` must be an iterable of blocks "
            f"(iterables of ints); got {partition!r}."
        ) from None
    seen: set[int] = set()
    blocks = []
    for block in raw_blocks:
        if not block:
            raise FreeprobValueError(
                f"Argument `partition` of `{func}` must have non-empty blocks; "
                f"got {partition!r}."
            )
        for x in block:
            if isinstance(x, bool) or not isinstance(x, int):
                raise FreeprobValueError(
                    f"Argument `partition` of `{func}` must contain ints only; "
                    f"got the element {x!r}."
                )
            if x in seen:
                raise FreeprobValueError(
                    f"Argument `partition` of `{func}` must have disjoint blocks; "
                    f"element {x} occurs twice."
                )
            seen.add(x)
        blocks.append(tuple(sorted(block)))
    blocks.sort(key=lambda b: b[0])
    return tuple(blocks)


# ----------------------------------------------------------------------- enumeration
def _rgs_enumerate(n: int, kind: str) -> Iterator[Partition]:
    """Partitions of {1..n} in restricted-growth-string lexicographic order.

    ``kind`` is ``"all"``, ``"nc"`` (prune crossings) or ``"interval"``.
    """
    if n == 0:
        yield ()
        return
    blocks: list[list[int]] = []

    def allowed(j: int) -> bool:
        # May the next element i join blocks[j]?  (All placed elements are < i.)
        if kind == "all":
            return True
        if kind == "interval":
            return j == len(blocks) - 1
        # kind == "nc": joining i to a block with maximum m creates a crossing
        # iff another block c has min(c) < m < max(c)  ([NS06] Def. 9.1 of crossing).
        m = blocks[j][-1]
        return not any(c[0] < m < c[-1] for k, c in enumerate(blocks) if k != j)

    def rec(i: int) -> Iterator[Partition]:
        if i > n:
            yield tuple(tuple(b) for b in blocks)
            return
        for j in range(len(blocks)):
            if allowed(j):
                blocks[j].append(i)
                yield from rec(i + 1)
                blocks[j].pop()
        blocks.append([i])
        yield from rec(i + 1)
        blocks.pop()

    yield from rec(1)


@lru_cache(maxsize=None)
def _nc_cached(n: int) -> tuple[Partition, ...]:
    return tuple(_rgs_enumerate(n, "nc"))


@lru_cache(maxsize=None)
def _interval_cached(n: int) -> tuple[Partition, ...]:
    return tuple(_rgs_enumerate(n, "interval"))


def set_partitions(n: int) -> Iterator[Partition]:
    r"""Yield all set partitions of ``{1, ..., n}``.

    Parameters
    ----------
    n : int
        Size of the ground set, ``0 <= n <= 12`` (``bool`` is rejected).

    Yields
    ------
    tuple of tuple of int
        Each partition as a tuple of blocks; each block a sorted tuple; blocks sorted
        by their minimum.  The order is the lexicographic order of restricted growth
        strings; ``n = 0`` yields the single empty partition ``()``.  There are
        Bell(n) partitions (OEIS A000110); they are generated lazily, not cached.

    Raises
    ------
    FreeprobValueError
        If ``n`` is not an integer with ``0 <= n <= 12``.

    References
    ----------
    [NS06]_ Lecture 9, Def. 9.1 (partitions of an ordered set); [LS59]_.

    Examples
    --------
    >>> list(set_partitions(3))
    [((1, 2, 3),), ((1, 2), (3,)), ((1, 3), (2,)), ((1,), (2, 3)), ((1,), (2,), (3,))]
    """
    n = _check_order(n, "set_partitions")
    return _rgs_enumerate(n, "all")


def noncrossing_partitions(n: int) -> Iterator[Partition]:
    r"""Yield the non-crossing partitions ``NC(n)`` of ``{1, ..., n}``.

    A partition is crossing if there are ``a < b < c < d`` with ``a, c`` in one block
    and ``b, d`` in another; otherwise it is non-crossing.

    Parameters
    ----------
    n : int
        Size of the ground set, ``0 <= n <= 12`` (``bool`` is rejected).

    Yields
    ------
    tuple of tuple of int
        Same representation and order as :func:`set_partitions` (of which this is a
        subsequence).  There are Catalan(n) = C(2n, n)/(n+1) of them (OEIS A000108).
        The list for each ``n`` is computed once and cached.

    Raises
    ------
    FreeprobValueError
        If ``n`` is not an integer with ``0 <= n <= 12``.

    References
    ----------
    [NS06]_ Lecture 9, Def. 9.1 (crossing, ``NC(n)``) and the Catalan count.

    Examples
    --------
    >>> list(noncrossing_partitions(3))
    [((1, 2, 3),), ((1, 2), (3,)), ((1, 3), (2,)), ((1,), (2, 3)), ((1,), (2,), (3,))]
    >>> ((1, 3), (2, 4)) in set(noncrossing_partitions(4))
    False
    """
    n = _check_order(n, "noncrossing_partitions")
    return iter(_nc_cached(n))


def interval_partitions(n: int) -> Iterator[Partition]:
    r"""Yield the interval partitions ``I(n)`` of ``{1, ..., n}``.

    An interval partition has every block of the form ``{a, a+1, ..., b}``; they are in
    bijection with the compositions of ``n``, so there are ``2**(n-1)`` of them for
    ``n >= 1``.

    Parameters
    ----------
    n : int
        Size of the ground set, ``0 <= n <= 12`` (``bool`` is rejected).

    Yields
    ------
    tuple of tuple of int
        Same representation and order as :func:`set_partitions` (of which this is a
        subsequence).  Cached per ``n``.

    Raises
    ------
    FreeprobValueError
        If ``n`` is not an integer with ``0 <= n <= 12``.

    References
    ----------
    [SW97]_ (interval partitions and boolean cumulants); [NS06]_ Lecture 9.

    Examples
    --------
    >>> list(interval_partitions(3))
    [((1, 2, 3),), ((1, 2), (3,)), ((1,), (2, 3)), ((1,), (2,), (3,))]
    """
    n = _check_order(n, "interval_partitions")
    return iter(_interval_cached(n))


# -------------------------------------------------------------- non-crossing, Kreweras
def is_noncrossing(partition: Iterable[Iterable[int]]) -> bool:
    r"""Return whether a partition of a finite set of integers is non-crossing.

    The partition is crossing iff there are ``a < b < c < d`` with ``a, c`` in one
    block and ``b, d`` in another block.  The ground set is the union of the blocks
    (it need not be ``{1, ..., n}``).  Checked in ``O(N log N)`` by a stack scan: the
    partition is non-crossing iff, reading the elements in increasing order, every
    element of an already opened block belongs to the most recently opened block
    that is not yet finished.

    Parameters
    ----------
    partition : iterable of iterables of int
        Non-empty, pairwise disjoint blocks.

    Returns
    -------
    bool

    Raises
    ------
    FreeprobValueError
        If ``partition`` is not an iterable of non-empty, pairwise disjoint blocks of
        ints.

    References
    ----------
    [NS06]_ Lecture 9, Def. 9.1.

    Examples
    --------
    >>> is_noncrossing([[1, 3], [2, 4]])
    False
    >>> is_noncrossing([[1, 4], [2, 3]])
    True
    """
    blocks = _normalize_partition(partition, "is_noncrossing")
    owner = {}
    for b, block in enumerate(blocks):
        for x in block:
            owner[x] = b
    last = {b: block[-1] for b, block in enumerate(blocks)}
    first = {b: block[0] for b, block in enumerate(blocks)}
    stack: list[int] = []
    for x in sorted(owner):
        b = owner[x]
        if x == first[b]:
            if x != last[b]:
                stack.append(b)
        else:
            if not stack or stack[-1] != b:
                return False
            if x == last[b]:
                stack.pop()
    return True


def _kreweras_canonical(blocks: Partition, n: int) -> Partition:
    """Kreweras complement of a valid NC partition of {1..n} (no checks)."""
    # pi as a permutation: each block is a cycle in increasing order.
    succ = [0] * (n + 1)
    for block in blocks:
        for a, b in zip(block, block[1:] + block[:1]):
            succ[b] = a  # succ = pi^{-1}
    # K(pi) = pi^{-1} o gamma with gamma = (1 2 ... n)  ([NS06] Lecture 18).
    seen = [False] * (n + 1)
    out = []
    for start in range(1, n + 1):
        if seen[start]:
            continue
        cycle = []
        x = start
        while not seen[x]:
            seen[x] = True
            cycle.append(x)
            x = succ[x % n + 1]
        out.append(tuple(sorted(cycle)))
    out.sort(key=lambda b: b[0])
    return tuple(out)


def kreweras_complement(partition: Iterable[Iterable[int]], n: int) -> Partition:
    r"""Kreweras complement ``K(pi)`` of a non-crossing partition ``pi`` in ``NC(n)``.

    Interleave ``1 < 1' < 2 < 2' < ... < n < n'``.  ``K(pi)`` is the largest (coarsest)
    ``sigma`` in ``NC(1', ..., n')`` such that ``pi`` together with ``sigma`` is a
    non-crossing partition of the ``2n`` interleaved points; it is returned as a
    partition of ``{1, ..., n}`` (``i'`` written as ``i``).  Equivalently, viewing
    ``pi`` as the permutation whose cycles are its blocks in increasing order,
    ``K(pi) = pi^{-1} gamma`` with ``gamma = (1 2 ... n)`` (this is how it is
    computed).

    Properties: ``|pi| + |K(pi)| = n + 1``; ``K(0_n) = 1_n`` and ``K(1_n) = 0_n``;
    ``K`` is a bijection of ``NC(n)`` and ``K(K(pi))`` is ``pi`` rotated by one step,
    i.e. the blocks of ``K(K(pi))`` are the images of the blocks of ``pi`` under
    ``i -> i - 1`` (with ``1 -> n``).

    Parameters
    ----------
    partition : iterable of iterables of int
        A non-crossing partition of exactly ``{1, ..., n}``.
    n : int
        ``n >= 0`` (``bool`` is rejected).

    Returns
    -------
    tuple of tuple of int
        ``K(pi)`` in the canonical representation (sorted blocks, sorted by minimum).

    Raises
    ------
    FreeprobValueError
        If ``n`` is not a non-negative integer, or ``partition`` is not a partition of
        ``{1, ..., n}``, or it is crossing.

    References
    ----------
    [NS06]_ Def. 9.21 (Kreweras complement), Remark 9.23 (``K^2`` is a rotation),
    Lecture 18 (``K(pi) = pi^{-1} gamma`` for permutations).

    Examples
    --------
    >>> kreweras_complement([[1, 4, 8], [2, 3], [5, 6], [7]], 8)
    ((1, 3), (2,), (4, 6, 7), (5,), (8,))
    >>> kreweras_complement([[1, 2, 3]], 3)
    ((1,), (2,), (3,))
    """
    func = "kreweras_complement"
    n = _check_order(n, func, upper=10**6)
    blocks = _normalize_partition(partition, func)
    ground = sorted(x for block in blocks for x in block)
    if ground != list(range(1, n + 1)):
        raise FreeprobValueError(
            f"Argument `partition` of `{func}` must be a partition of {{1, ..., {n}}}; "
            f"got {partition!r}."
        )
    if not is_noncrossing(blocks):
        raise FreeprobValueError(
            f"Argument `partition` of `{func}` must be non-crossing; got {partition!r}."
        )
    return _kreweras_canonical(blocks, n)


# --------------------------------------------------------------- types and counting
def _type(partition: Partition) -> Type:
    return tuple(sorted((len(b) for b in partition), reverse=True))


@lru_cache(maxsize=None)
def _nc_pair_types(n: int) -> tuple[tuple[Type, Type, int], ...]:
    """(type(pi), type(K(pi)), multiplicity) over pi in NC(n), by enumeration."""
    counts = Counter(
        (_type(p), _type(_kreweras_canonical(p, n))) for p in _nc_cached(n)
    )
    return tuple((a, b, c) for (a, b), c in sorted(counts.items()))


@lru_cache(maxsize=None)
def _nc_types(n: int) -> tuple[tuple[Type, int], ...]:
    """(type, multiplicity) over NC(n), by enumeration."""
    counts = Counter(_type(p) for p in _nc_cached(n))
    return tuple(sorted(counts.items()))


@lru_cache(maxsize=None)
def _interval_types(n: int) -> tuple[tuple[Type, int], ...]:
    """(type, multiplicity) over the interval partitions I(n), by enumeration."""
    counts = Counter(_type(p) for p in _interval_cached(n))
    return tuple(sorted(counts.items()))


@lru_cache(maxsize=None)
def _classical_type_counter(n: int) -> dict[Type, int]:
    # First-block decomposition: the block containing 1 has size k, chosen in
    # C(n-1, k-1) ways; the rest is a set partition of the remaining n-k points.
    if n == 0:
        return {(): 1}
    acc: Counter = Counter()
    for k in range(1, n + 1):
        ways = comb(n - 1, k - 1)
        for t, c in _classical_type_counter(n - k).items():
            acc[tuple(sorted(t + (k,), reverse=True))] += ways * c
    return dict(acc)


@lru_cache(maxsize=None)
def _classical_types(n: int) -> tuple[tuple[Type, int], ...]:
    """(type, multiplicity) over all set partitions P(n)."""
    return tuple(sorted(_classical_type_counter(n).items()))


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
