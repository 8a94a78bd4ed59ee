"""Comparison 1 of issue 6 (paper §5, head count): the gradient-flow loss plateau is the
zero mass of the output law, and the decay is slow at a hard edge and fast with a gap.

Setup (docs/theory.md §4, the paper's h = 32 example): fixed per-head widths
d_K = d_V = n/64, d_O = 2n, β = 1, h ∈ {32, 64, 128}, so γ_V = h/64 ∈ {1/2, 1, 2}:
μ̂({0}) = max(0, 1 − γ_V, 1 − γ_O) = 1/2, 0, 0 (plateau 1/2; hard edge at 0 and power-law
decay; a gap and exponential decay).  Features F = O_full/√m1 (uncentred output,
normalised to mean 1), target y ⟂ 1, gradient flow from w = 0:

    L(t)/L(0) = yᵀ e^{−2tFFᵀ} y / |y|²  →  ∫ e^{−2tx} dμ̂(x)   (freeprob.readout).

Measured: softmax MHA at n = 512 (d_K = d_V = 8, d_O = 1024), 3 initialisations × 4
centred Gaussian targets, with the spectral average tr e^{−2tFFᵀ}/n beside it.  The paper
reports the largest |measured − predicted| relative loss below 0.003 (its sizes are not
known to us); at n = 512 with d_K = 8 the fixed-target curves are off by more (the
low-rank-chaos effect of docs/theory.md §7 F1 at small d_K, and per-draw fluctuations
of ±0.01–0.03), which this script prints rather than hides.

Checks: the exact plateaus 1/2, 0, 0; the predictions equal docs/theory.md §5.5
(0.7392/0.5371/0.5001, 0.6807/0.3186/0.1163, 0.6422/0.1877/0.0077 at t = 0.3/3/30); the
measured spectral average within 0.03 of the prediction; the fixed-target mean within
0.05.  Run: ``python derivations/readout_head_count.py [--figure out.png]``.
"""
import _threads  # noqa: F401  (one BLAS thread before numpy)
import sys

import numpy as np
import sympy as sp

from freeprob.attention import Architecture, mean_normalized, output_law
from freeprob.readout import gradient_flow_loss
from freeprob.readout_sampled import measured_loss_curve
from freeprob.sampler import Dimensions, sample_objects

N, BETA, SEEDS, TARGETS = 512, 1, 3, 4
TIMES = [0.3, 1.0, 3.0, 10.0, 30.0]
NOTE = {32: [0.7392, None, 0.5371, None, 0.5001], 64: [0.6807, None, 0.3186, None, 0.1163],
        128: [0.6422, None, 0.1877, None, 0.0077]}

rows = {}
for h in (32, 64, 128):
    dims = dict(n=N, heads=h, d_k=N // 64, d_v=N // 64, d_o=2 * N)
    arch = Architecture.from_dimensions(beta=BETA, **dims)
    law = mean_normalized(output_law(arch))
    plateau = sum((m for x, m in law.atoms(dps=15) if x == 0), sp.Integer(0))
    pred = np.array([float(v) for v in gradient_flow_loss(law, TIMES, dps=8)])
    m1 = float(output_law(arch).moments(1)[1])
    fixed, spectral = [], []
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        f = sample_objects(Dimensions(**dims), float(BETA), rng=rng, objects=("out_full",))["out_full"]
        f /= np.sqrt(m1)
        for _ in range(TARGETS):
            y = rng.standard_normal(N)
            fixed.append(measured_loss_curve(f, y - y.mean(), TIMES))
        lam = np.clip(np.linalg.eigvalsh(f @ f.T), 0, None)
        spectral.append([np.mean(np.exp(-2 * t * lam)) for t in TIMES])
    fixed, spectral = np.array(fixed), np.array(spectral)
    rows[h] = (float(sp.N(plateau)), pred, fixed.mean(0), 1.96 * fixed.std(0, ddof=1) / np.sqrt(len(fixed)),
               spectral.mean(0))
    print(f"\n== h = {h}: γ_V = {h * dims['d_v'] / N}, exact zero mass μ̂({{0}}) = {plateau}")
    print("   t        predicted   softmax fixed y (95%)   softmax tr e^{-2tFF'}/n   theory.md §5.5")
    for k, t in enumerate(TIMES):
        note = NOTE[h][k]
        print(f"   {t:5.1f}    {pred[k]:.4f}      {rows[h][2][k]:.4f} ± {rows[h][3][k]:.4f}          "
              f"{rows[h][4][k]:.4f}                  {'' if note is None else f'{note:.4f}'}")

# ---------------------------------------------------------------------- checks
assert [rows[h][0] for h in (32, 64, 128)] == [0.5, 0.0, 0.0]
for h in (32, 64, 128):
    for k, note in enumerate(NOTE[h]):
        if note is not None:
            assert round(rows[h][1][k], 4) == note, (h, TIMES[k], rows[h][1][k], note)
worst_fixed = max(np.max(np.abs(rows[h][2] - rows[h][1])) for h in rows)
worst_spec = max(np.max(np.abs(rows[h][4] - rows[h][1])) for h in rows)
print(f"\nlargest |measured − predicted| relative loss: fixed targets {worst_fixed:.4f}, spectral average "
      f"{worst_spec:.4f} (paper: < 0.003 at its sizes)")
# F1 (docs/theory.md §7): at d_K = 16 the softmax spectral average sat ≤ 0.01 below theory (§5.5);
# the effect grows like 1/d_K, so ≈ 0.02 at d_K = 8 (measured 0.020)
assert worst_spec < 0.03 and worst_fixed < 0.05
print("[ok] head count: plateaus 1/2, 0, 0 are the exact zero masses; predictions equal the theory note; "
      "softmax within 0.03 (spectral average) and 0.05 (fixed targets) at n = 512")

if "--figure" in sys.argv:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    path = sys.argv[sys.argv.index("--figure") + 1]
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for h, color in zip(rows, ("C0", "C1", "C2")):
        ax.plot(TIMES, rows[h][1], "-", color=color, label=f"h = {h}: prediction")
        ax.errorbar(TIMES, rows[h][2], yerr=rows[h][3], fmt="o", color=color, ms=3, label=f"h = {h}: softmax")
    ax.set_xscale("log")
    ax.set_xlabel("t")
    ax.set_ylabel("L(t)/L(0)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"figure: {path}")
