"""Issue 26: an input-Gram law is one object — its printed moments are the moments of its own
distribution function (density + atom), for every input kind and every object — and issue 27:
the fast tabulation (freeprob.attention.input_gram_table, vectorised over points) gives the
answers of the old pointwise evaluation of the equations, and the AR(1) law agrees with a GE_X
sample.  Speed: benchmarks/bench_explore_inputs.py (docs/benchmarks.md)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from freeprob.errors import FreeprobValueError

N, H, DK = 256, 4, 32
OBJECTS = ("single", "concat", "sum", "head_out", "stack", "out")
#: the input kinds of freeprob.sampler.inputs, and a Gram spectrum given directly (two eigenvalues)
KINDS = {
    "orthonormal": dict(kind="orthonormal"),
    "gaussian": dict(kind="gaussian", d=2 * N),
    "gaussian_n_gt_d": dict(kind="gaussian", d=N // 2),
    "ar1": dict(kind="ar1", d=2 * N, rho=0.5),
    "lowrank": dict(kind="lowrank", d=2 * N, rank=4, spike=0.5),
    "spectrum": dict(nu_x=(np.array([0.25, 1.75]), np.array([0.5, 0.5]))),
}


def _moments_of_cdf(law, top, order=4):
    """``∫ x^k dF = ∫ k x^{k−1} (1 − F(x)) dx`` of a TabulatedLaw (its PCHIP cdf and atom), on a
    fine grid: the law as law_distances sees it, independent of the tabulator's own sums."""
    xs = np.unique(np.concatenate([np.linspace(0.0, top, 20001), law.fine_nodes()]))
    sf = 1.0 - law.cdf(xs)
    return [float(np.trapezoid(k * xs ** (k - 1) * sf, xs)) for k in range(1, order + 1)]


@pytest.mark.parametrize("name", list(KINDS))
def test_printed_moments_are_the_moments_of_the_law(name):
    from freeprob.attention.input_gram import input_gram_law
    from freeprob.attention.input_gram_table import MOMENT_RTOL
    from freeprob.experiments.explore import input_law_table
    for obj in OBJECTS:
        r = input_gram_law(obj, n=N, heads=H, d_k=DK, beta=0.5, points=100, grid=200, **KINDS[name])
        law = input_law_table(r)
        got = _moments_of_cdf(law, r["upper"])
        # the tabulated measure is within MOMENT_RTOL; the PCHIP cdf between its knots adds
        # at most as much again (measured: ≤ 1.2e-3 over these 36 laws)
        assert got == pytest.approx(r["moments"][1:5], rel=2 * MOMENT_RTOL), (name, obj)
        assert r["moment_error"] <= MOMENT_RTOL
        # the density as evaluated (before the cdf is normalised) has the law's mass 1 − atom0
        assert abs(r["mass_defect"]) <= MOMENT_RTOL, (name, obj, r["mass_defect"])
        assert law.cdf(np.array([r["upper"]]))[0] == pytest.approx(1.0, abs=1e-12)
        assert r["atom0"] == pytest.approx(0.0 if obj in ("single", "concat", "sum") else
                                           1 - min(1.0, (1 if obj == "head_out" else H) * DK / N))


def test_ar1_law_agrees_with_the_ge_sample():
    """The case of issue 26: AR(1) tokens, single (and out), β = 1/2.  Before the fix the law
    printed m4 = 33.9 while its density integrated to 24; GE_X samples give 12.5 ± 3.4
    (n = 256, 3 draws) and 14.8 ± 2.4 (n = 512), the law now 14.7."""
    from freeprob.attention.input_gram import input_gram_law
    from freeprob.experiments.compare import law_distances
    from freeprob.experiments.explore import input_law_table
    from freeprob.sampler import Dimensions, spectra
    from freeprob.sampler.inputs import input_matrix, weights_from_inputs
    rng = np.random.default_rng(101)
    dims = Dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=N)
    x = input_matrix("ar1", N, 2 * N, rng=rng, rho=0.5)
    sp = spectra(dims, 0.5, rng=rng, models=("ge",), objects=("single", "out"),
                 weights=weights_from_inputs(dims, x, rng=rng))
    for obj in ("single", "out"):
        r = input_gram_law(obj, n=N, heads=H, d_k=DK, beta=0.5, kind="ar1", d=2 * N, points=100, grid=200)
        dist = law_distances(sp["ge", obj], input_law_table(r))
        # measured (seed 101): single relW1 4.5 %, KS 1.0 %; out 4.6 %, 0.9 %
        assert dist["KS"] < 0.025 and dist["relW1"] < 0.08, (obj, dist)
        m4 = float(np.mean(sp["ge", obj] ** 4))
        assert m4 == pytest.approx(r["moments"][4], rel=0.35), obj      # one draw: m4 sd ≈ 25 %
        if obj == "single":
            assert r["moments"][4] == pytest.approx(14.71, rel=0.01)   # (not 33.9)


def test_spectrum_law_agrees_with_the_ge_sample():
    """A Gram spectrum given directly (two eigenvalues, Haar eigenvectors): the law of ``nu_x``."""
    from freeprob.attention.input_gram import input_gram_law
    from freeprob.experiments.compare import law_distances
    from freeprob.experiments.explore import input_law_table
    from freeprob.sampler import Dimensions, spectra
    from freeprob.sampler.inputs import input_from_gram_spectrum, weights_from_inputs
    rng = np.random.default_rng(7)
    lam = np.repeat([0.25, 1.75], N // 2)
    x = input_from_gram_spectrum(lam, 2 * N, rng=rng)
    dims = Dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=N)
    sp = spectra(dims, 0.5, rng=rng, models=("ge",), objects=("concat", "out"),
                 weights=weights_from_inputs(dims, x, rng=rng))
    for obj in ("concat", "out"):
        r = input_gram_law(obj, n=N, heads=H, d_k=DK, beta=0.5, nu_x=KINDS["spectrum"]["nu_x"], points=100,
                           grid=200)
        dist = law_distances(sp["ge", obj], input_law_table(r))
        assert dist["KS"] < 0.025 and dist["relW1"] < 0.06, (obj, dist)
        assert float(np.mean(sp["ge", obj])) == pytest.approx(r["moments"][1], rel=0.05)


def _pointwise(residual, u, x, top, steps):
    """The old route, one point at a time: for each ``x`` alone, continuation in ``η`` from
    ``top`` down to ``10⁻⁹ top`` with plain Newton on a forward-difference Jacobian (no
    analytic Jacobian, no vectorisation over points, no warm start from other points, no
    step control).  ``residual(u, z) -> (r, m)``; returns ``m`` at the final ``η``."""
    out = []
    for xi in x:
        v = np.array(u, dtype=complex)
        for eta in np.geomspace(top, 1e-9 * top, steps):
            z = xi + 1j * eta
            for _ in range(60):
                r, m = residual(v, z)
                if np.max(np.abs(r)) < 1e-13 * (1 + np.max(np.abs(v))):
                    break
                jac = np.empty((v.size, v.size), dtype=complex)
                for k in range(v.size):
                    dv = v.copy()
                    dv[k] += 1e-7 * (1 + abs(v[k]))
                    jac[:, k] = (residual(dv, z)[0] - r) / (dv[k] - v[k])
                v = v - np.linalg.solve(jac, r)
            else:
                raise AssertionError(f"pointwise Newton did not converge at {z}")
        out.append(m)
    return np.array(out)


def test_tabulated_density_is_the_pointwise_solution():
    """Issue 27, same answers: the vectorised tabulation (Newton over all points at once with
    the analytic Jacobian, support search, warm starts, node placement) gives the density that
    the old pointwise route gives at the same points — each point alone, continued in ``η``,
    Newton with a difference Jacobian; for single the equations written out afresh here from
    the module docstring (theory.md §10)."""
    from freeprob.attention.input_gram import input_gram_law, input_gram_measure, score_measure
    from freeprob.attention.input_gram_out import _Params, _residual, _start
    beta, s = 0.5, math.expm1(0.25) - 0.25
    nu_x = input_gram_measure("ar1", 0.5, points=100)
    (cx, cw), (dx, dw) = nu_x, score_measure(nu_x, DK / N, beta**2, points=100)

    def single(v, z):          # unknowns (δ̃_0, δ̃_1); α = 1
        t = -1 / (z * (1 + cx * v[1] + s * v[0]))
        d0, d1 = np.sum(cw * t), np.sum(cw * cx * t)
        tt = -1 / (z * (1 + dx * d1 + s * d0))
        return v - np.array([np.sum(dw * tt), np.sum(dw * dx * tt)]), d0

    law = dict(n=N, heads=H, d_k=DK, beta=beta, nu_x=nu_x, points=100, grid=200)     # = kind="ar1", d=2n
    r = input_gram_law("single", **law)
    idx = np.linspace(10, r["x"].size - 10, 4).astype(int)
    m = _pointwise(single, [0j, 0j], r["x"][idx], r["upper"], 40)
    assert r["density"][idx] == pytest.approx(m.imag / np.pi, rel=1e-6, abs=1e-9)

    p = _Params("out", beta, DK / N, DK / N, H, 1.0)
    r = input_gram_law("out", **law)
    idx = np.linspace(10, r["x"].size - 10, 4).astype(int)
    top = r["upper"]

    def out(v, z):             # unknowns (δ̃_1, δ̃_0, u, τ): the module's residuals at one point
        res, b = _residual(v[:, None], np.array([z]), cx, cw, p)
        return res[:, 0], b[0]

    m = _pointwise(out, _start(np.array([top * 1j]), cx, cw, p)[:, 0], r["x"][idx], top, 60)
    # (rel 1e-4: the tabulator's final η is 10⁻¹⁰ of its own scale, not 10⁻⁹ upper; the first
    # point, next to the lower edge, moves by 1.3e-5 between the two)
    assert r["density"][idx] == pytest.approx((m.imag - r["atom0"] * 1e-9 * top / r["x"][idx]**2) / np.pi,
                                             rel=1e-4, abs=1e-9)


def test_tabulate_refuses_and_reports():
    from freeprob.attention.input_gram import _Profile, input_gram_law
    from freeprob.attention.input_gram_table import check_moments, tabulate
    solver = _Profile((np.array([1.0]), np.array([1.0])), (np.array([1.0]), np.array([1.0])), 0.5, 1.0)
    with pytest.raises(FreeprobValueError, match="norm bound"):
        tabulate(solver, -1.0)
    with pytest.raises(FreeprobValueError, match="atom0"):
        tabulate(solver, 10.0, atom0=1.0)
    with pytest.raises(FreeprobValueError, match="grid"):
        tabulate(solver, 10.0, grid=5)
    # a bound below the support: the density does not vanish there
    with pytest.raises(FreeprobValueError, match="does not vanish"):
        tabulate(solver, 1.0)
    tab = tabulate(solver, 20.0, grid=100)
    with pytest.raises(FreeprobValueError, match="moments differ"):
        check_moments(tab, [1.0, 2.0, 9.0, 40.0, 200.0], "x")
    with pytest.raises(FreeprobValueError, match="beta"):
        input_gram_law("single", n=64, heads=1, d_k=8, beta=0.0)
    with pytest.raises(FreeprobValueError, match="nu_x"):
        input_gram_law("single", n=64, heads=1, d_k=8, beta=1.0, nu_x=([1.0], [0.5]))
