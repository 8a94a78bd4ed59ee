"""Issue 19: general inputs (sampler, input-Gram law) and the β-growth frontier, at small n."""
import math
import re

import numpy as np

import pytest
import sympy as sp

from freeprob.errors import FreeprobValueError
from freeprob.sampler import Dimensions, spectra
from freeprob.sampler.inputs import (INPUT_KINDS, input_from_gram_spectrum, input_gram_spectrum, input_matrix,
                                     weights_from_inputs)


# ----------------------------------------------------------------------------- sampler inputs

@pytest.mark.parametrize("kind", INPUT_KINDS)
def test_input_matrix_mean_one(kind):
    x = input_matrix(kind, 48, 96, rng=np.random.default_rng(0))
    assert x.shape == (48, 96)
    assert np.trace(x @ x.T) / 96 == pytest.approx(48)


def test_orthonormal_and_rank():
    x = input_matrix("orthonormal", 32, 40, rng=np.random.default_rng(1))
    assert np.allclose(x @ x.T / 40, np.eye(32))
    ev = input_gram_spectrum(input_matrix("gaussian", 64, 16, rng=np.random.default_rng(2)))
    assert np.count_nonzero(ev > 1e-9) == 16 and ev.size == 64


def test_ar1_correlation_and_lowrank_outliers():
    x = input_matrix("ar1", 200, 4000, rng=np.random.default_rng(3), rho=0.6)
    c = x @ x.T / 4000
    assert np.mean(np.diag(c, 1)) == pytest.approx(0.6, abs=0.03)
    assert np.mean(np.diag(c, 3)) == pytest.approx(0.6**3, abs=0.03)
    ev = input_gram_spectrum(input_matrix("lowrank", 200, 400, rng=np.random.default_rng(4), rank=3, spike=0.5))
    assert np.all(ev[-3:] > 10) and ev[-4] < 3          # three shared-direction outliers


def test_input_from_gram_spectrum():
    lam = np.linspace(0.0, 2.0, 30)
    x = input_from_gram_spectrum(lam, 50, rng=np.random.default_rng(5))
    assert np.allclose(np.sort(input_gram_spectrum(x)), lam, atol=1e-10)
    with pytest.raises(FreeprobValueError, match="need d"):
        input_from_gram_spectrum(np.ones(10), 5, rng=np.random.default_rng(0))
    with pytest.raises(FreeprobValueError, match="≥ 0"):
        input_from_gram_spectrum(-np.ones(3), 5, rng=np.random.default_rng(0))


def test_weights_from_inputs_carry_the_gram():
    rng = np.random.default_rng(6)
    x = input_matrix("ar1", 8, 64, rng=rng, rho=0.5)
    dims = Dimensions(n=8, heads=2, d_k=3000, d_v=4, d_o=8)
    w = weights_from_inputs(dims, x, rng=rng)
    c = x @ x.T / 64
    assert np.allclose(w.q[0] @ w.q[0].T / 3000, c, atol=0.08)        # E[Q Qᵀ/d_K] = C
    tied = weights_from_inputs(Dimensions(n=8, heads=2, d_k=4, d_v=4, d_o=8, scheme="tied"), x, rng=rng)
    assert np.array_equal(tied.v, tied.k)


@pytest.mark.parametrize("bad, match", [
    (dict(kind="nope"), "kind"), (dict(kind="orthonormal", n=10, d=5), "n ≤ d"),
    (dict(kind="ar1", rho=1.0), "rho"), (dict(kind="lowrank", rank=0), "rank"),
    (dict(kind="gaussian", n=0), "n")])
def test_input_matrix_bad_input(bad, match):
    kw = dict(kind="gaussian", n=8, d=8)
    kw.update(bad)
    with pytest.raises(FreeprobValueError, match=match):
        input_matrix(kw.pop("kind"), kw.pop("n"), kw.pop("d"), rng=np.random.default_rng(0), **kw)


def test_weights_from_inputs_bad_shape():
    with pytest.raises(FreeprobValueError, match="rows"):
        weights_from_inputs(Dimensions(n=8, heads=1, d_k=2, d_v=2, d_o=2), np.ones((7, 9)),
                            rng=np.random.default_rng(0))


# ----------------------------------------------------------------------------- the input-Gram law

def test_plane_tree_moments_reduce_to_the_orthonormal_law():
    from freeprob.attention import Architecture, concatenated_attention_law
    from freeprob.attention.input_gram import variance_profile_moments
    from freeprob.laws.families import MarchenkoPastur
    t1, t2 = sp.E - 1, sp.Integer(1)
    arch = Architecture(heads=4, gamma_k=sp.Rational(1, 2), gamma_v=1, gamma_o=1).with_beta(1)
    mp = MarchenkoPastur(8).moments(4)
    got = variance_profile_moments([1] * 5, [t2**j * mp[j] for j in range(5)], t1 - t2, 4, 4)
    want = concatenated_attention_law(arch).moments(4)[1:]
    assert all(sp.simplify(g - v) == 0 for g, v in zip(got, want))


def test_plane_trees_are_catalan():
    from freeprob.attention.input_gram import _plane_trees
    assert [len(list(_plane_trees(k))) for k in range(1, 6)] == [1, 2, 5, 14, 42]


def test_variance_profile_law_vs_monte_carlo():
    """The equations (density), the trees (moments) and a sampled variance-profile matrix agree."""
    from freeprob.attention.input_gram import _Profile, profile_bound, variance_profile_moments
    from freeprob.attention.input_gram_table import tabulate
    rows = (np.array([0.5, 1.5]), np.array([0.5, 0.5]))
    cols = (np.array([0.2, 1.0, 3.0]), np.array([0.3, 0.4, 0.3]))
    s, alpha = 0.4, 2.0
    mom = variance_profile_moments([float(np.sum(rows[1] * rows[0]**j)) for j in range(4)],
                                   [float(np.sum(cols[1] * cols[0]**j)) for j in range(4)], s, alpha, 3)
    tab = tabulate(_Profile(rows, cols, s, alpha), profile_bound(rows, cols, s, alpha), grid=300)
    # no smoothing left (η = 10⁻¹⁰ of the scale): the density's moments are the trees' to 10⁻⁴
    assert tab["moments"][1:4] == pytest.approx(mom, rel=1e-4)
    assert abs(tab["mass"] - 1) < 1e-4
    rng = np.random.default_rng(8)
    n = 600
    c = np.repeat(rows[0], n // 2)
    d = np.repeat(cols[0], [int(0.3 * 2 * n), int(0.4 * 2 * n), int(0.3 * 2 * n)])
    y = rng.standard_normal((n, 2 * n)) * np.sqrt(np.outer(c, d) + s)
    ev = np.linalg.eigvalsh(y @ y.T / (2 * n))
    for k in (1, 2, 3):
        assert np.mean(ev**k) == pytest.approx(mom[k - 1], rel=0.03)


def test_input_gram_law_orthonormal_matches_exact_core():
    from freeprob.attention import Architecture, attention_law
    from freeprob.attention.input_gram import input_gram_law
    r = input_gram_law("single", n=256, heads=2, d_k=64, beta=0.5, kind="orthonormal", points=120, grid=250)
    arch = Architecture.from_dimensions(n=256, heads=2, d_k=64, d_v=64, d_o=256).with_beta("1/2")
    law = attention_law(arch)
    pts = r["x"][[80, 120, 160]]
    exact = np.array([float(v) for v in law.density(list(map(float, pts)), dps=15)])
    # no smoothing left: the density is the exact law's (it was 2 % with η = 2·10⁻³ x)
    assert np.allclose(r["density"][[80, 120, 160]], exact, rtol=1e-7, atol=0)
    assert r["moments"][2] == pytest.approx(float(law.moments(2)[2]), rel=1e-9)


def test_input_gram_law_gaussian_vs_ge_sample():
    from freeprob.attention.input_gram import input_gram_law
    from freeprob.experiments.compare import law_distances
    from freeprob.experiments.explore import input_law_table
    rng = np.random.default_rng(9)
    n, d = 256, 128
    x = input_matrix("gaussian", n, d, rng=rng)
    dims = Dimensions(n=n, heads=2, d_k=32, d_v=32, d_o=n)
    ev = spectra(dims, 0.6, rng=rng, models=("ge",), objects=("concat",),
                 weights=weights_from_inputs(dims, x, rng=rng))["ge", "concat"]
    r = input_gram_law("concat", n=n, heads=2, d_k=32, beta=0.6, kind="gaussian", d=d, points=100, grid=250)
    dist = law_distances(ev, input_law_table(r))
    assert dist["KS"] < 0.04
    assert np.mean(ev**2) == pytest.approx(r["moments"][2], rel=0.05)


def test_input_gram_law_bad_input():
    from freeprob.attention.input_gram import input_gram_law, input_gram_measure, variance_profile_moments
    with pytest.raises(FreeprobValueError, match="obj"):
        input_gram_law("tied_out", n=64, heads=1, d_k=8, beta=1.0)
    with pytest.raises(FreeprobValueError, match="beta"):
        input_gram_law("single", n=64, heads=1, d_k=8, beta=-1.0)
    with pytest.raises(FreeprobValueError, match="kind"):
        input_gram_measure("nope", 1.0)
    with pytest.raises(FreeprobValueError, match="order"):
        variance_profile_moments([1], [1], 0, 1, 9)


# ----------------------------------------------------------------------------- β growth

def test_fit_frontier_recovers_sqrt_log():
    from freeprob.experiments.explore_beta import fit_frontier
    ns = np.array([128, 256, 512, 1024])
    f = fit_frontier(ns, 0.3 * np.sqrt(np.log(ns)) + 0.1)
    assert f["sqrtlog"][0] == pytest.approx(0.3) and f["sqrtlog"][2] < 1e-12
    with pytest.raises(FreeprobValueError):
        fit_frontier([128], [1.0])


def test_frontier_fit_comparison_on_synthetic_frontiers():
    """β* drawn from each growth law with a known noise (σ = 0.03, about the measured one):
    the bootstrap rates say how often a√(log n) + b fits better under each law; exact
    (noise-free) data are fitted exactly by their own law."""
    from freeprob.experiments.explore_beta import compare_frontier_fits
    ns = np.array([256, 512, 1024, 2048, 4096])
    laws = dict(sqrtlog=1.13 * np.sqrt(np.log(ns)) - 1.78, power=0.29 * ns**0.2)
    for name, truth in laws.items():
        exact = compare_frontier_fits(ns, truth, np.full(5, 0.03), draws=20)
        assert exact.chi2[name] == pytest.approx(0, abs=1e-10)
    noisy = {name: compare_frontier_fits(ns, truth + 0.03 * np.random.default_rng(5).standard_normal(5),
                                         np.full(5, 0.03), draws=120, seed=0) for name, truth in laws.items()}
    for c in noisy.values():            # the two laws differ by 0.01-0.05 here: told apart in most draws
        assert 0.7 < c.first_wins["sqrtlog"].rate <= 1 and 0 <= c.first_wins["power"].rate < 0.3
    assert noisy["sqrtlog"].delta > 0 and noisy["sqrtlog"].p_second.rate < 0.2
    assert noisy["power"].delta < 0 and noisy["power"].p_second.rate > 0.3 and noisy["power"].p_first.rate < 0.2
    assert noisy["power"].likelihood_ratio < 1 < noisy["sqrtlog"].likelihood_ratio
    vague = compare_frontier_fits(ns, laws["power"], np.full(5, 0.3), draws=100)    # noise ≫ difference
    assert 0.3 < vague.first_wins["power"].rate < 0.7


def test_frontier_sigma_is_the_delta_method():
    from freeprob.experiments.explore_beta import frontier_sigma
    pts = [(b, dict(law=0.01 + 0.08 * (b - 1), law_sd=0.004)) for b in (0.9, 0.95, 1.0, 1.1)]
    expected = math.sqrt((0.004 / math.sqrt(3) / 0.08) ** 2 + 0.02**2 / 12)
    assert frontier_sigma(pts, "law", 3, 0.02) == pytest.approx(expected, rel=1e-9)
    assert math.isnan(frontier_sigma(pts[:1], "law", 3, 0.02))                     # one point: no slope
    assert math.isnan(frontier_sigma([(b, dict(law=1 - b, law_sd=0.1)) for b in (1, 2)], "law", 3, 0.1))


def test_family_dims():
    from freeprob.experiments.explore_beta import family_dims
    assert family_dims("proportional", 256) == (4, 32)
    assert family_dims("fixed_head", 1024) == (8, 64)
    with pytest.raises(FreeprobValueError):
        family_dims("other", 256)


def test_frontier_job_brackets():
    from freeprob.experiments.explore_beta import frontier_job
    q = frontier_job("proportional", 64, (0.05, 0.5), 1, 1, (0.15, 0.6, 1.5), [1, 2], points=100)["quantities"]
    for eps in ("0.05", "0.5"):
        lo, hi = q[f"law/{eps}/beta_low"], q[f"law/{eps}/beta_high"]
        assert hi is None or lo < hi
        if lo > 0 and hi is not None:
            assert q[f"law/{eps}/at_low/law"] <= float(eps)
    assert q["law/0.05/beta_low"] <= q["law/0.5/beta_low"]


def test_beta_growth_cells_are_keyed_by_settings_and_code(tmp_path, monkeypatch):
    """Every evaluation is a stored cell: a rerun computes nothing, another ε reuses the grid
    and computes only its own bisection points, other code computes afresh (never mixed).
    ``_evaluate`` is replaced by a closed form relW1 = β·n/6400 (so β* = ε·6400/n), which
    also checks the bisection end to end."""
    from freeprob.experiments import explore_beta, store

    def fake(family, n, beta, seeds, entropy, points):
        r = beta * n / 6400
        return dict(law=r, sample=r, KS_law=r, KS_sample=r, top_sm=1.0, top_ge=1.0, m4_err=0.0, edge_law=1.0)

    monkeypatch.setattr(explore_beta, "_evaluate", fake)
    kw = dict(ns=(64,), families=("proportional",), seeds=1, steps=6, figures=False)
    first = explore_beta.run_beta_growth(tmp_path, epsilons=(0.01,), **kw)
    assert first["computed"] == 9 + 6           # the grid, then 6 halvings (law and sample coincide here)
    (row,) = first["rows"]
    assert row["beta_low"] <= 1.0 < row["beta_high"] and row["beta_high"] - row["beta_low"] < 0.02
    # issue 26: an earlier figure a --no-figures run does not rewrite is moved aside, never removed
    (tmp_path / "beta_frontier.png").write_bytes(b"\x89PNG of an earlier run")
    again = explore_beta.run_beta_growth(tmp_path, epsilons=(0.01,), **kw)
    assert again["computed"] == 0                                                           # resumed
    assert not (tmp_path / "beta_frontier.png").exists() and "moved to" in again["set_aside"][0]
    assert (tmp_path / "beta_frontier.earlier-1.png").read_bytes() == b"\x89PNG of an earlier run"
    other = explore_beta.run_beta_growth(tmp_path, epsilons=(0.02,), **kw)
    assert other["computed"] == 6 and other["resumed"] >= 9
    assert other["rows"][0]["beta_low"] <= 2.0 < other["rows"][0]["beta_high"]
    monkeypatch.setattr(store, "code_version", lambda: "freeprob other-code")
    assert explore_beta.run_beta_growth(tmp_path, epsilons=(0.01,), **kw)["computed"] == 15


def test_cell_key_names_settings_and_code(monkeypatch):
    from freeprob.experiments import store
    from freeprob.experiments.explore import cell_key
    a = cell_key("inputs/x", n=64, case=("ar1", "ar1", 2.0, {"rho": 0.5}))
    assert a.startswith("inputs/x-") and a == cell_key("inputs/x", case=("ar1", "ar1", 2.0, {"rho": 0.5}), n=64)
    assert a != cell_key("inputs/x", n=64, case=("ar1", "ar1", 2.0, {"rho": 0.25}))
    monkeypatch.setattr(store, "code_version", lambda: "freeprob other-code")
    assert a != cell_key("inputs/x", n=64, case=("ar1", "ar1", 2.0, {"rho": 0.5}))


def test_failed_frontier_cell_has_no_row_and_exit_status_1(tmp_path, monkeypatch, capsys):
    """A cell that raises is listed (stderr, exit status 1) and has no row in
    beta_frontier.csv: never an interval made of missing values (it used to print
    ``nan,None,inf``)."""
    from freeprob.cli import main
    from freeprob.experiments import explore_beta

    def fake(family, n, beta, seeds, entropy, points):
        if n == 128:
            raise ArithmeticError("no convergence at this beta")
        r = beta * n / 6400
        return dict(law=r, sample=r, KS_law=r, KS_sample=r, top_sm=1.0, top_ge=1.0, m4_err=0.0, edge_law=1.0)

    monkeypatch.setattr(explore_beta, "_evaluate", fake)
    status = main(["explore", "beta-growth", "--ns", "64,128", "--epsilons", "0.01", "--seeds", "1",
                   "--no-figures", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 1
    assert "18 cell(s) failed" in err and "no convergence" in err     # the 9 grid points, both families at n = 128
    assert "frontier/proportional/n128" in err and "frontier/fixed_head/n128" in err
    csv_rows = (tmp_path / "beta_frontier.csv").read_text().splitlines()
    assert all(",128," not in r for r in csv_rows) and any(",64," in r for r in csv_rows)
    assert "None" not in out and "None" not in "".join(csv_rows)


@pytest.mark.parametrize("eps, star", [(0.008, 0.8), (0.0095, 0.95)])
def test_frontier_moves_a_bisection_point_where_the_law_cannot_be_tabulated(monkeypatch, eps, star):
    """A β whose law cannot be tabulated (PrecisionError, as where two support intervals merge)
    is replaced by a nearby evaluated point; the bounds are points actually evaluated, and the
    diagnostics at β_low are those of the moved point when it is the lower bound (ε = 0.0095)."""
    from freeprob.errors import PrecisionError
    from freeprob.experiments import explore_beta
    bad = set()

    def fake(family, n, beta, seeds, entropy, points):
        if not bad and 0.5 < beta < 1.0 and beta not in (0.4899, 0.7288, 1.0843):
            bad.add(beta)                           # the first bisection point fails
        if beta in bad:
            raise PrecisionError("tabulated mass differs from 1")
        r = beta / 100
        return dict(law=r, sample=r, KS_law=r, KS_sample=r, top_sm=1.0, top_ge=1.0, m4_err=0.0, edge_law=1.0)

    monkeypatch.setattr(explore_beta, "_evaluate", fake)
    grid = (0.1, 0.1488, 0.2213, 0.3293, 0.4899, 0.7288, 1.0843, 1.6132, 2.4)
    q = explore_beta.frontier_job("proportional", 64, (eps,), 1, 3, grid, [1])["quantities"]
    assert q["shifted_evaluations"] == 1 and len(bad) == 1
    (b,) = bad
    lo, hi = q[f"law/{eps:g}/beta_low"], q[f"law/{eps:g}/beta_high"]
    assert lo <= star < hi and hi - lo < 0.045                  # β* still bracketed
    assert q[f"law/{eps:g}/at_low/law"] == pytest.approx(lo / 100, rel=1e-12)
    evaluated = {float(k.split("/")[1]) for k in q if k.startswith("eval/") and k.endswith("/law")}
    assert lo in evaluated and hi in evaluated and b not in evaluated
    assert any(abs(abs(e / b - 1) - 1e-3) < 1e-5 for e in evaluated)      # moved by 0.1 %


@pytest.mark.parametrize("argv, match", [
    (["inputs", "--ns", "128"], "--ns belong"),
    (["beta-growth", "--beta", "2"], "--beta belong"),
    (["beta-growth", "--ns", "128,128"], "lists 128 twice"),
    (["beta-growth", "--ns", "128.5"], "argument --ns: expected an integer ≥ 64; got '128.5'"),
    # a bad item of a list is named by its place and value (issue 26)
    (["beta-growth", "--ns", "128,abc"], "argument --ns: item 2 of '128,abc': expected an integer ≥ 64; got 'abc'"),
    (["beta-growth", "--ns", "128,100"], "multiple of 8; got 100"),
    (["beta-growth", "--epsilons", "0.1,2"], "argument --epsilons: item 2 of '0.1,2': expected a number in (0, 1)"),
    (["inputs", "--families", "proportional"], "--families belong"),
    (["beta-growth", "--families", "nope"], "unknown family"),
    # the cost model refuses an evaluation above 10 min before anything is created (issue 26: n = 4096)
    (["beta-growth", "--ns", "4096", "--families", "fixed_head"], "one evaluation of fixed_head at n=4096"),
])
def test_explore_cli_refuses_misplaced_or_bad_options(argv, match, tmp_path, capsys):
    from freeprob.cli import main
    try:
        status = main(["explore", *argv, "--out", str(tmp_path / "x")])
    except SystemExit as exc:               # refused by argparse
        status = exc.code
    assert status == 2
    assert match in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("kw, match", [
    (dict(ns=(128, "abc")), "item 2 of ns must be an integer ≥ 64; got 'abc'"),
    (dict(ns="256,32"), "item 2 of ns must be an integer ≥ 64; got 32"),
    (dict(epsilons=(0.01, 0.5, 2)), "item 3 of epsilons must be a finite real number > 0 and ≤ 1; got 2"),
    (dict(epsilons=(0.01, 1)), "item 2 is 1"),
])
def test_beta_growth_names_the_bad_item(kw, match, tmp_path):
    from freeprob.experiments.explore_beta import run_beta_growth
    with pytest.raises(FreeprobValueError, match=re.escape(match)):
        run_beta_growth(tmp_path / "x", quick=True, **kw)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("kw, match", [
    (dict(d=0), "d \\(input features\\)"), (dict(d=64.5), "d \\(input features\\)"),
    (dict(grid=0), "grid must be"), (dict(grid=19), "grid must be"), (dict(points=1), "points must be"),
    (dict(kind="gaussian", rank=4), "rank is for kind='lowrank'"),
])
def test_input_gram_law_refuses_bad_discretisation(kw, match):
    from freeprob.attention.input_gram import input_gram_law
    with pytest.raises(FreeprobValueError, match=match):
        input_gram_law("single", n=128, heads=4, d_k=32, beta=0.5, **kw)


def test_predicted_top_at_beta_zero_is_the_point_mass():
    """β = 0: every attention row is the uniform average, the centred output vanishes."""
    from freeprob.attention import Architecture
    from freeprob.attention.spikes import predicted_top_eigenvalue
    arch = Architecture.from_dimensions(n=128, heads=4, d_k=32, d_v=32, d_o=128, beta=0)
    assert predicted_top_eigenvalue(arch, "out") == 0.0
