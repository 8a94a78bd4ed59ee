"""Finite free probability (freeprob.finite): ⊞_d and ⊠_d against the explicit
Marcus–Spielman–Srivastava sums and against sampled Haar rotations, finite free cumulants
against the partition formula, Hermite and Laguerre against their closed forms, the limit
d → ∞ against the free cumulants of the Law, certified roots against a second method, and the
errors for bad input."""
import json
import random
from math import comb, factorial

import mpmath
import numpy as np
import pytest
import sympy as sp

import freeprob as fp
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.finite import (expected_characteristic_polynomial, finite_free_add,
                             finite_free_cumulants, finite_free_mul, from_finite_free_cumulants,
                             from_roots, is_real_rooted, normalized_coefficients, real_roots)

x = sp.Symbol("x")


def _random_roots(rng, d, low=-9):
    return [sp.Rational(rng.randint(low, 9), rng.randint(1, 5)) for _ in range(d)]


def _mss_add(p, q, d):
    """[MSS22] §1, written out: [x^{d−k}] = (−1)^k Σ_{i+j=k} (d−i)!(d−j)!/(d!(d−k)!) a_i b_j."""
    a = [(-1) ** i * c for i, c in enumerate(p.all_coeffs())]
    b = [(-1) ** j * c for j, c in enumerate(q.all_coeffs())]
    return sp.Poly([(-1) ** k * sum(sp.Rational(factorial(d - i) * factorial(d - k + i),
                                                factorial(d) * factorial(d - k)) * a[i] * b[k - i]
                                    for i in range(k + 1)) for k in range(d + 1)], x)


def _mss_mul(p, q, d):
    a = [(-1) ** i * c for i, c in enumerate(p.all_coeffs())]
    b = [(-1) ** j * c for j, c in enumerate(q.all_coeffs())]
    return sp.Poly([(-1) ** k * a[k] * b[k] / comb(d, k) for k in range(d + 1)], x)


@pytest.mark.parametrize("d", [1, 2, 4, 7])
def test_convolutions_match_the_mss_sums(d):
    rng = random.Random(d)
    p, q = from_roots(_random_roots(rng, d)), from_roots(_random_roots(rng, d, low=0))
    assert finite_free_add(p, q) == _mss_add(p, q, d)
    assert finite_free_mul(p, q) == _mss_mul(p, q, d)
    s = finite_free_add(p, q)
    assert is_real_rooted(s) and is_real_rooted(finite_free_mul(p, q))
    kp, kq, ks = (finite_free_cumulants(f) for f in (p, q, s))
    assert ks == tuple(a + b for a, b in zip(kp, kq))          # cumulants add under ⊞_d


def _haar_mean(d, a, b, n, kind, rng, mul=False):
    """Mean and standard error of the coefficients of det(x − A − QBQ*) (or det(x − AQBQ*))."""
    from scipy.stats import ortho_group, unitary_group
    group = ortho_group if kind == "orthogonal" else unitary_group
    qs = group.rvs(dim=d, size=n, random_state=rng)
    A, B = np.diag(a), np.diag(b)
    rot = qs @ B @ np.conj(np.transpose(qs, (0, 2, 1)))
    mats = A @ rot if mul else A + rot
    coeffs = np.array([np.real(np.poly(np.linalg.eigvals(m))) for m in mats])
    return coeffs.mean(axis=0), coeffs.std(axis=0, ddof=1) / np.sqrt(n)


@pytest.mark.parametrize("kind", ["orthogonal", "unitary"])
def test_expected_characteristic_polynomial_of_haar_rotations(kind):
    """E det(x − A − QBQ*) = p ⊞_d q and E det(x − AQBQ*) = p ⊠_d q ([MSS22] Thm 1.1, 1.5),
    sampled: 3000 rotations at d = 3, every coefficient within 4.5 standard errors."""
    rng = np.random.default_rng(7)
    a, b = [-1, 0, 2], [1, 1, 3]
    p, q = from_roots(a), from_roots(b)
    for mul, exact in ((False, finite_free_add(p, q)), (True, finite_free_mul(p, q))):
        mean, se = _haar_mean(3, a, b, 3000, kind, rng, mul=mul)
        want = np.array([float(c) for c in exact.all_coeffs()])
        assert np.all(np.abs(mean - want) <= 4.5 * se + 1e-12), (mul, mean, want, se)
        assert np.max(se[1:]) < 0.2                             # the test can fail


def test_cumulants_against_the_partition_formula():
    """κ_n = (−d)^{n−1}/(n−1)! Σ_π (−1)^{|π|−1}(|π|−1)! Π_V ã_{|V|} ([AP18] §3)."""
    from sympy.utilities.iterables import multiset_partitions
    p = from_roots([-2, 0, 1, 1, 3])
    d, a = 5, normalized_coefficients(from_roots([-2, 0, 1, 1, 3]))
    kappa = finite_free_cumulants(p)
    for n in range(1, 5):
        total = sum((-1) ** (len(pi) - 1) * factorial(len(pi) - 1) * sp.Mul(*[a[len(v)] for v in pi])
                    for pi in multiset_partitions(list(range(n))))
        assert kappa[n] == sp.Integer(-d) ** (n - 1) / factorial(n - 1) * total
    roots = np.array([-2, 0, 1, 1, 3])
    assert kappa[1] == sp.Rational(3, 5) and float(kappa[2]) == pytest.approx(d / (d - 1) * roots.var())
    assert from_finite_free_cumulants(kappa, 5) == p           # the inverse map


def test_hermite_and_laguerre_closed_forms():
    """Semicircle(m, v) → (v/d)^{d/2} He_d((x−m)√(d/v)); ⊞_d of Hermites is Hermite; the free
    Poisson law with t d = m gives E det(x − GGᵀ/d) = (1 − ∂/d)^m x^d ([MSS22] §6)."""
    d, v = 6, sp.Rational(3, 2)
    he = sp.Poly(sp.expand((v / d) ** sp.Rational(d, 2) * sp.hermite_prob(d, (x - 1) * sp.sqrt(d / v))), x)
    assert expected_characteristic_polynomial(fp.Semicircle(1, v), d) == he
    h1 = expected_characteristic_polynomial(fp.Semicircle(0, 1), d)
    h2 = expected_characteristic_polynomial(fp.Semicircle(1, sp.Rational(1, 2)), d)
    assert finite_free_add(h1, h2) == he
    m = 9
    lag = sp.Poly(sum(comb(m, j) * (-sp.Rational(1, d)) ** j * sp.diff(x ** d, x, j) for j in range(m + 1)), x)
    assert expected_characteristic_polynomial(fp.FreePoisson(sp.Rational(m, d)), d) == lag
    t = sp.Symbol("t", positive=True)
    assert finite_free_cumulants(expected_characteristic_polynomial(fp.Semicircle(0, t), 4)) == (0, 0, t, 0, 0)


def test_finite_free_cumulants_tend_to_the_free_cumulants():
    """As d → ∞ the finite free cumulants of the expected characteristic polynomial tend to the
    free cumulants of the law ([AP18], [AGP23] for ⊠_d): exactly equal for ⊞ of Hermite and
    Laguerre, an O(1/d) error with atoms or ⊠ (the error times d settles)."""
    law = fp.free_add(fp.Semicircle(1, 2), fp.FreePoisson(sp.Rational(1, 2), 3))
    assert finite_free_cumulants(expected_characteristic_polynomial(law, 8), 5) == law.free_cumulants(5)
    for law in (fp.free_mul(fp.FreePoisson(1), fp.FreePoisson(2)), fp.Bernoulli()):
        free = law.free_cumulants(4)
        errs = {d: max(abs(a - b) for a, b in zip(finite_free_cumulants(
            expected_characteristic_polynomial(law, d), 4), free)) for d in (16, 32, 64)}
        assert errs[64] < errs[32] < errs[16], errs
        assert float(errs[64] * 64) == pytest.approx(float(errs[32] * 32), rel=0.1), errs


def test_real_roots_two_methods():
    """Certified roots against closed forms (Hermite d = 4: ±√(3 ± √6)/√… scaled) and against
    mpmath's polyroots at 40 digits for a ⊞_12 of random inputs."""
    h = expected_characteristic_polynomial(fp.Semicircle(0, 4), 4)     # He_4(x)·1 scaled: d=4, v=4
    exact = sorted(float(r) for r in sp.Poly(h).all_roots())
    balls = real_roots(h, ball=True, dps=30)
    assert all(b.contains(sp.Float(r, 30)) or abs(float(b.mid()) - r) < 1e-15
               for b, r in zip(balls, exact))
    rng = random.Random(3)
    s = finite_free_add(from_roots(_random_roots(rng, 12)), from_roots(_random_roots(rng, 12)))
    with mpmath.workdps(60):
        ref = sorted(mpmath.re(r) for r in mpmath.polyroots(
            [mpmath.mpf(int(c.p)) / int(c.q) for c in s.all_coeffs()], maxsteps=400, extraprec=400))
        got = real_roots(s, dps=40)
        assert max(abs(a - b) / max(1, abs(b)) for a, b in zip(got, ref)) < mpmath.mpf(10) ** -39
    assert real_roots(from_roots([0, 0, 1, sp.Rational(1, 3)])) == (0, 0, mpmath.mpf(1) / 3, 1)


def test_bad_input():
    with pytest.raises(FreeprobValueError, match="degree 2 and q degree 3"):
        finite_free_add(x**2 - 1, x**3 - x)
    with pytest.raises(FreeprobValueError, match="degree ≥ 1"):
        finite_free_add([1], [1])
    with pytest.raises(FreeprobValueError, match="monic"):
        finite_free_mul(2 * x**2 - 1, x**2 - 1)
    with pytest.raises(FreeprobValueError, match="q = x\\*\\*2 \\+ 1 is not real-rooted"):
        finite_free_add(x**2 - 1, x**2 + 1)
    with pytest.raises(FreeprobValueError, match="both have negative roots"):
        finite_free_mul(x**2 - 1, x**2 - 4)
    assert finite_free_add(x**2 - 1, x**2 + 1, check=False).as_expr() == x**2
    with pytest.raises(FreeprobValueError, match="2 of its 3 roots"):
        real_roots((x**2 + 1) * (x - 1))
    with pytest.raises(FreeprobValueError, match="from 0 to 3"):
        finite_free_cumulants(x**3, 4)
    with pytest.raises(FreeprobValueError, match="is not an integer"):
        expected_characteristic_polynomial(fp.Bernoulli(), 3)
    with pytest.raises(NotAvailable, match="Semicircle"):
        expected_characteristic_polynomial(fp.pushforward(fp.Semicircle(0, 1), x**2), 3)
    with pytest.raises(FreeprobValueError, match="must be a freeprob Law"):
        expected_characteristic_polynomial("semicircle", 3)
    with pytest.raises(FreeprobValueError, match="from 1 to"):
        expected_characteristic_polynomial(fp.Semicircle(), 0)


def test_real_rootedness_and_root_counts_against_sympy():
    """Sturm's theorem from the ball-arithmetic Jacobi sequence: is_real_rooted and the count
    of non-real roots in real_roots' error agree with sympy's exact real-root isolation."""
    rng = random.Random(5)
    for _ in range(60):
        n = rng.randint(2, 8)
        f = sp.Poly(x**n + sum(rng.randint(-5, 5) * x**i for i in range(n)), x)
        real = len(sp.real_roots(f))
        assert is_real_rooted(f) == (real == n), f
        if real < n:
            with pytest.raises(FreeprobValueError, match=f": {n - real} of its {n} roots"):
                real_roots(f)


def test_cli_examples_and_errors(capsys, monkeypatch):
    """Every example of ``freeprob finite --help`` runs as written, with the values above
    (⊞_2 of two ±1 spectra: ±√2; ⊠_2 with a rank-one projection; Hermite ⊞ Laguerre: the
    cumulants κ_1 = 1/2, κ_2 = 3/2, κ_n = 1/2); bad input is one error line, status 2."""
    import argparse
    import re
    import shlex

    from freeprob.cli import build_parser, main
    monkeypatch.setenv("FREEPROB_IN_PROCESS", "1")
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = " ".join(sub.choices["finite"].format_help().split())
    lines = re.findall(r"example: (freeprob .+?)(?= example: |$)", text)
    want = ["roots (15 digits, certified): -1.4142135623731, 1.4142135623731",
            "finite free cumulants κ_1..κ_d: 1, 2",
            "finite free cumulants κ_1..κ_d: 1/2, 3/2" + ", 1/2" * 6]
    assert len(lines) == 3
    for line, expect in zip(lines, want):
        assert main(shlex.split(line)[1:]) == 0
        assert expect in capsys.readouterr().out
    assert main(["finite", "mul", "x**2 - 1", "x**2 - 4"]) == 2
    assert "both have negative roots" in capsys.readouterr().err
    assert main(["finite", "add", "x**2 + x*foo(1)", "x**2 - 1"]) == 2
    assert "unknown function 'foo' at column 10" in capsys.readouterr().err
    assert main(["finite", "add", "pushforward(Semicircle(0, 1), x**2)", "Semicircle(0, 1)",
                 "--degree", "3"]) == 2
    assert "no expected characteristic polynomial for Pushforward" in capsys.readouterr().err
    assert main(["finite", "add", "x**2 - t", "x**2 - 1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["coefficients"] == ["1", "0", "-t - 1"]


def test_cli_bad_operand_in_the_worker_is_one_line(tmp_path):
    """A malformed operand is parsed in the command's worker process: its ExpressionError
    must cross the process boundary (it did not pickle, and the command printed a traceback)."""
    import os
    import pickle
    import subprocess
    import sys
    from freeprob.cli.expr import ExpressionError
    err = pickle.loads(pickle.dumps(ExpressionError("bad", "x**2 - nan", 8, "a note")))
    assert (err.reason, err.text, err.column, err.note) == ("bad", "x**2 - nan", 8, "a note")
    env = {k: v for k, v in os.environ.items() if k != "FREEPROB_IN_PROCESS"}
    proc = subprocess.run([sys.executable, "-m", "freeprob.cli", "finite", "add", "x**2 - 1", "x**2 - nan"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "'nan' is not a number" in proc.stderr and "column 8" in proc.stderr


def test_free_poisson_rate_without_a_real_rooted_laguerre_polynomial_is_refused():
    """FreePoisson(1/3) at d = 4: t·d = 4/3, and the Laguerre polynomial has complex roots;
    at d = 3 (t·d = 1) it is the expected characteristic polynomial of a rank-one Wishart."""
    import freeprob as fp
    from freeprob.errors import FreeprobValueError
    from freeprob.finite import expected_characteristic_polynomial, is_real_rooted
    with pytest.raises(FreeprobValueError, match="not an integer and t ≤ 1 − 1/d"):
        expected_characteristic_polynomial(fp.FreePoisson(sp.Rational(1, 3)), 4)
    p = expected_characteristic_polynomial(fp.FreePoisson(sp.Rational(1, 3)), 3)
    assert is_real_rooted(p) and p.as_expr().expand() == (x**3 - x**2).expand()
