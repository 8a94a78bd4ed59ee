"""Benchmark of freeprob.numeric (issue 3); run by hand: ``python benchmarks/bench_density.py``.

The 1000-point density grid of the Fuss–Catalan law of order 3 (free Poisson(1)^{⊠3}),
Cauchy equation ``z³G⁴ − zG + 1 = 0``, support ``[0, 4⁴/3³]``, with
``AlgebraicCauchy.density_grid``:

1. at 50 digits (target: under 2 s);
2. at 15 digits (target: under 0.2 s);
3. for comparison, in the same run, a plain ``mpmath.polyroots`` evaluation of the
   same grid at 50 digits (the root with the most negative imaginary part at
   ``x + i·1e-30``, so agreement is expected to about 25 digits, not 50), and the number
   of points where it disagrees with freeprob to 25 digits.

Each figure is the best of ``--repeat`` runs on a fresh object (no cache), after the
exact set-up (discriminant, series at infinity), which is timed separately.
"""
import argparse
import platform
import time

import mpmath
import sympy as sp

from freeprob.numeric import AlgebraicCauchy
from freeprob.core.symbols import G, z

P = sp.Poly(z**3 * G**4 - z * G + 1, G, z)
EDGE = sp.Rational(256, 27)


def grid(n):
    b = float(EDGE)
    return [b * (i + 0.5) / n for i in range(n)]


def fresh():
    law = AlgebraicCauchy(P)
    t0 = time.perf_counter()
    law.density_grid([1.0], dps=15)          # exact set-up: discriminant, expansion at ∞
    return law, time.perf_counter() - t0


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        law, _ = fresh()
        t0 = time.perf_counter()
        out = fn(law)
        times.append(time.perf_counter() - t0)
    return min(times), out


def polyroots_grid(xs, dps):
    """Density from mpmath.polyroots at x + i·1e-30: the root with the most negative Im."""
    out = []
    with mpmath.workdps(dps):
        eta = mpmath.mpf(10) ** -30
        for x in xs:
            w = mpmath.mpf(x) + 1j * eta
            roots = mpmath.polyroots([w**3, 0, 0, -w, 1], maxsteps=200, extraprec=2 * mpmath.mp.prec)
            g = min(roots, key=lambda r: mpmath.im(r))
            out.append(max(-mpmath.im(g) / mpmath.pi, mpmath.mpf(0)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    xs = grid(args.points)
    print(f"python {platform.python_version()}, mpmath {mpmath.__version__} "
          f"(backend {mpmath.libmp.BACKEND}), {platform.machine()}")
    _, setup = fresh()
    print(f"exact set-up (discriminant, expansion at infinity): {setup:.3f} s")
    t50, v50 = best(lambda law: law.density_grid(xs, dps=50), args.repeat)
    print(f"{args.points}-point grid at 50 digits: {t50:.3f} s   (target < 2 s)")
    t15, v15 = best(lambda law: law.density_grid(xs, dps=15), args.repeat)
    print(f"{args.points}-point grid at 15 digits: {t15:.3f} s   (target < 0.2 s)")
    t0 = time.perf_counter()
    ref = polyroots_grid(xs, 50)
    tp = time.perf_counter() - t0
    with mpmath.workdps(50):
        bad = sum(1 for a, b in zip(v50, ref) if abs(a - b) > mpmath.mpf(10) ** -25 * max(abs(a), 1))
    print(f"plain mpmath.polyroots at 50 digits, same grid: {tp:.3f} s "
          f"(ratio {tp / t50:.1f}); points where it disagrees with freeprob to 25 digits: {bad}")
    with mpmath.workdps(15):
        bad15 = sum(1 for a, b in zip(v15, v50) if a != +b)
    print(f"15-digit grid vs 50-digit grid rounded to 15 digits: {bad15} differences")


if __name__ == "__main__":
    main()
