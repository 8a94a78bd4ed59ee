"""What the finite-n laws of stack and out neglect under MQA (shared K/V across heads; issue 29,
docs/theory.md §13.7, §13.8).

The finite-n law of a block-diagonal population ``⊕_i B_i`` treats the h head blocks as
independent (a block mixture); under MQA (one key and one value matrix for all heads) the
value covariances ``B_i = Vᵀ T_i V/n`` of the GE model are one and the same matrix
(``T_i`` depends on the keys only), so the stacked population is ``I_h ⊗ B``: its expected
spectral law is B's (the law of §13.7 is unchanged), but the fluctuation of B's spectrum is
repeated h times instead of averaged, and enters the next compound step at second order
(``1/d_V²`` relative, not ``1/n²``).  This benchmark measures that term: the mean sampled
m1, m2 of the GE model's stack and out Grams over R draws against the finite-n law's exact
moments (deviation in standard errors of the sample mean), independent heads and MQA.

A measurement (no assertion), run by hand:
nice python benchmarks/finite_n_shared.py [--draws R] [--n N]        (≈ 1 min at the defaults)
"""
import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")      # one BLAS thread (before numpy)
import time

import numpy as np

from freeprob import attention
from freeprob.attention.architecture import Architecture, Dimensions
from freeprob.sampler.spectra import spectra

BETA = 1
LAWS = {"stack": "stacked_output_law", "out": "output_law"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--width", type=int, default=16, help="d_K = d_V")
    a = ap.parse_args()
    n, h, d = a.n, a.heads, a.width
    print(f"GE model, β = {BETA}, n = {n}, h = {h}, d_K = d_V = {d}, d_O = n; {a.draws} draws per scheme; "
          "mean sampled m_k against the finite-n law's exact m_k + c_k/n and the limit's, in standard errors")
    for scheme, kw in (("independent", {}), ("mqa", {"scheme": "gqa", "kv_groups": 1})):
        dims = Dimensions(n, h, d, d, n, **kw)
        arch = Architecture.from_dimensions(n=n, heads=h, d_k=d, d_v=d, d_o=n, beta=BETA, **kw)
        rng = np.random.default_rng([29, 5, n, h, d, 0 if scheme == "independent" else 1])
        t0 = time.time()
        mom = {o: [] for o in LAWS}
        for _ in range(a.draws):
            s = spectra(dims, float(BETA), rng=rng, models=("ge",), objects=tuple(LAWS))
            for o in LAWS:
                lam = s["ge", o]
                mom[o].append([np.mean(lam), np.mean(lam ** 2)])
        t_s = time.time() - t0
        for o, name in LAWS.items():
            law = getattr(attention, name)
            fn = [float(m) for m in law(arch, finite_n=True).moments(2, dps=15)]
            lim = [float(m) for m in law(arch).moments(2, dps=15)]
            x = np.array(mom[o])
            mean, se = x.mean(axis=0), x.std(axis=0, ddof=1) / np.sqrt(len(x))
            parts = []
            for k in (1, 2):
                parts.append(f"m{k} {mean[k - 1]:.5g} ± {se[k - 1]:.2g}: finite n {fn[k]:.5g} "
                             f"({(mean[k - 1] - fn[k]) / se[k - 1]:+.1f} se, {100 * (mean[k - 1] / fn[k] - 1):+.2f}%), "
                             f"limit {lim[k]:.5g} ({(mean[k - 1] - lim[k]) / se[k - 1]:+.1f} se)")
            print(f"{scheme:11s} {o:5s}: " + "; ".join(parts) + f"  [sampling {t_s:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
