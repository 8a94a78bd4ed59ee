r"""Closed forms of the ``1/n`` term ``G₁`` (sympy expressions in ``G`` and ``z``).

Two transform languages carry the rules of docs/theory.md §"The 1/n term" exactly:

* the **infinitesimal R-transform** ``R₁(w)``, ``G₁(z) = −R₁(G)/K'(G)`` with
  ``K(w) = R(w) + 1/w``: ``R₁ = Ψ := −½ (log(1 − w²R'))'`` for the GOE, the real Wishart
  and the real sample covariance with an atomic population; ``R₁ − Ψ`` adds under ``⊞``;
  ``cR₁(cw)`` under dilation by ``c``; unchanged by a shift;
* the **S-perturbation** ``ℓ(u) = S₁/S``, ``G₁(z) = ℓ(u)/z'(u)`` with ``u = zG − 1`` and
  ``z(u) = (1 + u)/(u S(u))``: ``ℓ − x`` adds under ``⊠`` with
  ``x := ½ (log(1 + u(1 + u) S'/S))'``, and the canonical laws have
  ``ℓ = −½ (log[(uS)'/(S + u(1 + u)S')])'``.

:func:`g1_expression` uses the first language for trees of ⊞, shifts, dilations and integer
free powers over laws with closed-form R-transforms, the second for trees of ⊠ and
dilations over laws with closed-form S-transforms, and otherwise, for a law whose model has
the canonical correction, ``G₁ = G'/G − G''/(2G')`` from its Cauchy equation.

References: [BS12]_ (infinitesimal R-transform), [BS04]_, docs/theory.md.
"""
from __future__ import annotations

import sympy as sp

from freeprob.core.symbols import G as _G
from freeprob.core.symbols import u as _u
from freeprob.core.symbols import w as _w
from freeprob.core.symbols import z as _z
from freeprob.errors import NotAvailable
from freeprob.laws.families import Atomic, CompoundFreePoisson, FreePoisson, Semicircle
from freeprob.laws.finite_n_rules import is_canonical
from freeprob.laws.operations import Dilate, FreeAdd, FreeMul, FreePower, Shift

__all__ = ["g1_expression", "psi_of_r", "canonical_ell", "x_of_s"]

_HALF = sp.Rational(1, 2)


def psi_of_r(R):
    """``Ψ(w) = −½ d/dw log(1 − w² R'(w))`` (the canonical infinitesimal R-transform)."""
    return sp.cancel(-_HALF * sp.diff(sp.log(1 - _w ** 2 * sp.diff(R, _w)), _w))


def canonical_ell(S):
    """``ℓ`` of the canonical correction: ``−½ d/du log[(uS)'/(S + u(1 + u)S')]``."""
    S_ = sp.diff(S, _u)
    return sp.cancel(-_HALF * sp.diff(sp.log(sp.diff(_u * S, _u) / (S + _u * (1 + _u) * S_)), _u))


def x_of_s(S):
    """``x(u) = ½ d/du log(1 + u(1 + u) S'/S)`` (the multiplicative canonical part)."""
    return sp.cancel(_HALF * sp.diff(sp.log(1 + _u * (1 + _u) * sp.diff(S, _u) / S), _u))


def _r_pair(law):
    """``(R, R₁)`` in ``w``, or ``None``."""
    if isinstance(law, Semicircle | FreePoisson) or (isinstance(law, CompoundFreePoisson)
                                                    and isinstance(law.jump_law, Atomic)):
        try:
            R = law.r_transform()
        except NotImplementedError:
            return None
        return R, psi_of_r(R)
    if isinstance(law, Atomic) and len(law.points) == 1:
        return law.points[0] + 0 * _w, sp.Integer(0)
    if isinstance(law, Shift):
        pair = _r_pair(law.law)
        return None if pair is None else (pair[0] + law.a, pair[1])
    if isinstance(law, Dilate):
        pair = _r_pair(law.law)
        if pair is None:
            return None
        c = law.c
        return c * pair[0].subs(_w, c * _w), c * pair[1].subs(_w, c * _w)
    if isinstance(law, FreeAdd | FreePower):
        subs = law.laws if isinstance(law, FreeAdd) else (law.law,)
        pairs = [_r_pair(s) for s in subs]
        if any(p is None for p in pairs):
            return None
        t = 1 if isinstance(law, FreeAdd) else law.t
        if isinstance(law, FreePower) and not (sp.sympify(t).is_integer or is_canonical(law.law)):
            return None
        R = t * sp.Add(*[p[0] for p in pairs])
        R1 = t * sp.Add(*[p[1] - psi_of_r(p[0]) for p in pairs]) + psi_of_r(R)
        return R, R1
    return None


def _s_pair(law):
    """``(S, ℓ)`` in ``u``, or ``None``."""
    if isinstance(law, FreePoisson) or (isinstance(law, CompoundFreePoisson)
                                        and isinstance(law.jump_law, Atomic)):
        try:
            S = law.s_transform()
        except NotImplementedError:
            return None
        return S, canonical_ell(S)
    if isinstance(law, Atomic) and len(law.points) == 1 and law.points[0] != 0:
        return 1 / law.points[0] + 0 * _u, sp.Integer(0)
    if isinstance(law, Dilate):
        pair = _s_pair(law.law)
        return None if pair is None else (pair[0] / law.c, pair[1])
    if isinstance(law, FreeMul):
        pairs = [_s_pair(law.left), _s_pair(law.right)]
        if any(p is None for p in pairs):
            return None
        S = pairs[0][0] * pairs[1][0]
        ell = sp.Add(*[p[1] - x_of_s(p[0]) for p in pairs]) + x_of_s(S)
        return S, ell
    return None


def g1_expression(law):
    r"""``G₁`` of the real finite-n model of ``law`` as a sympy expression in
    :data:`freeprob.core.symbols.G` (the limit Cauchy transform) and, where needed,
    :data:`freeprob.core.symbols.z`, exact in the parameters.

    Examples: the GOE gives ``G³/(1 − G²)²``; the real Wishart ``FreePoisson(t)`` gives
    ``t G³ (1 − G)/((1 − G)² − t G²)²`` (Bai–Silverstein's mean, [BS04]_).

    Raises
    ------
    NotAvailable
        The law mixes the two transform languages, or an operand has no closed-form
        transform (e.g. an atomic law with two or more points, whose R-transform is
        algebraic): its moments and numeric values are still available.
    """
    pair = _r_pair(law)
    if pair is not None:
        R, R1 = pair
        K1 = sp.diff(R, _w) - 1 / _w ** 2
        return sp.factor(sp.cancel((-R1 / K1).subs(_w, _G)))
    pair = _s_pair(law)
    if pair is not None:
        S, ell = pair
        zu = (1 + _u) / (_u * S)
        expr = sp.cancel(ell / sp.diff(zu, _u))
        return sp.factor(sp.cancel(expr.subs(_u, _z * _G - 1)))
    if is_canonical(law):
        P = law.cauchy_equation().as_expr()
        PG, Pz = sp.diff(P, _G), sp.diff(P, _z)
        d1 = -Pz / PG
        d2 = -(sp.diff(P, _z, 2) + 2 * sp.diff(PG, _z) * d1 + sp.diff(PG, _G) * d1 ** 2) / PG
        return sp.factor(sp.cancel(d1 / _G - d2 / (2 * d1)))
    raise NotAvailable(
        f"finite_n: no closed form of G₁ for {type(law).__name__} here (it needs closed-form R- "
        "or S-transforms of every operand, one kind per law); use moments(k) for the exact "
        "corrections and cauchy(z) for values")
