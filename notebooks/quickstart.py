# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# ---

# %% [markdown]
# # Quickstart: a law, its moments, its equation, its density — and a sampled spectrum
#
# `freeprob` builds spectral laws from standard families (semicircle, free Poisson =
# Marchenko–Pastur, compound free Poisson, atomic laws) with free convolutions and
# elementary operations.  Every law has exact moments and free cumulants (rational, or
# symbolic in its parameters), an exact algebraic Cauchy equation `P(G, z) = 0`, and
# certified numerics (density, support, atoms) obtained from that equation.
#
# Two examples:
#
# 1. the free product of two free Poisson laws — the limit spectrum of a product of two
#    independent Wishart matrices;
# 2. the output law of multi-head softmax attention in the Gaussian-equivalence model
#    (`freeprob.attention`, docs/theory.md §3), against sampled softmax attention.

# %%
import os
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

import freeprob as fp

T0 = time.perf_counter()
OUT = Path(os.environ.get("FREEPROB_NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="freeprob_quickstart_"))
OUT.mkdir(parents=True, exist_ok=True)
N = 512                                   # matrix size of the sampled spectra

# %% [markdown]
# ## 1. A free product of free Poisson laws
#
# `FreePoisson(t)` (`π_t`) is the limit law of `G Gᵀ/n` with `G` an `n × tn` standard Gaussian
# matrix.  The free product `π_{1/2} ⊠ π_{1/3}` is the law of the product of two independent
# such matrices.  Parameters can be symbols: the moments are then polynomials.

# %%
t1, t2 = sp.symbols("t1 t2", positive=True)
symbolic = fp.free_mul(fp.FreePoisson(t1), fp.FreePoisson(t2))
symbolic.moments(3)

# %%
law = symbolic.subs({t1: sp.Rational(1, 2), t2: sp.Rational(1, 3)})
print("moments        ", law.moments(6))
print("free cumulants ", law.free_cumulants(6))

# %% [markdown]
# ### The Cauchy equation
#
# `G(z) = ∫ dμ(x)/(z − x)` is a root of an irreducible polynomial `P(G, z)`, exact (here with
# integer coefficients).  From it: the support, the atoms and the density `−Im G(x + i0)/π`,
# each value certified to the requested number of digits.

# %%
equation = law.cauchy_equation()
sp.pprint(sp.Eq(equation.as_expr(), 0))
print(sp.latex(sp.Eq(equation.as_expr(), 0)))

# %%
support, atoms = law.support(dps=15), law.atoms()
print("support:", [(float(a), float(b)) for a, b in support])
print("atoms (location, mass):", atoms)

# %%
(lo, hi), = support
# Chebyshev-spaced grid: denser near the edges, where the density changes fastest
grid = float(lo) + (float(hi) - float(lo)) * (1 - np.cos(np.pi * np.arange(1, 200) / 200)) / 2
density = np.array([float(v) for v in law.density([float(x) for x in grid], dps=15)])
print("∫ density dx ≈", np.trapezoid(density, grid), " + atom", float(atoms[0][1]))

# %% [markdown]
# ### Against a sampled Wishart product
#
# `A = G₁G₁ᵀ/n` (`G₁`: `n × n/2`), `B = G₂G₂ᵀ/n` (`G₂`: `n × n/3`).  The nonzero eigenvalues of
# `AB` are those of the small symmetric matrix `G₂ᵀ G₁ G₁ᵀ G₂ / n²`; the other `2n/3` are 0 (the
# atom).

# %%
rng = np.random.default_rng(7)
g1 = rng.standard_normal((N, N // 2))
g2 = rng.standard_normal((N, N // 3))
small = g2.T @ g1
eig_product = np.linalg.eigvalsh(small @ small.T / N**2)
print(f"{N - eig_product.size} zero eigenvalues of {N} (atom {float(atoms[0][1]):.4f});",
      "empirical m1, m2:", eig_product.sum() / N, (eig_product**2).sum() / N,
      " exact:", [float(v) for v in law.moments(2)[1:]])

# %% [markdown]
# ## 2. The output law of multi-head attention
#
# An `Architecture` holds the head count and the width ratios `γ_K = h d_K/n`,
# `γ_V = h d_V/n`, `γ_O = d_O/n`, and the softmax inverse temperature `β` (or `None` for free
# symbols `θ1`, `θ2`).  `output_law` is the limit law of the centred multi-head output Gram
# `O Oᵀ`; `mean_normalized` divides it by its mean.  Symbolically:

# %%
from freeprob.attention import Architecture, mean_normalized, output_law

h, gk, gv, go = sp.symbols("h gamma_K gamma_V gamma_O", positive=True)
general = Architecture(heads=h, gamma_k=gk, gamma_v=gv, gamma_o=go)          # θ1, θ2 symbolic
sp.expand(mean_normalized(output_law(general)).moments(2)[2])

# %% [markdown]
# A small layer: `n = 512` tokens, `h = 4` heads of width `d_K = d_V = 256`, `d_O = 1024`, at
# `β = 1` (`θ1 = e − 1`, `θ2 = 1`).  All ratios are 2, so the law has no atom and a gap at 0.

# %%
dims = {"n": N, "heads": 4, "d_k": 256, "d_v": 256, "d_o": 1024}
arch = Architecture.from_dimensions(**dims, beta=1)
att = mean_normalized(output_law(arch))
print("exact moments (normalised):", att.moments(3))
print("numerically:", [sp.N(v, 12) for v in att.moments(4)])
att_eq = att.cauchy_equation()
print("Cauchy equation: degree", att_eq.degree(0), "in G,", att_eq.degree(1), "in z")

# %%
(a_lo, a_hi), = att.support(dps=15)
print("support:", float(a_lo), float(a_hi), " atoms:", att.atoms(dps=15))
a_grid = float(a_lo) + (float(a_hi) - float(a_lo)) * (1 - np.cos(np.pi * np.arange(1, 150) / 150)) / 2
a_density = np.array([float(v) for v in att.density([float(x) for x in a_grid], dps=15)])

# %% [markdown]
# ### Against sampled softmax attention
#
# `freeprob.sampler.spectra` draws `Q, K, V, W_O`, forms softmax attention and its Gaussian
# equivalent (same draw), and returns the `n` eigenvalues of `O Oᵀ`.  We divide by the exact
# mean `m1 = θ1 γ_O`.  The GE spectrum follows the law closely; softmax differs from it by a
# few percent at this `n` (finite-size effects that vanish as `n` grows, docs/theory.md §5.4, §7).

# %%
from freeprob.sampler import Dimensions, spectra

m1 = float(output_law(arch).moments(1)[1])
eig = spectra(Dimensions(**dims), 1.0, rng=np.random.default_rng(1), models=("softmax", "ge"), objects=("out",))
eig_softmax, eig_ge = eig["softmax", "out"] / m1, eig["ge", "out"] / m1
print("top eigenvalue: softmax", eig_softmax[-1], " GE", eig_ge[-1], " law's edge", float(a_hi))
print("empirical m2: softmax", np.mean(eig_softmax**2), " GE", np.mean(eig_ge**2),
      " exact", float(att.moments(2)[2]))

# %% [markdown]
# ## The figure

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
ax = axes[0]
ax.hist(eig_product, bins=40, density=True, alpha=0.45, label=f"Wishart product, n = {N}")
# the histogram is of the nonzero eigenvalues: rescale the density to the continuous part
ax.plot(grid, density / (1 - float(atoms[0][1])), "k", lw=1.5, label="exact density (nonzero part)")
ax.set_title(f"π$_{{1/2}}$ ⊠ π$_{{1/3}}$  (atom {atoms[0][1]} at 0 not shown)")
ax.set_xlabel("eigenvalue")
ax.legend()
ax = axes[1]
bins = np.linspace(0, max(float(a_hi) * 1.15, 1), 70)
ax.hist(eig_softmax, bins=bins, density=True, alpha=0.45, label=f"softmax, n = {N}")
ax.hist(eig_ge, bins=bins, density=True, histtype="step", color="C1", label="Gaussian equivalent")
ax.plot(a_grid, a_density, "k", lw=1.5, label="exact law")
ax.set_title("attention output, h = 4, γ_K = γ_V = γ_O = 2, β = 1")
ax.set_xlabel("eigenvalue / m1")
ax.legend()
fig.tight_layout()
path = OUT / "quickstart.png"
fig.savefig(path, dpi=110)
print(f"figure: {path}   ({time.perf_counter() - T0:.1f} s)")
