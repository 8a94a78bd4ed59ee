r"""``freeprob fit FILE``: fit a law to sampled eigenvalues and print it with intervals.

``FILE`` holds the eigenvalues, one per line (blank lines and ``#`` comments skipped), or a
``.npy`` array of shape ``(n,)``; ``-`` reads the lines from standard input.  The command
prints the fitted free cumulants (``--order``, with standard errors and intervals), the
fitted law — a family by moment matching (``--family``) or an algebraic law
(``--degrees DG,DZ``, the default ``2,1``) — with its parameters and intervals or its
equation, support and atoms, and its distance to the sample (W1 and KS,
:func:`freeprob.experiments.fit_report.sample_distances`).  ``--decompress F`` also prints
the moments and support of the law at ``F`` times the size (:func:`freeprob.fit.decompress`).

Source: :mod:`freeprob.fit` (docs/guide/fitting.md).
"""
from __future__ import annotations

import sys
from pathlib import Path

from freeprob._files import check_input
from freeprob.cli.files import bounded_int
from freeprob.errors import FreeprobValueError

__all__ = ["add_fit_command", "run_fit_command", "read_eigenvalues"]

EXAMPLE = "freeprob fit eigenvalues.txt --family marchenko-pastur --errors matrix"


def read_eigenvalues(path, stdin=None):
    r"""The eigenvalues in ``path``: a ``.npy`` file (a 1-d array) or text, one number per
    line; ``"-"`` reads text from ``stdin`` (default ``sys.stdin``).

    Returns
    -------
    numpy float64 array, shape ``(n,)`` (unchecked beyond parsing: the fit checks the rest)

    Raises
    ------
    FreeprobValueError
        A missing or unreadable file, or a directory (:func:`freeprob._files.check_input`); a line that is not one number (its line number is
        named); a ``.npy`` file that is not a numeric array.

    Source: this module.
    """
    import numpy as np
    if str(path) == "-":
        lines = (stdin or sys.stdin).read().splitlines()
        name = "standard input"
    else:
        if not str(path).strip():
            raise FreeprobValueError("fit: the file name is empty; give a file of eigenvalues, or - for standard input")
        p = Path(path)
        check_input(p, who="fit")
        if p.suffix == ".npy":
            try:
                arr = np.load(p, allow_pickle=False)
            except (ValueError, OSError) as exc:
                raise FreeprobValueError(f"fit: {path} is not a readable .npy array ({exc})") from exc
            if arr.dtype.kind not in "biuf":
                raise FreeprobValueError(f"fit: {path} holds a {arr.dtype} array; expected real numbers")
            return arr.astype(float)
        try:
            lines = p.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise FreeprobValueError(f"fit: cannot read {path} as text ({exc}); give one number per "
                                     "line or a .npy file") from exc
        name = str(path)
    values = []
    for i, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            values.append(float(text))
        except ValueError:
            raise FreeprobValueError(f"fit: {name}, line {i}: expected one number per line; got {line.strip()!r}") from None
    return np.array(values, dtype=float)


def _degrees(text):
    import argparse
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"expected two integers DG,DZ such as 2,1; got {text!r}")
    return int(parts[0]), int(parts[1])


#: the names of :data:`freeprob.fit.families.FAMILIES` (written out: importing that module
#: loads numpy, which a law command's start-up must not; tests/test_fit.py checks they agree)
FAMILY_NAMES = ("semicircle", "marchenko-pastur", "free-poisson", "shifted-free-poisson")


def add_fit_command(sub) -> None:
    """Add ``fit`` to an argparse subparsers object.  Raises nothing.  Source: this module."""
    p = sub.add_parser(
        "fit",
        help="fit a law to sampled eigenvalues (free cumulants, a family or an algebraic law)",
        description="Fit a law to eigenvalues (one per line, or a .npy array; '-' for standard input): "
                    "free cumulants with standard errors, a family by moment matching or an algebraic law "
                    "P(G, z) = 0 by least squares on the Stieltjes transform, with intervals and the "
                    "distance to the sample.",
        epilog="Errors: 'iid' treats the eigenvalues as independent draws (conservative for one "
               "matrix); 'matrix' is calibrated for one matrix of a one-cut beta-ensemble (Wigner, "
               f"Wishart). Guide: docs/guide/fitting.md. example: {EXAMPLE}",
    )
    p.add_argument("file", help="eigenvalues: a text file (one per line), a .npy file, or -")
    p.add_argument("--family", choices=FAMILY_NAMES, default=None,
                   help="fit this family by moment matching (default: an algebraic law)")
    p.add_argument("--degrees", type=_degrees, default=None, metavar="DG,DZ",
                   help="degrees in G and z of the algebraic law (default 2,1)")
    p.add_argument("--order", type=bounded_int(1, 12), default=4,
                   help="free cumulants to print (default 4, at most 12)")
    p.add_argument("--errors", choices=("iid", "matrix"), default="iid",
                   help="error model of the intervals (default iid)")
    p.add_argument("--beta", type=int, choices=(1, 2, 4), default=1,
                   help="Dyson's index for --errors matrix: 1 real, 2 complex (default 1)")
    p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--decompress", type=str, default=None, metavar="F",
                   help="also print the law at F times the matrix size (F < 1 compresses)")
    p.add_argument("--points", type=bounded_int(50, 20000), default=400,
                   help="density points per support interval for the distance (default 400)")


def run_fit_command(args, out=None) -> int:
    """Run ``freeprob fit`` from parsed arguments; exit status 0.

    Raises
    ------
    FreeprobValueError
        Bad file or eigenvalues, both ``--family`` and ``--degrees``, a fit that gives no law
        (the caller prints it and exits with status 2).

    Source: this module.
    """
    from freeprob.experiments.compare import TabulatedLaw
    from freeprob.experiments.fit_report import sample_distances
    from freeprob.fit import decompress, fit_algebraic, fit_free_cumulants, fit_law
    out = out if out is not None else sys.stdout
    if args.family is not None and args.degrees is not None:
        raise FreeprobValueError("fit: give --family (a family by moment matching) or --degrees (an "
                                 "algebraic law), not both")
    lam = read_eigenvalues(args.file)
    opts = dict(errors=args.errors, beta=args.beta, level=args.level)
    print(fit_free_cumulants(lam, args.order, **opts), file=out)
    print(file=out)
    if args.family is not None:
        fit = fit_law(lam, args.family, **opts)
    else:
        fit = fit_algebraic(lam, args.degrees or (2, 1))
    print(fit, file=out)
    d = sample_distances(lam, TabulatedLaw.from_law(fit.law, points=args.points))
    rel = "" if d["relW1"] is None else f", W1/mean {100 * d['relW1']:.3g}%"
    sd = "" if d["W1_sd"] is None else f", W1/sd {100 * d['W1_sd']:.3g}%"
    print(f"distance to the sample: W1 {d['W1']:.4g}{rel}{sd}, KS {d['KS']:.4g}", file=out)
    if args.decompress is not None:
        big = decompress(fit.law, args.decompress)
        m = big.moments(4, dps=8)
        sup = ", ".join(f"[{float(a):.6g}, {float(b):.6g}]" for a, b in big.support(dps=10))
        print(f"decompressed by {args.decompress}: mean {float(m[1]):.6g}, second moment "
              f"{float(m[2]):.6g}, support {sup or 'none'}", file=out)
    return 0
