r"""The exact ``1/n`` moment corrections of every law with a real finite-n matrix model.

For the finite-n model ``X_n`` of a law ``μ`` (docs/guide/finite-n.md) the expected
normalized moments are ``E tr_n X_n^j = m_j(μ) + c_j/n + O(n^{-2})``.  This module gives
the exact ``c_0 = 0, c_1, …, c_k`` of every covered law (:func:`corrections`), in the
law's exact coefficient ring (rationals, symbolic parameters), by the rules of
docs/theory.md §"The 1/n term":

* **canonical part** ``M⁺(μ)``: the correction whose Cauchy transform is
  ``−F''/(2F')``, ``F = 1/G`` (infinitesimal R-transform ``Ψ(w) = −½ (log(1 − w²R'(w)))'``);
  the GOE, the real Wishart and the real sample covariance with a deterministic population
  (Bai–Silverstein's mean, [BS04]_) have exactly this correction;
* **multiplicative canonical part** ``M^×(μ)``: the correction whose S-perturbation is
  ``S₁/S = ½ (log(1 + u(1+u) S'/S))'``;
* ``⊞`` (``X + O Y Oᵀ``, ``O`` Haar orthogonal): ``c − c^{M⁺}`` propagates by the
  derivative of ``⊞`` (infinitesimal freeness, [BS12]_), and ``c^{M⁺}`` of the sum is added
  (derived by the Schwinger–Dyson equations of the orthogonal group, docs/theory.md);
* ``⊠`` (``√X O Y Oᵀ √X``): the same with ``M^×``;
* linear operations (shift, dilation, polynomial push-forward, block mixture, the
  rectangular companion): the signed correction measure is mapped like a measure;
* deterministic atomic laws (``O D Oᵀ``): ``c = 0``.

The derivative of an operation is its exact formula run over dual numbers
(:mod:`freeprob.core.dual`) on operands whose moments carry their corrections as ``ε``
parts (:class:`_Perturbed`).

Refused (:class:`~freeprob.errors.NotAvailable`): laws with no orthogonally invariant
model here (polynomials in free variables, the attention laws), free powers ``μ^{⊞t}``
with non-integer ``t`` of a law that is not a family closed under them.

References: [BS04]_, [BS12]_, [RED14]_, [MP13]_, [MIN19]_, [FMNS19]_, [CM25]_, [MS17]_.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch

import sympy as sp

from freeprob.core import cumulants as _cum
from freeprob.core.dual import Dual, DualRing
from freeprob.core.params import sign
from freeprob.core.series import TruncatedSeries
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.laws.families import Atomic, CompoundFreePoisson, FreePoisson, Semicircle
from freeprob.laws.law import Law
from freeprob.laws.operations import (
    Dilate,
    FreeAdd,
    FreeMul,
    FreePower,
    Mixture,
    Pushforward,
    RectangularCompanion,
    Shift,
)

__all__ = ["corrections", "additive_canonical", "multiplicative_canonical", "model",
           "check_sizes", "is_canonical", "COVERED"]

#: the laws with a finite-n model, for the messages
COVERED = ("Semicircle (GOE), FreePoisson (real Wishart), CompoundFreePoisson (real sample "
           "covariance), Atomic/Dirac/Bernoulli (O D Oᵀ, D deterministic diagonal), and "
           "free_add, free_mul, free_power (integer t, or t real for a semicircle, free "
           "Poisson or compound free Poisson with an atomic jump law), shift, dilate, "
           "pushforward, mixture, rectangular_companion of those")


# -- operands whose moments carry their corrections as ε parts ------------------------
@dataclass(frozen=True, eq=False)
class _Perturbed(Law):
    """``base`` whose moments over ``DualRing(ring)`` are ``m_j + ε eps[j]`` (internal)."""

    base: Law
    ring: object
    eps: tuple

    def _parameters(self):
        return self.base.parameters()

    def _moment_formula(self, ring, k):
        if isinstance(ring, DualRing):
            if ring.base != self.ring or k >= len(self.eps):
                raise FreeprobValueError("finite_n: internal error (perturbed operand at another ring or order)")
            m = self.base._m(ring.base, k)
            return [Dual(a, b) for a, b in zip(m, self.eps[:k + 1])]
        return self.base._m(ring, k)

    def _zero_mass(self):
        return self.base._zero_mass()

    def _infinitely_divisible(self):
        return self.base._infinitely_divisible()

    def _nonnegative(self):
        return self.base._nonnegative()

    def _nonpositive(self):
        return self.base._nonpositive()


def _eps_part(law, ring, k):
    """The ``ε`` parts of ``law``'s moments over ``DualRing(ring)`` (``law`` built on
    :class:`_Perturbed` operands)."""
    D = DualRing(ring)
    with ring.context():
        return [D.convert(v).b for v in law._m(D, k)]


def _moments_from_dual_cumulants(ring, kappa, kprime):
    D = DualRing(ring)
    with ring.context():
        vals = _cum.moments_from_free_cumulants(D, [Dual(a, b) for a, b in zip(kappa, kprime)])
    return [ring.zero] + [v.b for v in vals[1:]]


# -- the canonical parts ------------------------------------------------------------
def additive_canonical(law, ring, k):
    r"""``c_0 … c_k`` of ``M⁺(μ)``: infinitesimal free cumulants ``κ'_j = [w^{j−1}] Ψ(w)``,
    ``Ψ(w) = −½ d/dw log(1 − w² R'(w))`` (``R`` the R-transform of ``law``; docs/theory.md
    §"The 1/n term").  Exact in ``ring``."""
    kappa = law._kappa(ring, k)
    if k == 0:
        return [ring.zero]
    with ring.context():
        s = [ring.one] + [ring.zero] * k
        for j in range(2, k + 1):
            s[j] = -(kappa[j] * (j - 1))
        dlog = TruncatedSeries._raw(s, k + 1, ring).log().derivative()._c     # orders 0..k-1
        kprime = [ring.zero] + [-(dlog[j - 1] / 2) for j in range(1, k + 1)]
    return _moments_from_dual_cumulants(ring, kappa, kprime)


def _moments_from_s(ring, S, k):
    """``m_0 … m_k`` from the S-transform series ``S`` (order ≥ k, any ring)."""
    if k == 0:
        return [ring.one]
    one_plus_u = TruncatedSeries._raw([ring.one, ring.one], k, ring)
    chi = (S.truncate(k) / one_plus_u).shift(1)
    psi = chi.reversion()
    return [ring.one] + list(psi._c[1:k + 1])


def multiplicative_canonical(law, ring, k):
    r"""``c_0 … c_k`` of ``M^×(μ)``: the perturbation ``S → S(1 + ε x)`` with
    ``x(u) = ½ d/du log(1 + u(1 + u) S'(u)/S(u))`` (needs a non-zero mean; docs/theory.md)."""
    if sign(law._mean_exact()) == 0:
        raise NotAvailable("finite_n: the multiplicative canonical part needs a non-zero mean")
    if k == 0:
        return [ring.zero]
    with ring.context():
        S = law._s(ring, k + 2)
        dlogS = S.derivative() / S.truncate(k + 1)                         # order k+1
        u_1pu = TruncatedSeries._raw([ring.zero, ring.one, ring.one], k + 1, ring)
        lam = TruncatedSeries._raw([ring.one], k + 1, ring) + u_1pu * dlogS
        x = lam.log().derivative()                                        # order k
        D = DualRing(ring)
        Sx = S.truncate(k) * x.truncate(k)                                 # S₁ = S·x/2
        Sd = TruncatedSeries._raw([Dual(a, b / 2) for a, b in zip(S._c[:k], Sx._c)], k, D)
        vals = _moments_from_s(D, Sd, k)
    return [ring.zero] + [D.convert(v).b for v in vals[1:]]


# -- the rules ----------------------------------------------------------------------
@singledispatch
def _rule(law, ring, k):
    raise NotAvailable(
        f"finite_n: no finite-n matrix model for {type(law).__name__}; covered: {COVERED}")


def corrections(law, ring, k):
    r"""The exact corrections ``[c_0 = 0, c_1, …, c_k]`` of the real model of ``law`` in
    ``ring`` (cached on the law).

    Raises
    ------
    NotAvailable
        ``law`` (or an operand) has no finite-n model here; the message lists the covered
        laws.
    """
    key = (ring, "finite_n_c")
    hit = law._cache.get(key)
    if hit is not None and len(hit) > k:
        return hit[:k + 1]
    vals = list(_rule(law, ring, k))
    vals[0] = ring.zero
    law._cache[key] = vals
    return vals[:k + 1]


@_rule.register
def _(law: Semicircle, ring, k):
    return additive_canonical(law, ring, k)


@_rule.register
def _(law: FreePoisson, ring, k):
    return additive_canonical(law, ring, k)


@_rule.register
def _(law: Atomic, ring, k):
    return [ring.zero] * (k + 1)


@_rule.register
def _(law: CompoundFreePoisson, ring, k):
    # Bai–Silverstein's mean with the population law ν = the spectrum of D (size p = tn),
    # plus the linear response to D's own correction (in 1/n units: c^ν/t).
    base = additive_canonical(law, ring, k)
    nu_c = corrections(law.jump_law, ring, k)
    if all(ring.is_zero(v) for v in nu_c):
        return base
    with ring.context():
        inv_t = ring.one / ring.convert(law.rate)
        eps = tuple(v * inv_t for v in nu_c)
    lin = _eps_part(CompoundFreePoisson(law.rate, _Perturbed(law.jump_law, ring, eps)), ring, k)
    return [a + b for a, b in zip(base, lin)]


@_rule.register
def _(law: Shift, ring, k):
    return _eps_part(Shift(_Perturbed(law.law, ring, tuple(corrections(law.law, ring, k))), law.a),
                     ring, k)


@_rule.register
def _(law: Dilate, ring, k):
    return _eps_part(Dilate(_Perturbed(law.law, ring, tuple(corrections(law.law, ring, k))), law.c),
                     ring, k)


@_rule.register
def _(law: Pushforward, ring, k):
    d = len(law.coefficients) - 1
    child = tuple(corrections(law.law, ring, d * k))
    return _eps_part(Pushforward(_Perturbed(law.law, ring, child), law.coefficients), ring, k)


@_rule.register
def _(law: Mixture, ring, k):
    out = [ring.zero] * (k + 1)
    for sub, wt in zip(law.laws, law.weights):
        if sign(wt) == 0:
            continue
        out = [a + b for a, b in zip(out, corrections(sub, ring, k))]
    return out


@_rule.register
def _(law: RectangularCompanion, ring, k):
    return corrections(law.law, ring, k)


def _rho(law, ring, k, canonical):
    with ring.context():
        return tuple(a - b for a, b in zip(corrections(law, ring, k), canonical(law, ring, k)))


@_rule.register
def _(law: FreeAdd, ring, k):
    ops = tuple(_Perturbed(sub, ring, _rho(sub, ring, k, additive_canonical)) for sub in law.laws)
    lin = _eps_part(FreeAdd(ops), ring, k)
    return [a + b for a, b in zip(additive_canonical(law, ring, k), lin)]


def _power_is_modelled(law, t):
    if sign(t - sp.floor(t)) == 0:
        return True
    return is_canonical(law)


@_rule.register
def _(law: FreePower, ring, k):
    if not _power_is_modelled(law.law, law.t):
        raise NotAvailable(
            f"finite_n: free_power(μ, t) with t = {law.t} not an integer has a finite-n model "
            "(a matrix of the same family) only for a semicircle, free Poisson or compound "
            f"free Poisson law with an atomic jump law; got {type(law.law).__name__}. An "
            "integer t is the sum of t independent copies")
    lin = _eps_part(FreePower(_Perturbed(law.law, ring, _rho(law.law, ring, k, additive_canonical)),
                              law.t), ring, k)
    return [a + b for a, b in zip(additive_canonical(law, ring, k), lin)]


def _free_mul_nonzero(left, right, ring, k):
    ops = [_Perturbed(sub, ring, _rho(sub, ring, k, multiplicative_canonical)) for sub in (left, right)]
    lin = _eps_part(FreeMul(*ops), ring, k)
    return [a + b for a, b in zip(multiplicative_canonical(FreeMul(left, right), ring, k), lin)]


@_rule.register
def _(law: FreeMul, ring, k):
    a, b = law.left, law.right
    if not any(law._zero_mean):
        return _free_mul_nonzero(a, b, ring, k)
    if law._zero_mean[0]:
        a, b = b, a
    # b has zero mean: c_j(a ⊠ (b + e)) is a polynomial of degree <= j in e (the exact
    # finite-n moments of √A (B + e) √A are); interpolate at e = 0 from e = 1 … k+1.
    rows = [_free_mul_nonzero(a, Shift(b, sp.Integer(e)), ring, k) for e in range(1, k + 2)]
    out = [ring.zero]
    with ring.context():
        for j in range(1, k + 1):
            acc = ring.zero
            for e in range(1, j + 2):
                weight = ring.one
                for i in range(1, j + 2):
                    if i != e:
                        weight = weight * ring.convert(sp.Rational(i, i - e))
                acc = acc + weight * rows[e - 1][j]
            out.append(acc)
    return out


# -- structure: canonical laws, models, sizes -----------------------------------------
def power_model(law, t) -> Law:
    r"""The law of the same family whose model is that of ``free_power(law, t)`` (any ``t``
    for a law that :func:`is_canonical`; for an integer ``t`` it has the law of the sum of
    ``t`` copies): ``t`` pushed into the family parameters (``Semicircle(a, v)`` →
    ``Semicircle(ta, tv)``, ``FreePoisson(λ, α)`` → ``FreePoisson(tλ, α)``, the compound free
    Poisson's rate, a Dirac's point; through shifts (``a → ta``), dilations, free sums and
    free powers).  Its model's sizes are those of ``free_power(law, t)`` (:func:`check_sizes`:
    ``free_power(FreePoisson(1), 3/2)`` at ``n`` needs ``3n/2`` columns, as
    ``FreePoisson(3/2)``).

    Raises ``NotAvailable`` for a law that is not :func:`is_canonical` (no family closed under
    non-integer powers: such a power has no finite-n matrix model here).  Source: docs/theory.md §13
    (the matrix models); [NS06]_ (the free cumulants of μ^{⊞t} are t·κ_j(μ))."""
    if isinstance(law, Semicircle):
        return Semicircle(t * law.mean, t * law.variance)
    if isinstance(law, FreePoisson):
        return FreePoisson(t * law.rate, law.jump)
    if isinstance(law, CompoundFreePoisson) and isinstance(law.jump_law, Atomic):
        return CompoundFreePoisson(t * law.rate, law.jump_law)
    if isinstance(law, Atomic) and len(law.points) == 1:
        return Atomic((t * law.points[0],))
    if isinstance(law, Shift):
        return Shift(power_model(law.law, t), t * law.a)
    if isinstance(law, Dilate):
        return Dilate(power_model(law.law, t), law.c)
    if isinstance(law, FreeAdd):
        return FreeAdd(tuple(power_model(sub, t) for sub in law.laws))
    if isinstance(law, FreePower):
        return power_model(law.law, t * law.t)
    return _rule(FreePower(law, t), None, 0)


def is_canonical(law) -> bool:
    """True if ``law``'s model is known to have exactly the canonical correction ``M⁺``
    (GOE, real Wishart, real sample covariance with an atomic population, Dirac, and their
    shifts, dilations, free sums and free powers)."""
    if isinstance(law, Semicircle | FreePoisson):
        return True
    if isinstance(law, CompoundFreePoisson):
        return isinstance(law.jump_law, Atomic)
    if isinstance(law, Atomic):
        return len(law.points) == 1
    if isinstance(law, Shift | Dilate):
        return is_canonical(law.law)
    if isinstance(law, FreeAdd):
        return all(is_canonical(sub) for sub in law.laws)
    if isinstance(law, FreePower):
        return is_canonical(law.law)
    return False


def model(law, field="real") -> str:
    """A one-line description of the finite-n matrix model of ``law`` (docs/guide/finite-n.md).

    Raises ``NotAvailable`` for a law with no model."""
    real = field == "real"
    G = "real" if real else "complex"
    if isinstance(law, Semicircle):
        base = "GOE (A + Aᵀ)/√(2n)" if real else "GUE (A + A*)/√(2n)"
        return f"{law.mean} + √{law.variance}·{base}" if (law.mean, law.variance) != (0, 1) else base
    if isinstance(law, FreePoisson):
        return (f"{law.jump}·G G{'ᵀ' if real else '*'}, G an n × {law.rate}n {G} matrix of "
                "N(0, 1/n) entries")
    if isinstance(law, CompoundFreePoisson):
        return (f"G D G{'ᵀ' if real else '*'}, G an n × {law.rate}n {G} Gaussian N(0, 1/n) "
                f"matrix, D ({law.rate}n × {law.rate}n) the model of {model(law.jump_law, field)}")
    if isinstance(law, Atomic):
        return "O D Oᵀ, D diagonal with eigenvalues " + ", ".join(
            f"{x} (multiplicity {w}·n)" for x, w in zip(law.points, law.weights))
    if isinstance(law, Shift):
        return f"({model(law.law, field)}) + {law.a}·I"
    if isinstance(law, Dilate):
        return f"{law.c}·({model(law.law, field)})"
    if isinstance(law, FreeAdd):
        return " + ".join(f"({model(sub, field)})" for sub in law.laws) + ", independent"
    if isinstance(law, FreeMul):
        return (f"√X Y √X, X = {model(law.left, field)}, Y = {model(law.right, field)}, "
                "independent")
    if isinstance(law, FreePower):
        if is_canonical(law.law) or sign(law.t - sp.floor(law.t)) != 0:
            return (f"{model(power_model(law.law, law.t), field)} (the same family at t = {law.t} "
                    "times its rate/variance)")
        return f"sum of {law.t} independent copies of ({model(law.law, field)})"
    if isinstance(law, Pushforward):
        return f"p(X), p = {law.polynomial}, X = {model(law.law, field)}"
    if isinstance(law, Mixture):
        return "block diagonal, rotated by a Haar matrix: " + "; ".join(
            f"{w}·n × {w}·n block ({model(sub, field)})" for sub, w in zip(law.laws, law.weights))
    if isinstance(law, RectangularCompanion):
        return (f"Xᵀ X (n × n) where X X{'ᵀ' if real else '*'} ({law.ratio}n × {law.ratio}n) is "
                f"{model(law.law, field)}")
    return _registered(law)


def _registered(law):
    """The name of a law whose rule was registered elsewhere (an extension), else the
    :class:`NotAvailable` of the default rule."""
    if _rule.dispatch(type(law)) is _rule.dispatch(object):
        _rule(law, None, 0)
    return f"the model registered for {type(law).__name__}"


def _integer_size(size, what):
    size = sp.nsimplify(size)
    if size.is_number and not (size.is_integer and size >= 0):
        raise FreeprobValueError(
            f"finite_n: the model needs {what} = {size} to be a whole number; choose n so "
            "that it is (or pass a symbolic n)")


def check_sizes(law, N):
    r"""Check that every dimension and multiplicity of the model of ``law`` at size ``N``
    (an integer, or a sympy expression for symbolic ``n``) is a whole number.

    Raises
    ------
    FreeprobValueError
        A block, a rank or an eigenvalue multiplicity is not a whole number at this ``n``
        (e.g. ``FreePoisson(1/3)`` at ``n = 100``: ``G`` would be ``100 × 100/3``).
    NotAvailable
        No model for ``law``.
    """
    if isinstance(law, FreePoisson):
        _integer_size(law.rate * N, f"the number of columns rate·n ({law.rate}·{N})")
    elif isinstance(law, CompoundFreePoisson):
        p = law.rate * N
        _integer_size(p, f"the population size rate·n ({law.rate}·{N})")
        check_sizes(law.jump_law, p)
    elif isinstance(law, Atomic):
        for x, wt in zip(law.points, law.weights):
            _integer_size(wt * N, f"the multiplicity of the eigenvalue {x} ({wt}·{N})")
    elif isinstance(law, FreePower) and (is_canonical(law.law) or sign(law.t - sp.floor(law.t)) != 0):
        # a power that stays in its family (any t) is that family member, with its sizes (the
        # sum of t copies has the same law where the copies' sizes are whole)
        check_sizes(power_model(law.law, law.t), N)
    elif isinstance(law, Shift | Dilate | Pushforward | FreePower):
        check_sizes(law.law, N)
    elif isinstance(law, FreeAdd):
        for sub in law.laws:
            check_sizes(sub, N)
    elif isinstance(law, FreeMul):
        check_sizes(law.left, N)
        check_sizes(law.right, N)
    elif isinstance(law, Mixture):
        for sub, wt in zip(law.laws, law.weights):
            if sign(wt) != 0:
                _integer_size(wt * N, f"the block size weight·n ({wt}·{N})")
                check_sizes(sub, wt * N)
    elif isinstance(law, RectangularCompanion):
        _integer_size(law.ratio * N, f"the size ratio·n ({law.ratio}·{N})")
        check_sizes(law.law, law.ratio * N)
    elif not isinstance(law, Semicircle):
        _registered(law)
