"""Benchmarks of the exact core (issues 2 and 27); run by hand: ``python benchmarks/bench_core.py``.

1. Exact free cumulants (``--orders``, default 100 and 1000 terms) of
   free_mul(FreePoisson(1/2), FreePoisson(1/3)) through the public call, against the same
   cumulants computed directly with python-flint ``fmpq_series`` in the same run, by the
   one-reversion route: the cumulant series is ``(u S(u))^{<-1>}`` ([NS06] Remark 18.16)
   with ``S(u) = 1/((u + 1/2)(u + 1/3))`` (target: within 2x of this FLINT figure).  For
   context, also the former two-reversion route (moments from ``χ = u S/(1+u)``, then the
   cumulants from ``z M(z)``), in FLINT as well.
2. 100 exact free cumulants of the same law (target: under 0.05 s on a quiet machine).
3. 200 moments at 50 digits (target: under 0.2 s on a quiet machine).

Every figure is the best of ``--repeat`` runs on a fresh law object (no cache); the routes
of one comparison are run in turn in each round, so that they see the same machine load.
"""
import argparse
import os
import platform
import time

import flint
from flint import fmpq, fmpq_series

import freeprob as fp


def law():
    return fp.free_mul(fp.FreePoisson(fp.Rational(1, 2)), fp.FreePoisson(fp.Rational(1, 3)))


def _with_cap(n, fn):
    old = flint.ctx.cap
    flint.ctx.cap = n
    try:
        return fn()
    finally:
        flint.ctx.cap = old


def flint_one_reversion(n):
    """κ_0..κ_n of MP(1/2) ⊠ MP(1/3) in raw ``fmpq_series``: ``Σ κ_k w^k = (u S(u))^{<-1>}``."""
    def run():
        u = fmpq_series([0, 1], prec=n + 1)
        f = u * (u + fmpq(1, 2)).inv() * (u + fmpq(1, 3)).inv()      # u S(u), S = S_a S_b
        return [fmpq(0)] + list(f.reversion().coeffs()[1:n + 1])
    return _with_cap(n + 1, run)


def flint_two_reversions(n):
    """The same by the moments: ``ψ = χ^{<-1>}``, ``χ = u S/(1+u)``, then ``z M(z)`` reversed."""
    def run():
        N = n + 2
        u = fmpq_series([0, 1], prec=N)
        S = (u + fmpq(1, 2)).inv() * (u + fmpq(1, 3)).inv()
        psi = (S * u / (1 + u)).reversion()                           # ψ = Σ m_k z^k
        g = (fmpq_series([0, 1], prec=N + 1) * (1 + psi)).reversion()  # w / C(w)
        C = fmpq_series([0, 1], prec=N + 1) / g
        return [fmpq(0)] + list(C.coeffs()[1:n + 1])
    return _with_cap(n + 3, run)


def side_by_side(fns, repeat):
    """Best time and last value of each function, the functions run in turn in each round."""
    best, values = [float("inf")] * len(fns), [None] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            values[i] = fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best, values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--orders", type=int, nargs="+", default=[100, 1000])
    args = ap.parse_args()
    print(f"python {platform.python_version()}, python-flint {flint.__version__}, "
          f"{platform.machine()}, load average at start {os.getloadavg()[0]:.2f}")

    for n in args.orders:
        repeat = args.repeat if n > 200 else max(args.repeat, 7)
        (t_ours, t_one, t_two), (ours, one, two) = side_by_side(
            [lambda: law().free_cumulants(n), lambda: flint_one_reversion(n),
             lambda: flint_two_reversions(n)], repeat)
        expected = [fp.Rational(int(q.p), int(q.q)) for q in one]
        assert list(ours) == expected and one == two, "routes disagree"
        print(f"[1] {n} exact free cumulants: freeprob {t_ours:.4f} s, FLINT one reversion "
              f"{t_one:.4f} s: ratio {t_ours / t_one:.2f} (target <= 2); FLINT two reversions "
              f"{t_two:.4f} s (ratio to it {t_ours / t_two:.2f})")

    (t100,), _ = side_by_side([lambda: law().free_cumulants(100)], max(args.repeat, 5))
    print(f"[2] 100 exact free cumulants: {t100 * 1e3:.1f} ms (target < 50 ms)")

    (t200,), (vals,) = side_by_side([lambda: law().moments(200, dps=50)], max(args.repeat, 5))
    print(f"[3] 200 moments at 50 digits: {t200 * 1e3:.1f} ms (target < 200 ms); m_200 = {vals[200]}")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
