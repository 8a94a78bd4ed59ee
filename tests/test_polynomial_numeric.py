"""The numeric path of polynomial laws (issue 28): M_k-valued subordination solved by Newton
with an analytic Jacobian ([BMS17], [HRS07]), continued to the real axis, with Krawczyk's
bound.  Checked against the exact equations where they exist (20 digits), against the exact
moments and the series at infinity where they do not, and against sampled matrices."""
import mpmath
import numpy as np
import pytest
import sympy as sp

import freeprob as fp
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.numeric.ovsystem import OVSystem, scalar_variable

R = sp.Rational
S = fp.Semicircle(0, 1)
#: a degree-3 polynomial in two variables without an exact equation (y enters with rank 3)
NOEQ = ("x*y*x + y*x*y", {"x": S, "y": fp.FreePoisson(1)})


@pytest.fixture(scope="module")
def noeq():
    return fp.polynomial_law(*NOEQ)


@pytest.mark.parametrize("text, variables, points", [
    ("x*y + y*x", {"x": S, "y": S}, [R(-3, 2), R(1, 10), 2]),
    ("I*(x*y - y*x)", {"x": S, "y": S}, [R(-1, 3), 3]),
    ("x**2 + y**2", {"x": S, "y": S}, [R(1, 2), 5]),
    ("x*y*x", {"x": S, "y": fp.FreePoisson(R(1, 2))}, [-1, R(1, 5), 3]),
])
def test_numeric_density_equals_the_exact_one_at_20_digits(text, variables, points):
    law = fp.polynomial_law(text, variables)
    ours = law.density(points, dps=20, method="numeric")
    exact = law.density(points, dps=20, method="exact")
    assert all(abs(a - b) <= 1e-12 * max(abs(b), 1e-30) for a, b in zip(ours, exact))
    assert all(a == 0 for a, b in zip(ours, exact) if b == 0)       # outside: an exact 0
    z = mpmath.mpc(R(1, 3), R(1, 2))
    assert abs(law.cauchy(z, dps=20, method="numeric") - law.cauchy(z, dps=20, method="exact")) < 1e-18


def test_numeric_support_and_cdf_equal_the_exact_ones():
    law = fp.polynomial_law("x*y + y*x", {"x": S, "y": S})
    (a, b), = law.support(dps=20, method="numeric")
    (ea, eb), = law.support(dps=20)
    assert abs(a - sp.N(ea, 30)) < 1e-19 and abs(b - sp.N(eb, 30)) < 1e-19
    x = R(1, 2)
    assert abs(law.cdf(x, dps=12, method="numeric") - law.cdf(x, dps=12)) < 1e-11
    assert law.atoms(method="numeric") == ()                 # non-atomic variables: none [MSW17]


def test_the_jacobian_is_the_derivative_of_the_residual():
    """Analytic Jacobian and ∂F/∂z against central differences, with a rank-2 free Poisson
    piece (a non-affine R-equation in the system)."""
    law = fp.polynomial_law("x*y + y*x", {"x": fp.FreePoisson(R(1, 2)), "y": S})
    lin = law.linearization()
    sys_ = OVSystem(lin.b0, lin.bs, [scalar_variable(v._evaluator("t")) for v in lin.laws])
    z = 0.3 + 0.8j
    u = sys_.far_start(z) + 0.05 * np.random.default_rng(0).standard_normal(sys_.n)
    J, h = sys_.jacobian(u, z), 1e-6
    for i in range(sys_.n):
        e = np.zeros(sys_.n, complex)
        e[i] = h
        assert np.allclose((sys_.residual(u + e, z) - sys_.residual(u - e, z)) / (2 * h), J[:, i], atol=1e-8)
    assert np.allclose((sys_.residual(u, z + h) - sys_.residual(u, z - h)) / (2 * h), sys_.dz(u), atol=1e-8)


def test_no_equation_law_matches_its_series_at_infinity(noeq):
    """Where no equation is derived (auto falls back to the numeric path), G at z = 40i
    equals Σ m_n z^{-n-1} from the exact moments (the support is in [-6, 12.5]: tail below 1e-20)."""
    with pytest.raises(NotAvailable):
        noeq.cauchy_equation()
    z = mpmath.mpc(0, 40)
    m = noeq.moments(40)
    series = sum(mpmath.mpf(sp.N(c, 30)) / z ** (n + 1) for n, c in enumerate(m))
    assert abs(noeq.cauchy(z, dps=20) - series) < 1e-15


def test_no_equation_density_has_the_exact_moments(noeq):
    """∫ x^n density = m_n for n ≤ 4 (to 1e-8): Gauss–Legendre on the support split at ±1/2
    (a peak next to 0), t² substitution at the edges, double-precision densities; the
    certified density agrees with them."""
    (a, b), = noeq.support(dps=15)
    a, b = float(a), float(b)
    ev = noeq.numeric_evaluator()
    t, w = np.polynomial.legendre.leggauss(120)
    s, w = (t + 1) / 2, w / 2
    pieces = [(a + (-0.5 - a) * s**2, (-0.5 - a) * 2 * s * w),
              (-0.5 + s, w),
              (b - (b - 0.5) * s**2, (b - 0.5) * 2 * s * w)]
    xs = np.concatenate([p[0] for p in pieces])
    ws = np.concatenate([p[1] for p in pieces])
    d = ev.density_float(xs)
    m = noeq.moments(4)
    for n in range(5):
        assert abs(np.sum(ws * d * xs**n) - float(m[n])) < 1e-8 * max(1, abs(float(m[n])))
    sure = noeq.density([R(-3), R(1, 10), R(7)], dps=15)
    assert np.allclose([float(v) for v in sure], ev.density_float([-3.0, 0.1, 7.0]), rtol=1e-12, atol=0)


def test_no_equation_cdf_agrees_with_sampled_matrices(noeq):
    """KS distance between the cdf (integrated density) and the eigenvalues of
    X Y X + Y X Y, X a GOE and Y a Wishart matrix (n = 300, seed 1): within 0.03 (measured
    0.011; 0.003 at n = 1000, 0.0017 at n = 2000: a 1/n finite-size effect)."""
    (a, b), = noeq.support(dps=15)
    a, b = float(a), float(b)
    grid = a + (b - a) * (1 - np.cos(np.pi * np.linspace(0, 1, 401))) / 2
    d = np.nan_to_num(noeq.numeric_evaluator().density_float(grid))
    cdf = np.concatenate([[0], np.cumsum((d[1:] + d[:-1]) / 2 * np.diff(grid))])
    assert abs(cdf[-1] - 1) < 1e-3
    rng = np.random.default_rng(1)
    n = 300
    A = rng.standard_normal((n, n))
    X = (A + A.T) / np.sqrt(2 * n)
    B = rng.standard_normal((n, n)) / np.sqrt(n)
    Y = B @ B.T
    P = X @ Y @ X + Y @ X @ Y
    e = np.sort(np.linalg.eigvalsh((P + P.T) / 2))
    F = np.interp(e, grid, cdf)
    emp = np.arange(1, n + 1) / n
    assert max(np.max(np.abs(F - emp)), np.max(np.abs(F - emp + 1 / n))) < 0.03


def test_numeric_path_refusals(noeq):
    with pytest.raises(FreeprobValueError, match="method must be one of"):
        noeq.density(0, method="fast")
    with pytest.raises(NotAvailable, match="branch"):
        noeq.density(0, ball=True)
    with pytest.raises(NotAvailable):
        noeq.density(0, method="exact")
    atomic = fp.polynomial_law("x*y*x + y", {"x": S, "y": fp.Bernoulli(R(1, 3))})
    with pytest.raises(NotAvailable, match="atoms"):
        atomic.atoms(method="numeric")
    t = sp.Symbol("t")
    with pytest.raises(FreeprobValueError, match="free symbols"):
        fp.polynomial_law("x*y*x + y*x*y", {"x": S, "y": fp.FreePoisson(t)}).density(1, method="numeric")


def test_cli_density_takes_the_numeric_path(noeq, capsys):
    from freeprob.cli import main
    status = main(["density", "polynomial('x*y*x + y*x*y', x=Semicircle(0, 1), y=FreePoisson(1))",
                   "--grid=-1:1:3", "--dps", "15"])
    out = capsys.readouterr().out
    assert status == 0
    api = noeq.density([-1, 0, 1], dps=15)
    assert [ln.split()[1] for ln in out.splitlines()[2:]] == [mpmath.nstr(v, 15) for v in api]


def test_density_rtol_on_both_routes_agrees_with_the_certified_values():
    """``rtol=`` (the tabulation fast path) on the exact and the numeric route gives the
    certified density to that accuracy (xy + yx of two standard semicirculars)."""
    import freeprob as fp
    s = fp.Semicircle(0, 1)
    law = fp.polynomial_law("x*y + y*x", {"x": s, "y": s})
    xs = [0.1, 0.5, 1.3]
    exact = [float(v) for v in law.density(xs, dps=20)]
    for method in ("exact", "numeric"):
        fast = [float(v) for v in law.density(xs, rtol=1e-10, method=method)]
        assert all(abs(a - b) <= 1e-9 * abs(b) for a, b in zip(fast, exact)), (method, fast, exact)
