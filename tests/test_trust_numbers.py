"""Issue 15, "numbers a user can trust": distances against laws with atoms, and quantiles at
flat stretches of the cdf.

* A rank-deficient Gram's structural zero eigenvalues come out of a float64 eigensolver as
  a mix of exact 0.0 and ±~n·eps·max|λ| (``freeprob.sampler`` clips the negative ones to 0).
  Snapped onto the atom (:func:`freeprob.experiments.compare.snap_to_atoms`, tolerance
  ``1e-9·max|λ|``), the KS distances are those of the continuous part: reference values are
  the same distances computed from the same spectrum with the structural zeros set to 0
  by the known rank (an independent route), and their size is the sampling misfit.
* ``quantile(p) = inf{x : F(x) ≥ p}`` (scipy's ``ppf``): at the cdf value of a gap or of a
  flat part before an atom it is the left end (compared with the exact edges of
  ``law.support()``), and ``F(Q(p)) ≥ p > F(Q(p) − δ)`` on a grid.

Reference values: Marchenko–Pastur ``MarchenkoPastur(2)`` (atom 1/2 at 0, continuous part on
``[(1 − √2)², (1 + √2)²]``); semicircle mixtures with exact edges ``mean ± 2σ``.
"""
import math

import mpmath
import numpy as np
import pytest
from scipy import stats
from sympy import Rational as R

import freeprob as fp
from freeprob.experiments.compare import ATOM_RTOL, TabulatedLaw, law_distances, snap_to_atoms, two_sample_distances
from freeprob.errors import FreeprobValueError


# ---------------------------------------------------------------------- snapping

def test_snap_to_atoms_tolerance():
    assert ATOM_RTOL == 1e-9
    lam = np.array([-3e-15, 0.0, 2e-15, 0.9e-9, 1.1e-9, -1.1e-9, 0.5, 1.0])   # max|λ| = 1
    out = snap_to_atoms(lam)
    assert out.tolist() == [0.0, 0.0, 0.0, 0.0, 1.1e-9, -1.1e-9, 0.5, 1.0]
    assert np.all(np.signbit(out[:4]) == False)  # noqa: E712  (−0.0 would print as "-0")
    # an atom away from 0, scale = max|λ| = 4: tolerance 4e-9
    out = snap_to_atoms([0.5 + 3e-9, 0.5 - 5e-9, 4.0], [0.5])
    assert out.tolist() == [0.5, 0.5 - 5e-9, 4.0]
    assert snap_to_atoms([0.0, 0.0]).tolist() == [0.0, 0.0]        # all zeros: scale 0, nothing moves
    assert snap_to_atoms([1e-12, 1.0], []).tolist() == [1e-12, 1.0]   # no atoms: unchanged
    with pytest.raises(FreeprobValueError, match="finite"):
        snap_to_atoms([0.0, float("nan")])
    with pytest.raises(FreeprobValueError, match="finite"):
        snap_to_atoms([0.0, 1.0], [float("inf")])


# ---------------------------------------------------------------------- KS against an atom

N, P = 200, 100            # Wishart X Xᵀ/P, X of size N × P: law MarchenkoPastur(N/P = 2)


@pytest.fixture(scope="module")
def mp2():
    return TabulatedLaw.from_law(fp.MarchenkoPastur(2), points=300)


def _wishart(seed):
    """Eigenvalues of a rank-P Gram in float64, as LAPACK returns them (structural zeros
    are ±~1e-15, some negative), and the same spectrum with the N − P smallest set to 0."""
    x = np.random.default_rng(seed).standard_normal((N, P))
    raw = np.linalg.eigvalsh(x @ x.T / P)
    clean = raw.copy()
    clean[: N - P] = 0.0
    return raw, clean


def test_raw_spectrum_has_noisy_zeros():
    raw, _ = _wishart(0)
    z = raw[: N - P]
    assert np.all(np.abs(z) < 1e-12 * raw[-1]) and np.any(z != 0) and np.any(z < 0)


def test_law_ks_with_noisy_zeros_is_the_continuous_misfit(mp2):
    assert mp2.atoms.tolist() == [[0.0, 0.5]]
    for seed in (0, 1):
        raw, clean = _wishart(seed)
        for lam in (raw, np.clip(raw, 0.0, None)):            # as LAPACK / as freeprob.sampler returns it
            d, ref = law_distances(lam, mp2), law_distances(clean, mp2)
            assert d["KS"] == pytest.approx(ref["KS"], abs=1e-12)
            assert d["relW1"] == pytest.approx(ref["relW1"], abs=1e-9)
        # size of the continuous misfit: KS of the P non-zero eigenvalues against the
        # continuous part (conditional cdf), halved (it carries half the mass); N = 200 ⇒ a few %
        cont = lambda x: (mp2.cdf(x) - 0.5) / 0.5                      # noqa: E731
        ks_cont = stats.kstest(clean[N - P:], cont).statistic
        assert ref["KS"] == pytest.approx(ks_cont / 2, abs=1e-9)
        assert ref["KS"] < 0.05


def test_two_sample_ks_with_noisy_zeros(mp2):
    (ra, ca), (rb, cb) = _wishart(2), _wishart(3)
    d, ref = two_sample_distances(ra, rb), two_sample_distances(ca, cb)
    assert d["KS"] == pytest.approx(ref["KS"], abs=1e-12)
    assert d["KS"] == pytest.approx(stats.ks_2samp(ca, cb).statistic, abs=1e-12)
    assert d["KS"] < 0.1
    d = two_sample_distances(np.clip(ra, 0, None), np.clip(rb, 0, None))
    assert d["KS"] == pytest.approx(ref["KS"], abs=1e-12)


def test_sampler_output_law_ks():
    # the verify scenario: `out` with h·d_V = n/2, atom 1/2 at 0 in the exact law
    from freeprob.attention import Architecture, output_law
    from freeprob.sampler import Dimensions, spectra
    dims = dict(n=128, heads=2, d_k=32, d_v=32, d_o=128)
    law = TabulatedLaw.from_law(output_law(Architecture.from_dimensions(beta=1, **dims)), points=300)
    assert law.atoms.tolist() == [[0.0, 0.5]]
    sp = spectra(Dimensions(**dims), 1.0, rng=np.random.default_rng(0), models=("softmax", "ge"))
    for lam in sp.values():
        clean = lam.copy()
        clean[:64] = 0.0                     # rank h·d_V = 64
        assert np.any(lam[:64] != 0)          # the sampler's zeros are noisy
        d, ref = law_distances(lam, law), law_distances(clean, law)
        assert d["KS"] == pytest.approx(ref["KS"], abs=1e-12) and d["KS"] < 0.1
    d = two_sample_distances(sp["softmax", "out"], sp["ge", "out"])
    s, g = sp["softmax", "out"].copy(), sp["ge", "out"].copy()
    s[:64] = g[:64] = 0.0
    assert d["KS"] == pytest.approx(stats.ks_2samp(s, g).statistic, abs=1e-12)


def test_verify_states_the_tolerance():
    from freeprob.experiments.verify import DEFINITIONS
    assert "1e-9·max|λ|" in DEFINITIONS


# ---------------------------------------------------------------------- quantiles at flat stretches

def _check_generalized_inverse(q, p, cdf, delta, tol=1e-12):
    """F(Q(p)) ≥ p and F(Q(p) − δ) < p (scipy's ppf definition), F to ``tol``."""
    assert cdf(q) >= p - tol, (p, q)
    assert cdf(q - delta) < p, (p, q)


@pytest.fixture(scope="module")
def gap_law():
    # semicircle(−2, 1/4) on [−3, −1] with weight 1/3, FreePoisson(2) on [3 − 2√2, 3 + 2√2]
    return fp.mixture([fp.Semicircle(-2, R(1, 4)), fp.FreePoisson(2)], [R(1, 3), R(2, 3)])


def test_tabulated_quantile_at_a_gap(gap_law):
    (a, b), (c, d) = [tuple(map(float, iv)) for iv in gap_law.support()]
    assert (a, b) == (-3.0, -1.0)
    t = TabulatedLaw.from_law(gap_law, points=200)
    assert t.quantile([1 / 3])[0] == b                          # left end of the gap, not c
    assert t.quantile([1 / 3 + 1e-6])[0] == pytest.approx(c, abs=1e-3)
    assert t.quantile([0.0])[0] == a and t.quantile([1.0])[0] == pytest.approx(d, abs=1e-12)
    # the table inverts F linearly between fine nodes (F itself is cubic there): 1e-5 in F
    p = np.linspace(0, 1, 41)[1:-1]
    for pi, qi in zip(p, t.quantile(p)):
        _check_generalized_inverse(qi, pi, lambda x: float(t.cdf(x)), 1e-3, tol=1e-5)


def test_tabulated_quantile_before_an_atom_and_at_0():
    law = fp.mixture([fp.Semicircle(-2, R(1, 4)), fp.Dirac(3), fp.Semicircle(5, 1)], [R(1, 3)] * 3)
    t = TabulatedLaw.from_law(law, points=200)
    assert t.quantile([1 / 3, 2 / 3]).tolist() == [-1.0, 3.0]
    mp = TabulatedLaw.from_law(fp.MarchenkoPastur(2), points=200)
    assert mp.quantile([0.0, 0.25, 0.5]).tolist() == [0.0, 0.0, 0.0]        # exact zeros
    lo = (1 - math.sqrt(2)) ** 2
    assert mp.quantile([0.5 + 1e-6])[0] == pytest.approx(lo, abs=1e-3)
    assert mp.quantile([0.5 + 1e-6])[0] >= lo


def test_law_quantile_at_a_gap_is_its_left_end():
    law = fp.mixture([fp.Semicircle(-2, R(1, 4)), fp.Semicircle(2, R(1, 4))], [R(1, 2), R(1, 2)])
    (_, b), (c, _) = law.support()
    q = law.quantile(R(1, 2))
    assert q == b == -1                                           # exact edge, not c = 1
    assert law.quantile(0) == -3 and law.quantile(1) == 3


def test_law_quantile_before_an_atom():
    # semicircle on [−3, −1] (mass 1/3), flat up to the atom 2/3 at 3
    law = fp.mixture([fp.Semicircle(-2, R(1, 4)), fp.Dirac(3)], [R(1, 3), R(2, 3)])
    assert law.quantile(R(1, 3)) == -1
    assert law.quantile(R(1, 2)) == 3 and law.quantile(1) == 3
    assert law.quantile(0) == -3
    for p in (R(1, 10), R(3, 10), R(1, 3) + R(1, 10**6), R(9, 10)):
        q = law.quantile(p)
        with mpmath.workdps(20):
            _check_generalized_inverse(q, mpmath.mpf(p), lambda x: law.cdf(x, dps=15), mpmath.mpf(10) ** -6)


def test_law_quantile_of_an_atom_at_0_is_exactly_0():
    law = fp.MarchenkoPastur(2)
    assert law.quantile(0) == 0 and law.quantile(R(1, 4)) == 0 and law.quantile(R(1, 2)) == 0
    lo = float(law.support()[0][0])
    assert lo < float(law.quantile(R(1, 2) + R(1, 10**6))) < lo + 1e-2
    # atom 1/10 at 0, then flat up to (1 − √(10/9))²: the double 0.1 is 5.6e-18 above 1/10,
    # within the 10^-15 to which F is known, so it is the atom (it was the lower edge)
    law = fp.MarchenkoPastur(R(10, 9))
    assert law.atoms() == ((0, R(1, 10)),)
    assert law.quantile(0.1) == 0 and law.quantile(R(1, 10)) == 0
    lo = (1 - math.sqrt(10 / 9)) ** 2
    assert float(law.quantile(0.1 + 1e-9)) == pytest.approx(lo, rel=1e-3)
