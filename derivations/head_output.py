"""One head's output H_1 H_1ᵀ, H_1 = A_1⊥ V_1: π(μ_B, c_V) = ρ_{c_K} ⊠ π_1 ⊠ π_{c_V}
(theory.md §3.1 "value law μ_B", §3.2 "head_out", §3.3; paper: the per-head value stage).

Derivation.  Given (K_1, V_1), the rows of √n H_1 = M_1 V_1 are i.i.d. Gaussian with
covariance B = V_1ᵀ Σ_1 V_1 / n (d_V × d_V): H_1 H_1ᵀ is a sample-covariance Gram with n
samples in dimension d_V = c_V n, so its law is π(μ_B, c_V), μ_B the law of B.
B itself is a sample covariance "on the other side": V_1ᵀ Σ_1 V_1/n = (c_V) · (GᵀΣG/d_V)
with G = V_1 ∈ R^{n×d_V}, i.e. μ_B = c_V π(ρ_{c_K}, 1/c_V) — free cumulants

    κ_k(μ_B) = c_V^{k−1} m_k(ρ_{c_K}).

S-transforms: S_{π(ν,t)}(u) = S_ν(u/t)/(t + u) twice gives
S(u) = F(u/c_K)/((1 + u)(c_V + u)) = S_{ρ_{c_K}} S_{π_1} S_{π_{c_V}} (π_t: S = 1/(t + u)).
The Gram has rank d_V: an atom 1 − c_V at 0 when c_V < 1.

Routes compared: μ_B moments (engine: dilate ∘ compound free Poisson) vs the free
cumulants c_V^{k−1} m_k(ρ_{c_K}) turned into moments by hand (fp.free_cumulants_to_moments)
to order 8; head_out moments (π(μ_B, c_V)) vs ρ_{c_K} ⊠ π_1 ⊠ π_{c_V} (free_mul) to order 8;
m1, m2 vs theory.md §3.3 (m3, m4 printed); the Cauchy equation vs (M) with γ = c_K,
Π = (1 + u)(c_V + u); the atom 1 − c_V at a rational point.
"""
import sympy as sp
from _common import assert_same_equation, assert_same_moments, s, show, theta1, theta2

import freeprob as fp
from freeprob.attention import (Architecture, head_output_law, row_covariance_law,
                                value_covariance_law)
from freeprob.core.symbols import G, z

ORDER = 8
c_K, c_V = sp.symbols("c_K c_V", positive=True)
arch = Architecture(heads=1, gamma_k=c_K, gamma_v=c_V, gamma_o=1)   # one head: c_K, c_V only
rho = row_covariance_law(c_K, theta1, theta2)

# μ_B: engine vs free cumulants c_V^{k−1} m_k(ρ_{c_K}) by hand (sequences start at order 0)
mu_B = value_covariance_law(arch)
m_rho = rho.moments(ORDER)
kappa_B = [0] + [c_V ** (k - 1) * m_rho[k] for k in range(1, ORDER + 1)]
m_B = fp.free_cumulants_to_moments(kappa_B)
engine_B = mu_B.moments(ORDER)
for k in range(ORDER + 1):
    assert sp.cancel(engine_B[k] - m_B[k]) == 0, f"mu_B: m_{k} differs"
print(f"[ok] mu_B: moments m_0..m_{ORDER} = moments of the free cumulants c_V^(k−1) m_k(ρ_{{c_K}})")
show("m1, m2 of mu_B", [sp.expand(engine_B[1]), sp.expand(engine_B[2])])
assert sp.cancel(engine_B[2] - (theta1**2 * (1 + c_V) + c_V * theta2**2 / c_K)) == 0
print("[ok] mu_B: m2 = θ1²(1 + c_V) + c_V θ2²/c_K  (theory.md §3.3)")

# head_out: π(μ_B, c_V) vs ρ_{c_K} ⊠ π_1 ⊠ π_{c_V}
head_out = head_output_law(arch)
route2 = fp.free_mul(rho, fp.FreePoisson(1), fp.FreePoisson(c_V))
assert_same_moments(head_out, route2, ORDER, "head_out: π(μ_B, c_V) vs ρ_{c_K} ⊠ π_1 ⊠ π_{c_V}")
m = head_out.moments(4)
for k in range(1, 5):
    show(f"m{k} of head_out", sp.collect(sp.expand(m[k]), [theta1, theta2]))
assert sp.cancel(m[1] - c_V * theta1) == 0
assert sp.cancel(m[2] - (theta1**2 * (2 * c_V**2 + c_V) + c_V**2 * theta2**2 / c_K)) == 0
print("[ok] head_out: m1 = c_V θ1, m2 = θ1²(2c_V² + c_V) + c_V² θ2²/c_K  (theory.md §3.3)")

# the Cauchy equation vs (M) with γ = c_K, Π = (1 + u)(c_V + u)
P = head_out.cauchy_equation()
U = sp.Symbol("u")
Pi = (1 + U) * (c_V + U)
M_u = s * theta2 * G**2 * Pi**2 - (c_K * theta1 + theta2 * U) * G * Pi + c_K * U
show("Cauchy equation of head_out, u = zG - 1", sp.Eq(M_u, 0))
M = sp.numer(sp.together(M_u.subs(U, z * G - 1)))
assert_same_equation(P, sp.Poly(M, G, z), "head_out: engine vs master equation (M)")

# the atom 1 − c_V at 0, at a rational point
point = {theta1: sp.Rational(17, 10), theta2: 1, c_K: 1, c_V: sp.Rational(1, 2)}
atoms = dict(head_out.subs(point).atoms(dps=20))
show("atoms of head_out at theta = (17/10, 1), c_K = 1, c_V = 1/2", atoms)
assert set(atoms) == {0} and abs(atoms[0] - sp.Rational(1, 2)) < 1e-18
print("[ok] head_out: zero atom 1 − c_V = 1/2")
