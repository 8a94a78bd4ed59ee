"""Laws of polynomials in free variables (issue 28): exact moments by the M_k-valued series
of the linearization ([MS17] ch. 9–10, [BMS17]), checked against closed forms, against the
independent sum over non-crossing partitions ([NS06] Lecture 11), and against sampled
matrices."""
import numpy as np
import pytest
import sympy as sp

import freeprob as fp
from freeprob.core.ncmoments import polynomial_moments
from freeprob.core.opvalued import _Arith
from freeprob.laws.polynomial import PolynomialLaw

R = sp.Rational
S = fp.Semicircle(0, 1)
FP1 = fp.FreePoisson(1)


@pytest.mark.parametrize("text, reference", [
    ("x*y + y*x", fp.free_add(FP1, fp.dilate(FP1, -1))),
    ("I*(x*y - y*x)", fp.free_add(FP1, fp.dilate(FP1, -1))),
    ("x**2 + y**2", fp.FreePoisson(2)),
    ("x*y*x", fp.free_mul(FP1, fp.FreePoisson(R(1, 2)))),
    ("x*z*x", fp.free_mul(FP1, fp.Bernoulli(R(1, 3)))),
])
def test_closed_forms(text, reference):
    law = fp.polynomial_law(text, {"x": S, "y": S if "x*y*x" not in text else fp.FreePoisson(R(1, 2)),
                                   "z": fp.Bernoulli(R(1, 3))})
    assert isinstance(law, PolynomialLaw)
    assert law.moments(12) == reference.moments(12)


def _direct(law, order):
    ring = law._exact_ring()
    ar = _Arith(ring, True)                    # complex coefficients: pairs over the ring
    kappa = {n: [ar.lift(c) for c in v._kappa(ring, order * law.polynomial.degree + 1)]
             for n, v in law.variables}
    moments = polynomial_moments(law.polynomial, kappa, ar, order, convert=ar.conv)
    assert all(ring.is_zero(m.im) for m in moments)
    return tuple(ring.to_sympy(m.re) for m in moments)


@pytest.mark.parametrize("text, variables, order", [
    ("x*y*x + y", {"x": S, "y": fp.FreePoisson(R(1, 2))}, 7),
    ("x*y*z + z*y*x + x*z*x - 2*y**2 + z", {"x": S, "y": fp.FreePoisson(R(1, 2)), "z": fp.Bernoulli(R(1, 3))}, 5),
    ("(1 + I)*x*y*z + (1 - I)*z*y*x + x**2", {"x": S, "y": fp.Semicircle(1, 2), "z": fp.Bernoulli()}, 5),
    ("x*y*x*y + y*x*y*x + I*(x*y - y*x)", {"x": fp.Bernoulli(R(1, 4)), "y": fp.FreePoisson(2)}, 4),
    ("x*y*x + t*y + I*t*(x*y - y*x)", {"x": S, "y": fp.FreePoisson(sp.Symbol("t"))}, 4),
])
def test_the_two_routes_agree(text, variables, order):
    law = fp.polynomial_law(text, variables, parameters=["t"])
    assert law.moments(order) == _direct(law, order)


def test_symbolic_parameters_and_subs():
    t = sp.Symbol("t")
    law = fp.polynomial_law("x*y*x + y", {"x": S, "y": fp.FreePoisson(t)})
    m = law.moments(6)
    assert m[2] == 5 * t**2 + 2 * t
    half = law.subs({t: R(1, 2)})
    assert [sp.expand(v.subs(t, R(1, 2))) for v in m] == list(half.moments(6))
    assert half.moments(6)[6] == R(20725, 64)
    assert law.free_cumulants(2) == (0, 2 * t, t**2 + 2 * t)       # κ_2 = m_2 − m_1²


def _goe(n, rng):
    g = rng.standard_normal((n, n))
    return (g + g.T) / np.sqrt(2 * n)


def _wishart(n, t, rng):
    g = rng.standard_normal((n, int(t * n))) / np.sqrt(n)
    return g @ g.T


def test_sampled_matrices_match_the_moments():
    """n = 600, seed 0.  Tolerances are 4 per-draw standard deviations measured over 10
    seeds at n = 600 plus the measured finite-n bias: relative 4% (m2) and 10% (m4) for
    x y x + y; 6% and 18% for the degree-3 polynomial."""
    rng = np.random.default_rng(0)
    n = 600
    x, y = _goe(n, rng), _wishart(n, R(1, 2), rng)
    z = np.diag(np.where(np.arange(n) < n // 3, 1.0, -1.0))            # Bernoulli(1/3) on ±1
    cases = [("x*y*x + y", x @ y @ x + y, (0.04, 0.10)),
             ("x*y*z + z*y*x + x*z*x - 2*y*y + z",
              x @ y @ z + z @ y @ x + x @ z @ x - 2 * y @ y + z, (0.06, 0.18))]
    laws = {"x": S, "y": fp.FreePoisson(R(1, 2)), "z": fp.Bernoulli(R(1, 3))}
    for text, P, (tol2, tol4) in cases:
        ev = np.linalg.eigvalsh((P + P.T) / 2)
        m = fp.polynomial_law(text, laws).moments(4)
        assert abs(np.mean(ev**2) / float(m[2]) - 1) < tol2, text
        assert abs(np.mean(ev**4) / float(m[4]) - 1) < tol4, text


def test_reductions_and_the_linearization_interface():
    assert isinstance(fp.polynomial_law("2*x + y - 1", {"x": S, "y": FP1}), fp.laws.operations.Shift)
    push = fp.polynomial_law("x**3 - x", {"x": S, "y": S})
    assert push.moments(6) == fp.pushforward(S, [0, -1, 0, 1]).moments(6)
    lin = fp.polynomial_law("x*y*x + y", {"x": S, "y": FP1}).linearization()
    assert lin.names == ("x", "y") and lin.laws == (S, FP1) and lin.b0.shape == (3, 3)
    L = lin.b0 + lin.bs[0] * sp.Symbol("X") + lin.bs[1] * sp.Symbol("Y")
    assert L == L.T


@pytest.mark.parametrize("args, message", [
    (("x*y", {"x": S, "y": S}), "not self-adjoint: x\\*y has coefficient 1"),
    (("x*q + q*x", {"x": S}), "unknown name 'q'"),
    (("3", {"x": S}), "constant"),
    (("x - x", {"x": S}), "is zero"),
    (("x*y + y*x", {"x": 3, "y": S}), r"variables\['x'\] must be a Law"),
    (("x*y + y*x", [S, S]), "non-empty dict"),
    (("t*x + x*y*x", {"t": S, "x": fp.FreePoisson(sp.Symbol("t"))}), "'t' is both a variable and a parameter"),
    ((3, {"x": S}), "must be a string, a sympy expression"),
])
def test_bad_input_is_refused_in_one_line(args, message):
    with pytest.raises(fp.FreeprobValueError, match=message) as info:
        fp.polynomial_law(*args)
    assert "\n" not in str(info.value)


def test_command_line(capsys):
    """``polynomial('…', name=law)`` in the expression language: moments (symbolic), the
    equation and the support of s y s from the shell equal the Python API's."""
    import json

    from freeprob.cli import main
    sys_ = "polynomial('x*y*x', x=Semicircle(0, 1), y=FreePoisson(1/2))"
    law = fp.free_mul(FP1, fp.FreePoisson(R(1, 2)))
    assert main(["moments", "polynomial('x*y*x + t*y', x=Semicircle(0, 1), y=FreePoisson(1/2))",
                 "--order", "3", "--format", "json"]) == 0
    t = sp.Symbol("t")
    values = json.loads(capsys.readouterr().out)["values"]["moments"]
    expected = fp.polynomial_law("x*y*x + t*y", {"x": S, "y": fp.FreePoisson(R(1, 2))}, ["t"]).moments(3)
    assert [sp.sympify(v, locals={"t": t}) for v in values] == list(expected)
    assert main(["equation", sys_]) == 0
    assert capsys.readouterr().out.strip() == f"{law.cauchy_equation().as_expr()} = 0"
    assert main(["support", sys_, "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["atoms"] == [["0", "1/2"]] and rec["intervals"] == [[str(a), str(b)] for a, b in law.support()]
    assert main(["moments", "polynomial('x*y', x=Semicircle(0, 1), y=Semicircle(0, 1))"]) == 2
    assert "not self-adjoint: x*y has coefficient 1" in capsys.readouterr().err
    assert main(["moments", "polynomial('x*y + y*x', x=2, y=Semicircle(0, 1))"]) == 2
    assert "the variable x= must be a law" in capsys.readouterr().err
    assert main(["moments", "polynomial('__import__(\"os\")', x=Semicircle(0, 1))"]) == 2
    assert "not allowed" in capsys.readouterr().err
