"""Non-commutative polynomials and their self-adjoint linearization (issue 28).

The linearization is checked symbolically: the Schur complement ``ℓ − u* Q⁻¹ u`` of ``L``,
recomputed as a non-commutative polynomial (``Q⁻¹`` by its finite Neumann series), equals
``p`` for a dozen polynomials of degree up to 5, with rational, algebraic, symbolic and
complex coefficients ([AND13], [BMS17] §4).
"""
import pytest
import sympy as sp

from freeprob.core.linearization import linearize
from freeprob.core.ncpoly import NCPoly, conjugate, from_sympy, parse_ncpoly
from freeprob.errors import FreeprobValueError

V = ["x", "y", "z"]
POLYS = [
    "x*y + y*x",
    "I*(x*y - y*x)",
    "x*y*x + y",
    "x**2 + y**2",
    "(x + y)**2",
    "x*y*z + z*y*x + x*z*x - 2*y**2 + z - 3",
    "(1 + I)*x*y*z + (1 - I)*z*y*x + sqrt(2)*x",
    "t*x*y + t*y*x + x**3 - s*z",
    "x*y*z*x + x*z*y*x + y",
    "x**4 + 2*x*y**2*x - z",
    "x*y*x*y*x + I*(x*z*y*z - z*y*z*x)",
    "(x*y + y*x)**2 + I*sqrt(3)*(y*z - z*y)",
]


@pytest.mark.parametrize("text", POLYS)
def test_schur_complement_of_the_linearization_is_the_polynomial(text):
    p = parse_ncpoly(text, V, parameters=["t", "s"])
    lin = linearize(p, V)
    assert lin.schur_complement() == p
    for b in (lin.b0, *lin.bs):                             # L self-adjoint: b_j Hermitian
        assert all(sp.expand(conjugate(b[i, j]) - b[j, i]) == 0 for i in range(lin.k) for j in range(lin.k))
    assert lin.depth <= lin.k


def test_small_linearizations_match_the_design_note():
    lin = linearize(parse_ncpoly("x*y + y*x", ["x", "y"]))
    assert lin.k == 3
    assert lin.b0 == sp.Matrix([[0, 0, 0], [0, 0, -1], [0, -1, 0]])
    assert lin.bs == (sp.Matrix([[0, 1, 0], [1, 0, 0], [0, 0, 0]]), sp.Matrix([[0, 0, 1], [0, 0, 0], [1, 0, 0]]))
    assert linearize(parse_ncpoly("x*y*x", ["x", "y"])).k == 3      # s y s: k = 3


def test_parse_and_sympy_input_agree_and_adjoint_reverses_words():
    x, y = sp.symbols("x y", commutative=False)
    t = sp.Symbol("t")
    a = parse_ncpoly("(x + t*y)**2 - I*x*y", ["x", "y"], parameters=["t"])
    b = from_sympy((x + t * y) ** 2 - sp.I * x * y, ["x", "y"])
    assert a == b
    assert a.adjoint() == from_sympy((x + t * y) ** 2 + sp.I * y * x, ["x", "y"])
    assert str(parse_ncpoly("2*x*y*x - y/3", ["x", "y"])) == "-1/3*y + 2*x*y*x"


@pytest.mark.parametrize("text, message", [
    ("x*y", "not self-adjoint: x*y has coefficient 1 but its adjoint y*x does not occur"),
    ("x*y + 2*y*x", "the coefficient 2 of y*x is not the conjugate of the coefficient 1 of x*y"),
    ("I*x*y*x", "the coefficient I of x*y*x is not real"),
    ("5", "is constant"),
])
def test_linearize_refuses_with_the_offending_term(text, message):
    with pytest.raises(FreeprobValueError, match=message.replace("*", r"\*")):
        linearize(parse_ncpoly(text, ["x", "y"]))


@pytest.mark.parametrize("text, message", [
    ("x*w", "unknown name 'w'"), ("x/y", "division by a polynomial"), ("x**(1/2)", "integer power"),
    ("x.real", "Attribute is not allowed"), ("(x + y)**40", "more than 20000"), ("", "empty"),
])
def test_parse_refuses_bad_text(text, message):
    with pytest.raises(FreeprobValueError, match=message):
        parse_ncpoly(text, ["x", "y"])


def test_commutative_variable_is_refused():
    with pytest.raises(FreeprobValueError, match="commutative symbol"):
        from_sympy(sp.Symbol("x") * sp.Symbol("y", commutative=False), ["x", "y"])
    assert NCPoly.letter("x") * 2 == parse_ncpoly("2*x", ["x"])
