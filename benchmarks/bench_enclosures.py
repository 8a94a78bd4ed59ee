"""Benchmark of issue 17 (ball enclosures); run by hand:
``python benchmarks/bench_enclosures.py``.

A 1000-point density grid of ``output_law(Architecture(heads=4, gamma_k=1/2,
gamma_v=1/2, gamma_o=1, beta=1))`` (Cauchy equation of degree 8 in G over ℤ[e], an atom
of mass 1/2 at 0) across its support, plain and with ``ball=True`` (each point an ``arb``
proven to contain the density: Krawczyk's test on the selected root), each on a fresh law
whose Cauchy equation and support are computed before the clock starts; the best of
``--repeat`` runs, both measured in the same run.  Target of issue 17: ratio ≤ 2.

Also printed (not a target): the cost of one certified cdf value, the same law, and of
the semicircle's, against the plain cdf.
"""
import argparse
import platform
import time
from fractions import Fraction

import flint
import mpmath

from freeprob import Semicircle
from freeprob.attention import Architecture, output_law


def law():
    out = output_law(Architecture(heads=4, gamma_k=Fraction(1, 2), gamma_v=Fraction(1, 2),
                                  gamma_o=1, beta=1))
    out.support()                   # set-up (exact layer, special points): not timed
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--points", type=int, default=1000)
    args = ap.parse_args()
    print(f"python {platform.python_version()}, mpmath {mpmath.__version__} "
          f"(backend {mpmath.libmp.BACKEND}), python-flint {flint.__version__}")
    lo, hi = (float(v) for v in law().support()[0])
    n = args.points
    xs = [lo + (hi - lo) * (i + 0.5) / n for i in range(n)]
    best = {}
    for _ in range(args.repeat):
        for ball in (False, True):
            L = law()
            t0 = time.perf_counter()
            L.density(xs, ball=ball)
            dt = time.perf_counter() - t0
            key = "ball" if ball else "plain"
            best[key] = min(best.get(key, dt), dt)
    print(f"{n}-point density grid: plain {best['plain']:.3f} s, ball=True {best['ball']:.3f} s, "
          f"ratio {best['ball'] / best['plain']:.2f} (target <= 2)")
    for name, L, x in (("semicircle", Semicircle(0, 1), Fraction(1, 2)), ("output law", law(), 2)):
        t0 = time.perf_counter()
        L.cdf(x)
        t1 = time.perf_counter()
        L.cdf(x, ball=True)
        t2 = time.perf_counter()
        print(f"cdf({x}) of the {name}: plain {t1 - t0:.3f} s, ball=True {t2 - t1:.3f} s")


if __name__ == "__main__":
    main()
