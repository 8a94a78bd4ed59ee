"""The centred multi-head output law π(μ_VO, γ_O) (theory.md §2 item 4, §3.2 "out").

Derivation.  Given (K, V, W_O) the rows of √n·O are i.i.d. Gaussian with covariance
C = W_Oᵀ B_⊕ W_O (B_⊕ = ⊕_i V_iᵀ Σ_i V_i / n, Σ_i the head's row covariance), so O Oᵀ is a
sample-covariance Gram: its law is the compound free Poisson law π(μ_VO, γ_O).  Each
stage is again a compound free Poisson step:

    ρ_{c_K} = θ2 MP(1/c_K) + (θ1 − θ2)            row covariance of a head
    μ_B     = c_V π(ρ_{c_K}, 1/c_V)                 V_iᵀ Σ_i V_i / n   (d_V-space)
    μ_VO    = t⁻¹ π(μ_B, t),  t = γ_V/γ_O           W_Oᵀ B_⊕ W_O       (d_O-space)
    out     = π(μ_VO, γ_O)                          O Oᵀ               (n-space)

Second route: the S-transform product ρ_{γ_K} ⊠ MP(1/h) ⊠ MP(1/γ_V) ⊠ π_{γ_O} (free_mul,
S_{μ⊠ν} = S_μ S_ν), and the master Cauchy equation (M) of theory.md §3.2 with
Π(u) = (1 + u/h)(1 + u/γ_V)(γ_O + u).
"""
import sympy as sp
from _common import (assert_same_equation, assert_same_moments, gamma_K, gamma_O, gamma_V,
                     h, s, show, theta1, theta2)

import freeprob as fp
from freeprob.attention import Architecture, output_law, row_covariance_law, value_covariance_law
from freeprob.core.symbols import G, z

arch = Architecture(heads=h, gamma_k=gamma_K, gamma_v=gamma_V, gamma_o=gamma_O)

# route 1: the compound free Poisson chain
mu_B = value_covariance_law(arch)
show("free cumulants of mu_B (value covariance), k = 1..3",
     [sp.factor(k) for k in mu_B.free_cumulants(3)[1:]])
out = output_law(arch)
m = out.moments(4)
show("m1 of out", sp.factor(m[1]))
show("m2 of out", sp.factor(m[2]))
show("normalised variance m2/m1^2 - 1", sp.apart(sp.cancel(m[2] / m[1] ** 2 - 1), h))

# route 2: S-transform product
rho = row_covariance_law(gamma_K, theta1, theta2)
s_route = fp.free_mul(rho, fp.MarchenkoPastur(1 / h), fp.MarchenkoPastur(1 / gamma_V),
                      fp.FreePoisson(gamma_O))
assert_same_moments(out, s_route, 8, "out: compound chain vs S-transform product")

# the Cauchy equation: ours (resultant elimination) vs theory.md's master equation (M)
P = out.cauchy_equation()
U = sp.Symbol("u")
Pi = (1 + U / h) * (1 + U / gamma_V) * (gamma_O + U)
M_u = s * theta2 * G**2 * Pi**2 - (gamma_K * theta1 + theta2 * U) * G * Pi + gamma_K * U
show("Cauchy equation of out, written with u = zG - 1 (expanded: degree "
     f"{sp.degree(P, G)} in G, {sp.degree(P, z)} in z)", sp.Eq(M_u, 0))
M = M_u.subs(U, z * G - 1)
assert_same_equation(P, sp.Poly(sp.numer(sp.together(M)), G, z), "out: equation (M)")

# the zero atom: max(0, 1 − γ_V, 1 − γ_O), checked at one rational point
point = {h: 4, gamma_K: sp.Rational(1, 2), gamma_V: sp.Rational(1, 2), gamma_O: 2,
         theta1: sp.Rational(17, 10), theta2: 1}
atoms = dict(out.subs(point).atoms(dps=20))
show("atoms at h=4, gamma_K=1/2, gamma_V=1/2, gamma_O=2, theta=(17/10, 1)", atoms)
assert abs(atoms[0] - sp.Rational(1, 2)) < 1e-18
print("[ok] out: zero atom 1 − γ_V = 1/2")
