r"""``freeprob moments | cumulants | equation | density | support`` (:mod:`freeprob.cli.law_commands`).

The outputs equal the Python API's; JSON parses; LaTeX parses back to the same values;
bad input gives a message with the column on stderr and exit status 2; the order limit
needs ``--force``; every ``--help`` example runs as written through the console script.
"""
import csv
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest
import sympy as sp

import freeprob as fp
from freeprob.attention import Architecture, output_law
from freeprob.cli import build_parser, main, table
from freeprob.cli.jacobi_commands import JACOBI_COMMANDS
from freeprob.cli.law_commands import DEFAULT_MAX_ORDER, LAW_COMMANDS, _confirm_order, parse_grid
from freeprob.errors import FreeprobValueError
from freeprob.cli.expr import parse_law
from freeprob.core.symbols import x

R = sp.Rational
MP_PRODUCT = "free_mul(FreePoisson(1/2), FreePoisson(1/3))"
MP_LAW = fp.free_mul(fp.FreePoisson(R(1, 2)), fp.FreePoisson(R(1, 3)))
SCRIPT = Path(sys.executable).with_name("freeprob")


def run(capsys, *argv):
    """``main(argv)`` in process: (status, stdout, stderr)."""
    status = main(list(argv))
    cap = capsys.readouterr()
    return status, cap.out, cap.err


# -- LaTeX back to sympy ---------------------------------------------------------------------
def _braced(s, i):
    """The text inside the braces opening at s[i] and the index after the closing brace."""
    assert s[i] == "{", s[i:]
    depth = 0
    for j in range(i, len(s)):
        depth += {"{": 1, "}": -1}.get(s[j], 0)
        if depth == 0:
            return s[i + 1:j], j + 1
    raise AssertionError(f"unbalanced braces in {s!r}")


def _latex_to_source(s):
    r"""The LaTeX subset sympy's printer emits for these outputs (``\frac``, ``\sqrt``,
    ``^{}``, ``\left( \right)``, ``\cdot``, juxtaposition) as sympy source text; any other
    command fails the test."""
    out, i = [], 0
    while i < len(s):
        if s.startswith(r"\frac", i):
            num, i = _braced(s, i + 5)
            den, i = _braced(s, i)
            out.append(f"(({_latex_to_source(num)})/({_latex_to_source(den)}))")
        elif s.startswith(r"\sqrt", i):
            arg, i = _braced(s, i + 5)
            out.append(f"sqrt({_latex_to_source(arg)})")
        elif s.startswith("^", i):
            arg, i = _braced(s, i + 1)
            out.append(f"**({_latex_to_source(arg)})")
        elif s.startswith(r"\left", i) or s.startswith(r"\right", i):
            i += 5 if s.startswith(r"\left", i) else 6
        elif s.startswith(r"\cdot", i):
            out.append("*")
            i += 5
        elif s[i] == "\\":
            raise AssertionError(f"unexpected LaTeX command in {s!r}")
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def latex_to_sympy(tex):
    r"""Parse LaTeX with ``sympy.parsing.latex.parse_latex`` when its antlr4 runtime is
    installed; otherwise through :func:`_latex_to_source` and sympy's ``parse_expr`` with
    implicit multiplication.  ``e`` is Euler's number in both."""
    if importlib.util.find_spec("antlr4") is not None:
        from sympy.parsing.latex import parse_latex
        expr = parse_latex(tex)
    else:
        from sympy.parsing.sympy_parser import implicit_multiplication, parse_expr, standard_transformations
        expr = parse_expr(_latex_to_source(tex), transformations=standard_transformations
                          + (implicit_multiplication,), local_dict={"e": sp.Symbol("e")})
    return expr.subs(sp.Symbol("e"), sp.E)


def _latex_rows(text):
    lines = text.strip().splitlines()
    assert lines[1] == r"\begin{aligned}" and lines[-1] == r"\end{aligned}"
    rows = []
    for line in lines[2:-1]:
        lhs, rhs = line.rstrip("\\ ").split("&=")
        rows.append((lhs.strip(), rhs.strip()))
    return rows


# -- outputs equal the Python API ------------------------------------------------------------
def test_moments_exact_json(capsys):
    status, out, _ = run(capsys, "moments", MP_PRODUCT, "--order", "10", "--format", "json")
    rec = json.loads(out)
    assert status == 0 and rec["exact"] and rec["dps"] is None and rec["order"] == 10
    assert rec["values"]["moments"] == [str(v) for v in MP_LAW.moments(10)]
    assert [sp.Rational(v) for v in rec["values"]["moments"]] == list(MP_LAW.moments(10))


def test_moments_dps_json_and_table(capsys):
    status, out, _ = run(capsys, "moments", MP_PRODUCT, "--order", "12", "--dps", "30", "--format", "json")
    rec = json.loads(out)
    api = MP_LAW.moments(12, dps=30)
    assert status == 0 and rec["dps"] == 30 and not rec["exact"]
    assert rec["values"]["moments"] == [mpmath.nstr(v, 30) for v in api]
    status, out, _ = run(capsys, "moments", MP_PRODUCT, "--order", "12", "--dps", "30")
    lines = out.splitlines()
    assert "30 significant digits" in lines[0]
    assert [ln.split()[1] for ln in lines[2:]] == [mpmath.nstr(v, 30) for v in api]


def test_moments_symbolic_and_exact_flag(capsys):
    t = sp.Symbol("t")
    law = fp.free_mul(fp.FreePoisson(t), fp.Semicircle(0, 1))
    status, out, _ = run(capsys, "moments", "free_mul(FreePoisson(t), Semicircle(0, 1))", "--order", "6",
                         "--exact", "--format", "csv")
    rows = list(csv.reader(out.splitlines()))
    assert status == 0 and rows[0] == ["n", "m_n"]
    assert [sp.sympify(r[1], locals={"t": t}) for r in rows[1:]] == list(law.moments(6))


def test_cumulants_all_kinds(capsys):
    status, out, _ = run(capsys, "cumulants", MP_PRODUCT, "--order", "8", "--kind", "all", "--format", "json")
    vals = json.loads(out)["values"]
    assert status == 0
    assert vals["free"] == [str(v) for v in MP_LAW.free_cumulants(8)]
    assert vals["boolean"] == [str(v) for v in MP_LAW.boolean_cumulants(8)]
    assert vals["classical"] == [str(v) for v in MP_LAW.classical_cumulants(8)]
    status, out, _ = run(capsys, "cumulants", MP_PRODUCT, "--order", "6", "--kind", "boolean", "--dps", "25",
                         "--format", "csv")
    rows = list(csv.reader(out.splitlines()))
    assert rows[0] == ["n", "b_n"]
    assert [r[1] for r in rows[1:]] == [mpmath.nstr(v, 25) for v in MP_LAW.boolean_cumulants(6, dps=25)]
    # the default kind is free
    status, out, _ = run(capsys, "cumulants", "Semicircle(1, 2)", "--order", "4", "--format", "json")
    assert json.loads(out)["values"] == {"free": ["0", "1", "2", "0", "0"]}


def test_table_matches_freeprob_table(capsys):
    # the same law as `freeprob table` (its default preset): identical columns
    _, out, _ = run(capsys, "cumulants", MP_PRODUCT, "--order", "6", "--kind", "all")
    ours = [ln.split()[1:] for ln in out.splitlines()[2:]]
    buf = io.StringIO()
    table("mp-product", 6, None, out=buf)
    assert ours == [ln.split()[2:] for ln in buf.getvalue().splitlines()[2:]]


def test_latex_round_trip(capsys):
    _, out, _ = run(capsys, "moments", "free_add(Semicircle(0, 1), FreePoisson(t))", "--order", "5",
                         "--format", "latex")
    t = sp.Symbol("t")
    api = fp.free_add(fp.Semicircle(0, 1), fp.FreePoisson(t)).moments(5)
    rows = _latex_rows(out)
    assert [lhs for lhs, _ in rows] == [f"m_{{{n}}}" for n in range(6)]
    assert all(sp.expand(latex_to_sympy(rhs) - v) == 0 for (_, rhs), v in zip(rows, api))
    _, out, _ = run(capsys, "cumulants", MP_PRODUCT, "--order", "5", "--kind", "all", "--format", "latex")
    rows = _latex_rows(out)
    expected = list(MP_LAW.free_cumulants(5)) + list(MP_LAW.boolean_cumulants(5)) \
        + list(MP_LAW.classical_cumulants(5)) + list(MP_LAW.monotone_cumulants(5))
    assert len(rows) == len(expected)
    assert all(sp.simplify(latex_to_sympy(rhs) - v) == 0 for (_, rhs), v in zip(rows, expected))
    assert rows[0][0] == r"\kappa_{0}" and rows[6][0] == "b_{0}" and rows[12][0] == "c_{0}" and rows[18][0] == "h_{0}"
    # a constant: e and fractions of it
    _, out, _ = run(capsys, "moments", "output_law(heads=12, gamma_k=1, gamma_v=1, gamma_o=1, beta=1)",
                         "--order", "2", "--format", "latex")
    api = output_law(Architecture(heads=12, gamma_k=1, gamma_v=1, gamma_o=1, beta=1)).moments(2)
    assert [sp.simplify(latex_to_sympy(rhs) - v) for (_, rhs), v in zip(_latex_rows(out), api)] == [0, 0, 0]


def test_equation(capsys):
    G, z = sp.symbols("G z")
    status, out, _ = run(capsys, "equation", MP_PRODUCT)
    P = MP_LAW.cauchy_equation()
    assert status == 0 and out.strip() == f"{P.as_expr()} = 0"
    lhs = out.strip().removesuffix(" = 0")
    assert sp.Poly(sp.sympify(lhs, locals={"G": G, "z": z}), *P.gens) == P
    status, out, _ = run(capsys, "equation", MP_PRODUCT, "--latex")
    tex = out.strip()
    assert tex.endswith(" = 0")
    assert sp.expand(latex_to_sympy(tex.removesuffix(" = 0")) - P.as_expr()) == 0
    law = fp.pushforward(fp.Semicircle(0, 1), x**2 - 1)
    status, out, _ = run(capsys, "equation", "pushforward(Semicircle(0, 1), x**2 - 1)", "--latex")
    assert sp.expand(latex_to_sympy(out.strip().removesuffix(" = 0")) - law.cauchy_equation().as_expr()) == 0


def test_density_csv_equals_api(capsys, tmp_path):
    path = tmp_path / "d.csv"
    status, out, _ = run(capsys, "density", "MarchenkoPastur(2)", "--grid", "0:6:13", "--dps", "20",
                         "--csv", str(path))
    assert status == 0 and str(path) in out
    rows = list(csv.reader(path.read_text().splitlines()))
    assert rows[0] == ["x", "density"]
    xs = [R(i, 2) for i in range(13)]
    api = fp.MarchenkoPastur(2).density(xs, dps=20)
    assert [r[1] for r in rows[1:]] == [mpmath.nstr(v, 20) for v in api]
    assert [sp.Rational(r[0]) for r in rows[1:]] == xs
    # the table on stdout carries the same values
    status, out, _ = run(capsys, "density", "MarchenkoPastur(2)", "--grid", "0:6:13", "--dps", "20")
    assert [ln.split()[1] for ln in out.splitlines()[2:]] == [mpmath.nstr(v, 20) for v in api]


def test_density_plot(capsys, tmp_path):
    png = tmp_path / "d.png"
    status, _, _ = run(capsys, "density", "mixture([Semicircle(0, 1), Dirac(3)], [1/2, 1/2])",
                       "--grid=-3:4:29", "--plot", str(png))
    assert status == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_support(capsys):
    status, out, _ = run(capsys, "support", "MarchenkoPastur(2)", "--format", "json")
    rec = json.loads(out)
    law = fp.MarchenkoPastur(2)
    assert status == 0
    assert rec["intervals"] == [[str(a), str(b)] for a, b in law.support()]
    assert rec["atoms"] == [[str(a), str(m)] for a, m in law.atoms()] == [["0", "1/2"]]
    assert rec["intervals_approx"][0][0] == mpmath.nstr(mpmath.mpf(3) - 2 * mpmath.sqrt(2), 15)
    status, out, _ = run(capsys, "support", MP_PRODUCT)
    assert "atoms:" in out and "at 0: mass 2/3" in out and "CRootOf" in out



def test_support_of_an_atom_on_a_support_edge(capsys):
    # used to hang: G has a pole at the edge x = 2 where both branches have residue 2/3
    status, out, _ = run(capsys, "support", "mixture([Semicircle(0,1), Dirac(2)], [1/3, 2/3])",
                         "--format", "json")
    rec = json.loads(out)
    assert status == 0
    assert rec["intervals"] == [["-2", "2"]]
    assert rec["atoms"] == [["2", "2/3"]]

def test_grid():
    assert parse_grid("-1:1:5") == [-1, R(-1, 2), 0, R(1, 2), 1]
    assert parse_grid("0:sqrt(2):2") == [0, sp.sqrt(2)]
    for bad in ("0:1", "1:0:5", "0:1:1", "0:t:3", "0:1:x", "0:1:10000000", "0:__import__:3"):
        with pytest.raises(FreeprobValueError):
            parse_grid(bad)


# -- bad input: message on stderr, status 2, no traceback --------------------------------------
@pytest.mark.parametrize("argv, fragment", [
    (["moments", "Semicircle(0,, 1)"], "column 14"),
    (["moments", "Semicirle(0, 1)"], "did you mean Semicircle?"),
    (["cumulants", "FreePoisson(-1)"], "must be positive"),
    (["moments", "FreePoisson(t)", "--dps", "10"], "write a number in place of t in the expression"),
    (["density", "FreePoisson(t)", "--grid", "0:1:3"], "write a number in place of t in the expression"),
    (["density", "FreePoisson(1)", "--grid", "0:1"], "a:b:N"),
    (["equation", "pushforward(Semicircle(0, 1), x**5)"], "beyond the supported"),
    (["density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", "/nonexistent-dir/x.csv"], "cannot write"),
])
def test_bad_input(capsys, argv, fragment):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith("freeprob: error:") and fragment in err and "Traceback" not in err


def test_order_limit(capsys, monkeypatch):
    monkeypatch.delenv("FREEPROB_MAX_ORDER", raising=False)
    status, _, err = run(capsys, "moments", "Semicircle(0, 1)", "--order", str(DEFAULT_MAX_ORDER + 1))
    assert status == 2 and "--force" in err and "above the limit 200" in err
    status, out, _ = run(capsys, "moments", "Semicircle(0, 1)", "--order", "7", "--max-order", "6", "--force",
                         "--format", "json")
    assert status == 0 and json.loads(out)["values"]["moments"][-1] == "0"
    assert run(capsys, "cumulants", "Semicircle(0, 1)", "--order", "7", "--max-order", "6")[0] == 2
    monkeypatch.setenv("FREEPROB_MAX_ORDER", "3")
    status, _, err = run(capsys, "moments", "Semicircle(0, 1)", "--order", "4")
    assert status == 2 and "above the limit 3" in err
    assert run(capsys, "moments", "Semicircle(0, 1)", "--order", "3")[0] == 0
    monkeypatch.setenv("FREEPROB_MAX_ORDER", "lots")
    assert "FREEPROB_MAX_ORDER" in run(capsys, "moments", "Semicircle(0, 1)", "--order", "3")[2]


def test_order_confirmation_on_a_terminal():
    class Tty:
        def __init__(self, answer=""):
            self.answer, self.text = answer, ""

        def isatty(self):
            return True

        def readline(self):
            return self.answer

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    err = Tty()
    _confirm_order(500, 200, False, stdin=Tty("y\n"), stderr=err)          # confirmed
    assert "Compute anyway? [y/N]" in err.text
    with pytest.raises(FreeprobValueError, match="--force"):
        _confirm_order(500, 200, False, stdin=Tty("n\n"), stderr=Tty())
    _confirm_order(500, 200, True)                                           # --force: no question


# -- through the console script ---------------------------------------------------------------
def _help_text(cmd):
    """What ``freeprob CMD --help`` prints (the parser's own help text)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if getattr(a, "choices", None) and cmd in a.choices)
    return sub.choices[cmd].format_help()


@pytest.fixture(scope="module")
def script_runs(tmp_path_factory):
    """Start every console-script run of this module at once (they are independent)."""
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    examples = {cmd: re.findall(r"^example: (.+)$", _help_text(cmd), re.MULTILINE)
                for cmd in LAW_COMMANDS + JACOBI_COMMANDS}
    work = tmp_path_factory.mktemp("cli")
    marker = work / "pwned"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("FREEPROB_MAX_ORDER", None)
    jobs = {}
    for cmd, lines in examples.items():
        for i, line in enumerate(lines):
            argv = shlex.split(line)
            assert argv[0] == "freeprob" and argv[1] == cmd
            jobs[f"example:{cmd}:{i}"] = [str(SCRIPT)] + argv[1:]
    jobs["inject"] = [str(SCRIPT), "moments", f"__import__('os').system('touch {marker}')"]
    procs = {k: subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for k, argv in jobs.items()}
    results = {}
    for k, p in procs.items():
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        results[k] = (p.returncode, out, err)
    return {"examples": examples, "results": results, "work": work, "marker": marker}


def test_every_help_has_a_running_example(script_runs):
    assert all(script_runs["examples"][cmd] for cmd in LAW_COMMANDS + JACOBI_COMMANDS)
    for key, (status, out, err) in script_runs["results"].items():
        if key.startswith("example:"):
            assert status == 0, (key, err)
            assert out.strip() and "Traceback" not in err
    assert (script_runs["work"] / "density.png").exists() and (script_runs["work"] / "density.csv").exists()


def _example(script_runs, cmd):
    (line,) = script_runs["examples"][cmd]
    status, out, err = script_runs["results"][f"example:{cmd}:0"]
    assert status == 0, err
    return shlex.split(line), out


def test_console_script_equals_api(script_runs):
    """The help examples, run through the console script, print what the Python API returns."""
    argv, out = _example(script_runs, "moments")
    law = parse_law(argv[2])
    order = int(argv[argv.index("--order") + 1])
    assert [ln.split()[1] for ln in out.splitlines()[2:]] == [str(v) for v in law.moments(order)]
    argv, out = _example(script_runs, "cumulants")
    law, dps = parse_law(argv[2]), int(argv[argv.index("--dps") + 1])
    rows = list(csv.reader(out.splitlines()))
    api = law.boolean_cumulants(len(rows) - 2, dps=dps)
    assert [r[1] for r in rows[1:]] == [mpmath.nstr(v, dps) for v in api]
    argv, out = _example(script_runs, "equation")
    P = parse_law(argv[2]).cauchy_equation()
    assert sp.expand(latex_to_sympy(out.strip().removesuffix(" = 0")) - P.as_expr()) == 0
    argv, out = _example(script_runs, "density")
    law = parse_law(argv[2])
    xs = parse_grid(argv[argv.index("--grid=-2:4:61")].split("=", 1)[1])
    rows = list(csv.reader((script_runs["work"] / "density.csv").read_text().splitlines()))
    assert [r[1] for r in rows[1:]] == [mpmath.nstr(v, 15) for v in law.density(xs, dps=15)]
    argv, out = _example(script_runs, "support")
    rec, law = json.loads(out), parse_law(argv[2])
    assert rec["intervals"] == [[str(a), str(b)] for a, b in law.support()]
    assert rec["atoms"] == [[str(a), str(m)] for a, m in law.atoms()]


def test_console_script_refuses_injection(script_runs):
    status, out, err = script_runs["results"]["inject"]
    assert status == 2 and out == "" and "Traceback" not in err
    assert "attributes" in err and "^" in err
    assert not script_runs["marker"].exists()


def test_support_digits_beyond_double_precision(capsys):
    # review: --dps 30 printed the edges rounded through a double; the cubic's roots by mpmath
    status, out, _ = run(capsys, "support", "free_mul(FreePoisson(1/2), FreePoisson(1/3))", "--dps", "30")
    assert status == 0
    with mpmath.workdps(40):
        roots = sorted(mpmath.re(r) for r in mpmath.polyroots([1296, -2799, -72, 1], maxsteps=200, extraprec=200))
    assert mpmath.nstr(roots[1], 30) in out and mpmath.nstr(roots[2], 30) in out
    assert "0.666666666666666666666666666667" in out


def test_plot_with_unknown_extension_and_reserved_nan(capsys, tmp_path):
    status, _, err = run(capsys, "density", "Semicircle(0,1)", "--grid", "0:1:3", "--plot",
                         str(tmp_path / "x.nopefmt"))
    assert status == 2 and "--plot" in err and "Traceback" not in err
    status, _, err = run(capsys, "moments", "Semicircle(0, nan)", "--order", "2")
    assert status == 2 and "'nan' is not a number" in err


def test_exact_values_print_all_their_digits(capsys):
    """Python refuses str() of integers above 4300 digits by default; an exact moment has
    as many as it has (moments of order 4000 of the issue's law have more)."""
    status, out, err = run(capsys, "moments", "Dirac(10**300)", "--order", "15", "--format", "csv")
    assert status == 0 and err == ""
    assert out.splitlines()[-1] == "15," + "1" + "0" * 4500                 # m_15 = 10**4500
