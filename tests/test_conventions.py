"""Each convention of freeprob.core.conventions, tested on laws whose transforms are known.

Sources: semicircle and free Poisson R-transforms and Cauchy equations, [NS06]
Lecture 12 (Ex. 12.8 and Prop. 12.11) and [MS17] §2.1–2.6; the S-transform of the free
Poisson law in the convention S(u) = χ(u)(1+u)/u is 1/(u + t) (style note, "Decisions
taken").
"""
import sympy as sp

import freeprob as fp
from freeprob.core.series import TruncatedSeries as T
from freeprob.core.symbols import u, w, z

t, s2 = sp.symbols("t sigma2", positive=True)
N = 10


def series_in(expr, var, n):
    return tuple(sp.series(expr, var, 0, n).removeO().coeff(var, k) for k in range(n))


def test_semicircle_r_transform_and_cauchy_equation():
    law = fp.Semicircle(0, s2)
    assert law.r_series(N).coefficients() == series_in(s2 * w, w, N)
    assert law.r_transform() == s2 * w
    # σ² G² − z G + 1 = 0 with z = 1/ζ, multiplied by ζ: σ² ζ G² − G + ζ = 0
    G = law.cauchy_series(N)
    zeta = T([0, 1], order=N, ring=G.ring)
    residual = G * G * zeta * G.ring.convert(s2) - G + zeta
    assert all(sp.simplify(c) == 0 for c in residual.coefficients())


def test_free_poisson_cumulants_r_s_and_cauchy_equation():
    law = fp.FreePoisson(t)
    assert law.free_cumulants(N) == (0,) + (t,) * N
    assert law.r_transform() == t / (1 - w)
    assert [sp.simplify(a - b) for a, b in zip(law.r_series(N).coefficients(), series_in(t / (1 - w), w, N))] == [0] * N
    assert law.s_transform() == 1 / (u + t)
    assert [sp.simplify(a - b) for a, b in zip(law.s_series(N).coefficients(), series_in(1 / (u + t), u, N))] == [0] * N
    # z G² + (t − 1 − z) G + 1 = 0  →  ζ-form: G² + (t − 1)ζ G − G + ζ = 0
    G = law.cauchy_series(N)
    zeta = T([0, 1], order=N, ring=G.ring)
    residual = G * G + zeta * G * G.ring.convert(t - 1) - G + zeta
    assert all(sp.simplify(c) == 0 for c in residual.coefficients())


def test_cauchy_sign_convention():
    # G(z) = ∫ dμ(x)/(z − x): G ~ 1/z and Im G < 0 on the upper half-plane
    for law in (fp.Semicircle(1, 2), fp.FreePoisson(3), fp.FreePoisson(sp.Rational(1, 2))):
        G = law.cauchy_transform()
        for z0 in (sp.Rational(1, 3) + sp.I, -2 + sp.I / 10, 5 + 3 * sp.I):
            assert sp.im(sp.N(G.subs(z, z0), 30)) < 0
        big = sp.N((z * G).subs(z, 10**8 + sp.I), 20)
        assert abs(big - 1) < 1e-6


def test_psi_eta_chi_relations():
    law = fp.free_mul(fp.FreePoisson(2), fp.Semicircle(1, 3))
    psi = law.psi_series(N)
    G = law.cauchy_series(N + 1)
    # 1 + ψ(z) = z^{-1} G(1/z): the ζ-series of G shifted down by one
    assert (1 + psi).coefficients() == G.shift(-1).coefficients()
    eta = law.eta_series(N)
    assert eta == psi / (1 + psi)
    chi = law.chi_series(N)
    assert psi.compose(chi) == T([0, 1], order=N)
    S = law.s_series(N - 1)
    assert S == (chi.shift(-1) * (1 + T([0, 1], order=N))).truncate(N - 1)


def test_cumulant_series_is_w_times_r():
    law = fp.CompoundFreePoisson(2, fp.Atomic([1, 3], [sp.Rational(1, 4), sp.Rational(3, 4)]))
    assert law.cumulant_series(N) == law.r_series(N - 1).shift(1)
    assert law.cumulant_series(N).coefficients() == law.free_cumulants(N - 1)


def test_r_defining_identity_g_of_r_plus_inverse():
    # G(R(w) + 1/w) = w  ⇔  with ζ = 1/z:  G_ζ(w / (1 + w R(w))) = w
    for law in (fp.FreePoisson(2), fp.Semicircle(1, 3), fp.Atomic([0, 1, 4], [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)])):
        R = law.r_series(N)
        wser = T([0, 1], order=N + 1)
        inner = wser / (1 + wser * R)
        assert law.cauchy_series(N).compose(inner).truncate(N) == wser.truncate(N)
