r"""Boolean and monotone additive convolutions: the other two independences.

With ``F_μ(z) = 1/G_μ(z)`` the reciprocal Cauchy transform:

* **boolean** ([SW97]_): ``F_{μ⊎ν}(z) = F_μ(z) + F_ν(z) − z``; the boolean cumulants
  (``η(z) = 1 − 1/M(z) = Σ b_n z^n``, :meth:`~freeprob.laws.law.Law.boolean_cumulants`) add;
* **monotone** ([MUR01]_): ``F_{μ▷ν} = F_μ ∘ F_ν``, the law of ``X + Y`` for ``X`` and ``Y``
  monotone independent in that order; not commutative.  In the moment series
  ``h_μ(z) = z M_μ(z) = 1/F_μ(1/z)`` it reads ``h_{μ▷ν} = h_μ ∘ h_ν``: one exact series
  composition in the law's ring.

Both are exact over every coefficient ring (rationals in FLINT, symbolic parameters, balls
for certified digits), and algebraic when their arguments are: the Cauchy equation of
``μ ⊎ ν`` eliminates ``F_μ``, ``F_ν`` from ``F_μ + F_ν − z = 1/G``, that of ``μ ▷ ν``
eliminates ``Y = F_ν(z)`` from ``P_μ(G, Y) = 0`` (:mod:`freeprob.laws.algebraic`), so the
density, atoms, support and cdf come from :mod:`freeprob.numeric` as for every law.  Both
operations can create atoms (``Bernoulli() ⊎ Bernoulli()`` is the symmetric law on ``±√2``).

References: [SW97]_, [MUR01]_, [HS11]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

from dataclasses import dataclass

from freeprob.core import cumulants as _cum
from freeprob.errors import FreeprobValueError
from freeprob.laws.law import Law

__all__ = ["boolean_add", "monotone_add", "BooleanAdd", "MonotoneAdd"]


def _law(obj, who, name):
    if not isinstance(obj, Law):
        raise FreeprobValueError(f"`{name}` of `{who}` must be a Law; got {type(obj).__name__} {obj!r}")
    return obj


def _laws(laws, who):
    """The arguments of ``who`` checked: two or more :class:`Law` objects, as a tuple."""
    if len(laws) == 1 and isinstance(laws[0], list | tuple):
        raise FreeprobValueError(f"{who} takes the laws as separate arguments, {who}(a, b, ...); got one "
                                 f"{type(laws[0]).__name__} (write {who}(*laws))")
    if len(laws) < 2:
        raise FreeprobValueError(f"{who} needs at least two laws; got {len(laws)}")
    return tuple(_law(law, who, f"laws[{i}]") for i, law in enumerate(laws))


@dataclass(frozen=True)
class BooleanAdd(Law):
    r"""``μ_1 ⊎ μ_2 ⊎ …``: boolean cumulants add ([SW97]_)."""

    laws: tuple

    def __post_init__(self):
        _laws(tuple(self.laws) if isinstance(self.laws, list | tuple) else (self.laws,), "boolean_add")

    def _parameters(self):
        return tuple(p for law in self.laws for p in law.parameters())

    def _moment_formula(self, ring, k):
        b = [ring.zero] * (k + 1)
        for law in self.laws:
            b = [x + y for x, y in zip(b, _cum.boolean_cumulants_from_moments(ring, law._m(ring, k)))]
        return _cum.moments_from_boolean_cumulants(ring, b)


def boolean_add(*laws) -> Law:
    r"""Boolean additive convolution ``μ_1 ⊎ μ_2 ⊎ …`` (two or more laws).

    The law of ``a_1 + a_2 + …`` for Boolean independent ``a_i`` of laws ``μ_i``:
    ``F_{μ⊎ν}(z) = F_μ(z) + F_ν(z) − z`` with ``F = 1/G``; the boolean cumulants add
    ([SW97]_).  Commutative and associative.  Exact moments (the η-series), an algebraic
    Cauchy equation when every ``μ_i`` has one (so density, atoms and support).

    Raises
    ------
    FreeprobValueError
        Fewer than two arguments, an argument that is not a :class:`Law`, or one list of laws
        (pass them as separate arguments).
    NotAvailable
        When moments are asked of an argument that has none (a :class:`Law` subclass that
        defines neither moments nor cumulants).

    Examples
    --------
    >>> import freeprob as fp
    >>> law = fp.boolean_add(fp.Bernoulli(), fp.Bernoulli())     # F = z − 2/z: atoms at ±√2
    >>> law.moments(6)
    (1, 0, 2, 0, 4, 0, 8)
    >>> law.atoms()
    ((-sqrt(2), 1/2), (sqrt(2), 1/2))
    """
    return BooleanAdd(_laws(laws, "boolean_add"))


@dataclass(frozen=True)
class MonotoneAdd(Law):
    r"""``μ ▷ ν``: ``F_{μ▷ν} = F_μ ∘ F_ν`` ([MUR01]_)."""

    left: Law
    right: Law

    def __post_init__(self):
        _law(self.left, "monotone_add", "left")
        _law(self.right, "monotone_add", "right")

    def _parameters(self):
        return self.left.parameters() + self.right.parameters()

    def _moment_formula(self, ring, k):
        # h(z) = z M(z) = z + m_1 z² + …; h_{μ▷ν} = h_μ ∘ h_ν modulo z^{k+2}
        n = k + 2
        ha = [ring.zero] + list(self.left._m(ring, k))
        hb = [ring.zero] + list(self.right._m(ring, k))
        h = ring.compose(ha, hb, n)
        return [ring.one] + list(h[2:n])

    def _nonnegative(self):
        # X + Y with X, Y >= 0 (monotone independent positive operators) is >= 0
        if self.left._nonnegative() is True and self.right._nonnegative() is True:
            return True
        return None


def monotone_add(*laws) -> Law:
    r"""Monotone additive convolution ``μ_1 ▷ μ_2 ▷ …`` (two or more laws, in this order).

    The law of ``a_1 + a_2 + …`` for monotone independent ``a_1, a_2, …`` (in that order):
    ``F_{μ▷ν} = F_μ ∘ F_ν`` with ``F = 1/G`` ([MUR01]_).  Associative, not commutative:
    ``μ ▷ δ_a`` is ``μ`` shifted by ``a`` while ``δ_a ▷ μ = δ_a ⊎ μ``.  Exact moments (one
    series composition ``h_μ ∘ h_ν`` of ``h(z) = z M(z)``), an algebraic Cauchy equation when
    every ``μ_i`` has one (so density, atoms and support).  Along a monotone semigroup the
    monotone cumulants add (:meth:`~freeprob.laws.law.Law.monotone_cumulants`, [HS11]_).

    Raises
    ------
    FreeprobValueError
        Fewer than two arguments, an argument that is not a :class:`Law`, or one list of laws
        (pass them as separate arguments).
    NotAvailable
        When moments are asked of an argument that has none (a :class:`Law` subclass that
        defines neither moments nor cumulants).

    Examples
    --------
    >>> import freeprob as fp
    >>> fp.monotone_add(fp.Semicircle(0, 1), fp.Semicircle(0, 1)).moments(6)
    (1, 0, 2, 0, 7, 0, 29)
    >>> arcsine = fp.free_add(fp.Bernoulli(), fp.Bernoulli())           # variance 2
    >>> fp.monotone_add(arcsine, arcsine).monotone_cumulants(4)          # the semigroup: 2 + 2
    (0, 0, 4, 0, 0)
    """
    laws = _laws(laws, "monotone_add")
    out = laws[0]
    for law in laws[1:]:
        out = MonotoneAdd(out, law)
    return out
