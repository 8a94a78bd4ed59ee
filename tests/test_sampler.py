"""Tests of the float64 sampler layer (freeprob.sampler).

Reference values are the closed forms of theory.md §3.3–3.5 (written out here in floats,
independently of the exact layer), brute-force constructions of every object from the
definitions of theory.md §1, and the finite-size statements of theory.md §5 and §7.
All seeds are fixed.  Statistical tolerances are 4 standard deviations of the
seed-average, with per-draw spreads measured at n = 128 and 512 (they scale like 1/n),
plus 2/n for the O(1/n) finite-size bias.

Runtime: about 5 s with single-threaded BLAS (OPENBLAS_NUM_THREADS=1); multi-threaded
OpenBLAS on a loaded 2-core machine spin-waits inside LAPACK (eigvalsh, QR) and takes
15–25 s.
"""
import ast
import importlib
import math
import pathlib
from functools import lru_cache

import numpy as np
import pytest
import scipy.stats

from freeprob import sampler
# the module (the package attribute `spectra` is the function of that name)
sampler_spectra = importlib.import_module("freeprob.sampler.spectra")
from freeprob.errors import FreeprobValueError
from freeprob.sampler import (
    OBJECTS,
    Dimensions,
    attention_matrices,
    draw_weights,
    empirical_moments,
    ge_constants,
    gram_moments,
    gram_spectrum,
    key_norm_mean,
    relative_w1,
    sample_objects,
    softmax_attention,
    spectra,
    top_eigenvalue,
)


def rng(seed):
    return np.random.default_rng(seed)


# ----------------------------------------------------------------- theory.md §3.3 closed forms

def theory_m1_m2(obj, dims, beta):
    """(m1, m2) of the GE limit law of ``obj`` (theory.md §3.3, §3.4 tied m1, §3.5 sharing)."""
    t1, t2 = math.expm1(beta**2), beta**2
    h = dims.heads
    ck, cv = float(dims.c_k), float(dims.c_v)
    gk, gv, go = float(dims.gamma_k), float(dims.gamma_v), float(dims.gamma_o)
    if dims.scheme == "tied":
        return {"head_out": (t1 * ck + t2, None), "stack": (t1 * gk + h * t2, None),
                "out": ((t1 + t2 / ck) * go, None)}[obj]
    if obj == "sum":    # ρ_γ ⊠ π_1 with γ = (number of distinct keys)·c_K (theory.md §3.2 table)
        g = dims.key_groups * ck
        return t1, 2 * t1**2 + t2**2 / g
    return {
        "single": (t1, 2 * t1**2 + t2**2 / ck),
        "concat": (t1, t1**2 * (1 + 1 / h) + t2**2 / gk),
        "head_out": (cv * t1, t1**2 * (2 * cv**2 + cv) + cv**2 * t2**2 / ck),
        "stack": (gv * t1, gv**2 * t1**2 * (1 + 1 / h + 1 / gv) + gv**2 * t2**2 / gk),
        "out": (go * t1, go**2 * t1**2 * (1 + 1 / h + 1 / gv + 1 / go) + go**2 * t2**2 / gk),
    }[obj]


# per-draw standard deviation × n of the relative error of (m1, m2), measured over 30 (n=128)
# and 8 (n=512) seeds at β = 1 and rounded up by ~25 %
SPREAD = {
    ("independent", "single"): (5, 14), ("independent", "concat"): (2.5, 6),
    ("independent", "sum"): (3, 8), ("independent", "head_out"): (13, 37),
    ("independent", "stack"): (7, 15), ("independent", "out"): (10, 24),
    ("tied", "head_out"): (11, None), ("tied", "stack"): (6, None), ("tied", "out"): (8, None),
    ("mqa", "sum"): (6, 20), ("mqa", "concat"): (4, 10), ("mqa", "out"): (14, 32),
}
SEEDS = {128: 16, 512: 4}
BETA = 1.0


def theory_dims(scheme, n):
    extra = {"independent": {}, "tied": {"scheme": "tied"}, "mqa": {"scheme": "gqa", "kv_groups": 1}}
    return Dimensions(n=n, heads=4, d_k=n // 8, d_v=n // 8, d_o=n // 2, **extra[scheme])


@lru_cache(maxsize=None)
def ge_relative_errors(scheme, n):
    """Seed-averaged relative errors of the GE (m1, m2) against theory, per object."""
    dims = theory_dims(scheme, n)
    objs = tuple(o for (s, o) in SPREAD if s == scheme)
    errs = {o: [] for o in objs}
    for seed in range(SEEDS[n]):
        facs = sample_objects(dims, BETA, rng=rng(1000 + seed), model="ge", objects=objs)
        for o in objs:
            m = gram_moments(facs[o], 2)
            a, b = theory_m1_m2(o, dims, BETA)
            errs[o].append((m[0] / a - 1, (m[1] / b - 1) if b is not None else 0.0))
    return {o: np.mean(e, axis=0) for o, e in errs.items()}


@pytest.mark.parametrize("n", [128, 512])
@pytest.mark.parametrize("scheme,obj", list(SPREAD))
def test_ge_moments_match_theory(scheme, obj, n):
    """theory.md §3.3: mean and m2 of each GE Gram law, within 4 s.d. (a band shrinking like 1/n)."""
    err = ge_relative_errors(scheme, n)[obj]
    for k, s in enumerate(SPREAD[scheme, obj]):
        if s is None:
            continue
        # 4 s.d. of the seed average, plus the O(1/n) bias (e.g. E m1 = θ1(1 − 1/n) from the centring)
        tol = 4 * s / (n * math.sqrt(SEEDS[n])) + 2 / n
        assert abs(err[k]) < tol, (scheme, obj, n, f"m{k + 1}", err[k], tol)


def test_ge_moment_errors_shrink_overall():
    """The summed |relative error| over all cases falls from n=128 to n=512.

    The standard error of each seed average scales like 1/(n √seeds), i.e. halves from
    (128, 16 seeds) to (512, 4 seeds), and the O(1/n) bias falls by 4, so the expected
    ratio is ≈ 0.3–0.5; over 6 alternative seed sets it ranged up to ≈ 0.65, so a ratio
    below 0.85 is required (the per-case bands of test_ge_moments_match_theory already
    shrink like 1/n)."""
    total = {n: sum(np.abs(ge_relative_errors(s, n)[o]).sum() for (s, o) in SPREAD) for n in SEEDS}
    assert total[512] < 0.85 * total[128], total


def test_sum_sees_key_sharing_but_concat_and_out_do_not():
    """theory.md §3.5: MQA changes the head-sum law (γ_K → c_K) but not concat or out."""
    n = 256
    indep, mqa = theory_dims("independent", n), theory_dims("mqa", n)
    m2 = {}
    for dims in (indep, mqa):
        vals = [gram_moments(f, 2)[1] for seed in range(4)
                for f in [sample_objects(dims, BETA, rng=rng(seed), model="ge", objects=("sum",))["sum"]]]
        m2[dims.scheme] = np.mean(vals)
    predicted_ratio = theory_m1_m2("sum", mqa, BETA)[1] / theory_m1_m2("sum", indep, BETA)[1]
    assert predicted_ratio > 1.5
    assert abs(m2["gqa"] / m2["independent"] / predicted_ratio - 1) < 0.08
    for obj in ("concat", "out"):
        assert theory_m1_m2(obj, mqa, BETA) == theory_m1_m2(obj, indep, BETA)


# ----------------------------------------------------------------- attention and structure

def test_softmax_rows_sum_to_one():
    w = draw_weights(Dimensions(n=64, heads=3, d_k=8, d_v=8, d_o=16), rng=rng(0))
    for beta in (0.0, 0.5, 2.0, 50.0):
        a = softmax_attention(w.q, w.k, beta)
        assert a.shape == (3, 64, 64)
        assert np.all(a >= 0)
        np.testing.assert_allclose(a.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(softmax_attention(w.q, w.k, 0.0), np.full((3, 64, 64), 1 / 64))


def test_large_beta_is_finite():
    """Stable softmax: β = 50 gives no overflow, no NaN, near one-hot rows, finite spectra."""
    dims = Dimensions(n=64, heads=2, d_k=8, d_v=8, d_o=32)
    w = draw_weights(dims, rng=rng(3))
    with np.errstate(all="raise"):
        a = softmax_attention(w.q, w.k, 50.0)
        sp = spectra(dims, 50.0, rng=rng(3), models=("softmax",), objects=OBJECTS)
    assert np.median(a.max(axis=-1)) > 0.9           # nearly one-hot rows
    for ev in sp.values():
        assert np.all(np.isfinite(ev)) and ev[-1] > 0
    # one-hot rows: M = √n(A − P) has Gram mean ≈ (n − 1)
    assert sp["softmax", "single"].mean() > 0.5 * (dims.n - 1)
    with pytest.raises(FreeprobValueError, match="overflow"):
        spectra(dims, 50.0, rng=rng(3), models=("ge",))


def test_centred_attention_rows_sum_to_zero_for_every_model():
    w = draw_weights(Dimensions(n=48, heads=2, d_k=6, d_v=6, d_o=12), rng=rng(1))
    for model, kn in (("softmax", False), ("ge", False), ("ge2", False), ("ge", True), ("ge2", True)):
        m = attention_matrices(w, 0.8, model=model, rng=rng(2), key_norm_term=kn)
        assert m.shape == (2, 48, 48)
        np.testing.assert_allclose(m.sum(axis=-1), 0.0, atol=1e-12)


def reference_objects(w, beta):
    """Every object's n×n Gram built literally from the definitions of theory.md §1."""
    dm = w.dims
    n, h = dm.n, dm.heads
    p = np.full((n, n), 1.0 / n)
    A = []
    for i in range(h):
        e = np.exp(beta * w.q[i] @ w.k[i].T / math.sqrt(dm.d_k))      # unstabilised: small β only
        A.append(e / e.sum(axis=1, keepdims=True))
    M = [math.sqrt(n) * (a - p) for a in A]
    H = [(a - p) @ v for a, v in zip(A, w.v)]
    O = np.hstack(H) @ w.w_o
    O_full = np.hstack([a @ v for a, v in zip(A, w.v)]) @ w.w_o
    S = sum(M)
    return {"single": M[0] @ M[0].T, "concat": sum(m @ m.T for m in M) / h, "sum": S @ S.T / h,
            "head_out": H[0] @ H[0].T, "stack": sum(x @ x.T for x in H), "out": O @ O.T,
            "out_full": O_full @ O_full.T}


@pytest.mark.parametrize("scheme,groups", [("independent", None), ("gqa", 2), ("shared_keys", None),
                                          ("tied", None)])
def test_objects_equal_bruteforce_definitions(scheme, groups):
    dims = Dimensions(n=24, heads=4, d_k=5, d_v=5, d_o=7, scheme=scheme, kv_groups=groups)
    w = draw_weights(dims, rng=rng(7))
    ref = reference_objects(w, 0.7)
    facs = sample_objects(dims, 0.7, rng=rng(8), weights=w, objects=OBJECTS)
    sp = spectra(dims, 0.7, rng=rng(8), weights=w, models=("softmax",), objects=OBJECTS)
    expected_cols = {"single": 24, "concat": 96, "sum": 24, "head_out": 5, "stack": 20, "out": 7,
                     "out_full": 7}
    for name in OBJECTS:
        f = facs[name]
        assert f.shape == (24, expected_cols[name])
        np.testing.assert_allclose(f @ f.T, ref[name], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(sp["softmax", name], np.clip(np.linalg.eigvalsh(ref[name]), 0, None),
                                   rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("scheme,groups", [("independent", None), ("gqa", 2), ("shared_keys", None),
                                          ("tied", None)])
def test_fast_softmax_head_outputs_equal_bruteforce(scheme, groups):
    """Objects ⊆ {head_out, stack, out, out_full} take the fused route H_i = diag(1/r) E V_c
    (no n×n centring pass); it is the same matrix as the definitions, up to rounding."""
    dims = Dimensions(n=24, heads=4, d_k=5, d_v=5, d_o=7, scheme=scheme, kv_groups=groups)
    w = draw_weights(dims, rng=rng(7))
    ref = reference_objects(w, 0.7)
    names = ("head_out", "stack", "out", "out_full")
    fast = sample_objects(dims, 0.7, rng=rng(8), weights=w, objects=names)
    full = sampler_spectra._build(w, 0.7, "softmax", False, None, names, None, concat_as_gram=False, fast=False)
    for name in names:
        np.testing.assert_allclose(fast[name] @ fast[name].T, ref[name], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fast[name], full[name], rtol=1e-10, atol=1e-13)


def test_fast_softmax_large_beta_uses_row_max():
    """Beyond the no-shift bound the fused route subtracts the row maximum: finite at β = 50."""
    dims = Dimensions(n=64, heads=2, d_k=8, d_v=8, d_o=32)
    w = draw_weights(dims, rng=rng(3))
    with np.errstate(all="raise"):
        fast = sample_objects(dims, 50.0, rng=rng(0), weights=w, objects=("stack", "out"))
    full = sampler_spectra._build(w, 50.0, "softmax", False, None, ("stack", "out"), None, concat_as_gram=False,
                          fast=False)
    for name in ("stack", "out"):
        assert np.all(np.isfinite(fast[name]))
        np.testing.assert_allclose(fast[name], full[name], rtol=1e-9, atol=1e-12)


class _ZeroNormals:
    """Stand-in generator whose standard normals are all zero (switches the GE noise off)."""

    def standard_normal(self, shape):
        return np.zeros(shape)


@pytest.mark.parametrize("key_norm_term", [False, True])
@pytest.mark.parametrize("scheme,groups", [("independent", None), ("gqa", 2), ("tied", None)])
def test_fast_ge_mean_part_equals_full_route(scheme, groups, key_norm_term):
    """GE route by reassociation: with the noise switched off, (β/√d_K) Q (Kᵀ V_c)/n
    (+ 1 μᵀ V_c/n) equals the full-matrix M^GE V/√n (an identity, up to rounding)."""
    dims = Dimensions(n=40, heads=4, d_k=6, d_v=6, d_o=9, scheme=scheme, kv_groups=groups)
    w = draw_weights(dims, rng=rng(11))
    names = ("head_out", "stack", "out", "out_full")
    std = sampler_spectra._noise_std(0.9, "ge")
    fast = sampler_spectra._build(w, 0.9, "ge", key_norm_term, _ZeroNormals(), names, std, False, fast=True)
    full = sampler_spectra._build(w, 0.9, "ge", key_norm_term, _ZeroNormals(), names, std, False, fast=False)
    for name in names:
        np.testing.assert_allclose(fast[name], full[name], rtol=1e-10, atol=1e-13)


def test_fast_ge_noise_factor_has_the_exact_conditional_covariance():
    """Z V_c has iid rows N(0, V_cᵀ V_c) given V; the factor F drawn as G F has Fᵀ F = V_cᵀ V_c
    (Cholesky branch, QR branch for a singular Gram, and the literal Z V_c branch for d_V ≥ n)."""
    from freeprob.sampler.heads import noise_factor
    v = rng(0).standard_normal((3, 50, 7))
    vc = v - v.mean(axis=1, keepdims=True)
    gram = np.swapaxes(vc, -1, -2) @ vc
    for x in (vc, np.concatenate([vc[..., :6], np.zeros((3, 50, 1))], axis=-1)):   # 2nd: QR branch
        f = noise_factor(x)
        assert f.shape == (3, 7, 7)
        np.testing.assert_allclose(np.swapaxes(f, -1, -2) @ f, np.swapaxes(x, -1, -2) @ x,
                                   rtol=1e-12, atol=1e-10 * np.abs(gram).max())
    wide = rng(1).standard_normal((2, 5, 8))
    assert noise_factor(wide) is wide


def test_fast_ge_agrees_in_law_with_full_route():
    """m1, m2 of out and stack: fast GE route vs the full n×n GE route, paired on the same
    weights with independent noise, over 24 seeds (z-test at 4 s.e. of the paired mean).

    The test has power: the fast route with the noise scaled by 1.25 is rejected.
    """
    dims = Dimensions(n=64, heads=4, d_k=8, d_v=8, d_o=32)
    names = ("stack", "out")
    std = sampler_spectra._noise_std(1.0, "ge")

    def moments(w, seed, fast, scale=1.0):
        f = sampler_spectra._build(w, 1.0, "ge", False, rng(seed), names, scale * std, False, fast=fast)
        return np.concatenate([gram_moments(f[o], 2) for o in names])

    diffs, wrong = [], []
    for seed in range(24):
        w = draw_weights(dims, rng=rng(300 + seed))
        full = moments(w, 400 + seed, fast=False)
        diffs.append(moments(w, 500 + seed, fast=True) - full)
        wrong.append(moments(w, 500 + seed, fast=True, scale=1.25) - full)
    for d, ok in ((np.array(diffs), True), (np.array(wrong), False)):
        z = np.abs(d.mean(axis=0)) / (d.std(axis=0, ddof=1) / math.sqrt(len(d)))
        assert np.all(z < 4) if ok else np.all(z > 4), (ok, z)


def test_fast_ge_route_matches_theory():
    """theory.md §3.3 (m1, m2) of out, stack, head_out through the fast GE route, with the
    tolerances of test_ge_moments_match_theory at n = 128."""
    n = 128
    dims = theory_dims("independent", n)
    objs = ("head_out", "stack", "out")
    errs = []
    for seed in range(SEEDS[n]):
        facs = sample_objects(dims, BETA, rng=rng(2000 + seed), model="ge", objects=objs)
        errs.append([gram_moments(facs[o], 2) / theory_m1_m2(o, dims, BETA) - 1 for o in objs])
    err = np.mean(errs, axis=0)
    for i, o in enumerate(objs):
        for k, sd in enumerate(SPREAD["independent", o]):
            tol = 4 * sd / (n * math.sqrt(SEEDS[n])) + 2 / n
            assert abs(err[i, k]) < tol, (o, f"m{k + 1}", err[i, k], tol)


@pytest.mark.parametrize("model,pipeline,limit", [
    ("softmax", False, 2 * 40 * 40), ("softmax", True, 4 * 40 * 40), ("softmax", True, 40 * 40),
    ("ge", False, 2 * 40 * 6), ("ge", "parallel", 2 * 40 * 6)])
def test_fast_route_blocked_heads_equal_one_block(model, pipeline, limit, monkeypatch):
    """Blocks of heads (and the pipelined softmax, exp in a helper thread; the GE noise of
    large draws, two child generators in two threads) give the same numbers."""
    dims = Dimensions(n=40, heads=5, d_k=6, d_v=6, d_o=9)
    w = draw_weights(dims, rng=rng(0))
    if pipeline == "parallel":
        from freeprob.sampler import model as _sampler_model
        pipeline = False
        single_stream = sample_objects(dims, 1.0, rng=rng(1), weights=w, model=model, objects=("stack",))
        monkeypatch.setattr(_sampler_model, "_PARALLEL_DRAW_MIN", 0)
        two_streams = sample_objects(dims, 1.0, rng=rng(1), weights=w, model=model, objects=("stack",))
        assert not np.array_equal(single_stream["stack"], two_streams["stack"])
    def run():
        return sample_objects(dims, 1.0, rng=rng(1), weights=w, model=model, objects=("stack", "out"))

    monkeypatch.setattr(sampler_spectra, "_PIPELINE", False)
    whole = run()
    monkeypatch.setattr(sampler_spectra, "_PIPELINE", pipeline)
    monkeypatch.setattr(sampler_spectra, "_MAX_BLOCK_ELEMENTS", limit)
    blocked = run()
    for name in whole:
        np.testing.assert_allclose(blocked[name], whole[name], rtol=1e-12, atol=1e-12)


def test_common_row_component():
    """out_full − out = 1bᵀ with bᵀ = 1ᵀ[V_1..V_h]W_O/n; out depends on V only through (I−P)V.

    (The centring is on the right, A⊥ = A(I−P): 1ᵀO is *not* zero, but O 's rows are
    combinations of M_i rows, M_i 1 = 0.)
    """
    dims = Dimensions(n=32, heads=2, d_k=4, d_v=4, d_o=6)
    w = draw_weights(dims, rng=rng(4))
    f = sample_objects(dims, 1.0, rng=rng(5), weights=w, objects=("out", "out_full"))
    b = np.hstack(list(w.v)).mean(axis=0) @ w.w_o
    np.testing.assert_allclose(f["out_full"] - f["out"], np.ones((32, 1)) * b, atol=1e-12)
    shifted = sampler.Weights(dims=dims, q=w.q, k=w.k, v=w.v + rng(6).standard_normal((2, 1, 4)), w_o=w.w_o)
    g = sample_objects(dims, 1.0, rng=rng(5), weights=shifted, objects=("out",))
    np.testing.assert_allclose(g["out"], f["out"], atol=1e-12)
    assert np.abs(np.ones(32) @ f["out"]).max() > 1e-3       # 1ᵀO ≠ 0: right-centring only


def test_ge_form():
    """GE / GE2: √n M − (linear [+ 2nd chaos])(I−P) is centred noise of variance θ1−θ2 [−β⁴/2].

    theory.md §2 and §7 (F1).
    """
    n, beta = 256, 0.9
    dims = Dimensions(n=n, heads=2, d_k=32, d_v=32, d_o=64)
    w = draw_weights(dims, rng=rng(0))
    s = beta * w.q @ np.swapaxes(w.k, -1, -2) / math.sqrt(dims.d_k)
    t1, t2 = ge_constants(beta)
    cases = (("ge", s, t1 - t2), ("ge2", s + (s**2 - beta**2) / 2, t1 - t2 - beta**4 / 2))
    for model, mean_part, var in cases:
        m = attention_matrices(w, beta, model=model, rng=rng(1))
        resid = math.sqrt(n) * m - (mean_part - mean_part.mean(axis=-1, keepdims=True))
        assert abs(resid.var() / (var * (1 - 1 / n)) - 1) < 0.02
        assert abs(resid.mean()) < 0.01 * math.sqrt(var)
        # independent of the scores
        assert abs(np.corrcoef(resid.ravel(), s.ravel())[0, 1]) < 0.01


def test_head_sharing_schemes():
    def same(a, b):
        return np.array_equal(a, b)

    for inp in ("qkv", "explicit"):
        w = draw_weights(Dimensions(n=16, heads=6, d_k=3, d_v=3, d_o=4, scheme="gqa", kv_groups=3),
                         rng=rng(0), input=inp)
        for arr in (w.k, w.v):                       # groups {0,1}, {2,3}, {4,5}
            assert same(arr[0], arr[1]) and same(arr[2], arr[3]) and same(arr[4], arr[5])
            assert not same(arr[1], arr[2]) and not same(arr[3], arr[4])
        assert not same(w.q[0], w.q[1])
        w = draw_weights(Dimensions(n=16, heads=4, d_k=3, d_v=3, d_o=4, scheme="gqa", kv_groups=1),
                         rng=rng(0), input=inp)          # MQA
        assert all(same(w.k[0], w.k[i]) and same(w.v[0], w.v[i]) for i in range(4))
        w = draw_weights(Dimensions(n=16, heads=4, d_k=3, d_v=3, d_o=4, scheme="shared_keys"),
                         rng=rng(0), input=inp)
        assert all(same(w.k[0], w.k[i]) for i in range(4)) and not same(w.v[0], w.v[1])
        w = draw_weights(Dimensions(n=16, heads=4, d_k=3, d_v=3, d_o=4, scheme="tied"), rng=rng(0), input=inp)
        assert same(w.v, w.k) and not same(w.k[0], w.k[1])
        w = draw_weights(Dimensions(n=16, heads=4, d_k=3, d_v=3, d_o=4), rng=rng(0), input=inp)
        assert not same(w.k[0], w.k[1]) and not same(w.v[0], w.v[1]) and not same(w.k[0], w.v[0])


def test_parallel_draw_is_deterministic_and_keeps_the_structure(monkeypatch):
    """Large draws (two child generators, two threads) run through every scheme and input."""
    from freeprob.sampler import model as _sampler_model
    monkeypatch.setattr(_sampler_model, "_PARALLEL_DRAW_MIN", 0)
    for inp in ("qkv", "explicit"):
        a = draw_weights(Dimensions(n=16, heads=6, d_k=3, d_v=3, d_o=4, scheme="gqa", kv_groups=3),
                         rng=rng(0), input=inp)
        b = draw_weights(Dimensions(n=16, heads=6, d_k=3, d_v=3, d_o=4, scheme="gqa", kv_groups=3),
                         rng=rng(0), input=inp)
        for name in ("q", "k", "v", "w_o"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert np.array_equal(a.k[0], a.k[1]) and np.array_equal(a.v[2], a.v[3])
        assert not np.array_equal(a.k[1], a.k[2]) and not np.array_equal(a.q[0], a.q[1])
        t = draw_weights(Dimensions(n=16, heads=4, d_k=3, d_v=3, d_o=4, scheme="tied"), rng=rng(0), input=inp)
        assert np.array_equal(t.v, t.k)
    w = draw_weights(Dimensions(n=40, d=70, heads=2, d_k=5, d_v=5, d_o=10), rng=rng(0), input="explicit")
    np.testing.assert_allclose(w.x @ w.x.T, 70 * np.eye(40), atol=1e-10)
    w = draw_weights(Dimensions(n=64, heads=2, d_k=8, d_v=8, d_o=12), rng=rng(0),
                     value_weights="rademacher", output_weights="orthogonal")
    assert set(np.unique(w.v)) == {-1.0, 1.0}
    np.testing.assert_allclose(w.w_o.T @ w.w_o, np.eye(12), atol=1e-12)


def test_parallel_draw_equals_its_two_child_streams():
    """Above the threshold: child 0 fills the first half of each array, child 1 the second."""
    from freeprob.sampler import model as _sampler_model
    dims = Dimensions(n=2048, heads=4, d_k=128, d_v=128, d_o=2048)      # 4.2 M normals
    assert 3 * 4 * 2048 * 128 + 512 * 2048 >= _sampler_model._PARALLEL_DRAW_MIN
    w = draw_weights(dims, rng=rng(5))
    kids = _sampler_model._child_generators(rng(5), 2)
    half = 4 * 2048 * 128 // 2
    np.testing.assert_array_equal(w.q.reshape(-1)[:half], kids[0].standard_normal(half))
    np.testing.assert_array_equal(w.q.reshape(-1)[half:], kids[1].standard_normal(half))
    # in law: unit variance for Q, K, V, 1/(h d_V) for W_O; halves uncorrelated (iid)
    for arr, var in ((w.q, 1.0), (w.k, 1.0), (w.v, 1.0), (w.w_o * math.sqrt(512), 1.0)):
        flat = arr.reshape(-1)
        assert abs(flat.mean()) < 5 / math.sqrt(flat.size)
        assert abs(flat.var() / var - 1) < 5 * math.sqrt(2 / flat.size)
        h = flat.size // 2
        assert abs(np.corrcoef(flat[:h], flat[h:2 * h])[0, 1]) < 5 / math.sqrt(h)
    assert not np.array_equal(w.q, draw_weights(dims, rng=rng(6)).q)


def test_explicit_inputs_are_orthogonal():
    dims = Dimensions(n=40, d=70, heads=2, d_k=5, d_v=5, d_o=10)
    w = draw_weights(dims, rng=rng(0), input="explicit")
    np.testing.assert_allclose(w.x @ w.x.T, 70 * np.eye(40), atol=1e-10)
    assert draw_weights(dims, rng=rng(0)).x is None


def test_explicit_route_equals_qkv_route_in_law():
    """theory.md §1: X Xᵀ = dI and W ~ N(0,1/d) give iid N(0,1) Q, K, V; compare m1, m2 (z-test)."""
    dims = Dimensions(n=64, d=96, heads=4, d_k=8, d_v=8, d_o=32)
    vals = {}
    for inp in ("qkv", "explicit"):
        rows = []
        for seed in range(16):
            f = sample_objects(dims, 1.0, rng=rng(50 + seed), input=inp, objects=("concat", "out"))
            rows.append(np.concatenate([gram_moments(f["concat"], 2), gram_moments(f["out"], 2)]))
        vals[inp] = np.array(rows)
    a, b = vals["qkv"], vals["explicit"]
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * se), (a.mean(0), b.mean(0), se)
    # the statistic has power: a variance-2 input would be caught
    assert np.all(0.5 * a.mean(axis=0) > 4 * se)


def test_weight_kinds():
    dims = Dimensions(n=64, heads=2, d_k=8, d_v=8, d_o=12)
    w = draw_weights(dims, rng=rng(0), value_weights="rademacher", output_weights="rademacher")
    assert set(np.unique(w.v)) == {-1.0, 1.0}
    np.testing.assert_allclose(np.abs(w.w_o), 1 / math.sqrt(16))
    w = draw_weights(dims, rng=rng(0), value_weights="orthogonal", output_weights="orthogonal")
    joint = np.hstack(list(w.v))                                     # n × h d_v, tall
    np.testing.assert_allclose(joint.T @ joint, 64 * np.eye(16), atol=1e-10)
    np.testing.assert_allclose(w.w_o.T @ w.w_o, np.eye(12), atol=1e-12)   # 16 × 12, tall
    wide = draw_weights(Dimensions(n=64, heads=2, d_k=8, d_v=8, d_o=40), rng=rng(0),
                        output_weights="orthogonal")
    np.testing.assert_allclose(wide.w_o @ wide.w_o.T, 40 / 16 * np.eye(16), atol=1e-12)
    sq = Dimensions(n=64, heads=2, d_k=8, d_v=8, d_o=12)   # explicit route, d = n: V = X W_V orthogonal too
    w = draw_weights(sq, rng=rng(0), input="explicit", value_weights="orthogonal")
    joint = np.hstack(list(w.v))
    np.testing.assert_allclose(joint.T @ joint, 64 * np.eye(16), atol=1e-9)


def test_non_gaussian_weights_same_mean_rademacher_same_m2():
    """theory.md §8.7: the law depends on V, W_O only through their MP limits (Rademacher);
    the mean depends only on the variance (also orthogonal)."""
    dims = Dimensions(n=128, heads=4, d_k=16, d_v=16, d_o=64)
    res = {}
    for kind in ("gaussian", "rademacher", "orthogonal"):
        res[kind] = np.array([gram_moments(sample_objects(dims, 1.0, rng=rng(200 + s), model="ge",
                                                          value_weights=kind, output_weights=kind,
                                                          objects=("out",))["out"], 2)
                              for s in range(10)])
    g = res["gaussian"]
    for kind, cols in (("rademacher", [0, 1]), ("orthogonal", [0])):
        r = res[kind]
        se = np.sqrt(g.var(axis=0, ddof=1) / len(g) + r.var(axis=0, ddof=1) / len(r))[cols]
        assert np.all(np.abs(g.mean(axis=0)[cols] - r.mean(axis=0)[cols]) < 4 * se), kind


# ----------------------------------------------------------------- softmax against GE (theory.md §5, §7)

@lru_cache(maxsize=None)
def softmax_ge_distances(n):
    dims = Dimensions(n=n, heads=4, d_k=n // 8, d_v=n // 8, d_o=n // 2)
    out = {}
    for seed in range(3):
        sp = spectra(dims, 0.5, rng=rng(seed), models=("softmax", "ge", "ge2"),
                     objects=("single", "concat", "out"))
        for obj in ("single", "concat", "out"):
            for model in ("ge", "ge2"):
                out.setdefault((obj, model), []).append(relative_w1(sp["softmax", obj], sp[model, obj]))
    return {k: float(np.mean(v)) for k, v in out.items()}


def test_softmax_ge_distance_decreases_with_n():
    """Coupled softmax–GE relW1 over all n eigenvalues falls with n.

    β = 0.5, fixed ratios (theory.md §5.4).
    """
    small, large = softmax_ge_distances(96), softmax_ge_distances(192)
    for obj in ("concat", "out"):
        assert large[obj, "ge"] < 0.8 * small[obj, "ge"], (obj, small[obj, "ge"], large[obj, "ge"])
    assert large["concat", "ge"] < 0.035 and large["out", "ge"] < 0.05


def test_ge2_closes_the_single_head_gap():
    """theory.md §7 F1: keeping the exact second chaos removes most of the single-head gap."""
    for n in (96, 192):
        d = softmax_ge_distances(n)
        assert d["single", "ge2"] < 0.5 * d["single", "ge"], (n, d)


def test_relative_w1_matches_scipy():
    a, b = rng(0).gamma(2.0, size=100), rng(1).gamma(2.0, size=100)
    assert relative_w1(a, b) == pytest.approx(scipy.stats.wasserstein_distance(a, b) / b.mean(), rel=1e-12)
    c = rng(2).gamma(2.0, size=70)
    assert relative_w1(c, b) == pytest.approx(scipy.stats.wasserstein_distance(c, b) / b.mean(), rel=1e-12)


def test_key_norm_mean_is_the_softmax_row_mean():
    """theory.md §7 F2: given K, the column means of n A⊥ are ≈ μ with ‖μ‖² ≈ nβ⁴/(2 d_K).

    The second chaos (β²/2)(g² − 1) of GE2 has the same conditional mean; plain GE has none.
    """
    n, beta = 512, 1.0
    dims = Dimensions(n=n, heads=1, d_k=16, d_v=16, d_o=64)
    w = draw_weights(dims, rng=rng(0))
    mu = key_norm_mean(w.k, beta)[0]
    assert abs(mu.sum()) < 1e-9
    assert 0.6 < mu @ mu / (n * beta**4 / (2 * dims.d_k)) < 1.6
    col = {model: math.sqrt(n) * attention_matrices(w, beta, model=model, rng=rng(1))[0].mean(axis=0)
           for model in ("softmax", "ge", "ge2")}
    assert np.corrcoef(col["softmax"], mu)[0, 1] > 0.85
    assert np.corrcoef(col["ge2"], mu)[0, 1] > 0.85        # (β²/2)(g²−1) has conditional mean ≈ μ
    assert abs(np.corrcoef(col["ge"], mu)[0, 1]) < 0.2


@pytest.mark.parametrize("scheme,obj", [("independent", "concat"), ("shared_keys", "sum")])
def test_key_norm_term_restores_softmax_top_eigenvalue(scheme, obj):
    """theory.md §7 F2: plain GE misses the softmax outlier and GE + 1μᵀ/√n restores it.

    GE2 already has it, so adding the term to GE2 must not double it.
    """
    dims = Dimensions(n=512, heads=8, d_k=32, d_v=32, d_o=256, scheme=scheme)
    r = rng(0)
    w = draw_weights(dims, rng=r)
    top = {(m, kn): top_eigenvalue(sample_objects(dims, 1.0, rng=r, weights=w, model=m,
                                                  key_norm_term=kn, objects=(obj,))[obj])
           for m, kn in (("softmax", False), ("ge", False), ("ge", True), ("ge2", False), ("ge2", True))}
    sm = top["softmax", False]
    assert top["ge", False] < 0.8 * sm
    assert abs(top["ge", True] / sm - 1) < 0.12, top
    assert abs(top["ge2", False] / sm - 1) < 0.12, top
    assert abs(top["ge2", True] / top["ge2", False] - 1) < 0.12, top     # no double counting


# ----------------------------------------------------------------- spectra machinery

def test_gram_spectrum_smaller_side():
    f = rng(0).standard_normal((50, 7))
    ev = gram_spectrum(f)
    assert ev.shape == (50,) and np.all(np.diff(ev) >= 0) and np.all(ev[:43] == 0)
    np.testing.assert_allclose(ev, np.clip(np.linalg.eigvalsh(f @ f.T), 0, None), atol=1e-10)
    np.testing.assert_allclose(gram_spectrum(f.T)[-7:], ev[-7:], rtol=1e-12)
    assert top_eigenvalue(f) == pytest.approx(ev[-1], rel=1e-12)
    g = rng(1).standard_normal((300, 120))
    assert top_eigenvalue(g) == pytest.approx(np.linalg.eigvalsh(g.T @ g)[-1], rel=1e-11)  # Lanczos path
    np.testing.assert_allclose(gram_moments(g, 4), empirical_moments(gram_spectrum(g), 4), rtol=1e-10)


def test_blocked_heads_equal_one_block(monkeypatch):
    dims = Dimensions(n=40, heads=5, d_k=6, d_v=6, d_o=9)
    w = draw_weights(dims, rng=rng(0))
    def run():
        return {m: sample_objects(dims, 1.0, rng=rng(1), weights=w, model=m, objects=OBJECTS)
                for m in ("softmax", "ge2")}

    whole = run()
    monkeypatch.setattr(sampler_spectra, "_MAX_BLOCK_ELEMENTS", 2 * 40 * 40)        # blocks of 2 heads
    blocked = run()
    for m in whole:
        for name in OBJECTS:
            np.testing.assert_allclose(blocked[m][name], whole[m][name], rtol=1e-12, atol=1e-12)


def test_reproducible_and_coupled():
    dims = Dimensions(n=64, heads=4, d_k=8, d_v=8, d_o=32)
    a = spectra(dims, 0.7, rng=rng(9), models=("softmax", "ge"), objects=("out_full", "concat"))
    b = spectra(dims, 0.7, rng=rng(9), models=("softmax", "ge"), objects=("out_full", "concat"))
    c = spectra(dims, 0.7, rng=rng(9), models=("softmax",), objects=("out_full", "concat"))
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    np.testing.assert_array_equal(a["softmax", "concat"], c["softmax", "concat"])
    # coupled: both models share the common-row spike n|b|²; uncoupled draws do not
    assert abs(a["ge", "out_full"][-1] / a["softmax", "out_full"][-1] - 1) < 0.05
    gaps = []
    for seed in range(3):
        u = spectra(dims, 0.7, rng=rng(seed), models=("softmax", "ge"), objects=("out_full",), coupled=False)
        gaps.append(abs(u["ge", "out_full"][-1] / u["softmax", "out_full"][-1] - 1))
    assert max(gaps) > 0.1


def test_ge_constants():
    assert ge_constants(0.0) == (0.0, 0.0)
    t1, t2 = ge_constants(1.5)
    assert t1 == pytest.approx(math.exp(2.25) - 1, rel=1e-15) and t2 == 2.25
    # the GE2 noise variance θ1 − θ2 − β⁴/2 is computed without cancellation and stays ≥ 0
    for beta in (1e-4, 1e-2, 0.3, 1.0, 3.0):
        x = beta**2
        series = sum(x**k / math.factorial(k) for k in range(3, 40))
        assert sampler_spectra._noise_std(beta, "ge2") ** 2 == pytest.approx(series, rel=1e-12)
        assert sampler_spectra._noise_std(beta, "ge") ** 2 == pytest.approx(series + x**2 / 2, rel=1e-12)


def test_sampler_imports_only_numeric_stack():
    """The float64 layer (the freeprob.sampler package) must not import sympy, mpmath,
    python-flint or the exact modules: only numpy, scipy, the standard library, its own
    modules, freeprob.errors, the argument checks freeprob._checks and the layer class
    freeprob.attention.architecture (standard library only; docs/architecture.md)."""
    here = pathlib.Path(sampler.__file__).parent
    files = sorted(here.glob("*.py"))
    assert len(files) >= 5, files
    for path in files:
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                names.add(("." * node.level) + (node.module or "") if node.level else node.module)
        names = {n for n in names if not n.startswith("freeprob.sampler")}
        assert names <= {"__future__", "math", "numbers", "dataclasses", "fractions", "concurrent",
                         "concurrent.futures", "numpy", "scipy", "scipy.linalg", "scipy.sparse.linalg", "scipy.stats",
                         "freeprob.errors", "freeprob._checks", "freeprob._extras", "freeprob.attention.architecture"}, \
            (path.name, names)


# ----------------------------------------------------------------- bad input

def test_dimensions_properties():
    d = Dimensions(n=64, heads=4, d_k=8, d_v=16, d_o=32, scheme="gqa", kv_groups=2)
    assert (d.gamma_k, d.gamma_v, d.gamma_o, d.c_k, d.c_v, d.d) == (0.5, 1, 0.5, 0.125, 0.25, 64)
    assert type(d.gamma_k).__name__ == "Fraction"
    assert list(d.key_group_of_head()) == [0, 0, 1, 1]
    assert Dimensions(n=8, heads=4, d_k=2, d_v=2, d_o=2, scheme="shared_keys").key_groups == 1


@pytest.mark.parametrize("call,match", [
    (lambda: Dimensions(n=0, heads=1, d_k=1, d_v=1, d_o=1), "`n` of `Dimensions` must be a positive integer"),
    (lambda: Dimensions(n=8, heads=1.5, d_k=1, d_v=1, d_o=1), "`heads`"),
    (lambda: Dimensions(n=8, heads=True, d_k=1, d_v=1, d_o=1), "`heads`"),
    (lambda: Dimensions(n=8, d=4, heads=1, d_k=1, d_v=1, d_o=1), "d >= n|must be >= n"),
    (lambda: Dimensions(n=8, heads=2, d_k=1, d_v=1, d_o=1, scheme="mqa"), "one of"),
    (lambda: Dimensions(n=8, heads=4, d_k=1, d_v=1, d_o=1, scheme="gqa"), "required"),
    (lambda: Dimensions(n=8, heads=4, d_k=1, d_v=1, d_o=1, scheme="gqa", kv_groups=3), "divide"),
    (lambda: Dimensions(n=8, heads=4, d_k=1, d_v=1, d_o=1, kv_groups=2), "only used with scheme='gqa'"),
    (lambda: Dimensions(n=8, heads=4, d_k=2, d_v=3, d_o=1, scheme="tied"), "d_v == d_k"),
    (lambda: ge_constants(-0.1), "beta"),
    (lambda: ge_constants(float("nan")), "beta"),
    (lambda: ge_constants(float("inf")), "beta"),
    (lambda: ge_constants(27.0), "overflow"),
    (lambda: ge_constants("1"), "real number"),
    (lambda: draw_weights(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), rng=0), "Generator"),
    (lambda: draw_weights(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), rng=rng(0), input="x"), "input"),
    (lambda: draw_weights(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), rng=rng(0), value_weights="haar"),
     "value_weights"),
    (lambda: draw_weights(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1, scheme="tied"), rng=rng(0),
                          value_weights="orthogonal"), "tied"),
    (lambda: draw_weights((8, 1, 1, 1, 1), rng=rng(0)), "Dimensions"),
    (lambda: softmax_attention(np.ones((3, 2)), np.ones((3, 4)), 1.0), "d_k"),
    (lambda: softmax_attention(np.full((3, 2), np.nan), np.ones((3, 2)), 1.0), "finite"),
    (lambda: softmax_attention(np.ones((3, 2)), np.ones((3, 2)), -1.0), "beta"),
    (lambda: sample_objects(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), 1.0, rng=rng(0),
                            objects=("outs",)),
     "objects"),
    (lambda: sample_objects(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), 1.0, rng=rng(0), objects=()),
     "empty"),
    (lambda: sample_objects(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), 1.0, rng=rng(0), model="gauss"),
     "model"),
    (lambda: sample_objects(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), 1.0, rng=rng(0),
                            key_norm_term=True), "GE models only"),
    (lambda: sample_objects(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), 1.0, rng=rng(0),
                            weights=draw_weights(Dimensions(n=8, heads=1, d_k=2, d_v=1, d_o=1), rng=rng(0))),
     "drawn for"),
    (lambda: spectra(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), 1.0, rng=rng(0), coupled=False,
                     weights=draw_weights(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), rng=rng(0))),
     "coupled=True"),
    (lambda: attention_matrices(draw_weights(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), rng=rng(0)), 1.0,
                                model="ge"), "Generator"),
    (lambda: attention_matrices(draw_weights(Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), rng=rng(0)), 1.0,
                                heads=[3]), "heads"),
    (lambda: sampler.Weights(dims=Dimensions(n=8, heads=1, d_k=1, d_v=1, d_o=1), q=np.ones((1, 8, 2)),
                             k=np.ones((1, 8, 1)), v=np.ones((1, 8, 1)), w_o=np.ones((1, 1))), "shape"),
    (lambda: gram_spectrum(np.ones(5)), "2-d"),
    (lambda: gram_spectrum([[1.0, np.inf]]), "non-finite"),
    (lambda: top_eigenvalue(np.zeros((0, 3))), "non-empty"),
    (lambda: gram_moments(np.ones((3, 3)), 0), "order"),
    (lambda: empirical_moments([], 2), "non-empty"),
    (lambda: relative_w1([1.0], [0.0]), "positive mean"),
])
def test_bad_input(call, match):
    with pytest.raises(FreeprobValueError, match=match):
        call()
