"""finite_n=True with finite_width=True (issue 29): the finite-width law plus the GE model's
finite-n shift, freeprob.attention.finite_n_width and freeprob.laws.finite_n_combined.

The combined law's moments against two independent computations (the separately built
finite-width, finite-n and limit laws; the exact Wick moments of the GE model at finite n),
its cdf against the sum of the parts, its tabulation (mass and mean from the density and
atoms against the exact moments), the refusals, and the verify columns.
"""
import numpy as np
import pytest
import sympy as sp

from freeprob import attention
from freeprob.attention.architecture import Architecture
from freeprob.errors import FreeprobValueError
from freeprob.laws.finite_n import FiniteNLaw
from freeprob.laws.finite_n_combined import CombinedFiniteNLaw
from freeprob.laws.operations import dilate
from freeprob.attention import finite_width as fwmod
from freeprob.attention.finite_n_width import finite_width_mean_factor

N, DK = 32, 8


def _arch(**kw):
    return Architecture.from_dimensions(**({"n": N, "heads": 1, "d_k": DK, "d_v": DK, "d_o": N, "beta": 1} | kw))


def test_moments_are_the_finite_width_moments_plus_the_ge_finite_n_shift():
    """m_j(fw+fn) − m_j(fw) equals m_j(fn) − s^j m_j(limit) exactly (the laws built apart;
    s = (n−1)/n the mean factor), the 1/n coefficients are the GE model's, and the shift meets
    the exact finite-n GE moments (real Wick calculus: m1 = (n−1)θ1/n; m2 = E τ1² + (1 + 1/n)
    E τ2 of the centred row covariance T) to O(1/n²)."""
    a = _arch(heads=2)
    c = attention.attention_law(a, finite_width=True, finite_n=True)
    assert isinstance(c, CombinedFiniteNLaw) and isinstance(c, FiniteNLaw)
    fw, fn, lim = (attention.attention_law(a, finite_width=True), attention.attention_law(a, finite_n=True),
                   attention.attention_law(a))
    mc, mw, mf, ml = c.moments(4), fw.moments(4), fn.moments(4), lim.moments(4)
    sf = finite_width_mean_factor(a, "single")
    assert sf == sp.Rational(N - 1, N)
    for j in range(5):
        assert sp.simplify(mc[j] - mw[j] - (mf[j] - sf ** j * ml[j])) == 0, j
    assert c.moment_corrections(4) == fn.moment_corrections(4)
    # single head: the exact finite-n GE moments (T = (I − P)Σ(I − P), p = n − 1 nonzero directions)
    a = _arch()
    c, fw, lim = (attention.attention_law(a, finite_width=True, finite_n=True),
                  attention.attention_law(a, finite_width=True), attention.attention_law(a))
    t1, t2 = a.theta1, a.theta2
    # the mean: fw's empirical bulk scale already carries the centring, m1(fn) = s·m1(limit)
    assert sp.simplify(c.moments(1)[1] - fw.moments(1)[1]) == 0
    t1, t2 = float(t1), float(t2)
    s, p = t1 - t2, N - 1
    e_tau1, e_tau2 = p / N * t1, p / N * (s * s + 2 * s * t2 + t2 ** 2 * (1 + N / DK))
    exact_m2 = e_tau1 ** 2 + 2 * t2 ** 2 * p / (DK * N ** 2) + (1 + 1 / N) * e_tau2
    # the shift added to fw is the GE finite-n m2 minus the dilated limit's s²·m2
    shift = float(c.moments(2, dps=20)[2] - fw.moments(2, dps=20)[2])
    lim_bias = exact_m2 - float(sf ** 2 * lim.moments(2, dps=20)[2])
    assert abs(shift - lim_bias) < abs(lim_bias) / 10, (shift, lim_bias)


def test_cdf_density_atoms_are_the_sums_of_the_parts_and_tabulate():
    a = _arch()
    c = attention.attention_law(a, finite_width=True, finite_n=True)
    fw, fn, lim = (attention.attention_law(a, finite_width=True), attention.attention_law(a, finite_n=True),
                   dilate(attention.attention_law(a), sp.Rational(N - 1, N)))
    assert c.reference.moments(1) == lim.moments(1)
    x = 14.1          # between the exact-size tree's top edge (13.99) and the limit's (14.31)
    assert float(c.cdf(x)) == pytest.approx(float(fw.cdf(x) + fn.cdf(x) - lim.cdf(x)), abs=1e-12)
    xs = [0.5, 2.0, 14.1]
    want = [float(fw.density(x) + fn.density(x) - lim.density(x)) for x in xs]
    assert [float(v) for v in c.density(xs)] == pytest.approx(want, abs=1e-12)
    assert [float(v) for v in c.density(xs, rtol=1e-10)] == pytest.approx(want, rel=1e-8)
    # the zero eigenvalue of the centring (mass 1/n) and ρ₁'s edge atoms; the union of supports
    atoms = c.atoms()
    assert float(atoms[0][0]) == 0 and float(atoms[0][1]) == pytest.approx(1 / N, abs=1e-12)
    assert float(c.support()[0][1]) == pytest.approx(max(float(lw.support()[-1][1]) for lw in (fw, fn, lim)))
    from freeprob.experiments.compare import TabulatedLaw
    table = TabulatedLaw.from_law(c, points=50)
    assert table.signed and abs(table.mass_defect) < 1e-6
    # the mean from the tabulated density and atoms meets the exact one (to the table's 0.3%),
    # which is the finite-width law's (the centring is in its bulk scale already), not fw − θ1/n
    x, F = table.nodes, table.cdf_nodes
    m1 = np.sum(0.5 * (x[1:] + x[:-1]) * np.diff(F)) + np.sum(table.atoms[:, 0] * table.atoms[:, 1])
    assert m1 == pytest.approx(float(c.moments(1, dps=15)[1]), rel=0.005)
    assert m1 == pytest.approx(float(fw.moments(1, dps=15)[1]), rel=0.005)
    assert abs(m1 - float(fw.moments(1, dps=15)[1] - a.theta1 / N)) > 0.02


def test_refusals_and_tied_values():
    a = _arch()
    with pytest.raises(FreeprobValueError, match="bool"):
        attention.output_law(a, finite_width="yes", finite_n=True)
    with pytest.raises(FreeprobValueError, match="beta"):
        attention.output_law(Architecture.from_dimensions(n=N, heads=1, d_k=DK, d_v=DK, d_o=N),
                             finite_width=True, finite_n=True)
    with pytest.raises(FreeprobValueError, match="Law"):
        CombinedFiniteNLaw(attention.attention_law(a), attention.attention_law(a), attention.attention_law(a))
    tied = _arch(scheme="tied")
    c = attention.head_output_law(tied, finite_width=True, finite_n=True)
    assert len(c.moments(2)) == 3
    # numerics too (the push-forward's G₁ inside the compound steps): a signed measure of mass 1
    top = max(float(b) for law in (c.base, c.reference, c.finite_n_law.limit) for _, b in law.support(dps=15))
    assert float(c.cdf(1.01 * top)) == pytest.approx(1, abs=1e-8)


def test_verify_plans_and_reports_the_combined_law(tmp_path):
    """A tiny verify with --finite-n: one fw+fn law per cell (key theory-fwfn-), SM–(fw+fn)
    per seed and pooled, the paired test fw vs fw+fn in the table and the summary."""
    from freeprob.cli.main import main
    from freeprob.experiments.verify import VerifySettings, plan_sweep
    st = VerifySettings(configs=("tiny:d=32,heads=1,d_head=8",), n=32, seeds=2, objects=("single",),
                        finite_n=True, points=50, figures=False, out=str(tmp_path))
    kinds = {c.params["object_kind"]: c.key for c in plan_sweep(st) if c.kind == "object"}
    assert kinds["finite-width + finite-n law"].startswith("theory-fwfn-")
    assert len(set(kinds.values())) == 4
    code = main(["verify", "--configs", "tiny:d=32,heads=1,d_head=8", "--n", "32", "--seeds", "2",
                 "--objects", "single", "--finite-n", "--points", "50", "--workers", "1", "--no-progress",
                 "--no-figures", "--out", str(tmp_path)])
    assert code == 0
    import json
    row = json.loads((tmp_path / "summary.json").read_text())["rows"][0]
    m = row["metrics"]
    for k in ("sm_fwfn_relW1", "sm_fwfn_pooled_relW1", "sm_fw_pooled_relW1", "sm_fw_minus_fwfn_relW1"):
        assert k in m, k
    t = m["fw_minus_fwfn_relW1"]
    assert t["n"] == 2 and t["mean"] == pytest.approx(m["sm_fw_relW1"]["mean"] - m["sm_fwfn_relW1"]["mean"])
    text = (tmp_path / "table.txt").read_text()
    assert "SM–(fw+fn) relW1" in text and "fw+fn vs fw against softmax" in text
    assert "finite width lowers it by" in text or "finite width raises it by" in text


def test_mean_factor_values_and_the_combined_mean():
    """finite_width_mean_factor: (n−1)/n where the finite-width law's empirical bulk scale
    carries the centring; 1 for tied head_out/stack/out/out_full (limit construction) and for
    variance="limit"/"expected".  The combined mean is then the finite-width law's exactly
    (m1(fn) = (n−1)/n·m1(limit) for the centred objects), and for tied values the
    finite-n law's (fw keeps the limit mean)."""
    a, tied = _arch(heads=2), _arch(heads=2, scheme="tied")
    s = sp.Rational(N - 1, N)
    for obj in ("single", "concat", "sum", "head_out", "stack", "out", "out_full"):
        assert finite_width_mean_factor(a, obj) == s, obj
        assert finite_width_mean_factor(a, obj, variance="limit") == 1
        assert finite_width_mean_factor(a, obj, variance="expected") == 1
        want = 1 if obj in ("head_out", "stack", "out", "out_full") else s
        assert finite_width_mean_factor(tied, obj) == want, obj
    n = sp.Symbol("n", positive=True)
    symbolic = Architecture.from_dimensions(n=n, heads=1, d_k=8, d_v=8, d_o=8)
    assert finite_width_mean_factor(symbolic, "single") == (n - 1) / n
    for f in (attention.head_sum_law, attention.output_law):
        c, fw = f(a, finite_width=True, finite_n=True), f(a, finite_width=True)
        assert sp.simplify(c.moments(1)[1] - fw.moments(1)[1]) == 0, f.__name__
    c = attention.output_law(tied, finite_width=True, finite_n=True)
    fn = attention.output_law(tied, finite_n=True)
    assert sp.simplify(c.moments(1)[1] - fn.moments(1)[1]) == 0
    assert sp.simplify(attention.output_law(tied, finite_width=True).moments(1)[1]
                       - attention.output_law(tied).moments(1)[1]) == 0


def test_mean_factor_follows_the_default_variance(monkeypatch):
    """With DEFAULT_VARIANCE = "limit" (the laws before issue 29) the finite-width mean is θ1,
    s = 1 and the whole finite-n mean shift −θ1/n is added."""
    monkeypatch.setattr(fwmod, "DEFAULT_VARIANCE", "limit")
    a = _arch()
    assert finite_width_mean_factor(a, "single") == 1
    c = attention.attention_law(a, finite_width=True, finite_n=True)
    fw = attention.attention_law(a, finite_width=True)
    assert sp.simplify(fw.moments(1)[1] - a.theta1) == 0
    assert sp.simplify(c.moments(1)[1] - (fw.moments(1)[1] - a.theta1 / N)) == 0


def test_mean_factor_refusals():
    a = _arch()
    with pytest.raises(FreeprobValueError, match="single, concat, sum, head_out, stack, out, out_full"):
        finite_width_mean_factor(a, "nope")
    with pytest.raises(FreeprobValueError, match="variance must be one of empirical, limit, expected"):
        finite_width_mean_factor(a, "single", variance="exact")
    no_n = Architecture(heads=1, gamma_k=sp.Rational(1, 2), gamma_v=1, gamma_o=1)
    with pytest.raises(FreeprobValueError, match="number of tokens n"):
        finite_width_mean_factor(no_n, "single")
    with pytest.raises(FreeprobValueError, match="expected an Architecture"):
        finite_width_mean_factor("gpt2", "single")
    with pytest.raises(FreeprobValueError, match="n must be an integer >= 2"):
        finite_width_mean_factor(_arch(n=1, d_o=1), "single")


def test_tabulation_next_to_a_piece_end_keeps_the_mass(monkeypatch):
    """TabulatedLaw.from_law: at 1000 points per piece the edge-clustered nodes next to a
    nonzero piece end round onto it in float64, where the signed finite-n density is singular
    (ρ₁ ~ |x − e|^{-1/2}).  Real Wishart of ratio 1/2 at n = 50: the mass check failed (defect
    0.019; the finite-n single head at d_K = 64, n = 768–1024 in `verify`: 4.3·10⁻⁵) while
    FiniteNLaw read a float node as its binary value for G₁ and as the decimal it prints as for
    the limit's support (Law.density's float rule); read one way, the defect is 10⁻⁹ whether or
    not the nodes rounded onto the end get weight (the rule _END_EPS, kept as a guard)."""
    import freeprob as fp
    from freeprob.experiments import compare
    law = fp.FreePoisson(sp.Rational(1, 2)).finite_n(50)
    assert abs(compare.TabulatedLaw.from_law(law, points=1000).mass_defect) < 1e-9
    monkeypatch.setattr(compare, "_END_EPS", -1.0)
    assert abs(compare.TabulatedLaw.from_law(law, points=1000).mass_defect) < 1e-9
    # the node as Law.density reads it: the decimal 0.08578643762690495 lies below the edge
    # 3/2 − √2 = 0.0857864376269049511…, so both parts are 0 there
    assert law.density(0.08578643762690495) == 0 and law.correction_density(0.08578643762690495) == 0
