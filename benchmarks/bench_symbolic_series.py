"""Symbolic series in FLINT (issues 17 and 27): freeprob against raw FLINT, measured in one run.

Run ``python benchmarks/bench_symbolic_series.py [--order 30] [--big 200] [--repeat 3]``.

1. ``free_mul(FreePoisson(t1), FreePoisson(t2)).moments(order)`` through the public call
   (sympy values), against the same moments computed directly in python-flint
   ``fmpq_mpoly`` by Lagrange inversion and converted to sympy expressions:
   ``χ(u) = u S(u)/(1+u) = u/((1+u)(t1+u)(t2+u))``, so
   ``m_k = (1/k) [u^{k-1}] φ^k`` with ``φ = (1+u)(t1+u)(t2+u)`` (powers in one packed
   polynomial in ``t1, t2, u``, truncated by the remainder modulo ``u^order``), each
   ``m_k`` then made a sympy expression by ``sympy.Poly.from_dict(...).as_expr()``
   (target: the public call within 2x of this FLINT + sympy route).  Also shown: the series
   step alone (``Law._m`` in the exact ring, FLINT elements) against the FLINT series alone,
   the two conversions to sympy on their own, and the public call against the FLINT series
   converted by freeprob's own one-pass conversion
   (:func:`freeprob.core.mpolyseries.poly_expr`: the tightest reference).
2. ``FreePoisson(t).moments(big)``: the same comparison, ``φ = (1+u)(t+u)``.
3. With ``--legacy``: the free_mul moments through the former route (sympy's ``ZZ(t1, t2)``
   field, the :class:`~freeprob.core.coefficients.SymbolicRing`), at ``--legacy-order``.

Each figure is the best of ``--repeat`` runs on fresh laws (no cache); the routes of one
comparison run in turn in each round, so that they see the same machine load.  The FLINT
values are checked against freeprob's (identical sympy expressions).
"""
from __future__ import annotations

import argparse
import os
import time

import flint
import sympy as sp

from freeprob.core import coefficients as _coeff
from freeprob.core.mpolyseries import poly_expr
from freeprob.laws.families import FreePoisson
from freeprob.laws.operations import free_mul


def flint_lagrange_moments(rates, order):
    """``[m_1, …, m_order]`` of ``FreePoisson(r_1) ⊠ …`` (one factor: ``FreePoisson(r_1)``)
    as ``fmpq_mpoly`` in the symbols ``rates`` (and ``u``, absent), by Lagrange inversion."""
    ctx = flint.fmpq_mpoly_ctx.get(tuple(map(str, rates)) + ("u",), "lex")
    *ts, u = ctx.gens()
    phi = 1 + u
    for t in ts:
        phi = phi * (t + u)
    out, power = [], ctx.constant(1)
    for k in range(1, order + 1):
        power = divmod(power * phi, u ** order)[1]             # φ^k mod u^order
        low = divmod(power, u ** k)[1]                         # φ^k mod u^k
        out.append(divmod(low, u ** (k - 1))[0] / k)           # [u^{k-1}] φ^k / k
    return out


def sympy_exprs(polys, gens):
    """The ``fmpq_mpoly`` ``polys`` (free of the last variable) as sympy expressions in
    ``gens``, by sympy's ``Poly.from_dict(...).as_expr()``."""
    n = len(gens)
    return [sp.Poly.from_dict({m[:n]: sp.Rational(int(c.p), int(c.q)) for m, c in p.to_dict().items()},
                              *gens, domain=sp.QQ).as_expr() for p in polys]


def side_by_side(fns, repeat):
    """Best time and last value of each function, the functions run in turn in each round."""
    best, values = [float("inf")] * len(fns), [None] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            values[i] = fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best, values


def compare(title, make, gens, order, repeat):
    """Print the public call, the series step and the conversion against raw FLINT."""
    def public():
        return make().moments(order)

    def series():
        law = make()
        ring = law._exact_ring()
        return ring, law._m(ring, order)

    def raw_series():
        return flint_lagrange_moments(gens, order)

    def raw_public():
        return sympy_exprs(flint_lagrange_moments(gens, order), gens)

    (t_pub, t_ser, t_raw, t_rawpub), (pub, (ring, vals), raw, rawpub) = side_by_side(
        [public, series, raw_series, raw_public], repeat)
    assert tuple(pub[1:]) == tuple(rawpub), "freeprob and FLINT disagree"
    (t_conv, t_rawconv, t_rawfast), _ = side_by_side(
        [lambda: [ring.to_sympy(v) for v in vals], lambda: sympy_exprs(raw, gens),
         lambda: [poly_expr(p, gens) for p in raw]], repeat)
    terms = sum(len(sp.Add.make_args(e)) for e in pub)
    print(f"\n{title}, {order} moments ({terms} terms in all), best of {repeat}:")
    print(f"  public call (sympy values)   freeprob {t_pub:8.4f} s   FLINT + sympy {t_rawpub:8.4f} s   "
          f"ratio {t_pub / t_rawpub:5.2f} (target <= 2)")
    print(f"  series step                  freeprob {t_ser:8.4f} s   FLINT         {t_raw:8.4f} s   "
          f"ratio {t_ser / t_raw:5.2f}")
    print(f"  conversion to sympy          freeprob {t_conv:8.4f} s   sympy Poly    {t_rawconv:8.4f} s   "
          f"({100 * t_conv / t_pub:.0f}% of the public call)")
    print(f"  public call vs FLINT + freeprob's one-pass conversion (poly_expr) of the FLINT "
          f"values: ratio {t_pub / (t_raw + t_rawfast):5.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--order", type=int, default=30)
    ap.add_argument("--big", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--legacy", action="store_true")
    ap.add_argument("--legacy-order", type=int, default=30)
    args = ap.parse_args(argv)
    t1, t2, t = sp.symbols("t1 t2 t", positive=True)

    def law():
        return free_mul(FreePoisson(t1), FreePoisson(t2))

    print(f"python-flint {flint.__version__}, sympy {sp.__version__}; exact ring: "
          f"{law()._exact_ring()!r}; load average at start {os.getloadavg()[0]:.2f}")
    compare("free_mul(FreePoisson(t1), FreePoisson(t2))", law, (t1, t2), args.order,
            max(args.repeat, 5))
    compare("FreePoisson(t)", lambda: FreePoisson(t), (t,), args.big, args.repeat)

    if args.legacy:
        eligible = _coeff.MpolyRing.eligible
        _coeff.MpolyRing.eligible = classmethod(lambda cls, ring: False)
        try:
            k = args.legacy_order
            (t_old,), (old,) = side_by_side([lambda: law().moments(k)], 1)
        finally:
            _coeff.MpolyRing.eligible = eligible
        (t_new,), (new,) = side_by_side([lambda: law().moments(k)], 1)
        assert old == new
        print(f"\nformer route (SymbolicRing, sympy field), {k} moments of the free_mul law: "
              f"{t_old:9.4f} s; now {t_new:9.4f} s (identical sympy values)")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
