r"""The law subcommands of ``freeprob``: moments, cumulants, equation, density, support.

Each takes a law expression of :mod:`freeprob.cli.expr` (parsed, never evaluated) and prints
what the Python API returns for it: :meth:`~freeprob.laws.law.Law.moments`,
:meth:`~freeprob.laws.law.Law.free_cumulants` (and the boolean, classical and monotone ones),
:meth:`~freeprob.laws.law.Law.cauchy_equation`, :meth:`~freeprob.laws.law.Law.density`,
:meth:`~freeprob.laws.law.Law.support` and :meth:`~freeprob.laws.law.Law.atoms`.

Examples
--------
``freeprob moments 'free_mul(FreePoisson(1/2), FreePoisson(1/3))' --order 6``,
``freeprob cumulants 'Semicircle(0, 1)' --kind all --format json``,
``freeprob equation 'MarchenkoPastur(2)' --latex``,
``freeprob density 'MarchenkoPastur(2)' --grid 0:6:13 --dps 20``,
``freeprob support 'free_add(Bernoulli(), Bernoulli())'``.

Errors (bad expressions, parameters outside their domain, an order above the limit
without ``--force``, laws without an equation) print a message on stderr and exit with
status 2.

The computation (and the formatting of its output) runs in a worker process
(:func:`freeprob.cli.work.compute`): Ctrl-C and SIGTERM stop it at once, even inside one
long FLINT call, and work over a few seconds shows an elapsed-time line on stderr
(:class:`freeprob._progress.ProgressLine`).  The command itself parses, asks, checks the
cost, and writes standard output and files once the worker is done.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys

import mpmath
import sympy as sp

from freeprob._progress import report
from freeprob._text import text_table
from freeprob.cli.files import (
    DPS_ARG,
    ORDER_ARG,
    STDOUT,
    bounded_int,
    check_outputs,
    is_stream,
    status_stream,
    write_output,
)
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.cli.expr import ExpressionError, parse_law, parse_value
from freeprob.cli.work import compute

__all__ = ["DEFAULT_MAX_ORDER", "LAW_COMMANDS", "MAX_GRID_POINTS", "MAX_PLOT_X", "SEQUENCE_FORMATS",
           "TABLE_KINDS", "add_law_commands", "max_order", "parse_grid", "print_sequences", "run_law_command"]

#: the subcommands defined here
LAW_COMMANDS = ("moments", "cumulants", "equation", "density", "support")
#: orders above this ask for confirmation (a TTY) or ``--force``; env FREEPROB_MAX_ORDER overrides
DEFAULT_MAX_ORDER = 200
#: most points accepted by ``--grid``
MAX_GRID_POINTS = 100_000
#: largest ``|x|`` that ``density --plot`` draws (matplotlib's tick placement overflows
#: near the double-precision limit 1.8e308; ±9.9e306 still draws)
MAX_PLOT_X = 1e306

_KINDS = {  # kind -> (Law method, text column, csv/json key, LaTeX symbol)
    "moments": ("moments", "m_n", "m", "m"),
    "free": ("free_cumulants", "free κ_n", "kappa", r"\kappa"),
    "boolean": ("boolean_cumulants", "boolean b_n", "b", "b"),
    "classical": ("classical_cumulants", "classical c_n", "c", "c"),
    "monotone": ("monotone_cumulants", "monotone h_n", "h", "h"),
}

#: the columns of ``freeprob table``: the moments and the four kinds of cumulants
TABLE_KINDS = ("moments", "free", "boolean", "classical", "monotone")
#: the ``--format`` choices of the sequence commands (``moments``, ``cumulants``, ``table``)
SEQUENCE_FORMATS = ("table", "csv", "json", "latex")

_LAW_HELP = ("law expression, e.g. 'free_mul(FreePoisson(1/2), Semicircle(0, 1))' (quote it for the shell; "
             "see freeprob.cli.expr for the grammar)")


def max_order(value=None) -> int:
    r"""The order limit: ``value`` if given, else env ``FREEPROB_MAX_ORDER``, else 200.

    Parameters
    ----------
    value : int, optional
        An explicit limit (``--max-order``).

    Returns
    -------
    int

    Raises
    ------
    FreeprobValueError
        ``FREEPROB_MAX_ORDER`` is set but is not a non-negative integer.

    Source: this module.
    """
    if value is not None:
        return value
    env = os.environ.get("FREEPROB_MAX_ORDER")
    if env is None or not env.strip():
        return DEFAULT_MAX_ORDER
    try:
        v = int(env)
    except ValueError:
        v = -1
    if v < 0:
        raise FreeprobValueError(f"FREEPROB_MAX_ORDER must be a non-negative integer; got {env!r}")
    return v


def _confirm_order(order, limit, force, stdin=None, stderr=None):
    if order <= limit or force:
        return
    stdin = stdin if stdin is not None else sys.stdin
    stderr = stderr if stderr is not None else sys.stderr
    why = (f"--order {order} is above the limit {limit} (--max-order or FREEPROB_MAX_ORDER); "
           "series to that order can take very long, exact or with --dps")
    interactive = (hasattr(stdin, "isatty") and stdin.isatty()
                   and hasattr(stderr, "isatty") and stderr.isatty())
    if interactive:
        print(why + ". Compute anyway? [y/N] ", end="", file=stderr, flush=True)
        try:
            answer = stdin.readline()
        except (EOFError, OSError):
            answer = ""
        if answer.strip().lower() in ("y", "yes"):
            return
    raise FreeprobValueError(why + "; pass --force to compute anyway")


def parse_grid(text: str):
    r"""Parse ``--grid a:b:N`` into ``N`` exact, equally spaced points from ``a`` to ``b``.

    Parameters
    ----------
    text : str
        ``"a:b:N"`` with ``a < b`` finite real values of :func:`freeprob.cli.expr.parse_value`
        (``-2``, ``1/2``, ``3 - 2*sqrt(2)``, ``1e300``) and an integer ``N >= 2``;
        ``"a:a:1"`` is the single point ``a``.  The ends must lie within the
        double-precision range (``|a|, |b| ≤ 1.797e308``; the root isolation and the plot
        work in doubles) and neighbouring points must be different doubles (a spacing
        ``(b − a)/(N − 1)`` above the resolution of doubles at ``max(|a|, |b|)``).

    Returns
    -------
    list of sympy numbers
        ``a + i (b − a)/(N − 1)``, ``i = 0, …, N − 1`` (exact).

    Raises
    ------
    FreeprobValueError
        Malformed text, symbols, NaN or infinite ends, ends beyond the double-precision
        range, ``a >= b``, ``N`` outside ``[2, MAX_GRID_POINTS]``, a spacing that doubles
        cannot resolve.

    Source: this module.

    >>> parse_grid("0:1:3")
    [0, 1/2, 1]
    """
    parts = text.split(":")
    if len(parts) != 3:
        raise FreeprobValueError(f"--grid must be a:b:N (e.g. -2:2:101); got {text!r}")
    try:
        a, b = parse_value(parts[0]), parse_value(parts[1])
    except ExpressionError as exc:
        raise FreeprobValueError(f"--grid {text!r}: {exc}") from None
    try:
        n = int(parts[2])
    except ValueError:
        raise FreeprobValueError(f"--grid: N must be an integer; got {_short(parts[2])!r}") from None
    ends = [_grid_end(v, which) for v, which in ((a, "a"), (b, "b"))]
    if n == 1 and sp.simplify(a - b) == 0:
        return [a]
    if not 2 <= n <= MAX_GRID_POINTS:
        raise FreeprobValueError(f"--grid: N must be between 2 and {MAX_GRID_POINTS} "
                                 f"(freeprob.cli.law_commands.MAX_GRID_POINTS); got {n}")
    if not (b - a).is_positive:
        raise FreeprobValueError(f"--grid: need a < b; got a = {_short(a)}, b = {_short(b)}")
    step = (b - a) / (n - 1)
    top = max(abs(e) for e in ends)
    spacing = float(sp.N(step, 20))
    if not spacing > math.ulp(top):
        raise FreeprobValueError(
            f"--grid: the spacing (b − a)/(N − 1) ≈ {spacing:.3g} is below the resolution of "
            f"double-precision numbers at {top:.3g} (≈ {math.ulp(top):.3g}), so neighbouring points would "
            "be the same number; widen the interval or use fewer points")
    return [a + i * step for i in range(n)]


def _short(v):
    text = str(v)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-12:]} ({len(text)} characters)"


def _grid_end(v, which):
    """The double value of a ``--grid`` end; FreeprobValueError unless it is a finite real
    number within the double-precision range."""
    if v.free_symbols:
        names = ", ".join(sorted(str(s) for s in v.free_symbols))
        raise FreeprobValueError(f"--grid: {which} = {_short(v)} contains the symbol {names}; the ends must "
                                 "be numbers (e.g. -2, 1/2, sqrt(2), 1e-3)")
    if v.is_finite is False or v.has(sp.nan, sp.zoo):
        raise FreeprobValueError(f"--grid: {which} = {v} is not a finite number; the ends must be finite "
                                 "real numbers")
    if v.is_real is not True:
        raise FreeprobValueError(f"--grid: {which} = {_short(v)} is not real; the ends must be finite real "
                                 "numbers")
    f = float(sp.N(v, 20))                     # ±inf beyond the double range
    if not math.isfinite(f):
        raise FreeprobValueError(f"--grid: {which} = {_short(v)} is beyond the double-precision range "
                                 f"±{sys.float_info.max:.4g} (the root isolation and the plot work in "
                                 "doubles)")
    return f


# -- parsers -----------------------------------------------------------------------------
def _parser(sub, name, help_, description, examples):
    epilog = "\n".join(f"example: {e}" for e in examples)
    return sub.add_parser(name, help=help_, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def _add_sequence_options(p, default_order=8):
    p.add_argument("law", metavar="LAW", help=_LAW_HELP)
    p.add_argument("--order", type=ORDER_ARG, default=default_order,
                   help=f"highest order K (default {default_order})")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--exact", action="store_true", help="exact values (the default)")
    g.add_argument("--dps", type=DPS_ARG, default=None,
                   help="N certified significant digits instead of exact values")
    p.add_argument("--format", choices=SEQUENCE_FORMATS, default="table",
                   help="output format (default table)")
    p.add_argument("--max-order", type=bounded_int(0), default=None,
                   help=f"orders above this need --force (default {DEFAULT_MAX_ORDER}, "
                        "or env FREEPROB_MAX_ORDER)")
    p.add_argument("--force", action="store_true", help="compute orders above --max-order without asking")


def add_law_commands(sub) -> None:
    r"""Add the ``moments``, ``cumulants``, ``equation``, ``density`` and ``support``
    subcommands to an argparse subparsers object (``freeprob.cli.build_parser``).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        From ``parser.add_subparsers(dest="command")``.

    Returns
    -------
    None

    Raises
    ------
    Nothing.

    Source: this module.
    """
    p = _parser(sub, "moments", "exact or N-digit moments of a law expression",
                "Moments m_0 = 1, m_1, ..., m_K of a law given as an expression of the families "
                "and operations (freeprob.cli.expr), exact or to --dps N certified digits.",
                ["freeprob moments 'free_mul(FreePoisson(1/2), FreePoisson(1/3))' --order 6"])
    _add_sequence_options(p)

    p = _parser(sub, "cumulants", "free, boolean, classical or monotone cumulants of a law expression",
                "Free (default), boolean, classical or monotone cumulants of orders 0..K of a law expression, "
                "exact or to --dps N certified digits.",
                ["freeprob cumulants 'MarchenkoPastur(1/4)' --order 5 --kind boolean --dps 20 --format csv"])
    _add_sequence_options(p)
    p.add_argument("--kind", choices=("free", "boolean", "classical", "monotone", "all"), default="free",
                   help="which cumulants (default free; all: the four kinds)")

    p = _parser(sub, "equation", "the algebraic Cauchy equation P(G, z) = 0 of a law expression",
                "The irreducible algebraic equation P(G, z) = 0 satisfied by the Cauchy transform "
                "G(z) of the law (polynomial method).",
                ["freeprob equation 'pushforward(Semicircle(0, 1), x**2 - 1)' --latex"])
    p.add_argument("law", metavar="LAW", help=_LAW_HELP)
    p.add_argument("--latex", action="store_true", help="print the equation in LaTeX")

    p = _parser(sub, "density", "density of a law expression on a grid (table, CSV, plot)",
                "Density -Im G(x + i0)/pi of the absolutely continuous part on N equally spaced points "
                "from a to b (atoms are not included: see freeprob support), to --dps certified digits. "
                "Write a negative start as --grid=-2:2:101 (argparse reads -2:... as an option).",
                [("freeprob density 'free_add(Semicircle(0, 1), FreePoisson(1/2))' --grid=-2:4:61 "
                  "--csv density.csv --plot density.png")])
    p.add_argument("law", metavar="LAW", help=_LAW_HELP)
    p.add_argument("--grid", required=True, metavar="a:b:N",
                   help="N equally spaced points from a to b (exact values such as -2, 1/2, sqrt(2))")
    p.add_argument("--dps", type=DPS_ARG, default=15,
                   help="certified significant digits (default 15)")
    p.add_argument("--csv", metavar="FILE", default=None,
                   help="write x,density to FILE ('-': standard output); with --ball also a radius column")
    p.add_argument("--ball", action="store_true",
                   help="prove each value: print a radius such that the printed value ± radius provably "
                        "contains the density (a python-flint ball, Krawczyk's test on the selected root; "
                        "see docs/guide/cauchy.md, 'Certified digits')")
    p.add_argument("--plot", metavar="FILE.png", default=None,
                   help="draw the density (and atoms) to FILE.png, .pdf or .svg (matplotlib, Agg; '-': PNG "
                        "to standard output)")
    p.add_argument("--force", action="store_true", help="overwrite existing --csv/--plot files")

    p = _parser(sub, "support", "support intervals and atoms of a law expression",
                "The support of the absolutely continuous part (intervals with exact edges where "
                "possible) and the atoms (location, mass) of a law expression.",
                ["freeprob support 'free_add(Bernoulli(), Bernoulli())' --format json"])
    p.add_argument("law", metavar="LAW", help=_LAW_HELP)
    p.add_argument("--dps", type=DPS_ARG, default=15,
                   help="correct significant digits of every edge, location and mass that is not "
                        "printed exactly (default 15); exact ones (1/2, 3 - 2*sqrt(2)) print as such")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--ball", action="store_true",
                   help="also print a ball [mid +/- rad] proven to contain every edge, location and mass")


# -- commands ----------------------------------------------------------------------------
def _parse_law(args, *, numeric):
    r"""The law of ``args.law``; with ``numeric`` (``density``, ``support``, ``--dps``) a
    law with symbols is refused in the command line's terms (the Python API's message says
    ``law.subs({...})``, which a shell user cannot call).

    Parameters
    ----------
    args : argparse.Namespace
        With ``law`` and ``command``.
    numeric : bool
        The command needs numbers.

    Returns
    -------
    freeprob.laws.law.Law

    Raises
    ------
    FreeprobValueError
        A bad expression; symbols in a numeric command: ``density: the expression has the
        symbol t; density needs numbers: write a number in place of t in LAW``.

    Source: this module.
    """
    law = parse_law(args.law)
    if numeric and law.free_symbols:
        names = sorted(map(str, law.free_symbols))
        listed = ", ".join(names)
        sequence = args.command in ("moments", "cumulants", "jacobi")
        what = f"{args.command} --dps" if sequence else args.command
        exact = (" (or leave out --dps for exact values in the symbols)" if sequence
                 else "; moments, cumulants and equation keep symbols exactly")
        plural = len(names) > 1
        raise FreeprobValueError(
            f"{args.command}: the expression has the symbol{'s' if plural else ''} {listed}; {what} needs "
            f"numbers: write {'numbers' if plural else 'a number'} in place of {listed} in the expression "
            f"(e.g. 'Semicircle(0, 2)' rather than 'Semicircle(0, t)'){exact}")
    return law


def _num(v, dps):
    if dps is None:
        return str(v)
    return mpmath.nstr(v, dps)


def _latex_num(v, dps):
    if dps is None:
        return sp.latex(v)
    return sp.latex(sp.Float(mpmath.nstr(v, dps), dps))


def _sequence_command(args, kinds, out):
    law = _parse_law(args, numeric=args.dps is not None)
    order = args.order
    _confirm_order(order, max_order(args.max_order), args.force)
    # exact values with symbolic coefficients: the cost is measured and refused up front if too long
    if args.dps is None and _maybe_symbolic(law):
        from freeprob.cli.costguard import guard_exact_cost
        guard_exact_cost(law, [_KINDS[k][0] for k in kinds], order, who=f"freeprob {args.command}",
                         forced=args.force or args.max_order is not None)
    return print_sequences(law, " ".join(args.law.split()), kinds, order, args.dps, args.format, out,
                           who=f"freeprob {args.command}")


def _maybe_symbolic(law):
    """Whether the exact coefficients of ``law`` may run in sympy's generic arithmetic (the
    case :func:`freeprob.cli.costguard.guard_exact_cost` examines); rational parameters run
    in FLINT and need no guard (nor its import)."""
    from freeprob.core.coefficients import SymbolicRing

    return isinstance(law._exact_ring(), SymbolicRing)


def print_sequences(law, text, kinds, order, dps, fmt, out, *, who="freeprob") -> int:
    r"""Print sequences of ``law`` of orders ``0..order``: the output of ``freeprob moments``,
    ``freeprob cumulants`` and ``freeprob table``.

    The values are computed and formatted in a worker process
    (:func:`freeprob.cli.work.compute`), so that Ctrl-C and SIGTERM stop a long series at
    once, with an elapsed-time line on stderr after a few seconds.

    Parameters
    ----------
    law : freeprob.laws.law.Law
    text : str
        The law as the output names it (the expression, or a preset's description).
    kinds : sequence of str
        Columns, in order: ``"moments"``, ``"free"``, ``"boolean"``, ``"classical"``, ``"monotone"``.
    order : int
    dps : int or None
        Certified significant digits; ``None``: exact values.
    fmt : str
        One of :data:`SEQUENCE_FORMATS`: ``table`` (aligned columns under a ``law:`` line),
        ``csv``, ``json`` or ``latex``.
    out : file
    who : str, keyword-only
        The command, for the progress line.

    Returns
    -------
    int
        0 (the exit status).

    Raises
    ------
    FreeprobValueError, PrecisionError
        From the :class:`~freeprob.laws.law.Law` methods.
    KeyboardInterrupt
        Ctrl-C or SIGTERM (the worker is stopped at once).

    Source: this module.
    """
    out.write(compute(who, _sequences_text, law, text, kinds, order, dps, fmt))
    return 0


def _sequences_text(law, text, kinds, order, dps, fmt):
    """The output of :func:`print_sequences` as one string (run in the worker)."""
    cols = {k: getattr(law, _KINDS[k][0])(order, dps=dps) for k in kinds}
    mode = "exact" if dps is None else f"{dps} significant digits"
    lines = []
    with _all_digits():
        if fmt == "json":
            rec = {"law": text, "order": order, "exact": dps is None, "dps": dps,
                   "values": {k: [_num(v, dps) for v in cols[k]] for k in kinds}}
            lines.append(json.dumps(rec, ensure_ascii=False, indent=1))
        elif fmt == "csv":
            lines.append(",".join(["n"] + [_KINDS[k][2] + "_n" for k in kinds]))
            lines += [",".join([str(n)] + [_num(cols[k][n], dps) for k in kinds]) for n in range(order + 1)]
        elif fmt == "latex":
            lines.append(f"% law: {text} ({mode})")
            lines.append(r"\begin{aligned}")
            lines += [f"{_KINDS[k][3]}_{{{n}}} &= {_latex_num(cols[k][n], dps)} \\\\"
                      for k in kinds for n in range(order + 1)]
            lines.append(r"\end{aligned}")
        else:
            lines.append(f"law: {text}   ({mode})")
            header = ["n"] + [_KINDS[k][1] for k in kinds]
            rows = [[str(n)] + [_num(cols[k][n], dps) for k in kinds] for n in range(order + 1)]
            lines.append(text_table(header, rows, align="r", strip=False))
    return "".join(line + "\n" for line in lines)


@contextlib.contextmanager
def _all_digits():
    """Exact values print with all their digits (Python refuses ``str`` of integers above
    4300 digits by default: moments of order 4000 have more)."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def _equation_command(args, out):
    law = _parse_law(args, numeric=False)
    out.write(compute("freeprob equation", _equation_text, law, args.latex))
    return 0


def _equation_text(law, latex):
    """The output of ``freeprob equation`` (run in the worker)."""
    expr = law.cauchy_equation().as_expr()
    with _all_digits():
        return f"{sp.latex(expr) if latex else expr} = 0\n"


def _matplotlib():
    """``(Figure, FigureCanvasAgg)``: matplotlib's object API, never its global backend;
    :class:`freeprob._extras.MissingExtra` (one line naming the ``plot`` extra) without
    matplotlib."""
    from freeprob._extras import require

    figure = require("matplotlib.figure", "plot")
    agg = require("matplotlib.backends.backend_agg", "plot")
    return figure.Figure, agg.FigureCanvasAgg


def _plot(atoms, xs, ys, path, text):
    """Draw the density ``ys`` on ``xs`` and the ``atoms`` (``(location, mass)`` floats)
    within the grid to ``path``."""
    Figure, FigureCanvasAgg = _matplotlib()
    fig = Figure(figsize=(6.4, 4.0))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.plot([float(v) for v in xs], [float(v) for v in ys], lw=1.5, label="density")
    lo, hi = float(xs[0]), float(xs[-1])
    shown = [(a, m) for a, m in atoms if lo <= a <= hi]
    if shown:
        ax.vlines([a for a, _ in shown], 0, [m for _, m in shown], colors="C3", lw=2, label="atoms (mass)")
        ax.plot([a for a, _ in shown], [m for _, m in shown], "o", color="C3")
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax.set_title(text if len(text) <= 70 else text[:67] + "...", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    write_output(path, lambda fh: fig.savefig(fh, format=_plot_format(path), dpi=120), binary=True)


def _plot_format(path):
    """The image format of ``--plot PATH`` (PNG for standard output); FreeprobValueError
    for a suffix matplotlib cannot write; MissingExtra without matplotlib (so ``density --plot``
    refuses before computing)."""
    Figure, FigureCanvasAgg = _matplotlib()
    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    if path == STDOUT or (not fmt and is_stream(path)):       # '-', /dev/stdout, a FIFO: PNG
        return "png"
    known = FigureCanvasAgg(Figure()).get_supported_filetypes()
    if fmt not in known:
        others = ", ".join(sorted(set(known) - {"png", "pdf", "svg"}))
        raise FreeprobValueError(f"--plot {path}: unknown image format {fmt!r} (use .png, .pdf or .svg; "
                                 f"matplotlib also writes {others})")
    return fmt


def _density_command(args, out):
    law = _parse_law(args, numeric=True)
    xs = parse_grid(args.grid)
    # refuse before computing: existing files without --force, both on '-', a bad image suffix
    targets = check_outputs((("--csv", args.csv), ("--plot", args.plot)), force=args.force, who="density")
    if args.plot is not None:
        _plot_format(args.plot)
        top = max(abs(float(sp.N(xs[0], 20))), abs(float(sp.N(xs[-1], 20))))
        if top > MAX_PLOT_X:
            raise FreeprobValueError(f"density: --plot draws x up to ±{MAX_PLOT_X:.0e} "
                                     "(freeprob.cli.law_commands.MAX_PLOT_X: matplotlib's axis ticks overflow "
                                     "near the double-precision limit); "
                                     f"--grid reaches {top:.4g}: use --csv, or a grid within that range")
    dps = args.dps
    ball = getattr(args, "ball", False)
    from freeprob.experiments.cost import PROGRESS_AFTER, density_seconds

    long = density_seconds(len(xs), dps) > PROGRESS_AFTER           # estimated long: progress at once
    ys, rads, atoms = compute("freeprob density", _density_data, law, xs, dps, ball, args.plot is not None,
                              unit="points", after=0 if long else None)
    xdps = _x_digits(xs, dps)
    text = " ".join(args.law.split())
    if args.csv is not None:
        head = "x,density,radius\n" if ball else "x,density\n"
        write_output(args.csv, lambda fh: fh.writelines(
            [head] + [f"{_xnum(x, xdps)},{mpmath.nstr(y, dps)}" + (f",{rads[i]}" if ball else "") + "\n"
                      for i, (x, y) in enumerate(zip(xs, ys))]))
    if args.plot is not None:
        _plot(atoms, xs, ys, args.plot, text)
    if targets:
        wrote = ", ".join("standard output" if p == STDOUT else p for _, p in targets)
        report = status_stream([p for _, p in targets]) if out is sys.stdout else out
        print(f"law: {text}; {len(xs)} points, {dps} digits; wrote {wrote}", file=report)
        return 0
    print(f"law: {text}   (density of the absolutely continuous part, {dps} significant digits"
          + ("; each value proven within the radius" if ball else "") + ")", file=out)
    if ball:
        rows = [(_xnum(x, xdps), mpmath.nstr(y, dps), r) for x, y, r in zip(xs, ys, rads)]
        print(text_table(("x", "density", "radius"), rows, align="r", strip=False, pad_last=False), file=out)
        return 0
    rows = [(_xnum(x, xdps), mpmath.nstr(y, dps)) for x, y in zip(xs, ys)]
    print(text_table(("x", "density"), rows, align="r", strip=False, pad_last=False), file=out)
    return 0


def _arb_mid(b):
    """The midpoint of a python-flint ``arb`` as an mpmath number (exact, whatever the
    working precision)."""
    m = b.mid()
    if not m.is_finite():
        return mpmath.inf if m > 0 else -mpmath.inf
    man, exp = m.man_exp()
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


def _radius(b, printed):
    """An upper bound (as a short string, rounded up) on the distance from the decimal
    ``printed`` to every point of the ``arb`` ``b``: the value printed ± this radius
    contains the true value.  ``0`` when ``b`` is exact and printed exactly."""
    import flint

    old = flint.ctx.prec
    try:
        flint.ctx.prec = max(old, 64 + 4 * len(printed))
        r = (b - flint.arb(printed)).abs_upper()
    finally:
        flint.ctx.prec = old
    if r == 0:
        return "0"
    text = f"{float(r):.2e}"
    mant, exp = text.split("e")
    while flint.arb(f"{mant}e{exp}") < r:          # round the last digit up, never down
        mant = f"{float(mant) + 0.01:.2f}"
    return f"{mant}e{exp}"


def _density_data(law, xs, dps, ball, atoms):
    """``(values, radii, atoms)`` for ``freeprob density`` (run in the worker): the density
    values (midpoints with ``ball``), the radii (strings, ``ball`` only: each covers the
    printed value, not only the midpoint) and, with ``atoms``, the atoms as ``(location,
    mass)`` floats for the plot (python-flint balls do not leave the worker)."""
    ys = _density_values(law, xs, dps, ball=ball)
    rads = None
    if ball:
        rads = [_radius(y, mpmath.nstr(_arb_mid(y), dps)) for y in ys]
        ys = [_arb_mid(y) for y in ys]
    found = []
    if atoms:
        try:
            found = [(float(sp.N(a)), float(sp.N(m))) for a, m in law.atoms()]
        except (NotAvailable, FreeprobValueError, ArithmeticError):
            found = []
    return ys, rads, found


def _density_values(law, xs, dps, ball=False):
    """``law.density(xs, dps=dps)``; a grid estimated to take longer than
    :data:`freeprob.experiments.cost.PROGRESS_AFTER` s is evaluated in 100 chunks, each
    reported (:func:`freeprob._progress.report`: the points done, shown on stderr by
    :func:`freeprob.cli.work.compute`); the same digits (each value is certified on its own)."""
    from freeprob.experiments.cost import PROGRESS_AFTER, density_seconds
    from freeprob.laws.polynomial import PolynomialLaw

    unknowns = None
    if isinstance(law, PolynomialLaw) and law.route() == "numeric":
        unknowns = law.numeric_evaluator().S.n
    if density_seconds(len(xs), dps, unknowns) <= PROGRESS_AFTER:
        return law.density(xs, dps=dps, ball=ball)
    step = -(-len(xs) // 100)
    ys = []
    for i in range(0, len(xs), step):
        report(i, len(xs))
        ys.extend(law.density(xs[i:i + step], dps=dps, ball=ball))
    report(len(xs), len(xs))
    return ys


def _x_digits(xs, dps):
    """Significant digits for the x column: ``dps``, or more where neighbouring grid points
    would otherwise print alike (``--grid 1:1.000000000001:3 --dps 5``)."""
    if len(xs) < 2:
        return dps
    top = max(abs(float(sp.N(xs[0], 20))), abs(float(sp.N(xs[-1], 20))))
    step = float(sp.N(xs[1] - xs[0], 20))
    if not (top > 0 and step > 0):
        return dps
    need = math.floor(math.log10(top)) - math.floor(math.log10(step)) + 2
    return max(dps, min(need, 20))           # doubles resolve at most 2**52 ≈ 4.5e15 points per binade


def _xnum(x, dps):
    """A grid point: an integer as it is when it has at most ``dps`` digits, else ``dps``
    significant digits (scientific notation for large and small magnitudes: 1.0e+300)."""
    if x.is_Integer and len(str(abs(x))) <= dps:
        return str(x)
    with mpmath.workdps(dps + 5):
        v = mpmath.mpf(sp.N(x, dps + 5))
    return mpmath.nstr(v, dps)


def _approx(v, dps):
    if isinstance(v, mpmath.mpf):
        return mpmath.nstr(v, dps)
    if sp.sympify(v).is_Integer:
        return str(v)
    with mpmath.workdps(dps + 5):                  # not rounded through a double
        return mpmath.nstr(mpmath.mpf(sp.N(v, dps + 5)), dps)


def _support_command(args, out):
    law = _parse_law(args, numeric=True)
    out.write(compute("freeprob support", _support_text, law, args))
    return 0


def _support_text(law, args):
    """The output of ``freeprob support`` (run in the worker)."""
    out = io.StringIO()
    dps = args.dps
    intervals = law.support(dps=dps)
    try:
        atoms, no_atoms = law.atoms(dps=dps), None
    except NotAvailable as exc:            # the numeric path of a polynomial law with atomic variables
        atoms, no_atoms = (), str(exc)
    text = " ".join(args.law.split())
    balls = None
    if getattr(args, "ball", False):
        balls = (law.support(dps=dps, ball=True), law.atoms(dps=dps, ball=True))
    if args.format == "json":
        rec = {"law": text, "dps": dps,
               "intervals": [[str(a), str(b)] for a, b in intervals],
               "intervals_approx": [[_approx(a, dps), _approx(b, dps)] for a, b in intervals],
               "atoms": None if no_atoms else [[str(a), str(m)] for a, m in atoms],
               "atoms_approx": [[_approx(a, dps), _approx(m, dps)] for a, m in atoms]}
        if no_atoms:
            rec["atoms_unavailable"] = no_atoms
        if balls is not None:
            rec["intervals_ball"] = [[a.str(dps + 2), b.str(dps + 2)] for a, b in balls[0]]
            rec["atoms_ball"] = [[a.str(dps + 2), m.str(dps + 2)] for a, m in balls[1]]
        print(json.dumps(rec, ensure_ascii=False, indent=1), file=out)
        return out.getvalue()
    print(f"law: {text}", file=out)
    print("support of the absolutely continuous part:" + ("" if intervals else " none"), file=out)
    for a, b in intervals:
        exact = not (isinstance(a, mpmath.mpf) and isinstance(b, mpmath.mpf))
        approx = f"   ≈ [{_approx(a, dps)}, {_approx(b, dps)}]" if exact else "   (numeric edges)"
        print(f"  [{_approx(a, dps) if isinstance(a, mpmath.mpf) else a}, "
              f"{_approx(b, dps) if isinstance(b, mpmath.mpf) else b}]{approx}", file=out)
    if no_atoms:
        print(f"atoms: not available ({no_atoms})", file=out)
    else:
        print("atoms:" + ("" if atoms else " none"), file=out)
    for a, m in atoms:
        print(f"  at {a}: mass {m}   ≈ {_approx(m, dps)}", file=out)
    if balls is not None:
        print("proven enclosures (python-flint balls [mid +/- rad]):", file=out)
        for a, b in balls[0]:
            print(f"  interval [{a.str(dps + 2)}, {b.str(dps + 2)}]", file=out)
        for a, m in balls[1]:
            print(f"  atom at {a.str(dps + 2)}: mass {m.str(dps + 2)}", file=out)
    return out.getvalue()


def run_law_command(args, out=None) -> int:
    r"""Run one of :data:`LAW_COMMANDS` from parsed arguments; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        From :func:`freeprob.cli.build_parser` with ``args.command`` in
        :data:`LAW_COMMANDS`.
    out : file, optional
        Where the result goes (default ``sys.stdout``).

    Returns
    -------
    int
        0 on success; 2 (with a message on stderr) when the law has no Cauchy equation
        (:class:`~freeprob.errors.NotAvailable`) or a file cannot be written.

    Raises
    ------
    FreeprobValueError
        Bad expression (:class:`~freeprob.cli.expr.ExpressionError`), bad parameters, an
        order above the limit without ``--force``, exact values with symbolic
        coefficients whose measured cost exceeds a minute without ``--force``
        (:func:`freeprob.cli.costguard.guard_exact_cost`); :func:`freeprob.cli.main` turns it
        into a message and exit status 2.
    PrecisionError
        Digits that cannot be certified (likewise exit status 2).
    KeyboardInterrupt
        Ctrl-C, or SIGTERM inside :func:`freeprob._signals.sigterm_as_interrupt`: the worker
        process is killed at once (:func:`freeprob.cli.work.compute`).
    freeprob._interruptible.WorkerDied
        The worker process was killed (out of memory).

    Source: this module.
    """
    out = out if out is not None else sys.stdout
    try:
        if args.command == "moments":
            return _sequence_command(args, ["moments"], out)
        if args.command == "cumulants":
            kinds = ["free", "boolean", "classical", "monotone"] if args.kind == "all" else [args.kind]
            return _sequence_command(args, kinds, out)
        if args.command == "equation":
            return _equation_command(args, out)
        if args.command == "density":
            return _density_command(args, out)
        if args.command == "support":
            return _support_command(args, out)
    except NotAvailable as exc:
        print(f"freeprob: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:                # the reader of standard output went away: main() stops quietly
        raise
    except OSError as exc:
        print(f"freeprob: error: cannot write {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    raise FreeprobValueError(f"unknown law command {args.command!r}; known: {', '.join(LAW_COMMANDS)}")
