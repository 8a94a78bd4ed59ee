r"""Partition lattices of ``{1, ..., n}``: enumeration, non-crossing tests, the Kreweras
complement and the block-size types (with multiplicities) the moment–cumulant sums of
:mod:`freeprob.core.partitions` run over.

Part of the independent combinatorial route (:mod:`freeprob.core.partitions`, which
re-exports every public name here; see its docstring for the conventions and sources).
Pure Python, standard library only.

Three lattices: all set partitions ``P(n)``, non-crossing partitions ``NC(n)`` ([NS06]_
Lecture 9) and interval partitions ``I(n)`` ([SW97]_); enumerations run in the
lexicographic order of restricted growth strings, so ``NC(n)`` and ``I(n)`` come out as
subsequences of ``P(n)``.

References: [NS06]_, [SW97]_, [LS59]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from math import comb

from freeprob._checks import check_int
from freeprob.errors import FreeprobValueError

__all__ = [
    "MAX_PARTITION_ORDER",
    "set_partitions",
    "noncrossing_partitions",
    "interval_partitions",
    "is_noncrossing",
    "kreweras_complement",
]

#: Largest ``n`` accepted by the enumerations and the conversions (Bell(12) = 4213597).
MAX_PARTITION_ORDER = 12

Block = tuple[int, ...]
Partition = tuple[Block, ...]
Type = tuple[int, ...]  # block sizes, sorted decreasingly


# --------------------------------------------------------------------------- checks
def _check_order(n, func: str, name: str = "n", upper: int = MAX_PARTITION_ORDER) -> int:
    """Return ``n`` as an int if it is an integer in ``[0, upper]``, else raise."""
    return check_int(n, None, f"Argument `{name}` of `{func}`", minimum=0, maximum=upper)


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
