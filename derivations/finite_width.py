"""Finite-width laws (issue 18; theory.md §7 F1–F3; freeprob/attention/finite_width.py).

Derivation.  Given the keys, row a of n A⊥ is f(q_a, k_b) = e^{β g_ab − β² r_a/2} − 1,
g = q·k/√d_K, r = |q|²/d_K (the softmax normaliser (1/n)Σ_c e^{βg_ac} ≈ E_k e^{βg} =
e^{β² r/2}).  Its Hermite expansion in g has chaos k of variance β^{2k}/k! (w_k), and the
covariance of chaos k across the columns b, c is w_k (k_b·k_c/d_K)^k: the Gram of the
degree-k symmetric tensors k_b^{⊗k}/d_K^{k/2}, of rank D_k = C(d_K + k − 1, k).

1. Chaos pieces (Lu & Yau 2022): the k-th Hadamard power, centred, behaves as a Wishart
   matrix MP(n/D_k), the pieces asymptotically free.  For k = 1 this is the GE's
   θ2 MP(1/c_K); for k ≥ 2 the GE uses white noise, right only if D_k ≫ n.
2. Norm factors: k_b^{⊗k} has squared norm s_b^k (s = |k_b|²/d_K ~ χ²/d_K), and row a
   carries r_a^k: a pure chaos is D_r^{1/2} W D_s^{1/2}, whose Gram law is
   ν_r ⊠ ν_s ⊠ (…); both factors go into ρ as one mean-one factor of variance
   ε_k = (1 + v_k)² − 1, v_k = m_{2k}/m_k² − 1 (m_k = E r^k), and MP(ε)⊠MP(λ) is
   replaced by MP(λ + ε) (same mean and variance, lower degree).  ε_1 = 0.
3. ρ^fw = ⊞_{k≤L} w_k MP(n/D_k + ε_k) + (θ1 − Σ_{k≤L} w_k); every object as in the limit
   with ρ_{c_K} → ρ^fw, then a row-norm factor ⊠ MP(v/h') (query norms shared by all
   chaoses of a row; heavy-tailed entries).

Routes compared:
* free cumulants of ρ^fw by hand (κ_j = Σ_k w_k^j λ_k^{j−1}) vs the engine, and the
  moments of single = π(ρ^fw, 1) ⊠ MP(v) by the non-crossing recursion and the ⊠
  variance rule vs the engine (exact, symbolic in β);
* the exact law's moments vs a sampled chaos-expanded model (the sampler's GE2: chaoses
  1 and 2 exact, with their true query/key norms, the rest white noise);
* the freeness hypothesis: the spectrum of the exact conditional covariance Σ given K
  (closed-form Gaussian integral over q: a sum of Hadamard powers of K Kᵀ/d_K, not free
  by construction) against the free sum law (one-sided norm factors, exact finite-d_K
  variances), and against the GE's ρ;
* the key-norm outlier (BBP-type equation of predicted_top_eigenvalue) vs the GE sampler
  with the rank-one key-norm term (theory.md §7 F2), concat and shared-key head sum.
"""
import _threads  # noqa: F401  (one BLAS thread; before numpy)

import numpy as np
import sympy as sp
from _common import show

from freeprob.attention import Architecture, attention_law
from freeprob.attention import finite_width as fw
from freeprob.attention import spikes
from freeprob.experiments.compare import TabulatedLaw, law_distances
from freeprob.laws.families import MarchenkoPastur
from freeprob.laws.operations import dilate, free_add, shift

beta = sp.Symbol("beta", positive=True)
n, d = 256, 16

# -- 1. the row covariance law, symbolic in β ----------------------------------------
arch_b = Architecture.from_dimensions(n=n, heads=1, d_k=d, d_v=d, d_o=d, beta=beta)
# the chaos structure with the limit total θ1 (variance="limit"); the default scales every piece
# by θ1^emp/θ1 (issue 29, freeprob.attention.normaliser), which needs a numeric β
rho = fw.finite_width_row_covariance_law(arch_b, levels=3, variance="limit")
w, rest = fw.chaos_weights(beta, d, 3)
lam = [sp.Rational(n) / fw.chaos_dimension(d, k) + fw.norm_factor_variance(d, k) for k in (1, 2, 3)]
show("chaos ranks D_k = C(d_K+k-1, k), d_K = 16", [fw.chaos_dimension(d, k) for k in (1, 2, 3)])
show("MP ratios n/D_k + eps_k, n = 256", lam)
kappa = rho.free_cumulants(5)
assert sp.simplify(kappa[1] - (sp.exp(beta**2) - 1)) == 0
for j in range(2, 6):
    assert sp.simplify(kappa[j] - sum(wk**j * lk**(j - 1) for wk, lk in zip(w, lam))) == 0
print("[ok] rho^fw: free cumulants k_1..k_5 = theta1, sum_k w_k^j lambda_k^(j-1) (symbolic beta)")

z = sp.Symbol("z")


def moments_from_cumulants(k, order):
    """Non-crossing recursion m_n = Σ_s κ_s [z^{n−s}] M(z)^s."""
    m = [sp.Integer(1)]
    for nn in range(1, order + 1):
        M = sum(m[i] * z**i for i in range(len(m)))
        m.append(sp.expand(sum(k[s] * sp.expand(M**s).coeff(z, nn - s) for s in range(1, nn + 1))))
    return m


arch = Architecture.from_dimensions(n=n, heads=1, d_k=d, d_v=d, d_o=d, beta=1)
rho1 = fw.finite_width_row_covariance_law(arch)
single0 = moments_from_cumulants(moments_from_cumulants(rho1.free_cumulants(4), 4), 4)
v = fw.row_factor_variance(arch)
law = attention_law(arch, finite_width=True)
m = law.moments(4)
assert sp.simplify(m[1] - single0[1]) == 0 and sp.simplify(m[2] - single0[2] - v * single0[1]**2) == 0
show("single head, n=256, d_K=16, beta=1: m1, m2 (finite width)", [sp.N(m[1], 8), sp.N(m[2], 8)])
show("row-factor variance tau = min(v, 1/2) (heavy tails at n = 256, beta = 1)", [sp.N(fw.row_norm_variance(arch), 8), sp.N(v, 8)])
print("[ok] single = pi(rho^fw, 1) ⊠ MP(v): m1, m2 by the non-crossing recursion and the ⊠ rule")
P = law.cauchy_equation()
print(f"[ok] single: algebraic Cauchy equation of degree {sp.Poly(P).degree(P.gens[0])} in G")

# -- 2. the chaos-expanded matrix model (GE2: chaoses 1 and 2 exact, the rest white) ------
from freeprob.sampler import Dimensions, spectra  # noqa: E402

rng = np.random.default_rng(18)
dims_s = Dimensions(n=n, heads=1, d_k=d, d_v=d, d_o=d)
samples = [spectra(dims_s, 1.0, rng=np.random.default_rng(18 + s), models=("ge2",), objects=("single",))["ge2", "single"]
           for s in range(8)]
emp = np.mean([[np.mean(e**k) for k in (1, 2, 3)] for e in samples], axis=0)
emp_n = emp / emp[0] ** np.arange(1, 4)
fin = [float(x) for x in single0[1:4]]
fin_n = np.array(fin) / fin[0] ** np.arange(1, 4)
ge_m = [float(x) for x in attention_law(arch).moments(3, dps=15)[1:4]]
ge_n = np.array(ge_m) / ge_m[0] ** np.arange(1, 4)
print(f"\nGE2 model (8 draws) normalised m2, m3: {np.round(emp_n[1:], 3)}; pi(rho^fw,1): {np.round(fin_n[1:], 3)}; "
      f"GE law: {np.round(ge_n[1:], 3)}")
assert np.all(np.abs(fin_n[1:] / emp_n[1:] - 1) < np.abs(ge_n[1:] / emp_n[1:] - 1))
assert np.all(np.abs(fin_n[1:] / emp_n[1:] - 1) < 0.05)
print("[ok] chaos-expanded model (exact 2nd chaos): the finite-width law's m2, m3 are closer than the GE law's")

# -- 3. the freeness hypothesis: exact Σ given K against the free sum ---------------------
b = 0.5
ev_sigma = []
for rep in range(3):
    K = rng.standard_normal((n, d))
    a = 1 + 2 * b * b / d
    S = K @ K.T
    nb = np.diag(S)
    C = a ** (-d / 2) * np.exp(b * b * (nb[:, None] + nb[None, :] + 2 * S) / (2 * d * a))
    mu = (1 + b * b / d) ** (-d / 2) * np.exp(b * b * nb / (2 * d * (1 + b * b / d)))
    cov = C - np.outer(mu, mu)                         # E_q[f f] − E_q f E_q f
    pc = np.eye(n) - 1.0 / n
    ev_sigma.append(np.linalg.eigvalsh(pc @ cov @ pc))
arch_h = Architecture.from_dimensions(n=n, heads=1, d_k=d, d_v=d, d_o=d, beta=sp.Rational(1, 2))
free_sum = fw.finite_width_row_covariance_law(arch_h, levels=3, rows=10**9, exact_variance=True)
ge_rho = shift(dilate(MarchenkoPastur(sp.Rational(n, d)), sp.Rational(1, 4)), sp.exp(sp.Rational(1, 4)) - sp.Rational(5, 4))
no_norm = shift(free_add(*[dilate(MarchenkoPastur(sp.Rational(n) / fw.chaos_dimension(d, k)),
                                  sp.Rational(1, 4) ** k / sp.factorial(k)) for k in (1, 2, 3)]),
                sp.exp(sp.Rational(1, 4)) - 1 - sum(sp.Rational(1, 4) ** k / sp.factorial(k) for k in (1, 2, 3)))
res = {}
for name, lw in (("GE rho", ge_rho), ("free chaos sum, no norm factors", no_norm),
                 ("free chaos sum with norm factors", free_sum)):
    tab = TabulatedLaw.from_law(lw, points=300)
    res[name] = np.mean([law_distances(e, tab)["relW1"] for e in ev_sigma])
    print(f"exact Sigma | K (n={n}, d_K={d}, beta=1/2) vs {name:34s}: relW1 {100 * res[name]:.2f} %")
assert res["free chaos sum with norm factors"] < 0.5 * res["GE rho"]
print("[ok] freeness hypothesis: the free sum of chaos Wisharts describes the exact conditional covariance")

# -- 4. the key-norm outlier vs the GE sampler with the rank-one term ----------------------

for obj, scheme in (("concat", "independent"), ("sum", "shared_keys")):
    kw = dict(n=256, heads=8, d_k=16, d_v=16, d_o=256, scheme=scheme)
    arch_o = Architecture.from_dimensions(beta=1, **kw)
    pred = spikes.predicted_top_eigenvalue(arch_o, obj, finite_width=False)
    tops = [spectra(Dimensions(**kw), 1.0, rng=np.random.default_rng(40 + s), models=("ge",), objects=(obj,),
                    key_norm_term=True)["ge", obj][-1] for s in range(3)]
    print(f"{obj} ({scheme}): GE + key-norm term top eig {np.mean(tops):.2f} ± {np.std(tops):.2f}, predicted {pred:.2f}, "
          f"theta^2 = {float(spikes.spike_strength(arch_o, obj)):.2f}")
    assert abs(pred / np.mean(tops) - 1) < 0.1, (pred, tops)
print("[ok] key-norm outlier: BBP-type equation vs GE sampler with the rank-one term")
