"""Issue 18 acceptance figures (finite-width laws); run by hand:
``python benchmarks/bench_finite_width.py [--configs] [--draws 3]``.

1. Single-head attention, n = 512, d_K = 32, β = 1/2: relW1 and KS of the GE law and of
   the finite-width law to the sampled softmax (mean over draws; seeds 0, 1, …).
   Target: finite-width relW1 at most half the GE law's.
2. The output, n = 384, h = 6, d_K = d_V = 32, d_O = 384, β = 1.  Target: at most 0.9x.
3. ``--configs``: the seven default configurations of ``freeprob verify`` at their nominal
   n, β = 1, object ``out``: relW1/KS of both laws, the softmax top eigenvalue (mean ± sd
   over draws), the GE bulk edge and :func:`predicted_top_eigenvalue` (GE and finite
   width).  Targets: finite-width relW1 below the GE's in every row; predicted top
   eigenvalue within 5 % of the softmax mean for LLaMA, Mistral, Falcon.

Each section samples one configuration at a time (one heavy job; n ≤ 2048).
"""
import argparse
import time

import numpy as np
import sympy as sp

from freeprob.attention import Architecture
from freeprob.attention import laws as L
from freeprob.attention.spikes import predicted_top_eigenvalue
from freeprob.experiments.compare import TabulatedLaw, law_distances
from freeprob.sampler import Dimensions, spectra

FN = {"single": L.attention_law, "concat": L.concatenated_attention_law, "sum": L.head_sum_law,
      "head_out": L.head_output_law, "stack": L.stacked_output_law, "out": L.output_law}


def compare(dims: Dimensions, beta, obj, draws):
    """relW1/KS (mean over draws) of the GE and finite-width laws to softmax; top eigenvalues."""
    arch = Architecture.from_dimensions(n=dims.n, heads=dims.heads, d_k=dims.d_k, d_v=dims.d_v, d_o=dims.d_o,
                                        beta=sp.nsimplify(beta), scheme=dims.scheme, kv_groups=dims.kv_groups)
    sm = [spectra(dims, float(beta), rng=np.random.default_rng(s), models=("softmax",), objects=(obj,))["softmax", obj]
          for s in range(draws)]
    row = {}
    for fw in (False, True):
        tab = TabulatedLaw.from_law(FN[obj](arch, finite_width=fw), points=400)
        r = [law_distances(e, tab) for e in sm]
        row["FW" if fw else "GE"] = (np.mean([x["relW1"] for x in r]), np.mean([x["KS"] for x in r]), tab.upper_edge)
    tops = [e[-1] for e in sm]
    pred = {fw: predicted_top_eigenvalue(arch, obj, fw) for fw in (False, True)}
    return row, (float(np.mean(tops)), float(np.std(tops))), pred


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--configs", action="store_true", help="also the seven verify configurations")
    args = ap.parse_args()
    print("| case | GE relW1 / KS (%) | finite-width relW1 / KS (%) | ratio | softmax top | GE edge | "
          "predicted top (GE / fw) |")
    cases = [("single n=512 dK=32 β=1/2", Dimensions(n=512, heads=1, d_k=32, d_v=32, d_o=32), "1/2", "single"),
             ("out n=384 h=6 dK=dV=32 dO=384 β=1", Dimensions(n=384, heads=6, d_k=32, d_v=32, d_o=384), "1", "out")]
    if args.configs:
        from freeprob.experiments.configs import MODEL_CONFIGS
        cases += [(f"{name} out β=1", cfg.layer, "1", "out") for name, cfg in MODEL_CONFIGS.items()]
    for label, dims, beta, obj in cases:
        t = time.time()
        row, (top, sd), pred = compare(dims, sp.Rational(beta), obj, args.draws)
        ge, fw = row["GE"], row["FW"]
        print(f"| {label} | {100 * ge[0]:.2f} / {100 * ge[1]:.2f} | {100 * fw[0]:.2f} / {100 * fw[1]:.2f} | "
              f"{fw[0] / ge[0]:.3f} | {top:.2f} ± {sd:.2f} | {ge[2]:.2f} | {pred[False]:.2f} / {pred[True]:.2f} "
              f"({100 * (pred[True] / top - 1):+.1f} %) |  ({time.time() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
