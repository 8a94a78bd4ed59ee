"""Symbolic series in FLINT polynomials (issue 17): :class:`MpolyRing` against the sympy
field route (:class:`SymbolicRing`), which it replaces for rational functions of symbols."""
from __future__ import annotations

import random

import pytest
import sympy as sp
from sympy.polys.constructor import construct_domain
from sympy.polys.polyutils import expr_from_dict

from freeprob.core import coefficients as C
from freeprob.core import mpolyseries as M
from freeprob.core.cumulants import moments_to_free_cumulants
from freeprob.core.series import TruncatedSeries as T
from freeprob.laws.families import CompoundFreePoisson, FreePoisson, Semicircle, Bernoulli
from freeprob.laws.operations import dilate, free_add, free_mul, shift

t, t1, t2, s = sp.symbols("t t1 t2 s", positive=True)


@pytest.fixture
def legacy(monkeypatch):
    """A function running ``fn()`` on the former route (sympy fields only)."""
    def run(fn):
        with monkeypatch.context() as m:
            m.setattr(C.MpolyRing, "eligible", classmethod(lambda cls, ring: False))
            return fn()
    return run


def same(new, old):
    assert len(new) == len(old)
    for a, b in zip(new, old):
        assert a == b or sp.cancel(a - b) == 0, (a, b)
    # sympy's canonical form: identical expressions, not only equal values
    assert tuple(new) == tuple(old)


LAWS = {
    "free_poisson": (lambda: FreePoisson(t), 16),
    "free_poisson_jump": (lambda: FreePoisson(t1, t2), 10),
    "free_mul": (lambda: free_mul(FreePoisson(t1), FreePoisson(t2)), 12),
    "free_add_semicircle": (lambda: free_add(FreePoisson(t), Semicircle(0, s)), 14),
    "compound": (lambda: CompoundFreePoisson(t, Bernoulli(sp.Rational(1, 3), 1, 2)), 12),
    "compound_symbolic_jump": (lambda: CompoundFreePoisson(t1, FreePoisson(t2)), 10),
    "dilate_rational": (lambda: dilate(shift(FreePoisson(t), 1 / t), 1 / (1 + t)), 8),
}


@pytest.mark.parametrize("name", sorted(LAWS))
def test_law_sequences_match_sympy_route(name, legacy):
    make, k = LAWS[name]
    law = make()
    assert isinstance(law._exact_ring(), C.MpolyRing)
    assert type(legacy(lambda: make()._exact_ring())) is C.SymbolicRing
    same(law.moments(k), legacy(lambda: make().moments(k)))
    same(law.free_cumulants(k), legacy(lambda: make().free_cumulants(k)))


def test_other_sequences_and_series_match(legacy):
    make = LAWS["free_mul"][0]
    law = make()
    same(law.boolean_cumulants(8), legacy(lambda: make().boolean_cumulants(8)))
    same(law.classical_cumulants(7), legacy(lambda: make().classical_cumulants(7)))
    for name in ("s_series", "chi_series", "r_series", "cauchy_series"):
        same(getattr(law, name)(7).coefficients(),
             legacy(lambda: getattr(make(), name)(7).coefficients()))


@pytest.mark.parametrize("order", [10, 16])
def test_attention_output_law_matches(order, legacy):
    from freeprob.attention import Architecture, output_law

    def make():
        return output_law(Architecture(heads=2, gamma_k=sp.Rational(1, 2),
                                       gamma_v=sp.Rational(1, 2), gamma_o=1))

    law = make()
    assert isinstance(law._exact_ring(), C.MpolyRing)
    same(law.moments(order), legacy(lambda: make().moments(order)))
    same(law.free_cumulants(order), legacy(lambda: make().free_cumulants(order)))


def test_ring_choice():
    assert isinstance(C.exact_ring_for([t, 2]), C.MpolyRing)
    assert isinstance(C.exact_ring_for([t1 / (1 + t2)]), C.MpolyRing)
    assert C.exact_ring_for([sp.Rational(1, 3)]) == C.QQ
    # algebraic relations (√2² = 2) stay in the sympy field
    for exprs in ([sp.sqrt(2)], [sp.sqrt(2), t]):
        ring = C.exact_ring_for(exprs)
        assert isinstance(ring, C.SymbolicRing) and not isinstance(ring, C.MpolyRing)
    assert isinstance(T([0, t, 1]).ring, C.MpolyRing)
    assert not isinstance(T([0, sp.sqrt(2), 1]).ring, C.MpolyRing)


def test_transcendental_generator():
    law = FreePoisson(sp.E * t)
    ring = law._exact_ring()
    assert isinstance(ring, C.MpolyRing)
    m = law.moments(6)
    assert [sp.expand(a - b) for a, b in zip(m, FreePoisson(s).moments(6))] != [0] * 7
    assert all(sp.expand(a - b.subs(s, sp.E * t)) == 0
               for a, b in zip(m, FreePoisson(s).moments(6)))


def test_exponentials_of_symbols_are_generators():
    # exp(t²) and exp(6t²) (θ1, θ2-type parameters at a symbolic β): one generator g, exp(6t²) = g⁶;
    # the moments equal those of the same law with a plain symbol s = exp(t²)
    law = FreePoisson(sp.exp(t**2) - 1, sp.exp(6 * t**2) / (sp.exp(t**2) + t))
    assert isinstance(law._exact_ring(), C.MpolyRing)
    ref = FreePoisson(s - 1, s**6 / (s + t)).moments(5)
    assert all(sp.cancel(a - b.subs(s, sp.exp(t**2))) == 0 for a, b in zip(law.moments(5), ref))
    assert C._exp_generators([sp.exp(t**2 / 2) + sp.exp(-t**2)]) == {
        sp.exp(-t**2 / 2): sp.Symbol("_freeprob_e0"), sp.exp(-t**2): sp.Symbol("_freeprob_e0") ** 2,
        sp.exp(t**2 / 2): 1 / sp.Symbol("_freeprob_e0")}
    # dependent exponents (exp(t + t²) = exp(t)·exp(t²)), a constant term (exp(t + 1) = e·exp(t))
    # or a non-polynomial exponent: not generators, the general field is kept
    for exprs in ([sp.exp(t), sp.exp(t**2), sp.exp(t + t**2)], [sp.exp(t + 1)], [sp.exp(1 / t)]):
        assert C._exp_generators(exprs) is None
    assert sp.simplify(C.exact_ring_for([sp.exp(t + 1), t]).to_sympy(
        C.exact_ring_for([sp.exp(t + 1), t]).convert(sp.exp(t + 1) * t)) - sp.exp(t + 1) * t) == 0


def _random_series(rng, gens, n, *, c0, c1=None):
    def coeff():
        num = sum(rng.randint(-3, 3) * sp.Mul(*[g ** rng.randint(0, 2) for g in gens])
                  for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.3:
            num = num / (1 + gens[0] * rng.randint(1, 2))
        return num
    out = [c0] + [coeff() for _ in range(n - 1)]
    if c1 is not None:
        out[1] = c1
    return out


@pytest.mark.parametrize("seed", range(6))
def test_kernels_match_sympy_field(seed):
    rng = random.Random(seed)
    gens = (t1, t2)
    K, _ = construct_domain([t1, t2], field=True)
    old, new = C.SymbolicRing(K), C.MpolyRing(K)
    n = rng.randint(4, 9)
    a = _random_series(rng, gens, n, c0=1 + t1)
    b = _random_series(rng, gens, n, c0=t2 - 3)
    f = _random_series(rng, gens, n, c0=0, c1=t1 * t2 / (1 + t2))
    one = _random_series(rng, gens, n, c0=1)
    zero = _random_series(rng, gens, n, c0=0)

    def both(kernel, *args):
        x = getattr(old, kernel)(*[[old.convert(v) for v in arg] for arg in args], n)
        y = getattr(new, kernel)(*[[new.convert(v) for v in arg] for arg in args], n)
        assert [old.to_sympy(v) for v in x] == [new.to_sympy(v) for v in y], kernel

    both("mul", a, b)
    both("inv", a)
    both("inv", b)
    both("reversion", f)
    # f = x/φ(x) with polynomial coefficients: Lagrange inversion on φ itself (issue 27)
    phi = [1 + t1 * t2] + [sum(rng.randint(-3, 3) * t1 ** rng.randint(0, 2) * t2 ** rng.randint(0, 2)
                               for _ in range(2)) for _ in range(n - 2)]
    both("reversion", [0] + [old.to_sympy(v) for v in old.inv([old.convert(v) for v in phi], n - 1)])
    both("compose", a, f)
    both("log", one)
    both("exp", zero)


def test_reversion_rational_linear_term():
    g = T([0, t, 1], order=7).reversion()
    assert isinstance(g.ring, C.MpolyRing)
    expected = [0, 1 / t, -1 / t**3, 2 / t**5, -5 / t**7, 14 / t**9, -42 / t**11]
    assert list(g.coefficients()) == [sp.sympify(e) for e in expected]


def test_element_arithmetic():
    ring = C.exact_ring_for([t1, t2])
    a, b = ring.convert(t1 / (1 + t2)), ring.convert(t2 - 1)
    for value, expected in [(a + b, t1 / (1 + t2) + t2 - 1), (a - b, t1 / (1 + t2) - t2 + 1),
                            (a * b, t1 * (t2 - 1) / (1 + t2)), (a / b, t1 / ((1 + t2) * (t2 - 1))),
                            (2 - a, 2 - t1 / (1 + t2)), (3 / a, 3 * (1 + t2) / t1),
                            (a * sp.Rational(1, 2) if False else a / 2, t1 / (2 + 2 * t2))]:
        assert sp.cancel(ring.to_sympy(value) - expected) == 0
    assert ring.is_zero(a - a) and not ring.is_zero(a)
    assert ring.convert(sp.Rational(3, 4)) == ring.one * 3 / 4
    with pytest.raises(ZeroDivisionError):
        a / ring.zero


@pytest.mark.parametrize("gens", [sp.symbols("a b c", positive=True), sp.symbols("a b c"),
                                  (sp.Symbol("z"), sp.Symbol("a", positive=True), sp.Symbol("m", real=True))],
                         ids=["positive", "plain", "mixed_assumptions"])
def test_poly_expr_is_canonical(gens):
    """The one-pass conversion builds sympy's canonical expression: the same arguments in the
    same order as sympy's own constructors and as the fraction field's ``to_sympy``."""
    import flint
    rng = random.Random(17)
    K, _ = construct_domain(list(gens), field=True)
    alg = M.MpolyAlgebra(3)
    for _ in range(200):
        d = {tuple(rng.randint(0, 4) for _ in range(3)):
             flint.fmpq(rng.choice([1, -1, 2, -3, 10**25]), rng.choice([1, 1, 1, 2, 6, 10**20]))
             for _ in range(rng.randint(0, 10))}
        p = alg.poly(d)
        d = {m: sp.Rational(int(c.p), int(c.q)) for m, c in alg.terms(p).items()}
        expected = expr_from_dict(d, *gens) if d else sp.S.Zero
        field = K.to_sympy(M.to_domain(alg, K, M.Frac(p, alg.one_poly)))
        got = M.poly_expr(p, gens)
        assert got == expected == field and got.args == field.args and str(got) == str(expected)


@pytest.mark.parametrize("make, k", [
    (lambda: free_mul(FreePoisson(sp.Rational(1, 2)), FreePoisson(sp.Rational(1, 3))), 60),
    (lambda: free_mul(FreePoisson(t1), FreePoisson(t2)), 14),
    (lambda: free_mul(FreePoisson(t), FreePoisson(2, s), Semicircle(1, 1)), 8),
], ids=["rational", "symbolic", "three_factors"])
def test_free_mul_cumulants_one_reversion(make, k):
    """Free cumulants of μ ⊠ ν by one reversion of u S(u) equal those converted from its
    moments (reversion of χ = u S/(1+u), then of z M(z)): identical exact values."""
    law = make()
    assert law.free_cumulants(k) == moments_to_free_cumulants(make().moments(k))


def test_free_mul_cumulants_one_reversion_in_balls():
    """The same route in ball arithmetic (an algebraic rate: certified digits) against the
    exact cumulants rounded."""
    import mpmath
    law = free_mul(FreePoisson(sp.sqrt(2)), FreePoisson(sp.Rational(1, 3)))
    exact = moments_to_free_cumulants(law.moments(8))
    got = law.free_cumulants(8, dps=30)
    with mpmath.workdps(40):
        assert got[0] == 0 and all(abs(a - mpmath.mpf(sp.N(v, 40))) <= mpmath.mpf(10) ** -29 * abs(a)
                                   for a, v in zip(got[1:], exact[1:]))


def test_free_poisson_high_order_is_narayana():
    m = FreePoisson(t).moments(60)
    n = 60
    expected = sum(sp.binomial(n, k) * sp.binomial(n, k - 1) / n * t**k for k in range(1, n + 1))
    assert sp.expand(m[n] - expected) == 0
