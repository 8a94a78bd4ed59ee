r"""The expression language of :mod:`freeprob.cli.expr`: parsed laws equal the Python API's,
errors point at the right column, unknown names list the known ones, and no input can
execute code or exhaust resources."""
import builtins
import time

import pytest
import sympy as sp

import freeprob as fp
from freeprob import attention as att
from freeprob.errors import FreeprobValueError
from freeprob.cli.expr import MAX_DEPTH, NAMES, ExpressionError, parse_law, parse_value
from freeprob.core.symbols import ExpConstant, x

R = sp.Rational
t = sp.Symbol("t")


# -- laws equal to the Python API -----------------------------------------------------------
@pytest.mark.parametrize("text, law", [
    ("Semicircle(0, 1)", fp.Semicircle(0, 1)),
    ("Semicircle(mean=1, variance=1/4)", fp.Semicircle(1, R(1, 4))),
    ("FreePoisson(1/2)", fp.FreePoisson(R(1, 2))),
    ("FreePoisson(rate=t, jump=2)", fp.FreePoisson(t, 2)),
    ("MarchenkoPastur(2)", fp.MarchenkoPastur(2)),
    ("MarchenkoPastur(ratio=1/3, scale=2)", fp.MarchenkoPastur(R(1, 3), 2)),
    ("Atomic([-1, 0, 2], [1/4, 1/2, 1/4])", fp.Atomic([-1, 0, 2], [R(1, 4), R(1, 2), R(1, 4)])),
    ("Atomic((1, 2))", fp.Atomic([1, 2])),
    ("Dirac(3)", fp.Dirac(3)),
    ("Bernoulli()", fp.Bernoulli()),
    ("Bernoulli(p=1/3, low=0, high=1)", fp.Bernoulli(R(1, 3), 0, 1)),
    ("CompoundFreePoisson(2, Bernoulli())", fp.CompoundFreePoisson(2, fp.Bernoulli())),
    ("compound_free_poisson(rate=2, jump_law=Dirac(1))", fp.CompoundFreePoisson(2, fp.Dirac(1))),
    ("free_mul(FreePoisson(1/2), FreePoisson(1/3))",
     fp.free_mul(fp.FreePoisson(R(1, 2)), fp.FreePoisson(R(1, 3)))),
    ("free_add(Semicircle(0, 1), FreePoisson(t), Dirac(1))",
     fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(t), fp.Dirac(1))),
    ("free_power(Bernoulli(), 3/2)", fp.free_power(fp.Bernoulli(), R(3, 2))),
    ("pushforward(Semicircle(0, 1), x**2 - 1)", fp.pushforward(fp.Semicircle(0, 1), x**2 - 1)),
    ("pushforward(Semicircle(0, 1), polynomial=x**3/2)", fp.pushforward(fp.Semicircle(0, 1), x**3 / 2)),
    ("shift(Semicircle(0, 1), 2)", fp.shift(fp.Semicircle(0, 1), 2)),
    ("dilate(FreePoisson(1), -1/2)", fp.dilate(fp.FreePoisson(1), R(-1, 2))),
    ("mixture([Semicircle(0, 1), Dirac(2)], [1/3, 2/3])",
     fp.mixture([fp.Semicircle(0, 1), fp.Dirac(2)], [R(1, 3), R(2, 3)])),
    ("mixture([Semicircle(0, 1), Dirac(2)])", fp.mixture([fp.Semicircle(0, 1), fp.Dirac(2)])),
    ("rectangular_companion(MarchenkoPastur(1/2), 1/2)",
     fp.rectangular_companion(fp.MarchenkoPastur(R(1, 2)), R(1, 2))),
    # scalar sugar, as Law.__add__ / __mul__
    ("2 * Semicircle(0, 1) + 1", fp.shift(fp.dilate(fp.Semicircle(0, 1), 2), 1)),
    ("1 + Semicircle(0, 1) * 2", fp.shift(fp.dilate(fp.Semicircle(0, 1), 2), 1)),
    ("FreePoisson(1) - 1/2", fp.shift(fp.FreePoisson(1), R(-1, 2))),
    ("FreePoisson(1) / 4", fp.dilate(fp.FreePoisson(1), R(1, 4))),
    ("-FreePoisson(1)", fp.dilate(fp.FreePoisson(1), -1)),
    ("   Semicircle( 0 ,\n 1 )\t", fp.Semicircle(0, 1)),
])
def test_laws_equal_api(text, law):
    assert parse_law(text) == law


def test_attention_laws_equal_api():
    arch = att.Architecture(heads=12, gamma_k=1, gamma_v=1, gamma_o=1, beta=1)
    kw = "heads=12, gamma_k=1, gamma_v=1, gamma_o=1, beta=1"
    for name in ("attention_law", "concatenated_attention_law", "head_sum_law", "head_output_law",
                 "stacked_output_law", "output_law"):
        assert parse_law(f"{name}({kw})") == getattr(att, name)(arch), name
    gqa = arch.replace(scheme="gqa", kv_groups=4)
    assert (parse_law(f'head_sum_law({kw}, scheme="gqa", kv_groups=4)').moments(2)
            == att.head_sum_law(gqa).moments(2) == (1, -1 + sp.E, -4 * sp.E + 5 + 2 * sp.exp(2)))
    assert parse_law(f"mean_normalized(output_law({kw}))") == att.mean_normalized(att.output_law(arch))
    # beta = 1/2 goes through ExpConstant like ge_coefficients
    half = att.Architecture(heads=2, gamma_k=1, gamma_v=1, gamma_o=1, beta=R(1, 2))
    assert parse_law("output_law(heads=2, gamma_k=1, gamma_v=1, gamma_o=1, beta=0.5)") == att.output_law(half)


def test_attention_symbolic_matches_readme():
    # README "The attention laws": normalised m2 with θ1, θ2 and the widths symbolic
    law = parse_law("mean_normalized(output_law(heads=h, gamma_k=gamma_K, gamma_v=gamma_V, gamma_o=gamma_O))")
    h, gk, gv, go = sp.symbols("h gamma_K gamma_V gamma_O", positive=True)
    arch = att.Architecture(heads=h, gamma_k=gk, gamma_v=gv, gamma_o=go)
    assert law == att.mean_normalized(att.output_law(arch))
    expected = 1 + 1 / h + 1 / gv + 1 / go + att.theta2**2 / (gk * att.theta1**2)
    assert sp.simplify(law.moments(2)[2] - expected) == 0
    # theta1/theta2 typed by the user are the attention module's symbols
    assert parse_value("theta1 + theta2") == att.theta1 + att.theta2


def test_symbolic_parameters_equal_api():
    law = parse_law("free_mul(FreePoisson(t), Semicircle(0, 1))")
    assert law.moments(6) == fp.free_mul(fp.FreePoisson(t), fp.Semicircle(0, 1)).moments(6)
    t1, t2 = sp.symbols("t1 t2")
    assert parse_law("free_mul(FreePoisson(t1), FreePoisson(t2))").moments(2) == (
        1, t1 * t2, t1**2 * t2**2 + t1**2 * t2 + t1 * t2**2)
    # README quick start: exp(1) - 1 is sympy's E - 1
    law = parse_law("free_mul(FreePoisson(exp(1) - 1), MarchenkoPastur(1/4))")
    assert law == fp.free_mul(fp.FreePoisson(sp.E - 1), fp.MarchenkoPastur(R(1, 4)))


# -- values ------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [
    ("1/3", R(1, 3)), ("0.1", R(1, 10)), ("1e-3", R(1, 1000)), ("2.5e2", 250), ("1_000", 1000),
    ("-(1/2)", R(-1, 2)), ("+3", 3), ("2**-2", R(1, 4)), ("(1/2)**3", R(1, 8)), ("2**(1/2)", sp.sqrt(2)),
    ("exp(1)", sp.E), ("exp(0)", 1), ("exp(1/2)", ExpConstant(R(1, 2))), ("exp(t)", sp.exp(t)),
    ("E - 1", sp.E - 1), ("pi/2", sp.pi / 2), ("sqrt(2)/2", sp.sqrt(2) / 2), ("t**2 + 1", t**2 + 1),
    ("theta_1", sp.Symbol("theta_1")), ("gamma_K/h", sp.Symbol("gamma_K") / sp.Symbol("h")),
])
def test_values(text, value):
    v = parse_value(text)
    assert v == value and isinstance(v, sp.Expr)


def test_value_is_exact():
    assert parse_value("1/3 + 0.5") == R(5, 6)
    assert parse_value("0.1 + 0.2") == R(3, 10)                # no binary-float surprise


# -- errors point at the column ----------------------------------------------------------------
@pytest.mark.parametrize("text, column, fragment", [
    ("Semicircle(0, 1", 11, "never closed"),
    ("Semicircle(0,, 1)", 14, "syntax"),
    ("free_add(Semicircle(0, 1)) +  ", 29, "unexpected end"),
    ("pushforward(Semicircle(0, 1), exp(x))", 31, "not a polynomial in x"),
    ("FreePoisson(1 +* 2)", 16, "syntax"),
    ("  FreePoisson(1 +* 2)", 18, "syntax"),
    ("free_add(Semicircle(0, 1), Semicirle(0, 1))", 28, "unknown function 'Semicirle'"),
    ("free_add(Semicircle(0, 1), FreePoisson(-1))", 40, "`rate` of `FreePoisson` must be positive"),
    ("Semicircle(0, variance=-1)", 24, "must be positive"),
    ("θθ + FreePoisson(1/0)", 19, "division by zero"),
    ("Semicircle(0, 1).__class__", 18, "attributes"),
    ("Dirac(1)[0]", 9, "subscripts"),
    ("FreePoisson(x)", 13, "pushforward"),
    ("FreePoisson(z)", 13, "reserved"),
    ("CompoundFreePoisson(2, 3)", 24, "must be a law"),
    ("shift(Semicircle(0, 1), Dirac(1))", 25, "not a law"),
    ("Semicircle(0, 1) + Semicircle(0, 1)", 18, "free_add"),
    ("FreePoisson('1/3')", 13, "strings"),
    ("Semicircle(mean=1, mean=2)", 25, "given twice"),
    ("Semicircle(0, 1, 2)", 18, "too many positional"),
    ("Semicircle(foo=1)", 12, "unexpected keyword"),
    ("Semicircle(0, 1) % 2", 18, "Mod"),
    ("1 < 2", 3, "comparisons"),
    ("Atomic([1, 2], [3/2, -1/2])", 16, "non-negative"),
    ("FreePoisson(2**10**10)", 14, "exponent"),
    ("FreePoisson(True)", 13, "True"),
    ("FreePoisson(1j)", 13, "complex"),
    ("1/2", 1, "expected a law"),
    ("", 1, "empty"),
])
def test_error_column(text, column, fragment):
    with pytest.raises(ExpressionError) as info:
        parse_law(text)
    err = info.value
    assert isinstance(err, FreeprobValueError)
    assert fragment in str(err), str(err)
    assert err.column == column, str(err)
    assert err.text == text.replace("\n", " ").replace("\t", " ")
    # the message shows the expression and a caret under the column
    lines = str(err).splitlines()
    assert lines[0].endswith(f"at column {column}:")
    assert lines[1] == "    " + err.text
    assert lines[2] == " " * (4 + column - 1) + "^"


def test_unknown_names_list_the_known_ones():
    with pytest.raises(ExpressionError) as info:
        parse_law("Semicirle(0, 1)")
    msg = str(info.value)
    assert "did you mean Semicircle?" in msg
    for name in ("Semicircle", "FreePoisson", "free_mul", "pushforward", "output_law", "mean_normalized",
                 "exp"):
        assert name in msg.splitlines()[-1]
    with pytest.raises(ExpressionError, match="known names: .*CompoundFreePoisson"):
        parse_value("Theta + 1")                           # capitalised names are not symbols
    with pytest.raises(ExpressionError, match="is a function: call it"):
        parse_law("Semicircle")


def test_names_registry():
    for name in ("Semicircle", "FreePoisson", "MarchenkoPastur", "CompoundFreePoisson",
                 "compound_free_poisson",
                 "Atomic", "Dirac", "Bernoulli", "free_add", "free_mul", "free_power", "pushforward", "shift",
                 "dilate", "mixture", "polynomial", "rectangular_companion", "attention_law", "concatenated_attention_law",
                 "head_sum_law", "head_output_law", "stacked_output_law", "output_law", "mean_normalized",
                 "exp", "sqrt", "E", "pi"):
        assert isinstance(NAMES[name], str) and NAMES[name]


# -- safety: no code execution, no resource exhaustion -------------------------------------------
INJECTIONS = [
    "__import__('os').system('touch {marker}')",
    "().__class__.__bases__",
    "().__class__.__bases__[0].__subclasses__()",
    "open('{marker}', 'w')",
    "lambda: 1",
    "[x for x in ()]",
    "Semicircle(0, 1).__class__",
    "Semicircle(0, 1).moments(3)",
    "eval(\"open('{marker}', 'w')\")",
    "exec('import os')",
    "getattr(Semicircle, '__init__')",
    "__builtins__",
    "FreePoisson(__import__('os').system('touch {marker}'))",
    "Semicircle(**{{'mean': 1}})",
    "(a := 1)",
    "f'{{1}}'",
    "Semicircle(0, 1) if 1 else 2",
    "globals()",
    "{{}}",
]


@pytest.mark.parametrize("template", INJECTIONS)
def test_injection_refused_without_side_effects(template, tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    text = template.format(marker=marker)
    flags = []
    real_compile = builtins.compile

    def guarded_compile(source, filename, mode, flags_=0, *args, **kwargs):
        flags.append(flags_)
        return real_compile(source, filename, mode, flags_, *args, **kwargs)

    def refuse(*args, **kwargs):
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "compile", guarded_compile)
    monkeypatch.setattr(builtins, "eval", refuse)
    monkeypatch.setattr(builtins, "exec", refuse)
    with pytest.raises(ExpressionError):
        parse_law(text)
    monkeypatch.undo()
    assert not marker.exists()
    import ast
    assert all(f & ast.PyCF_ONLY_AST for f in flags)      # only ast.parse compiled anything


@pytest.mark.parametrize("text, fragment", [
    ("FreePoisson(2**10**10)", "exponent"),
    ("FreePoisson(10**10**10**10)", "exponent"),
    ("FreePoisson(9**9**9)", "exponent"),
    ("FreePoisson(7**999)", "digits"),
    ("FreePoisson(" + "1" * 500 + ")", "digits"),
    ("FreePoisson(1e999999)", "digits"),
    ("FreePoisson(exp(10**4))", "exp argument"),
    ("FreePoisson(" + "(" * 500 + "1" + ")" * 500 + ")", "nested"),
    ("FreePoisson(" + "-" * 1500 + "1)", "nested"),
    ("FreePoisson(1" + "+1" * 500 + ")", "nested"),
    ("FreePoisson(1)" + " " * 5000, "longer than"),
    ("Dirac(" + "[" * 100 + "]" * 100 + ")", "nested"),
    ("pushforward(Semicircle(0, 1), x**100000)", "exponent"),
])
def test_resource_limits_fail_fast(text, fragment):
    start = time.perf_counter()
    with pytest.raises(ExpressionError, match=fragment):
        parse_law(text)
    assert time.perf_counter() - start < 2.0


def test_depth_limit_allows_reasonable_nesting():
    text = "Semicircle(0, " + "(" * (MAX_DEPTH // 3) + "1" + ")" * (MAX_DEPTH // 3) + ")"
    assert parse_law(text) == fp.Semicircle(0, 1)


def test_not_a_string():
    with pytest.raises(FreeprobValueError, match="string"):
        parse_law(3)


def test_too_many_radicals_are_refused_quickly():
    # review: ten square roots (or 30 nested ones) made the exact field construction run for
    # minutes; more than MAX_RADICALS irrational roots are refused at parse time
    from freeprob.cli.expr import MAX_RADICALS
    t0 = time.monotonic()
    text = "Semicircle(0, " + "+".join(f"sqrt({p})" for p in (2, 3, 5, 7, 11, 13)) + ")"
    with pytest.raises(ExpressionError, match="square roots") as err:
        parse_law(text)
    assert err.value.column == text.index("sqrt(11)") + 1
    with pytest.raises(ExpressionError, match="square roots"):
        parse_law("Semicircle(0, " + "sqrt(" * 30 + "2" + ")" * 31)
    assert time.monotonic() - t0 < 5
    assert MAX_RADICALS == 4 and parse_law("Semicircle(sqrt(2), sqrt(3))").moments(2)[2] == 2 + sp.sqrt(3)
