"""The row-covariance law ρ_c of one head, its S-transform Lemma, and the attention
identity (1/h) π(ρ_{γ_K/h}, h) = ρ_{γ_K} ⊠ MP(1/h)  (theory.md §2 item 3, §3.1;
paper: the GE theorem and "the attention law identified through the transform of
ρ_{γ_K} ⊠ MP_{1/h}").

Derivation.  Given the keys K (n × d_K, c = d_K/n), the rows of n·A⊥ are i.i.d. with
covariance Σ = θ2 K Kᵀ/d_K + s I_n (s = θ1 − θ2), up to low rank.  K Kᵀ/d_K has the
law of XᵀX/m with X ∈ R^{d_K × n}, i.e. MP(1/c); so

    ρ_c = θ2 · MP(1/c) + s          (dilate, then shift).

Its free cumulants are κ_1 = θ1 and κ_k = θ2^k c^{1−k} (k ≥ 2), so
R(w) = s + θ2/(1 − θ2 w/c).  Putting w = u S(u) into R(uS)·S = 1 gives
s + θ2/(1 − θ2 (u/c) S) = 1/S: u enters only through v = u/c, which is the Lemma

    S_{ρ_c}(u) = F(u/c),    s θ2 v F² − (θ1 + θ2 v) F + 1 = 0,   F(0) = 1/θ1.

Corollary.  The compound free Poisson law π(ν, t) has S(u) = S_ν(u/t)/(t + u), so
(1/h) π(ρ_{c/h}, h) has S(u) = h S_{ρ_{c/h}}(u/h)/(h + u) = F(u/c)/(1 + u/h)
= S_{ρ_c}(u) · S_{MP(1/h)}(u), i.e. it is ρ_c ⊠ MP(1/h).

Routes compared: ρ_c moments (engine) vs the binomial/Narayana sum written out here;
S-series of ρ_c (engine, series reversion) vs the power series of the F-branch
(coefficient recursion of the quadratic), to order 8; the Corollary by moments to order
8 (compound free Poisson vs S-transform product) and by S-series.
"""
import sympy as sp
from _common import assert_same_moments, c, gamma_K, h, s, show, theta1, theta2, u, v

import freeprob as fp
from freeprob.attention import row_covariance_law

ORDER = 8

# --- ρ_c and its moments --------------------------------------------------------------
rho = row_covariance_law(c, theta1, theta2)
m = rho.moments(ORDER)
show("rho_c = theta2 MP(1/c) + s: mean, variance", [sp.factor(m[1]), sp.factor(m[2] - m[1] ** 2)])
assert sp.simplify(m[1] - theta1) == 0 and sp.simplify(m[2] - m[1] ** 2 - theta2**2 / c) == 0


def narayana(k, lam):
    """Moments of MP(λ) (mean 1, variance λ): Σ_{j<k} C(k,j) C(k−1,j) λ^j/(j+1)."""
    if k == 0:
        return sp.Integer(1)
    return sum(sp.binomial(k, j) * sp.binomial(k - 1, j) * lam**j / (j + 1) for j in range(k))


by_hand = [sum(sp.binomial(k, j) * theta2**j * s ** (k - j) * narayana(j, 1 / c)
               for j in range(k + 1)) for k in range(ORDER + 1)]
for k in range(ORDER + 1):
    assert sp.cancel(m[k] - by_hand[k]) == 0, f"rho_c: m_{k} differs"
print(f"[ok] rho_c: moments m_0..m_{ORDER} = Σ_j C(k,j) θ2^j s^(k−j) Nar_j(1/c)")

kappa = rho.free_cumulants(ORDER)
assert sp.simplify(kappa[1] - theta1) == 0
for k in range(2, ORDER + 1):
    assert sp.cancel(kappa[k] - theta2**k * c ** (1 - k)) == 0
show("free cumulants of rho_c, k = 1..4", list(kappa[1:5]))
print("[ok] rho_c: free cumulants κ_1 = θ1, κ_k = θ2^k c^(1−k)  (R(w) = s + θ2/(1 − θ2 w/c))")

# --- the Lemma: S_{ρ_c}(u) = F(u/c) ------------------------------------------------------
F = sp.Symbol("F")
quad = s * theta2 * v * F**2 - (theta1 + theta2 * v) * F + 1
show("Lemma: S_rho_c(u) = F(u/c), with F the root F(0) = 1/theta1 of", sp.Eq(quad, 0))
F_closed = 2 / (theta1 + theta2 * v + sp.sqrt((theta1 + theta2 * v) ** 2 - 4 * s * theta2 * v))
assert sp.simplify(quad.subs(F, F_closed)) == 0 and sp.simplify(F_closed.subs(v, 0) - 1 / theta1) == 0
show("closed form of the branch", sp.Eq(F, F_closed))

# the branch as a power series F = Σ f_k v^k: the coefficient of v^k (k ≥ 1) of the
# quadratic gives θ1 f_k = s θ2 Σ_{i+j=k−1} f_i f_j − θ2 f_{k−1}, with f_0 = 1/θ1
f = [1 / theta1]
for k in range(1, ORDER):
    f.append(sp.cancel((s * theta2 * sum(f[i] * f[k - 1 - i] for i in range(k))
                        - theta2 * f[k - 1]) / theta1))
F_coeffs = f
S_coeffs = rho.s_series(ORDER).coefficients()          # S(u) = Σ S_k u^k + O(u^ORDER)
for k in range(ORDER):
    assert sp.cancel(S_coeffs[k] - F_coeffs[k] / c**k) == 0, f"Lemma: u^{k} differs"
show("S_rho_c(u), first terms", sp.Add(*[sp.factor(S_coeffs[k]) * u**k for k in range(3)]))
print(f"[ok] Lemma: S-series of rho_c (engine) = F(u/c) branch series, to order {ORDER}")

# --- the Corollary: (1/h) π(ρ_{γK/h}, h) = ρ_{γK} ⊠ MP(1/h) -----------------------------
lhs = fp.dilate(fp.CompoundFreePoisson(h, row_covariance_law(gamma_K / h, theta1, theta2)), 1 / h)
rhs = fp.free_mul(row_covariance_law(gamma_K, theta1, theta2), fp.MarchenkoPastur(1 / h))
mk = lhs.moments(4)
show("m2 of (1/h) pi(rho_{gamma_K/h}, h)", sp.expand(mk[2]))
assert_same_moments(lhs, rhs, ORDER, "Corollary: (1/h) π(ρ_{γK/h}, h) vs ρ_{γK} ⊠ MP(1/h)")

# the same at the level of S-transforms: S_{ρ_{c/h}}(u/h) = S_{ρ_c}(u) coefficientwise
S_small = row_covariance_law(c / h, theta1, theta2).s_series(ORDER).coefficients()
S_big = rho.s_series(ORDER).coefficients()
for k in range(ORDER):
    assert sp.cancel(S_small[k] / h**k - S_big[k]) == 0
print(f"[ok] Corollary: S_rho_(c/h)(u/h) = S_rho_c(u) to order {ORDER}")
