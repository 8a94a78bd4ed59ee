"""Laws from spectra (:mod:`freeprob.fit`): fitted cumulants and laws against the laws the
samples come from, the coverage of the intervals over 50 seeds, algebraic fits, free
(de)compression, the command and the errors.

Samples: real Wishart eigenvalues from the Dumitriu–Edelman bidiagonal model (the exact
law of the eigenvalues of ``XᵀX/m``, ``X`` an ``m × p`` Gaussian matrix, at the cost of a
tridiagonal eigensolve), GOE matrices, and i.i.d. semicircle draws (``4·Beta(3/2, 3/2) − 2``).
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import freeprob as fp
from freeprob.errors import FreeprobValueError
from freeprob.experiments.compare import TabulatedLaw
from freeprob.experiments.fit_report import parse_fit_spec, sample_distances, tabulated_w1
from freeprob.experiments.stats import rate_interval
from freeprob.fit import (EquationLaw, compress, decompress, fit_algebraic, fit_free_cumulants,
                          fit_law)
from freeprob.fit.equation import NotALaw, check_law
from freeprob.fit.resize import FreeResize
from freeprob.fit.sample import cumulants_from_moments

SEEDS = 50
MP_HALF = fp.MarchenkoPastur(sp.Rational(1, 2))      # mean 1, variance 1/2


def wishart(p, m, rng):
    """Eigenvalues of XᵀX/m, X ∈ R^{m×p} i.i.d. N(0, 1) (Dumitriu & Edelman 2002, β = 1)."""
    from scipy.linalg import eigvalsh_tridiagonal
    d = np.sqrt(rng.chisquare(m - np.arange(p)))
    e = np.sqrt(rng.chisquare(p - 1 - np.arange(p - 1)))
    return np.sort(eigvalsh_tridiagonal(d ** 2 + np.concatenate([[0], e ** 2]), d[:-1] * e)) / m


def goe(n, rng):
    a = rng.standard_normal((n, n))
    return np.linalg.eigvalsh((a + a.T) / np.sqrt(2 * n))


@pytest.fixture(scope="module")
def mp_sample():
    return wishart(2000, 4000, np.random.default_rng(0))


@pytest.fixture(scope="module")
def mp_table():
    return TabulatedLaw.from_law(MP_HALF, points=300)


def test_wishart_model_matches_the_dense_matrix():
    """The bidiagonal model against X^T X/m itself: first three moments agree (over draws)."""
    rng = np.random.default_rng(1)
    tri = np.mean([np.mean(wishart(60, 120, rng) ** 3) for _ in range(200)])
    dense = []
    for _ in range(200):
        x = rng.standard_normal((120, 60))
        dense.append(np.mean(np.linalg.eigvalsh(x.T @ x / 120) ** 3))
    # E m3 for real Wishart: exact 1/n corrections on top of 1 + 3c + c² = 2.75
    assert abs(tri - np.mean(dense)) < 4 * np.std(dense) / np.sqrt(200) * np.sqrt(2)


def test_cumulant_map_against_exact_laws():
    for law in (fp.Semicircle(1, 2), fp.FreePoisson(sp.Rational(3, 2), 2),
                fp.free_add(fp.Semicircle(), fp.FreePoisson(1))):
        m = np.array([float(v) for v in law.moments(8)])
        exact = [float(v) for v in law.free_cumulants(8)]
        assert np.allclose(cumulants_from_moments(m), exact, rtol=1e-12, atol=1e-12)


def _coverage(draw, truth, fit, seeds=SEEDS):
    hits = np.zeros(len(truth), dtype=int)
    for seed in range(seeds):
        ests = fit(draw(np.random.default_rng(1000 + seed)))
        hits += [e.contains(t) for e, t in zip(ests, truth)]
    return [rate_interval(int(h), seeds) for h in hits]


def test_iid_intervals_cover_at_their_level_for_iid_samples():
    rates = _coverage(lambda rng: 4 * rng.beta(1.5, 1.5, 400) - 2, (0, 1, 0, 0),
                      lambda x: fit_free_cumulants(x, 4).cumulants)
    assert all(r.lo <= 0.95 <= r.hi for r in rates), rates


def test_matrix_intervals_cover_at_their_level_for_goe():
    rates = _coverage(lambda rng: goe(100, rng), (0, 1, 0, 0),
                      lambda x: fit_free_cumulants(x, 4, errors="matrix").cumulants)
    assert all(r.lo <= 0.95 <= r.hi for r in rates), rates


def test_iid_intervals_are_conservative_for_one_matrix():
    """Eigenvalues of one matrix fluctuate √n less than i.i.d. draws: the iid interval
    covers (nearly) always, and is ~√n wider than the matrix one."""
    rates = _coverage(lambda rng: goe(100, rng), (0, 1),
                      lambda x: fit_free_cumulants(x, 2).cumulants, seeds=20)
    assert all(r.rate >= 0.95 for r in rates), rates
    x = goe(100, np.random.default_rng(5))
    ratio = fit_free_cumulants(x, 2).cumulants[1].se / fit_free_cumulants(x, 2, errors="matrix").cumulants[1].se
    assert 3 < ratio < 30


def test_family_intervals_cover_the_truth_over_50_seeds():
    """Marchenko–Pastur (ratio 1/2, scale 1) fitted to 200 Wishart eigenvalues: the 95%
    intervals of both parameters contain the truth at a rate whose binomial interval holds 95%."""
    rates = _coverage(lambda rng: wishart(200, 400, rng), (0.5, 1.0),
                      lambda x: fit_law(x, "marchenko-pastur", errors="matrix").parameters)
    assert all(r.lo <= 0.95 <= r.hi for r in rates), rates


def test_family_fit_of_mp_half_within_2_percent(mp_sample, mp_table):
    fit = fit_law(mp_sample, "marchenko-pastur", errors="matrix")
    assert all(p.contains(t) for p, t in zip(fit.parameters, (0.5, 1)))
    w1 = tabulated_w1(TabulatedLaw.from_law(fit.law, points=300), mp_table)
    assert w1 < 0.02
    # the same law by the other parametrization
    fp_fit = fit_law(mp_sample, "free-poisson", errors="matrix")
    assert fp_fit.parameters[0].contains(2) and fp_fit.parameters[1].contains(0.5)


def test_algebraic_fit_of_mp_half_within_2_percent(mp_sample, mp_table):
    fit = fit_algebraic(mp_sample, (2, 1))
    table = TabulatedLaw.from_law(fit.law, points=300)
    assert tabulated_w1(table, mp_table) < 0.02
    # support edges of MP(1/2): (1 ∓ 1/√2)²
    (a, b), = fit.check["support"]
    assert abs(a - (1 - 2 ** -0.5) ** 2) < 0.02 and abs(b - (1 + 2 ** -0.5) ** 2) < 0.05
    # the fitted law is as close to the sample as the true law is (W1 within 20%)
    assert sample_distances(mp_sample, table)["W1"] < 1.2 * sample_distances(mp_sample, mp_table)["W1"]
    # mean and variance are matched exactly (up to the 7-digit rounding)
    m = fit.law.moments(2, dps=15)
    assert abs(float(m[1]) - mp_sample.mean()) < 1e-6 and abs(float(m[2] - m[1] ** 2) - mp_sample.var()) < 1e-6


def test_equation_law_moments_are_the_series_branch():
    """EquationLaw of the MP(1/2) equation has the MP(1/2) moments (exact), and its
    density agrees with the family's."""
    law = EquationLaw.from_poly(MP_HALF.cauchy_equation())
    assert law.moments(8) == MP_HALF.moments(8)
    assert abs(float(law.density(1.3)) - float(MP_HALF.density(1.3))) < 1e-12
    info = check_law(law)
    assert abs(info["mass"] - 1) < 1e-6 and info["atoms"] == []


def test_equation_that_is_no_law_is_refused():
    # G = 2/(z − 1) − 1/(z + 1): mass 1 but an atom of mass −1
    G, z = fp.Symbol("G"), fp.Symbol("z")
    law = EquationLaw.from_poly(sp.Poly((z ** 2 - 1) * G - z - 3, G, z))
    assert law.moments(2) == (1, 3, 1)
    with pytest.raises(NotALaw, match="mass"):
        check_law(law)
    with pytest.raises(FreeprobValueError, match="branch G ~ 1/z"):
        EquationLaw.from_poly(sp.Poly(G ** 2 - z, G, z))


def test_decompression_of_a_corner():
    """The 200 × 200 corner of a 600 × 600 GOE matrix decompressed by 3 is the standard
    semicircle (family route, exact free power), within the fitted interval."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((600, 600))
    w = (a + a.T) / np.sqrt(2 * 600)
    corner = np.linalg.eigvalsh(w[:200, :200])
    fit = fit_law(corner, "semicircle", errors="matrix")
    assert fit.parameters[1].contains(sp.Rational(1, 3))
    big = decompress(corner, 3, family="semicircle", errors="matrix")
    assert abs(float(big.free_cumulants(2)[2]) - 1) < 3 * 3 * fit.parameters[1].se
    assert float(big.free_cumulants(3)[3]) == 0


def test_free_resize_against_closed_forms():
    law = fp.Semicircle(1, 2)
    r = FreeResize(law, sp.Rational(5, 2))
    assert r.free_cumulants(4) == (0, 1, 5, 0, 0)
    assert r.cauchy_equation() == fp.Semicircle(1, 5).cauchy_equation()
    mp = compress(MP_HALF, 3)                     # κ_k ↦ 3^{1−k} κ_k
    assert mp.free_cumulants(3) == tuple(sp.Rational(1, 3) ** max(k - 1, 0) * c
                                         for k, c in enumerate(MP_HALF.free_cumulants(3)))
    assert decompress(mp, 3).moments(4) == MP_HALF.moments(4)


def test_algebraic_decompression_of_a_wishart_corner():
    """A law not known to be infinitely divisible (an algebraic fit) decompresses through
    FreeResize, checked: the corner of a Wishart matrix back to MP(1/2)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1200, 600))
    corner = np.linalg.eigvalsh((x.T @ x / 1200)[:200, :200])
    big = decompress(corner, 3)
    assert isinstance(big, FreeResize)
    m = [float(v) for v in big.moments(3, dps=10)]
    assert abs(m[2] - 1.5) < 0.05 and abs(m[3] - 2.75) < 0.15


@pytest.mark.parametrize("bad, match", [
    ([], "at least 10"), ([1.0] * 5, "at least 10"), ([1.0] * 20, "all 20 eigenvalues are equal"),
    ([0.0, np.nan] + list(range(10)), "finite"), ([np.inf] + list(range(10)), "finite"),
    (np.eye(12), "1-d"), (["a"] * 12, "real numbers"), (np.ones(12) * 1j, "complex"),
])
def test_bad_eigenvalues(bad, match):
    for call in (lambda: fit_free_cumulants(bad, 2), lambda: fit_law(bad, "semicircle"),
                 lambda: fit_algebraic(bad)):
        with pytest.raises(FreeprobValueError, match=match):
            call()


def test_bad_orders_degrees_and_options():
    x = np.linspace(0, 1, 40)
    for k in (0, -1, 1.5, 13, "3"):
        with pytest.raises(FreeprobValueError, match="k must be an integer"):
            fit_free_cumulants(x, k)
    with pytest.raises(FreeprobValueError, match="needs at least 12"):
        fit_free_cumulants(x[:11], 10)
    for deg, match in [((0, 1), "d_G"), ((2, 0), "d_z"), ((1, 1), "point mass"), ((7, 1), "d_G"),
                       ("ab", "d_G"), ("abc", "pair"), (3, "pair"), ((6, 6), "needs at least 196")]:
        with pytest.raises(FreeprobValueError, match=match):
            fit_algebraic(x, deg)
    for kw, match in [(dict(errors="bootstrap"), "errors"), (dict(errors="matrix", beta=3), "beta"),
                      (dict(level=1.5), "level")]:
        with pytest.raises(FreeprobValueError, match=match):
            fit_free_cumulants(x, 2, **kw)
    with pytest.raises(FreeprobValueError, match="family"):
        fit_law(x, "gaussian")
    with pytest.raises(FreeprobValueError, match="mean is .* ≤ 0"):
        fit_law(x - 1, "marchenko-pastur")
    for f in (0, -2):
        with pytest.raises(FreeprobValueError, match="factor"):
            decompress(fp.Semicircle(), f)
    assert parse_fit_spec("algebraic:3,2") == (None, (3, 2))
    with pytest.raises(FreeprobValueError, match="algebraic:DG,DZ"):
        parse_fit_spec("algebraic:3")


def test_fit_command(tmp_path, mp_sample, capsys):
    from freeprob.cli.main import main
    txt, npy = tmp_path / "ev.txt", tmp_path / "ev.npy"
    txt.write_text("# eigenvalues\n" + "\n".join(str(float(v)) for v in mp_sample[::4]) + "\n")
    np.save(npy, mp_sample[::4])
    assert main(["fit", str(txt), "--family", "marchenko-pastur", "--order", "2"]) == 0
    out = capsys.readouterr().out
    assert "ratio" in out and "κ_2" in out and "distance to the sample: W1" in out
    assert main(["fit", str(npy), "--degrees", "2,1", "--decompress", "2"]) == 0
    out = capsys.readouterr().out
    assert "P(G, z) ≈" in out and "decompressed by 2" in out
    txt.write_text("1\n2\nthree\n")
    assert main(["fit", str(txt)]) == 2
    assert "line 3" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "missing.txt")]) == 2
    assert main(["fit", str(npy), "--family", "semicircle", "--degrees", "2,1"]) == 2


def test_tabulated_w1_against_a_closed_form(mp_table):
    """W1(μ, D_c μ) = |c − 1| E|X|: for MP(1/2) (positive) dilated by 11/10, a tenth of the mean."""
    wider = TabulatedLaw.from_law(fp.dilate(MP_HALF, sp.Rational(11, 10)), points=300)
    assert tabulated_w1(mp_table, mp_table) == 0
    assert abs(tabulated_w1(wider, mp_table) - 0.1) < 1e-4
    assert abs(tabulated_w1(wider, mp_table, scale="sd") - 0.1 / 0.5 ** 0.5) < 1e-4
    with pytest.raises(FreeprobValueError, match="scale='sd'"):
        tabulated_w1(mp_table, TabulatedLaw.from_law(fp.Semicircle(), points=100))


def test_verify_fit_option(tmp_path, capsys):
    """``freeprob verify --fit``: the fitted laws' distance from the GE law is reported, and
    the sample's own distance computed there agrees with verify's SM–th column."""
    from freeprob.cli.main import main
    from freeprob.experiments.fit_report import verify_fit_rows
    from freeprob.experiments.verify import VerifySettings
    args = ["verify", "--configs", "tiny:d=64,heads=2,d_head=16", "--n", "64", "--seeds", "2",
            "--no-figures", "--no-finite-width", "--points", "100", "--workers", "1", "--no-progress",
            "--out", str(tmp_path / "v")]
    assert main(args + ["--fit", "marchenko-pastur"]) == 0
    out = capsys.readouterr().out
    assert "fit–GE relW1" in out and "marchenko-pastur" in out
    settings = VerifySettings(configs=("tiny:d=64,heads=2,d_head=16",), n=64, seeds=2, figures=False,
                              finite_width=False, points=100, out=tmp_path / "v")
    row, = verify_fit_rows(settings, "marchenko-pastur", points=100)
    import json
    summary = json.loads((tmp_path / "v" / "summary.json").read_text())
    verify_mean = summary["rows"][0]["metrics"]["sm_th_relW1"]["mean"]
    assert row["fit_ge"]["n"] == 2 and row["fit_ge"]["mean"] > 0
    assert abs(row["sm_ge"]["mean"] - verify_mean) < 2e-3 * verify_mean + 1e-5
    with pytest.raises(SystemExit) as exc:          # refused by the parser, before any work
        main(args + ["--fit", "gaussian"])
    assert exc.value.code == 2 and "argument --fit" in capsys.readouterr().err


def test_cli_family_names_are_the_families():
    """``freeprob fit --family`` lists the families without importing them (start-up)."""
    from freeprob.cli.fit_commands import FAMILY_NAMES
    from freeprob.fit.families import FAMILIES
    assert FAMILY_NAMES == tuple(FAMILIES)
