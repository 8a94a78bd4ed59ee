"""Comparison 3 (paper §5.2, D.4): the (64, 192) vs (128, 128) error ratio across β.

Structural facts of the exact predictions (R(1) < 1 < R(0.25), the crossover root), two
independent routes for the same numbers (the engine's exact law vs the closed-form
S-transform; the κ route vs the exact-e^{β²} route at the crossover), measured vs predicted
at n = 256 with fixed seeds, the quick run, and bad input.
"""
import numpy as np
import pytest

from freeprob.experiments.comparisons import temperature as T
from freeprob.experiments.comparisons._common import measured_ridge_errors, predicted_ridge_error, \
    projection_parameters
from freeprob.errors import FreeprobValueError
from freeprob.sampler import Dimensions


def test_equal_budget_at_d_equals_d_o():
    # 2·64·n + 192·n + 192·n = 2·128·n + 128·n + 128·n = 512 n only because d = d_O = n
    for n in (256, 512):
        b = [projection_parameters(Dimensions(n, 1, dk, dv, n)) for dk, dv in T.ALLOCATIONS]
        assert b == [512 * n, 512 * n]
    assert (projection_parameters(Dimensions(512, 1, 64, 192, 256))
            != projection_parameters(Dimensions(512, 1, 128, 128, 256)))


def test_ratio_below_one_near_beta_one_and_above_one_at_low_beta():
    r1, r025 = T.ratio("1"), T.ratio("0.25")
    assert r1 < 1 < r025
    # pinned (engine, 8 digits; also reproduced by the S-transform route below)
    assert r1 == pytest.approx(0.94800604, abs=2e-8)
    assert r025 == pytest.approx(1.06170296, abs=2e-8)


def test_engine_and_closed_form_routes_agree():
    # two independent implementations of the same limit: the engine's Law objects
    # (algebraic Cauchy equation) and the S-transform product solved at z = −λ
    for n, h, beta, lam, sig in ((512, 1, "1", 0.1, 0.5), (512, 1, "0.25", 0.1, 0.5),
                                 (256, 2, "0.75", 0.2, 0.0)):
        k = T.kappa(beta)
        for dqk, dv in T.ALLOCATIONS:
            engine = T.error_kappa_route(n, h, dqk, dv, beta, lam, sig)
            closed = T.error_s_transform(k, dqk / n, dv / n, 1, h, lam, sig)
            assert closed == pytest.approx(engine, rel=1e-7), (n, h, beta, dqk, dv)


def test_crossover_is_a_root_and_matches_the_exact_beta_route():
    cs = T.crossovers()
    assert len(cs) == 1 and cs[0]["direction"] == "down"
    bc = cs[0]["beta_c"]
    assert 0.56 < bc < 0.58                                  # 0.572704…
    assert abs(bc - cs[0]["beta_c_s"]) < 1e-6               # the closed-form root
    assert abs(T.ratio(repr(bc)) - 1) < 1e-7                # κ route at the root
    # exact route through feature_law with the rational β = β_c rounded to 7 decimals:
    # |R − 1| ≤ |R'|·5e-8 + 1e-8 with |R'| ≈ 0.15 near β_c
    text = f"{bc:.7f}"
    errs = [predicted_ridge_error(Dimensions(512, 1, dk, dv, 512), text) for dk, dv in T.ALLOCATIONS]
    assert abs(errs[0] / errs[1] - 1) < 3e-8
    # just below/above the root the ranking flips
    assert T.ratio(repr(bc - 0.01)) > 1 > T.ratio(repr(bc + 0.01))


def test_crossover_moves_with_the_noise():
    # noiseless: R(0.25) < 1 already, the crossing sits at low β; σ = 1: R(1) > 1 and the
    # only crossing has the opposite orientation (closed-form route, cheap)
    c0 = T.crossovers(noise=0.0, exact=False)
    c1 = T.crossovers(noise=1.0, exact=False)
    assert [c["direction"] for c in c0] == ["down"] and 0.2 < c0[0]["beta_c_s"] < 0.26
    assert [c["direction"] for c in c1] == ["up"]
    # small λ: the weak directions (eigenvalues ≈ 1 − κ ≈ β²/2 of the row covariance, paper
    # §6.1) dominate up to larger β, and the crossing moves to β ≈ 1.32
    c2 = T.crossovers(penalty=0.01, exact=False)
    assert [c["direction"] for c in c2] == ["down"] and 1.3 < c2[0]["beta_c_s"] < 1.34


@pytest.mark.parametrize("beta", ["0.5", "1"])
def test_measured_ratio_near_prediction_at_small_n(beta):
    # n = 256 (γ_QK = 1/4, γ_V = 3/4 vs 1/2, 1/2), 4 initialisations, fixed seeds.
    # Per-initialisation ratios scatter by ≈ 0.2% (GE) and ≈ 0.45% (softmax) at β = 1.
    # GE sampled: only finite-n fluctuation, tolerance 0.8%.  Softmax adds the finite-width
    # bias of docs/theory.md §7 (≈ +1.3% at β = 1, d_QK = 64; ≈ 0.1% at β = 0.5), tolerance 3%.
    n = 256
    pred = T.ratio(beta, n=n)
    dims = [Dimensions(n, 1, dk, dv, n) for dk, dv in T.ALLOCATIONS]
    for model, tol in (("ge", 0.008), ("softmax", 0.03)):
        e = [np.array(measured_ridge_errors(d, beta, 4, model=model, base_seed=100)) for d in dims]
        r = float(np.mean(e[0] / e[1]))
        assert abs(r / pred - 1) < tol, (model, beta, r, pred)
    if beta == "1":
        assert r > pred        # softmax bias direction: the narrow-Q/K error sits above the limit


def test_run_quick():
    c = T.run(quick=True, seeds=2)
    assert c.key == "temperature" and len(c.rows) == len(T.QUICK_BETAS)
    assert [p[1] for p in c.paper] == ["≈ 0.559", "≤ 1.52%", "< 1", "> 1"]
    d = c.data
    assert d["beta_c"] == pytest.approx(0.5727042, abs=1e-6)
    assert abs(d["ratio_at_beta_c"][0] - 1) < 1e-7
    for b, m in d["measured"].items():
        assert m["ratio_ge"].contains(m["ratio_predicted"], slack=0.01), b
    assert "β_c S-route" in c.table()


@pytest.mark.parametrize("kwargs", [dict(n=100), dict(n=512.0), dict(n="512"), dict(seeds=1),
                                    dict(seeds=True), dict(progress=3)])
def test_run_bad_input(kwargs):
    with pytest.raises(FreeprobValueError):
        T.run(**kwargs)


def test_helpers_bad_input():
    with pytest.raises(FreeprobValueError):
        T.error_kappa_route(512, 1, 64, 192, -1)
    with pytest.raises(FreeprobValueError):
        T.error_kappa_route(512, 1, 64, 192, "abc")
    with pytest.raises(FreeprobValueError):
        T.error_kappa_route(512, 3, 64, 192, 1)          # 64 not divisible by 3 heads
    with pytest.raises(FreeprobValueError):
        T.crossovers(penalty=0)
    with pytest.raises(FreeprobValueError):
        T.crossovers(beta_range=(1, 0.5))


@pytest.mark.parametrize("bad, match", [
    (dict(gamma_k=-1), "gamma_k must be a finite real number > 0"), (dict(noise=-1), "noise must be"),
    (dict(kappa_value=1.5), "kappa_value must be a finite real number ≥ 0 and ≤ 1"),
    (dict(heads=2.5), "heads must be an integer ≥ 1"), (dict(heads=True), "heads must be an integer"),
    (dict(dps=0), "dps must be an integer from 10 to 1000"), (dict(noise=float("nan")), "noise must be"),
    (dict(penalty=0), "penalty must be"), (dict(gamma_o=[1]), "gamma_o must be"),
    (dict(gamma_k=1e-300), "was not found on its branch")])
def test_s_transform_route_refuses_bad_input(bad, match):
    """The newcomer's report: negative widths, a negative noise, κ outside [0, 1], dps = 0 gave
    numbers (0.5 at dps = 0), NaN gave NaN, others bare ZeroDivisionError or scipy's message."""
    from freeprob.errors import FreeprobValueError, PrecisionError
    base = dict(kappa_value=0.5, gamma_k=2, gamma_v=2, gamma_o=2, heads=4, penalty=0.1, noise=0.5)
    with pytest.raises((FreeprobValueError, PrecisionError), match=match):
        T.error_s_transform(**(base | bad))
