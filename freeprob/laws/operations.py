r"""Operations on laws: free additive and multiplicative convolution, free powers,
polynomial pushforwards, shifts, dilations, mixtures and the rectangular companion.

Each operation returns a new immutable :class:`~freeprob.laws.law.Law` whose formula is
written against the ring-level sequences of its arguments, so exactness,
symbolic parameters and ball arithmetic carry through any composition.

References: [NS06]_ Lecture 12 (⊞ via cumulants), Lecture 14 and 18 (⊠, S-transform),
Lecture 14 Cor. 14.13 (⊞-powers μ^{⊞t}, t >= 1); [MS17]_ §2.4–2.6; [VOI87]_, [NS96]_
(:mod:`freeprob.references`).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from freeprob.core import cumulants as _cum
from freeprob.core.params import as_exact, check, sign
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.laws.law import Law, register
from freeprob.core.symbols import u, w, x, z

__all__ = ["free_add", "free_mul", "free_power", "pushforward", "shift", "dilate", "mixture",
           "rectangular_companion", "FreeAdd", "FreeMul", "FreePower", "Pushforward", "Shift",
           "Dilate", "Mixture", "RectangularCompanion"]


def _set(obj, name, value):
    object.__setattr__(obj, name, value)


def _law(obj, who, name):
    if not isinstance(obj, Law):
        raise FreeprobValueError(f"`{name}` of `{who}` must be a Law; got {type(obj).__name__} {obj!r}")
    return obj


def _half_line(law) -> bool:
    return law._nonnegative() is True or law._nonpositive() is True


# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FreeAdd(Law):
    r"""``μ_1 ⊞ μ_2 ⊞ …``: free cumulants add ([NS06] Lecture 12, Prop. 12.3)."""

    laws: tuple

    def _parameters(self):
        return tuple(p for law in self.laws for p in law.parameters())

    def _cumulant_formula(self, ring, k):
        out = [ring.zero] * (k + 1)
        for law in self.laws:
            out = [a + b for a, b in zip(out, law._kappa(ring, k))]
        return out

    def _r_closed(self):
        try:
            return sp.Add(*[law.r_transform() for law in self.laws])
        except NotImplementedError:
            return None

    def _infinitely_divisible(self):
        return all(law._infinitely_divisible() for law in self.laws)

    def _nonnegative(self):
        flags = [law._nonnegative() for law in self.laws]
        return True if all(f is True for f in flags) else None


def free_add(*laws) -> Law:
    r"""Free additive convolution ``μ_1 ⊞ μ_2 ⊞ …`` (two or more laws).

    The law of ``a_1 + a_2 + …`` for freely independent ``a_i`` of laws ``μ_i``:
    free cumulants add, ``R_{μ⊞ν} = R_μ + R_ν`` ([NS06] Lecture 12, Prop. 12.3;
    Lecture 16, Thm. 16.15; [MS17] §2.4).

    Raises
    ------
    FreeprobValueError
        Fewer than two arguments, or an argument that is not a :class:`Law`.

    Examples
    --------
    >>> import freeprob as fp
    >>> fp.free_add(fp.Bernoulli(), fp.Bernoulli()).moments(6)   # arcsine law
    (1, 0, 2, 0, 6, 0, 20)
    """
    if len(laws) < 2:
        raise FreeprobValueError(f"free_add needs at least two laws; got {len(laws)}")
    return FreeAdd(tuple(_law(law, "free_add", f"laws[{i}]") for i, law in enumerate(laws)))


# ---------------------------------------------------------------------------------
def _s_route_moments(ring, a, b, k):
    """Moments of a ⊠ b from S_a S_b (both means non-zero in ``ring``)."""
    if k == 0:
        return [ring.one]
    S = a._s(ring, k) * b._s(ring, k)                                   # order k
    return _cum.moments_from_s_transform(ring, S._c, k)


@dataclass(frozen=True)
class FreeMul(Law):
    r"""``μ ⊠ ν``: S-transforms multiply ([NS06] Lecture 18, Thm. 18.17)."""

    left: Law
    right: Law

    def __post_init__(self):
        _law(self.left, "free_mul", "left")
        _law(self.right, "free_mul", "right")
        means = [self.left._mean_exact(), self.right._mean_exact()]
        zero = [sign(m) == 0 for m in means]
        # the route (S-transform or interpolation) is chosen from the exact means, never
        # from a numeric zero test of a ball or float
        object.__setattr__(self, "_zero_mean", tuple(zero))
        if all(zero):
            raise FreeprobValueError(
                "free_mul: both laws have zero mean; the free multiplicative convolution "
                "(S-transform route, [NS06] Lecture 18) needs at least one factor with "
                f"non-zero mean; got means {means[0]} and {means[1]}"
            )
        if not (_half_line(self.left) or _half_line(self.right)):
            if self.left._nonnegative() is False and self.right._nonnegative() is False \
                    and self.left._nonpositive() is False and self.right._nonpositive() is False:
                raise FreeprobValueError(
                    "free_mul: μ ⊠ ν is a law only when one factor is supported on a half-line "
                    "[0, ∞) or (−∞, 0] (the law of √a b √a, or of its negative); neither factor is"
                )

    def _parameters(self):
        return self.left.parameters() + self.right.parameters()

    def _moment_formula(self, ring, k):
        a, b = self.left, self.right
        if not any(self._zero_mean):
            return _s_route_moments(ring, a, b, k)
        if self._zero_mean[0]:
            a, b = b, a
        # b has zero mean: m_n(a ⊠ (b + ε)) is a polynomial of degree <= n in ε;
        # evaluate at ε = 1..k+1 by the S-route and interpolate at ε = 0.
        rows = [_s_route_moments(ring, a, shift(b, e), k) for e in range(1, k + 2)]
        out = [ring.one]
        for n in range(1, k + 1):
            acc = ring.zero
            for j in range(1, n + 2):
                weight = ring.one
                for i in range(1, n + 2):
                    if i != j:
                        weight = weight * ring.convert(sp.Rational(i, i - j))
                acc = acc + weight * rows[j - 1][n]
            out.append(acc)
        return out

    def _cumulant_formula(self, ring, k):
        # R^{<-1>}(w) = w S(w): the free cumulants of μ ⊠ ν are one reversion of the
        # S-transform product ([NS06] Remark 18.16), not moments first and a second reversion
        if any(self._zero_mean):
            return None
        return _cum.free_cumulants_from_s_transform(ring, self._s(ring, k)._c, k)

    def _s_closed(self):
        try:
            return self.left.s_transform() * self.right.s_transform()
        except NotImplementedError:
            return None

    def _s_formula(self, ring, order):
        if any(self._zero_mean):
            return None
        return (self.left._s(ring, order) * self.right._s(ring, order))._c

    def _zero_mass(self):
        za, zb = self.left._zero_mass(), self.right._zero_mass()
        if za is None or zb is None:
            return None
        return sp.Max(za, zb)

    def _nonnegative(self):
        if self.left._nonnegative() is True and self.right._nonnegative() is True:
            return True
        return None


def free_mul(*laws) -> Law:
    r"""Free multiplicative convolution ``μ_1 ⊠ μ_2 ⊠ …`` (two or more laws).

    The law of ``√a b √a`` for free ``a ≥ 0`` and ``b``: ``S_{μ⊠ν} = S_μ S_ν``
    ([NS06] Lecture 18, Thm. 18.17; [MS17] §2.6; [VOI87]_).  Moments are one series
    reversion of ``χ(u) = u S(u)/(1 + u)`` built from the S-transform product, free
    cumulants one reversion of ``u S(u)`` ([NS06] Remark 18.16).  One factor may
    have zero mean (e.g. a centred semicircle): its moments are then obtained by
    exact polynomial interpolation in a shift ``ε`` of that factor, since
    ``m_n(a ⊠ (b + ε))`` is a polynomial of degree ≤ n in ε.

    Raises
    ------
    FreeprobValueError
        Fewer than two laws; two (or more) factors with zero mean; two factors that
        are provably not supported on [0, ∞).

    Examples
    --------
    >>> import freeprob as fp
    >>> fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(1)).moments(4)   # Fuss–Catalan
    (1, 1, 3, 12, 55)
    """
    if len(laws) < 2:
        raise FreeprobValueError(f"free_mul needs at least two laws; got {len(laws)}")
    laws = [_law(law, "free_mul", f"laws[{i}]") for i, law in enumerate(laws)]
    # put a zero-mean factor (if any) last so every binary step has one non-zero mean
    laws.sort(key=lambda law: sign(law._mean_exact()) == 0)
    out = laws[0]
    for law in laws[1:]:
        out = FreeMul(out, law)
    return out


# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FreePower(Law):
    r"""``μ^{⊞t}``: free cumulants times ``t`` ([NS06] Lecture 14, Cor. 14.13)."""

    law: Law
    t: object

    def __post_init__(self):
        _law(self.law, "free_power", "law")
        t = check(as_exact(self.t, "free_power", "t"), "positive", "free_power", "t")
        if sign(t - 1) not in (0, 1) and not self.law._infinitely_divisible():
            raise FreeprobValueError(
                f"free_power: μ^{{⊞t}} is a law for every t >= 1 ([NS06] Cor. 14.13), but for "
                f"t < 1 only when μ is ⊞-infinitely divisible; got t = {t} (not provably >= 1) "
                f"and {type(self.law).__name__}, which is not known to be infinitely divisible"
            )
        _set(self, "t", t)

    def _parameters(self):
        return self.law.parameters() + (self.t,)

    def _cumulant_formula(self, ring, k):
        t = ring.convert(self.t)
        return [c * t for c in self.law._kappa(ring, k)]

    def _r_closed(self):
        try:
            return self.t * self.law.r_transform()
        except NotImplementedError:
            return None

    def _infinitely_divisible(self):
        return self.law._infinitely_divisible()


def free_power(law, t) -> Law:
    r"""Free additive power ``μ^{⊞t}``, the law with free cumulants ``t κ_n(μ)``.

    Defined for every ``t >= 1`` and, for ``0 < t < 1``, for ⊞-infinitely divisible
    laws (semicircle, free Poisson, compound free Poisson, Dirac, and ⊞ of those)
    ([NS06] Lecture 14, Cor. 14.13; [NS96]_).

    Raises
    ------
    FreeprobValueError
        ``t`` provably <= 0; ``t`` not provably >= 1 for a law not known to be
        infinitely divisible.
    """
    return FreePower(law, t)


# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shift(Law):
    r"""``μ ⊞ δ_a``, the law of ``X + a``: ``κ_1`` shifts by ``a``."""

    law: Law
    a: object

    def __post_init__(self):
        _law(self.law, "shift", "law")
        _set(self, "a", check(as_exact(self.a, "shift", "a"), "real", "shift", "a"))

    def _parameters(self):
        return self.law.parameters() + (self.a,)

    def _cumulant_formula(self, ring, k):
        kappa = list(self.law._kappa(ring, k))
        if k >= 1:
            kappa[1] = kappa[1] + ring.convert(self.a)
        return kappa

    def _r_closed(self):
        try:
            return self.law.r_transform() + self.a
        except NotImplementedError:
            return None

    def _cauchy_closed(self):
        try:
            return self.law.cauchy_transform().subs(z, z - self.a)
        except NotImplementedError:
            return None

    def _infinitely_divisible(self):
        return self.law._infinitely_divisible()

    def _nonnegative(self):
        if self.law._nonnegative() is True and sign(self.a) in (0, 1):
            return True
        return None

    def _zero_mass(self):
        if sign(self.a) == 0:
            return self.law._zero_mass()
        # a law on [0, ∞) shifted right (or on (−∞, 0] shifted left) has no mass at 0
        if (self.law._nonnegative() is True and sign(self.a) == 1) or (
                self.law._nonpositive() is True and sign(self.a) == -1):
            return sp.Integer(0)
        return None

    def _known_levels(self):
        return tuple((pt + self.a, lev) for pt, lev in self.law._known_levels())


@register("shift")
def shift(law, a) -> Law:
    r"""The law of ``X + a`` (``μ ⊞ δ_a``): ``κ_1 → κ_1 + a``, ``R → R + a``,
    ``G(z) → G(z − a)`` ([MS17] §2.4).

    Raises
    ------
    FreeprobValueError
        ``a`` not real, or ``law`` not a :class:`Law`.
    """
    return Shift(law, a)


@dataclass(frozen=True)
class Dilate(Law):
    r"""The law of ``c X``: ``κ_n → c^n κ_n``."""

    law: Law
    c: object

    def __post_init__(self):
        _law(self.law, "dilate", "law")
        _set(self, "c", check(as_exact(self.c, "dilate", "c"), "nonzero", "dilate", "c"))

    def _parameters(self):
        return self.law.parameters() + (self.c,)

    def _cumulant_formula(self, ring, k):
        c = ring.convert(self.c)
        out, p = [], ring.one
        for kap in self.law._kappa(ring, k):
            out.append(kap * p)
            p = p * c
        return out

    def _r_closed(self):
        try:
            return self.c * self.law.r_transform().subs(w, self.c * w)
        except NotImplementedError:
            return None

    def _s_closed(self):
        try:
            return self.law.s_transform() / self.c
        except NotImplementedError:
            return None

    def _s_formula(self, ring, order):
        inv_c = ring.one / ring.convert(self.c)
        return [v * inv_c for v in self.law._s(ring, order)._c]

    def _cauchy_closed(self):
        try:
            return self.law.cauchy_transform().subs(z, z / self.c) / self.c
        except NotImplementedError:
            return None

    def _zero_mass(self):
        return self.law._zero_mass()

    def _dilation(self):
        """``(X, c)`` for a number ``c > 0``: the numerics of ``cX`` go through those of ``X``
        (:class:`freeprob.numeric.scaled.ScaledCauchy`; support edges ``c·e``, exact when those of
        ``X`` are, also for an irrational ``c``), else ``None`` (the Cauchy equation of ``cX``)."""
        c = self.c
        return (self.law, c) if c.is_number and not c.has(sp.Float) and sign(c) == 1 else None

    def _known_levels(self):
        # P(cX ≤ cx) = F(x) for c > 0, 1 − F(x) for c < 0 (x in a flat stretch: no atom)
        sc = sign(self.c)
        if sc not in (1, -1):
            return ()
        return tuple((self.c * pt, lev if sc == 1 else 1 - lev) for pt, lev in self.law._known_levels())

    def _infinitely_divisible(self):
        return self.law._infinitely_divisible()

    def _nonnegative(self):
        sc = sign(self.c)
        return self.law._nonnegative() if sc == 1 else (self.law._nonpositive() if sc == -1 else None)

    def _nonpositive(self):
        sc = sign(self.c)
        return self.law._nonpositive() if sc == 1 else (self.law._nonnegative() if sc == -1 else None)


@register("dilate")
def dilate(law, c) -> Law:
    r"""The law of ``c X`` for real ``c != 0``: ``κ_n → c^n κ_n``, ``R(w) → c R(c w)``,
    ``S(u) → S(u)/c``, ``G(z) → G(z/c)/c`` ([MS17] §2.4, §2.6).

    Raises
    ------
    FreeprobValueError
        ``c`` provably zero or not real.
    """
    return Dilate(law, c)


# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pushforward(Law):
    r"""The law of ``p(X)`` for a real polynomial ``p`` (coefficients ascending)."""

    law: Law
    coefficients: tuple

    def __post_init__(self):
        _law(self.law, "pushforward", "law")
        coeffs = tuple(check(as_exact(c, "pushforward", f"coefficients[{i}]"), "real",
                             "pushforward", f"coefficients[{i}]")
                       for i, c in enumerate(self.coefficients))
        while len(coeffs) > 1 and coeffs[-1].is_zero:
            coeffs = coeffs[:-1]
        if len(coeffs) < 2:
            raise FreeprobValueError(
                "pushforward: the polynomial must have degree >= 1 (a constant maps every law "
                "to a Dirac mass: use Dirac(c))"
            )
        _set(self, "coefficients", coeffs)

    @property
    def polynomial(self):
        """The polynomial ``p`` as a sympy expression in :data:`freeprob.core.symbols.x`."""
        return sp.Add(*[c * x**i for i, c in enumerate(self.coefficients)])

    def _parameters(self):
        return self.law.parameters() + self.coefficients

    def _zero_mass(self):
        # p(0) = 0 and p(x) > 0 for x > 0 (coefficients >= 0) on a law on [0, ∞): p(X) = 0
        # exactly when X = 0
        c = self.coefficients
        if (self.law._nonnegative() is True and c[0] == 0
                and all(ci.is_number and sign(ci) >= 0 for ci in c[1:])
                and any(sign(ci) == 1 for ci in c[1:])):
            return self.law._zero_mass()
        return None

    def _nonnegative(self):
        c = self.coefficients
        if self.law._nonnegative() is True and all(ci.is_number and sign(ci) >= 0 for ci in c):
            return True
        return None

    def _moment_formula(self, ring, k):
        d = len(self.coefficients) - 1
        m = self.law._m(ring, d * k)
        p = [ring.convert(c) for c in self.coefficients]
        out, power = [ring.one], [ring.one]
        for j in range(1, k + 1):
            power = ring.mul(power, p, d * j + 1)
            s = ring.zero
            for i, c in enumerate(power):
                s = s + c * m[i]
            out.append(s)
        return out


def pushforward(law, polynomial, var=None) -> Law:
    r"""The law of ``p(X)``, ``X ~ law``: ``m_n(p_# μ) = ∫ p(x)^n dμ(x)``.

    Parameters
    ----------
    law : Law
    polynomial : sympy expression, sympy ``Poly`` or sequence
        A real polynomial: an expression in ``var`` (default
        :data:`freeprob.core.symbols.x`), a ``Poly`` in one generator, or the ascending
        coefficients ``(c_0, c_1, …, c_d)``.  Coefficients may be symbolic.
    var : sympy.Symbol, optional
        The variable of an expression ``polynomial``.

    Returns
    -------
    Law
        Affine polynomials give :func:`shift`/:func:`dilate`; others a
        :class:`Pushforward` law (moments need ``d·k`` moments of ``law``).

    Raises
    ------
    FreeprobValueError
        Not a polynomial in ``var``, a constant, or non-real coefficients.

    Notes
    -----
    Used for the within-head tied K/V law, the pushforward of a free Poisson law by
    the covariance polynomial φ_KV (theory.md §3.4; paper §C.2.1).
    """
    _law(law, "pushforward", "law")
    if var is not None and not isinstance(var, sp.Symbol):
        raise FreeprobValueError(f"pushforward: var must be a sympy Symbol; got {var!r}")
    if isinstance(polynomial, sp.Basic) and not isinstance(polynomial, sp.Expr | sp.Poly):
        raise FreeprobValueError(f"pushforward: polynomial must be an expression, not {polynomial!r}")
    if isinstance(polynomial, sp.MatrixBase):
        raise FreeprobValueError(f"pushforward: polynomial must be an expression, not a matrix")
    if isinstance(polynomial, sp.Poly):
        if len(polynomial.gens) != 1:
            raise FreeprobValueError(f"pushforward: need a polynomial in one variable; got {polynomial}")
        coeffs = list(reversed(polynomial.all_coeffs()))
    elif isinstance(polynomial, sp.Basic) or isinstance(polynomial, str):
        if isinstance(polynomial, str):
            raise FreeprobValueError("pushforward: pass a sympy expression, Poly or coefficient list, not a string")
        v = x if var is None else var
        try:
            poly = sp.Poly(polynomial, v)
        except sp.PolynomialError as exc:
            raise FreeprobValueError(f"pushforward: {polynomial} is not a polynomial in {v}") from exc
        if any(v in c.free_symbols for c in poly.coeffs()):
            raise FreeprobValueError(f"pushforward: {polynomial} is not a polynomial in {v}")
        coeffs = list(reversed(poly.all_coeffs()))
    else:
        try:
            coeffs = list(polynomial)
        except TypeError as exc:
            raise FreeprobValueError(
                f"pushforward: polynomial must be a sympy expression, Poly or coefficient sequence; got {polynomial!r}"
            ) from exc
    coeffs = [as_exact(c, "pushforward", f"coefficients[{i}]") for i, c in enumerate(coeffs)]
    while len(coeffs) > 1 and coeffs[-1].is_zero:
        coeffs.pop()
    if len(coeffs) == 2:
        out = law if coeffs[1] == 1 else dilate(law, coeffs[1])
        return out if coeffs[0] == 0 else shift(out, coeffs[0])
    return Pushforward(law, tuple(coeffs))


# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mixture(Law):
    r"""``Σ_i w_i μ_i``: moments are weighted averages."""

    laws: tuple
    weights: tuple

    def __post_init__(self):
        laws = tuple(_law(law, "mixture", f"laws[{i}]") for i, law in enumerate(self.laws))
        if not laws:
            raise FreeprobValueError("mixture: need at least one law")
        wts = tuple(self.weights)
        if len(wts) != len(laws):
            raise FreeprobValueError(f"mixture: got {len(laws)} laws but {len(wts)} weights; they must match")
        wts = tuple(check(as_exact(v, "mixture", f"weights[{i}]"), "nonnegative", "mixture", f"weights[{i}]")
                    for i, v in enumerate(wts))
        if sign(sp.Add(*wts) - 1) in (1, -1):
            raise FreeprobValueError(
                f"mixture: the weights must sum to 1; they sum to {sp.Add(*wts)} (floats are read "
                "as the rational they print as: pass exact fractions such as sympy.Rational(1, 3))"
            )
        _set(self, "laws", laws)
        _set(self, "weights", wts)

    def _parameters(self):
        return tuple(p for law in self.laws for p in law.parameters()) + self.weights

    def _moment_formula(self, ring, k):
        out = [ring.zero] * (k + 1)
        for law, wt in zip(self.laws, self.weights):
            c = ring.convert(wt)
            out = [a + c * b for a, b in zip(out, law._m(ring, k))]
        return out

    def _cauchy_closed(self):
        try:
            return sp.Add(*[wt * law.cauchy_transform() for law, wt in zip(self.laws, self.weights)])
        except NotImplementedError:
            return None

    def _zero_mass(self):
        masses = [law._zero_mass() for law in self.laws]
        if any(m is None for m in masses):
            return None
        return sp.Add(*[wt * m for wt, m in zip(self.weights, masses)])

    def _nonnegative(self):
        return True if all(law._nonnegative() is True for law in self.laws) else None

    def _known_levels(self):
        """The cdf in the gaps between the components' hulls (``[min, max]`` of support and
        atoms, exact): the sum of the weights below; inside a component's own known flat
        stretch away from the other hulls, that sum plus its weight times its level."""
        parts = []
        for law, wt in zip(self.laws, self.weights):
            if sign(wt) == 0:
                continue
            hull = _hull(law)
            if hull is None:
                return ()
            parts.append((hull, wt, law))
        parts.sort(key=lambda t: float(sp.N(t[0][0], 30)))
        out = []
        for k, ((lo, hi), wt, law) in enumerate(parts):
            below = sp.Add(*[w_ for (h, w_, _) in parts[:k]])
            if k and all(sign(h[1] - lo) == -1 for h, _, _ in parts[:k]):   # a gap below
                top = max((h[1] for h, _, _ in parts[:k]), key=lambda v: float(sp.N(v, 30)))
                out.append(((top + lo) / 2, below))
            others = [h for j, (h, _, _) in enumerate(parts) if j != k]
            for pt, lev in law._known_levels():
                if all(sign(pt - h[0]) == -1 or sign(pt - h[1]) == 1 for h in others):
                    out.append((pt, below + wt * lev))
        return tuple(out)


def _hull(law):
    """``(min, max)`` of the support and atoms of ``law``, exact sympy numbers, or ``None``
    (numeric edges, unbounded support, no Cauchy equation, symbols)."""
    try:
        ends = [v for ab in law.support(dps=15) for v in ab] + [a for a, _ in law.atoms(dps=15)]
    except (NotAvailable, PrecisionError, FreeprobValueError, NotImplementedError):
        return None
    if not ends or not all(isinstance(v, sp.Basic) and v.is_finite for v in ends):
        return None
    vals = [float(sp.N(v, 30)) for v in ends]
    return ends[vals.index(min(vals))], ends[vals.index(max(vals))]


def mixture(laws, weights=None) -> Law:  # noqa: D417
    r"""The mixture ``Σ_i w_i μ_i`` (the spectral law of a block-diagonal matrix whose
    blocks, of relative sizes ``w_i``, have spectral laws ``μ_i``).

    Parameters
    ----------
    laws : sequence of Law
    weights : sequence, optional
        Non-negative, summing to 1; uniform when omitted.

    Raises
    ------
    FreeprobValueError
        Empty ``laws``, length mismatch, a provably negative weight, weights provably
        not summing to 1.
    """
    if isinstance(laws, Law) or isinstance(laws, str | bytes | dict) or not hasattr(laws, "__iter__"):
        raise FreeprobValueError(f"mixture: `laws` must be a sequence of Law objects; got {laws!r}")
    laws = tuple(laws)
    if weights is None:
        weights = tuple(sp.Rational(1, len(laws)) for _ in laws) if laws else ()
    return Mixture(laws, tuple(weights))


# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class RectangularCompanion(Law):
    r"""``c μ + (1 − c) δ_0``: the law of ``XᵀX/n`` from the law ``μ`` of ``XXᵀ/n``."""

    law: Law
    ratio: object

    def __post_init__(self):
        _law(self.law, "rectangular_companion", "law")
        c = check(as_exact(self.ratio, "rectangular_companion", "ratio"), "positive",
                  "rectangular_companion", "ratio")
        if sign(c - 1) == 1:
            need = 1 - 1 / c
            zero = self.law._zero_mass()
            if zero is None or sign(zero - need) != 0 and sign(zero - need) != 1:
                have = "unknown" if zero is None else str(zero)
                raise FreeprobValueError(
                    f"rectangular_companion: ratio p/n = {c} > 1 needs an atom of mass at least "
                    f"1 − 1/ratio = {need} at 0 in the law of XXᵀ/n (p × p, rank <= n); its "
                    f"mass at 0 is {have}"
                )
        _set(self, "ratio", c)

    def _parameters(self):
        return self.law.parameters() + (self.ratio,)

    def _moment_formula(self, ring, k):
        c = ring.convert(self.ratio)
        m = self.law._m(ring, k)
        return [ring.one] + [c * v for v in m[1:]]

    def _cauchy_closed(self):
        try:
            return self.ratio * self.law.cauchy_transform() + (1 - self.ratio) / z
        except NotImplementedError:
            return None

    def _s_closed(self):
        # S of c μ + (1-c) δ_0 is (1+u)/(c+u) · S_μ(u/c)   (theory.md §1)
        try:
            return (1 + u) / (self.ratio + u) * self.law.s_transform().subs(u, u / self.ratio)
        except NotImplementedError:
            return None

    def _zero_mass(self):
        zm = self.law._zero_mass()
        return None if zm is None else self.ratio * zm + 1 - self.ratio

    def _nonnegative(self):
        return self.law._nonnegative()


def rectangular_companion(law, ratio) -> Law:
    r"""From the law ``μ`` of ``X Xᵀ/n`` (``X`` of size p × n) to the law of ``Xᵀ X/n``.

    The two Grams share their non-zero eigenvalues, so the n × n law is
    ``(p/n) μ + (1 − p/n) δ_0``: moments ``m_k → (p/n) m_k`` for k >= 1
    (theory.md §1, "mixing with δ_0"; [MS17] §4.5 for the Marchenko–Pastur case).

    Parameters
    ----------
    law : Law
        Spectral law of the p × p Gram ``X Xᵀ/n``.
    ratio : positive
        ``p/n``.  A ratio above 1 requires ``μ`` to have an atom of mass at least
        ``1 − n/p`` at 0 (``X Xᵀ`` has rank at most n).

    Raises
    ------
    FreeprobValueError
        ``ratio`` provably <= 0, or > 1 without the needed atom at 0.

    Examples
    --------
    >>> import freeprob as fp
    >>> c = fp.Rational(1, 2)                      # X of size (n/2) × n
    >>> gram = fp.MarchenkoPastur(c)               # law of X Xᵀ/n: mean 1, variance c
    >>> fp.rectangular_companion(gram, c).moments(3) == fp.FreePoisson(rate=c).moments(3)
    True
    """
    return RectangularCompanion(law, ratio)
