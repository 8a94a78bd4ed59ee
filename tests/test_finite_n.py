"""Finite-n laws, the 1/n term (issue 29): freeprob.laws.finite_n and its rules.

Routes compared: the engine's exact 1/n coefficients against an independent Wick count of
real Gaussian pairings with symbolic n (derivations/_wick.py) and the known finite-n
moments; the closed forms against Bai–Silverstein's mean; the numeric G₁ against the
exact moment series; the contour cdf against the tabulated density; and the corrected law
against the mean over sampled matrices (fixed seeds).
"""
import functools
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp

import freeprob as fp
from freeprob.core.symbols import G, z
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.experiments.compare import TabulatedLaw, law_distances

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "derivations"))
import _wick as W  # noqa: E402

n = W.n
h = sp.Rational(1, 2)
t = sp.Symbol("t", positive=True)


def wick_c(moments):
    """The 1/n coefficients of Wick moments."""
    return [W.coefficients(m)[1] for m in moments]


# -- exact 1/n coefficients -----------------------------------------------------------
def test_goe_and_wishart_coefficients_match_wick_and_the_known_moments():
    goe = [W.goe_moment(k) for k in range(2, 7)]
    # the Wick route against the known finite-n GOE moments ([LED09]): E m4 = 2 + 5/n + 5/n²,
    # E m6 = 5 + 22/n + 52/n² + 41/n³
    assert sp.expand(goe[2] - (2 + 5 / n + 5 / n**2)) == 0
    assert sp.expand(goe[4] - (5 + 22 / n + 52 / n**2 + 41 / n**3)) == 0
    fl = fp.Semicircle().finite_n(n)
    assert list(fl.moment_corrections(6)[2:]) == wick_c(goe) == [1, 0, 5, 0, 22]
    assert sp.expand(fl.moments(6)[6] - (5 + 22 / n)) == 0
    # real Wishart G Gᵀ, G of size n × tn with N(0, 1/n) entries: E m2 = t + t² + t/n,
    # E m3 = t + 3t² + t³ + 3t(1 + t)/n + 4t/n²
    assert sp.expand(W.wishart_moment(2, t) - (t + t**2 + t / n)) == 0
    assert sp.expand(W.wishart_moment(3, t) - (t + 3 * t**2 + t**3 + 3 * t * (1 + t) / n + 4 * t / n**2)) == 0
    for ratio in (h, sp.Integer(1), sp.Integer(2), t):
        got = fp.FreePoisson(ratio).finite_n(n).moment_corrections(6)[2:]
        want = wick_c([W.wishart_moment(k, ratio) for k in range(2, 7)])
        assert [sp.simplify(a - b) for a, b in zip(got, want)] == [0] * 5, ratio


def test_sums_of_goe_and_of_wisharts_are_goe_and_wishart():
    # closure: the real ⊞ rule has the orthogonal cross term (κ'_4 of GOE(2) is 4, not 1 + 1)
    def c(law):
        return law.finite_n(n).moment_corrections(8)
    assert c(fp.free_add(fp.Semicircle(0, 1), fp.Semicircle(0, 2))) == c(fp.Semicircle(0, 3))
    assert c(fp.free_power(fp.Semicircle(), 3)) == c(fp.Semicircle(0, 3))
    assert c(fp.free_add(fp.FreePoisson(h), fp.FreePoisson(2))) == c(fp.FreePoisson(sp.Rational(5, 2)))
    assert c(fp.dilate(fp.Semicircle(), 2)) == c(fp.Semicircle(0, 4))


@pytest.mark.parametrize("name", ["GOE+Wishart", "Wishart⊠Wishart", "GOE+D", "Wishart⊠GOE"])
def test_free_combinations_match_wick(name):
    D = fp.Atomic([1, 3], [h, h])
    nu = {sp.Symbol(f"m{j}_D"): (1 + 3**j) / sp.Integer(2) for j in range(1, 9)}
    wishart = [("g", "G", False), ("g", "G", True)]
    if name == "GOE+Wishart":
        law, k = fp.free_add(fp.Semicircle(), fp.FreePoisson(h)), 4
        moments = [W.model_moment(j, W.goe_terms() + W.wishart_terms(), {"A": (n, n), "G": (n, h * n)})
                   for j in range(1, k + 1)]
    elif name == "Wishart⊠Wishart":
        law, k = fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(2)), 3
        word = wishart + [("g", "H", False), ("g", "H", True)]
        moments = [W.expected_trace(word * j, {"G": (n, n), "H": (n, 2 * n)}) / n ** (2 * j + 1)
                   for j in range(1, k + 1)]
    elif name == "GOE+D":
        law, k = fp.free_add(fp.Semicircle(), D), 4
        moments = [W.model_moment(j, W.goe_terms() + [(1, [("d", "D")])], {"A": (n, n), "D": (n, n)}).subs(nu)
                   for j in range(1, k + 1)]
    else:       # a zero-mean factor: √W X √W, by interpolation in a shift of X
        law, k = fp.free_mul(fp.FreePoisson(1), fp.Semicircle()), 4
        terms = [(a * b, la + lb) for a, la in W.wishart_terms() for b, lb in W.goe_terms()]
        moments = [W.model_moment(j, terms, {"A": (n, n), "G": (n, n)}) for j in range(1, k + 1)]
    assert list(law.finite_n(n).moment_corrections(k)[1:]) == wick_c(moments)


def test_closed_forms_goe_and_bai_silverstein():
    assert sp.cancel(fp.Semicircle().finite_n(n).g1_expression() - G**3 / (1 - G**2) ** 2) == 0
    # real Wishart: Bai & Silverstein's mean t∫G³x²/(1−xG)³dν / (1 − t∫G²x²/(1−xG)²dν)², ν = δ₁
    bs = t * G**3 / (1 - G) ** 3 / (1 - t * G**2 / (1 - G) ** 2) ** 2
    assert sp.cancel(fp.FreePoisson(t).finite_n(n).g1_expression() - bs) == 0
    # sample covariance with a two-point population, numerically at one z
    nu = fp.Atomic([1, 3], [h, h])
    law = fp.CompoundFreePoisson(h, nu)
    z0 = mpmath.mpc(1, 2)
    g = law.cauchy(z0)
    i2 = sum(w * x**2 / (1 - x * g) ** 2 for x, w in ((1, 0.5), (3, 0.5)))
    i3 = sum(w * x**2 / (1 - x * g) ** 3 for x, w in ((1, 0.5), (3, 0.5)))
    want = 0.5 * g**3 * i3 / (1 - 0.5 * g**2 * i2) ** 2
    assert abs(law.finite_n(100).correction_cauchy(z0) - want) < 1e-12


@pytest.mark.parametrize("law", [
    fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(2)),
    fp.free_add(fp.Semicircle(), fp.Atomic([1, 3], [h, h])),
    fp.mixture([fp.Semicircle(), fp.FreePoisson(1)]),
], ids=["W⊠W", "GOE+D", "mixture"])
def test_numeric_g1_is_the_moment_series(law):
    # far from the support the Cauchy transform of the corrections is their moment series
    c = law.finite_n(n).moment_corrections(40)
    z0 = mpmath.mpc(3, 60)
    series = sum(mpmath.mpf(sp.N(ck, 30)) * z0 ** (-k - 1) for k, ck in enumerate(c))
    got = law.finite_n(100).correction_cauchy(z0)
    assert abs(got - series) < 1e-9 * abs(series)


# -- the signed correction measure ------------------------------------------------------
def test_goe_correction_measure():
    fl = fp.Semicircle().finite_n(100)
    atoms = np.array(fl.correction_atoms(), dtype=float)
    assert atoms == pytest.approx(np.array([[-2, 0.25], [2, 0.25]]), abs=1e-12)
    # (δ₂ + δ₋₂)/4 − ½·arcsine on [−2, 2]
    assert float(fl.correction_density(1.0)) == pytest.approx(-1 / (2 * np.pi * np.sqrt(3)), rel=1e-12)
    assert float(fl.correction_cdf(1.0)) == pytest.approx(0.25 - (0.5 + 1 / 6) / 2, abs=1e-10)
    assert float(fl.correction_cdf(2.0)) == pytest.approx(0.0, abs=1e-10)     # total mass 0
    assert float(fl.cdf(1.0)) == pytest.approx(float(fp.Semicircle().cdf(1.0)) - 1 / 1200, abs=1e-10)
    # Wishart t = 1/2: exactly n/2 zero eigenvalues (rank tn), so the atom at 0 gets no 1/n term
    atoms = np.array(fp.FreePoisson(h).finite_n(50).atoms(), dtype=float)
    assert atoms[:, 0] == pytest.approx([0, (1 - 0.5**0.5) ** 2, (1 + 0.5**0.5) ** 2], abs=1e-12)
    assert atoms[:, 1] == pytest.approx([0.5, 1 / 200, 1 / 200], abs=1e-12)
    cx = fp.Semicircle().finite_n(100, field="complex")
    assert cx.leading_order == 2 and cx.moment_corrections(6) == (0,) * 7 and cx.correction_atoms() == ()


def test_contour_cdf_agrees_with_the_tabulated_density():
    law = fp.free_add(fp.Semicircle(), fp.FreePoisson(h))
    fl = law.finite_n(50)
    table = TabulatedLaw.from_law(fl, points=300)
    assert table.signed and abs(table.mass_defect) < 1e-8
    for x in (0.5, 1.5):
        f1 = float(fl.correction_cdf(x))
        assert (table.cdf(x) - float(law.cdf(x))) * 50 == pytest.approx(f1, abs=1e-4)
    with pytest.raises(FreeprobValueError, match="signed"):
        table.quantile(0.5)


# -- against sampled matrices ---------------------------------------------------------
def _goe(n_, rng):
    a = rng.standard_normal((n_, n_))
    return (a + a.T) / np.sqrt(2 * n_)


def _wishart(n_, ratio, rng):
    g = rng.standard_normal((n_, int(ratio * n_))) / np.sqrt(n_)
    return g @ g.T


SAMPLED = {
    "GOE": (fp.Semicircle(), lambda n_, r: np.linalg.eigvalsh(_goe(n_, r))),
    "Wishart 2": (fp.FreePoisson(2), lambda n_, r: np.linalg.eigvalsh(_wishart(n_, 2, r))),
    "GOE+Wishart": (fp.free_add(fp.Semicircle(), fp.FreePoisson(h)),
                    lambda n_, r: np.linalg.eigvalsh(_goe(n_, r) + _wishart(n_, 0.5, r))),
    "Wishart⊠Wishart": (fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(2)),
                        lambda n_, r: np.linalg.eigvalsh(_chol_product(n_, r))),
}


def _chol_product(n_, rng):
    g1 = rng.standard_normal((n_, n_)) / np.sqrt(n_)
    w2 = _wishart(n_, 2, rng)
    return g1.T @ w2 @ g1           # the spectrum of W₁ W₂, W₁ = g1 g1ᵀ


@functools.cache
def _table(law, size=None):
    """The 200-point table of ``law`` (of its finite-n law at ``size``), built once in this
    module: the Wishart-2 tables at n = 50 serve two tests."""
    return TabulatedLaw.from_law(law if size is None else law.finite_n(size), points=200)


@pytest.mark.parametrize("name", list(SAMPLED))
def test_corrected_law_matches_the_mean_of_sampled_matrices(name):
    """The mean empirical cdf over 1500 draws at n = 50 at five points: the finite-n law is
    within 4 standard errors everywhere (plus 0.2/n²: the next order), while the limit law
    misses by more than 5 standard errors somewhere, and the total deviation shrinks by 2."""
    law, sample = SAMPLED[name]
    n_, draws = 50, 1500
    rng = np.random.default_rng(29)
    lam = np.array([sample(n_, rng) for _ in range(draws)])
    limit, finite = _table(law), _table(law, n_)
    lo, hi = limit.support[0][0], limit.support[-1][1]
    xs = lo + (hi - lo) * np.array([0.15, 0.3, 0.5, 0.7, 0.85])
    emp = (lam[:, :, None] <= xs).mean(axis=1)          # draws × points
    mean, se = emp.mean(axis=0), emp.std(axis=0, ddof=1) / np.sqrt(draws)
    d_lim, d_fin = mean - limit.cdf(xs), mean - finite.cdf(xs)
    assert np.all(np.abs(d_fin) <= 4 * se + 0.2 / n_**2), (d_fin / se)
    assert np.max(np.abs(d_lim) / se) > 5, (d_lim / se)
    assert np.sum(np.abs(d_fin)) < 0.5 * np.sum(np.abs(d_lim))


def test_law_distances_take_the_finite_n_table():
    law = fp.FreePoisson(2)
    rng = np.random.default_rng(7)
    lam = np.concatenate([np.linalg.eigvalsh(_wishart(50, 2, rng)) for _ in range(600)])
    lim = law_distances(lam, _table(law))
    fin = law_distances(lam, _table(law, 50))
    # pooled 30000 eigenvalues: the 1/n bias (relW1 ≈ 0.006 against the limit) is ~10x the
    # sampling noise of relW1 here
    assert fin["relW1"] < 0.6 * lim["relW1"] and fin["KS"] < lim["KS"]


# -- the complex field and bad input ----------------------------------------------------
def test_complex_field_has_no_1_over_n_term():
    # GUE moments by the Harer–Zagier recursion ([HZ86]): (k+1) C_k = (4k−2) n C_{k−1}
    # + (k−1)(2k−1)(2k−3) C_{k−2}, C_k = E Tr H^{2k} for unit-variance entries
    C = [n, n**2]
    for k in range(2, 5):
        C.append(sp.expand(((4 * k - 2) * n * C[k - 1] + (k - 1) * (2 * k - 1) * (2 * k - 3) * C[k - 2]) / (k + 1)))
    m = [sp.expand(C[k] / n ** (k + 1)) for k in range(5)]
    assert [W.coefficients(v)[1] for v in m] == [0] * 5 and W.coefficients(m[2])[2] == 1
    fl = fp.Semicircle().finite_n(n, field="complex")
    assert fl.moment_corrections(8) == (0,) * 9 and "GUE" in fl.model


@pytest.mark.parametrize("make, error, match", [
    (lambda: fp.Semicircle().finite_n(0), FreeprobValueError, "positive integer"),
    (lambda: fp.Semicircle().finite_n(2.5), FreeprobValueError, "positive integer"),
    (lambda: fp.Semicircle().finite_n(sp.Symbol("m")), FreeprobValueError, "positive sympy symbol"),
    (lambda: fp.Semicircle().finite_n(10, field="quaternion"), FreeprobValueError, "field"),
    (lambda: fp.FreePoisson(sp.Rational(1, 3)).finite_n(100), FreeprobValueError, "whole number"),
    (lambda: fp.Bernoulli().finite_n(11), FreeprobValueError, "multiplicity"),
    (lambda: fp.polynomial_law("x*y + y*x", {"x": fp.Semicircle(), "y": fp.Semicircle()}).finite_n(10),
     NotAvailable, "no finite-n matrix model"),
    (lambda: fp.free_power(fp.Bernoulli(), sp.Rational(3, 2)).finite_n(10), NotAvailable, "integer"),
    (lambda: fp.Semicircle().finite_n(n).cdf(0.3), FreeprobValueError, "free symbols"),
    (lambda: fp.Semicircle().finite_n(10).correction_cauchy(float("nan")), FreeprobValueError,
     "finite complex number"),
    (lambda: fp.Semicircle().finite_n(10).cauchy("abc"), FreeprobValueError, "finite complex number"),
])
def test_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()


# -- an atom of mass 1/n: the extension points, with a spiked GOE ---------------------------
def test_a_registered_model_with_an_outlier_gets_its_atom_of_mass_one_over_n():
    """GOE + θ e eᵀ (θ = 2): tr R gains −θG'/(1 − θG) (the rank-one determinant identity), an
    atom of mass 1 at θ + 1/θ = 5/2; registered through the three extension points."""
    from dataclasses import dataclass

    from freeprob.laws import finite_n_eval, finite_n_measure, finite_n_rules

    @dataclass(frozen=True)
    class SpikedGOE(fp.Semicircle):
        theta: object = 2

    zeta = sp.Symbol("zeta")
    g = (1 - sp.sqrt(1 - 4 * zeta**2)) / (2 * zeta)                    # G(1/ζ)
    spike = sp.series(-2 * (-zeta**2 * sp.diff(g, zeta)) / (1 - 2 * g), zeta, 0, 12).removeO()

    @finite_n_rules._rule.register
    def _(law: SpikedGOE, ring, k):
        base = finite_n_rules.additive_canonical(law, ring, k)
        return [b + ring.convert(spike.coeff(zeta, j + 1)) for j, b in enumerate(base)]

    @finite_n_eval.g1_value.register
    def _(law: SpikedGOE, z0, G0):
        d1, _ = finite_n_eval.derivatives(law, z0, G0)
        return finite_n_eval._m_plus(law, z0, G0) - 2 * d1 / (1 - 2 * G0)

    finite_n_measure.extra_poles.register(SpikedGOE, lambda law: (sp.Rational(5, 2),))
    fl = SpikedGOE().finite_n(50)
    # by hand: E tr (X + θP)^k/n for k = 1, 2, 3 is θ/n, 1 + (1 + θ²)/n, (3θ(1 + 1/n) + θ³)/n
    assert fl.moment_corrections(3)[1:] == (2, 1 + 4, 3 * 2 + 8)
    atoms = np.array(fl.correction_atoms(), dtype=float)
    assert atoms == pytest.approx(np.array([[-2, 0.25], [2, 0.25], [2.5, 1.0]]), abs=1e-9)
    assert float(fl.correction_cdf(2.25)) == pytest.approx(-1.0, abs=1e-8)
    # sampled: the fraction of eigenvalues below 2.25 is 1 − 1/n, not the limit's 1
    rng = np.random.default_rng(5)
    frac = [np.mean(np.linalg.eigvalsh(_goe(50, rng) + np.diag([2.0] + [0.0] * 49)) <= 2.25) for _ in range(200)]
    assert abs(np.mean(frac) - float(fl.cdf(2.25))) < 4 * np.std(frac) / np.sqrt(200) + 1e-3
    assert 1 - np.mean(frac) > 0.015


def test_cauchy_below_the_axis_is_the_conjugate():
    # ρ₁ and μ are real measures: G(z̄) = conj G(z) for the corrected law and its correction
    fl = fp.FreePoisson(2).finite_n(50)
    for z in (mpmath.mpc(1, 1), mpmath.mpc(-0.5, 0.2)):
        assert abs(fl.cauchy(mpmath.conj(z)) - mpmath.conj(fl.cauchy(z))) < 1e-14
        assert abs(fl.correction_cauchy(mpmath.conj(z)) - mpmath.conj(fl.correction_cauchy(z))) < 1e-12
