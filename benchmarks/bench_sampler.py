"""Benchmark of the float64 sampler (issue 5); run by hand: ``python benchmarks/bench_sampler.py``.

One coupled softmax + GE cell, ``spectra(dims, beta=1, rng=default_rng(seed),
models=("softmax", "ge"), objects=("out",))`` at n = 2048, h = 32, d_K = d_V = 128,
d_O = 4096, against the floor of the BLAS/LAPACK calls the cell needs, each timed alone
in the same run (same shapes, float64, same BLAS):

* Q_i K_iᵀ for every head (2048×128 · 128×2048, 32 heads)           softmax
* A_i V_i for every head (2048×2048 · 2048×128, 32 heads)           softmax
* the W_O product [H_1..H_h] W_O (2048×4096 · 4096×4096)            softmax and GE
* the Gram O Oᵀ (2048×4096 · 4096×2048)                             softmax and GE
* eigvalsh of the 2048×2048 Gram                                     softmax and GE

(the GE head outputs need only d_K × d_V-sized products, not counted in the floor).
Target: cell / floor <= 1.5.  Each figure is the best of ``--repeat`` runs, cell and floor
calls interleaved so that both see the same machine load.  Peak
memory: tracemalloc peak of the cell (numpy reports its buffers to tracemalloc) and the
process ru_maxrss.  The machine load is printed: other processes on the cores inflate
both figures (multi-threaded OpenBLAS spin-waits under contention).
"""
import argparse
import os
import platform
import resource
import time
import tracemalloc

import numpy as np
import scipy
import scipy.linalg

from freeprob.sampler import Dimensions, spectra


def best(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def floor_calls(dims, seed):
    """The BLAS/LAPACK calls of the cell on inputs of the same shapes, each as a thunk."""
    rng = np.random.default_rng(seed)
    n, h, dk, dv, do = dims.n, dims.heads, dims.d_k, dims.d_v, dims.d_o
    q = rng.standard_normal((h, n, dk))
    k = rng.standard_normal((h, n, dk))
    v = rng.standard_normal((h, n, dv))
    s = np.empty((n, n))
    hv = np.empty((n, dv))
    a = rng.random((n, n))
    hs = rng.standard_normal((n, h * dv))
    w_o = rng.standard_normal((h * dv, do)) / np.sqrt(h * dv)
    o = hs @ w_o
    g = o @ o.T

    def qk():
        for i in range(h):
            np.matmul(q[i], k[i].T, out=s)

    def av():
        for i in range(h):
            np.matmul(a, v[i], out=hv)

    # name: (thunk, how many times the cell needs it)
    return {
        "Q K^T (all heads)": (qk, 1),
        "A V (all heads)": (av, 1),
        "W_O product": (lambda: hs @ w_o, 2),
        "Gram O O^T": (lambda: o @ o.T, 2),
        "eigvalsh": (lambda: scipy.linalg.eigvalsh(g, check_finite=False), 2),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=2048)
    args = ap.parse_args()
    n = args.n
    dims = Dimensions(n=n, heads=32, d_k=n // 16, d_v=n // 16, d_o=2 * n)
    print(f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}")
    print(f"cell: spectra(n={dims.n}, heads={dims.heads}, d_k={dims.d_k}, d_v={dims.d_v}, d_o={dims.d_o}, "
          f"beta=1, models=(softmax, ge), objects=(out,)), seed {args.seed}")

    def cell():
        return spectra(dims, 1.0, rng=np.random.default_rng(args.seed), models=("softmax", "ge"),
                       objects=("out",))

    t_cell, parts, calls = float("inf"), {}, None
    for rep in range(args.repeat):          # interleaved, so that cell and floor see the same load
        if rep == 0:                        # memory of the first cell only (tracing off when timing)
            tracemalloc.start()
            sp = cell()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux
            calls = floor_calls(dims, args.seed)
            parts = dict.fromkeys(calls, float("inf"))
        t, sp = best(cell, 1)
        t_cell = min(t_cell, t)
        for name, (fn, _) in calls.items():
            parts[name] = min(parts[name], best(fn, 1)[0])
    top = {m: float(sp[m, "out"][-1]) for m in ("softmax", "ge")}
    t_floor = sum(parts[p] * calls[p][1] for p in parts)
    for p, t in parts.items():
        print(f"    floor part {p:<18} {t:7.3f} s  x{calls[p][1]}")
    print(f"[1] cell {t_cell:.2f} s (best of {args.repeat}), BLAS/LAPACK floor {t_floor:.2f} s, "
          f"ratio {t_cell / t_floor:.2f} (target <= 1.5)")
    print(f"[2] peak memory: tracemalloc {peak / 2**20:.0f} MiB (numpy buffers of the cell), "
          f"ru_maxrss {rss:.0f} MiB (whole process after one cell)")
    print(f"    top eigenvalue of out: softmax {top['softmax']:.4f}, ge {top['ge']:.4f}; "
          f"load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
