r"""``freeprob jacobi``: the Jacobi parameters of a law expression (and its orthogonal
polynomials and Hankel determinants).

It prints what :meth:`~freeprob.laws.law.Law.jacobi_parameters` returns for a law of
:mod:`freeprob.cli.expr`: the ``α_n`` and ``β_n`` of the continued fraction
``G(z) = 1/(z − α_0 − β_1/(z − α_1 − …))``, exact (or to ``--dps N`` digits), one row per
``n``; ``--hankel`` adds the Hankel determinants ``Δ_n``
(:meth:`~freeprob.laws.law.Law.hankel_determinants`), ``--polynomials`` the monic orthogonal
polynomials ``P_n`` (:meth:`~freeprob.laws.law.Law.orthogonal_polynomials`, exact only).
A law with exactly ``n`` support points ends at ``β_n = 0``; the output says so.

The computation runs in a worker process (:func:`freeprob.cli.work.compute`), as for the law
commands of :mod:`freeprob.cli.law_commands`, whose options (``--order``, ``--dps``,
``--format``, ``--max-order``, ``--force``) and checks it shares.

Example: ``freeprob jacobi 'FreePoisson(t)' --order 4 --hankel``.
"""
from __future__ import annotations

import json
import sys

from freeprob._text import text_table
from freeprob.cli.law_commands import (
    _all_digits,
    _confirm_order,
    _latex_num,
    _maybe_symbolic,
    _num,
    _parse_law,
    _parser,
    max_order,
)
from freeprob.cli.files import DPS_ARG, POSITIVE_ORDER_ARG, bounded_int
from freeprob.cli.law_commands import DEFAULT_MAX_ORDER, SEQUENCE_FORMATS
from freeprob.cli.work import compute
from freeprob.errors import FreeprobValueError, NotAvailable

__all__ = ["JACOBI_COMMANDS", "add_jacobi_command", "run_jacobi_command"]

#: the subcommands defined here
JACOBI_COMMANDS = ("jacobi",)

_LAW_HELP = "law expression, e.g. 'free_add(Semicircle(0, 1), FreePoisson(1/2))' (see freeprob.cli.expr)"


def add_jacobi_command(sub) -> None:
    r"""Add the ``jacobi`` subcommand to an argparse subparsers object.

    Parameters
    ----------
    sub : argparse._SubParsersAction

    Returns
    -------
    None

    Source: this module.
    """
    p = _parser(sub, "jacobi", "Jacobi parameters (continued fraction) of a law expression",
                "The Jacobi parameters alpha_0..alpha_{K-1}, beta_1..beta_K of a law expression: "
                "G(z) = 1/(z - alpha_0 - beta_1/(z - alpha_1 - beta_2/(...))) and the recurrence "
                "P_{n+1} = (x - alpha_n) P_n - beta_n P_{n-1} of its monic orthogonal polynomials; exact "
                "(rationals or expressions in the symbols), or to --dps N digits. A law with exactly n "
                "support points ends at beta_n = 0.",
                ["freeprob jacobi 'FreePoisson(t)' --order 4 --hankel",
                 "freeprob jacobi 'boolean_add(Semicircle(0, 1), Bernoulli())' --order 6 --dps 20 --format csv"])
    p.add_argument("law", metavar="LAW", help=_LAW_HELP)
    p.add_argument("--order", type=POSITIVE_ORDER_ARG, default=6,
                   help="number K >= 1 of alpha and of beta (default 6)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--exact", action="store_true", help="exact values (the default)")
    g.add_argument("--dps", type=DPS_ARG, default=None, help="N significant digits instead of exact values")
    p.add_argument("--hankel", action="store_true", help="add the Hankel determinants Delta_0..Delta_K")
    p.add_argument("--polynomials", action="store_true",
                   help="add the monic orthogonal polynomials P_0..P_K (exact only)")
    p.add_argument("--format", choices=SEQUENCE_FORMATS, default="table", help="output format (default table)")
    p.add_argument("--max-order", type=bounded_int(0), default=None,
                   help=f"orders above this need --force (default {DEFAULT_MAX_ORDER}, or env FREEPROB_MAX_ORDER)")
    p.add_argument("--force", action="store_true", help="compute orders above --max-order without asking")


def _jacobi_text(law, text, order, dps, fmt, hankel, polynomials):
    """The output of ``freeprob jacobi`` as one string (run in the worker)."""
    alpha, beta = law.jacobi_parameters(order, dps=dps)
    cols = {"alpha": list(alpha), "beta": [None] + list(beta)}
    if hankel:
        cols["hankel"] = list(law.hankel_determinants(order, dps=dps))
    if polynomials:
        cols["P"] = [p.as_expr() for p in law.orthogonal_polynomials(order)]
    finite = len(beta) < order or (beta and beta[-1] == 0)
    note = (f"the law has exactly {len(beta)} support points: beta_{len(beta)} = 0 ends the continued "
            "fraction" if finite else "")
    rows = len(beta) + 1 if finite else order + 1
    names = {"alpha": ("α_n", "alpha", r"\alpha"), "beta": ("β_n", "beta", r"\beta"),
             "hankel": ("Δ_n", "hankel", r"\Delta"), "P": ("P_n(x)", "P", "P")}

    def cell(key, n, latex=False):
        vals = cols[key]
        if n >= len(vals) or vals[n] is None:
            return ""
        if key == "P":
            return str(vals[n]) if not latex else _latex_num(vals[n], None)
        return _latex_num(vals[n], dps) if latex else _num(vals[n], dps)

    mode = "exact" if dps is None else f"{dps} significant digits"
    lines = []
    with _all_digits():
        if fmt == "json":
            rec = {"law": text, "order": order, "exact": dps is None, "dps": dps,
                   "support_points": len(beta) if finite else None,
                   "values": {names[k][1]: [cell(k, n) for n in range(len(cols[k])) if cols[k][n] is not None]
                              for k in cols}}
            lines.append(json.dumps(rec, ensure_ascii=False, indent=1))
        elif fmt == "csv":
            lines.append(",".join(["n"] + [names[k][1] + "_n" for k in cols]))
            lines += [",".join([str(n)] + [cell(k, n) for k in cols]) for n in range(rows)]
        elif fmt == "latex":
            lines.append(f"% law: {text} ({mode})" + (f"; {note}" if note else ""))
            lines.append(r"\begin{aligned}")
            lines += [f"{names[k][2]}_{{{n}}} &= {cell(k, n, latex=True)} \\\\"
                      for k in cols for n in range(rows) if cell(k, n)]
            lines.append(r"\end{aligned}")
        else:
            lines.append(f"law: {text}   ({mode}; G(z) = 1/(z - α_0 - β_1/(z - α_1 - ...)))")
            header = ["n"] + [names[k][0] for k in cols]
            lines.append(text_table(header, [[str(n)] + [cell(k, n) for k in cols] for n in range(rows)],
                                    align="r", strip=False))
            if note:
                lines.append(note)
    return "".join(line + "\n" for line in lines)


def run_jacobi_command(args, out=None) -> int:
    r"""Run ``freeprob jacobi`` from parsed arguments; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        From :func:`freeprob.cli.build_parser` with ``args.command == "jacobi"``.
    out : file, optional
        Where the result goes (default ``sys.stdout``).

    Returns
    -------
    int
        0 on success; 2 (with a message on stderr) on :class:`~freeprob.errors.NotAvailable`.

    Raises
    ------
    FreeprobValueError
        A bad expression, ``--dps`` with symbols, ``--polynomials`` with ``--dps``, an order
        above the limit without ``--force``, an exact symbolic computation measured to take
        too long (:func:`freeprob.cli.costguard.guard_exact_cost`).
    KeyboardInterrupt
        Ctrl-C or SIGTERM (the worker is killed at once).

    Source: this module.
    """
    out = out if out is not None else sys.stdout
    if args.polynomials and args.dps is not None:
        raise FreeprobValueError("jacobi: --polynomials prints exact polynomials; leave out --dps (the "
                                 "alpha and beta digits come from --dps without --polynomials)")
    try:
        law = _parse_law(args, numeric=args.dps is not None)
        _confirm_order(args.order, max_order(args.max_order), args.force)
        if args.dps is None and _maybe_symbolic(law):
            from freeprob.cli.costguard import guard_exact_cost
            guard_exact_cost(law, ["jacobi_parameters"], args.order, who="freeprob jacobi",
                             forced=args.force or args.max_order is not None)
        out.write(compute("freeprob jacobi", _jacobi_text, law, " ".join(args.law.split()), args.order,
                          args.dps, args.format, args.hankel, args.polynomials))
        return 0
    except NotAvailable as exc:
        print(f"freeprob: error: {exc}", file=sys.stderr)
        return 2
