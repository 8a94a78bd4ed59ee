"""The attention laws at finite n against pooled samples (issue 29; docs/theory.md §13.7).

The GE model's expected law at the layer's sizes (freeprob.attention.finite_n: the exact-size
tree plus the 1/n term) against the limit law, for the pooled eigenvalues of G groups of
20 draws (fresh seeds per group; nothing is fitted, so every group is held out): relW1 of
each group's pooled sample against each law, the ratio finite/limit, and the paired
difference limit − finite over groups with its 95% t-interval ("not significant" when the
interval contains 0).  Softmax (coupled with the GE draws: the same Q, K, V, W_O) is
compared the same way: what the 1/n term does for softmax, and what remains (the
finite-width effects of docs/theory.md §7).

Settings (the issue's): β = 1; single head with d_K = 32; output with h = 4,
d_K = d_V = 32, d_O = h·d_V = 128; n = 256 and 512.

Pools of 20 draws still carry ≈ 0.5% of sampling noise; benchmarks/finite_n_pooled.py measures
the bias with 1000-draw pools (theory §13.10).

A measurement (no assertion: it prints the table of theory §13.7), run by hand:
nice python benchmarks/finite_n_attention.py [single|out] [n ...]   (about 10 min per n on a quiet core)
"""
import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")      # one BLAS thread (before numpy)
import time

import numpy as np

from freeprob import attention
from freeprob.attention.architecture import Architecture, Dimensions
from freeprob.experiments.compare import TabulatedLaw, law_distances, two_sample_distances
from freeprob.experiments.stats import mean_interval
from freeprob.sampler.spectra import spectra

BETA, DRAWS, GROUPS, POINTS = 1, 20, 5, 200
CASES = {"single": (1, "attention_law"), "out": (4, "output_law")}


def pooled(dims, obj, group):
    rng = np.random.default_rng([29, dims.n, group, 0 if obj == "single" else 1])
    lam = {"ge": [], "softmax": []}
    for _ in range(DRAWS):
        s = spectra(dims, float(BETA), rng=rng, models=("softmax", "ge"), objects=(obj,))
        for m in lam:
            lam[m].append(s[m, obj])
    return {m: np.concatenate(v) for m, v in lam.items()}


def interval_text(values):
    iv = mean_interval(values)
    lo, hi = iv.lo, iv.hi
    sig = "" if lo > 0 or hi < 0 else " (not significant)"
    return f"{iv.mean:.5f} [{lo:.5f}, {hi:.5f}]{sig}"


def run(n):
    for obj, (h, name) in CASES.items():
        arch = Architecture.from_dimensions(n=n, heads=h, d_k=32, d_v=32, d_o=h * 32, beta=BETA)
        dims = Dimensions(n, h, 32, 32, h * 32)
        t0 = time.process_time()
        law = getattr(attention, name)
        lim = TabulatedLaw.from_law(law(arch), points=POINTS)
        fin = TabulatedLaw.from_law(law(arch, finite_n=True), points=POINTS)
        t_tab = time.process_time() - t0
        rows = {m: {"lim": [], "fin": []} for m in ("ge", "softmax")}
        groups = []
        for g in range(GROUPS):
            lam = pooled(dims, obj, g)
            groups.append(lam["ge"])
            for m, v in lam.items():
                rows[m]["lim"].append(law_distances(v, lim)["relW1"])
                rows[m]["fin"].append(law_distances(v, fin)["relW1"])
        # the sampling noise of one pooled group: two independent groups differ by about √2 times it
        floor = [two_sample_distances(groups[i], groups[i + 1])["relW1"] / np.sqrt(2) for i in range(GROUPS - 1)]
        print(f"n = {n}, {obj} (h = {h}, d_K = d_V = 32, d_O = {h * 32}); tabulation {t_tab:.0f} s CPU; "
              f"{GROUPS} groups of {DRAWS} draws, relW1 of each pooled group; noise floor of one GE group "
              f"(two-sample relW1 of consecutive groups/√2) {np.mean(floor):.5f}:", flush=True)
        for m, r in rows.items():
            a, b = np.array(r["lim"]), np.array(r["fin"])
            print(f"  {m:8s} limit {interval_text(a)}  finite-n {interval_text(b)}")
            print(f"  {'':8s} ratio finite/limit {interval_text(b / a)}; paired limit − finite "
                  f"{interval_text(a - b)}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    only = [a for a in args if a in CASES]
    if only:
        CASES = {k: CASES[k] for k in only}
    for n in [int(a) for a in args if a not in CASES and a not in only] or [256, 512]:
        run(n)
