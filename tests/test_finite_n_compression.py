"""The random hyperplane compression at finite n (freeprob.laws.finite_n_compression) and the
bulk of the uncentred attention output built on it (docs/theory.md §13.10)."""
import mpmath
import numpy as np
import pytest
import sympy as sp

import freeprob as fp
from freeprob.laws.finite_n_compression import HyperplaneCompression

N = 20      # the compressed matrix is N × N, the compression (N − 1) × (N − 1)


def test_compression_corrections_atoms_and_g1_agree():
    """diag(1 ×10, 3 ×10) compressed to a random hyperplane: c_k = m_k − k ℓ_k (mean kept,
    c_2 = −Var = −1), the interlacing eigenvalue at the zero of G (z = 2) an atom of mass 1/n and
    the two atoms 1/2 − 1/(2n) (exactly 9 of 19 eigenvalues at each end), and the numeric G₁
    equal to the series of the exact corrections far out."""
    fl = HyperplaneCompression(fp.Atomic([1, 3])).finite_n(N - 1)
    assert fl.moment_corrections(3) == (0, 0, -1, -6)
    atoms = np.array(fl.atoms(), dtype=float)
    assert atoms == pytest.approx(np.array([[1, 9 / 19], [2, 1 / 19], [3, 9 / 19]]), abs=1e-9)
    z = mpmath.mpc(0, 30)
    c = fl.moment_corrections(8)
    series = sum(float(c[k]) * z ** (-k - 1) for k in range(9))
    assert abs(fl.correction_cauchy(z) - series) < 1e-8


def test_compression_moments_match_sampled_compressions():
    """1000 random hyperplanes (fixed seed): E tr_{N−1} (UᵀAU)^k, k = 2, 3, within 4 standard
    errors plus 2/N² (the O(1/n²) term: for k = 2 the exact mean is
    [N m2 − 2 m2 + (N m1² + 2 m2)/(N + 2)]/(N − 1), whose 1/n part is m2 − Var/n)."""
    fl = HyperplaneCompression(fp.Atomic([1, 3])).finite_n(N - 1)
    law = [float(v) for v in fl.moments(3, dps=15)]
    A = np.diag([1.0] * 10 + [3.0] * 10)
    rng = np.random.default_rng(3)
    ms = []
    for _ in range(1000):
        q, _ = np.linalg.qr(rng.standard_normal((N, N)))
        ev = np.linalg.eigvalsh(q[:, 1:].T @ A @ q[:, 1:])       # q[:, 0] is a uniform direction
        ms.append([np.mean(ev ** k) for k in (2, 3)])
    ms = np.array(ms)
    mean, se = ms.mean(axis=0), ms.std(axis=0, ddof=1) / np.sqrt(len(ms))
    assert np.all(np.abs(mean - law[2:]) < 4 * se + 2 / N**2), (mean, law)
    exact2 = (N * 5 - 2 * 5 + (N * 4 + 2 * 5) / (N + 2)) / (N - 1)
    assert abs(exact2 - law[2]) < 2 / N**2 and abs(mean[0] - exact2) < 4 * se[0]


def test_out_full_bulk_law_meets_the_sampled_bulk():
    """The n − 1 eigenvalues below the common-row spike of the GE model at n = 32 (1000 draws,
    fixed seed): the bulk law (n − 1 rows, d_O − 1 columns, the stacked population compressed
    to ū^⊥) is much closer in m1, m2 than the centred output's finite-n law (measured 3000
    draws: −9.7 and −10.0 se against −52 and −44 se; the rest is O(1/n²) at this tiny layer,
    where the spike is only ≈ d_O = 16)."""
    from freeprob import attention
    from freeprob.attention.architecture import Architecture, Dimensions
    from freeprob.attention.finite_n import finite_n_law
    from freeprob.sampler.spectra import spectra
    n, h, dk, do = 32, 2, 8, 16
    arch = Architecture.from_dimensions(n=n, heads=h, d_k=dk, d_v=dk, d_o=do, beta=1)
    bulk = [float(v) for v in finite_n_law(arch, "out_full").moments(2, dps=15)]
    out = [float(v) for v in attention.output_law(arch, finite_n=True).moments(2, dps=15)]
    rng = np.random.default_rng(17)
    ms = np.array([[np.mean(lam ** k) for k in (1, 2)] for lam in (
        spectra(Dimensions(n, h, dk, dk, do), 1.0, rng=rng, models=("ge",), objects=("out_full",))
        ["ge", "out_full"][:-1] for _ in range(1000))])
    mean, se = ms.mean(axis=0), ms.std(axis=0, ddof=1) / np.sqrt(len(ms))
    d_bulk, d_out = np.abs(mean - bulk[1:]) / se, np.abs(mean - out[1:]) / se
    assert d_out.min() > 10 and d_bulk.sum() < 0.35 * d_out.sum(), (d_bulk, d_out)
    assert sp.Integer(finite_n_law(arch, "out_full").n) == n - 1


def test_out_full_bulk_refuses_a_layer_without_a_direction_to_spare():
    from freeprob.attention.architecture import Architecture
    from freeprob.attention.finite_n import finite_n_law
    from freeprob.errors import FreeprobValueError
    with pytest.raises(FreeprobValueError, match="h·d_V >= 2"):
        finite_n_law(Architecture.from_dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=4, beta=1), "out_full")
