"""Benchmarks of the exact core (issue 2); run by hand: ``python benchmarks/bench_core.py``.

1. 1000 exact free cumulants of free_mul(FreePoisson(1/2), FreePoisson(1/3)) from its
   moments, against the same computation written directly with python-flint
   ``fmpq_series`` in the same run (target: within 2x of the direct FLINT figure).
2. 100 exact free cumulants of the same law (target: under 0.05 s).
3. 200 moments at 50 digits (target: under 0.2 s).

Each figure is the best of ``--repeat`` runs on a fresh law object (no cache).
"""
import argparse
import platform
import time

import flint
from flint import fmpq, fmpq_series

import freeprob as fp


def law():
    return fp.free_mul(fp.FreePoisson(fp.Rational(1, 2)), fp.FreePoisson(fp.Rational(1, 3)))


def direct_flint(n):
    """κ_1..κ_n of MP(1/2) ⊠ MP(1/3) with raw fmpq_series (S-transform closed forms)."""
    old = flint.ctx.cap
    flint.ctx.cap = n + 3
    try:
        N = n + 2
        u = fmpq_series([0, 1], prec=N)
        S = (u + fmpq(1, 2)).inv() * (u + fmpq(1, 3)).inv()      # S_a S_b
        chi = S * u / (1 + u)                                      # χ = S u/(1+u)
        psi = chi.reversion()                                      # ψ = Σ m_k z^k
        f = fmpq_series([0, 1], prec=N + 1) * (1 + psi)            # z M(z)
        g = f.reversion()                                          # w / C(w)
        C = fmpq_series([0, 1], prec=N + 1) / g
        return [fmpq(0)] + list(C.coeffs()[1:n + 1])
    finally:
        flint.ctx.cap = old


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--order", type=int, default=1000)
    args = ap.parse_args()
    n = args.order
    print(f"python {platform.python_version()}, python-flint {flint.__version__}, {platform.machine()}")

    t_ours, ours = best(lambda: law().free_cumulants(n), args.repeat)
    t_flint, ref = best(lambda: direct_flint(n), args.repeat)
    assert list(ours) == [fp.Rational(int(q.p), int(q.q)) for q in ref], "routes disagree"
    print(f"[1] {n} exact free cumulants: freeprob {t_ours:.3f} s, direct FLINT {t_flint:.3f} s, "
          f"ratio {t_ours / t_flint:.2f} (target <= 2)")

    t100, _ = best(lambda: law().free_cumulants(100), max(args.repeat, 5))
    print(f"[2] 100 exact free cumulants: {t100 * 1e3:.1f} ms (target < 50 ms)")

    t200, vals = best(lambda: law().moments(200, dps=50), max(args.repeat, 5))
    print(f"[3] 200 moments at 50 digits: {t200 * 1e3:.1f} ms (target < 200 ms); m_200 = {vals[200]}")


if __name__ == "__main__":
    main()
