"""The stacked head outputs Σ_i H_i H_iᵀ = π(μ_B, γ_V) = ρ_{γ_K} ⊠ MP(1/h) ⊠ π_{γ_V}
(theory.md §3.2 "stack", §3.3; paper: "ν_{∞,h} ⊠ π_{γ_V}" with ν_{∞,h} = ρ_{γ_K} ⊠ MP(1/h)).

Derivation.  Given (K, V), the rows of √n [H_1, …, H_h] are i.i.d. Gaussian (queries and
noise are independent across heads) with block-diagonal covariance B_⊕ = ⊕_i B_i,
B_i = V_iᵀ Σ_i V_i/n.  The law of a block-diagonal matrix is the average of its blocks'
laws, here μ_B for every block; so the Gram (n samples, dimension h d_V = γ_V n) has law
π(μ_B, γ_V).  With μ_B = c_V π(ρ_{c_K}, 1/c_V) (head_output.py) the S-transform is

    S(u) = S_{μ_B}(u/γ_V)/(γ_V + u),   S_{μ_B}(v) = F(v c_V/c_K)/(1 + c_V v)

(the second from S_{π(ρ,t)}(v) = S_ρ(v/t)/(t + v) at t = 1/c_V, then the dilation by c_V).
Since c_V/γ_V = 1/h and h c_K = γ_K, S(u) = F(u/γ_K)/((1 + u/h)(γ_V + u)):
the product S_{ρ_{γ_K}} S_{MP(1/h)} S_{π_{γ_V}}.  This is (M) with γ = γ_K,
Π = (1 + u/h)(γ_V + u).

Routes compared: moments to order 8 of stacked_output_law (compound free Poisson over
μ_B) vs ρ_{γ_K} ⊠ MP(1/h) ⊠ π_{γ_V} (free_mul), symbolic in θ1, θ2, h, γ_K, γ_V; m1, m2 vs
theory.md §3.3; the S-series of μ_B vs F(v c_V/c_K)/(1 + c_V v); the Cauchy equation vs (M)
at a rational point of (θ1, θ2) with h, γ_K, γ_V symbolic.
"""
import sympy as sp
from _common import (assert_same_equation, assert_same_moments, gamma_K, gamma_V, h, s, show,
                     theta1, theta2)

import freeprob as fp
from freeprob.attention import (Architecture, row_covariance_law, stacked_output_law,
                                value_covariance_law)
from freeprob.core.symbols import G, z

ORDER = 8
arch = Architecture(heads=h, gamma_k=gamma_K, gamma_v=gamma_V, gamma_o=1)
c_K, c_V = gamma_K / h, gamma_V / h

# route 1: π(μ_B, γ_V)
stack = stacked_output_law(arch)
# route 2: the paper's ν_{∞,h} ⊠ π_{γV}
nu = fp.free_mul(row_covariance_law(gamma_K, theta1, theta2), fp.MarchenkoPastur(1 / h))
assert_same_moments(stack, fp.free_mul(nu, fp.FreePoisson(gamma_V)), ORDER,
                    "stack: π(μ_B, γ_V) vs ρ_{γK} ⊠ MP(1/h) ⊠ π_{γV}")

m = stack.moments(2)
show("m1 of stack", sp.factor(m[1]))
show("m2 of stack", sp.collect(sp.expand(m[2]), [theta1, theta2]))
assert sp.cancel(m[1] - gamma_V * theta1) == 0
assert sp.cancel(m[2] - (gamma_V**2 * theta1**2 * (1 + 1 / h + 1 / gamma_V)
                         + gamma_V**2 * theta2**2 / gamma_K)) == 0
print("[ok] stack: m1 = γ_V θ1, m2 = γ_V²θ1²(1 + 1/h + 1/γ_V) + γ_V²θ2²/γ_K (theory.md §3.3)")
var_hat = sp.cancel(m[2] / m[1] ** 2 - 1)
show("normalised variance of stack", sp.apart(var_hat.subs(theta2, theta1 * sp.Symbol("kappa")), h))

# the S-transform of μ_B: F(v c_V/c_K)/(1 + c_V v), F the Lemma's branch (row_covariance.py)
v_ = sp.Symbol("v")
f = [1 / theta1]
for k in range(1, ORDER):
    f.append(sp.cancel((s * theta2 * sum(f[i] * f[k - 1 - i] for i in range(k))
                        - theta2 * f[k - 1]) / theta1))
# coefficients of F(v c_V/c_K) · Σ_j (−c_V v)^j
target = sum(f[i] * (c_V / c_K) ** i * (-c_V) ** (k - i) * v_**k
             for k in range(ORDER) for i in range(k + 1))
target = sp.expand(target)
S_B = value_covariance_law(arch).s_series(ORDER).coefficients()
for k in range(ORDER):
    assert sp.cancel(S_B[k] - target.coeff(v_, k)) == 0, f"S_mu_B: u^{k} differs"
print(f"[ok] mu_B: S(v) = F(v c_V/c_K)/(1 + c_V v) to order {ORDER}")

# the Cauchy equation vs (M), γ = γ_K, Π = (1 + u/h)(γ_V + u); θ's rational for speed
point = {theta1: sp.Rational(17, 10), theta2: 1}
P = stack.subs(point).cauchy_equation()
U = sp.Symbol("u")
Pi = (1 + U / h) * (gamma_V + U)
M_u = s * theta2 * G**2 * Pi**2 - (gamma_K * theta1 + theta2 * U) * G * Pi + gamma_K * U
show("Cauchy equation of stack, u = zG - 1", sp.Eq(M_u, 0))
M = sp.numer(sp.together(M_u.subs(U, z * G - 1).subs(point)))
assert_same_equation(P, sp.Poly(M, G, z), "stack (θ1 = 17/10, θ2 = 1): engine vs (M)")
