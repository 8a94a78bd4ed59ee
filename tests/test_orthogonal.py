r"""Jacobi parameters, orthogonal polynomials and Hankel determinants (issue 30), against closed
forms (semicircle, free Poisson), a separate Stieltjes procedure in mpmath at 120 digits on a
law without a closed form, the moments rebuilt from the Jacobi matrix, the product formula
``Δ_n = Π β_i^{n−i}`` and orthogonality; finitely supported laws stop at ``β_n = 0``."""
import mpmath
import pytest
import sympy as sp

import freeprob as fp
from freeprob.cli import main
from freeprob.core.coefficients import exact_ring_for
from freeprob.core.orthogonal import moments_from_jacobi
from freeprob.core.symbols import x
from freeprob.errors import FreeprobValueError, NotAvailable

HALF, THIRD = sp.Rational(1, 2), sp.Rational(1, 3)


def test_closed_forms_symbolic():
    a, v, t = sp.symbols("a v t", positive=True)
    assert fp.Semicircle(a, v).jacobi_parameters(5) == ((a,) * 5, (v,) * 5)
    assert fp.FreePoisson(t).jacobi_parameters(5) == ((t,) + (t + 1,) * 4, (t,) * 5)
    assert fp.FreePoisson(t).hankel_determinants(5) == tuple(t ** (n * (n - 1) // 2) for n in range(6))
    # Chebyshev polynomials of the second kind, U_n(x/2), for the standard semicircle
    polys = fp.Semicircle(0, 1).orthogonal_polynomials(6)
    assert [p.as_expr() for p in polys] == [sp.expand(sp.chebyshevu(n, x / 2)) for n in range(7)]


def test_closed_forms_marchenko_pastur_and_arcsine():
    c = sp.Symbol("c", positive=True)
    # MP(c) = FreePoisson(1/c, jump c): α_0 = 1, α_n = 1 + c, β_n = c
    assert fp.MarchenkoPastur(c).jacobi_parameters(5) == ((1,) + (1 + c,) * 4, (c,) * 5)
    # the arcsine law on [−2, 2] (variance 2), built two ways: α_n = 0, β = (2, 1, 1, …), and the
    # monic orthogonal polynomials 2 T_n(x/2) (Chebyshev polynomials of the first kind)
    for law in (fp.free_add(fp.Bernoulli(), fp.Bernoulli()), fp.boolean_add(fp.Semicircle(0, 1), fp.Semicircle(0, 1))):
        assert law.jacobi_parameters(8) == ((0,) * 8, (2,) + (1,) * 7)
        polys = law.orthogonal_polynomials(6)
        assert [p.as_expr() for p in polys[1:]] == [sp.expand(2 * sp.chebyshevt(n, x / 2)) for n in range(1, 7)]


def test_boolean_and_monotone_operations_on_jacobi_parameters():
    # μ ⊎ μ = μ^{⊎2}: F_{μ⊎μ} = 2 F_μ − z doubles α_0 and β_1 and keeps the rest of the continued
    # fraction; μ ▷ δ_a = μ shifted: every α_n + a
    law = fp.free_mul(fp.FreePoisson(HALF), fp.FreePoisson(THIRD))
    alpha, beta = law.jacobi_parameters(6)
    assert fp.boolean_add(law, law).jacobi_parameters(6) == ((2 * alpha[0],) + alpha[1:], (2 * beta[0],) + beta[1:])
    shifted = fp.monotone_add(law, fp.Dirac(THIRD)).jacobi_parameters(6)
    assert shifted == (tuple(a + THIRD for a in alpha), beta)


def _stieltjes(moments, k):
    """The Stieltjes procedure on the moment functional ⟨p, q⟩ = Σ p_i q_j m_{i+j} (mpmath,
    polynomials as coefficient lists): α_n = ⟨x P_n, P_n⟩/⟨P_n, P_n⟩, β_n = ⟨P_n, P_n⟩/⟨P_{n−1}, P_{n−1}⟩."""
    def inner(p, q):
        return mpmath.fsum(pi * qj * moments[i + j] for i, pi in enumerate(p) for j, qj in enumerate(q))

    prev, cur = [mpmath.mpf(0)], [mpmath.mpf(1)]
    alpha, beta, norm_prev = [], [], None
    for n in range(k + 1):
        norm = inner(cur, cur)
        if n:
            beta.append(norm / norm_prev)
        if n == k:
            break
        a = inner([0] + cur, cur) / norm
        alpha.append(a)
        b = beta[-1] if n else 0
        nxt = [mpmath.mpf(0)] + cur
        nxt = [c - a * (cur[i] if i < len(cur) else 0) - b * (prev[i] if i < len(prev) else 0)
               for i, c in enumerate(nxt)]
        prev, cur, norm_prev = cur, nxt, norm
    return alpha, beta


def test_against_a_stieltjes_procedure_at_high_precision():
    law = fp.free_mul(fp.FreePoisson(HALF), fp.FreePoisson(THIRD))
    k = 10
    with mpmath.workdps(120):
        alpha, beta = _stieltjes(law.moments(2 * k, dps=120), k)
    got_a, got_b = law.jacobi_parameters(k, dps=40)
    assert all(abs(p - q) < mpmath.mpf(10) ** -38 * abs(q) for p, q in zip(got_a + got_b, alpha + beta))
    exact_a, exact_b = law.jacobi_parameters(k)
    assert exact_a[0] == sp.Rational(1, 6) and exact_b[0] == law.moments(2)[2] - sp.Rational(1, 36)


def test_moments_from_the_jacobi_matrix_and_hankel_product_formula():
    t = sp.Symbol("t")
    for law in (fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(t)),
                fp.boolean_add(fp.FreePoisson(HALF), fp.Semicircle(1, THIRD))):
        k = 4
        alpha, beta = law.jacobi_parameters(k)
        ring = exact_ring_for(alpha + beta)
        m = moments_from_jacobi(ring, [ring.convert(a) for a in alpha], [ring.convert(b) for b in beta], 2 * k)
        assert all(sp.cancel(ring.to_sympy(a) - b) == 0 for a, b in zip(m, law.moments(2 * k)))
        with pytest.raises(FreeprobValueError, match="need"):          # too few parameters for m_{2k+2}
            moments_from_jacobi(ring, [ring.convert(a) for a in alpha], [ring.convert(b) for b in beta], 2 * k + 2)
        hankel = law.hankel_determinants(k + 1)
        for n in range(k + 2):
            prod = sp.Mul(*[beta[i - 1] ** (n - i) for i in range(1, n)])
            assert sp.cancel(hankel[n] - prod) == 0


def test_hankel_fraction_free_elimination_against_direct_determinants():
    # the Bareiss route (symbolic and algebraic parameters) against sympy's determinant of the
    # Hankel matrix, formed here only as the independent check
    t = sp.Symbol("t")
    for law in (fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(t)), fp.Semicircle(sp.sqrt(2), THIRD),
                fp.Atomic([0, 1, t], [HALF, sp.Rational(1, 4), sp.Rational(1, 4)])):
        m = law.moments(8)
        want = [sp.Integer(1)] + [sp.Matrix(n, n, lambda i, j: m[i + j]).det() for n in range(1, 5)]
        assert all(sp.simplify(a - b) == 0 for a, b in zip(law.hankel_determinants(4), want))
    assert fp.Atomic([0, 1, t], [HALF, sp.Rational(1, 4), sp.Rational(1, 4)]).hankel_determinants(5)[4:] == (0, 0)


def test_hankel_integer_recurrence_against_flint_determinants():
    import flint
    for law in (fp.free_mul(fp.FreePoisson(HALF), fp.FreePoisson(THIRD)), fp.boolean_add(fp.Bernoulli(), fp.Dirac(1)),
                fp.Semicircle(-1, THIRD)):
        m = [flint.fmpq(int(v.p), int(v.q)) for v in law.moments(14)]
        want = [1] + [flint.fmpq_mat(n, n, [m[i + j] for i in range(n) for j in range(n)]).det() for n in range(1, 9)]
        assert law.hankel_determinants(8) == tuple(sp.Rational(int(v.p), int(v.q)) for v in map(flint.fmpq, want))


def test_orthogonality_against_the_moments():
    for law in (fp.pushforward(fp.Semicircle(0, 1), x**2 + x), fp.Semicircle(sp.sqrt(2), 1)):
        polys = law.orthogonal_polynomials(4)
        m = law.moments(8)
        for i in range(5):
            for j in range(i + 1):
                prod = (polys[i] * polys[j]).all_coeffs()[::-1]
                value = sp.nsimplify(sp.expand(sum(c * m[e] for e, c in enumerate(prod))))
                assert (value == 0) == (i != j)


def test_finitely_supported_laws_stop_at_a_zero_beta():
    law = fp.Atomic([0, 1, 3], [sp.Rational(1, 4), sp.Rational(1, 4), HALF])
    alpha, beta = law.jacobi_parameters(6)
    assert len(alpha) == len(beta) == 3 and beta[-1] == 0 and all(b > 0 for b in beta[:-1])
    polys = law.orthogonal_polynomials(6)
    assert len(polys) == 4 and polys[-1].as_expr() == sp.expand(x * (x - 1) * (x - 3))
    assert law.hankel_determinants(6)[4:] == (0, 0, 0)
    assert fp.Bernoulli().jacobi_parameters(4) == ((0, 0), (1, 0))
    assert fp.boolean_add(fp.Bernoulli(), fp.Bernoulli()).jacobi_parameters(3) == ((0, 0), (2, 0))
    p = sp.Symbol("p", positive=True)                 # symbolic weights: β_2 = 0 identically
    a, b = fp.Bernoulli(p, 0, 1).jacobi_parameters(4)
    assert len(a) == 2 and b[-1] == 0 and sp.simplify(b[0] - p * (1 - p)) == 0
    # irrational atoms go through the generic Bareiss elimination
    law = fp.Atomic([0, sp.sqrt(2)], [HALF, HALF])
    assert law.hankel_determinants(3) == (1, 1, HALF, 0)


def test_digits_and_bad_input():
    law = fp.Semicircle(1, sp.sqrt(2))
    a, b = law.jacobi_parameters(3, dps=30)
    with mpmath.workdps(40):
        assert all(abs(v - mpmath.sqrt(2)) < mpmath.mpf(10) ** -29 for v in b) and all(v == 1 for v in a)
    with pytest.raises(FreeprobValueError, match="free symbols"):
        fp.FreePoisson(sp.Symbol("t")).jacobi_parameters(3, dps=10)
    for bad in (-1, 2.5, True, "3"):
        with pytest.raises(FreeprobValueError, match="order must be an integer"):
            fp.Semicircle(0, 1).hankel_determinants(bad)
        with pytest.raises(FreeprobValueError, match="order must be an integer"):
            fp.Semicircle(0, 1).jacobi_parameters(bad)
    with pytest.raises(FreeprobValueError, match="dps"):
        fp.Semicircle(0, 1).jacobi_parameters(3, dps=0)
    # k = 0 is the empty request, as for moments(0): no parameters, Δ_0 and P_0 only
    assert fp.Semicircle(0, 1).jacobi_parameters(0) == ((), ())
    assert fp.Semicircle(0, 1).hankel_determinants(0) == (1,)

    class NoMoments(fp.Law):                      # a law that defines no moments
        pass

    for method in ("jacobi_parameters", "hankel_determinants", "orthogonal_polynomials", "monotone_cumulants"):
        with pytest.raises(NotAvailable, match="defines neither moments nor cumulants"):
            getattr(NoMoments(), method)(3)


def test_cli_jacobi(capsys):
    assert main(["jacobi", "FreePoisson(t)", "--order", "3", "--hankel", "--format", "csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["n,alpha_n,beta_n,hankel_n", "0,t,,1", "1,t + 1,t,1", "2,t + 1,t,t", "3,,t,t**3"]
    assert main(["jacobi", "Atomic([0, 1, 3], [1/4, 1/4, 1/2])", "--order", "5", "--polynomials"]) == 0
    out = capsys.readouterr().out
    assert "exactly 3 support points" in out and "x**3 - 4*x**2 + 3*x" in out
    assert main(["jacobi", "Semicircle(0, 2)", "--order", "2", "--dps", "5", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["0,0.0,", "1,0.0,2.0", "2,,2.0"]
    assert main(["jacobi", "Semicircle(0, t)", "--dps", "5"]) == 2
    assert "write a number in place of t" in capsys.readouterr().err
    with pytest.raises(SystemExit):                       # --order counts parameters: at least 1
        main(["jacobi", "Semicircle(0, 1)", "--order", "0"])
    assert "expected an integer from 1" in capsys.readouterr().err
    assert main(["jacobi", "Semicircle(0, 1)", "--polynomials", "--dps", "5"]) == 2
