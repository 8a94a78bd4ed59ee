"""freeprob against FriCAS's ``Distribution`` domain (issue 30): the same inputs, the outputs
compared exactly, the times side by side.

FriCAS (Franz Lehner's ``distro.spad``: ``booleanConvolution``, ``monotoneConvolution``,
``monotoneCumulants``, ``jacobiParameters``, ``orthogonalPolynomials``,
``hankelDeterminants``) is the anchor; it is not a dependency of freeprob.  Install it in a
scratch environment (Debian: ``apt-get install -y fricas``) and run by hand::

    python benchmarks/bench_fricas.py            # the sizes of docs/benchmarks.md (about 15 min)
    python benchmarks/bench_fricas.py --quick    # small sizes (about 1 min)
    python benchmarks/bench_fricas.py --fricas /path/to/fricas --timeout 600

For each case both systems start from the same law, with the moments of the operands computed
beforehand and not timed (FriCAS: ``firstn(moments x, n)``; freeprob: ``law.moments(n)``, cached
on the law), then the operation is timed: FriCAS's own CPU time of that one statement
(``)set message time on``: evaluation plus garbage collection, 10 ms resolution; the FriCAS
start-up is not counted), freeprob's ``time.process_time`` (best of 3, a fresh law each time).
The outputs are parsed (FriCAS's ``InputForm``) and compared exactly (``sympy.cancel`` of the
difference for symbolic entries).  Prints one table row per case: the case, the size, whether
the outputs agree, both times and their ratio.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import sympy as sp

import freeprob as fp

HALF, THIRD = sp.Rational(1, 2), sp.Rational(1, 3)
S, T = sp.symbols("s t")

# FriCAS prelude: distributions over the rationals (D) and over Fraction Polynomial Integer (DP)
PRELUDE = """)set message time on
)set output length 200
R ==> Fraction Integer
D ==> DistributionPackage(R)
RP ==> Fraction Polynomial Integer
DP ==> DistributionPackage(RP)
"""

# name -> (FriCAS expression of the law, freeprob constructor)
LAWS = {
    "semicircle": ("wignerDistribution(1)$D", lambda: fp.Semicircle(0, 1)),
    "free Poisson 1/2": ("freePoissonDistribution(1/2)$D", lambda: fp.FreePoisson(HALF)),
    "MP(1/2)⊠MP(1/3)": ("freeMultiplicativeConvolution(freePoissonDistribution(1/2)$D, "
                        "freePoissonDistribution(1/3)$D)",
                        lambda: fp.free_mul(fp.FreePoisson(HALF), fp.FreePoisson(THIRD))),
    "semicircle(s)": ("wignerDistribution(s)$DP", lambda: fp.Semicircle(0, S)),
    "free Poisson t": ("freePoissonDistribution(t)$DP", lambda: fp.FreePoisson(T)),
}


def _case(name, size, operands, fricas, ours, moments_needed):
    """One comparison: ``operands`` are keys of LAWS; ``fricas`` a FriCAS expression in
    ``a`` (and ``b``) and ``K``; ``ours(a, b, K)`` the freeprob values (a list);
    ``moments_needed(K)`` the operand moments computed beforehand."""
    return {"name": name, "K": size, "operands": operands, "fricas": fricas, "ours": ours,
            "moments": moments_needed}


def _sympy_list(values):
    return [sp.sympify(v) for v in values]


def cases(quick):
    def sizes(small, large):
        return small if quick else large

    out = []
    for K in sizes([40], [100, 200]):
        out.append(_case("boolean ⊎ moments", K, ("semicircle", "free Poisson 1/2"),
                         "firstn(moments booleanConvolution(a, b), K)",
                         lambda a, b, K: fp.boolean_add(a, b).moments(K)[1:], lambda K: K))
        out.append(_case("monotone ▷ moments", K, ("semicircle", "free Poisson 1/2"),
                         "firstn(moments monotoneConvolution(a, b), K)",
                         lambda a, b, K: fp.monotone_add(a, b).moments(K)[1:], lambda K: K))
    for K in sizes([20], [40, 80]):
        out.append(_case("monotone cumulants", K, ("MP(1/2)⊠MP(1/3)",),
                         "firstn(monotoneCumulants a, K)",
                         lambda a, b, K: a.monotone_cumulants(K)[1:], lambda K: K))
    for K in sizes([10], [10, 20, 30]):
        out.append(_case("Jacobi parameters", K, ("MP(1/2)⊠MP(1/3)",),
                         "[entries complete first(jacobiParameters(a).an, K), "
                         "entries complete first(jacobiParameters(a).bn, K)]",
                         lambda a, b, K: [list(v) for v in a.jacobi_parameters(K)], lambda K: 2 * K))
    for K in sizes([8], [10, 20]):
        out.append(_case("Hankel determinants", K, ("MP(1/2)⊠MP(1/3)",),
                         "entries complete first(hankelDeterminants a, K)",
                         lambda a, b, K: a.hankel_determinants(K + 1)[2:], lambda K: 2 * K))
        out.append(_case("orthogonal polynomials", K, ("MP(1/2)⊠MP(1/3)",),
                         "[[coefficient(p, i) for i in 0..degree(p)] for p in "
                         "entries complete first(orthogonalPolynomials a, K)]",
                         lambda a, b, K: [list(reversed(p.all_coeffs())) for p in a.orthogonal_polynomials(K)[1:]],
                         lambda K: 2 * K))
    for K in sizes([8], [10, 20]):
        out.append(_case("Jacobi parameters, symbolic", K, ("free Poisson t",),
                         "[entries complete first(jacobiParameters(a).an, K), "
                         "entries complete first(jacobiParameters(a).bn, K)]",
                         lambda a, b, K: [list(v) for v in a.jacobi_parameters(K)], lambda K: 2 * K))
        out.append(_case("boolean ⊎ moments, symbolic", 2 * K, ("semicircle(s)", "free Poisson t"),
                         "firstn(moments booleanConvolution(a, b), K)",
                         lambda a, b, K: fp.boolean_add(a, b).moments(K)[1:], lambda K: K))
        out.append(_case("monotone ▷ moments, symbolic", 2 * K, ("semicircle(s)", "free Poisson t"),
                         "firstn(moments monotoneConvolution(a, b), K)",
                         lambda a, b, K: fp.monotone_add(a, b).moments(K)[1:], lambda K: K))
        out.append(_case("monotone cumulants, symbolic", 2 * K, ("free Poisson t",),
                         "firstn(monotoneCumulants a, K)",
                         lambda a, b, K: a.monotone_cumulants(K)[1:], lambda K: K))
    return out


_TIME = re.compile(r"Time: (?:.*= )?([0-9.]+) sec")


def run_fricas(case, fricas, timeout, workdir):
    """``(values, seconds)`` from FriCAS, or ``(None, reason)``."""
    result = os.path.join(workdir, "result.txt")
    names = "ab"
    lines = [PRELUDE, f"K := {case['K']}"]
    for var, key in zip(names, case["operands"]):
        lines.append(f"{var} := {LAWS[key][0]};")
        lines.append(f"pre{var} := firstn(moments {var}, {case['moments'](case['K'])});")
    lines += ['output("BEGIN")', f"res := {case['fricas']};",
              f'f := open("{result}"::FileName, "output")$TextFile;',
              "writeLine!(f, unparse(res::InputForm));", "close! f;", ")quit"]
    if os.path.exists(result):
        os.remove(result)
    try:
        proc = subprocess.run([fricas, "-nosman"], input="\n".join(lines) + "\n", capture_output=True,
                              text=True, timeout=timeout, cwd=workdir)
    except subprocess.TimeoutExpired:
        return None, f"> {timeout} s (stopped)"
    log = proc.stdout
    if "BEGIN" not in log or not os.path.exists(result):
        return None, "error: " + " ".join(log.split()[-40:])
    after = log[log.index("BEGIN"):]
    times = _TIME.findall(after)
    seconds = float(times[1]) if len(times) > 1 else float("nan")     # [0]: output("BEGIN") itself
    text = open(result, encoding="utf-8").read().strip()
    return _parse(text), seconds


def _parse(text):
    text = text.replace("^", "**")
    return sp.sympify(text, locals={"s": S, "t": T})


def run_ours(case):
    best, values = float("inf"), None
    for _ in range(3):
        laws = [LAWS[key][1]() for key in case["operands"]]
        for law in laws:
            law.moments(case["moments"](case["K"]))
        a, b = (laws + [None])[:2]
        t0 = time.process_time()
        values = case["ours"](a, b, case["K"])
        best = min(best, time.process_time() - t0)
    return values, best


def _same(x, y):
    if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
        return (isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and len(x) == len(y)
                and all(_same(a, b) for a, b in zip(x, y)))
    return sp.cancel(sp.sympify(x) - sp.sympify(y)) == 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    parser.add_argument("--fricas", default=shutil.which("fricas"), help="the fricas executable")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per FriCAS run (default 600)")
    args = parser.parse_args(argv)
    if not args.fricas:
        print("FriCAS not found (apt-get install -y fricas in a scratch environment; not a freeprob "
              "dependency); --fricas PATH", file=sys.stderr)
        return 2
    version = subprocess.run([args.fricas, "-nosman"], input=")quit\n", capture_output=True, text=True).stdout
    version = next((ln.strip() for ln in version.splitlines() if "Version" in ln), "FriCAS")
    print(f"# {version}; freeprob {fp.__version__}; python-flint, sympy {sp.__version__}")
    print("| case | size | same output | FriCAS | freeprob | FriCAS / freeprob |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench-fricas-") as work:
        for case in cases(args.quick):
            ours, t_ours = run_ours(case)
            theirs, t_theirs = run_fricas(case, args.fricas, args.timeout, work)
            if theirs is None:
                same, shown, ratio = "—", t_theirs, "—"
            else:
                same = "yes" if _same(list(theirs), list(ours)) else "NO"
                shown = f"{t_theirs:.2f} s" if t_theirs > 0 else "< 0.01 s"
                ratio = f"{t_theirs / t_ours:.3g}" if t_ours > 0 and t_theirs > 0 else "—"
            print(f"| {case['name']} ({', '.join(case['operands'])}) | {case['K']} | {same} | {shown} | "
                  f"{t_ours * 1e3:.1f} ms | {ratio} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
