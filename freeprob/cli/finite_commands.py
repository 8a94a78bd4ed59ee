r"""``freeprob finite add|mul``: the finite free convolutions ``⊞_d``, ``⊠_d`` of two
polynomials (or of the expected characteristic polynomials of two laws), their certified
roots and finite free cumulants (:mod:`freeprob.finite`).

Examples
--------
``freeprob finite add "x**2 - 1" "x**2 - 1"`` (roots ±√2),
``freeprob finite mul --roots "0,1" "1,3"``,
``freeprob finite add "Semicircle(0, 1)" "FreePoisson(1/2)" --degree 8 --cumulants``.
"""
from __future__ import annotations

import json
import re
import sys

import sympy as sp

from freeprob.cli.expr import ExpressionError, parse_law, parse_value
from freeprob.cli.files import DPS_ARG
from freeprob.errors import FreeprobValueError, NotAvailable

__all__ = ["add_finite_command", "run_finite_command"]

#: the name under which ``x`` is parsed (``x`` is reserved in the expression language)
_X = "xpolyvar"
_EXAMPLES = ('example: freeprob finite add "x**2 - 1" "x**2 - 1"  '
             'example: freeprob finite mul --roots "0, 1" "1, 3" --cumulants  '
             'example: freeprob finite add "Semicircle(0, 1)" "FreePoisson(1/2)" --degree 8 --cumulants')


def add_finite_command(sub) -> None:
    """Add the ``finite`` subcommand (``add`` and ``mul``) to an argparse subparsers object."""
    p = sub.add_parser(
        "finite",
        help="finite free convolutions ⊞_d, ⊠_d of polynomials: result, certified roots, cumulants",
        description="The finite free additive (add, ⊞_d) or multiplicative (mul, ⊠_d) convolution "
                    "of two monic real-rooted polynomials of degree d (Marcus–Spielman–Srivastava): "
                    "E det(x − A − QBQ*) or E det(x − AQBQ*) over Haar rotations Q.  Prints the "
                    "exact polynomial, its roots (certified to --dps digits) and, with --cumulants, "
                    "its finite free cumulants.",
        epilog=_EXAMPLES,
    )
    p.add_argument("operation", choices=("add", "mul"), help="add: ⊞_d; mul: ⊠_d")
    p.add_argument("p", help="a monic polynomial in x with exact coefficients (\"x**3 - 3*x\"); "
                             "with --roots its roots (\"-1, 0, 2\"); with --degree a law "
                             "(\"Semicircle(0, 1)\")")
    p.add_argument("q", help="the second operand, of the same kind and degree")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--roots", action="store_true", help="the operands are comma-separated roots")
    kind.add_argument("--degree", type=int, default=None, metavar="D",
                      help="the operands are laws; use their degree-D expected characteristic "
                           "polynomials (Hermite, Laguerre, atoms and their ⊞, ⊠, shifts, dilations)")
    p.add_argument("--dps", type=DPS_ARG, default=15, help="certified digits of the roots (default 15)")
    p.add_argument("--no-roots", action="store_true", help="do not compute the roots")
    p.add_argument("--cumulants", action="store_true", help="print the finite free cumulants κ_1..κ_d")
    p.add_argument("--no-check", action="store_true",
                   help="formal convolution: do not require real-rooted inputs")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")


def _polynomial(text, name):
    """A polynomial in ``x`` parsed by the safe expression language
    (:func:`freeprob.cli.expr.parse_value`, where ``x`` is reserved: it is read under another
    name), with the error columns of ``text``."""
    from freeprob.core.symbols import x
    spans = [m.start() for m in re.finditer(r"(?<![\w.])x(?!\w)", text)]
    renamed = re.sub(r"(?<![\w.])x(?!\w)", _X, text)
    try:
        expr = parse_value(renamed)
    except ExpressionError as exc:
        moved = [s + i * (len(_X) - 1) for i, s in enumerate(spans)]    # where each x went
        shift = (len(_X) - 1) * sum(1 for s in moved if s < exc.column - 1)
        note = str(exc).split("\n", 3)[3] if str(exc).count("\n") >= 3 else ""
        raise ExpressionError(f"{name}: {exc.reason}".replace(_X, "x"), text, exc.column - shift,
                              note) from None
    expr = expr.subs(sp.Symbol(_X), x)
    try:
        return sp.Poly(expr, x)
    except sp.PolynomialError:
        raise FreeprobValueError(f"{name}: {text!r} is not a polynomial in x") from None


def _operand(text, name, args):
    from freeprob.finite import expected_characteristic_polynomial, from_roots
    if args.roots:
        parts = [s for s in text.replace(";", ",").split(",")]
        if not all(s.strip() for s in parts):
            raise FreeprobValueError(f"{name}: give the roots separated by commas, e.g. \"-1, 0, 2\"; got {text!r}")
        return from_roots([parse_value(s) for s in parts])
    if args.degree is not None:
        return expected_characteristic_polynomial(parse_law(text), args.degree)
    return _polynomial(text, name)


def _result(operation, p_text, q_text, roots, degree, dps, want_roots, cumulants, check):
    """The command's computation (in the worker process): a dict of plain values."""
    import argparse

    import mpmath

    from freeprob.finite import finite_free_add, finite_free_cumulants, finite_free_mul, real_roots
    kind = argparse.Namespace(roots=roots, degree=degree)
    p, q = _operand(p_text, "p", kind), _operand(q_text, "q", kind)
    r = (finite_free_add if operation == "add" else finite_free_mul)(p, q, check=check)
    result = {"operation": operation, "d": r.degree(), "polynomial": str(r.as_expr()),
              "coefficients": [str(c) for c in r.all_coeffs()]}
    if want_roots and (r.domain.is_ZZ or r.domain.is_QQ):
        with mpmath.workdps(dps):
            result["roots"] = [mpmath.nstr(v, dps) for v in real_roots(r, dps=dps)]
    if cumulants:
        result["cumulants"] = [str(c) for c in finite_free_cumulants(r)[1:]]
    return result


def run_finite_command(args, out=None) -> int:
    """Run ``freeprob finite add|mul`` from parsed arguments, the computation in a worker
    process (:func:`freeprob.cli.work.compute`: Ctrl-C and SIGTERM stop it at once); returns
    the exit status (errors raise :class:`~freeprob.errors.FreeprobValueError`, which the
    command line prints)."""
    from freeprob.cli.work import compute
    out = out or sys.stdout
    try:
        result = compute("freeprob finite", _result, args.operation, args.p, args.q, args.roots,
                         args.degree, args.dps, not args.no_roots, args.cumulants, not args.no_check)
    except NotAvailable as exc:            # a law without an expected characteristic polynomial
        print(f"freeprob: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(result, ensure_ascii=False), file=out)
        return 0
    symbol = "⊞" if args.operation == "add" else "⊠"
    print(f"p {symbol}_{result['d']} q = {result['polynomial']}", file=out)
    if "roots" in result:
        print(f"roots ({args.dps} digits, certified): " + ", ".join(result["roots"]), file=out)
    elif not args.no_roots:
        print("roots: not computed (coefficients not rational; substitute numbers for the symbols)",
              file=out)
    if "cumulants" in result:
        print("finite free cumulants κ_1..κ_d: " + ", ".join(result["cumulants"]), file=out)
    return 0
