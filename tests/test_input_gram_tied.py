"""The tied (V_i = K_i) input-Gram laws (freeprob.attention.input_gram_tied; theory.md §10,
issue 28): the reduction to theory.md §3.4 at ν_X = δ_1, Wick's m2, GE_X samples of the tied
and the GQA layer, and Table-1 laws re-derived as polynomials in free variables
(fp.polynomial_law, operator-valued route; theory.md §12)."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from freeprob.errors import FreeprobValueError

N, H, DK = 256, 4, 32
DELTA1 = (np.array([1.0]), np.array([1.0]))
LAWS = {"head_out": "head_output_law", "stack": "stacked_output_law", "out": "output_law"}


@pytest.mark.parametrize("obj", ["head_out", "stack", "out"])
def test_orthonormal_inputs_give_the_tied_laws_of_section_3_4(obj):
    from freeprob import attention
    from freeprob.attention.input_gram_tied import key_gram_measure, tied_output_gram_m2, tied_output_gram_moments
    nu_n = key_gram_measure(DELTA1, DK / N, kind="orthonormal")      # π_{c_K}, exact core
    kw = dict(obj=obj, beta=0.7, c_k=DK / N, heads=H, gamma_o=0.5)
    got = tied_output_gram_moments(DELTA1, nu_n, order=5, **kw)
    arch = attention.Architecture.from_dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=N // 2,
                                                  scheme="tied").with_beta("0.7")
    want = [float(v) for v in getattr(attention, LAWS[obj])(arch).moments(5)[1:]]
    assert np.allclose(got, want, rtol=1e-10, atol=0)
    assert np.allclose(tied_output_gram_m2([1, 1, 1, 1], **kw), want[:2], rtol=1e-13, atol=0)


def test_orthonormal_inputs_give_the_tied_distribution():
    """The tabulated tied out law (input_gram_table.tabulate) against the exact §3.4 law."""
    from freeprob import attention
    from freeprob.attention.input_gram_tied import key_gram_measure, tied_input_gram_output_law
    from freeprob.experiments.compare import TabulatedLaw
    from freeprob.experiments.explore import input_law_table
    r = tied_input_gram_output_law("out", DELTA1, n=N, heads=H, d_k=DK, beta=0.5, grid=300,
                                   nu_n=key_gram_measure(DELTA1, DK / N, kind="orthonormal"))
    arch = attention.Architecture.from_dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=N, scheme="tied").with_beta("1/2")
    exact = TabulatedLaw.from_law(attention.output_law(arch), points=400)
    assert r["atom0"] == pytest.approx(0.5)                                  # 1 − γ_K, γ_K = 1/2
    xs = np.linspace(0, r["upper"], 400)
    assert np.max(np.abs(input_law_table(r).cdf(xs) - exact.cdf(xs))) < 2e-4     # measured 2.9e-5
    assert abs(r["mass_defect"]) < 2e-4                                       # measured 4.5e-5


@pytest.mark.parametrize("kind, d_over_n, rel", [("gaussian", 0.5, 1e-9), ("ar1", 2.0, 1e-4)])
def test_wick_m2_equals_the_equations(kind, d_over_n, rel):
    from freeprob.attention.input_gram import input_gram_measure
    from freeprob.attention.input_gram_tied import (key_gram_measure, key_gram_moments, tied_output_gram_m2,
                                                    tied_output_gram_moments)
    nu = input_gram_measure(kind, 1 / d_over_n, points=120)
    mom = [float(np.sum(nu[1] * nu[0]**j)) for j in (1, 2, 3, 4)]
    # exact core (gaussian: MP(2) ⊠ MP(8) discretised) or the Silverstein equation (ar1)
    nu_n = key_gram_measure(nu, DK / N, kind=kind, n_over_d=1 / d_over_n, points=200)
    w = [float(np.sum(nu_n[1] * nu_n[0]**j)) for j in (1, 2, 3, 4)]
    assert w == pytest.approx(key_gram_moments(mom, DK / N), rel=rel)
    for obj in ("head_out", "out"):
        kw = dict(obj=obj, beta=1.0, c_k=DK / N, heads=H, gamma_o=1.0)
        assert tied_output_gram_moments(nu, nu_n, order=2, **kw) == pytest.approx(tied_output_gram_m2(mom, **kw),
                                                                                  rel=rel)


def test_ge_samples_of_tied_and_gqa_layers_match_their_laws():
    """GE_X samples (Gaussian tokens, d = n/2, β = 1): tied against the new law, GQA (h/2
    groups) against the untied input-Gram law (theory.md §10: GQA changes no law)."""
    from freeprob.attention.input_gram import input_gram_measure
    from freeprob.attention.input_gram_out import output_gram_m2
    from freeprob.attention.input_gram_tied import tied_output_gram_m2
    from freeprob.sampler import Dimensions, spectra
    from freeprob.sampler.inputs import input_matrix, weights_from_inputs
    d = N // 2
    nu = input_gram_measure("gaussian", N / d, points=200)
    mom = [float(np.sum(nu[1] * nu[0]**j)) for j in (1, 2, 3, 4)]
    objs = ("head_out", "stack", "out")
    law = {"tied": [tied_output_gram_m2(mom, obj=o, beta=1.0, c_k=DK / N, heads=H) for o in objs],
           "gqa": [(None, output_gram_m2(mom, obj=o, beta=1.0, c_k=DK / N, c_v=DK / N, heads=H)) for o in objs]}
    for scheme, kw in (("tied", {}), ("gqa", dict(kv_groups=H // 2))):
        draws = []
        for seed in range(4):
            rng = np.random.default_rng(280 + seed)
            dims = Dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=N, scheme=scheme, **kw)
            w = weights_from_inputs(dims, input_matrix("gaussian", N, d, rng=rng), rng=rng)
            sp_ = spectra(dims, 1.0, rng=rng, models=("ge",), objects=objs, weights=w)
            draws.append([np.mean(sp_["ge", o]**2) for o in objs])
        draws = np.array(draws)
        mean, se = draws.mean(0), draws.std(0, ddof=1) / 2
        want = np.array([m2 for _m1, m2 in law[scheme]])
        # measured: within 1.3 standard errors (6 draws, n = 256); finite-n bias allowed 3 %
        assert np.all(np.abs(mean - want) < 3 * se + 0.03 * want), (scheme, mean, want, se)
    # the two schemes differ by a factor ≈ 10 in m2 of out here: the test separates them
    assert law["tied"][2][1] > 5 * law["gqa"][2][1]


def _sym():
    from freeprob.attention.ge import theta1, theta2
    return theta1, theta2


def test_tied_stack_is_s_phi_y_s():
    """theory.md §3.4 at γ_K = 1: stack = π(φ_# MP(c_K), 1) = law of s φ(y) s, s semicircular,
    y ~ MP(c_K) free (h = 2), and s1 φ(s2²) s1 (h = 1, degree 6 in two semicirculars):
    exact moments in θ1, θ2, and densities (operator-valued numeric route) at four points."""
    from freeprob import attention
    from freeprob.laws.families import MarchenkoPastur, Semicircle
    from freeprob.laws.polynomial import polynomial_law
    t1, t2 = _sym()
    arch = attention.Architecture(heads=2, gamma_k=1, gamma_v=1, gamma_o=1, scheme="tied")
    closed = attention.stacked_output_law(arch)
    poly = polynomial_law("2*theta2*s*y*y*s + (theta1 - theta2)*s*y*s",
                          {"s": Semicircle(0, 1), "y": MarchenkoPastur(sp.Rational(1, 2))}, parameters=[t1, t2])
    assert all(sp.simplify(a - b) == 0 for a, b in zip(poly.moments(4), closed.moments(4)))
    vals = {t1: sp.Rational(7, 4), t2: 1}
    xs = [0.5, 3, 10, 25]
    got = poly.subs(vals).density(xs, dps=12, method="numeric")
    want = closed.subs(vals).density(xs, dps=12)
    assert all(abs(a - b) < 1e-10 * abs(b) for a, b in zip(got, want))
    one = polynomial_law("theta2*a*b*b*b*b*a + (theta1 - theta2)*a*b*b*a",
                         {"a": Semicircle(0, 1), "b": Semicircle(0, 1)}, parameters=[t1, t2])
    arch1 = attention.Architecture(heads=1, gamma_k=1, gamma_v=1, gamma_o=1, scheme="tied")
    assert all(sp.simplify(a - b) == 0 for a, b in zip(one.moments(4), attention.stacked_output_law(arch1).moments(4)))


def test_untied_single_head_is_s_rho_s():
    """theory.md §3.2: single = π(ρ_{c_K}, 1) = ρ_{c_K} ⊠ π_1 = law of s(θ2 y + θ1 − θ2)s,
    y ~ MP(1/c_K); head_out at c_V = 1 adds π_1: s2 s1 ρ s1 s2 (degree 5, three variables)."""
    from freeprob import attention
    from freeprob.laws.families import MarchenkoPastur, Semicircle
    from freeprob.laws.polynomial import polynomial_law
    t1, t2 = _sym()
    arch = attention.Architecture(heads=4, gamma_k=sp.Rational(1, 2), gamma_v=4, gamma_o=1)   # c_K = 1/8, c_V = 1
    laws = {"s": Semicircle(0, 1), "r": Semicircle(0, 1), "y": MarchenkoPastur(8)}
    single = polynomial_law("theta2*s*y*s + (theta1 - theta2)*s*s", laws, parameters=[t1, t2])
    closed = attention.attention_law(arch)
    assert all(sp.simplify(a - b) == 0 for a, b in zip(single.moments(4), closed.moments(4)))
    vals = {t1: sp.Rational(7, 4), t2: 1}
    xs = [0.2, 1, 4, 9]
    got = single.subs(vals).density(xs, dps=12, method="numeric")
    want = closed.subs(vals).density(xs, dps=12)
    assert all(abs(a - b) < 1e-10 * abs(b) for a, b in zip(got, want))
    head = polynomial_law("theta2*r*s*y*s*r + (theta1 - theta2)*r*s*s*r", laws, parameters=[t1, t2])
    assert all(sp.simplify(a - b) == 0 for a, b in zip(head.moments(4), attention.head_output_law(arch).moments(4)))


def test_bad_input():
    from freeprob.attention.input_gram_tied import key_gram_measure, tied_output_gram_m2, tied_output_gram_stieltjes
    with pytest.raises(FreeprobValueError, match="Im z"):
        tied_output_gram_stieltjes([1.0], DELTA1, DELTA1, obj="out", beta=1.0, c_k=0.1)
    with pytest.raises(FreeprobValueError, match="obj"):
        tied_output_gram_stieltjes([1j], DELTA1, DELTA1, obj="single", beta=1.0, c_k=0.1)
    with pytest.raises(FreeprobValueError, match="nu_n"):
        tied_output_gram_stieltjes([1j], DELTA1, ([1.0], [0.5]), obj="out", beta=1.0, c_k=0.1)
    with pytest.raises(FreeprobValueError, match="moments"):
        tied_output_gram_m2([1.0, 2.0], obj="out", beta=1.0, c_k=0.1)
    with pytest.raises(FreeprobValueError, match="c_k"):
        key_gram_measure(DELTA1, 0.0)
