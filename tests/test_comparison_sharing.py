"""Comparison 4 (paper §5.3, D.5): across-head K/V sharing and the time to relative loss 0.1.

Second route for the exact times: the density of the law (certified Cauchy transform on the
real axis) integrated against e^{−2tx} by Gauss–Legendre in θ with x = a + (b − a)·sin²θ
(which removes the x^{−1/2} hard edge at 0 and the square-root soft edges), plus the atoms;
the crossing of 0.1 by Brent's method.  Independent of the contour quadrature of
freeprob.attention.readout.
"""
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import brentq

from freeprob.attention import Architecture
from freeprob.experiments.comparisons import sharing
from freeprob.experiments.comparisons._common import feature_law, projection_parameters, sampled_features
from freeprob.errors import FreeprobValueError
from freeprob.sampler.readout import measured_loss_curve; from freeprob.experiments.stats import mean_interval


def _density_rule(law, nodes=160):
    g, gw = np.polynomial.legendre.leggauss(nodes)
    th, thw = (g + 1) * math.pi / 4, gw * math.pi / 4
    xs, ws = [], []
    for a, b in law.support(dps=15):
        a, b = float(a), float(b)
        x = a + (b - a) * np.sin(th) ** 2
        order = np.argsort(x)
        dens = np.empty(nodes)
        dens[order] = [float(v) for v in law.density([float(v) for v in x[order]], dps=12)]
        xs.append(x)
        ws.append(dens * (b - a) * 2 * np.sin(th) * np.cos(th) * thw)
    atoms = [(float(loc), float(m)) for loc, m in law.atoms(dps=15)]
    return np.concatenate(xs), np.concatenate(ws), atoms


def _loss(rule, t):
    x, w, atoms = rule
    return float(w @ np.exp(-2 * t * x)) + sum(m * math.exp(-2 * t * loc) for loc, m in atoms)


def _density_time(rule, level=0.1):
    return brentq(lambda t: _loss(rule, t) - level, 0.0, 1e3, xtol=1e-12, rtol=1e-13)


@pytest.fixture(scope="module")
def rules():
    fixed = feature_law(sharing.fixed_dimensions(512), 1)[0]
    # the same law objects as run() uses (their supports are computed once)
    exact = sharing._architecture_law(sharing.reinvested_architecture(Fraction(5, 194)))
    rounded = feature_law(sharing.fixed_dimensions(512, 1, width=13), 1)[0]
    return dict(fixed=(fixed, _density_rule(fixed)), exact=(exact, _density_rule(exact)),
                rounded=(rounded, _density_rule(rounded)))


def test_reinvested_width_solves_the_budget_equation():
    for n in (512, 1024, 2048):
        w = sharing.reinvested_width(n)
        assert w == Fraction(5 * n, 194)                  # (3nh + 2nh)·(n/64) / (nh + 2n + 2nh), h = 64
        d_h = n // 64
        indep = projection_parameters(sharing.fixed_dimensions(n))
        assert indep == 3 * n * 64 * d_h + 64 * d_h * 2 * n
        # MQA at the same widths saves (h − 1)·d·(d_K + d_V) key/value weights
        mqa = projection_parameters(sharing.fixed_dimensions(n, 1))
        assert indep - mqa == 63 * n * 2 * d_h
        # the count is linear in the width, and the exact width spends exactly the budget
        per = [projection_parameters(sharing.fixed_dimensions(n, 1, width=k)) for k in (1, 2, 7)]
        assert per[1] == 2 * per[0] and per[2] == 7 * per[0]
        assert w * per[0] == indep
        # GQA with 8 groups reinvests less: narrower than MQA, wider than d_h
        assert d_h < sharing.reinvested_width(n, 8) < w
    assert [round(sharing.reinvested_width(n)) for n in (512, 1024, 2048)] == [13, 26, 53]


def test_fixed_width_laws_are_identical_across_sharing_schemes():
    laws = {g: feature_law(sharing.fixed_dimensions(512, g), 1)[0] for g in (64, 8, 2, 1)}
    eq = laws[64].cauchy_equation()
    for g in (8, 2, 1):
        assert (laws[g].cauchy_equation() - eq).is_zero
        assert laws[g].moments(5) == laws[64].moments(5)
    # closed form of the normalised second moment (docs/theory.md §3.2):
    # 1 + κ²/γ_K + 1/h + 1/γ_V + 1/γ_O with γ_K = γ_V = 1, γ_O = 2, h = 64, κ = 1/(e − 1)
    kappa = 1 / (sp.E - 1)
    m2 = laws[1].moments(2)[2]
    assert abs(float(m2 - (1 + kappa ** 2 + sp.Rational(1, 64) + 1 + sp.Rational(1, 2)))) < 1e-12
    # the zero mass is max(0, 1 − γ_V, 1 − γ_O) = 0: no plateau, the loss reaches 0.1
    assert all(float(loc) != 0 for loc, _ in laws[1].atoms(dps=15))


def test_predicted_times_second_route_reproduce_the_paper(rules):
    t_fixed = _density_time(rules["fixed"][1])
    t_exact = _density_time(rules["exact"][1])
    t_round = _density_time(rules["rounded"][1])
    # paper D.5: 41.22 at fixed widths, 7.80 at fixed parameter count (h_KV = 1)
    assert round(t_fixed, 2) == 41.22 and round(t_exact, 2) == 7.80
    # rounding w* = 13.196 down to 13 slows training; the ordering fixed ≫ rounded > exact
    assert t_fixed > 5 * t_round and t_round > t_exact
    # the rule integrates the law: mass 1, mean 1 (mean-normalised, no atoms here)
    for _, (x, w, atoms) in rules.values():
        assert abs(w.sum() + sum(m for _, m in atoms) - 1) < 1e-9 and abs(w @ x - 1) < 1e-9


@pytest.fixture(scope="module")
def quick():
    lines = []
    return sharing.run(quick=True, seeds=2, progress=lines.append), lines


def test_run_predictions_match_the_density_route(rules, quick):
    comp, lines = quick
    pred = comp.data["predicted"]
    assert lines and comp.key == "sharing" and pred["paper_rounded"] is None      # skipped when quick
    for name in ("fixed", "exact", "rounded"):
        law, rule = rules[name]
        # time_to_loss (contour/production route) against the density route, and the
        # predicted loss at the returned time is 0.1
        assert abs(pred[name] / _density_time(rule) - 1) < 1e-5, name
        assert abs(_loss(rule, pred[name]) - 0.1) < 1e-6, name
    assert comp.data["width_rounded"] == 13 and comp.data["width_exact_fraction"] == "1280/97"


def test_run_table_and_figure(quick, tmp_path):
    comp, _ = quick
    labels = [r[0] for r in comp.rows]
    assert labels == ["fixed widths, independent", "fixed widths, MQA", "fixed budget, MQA, exact width",
                      "fixed budget, MQA, rounded width"]
    # one predicted time for every sharing scheme at fixed widths
    assert comp.rows[0][4] == comp.rows[1][4] == comp.data["predicted"]["fixed"]
    assert comp.rows[0][3] - comp.rows[1][3] == 63 * 512 * 2 * 8               # saved K/V weights
    assert comp.rows[2][3] == comp.rows[0][3]                                   # exact width: same budget
    assert [p[1] for p in comp.paper][:5] == ["41.22", "7.80", "7.76", "39.11", "7.57"]
    assert comp.paper[0][2] == "41.22" and comp.paper[1][2] == "7.80"
    assert all(len(v) == 2 for v in comp.data["measured"].values())
    paths = comp.write(tmp_path)
    assert [p.name for p in paths] == ["sharing.txt", "sharing.json", "sharing.png"]
    assert paths[2].stat().st_size > 10_000 and "41.22" in paths[0].read_text()


def test_measured_times_use_the_measured_loss_curve():
    dims = sharing.fixed_dimensions(128, 1, width=3)
    times, curves = sharing.measured_times(dims, 2, targets=3, times=np.array([0.5, 4.0, 30.0]))
    for s in range(2):
        f = sampled_features(dims, 1, s)
        y = np.random.default_rng((s, 1)).standard_normal((128, 3))
        y -= y.mean(axis=0)

        def mean_curve(t):
            return np.mean([measured_loss_curve(f, y[:, k], t) for k in range(3)], axis=0)
        assert np.allclose(curves[s], mean_curve(np.array([0.5, 4.0, 30.0])), rtol=1e-9, atol=1e-12)
        assert abs(mean_curve(times[s]) - 0.1) < 1e-9


def test_measured_time_after_reinvesting_matches_prediction(rules):
    # softmax MQA at n = 512, w = 13 (the rounded width), 6 initialisations × 16 targets.
    # Tolerance: the 95% t-interval plus 5% of the prediction for finite-size bias (the
    # paper's own largest measured-predicted gap is 5.14%; d_K = 13 here).  Observed:
    # 7.9 ± 0.3 against 7.987.
    t_pred = _density_time(rules["rounded"][1])
    times, _ = sharing.measured_times(sharing.fixed_dimensions(512, 1, width=13), 6)
    iv = mean_interval(times)
    assert iv.half < 0.1 * t_pred
    assert iv.contains(t_pred, slack=0.05 * t_pred), (iv, t_pred)
    # and far below the fixed-width time: reinvesting is ≥ 4× faster at this n already
    assert iv.hi < _density_time(rules["fixed"][1]) / 4


@pytest.mark.parametrize("kwargs", [dict(n=100), dict(n=0), dict(n=32), dict(n=True), dict(n=512.0),
                                    dict(seeds=1), dict(seeds=0), dict(seeds="3"), dict(progress=3)])
def test_bad_input(kwargs):
    with pytest.raises(FreeprobValueError):
        sharing.run(quick=True, **kwargs)


def test_bad_sizes_in_helpers():
    with pytest.raises(FreeprobValueError, match="multiple of 64"):
        sharing.fixed_dimensions(96)
    with pytest.raises(FreeprobValueError):
        sharing.fixed_dimensions(512, 3)            # 3 does not divide 64 heads
    with pytest.raises(FreeprobValueError):
        sharing.reinvested_width(512, 0)


def test_architecture_of_the_reinvested_layer():
    arch = sharing.reinvested_architecture(Fraction(5, 194))
    assert arch.gamma_k == arch.gamma_v == sp.Rational(160, 97) and arch.gamma_o == 2
    assert arch.scheme == "gqa" and arch.kv_groups == 1 and arch.heads == 64
    paper = Architecture.from_dimensions(n=2048, heads=64, d_k=53, d_v=53, d_o=4096)
    assert paper.gamma_k == sp.Rational(53, 32)
