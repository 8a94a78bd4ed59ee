r"""A law's exact numeric set-up, handed from the process that computed it to another.

The first numeric evaluation of a law derives its Cauchy equation (eliminations) and the
exact data of its evaluator (special polynomial and points, singular points, support,
atoms: :class:`freeprob.numeric.AlgebraicCauchy`), seconds for the finite-width attention
laws.  ``freeprob verify`` tabulates each law in a worker process and then, in the main
process, evaluates the same law again (the top eigenvalue conditional on each draw,
:mod:`freeprob.experiments.verify_top`): :func:`numeric_state` in the worker and
:func:`adopt_numeric_state` in the main process carry the set-up over instead of deriving
it twice.  The state is a picklable dict of sympy and mpmath objects, meant to travel
within one run of one code version (never stored).  Source: this project's design.
"""
from __future__ import annotations

import sympy as sp

from freeprob.errors import FreeprobValueError
from freeprob.laws.law import Law

__all__ = ["numeric_state", "adopt_numeric_state"]


def numeric_state(law: Law):
    r"""The exact set-up computed so far for ``law``: its Cauchy equation and the exact
    data of its evaluator (:meth:`freeprob.numeric.AlgebraicCauchy.exact_state`), as a
    picklable dict; ``None`` if its Cauchy equation was not derived yet.  For a law ``cX``
    with a number ``c > 0`` (a :class:`~freeprob.laws.operations.Dilate`, evaluated through
    ``X``: :class:`freeprob.numeric.scaled.ScaledCauchy`), ``{"dilated": numeric_state(X)}``.

    Raises ``FreeprobValueError`` if ``law`` is not a :class:`~freeprob.laws.law.Law`.
    Source: this module's docstring.
    """
    if not isinstance(law, Law):
        raise FreeprobValueError(f"numeric_state: expected a Law; got {type(law).__name__}")
    dil = law._dilation()
    if dil is not None:         # cX (c > 0) is evaluated through X: X's set-up
        inner = numeric_state(dil[0])
        return None if inner is None else {"dilated": inner}
    P = law._cache.get("cauchy_equation")
    if P is None:
        return None
    ev = law._cache.get("evaluator")
    return _pack({"cauchy_equation": P, "evaluator": ev.exact_state() if ev is not None else {}})


class _PolyTerms:
    """A sympy ``Poly`` over ℤ, ℚ or ℤ/ℚ[symbols] as its generators, domain and terms (plain
    Python numbers): pickling a ``Poly`` itself rebuilds it from an expression on loading,
    ~0.3 s for a special polynomial over ℤ[e] against milliseconds from the terms."""

    __slots__ = ("gens", "ground", "symbols", "terms")

    def __init__(self, poly):
        dom = poly.domain
        self.gens = poly.gens
        self.ground = "QQ" if (dom.is_QQ or (dom.is_PolynomialRing and dom.domain.is_QQ)) else "ZZ"
        self.symbols = tuple(dom.symbols) if dom.is_PolynomialRing else None
        conv = dom.domain if dom.is_PolynomialRing else dom
        self.terms = [(m, {k: conv.to_sympy(v) for k, v in c.items()} if self.symbols is not None
                       else conv.to_sympy(c)) for m, c in poly.rep.to_dict().items()]

    def __getstate__(self):
        return (self.gens, self.ground, self.symbols, self.terms)

    def __setstate__(self, state):
        self.gens, self.ground, self.symbols, self.terms = state

    @staticmethod
    def fits(poly):
        dom = poly.domain
        return dom.is_ZZ or dom.is_QQ or (dom.is_PolynomialRing and (dom.domain.is_ZZ or dom.domain.is_QQ))

    def poly(self):
        ground = sp.QQ if self.ground == "QQ" else sp.ZZ
        if self.symbols is None:
            return sp.Poly.from_dict({m: ground.from_sympy(c) for m, c in self.terms}, *self.gens, domain=ground)
        dom = ground[self.symbols]
        return sp.Poly.from_dict({m: dom.ring.from_dict({k: ground.from_sympy(v) for k, v in c.items()})
                                  for m, c in self.terms}, *self.gens, domain=dom)


def _pack(v):
    """``v`` with every fitting ``Poly`` (also inside dicts, lists, tuples) as :class:`_PolyTerms`."""
    if isinstance(v, sp.Poly):
        return _PolyTerms(v) if _PolyTerms.fits(v) else v
    if isinstance(v, dict):
        return {k: _pack(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return type(v)(_pack(x) for x in v)
    return v


def _unpack(v):
    """The inverse of :func:`_pack`."""
    if isinstance(v, _PolyTerms):
        return v.poly()
    if isinstance(v, dict):
        return {k: _unpack(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return type(v)(_unpack(x) for x in v)
    return v


def adopt_numeric_state(law: Law, state) -> Law:
    r"""Give ``law`` the set-up ``state`` (:func:`numeric_state` of the same law, computed
    by the same code, e.g. in a worker of this run): its Cauchy equation and the exact data
    of its evaluator are taken over, not derived again.  Returns ``law``.

    The state is trusted to belong to ``law`` (only its form is checked): hand on only
    states of the same law from the same run.

    Raises
    ------
    FreeprobValueError
        ``law`` not a Law, or ``state`` not a dict of the form :func:`numeric_state` gives
        (``{"dilated": …}`` only for a law ``cX``, ``c > 0``).

    Source: this module's docstring.
    """
    if not isinstance(law, Law):
        raise FreeprobValueError(f"adopt_numeric_state: expected a Law; got {type(law).__name__}")
    if isinstance(state, dict) and set(state) == {"dilated"}:
        dil = law._dilation()
        if dil is None:
            raise FreeprobValueError("adopt_numeric_state: a state of a dilated law cX (c > 0) given for a law "
                                     f"that is not one ({type(law).__name__})")
        adopt_numeric_state(dil[0], state["dilated"])
        law._evaluator("adopt_numeric_state")
        return law
    state = _unpack(state) if isinstance(state, dict) else state
    if not (isinstance(state, dict) and set(state) == {"cauchy_equation", "evaluator"}
            and isinstance(state["cauchy_equation"], sp.Poly)):
        raise FreeprobValueError("adopt_numeric_state: expected the dict of numeric_state(law)")
    law._cache.setdefault("cauchy_equation", state["cauchy_equation"])
    law._evaluator("adopt_numeric_state").adopt_state(state["evaluator"])
    return law
