r"""The standard families: atomic laws, the semicircle, free Poisson (Marchenko–Pastur)
and compound free Poisson laws.

Each family is a frozen dataclass of exact sympy parameters with one formula
(free cumulants or moments) and its closed-form transforms; see
:mod:`freeprob.laws.law` for what the base class derives from it.

References: [NS06]_, [MS17]_ (:mod:`freeprob.references`).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from freeprob.core import cumulants as _cum
from freeprob.core.params import as_exact, check, sign
from freeprob.errors import FreeprobValueError
from freeprob.laws.law import Law
from freeprob.core.symbols import u, w, z

__all__ = ["Atomic", "Dirac", "Bernoulli", "Semicircle", "FreePoisson", "MarchenkoPastur",
           "CompoundFreePoisson"]


def _set(obj, name, value):
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class Atomic(Law):
    r"""A finitely supported law ``Σ_i w_i δ_{x_i}``.

    Parameters
    ----------
    points : sequence of real numbers or sympy expressions
        Atom locations ``x_i`` (one point gives a Dirac mass).
    weights : sequence, optional
        Masses ``w_i >= 0`` summing to 1; uniform when omitted.

    Moments ``m_n = Σ_i w_i x_i^n``; Cauchy transform ``G(z) = Σ_i w_i/(z − x_i)``.

    Raises
    ------
    FreeprobValueError
        No points; lengths differ; a point not real; a weight provably negative; the
        weights provably not summing to 1.

    Examples
    --------
    >>> from freeprob import Atomic
    >>> Atomic([-1, 1]).moments(4)
    (1, 0, 1, 0, 1)
    """

    points: tuple
    weights: tuple = None

    def __post_init__(self):
        name = "Atomic"
        if isinstance(self.points, str | bytes | dict | set):
            raise FreeprobValueError(f"`points` of `Atomic` must be a sequence of numbers; got {self.points!r}")
        if self.weights is not None and isinstance(self.weights, str | bytes | dict | set):
            raise FreeprobValueError(f"`weights` of `Atomic` must be a sequence of numbers; got {self.weights!r}")
        try:
            pts = tuple(self.points)
        except TypeError as exc:
            raise FreeprobValueError(f"`points` of `Atomic` must be a sequence; got {self.points!r}") from exc
        if not pts:
            raise FreeprobValueError("`points` of `Atomic` must contain at least one point")
        pts = tuple(check(as_exact(p, name, f"points[{i}]"), "real", name, f"points[{i}]")
                    for i, p in enumerate(pts))
        if self.weights is None:
            wts = tuple(sp.Rational(1, len(pts)) for _ in pts)
        else:
            wts = tuple(self.weights)
            if len(wts) != len(pts):
                raise FreeprobValueError(
                    f"`Atomic`: got {len(pts)} points but {len(wts)} weights; they must match"
                )
            wts = tuple(check(as_exact(v, name, f"weights[{i}]"), "nonnegative", name, f"weights[{i}]")
                        for i, v in enumerate(wts))
            if sign(sp.Add(*wts) - 1) in (1, -1):
                raise FreeprobValueError(
                    f"`weights` of `Atomic` must sum to 1; they sum to {sp.Add(*wts)} (floats "
                    "are read as the rational they print as: pass exact fractions such as "
                    "sympy.Rational(1, 3))"
                )
        _set(self, "points", pts)
        _set(self, "weights", wts)

    def _parameters(self):
        return self.points + self.weights

    def _moment_formula(self, ring, k):
        xs = [ring.convert(p) for p in self.points]
        ws = [ring.convert(v) for v in self.weights]
        out = [ring.one]
        powers = list(ws)
        for _ in range(k):
            powers = [p * x for p, x in zip(powers, xs)]
            s = ring.zero
            for p in powers:
                s = s + p
            out.append(s)
        return out

    def _cauchy_closed(self):
        return sp.Add(*[wt / (z - x) for x, wt in zip(self.points, self.weights)])

    def _r_closed(self):
        if len(self.points) == 1:
            return self.points[0]
        return None

    def _s_closed(self):
        if len(self.points) == 1 and self.points[0].is_zero is False:
            return 1 / self.points[0]
        return None

    def _zero_mass(self):
        mass = sp.Integer(0)
        for x, wt in zip(self.points, self.weights):
            if x.is_zero:
                mass += wt
            elif x.is_zero is None:
                return None
        return mass

    def _infinitely_divisible(self):
        return len(self.points) == 1

    def _nonnegative(self):
        return self._side(1)

    def _nonpositive(self):
        return self._side(-1)

    def _side(self, s):
        flags = [(sign(s * x), sign(wt)) for x, wt in zip(self.points, self.weights)]
        if all(f in (0, 1) for f, _ in flags):
            return True
        if any(f == -1 and wf == 1 for f, wf in flags):
            return False
        return None


def Dirac(point=0) -> Atomic:  # noqa: N802 - a family constructor
    r"""The Dirac mass ``δ_a`` at ``point`` (an :class:`Atomic` law with one point)."""
    return Atomic((point,), (1,))


def Bernoulli(p=sp.Rational(1, 2), low=-1, high=1) -> Atomic:  # noqa: N802
    r"""The two-point law ``(1 − p) δ_low + p δ_high`` (default: symmetric ±1).

    Raises
    ------
    FreeprobValueError
        If ``p`` is provably outside [0, 1] (the message names ``p``).
    """
    p = check(as_exact(p, "Bernoulli", "p"), "nonnegative", "Bernoulli", "p")
    if (1 - p).is_negative:
        raise FreeprobValueError(f"Parameter `p` of `Bernoulli` must be at most 1; got {p}")
    return Atomic((low, high), (1 - p, p))


@dataclass(frozen=True)
class Semicircle(Law):
    r"""Wigner's semicircle law with the given mean and variance.

    Density ``sqrt(4σ² − (x−a)²)/(2πσ²)`` on ``[a − 2σ, a + 2σ]``; free cumulants
    ``κ_1 = a``, ``κ_2 = σ²``, all others 0; ``R(w) = a + σ² w``;
    ``σ² G² − (z − a) G + 1 = 0`` ([NS06] Lecture 2, Def. 2.15; Lecture 11, Ex. 11.21;
    [MS17] §2.1).  Moments of the standard law are the Catalan numbers.

    Parameters
    ----------
    mean : real, default 0
    variance : positive, default 1

    Raises
    ------
    FreeprobValueError
        If ``variance`` is provably <= 0 or a parameter is not real.
    """

    mean: object = 0
    variance: object = 1

    def __post_init__(self):
        _set(self, "mean", check(as_exact(self.mean, "Semicircle", "mean"), "real", "Semicircle", "mean"))
        _set(self, "variance",
             check(as_exact(self.variance, "Semicircle", "variance"), "positive", "Semicircle", "variance"))

    def _parameters(self):
        return (self.mean, self.variance)

    def _cumulant_formula(self, ring, k):
        out = [ring.zero] * (k + 1)
        if k >= 1:
            out[1] = ring.convert(self.mean)
        if k >= 2:
            out[2] = ring.convert(self.variance)
        return out

    def _r_closed(self):
        return self.mean + self.variance * w

    def _cauchy_closed(self):
        a, v = self.mean, self.variance
        s = sp.sqrt(v)
        return (z - a - sp.sqrt(z - a - 2 * s) * sp.sqrt(z - a + 2 * s)) / (2 * v)

    def _zero_mass(self):
        return sp.Integer(0)

    def _infinitely_divisible(self):
        return True

    def _nonnegative(self):
        sg = sign(self.mean - 2 * sp.sqrt(self.variance))
        return None if sg is None else sg >= 0

    def _nonpositive(self):
        sg = sign(self.mean + 2 * sp.sqrt(self.variance))
        return None if sg is None else sg <= 0


@dataclass(frozen=True)
class FreePoisson(Law):
    r"""The free Poisson law with rate ``λ`` and jump size ``α`` (Marchenko–Pastur).

    Free cumulants ``κ_n = λ α^n`` ([NS06] Lecture 12, Prop. 12.11); ``R(w) = λα/(1 − αw)``;
    ``S(u) = 1/(α(u + λ))``; Cauchy equation ``α z G² + (αλ − α − z) G + 1 = 0``.  With
    ``α = 1`` it is the limit law of ``G Gᵀ/n`` for ``G ∈ R^{n×λn}`` i.i.d. N(0,1): mean
    ``λ``, variance ``λ``, atom ``1 − λ`` at 0 when ``λ < 1``; moments are the Narayana
    polynomials in ``λ``.  (The ``MP(c)`` of ``../shared/docs/theory.md``, mean 1 and
    variance c, is ``FreePoisson(rate=1/c, jump=c)``: see :func:`MarchenkoPastur`.)

    Parameters
    ----------
    rate : positive, default 1
    jump : real non-zero, default 1

    Raises
    ------
    FreeprobValueError
        If ``rate`` is provably <= 0, or ``jump`` provably zero or not real.
    """

    rate: object = 1
    jump: object = 1

    def __post_init__(self):
        _set(self, "rate", check(as_exact(self.rate, "FreePoisson", "rate"), "positive", "FreePoisson", "rate"))
        _set(self, "jump", check(as_exact(self.jump, "FreePoisson", "jump"), "nonzero", "FreePoisson", "jump"))

    def _parameters(self):
        return (self.rate, self.jump)

    def _cumulant_formula(self, ring, k):
        lam, a = ring.convert(self.rate), ring.convert(self.jump)
        out = [ring.zero]
        p = lam
        for _ in range(k):
            p = p * a
            out.append(p)
        return out

    def _moment_formula(self, ring, k):
        # one reversion of χ(u) = u S(u)/(1 + u) = u/(α(u + λ)(1 + u)), whose Lagrange
        # inversion multiplies by a quadratic; the cumulant route (w/C(w), C dense) costs
        # far more in symbolic parameters
        return _cum.moments_from_s_transform(ring, self._s_formula(ring, k), k)

    def _r_closed(self):
        return self.rate * self.jump / (1 - self.jump * w)

    def _s_closed(self):
        return 1 / (self.jump * (u + self.rate))

    def _s_formula(self, ring, order):
        # S(u) = 1/(α(λ + u)) = (1/(αλ)) Σ_n (−u/λ)^n
        lam, a = ring.convert(self.rate), ring.convert(self.jump)
        c, q = ring.one / (a * lam), -(ring.one / lam)
        out = []
        for _ in range(order):
            out.append(c)
            c = c * q
        return out

    def _cauchy_closed(self):
        lam, a = self.rate, self.jump
        # roots of a z G^2 - (z + a - a lam) G + 1 = 0, written for a principal branch
        lo, hi = a * (1 - sp.sqrt(lam)) ** 2, a * (1 + sp.sqrt(lam)) ** 2
        return (z + a - a * lam - sp.sqrt(z - lo) * sp.sqrt(z - hi)) / (2 * a * z)

    def _zero_mass(self):
        if self.rate.is_number:
            return sp.Max(0, 1 - self.rate)
        return None

    def _infinitely_divisible(self):
        return True

    def _nonnegative(self):
        sg = sign(self.jump)
        return None if sg is None else sg > 0

    def _nonpositive(self):
        sg = sign(self.jump)
        return None if sg is None else sg < 0


def MarchenkoPastur(ratio, scale=1) -> FreePoisson:  # noqa: N802
    r"""The Marchenko–Pastur law ``MP(c)`` with mean ``scale`` and variance ``c·scale²``.

    ``MP(c)`` is the limit spectral law of ``XᵀX/m`` for ``X ∈ R^{m×p}`` i.i.d. N(0,1),
    ``c = p/m``; it has an atom ``1 − 1/c`` at 0 when ``c > 1`` (theory.md §1;
    [MS17] §2.2).  Returned as ``FreePoisson(rate=1/c, jump=c·scale)``.

    Raises
    ------
    FreeprobValueError
        If ``ratio`` is provably <= 0 or ``scale`` provably zero.
    """
    c = check(as_exact(ratio, "MarchenkoPastur", "ratio"), "positive", "MarchenkoPastur", "ratio")
    s = check(as_exact(scale, "MarchenkoPastur", "scale"), "nonzero", "MarchenkoPastur", "scale")
    return FreePoisson(rate=1 / c, jump=c * s)


@dataclass(frozen=True)
class CompoundFreePoisson(Law):
    r"""The compound free Poisson law ``π(ν, t)`` with rate ``t`` and jump law ``ν``.

    Free cumulants ``κ_n = t m_n(ν)``; ``R(w) = t ∫ x/(1 − xw) dν(x)``
    ([NS06] Lecture 12, Prop. 12.16; [MS17] §4.5).  It is the limit law of
    ``G D Gᵀ/n`` (n × n) with ``G ∈ R^{n×p}`` i.i.d. N(0,1), ``D`` of law ``ν`` and
    ``p/n → t``; its S-transform is ``S_ν(u/t)/(t + u)`` (theory.md §1).

    Parameters
    ----------
    rate : positive
    jump_law : Law
        Any law; ``FreePoisson(t, a)`` is ``CompoundFreePoisson(t, Dirac(a))``.

    Raises
    ------
    FreeprobValueError
        If ``rate`` is provably <= 0 or ``jump_law`` is not a :class:`Law`.
    """

    rate: object
    jump_law: Law

    def __post_init__(self):
        _set(self, "rate", check(as_exact(self.rate, "CompoundFreePoisson", "rate"), "positive",
                                 "CompoundFreePoisson", "rate"))
        if not isinstance(self.jump_law, Law):
            raise FreeprobValueError(
                f"`jump_law` of `CompoundFreePoisson` must be a Law; got {self.jump_law!r}"
            )

    def _parameters(self):
        return (self.rate,) + self.jump_law.parameters()

    def _cumulant_formula(self, ring, k):
        t = ring.convert(self.rate)
        m = self.jump_law._m(ring, k)
        return [ring.zero] + [t * x for x in m[1:]]

    def _r_closed(self):
        if isinstance(self.jump_law, Atomic):
            return self.rate * sp.Add(*[wt * x / (1 - x * w)
                                        for x, wt in zip(self.jump_law.points, self.jump_law.weights)])
        return None

    def _s_closed(self):
        try:
            s_nu = self.jump_law.s_transform()
        except NotImplementedError:
            return None
        return s_nu.subs(u, u / self.rate) / (self.rate + u)

    def _infinitely_divisible(self):
        return True

    def _zero_mass(self):
        # π(ν, t)({0}) = max(0, 1 − t ν(ℝ∖{0})) ([MS17] §4.5: the rank of G D Gᵀ is
        # min(n, p·ν(ℝ∖{0})) in the matrix model)
        nu0 = self.jump_law._zero_mass()
        if nu0 is None or not (self.rate.is_number and sp.sympify(nu0).is_number):
            return None
        return sp.Max(0, 1 - self.rate * (1 - nu0))

    def _nonnegative(self):
        return True if self.jump_law._nonnegative() is True else None
