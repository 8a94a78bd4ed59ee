r"""The ``freeprob`` command line.

``freeprob table`` prints exact (or ``--dps N`` digit) moments, free, boolean and
classical cumulants of a law built from the standard families and operations.
Until ``freeprob verify`` exists it is the project's main job.

Examples
--------
``freeprob table`` (the default law, MP(1/2) ⊠ MP(1/3) as free Poisson laws),
``freeprob table --law arcsine --order 10``, ``freeprob table --dps 30``.
"""
from __future__ import annotations

import argparse
import sys

import mpmath
import sympy as sp

from . import families as fam
from . import operations as ops
from .errors import FreeprobValueError, PrecisionError

__all__ = ["main", "PRESET_LAWS"]

_h = sp.Rational(1, 2)
_t = sp.Rational(1, 3)

#: name -> (description, constructor)
PRESET_LAWS = {
    "mp-product": ("free_mul(FreePoisson(1/2), FreePoisson(1/3))",
                   lambda: ops.free_mul(fam.FreePoisson(_h), fam.FreePoisson(_t))),
    "fuss-catalan": ("free_mul(FreePoisson(1), FreePoisson(1), FreePoisson(1))",
                     lambda: ops.free_mul(fam.FreePoisson(1), fam.FreePoisson(1), fam.FreePoisson(1))),
    "semicircle": ("Semicircle(mean=0, variance=1)", lambda: fam.Semicircle(0, 1)),
    "free-poisson": ("FreePoisson(rate=1/2, jump=1)", lambda: fam.FreePoisson(_h)),
    "arcsine": ("free_add(Bernoulli(), Bernoulli())",
                lambda: ops.free_add(fam.Bernoulli(), fam.Bernoulli())),
    "semicircle+mp": ("free_add(Semicircle(0, 1), FreePoisson(1/2))",
                      lambda: ops.free_add(fam.Semicircle(0, 1), fam.FreePoisson(_h))),
}


def _fmt(v, dps):
    if dps is None:
        return str(v)
    return mpmath.nstr(v, dps)


def table(law_name: str, order: int, dps: int | None, out=sys.stdout) -> None:
    """Print the moment/cumulant table of a preset law (see :data:`PRESET_LAWS`)."""
    desc, make = PRESET_LAWS[law_name]
    law = make()
    cols = {
        "m_n": law.moments(order, dps=dps),
        "free κ_n": law.free_cumulants(order, dps=dps),
        "boolean b_n": law.boolean_cumulants(order, dps=dps),
        "classical c_n": law.classical_cumulants(order, dps=dps),
    }
    mode = "exact" if dps is None else f"{dps} significant digits"
    print(f"law: {desc}   ({mode})", file=out)
    rows = [[str(n)] + [_fmt(cols[c][n], dps) for c in cols] for n in range(order + 1)]
    header = ["n"] + list(cols)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    print("  ".join(h.rjust(wd) for h, wd in zip(header, widths)), file=out)
    for r in rows:
        print("  ".join(v.rjust(wd) for v, wd in zip(r, widths)), file=out)


def _int_at_least(minimum, what):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {what} integer; got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"expected a {what} integer; got {v}")
        return v

    return parse


_positive_int = _int_at_least(1, "positive")
_order = _int_at_least(0, "non-negative")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="freeprob",
        description="Exact free probability: moments, cumulants and transforms of spectral laws.",
    )
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser(
        "table",
        help="print moments and free/boolean/classical cumulants of a law",
        description="Print the moments and the free, boolean and classical cumulants of a preset law.",
        epilog="example: freeprob table --law arcsine --order 10 --dps 20",
    )
    p.add_argument("--law", default="mp-product", choices=sorted(PRESET_LAWS),
                   help="preset law (default: mp-product = " + PRESET_LAWS["mp-product"][0] + ")")
    p.add_argument("--order", type=_order, default=8, help="highest order (default 8)")
    p.add_argument("--dps", type=_positive_int, default=None,
                   help="decimal digits (default: exact rationals/expressions)")
    return parser


def main(argv=None) -> int:
    """Entry point of the ``freeprob`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["table"] + list(argv or []))
    try:
        table(args.law, args.order, args.dps)
    except (FreeprobValueError, PrecisionError) as exc:
        print(f"freeprob: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
