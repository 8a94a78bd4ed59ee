"""The pooled-distance targets of the finite-n law (issue 29; docs/theory.md §13.10).

The distance between a finite-n spectrum and a law has two parts:

* the **bias** of the law: the distance between the law and the *expected* spectral law of the
  finite-n model, which a 1/n term can remove;
* the **fluctuation** of one draw around that expected law, which no law removes.

Pooling R draws keeps the bias and divides the fluctuation by about √R.  This script samples the
GE model (freeprob.sampler.spectra, model "ge") R times at n = 256 and 512, β = 1, for the single
head (d_K = 32) and the centred output (h = 4, d_K = d_V = 32, d_O = h·d_V = 128), and prints:

* the mean per-draw relW1 to the limit law (the fluctuation-dominated figure);
* relW1 of the pooled R-draw sample to the limit law and to the finite-n law
  (attention.*_law(arch, finite_n=True)), their ratio, and a percentile bootstrap interval of
  the ratio over draws (B resamples of the R draws with replacement; a resampled pool repeats
  draws, so it is noisier than the pool and the interval lies above the estimate), and the
  t-interval of the ratio over 5 independent pools of R/5 draws (noisier too: conservative);
* the noise floor of the pooled sample: the two-sample relW1 between the two halves of the draws,
  divided by 2 (two halves of R/2 draws differ by about 2× the noise of the whole R-draw pool);
* the mean sampled moments m1…m4 against the limit law's and the finite-n law's exact moments, in
  standard errors over draws (the sharp check of the 1/n coefficients).

The GE model has no outlier in these objects (the common-row spike is a property of out_full, and
the key-norm outliers belong to softmax), so every eigenvalue enters, snapped onto the laws' atoms
(freeprob.experiments.compare.law_distances), as in freeprob verify for the rows without an outlier.
On request ("out_full") the uncentred output is measured as verify does: its top eigenvalue left
out (freeprob.experiments.verify_finite_n._bulk), the bulk against the centred output's laws.

Seeds: "dev" (used while the law was being checked) and "heldout" (numpy SeedSequence
[29, 8, n, object], never used before the recorded run).

Run by hand (a measurement, no assertion):
nice python benchmarks/finite_n_pooled.py [single] [out] [out_full] [256] [512] [--draws R] [--seeds dev|heldout]
(the table of docs/theory.md §13.10: single out 256 512 --draws 1000 --seeds heldout, ≈ 10 min)
"""
import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")      # one BLAS thread (before numpy)
import time

import numpy as np

from freeprob import attention
from freeprob.attention.architecture import Architecture, Dimensions
from freeprob.attention.finite_n import finite_n_law
from freeprob.experiments.compare import TabulatedLaw, law_distances, two_sample_distances
from freeprob.experiments.stats import mean_interval
from freeprob.experiments.verify_finite_n import _bulk
from freeprob.sampler.spectra import spectra

BETA, POINTS, BOOT, GROUPS = 1, 400, 200, 5
CASES = {"single": (1, "attention_law", 0.7), "out": (4, "output_law", 0.5),
         # the uncentred output: its top eigenvalue (the common-row spike) left out as in verify,
         # the bulk against the centred output's limit law and the finite-n law of the bulk
         # (finite_n_law(arch, "out_full"); no issue target; run on request)
         "out_full": (4, "output_law", None)}
DEFAULT = ("single", "out")
SEEDS = {"dev": 7, "heldout": 8}


def sample(dims, obj, draws, stream):
    rng = np.random.default_rng([29, SEEDS[stream], dims.n, list(CASES).index(obj)])
    return np.array([spectra(dims, float(BETA), rng=rng, models=("ge",), objects=(obj,))["ge", obj]
                     for _ in range(draws)])


def moment_check(lam, laws):
    """Mean sampled m1…m4 over draws against each law's moments, in standard errors."""
    m = np.stack([np.mean(lam ** k, axis=1) for k in range(1, 5)], axis=1)
    mean, se = m.mean(axis=0), m.std(axis=0, ddof=1) / np.sqrt(len(m))
    return {name: (mean - law.moments[1:5]) / se for name, law in laws.items()}, mean, se


def run(n, obj, draws, stream):
    h, name, target = CASES[obj]
    arch = Architecture.from_dimensions(n=n, heads=h, d_k=32, d_v=32, d_o=h * 32, beta=BETA)
    dims = Dimensions(n, h, 32, 32, h * 32)
    law = getattr(attention, name)
    t0 = time.process_time()
    fin = finite_n_law(arch, obj) if obj == "out_full" else law(arch, finite_n=True)
    laws = {"limit": TabulatedLaw.from_law(law(arch), points=POINTS),
            "finite-n": TabulatedLaw.from_law(fin, points=POINTS)}
    t_tab = time.process_time() - t0
    t0 = time.process_time()
    lam = sample(dims, obj, draws, stream)
    if obj == "out_full":       # as freeprob verify: snapped onto the atoms, the top eigenvalue out
        lam = np.array([_bulk(v, laws["limit"], True) for v in lam])
    t_smp = time.process_time() - t0
    per_draw = np.mean([law_distances(v, laws["limit"])["relW1"] for v in lam])

    def pooled(idx):
        flat = lam[idx].ravel()
        return {k: law_distances(flat, t)["relW1"] for k, t in laws.items()}

    full = pooled(np.arange(draws))
    ratio = full["finite-n"] / full["limit"]
    boot = np.random.default_rng([29, 9, n, draws])
    rs = []
    for _ in range(BOOT):
        d = pooled(boot.integers(0, draws, draws))
        rs.append(d["finite-n"] / d["limit"])
    lo, hi = np.percentile(rs, [2.5, 97.5])
    # independent groups of draws//GROUPS draws: a t-interval of the ratio at that smaller pool
    # (more noise than the whole pool, so it lies above the whole pool's ratio: conservative)
    size = draws // GROUPS
    groups = [pooled(np.arange(g * size, (g + 1) * size)) for g in range(GROUPS)]
    giv = mean_interval([d["finite-n"] / d["limit"] for d in groups])
    half = draws // 2
    floor = two_sample_distances(lam[:half].ravel(), lam[half:2 * half].ravel())["relW1"] / 2
    z, mean, se = moment_check(lam, laws)
    met = ("no target" if target is None else "met" if hi <= target
           else ("not met" if lo > target else "undecided (interval contains the target)"))
    print(f"n = {n}, {obj} (h = {h}, d_K = d_V = 32, d_O = {h * 32}), β = {BETA}, {draws} GE draws "
          f"({stream} seeds); tabulation {t_tab:.0f} s, sampling {t_smp:.0f} s CPU")
    print(f"  per-draw relW1 to the limit law (mean over draws) {100 * per_draw:.3f}%")
    print(f"  pooled relW1: limit {100 * full['limit']:.3f}%, finite-n {100 * full['finite-n']:.3f}%; "
          f"noise floor (halves/2) {100 * floor:.3f}%")
    print(f"  ratio finite-n/limit {ratio:.3f} [{lo:.3f}, {hi:.3f}] (percentile bootstrap over draws, {BOOT} "
          f"resamples; a resampled pool repeats draws, so it has more noise and the interval lies above the "
          f"estimate: conservative); target ≤ {target}: {met}")
    print(f"  ratio over {GROUPS} independent groups of {size} draws: {giv.mean:.3f} [{giv.lo:.3f}, {giv.hi:.3f}] "
          "(95% t-interval)")
    print(f"  mean moments m1..m4 {np.array2string(mean, precision=5)} ± {np.array2string(se, precision=5)}")
    for k, v in z.items():
        print(f"    deviation from the {k} law in standard errors: {np.array2string(v, precision=2)}")
    sys.stdout.flush()
    return dict(n=n, obj=obj, draws=draws, per_draw=per_draw, limit=full["limit"], finite=full["finite-n"],
                ratio=ratio, lo=lo, hi=hi, floor=floor, target=target, met=met, groups=giv, size=size)


if __name__ == "__main__":
    args = sys.argv[1:]
    draws, stream = 400, "dev"
    if "--draws" in args:
        i = args.index("--draws")
        draws = int(args[i + 1])
        del args[i:i + 2]
    if "--seeds" in args:
        i = args.index("--seeds")
        stream = args[i + 1]
        del args[i:i + 2]
    objs = [a for a in args if a in CASES] or list(DEFAULT)
    ns = [int(a) for a in args if a not in CASES] or [256, 512]
    rows = [run(n, obj, draws, stream) for n in ns for obj in objs]
    print("\n| n | object | draws | per-draw relW1 (limit) | pooled: limit | pooled: finite n | noise floor "
          "| ratio [95% bootstrap] | ratio, groups [95% t] | target | |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']} | {r['obj']} | {r['draws']} | {100 * r['per_draw']:.2f}% | {100 * r['limit']:.3f}% "
              f"| {100 * r['finite']:.3f}% | {100 * r['floor']:.3f}% | {r['ratio']:.2f} [{r['lo']:.2f}, "
              f"{r['hi']:.2f}] | {r['groups'].mean:.2f} [{r['groups'].lo:.2f}, {r['groups'].hi:.2f}] ({GROUPS}×{r['size']}) "
              f"| ≤ {r['target']} | {r['met']} |")
