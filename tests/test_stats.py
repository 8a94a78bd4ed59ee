"""Issue 26: the statistics behind every comparative claim (freeprob.experiments.stats):
the paired test over seeds, binomial intervals of per-draw rates, "within X %" in both
forms, and the parametric-bootstrap comparison of two fitted models."""
import math

import numpy as np
import pytest
from scipy import stats as st

from freeprob.errors import FreeprobValueError
from freeprob.experiments.stats import compare_models, paired_comparison, rate_interval, within_band


def test_paired_comparison_is_the_paired_t_test():
    a = [1.31, 1.62, 1.24, 1.58, 1.40, 1.77]
    b = [1.52, 1.70, 1.49, 1.61, 1.66, 1.80]
    d = np.subtract(a, b)
    r = paired_comparison(a, b, lower="closer", higher="farther")
    half = st.t.ppf(0.975, 5) * d.std(ddof=1) / math.sqrt(6)          # the t-interval by hand
    t = d.mean() / (d.std(ddof=1) / math.sqrt(6))
    assert r.mean == pytest.approx(d.mean(), rel=1e-12) and r.half == pytest.approx(half, rel=1e-12)
    assert r.p == pytest.approx(2 * st.t.sf(abs(t), 5), rel=1e-10)      # the two-sided t tail
    assert r.p == pytest.approx(st.ttest_1samp(d, 0).pvalue, rel=1e-10)
    assert r.significant and r.hi < 0 and r.verdict == "closer (significant)"
    flipped = paired_comparison(b, a, lower="closer", higher="farther")
    assert flipped.verdict == "farther (significant)" and flipped.p == pytest.approx(r.p)
    # a difference within the noise: the interval straddles 0, p > 0.05
    noisy = paired_comparison([1.0, 1.2, 0.9, 1.1], [1.05, 1.0, 1.0, 1.1], lower="closer")
    assert noisy.lo < 0 < noisy.hi and noisy.p > 0.05 and noisy.verdict == "not significant"
    # missing seeds dropped pairwise; identical differences: zero width, p = 0
    same = paired_comparison([1.0, None, 2.0, float("nan")], [0.5, 1.0, 1.5, 2.0])
    assert same.n == 2 and same.half == 0 and same.p == 0 and same.verdict == "larger (significant)"
    one = paired_comparison([1.0], [2.0])
    assert one.half is None and one.p is None and one.verdict == "not significant"
    with pytest.raises(FreeprobValueError, match="one value per seed"):
        paired_comparison([1, 2], [1])
    with pytest.raises(FreeprobValueError, match="no seed has both"):
        paired_comparison([None], [1.0])


@pytest.mark.parametrize("k, n", [(54, 70), (0, 10), (10, 10), (1, 3)])
def test_rate_intervals_are_wilson_and_clopper_pearson(k, n):
    z = st.norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    spread = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    w = rate_interval(k, n)
    assert (w.lo, w.hi) == pytest.approx((max(0.0, centre - spread), min(1.0, centre + spread)), abs=1e-12)
    cp = rate_interval(k, n, method="clopper-pearson")
    lo = 0.0 if k == 0 else st.beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else st.beta.ppf(0.975, k + 1, n - k)
    assert (cp.lo, cp.hi) == pytest.approx((lo, hi), abs=1e-12)
    assert cp.lo <= w.lo + 0.02 and w.rate == p


def test_rate_interval_text_and_bad_input():
    assert format(rate_interval(54, 70)) == "54 of 70 (77%, 95% interval 66–85%)"
    for bad in ((5, 4), (-1, 4), (1, 0), (1.5, 3), (True, 3)):
        with pytest.raises(FreeprobValueError, match="0 ≤ k ≤ n"):
            rate_interval(*bad)
    with pytest.raises(FreeprobValueError, match="method"):
        rate_interval(1, 2, method="jeffreys")


def test_within_band_per_draw_and_mean():
    # ten draws, relative differences −6 % … +3 %: the mean is within 5 %, single draws are not all
    top = np.array([0.94, 0.97, 1.00, 1.02, 1.03, 0.99, 0.96, 1.01, 1.00, 0.98]) * 20
    w = within_band(top, [20.0] * 10, 0.05)
    assert w["per_draw"].k == 9 and w["per_draw"].n == 10
    assert w["mean"].mean == pytest.approx(np.mean(top / 20 - 1)) and w["verdict"] == "within"
    # the mean −4 % but its interval reaches past −5 %: not significant
    wide = within_band([0.86, 1.06, 0.96], [1, 1, 1], 0.05)
    assert abs(wide["mean"].mean) < 0.05 and wide["mean"].lo < -0.05 and wide["verdict"] == "not significant"
    far = within_band([1.2, 1.21, 1.19], [1, 1, 1], 0.05)
    assert far["verdict"] == "outside" and far["per_draw"].k == 0
    with pytest.raises(FreeprobValueError, match="band"):
        within_band([1], [1], 0)


def _line(x, y, s):
    return np.polyval(np.polyfit(x, y, 1, w=1 / np.asarray(s)), x)


def _exp(x, y, s):
    """``a eˣ + b``: two parameters, not nested with the line."""
    a, b = np.polyfit(np.exp(x), y, 1, w=1 / np.asarray(s))
    return a * np.exp(x) + b


def test_compare_models_bootstrap_rates():
    """Two non-nested two-parameter models that differ by far more than the noise: the true
    one wins in nearly every draw; at noise far above their difference the choice is close
    to a coin toss.  Δχ² of the data is the difference of the weighted residual sums."""
    x = np.linspace(-1, 1, 6)
    y = 2 * np.exp(x) - 1
    clear = compare_models(x, y, 0.01, {"exp": _exp, "line": _line}, draws=200, seed=1)
    resid = y - _line(x, y, np.full(6, 0.01))
    assert clear.chi2["exp"] == pytest.approx(0, abs=1e-12)
    assert clear.delta == pytest.approx(np.sum((resid / 0.01) ** 2), rel=1e-9)
    assert clear.first_wins["exp"].rate > 0.95 and clear.first_wins["line"].rate < 0.05
    assert clear.p_second.rate < 0.01 and clear.p_first.rate > 0.1 and clear.likelihood_ratio > 1e6
    assert clear.verdict == "exp preferred"
    assert clear.fit_p["line"] == pytest.approx(st.chi2.sf(clear.chi2["line"], 4)) and clear.fit_p["exp"] == 1
    lo, hi = clear.delta_range
    assert lo < clear.delta < hi
    vague = compare_models(x, y, 5.0, {"exp": _exp, "line": _line}, draws=400, seed=1)
    for truth in ("exp", "line"):
        assert 0.3 < vague.first_wins[truth].rate < 0.7
    assert vague.p_second.rate > 0.3 and vague.verdict == "not significant"
    assert "fits better in" in vague.summary() and vague.as_dict()["draws"] == 400
    with pytest.raises(FreeprobValueError, match="exactly two"):
        compare_models(x, y, 0.1, {"line": _line})
    with pytest.raises(FreeprobValueError, match="positive"):
        compare_models(x, y, -0.1, {"a": _line, "b": _exp})
