# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# ---

# %% [markdown]
# # Deriving a new law: attention with heads of two different key widths
#
# `freeprob.attention` covers heads of equal widths under four sharing schemes.  Here we
# derive, check and sample a layer it does not cover: a **custom head split** in which a
# fraction `p` of the `h` heads has per-head key ratio `a = d_K⁽¹⁾/n` and the rest has
# `b = d_K⁽²⁾/n` (same value width `d_V`, keys and values independent across heads).
#
# **Derivation** (docs/theory.md §2 item 4 and §3; only the building blocks change):
#
# * Head `i` has row covariance `Σ_i` with law `ρ_{c_i} = θ2·MP(1/c_i) + (θ1 − θ2)`
#   (`row_covariance_law`), `c_i ∈ {a, b}`.
# * Queries are independent across heads, so the rows of `[M_1, …, M_h]` are i.i.d. given the
#   keys with block-diagonal covariance `⊕ Σ_i`.  The spectral law of a block-diagonal matrix
#   is the mixture of its blocks' laws: `p ρ_a + (1 − p) ρ_b`.  The concatenated attention
#   `(1/h) Σ M_i M_iᵀ` is a sample covariance of rate `h`, hence
#
#   `concat = h⁻¹ · π(p ρ_a + (1 − p) ρ_b, h)`.
#
# * The same argument one level up: the value covariances `B_i = V_iᵀ Σ_i V_i/n` have laws
#   `μ_B(c) = c_V π(ρ_c, 1/c_V)` (`value_covariance_law`); their block-diagonal sum has the
#   mixture law `μ_B = p μ_B(a) + (1 − p) μ_B(b)`; the Gaussian `W_O` gives
#   `μ_VO = t⁻¹ π(μ_B, t)` with `t = γ_V/γ_O`, and
#
#   `out = π(μ_VO, γ_O)`.
#
# With `a = b` both must reduce to the library's `concatenated_attention_law` and
# `output_law`.

# %%
import os
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

import freeprob as fp
from freeprob.attention import (
    Architecture,
    concatenated_attention_law,
    ge_coefficients,
    output_law,
    row_covariance_law,
    theta1,
    theta2,
)

T0 = time.perf_counter()
OUT = Path(os.environ.get("FREEPROB_NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="freeprob_new_law_"))
OUT.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## The law, symbolically
#
# One function builds both laws from the building blocks; its arguments may be symbols
# (`θ1`, `θ2` stay free when we pass the symbols of `freeprob.attention`).

# %%
h, p, a, b, c_v, g_o = sp.symbols("h p a b c_V gamma_O", positive=True)


def mixed_head_laws(h, p, a, b, c_v, g_o, th1=theta1, th2=theta2):
    """(concat, out) for a fraction p of heads with key ratio a and 1 − p with ratio b."""
    rho = [row_covariance_law(c, th1, th2) for c in (a, b)]
    weights = [p, 1 - p]
    concat = fp.dilate(fp.CompoundFreePoisson(h, fp.mixture(rho, weights)), 1 / h)
    mu_b = fp.mixture([fp.dilate(fp.CompoundFreePoisson(1 / c_v, r), c_v) for r in rho], weights)
    t = h * c_v / g_o                                     # γ_V / γ_O
    out = fp.CompoundFreePoisson(g_o, fp.dilate(fp.CompoundFreePoisson(t, mu_b), 1 / t))
    return concat, out


concat, out = mixed_head_laws(h, p, a, b, c_v, g_o)
m_concat = concat.moments(5)
[sp.factor(v) for v in m_concat[:3]]

# %% [markdown]
# The variance of `concat` is `θ1²/h + θ2²·(p/a + (1 − p)/b)/h`: to second order the split
# acts like equal heads of **harmonic-mean** total key ratio `γ_eff`,
# `1/γ_eff = (p/a + (1 − p)/b)/h`.  The third moment tells them apart (below).

# %%
var = sp.simplify(m_concat[2] - m_concat[1] ** 2)
gamma_eff = 1 / ((p / a + (1 - p) / b) / h)
assert sp.simplify(var - (theta1**2 / h + theta2**2 / gamma_eff)) == 0
var  # noqa: B018 (displayed)

# %% [markdown]
# ## Check 1: a second route for `concat` — a free sum of heads
#
# Heads with independent queries and keys are asymptotically free, so `Σ M_i M_iᵀ` is the
# free additive convolution of `p h` copies of `π(ρ_a, 1)` and `(1 − p) h` copies of
# `π(ρ_b, 1)`: free powers `⊞ ph` and `⊞ (1 − p)h` (defined for symbolic exponents because
# compound free Poisson laws are infinitely divisible).

# %%
single = lambda c: fp.CompoundFreePoisson(1, row_covariance_law(c))
free_sum = fp.dilate(fp.free_add(fp.free_power(single(a), p * h),
                                 fp.free_power(single(b), (1 - p) * h)), 1 / h)
assert all(sp.simplify(u - v) == 0 for u, v in zip(m_concat, free_sum.moments(5)))
print("concat: compound Poisson of the mixture = free sum of heads, m1..m5 symbolically")

# %% [markdown]
# ## Check 2: a second route for `out` — the free-cumulant chain by hand
#
# docs/theory.md §3.3: `m_k(ρ_c) = Σ_j C(k, j) θ2^j (θ1 − θ2)^{k−j} Nar_j(1/c)` (Narayana
# polynomials); a compound Poisson step has free cumulants rate × jump moments:
# `κ_k(μ_B(c)) = c_V^{k−1} m_k(ρ_c)`, `κ_k(μ_VO) = (γ_O/γ_V)^{k−1} m_k(μ_B)`,
# `κ_k(out) = γ_O m_k(μ_VO)`; moments from free cumulants by `free_cumulants_to_moments`.

# %%
K = 4
s = theta1 - theta2


def narayana(j, lam):
    return sp.Integer(1) if j == 0 else sum(sp.Rational(1, i + 1) * sp.binomial(j, i) * sp.binomial(j - 1, i)
                                            * lam**i for i in range(j))


def m_rho(k, c):
    return sum(sp.binomial(k, j) * theta2**j * s ** (k - j) * narayana(j, 1 / c) for j in range(k + 1))


def m_value(c):
    return fp.free_cumulants_to_moments([0] + [c_v ** (k - 1) * m_rho(k, c) for k in range(1, K + 1)])


g_v = h * c_v
m_b = [p * u + (1 - p) * v for u, v in zip(m_value(a), m_value(b))]
m_vo = fp.free_cumulants_to_moments([0] + [(g_o / g_v) ** (k - 1) * m_b[k] for k in range(1, K + 1)])
m_out_chain = fp.free_cumulants_to_moments([0] + [g_o * m_vo[k] for k in range(1, K + 1)])
m_out = out.moments(K)
assert all(sp.expand(u - v) == 0 for u, v in zip(m_out, m_out_chain))
print("out: law algebra = hand cumulant chain, m1..m4 symbolically")
sp.factor(m_out[2])

# %% [markdown]
# ## Check 3: equal widths reduce to the library's laws

# %%
arch = Architecture(heads=h, gamma_k=h * a, gamma_v=g_v, gamma_o=g_o)       # θ1, θ2 symbolic
concat_aa, out_aa = mixed_head_laws(h, p, a, a, c_v, g_o)
assert all(sp.simplify(u - v) == 0 for u, v in zip(concat_aa.moments(4), concatenated_attention_law(arch).moments(4)))
assert all(sp.simplify(u - v) == 0 for u, v in zip(out_aa.moments(4), output_law(arch).moments(4)))
print("a = b: concatenated_attention_law and output_law recovered (m1..m4)")

# %% [markdown]
# ## A concrete layer
#
# `n = 512` tokens, `h = 8` heads: four of key width 16 (`a = 1/32`) and four of key width 128
# (`b = 1/4`); `d_V = 128`, `d_O = 1024` (`γ_V = γ_O = 2`); `β = 1` (`θ1 = e − 1`, `θ2 = 1`).  The mixed `concat` has
# the same mean and variance as equal heads with `γ_K = γ_eff`, but a different third
# moment — and its support splits into **two intervals**, one per head width.

# %%
n, heads, d_v, d_o = 512, 8, 128, 1024
groups = [(4, 16), (4, 128)]                     # (heads, d_K) per group
beta = 1
th1, th2 = ge_coefficients(beta)
R = sp.Rational
num = {h: heads, p: R(groups[0][0], heads), a: R(groups[0][1], n), b: R(groups[1][1], n),
       c_v: R(d_v, n), g_o: R(d_o, n)}
concat_n, out_n = mixed_head_laws(*(num[v] for v in (h, p, a, b, c_v, g_o)), th1, th2)
g_eff = gamma_eff.subs(num)
equal = concatenated_attention_law(Architecture(heads=heads, gamma_k=g_eff, gamma_v=2, gamma_o=2, beta=beta))
print("γ_eff =", g_eff)
print("mixed heads   m1..m4:", [round(float(v), 5) for v in concat_n.moments(4)[1:]])
print("equal, γ_eff  m1..m4:", [round(float(v), 5) for v in equal.moments(4)[1:]])

# %%
eq = concat_n.cauchy_equation()
print("Cauchy equation of the mixed concat: degree", eq.degree(0), "in G,", eq.degree(1), "in z")
support = concat_n.support(dps=15)
print("support intervals:", [(round(float(u), 4), round(float(v), 4)) for u, v in support])


def tabulate(law, intervals, points=120):
    xs, ys = [], []
    for lo, hi in intervals:
        x = float(lo) + (float(hi) - float(lo)) * (1 - np.cos(np.pi * np.arange(1, points) / points)) / 2
        xs.append(x)
        ys.append(np.array([float(v) for v in law.density([float(t) for t in x], dps=15)]))
    return xs, ys


xs_mixed, ys_mixed = tabulate(concat_n, support)
print("mass per interval:", [round(float(np.trapezoid(y, x)), 4) for x, y in zip(xs_mixed, ys_mixed)])
xs_equal, ys_equal = tabulate(equal, equal.support(dps=15))

# %% [markdown]
# ## Against sampled spectra
#
# `freeprob.sampler.sample_objects` samples one group of equal heads; independent heads make
# the layer a union of groups.  The concatenated attention Gram is
# `(1/h) Σ_i M_i M_iᵀ = Σ_groups (h_g/h) F_g F_gᵀ` (`F_g` = the group's `concat`, normalised by
# its own head count), and the output is `[stack_1, stack_2] W_O` with `W_O` of variance
# `1/(h d_V)`.  The Gaussian equivalent (GE) tests the derivation; softmax is the real layer,
# which at `β = 1`, `n = 512` and key width 16 still carries visible finite-size effects in the
# higher moments of the bare attention (docs/theory.md §5.1, §7); the output is much closer.

# %%
from freeprob.sampler import Dimensions, empirical_moments, sample_objects


def sample_layer(model, seed):
    rng = np.random.default_rng(seed)
    gram, stacks = np.zeros((n, n)), []
    for hg, dk in groups:
        f = sample_objects(Dimensions(n=n, heads=hg, d_k=dk, d_v=d_v, d_o=d_o), float(beta), rng=rng,
                           model=model, objects=("concat", "stack"))
        gram += (hg / heads) * (f["concat"] @ f["concat"].T)
        stacks.append(f["stack"])
    o = np.hstack(stacks) @ (rng.standard_normal((heads * d_v, d_o)) / np.sqrt(heads * d_v))
    return np.linalg.eigvalsh(gram), np.linalg.eigvalsh(o @ o.T)


samples = {model: sample_layer(model, seed=11) for model in ("ge", "softmax")}
exact = {"concat": [float(v) for v in concat_n.moments(4)[1:]], "out": [float(v) for v in out_n.moments(4)[1:]]}
rel_err = {}
for model, (ev_c, ev_o) in samples.items():
    for name, ev in (("concat", ev_c), ("out", ev_o)):
        emp = np.asarray(empirical_moments(ev, 4), dtype=float)[-4:]
        rel_err[model, name] = emp / np.array(exact[name]) - 1
        print(f"{model:8s} {name:7s} relative error of m1..m4 (%):", np.round(100 * rel_err[model, name], 2))
frac_upper = {m: float(np.mean(ev_c > float(support[0][1]))) for m, (ev_c, _) in samples.items()}
print("fraction of eigenvalues above the gap:", frac_upper,
      " exact:", round(float(np.trapezoid(ys_mixed[-1], xs_mixed[-1])), 4) if len(support) > 1 else None)

# %% [markdown]
# ## The figure
#
# Left: the concatenated attention spectrum, sampled (GE and softmax) against the derived law
# and against equal heads of the same variance.  Right: relative errors of the empirical
# moments against the derived laws.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11.5, 4))
ax = axes[0]
bins = np.linspace(0, float(support[-1][1]) * 1.1, 80)
ax.hist(samples["ge"][0], bins=bins, density=True, alpha=0.45, label=f"GE, n = {n}")
ax.hist(samples["softmax"][0], bins=bins, density=True, histtype="step", color="C3", label="softmax")
for i, (x, y) in enumerate(zip(xs_mixed, ys_mixed)):
    ax.plot(x, y, "k", lw=1.5, label="derived law (mixed heads)" if i == 0 else None)
for i, (x, y) in enumerate(zip(xs_equal, ys_equal)):
    ax.plot(x, y, "C2--", lw=1.2, label=f"equal heads, γ_K = {g_eff}" if i == 0 else None)
ax.set_title(f"concat: 4 heads d_K = 16, 4 heads d_K = 128, β = {beta}")
ax.set_xlabel("eigenvalue")
ax.legend()
ax = axes[1]
k = np.arange(1, 5)
for j, ((model, name), err) in enumerate(rel_err.items()):
    ax.plot(k + 0.05 * (j - 1.5), 100 * err, "o-" if model == "ge" else "s--", label=f"{model} {name}")
ax.axhline(0, color="k", lw=0.8)
ax.set_xticks(k)
ax.set_xlabel("moment order k")
ax.set_ylabel("(m̂_k − m_k)/m_k  (%)")
ax.set_title("empirical vs derived moments")
ax.legend()
fig.tight_layout()
path = OUT / "new_law.png"
fig.savefig(path, dpi=110)
print(f"figure: {path}   ({time.perf_counter() - T0:.1f} s)")
