"""The attention laws at finite n (issue 29): freeprob.attention.finite_n.

The GE model's expected spectral law to order 1/n against the mean over sampled GE
matrices (fixed seeds, n = 32): the exact-size tree plus the 1/n term meets the sampled
moments within their noise, the limit law does not; the exact structure (an atom of mass
exactly 1/n at 0 from the centring); refusals.
"""
import numpy as np
import pytest

from freeprob import attention
from freeprob.attention.architecture import Architecture, Dimensions
from freeprob.attention.finite_n import centred_row_covariance
from freeprob.errors import FreeprobValueError
from freeprob.sampler.spectra import spectra

N, H, DK, DO = 32, 2, 8, 32
LAWS = {"single": "attention_law", "concat": "concatenated_attention_law", "sum": "head_sum_law",
        "head_out": "head_output_law", "stack": "stacked_output_law", "out": "output_law"}


@pytest.mark.parametrize("scheme", ["independent", "tied"])
def test_finite_n_moments_match_the_sampled_ge_model(scheme):
    """m2 and m3 over 3000 draws at n = 32, every object: the finite-n law within 3 standard
    errors on m2 and 4.5 on m3 (its own error is O(1/n²): measured up to 3.8 se on m3 of
    the output objects), the limit law of the same layer more than 4 standard errors off
    in one of them, and the total deviation at most half the limit's."""
    arch = Architecture.from_dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=DO, beta=1, scheme=scheme)
    dims = Dimensions(N, H, DK, DK, DO, scheme=scheme)
    rng = np.random.default_rng(29)
    draws = [spectra(dims, 1.0, rng=rng, models=("ge",), objects=tuple(LAWS)) for _ in range(3000)]
    for obj, name in LAWS.items():
        law = getattr(attention, name)
        fin = law(arch, finite_n=True).moments(3, dps=15)
        lim = law(arch).moments(3, dps=15)
        d_fin, d_lim = [], []
        for k in (2, 3):
            m = np.array([np.mean(d["ge", obj] ** k) for d in draws])
            mean, se = m.mean(), m.std(ddof=1) / np.sqrt(len(m))
            d_fin.append((mean - float(fin[k])) / se)
            d_lim.append((mean - float(lim[k])) / se)
        assert abs(d_fin[0]) < 3 and abs(d_fin[1]) < 4.5, (obj, d_fin)
        assert max(map(abs, d_lim)) > 4, (obj, d_lim)
        assert sum(map(abs, d_fin)) < 0.5 * sum(map(abs, d_lim)), (obj, d_fin, d_lim)


def test_the_centring_gives_an_atom_of_mass_one_over_n_and_the_density_is_signed():
    arch = Architecture.from_dimensions(n=N, heads=1, d_k=DK, d_v=DK, d_o=DO, beta=1)
    fl = attention.attention_law(arch, finite_n=True)
    # T = (I − P)Σ(I − P) has T1 = 0 exactly: the limit part of the tree carries it
    assert float(fl.limit.atoms()[0][0]) == 0 and float(fl.limit.atoms()[0][1]) == pytest.approx(1 / N, abs=1e-12)
    T = centred_row_covariance(N, DK, arch.theta1, arch.theta2)
    assert float(T.moments(1, dps=15)[1]) == pytest.approx((N - 1) / N * (np.e - 1), rel=1e-12)
    # the corrected density integrates (with its atoms) to 1: ρ₁ has total mass 0
    assert float(fl.correction_cdf(1e3)) == pytest.approx(0, abs=1e-8)


@pytest.mark.parametrize("make, error, match", [
    (lambda a: attention.output_law(a, finite_n=1), FreeprobValueError, "bool"),
    (lambda a: attention.output_law(Architecture(heads=2, gamma_k=1, gamma_v=1, gamma_o=1), finite_n=True),
     FreeprobValueError, "sizes"),
    (lambda a: attention.output_law(a, finite_width=1, finite_n=True), FreeprobValueError, "finite_width"),
])
def test_refusals(make, error, match):
    arch = Architecture.from_dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=DO, beta=1)
    with pytest.raises(error, match=match):
        make(arch)


def test_tied_values_numeric_correction_meets_the_exact_moments():
    """Tied values put a push-forward (B = φ(K̃ᵀK̃/n)) inside the compound steps; its G₁ is the
    image measure's, Σ_j G₁^X(r_j)/p'(r_j) over the roots of p(r) = z.  Two independent
    methods agree: G₁ far out against the series Σ c_j z^{-j-1} of the exact 1/n moment
    coefficients; and inside the support the boundary value G₁(x + i0) (real roots of p
    approached from the side p' gives) is the limit of G₁(x + iη), η = 10⁻⁷."""
    import mpmath
    arch = Architecture.from_dimensions(n=N, heads=1, d_k=DK, d_v=DK, d_o=DO, beta=1, scheme="tied")
    fl = attention.head_output_law(arch, finite_n=True)
    edge = float(fl.limit.support(dps=15)[-1][1])
    z = complex(4 * edge, 1)
    series = sum(complex(mpmath.mpf(float(cj))) / z ** (j + 1) for j, cj in enumerate(fl.moment_corrections(30)))
    assert complex(fl.correction_cauchy(z)) == pytest.approx(series, rel=1e-12)
    for x in (0.2 * edge, 0.5 * edge, 0.8 * edge):
        on = complex(fl.correction_cauchy(x))
        assert on.imag != 0 and on == pytest.approx(complex(fl.correction_cauchy(mpmath.mpc(x, 1e-7))), rel=1e-6)


# -- the verify columns ------------------------------------------------------------------------
def test_verify_finite_n_columns_pool_the_seeds_and_pair_the_differences():
    """Wishart(2) at n = 50 as the 'GE' samples: the pooled distance to the finite-n table is
    the distance of the concatenated spectra, and it beats the limit's (the 1/n bias is
    ~10x the sampling noise of 30000 pooled eigenvalues); the summary pairs over seeds."""
    import freeprob as fp
    from freeprob.experiments.compare import TabulatedLaw, law_distances
    from freeprob.experiments.stats import mean_interval
    from freeprob.experiments.verify_finite_n import finite_n_distances, finite_n_summary, pooled_distances

    law = fp.FreePoisson(2)
    th, fn = TabulatedLaw.from_law(law, points=100), TabulatedLaw.from_law(law.finite_n(50), points=100)
    rng = np.random.default_rng(7)
    spectra_ = []
    for _ in range(600):
        g = rng.standard_normal((50, 100)) / np.sqrt(50)
        spectra_.append(np.linalg.eigvalsh(g @ g.T))
    pooled = pooled_distances({"ge": spectra_, "sm": []}, {"th": th, "fn": fn, "fw": None})
    assert set(pooled) == {"ge_th_pooled_relW1", "ge_fn_pooled_relW1"}
    assert pooled["ge_fn_pooled_relW1"]["mean"] == law_distances(np.concatenate(spectra_), fn)["relW1"]
    assert pooled["ge_fn_pooled_relW1"]["mean"] < 0.6 * pooled["ge_th_pooled_relW1"]["mean"]
    per = []
    for lam in spectra_[:10]:
        base = {f"{t}_th_relW1": law_distances(lam, th)["relW1"] for t in ("sm", "ge")}
        per.append(finite_n_distances(lam, lam, fn, base))
    diff = mean_interval([p["ge_th_minus_fn_relW1"] for p in per])
    row = dict(config="W", object="single", n=50, beta="1",
               metrics=pooled | {"ge_fn_relW1": {"mean": 0.0}, "ge_th_minus_fn_relW1": dict(
                   mean=diff.mean, lo=diff.lo, hi=diff.hi, n=10)})
    text = finite_n_summary([row])[0]
    assert "GE pooled relW1 limit" in text and "×0." in text
    assert ("not significant" in text) == (diff.lo <= 0 <= diff.hi)


def test_verify_plans_one_finite_n_law_per_cell_object():
    from freeprob.experiments.verify import VerifySettings, plan_sweep
    st = VerifySettings(configs=("tiny:d=64,heads=2,d_head=16",), n=64, seeds=2, objects=("single", "out"),
                        finite_n=True, finite_width=False, figures=False, out="unused")
    kinds = sorted(c.params["object_kind"] for c in plan_sweep(st) if c.kind == "object")
    assert kinds == ["finite-n law"] * 2 + ["tabulated law"] * 2
    fn = [c for c in plan_sweep(st) if c.kind == "object" and c.kwargs["finite_n"]]
    assert all(c.key.startswith("theory-fn-") for c in fn)
    with pytest.raises(FreeprobValueError, match="finite_n"):
        VerifySettings(finite_n="yes")


# -- the zero block out of the populations (exact), and the out law's table ---------------------
def _mixture_tree(arch, obj):
    """The tree with the zero block of T_i kept as a block of the population (the form before
    the zero block was taken out by a rate (n − 1)/n)."""
    import sympy as sp
    from freeprob.laws.families import CompoundFreePoisson
    from freeprob.laws.operations import dilate, mixture
    n, h = arch.n, arch.heads
    T = centred_row_covariance(n, arch.d_k, arch.theta1, arch.theta2)
    if obj == "single":
        return CompoundFreePoisson(1, T)
    cv = sp.Rational(arch.d_v, n)
    B = dilate(CompoundFreePoisson(1 / cv, T), cv)
    t = sp.Rational(h * arch.d_v, arch.d_o)
    return CompoundFreePoisson(sp.Rational(arch.d_o, n),
                               dilate(CompoundFreePoisson(t, mixture([B] * h)), 1 / t))


@pytest.mark.parametrize("obj", ["single", "out"])
def test_the_zero_block_leaves_the_population_exactly(obj):
    """π((1/N)δ_0 + ((N−1)/N)ν, t) = π(ν, t(N−1)/N), as a law and as a matrix (one column of
    G fewer): the exact moments and their exact 1/n coefficients of the tree used now equal
    those of the tree with the zero block kept, to m5."""
    import sympy as sp
    from freeprob.attention.finite_n import finite_n_tree
    arch = Architecture.from_dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=16, beta=1)
    new, old = finite_n_tree(arch, obj), _mixture_tree(arch, obj)
    for a, b in zip(new.finite_n(N).moments(5), old.finite_n(N).moments(5)):
        assert sp.simplify(a - b) == 0
    for a, b in zip(new.finite_n(N).moment_corrections(5), old.finite_n(N).moment_corrections(5)):
        assert sp.simplify(a - b) == 0


def test_the_out_law_tabulates_next_to_its_atom():
    """The finite-n output law with an atom at 0 (h d_V < n) and its density reaching 0: the
    boundary value next to the atom (G ≈ w/x, float64 roots useless) is the atom's branch
    (x·G(x + i0) → 1/2), the correction density there is the continuation of the one further
    out, and the table has the law's mass, atoms and moments."""
    import mpmath
    from freeprob.experiments.compare import TabulatedLaw
    from freeprob.laws.finite_n_eval import boundary_G
    arch = Architecture.from_dimensions(n=N, heads=H, d_k=DK, d_v=DK, d_o=16, beta=1)
    fl = attention.output_law(arch, finite_n=True)
    for x in (1e-9, 1e-12, 1e-15):
        g = boundary_G(fl.limit, x)
        assert abs(x * g - 0.5) < 1e-3, (x, g)
        assert float(mpmath.im(g)) == pytest.approx(-float(mpmath.pi * fl.limit.density(x)), rel=1e-10)
    # at the hard edge both densities go like x^{-1/2}: √x ρ₁(x) has a limit (0.1722335…), which the
    # G₁ of a clustered root reaches only with the digits it cancels
    edge = [float(fl.correction_density(x)) * x ** 0.5 for x in (1e-9, 1e-12, 1e-15)]
    assert edge == pytest.approx([edge[-1]] * 3, rel=1e-6) and edge[-1] == pytest.approx(0.1722335, rel=1e-6)
    table = TabulatedLaw.from_law(fl, points=50)
    assert abs(table.mass_defect) < 1e-3
    assert table.atoms[0, 0] == 0 and table.atoms[0, 1] == pytest.approx(0.5 + 1 / (4 * N), abs=1e-9)
    assert table.moments[2] == pytest.approx(float(fl.moments(2, dps=15)[2]), rel=1e-12)
