"""Across-head sharing (GQA, MQA, one shared key matrix): concat, stack and out are
unchanged; the head sum is not (theory.md §3.5, §6; paper: "GQA/MQA sharing does not
change the law", and the head-sum comparison with structured W_O = [I; …; I]).

Derivation.  Queries and GE noise are independent across heads, so given (K, V, W_O) the
rows of the stacked features are i.i.d. with block-diagonal covariance ⊕_i B_{g(i)} (the
blocks repeat inside a group of heads that share K and V).  The spectral law of a
block-diagonal matrix is the average of its blocks' laws — a mixture — and a mixture of
copies of one law is that law, whether the copies are distinct matrices or the same one:

    law(⊕_i B_i) = (1/h) Σ_i μ_B = (1/h_KV) Σ_g μ_B = μ_B.

stack = π(law(⊕ B), γ_V) and, W_O being Gaussian and independent, out = π(μ_VO, γ_O) with
μ_VO = t⁻¹ π(law(⊕ B), t), t = γ_V/γ_O: both depend on the blocks only through that law.
Likewise concat (blocks Σ_i).

The head sum adds the blocks instead of stacking them: its row covariance is
(1/h) Σ_i Σ_i = s + θ2 (1/h) Σ_i K_i K_iᵀ/d_K.  Independent key matrices are asymptotically
free, so (1/h) Σ_i K_i K_iᵀ/d_K = ⊞_{i=1}^{h} (1/h) MP(1/c_K) = MP(1/γ_K); a key shared by
a group of h/h_KV heads contributes h/h_KV identical terms, so with h_KV groups the sum is
⊞_{g=1}^{h_KV} (1/h_KV) MP(1/c_K) = MP(1/(h_KV c_K)): the ratio changes γ_K → h_KV c_K.

Routes compared: stack/out built by hand from fp.mixture (identical laws, and groups) vs
the engine's laws for every scheme (moments to order 8); the head-sum row covariance by
free_power (⊞ over groups) vs ρ_{h_KV c_K}, and the head-sum law from it vs head_sum_law;
a GE sampler check at n = 256 (MQA vs independent keys: out agrees, the head sum does not).
"""
import _threads  # noqa: F401  (one BLAS thread; before numpy)
import numpy as np
import sympy as sp
from _common import assert_same_moments, gamma_K, gamma_O, gamma_V, h, s, show, theta1, theta2

import freeprob as fp
from freeprob import sampler
from freeprob.attention import (Architecture, concatenated_attention_law, head_sum_law,
                                output_law, row_covariance_law, stacked_output_law,
                                value_covariance_law)

ORDER = 8
h_KV = sp.Symbol("h_KV", positive=True, integer=True)

# --- the block-diagonal law is the mixture of the blocks' laws ---------------------------
H = 4                                                   # a concrete head count for the mixtures
arch = Architecture(heads=H, gamma_k=gamma_K, gamma_v=gamma_V, gamma_o=gamma_O)
mu_B = value_covariance_law(arch)
blocks = {
    "independent (4 distinct blocks)": fp.mixture([mu_B] * 4),
    "GQA, 2 groups (2 blocks, each twice)": fp.mixture([fp.mixture([mu_B] * 2)] * 2),
    "MQA (one block, 4 times)": fp.mixture([mu_B]),
}
for name, law in blocks.items():
    assert_same_moments(law, mu_B, ORDER, f"law of ⊕ B, {name}, vs μ_B")

t = gamma_V / gamma_O
schemes = {"independent": arch, "gqa(2)": arch.replace(scheme="gqa", kv_groups=2),
           "mqa": arch.replace(scheme="gqa", kv_groups=1),
           "shared_keys": arch.replace(scheme="shared_keys")}
for (bname, law), (sname, a) in zip(blocks.items(), list(schemes.items())[:3]):
    stack_hand = fp.CompoundFreePoisson(gamma_V, law)
    out_hand = fp.CompoundFreePoisson(gamma_O, fp.dilate(fp.CompoundFreePoisson(t, law), 1 / t))
    assert_same_moments(stack_hand, stacked_output_law(a), ORDER,
                        f"stack from the mixture [{bname}] vs stacked_output_law({sname})")
    assert_same_moments(out_hand, output_law(a), ORDER,
                        f"out from the mixture [{bname}] vs output_law({sname})")

# every scheme, symbolic h and h_KV: the engine's concat and out coincide with independent
# heads (stack was checked through the mixtures above)
archs = Architecture(heads=h, gamma_k=gamma_K, gamma_v=gamma_V, gamma_o=gamma_O)
point = {theta1: sp.Rational(17, 10), theta2: 1}         # rational θ's keep `out` fast
for sname, a in [("gqa(h_KV)", archs.replace(scheme="gqa", kv_groups=h_KV)),
                 ("mqa", archs.replace(scheme="gqa", kv_groups=1)),
                 ("shared_keys", archs.replace(scheme="shared_keys"))]:
    assert_same_moments(concatenated_attention_law(a), concatenated_attention_law(archs), ORDER,
                        f"concat: {sname} vs independent heads")
    assert_same_moments(output_law(a).subs(point), output_law(archs).subs(point), ORDER,
                        f"out (θ1 = 17/10, θ2 = 1): {sname} vs independent heads")

# --- the head sum: ⊞ over independent groups, repetition within a group ---------------------
c_K = gamma_K / h
mp_group = fp.dilate(fp.MarchenkoPastur(1 / c_K), 1 / h_KV)      # (1/h_KV) K_g K_gᵀ/d_K
nu = fp.shift(fp.dilate(fp.free_power(mp_group, h_KV), theta2), s)
assert_same_moments(nu, row_covariance_law(h_KV * c_K, theta1, theta2), ORDER,
                    "head-sum row covariance: s + θ2 ⊞_(h_KV) (1/h_KV) MP(1/c_K) vs ρ_(h_KV c_K)")
gqa = archs.replace(scheme="gqa", kv_groups=h_KV)
assert_same_moments(fp.CompoundFreePoisson(1, nu), head_sum_law(gqa), ORDER,
                    "head sum, GQA(h_KV): π(ν, 1) vs head_sum_law")
ind_free = fp.shift(fp.dilate(fp.free_power(fp.dilate(fp.MarchenkoPastur(1 / c_K), 1 / h), h),
                              theta2), s)
assert_same_moments(fp.CompoundFreePoisson(1, ind_free), head_sum_law(archs), ORDER,
                    "head sum, independent keys: π(s + θ2 ⊞_h (1/h) MP(1/c_K), 1) vs head_sum_law")
dm2 = sp.factor(head_sum_law(gqa).moments(2)[2] - head_sum_law(archs).moments(2)[2])
show("m2(sum, GQA h_KV) - m2(sum, independent)", dm2)
assert sp.cancel(dm2 - theta2**2 * (h / h_KV - 1) / gamma_K) == 0
print("[ok] head sum: sharing changes the law, m2 grows by θ2²(h/h_KV − 1)/γ_K")

# --- sampler check (GE model, n = 256, β = 1) ------------------------------------------------
n, heads, d_k, d_v, d_o, beta, seeds = 256, 4, 32, 32, 128, 1.0, range(4)
emp = {}
for scheme, kv in [("independent", None), ("gqa", 1)]:
    dims = sampler.Dimensions(n=n, heads=heads, d_k=d_k, d_v=d_v, d_o=d_o, scheme=scheme,
                              kv_groups=kv)
    runs = [sampler.spectra(dims, beta, rng=np.random.default_rng(seed), models=("ge",),
                            objects=("out", "sum")) for seed in seeds]
    for obj in ("out", "sum"):
        emp[scheme, obj] = np.mean([sampler.empirical_moments(r["ge", obj], 2) for r in runs], axis=0)
num = Architecture.from_dimensions(n=n, heads=heads, d_k=d_k, d_v=d_v, d_o=d_o, beta=1)
mqa = Architecture.from_dimensions(n=n, heads=heads, d_k=d_k, d_v=d_v, d_o=d_o, beta=1,
                                   scheme="gqa", kv_groups=1)
law_m = {("independent", "out"): output_law(num), ("gqa", "out"): output_law(mqa),
         ("independent", "sum"): head_sum_law(num), ("gqa", "sum"): head_sum_law(mqa)}
law_m = {k: [float(x) for x in v.moments(2)[1:]] for k, v in law_m.items()}
print(f"\n== GE sampler, n = {n}, h = {heads}, d_K = d_V = {d_k}, d_O = {d_o}, beta = 1, "
      f"{len(seeds)} seeds: (m1, m2) sampled | law")
for key in emp:
    print(f"   {key[0]:>11} {key[1]:>3}: ({emp[key][0]:.4f}, {emp[key][1]:.4f}) | "
          f"({law_m[key][0]:.4f}, {law_m[key][1]:.4f})")
rel = lambda p, q: abs(p / q - 1)                                 # noqa: E731
for j, tol in ((0, 0.03), (1, 0.08)):
    assert rel(emp["gqa", "out"][j], emp["independent", "out"][j]) < tol
    for key in emp:
        assert rel(emp[key][j], law_m[key][j]) < tol, (key, j)
ratio = emp["gqa", "sum"][1] / emp["independent", "sum"][1]
print(f"   m2(sum) MQA / independent: sampled {ratio:.3f}, law "
      f"{law_m['gqa', 'sum'][1] / law_m['independent', 'sum'][1]:.3f}")
assert ratio > 1.5
print("[ok] sampler: MQA and independent `out` agree with each other and the law (m1 to 3 %, "
      "m2 to 8 %); the head sum's m2 changes with sharing as its law predicts")
