"""Within-head tied keys and values (V_i = K_i): μ_B = φ_KV # MP(c_K) and the tied output
laws (theory.md §3.4; paper: "the pushforward of π_{γ_K/h} under φ_KV", its §C.2.1).

Derivation.  With V_i = K_i the value covariance is B_i = K_iᵀ Σ_i K_i/n with
Σ_i = θ2 K_i K_iᵀ/d_K + s I_n (s = θ1 − θ2).  Writing W = K_iᵀ K_i/n (d_K × d_K, law
MP(c_K), mean 1, variance c_K) and using K_iᵀ K_i K_iᵀ K_i = n² W²,

    B_i = θ2 (n/d_K) W² + s W = φ_KV(W),   φ_KV(x) = (θ2/c_K) x² + s x:

B_i is a polynomial in W, so μ_B = φ_KV # MP(c_K) (no free convolution needed: Σ_i
commutes with K_i K_iᵀ).  In n-space the same statement reads φ_KV # π_{c_K} (π_{c_K}
the law of K_i K_iᵀ/n), with an extra atom 1 − c_K at φ(0) = 0.

Moments by hand (route 2).  m_k(B) = E[φ(W)^k] = Σ_j C(k, j) (θ2/c_K)^j s^{k−j} m_{k+j}(W)
with m_n(W) = Nar_n(c_K) = Σ_{i<n} C(n, i) C(n−1, i) c_K^i/(i+1), the Narayana
polynomials: the conditional-Gaussian covariance computed directly.

The output stages are the untied ones with μ_B replaced: head_out = π(μ_B, c_K),
stack = π(μ_B, γ_K), out = π(μ_VO, γ_O) with μ_VO = t⁻¹ π(μ_B, t), t = γ_K/γ_O.  Hence
S_out(u) = S_B(u/γ_K)/Π(u), Π = (1 + u/γ_K)(γ_O + u); with g = G Π/γ_K the Cauchy transform
of μ_B at ζ = (γ_K + u)/(G Π) (u = zG − 1), and the quartic P_B(g, ζ) = 0 of theory.md
§3.4 becomes the equation (T) of out.

Routes compared: μ_B moments to order 8 (engine pushforward vs the Narayana binomial
sum); m1(B), m2(B) vs theory.md §3.4; μ_B's Cauchy equation vs P_B (symbolic); n-space
φ#π_{c_K} vs c_K × moments of μ_B; the tied means of head_out, stack, out; out's
moments (compound chain vs S-transform product, order 6); the Cauchy equations of
head_out, stack and out (engine) vs (T) (γ = c_K, Π = c_K + u; γ = γ_K, Π = γ_K + u; and
the out Π above), at θ1 = 17/10, θ2 = 1 with h, γ_K, γ_O symbolic (five symbols make sympy
slow; μ_B's own equation is checked fully symbolically); out's normalised variance.
"""
import sympy as sp
from _common import (assert_same_equation, assert_same_moments, gamma_K, gamma_O, h, s, show,
                     theta1, theta2)

import freeprob as fp
from freeprob.attention import (Architecture, head_output_law, output_law, stacked_output_law,
                                tied_value_covariance_law)
from freeprob.core.symbols import G, x, z

ORDER = 8
c_K = sp.Symbol("c_K", positive=True)
# μ_B depends on c_K only: one head of key (= value) ratio c_K
mu_B = tied_value_covariance_law(
    Architecture(heads=1, gamma_k=c_K, gamma_v=c_K, gamma_o=1, scheme="tied"))
a, b = theta2 / c_K, s
phi = a * x**2 + b * x
show("phi_KV(x)", sp.expand(phi))

# μ_B: engine (pushforward of MP(c_K)) vs the binomial / Narayana sum written out here


def narayana(n, c):
    """m_n(MP(c)), mean 1, variance c."""
    if n == 0:
        return sp.Integer(1)
    return sum(sp.binomial(n, i) * sp.binomial(n - 1, i) * c**i / (i + 1) for i in range(n))


m_B = mu_B.moments(ORDER)
by_hand = [sum(sp.binomial(k, j) * a**j * b ** (k - j) * narayana(k + j, c_K) for j in range(k + 1))
           for k in range(ORDER + 1)]
for k in range(ORDER + 1):
    # both are polynomials in θ1, θ2, 1/c_K of degree ≤ k in 1/c_K
    assert sp.expand((m_B[k] - by_hand[k]) * c_K**k) == 0, f"tied mu_B: m_{k} differs"
print(f"[ok] tied mu_B: moments m_0..m_{ORDER} = Σ_j C(k,j) a^j s^(k−j) Nar_(k+j)(c_K)")
show("m1(B), m2(B)", [sp.expand(m_B[1]), sp.collect(sp.expand(m_B[2]), [theta1, theta2])])
assert sp.cancel(m_B[1] - (theta1 + theta2 / c_K)) == 0
assert sp.cancel(m_B[2] - (theta1**2 * (1 + c_K) + theta1 * theta2 * (4 + 2 / c_K)
                           + theta2**2 * (1 + 4 / c_K + 1 / c_K**2))) == 0
print("[ok] tied mu_B: m1 = θ1 + θ2/c_K, m2 = θ1²(1+c_K) + θ1θ2(4+2/c_K) + θ2²(1+4/c_K+1/c_K²)")

# n-space: φ # π_{c_K} = c_K μ_B + (1 − c_K) δ_0, i.e. m_k = c_K m_k(B) for k ≥ 1
n_space = fp.pushforward(fp.FreePoisson(c_K), phi)
mn = n_space.moments(ORDER)
for k in range(1, ORDER + 1):
    assert sp.cancel(mn[k] - c_K * m_B[k]) == 0
print(f"[ok] tied: φ_KV # π_(c_K) (n-space) has moments c_K m_k(μ_B), k = 1..{ORDER}")

# μ_B's Cauchy equation vs the quartic P_B(g, ζ) of theory.md §3.4 (a = θ2/c_K, b = s, c = c_K)
g, zeta = sp.symbols("g zeta")


def P_B(g, zeta, a=a, b=b, c=c_K):
    return (g**4 * (4 * a * c**3 * zeta**3 + b**2 * c**3 * zeta**2)
            + g**3 * (-8 * a * c**3 * zeta**2 + 8 * a * c**2 * zeta**2 - 2 * b**2 * c**3 * zeta
                      + 2 * b**2 * c**2 * zeta)
            + g**2 * (5 * a * c**3 * zeta - 10 * a * c**2 * zeta + 5 * a * c * zeta + b**2 * c**3
                      - 2 * b**2 * c**2 + b**2 * c + b * c**2 * zeta + b * c * zeta - c * zeta**2)
            + g * (-a * c**3 + 3 * a * c**2 - 3 * a * c + a - b * c**2 + b + c * zeta - zeta) + 1)


show("P_B(g, zeta) (theory.md §3.4)", sp.collect(sp.expand(P_B(g, zeta, a=sp.Symbol("a"),
                                                              b=sp.Symbol("b"), c=c_K)), g))
PB = sp.Poly(sp.numer(sp.together(P_B(G, z))), G, z)
assert_same_equation(mu_B.cauchy_equation(), PB, "tied mu_B: engine vs P_B")

# the output stages: h heads, γ_K = h c_K, outputs of width γ_O n
arch = Architecture(heads=h, gamma_k=gamma_K, gamma_v=gamma_K, gamma_o=gamma_O, scheme="tied")
mu_B = tied_value_covariance_law(arch)
m_B = mu_B.moments(4)
c_K = gamma_K / h

# tied means of the output stages
means = {"head_out": (head_output_law(arch), theta1 * c_K + theta2),
         "stack": (stacked_output_law(arch), theta1 * gamma_K + h * theta2),
         "out": (output_law(arch), (theta1 + theta2 / c_K) * gamma_O)}
for name, (law, expected) in means.items():
    m1 = law.moments(1)[1]
    show(f"tied {name}: m1", sp.factor(m1))
    assert sp.cancel(m1 - expected) == 0, f"tied {name}: mean"
print("[ok] tied means: head_out θ1 c_K + θ2, stack θ1 γ_K + h θ2, out (θ1 + θ2/c_K) γ_O")

# out: compound chain vs S-transform route, then its Cauchy equation vs (T)
out = means["out"][0]
t = gamma_K / gamma_O
mu_VO = fp.dilate(fp.CompoundFreePoisson(t, mu_B), 1 / t)
kappa_VO = mu_VO.free_cumulants(4)
for k in range(1, 5):
    assert sp.cancel(kappa_VO[k] - (gamma_O / gamma_K) ** (k - 1) * m_B[k]) == 0
print("[ok] tied mu_VO: κ_k = (γ_O/γ_K)^(k−1) m_k(μ_B), k = 1..4")
# S_out(u) = S_B(u/γ_K)/((1 + u/γ_K)(γ_O + u)): the first factor is the S-transform of
# γ_K⁻¹ π(μ_B, γ_K) (compound Poisson at rate γ_K, dilated), the second that of π_(γ_O).
# The S-route is slow with five symbols: θ1, θ2 rational here (and in (T) below), order 6.
point = {theta1: sp.Rational(17, 10), theta2: 1}
mu_B_pt = mu_B.subs(point)
s_route = fp.free_mul(fp.dilate(fp.CompoundFreePoisson(gamma_K, mu_B_pt), 1 / gamma_K),
                      fp.FreePoisson(gamma_O))
assert_same_moments(out.subs(point), s_route, 6,
                    "tied out (θ1 = 17/10, θ2 = 1): π(μ_VO, γ_O) vs γ_K⁻¹π(μ_B, γ_K) ⊠ π_(γ_O)")

# (T): P_B(G Π/γ, (γ + u)/(G Π)) = 0, u = zG − 1, for head_out (γ = c_K, Π = c_K + u),
# stack (γ = γ_K, Π = γ_K + u) and out (γ = γ_K, Π = (1 + u/γ_K)(γ_O + u))
U = sp.Symbol("u")
for name, gam, Pi in [("head_out", c_K, c_K + U), ("stack", gamma_K, gamma_K + U),
                      ("out", gamma_K, (1 + U / gamma_K) * (gamma_O + U))]:
    T_u = P_B(G * Pi / gam, (gam + U) / (G * Pi), a=theta2 / c_K, b=s, c=c_K)
    if name == "out":
        show("(T) for tied out: P_B(G Pi/gamma_K, (gamma_K + u)/(G Pi)) = 0, with Pi", sp.factor(Pi))
    T = sp.numer(sp.together(T_u.subs(U, z * G - 1).subs(point)))
    P_eng = means[name][0].subs(point).cauchy_equation()
    assert_same_equation(P_eng, sp.Poly(T, G, z),
                         f"tied {name} (θ1 = 17/10, θ2 = 1; h, γ_K, γ_O symbolic): engine vs (T)")

# the normalised variance of tied out: v_B/γ_K + 1/γ_K + 1/γ_O, v_B = m2(B)/m1(B)² − 1 ≈ 4 c_K
mo = out.moments(2)
v_B = sp.cancel(m_B[2] / m_B[1] ** 2 - 1)
assert sp.cancel(mo[2] / mo[1] ** 2 - 1 - (v_B / gamma_K + 1 / gamma_K + 1 / gamma_O)) == 0
cc = sp.Symbol("c", positive=True)
v_B_c = sp.cancel(v_B.subs(gamma_K, cc * h))
show("v_B as a function of c_K = c", sp.factor(v_B_c))
assert sp.limit(v_B_c / cc, cc, 0) == 4
print("[ok] tied out: m2/m1² − 1 = v_B/γ_K + 1/γ_K + 1/γ_O, with v_B/c_K → 4 as c_K → 0")
