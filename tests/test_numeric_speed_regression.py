"""The fast routes of the numeric evaluator's setup give the same results as the slow ones.

* discriminant and square-free special polynomial by FLINT for coefficients in ℤ[e]
  (and ℤ): the same sympy ``Poly`` as sympy's ``discriminant`` / ``sqf_part``;
* density grids clustered at the support edges (points closer to an edge than doubles
  resolve), whose roots are continued in mpmath along the real axis from a neighbour
  instead of being tracked from far up: the same values as pointwise densities.
"""
from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp

from freeprob.numeric import AlgebraicCauchy
from freeprob.core.symbols import G, z

E = sp.E

POLYS = {
    # semicircle of variance e (edges ±2√e, irrational)
    "semicircle_e": E * G**2 - z * G + 1,
    # free Poisson-like equation with ℤ[e] coefficients (rate e/2, jump 1)
    "free_poisson_e": 2 * z * G**2 + (E - 2 - 2 * z) * G + 2,
}


def _inst(expr):
    return AlgebraicCauchy(sp.Poly(expr, G, z))


@pytest.mark.parametrize("name", ["semicircle_e", "free_poisson_e"])
def test_flint_special_poly_is_sympys(name):
    A = _inst(POLYS[name])
    assert not A._rational and A._flint_P() is not None
    disc = sp.Poly(sp.discriminant(A._P, G).as_expr(), z, domain=A._P.domain)
    assert A._disc() == disc
    assert A._special_poly() == (disc * A._lc()).sqf_part()


def test_flint_special_poly_attention_law():
    from freeprob.attention import Architecture, output_law
    law = output_law(Architecture.from_dimensions(beta=1, n=24, heads=2, d_k=4, d_v=4, d_o=8))
    A = AlgebraicCauchy(law.cauchy_equation())
    if A._P.domain.is_ZZ or A._P.domain.is_QQ or A._d < 2:
        pytest.skip("not an equation over ℤ[e]")
    disc = sp.Poly(sp.discriminant(A._P, G).as_expr(), z, domain=A._P.domain)
    assert A._disc() == disc
    assert A._special_poly() == (disc * A._lc()).sqf_part()


def test_flint_discriminant_rational():
    P = sp.Poly(G**3 * z - 2 * G**2 * z + G * (z**3 + 1) - z**2 + 3, G, z)
    try:
        A = AlgebraicCauchy(P)
    except Exception:       # not a Cauchy equation: the algebra is still comparable
        pytest.skip("not a Cauchy equation")
    disc = sp.Poly(sp.discriminant(A._P, G).as_expr(), z, domain=A._P.domain)
    assert A._disc() == disc


@pytest.mark.parametrize("name", ["semicircle_e", "free_poisson_e"])
def test_edge_clustered_grid_equals_pointwise(name):
    A = _inst(POLYS[name])
    sup = A.support(dps=30)
    xs = []
    for a, b in sup:
        a, b = float(a), float(b)
        for k in (3, 6, 9, 12, 14, 15, 16):
            xs += [a + (b - a) * 10.0 ** -k, b - (b - a) * 10.0 ** -k]
        xs += [a + (b - a) * t / 7 for t in range(1, 7)]
        xs += [a, b, a - 1e-9, b + 1e-9]
        # the doubles next to the edges, on both sides: no continuation across an edge
        for v in (a, b):
            xs += [math.nextafter(v, -math.inf), math.nextafter(math.nextafter(v, -math.inf), -math.inf),
                   math.nextafter(v, math.inf), math.nextafter(math.nextafter(v, math.inf), math.inf)]
    xs = sorted(set(xs))
    grid = A.density_grid(xs, dps=20)
    point = [A.density(x, dps=20) for x in xs]
    assert grid == point
    assert all(v >= 0 for v in grid)


def test_mp_crossing_check_at_full_precision():
    # an edge between two doubles 4e-15 apart (relative 3e-16) is seen
    A = _inst(POLYS["semicircle_e"])
    from freeprob.numeric.rootkernel import _real_point
    b = float(A.support(dps=30)[0][1])
    lo, hi = math.nextafter(b, -math.inf), math.nextafter(b, math.inf)
    assert A._mp_crosses(_real_point(lo, "x"), _real_point(hi, "x"), 91)
    assert A._mp_crosses(_real_point(hi, "x"), _real_point(lo, "x"), 91)
    assert not A._mp_crosses(_real_point(lo - 1e-12, "x"), _real_point(lo - 1e-13, "x"), 91)


def test_edge_clustered_semicircle_closed_form():
    A = _inst(POLYS["semicircle_e"])
    with mpmath.workdps(60):
        r = 2 * mpmath.sqrt(mpmath.e)
    xs = sorted(float(s * (r - r * 10.0 ** -k)) for s in (-1, 1) for k in (4, 8, 12, 15))
    grid = A.density_grid(xs, dps=20)
    with mpmath.workdps(60):
        for x, v in zip(xs, grid):
            x = mpmath.mpf(repr(x))     # a float input is read as its shortest decimal
            exact = mpmath.sqrt(4 * mpmath.e - x * x) / (2 * mpmath.pi * mpmath.e)
            assert abs(v - exact) <= mpmath.mpf(10) ** -19 * exact


def test_discriminant_and_resultant_by_interpolation_are_flints():
    # two extra variables (a parameter and a frozen constant): set to integers and
    # interpolated back, the same polynomials as FLINT's direct multivariate ones
    import flint
    from freeprob.core.exactpoly import mpoly_discriminant, mpoly_resultant
    ctx = flint.fmpz_mpoly_ctx.get(("G", "z", "t", "c"), "lex")
    G_, z_, t_, c_ = ctx.gens()
    f = (c_ * z_ + 2) * G_**3 - (z_**2 + t_ * c_) * G_**2 + (3 * t_ - c_) * z_ * G_ + t_ * c_ + 1
    g = (t_ + 1) * G_**2 - c_ * z_ * G_ + z_ - t_ * c_**2
    assert mpoly_discriminant(f) == f.discriminant("G")
    assert mpoly_resultant(f, g, 0, 2) == f.resultant(g, "G")
    assert mpoly_resultant(f, g, 1, 2) == f.resultant(g, "z")
    # the degree bound (2d − 1)·deg_c f − deg_c lc is attained here (disc = c²z² − 4ct):
    # one interpolation point fewer would miss it
    h = c_ * G_**2 + c_ * z_ * G_ + t_
    assert mpoly_discriminant(h) == h.discriminant("G") == c_**2 * z_**2 - 4 * c_ * t_


def test_from_flint_removes_the_content_over_the_constants_as_sympy_does():
    # the content over ℤ[t, c] is divided out in FLINT (positive leading coefficient, as
    # sympy's Poly.primitive), so the Poly is sympy's primitive part, sign included
    import flint
    import sympy as sp
    from freeprob.core.exactpoly import from_flint
    ctx = flint.fmpz_mpoly_ctx.get(("G", "z", "t", "c"), "lex")
    G_, z_, t_, c_ = ctx.gens()
    G, z, t, c = sp.symbols("G z t c")
    for cont in (-2 * c_ - 4, 6 * t_ * c_ - 3, -ctx.constant(12), c_**2):
        f = cont * ((c_ + t_) * G_**2 * z_ - 3 * t_ * G_ + 5 * c_)
        got = from_flint(f, (G, z, t, c), (G, z))
        want = sp.Poly(sp.sympify(str(f).replace("^", "**")), G, z, domain=sp.ZZ[t, c]).primitive()[1]
        assert got == want and got.domain == want.domain


def test_tabulated_finite_width_density_equals_the_certified_one(monkeypatch):
    # TabulatedLaw.from_law takes the density from doubles continued along its nodes
    # wherever they reach DENSITY_RTOL (most nodes): the values at 40 of its nodes, all
    # support pieces and edge clusters included, agree with the certified 15-digit path
    from freeprob.attention import Architecture, attention_law
    from freeprob.experiments.compare import DENSITY_RTOL, TabulatedLaw
    law = attention_law(Architecture.from_dimensions(beta=1, n=32, heads=2, d_k=8, d_v=8, d_o=16),
                        finite_width=True)
    law.support()
    A = law._evaluator("test").inner      # the law is c·X (bulk scale): X's AlgebraicCauchy (ScaledCauchy)
    calls = []
    exact_point = type(A)._density_exact_point
    monkeypatch.setattr(type(A), "_density_exact_point",
                        lambda self, *a, **k: calls.append(1) or exact_point(self, *a, **k))
    tab = TabulatedLaw.from_law(law, points=60)
    n = tab.density_x.size
    assert len(law.cut_points()) >= 2 and n >= 4 * 60     # pieces between special points
    assert len(calls) < n / 3                               # mostly the float path
    monkeypatch.undo()
    idx = sorted(set(list(range(0, n, n // 30)) + [0, 1, 2, n - 3, n - 2, n - 1]))
    xs = [float(tab.density_x[i]) for i in idx]
    order = sorted(range(len(xs)), key=lambda j: xs[j])
    exact = law.density([xs[j] for j in order], dps=15)
    for j, v in zip(order, exact):
        got = tab.density_y[idx[j]]
        assert abs(got - float(v)) <= DENSITY_RTOL * float(v) + 1e-300, (xs[j], got, v)


def test_points_evaluated_one_by_one_continue_from_the_last_ones():
    # a root search along the axis (the top-eigenvalue equation) evaluates G point by
    # point: a point near one evaluated before starts from that point's root, continued
    # in doubles, instead of being tracked from far up; the certified values are the same
    # as on a fresh instance, inside the support and beyond its edge
    A = _inst(POLYS["free_poisson_e"])
    (a, b), = A.support(dps=20)
    a, b = float(a), float(b)
    inside = [a + (b - a) * t for t in (0.3, 0.3001, 0.31, 0.5)]
    beyond = [b + 0.5, b + 0.5001, b + 0.6]
    got = [A.density(x, dps=20) for x in inside] + [A.cauchy(x, dps=20) for x in beyond]
    assert {x for x, _ in A._cache["recent"]} >= set(inside + beyond)     # the last 8 kept
    fresh = ([_inst(POLYS["free_poisson_e"]).density(x, dps=20) for x in inside]
             + [_inst(POLYS["free_poisson_e"]).cauchy(x, dps=20) for x in beyond])
    assert got == fresh
    assert all(v > 0 for v in got[:4]) and all(v.imag == 0 and v.real > 0 for v in got[4:])
