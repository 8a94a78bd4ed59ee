"""The concatenated attention of h heads, h⁻¹ π(ρ_{c_K}, h) = ρ_{γ_K} ⊠ MP(1/h)
(theory.md §3.1 Corollary, §3.2 "concat", §3.3, §6; paper: the attention law
"ρ_{γ_K} ⊠ MP_{1/h}" and "more heads at fixed total width concentrate the bulk").

Derivation.  [M_1, …, M_h]/√h has, given all keys, i.i.d. rows whose covariance is block
diagonal, (1/h) ⊕_i Σ_i/n: a sample-covariance Gram with n samples in dimension h n.  The
feature-side covariance has law ρ_{c_K} (each block, and hence their average, theory.md
§3.5), so the Gram is h⁻¹ π(ρ_{c_K}, h) (rate h = hn/n, scaled by 1/h).  By the S-transform
of a compound free Poisson law and the Lemma S_{ρ_c}(u) = F(u/c),

    S(u) = h · F(u/(h c_K))/(h + u) = F(u/γ_K)/(1 + u/h) = S_{ρ_{γ_K}}(u) S_{MP(1/h)}(u).

Hence the master equation (M) with γ = γ_K, Π = 1 + u/h.  The normalised variance
m2/m1² − 1 = 1/h + κ²/γ_K (κ = θ2/θ1) decreases in h towards κ²/γ_K > 0: splitting the
key width over more heads cannot remove the spread due to the finite key rank.

Routes compared: moments to order 8 (compound free Poisson vs free_mul); m1..m4 vs the
closed forms of theory.md §3.3; the engine's Cauchy equation vs (M).
"""
import sympy as sp
from _common import (assert_same_equation, assert_same_moments, gamma_K, h, s, show, theta1,
                     theta2)

import freeprob as fp
from freeprob.attention import Architecture, concatenated_attention_law, row_covariance_law
from freeprob.core.symbols import G, z

arch = Architecture(heads=h, gamma_k=gamma_K, gamma_v=1, gamma_o=1)

# route 1: compound free Poisson (rate h) of the per-head row covariance, scaled by 1/h
concat = concatenated_attention_law(arch)
show("free cumulants of concat, k = 1..3 (= h^(1-k) m_k(rho_{c_K}))",
     [sp.factor(k) for k in concat.free_cumulants(3)[1:]])

# route 2: ρ_{γK} ⊠ MP(1/h)
rho = row_covariance_law(gamma_K, theta1, theta2)
assert_same_moments(concat, fp.free_mul(rho, fp.MarchenkoPastur(1 / h)), 8,
                    "concat: h⁻¹ π(ρ_{c_K}, h) vs ρ_{γK} ⊠ MP(1/h)")

# closed forms m1..m4 (theory.md §3.3)
m = concat.moments(4)
g = gamma_K
closed = [1, theta1,
          theta1**2 * (1 + 1 / h) + theta2**2 / g,
          theta1**3 * (h**2 + 3 * h + 1) / h**2 + 3 * theta1 * theta2**2 * (h + 1) / (h * g)
          + theta2**3 / g**2,
          theta1**4 * (h + 1) * (h**2 + 5 * h + 1) / h**3
          + 2 * theta1**2 * theta2**2 * (3 * h**2 + 8 * h + 3) / (h**2 * g)
          + 4 * theta1 * theta2**3 * (h + 1) / (h * g**2)
          + theta2**4 * (2 * g * h + 2 * g + h) / (h * g**3)]
for k in range(1, 5):
    show(f"m{k} of concat", sp.collect(sp.expand(m[k]), [theta1, theta2]))
    assert sp.cancel(m[k] - closed[k]) == 0, f"concat: m{k} differs from theory.md §3.3"
print("[ok] concat: m1..m4 equal the closed forms of theory.md §3.3")

# the normalised variance and its dependence on h
kappa = sp.Symbol("kappa", positive=True)
var_hat = sp.cancel(m[2] / m[1] ** 2 - 1)
var_kappa = sp.cancel(var_hat.subs(theta2, kappa * theta1))
show("normalised variance of concat (theta2 = kappa theta1)", sp.apart(var_kappa, h))
assert sp.cancel(var_kappa - (1 / h + kappa**2 / gamma_K)) == 0
print("[ok] concat: m2/m1² − 1 = 1/h + κ²/γ_K (β enters only through κ)")
d_var = sp.simplify(sp.diff(var_kappa, h))
show("d/dh of the normalised variance", d_var)
assert sp.simplify(d_var + 1 / h**2) == 0 and d_var.is_negative is True
lim = sp.limit(var_kappa, h, sp.oo)
show("limit h -> oo at fixed gamma_K", lim)
assert sp.simplify(lim - kappa**2 / gamma_K) == 0
print("[ok] concat: the normalised variance decreases in h (derivative −1/h²) to κ²/γ_K")
at_gamma_half = [sp.N(var_kappa.subs({gamma_K: sp.Rational(1, 2),
                                      kappa: 1 / (sp.E - 1)}).subs(h, hh), 4)
                 for hh in (1, 2, 4, 8, 16, 32)]
show("normalised variance at beta = 1, gamma_K = 1/2, h = 1, 2, 4, 8, 16, 32 (theory.md §6)",
     at_gamma_half)
assert [round(float(x), 3) for x in at_gamma_half] == [1.677, 1.177, 0.927, 0.802, 0.740, 0.709]
print("[ok] concat: the theory column of theory.md §6 (1.677 … 0.709) is reproduced")

# the Cauchy equation: engine vs (M) with γ = γ_K, Π = 1 + u/h
P = concat.cauchy_equation()
U = sp.Symbol("u")
Pi = 1 + U / h
M_u = s * theta2 * G**2 * Pi**2 - (gamma_K * theta1 + theta2 * U) * G * Pi + gamma_K * U
show("Cauchy equation of concat, u = zG - 1", sp.Eq(M_u, 0))
M = sp.numer(sp.together(M_u.subs(U, z * G - 1)))
assert_same_equation(P, sp.Poly(M, G, z), "concat: engine vs master equation (M), Π = 1 + u/h")
