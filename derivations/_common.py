"""Shared helpers of the derivation scripts: symbols, printing, and route comparison."""
import sympy as sp

from freeprob.attention import theta1, theta2

h, gamma_K, gamma_V, gamma_O, c, v, u = sp.symbols(
    "h gamma_K gamma_V gamma_O c v u", positive=True)
s = theta1 - theta2


def show(title, expr):
    """Print ``expr`` under ``title``, pretty and as LaTeX."""
    print(f"\n== {title}")
    sp.pprint(expr, use_unicode=True)
    print("LaTeX:", sp.latex(expr))


def assert_same_moments(a, b, order, label):
    """Assert two moment sequences agree exactly (rational-function identity) to ``order``."""
    ma, mb = a.moments(order), b.moments(order)
    for k, (x, y) in enumerate(zip(ma, mb)):
        assert sp.cancel(sp.together(x - y)) == 0, f"{label}: m_{k} differs: {x} vs {y}"
    print(f"\n[ok] {label}: moments m_0..m_{order} agree by both routes")


def assert_same_equation(P, Q, label):
    """Assert two Cauchy polynomials P(G, z), Q(G, z) agree up to a scalar factor."""
    P, Q = sp.Poly(P), sp.Poly(Q, *P.gens)
    assert sp.cancel(P.as_expr() * Q.LC() - Q.as_expr() * P.LC()) == 0, f"{label}: equations differ"
    print(f"[ok] {label}: Cauchy equations agree (degree {P.degree(P.gens[0])} in G)")
