# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# ---

# %% [markdown]
# # Head count: loss plateau and decay rate (paper §5.1, D.2)
#
# Gradient flow on a frozen-feature readout ½|Fw − y|² from w = 0, with F the (uncentred)
# multi-head attention output scaled to mean 1 and a target y ⟂ 1, has relative loss
#
#     L(t)/L(0) = yᵀ e^{−2tFFᵀ} y / |y|²  →  ∫ e^{−2tx} dμ(x),
#
# μ the token-side law of FFᵀ (docs/theory.md §4).  Its plateau is the zero mass
# μ({0}) = max(0, 1 − γ_V, 1 − γ_O).  With fixed per-head widths d_K = d_V = n/64 and
# d_O = 2n, h = 32, 64, 128 heads give γ_V = 1/2, 1, 2: a plateau at 1/2 (the paper's
# "mass 1/2 at zero"), slow decay at a hard edge, and fast decay with a spectral gap.

# %%
import os
import tempfile
from pathlib import Path

from freeprob.attention import Architecture, mean_normalized, output_law
from freeprob.experiments.comparisons.head_count import run
from freeprob.attention.readout import gradient_flow_loss, time_to_loss

# %% [markdown]
# ## The exact side alone
#
# The law of h = 64 heads (γ_V = 1) has no atom but a hard edge at 0; the time to reach a
# relative loss of 0.1 comes from the same integral.

# %%
arch = Architecture(heads=64, gamma_k=1, gamma_v=1, gamma_o=2, beta=1)
law = mean_normalized(output_law(arch))
print("atoms:", law.atoms(dps=10))
print("L(t)/L(0) at t = 1, 10, 100:", [float(v) for v in gradient_flow_loss(law, [1, 10, 100], dps=8)])
print("time to L/L0 = 0.1:", float(time_to_loss(law, 0.1, dps=8)))

# %% [markdown]
# ## Predicted vs softmax attention
#
# The quick run: n = 256 tokens (d_K = d_V = 4 per head), two initialisations × four
# targets.  The default `run()` uses n = 512 and four initialisations.

# %%
result = run(quick=True, progress=print)
print(result.table())

# %%
out = Path(os.environ.get("FREEPROB_NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="freeprob_nb_"))
out.mkdir(parents=True, exist_ok=True)
print("figure:", result.save_figure(out / "readout_head_count.png"))

# %% [markdown]
# The plateaus are exact (1/2, 0, 0).  At these small per-head widths the softmax curves
# sit 0.01–0.04 from the limit (the small-d_K effect of docs/theory.md §7 F1, which
# shrinks like 1/d_K); the paper's < 0.003 needs larger heads than a notebook can sample.
