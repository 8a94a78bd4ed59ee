"""The numeric path of polynomial laws against a plain fixed-point iteration (issue 28; run by
hand: ``python benchmarks/bench_polynomial_numeric.py``).  Figures go in docs/benchmarks.md
and docs/guide/polynomials.md.

* **Newton** (this library, ``method="numeric"``): a 200-point density grid of the degree-3
  polynomial ``p = x y x + y x y`` at 15 certified digits (M_k-valued subordination, Newton
  with the analytic Jacobian, continuation to the real axis, Krawczyk's bound), for
  semicircular ``x, y`` (an exact equation exists: the accuracy reference) and for ``y``
  free Poisson(1) (no exact equation); also the same grid in doubles without the bound.
* **Fixed point** (the anchor's method, free-matrix-laws): ``G ↦ ½(G + (Λ_ε − b_0 −
  η(G))^{-1})``, ``η(G) = Σ_j b_j G b_j``, ``Λ_ε = diag(x + iε, iε, …, iε)``, in float32,
  semicircular variables only, vectorised over the grid (numpy batched inverses: the
  anchor's best case), iterated until the step is below ``1e-7``; the density is
  ``−Im G_11/π`` at height ``ε``, so its accuracy is limited by ``ε`` (and float32).

Accuracy: the largest error against the exact equation's density at 20 digits over the grid
(absolute, the density's maximum is about 0.6).  Times are CPU seconds (``process_time``),
one run, measured side by side.
"""
import time

import numpy as np
import sympy as sp

import freeprob as fp

S = fp.Semicircle(0, 1)
TEXT = "x*y*x + y*x*y"
N = 200


def clock(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def grid(law):
    (a, b), = law.support(dps=15)
    a, b = float(a), float(b)
    pad = 0.05 * (b - a)
    return [float(v) for v in np.linspace(a - pad, b + pad, N)]


def fixed_point(lin, xs, eps, dtype=np.complex64, tol=1e-7, max_iter=200_000):
    """The anchor's averaged fixed-point iteration on the whole grid at once."""
    k = lin.b0.shape[0]
    b0 = np.array(sp.Matrix(lin.b0).evalf(), dtype=complex).astype(dtype)
    bs = [np.array(sp.Matrix(b).evalf(), dtype=complex).astype(dtype) for b in lin.bs]
    lam = np.zeros((len(xs), k, k), dtype=dtype)
    lam[:, 0, 0] = np.asarray(xs) + 1j * eps
    for i in range(1, k):
        lam[:, i, i] = 1j * eps
    G = np.linalg.inv(lam - b0)
    for it in range(1, max_iter + 1):
        eta = sum(b @ G @ b for b in bs)
        new = 0.5 * (G + np.linalg.inv(lam - b0 - eta))
        step = float(np.max(np.abs(new - G)))
        G = new
        if step < tol:
            break
    return -G[:, 0, 0].imag / np.pi, it


def runs(fn, repeat):
    """``(last output, sorted CPU times)`` of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        out, t = clock(fn)
        times.append(t)
    return out, sorted(times)


def show(times):
    return f"{times[len(times) // 2]:6.2f} s [{times[0]:.2f}, {times[-1]:.2f}]"


def main(repeat=3):
    exact_law = fp.polynomial_law(TEXT, {"x": S, "y": S})
    xs = grid(exact_law)
    ref, t_exact = clock(lambda: exact_law.density(xs, dps=20, method="exact"))
    ref = np.array([float(v) for v in ref])
    print(f"p = {TEXT}, x, y semicircular (k = {exact_law.linearization().b0.shape[0]}), "
          f"{N} points on [{xs[0]:.3f}, {xs[-1]:.3f}]; max density {ref.max():.3f}; "
          f"CPU s, median [min, max] of {repeat} runs")
    print(f"  exact equation, 20 digits (equation and support already derived): {t_exact:7.2f} s")

    def newton():
        law = fp.polynomial_law(TEXT, {"x": S, "y": S})
        return law.density(xs, dps=15, method="numeric")
    vals, t_newton = runs(newton, repeat)
    err_newton = float(np.max(np.abs(np.array([float(v) for v in vals]) - ref)))
    fl, t_float = runs(lambda: fp.polynomial_law(TEXT, {"x": S, "y": S}).numeric_evaluator().density_float(xs),
                       repeat)
    err_float = float(np.nanmax(np.abs(fl - ref)))
    print(f"  Newton, 15 certified digits (setup included): {show(t_newton)}, max error {err_newton:.1e}")
    print(f"  Newton, doubles, no bound (setup included):   {show(t_float)}, max error {err_float:.1e}")
    lin = exact_law.linearization()
    for eps in (1e-1, 1e-2, 1e-3, 1e-4):
        (dens, its), t = runs(lambda: fixed_point(lin, xs, eps), repeat)
        err = float(np.max(np.abs(dens - ref)))
        print(f"  fixed point, float32, eps = {eps:.0e}: {show(t)}, {its:5d} iterations, max error {err:.1e};"
              f" time / Newton 15 digits {t[len(t) // 2] / t_newton[len(t_newton) // 2]:5.2f}, / Newton doubles"
              f" {t[len(t) // 2] / t_float[len(t_float) // 2]:5.2f}")

    def noeq():
        law = fp.polynomial_law(TEXT, {"x": S, "y": fp.FreePoisson(1)})
        return law.density(grid_noeq, dps=15)
    grid_noeq = grid(fp.polynomial_law(TEXT, {"x": S, "y": fp.FreePoisson(1)}))
    _, t2 = runs(noeq, repeat)
    print(f"p = {TEXT}, y free Poisson(1) (no exact equation; k = 5, y of rank 3): "
          f"{N}-point grid at 15 digits, setup included: {show(t2)}")


if __name__ == "__main__":
    main()
