"""Timings of the laws of polynomials in free variables (issue 28; run by hand:
``python benchmarks/bench_polynomial.py``).  Figures go in docs/benchmarks.md and
docs/guide/polynomials.md.

* exact moments by the M_k-valued series of the linearization (:mod:`freeprob.core.opvalued`)
  and by the sum over non-crossing partitions (:mod:`freeprob.core.ncmoments`);
* the elimination of the exact Cauchy equation (:mod:`freeprob.laws.polynomial_equation`).
"""
import time

import sympy as sp

import freeprob as fp
from freeprob.core.ncmoments import polynomial_moments
from freeprob.errors import NotAvailable

R = sp.Rational
S = fp.Semicircle(0, 1)
T = sp.Symbol("t")
DEG3 = "x*y*z + z*y*x + x*z*x - 2*y**2 + z"
V3 = {"x": S, "y": fp.FreePoisson(R(1, 2)), "z": fp.Bernoulli(R(1, 3))}


def clock(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def moments():
    for label, text, variables, order in [
        ("degree 3, 3 variables, rational", DEG3, V3, 20),
        ("degree 3, 3 variables, symbolic t", DEG3, dict(V3, y=fp.FreePoisson(T)), 12),
        ("degree 3, 3 variables, symbolic t", DEG3, dict(V3, y=fp.FreePoisson(T)), 20),
        ("x y x + y, y = FreePoisson(t)", "x*y*x + y", {"x": S, "y": fp.FreePoisson(T)}, 20),
        ("degree 5, 2 variables", "x*y*x*y*x + x**4 + 2*x*y**2*x", {"x": S, "y": fp.FreePoisson(R(1, 2))}, 20),
    ]:
        law = fp.polynomial_law(text, variables)
        _, dt = clock(lambda: law.moments(order))
        print(f"moments to order {order:2d}  {label:38s} k = {law.linearization().b0.shape[0]:2d}: {dt:7.2f} s CPU")
    law = fp.polynomial_law(DEG3, V3)
    ring = law._exact_ring()
    for order in (4, 6):
        kappa = {n: v._kappa(ring, 3 * order + 1) for n, v in law.variables}
        _, dt = clock(lambda: polynomial_moments(law.polynomial, kappa, ring, order))
        print(f"non-crossing partitions, degree 3 in 3 variables, order {order}: {dt:7.2f} s CPU")


def equations():
    FP1 = fp.FreePoisson(1)
    for label, text, variables in [
        ("anticommutator s1 s2 + s2 s1", "x*y + y*x", {"x": S, "y": S}),
        ("commutator i(s1 s2 - s2 s1)", "I*(x*y - y*x)", {"x": S, "y": S}),
        ("s1^2 + s2^2", "x**2 + y**2", {"x": S, "y": S}),
        ("s y s, y = FreePoisson(1/2)", "x*y*x", {"x": S, "y": fp.FreePoisson(R(1, 2))}),
        ("s y s, y = Bernoulli(1/3)", "x*y*x", {"x": S, "y": fp.Bernoulli(R(1, 3))}),
        ("s y s, y = FreePoisson(t)", "x*y*x", {"x": S, "y": fp.FreePoisson(T)}),
        ("s1 s2 s1 + s2 (semicirculars)", "x*y*x + y", {"x": S, "y": S}),
        ("x y x + y, y = FreePoisson(1/2)", "x*y*x + y", {"x": S, "y": fp.FreePoisson(R(1, 2))}),
        ("x y + y x, free Poisson(1/2), (2)", "x*y + y*x", {"x": fp.FreePoisson(R(1, 2)), "y": fp.FreePoisson(2)}),
        ("i(x y - y x), free Poisson(1)", "I*(x*y - y*x)", {"x": FP1, "y": FP1}),
        ("degree 3, 3 semicirculars", DEG3, {"x": S, "y": S, "z": S}),
    ]:
        law = fp.polynomial_law(text, variables)
        t0 = time.process_time()
        try:
            P, dt = clock(law.cauchy_equation)
            what = f"degree {P.degree(P.gens[0])} in G, {P.degree(P.gens[1])} in z"
        except NotAvailable as exc:
            dt, what = time.process_time() - t0, "NotAvailable: " + str(exc).split(":")[1].strip()[:60]
        print(f"equation {label:34s} {dt:6.2f} s CPU  {what}")


if __name__ == "__main__":
    moments()
    equations()
