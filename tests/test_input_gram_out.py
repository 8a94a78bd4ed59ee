"""The input-Gram laws of head_out, stack and out (freeprob.attention.input_gram_out;
theory.md §10, issue 19): the reduction to the exact orthonormal laws, Wick's m2, and the
GE sample with Gaussian inputs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from freeprob.errors import FreeprobValueError
from freeprob.sampler import Dimensions, spectra
from freeprob.sampler.inputs import input_matrix, weights_from_inputs

N, H, DK = 256, 4, 32
DELTA1 = (np.array([1.0]), np.array([1.0]))
LAWS = {"head_out": "head_output_law", "stack": "stacked_output_law", "out": "output_law"}


def _exact(obj, beta, d_o=N):
    from freeprob import attention
    arch = attention.Architecture.from_dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=d_o).with_beta(beta)
    return getattr(attention, LAWS[obj])(arch)


@pytest.mark.parametrize("obj", ["head_out", "stack", "out"])
def test_orthonormal_inputs_give_the_exact_moments(obj):
    from freeprob.attention.input_gram_out import output_gram_moments
    got = output_gram_moments(DELTA1, obj=obj, beta=0.7, c_k=DK / N, c_v=DK / N, heads=H, gamma_o=0.5, order=5)
    want = [float(v) for v in _exact(obj, "0.7", d_o=N // 2).moments(5)[1:]]
    assert np.allclose(got, want, rtol=1e-8, atol=0)


def test_orthonormal_inputs_give_the_exact_distribution():
    from freeprob.attention.input_gram import input_gram_law
    from freeprob.experiments.compare import TabulatedLaw
    from freeprob.experiments.explore import input_law_table
    r = input_gram_law("out", n=N, heads=H, d_k=DK, beta=0.5, kind="orthonormal", grid=300)
    mine = input_law_table(r)
    exact = TabulatedLaw.from_law(_exact("out", "1/2"), points=400)
    assert r["atom0"] == pytest.approx(0.5)                       # 1 − γ_V, γ_V = 1/2
    xs = np.linspace(0, r["upper"], 400)
    assert np.max(np.abs(mine.cdf(xs) - exact.cdf(xs))) < 2e-4          # measured 3e-5 (grid 300)
    assert abs(r["mass_defect"]) < 2e-4


@pytest.mark.parametrize("obj", ["head_out", "stack", "out"])
def test_wick_m2_equals_the_equations(obj):
    from freeprob.attention.input_gram import input_gram_measure
    from freeprob.attention.input_gram_out import output_gram_m2, output_gram_moments
    nu = input_gram_measure("gaussian", 2.0, points=120)          # MP(2): n = 2d, atom 1/2 at 0
    mom = [float(np.sum(nu[1] * nu[0]**j)) for j in (1, 2, 3, 4)]
    kw = dict(obj=obj, beta=1.0, c_k=0.125, c_v=0.25, heads=3, gamma_o=0.5)
    assert output_gram_moments(nu, order=2, **kw)[1] == pytest.approx(output_gram_m2(mom, **kw), rel=1e-9)
    # and m2(MP(2)) = 3, m3 = 11, m4 = 45 closed form: the discretisation is accurate
    assert mom[1:] == pytest.approx([3, 11, 45], rel=1e-4)


def test_gaussian_inputs_ge_sample_matches_the_input_law():
    from freeprob.attention.input_gram import input_gram_law
    from freeprob.experiments.compare import law_distances
    from freeprob.experiments.explore import input_law_table
    rng = np.random.default_rng(19)
    n, d, beta = 512, 256, 0.5                                      # n > d: MP(2) input Gram
    dims = Dimensions(n=n, heads=H, d_k=n // 8, d_v=n // 8, d_o=n)
    x = input_matrix("gaussian", n, d, rng=rng)
    ev = spectra(dims, beta, rng=rng, models=("ge",), objects=("out",),
                 weights=weights_from_inputs(dims, x, rng=rng))["ge", "out"]
    r = input_gram_law("out", n=n, heads=H, d_k=n // 8, beta=beta, kind="gaussian", d=d, points=150, grid=300)
    dist = law_distances(ev, input_law_table(r))
    # measured (seed 19): relW1 4.4 %, KS 0.6 % (n = 1024, 2 draws: 1.2 % and 0.3 %)
    assert dist["relW1"] < 0.07 and dist["KS"] < 0.02
    # one draw: m1 fluctuates by ≈ 2 % (sd over 6 draws at n = 512), m2 by ≈ 2 × that
    assert np.mean(ev) == pytest.approx(r["moments"][1], rel=0.06)
    assert np.mean(ev**2) == pytest.approx(r["moments"][2], rel=0.12)
    ortho_m1 = math.expm1(beta**2)                                 # γ_O θ1 (theory.md §1), γ_O = 1
    assert np.mean(ev) / ortho_m1 > 2                              # θ2 m2(ν_X) + s = 0.78 vs θ1 = 0.28


def test_bad_input():
    from freeprob.attention.input_gram import input_gram_law
    from freeprob.attention.input_gram_out import output_gram_m2, output_gram_moments, output_gram_stieltjes
    with pytest.raises(FreeprobValueError, match="Im z"):
        output_gram_stieltjes([1.0], DELTA1, obj="out", beta=1.0, c_k=0.1, c_v=0.1)
    with pytest.raises(FreeprobValueError, match="obj"):
        output_gram_stieltjes([1j], DELTA1, obj="sum", beta=1.0, c_k=0.1, c_v=0.1)
    with pytest.raises(FreeprobValueError, match="heads"):
        output_gram_moments(DELTA1, obj="stack", beta=1.0, c_k=0.1, c_v=0.1, heads=0)
    with pytest.raises(FreeprobValueError, match="c_k"):
        output_gram_moments(DELTA1, obj="stack", beta=1.0, c_k=-0.1, c_v=0.1)
    with pytest.raises(FreeprobValueError, match="nu_x"):
        output_gram_moments(([1.0], [0.5]), obj="stack", beta=1.0, c_k=0.1, c_v=0.1)
    with pytest.raises(FreeprobValueError, match="moments"):
        output_gram_m2([1.0, 2.0], obj="out", beta=1.0, c_k=0.1, c_v=0.1)
    with pytest.raises(FreeprobValueError, match="d_o"):
        input_gram_law("out", n=64, heads=1, d_k=8, beta=1.0, d_o=0)


def test_lowrank_outliers_keep_the_mean_one():
    from freeprob.attention.input_gram import input_gram_measure
    x, w = input_gram_measure("lowrank", 0.5, spike=0.5, points=100, n=256, rank=4)
    assert float(np.sum(w)) == pytest.approx(1.0)
    assert float(np.sum(w * x)) == pytest.approx(1.0, rel=1e-9)
    assert x[-1] == pytest.approx(0.5 * 256 / 4 + 0.5) and w[-1] == pytest.approx(4 / 256)
    with pytest.raises(FreeprobValueError, match="rank"):
        input_gram_measure("lowrank", 0.5, n=256, rank=256)
