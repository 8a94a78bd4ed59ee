"""The centred attention law of one head, π(ρ_{c_K}, 1) = ρ_{c_K} ⊠ π_1
(theory.md §3.2 "single", §3.3; paper: the single-head GE attention law).

Derivation.  M_1 = √n A_1⊥ has, given the keys, i.i.d. rows with covariance Σ/n, Σ of
law ρ_{c_K} (row_covariance.py).  So M_1 M_1ᵀ is a sample-covariance Gram with n samples in
dimension n: its law is the compound free Poisson law π(ρ_{c_K}, 1) (free cumulants
κ_k = m_k(ρ_{c_K})).  With S_{π(ν,t)}(u) = S_ν(u/t)/(t + u) at t = 1 this is
S_{ρ_{c_K}}(u) · S_{π_1}(u), i.e. ρ_{c_K} ⊠ π_1 (π_1 = MP(1), S = 1/(1 + u)).

Cauchy equation.  S(u) = F(u/c_K)/(1 + u) and G = u S(u), u = zG − 1, give the master
equation (M) with γ = c_K, Π = 1 + u; cleared of u it is the quartic of theory.md §3.2:

    θ2(θ1−θ2) z² G⁴ − θ2 z² G³ − (c_K θ1 − θ2) z G² + c_K z G − c_K = 0.

Routes compared: moments to order 8 (compound free Poisson vs free_mul); the engine's
Cauchy equation (resultant elimination) vs the quartic; m1..m4 vs the closed forms of
theory.md §3.3 (free cumulants → moments by the non-crossing recursion).
"""
import sympy as sp
from _common import assert_same_equation, assert_same_moments, s, show, theta1, theta2

import freeprob as fp
from freeprob.attention import Architecture, attention_law, row_covariance_law
from freeprob.core.symbols import G, z

c_K = sp.Symbol("c_K", positive=True)
arch = Architecture(heads=1, gamma_k=c_K, gamma_v=1, gamma_o=1)   # the law depends on c_K only

# route 1: compound free Poisson with jump law ρ_{c_K}
single = attention_law(arch)
show("free cumulants of single, k = 1..3 (= moments of rho_{c_K})",
     [sp.expand(k) for k in single.free_cumulants(3)[1:]])

# route 2: S-transform product ρ_{c_K} ⊠ π_1
rho = row_covariance_law(c_K, theta1, theta2)
assert_same_moments(single, fp.free_mul(rho, fp.FreePoisson(1)), 8,
                    "single: π(ρ_{c_K}, 1) vs ρ_{c_K} ⊠ π_1")

# closed forms m1..m4 (theory.md §3.3)
m = single.moments(4)
closed = [1, theta1, 2 * theta1**2 + theta2**2 / c_K,
          5 * theta1**3 + 6 * theta1 * theta2**2 / c_K + theta2**3 / c_K**2,
          14 * theta1**4 + 28 * theta1**2 * theta2**2 / c_K + 8 * theta1 * theta2**3 / c_K**2
          + theta2**4 * (4 / c_K**2 + 1 / c_K**3)]
for k in range(1, 5):
    show(f"m{k} of single", sp.expand(m[k]))
    assert sp.cancel(m[k] - closed[k]) == 0, f"single: m{k} differs from theory.md §3.3"
print("[ok] single: m1..m4 equal the closed forms of theory.md §3.3")

# the Cauchy equation: engine vs the explicit quartic, and vs (M) with Π = 1 + u
P = single.cauchy_equation()
quartic = (theta2 * s * z**2 * G**4 - theta2 * z**2 * G**3 - (c_K * theta1 - theta2) * z * G**2
           + c_K * z * G - c_K)
show("Cauchy equation of single (theory.md §3.2 quartic)", sp.Eq(quartic, 0))
assert_same_equation(P, sp.Poly(quartic, G, z), "single: engine vs the explicit quartic")
U = sp.Symbol("u")
M_u = s * theta2 * G**2 * (1 + U) ** 2 - (c_K * theta1 + theta2 * U) * G * (1 + U) + c_K * U
M = sp.numer(sp.together(M_u.subs(U, z * G - 1)))
assert_same_equation(P, sp.Poly(M, G, z), "single: engine vs master equation (M), Π = 1 + u")
