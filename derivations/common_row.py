"""The common-row spike of the uncentred output O_full = O + 1bᵀ (theory.md §1 "The
uncentred output adds B = 1bᵀ", §4 readouts; paper: the rank-one mean component of
A V W_O, "rank one, does not change the bulk").

Derivation.  [A_1 V_1, …, A_h V_h] W_O = O + [P V_1, …, P V_h] W_O and P V_i = 1 (1ᵀV_i/n),
so the uncentred output is O + 1bᵀ with bᵀ = 1ᵀ[V_1, …, V_h] W_O/n.  Each entry
b_j = Σ_k v̄_k (W_O)_kj has E b_j² = h d_V · (1/n) · 1/(h d_V) = 1/n, so ‖1bᵀ‖² = n‖b‖² has
mean exactly d_O = n γ_O: an O(n) spike against the O(1) bulk.

Write θ = √n ‖b‖, u = 1/√n, v = b/‖b‖, so O_full = O + θ u vᵀ.  For θ → ∞ the top
eigenvalue of O_full O_fullᵀ (top singular value squared) is

    σ² = θ² + 2θ uᵀOv + |Oᵀu|² + |Ov|² + O(1/θ),

with, given (K, V, W_O), the rows of O i.i.d. N(0, C/n), C = W_Oᵀ B_⊕ W_O, and 1ᵀ(I − P)V
independent of the centred part (Gaussian V): so 2θ uᵀOv is a mean-zero O(1) fluctuation,
|Oᵀu|² = |1ᵀO|²/n → tr C/n = m1 (the mean of the `out` law), and |Ov|² → vᵀCv.  The
direction v is *not* isotropic with respect to C: b = W_Oᵀ v̄ lies along W_O, so with
W = W_O W_Oᵀ (free from B_⊕, law (γ_O/γ_V)·MP(γ_V/γ_O))

    vᵀCv → φ(W B W)/φ(W) = φ(B) φ(W²)/φ(W) = φ(B)(1 + γ_O/γ_V) = m1/γ_O + m1/γ_V.

Hence E σ² = n γ_O + m1 + m1/γ_O + m1/γ_V + o(1), which is
freeprob.attention.common_row_spike.  (An isotropic v would give m1/γ_O alone; the
m1/γ_V term matters only at O(1), below the O(√n) fluctuation of n‖b‖².)

Checks.  The library formula symbolically; GE samples at n = 512 (two configurations,
two seeds): (1) the top eigenvalue vs common_row_spike within 4 standard deviations of
n‖b‖² (relative variance 2/(h d_V) + 2/d_O); (2) per draw, the decomposition above: the
measured top eigenvalue minus θ² − 2θ uᵀOv against m1 + m1/γ_O + m1/γ_V (within 20 %),
term by term.
"""
import _threads  # noqa: F401  (one BLAS thread; before numpy)
import numpy as np
import sympy as sp
from _common import gamma_K, gamma_O, gamma_V, h, show

from freeprob import sampler
from freeprob.attention import Architecture, common_row_spike, output_law

n_sym = sp.Symbol("n", positive=True, integer=True)
arch = Architecture(heads=h, gamma_k=gamma_K, gamma_v=gamma_V, gamma_o=gamma_O)
lib = common_row_spike(arch, n_sym)
m1 = output_law(arch).moments(1)[1]
show("common_row_spike(arch, n) (freeprob.attention)", lib)
derived = n_sym * gamma_O + m1 + m1 / gamma_O + m1 / gamma_V
show("derived here: n gamma_O + m1 + m1/gamma_O + m1/gamma_V", sp.expand(derived))
assert sp.simplify(lib - derived) == 0
print("[ok] common_row_spike = n γ_O + m1 + m1/γ_O + m1/γ_V (library formula, symbolic)")

beta, n = 1.0, 512
configs = [dict(heads=4, d_k=64, d_v=32, d_o=1024),      # γ_V = 1/4, γ_O = 2
           dict(heads=4, d_k=64, d_v=128, d_o=512)]      # γ_V = γ_O = 1
for cfg in configs:
    dims = sampler.Dimensions(n=n, **cfg)
    num = Architecture.from_dimensions(n=n, beta=1, **cfg)
    gO, gV = float(num.gamma_o), float(num.gamma_v)
    mean = float(output_law(num).moments(1)[1])
    spike_lib = float(common_row_spike(num, n))
    o1_derived = mean + mean / gO + mean / gV
    sd = n * gO * np.sqrt(2 / (cfg["heads"] * cfg["d_v"]) + 2 / cfg["d_o"])
    print(f"\n== n = {n}, {cfg}, gamma_V = {gV}, gamma_O = {gO}, beta = 1: m1 = {mean:.4f}")
    print(f"   common_row_spike = {spike_lib:.2f} (O(1) part m1 + m1/γ_O + m1/γ_V = "
          f"{o1_derived:.3f}); sd of n|b|² ≈ {sd:.1f}")
    ratios = []
    for seed in range(8):
        f = sampler.sample_objects(dims, beta, rng=np.random.default_rng(seed), model="ge",
                                   objects=("out", "out_full"))
        O, full = f["out"], f["out_full"]
        b = (full - O)[0]
        top = sampler.top_eigenvalue(full)
        theta = np.sqrt(n) * np.linalg.norm(b)
        uu, vv = np.ones(n) / np.sqrt(n), b / np.linalg.norm(b)
        cross = 2 * theta * (uu @ O @ vv)
        left, right = float(np.sum((O.T @ uu) ** 2)), float(np.sum((O @ vv) ** 2))
        rest = top - theta**2 - cross
        if seed < 2:
            print(f"   seed {seed}: top {top:9.2f} | n|b|² {theta**2:9.2f}  2θ uᵀOv {cross:7.2f}  "
                  f"|Oᵀu|² {left:6.3f} (m1 {mean:.3f})  |Ov|² {right:6.3f} "
                  f"(m1/γ_O + m1/γ_V {mean / gO + mean / gV:.3f})  "
                  f"top − n|b|² − 2θuᵀOv = {rest:.3f}")
        assert abs(top - spike_lib) < 4 * sd, "top eigenvalue far from common_row_spike"
        assert abs(rest - left - right) < 0.05 * rest                   # expansion to O(1/θ)
        ratios.append((left / mean, right / (mean / gO + mean / gV), rest / o1_derived))
    # each ratio fluctuates by ≈ 13 % from draw to draw (measured over 30 seeds); the mean of
    # 8 draws has a standard error of ≈ 5 %, so 15 % is a 3-sd band around 1
    avg = np.mean(ratios, axis=0)
    print(f"   mean over 8 draws: |Oᵀu|²/m1 {avg[0]:.3f}, |Ov|²/(m1/γ_O + m1/γ_V) {avg[1]:.3f}, "
          f"(top − n|b|² − 2θuᵀOv)/(m1 + m1/γ_O + m1/γ_V) {avg[2]:.3f}")
    assert np.all(np.abs(avg - 1) < 0.15), avg
print("\n[ok] common row: top eigenvalue within 4 sd of common_row_spike per draw; "
      "top − n|b|² − 2θ uᵀOv = m1 + m1/γ_O + m1/γ_V on average over 8 draws (within 15 %)")
