"""The head sum (1/h)(Σ_i M_i)(Σ_i M_i)ᵀ = ρ_γ ⊠ π_1, and how key sharing changes γ
(theory.md §3.2 "sum" rows, §3.3, §3.5; paper: the head-sum/structured-W_O comparison).

Derivation.  (Σ_i M_i)/√h has, given the keys, i.i.d. rows (queries and GE noise are
independent across heads) with covariance (1/h) Σ_i Σ_i/n: a sample-covariance Gram
with n samples in dimension n, hence π(ν, 1) = ν ⊠ π_1 with ν the law of
(1/h) Σ_i Σ_i = θ2 (1/h) Σ_i K_i K_iᵀ/d_K + s I.

* Independent keys: Σ_i K_i K_iᵀ = [K_1 … K_h][K_1 … K_h]ᵀ with h d_K = γ_K n key
  columns, so (1/h) Σ_i K_i K_iᵀ/d_K = K Kᵀ/(h d_K) ~ MP(1/γ_K): ν = ρ_{γ_K}.
  It depends on γ_K only, not on h: at fixed total key width the head split is invisible.
* One shared key matrix (MQA, shared_keys): all Σ_i are equal, ν = ρ_{c_K}, c_K = γ_K/h:
  exactly the single-head law π(ρ_{c_K}, 1).
* GQA with h_KV groups: h_KV distinct key matrices, each repeated h/h_KV times:
  (1/h) Σ_i K_i K_iᵀ/d_K = (1/h_KV) Σ_g K_g K_gᵀ/d_K ~ MP(1/(h_KV c_K)): ν = ρ_{h_KV c_K}.

Routes compared, for each case: moments to order 8 of head_sum_law (compound free
Poisson) vs ρ_γ ⊠ π_1 (free_mul) written with the ratio derived above; for the shared key
also vs attention_law; the Cauchy equation vs the single-head quartic with c_K → γ; the
h-independence of the independent-key law (no h in its moments; equal at h = 1, 2, 8).
"""
import sympy as sp
from _common import assert_same_equation, assert_same_moments, gamma_K, h, s, show, theta1, theta2

import freeprob as fp
from freeprob.attention import (Architecture, attention_law, head_sum_law, head_sum_ratio,
                                row_covariance_law)
from freeprob.core.symbols import G, z

ORDER = 8
h_KV = sp.Symbol("h_KV", positive=True, integer=True)
base = Architecture(heads=h, gamma_k=gamma_K, gamma_v=1, gamma_o=1)
c_K = gamma_K / h


def quartic(gamma):
    """theory.md §3.2: the single-head quartic with c_K → γ."""
    return sp.Poly(theta2 * s * z**2 * G**4 - theta2 * z**2 * G**3
                   - (gamma * theta1 - theta2) * z * G**2 + gamma * z * G - gamma, G, z)


cases = [
    ("independent keys", base, gamma_K),
    ("one shared key (shared_keys)", base.replace(scheme="shared_keys"), c_K),
    ("MQA (gqa, h_KV = 1)", base.replace(scheme="gqa", kv_groups=1), c_K),
    ("GQA with h_KV groups", base.replace(scheme="gqa", kv_groups=h_KV), h_KV * c_K),
]
laws = {}
for name, arch, gamma in cases:
    law = head_sum_law(arch)
    laws[name] = law
    assert sp.simplify(head_sum_ratio(arch) - gamma) == 0, f"{name}: ratio"
    m = law.moments(2)
    show(f"head sum, {name}: key ratio gamma and m2", [gamma, sp.expand(m[2])])
    assert sp.cancel(m[1] - theta1) == 0
    assert sp.cancel(m[2] - (2 * theta1**2 + theta2**2 / gamma)) == 0
    route2 = fp.free_mul(row_covariance_law(gamma, theta1, theta2), fp.FreePoisson(1))
    assert_same_moments(law, route2, ORDER, f"sum, {name}: head_sum_law vs ρ_γ ⊠ π_1")

# the shared-key sum is the single-head law
assert_same_moments(laws["one shared key (shared_keys)"], attention_law(base), ORDER,
                    "sum, one shared key vs the single-head law π(ρ_{c_K}, 1)")

# Cauchy equations: the quartic with c_K → γ (a rational point keeps this fast)
point = {theta1: sp.Rational(17, 10), theta2: 1, h: 4, gamma_K: sp.Rational(1, 2), h_KV: 2}
for name, arch, gamma in cases:
    P = laws[name].subs(point).cauchy_equation()
    assert_same_equation(P, sp.Poly(quartic(gamma).as_expr().subs(point), G, z),
                         f"sum, {name} (θ1=17/10, θ2=1, h=4, γ_K=1/2, h_KV=2): quartic with c_K → γ")
P = laws["independent keys"].cauchy_equation()
assert_same_equation(P, quartic(gamma_K), "sum, independent keys (symbolic): quartic with c_K → γ_K")

# h-independence of the independent-key law
ind = laws["independent keys"]
mom = ind.moments(ORDER)
assert all(h not in sp.cancel(mk).free_symbols for mk in mom)
for hh in (1, 2, 8):
    assert_same_moments(head_sum_law(base.replace(heads=hh)), ind, ORDER,
                        f"sum, independent keys: h = {hh} vs symbolic h")
print("[ok] sum, independent keys: the law depends on γ_K only (no h in m_1..m_8)")
show("m2 ratio, MQA sum / independent-key sum (beta = 1, h = 8, gamma_K = 1/2)",
     sp.N((laws["MQA (gqa, h_KV = 1)"].moments(2)[2] / ind.moments(2)[2])
          .subs({theta1: sp.E - 1, theta2: 1, h: 8, gamma_K: sp.Rational(1, 2)}), 5))
