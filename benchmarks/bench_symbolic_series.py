"""Symbolic series in FLINT (issue 17): freeprob against raw FLINT, measured in one run.

Run ``python benchmarks/bench_symbolic_series.py [--order 30] [--big 200] [--repeat 3]``.

1. ``free_mul(FreePoisson(t1), FreePoisson(t2)).moments(order)`` through freeprob, against
   the same moments computed directly in python-flint ``fmpq_mpoly`` by Lagrange inversion:
   ``χ(u) = u S(u)/(1+u) = u/((1+u)(t1+u)(t2+u))``, so
   ``m_k = (1/k) [u^{k-1}] ((1+u)(t1+u)(t2+u))^k`` (powers in one packed polynomial in
   ``t1, t2, u``, truncated by the remainder modulo ``u^order``).  Three freeprob figures:
   the exact ring it chooses; the series computation in that ring (``Law._m``, FLINT
   elements: the figure to compare with raw FLINT); and the public ``moments`` (sympy
   values, which adds the conversion to sympy expressions).  Each is the best of
   ``--repeat`` runs on fresh laws (no cache).  The raw FLINT values are checked against
   freeprob's.
2. ``FreePoisson(t).moments(big)``: the public call (sympy out).
3. With ``--legacy``: the same through the former route (sympy's ``ZZ(t1, t2)`` field, the
   :class:`~freeprob.core.coefficients.SymbolicRing`), at ``--legacy-order`` (default 30).
"""
from __future__ import annotations

import argparse
import time

import flint
import sympy as sp

from freeprob.core import coefficients as _coeff
from freeprob.laws.families import FreePoisson
from freeprob.laws.operations import free_mul


def raw_flint_moments(order):
    """``[m_1, …, m_order]`` of FreePoisson(t1) ⊠ FreePoisson(t2) as ``fmpq_mpoly`` in
    ``t1, t2`` (and ``u``, absent), by Lagrange inversion."""
    ctx = flint.fmpq_mpoly_ctx.get(("t1", "t2", "u"), "lex")
    t1, t2, u = ctx.gens()
    phi = (1 + u) * (t1 + u) * (t2 + u)
    out, power = [], ctx.constant(1)
    for k in range(1, order + 1):
        power = divmod(power * phi, u ** order)[1]             # φ^k mod u^order
        low = divmod(power, u ** k)[1]                         # φ^k mod u^k
        out.append(divmod(low, u ** (k - 1))[0] / k)           # [u^{k-1}] φ^k / k
    return out


def best(fn, repeat):
    times, value = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--order", type=int, default=30)
    ap.add_argument("--big", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--legacy", action="store_true")
    ap.add_argument("--legacy-order", type=int, default=30)
    args = ap.parse_args(argv)
    n = args.order
    t1, t2, t = sp.symbols("t1 t2 t", positive=True)

    def law():
        return free_mul(FreePoisson(t1), FreePoisson(t2))

    ring = law()._exact_ring()
    print(f"python-flint {flint.__version__}, sympy {sp.__version__}; exact ring: {ring!r}")
    t_raw, raw = best(lambda: raw_flint_moments(n), args.repeat)

    def ring_level():
        L = law()
        r = L._exact_ring()
        return r, L._m(r, n)

    t_ring, (r, vals) = best(ring_level, args.repeat)
    t_public, public = best(lambda: law().moments(n), args.repeat)
    # check: raw FLINT and freeprob agree (compare in sympy)
    t1s, t2s = sp.symbols("t1 t2", positive=True)
    for k in (1, 2, n // 2, n):
        d = {m[:2]: c for m, c in raw[k - 1].to_dict().items()}
        raw_expr = sp.Add(*[sp.Rational(int(c.p), int(c.q)) * t1s ** a * t2s ** b
                            for (a, b), c in d.items()])
        assert sp.expand(raw_expr - public[k]) == 0, k
    print(f"\n{n} moments of free_mul(FreePoisson(t1), FreePoisson(t2)), best of {args.repeat}:")
    print(f"  raw FLINT fmpq_mpoly, Lagrange inversion   {t_raw:9.4f} s")
    print(f"  freeprob series in {type(r).__name__:<10} (Law._m)  {t_ring:9.4f} s   "
          f"ratio {t_ring / t_raw:6.2f}")
    print(f"  freeprob Law.moments (sympy values)        {t_public:9.4f} s   "
          f"ratio {t_public / t_raw:6.2f}")

    t_big, big = best(lambda: FreePoisson(t).moments(args.big), 1)
    print(f"\nFreePoisson(t).moments({args.big}) (sympy values)  {t_big:9.4f} s   "
          f"(m_{args.big} has {len(sp.Add.make_args(big[-1]))} terms)")

    if args.legacy:
        eligible = _coeff.MpolyRing.eligible
        _coeff.MpolyRing.eligible = classmethod(lambda cls, ring: False)
        try:
            k = args.legacy_order
            t_old, old = best(lambda: law().moments(k), 1)
        finally:
            _coeff.MpolyRing.eligible = eligible
        t_new, new = best(lambda: law().moments(k), 1)
        assert old == new
        print(f"\nformer route (SymbolicRing, sympy field), {k} moments of the free_mul law: "
              f"{t_old:9.4f} s; now {t_new:9.4f} s (identical sympy values)")


if __name__ == "__main__":
    main()
