"""Issue 26: the cdf of the fold pushforward and quantiles next to edges and flat stretches.

Each case runs in a fresh process (no cache from another case), wall time, one run, and is
compared with an independent reference (mpmath, 60 digits; nothing from freeprob):

* ``pushforward(Semicircle(0, 1), x**3 - x).cdf(1/10)`` and ``.quantile(3/10)`` (dps 15):
  the semicircle cdf ``1/2 + (x√(4 − x²)/4 + asin(x/2))/π`` summed over the preimage
  intervals of ``x³ − x ≤ t`` (roots by ``mpmath.polyroots``), inverted by ``findroot``;
* ``Semicircle(0, 1).quantile(10**-30, dps=30)`` (2.8e-20 past the edge):
  ``F(−2 cos θ) = (θ − sin 2θ/2)/π`` solved for ``θ``;
* ``MarchenkoPastur(2).quantile(1/2 + 10**-20, dps=20)`` (just past the atom's flat
  stretch): ``∫`` of ``√((b − x)(x − a))/(4πx)`` from ``a`` by ``mpmath.quad``, inverted.

Usage: ``python benchmarks/bench_quantile.py [--timeout SECONDS]``; prints per case the
value, the relative error against the reference, the wall and CPU time inside the call (CPU
time is the figure to compare on a loaded machine) and the wall time of the whole process (or that it gave no answer within the timeout).  To time another version
of the package, put its tree first on ``PYTHONPATH``.  Figures: docs/benchmarks.md.
"""
import argparse
import subprocess
import sys
import time

import mpmath

_CUBIC = "fp.pushforward(fp.Semicircle(0, 1), sp.Symbol('x')**3 - sp.Symbol('x'))"
CASES = {
    "x^3-x cdf(1/10)": f"{_CUBIC}.cdf(sp.Rational(1, 10))",
    "x^3-x quantile(3/10)": f"{_CUBIC}.quantile(sp.Rational(3, 10))",
    "semicircle quantile(1e-30, dps=30)": "fp.Semicircle(0, 1).quantile(sp.Rational(1, 10**30), dps=30)",
    "MP(2) quantile(1/2 + 1e-20, dps=20)": "fp.MarchenkoPastur(2).quantile(sp.Rational(1, 2) + "
                                           "sp.Rational(1, 10**20), dps=20)",
}


def _sc_cdf(x):
    x = mpmath.mpf(x)
    if x <= -2:
        return mpmath.mpf(0)
    if x >= 2:
        return mpmath.mpf(1)
    return mpmath.mpf(1) / 2 + (x * mpmath.sqrt(4 - x * x) / 4 + mpmath.asin(x / 2)) / mpmath.pi


def _cubic_cdf(t):
    roots = sorted(r.real for r in mpmath.polyroots([1, 0, -1, -t], maxsteps=200, extraprec=300)
                   if abs(r.imag) < mpmath.mpf(10) ** -40)
    if len(roots) == 1:
        return _sc_cdf(roots[0])
    return _sc_cdf(roots[0]) + _sc_cdf(roots[2]) - _sc_cdf(roots[1])


def references():
    """The reference value of each case, 60 digits."""
    with mpmath.workdps(60):
        out = {"x^3-x cdf(1/10)": _cubic_cdf(mpmath.mpf(1) / 10)}
        out["x^3-x quantile(3/10)"] = mpmath.findroot(lambda t: _cubic_cdf(t) - mpmath.mpf(3) / 10,
                                                      (mpmath.mpf(-0.4), mpmath.mpf(-0.2)), solver="anderson")
        p = mpmath.mpf(10) ** -30
        t0 = (3 * mpmath.pi * p / 2) ** (mpmath.mpf(1) / 3)
        th = mpmath.findroot(lambda t: mpmath.log(t - mpmath.sin(2 * t) / 2) - mpmath.log(mpmath.pi * p),
                             (t0, t0 * mpmath.mpf("1.01")))
        out["semicircle quantile(1e-30, dps=30)"] = -2 + 4 * mpmath.sin(th / 2) ** 2
        a, b, d = 3 - 2 * mpmath.sqrt(2), 3 + 2 * mpmath.sqrt(2), mpmath.mpf(10) ** -20
        f_u = (lambda u: mpmath.sqrt(b - a - u * u) * u * 2 * u / (4 * mpmath.pi * (a + u * u)))
        r0 = mpmath.cbrt(d)
        r = mpmath.findroot(lambda r: mpmath.log(mpmath.quad(f_u, [0, r])) - mpmath.log(d),
                            (r0, r0 * mpmath.mpf("1.1")))
        out["MP(2) quantile(1/2 + 1e-20, dps=20)"] = a + r * r
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    refs = references()
    for name, expr in CASES.items():
        code = ("import time, mpmath, sympy as sp, freeprob as fp\n"
                f"t0, c0 = time.perf_counter(), time.process_time(); v = {expr}\n"
                "t, c = time.perf_counter() - t0, time.process_time() - c0\n"
                "print(mpmath.nstr(v, 32), f'{t:.2f}', f'{c:.2f}')")
        t0 = time.perf_counter()
        try:
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 timeout=args.timeout)
            words = out.stdout.split()
            if len(words) == 3:
                with mpmath.workdps(60):
                    err = abs(mpmath.mpf(words[0]) - refs[name]) / abs(refs[name])
                line = f"{words[0]}  rel. error {mpmath.nstr(err, 2)}  call {words[1]} s wall, {words[2]} s CPU"
            else:
                line = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        except subprocess.TimeoutExpired:
            line = f"no answer in {args.timeout:.0f} s"
        print(f"{name:38s} {line}   (process {time.perf_counter() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
