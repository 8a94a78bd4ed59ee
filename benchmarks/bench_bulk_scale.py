"""Issue 29 figures: the finite-d_K bulk scale under the empirical softmax normaliser
(freeprob.attention.normaliser; theory.md §7 "The finite-d_K bulk scale"); run by hand:
``nice -n 10 python benchmarks/bench_bulk_scale.py [--part 1 2 3] [--seeds 40]``.

1. Row statistics of sampled softmax heads (n = 512, d_K = 8, 16, 32, β = 1/2, 1; ``--seeds``
   draws of Q, K): the coordinate variance ``E(nA − 1)²`` and the mean column variance (the
   trace of the row covariance given the keys, the bulk scale), mean ± 95 % t-interval over
   the draws, against the limit ``θ1 = e^{β²} − 1``, the expected-normaliser
   ``θ1^fw = (1 − 2β²/d_K)^{−d_K/2} − 1`` and the exact values ``V``, ``θ1^emp = V − M``.
2. The head-count setting (paper D.2: n = 512, d_K = d_V = 8, d_O = 1024, h = 32/64/128; 3
   draws): the mean of the bulk of ``F Fᵀ`` (``F = O_full/√m1``, without its two top
   eigenvalues) and of the centred ``O Oᵀ/m1`` (all eigenvalues, and without the top one)
   against the means of the limit law (1) and of the finite-width law (``θ1^emp/θ1``).
3. relW1 of sampled softmax spectra (top eigenvalue removed, as ``freeprob verify`` does) to
   the finite-width law with three totals: ``limit`` (θ1, the default before issue 29),
   ``white`` (``θ1^emp``, the difference in the white-noise remainder only) and
   ``empirical`` (``θ1^emp``, every chaos piece scaled by ``θ1^emp/θ1``: the default);
   paired over draws (seeds 100, 101, …).
"""
import argparse
import math
import time
from contextlib import contextmanager

import numpy as np
import sympy as sp

from freeprob.attention import Architecture
from freeprob.attention import finite_width as fw
from freeprob.attention import laws as L
from freeprob.attention.normaliser import empirical_row_variance, empirical_theta1
from freeprob.experiments.compare import TabulatedLaw, law_distances
from freeprob.experiments.stats import mean_interval, paired_comparison
from freeprob.sampler import Dimensions, sample_objects, spectra
from freeprob.sampler.model import softmax_attention


def part1(seeds):
    print("| d_K | β | E(nA−1)² sampled | V exact | mean column variance sampled | θ1^emp = V − M | θ1 (limit) "
          "| θ1^fw (expected normaliser) | in the interval |")
    print("|---|---|---|---|---|---|---|---|---|")
    n = 512
    for dk in (8, 16, 32):
        for beta in (0.5, 1.0):
            v, col = [], []
            for s in range(seeds):
                rng = np.random.default_rng([29, dk, int(4 * beta), s])
                x = n * softmax_attention(rng.standard_normal((n, dk)), rng.standard_normal((n, dk)), beta) - 1
                v.append(float((x * x).mean()))
                col.append(float(x.var(axis=0, ddof=1).mean()))
            mv, mc = mean_interval(v), mean_interval(col)
            vx = empirical_row_variance(beta, dk, n)
            te = float(empirical_theta1(sp.nsimplify(beta), dk, n))
            lim = math.exp(beta**2) - 1
            exp_ = (1 - 2 * beta**2 / dk) ** (-dk / 2) - 1
            inside = [name for name, val in (("limit", lim), ("θ1^fw", exp_), ("V", vx)) if mv.lo <= val <= mv.hi]
            inside_c = [name for name, val in (("limit", lim), ("θ1^fw", exp_), ("θ1^emp", te))
                        if mc.lo <= val <= mc.hi]
            print(f"| {dk} | {beta} | {mv.mean:.4f} ± {mv.half:.4f} | {vx:.4f} | {mc.mean:.4f} ± {mc.half:.4f} | "
                  f"{te:.4f} | {lim:.4f} | {exp_:.4f} | {', '.join(inside) or '–'}; {', '.join(inside_c) or '–'} |",
                  flush=True)


def part2(draws):
    n = 512
    t1 = math.e - 1
    pred = float(empirical_theta1(1, 8, n)) / t1
    print(f"finite-width law mean (features' units): θ1^emp/θ1 = {pred:.4f}; limit law: 1")
    print("| h | bulk of FFᵀ without top 2 (mean ± 95 %) | centred OOᵀ/m1, all | centred, without top 1 |")
    print("|---|---|---|---|")
    for h in (32, 64, 128):
        dims = Dimensions(n=n, heads=h, d_k=8, d_v=8, d_o=2 * n)
        full, cen, cen1 = [], [], []
        for s in range(draws):
            o = sample_objects(dims, 1.0, rng=np.random.default_rng(s), objects=("out_full", "out"))
            m1 = t1 * dims.d_o / n
            lam = np.sort(np.linalg.eigvalsh(o["out_full"] @ o["out_full"].T / m1))
            lo = np.sort(np.linalg.eigvalsh(o["out"] @ o["out"].T / m1))
            full.append(float(lam[:-2].mean()))
            cen.append(float(lo.mean()))
            cen1.append(float(lo[:-1].mean()))
        a, b, c = (mean_interval(x) for x in (full, cen, cen1))
        print(f"| {h} | {a.mean:.4f} ± {a.half:.4f} | {b.mean:.4f} ± {b.half:.4f} | {c.mean:.4f} ± {c.half:.4f} |",
              flush=True)


_ORIG = fw.chaos_weights


@contextmanager
def _total(mode):
    """The finite-width laws with the total ``mode`` (``limit``, ``white``, ``empirical``)."""
    def patched(beta, d_k, levels=None, *, exact_variance=False, n=None, variance=None):
        if mode == "limit":
            return _ORIG(beta, d_k, levels, variance="limit")
        if mode == "white":
            w, rest = _ORIG(beta, d_k, levels, variance="limit")
            return w, rest + empirical_theta1(beta, d_k, n) - (sp.exp(sp.sympify(beta) ** 2) - 1)
        return _ORIG(beta, d_k, levels, n=n, variance="empirical")
    fw.chaos_weights = patched
    try:
        yield
    finally:
        fw.chaos_weights = _ORIG


def part3(draws):
    fn = {"single": L.attention_law, "out": L.output_law}
    cases = [("out n=512 h=32 dK=dV=8 dO=1024 β=1 (head count)", Dimensions(n=512, heads=32, d_k=8, d_v=8, d_o=1024),
              1, "out"),
             ("out n=64 h=4 dK=dV=16 dO=64 β=1 (verify tiny)", Dimensions(n=64, heads=4, d_k=16, d_v=16, d_o=64),
              1, "out"),
             ("single n=512 dK=8 β=1", Dimensions(n=512, heads=1, d_k=8, d_v=8, d_o=8), 1, "single"),
             ("out n=384 h=6 dK=dV=32 dO=384 β=1", Dimensions(n=384, heads=6, d_k=32, d_v=32, d_o=384), 1, "out"),
             ("single n=512 dK=32 β=1/2", Dimensions(n=512, heads=1, d_k=32, d_v=32, d_o=32), sp.Rational(1, 2),
              "single")]
    print("| case | law mean limit / empirical | relW1 limit (%) | white (%) | empirical (%) | "
          "empirical − limit (paired, 95 %) | empirical − white (paired, 95 %) |")
    print("|---|---|---|---|---|---|---|")
    for label, dims, beta, obj in cases:
        t = time.time()
        arch = Architecture.from_dimensions(n=dims.n, heads=dims.heads, d_k=dims.d_k, d_v=dims.d_v, d_o=dims.d_o,
                                            beta=beta)
        sm = [np.sort(np.asarray(spectra(dims, float(beta), rng=np.random.default_rng(100 + s), models=("softmax",),
                                         objects=(obj,))["softmax", obj]))[:-1] for s in range(draws)]
        r, means = {}, {}
        for mode in ("limit", "white", "empirical"):
            with _total(mode):
                law = fn[obj](arch, finite_width=True)
                tab = TabulatedLaw.from_law(law, points=300)
            r[mode] = [100 * law_distances(e, tab)["relW1"] for e in sm]
            means[mode] = float(law.moments(1, dps=15)[1])
        p1 = paired_comparison(r["empirical"], r["limit"], lower="closer", higher="farther")
        p2 = paired_comparison(r["empirical"], r["white"], lower="closer", higher="farther")
        print(f"| {label} | {means['limit']:.4f} / {means['empirical']:.4f} | {np.mean(r['limit']):.2f} | "
              f"{np.mean(r['white']):.2f} | {np.mean(r['empirical']):.2f} | {p1.mean:+.2f} ± {p1.half:.2f} "
              f"(p = {p1.p:.2g}) | {p2.mean:+.2f} ± {p2.half:.2f} (p = {p2.p:.2g}) | ({time.time() - t:.0f} s)",
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", type=int, nargs="*", default=[1, 2, 3])
    ap.add_argument("--seeds", type=int, default=40, help="draws of part 1")
    ap.add_argument("--draws", type=int, default=6, help="draws of parts 2 and 3")
    args = ap.parse_args()
    for p in args.part:
        print(f"\n## part {p}\n", flush=True)
        {1: lambda: part1(args.seeds), 2: lambda: part2(args.draws), 3: lambda: part3(args.draws)}[p]()


if __name__ == "__main__":
    main()
