"""freeprob.attention.readout: gradient-flow loss, time to loss, ridge error, effective dof.

References: the Marchenko–Pastur closed form (density √((b−x)(x−a))/(2πx), atom 1 − t at
0 for rate t < 1; Mingo & Speicher §2.5) integrated by mpmath.quad; a direct matrix
computation of the ridge error for a Gaussian F (docs/theory.md §4).
"""
import mpmath
import numpy as np
import pytest
import sympy as sp

from freeprob import FreePoisson
from freeprob.attention import Architecture, output_law
from freeprob.errors import FreeprobValueError
from freeprob.attention.readout import effective_dof, gradient_flow_loss, ridge_error, ridge_error_terms, time_to_loss

HALF = FreePoisson(sp.Rational(1, 2))       # MP of rate 1/2: atom 1/2 at 0


def fp_semicircle():
    from freeprob import Semicircle
    return Semicircle(0, 1)
A, B = (1 - mpmath.sqrt(0.5)) ** 2, (1 + mpmath.sqrt(0.5)) ** 2


def mp_integral(h):
    dens = lambda x: mpmath.sqrt((B - x) * (x - A)) / (2 * mpmath.pi * x)  # noqa: E731
    return 0.5 * h(mpmath.mpf(0)) + mpmath.quad(lambda x: h(x) * dens(x), [A, B])


@pytest.fixture(scope="module")
def curve():
    return gradient_flow_loss(HALF, [0, 0.5, 3, 30], dps=15)


def test_gradient_flow_loss_matches_the_closed_form(curve):
    assert curve[0] == 1
    for t, v in zip((0.5, 3), curve[1:3]):
        assert v == pytest.approx(float(mp_integral(lambda x: mpmath.exp(-2 * t * x))), rel=1e-13)


def test_loss_tends_to_the_zero_atom(curve):
    # plateau μ({0}) = 1/2; monotone decay towards it (at t = 30 within e^{-2·30·a}·…)
    assert curve[1] > curve[2] > curve[3] > 0.5
    assert curve[3] - 0.5 < 1e-4


def test_time_to_loss_inverts_the_curve():
    t = time_to_loss(HALF, 0.6, dps=8)
    assert float(gradient_flow_loss(HALF, t, dps=10)) == pytest.approx(0.6, abs=1e-7)


def test_time_to_loss_at_a_tiny_eps_has_relative_digits():
    # FreePoisson(2): no atom, density √((b−x)(x−a))/(2πx) on [(√2−1)², (√2+1)²]; at ε = 1e-12
    # the root finder's absolute test passed at t = 64, where L = 3.7e-13 (issue 26); the
    # closed-form density integrated by mpmath.quad gives L(t) = ε to the digits of t
    t = time_to_loss(FreePoisson(2), 1e-12, dps=6)
    with mpmath.workdps(30):
        a, b, tt = (mpmath.sqrt(2) - 1) ** 2, (mpmath.sqrt(2) + 1) ** 2, mpmath.mpf(t)
        loss = mpmath.quad(lambda x: mpmath.exp(-2 * tt * x) * mpmath.sqrt((b - x) * (x - a)) /
                           (2 * mpmath.pi * x), [a, (a + b) / 2, b])
    assert float(loss / mpmath.mpf("1e-12")) == pytest.approx(1, rel=1e-4)


def test_time_to_loss_near_one_has_relative_digits():
    # ε = 1 − 10⁻¹⁰, 1 − 10⁻¹⁵: t ≈ −log ε/(2 m₁) is tiny, and absolute tolerances in t and in
    # log L left 2·10⁻¹² and 3·10⁻⁷ relative error; the root of the moment series
    # L(t) = Σ m_k (−2t)^k/k! (50 digits, exact Narayana moments) has every digit asked
    m = [mpmath.mpf(sp.Rational(v)) for v in HALF.moments(12)]
    for k in (10, 15):
        t = time_to_loss(HALF, 1 - sp.Rational(1, 10**k), dps=15)
        with mpmath.workdps(50):
            eps = 1 - mpmath.mpf(10) ** -k
            root = mpmath.findroot(lambda u: mpmath.fsum(m[j] * (-2 * u) ** j / mpmath.factorial(j)
                                                         for j in range(13)) - eps, mpmath.mpf(t))
            assert abs(t / root - 1) < mpmath.mpf(10) ** -14, (k, t, root)


def test_mp_inverse_moment_closed_form():
    assert float(mp_integral(lambda x: 1 / x if x else 0)) == pytest.approx(1, rel=1e-12)


def test_small_penalty_keeps_its_digits():
    # λ → 0 at γ_O = 2, σ = 1/2: error → (1/γ_O)(μ({0}) + σ² ∫_{x>0} x⁻¹ dμ) + (1 − 1/γ_O)
    # = ½(½ + ¼·1) + ½ = 0.875 (∫_{x>0} x⁻¹ dμ = 1 for MP(1/2), by the closed-form density);
    # the 1/λ terms cancel, which needs log10(1/λ) extra digits (λ = 1e−30 gave 2.7e8 before)
    for lam in (1e-10, 1e-22, 1e-30):
        got = ridge_error(HALF, lam, 0.5, gamma_o=2, dps=15)
        assert float(got) == pytest.approx(0.875, abs=10 * lam + 1e-14)
    # γ_O = 1/2 is allowed when μ({0}) = 1/2 ≥ 1 − γ_O
    b, v = ridge_error_terms(HALF, 0.1, 0.5, gamma_o=0.5)
    assert b > 0 and v > 0


def test_ridge_and_dof_match_the_closed_form():
    lam, sig, go = mpmath.mpf("0.1"), mpmath.mpf("0.5"), 2

    def feat(h):
        return mp_integral(h) / go + (1 - mpmath.mpf(1) / go) * h(mpmath.mpf(0))
    want_dof = feat(lambda x: x / (x + lam))
    want_err = feat(lambda x: (lam ** 2 + sig ** 2 * x) / (x + lam) ** 2)
    assert effective_dof(HALF, lam, gamma_o=go, dps=20) == pytest.approx(float(want_dof), rel=1e-14)
    assert ridge_error(HALF, lam, sig, gamma_o=go, dps=20) == pytest.approx(float(want_err), rel=1e-14)
    b, v = ridge_error_terms(HALF, lam, 0, gamma_o=go)
    assert v == 0 and b == pytest.approx(float(feat(lambda x: lam ** 2 / (x + lam) ** 2)), rel=1e-13)


def test_ridge_error_against_a_direct_matrix_computation():
    # F = X/√n, X of size n × p with iid N(0, 1): F Fᵀ has the law FreePoisson(p/n) (n × n)
    n, p, lam, sig = 400, 800, 0.3, 0.5
    rng = np.random.default_rng(11)
    errs = []
    for _ in range(4):
        f = rng.standard_normal((n, p)) / np.sqrt(n)
        s = np.linalg.eigvalsh(f.T @ f)
        errs.append(np.mean((lam ** 2 + sig ** 2 * s) / (s + lam) ** 2))   # E over w*, ε given F
    pred = float(ridge_error(FreePoisson(2), lam, sig, gamma_o=2))
    # given F the expectation over w*, ε is exact; the draw-to-draw spread is ≈ 0.03 % here
    assert np.mean(errs) == pytest.approx(pred, rel=2e-3)


def test_attention_law_plateau():
    # h = 32 heads with γ_V = 1/2: the normalised output law has mass 1/2 at zero (docs/theory.md §4)
    arch = Architecture.from_dimensions(n=64, heads=32, d_k=1, d_v=1, d_o=128, beta=1)
    law = output_law(arch)
    assert float(sum(m for x, m in law.atoms(dps=15) if x == 0)) == pytest.approx(0.5)
    with pytest.raises(FreeprobValueError, match="plateau"):
        time_to_loss(law, 0.4)


@pytest.mark.parametrize("call, match", [
    (lambda: time_to_loss(HALF, 1.5), r"\(0, 1\)"),
    (lambda: time_to_loss(HALF, 0), r"\(0, 1\)"),
    (lambda: time_to_loss(HALF, 0.3), "plateau"),
    (lambda: gradient_flow_loss(HALF, -1), "≥ 0"),
    (lambda: gradient_flow_loss(HALF, float("nan")), "finite"),
    (lambda: gradient_flow_loss(HALF, 1, method="euler"), "method"),
    (lambda: gradient_flow_loss(HALF, [[1, 2]]), "1-d sequence"),
    # not a Gram law (mass below 0): refused, not a loss ratio of 3023
    (lambda: gradient_flow_loss(fp_semicircle(), 3), r"supported on \[0, ∞\)"),
    (lambda: time_to_loss(fp_semicircle(), 0.5), r"supported on \[0, ∞\)"),
    (lambda: ridge_error(fp_semicircle(), 3, 0.5, gamma_o=1), r"supported on \[0, ∞\)"),
    # γ_O < 1 needs μ({0}) ≥ 1 − γ_O (else μ_feat has a negative weight at 0)
    (lambda: ridge_error_terms(FreePoisson(1), 0.1, 0.5, gamma_o=0.5), r"zero mass μ\(\{0\}\) ≥ 1 − gamma_o"),
    (lambda: effective_dof(FreePoisson(1), 0.1, gamma_o=0.25), "zero mass"),
    (lambda: ridge_error(HALF, 0, 1, gamma_o=1), "> 0"),
    (lambda: ridge_error(HALF, -0.1, 1, gamma_o=1), "> 0"),
    (lambda: ridge_error(HALF, 0.1, -1, gamma_o=1), "≥ 0"),
    (lambda: effective_dof(HALF, 0.1, gamma_o=0), "> 0"),
    (lambda: effective_dof("law", 0.1), "expected a freeprob Law"),
    (lambda: effective_dof(FreePoisson(sp.Symbol("t")), 0.1), "free symbols"),
])
def test_bad_input(call, match):
    with pytest.raises(FreeprobValueError, match=match):
        call()


def test_attention_output_law_loss_matches_the_theory_note():
    # docs/theory.md §5.5 (an independent real-axis integration of the same law):
    # h = 8, d_K = d_V = 64, d_O = 512, n = 1024, β = 1: 0.7822 (t = 0.3), 0.6220 (t = 3)
    from freeprob.attention import mean_normalized
    law = mean_normalized(output_law(Architecture.from_dimensions(n=1024, heads=8, d_k=64, d_v=64, d_o=512,
                                                                   beta=1)))
    got = gradient_flow_loss(law, [0.3, 3], dps=10)
    assert [round(float(v), 4) for v in got] == [0.7822, 0.6220]


def test_density_and_contour_routes_agree():
    # two independent routes to ∫e^{−2tx}dμ: the density integrated on the axis (default) and
    # the contour integral of G around the support; MP(1/2) also against its closed form
    ts = [0.5, 3, 30]
    d = gradient_flow_loss(HALF, ts, dps=12)
    c = gradient_flow_loss(HALF, ts, dps=12, method="contour")
    for t, x, y in zip(ts, d, c):
        assert float(x) == pytest.approx(float(y), rel=1e-11)
        assert float(x) == pytest.approx(float(mp_integral(lambda v: mpmath.exp(-2 * t * v))), rel=1e-11)


def test_large_times_density_route():
    # MP(1) has a hard edge at 0 (density √(x(4−x))/(2πx)) and Laplace transform
    # E e^{−sX} = e^{−2s}(I_0(2s) + I_1(2s)); at t = 2000 (s = 4000) the loss ~ t^{−1/2}
    one = FreePoisson(1)
    for t in (20, 2000):
        s_ = 2 * mpmath.mpf(t)
        with mpmath.workdps(30):
            want = mpmath.exp(-2 * s_) * (mpmath.besseli(0, 2 * s_) + mpmath.besseli(1, 2 * s_))
        assert float(gradient_flow_loss(one, t, dps=15)) == pytest.approx(float(want), rel=1e-13)


def test_time_to_loss_of_an_attention_law_with_a_hard_edge():
    # γ_V = γ_O = 1: hard edge at 0, no atom, slow decay; the time found gives L = 0.1 by
    # the independent contour route
    from freeprob.attention import mean_normalized
    law = mean_normalized(output_law(Architecture.from_dimensions(n=512, heads=8, d_k=64, d_v=64, d_o=512,
                                                                   beta=1)))
    t = time_to_loss(law, 0.1, dps=8)
    assert 200 < t < 400
    assert float(gradient_flow_loss(law, t, dps=10, method="contour")) == pytest.approx(0.1, abs=1e-8)


def test_laws_at_a_temperature_with_non_square_exponent():
    # β = 0.7: θ1 = e^{0.49} − 1 (ExpConstant keeps one generator; sympy's exp(49/100)
    # broke the numerics).  At a large penalty the Cauchy transform and the ridge error equal
    # their moment series: G(−λ) = Σ m_k/(−λ)^{k+1}
    from freeprob.attention import mean_normalized
    law = mean_normalized(output_law(Architecture.from_dimensions(n=256, heads=4, d_k=16, d_v=16, d_o=512,
                                                                   beta="0.7")))
    lam = 200                                       # support ⊂ [0, 12]: terms fall like 0.06^k
    m = [float(v) for v in law.moments(20, dps=20)]
    g_series = sum(m[k] / (-lam) ** (k + 1) for k in range(21))
    assert float(law.cauchy(-lam, dps=15).real) == pytest.approx(g_series, rel=1e-12)
    assert "exp(49/100)" in str(law.cauchy_equation().domain)
    # ridge error at σ = 0, γ_O = 1: λ² ∫ dμ/(x+λ)² = λ² G'(−λ) = λ² Σ (k+1) m_k/λ^{k+2}·(−1)^k
    want = sum((k + 1) * m[k] * (-1) ** k / lam ** k for k in range(21))
    assert float(ridge_error(law, lam, 0, gamma_o=1, dps=12)) == pytest.approx(want, rel=1e-12)


# -- finite-n side ------------------------------------------------------------------------
from freeprob.sampler.readout import measured_effective_dof, measured_loss_curve, measured_ridge_error# noqa: E402


def test_measured_quantities_equal_direct_computations():
    rng = np.random.default_rng(5)
    f = rng.standard_normal((30, 20)) / np.sqrt(30)
    y = rng.standard_normal(30)
    y -= y.mean()
    # gradient flow integrated exactly: r(t) = e^{−t F Fᵀ} y
    from scipy.linalg import expm
    r = expm(-1.7 * f @ f.T) @ y
    assert measured_loss_curve(f, y, 1.7) == pytest.approx(r @ r / (y @ y), rel=1e-10)
    # ridge: average of |ŵ − w*|²/d_O over many teachers and noises vs the closed form
    lam, sig = 0.2, 0.7
    a = np.linalg.solve(f.T @ f + lam * np.eye(20), f.T)
    errs = []
    for _ in range(4000):
        w = rng.standard_normal(20)
        errs.append(np.sum((a @ (f @ w + sig * rng.standard_normal(30)) - w) ** 2) / 20)
    assert np.mean(errs) == pytest.approx(measured_ridge_error(f, lam, sig), rel=0.02)   # 4000 draws: ~0.5 % s.e.
    s = np.linalg.eigvalsh(f.T @ f)
    assert measured_effective_dof(f, lam) == pytest.approx(np.mean(s / (s + lam)), rel=1e-12)


def test_predictions_match_softmax_features_at_small_n():
    from freeprob.attention import mean_normalized
    from freeprob.sampler import Dimensions, sample_objects
    n = 512
    dims = Dimensions(n=n, heads=8, d_k=32, d_v=32, d_o=256)
    m1 = float(sp.E - 1) / 2                      # θ1 γ_O
    law = mean_normalized(output_law(Architecture.from_dimensions(n=n, heads=8, d_k=32, d_v=32, d_o=256,
                                                                   beta=1)))
    pred_ridge = float(ridge_error(law, 0.1, 0.5, gamma_o=sp.Rational(1, 2), dps=10))
    loss, esd, ridge = [], [], []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        f = sample_objects(dims, 1.0, rng=rng, objects=("out_full",))["out_full"] / np.sqrt(m1)
        for _ in range(4):
            y = rng.standard_normal(n)
            loss.append(measured_loss_curve(f, y - y.mean(), [0.3, 3.0]))
        lam = np.clip(np.linalg.eigvalsh(f @ f.T), 0, None)
        esd.append([np.mean(np.exp(-2 * t * lam)) for t in (0.3, 3.0)])
        ridge.append(measured_ridge_error(f, 0.1, 0.5))
    pred = [0.7822, 0.6220]        # theory at these ratios (docs/theory.md §5.5; test above)
    # the spectral average tr e^{−2tFFᵀ}/n: measured 0.784, 0.625
    assert np.mean(esd, axis=0) == pytest.approx(pred, abs=0.01)
    # fixed centred targets: one (draw, target) pair spreads by ±0.02–0.03, and at finite n the
    # fixed-target curve sits below the spectral average (docs/theory.md §5.5: by ≈ 0.015–0.02 at
    # n = 1024, within 2.3 s.e.); measured here 0.780, 0.612
    assert np.mean(loss, axis=0) == pytest.approx(pred, abs=0.03)
    assert np.mean(ridge) == pytest.approx(pred_ridge, rel=0.03)


@pytest.mark.parametrize("call, match", [
    (lambda: measured_loss_curve(np.ones((4, 3)), np.ones(4), 1.0), "not orthogonal to the all-ones"),
    (lambda: measured_loss_curve(np.ones((4, 3)), np.zeros(4), 1.0), "non-zero"),
    (lambda: measured_loss_curve(np.ones((4, 3)), np.array([1.0, -1, 0, 0]), -1.0), "≥ 0"),
    (lambda: measured_loss_curve(np.ones((4, 3)), np.ones(3), 1.0), "length n = 4"),
    (lambda: measured_ridge_error(np.ones((4, 3)), 0.0, 1.0), "> 0"),
    (lambda: measured_ridge_error(np.full((4, 3), np.nan), 0.1, 1.0), "finite"),
    (lambda: measured_effective_dof(np.ones((4, 3)), -1), "> 0"),
])
def test_measured_bad_input(call, match):
    with pytest.raises(FreeprobValueError, match=match):
        call()


def test_mean_interval_matches_the_t_interval():
    from freeprob.experiments.stats import mean_interval
    r = mean_interval([1, 2, 3, 4])
    # s = √(5/3), t_{0.975, 3} = 3.182446305: half = t·s/√4
    assert r.mean == 2.5 and r.n == 4
    assert r.half == pytest.approx(3.182446305284263 * (5 / 3) ** 0.5 / 2, rel=1e-12)
    assert (r.lo, r.hi) == pytest.approx((2.5 - r.half, 2.5 + r.half))
    assert format(r, ".2f") == "2.50 ± 2.05" and r.contains(4.5) and not r.contains(4.6)
    assert mean_interval([1, 2, 3, 4], level=0.5).half < r.half
    one = mean_interval([0.3])
    assert one.half is None and format(one, ".1f") == "0.3" and not one.contains(0.3)


def test_measured_bad_features():
    from freeprob.sampler.readout import measured_loss_curve, measured_ridge_error
    f = np.random.default_rng(0).standard_normal((20, 10))
    y = np.arange(20.0) - 9.5
    with pytest.raises(FreeprobValueError, match="too large"):
        measured_ridge_error(f * 1e200, 0.1, 0.5)
    with pytest.raises(FreeprobValueError, match="complex"):
        measured_loss_curve(f + 0j, y, 1)
    with pytest.raises(FreeprobValueError, match="NaN"):
        measured_loss_curve(np.where(f > 2, np.nan, f), y, 1)
    with pytest.raises(FreeprobValueError, match="times"):
        measured_loss_curve(f, y, "abc")


@pytest.mark.parametrize("values, level, match", [
    ([], 0.95, "at least one"), ([1, float("nan")], 0.95, "finite"), ([1, 2], 1.0, r"\(0, 1\)"),
    (["a"], 0.95, "real numbers"), ([[1, 2], [3, 4]], 0.95, "1-d"), ([1e308, 1e308], 0.95, "finite"),
])
def test_mean_interval_bad_input(values, level, match):
    from freeprob.experiments.stats import mean_interval
    with pytest.raises(FreeprobValueError, match=match):
        mean_interval(values, level)
