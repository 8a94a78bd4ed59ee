"""The GE attention with general inputs (theory.md §10; issue 19, the paper's §6.2).

Model.  Inputs X (n × d) with Gram C = XXᵀ/d of limiting law ν_X (mean one); fan-in
weights give Q = C^{1/2} G, K = C^{1/2} H in law (G, H iid N(0,1), n × d_K).  The GE of
one head is Y = S + σZ, S = β Q Kᵀ/√d_K, σ² = s = θ1 − θ2.  Given H, vec Y is Gaussian
with covariance C ⊗ D + s I ⊗ I, D = β² C^{1/2} H Hᵀ C^{1/2}/d_K (law ν_D =
θ2 ν_X ⊠ MP(1/c_K)); in the eigenbases of C and D its entries are independent with
variance profile c_a d_b + s.  Hence the variance-profile equations (Hachem–Loubaton–Najim)

    t(c) = −1/(z(1 + c δ̃1 + s δ̃0)),   t̃(d) = −1/(z(1 + (d δ1 + s δ0)/α)),
    δj = E_X[c^j t(c)],  δ̃j = E_D[d^j t̃(d)],  m(z) = δ0 = ∫ dμ(x)/(x − z),

with α = N/n (single, sum: 1; concat: h).

Routes compared:
1. Route A (equations): expand the equations in w = 1/z (m = −Σ_k m_k w^{k+1}, solved
   order by order, exact rational series (FLINT) at two rational points of the moments x_j of
   ν_X, y_j of ν_D, s and α); route B (plane trees,
   freeprob.attention.input_gram.variance_profile_moments, printed symbolically to m3):
   equal to order 4.
2. Reduction: ν_X = δ_1 gives the orthonormal laws of freeprob.attention (single, concat,
   sum) to order 4 (exact core moments, symbolic θ's and ratios).
3. ν_D by the exact core: θ2 ν_X ⊠ MP(1/c) moments (free_mul of MP laws) vs the
   variance-profile tree formula with s = 0 (rows ν_X, columns δ_1, α = c).
4. Numbers: the tabulated input-Gram law (freeprob.attention.input_gram.input_gram_law)
   against the GE sample with Gaussian inputs (n = 512, d = 1024): moments within 3 %.

head_out, stack, out (freeprob.attention.input_gram_out; covariance C ⊗ R1 + I ⊗ R2 with
non-commuting right factors, nested scalar equations per z):
5. nu_X = delta_1: moments m1..m5 of the equations (Cauchy integral) = the exact laws
   head_output_law / stacked_output_law / output_law (rtol 1e-8, two layers); the
   tabulated out cdf = the exact one (sup distance < 1e-3).
6. m2 by Wick's formula (output_gram_m2, closed form) = m2 of the equations (Gaussian
   n/d = 1/2 and 2, AR(1)).
7. GE sample with Gaussian and AR(1) inputs (n = 1024, d = 2n, β = 1, one draw) against the
   law of out and stack: relW1 < 3.5 %, KS < 1 %.
"""
import _threads  # noqa: F401  (one BLAS thread; before numpy)
import math

import flint
import numpy as np
import sympy as sp
from _common import show

from freeprob.attention import Architecture, attention_law, concatenated_attention_law, head_sum_law
from freeprob.attention.input_gram import input_gram_law, variance_profile_moments
from freeprob.laws.families import MarchenkoPastur
from freeprob.laws.operations import free_mul

ORDER = 4
w = sp.Symbol("w")
# route A at exact rational points (a polynomial identity in the moments, s and alpha checked
# at two random rational points: symbolic expansion of the nested series is too slow)
POINTS = [dict(s=sp.Rational(3, 7), alpha=sp.Rational(5, 2), xs=[1, sp.Rational(11, 10), sp.Rational(7, 5),
                                                                  sp.Rational(23, 10), 4],
               ys=[1, sp.Rational(2, 3), sp.Rational(9, 7), sp.Rational(13, 4), sp.Rational(41, 5)]),
          dict(s=sp.Rational(1, 9), alpha=sp.Integer(3), xs=[1, 1, sp.Rational(3, 2), sp.Rational(5, 2), sp.Rational(9, 2)],
               ys=[1, sp.Rational(5, 4), sp.Rational(17, 8), sp.Rational(9, 2), sp.Rational(21, 2)])]


def trunc(p, order):
    """The exact series ``p`` (a FLINT ``fmpq_poly`` in w) truncated after ``w^(order+1)``."""
    return flint.fmpq_poly(p.coeffs()[:order + 2])


def route_a(order, s, alpha, xs, ys):
    """Moments from the series of the equations in w = 1/z (m = −Σ_k m_k w^{k+1}), in exact
    rational series arithmetic (FLINT ``fmpq_poly``, truncated after each product)."""
    q = lambda v: flint.fmpq(int(sp.Rational(v).p), int(sp.Rational(v).q))     # noqa: E731
    s, alpha, xs, ys = q(s), q(alpha), [q(v) for v in xs], [q(v) for v in ys]
    W = flint.fmpq_poly([0, 1])
    # unknowns as series in w: e0 = δ̃0, e1 = δ̃1, d0 = δ0, d1 = δ1 (each −w·(…))
    e0, e1 = -W * ys[0], -W * ys[1]
    for _ in range(order + 1):
        # t(c) = −w/(1 + c e1 + s e0): average c^j t(c) by expanding in the small (c e1 + s e0)
        def row_avg(j):
            tot = flint.fmpq_poly([])
            for k in range(order + 1):
                # (−1)^k (c e1 + s e0)^k, expanded and averaged: Σ C(k,i) e1^i (s e0)^{k−i} x_{i+j}
                for i in range(k + 1):
                    if i + j <= order:
                        tot += trunc((-1)**k * math.comb(k, i) * xs[i + j] * e1**i * (s * e0)**(k - i), order)
            return trunc(-W * tot, order)
        d0, d1 = row_avg(0), row_avg(1)

        def col_avg(j):
            tot = flint.fmpq_poly([])
            for k in range(order + 1):
                for i in range(k + 1):
                    if i + j <= order:
                        tot += trunc((-1)**k * math.comb(k, i) * ys[i + j] * (d1 / alpha)**i
                                     * (s * d0 / alpha)**(k - i), order)
            return trunc(-W * tot, order)
        e0, e1 = col_avg(0), col_avg(1)
    m = row_avg(0).coeffs() + [flint.fmpq(0)] * (order + 2)
    return [sp.Rational(int((-m[k + 1]).p), int((-m[k + 1]).q)) for k in range(1, order + 1)]


X = [sp.Integer(1)] + list(sp.symbols("x1:%d" % (ORDER + 1), positive=True))
Ysym = [sp.Integer(1)] + list(sp.symbols("y1:%d" % (ORDER + 1), positive=True))
ssym, asym = sp.symbols("s alpha", positive=True)
sym = [sp.expand(v) for v in variance_profile_moments(X, Ysym, ssym, asym, 3)]
for k in range(3):
    show(f"m{k + 1} (variance profile c·d + s, ratio alpha)", sym[k])
for pt in POINTS:
    a = route_a(ORDER, pt["s"], pt["alpha"], pt["xs"], pt["ys"])
    b = variance_profile_moments(pt["xs"], pt["ys"], pt["s"], pt["alpha"], ORDER)
    for k in range(ORDER):
        assert a[k] - b[k] == 0, (k, a[k], b[k])                         # exact rationals
print(f"[ok] route A (series of the equations) = route B (plane trees), m1..m{ORDER}, at two exact rational points")

# 2. reduction to the orthonormal laws
t1, t2, cK, h = sp.symbols("theta1 theta2 c_K h", positive=True)
arch = Architecture(heads=h, gamma_k=h * cK, gamma_v=1, gamma_o=1)
ortho = [sp.Integer(1)] * (ORDER + 1)
for obj, law, ratio, al in (("single", attention_law(arch), cK, 1), ("concat", concatenated_attention_law(arch), cK, h),
                            ("sum", head_sum_law(arch), h * cK, 1)):
    mp = MarchenkoPastur(1 / ratio).moments(ORDER)
    dm = [t2**j * mp[j] for j in range(ORDER + 1)]
    got = variance_profile_moments(ortho, dm, t1 - t2, al, ORDER)
    want = law.moments(ORDER)[1:]
    for k in range(ORDER):
        assert sp.cancel(got[k] - want[k]) == 0, (obj, k, got[k], want[k])     # rational functions
    print(f"[ok] nu_X = delta_1: {obj} moments m1..m{ORDER} = the orthonormal law of freeprob.attention")

# 3. ν_D by the exact core vs the trees with s = 0
q, c = sp.Rational(1, 2), sp.Rational(1, 8)
core = free_mul(MarchenkoPastur(q), MarchenkoPastur(1 / c)).moments(ORDER)
mpx = MarchenkoPastur(q).moments(ORDER)
tree = variance_profile_moments(list(mpx), [1] * (ORDER + 1), 0, c, ORDER)
for k in range(ORDER):
    assert sp.cancel(core[k + 1] - tree[k]) == 0, (k, core[k + 1], tree[k])
print(f"[ok] nu_X ⊠ MP(1/c) (exact core free_mul) = variance-profile trees with s = 0, m1..m{ORDER}")

# 4. numbers: law vs the GE sample with Gaussian inputs
from freeprob.sampler import Dimensions, spectra  # noqa: E402
from freeprob.sampler.inputs import input_matrix, weights_from_inputs  # noqa: E402

n, d, beta = 512, 1024, 0.7
rng = np.random.default_rng(7)
x = input_matrix("gaussian", n, d, rng=rng)
dims = Dimensions(n=n, heads=4, d_k=64, d_v=64, d_o=n)
sp_ = spectra(dims, beta, rng=rng, models=("ge",), objects=("single", "concat"),
              weights=weights_from_inputs(dims, x, rng=rng))
for obj in ("single", "concat"):
    r = input_gram_law(obj, n=n, heads=4, d_k=64, beta=beta, kind="gaussian", d=d)
    ev = sp_["ge", obj]
    for k in (1, 2, 3):
        rel = np.mean(ev**k) / r["moments"][k] - 1
        assert abs(rel) < 0.03 * k, (obj, k, rel)
    print(f"[ok] {obj}: GE sample (Gaussian inputs, n={n}, d={d}) moments m1..m3 within 3k % of the input-Gram law")

# ---------------------------------------------------------------------------------------
# 5.–7.: head_out, stack, out (module docstring)
from freeprob.attention import head_output_law, output_law, stacked_output_law  # noqa: E402
from freeprob.attention.input_gram import input_gram_measure  # noqa: E402
from freeprob.attention.input_gram_out import output_gram_m2, output_gram_moments  # noqa: E402
from freeprob.experiments.compare import TabulatedLaw, law_distances  # noqa: E402
from freeprob.experiments.explore import input_law_table  # noqa: E402

delta1 = (np.array([1.0]), np.array([1.0]))
for (nn, hh, dk, dv, do, b) in ((256, 4, 32, 32, 256, "7/10"), (300, 3, 60, 20, 450, "6/5")):
    arch = Architecture.from_dimensions(n=nn, heads=hh, d_k=dk, d_v=dv, d_o=do).with_beta(b)
    for obj, law in (("head_out", head_output_law), ("stack", stacked_output_law), ("out", output_law)):
        got = output_gram_moments(delta1, obj=obj, beta=float(sp.Rational(b)), c_k=dk / nn, c_v=dv / nn,
                                  heads=hh, gamma_o=do / nn, order=5)
        want = np.array([float(v) for v in law(arch).moments(5)[1:]])
        assert np.allclose(got, want, rtol=1e-8, atol=0), (obj, got, want)
    print(f"[ok] nu_X = delta_1 (n={nn}, h={hh}, dK={dk}, dV={dv}, dO={do}, beta={b}): head_out, stack, out "
          "moments m1..m5 of the equations = the exact orthonormal laws (rtol 1e-8)")
arch = Architecture.from_dimensions(n=256, heads=4, d_k=32, d_v=32, d_o=256).with_beta("1")
r = input_gram_law("out", n=256, heads=4, d_k=32, beta=1.0, kind="orthonormal")
exact, mine = TabulatedLaw.from_law(output_law(arch), points=800), input_law_table(r)
xs = np.linspace(0, r["upper"], 2000)
ks = float(np.max(np.abs(mine.cdf(xs) - exact.cdf(xs))))
assert ks < 2e-4, ks
print(f"[ok] nu_X = delta_1: the tabulated out law (freeprob.attention.input_gram_table: density at "
      f"eta = 1e-10 of the scale, no smoothing) has sup|F - F_exact| = {ks:.1e}")

for kind, q in (("gaussian", 0.5), ("gaussian", 2.0), ("ar1", 0.5)):
    nu = input_gram_measure(kind, q, points=300)
    mom = [float(np.sum(nu[1] * nu[0]**j)) for j in (1, 2, 3, 4)]
    for obj in ("head_out", "stack", "out"):
        kw = dict(obj=obj, beta=1.0, c_k=1 / 8, c_v=1 / 8, heads=4, gamma_o=1.0)
        a, b = output_gram_moments(nu, order=2, **kw)[1], output_gram_m2(mom, **kw)
        assert abs(a / b - 1) < 1e-9, (kind, q, obj, a, b)
    print(f"[ok] {kind} inputs (n/d = {q}): m2 of head_out, stack, out by Wick = m2 of the equations")

n = 1024
for kind, d in (("gaussian", 2 * n), ("ar1", 2 * n)):
    rng = np.random.default_rng(23)
    x = input_matrix(kind, n, d, rng=rng, rho=0.5)
    dims = Dimensions(n=n, heads=4, d_k=n // 8, d_v=n // 8, d_o=n)
    sp_ = spectra(dims, 1.0, rng=rng, models=("ge",), objects=("out", "stack"),
                  weights=weights_from_inputs(dims, x, rng=rng))
    for obj in ("out", "stack"):
        r = input_gram_law(obj, n=n, heads=4, d_k=n // 8, beta=1.0, kind=kind, d=d, rho=0.5, points=250, grid=500)
        dist = law_distances(sp_["ge", obj], input_law_table(r))
        assert dist["relW1"] < 0.035 and dist["KS"] < 0.01, (kind, obj, dist)
        print(f"[ok] {kind} inputs, d = 2n, n = {n}, beta = 1: GE sample vs the input-Gram law of {obj}: "
              f"relW1 {100 * dist['relW1']:.2f} %, KS {100 * dist['KS']:.2f} % (bands 3.5 %, 1 %)")
