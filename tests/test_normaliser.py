"""The bulk scale of softmax under the empirical row normaliser (issue 29;
freeprob.attention.normaliser; theory.md §7 "The finite-d_K bulk scale").

Exact checks: two keys (a closed form, by independent quadrature), the 1/n expansion (its
remainder shrinks like 1/n²), the key-norm part against spikes.key_norm_spike; a fixed-seed
sampler check at small n with a stated tolerance; bad input; symbolic sizes.
"""
import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from scipy import integrate

from freeprob.attention import Architecture, spikes
from freeprob.attention import normaliser as nz
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.sampler.model import softmax_attention


def _sech2(x):
    e = math.exp(-2 * abs(x))
    return 4 * e / (1 + e) ** 2


def test_two_keys_closed_form():
    # n = 2: n(X1² + X2²)/(X1 + X2)² = 2 − sech²(σ(g1 − g2)/2), g1 − g2 ~ N(0, 2), so
    # f(σ, 2) = 2 − E sech²(σz/√2) and V = 1 − E_r E_z sech²(β√r z/√2), r ~ χ²_4/4
    s = mp.mpf(2)
    ref = 2 - mp.quad(lambda z: mp.sech(s * z / mp.sqrt(2)) ** 2 * mp.npdf(z), [-mp.inf, 0, mp.inf])
    assert nz._f(2.0, 2) == pytest.approx(float(ref), rel=1e-10)
    d = 4
    inner = lambda r: integrate.quad(lambda z: _sech2(math.sqrt(r) * z / math.sqrt(2)) * math.exp(-z * z / 2)
                                     / math.sqrt(2 * math.pi), -np.inf, np.inf, epsabs=1e-13)[0]
    outer = integrate.quad(lambda r: inner(r) * d * (d * r / 2) * math.exp(-d * r / 2) / 2, 0, np.inf,
                           epsabs=1e-12)[0]                   # χ²_4/4 density: 4·(2r)e^{−2r}/2
    assert nz.empirical_row_variance(1, d, 2) == pytest.approx(1 - outer, rel=1e-9)


def test_expansion_remainder_is_second_order():
    b = sp.Rational(1, 2)
    diff = [nz.empirical_row_variance(b, 64, n) - float(nz.normaliser_expansion(b, 64, n)) for n in (1024, 4096)]
    N = sp.Symbol("n", positive=True)
    first = float(nz.normaliser_expansion(b, 64, N).diff(N).subs(N, 1024)) * -1024    # the 1/n term
    assert abs(diff[0]) < 2e-6 < abs(first) / 100             # the 1/n term is −5.8·10⁻⁴
    assert 10 < diff[0] / diff[1] < 22                          # 1/n²: a factor 16
    # the expansion's first term at n = ∞ is θ1^fw; at d_K = 8, β = 1 it fails (refused: d_K ≤ 6β²)
    from freeprob.attention.finite_width import finite_width_theta1
    assert sp.limit(nz.normaliser_expansion(b, 64, N), N, sp.oo) == finite_width_theta1(b, 64)
    with pytest.raises(FreeprobValueError, match="d_K > 6 beta"):
        nz.normaliser_expansion(1, 6, 512)


def test_key_norm_part_is_the_spike_over_n():
    arch = Architecture.from_dimensions(n=512, heads=1, d_k=8, d_v=8, d_o=8, beta=1)
    assert sp.simplify(spikes.key_norm_spike(arch) / 512 - nz.key_norm_variance(1, 8)) == 0
    d = sp.Symbol("d_K", positive=True)
    assert nz.key_norm_variance(1, d).subs(d, 8) == nz.key_norm_variance(1, 8)


def test_values_limits_and_symbols():
    assert nz.empirical_theta1(1, 8, 512) == sp.Rational(1921, 1000)          # theory.md §7
    assert nz.empirical_row_variance(1, 8, 1) == 0 and nz.empirical_row_variance(0, 8, 512) == 0
    assert nz.empirical_theta1(0, 8, 512) == 0
    # bounded by n − 1 even where θ1^fw is infinite (d_K ≤ 2β²)
    assert 0 < nz.empirical_row_variance(2, 4, 16) < 15
    d, n = sp.Symbol("d_K", positive=True), sp.Symbol("n", positive=True)
    sym = nz.empirical_theta1(1, d, n)
    assert isinstance(sym, nz.EmpiricalTheta1) and sym.subs({d: 8, n: 512}) == sp.Rational(1921, 1000)
    # the laws' scale c = θ1^emp/θ1, 4 digits: 1.921/1.71828 = 1.1180
    assert nz.empirical_scale(1, 8, 512) == sp.Rational(559, 500) and nz.empirical_scale(0, 8, 512) == 1
    sym = nz.empirical_scale(1, d, 512)
    assert isinstance(sym, nz.EmpiricalScale) and sym.subs(d, 8) == sp.Rational(559, 500)


def test_bad_input():
    with pytest.raises(FreeprobValueError, match="n must be a positive integer"):
        nz.empirical_row_variance(1, 8, 0)
    with pytest.raises(FreeprobValueError, match="d_k must be a positive integer"):
        nz.empirical_theta1(1, 2.5, 64)
    with pytest.raises(FreeprobValueError, match="beta must be a finite real"):
        nz.empirical_row_variance(-1, 8, 64)
    with pytest.raises(FreeprobValueError, match="d_K > beta"):
        nz.empirical_theta1(3, 8, 64)
    with pytest.raises(FreeprobValueError, match="positive sympy symbol"):
        nz.empirical_theta1(1, sp.Symbol("d"), 64)


def test_sampled_rows_at_small_n():
    # n = 64, d_K = 8, β = 1, seeds 0..149: E(nA − 1)² and the mean column variance (the
    # trace of the row covariance given the keys) within 3 standard errors of the exact
    # values; the limit θ1 = e − 1 and θ1^fw = 2.16 are > 5 standard errors away
    n, dk = 64, 8
    v, bulk = [], []
    for seed in range(150):
        rng = np.random.default_rng(seed)
        x = n * softmax_attention(rng.standard_normal((n, dk)), rng.standard_normal((n, dk)), 1.0) - 1
        v.append((x * x).mean())
        bulk.append(x.var(axis=0, ddof=1).mean())
    for vals, exact in ((v, nz.empirical_row_variance(1, dk, n)), (bulk, float(nz.empirical_theta1(1, dk, n)))):
        se = np.std(vals, ddof=1) / math.sqrt(len(vals))
        assert abs(np.mean(vals) - exact) < 3 * se
        assert (math.e - 1 - np.mean(vals)) > 5 * se


def test_wide_heads_large_scores_and_tiny_beta():
    # d_K > 300: Gauss–Hermite in the standardised r with the exact density ratio (the
    # Laguerre weights overflow): it integrates E r = 1, E r² = 1 + 2/d_K exactly, and V
    # continues the d_K ≤ 300 values (V decreases towards θ1 = e − 1 as d_K grows)
    for dk in (301, 344, 1000):
        r, w = nz._r_nodes(dk)
        assert abs(w @ r - 1) < 1e-12 and abs(w @ r**2 - (1 + 2 / dk)) < 1e-12
    v300, v344, v1000 = (nz.empirical_row_variance(1, dk, 512) for dk in (300, 344, 1000))
    assert v300 > v344 > v1000 > 1.5
    # large scores (σ = 25): the quadrature (in logarithms, no overflow) against Monte Carlo
    rng = np.random.default_rng(7)
    s = 25.0 * rng.standard_normal((2000, 512))
    x = np.exp(s - s.max(axis=1, keepdims=True))
    mc = 512 * (x * x).sum(1) / x.sum(1) ** 2
    assert abs(nz._f(25.0, 512) - mc.mean()) < 3 * mc.std() / math.sqrt(len(mc))
    assert 0 < nz.empirical_row_variance(3, 1, 512) < 511
    with pytest.raises(NotAvailable, match="beyond the quadrature's checked range"):
        nz.empirical_row_variance(10, 1, 512)
    # d_K close to β²: the key-norm term's leading-order formula exceeds V: refused, not 0
    with pytest.raises(NotAvailable, match="not below the row variance"):
        nz.empirical_theta1(3, 10, 512)
    # tiny β: V = β²(1 − 1/n) (the quadrature's absolute error would dominate)
    assert nz.empirical_scale(sp.Rational(1, 10**8), 8, 512) == sp.Rational(499, 500)
    for bad in (True, "abc"):
        with pytest.raises(FreeprobValueError, match="must be a number or a positive sympy symbol"):
            nz.normaliser_expansion(1, bad, 512)
    b, d, n = sp.symbols("b d n", positive=True)
    with pytest.raises(FreeprobValueError, match="d_k must be a positive integer"):
        nz.empirical_theta1(b, d, n).subs({b: 1, d: sp.Rational(5, 2), n: 512})


def _f_in_logs(sig, n):
    """``f(σ, n)`` as computed before issue 27 (every product of ``X`` with ``t`` formed in
    logarithms, four exponentials over the grid): the reference of the one-exponential form."""
    gh = nz._g_step(sig)       # the production grid at this σ
    g = np.arange(-nz._GMAX, nz._GMAX + gh / 2, gh)
    w = np.exp(-g * g / 2)
    w /= w.sum()
    u = np.arange(-math.log(n) - sig * nz._GMAX - 12.0, sig * nz._GMAX + 12.0, nz._DU)
    ltx = u[:, None] + sig * g[None, :]
    tx = np.exp(np.minimum(ltx, 700.0))
    e = np.exp(-tx)
    one_minus_l = (-np.expm1(-tx)) @ w
    small = one_minus_l < 0.5
    with np.errstate(divide="ignore"):
        log_l = np.where(small, np.log1p(-np.where(small, one_minus_l, 0.0)), np.log(np.maximum(e @ w, 1e-300)))
    t2ex2 = np.exp(2 * ltx - tx) @ w
    return float(n * n * np.sum(t2ex2 * np.exp((n - 1) * log_l)) * nz._DU)


def test_one_exponential_quadrature_equals_the_logarithmic_one():
    # issue 27: the quadrature of f with one exponential over the grid gives the values of
    # the logarithmic form, σ from 10⁻³ to the largest allowed (30), n from 2 to 4096
    worst = max(abs(nz._f(s, n) / _f_in_logs(s, n) - 1)
                for s in (1e-3, 0.3, 1.0, 2.2, 5.0, 12.0, 30.0) for n in (2, 16, 512, 4096))
    assert worst < 1e-14
