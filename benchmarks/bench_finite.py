"""Finite free probability against the ``finitefree`` package (issue 30); run by hand:
``python benchmarks/bench_finite.py`` (needs ``pip install finitefree==0.4.1``, which is not
a dependency of freeprob).

For each degree ``d`` (``--degrees``, default 20, 100, 200): two random real-rooted
polynomials with rational roots (numerators in [−99, 99], denominators 5 and 7, seed
``--seed``), then, on the same inputs, side by side (each figure the best of ``--repeat``
rounds, the two packages in turn in each round so that they see the same machine load):

* ``⊞_d`` and ``⊠_d``: freeprob's ``finite_free_add``/``finite_free_mul`` (with
  ``check=False``, as finitefree does not check, and with the default real-rootedness proof)
  against ``finitefree.convolutions.symmetric_additive``/``multiplicative``; the coefficients
  must be equal;
* all ``d`` finite free cumulants: ``finite_free_cumulants`` against
  ``finitefree.FiniteRTransform`` (exact path); equal;
* the roots of ``p ⊞_d q``: ``real_roots(dps=15)`` (certified balls, rounded) against
  finitefree's ``evaluate_roots_float64()`` (its default: Arb isolation, then floats); the
  largest difference, and freeprob's ball radius, say who is right where they differ.
"""
import argparse
import platform
import random
import time

import sympy as sp


def _inputs(d, seed):
    rng = random.Random(seed + d)
    r1 = [sp.Rational(rng.randint(-99, 99), 7) for _ in range(d)]
    r2 = [sp.Rational(rng.randint(-99, 99), 5) for _ in range(d)]
    r2 = [abs(r) for r in r2]                      # non-negative: ⊠_d preserves real roots
    return r1, r2


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def run(d, seed, repeat):
    import finitefree as ff
    from finitefree.convolutions import multiplicative, symmetric_additive

    from freeprob.finite import (finite_free_add, finite_free_cumulants, finite_free_mul,
                                 from_roots, real_roots)
    r1, r2 = _inputs(d, seed)
    p, q = from_roots(r1), from_roots(r2)
    P, Q = ff.RealRootedPolynomial.from_roots(r1), ff.RealRootedPolynomial.from_roots(r2)
    rows = {}
    tasks = {
        "⊞_d (no check)": (lambda: finite_free_add(p, q, check=False), lambda: symmetric_additive(P, Q, d)),
        "⊞_d (checked)": (lambda: finite_free_add(p, q), lambda: symmetric_additive(P, Q, d)),
        "⊠_d (no check)": (lambda: finite_free_mul(p, q, check=False), lambda: multiplicative(P, Q, d)),
        "cumulants κ_1..κ_d": (lambda: finite_free_cumulants(p), lambda: ff.FiniteRTransform(P, order=d)),
    }
    for name, (ours, theirs) in tasks.items():
        t_ours, t_theirs = [], []
        for _ in range(repeat):
            a, out_ours = _timed(ours)
            b, out_theirs = _timed(theirs)
            t_ours.append(a)
            t_theirs.append(b)
        if name.startswith("cumulants"):
            same = list(out_ours[1:]) == [sp.Rational(c) for c in out_theirs]
        else:
            same = out_ours.all_coeffs() == [sp.Rational(c) for c in out_theirs.coeffs]
        rows[name] = (min(t_ours), min(t_theirs), "equal" if same else "DIFFER")
    s = finite_free_add(p, q, check=False)
    t_ours, t_theirs = [], []
    for _ in range(max(1, repeat // 2)):
        a, ours = _timed(lambda: real_roots(s, dps=15, ball=True))
        S = symmetric_additive(P, Q, d)              # fresh object: no cached roots
        b, theirs = _timed(S.evaluate_roots_float64)
        t_ours.append(a)
        t_theirs.append(b)
    diff = max(abs(float(o.mid()) - float(t)) / max(1.0, abs(float(t))) for o, t in zip(ours, theirs))
    rad = max(float(o.rad()) / max(1.0, abs(float(o.mid()))) for o in ours)
    rows["roots of ⊞_d (15 digits)"] = (min(t_ours), min(t_theirs),
                                       f"max rel. diff {diff:.1e} (our ball radius ≤ {rad:.0e})")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degrees", default="20,100,200")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import finitefree
    import flint
    print(f"# {platform.machine()}, Python {platform.python_version()}, python-flint {flint.__version__}, "
          f"finitefree {getattr(finitefree, '__version__', '0.4.1')}; best of {args.repeat} rounds")
    print("| d | task | freeprob | finitefree | ratio | outputs |")
    print("|---|---|---|---|---|---|")
    for d in map(int, args.degrees.split(",")):
        for name, (a, b, note) in run(d, args.seed, args.repeat).items():
            print(f"| {d} | {name} | {a * 1e3:.2f} ms | {b * 1e3:.2f} ms | {a / b:.2f} | {note} |", flush=True)


if __name__ == "__main__":
    main()
