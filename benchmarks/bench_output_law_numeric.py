"""Benchmark of issue 17 ("use what the law knows"); run by hand:
``python benchmarks/bench_output_law_numeric.py``.

The law is ``output_law(Architecture(heads=4, gamma_k=1/2, gamma_v=1/2, gamma_o=1, beta=1))``
(Cauchy equation of degree 8 in G with coefficients in ℤ[e], an atom of mass 1/2 at 0).
Measured in one run, each figure the best of ``--repeat`` runs, each run on a fresh law
object whose Cauchy equation was derived before the clock starts (that exact step is the
same for both sides and is timed separately):

* ``analysis``: ``support()`` + ``atoms()`` + ``cdf`` at 0.5, 2 and 8 (default dps);
* ``grid (fresh)``: a 200-point ``density`` grid across the support on a fresh law
  (it pays for the same numeric set-up: discriminant, special points, kernels);
* ``grid (warm)``: the same grid again on a law whose set-up is done (the support
  computed first), i.e. the marginal cost of a grid.

The ratio printed is analysis / grid for both grids.  Target of issue 17: ≤ 3.
"""
import argparse
import platform
import time
from fractions import Fraction

import mpmath

from freeprob.attention import Architecture, output_law

CDF_POINTS = (0.5, 2, 8)

#: figures of the same script before issue 17 (mpmath's pure-Python backend, same machine)
BEFORE = {"support": 0.90, "atoms": 0.017, "cdf x3": 1.12, "analysis": 2.04,
          "grid (fresh)": 0.30, "grid (warm)": 0.030}


def law():
    out = output_law(Architecture(heads=4, gamma_k=Fraction(1, 2), gamma_v=Fraction(1, 2),
                                  gamma_o=1, beta=1))
    out.cauchy_equation()           # exact layer: not timed
    return out


def grid_points(n=200):
    lo, hi = (float(v) for v in law().support()[0])
    return [lo + (hi - lo) * (i + 0.5) / n for i in range(n)]


def analysis(L):
    times = {}
    t0 = time.perf_counter()
    L.support()
    times["support"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    L.atoms()
    times["atoms"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    for x in CDF_POINTS:
        L.cdf(x)
    times["cdf x3"] = time.perf_counter() - t2
    times["analysis"] = time.perf_counter() - t0
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"python {platform.python_version()}, mpmath {mpmath.__version__} "
          f"(backend {mpmath.libmp.BACKEND}), {platform.machine()}")
    t0 = time.perf_counter()
    law()
    print(f"Cauchy equation (exact, not in the figures): {time.perf_counter() - t0:.3f} s")
    xs = grid_points()
    best = {}

    def keep(name, value):
        best[name] = min(best.get(name, value), value)

    for _ in range(args.repeat):
        for name, value in analysis(law()).items():
            keep(name, value)
        L = law()
        t0 = time.perf_counter()
        L.density(xs)
        keep("grid (fresh)", time.perf_counter() - t0)
        L = law()
        L.support()
        t0 = time.perf_counter()
        L.density(xs)
        keep("grid (warm)", time.perf_counter() - t0)
    print(f"{'':14s} {'before':>8s} {'now':>8s}")
    for name in ("support", "atoms", "cdf x3", "analysis", "grid (fresh)", "grid (warm)"):
        print(f"{name:14s} {BEFORE[name]:8.3f} {best[name]:8.3f}   s")
    for g in ("grid (fresh)", "grid (warm)"):
        print(f"ratio analysis / {g:12s}: before {BEFORE['analysis'] / BEFORE[g]:6.1f}   "
              f"now {best['analysis'] / best[g]:6.1f}   (target <= 3)")


if __name__ == "__main__":
    main()
